"""The Zarr v2 metadata dialect: ``.zarray``, ``.zgroup``, ``.zattrs``.

Parsing turns a ``.zarray`` document into a frozen :class:`ArrayMetadataV2`; everything the chunk
engine needs (chunk keys, the resolved codec chain) is derived from it once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import Any, ClassVar, Literal

import numpy as np
from numcodecs.abc import Codec

from ..codecs.base import ChunkSpec
from ..codecs.chain import CodecChain
from ..codecs.registry import codec_config, get_codec
from ..codecs.v2 import OBJECT_CODEC_IDS, v2_codecs
from ..errors import MetadataError
from .common import check_declared_sizes, parse_chunks_field, parse_document, parse_shape_field
from .dtypes import (
    BYTES_DTYPE,
    object_field,
    parse_v2_dtype,
    parse_v2_fill_value,
    v2_dtype_json,
    v2_fill_value_json,
)
from .grid import RegularGrid
from .json_text import as_json_lists, dump_json, json_number

__all__ = [
    "ArrayMetadataV2", "ArrayV2Metadata", "ARRAY_KEY", "GROUP_KEY", "ATTRS_KEY", "group_document_v2", "check_object_codec",
]

ARRAY_KEY = ".zarray"
GROUP_KEY = ".zgroup"
ATTRS_KEY = ".zattrs"

_REQUIRED = ("zarr_format", "shape", "chunks", "dtype", "compressor", "fill_value", "order", "filters")
_OPTIONAL = ("dimension_separator",)


def json_bytes(doc: Any, key: str | None = None) -> bytes:
    """Encode a metadata document the way zarr-python writes it (sorted keys, indent 4); a
    document nested deeper than :data:`~zarrkit.metadata.json_text.MAX_JSON_DEPTH` is a
    :class:`~zarrkit.errors.MetadataError` naming ``key``.  NaN and the infinities are bare
    ``NaN``/``Infinity`` tokens, as zarr-python writes attributes (``.zmetadata`` holds them;
    fill values are spelled as strings), numpy scalars the numbers they are."""
    return dump_json(doc, key, indent=4, sort_keys=True, allow_nan=True, default=json_number)


def check_object_codec(dtype: np.dtype, filters: tuple[Codec, ...] | None, key: str | None = None) -> None:
    """An array whose elements hold Python objects is stored only through an object codec,
    first in ``filters``: its chunks are never raw memory (bytes that would become pointers).
    A structured dtype with object fields (at any depth) needs ``pickle``, the one codec that
    encodes such values; a plain object dtype any object codec."""
    path = object_field(dtype)
    if path is None:
        return
    first = getattr(filters[0], "codec_id", None) if filters else None
    got = f"{first!r}" if first is not None else "no filters"
    if path:
        if first != "pickle":
            raise MetadataError(
                f"dtype: field {path!r} holds Python objects ('|O'); a structured dtype with object "
                f"fields is stored only through the 'pickle' object codec: expected 'pickle' as "
                f"the first filter, got {got}",
                key,
            )
    elif first not in OBJECT_CODEC_IDS:
        raise MetadataError(
            f"dtype '|O' (object) needs an object codec as its first filter: expected one of "
            f"{sorted(OBJECT_CODEC_IDS)}, got {got}",
            key,
        )


def group_document_v2() -> dict[str, Any]:
    return {"zarr_format": 2}


@dataclasses.dataclass(frozen=True)
class ArrayMetadataV2:
    """Resolved ``.zarray`` metadata.

    ``filters`` is ``None`` when the document says ``null`` (kept apart from ``[]`` so the
    document round-trips).  For object arrays the first filter is the object codec.
    """

    shape: tuple[int, ...]
    chunks: tuple[int, ...]
    dtype: np.dtype
    compressor: Codec | None
    fill_value: Any
    order: str = "C"
    filters: tuple[Codec, ...] | None = None
    dimension_separator: str = "."
    #: the ``.zattrs`` that came with the metadata (:meth:`from_dict`); not part of the
    #: ``.zarray`` document, nor of equality
    attributes: dict[str, Any] = dataclasses.field(default_factory=dict, compare=False, repr=False)

    zarr_format: ClassVar[Literal[2]] = 2
    metadata_key: ClassVar[str] = ARRAY_KEY
    #: reads come in the array's own ``order`` (zarr-python 2), not in the configured one
    reads_in_config_order: ClassVar[bool] = False

    @property
    def layout_order(self) -> str:
        """The ``order`` field (as :attr:`ArrayMetadataV3.layout_order` is for v3)."""
        return self.order

    def __post_init__(self) -> None:
        if len(self.shape) != len(self.chunks):
            raise MetadataError(
                f"chunks {self.chunks} must have as many dimensions as shape {self.shape}"
            )
        if self.order not in ("C", "F"):
            raise MetadataError(f"order must be 'C' or 'F', got {self.order!r}")
        if self.dimension_separator not in (".", "/"):
            raise MetadataError(
                f"dimension_separator must be '.' or '/', got {self.dimension_separator!r}"
            )
        check_object_codec(self.dtype, self.filters)
        _ = self.codec  # resolve (and validate) the codec chain now
        check_declared_sizes(self)

    # -- parsing / serialising -------------------------------------------------------------
    @classmethod
    def from_json(cls, doc: Any, key: str = ARRAY_KEY) -> ArrayMetadataV2:
        """Validate and resolve a ``.zarray`` document; errors name ``key`` and the field."""
        doc = parse_document(doc, _REQUIRED, key)
        extra = sorted(set(doc) - set(_REQUIRED) - set(_OPTIONAL))
        if extra:
            raise MetadataError(f"unexpected field(s) {extra} (the v2 spec allows no others)", key)
        if doc["zarr_format"] != 2:
            raise MetadataError(f"zarr_format: expected 2, got {doc['zarr_format']!r}", key)
        shape = parse_shape_field(doc["shape"], key)
        chunks = parse_chunks_field(doc["chunks"], len(shape), key)
        dtype = parse_v2_dtype(doc["dtype"], key)
        order = doc["order"]
        if order not in ("C", "F"):
            raise MetadataError(f"order: expected 'C' or 'F', got {order!r}", key)
        compressor = None if doc["compressor"] is None else get_codec(doc["compressor"], key)
        filters_doc = doc["filters"]
        if filters_doc is None:
            filters = None
        elif isinstance(filters_doc, list):
            filters = tuple(get_codec(f, key) for f in filters_doc)
        else:
            raise MetadataError(f"filters: expected a list or null, got {filters_doc!r}", key)
        check_object_codec(dtype, filters, key)
        fill_value = parse_v2_fill_value(doc["fill_value"], dtype, key)
        if dtype.kind == "O" and filters and filters[0].codec_id == "vlen-bytes":
            dtype = BYTES_DTYPE
            if isinstance(fill_value, str):  # byte strings are stored base64-encoded
                fill_value = parse_v2_fill_value(fill_value, np.dtype("S0"), key)
        sep = doc.get("dimension_separator", ".")
        if sep is None:
            sep = "."
        if sep not in (".", "/"):
            raise MetadataError(f"dimension_separator: expected '.' or '/', got {sep!r}", key)
        try:
            return cls(shape, chunks, dtype, compressor, fill_value, order, filters, sep)
        except MetadataError as exc:
            raise MetadataError(str(exc), key) from None

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "zarr_format": 2,
            "shape": list(self.shape),
            "chunks": list(self.chunks),
            "dtype": v2_dtype_json(self.dtype),
            "compressor": None if self.compressor is None else codec_config(self.compressor),
            "fill_value": v2_fill_value_json(self.fill_value, self.dtype),
            "order": self.order,
            "filters": None if self.filters is None else [codec_config(f) for f in self.filters],
        }
        if self.dimension_separator != ".":
            doc["dimension_separator"] = self.dimension_separator
        return doc

    def to_bytes(self, key: str | None = None) -> bytes:
        return json_bytes(self.to_json(), key)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ArrayMetadataV2:
        """zarr-python 3's form: the ``.zarray`` fields (tuples allowed for lists) and, under
        ``attributes``, the array's attributes.

        Raises
        ------
        MetadataError
            An invalid or missing field, named.

        Examples
        --------
        >>> m = ArrayMetadataV2.from_dict({'zarr_format': 2, 'shape': (4,), 'chunks': (2,),
        ...     'dtype': '<i2', 'compressor': None, 'filters': None, 'fill_value': 0,
        ...     'order': 'C', 'attributes': {'a': 1}})
        >>> m.shape, m.attributes
        ((4,), {'a': 1})
        """
        if not isinstance(data, Mapping):
            raise TypeError(f"from_dict: expected a dict of the .zarray fields, got {type(data).__name__}")
        doc = as_json_lists(dict(data), ".zarray")
        attributes = doc.pop("attributes", None) or {}
        return dataclasses.replace(cls.from_json(doc), attributes=dict(attributes))

    def to_dict(self) -> dict[str, Any]:
        """zarr-python 3's form: the ``.zarray`` fields (``shape`` and ``chunks`` as tuples,
        ``dimension_separator`` always) and ``attributes``."""
        doc = self.to_json()
        doc.update(shape=self.shape, chunks=self.chunks, dimension_separator=self.dimension_separator,
                   attributes=dict(self.attributes))
        return doc

    # -- what the engine uses --------------------------------------------------------------
    @cached_property
    def grid(self) -> RegularGrid:
        """The grid selections are projected on: the chunks (the inner chunks if sharded)."""
        return RegularGrid(self.shape, self.chunks)

    @property
    def storage_grid(self) -> RegularGrid:
        """The grid of the stored chunks (the same as :attr:`grid`: v2 has no sharding)."""
        return self.grid

    chunk_shapes: ClassVar[None] = None

    @cached_property
    def codec(self) -> CodecChain:
        codecs = v2_codecs(len(self.shape), self.order, self.filters, self.compressor)
        return CodecChain(codecs, ChunkSpec(self.chunks, self.dtype, self.fill_value))

    def chunk_key(self, coords: tuple[int, ...]) -> str:
        """The key of a chunk relative to the array's path (``'0.0'``; ``'0'`` for 0-d)."""
        if not coords:
            return "0"
        return self.dimension_separator.join(map(str, coords))

    #: zarr-python 3's name of :meth:`chunk_key`
    encode_chunk_key = chunk_key

    def chunk_key_parts(self) -> tuple[str, str]:
        """``(head, separator)``: the key of chunk ``coords`` (at least one dimension) is
        ``head + separator.join(map(str, coords))``."""
        return "", self.dimension_separator

    def parse_chunk_key(self, key: str) -> tuple[int, ...] | None:
        """Grid coordinates of a chunk key, or None if ``key`` is not a chunk key."""
        if not self.shape:
            return () if key == "0" else None
        parts = key.split(self.dimension_separator)
        if len(parts) != len(self.shape) or not all(p.isdigit() for p in parts):
            return None
        return tuple(int(p) for p in parts)

    @property
    def grid_chunks(self) -> tuple[int, ...]:
        """Shape of the stored chunks (the same as :attr:`chunks`: v2 has no sharding)."""
        return self.chunks

    shards: ClassVar[None] = None
    sharding: ClassVar[None] = None

    @property
    def compressors(self) -> tuple[Codec, ...]:
        return () if self.compressor is None else (self.compressor,)

    def evolve(self, **changes: Any) -> ArrayMetadataV2:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)

    def update_shape(self, shape: Sequence[int]) -> ArrayMetadataV2:
        """A copy of another shape (zarr-python 3's method)."""
        return self.evolve(shape=tuple(int(n) for n in shape))


#: zarr-python 3's name of the class (``zarr.core.metadata.v2.ArrayV2Metadata``)
ArrayV2Metadata = ArrayMetadataV2
