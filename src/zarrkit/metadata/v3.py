"""The Zarr v3 metadata dialect: ``zarr.json`` for arrays and groups.

Parsing validates the document (required fields, the regular or rectilinear chunk grid, chunk key
encoding, codecs, unknown fields only with ``"must_understand": false``) and resolves the codec
chain once (once per chunk shape on a rectilinear grid).
"""

from __future__ import annotations

import array
import dataclasses
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import Any, ClassVar, Literal, TypedDict, cast

import numpy as np

from ..codecs import NumcodecsArrayArrayCodec, ShardingCodec, TransposeCodec
from ..codecs.base import ChunkSpec, V3Codec
from ..codecs.chain import CodecChain, split_codecs
from ..codecs.registry import parse_v3_codec
from ..errors import MetadataError
from . import value_codecs  # noqa: F401  (registers cast_value and scale_offset)
from .common import check_declared_sizes, parse_chunks_field, parse_document, parse_shape_field
from .dtypes import (
    object_field,
    parse_v3_data_type,
    parse_v3_fill_value,
    v3_data_type_json,
    v3_fill_value_json,
)
from .grid import (
    ChunkGrid,
    RectilinearGrid,
    RegularGrid,
    Runs,
    as_runs,
    longest_edges,
    runs_total,
)
from .json_text import as_json_lists, dump_json, json_number
from .zdtypes import ZDType, data_type_of

__all__ = [
    "ArrayMetadataV3", "ArrayV3Metadata", "ChunkKeyEncoding", "ChunkKeyEncodingParams", "ZARR_JSON", "json_bytes_v3", "parse_group_v3",
]

ZARR_JSON = "zarr.json"

_ARRAY_REQUIRED = (
    "zarr_format", "node_type", "shape", "data_type", "chunk_grid", "chunk_key_encoding",
    "fill_value", "codecs",
)
_ARRAY_OPTIONAL = ("attributes", "storage_transformers", "dimension_names")
_GROUP_KNOWN = ("zarr_format", "node_type", "attributes", "consolidated_metadata")


def json_bytes_v3(doc: Any, key: str | None = None) -> bytes:
    """Encode a ``zarr.json`` document as zarr-python does (indent 2); a document nested
    deeper than :data:`~zarrkit.metadata.json_text.MAX_JSON_DEPTH` is a
    :class:`~zarrkit.errors.MetadataError` naming ``key``.

    NaN and the infinities are written as the bare ``NaN``, ``Infinity`` and ``-Infinity``
    tokens, as zarr-python 3 writes them in attributes (fill values are spelled as strings by
    their data type, so only attributes hold them); numpy scalars as the numbers they are."""
    return dump_json(doc, key, indent=2, allow_nan=True, default=json_number)


def _check_extensions(doc: dict[str, Any], known: tuple[str, ...], key: str | None) -> dict[str, Any]:
    """Unknown top-level fields are errors unless they declare ``"must_understand": false``."""
    extra = {}
    for name, value in doc.items():
        if name in known:
            continue
        if isinstance(value, dict) and value.get("must_understand") is False:
            extra[name] = value
            continue
        raise MetadataError(
            f"unknown field {name!r} (only fields with \"must_understand\": false may be ignored)", key
        )
    return extra


class ChunkKeyEncodingParams(TypedDict, total=False):
    """zarr-python 3's short form of a chunk key encoding: ``{"name": ..., "separator": ...}``."""

    name: Literal["default", "v2"]
    separator: Literal[".", "/"]


@dataclasses.dataclass(frozen=True)
class ChunkKeyEncoding:
    """``default`` (``c/1/2``) or ``v2`` (``1.2``) chunk keys with a separator."""

    name: str = "default"
    separator: str = "/"

    @classmethod
    def from_json(cls, obj: Any, key: str | None) -> ChunkKeyEncoding:
        if isinstance(obj, str):
            obj = {"name": obj}
        if not isinstance(obj, dict) or obj.get("name") not in ("default", "v2"):
            raise MetadataError(f"chunk_key_encoding: expected name 'default' or 'v2', got {obj!r}", key)
        name = obj["name"]
        config = obj.get("configuration") or {}
        if not isinstance(config, dict) or set(config) - {"separator"}:
            raise MetadataError(f"chunk_key_encoding: unexpected configuration {config!r}", key)
        sep = config.get("separator", "/" if name == "default" else ".")
        if sep not in ("/", "."):
            raise MetadataError(f"chunk_key_encoding: separator must be '/' or '.', got {sep!r}", key)
        return cls(name, sep)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "configuration": {"separator": self.separator}}

    def encode(self, coords: tuple[int, ...]) -> str:
        if self.name == "default":
            if not coords:
                return "c"
            sep = self.separator
            return "c" + sep + sep.join(map(str, coords))
        return self.separator.join(map(str, coords)) if coords else "0"

    def decode(self, key: str, ndim: int) -> tuple[int, ...] | None:
        if self.name == "default":
            if key == "c":
                return () if ndim == 0 else None
            if not key.startswith("c" + self.separator):
                return None
            parts = key[2:].split(self.separator)
        else:
            if ndim == 0:
                return () if key == "0" else None
            parts = key.split(self.separator)
        if len(parts) != ndim or not all(p.isdigit() for p in parts):
            return None
        return tuple(int(p) for p in parts)


#: the most chunks a rectilinear dimension may declare (each run counts its repetitions)
MAX_RECTILINEAR_CHUNKS = 2**53


def _parse_chunk_grid(obj: Any, ndim: int, key: str | None) -> tuple[tuple[int, ...], tuple[int | Runs, ...] | None]:
    """``(chunk shape, None)`` for a regular grid; ``((), edges)`` for a rectilinear one."""
    name = obj.get("name") if isinstance(obj, dict) else None
    if name not in ("regular", "rectilinear"):
        raise MetadataError(
            f"chunk_grid: expected the 'regular' or 'rectilinear' grid, got {obj!r}", key
        )
    config = obj.get("configuration")
    if name == "rectilinear":
        if not isinstance(config, dict) or config.get("kind") != "inline" or "chunk_shapes" not in config:
            raise MetadataError(
                f"chunk_grid: a rectilinear grid needs 'kind': 'inline' and 'chunk_shapes', got {config!r}", key
            )
        return (), parse_chunk_shapes(config["chunk_shapes"], ndim, key)
    if not isinstance(config, dict) or "chunk_shape" not in config:
        raise MetadataError(f"chunk_grid: configuration needs 'chunk_shape', got {config!r}", key)
    return parse_chunks_field(config["chunk_shape"], ndim, key, "chunk_grid.chunk_shape"), None


def _positive(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= MAX_RECTILINEAR_CHUNKS


#: the most runs (listed edges and ``[length, count]`` pairs) the ``chunk_shapes`` of one
#: document may list: each costs a few bytes to keep, and a document listing more is no array
#: anyone wrote
MAX_RECTILINEAR_RUNS = 1 << 25
#: the largest sum of edge lengths, or of chunk counts, a rectilinear dimension may declare
#: (kept in int64)
MAX_RECTILINEAR_TOTAL = 1 << 62


def parse_chunk_shapes(value: Any, ndim: int, key: str | None = None) -> tuple[int | Runs, ...]:
    """The ``chunk_shapes`` of a rectilinear grid: per dimension an int (one edge length
    repeated) or :class:`~zarrkit.metadata.grid.Runs` from a list of ints and
    ``[length, count]`` pairs (adjacent equal lengths merged).  A list of millions of edges
    is read into numpy arrays, never one Python object an edge; more than
    :data:`MAX_RECTILINEAR_RUNS` of them raise :class:`MetadataError`."""
    field = "chunk_grid.chunk_shapes"
    if not isinstance(value, list) or len(value) != ndim:
        raise MetadataError(f"{field}: expected a list of {ndim} entries (one per dimension), got {value!r}", key)
    listed = sum(len(e) for e in value if isinstance(e, list))
    if listed > MAX_RECTILINEAR_RUNS:
        raise MetadataError(
            f"{field}: expected at most {MAX_RECTILINEAR_RUNS} edge lengths and [length, count] "
            f"pairs in all, got {listed}", key
        )
    out: list[int | Runs] = []
    for dim, entry in enumerate(value):
        if _positive(entry):
            out.append(entry)
            continue
        if not isinstance(entry, list):
            raise MetadataError(f"{field}[{dim}]: expected a positive integer or a list of edge lengths, got {entry!r}", key)
        out.append(_parse_runs(entry, f"{field}[{dim}]", key))
    return tuple(out)


def _parse_runs(entry: list[Any], field: str, key: str | None) -> Runs:
    """One dimension's list of edges as runs, checked: positive integers or pairs of them."""
    if set(map(type, entry)) <= {int}:  # the plain form: a list of edge lengths
        try:
            lengths = np.array(entry, dtype=np.int64)
        except OverflowError:
            lengths = np.zeros(1, dtype=np.int64)  # refused below, named by the loop
            bad = next(i for i, v in enumerate(entry) if not _positive(v))
        else:
            wrong = np.flatnonzero((lengths < 1) | (lengths > MAX_RECTILINEAR_CHUNKS))
            bad = int(wrong[0]) if len(wrong) else None
        if bad is not None:
            raise MetadataError(
                f"{field}: edge lengths are positive integers or [length, count] pairs, got {entry[bad]!r}", key
            )
        counts = np.broadcast_to(np.int64(1), len(entry))  # one each: no memory
    else:
        listed, repeats = array.array("q"), array.array("q")  # 8 bytes an entry, appended fast
        for item in entry:
            if _positive(item):
                listed.append(item)
                repeats.append(1)
            elif type(item) is list and len(item) == 2 and _positive(item[0]) and _positive(item[1]):
                listed.append(item[0])
                repeats.append(item[1])
            else:
                raise MetadataError(
                    f"{field}: edge lengths are positive integers or [length, count] pairs, got {item!r}", key
                )
        lengths = np.frombuffer(listed, dtype=np.int64)
        counts = np.frombuffer(repeats, dtype=np.int64)
    # the sums must fit in int64: checked in floats (exact enough for a bound), the exact sum
    # of lengths only when the longest edge times the chunk count does not bound it already
    chunks = float(counts.sum(dtype=np.float64)) if len(counts) else 0.0
    edges = float(lengths.max()) * chunks if len(lengths) else 0.0
    if edges > MAX_RECTILINEAR_TOTAL:
        edges = float(np.dot(lengths.astype(np.float64), counts.astype(np.float64)))
    for what, total in (("edge lengths", edges), ("chunk counts", chunks)):
        if total > MAX_RECTILINEAR_TOTAL:
            raise MetadataError(f"{field}: expected {what} summing to at most 2**62, got about {total:.3g}", key)
    return Runs.from_arrays(lengths, counts)


def chunk_shapes_json(chunk_shapes: tuple[int | Runs, ...]) -> list[Any]:
    """``chunk_shapes`` as stored: runs of one edge as the bare length, longer runs as
    ``[length, count]`` (what zarr-python writes)."""
    return [
        e if isinstance(e, int) else [length if count == 1 else [length, count] for length, count in e]
        for e in chunk_shapes  # (a Runs gives Python ints)
    ]


def _check_grid_covers(shape: tuple[int, ...], chunk_shapes: tuple[int | Runs, ...]) -> None:
    for dim, (size, e) in enumerate(zip(shape, chunk_shapes)):
        if isinstance(e, int):
            continue
        total = runs_total(e)
        if total < size:
            raise MetadataError(
                f"chunk_grid.chunk_shapes[{dim}]: the edge lengths sum to {total}, less than the "
                f"array's length {size} along dimension {dim}"
            )


@dataclasses.dataclass(frozen=True)
class ArrayMetadataV3:
    """Resolved ``zarr.json`` array metadata.

    ``grid_chunks`` is the regular grid's chunk shape (the shard shape of a sharded array);
    :attr:`chunks` is the shape the user reads and writes by (the inner chunk shape when sharded).
    A rectilinear grid has its edges in ``chunk_shapes`` (see :func:`parse_chunk_shapes`);
    ``grid_chunks`` is then the longest edge along each dimension.
    """

    shape: tuple[int, ...]
    grid_chunks: tuple[int, ...]
    dtype: np.dtype
    fill_value: Any
    codecs: tuple[V3Codec, ...]
    chunk_key_encoding: ChunkKeyEncoding = ChunkKeyEncoding()
    dimension_names: tuple[str | None, ...] | None = None
    extra_fields: tuple[tuple[str, Any], ...] = ()
    chunk_shapes: tuple[int | Runs, ...] | None = None
    #: the attributes that came with the metadata (:meth:`from_dict`); the engine keeps an
    #: array's attributes apart, and they take no part in equality
    attributes: dict[str, Any] = dataclasses.field(default_factory=dict, compare=False, repr=False)

    zarr_format: ClassVar[Literal[3]] = 3
    metadata_key: ClassVar[str] = ZARR_JSON
    #: reads come in the memory order of zarr-python 3's ``array.order`` setting: v3 stores its
    #: layout in the codecs, and leaves the order of what a read gives to the reader
    reads_in_config_order: ClassVar[bool] = True
    order: ClassVar[str] = "C"

    def __post_init__(self) -> None:
        if self.chunk_shapes is not None:
            if len(self.chunk_shapes) != len(self.shape):
                raise MetadataError(
                    f"chunk_shapes must have one entry per dimension of {self.shape}, got {len(self.chunk_shapes)}"
                )
            _check_grid_covers(self.shape, self.chunk_shapes)
            object.__setattr__(self, "grid_chunks", longest_edges(self.chunk_shapes))
        if len(self.grid_chunks) != len(self.shape):
            raise MetadataError(f"chunk shape {self.grid_chunks} must have as many dimensions as shape {self.shape}")
        if self.dimension_names is not None and len(self.dimension_names) != len(self.shape):
            raise MetadataError(
                f"dimension_names {list(self.dimension_names)} must have one entry per dimension of {self.shape}"
            )
        field = object_field(self.dtype)
        if field:
            # v3 has strings and bytes as data types of their own, no object fields in a struct
            raise MetadataError(
                f"data_type: field {field!r} holds Python objects; expected fields of fixed-size "
                f"data types, got {self.dtype}"
            )
        _ = self.codec  # resolve (and validate) the codec chain now
        check_declared_sizes(self)
        s = self.sharding
        if s is not None and self.chunk_shapes is not None:
            for dim, (e, c) in enumerate(zip(self.chunk_shapes, s.chunk_shape)):
                lengths = np.asarray([e] if isinstance(e, int) else as_runs(e).lengths)
                bad = lengths[lengths % c != 0][:1].tolist()
                if bad:
                    raise MetadataError(
                        f"chunk_grid.chunk_shapes[{dim}]: shard length {bad[0]} is not a multiple "
                        f"of the inner chunk length {c} of sharding_indexed"
                    )

    # -- parsing / serialising -------------------------------------------------------------
    @classmethod
    def from_json(cls, doc: Any, key: str = ZARR_JSON) -> ArrayMetadataV3:
        doc = parse_document(doc, _ARRAY_REQUIRED, key)
        if doc["zarr_format"] != 3:
            raise MetadataError(f"zarr_format: expected 3, got {doc['zarr_format']!r}", key)
        if doc["node_type"] != "array":
            raise MetadataError(f"node_type: expected 'array', got {doc['node_type']!r}", key)
        extra = _check_extensions(doc, _ARRAY_REQUIRED + _ARRAY_OPTIONAL, key)
        shape = parse_shape_field(doc["shape"], key)
        grid, chunk_shapes = _parse_chunk_grid(doc["chunk_grid"], len(shape), key)
        dtype = parse_v3_data_type(doc["data_type"], key)
        fill = parse_v3_fill_value(doc["fill_value"], dtype, key)
        cke = ChunkKeyEncoding.from_json(doc["chunk_key_encoding"], key)
        if not isinstance(doc["codecs"], list) or not doc["codecs"]:
            raise MetadataError(f"codecs: expected a non-empty list, got {doc['codecs']!r}", key)
        codecs = tuple(parse_v3_codec(c, key) for c in doc["codecs"])
        transformers = doc.get("storage_transformers", [])
        if transformers:
            raise MetadataError(f"storage_transformers {transformers!r} are not supported", key)
        names = doc.get("dimension_names")
        if names is not None:
            if not isinstance(names, list) or not all(n is None or isinstance(n, str) for n in names):
                raise MetadataError(f"dimension_names: expected a list of strings or nulls, got {names!r}", key)
            names = tuple(names)
        attrs = doc.get("attributes", {})
        if not isinstance(attrs, dict):
            raise MetadataError(f"attributes: expected a JSON object, got {attrs!r}", key)
        try:
            return cls(shape, grid, dtype, fill, codecs, cke, names, tuple(extra.items()), chunk_shapes)
        except MetadataError as exc:
            raise MetadataError(str(exc), key) from None

    def to_json(self, attributes: dict[str, Any] | None = None) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "shape": list(self.shape),
            "data_type": v3_data_type_json(self.dtype),
            "chunk_grid": self.chunk_grid_json(),
            "chunk_key_encoding": self.chunk_key_encoding.to_json(),
            "fill_value": v3_fill_value_json(self.fill_value, self.dtype),
            "codecs": self.codec.to_json(),
            "attributes": attributes or {},
        }
        if self.dimension_names is not None:
            doc["dimension_names"] = list(self.dimension_names)
        doc["zarr_format"] = 3
        doc["node_type"] = "array"
        doc["storage_transformers"] = []
        doc.update(dict(self.extra_fields))
        return doc

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ArrayMetadataV3:
        """zarr-python 3's form: the ``zarr.json`` fields, tuples allowed for lists; its
        ``attributes`` are kept in :attr:`attributes`.

        Raises
        ------
        MetadataError
            An invalid or missing field, named.
        """
        if not isinstance(data, Mapping):
            raise TypeError(f"from_dict: expected a dict of the zarr.json fields, got {type(data).__name__}")
        doc = as_json_lists(dict(data), "zarr.json")
        meta = cls.from_json(doc)
        attributes = doc.get("attributes") or {}
        return dataclasses.replace(meta, attributes=dict(attributes)) if attributes else meta

    def to_dict(self) -> dict[str, Any]:
        """zarr-python 3's form: the ``zarr.json`` document with :attr:`attributes`, its
        ``shape``, regular ``chunk_shape``, ``codecs``, ``storage_transformers`` and
        ``dimension_names`` as tuples."""
        doc = self.to_json(self.attributes)
        doc["shape"] = tuple(self.shape)
        grid = doc["chunk_grid"]
        if grid.get("name") == "regular":
            doc["chunk_grid"] = {**grid, "configuration": {"chunk_shape": tuple(self.grid_chunks)}}
        doc["codecs"] = tuple(doc["codecs"])
        doc["storage_transformers"] = ()
        if self.dimension_names is not None:
            doc["dimension_names"] = tuple(self.dimension_names)
        return doc

    def to_bytes(self, attributes: dict[str, Any] | None = None, key: str | None = None) -> bytes:
        """The ``zarr.json`` document; :class:`~zarrkit.errors.MetadataError` naming ``key``
        when ``attributes`` nest too deeply to be written."""
        return json_bytes_v3(self.to_json(attributes), key)

    def chunk_grid_json(self) -> dict[str, Any]:
        if self.chunk_shapes is None:
            return {"name": "regular", "configuration": {"chunk_shape": list(self.grid_chunks)}}
        return {
            "name": "rectilinear",
            "configuration": {"kind": "inline", "chunk_shapes": chunk_shapes_json(self.chunk_shapes)},
        }

    # -- what the engine uses --------------------------------------------------------------
    @cached_property
    def storage_grid(self) -> ChunkGrid:
        """The grid of the stored objects: the chunks, or the shards of a sharded array."""
        if self.chunk_shapes is not None:
            return RectilinearGrid(self.shape, self.chunk_shapes)
        return RegularGrid(self.shape, self.grid_chunks)

    @cached_property
    def grid(self) -> ChunkGrid:
        """The grid selections are projected on: the chunks (the inner chunks if sharded)."""
        s = self.sharding
        return RegularGrid(self.shape, s.chunk_shape) if s is not None else self.storage_grid

    @cached_property
    def codec(self) -> CodecChain:
        spec = ChunkSpec(self.grid_chunks, self.dtype, self.fill_value)
        return CodecChain(self.codecs, spec)

    @cached_property
    def _codecs_by_shape(self) -> dict[tuple[int, ...], CodecChain]:
        return {}

    def codec_for(self, shape: tuple[int, ...]) -> CodecChain:
        """The codec chain of a stored object of ``shape`` (a chunk of a rectilinear grid)."""
        if shape == self.grid_chunks:
            return self.codec
        cache = self._codecs_by_shape
        chain = cache.get(shape)
        if chain is None:
            if len(cache) >= 256:
                cache.clear()
            chain = cache[shape] = CodecChain(self.codecs, ChunkSpec(shape, self.dtype, self.fill_value))
        return chain

    @cached_property
    def sharding(self) -> Any:
        """The resolved sharding codec when the chain is exactly one ``sharding_indexed``."""
        if len(self.codecs) == 1 and isinstance(self.codecs[0], ShardingCodec):
            return cast(ShardingCodec, self.codec.ab).resolved(self.codec.specs[-1])  # codecs[0], evolved
        return None

    def sharding_at(self, shard_coords: tuple[int, ...]) -> Any:
        """The resolved sharding codec of the shard at ``shard_coords`` (shards of a
        rectilinear grid differ in shape, and so in their number of inner chunks)."""
        shape = self.storage_grid.chunk_shape(shard_coords)
        if shape == self.grid_chunks:
            return self.sharding
        return self.codecs[0].resolved(ChunkSpec(shape, self.dtype, self.fill_value))  # type: ignore[attr-defined]

    def shard_dims(self) -> tuple[Any, ...] | None:
        """On a rectilinear grid of shards, the shards' extents on the inner chunk grid, one
        dimension at a time (see :class:`~zarrkit.codecs.sharding.store.ShardedStore`); None for
        a regular grid."""
        s = self.sharding
        if s is None or self.chunk_shapes is None:
            return None
        inner = tuple(-(-n // c) for n, c in zip(self.shape, s.chunk_shape))
        edges = tuple(
            e // c if isinstance(e, int) else Runs.from_arrays(as_runs(e).lengths // c, as_runs(e).counts)
            for e, c in zip(self.chunk_shapes, s.chunk_shape)
        )
        return RectilinearGrid(inner, edges).dims

    def declared_edges(self) -> tuple[Any, ...]:
        """The edges of a rectilinear grid as creation takes them: per dimension an int, or
        the lengths of the chunks (shards) holding part of the array, as declared (the last
        may extend past the array)."""
        assert self.chunk_shapes is not None
        return tuple(
            e if isinstance(e, int) else tuple(d.length(c) for c in range(d.n))
            for e, d in zip(self.chunk_shapes, self.storage_grid.dims)
        )

    @property
    def data_type(self) -> ZDType:
        """The data type as an object (zarr-python 3's ``metadata.data_type``)."""
        return data_type_of(self.dtype)

    @property
    def chunks(self) -> tuple[Any, ...]:
        """The chunk shape (inner chunks when sharded); on a rectilinear grid, the edge lengths
        of the chunks along each dimension, as dask gives them."""
        s = self.sharding
        if s is not None:
            return s.chunk_shape
        return self.grid_chunks if self.chunk_shapes is None else edge_lengths(self.storage_grid)

    @property
    def shards(self) -> tuple[Any, ...] | None:
        """The shard shape of a sharded array (the edge lengths per dimension on a rectilinear
        grid of shards), else None."""
        if self.sharding is None:
            return None
        return self.grid_chunks if self.chunk_shapes is None else edge_lengths(self.storage_grid)

    def _top_chain(self) -> CodecChain:
        s = self.sharding
        return s.inner if s is not None else self.codec

    @property
    def filters(self) -> tuple[Any, ...] | None:
        return tuple(self._top_chain().aa) or None

    @property
    def compressors(self) -> tuple[Any, ...]:
        return tuple(self._top_chain().bb)

    @property
    def compressor(self) -> Any:
        bb = self.compressors
        return bb[0] if len(bb) == 1 else None

    @property
    def serializer(self) -> Any:
        return self._top_chain().ab

    @property
    def layout_order(self) -> str:
        """The order of the elements within a stored chunk as zarr-python 2 names it: ``'F'``
        when the (inner) chain begins with the transpose codec of the reverse permutation —
        what a v2 array of order ``'F'`` converts to — else ``'C'``.  (:attr:`order` is the
        layout the engine decodes into, always ``'C'``: the chain does the transposing.)"""
        aa = self.filters or ()
        ndim = len(self.shape)
        if ndim and aa and isinstance(aa[0], TransposeCodec) and aa[0].order == TransposeCodec.reversing(ndim).order:
            return "F"
        return "C"

    def chunk_key(self, coords: tuple[int, ...]) -> str:
        return self.chunk_key_encoding.encode(coords)

    #: zarr-python 3's name of :meth:`chunk_key`
    encode_chunk_key = chunk_key

    def chunk_key_parts(self) -> tuple[str, str]:
        """``(head, separator)``: the key of chunk ``coords`` (at least one dimension) is
        ``head + separator.join(map(str, coords))``."""
        enc = self.chunk_key_encoding
        return ("c" + enc.separator if enc.name == "default" else ""), enc.separator

    def parse_chunk_key(self, key: str) -> tuple[int, ...] | None:
        return self.chunk_key_encoding.decode(key, len(self.shape))

    def update_shape(self, shape: Sequence[int]) -> ArrayMetadataV3:
        """A copy of another shape (zarr-python 3's method; a rectilinear grid grows as
        :meth:`evolve` grows it)."""
        return self.evolve(shape=tuple(int(n) for n in shape))

    def evolve(self, **changes: Any) -> ArrayMetadataV3:
        if "shape" in changes and self.chunk_shapes is not None and "chunk_shapes" not in changes:
            s = self.sharding
            unit = s.chunk_shape if s is not None else (1,) * len(self.shape)
            changes["chunk_shapes"] = grown_chunk_shapes(self.chunk_shapes, tuple(changes["shape"]), unit)
        if "chunks" in changes:
            chunks = changes.pop("chunks")
            if self.sharding is not None or self.chunk_shapes is not None:
                raise MetadataError("changing the chunk shape of a sharded or rectilinear array is not supported")
            changes["grid_chunks"] = chunks
        if "filters" in changes:
            filters = changes.pop("filters") or ()
            aa = [f if isinstance(f, V3Codec) else NumcodecsArrayArrayCodec(f"numcodecs.{f.codec_id}", f) for f in filters]
            _, ab, bb = split_codecs(self.codecs)
            changes["codecs"] = tuple(aa) + (ab,) + tuple(bb)
        new = dataclasses.replace(self, **changes)
        return new


def edge_lengths(grid: ChunkGrid) -> tuple[tuple[int, ...], ...]:
    """The lengths of the parts of the chunks inside the array along each dimension of
    ``grid`` (they sum to the array's length, as dask's chunks)."""
    return tuple(tuple(d.stop(c) - d.start(c) for c in range(d.n)) for d in grid.dims)


def grown_chunk_shapes(
    chunk_shapes: tuple[int | Runs, ...], shape: tuple[int, ...], unit: tuple[int, ...]
) -> tuple[int | Runs, ...]:
    """The edges of a rectilinear grid for an array resized to ``shape``: a dimension grown
    past the sum of its edges gets one more chunk covering the difference (what zarr-python
    does), rounded up to a multiple of ``unit`` (the inner chunk of a shard); nothing else
    changes (chunks past a shrunk length stay declared)."""
    out: list[int | Runs] = []
    for size, e, u in zip(shape, chunk_shapes, unit):
        if not isinstance(e, int):
            total = runs_total(e)
            if size > total:
                runs = as_runs(e)
                extra = -(-(size - total) // u) * u
                e = Runs.from_arrays(np.append(runs.lengths, extra), np.append(runs.counts, 1))
        out.append(e)
    return tuple(out)


def parse_group_v3(doc: Any, key: str) -> dict[str, Any]:
    """Validate a v3 group document; returns it."""
    doc = parse_document(doc, (), key)
    if doc.get("zarr_format") != 3:
        raise MetadataError(f"zarr_format: expected 3, got {doc.get('zarr_format')!r}", key)
    if doc.get("node_type") != "group":
        raise MetadataError(f"node_type: expected 'group', got {doc.get('node_type')!r}", key)
    _check_extensions(doc, _GROUP_KNOWN, key)
    attrs = doc.get("attributes", {})
    if not isinstance(attrs, dict):
        raise MetadataError(f"attributes: expected a JSON object, got {attrs!r}", key)
    return doc



#: zarr-python 3's name of the class (``zarr.core.metadata.v3.ArrayV3Metadata``)
ArrayV3Metadata = ArrayMetadataV3
