"""NumPy type strings and structured-field lists, as the ``dtype`` field of ``.zarray`` holds them."""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ..errors import UnsupportedDtypeError

__all__ = ["parse_v2_dtype", "v2_dtype_json"]


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


def v2_dtype_json(dtype: np.dtype) -> Any:
    """The ``dtype`` field of ``.zarray`` for ``dtype``."""
    if dtype.names is not None:
        return _descr_json(dtype.descr)
    if dtype.subdtype is not None:
        raise UnsupportedDtypeError(f"subarray dtype {dtype} must be a field of a structured dtype")
    if dtype.kind == "T":  # NumPy 2's StringDType: v2 stores variable-length strings as objects
        return "|O"
    return dtype.str


def _descr_json(descr: list) -> list:
    out = []
    for field in descr:
        name, sub = field[0], field[1]
        sub = _descr_json(sub) if isinstance(sub, list) else sub
        out.append([name, sub, list(field[2])] if len(field) == 3 else [name, sub])
    return out
