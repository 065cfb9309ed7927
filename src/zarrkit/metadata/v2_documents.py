"""v2 metadata documents as dictionaries: the module zarr-python 2 code knows as ``zarr.meta``
(``zarrkit.meta`` is this module, under that name, through :mod:`zarrkit.compat`).

:class:`Metadata2` decodes a ``.zarray`` or ``.zgroup`` document into the dictionary zarr-python 2
code works with (``shape`` and ``chunks`` as tuples, ``dtype`` as a NumPy dtype, the fill value
decoded for that dtype, codecs as their configurations with defaults filled in, as
``codec.get_config()`` gives them) and encodes such a dictionary back into the bytes
zarr-python 2 writes.  Every store also offers it as ``store._metadata_class``, as
zarr-python 2's stores do (a name the compatibility table gives the stores).

Examples
--------
>>> import numpy as np
>>> from zarrkit.meta import Metadata2
>>> raw = Metadata2.encode_array_metadata(dict(
...     shape=(10,), chunks=(5,), dtype=np.dtype('<f8'), compressor=None,
...     fill_value=np.nan, order='C', filters=None))
>>> meta = Metadata2.decode_array_metadata(raw)
>>> meta['shape'], meta['dtype'], bool(np.isnan(meta['fill_value']))
((10,), dtype('float64'), True)
"""

from __future__ import annotations

import json
from typing import Any

import numcodecs
import numpy as np

from ..errors import MetadataError
from .dtypes import parse_v2_dtype, parse_v2_fill_value, v2_dtype_json, v2_fill_value_json
from .v2 import json_bytes

__all__ = ["Metadata2", "ZARR_FORMAT", "decode_array_metadata", "encode_array_metadata",
           "decode_group_metadata", "encode_group_metadata"]

ZARR_FORMAT = 2


def _normalized(config: Any) -> Any:
    """A codec configuration completed with the codec's defaults, as ``get_config()`` gives it
    (``{"id": "blosc", ...}`` without ``blocksize`` comes back with ``blocksize: 0``)."""
    if not isinstance(config, dict) or "id" not in config:
        return config
    try:
        return numcodecs.get_codec(dict(config)).get_config()
    except Exception:  # noqa: BLE001 - a codec numcodecs does not know is returned as stored
        return config


def _config(codec: Any) -> Any:
    if codec is None or isinstance(codec, dict):
        return codec
    return codec.get_config()


class Metadata2:
    """Encode and decode Zarr v2 metadata documents (zarr-python 2's ``Metadata2``)."""

    ZARR_FORMAT = ZARR_FORMAT

    @classmethod
    def parse_metadata(cls, s: Any) -> dict[str, Any]:
        """A document given as bytes, str or an already-decoded mapping → a dict."""
        if isinstance(s, dict):
            return s
        try:
            doc = json.loads(s)
        except (TypeError, ValueError) as exc:
            raise MetadataError(f"not a JSON document: {exc}") from None
        if not isinstance(doc, dict):
            raise MetadataError(f"expected a JSON object, got {type(doc).__name__}")
        return doc

    @classmethod
    def decode_array_metadata(cls, s: Any) -> dict[str, Any]:
        meta = cls.parse_metadata(s)
        if meta.get("zarr_format") != ZARR_FORMAT:
            raise MetadataError(f"zarr_format: expected 2, got {meta.get('zarr_format')!r}")
        try:
            dtype = parse_v2_dtype(meta["dtype"])
            out = dict(
                zarr_format=ZARR_FORMAT,
                shape=tuple(meta["shape"]),
                chunks=tuple(meta["chunks"]),
                dtype=dtype,
                compressor=_normalized(meta["compressor"]),
                fill_value=parse_v2_fill_value(meta["fill_value"], dtype),
                order=meta["order"],
                filters=None if meta["filters"] is None else [_normalized(f) for f in meta["filters"]],
            )
        except KeyError as exc:
            raise MetadataError(f"missing field {exc.args[0]!r}") from None
        if "dimension_separator" in meta:
            out["dimension_separator"] = meta["dimension_separator"]
        return out

    @classmethod
    def encode_array_metadata(cls, meta: dict[str, Any]) -> bytes:
        dtype = np.dtype(meta["dtype"])
        doc = dict(
            zarr_format=ZARR_FORMAT,
            shape=list(meta["shape"]),
            chunks=list(meta["chunks"]),
            dtype=v2_dtype_json(dtype),
            compressor=_config(meta.get("compressor")),
            fill_value=v2_fill_value_json(meta.get("fill_value"), dtype),
            order=meta.get("order", "C"),
            filters=None if meta.get("filters") is None else [_config(f) for f in meta["filters"]],
        )
        if meta.get("dimension_separator") is not None:
            doc["dimension_separator"] = meta["dimension_separator"]
        return json_bytes(doc)

    @classmethod
    def decode_group_metadata(cls, s: Any) -> dict[str, Any]:
        meta = cls.parse_metadata(s)
        if meta.get("zarr_format") != ZARR_FORMAT:
            raise MetadataError(f"zarr_format: expected 2, got {meta.get('zarr_format')!r}")
        return dict(zarr_format=ZARR_FORMAT)

    @classmethod
    def encode_group_metadata(cls, meta: Any = None) -> bytes:
        return json_bytes({"zarr_format": ZARR_FORMAT})


decode_array_metadata = Metadata2.decode_array_metadata
encode_array_metadata = Metadata2.encode_array_metadata
decode_group_metadata = Metadata2.decode_group_metadata
encode_group_metadata = Metadata2.encode_group_metadata
