"""Data types and fill values in the v2 and v3 metadata dialects.

In memory every array has a NumPy dtype; these functions translate it to and from the JSON each
format stores, and likewise for fill values.  Each kind of data type (bool, int, uint, float,
complex, datetime/timedelta, fixed-size bytes, Unicode, raw bytes, struct, variable-length
strings and bytes, the ``ml_dtypes`` types) is one :class:`DataTypeKind` entry holding its names
in both formats and its fill-value encodings; every translation is one look-up in that table.

Variable-length strings read as NumPy 2's ``StringDType`` (see :func:`string_dtype`), or as
object arrays of ``str``; variable-length bytes are object arrays, marked by :data:`BYTES_DTYPE`
(an object dtype tagged in its ``metadata``) so the v3 ``bytes`` data type round-trips.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..config import config
from ..errors import MetadataError, UnsupportedDtypeError
from .scalars import (
    ML_DTYPES,
    SPECIAL_FLOATS,
    b64decode,
    b64encode,
    float_json,
    ml_dtype,
    ml_dtype_name,
    ml_scalar,
    parse_datetime,
    parse_float,
    parse_int,
)
from .typestr import parse_v2_dtype, v2_dtype_json

__all__ = [
    "BYTES_DTYPE",
    "is_bytes_dtype",
    "parse_v2_dtype",
    "v2_dtype_json",
    "parse_v2_fill_value",
    "v2_fill_value_json",
    "normalize_fill_value",
    "parse_v3_data_type",
    "v3_data_type_json",
    "parse_v3_fill_value",
    "v3_fill_value_json",
    "ML_DTYPES",
    "ml_dtype_name",
    "object_field",
    "string_dtype",
    "DataTypeKind",
    "KINDS",
    "kind_of",
]

#: Object dtype of variable-length *byte* strings (plain ``object`` means text strings).
BYTES_DTYPE = np.dtype("O", metadata={"zarrkit_vlen": "bytes"})


def is_bytes_dtype(dtype: np.dtype) -> bool:
    """Whether ``dtype`` is :data:`BYTES_DTYPE` (variable-length bytes)."""
    return dtype.kind == "O" and dtype.metadata is not None and dtype.metadata.get("zarrkit_vlen") == "bytes"


# =============================================================================================
# objects inside dtypes


def object_field(dtype: np.dtype) -> str | None:
    """The first field of ``dtype`` holding Python objects, as a dotted path (``'a'``,
    ``'s.name'``; ``''`` for an object dtype itself), looking into nested structures and
    subarray fields; None when ``dtype`` holds none (``dtype.hasobject`` is False)."""
    if not dtype.hasobject:
        return None
    stack: list[tuple[str, np.dtype]] = [("", dtype)]
    while stack:  # iterative: a structure from a metadata document may nest hundreds deep
        path, dt = stack.pop()
        if dt.subdtype is not None:
            stack.append((path, dt.subdtype[0]))
        elif dt.names is not None:
            fields: Any = dt.fields or {}
            stack.extend((f"{path}.{n}" if path else n, fields[n][0]) for n in reversed(dt.names))
        elif dt.kind == "O":
            return path
    return ""


# =============================================================================================
# the kinds: one entry each, serving both formats


def _is_zero(value: Any) -> bool:
    # ``0`` means all-zero bytes for the kinds that are bytes underneath (as zarr-python 2 wrote)
    return (
        isinstance(value, (int, np.integer))
        and not isinstance(value, (bool, np.bool_, np.timedelta64))
        and value == 0
    )


class _Unfit(ValueError):
    """A user's value that does not fit, as it stood when converted (the error shows it so)."""

    def __init__(self, value: Any):
        super().__init__()
        self.value = value


def _as_array_scalar(value: Any, dtype: np.dtype) -> Any:
    """A user's value as a scalar of ``dtype`` the way NumPy converts it, refusing overflow
    and values that are not one element."""
    if isinstance(value, np.void) and value.dtype.names is None:
        value = value.tobytes()
    try:
        if dtype.kind == "V" and isinstance(value, (bytes, bytearray)):
            # raw bytes of one element (zero-padded), also for a structured dtype
            if len(value) > dtype.itemsize:
                raise ValueError
            raw = bytes(value).ljust(dtype.itemsize, b"\0")
            return np.frombuffer(raw, dtype=dtype)[0]
        with np.errstate(over="raise", invalid="ignore"):
            out = np.array(value, dtype=dtype)
        if out.shape != ():
            raise ValueError
        return out[()]
    except _NORMALIZE_ERRORS:
        raise _Unfit(value) from None


@dataclass(frozen=True)
class DataTypeKind:
    """One kind of data type: its names in both formats and its fill-value encodings.

    Every translation of a dtype or of a fill value is one look-up of the dtype's kind
    (:func:`kind_of`, or the ``data_type`` name in ``zarr.json``) followed by a call of the
    entry's function: adding a kind is adding an entry.

    Attributes
    ----------
    name : str
        What the kind is called here (``'int'``, ``'struct'``, ``'string'``...).
    numpy_kinds : str
        The ``dtype.kind`` letters it serves (the object, struct and ``ml_dtypes`` kinds are
        told apart by :func:`kind_of`).
    v3_names : tuple of str
        The ``data_type`` names of ``zarr.json`` it reads.
    from_v3, to_v3 :
        ``data_type`` (name, configuration, whole field, key) to dtype, and dtype to field.
    v2_fill, v2_fill_json, v3_fill, v3_fill_json :
        ``fill_value`` of ``.zarray`` / ``zarr.json`` to a scalar, and a scalar to JSON.
    normalize :
        A user's fill value to a scalar; raises anything to say it does not fit.
    own_errors : bool
        Whether ``v3_fill`` and ``normalize`` report bad values themselves (the errors of
        the other kinds' functions are turned into ``MetadataError``/``ValueError``).
    """

    name: str
    numpy_kinds: str
    v3_names: tuple[str, ...]
    from_v3: Callable[[str, dict, Any, str | None], np.dtype]
    to_v3: Callable[[np.dtype], Any]
    v2_fill: Callable[[Any, np.dtype, str | None], Any]
    v2_fill_json: Callable[[Any, np.dtype], Any]
    v3_fill: Callable[[Any, np.dtype, str | None], Any]
    v3_fill_json: Callable[[Any, np.dtype], Any]
    normalize: Callable[[Any, np.dtype], Any]
    own_errors: bool = False


# -- bool, int, uint, float, complex: the core numeric types ---------------------------------

_V3_CORE = {
    "bool": "bool",
    "int8": "i1", "int16": "i2", "int32": "i4", "int64": "i8",
    "uint8": "u1", "uint16": "u2", "uint32": "u4", "uint64": "u8",
    "float16": "f2", "float32": "f4", "float64": "f8",
    "complex64": "c8", "complex128": "c16",
}
_V3_NAME = {np.dtype(v).newbyteorder("=").str[1:]: k for k, v in _V3_CORE.items()}


def _core_dtype(name: str, configuration: dict, obj: Any, key: str | None) -> np.dtype:
    return np.dtype(_V3_CORE[name])


def _core_json(dtype: np.dtype) -> Any:
    return _V3_NAME[dtype.newbyteorder("=").str[1:]]


def _core_names(code: str) -> tuple[str, ...]:
    return tuple(k for k, v in _V3_CORE.items() if v[0] == code)


def _bool_v2(value: Any, dtype: np.dtype, key: str | None) -> Any:
    if isinstance(value, bool) or value in (0, 1):
        return np.bool_(bool(value))
    raise MetadataError(f"fill_value {value!r} is not a boolean", key)


def _bool_v3(value: Any, dtype: np.dtype, key: str | None) -> Any:
    if not isinstance(value, bool):
        raise MetadataError(f"fill_value {value!r} must be true or false", key)
    return np.bool_(value)


def _bool_json(value: Any, dtype: np.dtype) -> Any:
    return bool(value)


def _bool_normalize(value: Any, dtype: np.dtype) -> Any:
    if isinstance(value, (bool, np.bool_)) or (isinstance(value, (int, np.integer)) and value in (0, 1)):
        return np.bool_(bool(value))
    raise ValueError


def _int_json(value: Any, dtype: np.dtype) -> Any:
    return int(value)


def _int_normalize(value: Any, dtype: np.dtype) -> Any:
    if isinstance(value, (float, np.floating)) and not float(value).is_integer():
        raise ValueError
    if isinstance(value, str):
        raise TypeError
    iv = int(value)
    info = np.iinfo(dtype)
    if not info.min <= iv <= info.max:
        raise ValueError
    return np.array(iv, dtype=dtype)[()]


def _float_v2(value: Any, dtype: np.dtype, key: str | None) -> Any:
    return parse_float(value, dtype, key, allow_hex=False)


def _float_v3(value: Any, dtype: np.dtype, key: str | None) -> Any:
    return parse_float(value, dtype, key, allow_hex=True)


def _float_v2_json(value: Any, dtype: np.dtype) -> Any:
    return float_json(value, dtype, hex_nan=False, ints=True)


def _float_v3_json(value: Any, dtype: np.dtype) -> Any:
    return float_json(value, dtype, hex_nan=True, ints=False)


def _float_normalize(value: Any, dtype: np.dtype) -> Any:
    if isinstance(value, str):
        if value in SPECIAL_FLOATS:
            return dtype.type(SPECIAL_FLOATS[value])
        return parse_float(value, dtype, None, allow_hex=True)
    return _as_array_scalar(value, dtype)


def _complex_v2(value: Any, dtype: np.dtype, key: str | None) -> Any:
    if isinstance(value, list) and len(value) == 2:
        ft = np.dtype(f"f{dtype.itemsize // 2}")
        re_ = parse_float(value[0], ft, key, allow_hex=False)
        im = parse_float(value[1], ft, key, allow_hex=False)
        out = np.zeros((), dtype=dtype)
        out.real, out.imag = re_, im
        return out[()]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return np.array(value, dtype=dtype)[()]
    if isinstance(value, str):  # some writers store complex fill values as base64
        return np.frombuffer(b64decode(value, dtype.itemsize, key), dtype=dtype)[0]
    raise MetadataError(f"fill_value {value!r} is not a complex number", key)


def _complex_v3(value: Any, dtype: np.dtype, key: str | None) -> Any:
    if not (isinstance(value, list) and len(value) == 2):
        raise MetadataError(f"fill_value {value!r} must be [real, imag]", key)
    ft = np.dtype(f"f{dtype.itemsize // 2}")
    out = np.zeros((), dtype=dtype)
    out.real = parse_float(value[0], ft, key, allow_hex=True)
    out.imag = parse_float(value[1], ft, key, allow_hex=True)
    return out[()]


def _complex_v2_json(value: Any, dtype: np.dtype) -> Any:
    ft = np.dtype(f"f{dtype.itemsize // 2}")
    v = complex(value)
    return [float_json(v.real, ft, False, True), float_json(v.imag, ft, False, True)]


def _complex_v3_json(value: Any, dtype: np.dtype) -> Any:
    ft = np.dtype(f"f{dtype.itemsize // 2}")
    v = np.array(value, dtype=dtype.newbyteorder("="))
    return [float_json(v.real, ft, True, False), float_json(v.imag, ft, True, False)]


BOOL = DataTypeKind(
    "bool", "b", ("bool",), _core_dtype, _core_json,
    _bool_v2, _bool_json, _bool_v3, _bool_json, _bool_normalize,
)
INT = DataTypeKind(
    "int", "i", _core_names("i"), _core_dtype, _core_json,
    parse_int, _int_json, parse_int, _int_json, _int_normalize,
)
UINT = DataTypeKind(
    "uint", "u", _core_names("u"), _core_dtype, _core_json,
    parse_int, _int_json, parse_int, _int_json, _int_normalize,
)
FLOAT = DataTypeKind(
    "float", "f", _core_names("f"), _core_dtype, _core_json,
    _float_v2, _float_v2_json, _float_v3, _float_v3_json, _float_normalize,
)
COMPLEX = DataTypeKind(
    "complex", "c", _core_names("c"), _core_dtype, _core_json,
    _complex_v2, _complex_v2_json, _complex_v3, _complex_v3_json, _as_array_scalar,
)


# -- datetime64 and timedelta64 ----------------------------------------------------------------

TIME_UNITS = ("Y", "M", "W", "D", "h", "m", "s", "ms", "us", "μs", "ns", "ps", "fs", "as", "generic")


def _time_dtype(name: str, configuration: dict, obj: Any, key: str | None) -> np.dtype:
    unit = configuration.get("unit")
    scale = configuration.get("scale_factor", 1)
    if unit not in TIME_UNITS or not isinstance(scale, int) or not 1 <= scale <= 2**31 - 1:
        raise UnsupportedDtypeError(f"data_type {obj!r}: bad unit or scale_factor", key)
    unit = "us" if unit == "μs" else unit
    letter = "M" if name == "numpy.datetime64" else "m"
    if unit == "generic":
        return np.dtype(f"{letter}8")
    return np.dtype(f"{letter}8[{'' if scale == 1 else scale}{unit}]")


def _time_json(dtype: np.dtype) -> Any:
    unit, count = np.datetime_data(dtype)
    name = "numpy.datetime64" if dtype.kind == "M" else "numpy.timedelta64"
    return {"name": name, "configuration": {"unit": unit, "scale_factor": count}}


def _time_fill_json(value: Any, dtype: np.dtype) -> Any:
    return int(np.array(value, dtype=dtype.newbyteorder("=")).view(np.int64))


TIME = DataTypeKind(
    "datetime", "mM", ("numpy.datetime64", "numpy.timedelta64"), _time_dtype, _time_json,
    parse_datetime, _time_fill_json, parse_datetime, _time_fill_json, _as_array_scalar,
)


# -- fixed-size bytes, Unicode and raw bytes, and structures of fixed-size fields -------------


def _length_dtype(name: str, configuration: dict, obj: Any, key: str | None) -> np.dtype:
    n = configuration.get("length_bytes")
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise UnsupportedDtypeError(f"data_type {obj!r}: length_bytes must be an integer", key)
    if name == "fixed_length_utf32" and n % 4:
        raise UnsupportedDtypeError(f"data_type {obj!r}: length_bytes must be a multiple of 4", key)
    code = f"U{n // 4}" if name == "fixed_length_utf32" else f"S{n}" if name == "null_terminated_bytes" else f"V{n}"
    try:
        return np.dtype(code)
    except (TypeError, ValueError, OverflowError) as exc:  # a length NumPy cannot hold
        raise UnsupportedDtypeError(f"data_type {obj!r}: length_bytes {n} is too large ({exc})", key) from None


def _raw_dtype(name: str, configuration: dict, obj: Any, key: str | None) -> np.dtype:
    m = _RAW_BITS.fullmatch(name)
    if m is None:  # zarr-python 3.4's 'raw_bytes' extension
        return _length_dtype(name, configuration, obj, key)
    bits = int(m.group(1)) if len(m.group(1)) <= 30 else 1  # more digits than any size: refused
    if bits == 0 or bits % 8:
        raise UnsupportedDtypeError(f"data_type {name[:40]!r}: r<N> needs N a positive multiple of 8", key)
    return _length_dtype("raw_bytes", {"length_bytes": bits // 8}, name, key)


_RAW_BITS = re.compile(r"r(\d+)")


def _fixed_v2_json(value: Any, dtype: np.dtype) -> Any:
    return b64encode(np.array(value, dtype=dtype).tobytes())


def _bytes_json(dtype: np.dtype) -> Any:
    return {"name": "null_terminated_bytes", "configuration": {"length_bytes": dtype.itemsize}}


def _bytes_v2(value: Any, dtype: np.dtype, key: str | None) -> Any:
    if isinstance(value, str):
        raw = b64decode(value, None, key)
        return raw if dtype.itemsize == 0 else np.array(raw, dtype=dtype)[()]
    if value == 0:
        return np.zeros((), dtype=dtype)[()]
    raise MetadataError(f"fill_value {value!r} must be base64 for dtype {dtype}", key)


def _bytes_v3(value: Any, dtype: np.dtype, key: str | None) -> Any:
    if isinstance(value, str):
        return np.array(b64decode(value, None, key)[: dtype.itemsize], dtype=dtype)[()]
    if isinstance(value, list):
        return np.array(bytes(value), dtype=dtype)[()]
    raise MetadataError(f"fill_value {value!r} is not valid for {dtype}", key)


def _bytes_v3_json(value: Any, dtype: np.dtype) -> Any:
    return b64encode(bytes(np.array(value, dtype=dtype)[()]))


def _bytes_normalize(value: Any, dtype: np.dtype) -> Any:
    if _is_zero(value):
        return np.zeros((), dtype=dtype)[()]
    if isinstance(value, str):
        value = value.encode("ascii")
    return _as_array_scalar(value, dtype)


def _unicode_json(dtype: np.dtype) -> Any:
    return {"name": "fixed_length_utf32", "configuration": {"length_bytes": dtype.itemsize}}


def _unicode_v2(value: Any, dtype: np.dtype, key: str | None) -> Any:
    if isinstance(value, str):
        return np.array(value, dtype=dtype)[()]
    if value == 0:
        return np.zeros((), dtype=dtype)[()]
    raise MetadataError(f"fill_value {value!r} must be a string for dtype {dtype}", key)


def _unicode_v3(value: Any, dtype: np.dtype, key: str | None) -> Any:
    if not isinstance(value, str) or len(value) > dtype.itemsize // 4:
        raise MetadataError(f"fill_value {value!r} must be a string of at most {dtype.itemsize // 4} characters", key)
    return np.array(value, dtype=dtype)[()]


def _str_json(value: Any, dtype: np.dtype) -> Any:
    return str(value)


def _unicode_normalize(value: Any, dtype: np.dtype) -> Any:
    if _is_zero(value):
        return np.zeros((), dtype=dtype)[()]
    if not isinstance(value, (str, np.str_)):
        raise TypeError  # bytes are not text: numpy would decode them silently
    return _as_array_scalar(value, dtype)


def _raw_json(dtype: np.dtype) -> Any:
    # the core spec's raw-bits type (zarr-python 3.4 writes the 'raw_bytes' extension,
    # which zarrkit reads; tensorstore reads only r<N>)
    return f"r{8 * dtype.itemsize}"


def _raw_v2(value: Any, dtype: np.dtype, key: str | None) -> Any:
    if isinstance(value, str):
        raw = b64decode(value, dtype.itemsize, key)
        return np.frombuffer(raw, dtype=dtype)[0]
    if value == 0:
        return np.zeros((), dtype=dtype)[()]
    raise MetadataError(f"fill_value {value!r} must be base64 for dtype {dtype}", key)


def _raw_v3(value: Any, dtype: np.dtype, key: str | None) -> Any:
    if isinstance(value, list):
        raw = bytes(value)
        if len(raw) != dtype.itemsize:
            raise MetadataError(f"fill_value {value!r} must have {dtype.itemsize} bytes", key)
    elif isinstance(value, str):
        raw = b64decode(value, dtype.itemsize, key)
    else:
        raise MetadataError(f"fill_value {value!r} is not valid for {dtype}", key)
    return np.frombuffer(raw, dtype=dtype)[0]


def _raw_v3_json(value: Any, dtype: np.dtype) -> Any:
    return list(np.array(value, dtype=dtype).tobytes())  # r<N>: an array of byte values


def _raw_normalize(value: Any, dtype: np.dtype) -> Any:
    if _is_zero(value):
        return np.zeros((), dtype=dtype)[()]
    return _as_array_scalar(tuple(value) if dtype.names and isinstance(value, list) else value, dtype)  # fields


def _struct_dtype(name: str, configuration: dict, obj: Any, key: str | None) -> np.dtype:
    fields = configuration.get("fields")
    if not isinstance(fields, list) or not fields:
        raise UnsupportedDtypeError(f"data_type {obj!r}: fields must be a non-empty list", key)
    out = []
    for f in fields:
        if isinstance(f, dict):
            fname, ftype = f.get("name"), f.get("data_type")
        elif isinstance(f, list) and len(f) == 2:
            fname, ftype = f
        else:
            raise UnsupportedDtypeError(f"data_type {obj!r}: bad field {f!r}", key)
        if not isinstance(fname, str) or not fname:
            raise UnsupportedDtypeError(f"data_type {obj!r}: bad field name {fname!r}", key)
        fdt = parse_v3_data_type(ftype, key)
        if fdt.hasobject:
            raise UnsupportedDtypeError(f"data_type {obj!r}: variable-length field {fname!r}", key)
        out.append((fname, fdt))
    try:
        return np.dtype(out)
    except (TypeError, ValueError) as exc:
        raise UnsupportedDtypeError(f"data_type {obj!r}: {exc}", key) from None


def _struct_json(dtype: np.dtype) -> Any:
    fields = []
    for name in dtype.names or ():
        fdt = dtype[name]
        if fdt.subdtype is not None:
            raise UnsupportedDtypeError(
                f"structured field {name!r} has a subarray dtype {fdt}, which Zarr v3 cannot store"
            )
        fields.append({"name": name, "data_type": v3_data_type_json(fdt)})
    return {"name": "struct", "configuration": {"fields": fields}}


def _struct_v3(value: Any, dtype: np.dtype, key: str | None) -> Any:
    if isinstance(value, dict):
        out = np.zeros((), dtype=dtype)
        for name in dtype.names or ():
            if name not in value:
                raise MetadataError(f"fill_value has no entry for field {name!r}", key)
            out[name] = parse_v3_fill_value(value[name], dtype[name], key)
        return out[()]
    if isinstance(value, str):
        return np.frombuffer(b64decode(value, dtype.itemsize, key), dtype=dtype)[0]
    raise MetadataError(f"fill_value {value!r} is not valid for a struct", key)


def _struct_v3_json(value: Any, dtype: np.dtype) -> Any:
    v = np.array(value, dtype=dtype)
    return {n: v3_fill_value_json(v[n][()], dtype[n]) for n in dtype.names or ()}


BYTES = DataTypeKind(
    "bytes", "S", ("null_terminated_bytes",), _length_dtype, _bytes_json,
    _bytes_v2, _fixed_v2_json, _bytes_v3, _bytes_v3_json, _bytes_normalize,
)
UNICODE = DataTypeKind(
    "unicode", "U", ("fixed_length_utf32",), _length_dtype, _unicode_json,
    _unicode_v2, _str_json, _unicode_v3, _str_json, _unicode_normalize,
)
RAW = DataTypeKind(
    "raw", "V", ("raw_bytes",), _raw_dtype, _raw_json,
    _raw_v2, _fixed_v2_json, _raw_v3, _raw_v3_json, _raw_normalize,
)
STRUCT = DataTypeKind(
    "struct", "", ("struct", "structured"), _struct_dtype, _struct_json,
    _raw_v2, _fixed_v2_json, _struct_v3, _struct_v3_json, _raw_normalize,
)


# -- variable-length strings and bytes ---------------------------------------------------------


def string_dtype() -> np.dtype:
    """The NumPy dtype variable-length strings are read as.

    NumPy 2's ``StringDType`` (as zarr-python 3 reads them), unless
    ``zarrkit.config.string_dtype`` is ``'object'`` or NumPy is older than 2: then ``object``
    arrays of ``str``.
    """
    if config.string_dtype == "object" or _STRING_DTYPE is None:
        return np.dtype(object)
    return _STRING_DTYPE


_STRING_DTYPE: np.dtype | None = (
    np.dtypes.StringDType() if hasattr(np, "dtypes") and hasattr(np.dtypes, "StringDType") else None
)


def _string_dtype(name: str, configuration: dict, obj: Any, key: str | None) -> np.dtype:
    return string_dtype()


def _vlen_bytes_dtype(name: str, configuration: dict, obj: Any, key: str | None) -> np.dtype:
    return BYTES_DTYPE


def _vlen_v2(value: Any, dtype: np.dtype, key: str | None) -> Any:
    return value


def _vlen_v2_json(value: Any, dtype: np.dtype) -> Any:
    if isinstance(value, bytes):
        return b64encode(value)
    return value.item() if isinstance(value, np.generic) else value


def _vlen_v3_json(value: Any, dtype: np.dtype) -> Any:
    if isinstance(value, bytes):
        return b64encode(value)
    return str(value)


def _string_v3(value: Any, dtype: np.dtype, key: str | None) -> Any:
    if not isinstance(value, str):
        raise MetadataError(f"fill_value {value!r} must be a string", key)
    return value


def _vlen_bytes_v3(value: Any, dtype: np.dtype, key: str | None) -> Any:
    if isinstance(value, str):
        return b64decode(value, None, key)
    if isinstance(value, list) and all(isinstance(b, int) and 0 <= b < 256 for b in value):
        return bytes(value)
    raise MetadataError(f"fill_value {value!r} is not valid for data_type bytes", key)


def _vlen_normalize(value: Any, dtype: np.dtype) -> Any:  # bytes-like; text as its UTF-8; 0 as b''
    return b"" if _is_zero(value) else value.encode() if isinstance(value, str) else bytes(memoryview(value))


def _string_normalize(value: Any, dtype: np.dtype) -> Any:
    # an object array takes any object; StringDType converts the value to text as NumPy does
    return value if dtype.kind == "O" else _as_array_scalar(value, dtype)


# ``T`` is NumPy 2's StringDType: its memory holds pointers, so it is an object kind to every
# check that keeps stored bytes out of such memory (``dtype.hasobject`` is True for it)
STRING = DataTypeKind(
    "string", "OT", ("string",), _string_dtype, lambda dtype: "string",
    _vlen_v2, _vlen_v2_json, _string_v3, _vlen_v3_json, _string_normalize,
)
VLEN_BYTES = DataTypeKind(
    "vlen_bytes", "", ("bytes", "variable_length_bytes"),  # the latter as zarr-python 3.4 writes it
    _vlen_bytes_dtype, lambda dtype: "bytes",
    _vlen_v2, _vlen_v2_json, _vlen_bytes_v3, _vlen_v3_json, _vlen_normalize,
)


# -- the types of the ml_dtypes package (v3 only: v2 stores them by their NumPy kind) ----------


def _ml_from_v3(name: str, configuration: dict, obj: Any, key: str | None) -> np.dtype:
    return ml_dtype(name, key)


def _ml_fill_json(value: Any, dtype: np.dtype) -> Any:
    v = np.array(value).astype(dtype)
    if dtype.name in ("int2", "int4", "uint2", "uint4"):
        return int(v.astype(np.int64))
    return float_json(v, dtype, hex_nan=True, ints=False)


def _ml_normalize(value: Any, dtype: np.dtype) -> Any:
    try:
        return ml_scalar(value, dtype, None)
    except MetadataError:
        raise ValueError from None


def _v2_only(value: Any, dtype: np.dtype, key: str | None = None) -> Any:  # pragma: no cover
    raise AssertionError("the v2 format looks ml_dtypes types up by their NumPy kind")


ML = DataTypeKind(
    "ml_dtypes", "", ML_DTYPES, _ml_from_v3, ml_dtype_name,
    _v2_only, _v2_only, ml_scalar, _ml_fill_json, _ml_normalize, own_errors=True,
)


#: every kind, each once
KINDS = (BOOL, INT, UINT, FLOAT, COMPLEX, TIME, BYTES, UNICODE, RAW, STRUCT, STRING, VLEN_BYTES, ML)
_BY_NUMPY_KIND = {letter: k for k in KINDS for letter in k.numpy_kinds}
_BY_V3_NAME = {name: k for k in KINDS for name in k.v3_names}


def kind_of(dtype: np.dtype, zarr_format: int = 3) -> DataTypeKind | None:
    """The entry of ``dtype``'s kind (None for a dtype no format stores).  ``zarr_format=2``
    looks ``ml_dtypes`` types up by their NumPy kind: v2 has no names for them."""
    if zarr_format == 3 and ml_dtype_name(dtype) is not None:
        return ML
    if dtype.names is not None:
        return STRUCT
    if is_bytes_dtype(dtype):
        return VLEN_BYTES
    return _BY_NUMPY_KIND.get(dtype.kind)


# =============================================================================================
# the translations: one look-up each


def parse_v2_fill_value(value: Any, dtype: np.dtype, key: str | None = None) -> Any:
    """Decode the ``fill_value`` field of ``.zarray`` into a NumPy scalar (or ``None``)."""
    if value is None:
        return None
    kind = kind_of(dtype, 2)
    if kind is None:
        raise UnsupportedDtypeError(f"dtype {dtype} is not supported", key)
    try:
        return kind.v2_fill(value, dtype, key)
    except MetadataError:
        raise
    except (TypeError, ValueError, OverflowError) as exc:
        raise MetadataError(f"fill_value {value!r} is not valid for dtype {dtype}: {exc}", key) from None


def v2_fill_value_json(value: Any, dtype: np.dtype) -> Any:
    """Encode a fill value for ``.zarray`` (as zarr-python writes it)."""
    if value is None:
        return None
    kind = kind_of(dtype, 2)
    if kind is None:
        raise UnsupportedDtypeError(f"dtype {dtype} is not supported")
    return kind.v2_fill_json(value, dtype)


def normalize_fill_value(value: Any, dtype: np.dtype, argument: str = "fill_value") -> Any:
    """Check a user's fill value against ``dtype`` and convert it to a NumPy scalar.

    ``None`` stays ``None`` (no fill value); ``0`` means all-zero bytes for any dtype.
    Raises ``ValueError`` naming ``argument`` when the value does not fit the dtype.

    Examples
    --------
    >>> from zarrkit.metadata.dtypes import normalize_fill_value
    >>> import numpy as np
    >>> normalize_fill_value(0, np.dtype('S3'))
    np.bytes_(b'')
    >>> normalize_fill_value(300, np.dtype('u1'))
    Traceback (most recent call last):
    ...
    ValueError: fill_value 300 does not fit dtype uint8
    """
    if value is None:
        return None
    kind = kind_of(dtype)
    if kind is None:  # no format stores it; NumPy says whether the value fits
        normalize: Callable[[Any, np.dtype], Any] = _as_array_scalar
        errors: tuple[type[Exception], ...] = _NORMALIZE_ERRORS
    else:
        normalize = kind.normalize
        errors = (ValueError,) if kind.own_errors else _NORMALIZE_ERRORS
    try:
        return normalize(value, dtype)
    except errors as exc:
        shown = exc.value if isinstance(exc, _Unfit) else value
        raise ValueError(f"{argument} {shown!r} does not fit dtype {dtype}") from None


_NORMALIZE_ERRORS = (ValueError, TypeError, OverflowError, FloatingPointError, UnicodeEncodeError, MetadataError)


def parse_v3_data_type(obj: Any, key: str | None = None) -> np.dtype:
    """Parse the ``data_type`` field of ``zarr.json`` (core names and extension types)."""
    if isinstance(obj, dict):
        name = obj.get("name")
        configuration = obj.get("configuration", {})
        if not isinstance(configuration, dict):
            raise MetadataError(f"data_type configuration must be an object: {obj!r}", key)
    else:
        name, configuration = obj, {}
    if not isinstance(name, str):
        raise UnsupportedDtypeError(f"data_type {obj!r} is not understood", key)
    kind = _BY_V3_NAME.get(name) or (RAW if _RAW_BITS.fullmatch(name) else None)
    if kind is None:
        raise UnsupportedDtypeError(f"data_type {name!r} is not supported", key)
    return kind.from_v3(name, configuration, obj, key)


def v3_data_type_json(dtype: np.dtype) -> Any:
    """The ``data_type`` field of ``zarr.json`` for ``dtype``."""
    kind = kind_of(dtype)
    if kind is None:
        raise UnsupportedDtypeError(f"dtype {dtype} has no Zarr v3 data type")
    return kind.to_v3(dtype)


def parse_v3_fill_value(value: Any, dtype: np.dtype, key: str | None = None) -> Any:
    """Decode the ``fill_value`` field of ``zarr.json`` for ``dtype``."""
    if value is None:
        raise MetadataError("fill_value must not be null in Zarr v3", key)
    kind = kind_of(dtype)
    if kind is None:
        raise UnsupportedDtypeError(f"dtype {dtype} is not supported", key)
    if kind.own_errors:
        return kind.v3_fill(value, dtype, key)
    try:
        return kind.v3_fill(value, dtype, key)
    except MetadataError:
        raise
    except (TypeError, ValueError, OverflowError) as exc:
        raise MetadataError(f"fill_value {value!r} is not valid for {dtype}: {exc}", key) from None


def v3_fill_value_json(value: Any, dtype: np.dtype) -> Any:
    """Encode a fill value for ``zarr.json``; NaNs other than the canonical one as hex bits."""
    kind = kind_of(dtype)
    if kind is None:
        raise UnsupportedDtypeError(f"dtype {dtype} has no Zarr v3 data type")
    return kind.v3_fill_json(value, dtype)
