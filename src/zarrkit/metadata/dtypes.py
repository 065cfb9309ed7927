"""Data types and fill values in the v2 and v3 metadata dialects.

In memory every array has a NumPy dtype; these functions translate it to and from the JSON each
format stores, and likewise for fill values.  Variable-length strings and bytes are NumPy object
arrays; :data:`BYTES_DTYPE` (an object dtype tagged in its ``metadata``) marks byte strings so the
v3 ``bytes`` data type round-trips.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from typing import Any

import numpy as np

from ..errors import MetadataError, UnsupportedDtypeError

try:
    import ml_dtypes
except ImportError:  # pragma: no cover - ml_dtypes is an optional extra
    ml_dtypes = None  # type: ignore[assignment]  # the module, or None without the extra

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
]

#: the data types of the zarr-extensions registry that the ``ml_dtypes`` package provides
ML_DTYPES = (
    "bfloat16", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fnuz", "float8_e5m2",
    "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn",
    "int2", "int4", "uint2", "uint4",
)


def _ml_dtype(name: str, key: str | None) -> np.dtype:
    if ml_dtypes is None:
        raise UnsupportedDtypeError(
            f"data_type {name!r} needs the ml_dtypes package (pip install 'zarrkit[ml]')", key
        )
    return np.dtype(getattr(ml_dtypes, name))


def ml_dtype_name(dtype: np.dtype) -> str | None:
    """The registry name of an ``ml_dtypes`` type (``'bfloat16'``, ``'int4'``, ...), else None."""
    if ml_dtypes is None or dtype.names is not None or dtype.kind not in "Vf":
        return None
    name = dtype.name
    if name in ML_DTYPES and dtype == np.dtype(getattr(ml_dtypes, name)):
        return name
    return None


def _ml_scalar(value: Any, dtype: np.dtype, key: str | None) -> Any:
    """A fill value of an ``ml_dtypes`` type: integers by range, floats as the core float
    types take them (numbers, ``"NaN"``, ``"Infinity"``, hex bit patterns)."""
    if dtype.name in ("int2", "int4", "uint2", "uint4"):
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float, np.integer, np.floating))
            or not math.isfinite(value)
            or float(value) != int(value)
        ):
            raise MetadataError(f"fill_value {value!r} is not an integer for dtype {dtype}", key)
        info = ml_dtypes.iinfo(dtype)
        if not info.min <= int(value) <= info.max:
            raise MetadataError(f"fill_value {value} is out of range for dtype {dtype}", key)
        return np.array(int(value)).astype(dtype)[()]
    if isinstance(value, (float, int, np.floating, np.integer)) and not isinstance(value, bool):
        with np.errstate(all="ignore"):
            return np.array(float(value)).astype(dtype)[()]
    return _parse_float(value, dtype, key, allow_hex=True)


#: Object dtype of variable-length *byte* strings (plain ``object`` means text strings).
BYTES_DTYPE = np.dtype("O", metadata={"zarrkit_vlen": "bytes"})


def is_bytes_dtype(dtype: np.dtype) -> bool:
    """Whether ``dtype`` is :data:`BYTES_DTYPE` (variable-length bytes)."""
    return dtype.kind == "O" and dtype.metadata is not None and dtype.metadata.get("zarrkit_vlen") == "bytes"


# =============================================================================================
# v2 dtypes


def _tuplify(descr: Any) -> Any:
    if isinstance(descr, list):
        out: list[tuple[Any, ...]] = []
        for field in descr:
            if not isinstance(field, list) or len(field) not in (2, 3) or not isinstance(field[0], str):
                raise ValueError(f"invalid structured field {field!r}")
            name, sub = field[0], field[1]
            if isinstance(sub, list):
                sub = _tuplify(sub)
            elif not isinstance(sub, str) or not _V2_TYPESTR.match(sub):
                raise ValueError(f"field {name!r}: {sub!r} is not a NumPy type string")
            if len(field) == 3:
                dims = field[2]
                if not isinstance(dims, list) or not all(
                    isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in dims
                ):
                    raise ValueError(f"field {name!r}: subarray shape {dims!r} is not a list of sizes")
                out.append((name, sub, tuple(dims)))
            else:
                out.append((name, sub))
        return out
    return descr


_V2_TYPESTR = re.compile(r"^[<>|=]?[bBiufcmMSUVO][0-9]*(\[[0-9]*[A-Za-z]+\])?$")


def parse_v2_dtype(value: Any, key: str | None = None) -> np.dtype:
    """Parse the ``dtype`` field of ``.zarray`` (a typestr or a structured-field list)."""
    try:
        if isinstance(value, str):
            if not _V2_TYPESTR.match(value):
                raise ValueError("not a NumPy type string")
            dt = np.dtype(value)
        elif isinstance(value, list) and value:
            dt = np.dtype(_tuplify(value))
        else:
            raise ValueError("expected a type string or a list of fields")
    except (TypeError, ValueError, SyntaxError, OverflowError, MemoryError, RecursionError) as exc:
        raise UnsupportedDtypeError(f"dtype {value!r} is not supported: {exc}", key) from None
    return dt


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
            fields = dt.fields or {}
            stack.extend((f"{path}.{n}" if path else n, fields[n][0]) for n in reversed(dt.names))
        elif dt.kind == "O":
            return path
    return ""


def v2_dtype_json(dtype: np.dtype) -> Any:
    """The ``dtype`` field of ``.zarray`` for ``dtype``."""
    if dtype.names is not None:
        return _descr_json(dtype.descr)
    if dtype.subdtype is not None:
        raise UnsupportedDtypeError(f"subarray dtype {dtype} must be a field of a structured dtype")
    return dtype.str


def _descr_json(descr: list) -> list:
    out = []
    for field in descr:
        name, sub = field[0], field[1]
        sub = _descr_json(sub) if isinstance(sub, list) else sub
        out.append([name, sub, list(field[2])] if len(field) == 3 else [name, sub])
    return out


# =============================================================================================
# float helpers shared by both dialects

_SPECIAL = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _parse_float(value: Any, dtype: np.dtype, key: str | None, allow_hex: bool) -> np.generic:
    if isinstance(value, bool):
        raise MetadataError(f"fill_value {value!r} is not a number for dtype {dtype}", key)
    if isinstance(value, str):
        if value in _SPECIAL:
            return dtype.type(_SPECIAL[value])
        if allow_hex and value.startswith("0x"):
            try:
                bits = int(value, 16)
            except ValueError:
                raise MetadataError(f"fill_value {value!r} is not a hex bit pattern", key) from None
            size = dtype.itemsize
            if bits >= 1 << (8 * size):
                raise MetadataError(f"fill_value {value!r} has too many bits for {dtype}", key)
            return np.array(bits, dtype=_UINT[size]).view(dtype.newbyteorder("="))[()]  # type: ignore[return-value]  # a 0-d array's [()] is a scalar
        raise MetadataError(f"fill_value {value!r} is not a number for dtype {dtype}", key)
    if not isinstance(value, (int, float)):
        raise MetadataError(f"fill_value {value!r} is not a number for dtype {dtype}", key)
    with np.errstate(over="ignore"):
        return np.array(value, dtype=dtype)[()]  # type: ignore[return-value]  # a 0-d array's [()] is a scalar


def _float_json(value: Any, dtype: np.dtype, hex_nan: bool, ints: bool) -> Any:
    v = np.array(value, dtype=dtype.newbyteorder("="))
    f = float(v)
    if math.isnan(f):
        if hex_nan:
            bits = int(v.view(_UINT[dtype.itemsize]))
            canonical = int(np.array(np.nan).astype(dtype.newbyteorder("=")).view(_UINT[dtype.itemsize]))
            if bits != canonical:
                return f"0x{bits:0{2 * dtype.itemsize}x}"
        return "NaN"
    if math.isinf(f):
        return "Infinity" if f > 0 else "-Infinity"
    if ints and f.is_integer() and not (f == 0 and math.copysign(1, f) < 0) and abs(f) < 2**53:
        return int(f)
    return f


def _parse_int(value: Any, dtype: np.dtype, key: str | None) -> np.generic:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MetadataError(f"fill_value {value!r} is not an integer for dtype {dtype}", key)
    if isinstance(value, float):
        if not value.is_integer():
            raise MetadataError(f"fill_value {value!r} is not an integer for dtype {dtype}", key)
        value = int(value)
    info = np.iinfo(dtype)
    if not info.min <= value <= info.max:
        raise MetadataError(f"fill_value {value} is out of range for dtype {dtype}", key)
    return np.array(value, dtype=dtype)[()]  # type: ignore[return-value]  # a 0-d array's [()] is a scalar


def _b64decode(value: str, size: int | None, key: str | None) -> bytes:
    try:
        s = value.strip()
        s += "=" * (-len(s) % 4)  # some writers drop the padding
        raw = base64.b64decode(s, validate=True)
    except (binascii.Error, ValueError):
        raise MetadataError(f"fill_value {value!r} is not valid base64", key) from None
    if size is not None and len(raw) < size:
        raw = raw + b"\x00" * (size - len(raw))  # too-short encodings: zero-pad
    return raw if size is None else raw[:size]


def _b64encode(raw: bytes) -> str:
    return base64.standard_b64encode(raw).decode("ascii")


def _parse_datetime(value: Any, dtype: np.dtype, key: str | None) -> np.generic:
    if value == "NaT":
        return np.array("NaT", dtype=dtype)[()]  # type: ignore[return-value]  # a 0-d array's [()] is a scalar
    if isinstance(value, bool) or not isinstance(value, int):
        raise MetadataError(f"fill_value {value!r} is not an integer or 'NaT' for {dtype}", key)
    return np.array(value, dtype=np.int64).view(dtype.newbyteorder("="))[()]  # type: ignore[return-value]  # a 0-d array's [()] is a scalar


# =============================================================================================
# v2 fill values


def parse_v2_fill_value(value: Any, dtype: np.dtype, key: str | None = None) -> Any:
    """Decode the ``fill_value`` field of ``.zarray`` into a NumPy scalar (or ``None``)."""
    if value is None:
        return None
    kind = dtype.kind
    try:
        if kind == "O":
            return value
        if dtype.names is not None or kind == "V":
            if isinstance(value, str):
                raw = _b64decode(value, dtype.itemsize, key)
                return np.frombuffer(raw, dtype=dtype)[0]
            if value == 0:
                return np.zeros((), dtype=dtype)[()]
            raise MetadataError(f"fill_value {value!r} must be base64 for dtype {dtype}", key)
        if kind == "S":
            if isinstance(value, str):
                raw = _b64decode(value, None, key)
                return raw if dtype.itemsize == 0 else np.array(raw, dtype=dtype)[()]
            if value == 0:
                return np.zeros((), dtype=dtype)[()]
            raise MetadataError(f"fill_value {value!r} must be base64 for dtype {dtype}", key)
        if kind == "U":
            if isinstance(value, str):
                return np.array(value, dtype=dtype)[()]
            if value == 0:
                return np.zeros((), dtype=dtype)[()]
            raise MetadataError(f"fill_value {value!r} must be a string for dtype {dtype}", key)
        if kind == "b":
            if isinstance(value, bool) or value in (0, 1):
                return np.bool_(bool(value))
            raise MetadataError(f"fill_value {value!r} is not a boolean", key)
        if kind in "iu":
            return _parse_int(value, dtype, key)
        if kind == "f":
            return _parse_float(value, dtype, key, allow_hex=False)
        if kind == "c":
            if isinstance(value, list) and len(value) == 2:
                ft = np.dtype(f"f{dtype.itemsize // 2}")
                re_ = _parse_float(value[0], ft, key, allow_hex=False)
                im = _parse_float(value[1], ft, key, allow_hex=False)
                out = np.zeros((), dtype=dtype)
                out.real, out.imag = re_, im
                return out[()]
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return np.array(value, dtype=dtype)[()]
            if isinstance(value, str):  # some writers store complex fill values as base64
                return np.frombuffer(_b64decode(value, dtype.itemsize, key), dtype=dtype)[0]
            raise MetadataError(f"fill_value {value!r} is not a complex number", key)
        if kind in "mM":
            return _parse_datetime(value, dtype, key)
    except MetadataError:
        raise
    except (TypeError, ValueError, OverflowError) as exc:
        raise MetadataError(f"fill_value {value!r} is not valid for dtype {dtype}: {exc}", key) from None
    raise UnsupportedDtypeError(f"dtype {dtype} is not supported", key)


def v2_fill_value_json(value: Any, dtype: np.dtype) -> Any:
    """Encode a fill value for ``.zarray`` (as zarr-python writes it)."""
    if value is None:
        return None
    kind = dtype.kind
    if kind == "O":
        if isinstance(value, bytes):
            return _b64encode(value)
        return value.item() if isinstance(value, np.generic) else value
    if dtype.names is not None or kind in "VS":
        return _b64encode(np.array(value, dtype=dtype).tobytes())
    if kind == "U":
        return str(value)
    if kind == "b":
        return bool(value)
    if kind in "iu":
        return int(value)
    if kind == "f":
        return _float_json(value, dtype, hex_nan=False, ints=True)
    if kind == "c":
        ft = np.dtype(f"f{dtype.itemsize // 2}")
        v = complex(value)
        return [_float_json(v.real, ft, False, True), _float_json(v.imag, ft, False, True)]
    if kind in "mM":
        return int(np.array(value, dtype=dtype.newbyteorder("=")).view(np.int64))
    raise UnsupportedDtypeError(f"dtype {dtype} is not supported")


# =============================================================================================
# user-supplied fill values


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
    if dtype.kind == "O":
        return value
    if ml_dtype_name(dtype) is not None:
        try:
            return _ml_scalar(value, dtype, None)
        except MetadataError:
            raise ValueError(f"{argument} {value!r} does not fit dtype {dtype}") from None
    if (
        isinstance(value, (int, np.integer))
        and not isinstance(value, (bool, np.bool_, np.timedelta64))
        and value == 0
        and (dtype.kind in "SUV" or dtype.names is not None)
    ):
        return np.zeros((), dtype=dtype)[()]
    try:
        if dtype.kind in "iu":
            if isinstance(value, (float, np.floating)) and not float(value).is_integer():
                raise ValueError
            if isinstance(value, str):
                raise ValueError
            iv = int(value)
            info = np.iinfo(dtype)
            if not info.min <= iv <= info.max:
                raise ValueError
            return np.array(iv, dtype=dtype)[()]
        if dtype.kind == "b":
            if isinstance(value, (bool, np.bool_)) or (isinstance(value, (int, np.integer)) and value in (0, 1)):
                return np.bool_(bool(value))
            raise ValueError
        if dtype.kind == "f" and isinstance(value, str):
            if value in _SPECIAL:
                return dtype.type(_SPECIAL[value])
            return _parse_float(value, dtype, None, allow_hex=True)
        if dtype.kind == "U" and not isinstance(value, (str, np.str_)):
            raise ValueError  # bytes are not text: numpy would decode them silently
        if dtype.kind in "SV" and dtype.names is None and isinstance(value, str):
            value = value.encode("ascii") if dtype.kind == "S" else value
        if isinstance(value, np.void) and value.dtype.names is None:
            value = value.tobytes()
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
    except (ValueError, TypeError, OverflowError, FloatingPointError, UnicodeEncodeError, MetadataError):
        raise ValueError(f"{argument} {value!r} does not fit dtype {dtype}") from None


# =============================================================================================
# v3 data types

_V3_CORE = {
    "bool": "bool",
    "int8": "i1", "int16": "i2", "int32": "i4", "int64": "i8",
    "uint8": "u1", "uint16": "u2", "uint32": "u4", "uint64": "u8",
    "float16": "f2", "float32": "f4", "float64": "f8",
    "complex64": "c8", "complex128": "c16",
}
_V3_NAME = {np.dtype(v).newbyteorder("=").str[1:]: k for k, v in _V3_CORE.items()}
_DT_UNIT = re.compile(r"^(\d*)(\w+)$")
_UNITS = {"Y", "M", "W", "D", "h", "m", "s", "ms", "us", "μs", "ns", "ps", "fs", "as", "generic"}


def parse_v3_data_type(obj: Any, key: str | None = None) -> np.dtype:
    """Parse the ``data_type`` field of ``zarr.json`` (core names and extension types)."""
    if isinstance(obj, dict):
        name = obj.get("name")
        config = obj.get("configuration", {})
        if not isinstance(config, dict):
            raise MetadataError(f"data_type configuration must be an object: {obj!r}", key)
    else:
        name, config = obj, {}
    if not isinstance(name, str):
        raise UnsupportedDtypeError(f"data_type {obj!r} is not understood", key)
    if name in _V3_CORE:
        return np.dtype(_V3_CORE[name])
    m = re.fullmatch(r"r(\d+)", name)
    if m:
        bits = int(m.group(1))
        if bits == 0 or bits % 8:
            raise UnsupportedDtypeError(f"data_type {name!r}: r<N> needs N a positive multiple of 8", key)
        return np.dtype(f"V{bits // 8}")
    if name == "string":
        return np.dtype("O")
    if name in ("bytes", "variable_length_bytes"):  # the latter as zarr-python 3.4 writes it
        return BYTES_DTYPE
    if name in ("numpy.datetime64", "numpy.timedelta64"):
        unit = config.get("unit")
        scale = config.get("scale_factor", 1)
        if unit not in _UNITS or not isinstance(scale, int) or not 1 <= scale <= 2**31 - 1:
            raise UnsupportedDtypeError(f"data_type {obj!r}: bad unit or scale_factor", key)
        unit = "us" if unit == "μs" else unit
        letter = "M" if name == "numpy.datetime64" else "m"
        if unit == "generic":
            return np.dtype(f"{letter}8")
        return np.dtype(f"{letter}8[{'' if scale == 1 else scale}{unit}]")
    if name in ("fixed_length_utf32", "null_terminated_bytes", "raw_bytes"):
        n = config.get("length_bytes")
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise UnsupportedDtypeError(f"data_type {obj!r}: length_bytes must be an integer", key)
        if name == "fixed_length_utf32":
            if n % 4:
                raise UnsupportedDtypeError(f"data_type {obj!r}: length_bytes must be a multiple of 4", key)
            return np.dtype(f"U{n // 4}")
        return np.dtype(f"S{n}" if name == "null_terminated_bytes" else f"V{n}")
    if name in ("struct", "structured"):
        fields = config.get("fields")
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
            if fdt.kind == "O":
                raise UnsupportedDtypeError(f"data_type {obj!r}: variable-length field {fname!r}", key)
            out.append((fname, fdt))
        try:
            return np.dtype(out)
        except (TypeError, ValueError) as exc:
            raise UnsupportedDtypeError(f"data_type {obj!r}: {exc}", key) from None
    if name in ML_DTYPES:
        return _ml_dtype(name, key)
    raise UnsupportedDtypeError(f"data_type {name!r} is not supported", key)


def v3_data_type_json(dtype: np.dtype) -> Any:
    """The ``data_type`` field of ``zarr.json`` for ``dtype``."""
    ml = ml_dtype_name(dtype)
    if ml is not None:
        return ml
    if dtype.names is not None:
        fields = []
        for name in dtype.names:
            fdt = dtype[name]
            if fdt.subdtype is not None:
                raise UnsupportedDtypeError(
                    f"structured field {name!r} has a subarray dtype {fdt}, which Zarr v3 cannot store"
                )
            fields.append({"name": name, "data_type": v3_data_type_json(fdt)})
        return {"name": "struct", "configuration": {"fields": fields}}
    kind = dtype.kind
    if kind == "O":
        return "bytes" if is_bytes_dtype(dtype) else "string"
    if kind in "biufc":
        return _V3_NAME[dtype.newbyteorder("=").str[1:]]
    if kind in "mM":
        unit, count = np.datetime_data(dtype)
        name = "numpy.datetime64" if kind == "M" else "numpy.timedelta64"
        return {"name": name, "configuration": {"unit": unit, "scale_factor": count}}
    if kind == "U":
        return {"name": "fixed_length_utf32", "configuration": {"length_bytes": dtype.itemsize}}
    if kind == "S":
        return {"name": "null_terminated_bytes", "configuration": {"length_bytes": dtype.itemsize}}
    if kind == "V":
        # the core spec's raw-bits type (zarr-python 3.4 writes the 'raw_bytes' extension,
        # which zarrkit reads; tensorstore reads only r<N>)
        return f"r{8 * dtype.itemsize}"
    raise UnsupportedDtypeError(f"dtype {dtype} has no Zarr v3 data type")


# =============================================================================================
# v3 fill values


def parse_v3_fill_value(value: Any, dtype: np.dtype, key: str | None = None) -> Any:
    """Decode the ``fill_value`` field of ``zarr.json`` for ``dtype``."""
    if value is None:
        raise MetadataError("fill_value must not be null in Zarr v3", key)
    kind = dtype.kind
    if ml_dtype_name(dtype) is not None:
        return _ml_scalar(value, dtype, key)
    try:
        if dtype.names is not None:
            if isinstance(value, dict):
                out = np.zeros((), dtype=dtype)
                for name in dtype.names:
                    if name not in value:
                        raise MetadataError(f"fill_value has no entry for field {name!r}", key)
                    out[name] = parse_v3_fill_value(value[name], dtype[name], key)
                return out[()]
            if isinstance(value, str):
                return np.frombuffer(_b64decode(value, dtype.itemsize, key), dtype=dtype)[0]
            raise MetadataError(f"fill_value {value!r} is not valid for a struct", key)
        if kind == "O":
            if is_bytes_dtype(dtype):
                if isinstance(value, str):
                    return _b64decode(value, None, key)
                if isinstance(value, list) and all(isinstance(b, int) and 0 <= b < 256 for b in value):
                    return bytes(value)
                raise MetadataError(f"fill_value {value!r} is not valid for data_type bytes", key)
            if not isinstance(value, str):
                raise MetadataError(f"fill_value {value!r} must be a string", key)
            return value
        if kind == "b":
            if not isinstance(value, bool):
                raise MetadataError(f"fill_value {value!r} must be true or false", key)
            return np.bool_(value)
        if kind in "iu":
            return _parse_int(value, dtype, key)
        if kind == "f":
            return _parse_float(value, dtype, key, allow_hex=True)
        if kind == "c":
            if not (isinstance(value, list) and len(value) == 2):
                raise MetadataError(f"fill_value {value!r} must be [real, imag]", key)
            ft = np.dtype(f"f{dtype.itemsize // 2}")
            out = np.zeros((), dtype=dtype)
            out.real = _parse_float(value[0], ft, key, allow_hex=True)
            out.imag = _parse_float(value[1], ft, key, allow_hex=True)
            return out[()]
        if kind in "mM":
            return _parse_datetime(value, dtype, key)
        if kind == "U":
            if not isinstance(value, str) or len(value) > dtype.itemsize // 4:
                raise MetadataError(f"fill_value {value!r} must be a string of at most {dtype.itemsize // 4} characters", key)
            return np.array(value, dtype=dtype)[()]
        if kind == "S":
            if isinstance(value, str):
                return np.array(_b64decode(value, None, key)[: dtype.itemsize], dtype=dtype)[()]
            if isinstance(value, list):
                return np.array(bytes(value), dtype=dtype)[()]
            raise MetadataError(f"fill_value {value!r} is not valid for {dtype}", key)
        if kind == "V":
            if isinstance(value, list):
                raw = bytes(value)
                if len(raw) != dtype.itemsize:
                    raise MetadataError(f"fill_value {value!r} must have {dtype.itemsize} bytes", key)
            elif isinstance(value, str):
                raw = _b64decode(value, dtype.itemsize, key)
            else:
                raise MetadataError(f"fill_value {value!r} is not valid for {dtype}", key)
            return np.frombuffer(raw, dtype=dtype)[0]
    except MetadataError:
        raise
    except (TypeError, ValueError, OverflowError) as exc:
        raise MetadataError(f"fill_value {value!r} is not valid for {dtype}: {exc}", key) from None
    raise UnsupportedDtypeError(f"dtype {dtype} is not supported", key)


def v3_fill_value_json(value: Any, dtype: np.dtype) -> Any:
    """Encode a fill value for ``zarr.json``; NaNs other than the canonical one as hex bits."""
    kind = dtype.kind
    ml = ml_dtype_name(dtype)
    if ml is not None:
        v = np.array(value).astype(dtype)
        if ml in ("int2", "int4", "uint2", "uint4"):
            return int(v.astype(np.int64))
        return _float_json(v, dtype, hex_nan=True, ints=False)
    if dtype.names is not None:
        v = np.array(value, dtype=dtype)
        return {n: v3_fill_value_json(v[n][()], dtype[n]) for n in dtype.names}
    if kind == "O":
        if isinstance(value, bytes):
            return _b64encode(value)
        return str(value)
    if kind == "b":
        return bool(value)
    if kind in "iu":
        return int(value)
    if kind == "f":
        return _float_json(value, dtype, hex_nan=True, ints=False)
    if kind == "c":
        ft = np.dtype(f"f{dtype.itemsize // 2}")
        v = np.array(value, dtype=dtype.newbyteorder("="))
        return [_float_json(v.real, ft, True, False), _float_json(v.imag, ft, True, False)]
    if kind in "mM":
        return int(np.array(value, dtype=dtype.newbyteorder("=")).view(np.int64))
    if kind == "U":
        return str(value)
    if kind == "S":
        return _b64encode(bytes(np.array(value, dtype=dtype)[()]))
    if kind == "V":
        return list(np.array(value, dtype=dtype).tobytes())  # r<N>: an array of byte values
    raise UnsupportedDtypeError(f"dtype {dtype} has no Zarr v3 data type")
