"""Value casts: the ``cast_value`` and ``scale_offset`` codecs of the zarr-extensions registry.

``cast_value`` converts each element to another numeric data type by value, in the order its
spec prescribes: an explicit ``scalar_map`` first, then exact values, then ``rounding`` (five
modes) and ``out_of_range`` (``clamp`` or ``wrap``; without it a value the target cannot hold
is an error).  ``scale_offset`` computes ``(x - offset) * scale`` (and back) in the arithmetic
of the array's own data type, failing where a result is not representable there.

Both work on NumPy's numeric types and on the ML types of the ``ml_dtypes`` package (bfloat16,
the float8/float6/float4 variants, int2/int4/uint2/uint4).  The data type names and scalars of
their configurations are parsed by the metadata layer, which gives these codecs the functions
to do it with (``parse_dtype``, ``parse_scalar``, ``dtype_json``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import MetadataError
from .base import ArrayArrayCodec, ChunkSpec

try:
    import ml_dtypes
except ImportError:  # pragma: no cover - ml_dtypes is an optional extra
    ml_dtypes = None  # type: ignore[assignment]  # the module, or None without the extra

__all__ = ["CastValueCodec", "ScaleOffsetCodec", "ROUNDING", "numeric_kind", "parse_scalar_map", "value_range"]

ROUNDING = ("nearest-even", "towards-zero", "towards-positive", "towards-negative", "nearest-away")
OUT_OF_RANGE = ("clamp", "wrap")

_ML_INTS = ("int2", "int4", "uint2", "uint4")


def numeric_kind(dtype: np.dtype) -> str | None:
    """``'i'`` for an integer type, ``'f'`` for a floating-point one (NumPy's or ml_dtypes'),
    None for anything else."""
    if dtype.kind in "iu":
        return "i"
    if dtype.kind == "f":
        return "f"
    if ml_dtypes is not None and dtype.kind == "V" and dtype.names is None:
        name = dtype.name
        if name in _ML_INTS:
            return "i"
        if name.startswith(("float", "bfloat")):
            return "f"
    return None


def value_range(dtype: np.dtype) -> tuple[Any, Any]:
    """``(min, max)`` as Python numbers: the integers of an integer type, the finite values of
    a floating-point type."""
    if numeric_kind(dtype) == "i":
        info = np.iinfo(dtype) if dtype.kind in "iu" else ml_dtypes.iinfo(dtype)  # type: ignore[no-untyped-call]  # ml_dtypes leaves iinfo unannotated
        return int(info.min), int(info.max)
    finfo = np.finfo(dtype) if dtype.kind == "f" and dtype.itemsize >= 2 else ml_dtypes.finfo(dtype)  # type: ignore[no-untyped-call]  # ml_dtypes leaves finfo unannotated
    return float(finfo.min), float(finfo.max)


def _represents(dtype: np.dtype, value: float) -> bool:
    with np.errstate(all="ignore"):
        v = np.array(value).astype(dtype).astype(np.float64)
    return bool(np.isnan(v)) if np.isnan(value) else bool(v == value)


def _exact(a: np.ndarray) -> np.ndarray:
    """``a`` where comparisons and sums with the values of another numeric type are exact:
    float64, or Python ints for 64-bit integers."""
    if a.dtype.kind in "iu" and a.dtype.itemsize == 8:
        return a.astype(object)
    return a.astype(np.float64)


def _as_numbers(y: np.ndarray, like: np.ndarray) -> np.ndarray:
    """The values of a float array ``y`` in the form of ``_exact(x)`` (``like``)."""
    f = y.astype(np.float64)
    if like.dtype != object:
        return f
    return np.array([int(v) if v.is_integer() else v for v in f.reshape(-1).tolist()], dtype=object).reshape(f.shape)


def _round_float(x: np.ndarray, rounding: str) -> np.ndarray:
    """Round float64 values to integers by ``rounding``."""
    if rounding == "nearest-even":
        return np.rint(x)
    if rounding == "towards-zero":
        return np.trunc(x)
    if rounding == "towards-positive":
        return np.ceil(x)
    if rounding == "towards-negative":
        return np.floor(x)
    a = np.abs(x)
    r = np.floor(a)
    r += (a - r) >= 0.5  # exact: a - floor(a) is computed without rounding
    rounded: np.ndarray = np.copysign(r, x)
    return rounded


def _py(value: Any) -> Any:
    """A NumPy scalar as the Python number it holds (for messages)."""
    return value.item() if isinstance(value, np.generic) else value


def _fail(what: str, x: np.ndarray, bad: np.ndarray, target: np.dtype, cast: bool = True) -> ValueError:
    first = x[bad].reshape(-1)[0]
    first = _py(first)
    hint = "; give out_of_range ('clamp' or 'wrap') or a scalar_map" if cast and "range" in what else ""
    return ValueError(f"{int(bad.sum())} value(s) {what} {target} (e.g. {first!r}){hint}")


class _Caster:
    """One direction of a ``cast_value`` codec: ``source`` values to ``target`` values."""

    def __init__(self, source: np.dtype, target: np.dtype, rounding: str, out_of_range: str | None,
                 mapping: list[tuple[Any, Any]]):
        self.source, self.target = source, target
        self.rounding, self.out_of_range = rounding, out_of_range
        self.mapping = mapping
        self.lo, self.hi = value_range(target)
        self.target_kind = numeric_kind(target)
        if self.target_kind == "f":
            self.has_inf = _represents(target, np.inf)
            self.has_nan = _represents(target, np.nan)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        if not self.mapping:
            return self._cast(x)
        out = np.empty(x.shape, dtype=self.target)
        todo = np.ones(x.shape, dtype=bool)
        for key, value in self.mapping:
            hit = todo & (np.isnan(x) if isinstance(key, float) and np.isnan(key) else x == key)
            out[hit] = value
            todo &= ~hit
        if todo.any():
            out[todo] = self._cast(x[todo])
        return out

    def _cast(self, x: np.ndarray) -> np.ndarray:
        if self.target_kind == "i":
            if numeric_kind(x.dtype) == "i":
                return self._int_to_int(x)
            return self._float_to_int(x)
        return self._to_float(x)

    def _int_to_int(self, x: np.ndarray) -> np.ndarray:
        slo, shi = value_range(x.dtype)
        lo, hi = max(self.lo, slo), min(self.hi, shi)
        xi = x if x.dtype.kind in "iu" else x.astype(np.int8)
        if self.out_of_range == "wrap":
            return xi.astype(self.target)
        bad = (xi < lo) | (xi > hi)
        if bad.any():
            if self.out_of_range is None:
                raise _fail("out of the range of", x, bad, self.target)
            xi = np.clip(xi, lo, hi)
        return xi.astype(self.target)

    def _float_to_int(self, x: np.ndarray) -> np.ndarray:
        xf = x.astype(np.float64)
        bad = ~np.isfinite(xf)
        if bad.any():
            raise _fail("(NaN or infinite; map them with scalar_map) have no value in", x, bad, self.target)
        r = _round_float(xf, self.rounding)
        top = float(self.hi + 1)  # a power of two: exact
        low = float(self.lo)
        outside = (r < low) | (r >= top)
        if not outside.any():
            return r.astype(self.target)
        if self.out_of_range is None:
            raise _fail("out of the range of", x, outside, self.target)
        if self.out_of_range == "clamp":
            out = np.where(outside, 0.0, r).astype(self.target)
            out[r < low] = self.lo
            out[r >= top] = self.hi
            return out
        # wrap: modulo 2**64 is exact for integral floats, then two's complement in int64
        w = np.fmod(r, 2.0**64)
        w = np.where(w >= 2.0**63, w - 2.0**64, np.where(w < -(2.0**63), w + 2.0**64, w))
        wrapped: np.ndarray = w.astype(np.int64).astype(self.target)
        return wrapped

    def _to_float(self, x: np.ndarray) -> np.ndarray:
        target = self.target
        if numeric_kind(x.dtype) == "f":
            xf = x.astype(np.float64)
            special = ~np.isfinite(xf)
            if special.any():
                nan = np.isnan(xf)
                if (nan.any() and not self.has_nan) or ((special & ~nan).any() and not self.has_inf):
                    bad = (nan & (not self.has_nan)) | (special & ~nan & (not self.has_inf))
                    raise _fail("(NaN or infinite; map them with scalar_map) have no value in", x, bad, target)
        with np.errstate(all="ignore"):
            y = x.astype(target)
        if self.rounding != "nearest-even":
            y = self._directed(x, y)
        finite_in = np.isfinite(x.astype(np.float64))
        with np.errstate(all="ignore"):
            yf = y.astype(np.float64)
        over = finite_in & ~np.isfinite(yf)
        if self.lo >= 0:  # an unsigned float type: negative values are out of range
            over |= finite_in & (x.astype(np.float64) < 0)
        if over.any():
            if self.out_of_range is None:
                raise _fail("out of the range of", x, over, target)
            big = x.astype(np.float64)[over]
            if self.has_inf:
                y[over] = np.where(big > 0, np.inf, -np.inf).astype(target)
            else:
                y[over] = np.where(big > 0, self.hi, self.lo).astype(target)
        return y

    def _directed(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Correct a round-to-nearest-even cast to the other rounding modes."""
        xe = _exact(x)
        with np.errstate(all="ignore"):
            ye = _as_numbers(y, xe)
            inf = np.array(np.inf).astype(self.target)
            if self.rounding == "towards-zero":
                move = np.abs(ye) > np.abs(xe)
                toward = np.zeros((), dtype=self.target)
            elif self.rounding == "towards-positive":
                move = ye < xe
                toward = inf if self.has_inf else np.array(self.hi).astype(self.target)
            elif self.rounding == "towards-negative":
                move = ye > xe
                toward = -inf if self.has_inf else np.array(self.lo).astype(self.target)
            else:  # nearest-away: only ties (x halfway between y and its neighbour) change
                neighbour = np.nextafter(y, np.where(ye < xe, inf, -inf).astype(self.target))
                ne = _as_numbers(neighbour, xe)
                move = (ye != xe) & (2 * xe == ye + ne) & (np.abs(ne) > np.abs(ye))
                y = y.copy()
                y[move] = neighbour[move]
                return y
            move = np.asarray(move, dtype=bool) & np.isfinite(y.astype(np.float64))
            if move.any():
                y = y.copy()
                y[move] = np.nextafter(y[move], np.broadcast_to(toward, y[move].shape))
        return y


def _is_pair(p: Any) -> bool:
    return isinstance(p, (list, tuple)) and len(p) == 2


def _scalar_map(raw: Any, field: str) -> list[tuple[Any, Any]]:
    if raw is None:
        return []
    if isinstance(raw, dict):  # {input: output}, as :func:`parse_scalar_map` gives
        return list(raw.items())
    if not isinstance(raw, (list, tuple)) or not all(_is_pair(p) for p in raw):
        raise MetadataError(f"cast_value: scalar_map.{field} must be a list of [input, output] pairs, got {raw!r}")
    return [(p[0], p[1]) for p in raw]


def parse_scalar_map(scalar_map: Any) -> dict[str, dict[Any, Any]]:
    """A ``cast_value`` ``scalar_map`` as ``{"encode": {input: output}, "decode": {...}}``
    (its pairs as dicts; the first pair of an input wins).

    Raises
    ------
    MetadataError
        When it is not an object of ``encode`` and ``decode`` lists of pairs.
    """
    if not isinstance(scalar_map, dict) or set(scalar_map) - {"encode", "decode"}:
        raise MetadataError(f"cast_value: scalar_map must be an object with 'encode' and/or 'decode', got {scalar_map!r}")
    out: dict[str, dict[Any, Any]] = {}
    for field, raw in scalar_map.items():
        pairs: dict[Any, Any] = {}
        for k, v in _scalar_map(raw, field):
            pairs.setdefault(k, v)
        out[field] = pairs
    return out


class CastValueCodec(ArrayArrayCodec):
    """``cast_value``: the elements converted by value to ``data_type``."""

    name = "cast_value"
    elementwise = True

    def __init__(self, data_type: Any, rounding: str = "nearest-even", out_of_range: str | None = None,
                 scalar_map: Any = None, *, parse_dtype: Callable[..., np.dtype], parse_scalar: Callable[..., Any],
                 dtype_json: Callable[[np.dtype], Any]):
        if rounding not in ROUNDING:
            raise MetadataError(f"cast_value: rounding must be one of {list(ROUNDING)}, got {rounding!r}")
        if out_of_range not in (None, *OUT_OF_RANGE):
            raise MetadataError(f"cast_value: out_of_range must be 'clamp' or 'wrap', got {out_of_range!r}")
        if scalar_map is not None and (not isinstance(scalar_map, dict) or set(scalar_map) - {"encode", "decode"}):
            raise MetadataError(f"cast_value: scalar_map must be an object with 'encode' and/or 'decode', got {scalar_map!r}")
        self.target: np.dtype[Any] = parse_dtype(data_type)
        if numeric_kind(self.target) is None:
            raise MetadataError(
                f"cast_value: Invalid target data type {data_type!r}: not an integer or floating-point type"
            )
        if out_of_range == "wrap" and numeric_kind(self.target) != "i":
            raise MetadataError(
                f"cast_value: out_of_range 'wrap' needs an integer data_type (it is only valid for integer "
                f"targets), got {data_type!r}"
            )
        self.data_type: Any = dtype_json(self.target)
        self.rounding = rounding
        self.out_of_range = out_of_range
        self.scalar_map: Any = scalar_map
        self._encode_map = _scalar_map((scalar_map or {}).get("encode"), "encode")
        self._decode_map = _scalar_map((scalar_map or {}).get("decode"), "decode")
        self._parse_scalar = parse_scalar
        self._casters: dict[np.dtype, tuple[_Caster, _Caster]] = {}

    def configuration(self) -> dict[str, Any]:
        config: dict[str, Any] = {"data_type": self.data_type}
        if self.rounding != "nearest-even":
            config["rounding"] = self.rounding
        if self.out_of_range is not None:
            config["out_of_range"] = self.out_of_range
        if self.scalar_map is not None:
            config["scalar_map"] = self.scalar_map
        return config

    def _pair(self, source: np.dtype) -> tuple[_Caster, _Caster]:
        pair = self._casters.get(source)
        if pair is None:
            ps = self._parse_scalar
            enc = [(ps(k, source, "cast_value scalar_map"), ps(v, self.target, "cast_value scalar_map"))
                   for k, v in self._encode_map]
            dec = [(ps(k, self.target, "cast_value scalar_map"), ps(v, source, "cast_value scalar_map"))
                   for k, v in self._decode_map]
            pair = self._casters[source] = (
                _Caster(source, self.target, self.rounding, self.out_of_range, _first_keys(enc)),
                _Caster(self.target, source, self.rounding, self.out_of_range, _first_keys(dec)),
            )
        return pair

    def validate(self, spec: ChunkSpec) -> None:
        if numeric_kind(spec.dtype) is None:
            raise MetadataError(
                f"cast_value only supports integer and floating-point data types, the array's is {spec.dtype}"
            )

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        enc, dec = self._pair(spec.dtype)
        fill = spec.fill_value
        if fill is None:
            return ChunkSpec(spec.shape, self.target, None)
        try:
            stored = enc(np.array([fill], dtype=spec.dtype))
            back = dec(stored)[0]
        except ValueError as exc:
            raise MetadataError(f"cast_value: the fill value {_py(fill)!r} cannot be cast to {self.target}: {exc}") from None
        same = (np.isnan(float(back)) and np.isnan(float(fill))) if numeric_kind(spec.dtype) == "f" else False
        if not (same or back == fill):
            raise MetadataError(
                f"cast_value: the fill value {_py(fill)!r} does not survive the cast to {self.target} "
                f"and back (gives {_py(back)!r})"
            )
        return ChunkSpec(spec.shape, self.target, stored[0])

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        return self._pair(spec.dtype)[0](chunk)

    def decode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        return self._pair(spec.dtype)[1](chunk.view(self.target) if chunk.dtype != self.target else chunk)


def _first_keys(pairs: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """The pairs with the first occurrence of each input (NaN included) kept."""
    out: list[tuple[Any, Any]] = []
    for k, v in pairs:
        is_nan = isinstance(k, (float, np.floating)) and np.isnan(k)
        if not any((is_nan and isinstance(o, (float, np.floating)) and np.isnan(o)) or (not is_nan and o == k) for o, _ in out):
            out.append((float("nan") if is_nan else k, v))
    return out


class ScaleOffsetCodec(ArrayArrayCodec):
    """``scale_offset``: ``(x - offset) * scale`` in the array's own data type."""

    name = "scale_offset"
    elementwise = True

    def __init__(self, offset: Any = 0, scale: Any = 1, *, parse_scalar: Callable[..., Any]):
        for name, value in (("offset", offset), ("scale", scale)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float, str))):
                raise TypeError(f"scale_offset: {name} must be a number or string, got {type(value).__name__}")
        self.offset = 0 if offset is None else offset
        self.scale = 1 if scale is None else scale
        self._parse_scalar = parse_scalar

    def configuration(self) -> dict[str, Any] | None:
        config = {k: v for k, v, default in (("offset", self.offset, 0), ("scale", self.scale, 1))
                  if not (type(v) is not str and v == default)}
        return config or None

    def _params(self, dtype: np.dtype) -> tuple[Any, Any]:
        ps = self._parse_scalar
        offset = ps(self.offset, dtype, "scale_offset offset")
        scale = ps(self.scale, dtype, "scale_offset scale")
        if numeric_kind(dtype) == "i":
            offset, scale = int(offset), int(scale)
        if scale == 0:
            raise MetadataError("scale_offset: scale must not be 0 (scale must be non-zero to be undone)")
        return offset, scale

    def validate(self, spec: ChunkSpec) -> None:
        if numeric_kind(spec.dtype) is None:
            raise MetadataError(
                f"scale_offset only supports integer and floating-point data types, the array's is {spec.dtype}"
            )
        self._params(spec.dtype)

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        if spec.fill_value is None:
            return spec
        try:
            fill = self.encode(np.array([spec.fill_value], dtype=spec.dtype), spec)[0]
        except ValueError as exc:
            raise MetadataError(f"scale_offset: the fill value {_py(spec.fill_value)!r}: {exc}") from None
        return ChunkSpec(spec.shape, spec.dtype, fill)

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        offset, scale = self._params(spec.dtype)
        if numeric_kind(spec.dtype) == "i":
            return _int_arith(chunk, lambda v: (v - offset) * scale, spec.dtype)
        dt = spec.dtype.type
        with np.errstate(all="ignore"):
            encoded: np.ndarray = ((chunk - dt(offset)) * dt(scale)).astype(spec.dtype, copy=False)
            return encoded

    def decode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        offset, scale = self._params(spec.dtype)
        if numeric_kind(spec.dtype) == "i":
            wide = chunk.astype(object if spec.dtype.itemsize == 8 else np.int64)
            if np.any(wide % scale):
                raise ValueError(f"a value is not a multiple of scale {scale} (its division leaves a non-zero "
                                 f"remainder): not representable in {spec.dtype}")
            return _int_arith(chunk, lambda v: v // scale + offset, spec.dtype)
        dt = spec.dtype.type
        with np.errstate(all="ignore"):
            decoded: np.ndarray = (chunk / dt(scale) + dt(offset)).astype(spec.dtype, copy=False)
            return decoded


def _int_arith(chunk: np.ndarray, fn: Callable[[Any], Any], dtype: np.dtype) -> np.ndarray:
    """``fn`` of integer values computed without overflow (int64, or Python ints for 64-bit
    types), checked against ``dtype``'s range."""
    wide = chunk.astype(object if dtype.itemsize == 8 else np.int64)
    out = fn(wide)
    lo, hi = value_range(dtype)
    bad = (out < lo) | (out > hi)
    if np.any(bad):
        bad = np.asarray(bad, dtype=bool)
        first = _py(np.asarray(out)[bad].reshape(-1)[0])
        raise ValueError(f"{int(bad.sum())} value(s) of the result are out of the range of {dtype}: "
                         f"{first!r} is outside the range of dtype {dtype}")
    return np.asarray(out).astype(dtype)
