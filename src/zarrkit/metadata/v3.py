"""The Zarr v3 metadata dialect: ``zarr.json`` for arrays and groups.

Parsing validates the document (required fields, regular chunk grid, chunk key encoding, codecs,
unknown fields only with ``"must_understand": false``) and resolves the codec chain once.
"""

from __future__ import annotations

import dataclasses
import json
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from ..codecs.base import ChunkSpec, V3Codec
from ..codecs.chain import CodecChain, split_codecs
from ..codecs.sharding import ShardingCodec
from ..codecs.v3_builtin import NumcodecsArrayArrayCodec, TransposeCodec
from ..codecs.v3_registry import parse_v3_codec
from ..errors import MetadataError
from .common import check_chunk_size, parse_chunks_field, parse_shape_field
from .dtypes import parse_v3_data_type, parse_v3_fill_value, v3_data_type_json, v3_fill_value_json
from .grid import RegularGrid

__all__ = ["ArrayMetadataV3", "ChunkKeyEncoding", "ZARR_JSON", "json_bytes_v3", "parse_group_v3"]

ZARR_JSON = "zarr.json"

_ARRAY_REQUIRED = (
    "zarr_format", "node_type", "shape", "data_type", "chunk_grid", "chunk_key_encoding",
    "fill_value", "codecs",
)
_ARRAY_OPTIONAL = ("attributes", "storage_transformers", "dimension_names")
_GROUP_KNOWN = ("zarr_format", "node_type", "attributes", "consolidated_metadata")


def json_bytes_v3(doc: Any) -> bytes:
    """Encode a ``zarr.json`` document as zarr-python does (indent 2, no NaN literals)."""
    return json.dumps(doc, indent=2, ensure_ascii=True, allow_nan=False).encode("ascii")


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


def _parse_chunk_grid(obj: Any, ndim: int, key: str | None) -> tuple[int, ...]:
    if not isinstance(obj, dict) or obj.get("name") != "regular":
        raise MetadataError(f"chunk_grid: only the 'regular' grid is supported, got {obj!r}", key)
    config = obj.get("configuration")
    if not isinstance(config, dict) or "chunk_shape" not in config:
        raise MetadataError(f"chunk_grid: configuration needs 'chunk_shape', got {config!r}", key)
    return parse_chunks_field(config["chunk_shape"], ndim, key, "chunk_grid.chunk_shape")


@dataclasses.dataclass(frozen=True)
class ArrayMetadataV3:
    """Resolved ``zarr.json`` array metadata.

    ``grid_chunks`` is the regular grid's chunk shape (the shard shape of a sharded array);
    :attr:`chunks` is the shape the user reads and writes by (the inner chunk shape when sharded).
    """

    shape: tuple[int, ...]
    grid_chunks: tuple[int, ...]
    dtype: np.dtype
    fill_value: Any
    codecs: tuple[V3Codec, ...]
    chunk_key_encoding: ChunkKeyEncoding = ChunkKeyEncoding()
    dimension_names: tuple[str | None, ...] | None = None
    extra_fields: tuple[tuple[str, Any], ...] = ()

    zarr_format: ClassVar[int] = 3
    metadata_key: ClassVar[str] = ZARR_JSON
    order: ClassVar[str] = "C"

    def __post_init__(self) -> None:
        if len(self.grid_chunks) != len(self.shape):
            raise MetadataError(f"chunk shape {self.grid_chunks} must have as many dimensions as shape {self.shape}")
        if self.dimension_names is not None and len(self.dimension_names) != len(self.shape):
            raise MetadataError(
                f"dimension_names {list(self.dimension_names)} must have one entry per dimension of {self.shape}"
            )
        check_chunk_size(self.grid_chunks, self.dtype.itemsize)
        _ = self.codec  # resolve (and validate) the codec chain now

    # -- parsing / serialising -------------------------------------------------------------
    @classmethod
    def from_json(cls, doc: Any, key: str = ZARR_JSON) -> ArrayMetadataV3:
        if not isinstance(doc, dict):
            raise MetadataError(f"expected a JSON object, got {type(doc).__name__}", key)
        missing = [k for k in _ARRAY_REQUIRED if k not in doc]
        if missing:
            raise MetadataError(f"missing required field(s) {missing}", key)
        if doc["zarr_format"] != 3:
            raise MetadataError(f"zarr_format: expected 3, got {doc['zarr_format']!r}", key)
        if doc["node_type"] != "array":
            raise MetadataError(f"node_type: expected 'array', got {doc['node_type']!r}", key)
        extra = _check_extensions(doc, _ARRAY_REQUIRED + _ARRAY_OPTIONAL, key)
        shape = parse_shape_field(doc["shape"], key)
        grid = _parse_chunk_grid(doc["chunk_grid"], len(shape), key)
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
            return cls(shape, grid, dtype, fill, codecs, cke, names, tuple(extra.items()))
        except MetadataError as exc:
            raise MetadataError(str(exc), key) from None

    def to_json(self, attributes: dict[str, Any] | None = None) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "shape": list(self.shape),
            "data_type": v3_data_type_json(self.dtype),
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(self.grid_chunks)}},
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

    def to_bytes(self, attributes: dict[str, Any] | None = None) -> bytes:
        return json_bytes_v3(self.to_json(attributes))

    # -- what the engine uses --------------------------------------------------------------
    @cached_property
    def grid(self) -> RegularGrid:
        """The grid selections are projected on: the chunks (the inner chunks if sharded)."""
        return RegularGrid(self.shape, self.chunks)

    @cached_property
    def codec(self) -> CodecChain:
        spec = ChunkSpec(self.grid_chunks, self.dtype, self.fill_value)
        return CodecChain(self.codecs, spec)

    @cached_property
    def sharding(self) -> Any:
        """The resolved sharding codec when the chain is exactly one ``sharding_indexed``."""
        if len(self.codecs) == 1 and isinstance(self.codecs[0], ShardingCodec):
            return self.codec.ab.resolved(self.codec.specs[-1])  # type: ignore[union-attr]
        return None

    @property
    def chunks(self) -> tuple[int, ...]:
        s = self.sharding
        return s.chunk_shape if s is not None else self.grid_chunks

    @property
    def shards(self) -> tuple[int, ...] | None:
        return self.grid_chunks if self.sharding is not None else None

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
        what ``order='F'`` writes and what a v2 array of order ``'F'`` converts to — else
        ``'C'``.  (:attr:`order` is the layout the engine decodes into, always ``'C'``: the
        chain does the transposing.)"""
        aa = self.filters or ()
        ndim = len(self.shape)
        if ndim and aa and isinstance(aa[0], TransposeCodec) and tuple(aa[0].order) == tuple(reversed(range(ndim))):
            return "F"
        return "C"

    def chunk_key(self, coords: tuple[int, ...]) -> str:
        return self.chunk_key_encoding.encode(coords)

    def chunk_key_parts(self) -> tuple[str, str]:
        """``(head, separator)``: the key of chunk ``coords`` (at least one dimension) is
        ``head + separator.join(map(str, coords))``."""
        enc = self.chunk_key_encoding
        return ("c" + enc.separator if enc.name == "default" else ""), enc.separator

    def parse_chunk_key(self, key: str) -> tuple[int, ...] | None:
        return self.chunk_key_encoding.decode(key, len(self.shape))

    def evolve(self, **changes: Any) -> ArrayMetadataV3:
        if "chunks" in changes:
            chunks = changes.pop("chunks")
            if self.sharding is not None:
                raise MetadataError("changing the chunk shape of a sharded array is not supported")
            changes["grid_chunks"] = chunks
        if "filters" in changes:
            filters = changes.pop("filters") or ()
            aa = [f if isinstance(f, V3Codec) else NumcodecsArrayArrayCodec(f"numcodecs.{f.codec_id}", f) for f in filters]
            _, ab, bb = split_codecs(self.codecs)
            changes["codecs"] = tuple(aa) + (ab,) + tuple(bb)
        new = dataclasses.replace(self, **changes)
        return new


def parse_group_v3(doc: Any, key: str) -> dict[str, Any]:
    """Validate a v3 group document; returns it."""
    if not isinstance(doc, dict):
        raise MetadataError(f"expected a JSON object, got {type(doc).__name__}", key)
    if doc.get("zarr_format") != 3:
        raise MetadataError(f"zarr_format: expected 3, got {doc.get('zarr_format')!r}", key)
    if doc.get("node_type") != "group":
        raise MetadataError(f"node_type: expected 'group', got {doc.get('node_type')!r}", key)
    _check_extensions(doc, _GROUP_KNOWN, key)
    attrs = doc.get("attributes", {})
    if not isinstance(attrs, dict):
        raise MetadataError(f"attributes: expected a JSON object, got {attrs!r}", key)
    return doc
