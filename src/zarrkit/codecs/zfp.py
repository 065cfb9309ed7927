"""The ``zfp`` codec of the zarr-extensions registry: an array→bytes codec that compresses a chunk
with the zfp library, with no zfp header (the codec's configuration says everything a header
would).  The zfp library is reached through its own Python binding, the ``zfpy`` package (the
``zfpy`` extra); ``numcodecs.zfpy``, the same library behind numcodecs' wrapper, writes a header
and is a different codec.

Modes: ``reversible`` (lossless), ``fixed_rate`` (``rate`` bits per value), ``fixed_precision``
(``precision`` bit planes) and ``fixed_accuracy`` (absolute error at most ``tolerance``, floats
only).  ``expert`` mode is parsed but refused when the array is used: ``zfpy`` cannot set zfp's
four expert parameters.

Data types: ``int32``, ``int64``, ``float32``, ``float64`` natively; ``int8``/``int16``/
``uint8``/``uint16`` promoted to ``int32`` and back as the codec's specification defines
(``int N``: ``value << (31 - N)``; ``uint N``: ``(value - 2^(N-1)) << (31 - N)``; demoted with an
arithmetic shift and a clamp); ``uint32``/``uint64`` clamped into ``int32``/``int64`` (values past
the signed maximum are stored as that maximum, negatives decode as 0), as zarrs does;
``float16`` and ``bfloat16`` cast to ``float32``.  Chunks of 1 to 4 dimensions, the last one
varying fastest (zfp's ``nx``); a 0-dimensional chunk is one value in 1 dimension.

Fixed-rate streams are sized with the chunk's own number of dimensions, as zfp defines the rate
(bits per value).  zarrs sizes them as for 3 dimensions whatever the chunk's, so for chunks of
1, 2 or 4 dimensions in fixed-rate mode the two write different streams; every other mode, and
fixed rate on 3-dimensional chunks, are the same zfp calls.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import ChunkDecodeError, MetadataError, UnknownCodecError
from .base import ArrayBytesCodec, ChunkSpec

__all__ = ["ZfpCodec"]

#: each mode's parameters (all required), as the registry's specification names them
_MODES: dict[str, tuple[str, ...]] = {
    "reversible": (),
    "expert": ("minbits", "maxbits", "maxprec", "minexp"),
    "fixed_accuracy": ("tolerance",),
    "fixed_rate": ("rate",),
    "fixed_precision": ("precision",),
}
#: the largest value a parameter can usefully take (bits per value, bit planes of a 64-bit value)
_LARGEST = {"rate": 64, "precision": 64}
#: integers promoted to int32 by shifting them to its top bits
_PROMOTED = {"int8": 8, "int16": 16, "uint8": 8, "uint16": 16}
#: the most bits zfp spends on a block's exponent and mode bits, by the type it compresses
_BLOCK_OVERHEAD = {"int32": 5, "int64": 6, "float32": 10, "float64": 13}
#: the fewest bits per block fixed-rate mode can give floats (sign and exponent)
_MIN_FLOAT_BLOCK = {"float32": 9, "float64": 12}
#: what each data type is handed to zfp as
_NATIVE = {
    **dict.fromkeys(("int8", "int16", "uint8", "uint16", "int32", "uint32"), "int32"),
    **dict.fromkeys(("int64", "uint64"), "int64"),
    **dict.fromkeys(("float16", "bfloat16", "float32"), "float32"),
    "float64": "float64",
}


def _zfpy() -> Any:
    try:
        import zfpy
    except ImportError:
        raise UnknownCodecError("codec 'zfp' needs the zfpy package (pip install 'zarrkit[zfpy]')") from None
    return zfpy


class ZfpCodec(ArrayBytesCodec):
    """``zfp``: chunks compressed by the zfp library, without a header.

    Parameters
    ----------
    mode : str
        ``"reversible"``, ``"fixed_rate"``, ``"fixed_precision"``, ``"fixed_accuracy"`` or
        ``"expert"``.
    **parameters
        The mode's parameters: ``rate`` (bits per value), ``precision`` (bit planes),
        ``tolerance`` (largest absolute error), or ``minbits``/``maxbits``/``maxprec``/
        ``minexp`` for expert mode.

    Raises
    ------
    MetadataError
        An unknown mode, a missing, extra or invalid parameter.

    Examples
    --------
    >>> ZfpCodec("fixed_rate", rate=8.0).to_json()
    {'name': 'zfp', 'configuration': {'mode': 'fixed_rate', 'rate': 8.0}}
    """

    name = "zfp"

    def __init__(self, mode: str, **parameters: Any):
        if mode not in _MODES:
            raise MetadataError(f"zfp: mode must be one of {sorted(_MODES)}, got {mode!r}")
        wanted = set(_MODES[mode])
        if set(parameters) != wanted:
            missing, extra = sorted(wanted - set(parameters)), sorted(set(parameters) - wanted)
            raise MetadataError(f"zfp: mode {mode!r} takes {sorted(wanted) or 'no parameters'}"
                                + (f"; missing {missing}" if missing else "") + (f"; unexpected {extra}" if extra else ""))
        for name, value in parameters.items():
            integral = name != "rate" and name != "tolerance"
            ok = isinstance(value, int) if integral else isinstance(value, (int, float))
            top = _LARGEST.get(name)
            if (isinstance(value, bool) or not ok or not math.isfinite(value)
                    or (name != "minexp" and value < 0) or (top is not None and value > top)):
                kind = "an integer" if integral else "a number"
                bound = "" if name == "minexp" else f" from 0 to {top}" if top is not None else " of at least 0"
                raise MetadataError(f"zfp: {name} must be {kind}{bound}, got {value!r}")
        self.mode = mode
        self.parameters: dict[str, Any] = dict(parameters)

    def configuration(self) -> dict[str, Any]:
        return {"mode": self.mode, **self.parameters}

    def check_available(self) -> None:
        _zfpy()

    def validate(self, spec: ChunkSpec) -> None:
        name = spec.dtype.name
        if name not in _NATIVE:
            raise MetadataError(f"zfp: data type {spec.dtype} is not supported (zfp compresses "
                                "integers of 8 to 64 bits and floats of 16 to 64 bits)")
        if len(spec.shape) > 4:
            raise MetadataError(f"zfp: chunks of {len(spec.shape)} dimensions are not supported (at most 4)")
        if self.mode == "fixed_accuracy" and not _NATIVE[name].startswith("float"):
            raise MetadataError(f"zfp: fixed_accuracy mode compresses floating-point data only, not {spec.dtype}")
        if self.mode == "fixed_rate":
            native = _NATIVE[name]
            least = _MIN_FLOAT_BLOCK.get(native, 1)
            if self._rate_bits(len(spec.shape)) < least:
                raise MetadataError(f"zfp: rate {self.parameters['rate']} is too low for {spec.dtype} chunks of "
                                    f"{len(_field_shape(spec.shape))} dimensions (fewer than {least} bits per block)")
        if self.mode == "expert":
            raise MetadataError("zfp: expert mode cannot be used here: the zfpy package has no way "
                                "to set minbits/maxbits/maxprec/minexp")

    def _keywords(self) -> dict[str, Any]:
        key = {"fixed_rate": "rate", "fixed_precision": "precision", "fixed_accuracy": "tolerance"}.get(self.mode)
        return {} if key is None else {key: self.parameters[key]}

    def _rate_bits(self, ndim: int) -> int:
        """The bits per block of fixed-rate mode, as zfp computes them for ``ndim`` dimensions."""
        rate: float = self.parameters["rate"]
        return math.floor((1 << (2 * max(ndim, 1))) * rate + 0.5)

    def _stream_bytes(self, shape: tuple[int, ...], native: np.dtype) -> int:
        """The exact size of a fixed-rate stream, else the most bytes any stream of ``shape``
        can take (whole 64-bit words, as zfp writes them)."""
        field = _field_shape(shape)
        blocks = math.prod((n + 3) // 4 for n in field)
        values = 1 << (2 * len(field))
        if self.mode == "fixed_rate":
            bits = self._rate_bits(len(field))
        else:
            bits = _BLOCK_OVERHEAD[native.name] + values - 1 + values * 8 * native.itemsize
        return -(-blocks * bits // 64) * 8

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> bytes:
        zfpy = _zfpy()
        field = _promote(np.asarray(chunk, dtype=spec.dtype), spec.dtype)
        stream: bytes = zfpy.compress_numpy(np.ascontiguousarray(field.reshape(_field_shape(spec.shape))),
                                            write_header=False, **self._keywords())
        return stream

    def decode(self, data: Any, spec: ChunkSpec) -> np.ndarray:
        zfpy = _zfpy()
        native = np.dtype(_NATIVE[spec.dtype.name])
        ztype = zfpy.dtype_to_ztype(native)
        view = memoryview(data).cast("B")
        size = self._stream_bytes(spec.shape, native)
        if len(view) > size or (self.mode == "fixed_rate" and len(view) != size):
            expected = f"{size} bytes" if self.mode == "fixed_rate" else f"at most {size} bytes"
            raise ChunkDecodeError(f"zfp: a chunk of shape {spec.shape} is {expected}, got {len(view)}")
        # zfp reads whole words without checking the stream's end: a short (truncated) stream
        # is read from a buffer of the largest size, zero-filled, never past its end
        stream = bytearray(size)
        stream[:len(view)] = view
        try:
            field = zfpy._decompress(bytes(stream), ztype,
                                     list(_field_shape(spec.shape)), **self._keywords())
        except (RuntimeError, ValueError) as exc:  # what zfp reports of a stream it cannot decode
            raise ChunkDecodeError(f"zfp: cannot decompress chunk: {exc}") from None
        return _demote(np.asarray(field), spec.dtype).reshape(spec.shape)


def _field_shape(shape: tuple[int, ...]) -> tuple[int, ...]:
    return shape or (1,)


def _promote(arr: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """The chunk's values as zfp's type for ``dtype``."""
    name = dtype.name
    if name in _PROMOTED:
        bits = _PROMOTED[name]
        wide = arr.astype(np.int32)
        if dtype.kind == "u":
            wide -= np.int32(1 << (bits - 1))
        return wide << np.int32(31 - bits)
    if name in ("uint32", "uint64"):
        signed = np.dtype(f"i{dtype.itemsize}")
        clipped: np.ndarray = np.minimum(arr, np.iinfo(signed).max).astype(signed)
        return clipped
    return arr.astype(_NATIVE[name], copy=False)


def _demote(field: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """zfp's values back as ``dtype`` (the inverse of :func:`_promote`, clamped)."""
    name = dtype.name
    if name in _PROMOTED:
        bits = _PROMOTED[name]
        shifted = field.astype(np.int64) >> (31 - bits)
        if dtype.kind == "u":
            shifted += 1 << (bits - 1)
        info = np.iinfo(dtype)
        demoted: np.ndarray = np.clip(shifted, info.min, info.max).astype(dtype)
        return demoted
    if name in ("uint32", "uint64"):
        unsigned: np.ndarray = np.maximum(field, 0).astype(dtype)
        return unsigned
    return field.astype(dtype, copy=False)


#: the most bits a zfp header takes (magic, meta and the longest mode), rounded up to a word
_HEADER_BYTES = 24


def zfpy_frame(data: Any, limit: int) -> tuple[bytes, int]:
    """A ``numcodecs.zfpy`` frame (zfp header, then the stream) checked before zfp reads it:
    the frame zero-filled to the largest size a stream of its header's shape and mode can take
    (zfp reads whole words without checking the end, so a cut frame is never read past), and
    the number of bytes its header declares the decoded array takes.  ``ValueError`` for a
    header zfp cannot read, one declaring more than ``limit`` decoded bytes, or one declaring
    a stream the library cannot write safely."""
    zfpy = _zfpy()
    raw = bytes(memoryview(data).cast("B"))
    head = raw[:_HEADER_BYTES].ljust(_HEADER_BYTES, b"\0")
    try:
        header = zfpy.header(head)
    except ValueError as exc:  # a bad magic or layout
        raise ValueError(f"zfpy: unreadable zfp header ({exc})") from None
    shape = tuple(int(header[k]) for k in ("nw", "nz", "ny", "nx") if header[k])
    native = np.dtype(header["type"])
    if not shape or native.name not in _BLOCK_OVERHEAD:
        raise ValueError(f"zfpy: the zfp header declares no array ({header['type']}, shape {shape})")
    size = math.prod(shape) * native.itemsize
    # before the frame is padded to the size its header allows: a header is not a reason to
    # allocate more than the chunk can hold
    if size > limit:
        raise ValueError(f"zfpy: the frame declares {size} bytes, more than the chunk's {limit}")
    values = 1 << (2 * len(shape))
    largest_block = _BLOCK_OVERHEAD[native.name] + values - 1 + values * 8 * native.itemsize
    # the header's bits per block mean something in fixed-rate and expert modes only
    rated = header["mode"] in ("rate", "expert")
    maxbits = int(header["config"]["expert"]["maxbits"]) if rated else largest_block
    if maxbits < _MIN_FLOAT_BLOCK.get(native.name, 1):
        raise ValueError(f"zfpy: the zfp header declares {maxbits} bits per block, too few for {native}")
    per_block = min(maxbits, largest_block)
    blocks = math.prod((n + 3) // 4 for n in shape)
    largest = _HEADER_BYTES + -(-blocks * per_block // 64) * 8
    if len(raw) > largest:
        raise ValueError(f"zfpy: a frame of shape {shape} is at most {largest} bytes, got {len(raw)}")
    return raw.ljust(largest, b"\0"), size
