"""The ``sharding_indexed`` codec: many inner chunks in one stored object, plus an index.

A shard is the concatenation of its non-empty inner chunks (each encoded with the inner codec
chain) and an index (:class:`~zarrkit.codecs.sharding.index.ShardIndex`).  The chunk engine
reads and writes the inner chunks through a store view of them
(:class:`~zarrkit.codecs.sharding.store.ShardedStore`), fetching only those a selection needs;
:meth:`ShardingCodec.encode` and :meth:`~ShardingCodec.decode` handle whole shards (a shard
nested in another, or a chain that is not sharding alone).
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from ...errors import MetadataError
from ..base import ArrayBytesCodec, ChunkSpec, V3Codec, codec_from_dict
from ..buffers import filled, is_all_fill
from ..bytes import BytesCodec
from ..chain import CodecChain, max_stored_size
from ..crc32c import Crc32cCodec
from .index import EMPTY, ShardIndex

__all__ = ["ShardingCodec", "morton_sorted"]


class ShardingCodec(ArrayBytesCodec):
    """Array→bytes codec storing a grid of inner chunks as one shard."""

    name = "sharding_indexed"

    def __init__(
        self,
        chunk_shape: Any,
        codecs: list[V3Codec] | None = None,
        index_codecs: list[V3Codec] | None = None,
        index_location: str = "end",
    ):
        self.chunk_shape = tuple(int(c) for c in chunk_shape)
        if any(c < 1 for c in self.chunk_shape):
            raise MetadataError(f"sharding_indexed: chunk_shape must be positive, got {list(self.chunk_shape)}")
        self.codecs = list(codecs) if codecs else [BytesCodec("little")]
        self.index_codecs = list(index_codecs) if index_codecs else [BytesCodec("little"), Crc32cCodec()]
        if index_location not in ("start", "end"):
            raise MetadataError(f"sharding_indexed: index_location must be 'start' or 'end', got {index_location!r}")
        self.index_location = index_location
        self._resolved: dict[ChunkSpec, _ResolvedSharding] = {}

    def configuration(self) -> dict[str, Any]:
        return {
            "chunk_shape": list(self.chunk_shape),
            "codecs": [c.to_json() for c in self.codecs],
            "index_codecs": [c.to_json() for c in self.index_codecs],
            "index_location": self.index_location,
        }

    def to_dict(self) -> dict[str, Any]:
        # zarr-python's in-memory dict holds tuples where its JSON has lists
        return {"name": self.name, "configuration": {
            "chunk_shape": tuple(self.chunk_shape),
            "codecs": tuple(c.to_dict() for c in self.codecs),
            "index_codecs": tuple(c.to_dict() for c in self.index_codecs),
            "index_location": self.index_location,
        }}

    @classmethod
    def from_dict(cls, data: Any) -> ShardingCodec:
        """The codec a metadata document (as :meth:`to_dict` gives) describes; the inner codecs
        may be given as documents or as codecs."""
        if not isinstance(data, dict) or data.get("name") != cls.name:
            raise ValueError(f"expected a codec named {cls.name!r}, got {data!r}")
        config = dict(data.get("configuration") or {})
        for key in ("codecs", "index_codecs"):
            if config.get(key) is not None:
                config[key] = [c if isinstance(c, V3Codec) else codec_from_dict(c) for c in config[key]]
        return cls(**config)

    def validate(self, spec: ChunkSpec) -> None:
        if len(self.chunk_shape) != len(spec.shape):
            raise MetadataError(
                f"sharding_indexed: chunk_shape {list(self.chunk_shape)} has {len(self.chunk_shape)} "
                f"dimensions, the shard has {len(spec.shape)}"
            )
        if any(s % c for s, c in zip(spec.shape, self.chunk_shape)):
            raise MetadataError(
                f"sharding_indexed: shard shape {list(spec.shape)} is not a multiple of the inner "
                f"chunk_shape {list(self.chunk_shape)}"
            )

    def evolve(self, spec: ChunkSpec) -> ShardingCodec:
        inner = CodecChain(self.codecs, ChunkSpec(self.chunk_shape, spec.dtype, spec.fill_value))
        grid = tuple(s // c for s, c in zip(spec.shape, self.chunk_shape))
        index = CodecChain(self.index_codecs, ChunkSpec(grid + (2,), np.dtype("<u8"), None))
        codec = ShardingCodec(self.chunk_shape, list(inner.codecs), list(index.codecs), self.index_location)
        codec._resolved[spec] = _ResolvedSharding(codec, spec, inner, index)
        return codec

    def resolved(self, spec: ChunkSpec) -> _ResolvedSharding:
        r = self._resolved.get(spec)
        if r is None:
            r = self.evolve(spec)._resolved[spec]
            self._resolved[spec] = r
        return r

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> bytes:
        return self.resolved(spec).encode_shard(chunk)

    def decode(self, data: Any, spec: ChunkSpec) -> np.ndarray:
        return self.resolved(spec).decode_shard(data)

    def max_encoded_size(self, spec: ChunkSpec) -> int | None:
        return self.resolved(spec).max_shard_size


class _ResolvedSharding:
    """A sharding codec bound to one shard spec: inner and index chains resolved."""

    def __init__(self, codec: ShardingCodec, spec: ChunkSpec, inner: CodecChain, index: CodecChain):
        self.codec = codec
        self.spec = spec
        self.inner = inner
        self.index_codec = index
        self.chunk_shape = codec.chunk_shape
        self.grid = tuple(s // c for s, c in zip(spec.shape, codec.chunk_shape))
        self.index = ShardIndex(index, self.grid, codec.index_location == "end", max_stored_size(inner))
        self.index_nbytes = self.index.nbytes
        #: the largest stored inner chunk the inner codecs can write (None: no bound but
        #: ``config.max_chunk_bytes``), and the largest shard
        self.max_inner_size = self.index.max_inner_size
        self.max_shard_size = self.index.max_shard_size

    # -- whole shards --------------------------------------------------------------------------
    def inner_regions(self) -> list[tuple[tuple[int, ...], tuple[slice, ...]]]:
        return [
            (coords, tuple(slice(c * s, (c + 1) * s) for c, s in zip(coords, self.chunk_shape)))
            for coords in itertools.product(*(range(g) for g in self.grid))
        ]

    def decode_shard(self, raw: Any, key: str = "shard") -> np.ndarray:
        index, view = self.index.split(raw, key)
        out = filled(self.spec.shape, self.spec.dtype, self.spec.fill_value)
        for coords, region in self.inner_regions():
            off, n = index[coords]
            if off == EMPTY:
                continue
            out[region] = self.inner.decode(view[int(off) : int(off) + int(n)], f"{key}[{coords}]")
        return out

    def encode_shard(self, shard: np.ndarray, key: str = "shard") -> bytes:
        """Encode a whole shard; inner chunks equal to the fill value are left out."""
        chunks: dict[tuple[int, ...], bytes] = {}
        for coords, region in self.inner_regions():
            part = shard[region]
            if is_all_fill(part, self.spec.fill_value):
                continue
            chunks[coords] = self.inner.encode(np.ascontiguousarray(part), f"{key}[{coords}]")
        return self.assemble(chunks, key)

    def assemble(self, chunks: dict[tuple[int, ...], Any], key: str = "shard") -> bytes:
        """Concatenate encoded inner chunks (in C order of their coordinates) with the index
        (a shard of an index alone when there are none: a shard nested in another is stored
        as its outer shard's inner chunk)."""
        return b"".join(self.assemble_parts(chunks, key, keep_empty=True))

    def assemble_parts(
        self, chunks: dict[tuple[int, ...], Any], key: str = "shard", keep_empty: bool = False
    ) -> list[Any]:
        """The pieces of :meth:`assemble`, in order, without joining them (a store can write
        them one after the other); ``[]`` when no inner chunk is present, unless
        ``keep_empty``."""
        if not chunks and not keep_empty:
            return []
        index = self.index.empty()
        offset = 0 if self.index.at_end else self.index.nbytes
        parts: list[Any] = []
        for coords in morton_sorted(chunks, self.grid):
            data = chunks[coords]
            if not isinstance(data, (bytes, bytearray)):
                data = memoryview(data).cast("B")
            n = len(data)
            index[coords] = (offset, n)
            offset += n
            parts.append(data)
        idx = self.index.encode(index, key)
        if self.index.at_end:
            parts.append(idx)
        else:
            parts.insert(0, idx)
        return parts


def morton_sorted(coords: Any, grid: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Inner chunk coordinates in the order a shard stores them: Morton (Z) order of the
    shard's grid, the first dimension taking the lowest bit of each level and a dimension
    dropping out once its coordinates have no more bits (the compressed Morton code, which is
    the order zarr-python writes)."""
    items = list(coords)
    if len(items) < 2 or not grid:
        return items
    arr = np.asarray(items, dtype=np.uint64).reshape(len(items), len(grid))
    bits = [max(int(g) - 1, 0).bit_length() for g in grid]
    code = np.zeros(len(items), dtype=np.uint64)
    out_bit = 0
    for level in range(max(bits)):
        for dim, nbits in enumerate(bits):
            if level < nbits:
                code |= ((arr[:, dim] >> np.uint64(level)) & np.uint64(1)) << np.uint64(out_bit)
                out_bit += 1
    return [items[i] for i in np.argsort(code, kind="stable").tolist()]
