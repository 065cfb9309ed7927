"""What reads and writes share: the per-array chunk context resolved once."""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from ..codecs.buffers import filled, is_all_fill, scratch
from ..codecs.chain import CodecChain, max_stored_size
from ..codecs.sharding import GroupedKeys, ShardedStore
from ..config import config
from ..errors import ChunkDecodeError, ChunkNotFoundError
from ..metadata.grid import ChunkGrid
from ..metadata.v2 import ArrayMetadataV2
from ..metadata.v3 import ArrayMetadataV3
from ..storage.base import Store
from .pool import run_tasks

__all__ = ["ChunkContext", "filled", "is_all_fill", "names_store", "scratch"]

F = TypeVar("F", bound=Callable[..., Any])


def names_store(fn: F) -> F:
    """Make a chunk operation ``fn(ctx, ...)`` name ``ctx.store`` in the
    :class:`~zarrkit.errors.ChunkDecodeError` it raises (the codecs know only the key)."""

    @functools.wraps(fn)
    def wrapper(ctx: ChunkContext, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(ctx, *args, **kwargs)
        except ChunkDecodeError as exc:
            if exc.store is not None:
                raise
            raise exc.in_store(ctx.store) from exc.__cause__

    return wrapper  # type: ignore[return-value]


@dataclasses.dataclass(frozen=True, slots=True)
class ChunkContext:
    """Everything the per-chunk path needs, resolved once per array (never per chunk).

    ``store`` holds the array's stored objects (chunks, or shards), ``key`` names them;
    ``chunks`` is the store the engine reads chunks from and writes them to: ``store`` itself,
    or for a sharded array the :class:`~zarrkit.codecs.sharding.store.ShardedStore` showing the
    inner chunks of its shards.  ``grouped`` is ``chunks`` when its keys are read and written
    in groups (:class:`~zarrkit.codecs.sharding.store.GroupedKeys`), else None.
    """

    store: Store
    prefix: str  # the array's key prefix: '' or 'path/to/array/'
    meta: ArrayMetadataV2 | ArrayMetadataV3
    codec: CodecChain  # the chain of a chunk (an inner chunk of a sharded array)
    chunks: Store
    grid: ChunkGrid  # the grid selections are projected on (inner chunks if sharded)
    shape: tuple[int, ...]
    chunk_shape: tuple[int, ...]  # the grid selections are projected on (inner chunks if sharded)
    dtype: np.dtype
    fill_value: Any
    ragged: bool = False  # some chunks stick out of the array (the shape is not a multiple)
    #: what a chunk not stored reads as: the fill value, zero bytes of the dtype when there is
    #: none (None for object arrays)
    missing: Any = None
    #: the key in ``chunks`` of the chunk at given coordinates (None: :meth:`key_function`)
    chunk_key: Any = None
    #: on a grid whose chunks differ in shape (rectilinear), the codec chain of the chunk at
    #: given coordinates; None when every chunk has ``codec`` and ``chunk_shape``
    codec_at: Any = None
    #: bytes of a decoded chunk of ``chunk_shape``
    chunk_nbytes: int = 0
    #: the largest stored chunk the codecs write for a chunk of ``chunk_shape``: a larger
    #: stored object is refused from its size, unread (None: no bound but
    #: ``config.max_chunk_bytes``, see :meth:`stored_limit`)
    max_stored: int | None = None
    #: ``chunks`` when it reads and writes keys in groups (the inner chunks of a shard)
    grouped: GroupedKeys | None = None
    #: whether a read of a chunk not stored gives :attr:`missing` (False: raises, see
    #: :meth:`missing_chunk`)
    read_missing_chunks: bool = True

    @classmethod
    def build(cls, store: Store, path: str, meta: Any, read_missing_chunks: bool = True) -> ChunkContext:
        prefix = f"{path}/" if path else ""
        sharding = getattr(meta, "sharding", None)
        if sharding is None:
            codec, chunks = meta.codec, store
        else:
            n = len(prefix)
            codec = sharding.inner
            chunks = ShardedStore(
                store,
                shard_key=lambda coords: prefix + meta.chunk_key(coords),
                parse_shard_key=lambda key: meta.parse_chunk_key(key[n:]) if key.startswith(prefix) else None,
                prefix=prefix,
                sharding=sharding,
                shape=tuple(meta.shape),
                map_tasks=run_tasks,
                shard_dims=meta.shard_dims(),
                sharding_at=meta.sharding_at,
            )
        chunk_key = chunks.key_of if isinstance(chunks, ShardedStore) else None
        # asked once here, not per read: a Protocol's isinstance looks up each of its members
        grouped = chunks if isinstance(chunks, GroupedKeys) else None
        grid = meta.grid
        largest = grid.max_chunk_shape
        codec_at = None
        if not grid.regular:
            chunk_shape_of = grid.chunk_shape
            codec_for: Callable[[tuple[int, ...]], CodecChain] = meta.codec_for

            def codec_at(coords: tuple[int, ...]) -> CodecChain:
                return codec_for(chunk_shape_of(coords))

        # every chunk is at most the largest (a rectilinear grid's chains differ by shape only)
        bounded = codec if codec_at is None or sharding is not None else meta.codec_for(largest)
        return cls(
            read_missing_chunks=read_missing_chunks,
            max_stored=max_stored_size(bounded),
            store=store,
            prefix=prefix,
            meta=meta,
            codec=codec,
            chunks=chunks,
            grouped=grouped,
            grid=grid,
            shape=tuple(meta.shape),
            chunk_shape=largest,
            dtype=meta.dtype,
            fill_value=meta.fill_value,
            chunk_key=chunk_key,
            ragged=not grid.regular or any(s % c for s, c in zip(meta.shape, largest)),
            codec_at=codec_at,
            chunk_nbytes=math.prod(largest) * meta.dtype.itemsize,
            missing=(
                np.zeros((), dtype=meta.dtype)[()]
                if meta.fill_value is None and meta.dtype.kind != "O"
                else meta.fill_value
            ),
        )

    def missing_chunk(self, key: str) -> Any:
        """What a read puts where the chunk at ``key`` (a key of :attr:`chunks`) is not
        stored: :attr:`missing`, unless :attr:`read_missing_chunks` is False.  Then a missing
        chunk raises, and of a sharded array a missing shard: the inner chunks a stored shard
        leaves out are none its store lost, and read as :attr:`missing`.

        Raises
        ------
        ChunkNotFoundError
            Naming the array, its store and the key.
        """
        if self.read_missing_chunks or (self.grouped is not None and self.grouped.group_stored(key)):
            return self.missing
        where = f"chunk {key!r}"
        if self.grouped is not None:  # the key of an inner chunk: 'shard key@i.j'
            shard, _, inner = key.rpartition("@")
            where = f"shard {shard!r} (of inner chunk ({inner.replace('.', ', ')}))"
        raise ChunkNotFoundError(
            f"array '/{self.prefix.rstrip('/')}' of {self.store!r}: {where} is not stored; expected every "
            "chunk read to be there (read_missing_chunks=False; with True a chunk not stored reads as "
            "the fill value)"
        )

    def stored_limit(self) -> int:
        """The most bytes a stored chunk may hold: :attr:`max_stored`, or
        ``config.max_chunk_bytes`` where the codecs have no bound (asked once per read)."""
        return self.max_stored if self.max_stored is not None else config.max_chunk_bytes

    def key(self, coords: tuple[int, ...]) -> str:
        """Store key of the stored object (chunk, or shard when sharded) at grid ``coords``."""
        return self.prefix + self.meta.chunk_key(coords)

    def chunk_key_function(self) -> Any:
        """The key in :attr:`chunks` of the chunk at ``coords`` (on the ``chunk_shape`` grid),
        as one function of the coordinates, for per-chunk loops."""
        return self.chunk_key or self.key_function()

    def key_function(self) -> Any:
        """:meth:`key` as one function of the coordinates, for per-chunk loops."""
        if not self.shape:
            return self.key
        head, sep = self.meta.chunk_key_parts()
        head = self.prefix + head
        join = sep.join
        return lambda coords: head + join(map(str, coords))

    def row_keys_function(self) -> Any:
        """The keys in :attr:`chunks` of a row of chunks, as one function ``keys(lead, last)``:
        the keys of the chunks at ``lead + (j,)`` for each ``j`` of ``last``, the part of them
        ``lead`` gives made once per row."""
        if self.chunk_key is not None:
            key_of = self.chunk_key
            return lambda lead, last: [key_of((*lead, j)) for j in last]
        head, sep = self.meta.chunk_key_parts()
        head = self.prefix + head
        join = sep.join

        def keys(lead: tuple[int, ...], last: Sequence[int]) -> list[str]:
            row = head + join(map(str, lead)) + sep
            return [row + str(j) for j in last]

        return keys

    def codec_of(self, coords: tuple[int, ...]) -> CodecChain:
        """The codec chain of the chunk at ``coords``."""
        return self.codec if self.codec_at is None else self.codec_at(coords)

    def fill_chunk(self, coords: tuple[int, ...]) -> np.ndarray:
        """A new writable chunk at ``coords`` holding the fill value (zeros when there is none)."""
        shape = self.chunk_shape if self.codec_at is None else self.grid.chunk_shape(coords)
        return filled(shape, self.dtype, self.fill_value, self.codec.order)

    def is_edge(self, coords: tuple[int, ...]) -> bool:
        """Whether the chunk at ``coords`` (on the ``chunk_shape`` grid) sticks out of the array."""
        if self.codec_at is not None:
            return self.grid.is_edge(coords)
        return self.ragged and any((c + 1) * cs > s for c, cs, s in zip(coords, self.chunk_shape, self.shape))


