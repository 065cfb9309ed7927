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
from .zdtypes import ZDType, data_type_of

__all__ = ["CastValue", "ScaleOffset", "cast_value", "scale_offset"]


def _parse_dtype(obj: Any) -> np.dtype:
    return parse_v3_data_type(obj)


def _parse_scalar(value: Any, dtype: np.dtype, field: str) -> Any:
    try:
        return parse_v3_fill_value(value, dtype)
    except MetadataError as exc:
        raise MetadataError(f"{field} value {value!r} is not representable in dtype {dtype}: {exc}") from None


class CastValue(CastValueCodec):
    """The ``cast_value`` codec: the elements converted by value to ``data_type`` (a v3 data
    type name, a NumPy dtype or a ``ZDType``), with ``rounding``, ``out_of_range``
    (``"clamp"``, ``"wrap"`` or None: refused) and a ``scalar_map`` of values mapped first.

    Examples
    --------
    >>> from zarrkit.metadata.value_codecs import CastValue
    >>> c = CastValue(data_type="uint8", rounding="towards-zero", out_of_range="clamp")
    >>> c.to_json()
    {'name': 'cast_value', 'configuration': {'data_type': 'uint8', 'rounding': 'towards-zero', 'out_of_range': 'clamp'}}
    """

    def __init__(self, data_type: Any, rounding: str = "nearest-even", out_of_range: str | None = None,
                 scalar_map: Any = None):
        if isinstance(data_type, ZDType):
            data_type = data_type.to_native_dtype()
        if not isinstance(data_type, (str, dict)):
            data_type = v3_data_type_json(np.dtype(data_type))
        super().__init__(data_type, rounding, out_of_range, scalar_map, parse_dtype=_parse_dtype,
                         parse_scalar=_parse_scalar, dtype_json=v3_data_type_json)

    @property
    def dtype(self) -> ZDType[Any, Any]:
        """The target data type, as a ``ZDType``."""
        return data_type_of(self.target)


class ScaleOffset(ScaleOffsetCodec):
    """The ``scale_offset`` codec: ``(x - offset) * scale`` on write, in the array's own data
    type (``offset`` and ``scale`` are numbers, or strings as ``zarr.json`` writes them)."""

    def __init__(self, offset: Any = 0, scale: Any = 1):
        super().__init__(offset, scale, parse_scalar=_parse_scalar)


def cast_value(data_type: Any, rounding: str = "nearest-even", out_of_range: str | None = None,
               scalar_map: Any = None) -> CastValue:
    """A ``cast_value`` codec (:class:`CastValue`) to ``data_type`` (a v3 data type name or
    NumPy dtype).

    Examples
    --------
    >>> import numpy as np
    >>> from zarrkit.metadata.value_codecs import cast_value
    >>> c = cast_value("uint8", rounding="towards-zero", out_of_range="clamp")
    >>> c.to_json()
    {'name': 'cast_value', 'configuration': {'data_type': 'uint8', 'rounding': 'towards-zero', 'out_of_range': 'clamp'}}
    """
    return CastValue(data_type, rounding, out_of_range, scalar_map)


def scale_offset(offset: Any = None, scale: Any = None) -> ScaleOffset:
    """A ``scale_offset`` codec (:class:`ScaleOffset`): ``(x - offset) * scale`` on write."""
    return ScaleOffset(offset, scale)


register_v3_codec("cast_value", codec_factory(cast_value, {"data_type", "rounding", "out_of_range", "scalar_map"}, "cast_value"))
register_v3_codec("scale_offset", codec_factory(scale_offset, {"offset", "scale"}, "scale_offset"))
