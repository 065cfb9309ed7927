"""Scalars in the JSON of metadata documents: numbers (with ``"NaN"``, ``"Infinity"`` and hex bit
patterns), base64 bytes, datetimes, and the types of the ``ml_dtypes`` package.

The pieces the data-type kinds of :mod:`zarrkit.metadata.dtypes` are built from.
"""

from __future__ import annotations

import base64
import binascii
import math
from typing import Any

import numpy as np

from ..errors import MetadataError, UnsupportedDtypeError
from ..storage.extras import install_hint

try:
    import ml_dtypes
except ImportError:  # pragma: no cover - ml_dtypes is an optional extra
    ml_dtypes = None  # type: ignore[assignment]  # the module, or None without the extra


#: the data types of the zarr-extensions registry that the ``ml_dtypes`` package provides
ML_DTYPES = (
    "bfloat16", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fnuz", "float8_e5m2",
    "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn",
    "int2", "int4", "uint2", "uint4",
)


def ml_dtype(name: str, key: str | None) -> np.dtype:
    """The ``ml_dtypes`` type of a registry name."""
    if ml_dtypes is None:
        raise UnsupportedDtypeError(
            f"data_type {name!r} needs the ml_dtypes package ({install_hint('ml')})", key
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


def ml_scalar(value: Any, dtype: np.dtype, key: str | None) -> Any:
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
    return parse_float(value, dtype, key, allow_hex=True)


# =============================================================================================
# float helpers shared by both dialects

SPECIAL_FLOATS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def parse_float(value: Any, dtype: np.dtype, key: str | None, allow_hex: bool) -> np.generic:
    if isinstance(value, bool):
        raise MetadataError(f"fill_value {value!r} is not a number for dtype {dtype}", key)
    if isinstance(value, str):
        if value in SPECIAL_FLOATS:
            return dtype.type(SPECIAL_FLOATS[value])
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


def float_json(value: Any, dtype: np.dtype, hex_nan: bool, ints: bool) -> Any:
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


def parse_int(value: Any, dtype: np.dtype, key: str | None) -> np.generic:
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


def b64decode(value: str, size: int | None, key: str | None) -> bytes:
    try:
        s = value.strip()
        s += "=" * (-len(s) % 4)  # some writers drop the padding
        raw = base64.b64decode(s, validate=True)
    except (binascii.Error, ValueError):
        raise MetadataError(f"fill_value {value!r} is not valid base64", key) from None
    if size is not None and len(raw) < size:
        raw = raw + b"\x00" * (size - len(raw))  # too-short encodings: zero-pad
    return raw if size is None else raw[:size]


def b64encode(raw: bytes) -> str:
    return base64.standard_b64encode(raw).decode("ascii")


def parse_datetime(value: Any, dtype: np.dtype, key: str | None) -> np.generic:
    if value == "NaT":
        return np.array("NaT", dtype=dtype)[()]  # type: ignore[return-value]  # a 0-d array's [()] is a scalar
    if isinstance(value, bool) or not isinstance(value, int):
        raise MetadataError(f"fill_value {value!r} is not an integer or 'NaT' for {dtype}", key)
    return np.array(value, dtype=np.int64).view(dtype.newbyteorder("="))[()]  # type: ignore[return-value]  # a 0-d array's [()] is a scalar
