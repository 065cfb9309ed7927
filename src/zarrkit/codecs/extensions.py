"""More codecs of the zarr-extensions registry: ``bitround`` (fewer significant bits, for better
compression), ``reshape`` (another shape for the same elements) and ``packbits`` (elements of
fewer than 8 bits, or some of their bits, packed together).

Examples
--------
>>> import numpy as np
>>> from zarrkit.codecs.base import ChunkSpec
>>> from zarrkit.codecs.extensions import BitroundCodec
>>> BitroundCodec(keepbits=2).encode(np.array([1.3, 100.0]), ChunkSpec((2,), np.dtype('f8')))
array([  1.25, 96.  ])
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from ..errors import MetadataError
from .base import ArrayArrayCodec, ArrayBytesCodec, ChunkSpec
from .cast import numeric_kind

__all__ = ["BitroundCodec", "ReshapeCodec", "PackBitsCodec"]

_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
#: explicit mantissa bits of the floating-point types bitround rounds
_MANTISSA = {"float16": 10, "float32": 23, "float64": 52, "bfloat16": 7}


class BitroundCodec(ArrayArrayCodec):
    """``bitround``: floating-point mantissas rounded to ``keepbits`` bits (to nearest, ties to
    even), integers to ``keepbits`` bits below their most significant set bit.  Decoding
    returns the rounded values (the rounding is lossy)."""

    name = "bitround"

    def __init__(self, keepbits: int):
        if isinstance(keepbits, bool) or not isinstance(keepbits, int) or keepbits < 1:
            raise MetadataError(f"bitround: keepbits must be an integer of at least 1, got {keepbits!r}")
        self.keepbits = keepbits

    def configuration(self) -> dict[str, Any]:
        return {"keepbits": self.keepbits}

    def _component(self, dtype: np.dtype) -> np.dtype:
        return np.dtype(f"f{dtype.itemsize // 2}") if dtype.kind == "c" else dtype

    def validate(self, spec: ChunkSpec) -> None:
        comp = self._component(spec.dtype)
        kind = "i" if comp.kind in "iumM" else numeric_kind(comp)
        if kind is None or (kind == "f" and comp.name not in _MANTISSA) or comp.itemsize not in _UNSIGNED:
            raise MetadataError(f"bitround: data type {spec.dtype} is not supported")

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        comp = self._component(spec.dtype)
        arr = np.ascontiguousarray(chunk).copy()
        bits = arr.view(_UNSIGNED[comp.itemsize])
        if comp.kind in "iumM" or numeric_kind(comp) == "i":
            widths = _bit_lengths(bits)
        else:
            widths = np.full(bits.shape, _MANTISSA[comp.name], dtype=np.int64)
        bits[...] = _round_bits(bits, self.keepbits, widths)
        return arr

    def decode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        return chunk


def _bit_lengths(u: np.ndarray) -> np.ndarray:
    """The number of significant bits of each unsigned value."""
    out = np.zeros(u.shape, dtype=np.int64)
    rest = u.copy()
    for _ in range(8 * u.dtype.itemsize):
        nonzero = rest != 0
        if not nonzero.any():
            break
        out += nonzero
        rest >>= u.dtype.type(1)
    return out


def _round_bits(u: np.ndarray, keepbits: int, widths: np.ndarray) -> np.ndarray:
    """Round unsigned values to ``keepbits`` bits out of ``widths`` (to nearest, ties to
    even; a carry past the top saturates)."""
    one = u.dtype.type(1)
    drop = np.maximum(widths - keepbits, 0).astype(u.dtype)
    active = drop > 0
    shift = np.maximum(drop, one) - one  # drop - 1 where bits are dropped
    half_less_one = np.where(active, (one << shift) - one, 0).astype(u.dtype)
    increment = np.where(active, (u >> drop) & one, 0).astype(u.dtype) + half_less_one
    total = u + increment
    total = np.where(total < u, np.iinfo(u.dtype).max, total).astype(u.dtype)  # a carry past the top saturates
    kept = ~((one << drop) - one)
    return np.where(active, total & kept, u).astype(u.dtype)


class ReshapeCodec(ArrayArrayCodec):
    """``reshape``: the chunk's elements, in C order, given another shape (sizes, lists of
    input dimensions whose sizes multiply, or one ``-1``)."""

    name = "reshape"
    moves_only = True

    def __init__(self, shape: list[Any]):
        if not isinstance(shape, list) or not shape:
            raise MetadataError(f"reshape: shape must be a non-empty list, got {shape!r}")
        flat: list[int] = []
        minus = 0
        for item in shape:
            if isinstance(item, list):
                if not item or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in item):
                    raise MetadataError(f"reshape: input dimensions must be lists of indices, got {item!r}")
                flat += item
            elif item == -1:
                minus += 1
            elif isinstance(item, bool) or not isinstance(item, int) or item < 1:
                raise MetadataError(f"reshape: sizes must be positive integers, lists or -1, got {item!r}")
        if minus > 1:
            raise MetadataError("reshape: -1 may appear at most once in shape")
        if any(b <= a for a, b in itertools.pairwise(flat)):
            raise MetadataError(f"reshape: the input dimensions {flat} must increase strictly")
        self.shape = shape

    def configuration(self) -> dict[str, Any]:
        return {"shape": self.shape}

    def _out_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        sizes: list[int | None] = []
        for item in self.shape:
            if isinstance(item, list):
                if item[-1] >= len(shape):
                    raise MetadataError(f"reshape: input dimension {item[-1]} of a {len(shape)}-d chunk")
                sizes.append(math.prod(shape[d] for d in item))
            else:
                sizes.append(None if item == -1 else item)
        total = math.prod(shape)
        known = math.prod(s for s in sizes if s is not None)
        if None in sizes:
            if known == 0 or total % known:
                raise MetadataError(f"reshape: {total} elements cannot take the shape {self.shape}")
            sizes[sizes.index(None)] = total // known
        out = tuple(int(s) for s in sizes)  # type: ignore[arg-type]
        if math.prod(out) != total:
            raise MetadataError(f"reshape: shape {list(out)} does not hold the chunk's {total} elements ({list(shape)})")
        for i, item in enumerate(self.shape):
            if isinstance(item, list) and (
                math.prod(out[:i]) != math.prod(shape[: item[0]]) or math.prod(out[i + 1 :]) != math.prod(shape[item[-1] + 1 :])
            ):
                raise MetadataError(f"reshape: output dimension {i} does not line up with input dimensions {item}")
        return out

    def validate(self, spec: ChunkSpec) -> None:
        self._out_shape(spec.shape)

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        return ChunkSpec(self._out_shape(spec.shape), spec.dtype, spec.fill_value)

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        return np.ascontiguousarray(chunk).reshape(self._out_shape(spec.shape))

    def decode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        return np.ascontiguousarray(chunk).reshape(spec.shape)


#: bits per element of the types narrower than their storage
_NARROW = {"bool": 1, "int2": 2, "uint2": 2, "int4": 4, "uint4": 4, "float4_e2m1fn": 4,
           "float6_e2m3fn": 6, "float6_e3m2fn": 6}


class PackBitsCodec(ArrayBytesCodec):
    """``packbits``: each element's bits ``first_bit..last_bit`` (of its little-endian
    representation; real and imaginary parts apart) one after the other, least significant
    bit first, in bytes filled from their least significant bit; ``padding_encoding`` says
    whether a byte before or after them counts the padding bits."""

    name = "packbits"

    def __init__(self, padding_encoding: str = "none", first_bit: int | None = None, last_bit: int | None = None):
        if padding_encoding not in ("none", "first_byte", "last_byte"):
            raise MetadataError(f"packbits: padding_encoding must be 'none', 'first_byte' or 'last_byte', got {padding_encoding!r}")
        for name, v in (("first_bit", first_bit), ("last_bit", last_bit)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
                raise MetadataError(f"packbits: {name} must be a non-negative integer, got {v!r}")
        if first_bit is not None and last_bit is not None and last_bit < first_bit:
            raise MetadataError(f"packbits: last_bit {last_bit} is less than first_bit {first_bit}")
        self.padding_encoding = padding_encoding
        self.first_bit = first_bit
        self.last_bit = last_bit

    def configuration(self) -> dict[str, Any] | None:
        config: dict[str, Any] = {}
        if self.padding_encoding != "none":
            config["padding_encoding"] = self.padding_encoding
        if self.first_bit is not None:
            config["first_bit"] = self.first_bit
        if self.last_bit is not None:
            config["last_bit"] = self.last_bit
        return config or None

    def _layout(self, dtype: np.dtype) -> tuple[np.dtype, int, int, int]:
        """``(component dtype, components, first bit, bits kept)`` of ``dtype``."""
        comps = 2 if dtype.kind == "c" else 1
        comp = np.dtype(f"f{dtype.itemsize // 2}") if dtype.kind == "c" else dtype
        n = _NARROW.get(comp.name, 8 * comp.itemsize)
        first = self.first_bit or 0
        last = n - 1 if self.last_bit is None else self.last_bit
        if last >= n:
            raise MetadataError(f"packbits: last_bit {last} is beyond the {n} bits of {dtype}")
        return comp, comps, first, last - first + 1

    def validate(self, spec: ChunkSpec) -> None:
        if spec.dtype.kind in "OTUSV" and spec.dtype.name not in _NARROW and numeric_kind(spec.dtype) is None:
            raise MetadataError(f"packbits: data type {spec.dtype} is not supported")
        self._layout(spec.dtype)

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> bytes:
        comp, _comps, first, b = self._layout(spec.dtype)
        raw = np.ascontiguousarray(chunk, dtype=spec.dtype).reshape(-1)
        values = raw.view(_UNSIGNED[comp.itemsize]).astype("<u8", copy=False).reshape(-1)  # components in order
        field = (values >> np.uint64(first)) & np.uint64((1 << b) - 1)
        bits = ((field[:, None] >> np.arange(b, dtype=np.uint64)) & np.uint64(1)).astype(np.uint8).reshape(-1)
        pad = (-bits.size) % 8
        packed = np.packbits(np.concatenate([bits, np.zeros(pad, np.uint8)]), bitorder="little").tobytes()
        if self.padding_encoding == "first_byte":
            return bytes([pad]) + packed
        if self.padding_encoding == "last_byte":
            return packed + bytes([pad])
        return packed

    def decode(self, data: Any, spec: ChunkSpec) -> np.ndarray:
        comp, comps, first, b = self._layout(spec.dtype)
        raw = np.frombuffer(memoryview(data).cast("B"), dtype=np.uint8)
        if self.padding_encoding == "first_byte":
            raw = raw[1:]
        elif self.padding_encoding == "last_byte":
            raw = raw[:-1]
        count = math.prod(spec.shape) * comps
        if raw.size != -(-count * b // 8):
            raise ValueError(f"packbits: {raw.size} bytes cannot hold {count} values of {b} bits")
        bits = np.unpackbits(raw, bitorder="little")[: count * b].reshape(count, b).astype(np.uint64)
        field = (bits << np.arange(b, dtype=np.uint64)).sum(axis=1, dtype=np.uint64) << np.uint64(first)
        total = _NARROW.get(comp.name, 8 * comp.itemsize)
        signed = comp.kind == "i" or comp.name in ("int2", "int4")
        if signed and first + b < total:  # sign-extend from the top kept bit
            top = np.uint64(1 << (first + b - 1))
            field = np.where(field & top, field | np.uint64((~((1 << (first + b)) - 1)) & (2**64 - 1)), field)
        if comp.name in _NARROW and signed:
            field = np.where(field & np.uint64(1 << (total - 1)), field | np.uint64((~((1 << total) - 1)) & (2**64 - 1)), field)
        width = _UNSIGNED[comp.itemsize]
        out = field.astype(width).view(comp) if comp.name not in ("bool",) else field.astype(bool)
        return out.view(spec.dtype).reshape(spec.shape) if comps == 2 else out.reshape(spec.shape)

