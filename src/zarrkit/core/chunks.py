"""What reads and writes share: the per-array chunk context resolved once."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ..codecs.buffers import filled, is_all_fill, scratch
from ..codecs.chain import CodecChain
from ..storage.base import Store

__all__ = ["ChunkContext", "filled", "is_all_fill", "scratch"]


@dataclasses.dataclass(frozen=True, slots=True)
class ChunkContext:
    """Everything the per-chunk path needs, resolved once per array (never per chunk)."""

    store: Store
    prefix: str  # the array's key prefix: '' or 'path/to/array/'
    meta: Any  # ArrayMetadataV2 / ArrayMetadataV3
    codec: CodecChain
    shape: tuple[int, ...]
    chunk_shape: tuple[int, ...]  # the grid selections are projected on (inner chunks if sharded)
    dtype: np.dtype
    fill_value: Any
    sharding: Any = None  # the resolved sharding codec of a sharded array
    ragged: bool = False  # some chunks stick out of the array (the shape is not a multiple)
    #: what a chunk not stored reads as: the fill value, zero bytes of the dtype when there is
    #: none (None for object arrays)
    missing: Any = None

    @classmethod
    def build(cls, store: Store, path: str, meta: Any) -> ChunkContext:
        return cls(
            store=store,
            prefix=f"{path}/" if path else "",
            meta=meta,
            codec=meta.codec,
            shape=tuple(meta.shape),
            chunk_shape=tuple(meta.chunks),
            dtype=meta.dtype,
            fill_value=meta.fill_value,
            sharding=getattr(meta, "sharding", None),
            ragged=any(s % c for s, c in zip(meta.shape, meta.chunks)),
            missing=(
                np.zeros((), dtype=meta.dtype)[()]
                if meta.fill_value is None and meta.dtype.kind != "O"
                else meta.fill_value
            ),
        )

    def key(self, coords: tuple[int, ...]) -> str:
        """Store key of the stored object (chunk, or shard when sharded) at grid ``coords``."""
        return self.prefix + self.meta.chunk_key(coords)

    def key_function(self) -> Any:
        """:meth:`key` as one function of the coordinates, for per-chunk loops."""
        if not self.shape:
            return self.key
        head, sep = self.meta.chunk_key_parts()
        head = self.prefix + head
        join = sep.join
        return lambda coords: head + join(map(str, coords))

    def fill_chunk(self) -> np.ndarray:
        """A new writable chunk holding the fill value (zeros when there is none)."""
        return filled(self.chunk_shape, self.dtype, self.fill_value, self.codec.order)

    def is_edge(self, coords: tuple[int, ...]) -> bool:
        """Whether the chunk at ``coords`` (on the ``chunk_shape`` grid) sticks out of the array."""
        return self.ragged and any((c + 1) * cs > s for c, cs, s in zip(coords, self.chunk_shape, self.shape))


