"""The ``cast_value`` and ``scale_offset`` codecs registered with the metadata that configures
them: their data type names and scalars are parsed as ``zarr.json`` parses data types and fill
values (see :mod:`zarrkit.codecs.cast` for what they do)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..codecs.cast import CastValueCodec, ScaleOffsetCodec
from ..codecs.registry import codec_factory, register_v3_codec
from ..errors import MetadataError
from .dtypes import parse_v3_data_type, parse_v3_fill_value, v3_data_type_json

__all__ = ["cast_value", "scale_offset"]


def _parse_dtype(obj: Any) -> np.dtype:
    return parse_v3_data_type(obj)


def _parse_scalar(value: Any, dtype: np.dtype, field: str) -> Any:
    try:
        return parse_v3_fill_value(value, dtype)
    except MetadataError as exc:
        raise MetadataError(f"{field}: {exc}") from None


def cast_value(data_type: Any, rounding: str = "nearest-even", out_of_range: str | None = None,
               scalar_map: Any = None) -> CastValueCodec:
    """A ``cast_value`` codec to ``data_type`` (a v3 data type name or NumPy dtype).

    Examples
    --------
    >>> import numpy as np
    >>> from zarrkit.metadata.value_codecs import cast_value
    >>> c = cast_value("uint8", rounding="towards-zero", out_of_range="clamp")
    >>> c.to_json()
    {'name': 'cast_value', 'configuration': {'data_type': 'uint8', 'rounding': 'towards-zero', 'out_of_range': 'clamp'}}
    """
    if not isinstance(data_type, (str, dict)):
        data_type = v3_data_type_json(np.dtype(data_type))
    return CastValueCodec(data_type, rounding, out_of_range, scalar_map, parse_dtype=_parse_dtype,
                          parse_scalar=_parse_scalar, dtype_json=v3_data_type_json)


def scale_offset(offset: Any = None, scale: Any = None) -> ScaleOffsetCodec:
    """A ``scale_offset`` codec: ``(x - offset) * scale`` on write."""
    return ScaleOffsetCodec(offset, scale, parse_scalar=_parse_scalar)


register_v3_codec("cast_value", codec_factory(cast_value, {"data_type", "rounding", "out_of_range", "scalar_map"}, "cast_value"))
register_v3_codec("scale_offset", codec_factory(scale_offset, {"offset", "scale"}, "scale_offset"))
