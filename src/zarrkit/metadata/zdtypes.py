"""Data types as objects, as zarr-python 3 names them (``Int32(endianness='little')``,
``FixedLengthUTF32(length=4)``, ``Struct(fields=...)``...), their registry, and ``parse_dtype``.

Each class is a view of one kind of :mod:`zarrkit.metadata.dtypes` (see
:mod:`zarrkit.metadata.zdtype_base`): its parameters make a NumPy dtype, and the engine
translates that dtype and its scalars.

Examples
--------
>>> import numpy as np
>>> from zarrkit.metadata.zdtypes import Int8, parse_dtype
>>> Int8.from_native_dtype(np.dtype('int8')).to_json(zarr_format=3)
'int8'
>>> parse_dtype('<f8', zarr_format=3)
Float64(endianness='little')
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ..errors import DataTypeValidationError
from .dtypes import (
    BOOL,
    BYTES,
    BYTES_DTYPE,
    COMPLEX,
    FLOAT,
    INT,
    ML,
    RAW,
    STRING,
    STRUCT,
    TIME,
    TIME_UNITS,
    UINT,
    UNICODE,
    VLEN_BYTES,
    kind_of,
    ml_dtype_name,
    string_dtype,
)
from .scalars import ml_dtype
from .zdtype_base import (
    EndiannessStr,
    HasEndianness,
    HasItemSize,
    HasLength,
    HasObjectCodec,
    ZDType,
    endianness_to_numpy_str,
    get_endianness_from_numpy_dtype,
)

__all__ = [
    "Bool", "Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64",
    "Float16", "Float32", "Float64", "Complex64", "Complex128",
    "FixedLengthUTF32", "VariableLengthUTF8", "NullTerminatedBytes", "RawBytes", "VariableLengthBytes",
    "DateTime64", "TimeDelta64", "Struct", "Structured", "MLDataType", "ZDType",
    "AnyDType", "DataTypeRegistry", "data_type_registry", "data_type_of", "get_data_type_from_native_dtype",
    "get_data_type_from_json", "parse_dtype", "parse_data_type",
]


# =============================================================================================
# numbers: a NumPy type code each, with a byte order from two bytes up


@dataclass(frozen=True)
class _Number(ZDType[Any, Any], HasItemSize):
    """A data type of one NumPy type code (``_code``, ``'i4'``...)."""

    _code: ClassVar[str]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "_code" in cls.__dict__:
            cls.dtype_cls = type(np.dtype(cls._code))

    @classmethod
    def _matches(cls, dtype: np.dtype) -> bool:
        return kind_of(dtype) is cls._kind and f"{dtype.kind}{dtype.itemsize}" == cls._code

    def to_native_dtype(self) -> np.dtype:
        return np.dtype(self._code)


@dataclass(frozen=True)
class _Ordered(_Number, HasEndianness):
    """A number of more than one byte: ``endianness='little'`` or ``'big'``."""

    endianness: EndiannessStr = "little"

    def _validate(self) -> None:
        endianness_to_numpy_str(self.endianness)

    @classmethod
    def _params(cls, dtype: np.dtype) -> dict[str, Any]:
        return {"endianness": get_endianness_from_numpy_dtype(dtype)}

    def to_native_dtype(self) -> np.dtype:
        return np.dtype(self._code).newbyteorder(endianness_to_numpy_str(self.endianness))


@dataclass(frozen=True)
class Bool(_Number):
    """Booleans (NumPy ``bool``)."""

    _kind, _code, _zarr_v3_name = BOOL, "b1", "bool"


@dataclass(frozen=True)
class Int8(_Number):
    """8-bit signed integers."""

    _kind, _code, _zarr_v3_name = INT, "i1", "int8"


@dataclass(frozen=True)
class UInt8(_Number):
    """8-bit unsigned integers."""

    _kind, _code, _zarr_v3_name = UINT, "u1", "uint8"


@dataclass(frozen=True)
class Int16(_Ordered):
    """16-bit signed integers."""

    _kind, _code, _zarr_v3_name = INT, "i2", "int16"


@dataclass(frozen=True)
class Int32(_Ordered):
    """32-bit signed integers."""

    _kind, _code, _zarr_v3_name = INT, "i4", "int32"


@dataclass(frozen=True)
class Int64(_Ordered):
    """64-bit signed integers."""

    _kind, _code, _zarr_v3_name = INT, "i8", "int64"


@dataclass(frozen=True)
class UInt16(_Ordered):
    """16-bit unsigned integers."""

    _kind, _code, _zarr_v3_name = UINT, "u2", "uint16"


@dataclass(frozen=True)
class UInt32(_Ordered):
    """32-bit unsigned integers."""

    _kind, _code, _zarr_v3_name = UINT, "u4", "uint32"


@dataclass(frozen=True)
class UInt64(_Ordered):
    """64-bit unsigned integers."""

    _kind, _code, _zarr_v3_name = UINT, "u8", "uint64"


@dataclass(frozen=True)
class Float16(_Ordered):
    """IEEE 754 half-precision floats."""

    _kind, _code, _zarr_v3_name = FLOAT, "f2", "float16"


@dataclass(frozen=True)
class Float32(_Ordered):
    """IEEE 754 single-precision floats."""

    _kind, _code, _zarr_v3_name = FLOAT, "f4", "float32"


@dataclass(frozen=True)
class Float64(_Ordered):
    """IEEE 754 double-precision floats."""

    _kind, _code, _zarr_v3_name = FLOAT, "f8", "float64"


@dataclass(frozen=True)
class Complex64(_Ordered):
    """Complex numbers of two single-precision floats."""

    _kind, _code, _zarr_v3_name = COMPLEX, "c8", "complex64"


@dataclass(frozen=True)
class Complex128(_Ordered):
    """Complex numbers of two double-precision floats."""

    _kind, _code, _zarr_v3_name = COMPLEX, "c16", "complex128"


# =============================================================================================
# strings and bytes


def _sized(cls: type[ZDType[Any, Any]], dtype: np.dtype) -> bool:
    return kind_of(dtype) is cls._kind and dtype.itemsize > 0


def _check_length(length: Any) -> None:
    if isinstance(length, bool) or not isinstance(length, int):
        raise TypeError(f"length must be an int, got {length!r}")
    if length < 1:
        raise ValueError(f"length must be >= 1, got {length}.")


@dataclass(frozen=True)
class FixedLengthUTF32(ZDType[Any, Any], HasEndianness, HasLength, HasItemSize):
    """Unicode strings of at most ``length`` characters (NumPy ``U<length>``)."""

    _kind, _zarr_v3_name, dtype_cls = UNICODE, "fixed_length_utf32", type(np.dtype("U1"))
    length: int
    endianness: EndiannessStr = "little"

    def _validate(self) -> None:
        _check_length(self.length)
        endianness_to_numpy_str(self.endianness)

    @classmethod
    def _matches(cls, dtype: np.dtype) -> bool:
        return _sized(cls, dtype)

    @classmethod
    def _params(cls, dtype: np.dtype) -> dict[str, Any]:
        return {"length": dtype.itemsize // 4, "endianness": get_endianness_from_numpy_dtype(dtype)}

    def to_native_dtype(self) -> np.dtype:
        return np.dtype(f"{endianness_to_numpy_str(self.endianness)}U{self.length}")


class _FixedBytes:
    """What byte strings of a fixed ``length`` share: NumPy's ``S<length>`` or ``V<length>``."""

    _numpy_char: ClassVar[str]
    length: int

    def _validate(self) -> None:
        _check_length(self.length)

    @classmethod
    def _matches(cls, dtype: np.dtype) -> bool:
        return _sized(cls, dtype)  # type: ignore[arg-type]  # each subclass is a ZDType

    @classmethod
    def _params(cls, dtype: np.dtype) -> dict[str, Any]:
        return {"length": dtype.itemsize}

    def to_native_dtype(self) -> np.dtype:
        return np.dtype(f"{self._numpy_char}{self.length}")


@dataclass(frozen=True)
class NullTerminatedBytes(_FixedBytes, ZDType[Any, Any], HasLength, HasItemSize):
    """Byte strings of at most ``length`` bytes, trailing zeros dropped (NumPy ``S<length>``)."""

    _kind, _zarr_v3_name, dtype_cls = BYTES, "null_terminated_bytes", type(np.dtype("S1"))
    _numpy_char = "S"
    length: int


@dataclass(frozen=True)
class RawBytes(_FixedBytes, ZDType[Any, Any], HasLength, HasItemSize):
    """Opaque blocks of ``length`` bytes (NumPy ``V<length>``; ``r<8*length>`` in v3)."""

    _kind, _zarr_v3_name, dtype_cls = RAW, "raw_bytes", type(np.dtype("V1"))
    _numpy_char = "V"
    length: int


@dataclass(frozen=True)
class VariableLengthUTF8(ZDType[Any, Any], HasObjectCodec):
    """Strings of any length (NumPy 2's ``StringDType``, or ``object`` arrays of ``str``;
    ``zarrkit.config.string_dtype`` chooses)."""

    _kind, _zarr_v3_name, object_codec_id = STRING, "string", "vlen-utf8"
    dtype_cls: ClassVar[type] = type(string_dtype())

    @classmethod
    def _matches(cls, dtype: np.dtype) -> bool:
        return kind_of(dtype) is STRING and not hasattr(dtype, "na_object")  # no missing values

    def to_native_dtype(self) -> np.dtype:
        return string_dtype()


@dataclass(frozen=True)
class VariableLengthBytes(ZDType[Any, Any], HasObjectCodec):
    """Byte strings of any length (``object`` arrays of ``bytes``)."""

    _kind, _zarr_v3_name, object_codec_id = VLEN_BYTES, "variable_length_bytes", "vlen-bytes"
    dtype_cls: ClassVar[type] = type(BYTES_DTYPE)

    @classmethod
    def _matches(cls, dtype: np.dtype) -> bool:
        # an object dtype holds bytes when this class is asked for it (plain ``object`` is text
        # to the engine, so a registry match of ``object`` finds two data types)
        return kind_of(dtype) is VLEN_BYTES or (dtype.kind == "O" and dtype.metadata is None)

    def to_native_dtype(self) -> np.dtype:
        return BYTES_DTYPE


# =============================================================================================
# datetimes and time spans


@dataclass(frozen=True)
class _Time(ZDType[Any, Any], HasEndianness, HasItemSize):
    """``numpy.datetime64`` or ``numpy.timedelta64`` of ``scale_factor`` ``unit`` s."""

    _kind, _letter = TIME, "M"
    endianness: EndiannessStr = "little"
    scale_factor: int = 1
    unit: str = "generic"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.dtype_cls = type(np.dtype(f"{cls._letter}8"))

    def _validate(self) -> None:
        endianness_to_numpy_str(self.endianness)
        if self.unit not in TIME_UNITS:
            raise ValueError(f"unit must be one of {TIME_UNITS}, got {self.unit!r}.")
        if self.unit == "μs":  # NumPy's spelling, so that the type equals its trip through NumPy
            object.__setattr__(self, "unit", "us")
        scale = self.scale_factor
        if isinstance(scale, bool) or not isinstance(scale, int):
            raise TypeError(f"scale_factor must be an int, got {scale!r}")
        if scale < 1:
            raise ValueError(f"scale_factor must be > 0, got {scale}.")
        if scale >= 2**31:
            raise ValueError(f"scale_factor must be < {2**31}, got {scale}.")

    @classmethod
    def _matches(cls, dtype: np.dtype) -> bool:
        return kind_of(dtype) is TIME and dtype.kind == cls._letter

    @classmethod
    def _params(cls, dtype: np.dtype) -> dict[str, Any]:
        unit, count = np.datetime_data(dtype)
        return {"endianness": get_endianness_from_numpy_dtype(dtype), "scale_factor": count, "unit": unit}

    def to_native_dtype(self) -> np.dtype:
        order = endianness_to_numpy_str(self.endianness)
        if self.unit == "generic":
            return np.dtype(f"{order}{self._letter}8")
        unit = "us" if self.unit == "μs" else self.unit
        scale = "" if self.scale_factor == 1 else self.scale_factor
        return np.dtype(f"{order}{self._letter}8[{scale}{unit}]")


@dataclass(frozen=True)
class DateTime64(_Time):
    """Points in time (``numpy.datetime64``)."""

    _letter, _zarr_v3_name = "M", "numpy.datetime64"


@dataclass(frozen=True)
class TimeDelta64(_Time):
    """Spans of time (``numpy.timedelta64``)."""

    _letter, _zarr_v3_name = "m", "numpy.timedelta64"


# =============================================================================================
# structures and the ml_dtypes types


@dataclass(frozen=True)
class Struct(ZDType[Any, Any], HasItemSize):
    """A structure of named fields of fixed size: ``fields`` is a sequence of
    ``(name, data type)`` pairs (NumPy structured dtypes)."""

    _kind, _zarr_v3_name, dtype_cls = STRUCT, "struct", type(np.dtype([("a", "i1")]))
    fields: Sequence[tuple[str, ZDType[Any, Any]]] = field(default=())

    def _validate(self) -> None:
        pairs = tuple((name, dtype) for name, dtype in self.fields)
        object.__setattr__(self, "fields", pairs)
        if not pairs:
            raise ValueError("fields must name at least one field")
        names = [name for name, _ in pairs]
        if len(set(names)) != len(names):
            raise ValueError(f"fields: the field names {names} are not unique")
        for name, dtype in pairs:
            if not isinstance(name, str) or not isinstance(dtype, ZDType):
                raise TypeError(f"fields: ({name!r}, {dtype!r}) is not a pair of a name and a data type")

    @classmethod
    def _matches(cls, dtype: np.dtype) -> bool:
        fields_: Mapping[str, Any] = dtype.fields or {}
        return kind_of(dtype) is STRUCT and all(
            f[0].subdtype is None and not f[0].hasobject for f in fields_.values()
        )

    @classmethod
    def _params(cls, dtype: np.dtype) -> dict[str, Any]:
        return {"fields": tuple((name, data_type_of(dtype[name])) for name in dtype.names or ())}

    def to_native_dtype(self) -> np.dtype:
        return np.dtype([(name, dtype.to_native_dtype()) for name, dtype in self.fields])

    def has_field(self, name: str) -> bool:
        """Whether the structure has a field ``name``."""
        return any(n == name for n, _ in self.fields)

    def get_field(self, name: str) -> ZDType[Any, Any]:
        """The data type of field ``name`` (a ``KeyError`` when there is none)."""
        for n, dtype in self.fields:
            if n == name:
                return dtype
        raise KeyError(f"field {name!r} not found in {self}")


#: zarr-python 3's earlier name of :class:`Struct`
Structured = Struct


@dataclass(frozen=True)
class MLDataType(ZDType[Any, Any], HasItemSize):
    """A data type of the ``ml_dtypes`` package (``bfloat16``, ``float8_e4m3fnuz``, ``int4``...),
    named as the zarr-extensions registry names it."""

    _kind, _zarr_v3_name, dtype_cls = ML, "ml_dtypes", np.dtype
    name: str = "bfloat16"

    @classmethod
    def _params(cls, dtype: np.dtype) -> dict[str, Any]:
        return {"name": ml_dtype_name(dtype)}

    def to_native_dtype(self) -> np.dtype:
        return ml_dtype(self.name, None)


# =============================================================================================
# the registry


@dataclass(frozen=True)
class DataTypeRegistry:
    """The data type classes, by their v3 name; matching NumPy dtypes and JSON to them.

    Attributes
    ----------
    contents : dict
        The v3 name -> the data type class.
    """

    contents: dict[str, type[ZDType[Any, Any]]] = field(default_factory=dict, init=False)

    def register(self, key: str, cls: type[ZDType[Any, Any]]) -> None:
        """Register ``cls`` under the v3 name ``key`` (again: nothing changes)."""
        self.contents[key] = cls

    def unregister(self, key: str) -> None:
        """Remove the class registered under ``key`` (a ``KeyError`` when there is none)."""
        if key not in self.contents:
            raise KeyError(f"Data type '{key}' not found in registry.")
        del self.contents[key]

    def get(self, key: str) -> type[ZDType[Any, Any]]:
        """The class registered under ``key`` (a ``KeyError`` when there is none)."""
        return self.contents[key]

    def match_dtype(self, dtype: np.dtype) -> ZDType[Any, Any]:
        """The data type of a NumPy dtype.

        Raises
        ------
        ValueError
            When no registered class, or more than one, takes ``dtype`` (plain ``object``
            holds text or bytes: name the data type instead).
        """
        matched = []
        for cls in self.contents.values():
            with contextlib.suppress(DataTypeValidationError):
                matched.append(cls.from_native_dtype(dtype))
        if not matched and kind_of(dtype) is ML:  # ml_dtypes types: not in the registry
            matched.append(MLDataType.from_native_dtype(dtype))
        if len(matched) == 1:
            return matched[0]
        if matched:
            raise ValueError(
                f"Zarr data type resolution from {dtype} failed. {dtype!r} matches several data types "
                f"({matched}): give the data type itself (VariableLengthUTF8() or VariableLengthBytes() "
                "for object dtypes)"
            )
        why = " (a StringDType with na_object: missing strings cannot be stored)" if hasattr(dtype, "na_object") else ""
        raise ValueError(
            f"Zarr data type resolution from {dtype} failed. No Zarr data type found that matches dtype "
            f"'{dtype!r}'{why}"
        )

    def match_json(self, data: Any, *, zarr_format: int) -> ZDType[Any, Any]:
        """The data type of its JSON in ``zarr_format``.

        Raises
        ------
        ValueError
            When no registered class takes ``data``.
        """
        classes: list[type[ZDType[Any, Any]]] = [*self.contents.values(), MLDataType]
        for cls in classes:
            with contextlib.suppress(DataTypeValidationError):
                return cls.from_json(data, zarr_format=zarr_format)
        raise ValueError(f"No Zarr data type found that matches {data!r}")


#: any of the registered data types (``typing.get_args`` lists them)
AnyDType = (
    Bool | Int8 | Int16 | Int32 | Int64 | UInt8 | UInt16 | UInt32 | UInt64 | Float16 | Float32 | Float64
    | Complex64 | Complex128 | FixedLengthUTF32 | VariableLengthUTF8 | RawBytes | NullTerminatedBytes
    | VariableLengthBytes | Struct | DateTime64 | TimeDelta64
)

#: the registry of the data types zarrkit knows (the ``ml_dtypes`` types are matched apart)
data_type_registry: DataTypeRegistry = DataTypeRegistry()
for _cls in (
    Bool, Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64, Float16, Float32, Float64,
    Complex64, Complex128, FixedLengthUTF32, VariableLengthUTF8, RawBytes, NullTerminatedBytes,
    VariableLengthBytes, Struct, DateTime64, TimeDelta64,
):
    data_type_registry.register(_cls._zarr_v3_name, _cls)

#: the class of each kind of :mod:`zarrkit.metadata.dtypes` (the numbers by their type code)
_BY_KIND: dict[str, type[ZDType[Any, Any]]] = {
    "ml_dtypes": MLDataType, "struct": Struct, "string": VariableLengthUTF8, "vlen_bytes": VariableLengthBytes,
    "unicode": FixedLengthUTF32, "bytes": NullTerminatedBytes, "raw": RawBytes,
}
_BY_CODE: dict[str, type[ZDType[Any, Any]]] = {
    c._code: c for c in (Bool, Int8, UInt8, Int16, Int32, Int64, UInt16, UInt32, UInt64, Float16, Float32,
                         Float64, Complex64, Complex128)
}


def data_type_of(dtype: Any) -> ZDType[Any, Any]:
    """The data type of a NumPy dtype, by the engine's kind of it (plain ``object`` is text).

    Raises
    ------
    DataTypeValidationError
        For a dtype no format stores.
    """
    dt = np.dtype(dtype)
    kind = kind_of(dt)
    if kind is TIME:
        cls: type[ZDType[Any, Any]] | None = DateTime64 if dt.kind == "M" else TimeDelta64
    elif kind is STRING:
        return VariableLengthUTF8()
    else:
        cls = _BY_KIND.get(kind.name) if kind is not None else None
        cls = cls or _BY_CODE.get(f"{dt.kind}{dt.itemsize}")
    if cls is None:
        raise DataTypeValidationError(f"dtype {dt} has no Zarr data type")
    return cls.from_native_dtype(dt)


def get_data_type_from_native_dtype(dtype: Any) -> ZDType[Any, Any]:
    """The registered data type of a NumPy dtype, or of anything ``numpy.dtype`` takes (a list
    of field pairs too)."""
    if not isinstance(dtype, np.dtype):
        dtype = np.dtype([tuple(d) for d in dtype] if isinstance(dtype, list) else dtype)
    return data_type_registry.match_dtype(dtype)


def get_data_type_from_json(dtype_spec: Any, *, zarr_format: int) -> ZDType[Any, Any]:
    """The registered data type of its JSON in ``zarr_format``."""
    return data_type_registry.match_json(dtype_spec, zarr_format=zarr_format)


def parse_dtype(dtype_spec: Any, *, zarr_format: int = 3) -> ZDType[Any, Any]:
    """A data type object from a data type object, its JSON in ``zarr_format``, ``str`` (or
    ``'str'``, ``'string'``: variable-length strings), ``bytes`` (variable-length bytes), or
    anything ``numpy.dtype`` takes.

    Raises
    ------
    ValueError, TypeError
        When ``dtype_spec`` is none of those.
    """
    if isinstance(dtype_spec, ZDType):
        return dtype_spec
    if isinstance(dtype_spec, Mapping):  # only the JSON of a data type is an object
        return get_data_type_from_json(dtype_spec, zarr_format=zarr_format)
    if isinstance(dtype_spec, (str, Sequence)):
        with contextlib.suppress(ValueError):
            return get_data_type_from_json(dtype_spec, zarr_format=zarr_format)
    if dtype_spec is str or (isinstance(dtype_spec, str) and dtype_spec in ("str", "string")):
        return VariableLengthUTF8()
    if dtype_spec is bytes:
        return VariableLengthBytes()
    return get_data_type_from_native_dtype(dtype_spec)


#: zarr-python 3's other name of :func:`parse_dtype`
parse_data_type = parse_dtype
