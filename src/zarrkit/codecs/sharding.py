"""The ``sharding_indexed`` codec: many inner chunks in one stored object, plus an index.

A shard is the concatenation of its non-empty inner chunks (each encoded with the inner codec
chain) and an index of ``(offset, nbytes)`` pairs as little-endian uint64 (``2**64 - 1`` for an
empty chunk), encoded with the index codecs and placed at the ``start`` or ``end``.

Reading decodes the index first; the chunk engine uses :meth:`ShardingCodec.index_range` and
:meth:`ShardingCodec.decode_index` to fetch only the inner chunks a selection needs.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from ..config import config
from ..errors import ChunkDecodeError, MetadataError
from .base import ArrayBytesCodec, ChunkSpec, V3Codec
from .buffers import filled, is_all_fill
from .chain import CodecChain, max_stored_size
from .v3_builtin import BytesCodec, Crc32cCodec

__all__ = ["ShardingCodec", "EMPTY"]

EMPTY = np.uint64(2**64 - 1)


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
        nbytes = index.fixed_encoded_size()
        if nbytes is None:
            raise MetadataError(
                "sharding_indexed: index_codecs must encode the index to a fixed size (a "
                f"serializer of raw memory and checksums such as crc32c), got {index.to_json()}"
            )
        #: computed, not measured: an index is allocated only when a shard is read or written
        self.index_nbytes = nbytes
        self.index_at_end = codec.index_location == "end"
        #: the largest stored inner chunk the inner codecs can write (None: no bound but
        #: ``config.max_chunk_bytes``), and the largest shard
        self.max_inner_size = max_stored_size(inner)
        self.max_shard_size = (
            None if self.max_inner_size is None
            else nbytes + math.prod(self.grid) * self.max_inner_size
        )

    # -- index -------------------------------------------------------------------------------
    def index_range(self) -> tuple[int, int | None]:
        """``(offset, length)`` of the index (a negative offset means a suffix)."""
        if self.index_at_end:
            return -self.index_nbytes, None
        return 0, self.index_nbytes

    def decode_index(self, raw: Any, key: str, shard_size: int | None = None) -> np.ndarray:
        """The ``grid + (2,)`` uint64 index, every entry checked (see :meth:`check_index`)."""
        if raw is None or len(raw) != self.index_nbytes:
            got = 0 if raw is None else len(raw)
            raise ChunkDecodeError(f"shard index: expected {self.index_nbytes} bytes, got {got}", key)
        index = self.index_codec.decode(raw, key)
        self.check_index(index, key, shard_size)
        return index

    def check_index(self, index: np.ndarray, key: str, shard_size: int | None = None) -> None:
        """Refuse an index with an entry no writer makes, before anything it points to is
        allocated or read: an inner chunk larger than the inner codecs write, or reaching
        beyond the shard (its size when known, else the largest shard the codecs write).  The
        error names the shard and the inner chunk's place in it."""
        offsets = index[..., 0]
        lengths = index[..., 1]
        used = offsets != EMPTY
        inner = self.max_inner_size if self.max_inner_size is not None else config.max_chunk_bytes
        limit = shard_size if shard_size is not None else self.max_shard_size
        if limit is None:
            limit = self.index_nbytes + math.prod(self.grid) * inner
        top = np.uint64(min(limit, 2**64 - 1))
        big = used & (lengths > np.uint64(min(inner, 2**64 - 1)))
        # in uint64 without wrapping around: top - length only where length <= top
        past = used & ((lengths > top) | (offsets > top - np.minimum(lengths, top)))
        bad = big | past
        if not bad.any():
            return
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        off, n = (int(v) for v in index[where])
        if big[where]:
            why = f"claims {n} bytes, more than the {inner} its codecs write at most"
        else:
            size = f"{limit} bytes" if shard_size is not None else f"at most {limit} bytes from its codecs"
            why = f"claims bytes {off}..{off + n}, beyond the shard's end ({size})"
        raise ChunkDecodeError(f"shard index entry of inner chunk {where} {why}", key)

    def split_shard(self, raw: Any, key: str) -> tuple[np.ndarray, memoryview]:
        """The index and the shard's bytes of a whole stored shard."""
        view = memoryview(raw).cast("B") if not isinstance(raw, bytes) else memoryview(raw)
        n = len(view)
        if n < self.index_nbytes:
            raise ChunkDecodeError(f"shard of {n} bytes is shorter than its index ({self.index_nbytes})", key)
        idx_raw = view[n - self.index_nbytes :] if self.index_at_end else view[: self.index_nbytes]
        return self.decode_index(bytes(idx_raw), key, n), view

    # -- whole shards --------------------------------------------------------------------------
    def inner_regions(self) -> list[tuple[tuple[int, ...], tuple[slice, ...]]]:
        return [
            (coords, tuple(slice(c * s, (c + 1) * s) for c, s in zip(coords, self.chunk_shape)))
            for coords in itertools.product(*(range(g) for g in self.grid))
        ]

    def decode_shard(self, raw: Any, key: str = "shard") -> np.ndarray:
        index, view = self.split_shard(raw, key)
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
        index = np.full(self.grid + (2,), EMPTY, dtype="<u8")
        offset = 0 if self.index_at_end else self.index_nbytes
        parts: list[Any] = []
        for coords in morton_sorted(chunks, self.grid):
            data = chunks[coords]
            if not isinstance(data, (bytes, bytearray)):
                data = memoryview(data).cast("B")
            n = len(data)
            index[coords] = (offset, n)
            offset += n
            parts.append(data)
        idx = bytes(self.index_codec.encode(index, key))
        if self.index_at_end:
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
