"""The ``sharding_indexed`` codec: many inner chunks in one stored object, plus an index.

A shard is the concatenation of its non-empty inner chunks (each encoded with the inner codec
chain) and an index (:class:`~zarrkit.codecs.sharding.index.ShardIndex`).  The chunk engine
reads and writes the inner chunks through a store view of them
(:class:`~zarrkit.codecs.sharding.store.ShardedStore`), fetching only those a selection needs;
:meth:`ShardingCodec.encode` and :meth:`~ShardingCodec.decode` handle whole shards (a shard
nested in another, or a chain that is not sharding alone).
"""

from __future__ import annotations

import contextlib
import itertools
import math
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, ClassVar, Final, Literal

import numpy as np

from ...errors import ChunkEncodeError, MetadataError
from ..base import ArrayBytesCodec, ChunkSpec, V3Codec, codec_from_dict
from ..buffers import copy_runs, filled, is_all_fill
from ..bytes import BytesCodec
from ..chain import CodecChain, max_stored_size
from ..crc32c import Crc32cCodec
from ..legacy_enums import LegacyStrEnum, legacy_enum_value
from .index import EMPTY, ShardIndex

__all__ = [
    "INDEX_LOCATION", "IndexLocation", "MAX_UINT_64", "SUBCHUNK_WRITE_ORDER", "ShardingCodec",
    "ShardingCodecIndexLocation", "SubchunkWriteOrder", "morton_sorted", "shards_argument", "subchunk_order",
    "morton_order_coords", "lexicographic_order_coords", "colexicographic_order_coords",
    "with_write_settings",
]

#: where a shard's index is: before or after its chunks
IndexLocation = Literal["start", "end"]
INDEX_LOCATION: Final = ("start", "end")
#: the order inner chunks are written in a shard (not stored in the metadata: a write-time
#: setting of the codec object; ``unordered`` promises nothing, and is C order today)
SubchunkWriteOrder = Literal["morton", "unordered", "lexicographic", "colexicographic"]
SUBCHUNK_WRITE_ORDER: Final = ("morton", "unordered", "lexicographic", "colexicographic")
#: the offset and length of an empty inner chunk in a shard index
MAX_UINT_64: Final = 2**64 - 1


class ShardingCodecIndexLocation(metaclass=LegacyStrEnum):
    """Deprecated: pass ``index_location`` as a string (``"start"`` or ``"end"``).
    ``ShardingCodecIndexLocation.end`` is ``"end"``, with a warning."""

    _members: ClassVar[dict[str, str]] = {"start": "start", "end": "end"}


def shards_argument(value: Any) -> tuple[Any, str]:
    """``(shard shape, index_location)`` of a creation function's ``shards=``: a shape, or a
    ``{"shape": ..., "index_location": ...}`` dict (zarr-python 3's form).

    Raises
    ------
    TypeError
        For a dict with other keys or without ``shape``.
    """
    if not isinstance(value, Mapping):
        return value, "end"
    extra = set(value) - {"shape", "index_location"}
    if extra or "shape" not in value:
        raise TypeError(f"shards: expected {{'shape': ..., 'index_location': ...}}, got {dict(value)!r}")
    location = legacy_enum_value(value.get("index_location", "end"), "index_location", "ShardingCodec")
    if location not in INDEX_LOCATION:
        raise MetadataError(f"shards: index_location must be one of {list(INDEX_LOCATION)}, got {location!r}")
    return value["shape"], location


def with_write_settings(given: Sequence[V3Codec], parsed: Sequence[V3Codec]) -> tuple[V3Codec, ...]:
    """``parsed`` (codecs read back from the document of ``given``) with the settings of
    ``given`` no document holds: the ``subchunk_write_order`` of each sharding codec, nested
    ones included."""
    out: list[V3Codec] = []
    for g, p in zip(given, parsed):
        if isinstance(g, ShardingCodec) and isinstance(p, ShardingCodec):
            inner = with_write_settings(g.codecs, p.codecs)
            if inner != p.codecs or g.subchunk_write_order != p.subchunk_write_order:
                p = ShardingCodec(p.chunk_shape, inner, p.index_codecs, p.index_location, g.subchunk_write_order)
        out.append(p)
    return tuple(out) + tuple(parsed[len(out):])


def _chunk_shape(value: Any) -> tuple[int, ...]:
    items = (value,) if isinstance(value, (int, np.integer)) else tuple(value)
    for i, c in enumerate(items):
        if isinstance(c, bool) or not isinstance(c, (int, np.integer)) or c < 1:
            raise MetadataError(f"sharding_indexed: chunk_shape: Dimension {i}: chunk edge length must be >= 1, got {c!r}")
    return tuple(int(c) for c in items)


def _codecs(value: Any, argument: str) -> tuple[V3Codec, ...]:
    if isinstance(value, (V3Codec, Mapping)):
        value = (value,)
    out = tuple(c if isinstance(c, V3Codec) else codec_from_dict(c) for c in value)
    if not out:
        raise MetadataError(f"sharding_indexed: {argument} must hold at least a serializer (e.g. bytes)")
    return out


class ShardingCodec(ArrayBytesCodec):
    """Array→bytes codec storing a grid of inner chunks as one shard.

    Parameters
    ----------
    chunk_shape : int or sequence of int
        The shape of the inner chunks; it divides the shard's.
    codecs : sequence of codecs or codec documents, default ``(BytesCodec(),)``
        The codecs of each inner chunk.
    index_codecs : sequence, default ``(BytesCodec(), Crc32cCodec())``
        The codecs of the shard's index; they must encode it to a fixed size.
    index_location : {"end", "start"}
        Where the index is stored.
    subchunk_write_order : {"morton", "lexicographic", "colexicographic", "unordered"}
        The order inner chunks are written in a shard.  It is not part of the metadata:
        a codec read from a document writes in Morton order.
    """

    name = "sharding_indexed"

    def __init__(
        self,
        chunk_shape: Any,
        codecs: Any = None,
        index_codecs: Any = None,
        index_location: Any = "end",
        subchunk_write_order: str = "morton",
    ):
        self.chunk_shape: tuple[int, ...] = _chunk_shape(chunk_shape)
        self.codecs: tuple[V3Codec, ...] | tuple[BytesCodec] = _codecs(codecs, "codecs") if codecs is not None else (BytesCodec("little"),)
        self.index_codecs: tuple[V3Codec, ...] | tuple[BytesCodec, Crc32cCodec] = (_codecs(index_codecs, "index_codecs") if index_codecs is not None
                             else (BytesCodec("little"), Crc32cCodec()))
        index_location = legacy_enum_value(index_location, "index_location", "ShardingCodec")
        if index_location not in INDEX_LOCATION:
            raise MetadataError(
                f"sharding_indexed: index_location must be one of {list(INDEX_LOCATION)}, got {index_location!r}"
            )
        if subchunk_write_order not in SUBCHUNK_WRITE_ORDER:
            raise MetadataError(
                f"sharding_indexed: subchunk_write_order must be one of {list(SUBCHUNK_WRITE_ORDER)}, "
                f"got {subchunk_write_order!r}"
            )
        self.index_location: str = index_location
        self.subchunk_write_order: str = subchunk_write_order
        self._resolved: dict[Any, _ResolvedSharding] = {}
        # the index's size must follow from the grid alone (the spec's rule)
        index_spec = ChunkSpec((1,) * len(self.chunk_shape) + (2,), np.dtype("<u8"), None)
        if CodecChain(self.index_codecs, index_spec, "index_codecs").fixed_encoded_size() is None:
            raise MetadataError(
                "sharding_indexed: index_codecs must encode the index to a fixed size (they must produce "
                "a fixed-size encoding: a serializer of raw memory and checksums such as crc32c, no "
                f"compressor), got {list(self.index_codecs)}"
            )

    def __repr__(self) -> str:
        return (
            f"ShardingCodec(chunk_shape={self.chunk_shape!r}, codecs={self.codecs!r}, "
            f"index_codecs={self.index_codecs!r}, index_location={self.index_location!r}, "
            f"subchunk_write_order={self.subchunk_write_order!r})"
        )

    def __eq__(self, other: object) -> bool:
        return super().__eq__(other) and self.subchunk_write_order == getattr(other, "subchunk_write_order", None)

    def __hash__(self) -> int:
        return hash((repr(self.to_json()), self.subchunk_write_order))

    def __getstate__(self) -> dict[str, Any]:
        # the resolved chains are rebuilt when needed
        return {k: v for k, v in self.__dict__.items() if k != "_resolved"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._resolved = {}

    def _subchunk_order_iter(self, chunks_per_shard: tuple[int, ...], order: str | None = None) -> list[tuple[int, ...]]:
        """The coordinates of a shard's inner chunks in the order ``order`` (default: this
        codec's ``subchunk_write_order``) writes them."""
        return subchunk_order(itertools.product(*(range(g) for g in chunks_per_shard)), tuple(chunks_per_shard),
                              order or self.subchunk_write_order)

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
                f"sharding_indexed: the inner chunk_shape {list(self.chunk_shape)} and the shard "
                f"{list(spec.shape)} need to have the same number of dimensions"
            )
        for i, (s, c) in enumerate(zip(spec.shape, self.chunk_shape)):
            if s % c:
                raise MetadataError(
                    f"sharding_indexed: Chunk edge length {s} in dimension {i} is not divisible by "
                    f"the shard's inner chunk size {c}."
                )

    def evolve(self, spec: ChunkSpec) -> ShardingCodec:
        inner = CodecChain(self.codecs, ChunkSpec(self.chunk_shape, spec.dtype, spec.fill_value))
        grid = tuple(s // c for s, c in zip(spec.shape, self.chunk_shape))
        index = CodecChain(self.index_codecs, ChunkSpec(grid + (2,), np.dtype("<u8"), None))
        codec = ShardingCodec(self.chunk_shape, inner.codecs, index.codecs, self.index_location,
                              self.subchunk_write_order)
        codec._resolved[_spec_key(spec)] = _ResolvedSharding(codec, spec, inner, index)
        return codec

    def resolved(self, spec: ChunkSpec) -> _ResolvedSharding:
        key = _spec_key(spec)
        r = self._resolved.get(key)
        if r is None:
            r = self.evolve(spec)._resolved[key]
            self._resolved[key] = r
        return r

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> bytes:
        return self.resolved(spec).encode_shard(chunk)

    def decode(self, data: Any, spec: ChunkSpec) -> np.ndarray:
        return self.resolved(spec).decode_shard(data)

    def max_encoded_size(self, spec: ChunkSpec) -> int | None:
        return self.resolved(spec).max_shard_size


def _spec_key(spec: ChunkSpec) -> Any:
    """A dict key for ``spec``: its fill value by its bytes (it may be unhashable, a
    structured scalar, or unequal to itself, NaN)."""
    fill = spec.fill_value
    if isinstance(fill, (np.generic, float)) and not isinstance(fill, (np.str_, np.bytes_, np.object_)):
        value = np.asarray(fill)
        fill = (value.dtype.str, value.tobytes())
    return (spec.shape, spec.dtype, fill)


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
        fill = self.spec.fill_value
        with self.encoded(shard, key, lambda chunk: not is_all_fill(chunk, fill)) as chunks:
            return self.assemble(chunks, key)

    @contextlib.contextmanager
    def encoded(
        self,
        values: np.ndarray,
        key: str = "shard",
        keep: Callable[[np.ndarray], bool] | None = None,
        name: Callable[[tuple[int, ...]], str] | None = None,
    ) -> Iterator[dict[tuple[int, ...], Any]]:
        """The inner chunks of ``values`` (an array of the shard's shape, in any layout),
        encoded: their coordinates in the shard → their stored bytes, leaving out those
        ``keep`` refuses (none when it is None).  ``name(coords)`` names an inner chunk in
        errors (default: ``key[coords]``).

        The inner chunks are gathered into chunk order with one copy per block of them (the
        whole shard, or slabs of it when it is large), then encoded one after the other; an
        encoding that is a view of a buffer (of the chunk itself where there is no compressor,
        or the one a compressor reuses) is copied into one buffer of them all, up to
        OUT_BUFFER_BYTES (bytes of its own beyond).  Both buffers are this thread's, reused by
        its next shard, so the values are valid inside the ``with`` block only.  A whole shard
        of one value (a broadcast scalar) is encoded once.
        """
        grid, cs, inner = self.grid, self.chunk_shape, self.inner
        chunk_bytes = math.prod(cs) * values.dtype.itemsize
        name = name or (lambda coords: f"{key}[{coords}]")
        chunks: dict[tuple[int, ...], Any] = {}
        if values.size and not any(values.strides):  # one value everywhere
            first = tuple(0 for _ in grid)
            chunk = np.empty(cs, dtype=values.dtype)
            chunk[...] = values[tuple(slice(0, c) for c in cs)]
            if keep is None or keep(chunk):
                data = inner.encode(chunk, name(first))
                chunks = dict.fromkeys(itertools.product(*(range(g) for g in grid)), data)
            yield chunks
            return
        # the leading dimensions of the grid gathered one block at a time: as few as keep a
        # block within GATHER_BLOCK_BYTES (all of them: one inner chunk at a time)
        lead = next((k for k in range(len(grid) + 1) if math.prod(grid[k:]) * chunk_bytes <= GATHER_BLOCK_BYTES),
                    len(grid))
        block_grid = (1,) * lead + grid[lead:]
        buffers = _take_buffers()
        try:
            gather = buffers.gather_for(block_grid + cs, values.dtype)
            out: memoryview | None = None  # (taken when a chunk's bytes are a view: a buffer reused)
            pos = 0
            order = tuple(range(0, 2 * len(cs), 2)) + tuple(range(1, 2 * len(cs), 2))
            for head in itertools.product(*(range(g) for g in grid[:lead])):
                box = values[tuple(slice(h * c, (h + 1) * c) for h, c in zip(head, cs))]
                split = box.reshape([n for pair in zip(block_grid, cs) for n in pair]).transpose(order)
                copy_runs(gather, split)
                for rest in itertools.product(*(range(g) for g in grid[lead:])):
                    coords = head + rest
                    chunk = gather[(0,) * lead + rest]
                    if keep is not None and not keep(chunk):
                        continue
                    try:
                        encoded = inner.encode_transient(chunk, key)
                    except ChunkEncodeError as exc:  # (named here: a name costs more than most encodings)
                        raise ChunkEncodeError(exc.reason, name(coords)) from None
                    if type(encoded) is bytes:  # (its own object already)
                        chunks[coords] = encoded
                        continue
                    view = memoryview(encoded).cast("B")
                    n = view.nbytes
                    if out is None:
                        out = buffers.out_for(min(math.prod(grid) * (self.max_inner_size or chunk_bytes),
                                                  OUT_BUFFER_BYTES))
                    if pos + n <= len(out):
                        out[pos : pos + n] = view
                        chunks[coords] = out[pos : pos + n]
                        pos += n
                    else:  # (past the buffer: a large shard, or a codec beyond its bound)
                        chunks[coords] = bytes(view)
            yield chunks
        finally:
            _give_buffers(buffers)

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
        for coords in subchunk_order(chunks, self.grid, self.codec.subchunk_write_order):
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


#: the most bytes of inner chunks gathered into chunk order with one copy
#: (:meth:`_ResolvedSharding.encoded`); a larger shard is gathered in slabs
GATHER_BLOCK_BYTES = 16 * 1024 * 1024
#: gathering buffers larger than this are not kept for a thread's next shard
KEEP_BUFFER_BYTES = 32 * 1024 * 1024
#: the most bytes of a shard's encoded inner chunks copied into a thread's buffer (those
#: beyond, in a larger shard, are copied into bytes of their own)
OUT_BUFFER_BYTES = 16 * 1024 * 1024


class _ShardBuffers:
    """A thread's buffers for encoding a shard: the inner chunks gathered, and their
    encoded bytes one after the other."""

    def __init__(self) -> None:
        self.gather = np.empty(0, dtype=np.uint8)
        self.out = memoryview(np.empty(0, dtype=np.uint8))

    def gather_for(self, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        if dtype.hasobject:  # (object references: not kept once written)
            return np.empty(shape, dtype=dtype)
        n = math.prod(shape) * dtype.itemsize
        if self.gather.nbytes < n:
            self.gather = np.empty(n, dtype=np.uint8)
        return self.gather[:n].view(dtype).reshape(shape)

    def out_for(self, n: int) -> memoryview:
        if len(self.out) < n:  # (memory not written to yet: only the pages a shard fills are backed)
            self.out = memoryview(np.empty(n, dtype=np.uint8))
        return self.out


_buffers = threading.local()


def _take_buffers() -> _ShardBuffers:
    """This thread's free shard buffers (new ones when a shard is encoded inside another's
    encoding: a shard nested in an inner chunk)."""
    free = getattr(_buffers, "free", None)
    return free.pop() if free else _ShardBuffers()


def _give_buffers(buffers: _ShardBuffers) -> None:
    if buffers.gather.nbytes > KEEP_BUFFER_BYTES:
        buffers.gather = np.empty(0, dtype=np.uint8)
    free = getattr(_buffers, "free", None)
    if free is None:
        free = _buffers.free = []
    if not free:  # (one set per thread: those of a shard nested in another are dropped)
        free.append(buffers)


def subchunk_order(coords: Any, grid: tuple[int, ...], order: str = "morton") -> list[tuple[int, ...]]:
    """Inner chunk coordinates in the order a shard stores them: ``order`` is one of
    :data:`SUBCHUNK_WRITE_ORDER` (``lexicographic``: C order, the last dimension fastest;
    ``colexicographic``: F order; ``unordered``: C order too)."""
    items = list(coords)
    if order == "morton":
        return morton_sorted(items, grid)
    if order == "colexicographic":
        return sorted(items, key=lambda c: tuple(reversed(c)))
    return sorted(items)


#: the most coordinates :func:`morton_order_coords` and its siblings list (a shard's grid of
#: inner chunks has far fewer: its index takes 16 bytes per inner chunk)
MAX_ORDER_COORDS = 2**24


def _grid_shape(shape: Any) -> tuple[int, ...]:
    """``shape`` checked: non-negative ints, with at most :data:`MAX_ORDER_COORDS` cells."""
    try:
        dims = tuple(shape)
    except TypeError:
        raise TypeError(f"shape must be a sequence of ints, got {shape!r}") from None
    if not all(isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n >= 0 for n in dims):
        raise ValueError(f"shape must be a sequence of non-negative ints, got {shape!r}")
    cells = 1
    for n in dims:
        cells *= int(n)
    if cells > MAX_ORDER_COORDS:
        raise ValueError(f"shape {tuple(int(n) for n in dims)} has {cells} cells: more than the "
                         f"{MAX_ORDER_COORDS} whose coordinates can be listed")
    return tuple(int(n) for n in dims)


def _grid_coords(shape: Any) -> list[tuple[int, ...]]:
    return list(itertools.product(*(range(n) for n in _grid_shape(shape))))


def morton_order_coords(shape: Any) -> tuple[tuple[int, ...], ...]:
    """The coordinates of a grid of ``shape`` in Morton (Z) order, as shards store their
    inner chunks by default (see :func:`morton_sorted`)."""
    return tuple(morton_sorted(_grid_coords(shape), _grid_shape(shape)))


def lexicographic_order_coords(shape: Any) -> tuple[tuple[int, ...], ...]:
    """The coordinates of a grid of ``shape`` in C order (the last dimension fastest)."""
    return tuple(_grid_coords(shape))


def colexicographic_order_coords(shape: Any) -> tuple[tuple[int, ...], ...]:
    """The coordinates of a grid of ``shape`` in F order (the first dimension fastest)."""
    return tuple(subchunk_order(_grid_coords(shape), _grid_shape(shape), "colexicographic"))


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
