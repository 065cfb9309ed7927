"""Data types as objects, as zarr-python 3 names them (``Int32(endianness='little')``,
``Struct(fields=...)``, ...): each wraps a NumPy dtype and turns it, and its scalars, into the
JSON of either format with the functions of :mod:`zarrkit.metadata.dtypes`.

Examples
--------
>>> import numpy as np
>>> from zarrkit.metadata.zdtypes import Int8, parse_dtype
>>> Int8.from_native_dtype(np.dtype('int8')).to_json(zarr_format=3)
'int8'
>>> parse_dtype('<f8')
Float64(endianness='little')
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from .dtypes import (
    BYTES_DTYPE,
    TIME,
    is_bytes_dtype,
    kind_of,
    ml_dtype_name,
    normalize_fill_value,
    parse_v2_fill_value,
    parse_v3_data_type,
    parse_v3_fill_value,
    string_dtype,
    v2_dtype_json,
    v2_fill_value_json,
    v3_data_type_json,
    v3_fill_value_json,
)

__all__ = ["ZDType", "parse_dtype", "data_type_of"]


class ZDType:
    """A data type: a NumPy dtype with its Zarr names and scalar encodings."""

    _kinds: ClassVar[tuple[str, ...]] = ()

    def __init__(self, native: np.dtype):
        self._native = np.dtype(native)

    # -- what it is ---------------------------------------------------------------------------
    @classmethod
    def from_native_dtype(cls, dtype: Any) -> ZDType:
        """The data type of a NumPy dtype (a ``TypeError`` when it is not of this class)."""
        dt = np.dtype(dtype)
        out = data_type_of(dt)
        if cls is not ZDType and not isinstance(out, cls):
            raise TypeError(f"{dt} is not a {cls.__name__} data type")
        return out

    @classmethod
    def from_json(cls, data: Any, zarr_format: int = 3) -> ZDType:
        if zarr_format == 3:
            return cls.from_native_dtype(parse_v3_data_type(data))
        name = data.get("name") if isinstance(data, dict) else data
        return cls.from_native_dtype(np.dtype(_tuplify(name)))

    def to_native_dtype(self) -> np.dtype:
        return self._native

    def default_scalar(self) -> Any:
        if self._native.hasobject:
            return b"" if is_bytes_dtype(self._native) else ""
        return np.zeros((), dtype=self._native)[()]

    # -- JSON ---------------------------------------------------------------------------------
    def to_json(self, zarr_format: int = 3) -> Any:
        if zarr_format == 3:
            return v3_data_type_json(self._native)
        codec = None
        if self._native.hasobject:
            codec = "vlen-bytes" if is_bytes_dtype(self._native) else "vlen-utf8"
        return {"name": v2_dtype_json(self._native), "object_codec_id": codec}

    def to_json_scalar(self, data: Any, zarr_format: int = 3) -> Any:
        value = normalize_fill_value(data, self._native)
        if zarr_format == 3:
            return v3_fill_value_json(value, self._native)
        return v2_fill_value_json(value, self._native)

    def from_json_scalar(self, data: Any, zarr_format: int = 3) -> Any:
        if zarr_format == 3:
            return parse_v3_fill_value(data, self._native)
        return parse_v2_fill_value(data, self._native)

    def cast_scalar(self, data: Any) -> Any:
        return normalize_fill_value(data, self._native)

    # -- identity -----------------------------------------------------------------------------
    def _fields(self) -> list[tuple[str, Any]]:
        return []

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._fields())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._native == self._native

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._native.str, str(self._native)))


def _tuplify(descr: Any) -> Any:
    if isinstance(descr, list):
        return [tuple(_tuplify(x) for x in item) if isinstance(item, list) else item for item in descr]
    return descr


def _endianness(dt: np.dtype) -> str:
    order = dt.byteorder
    if order == "=":
        order = "<" if np.little_endian else ">"
    return "big" if order == ">" else "little"


class _Endian(ZDType):
    def _fields(self) -> list[tuple[str, Any]]:
        return [("endianness", _endianness(self._native))]


def _simple(name: str, base: type = ZDType) -> type:
    return type(name, (base,), {"__doc__": f"The {name.lower()} data type."})


Bool = _simple("Bool")
Int8 = _simple("Int8")
UInt8 = _simple("UInt8")
Int16, Int32, Int64 = (_simple(n, _Endian) for n in ("Int16", "Int32", "Int64"))
UInt16, UInt32, UInt64 = (_simple(n, _Endian) for n in ("UInt16", "UInt32", "UInt64"))
Float16, Float32, Float64 = (_simple(n, _Endian) for n in ("Float16", "Float32", "Float64"))
Complex64, Complex128 = (_simple(n, _Endian) for n in ("Complex64", "Complex128"))
VariableLengthUTF8 = _simple("VariableLengthUTF8")
VariableLengthBytes = _simple("VariableLengthBytes")


class FixedLengthUTF32(_Endian):
    """Fixed-length Unicode strings (NumPy ``U<n>``)."""

    def _fields(self) -> list[tuple[str, Any]]:
        return [("length", self._native.itemsize // 4), *super()._fields()]


class NullTerminatedBytes(ZDType):
    """Fixed-length byte strings (NumPy ``S<n>``)."""

    def _fields(self) -> list[tuple[str, Any]]:
        return [("length", self._native.itemsize)]


class RawBytes(NullTerminatedBytes):
    """Raw bytes (NumPy ``V<n>``)."""


class _Time(_Endian):
    def _fields(self) -> list[tuple[str, Any]]:
        unit, count = np.datetime_data(self._native)
        return [*super()._fields(), ("scale_factor", count), ("unit", unit)]


class DateTime64(_Time):
    """NumPy ``datetime64``."""


class TimeDelta64(_Time):
    """NumPy ``timedelta64``."""


class Struct(ZDType):
    """A structured data type: named fields of other data types."""

    def _fields(self) -> list[tuple[str, Any]]:
        dt = self._native
        return [("fields", tuple((n, data_type_of(dt[n])) for n in dt.names or ()))]


class MLDataType(ZDType):
    """A data type of the ``ml_dtypes`` package (``bfloat16``, ``float8_e4m3fnuz``, ``int4``...)."""

    def _fields(self) -> list[tuple[str, Any]]:
        return [("name", ml_dtype_name(self._native))]


#: the class of each kind of :mod:`zarrkit.metadata.dtypes` (the numeric kinds by size, below)
_BY_KIND: dict[str, type[ZDType]] = {
    "ml_dtypes": MLDataType, "struct": Struct, "string": VariableLengthUTF8,
    "vlen_bytes": VariableLengthBytes, "unicode": FixedLengthUTF32, "bytes": NullTerminatedBytes,
    "raw": RawBytes,
}
_BY_CODE = {
    "b1": Bool, "i1": Int8, "u1": UInt8, "i2": Int16, "i4": Int32, "i8": Int64,
    "u2": UInt16, "u4": UInt32, "u8": UInt64, "f2": Float16, "f4": Float32, "f8": Float64,
    "c8": Complex64, "c16": Complex128,
}


def data_type_of(dtype: np.dtype) -> ZDType:
    """The data type object of a NumPy dtype."""
    dt = np.dtype(dtype)
    kind = kind_of(dt)
    if kind is TIME:
        return DateTime64(dt) if dt.kind == "M" else TimeDelta64(dt)
    cls = _BY_KIND.get(kind.name) if kind is not None else None
    if cls is None:
        cls = _BY_CODE.get(f"{dt.kind}{dt.itemsize}")
    if cls is None:
        raise TypeError(f"dtype {dt} has no Zarr data type")
    return cls(dt)


def parse_dtype(dtype_spec: Any, zarr_format: int = 3) -> ZDType:
    """A data type object from a NumPy dtype (or anything ``numpy.dtype`` takes), a data type
    object, or the JSON of ``zarr_format`` (``'int8'``, ``{'name': 'struct', ...}``,
    ``'string'``, ``'bytes'``)."""
    if isinstance(dtype_spec, ZDType):
        return dtype_spec
    if dtype_spec is str or dtype_spec == "string":
        return VariableLengthUTF8(string_dtype())
    if dtype_spec is bytes or dtype_spec in ("bytes", "variable_length_bytes"):
        return VariableLengthBytes(BYTES_DTYPE)
    if isinstance(dtype_spec, dict) and zarr_format == 3:
        return data_type_of(parse_v3_data_type(dtype_spec))
    try:
        return data_type_of(np.dtype(dtype_spec))
    except TypeError:
        if zarr_format == 3:
            return data_type_of(parse_v3_data_type(dtype_spec))
        raise
