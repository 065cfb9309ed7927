"""The ``zstd`` codec: Zstandard compression, and what zstd frames declare.

Values are compressed by the zstd library the ``zstandard`` package bundles (1.5.7 and
later), called through ``ctypes`` with a compression context kept per thread: it compresses
array data at the default level faster than the 1.5.6 numcodecs bundles (64 KiB chunks in 40%
less time, 512 KiB ones in 13% less), into frames every zstd reads (they differ from
numcodecs' in some of their bytes, as another version's or tensorstore's do).  At the default
level and the faster ones, the block splitter zstd 1.5.7 added (which looks for a better place
to end each 128 KiB block) is turned off: on array chunks of 512 KiB it cost a quarter of the
compression time for 4% smaller output.  A frame is compressed into a buffer the thread keeps
(fresh memory for every chunk costs the kernel a page fault and a page cleared for every 4 KiB);
a chunk about to be stored is handed over as a view of it (:func:`compress_transient`: writing
a sharded array of 512 KiB inner chunks took 16% less time than with each frame copied out into
bytes of its own), others are copied out at their compressed size.  Where that library cannot
be loaded, the ``zstandard`` package's own compressor is used.  Values are decompressed with
the zstd library numcodecs bundles, through ``ctypes``.

A zstd frame may leave its decoded size out of its header; such frames are decoded through
zstd's streaming API (from the library numcodecs bundles), bounded by the chunk's size, so a
small stored chunk cannot make the reader allocate gigabytes.

Frames that declare their size decode into the caller's buffer with a decompression context
kept per thread (from the same library): numcodecs makes a new context, some 100 KiB of fresh
memory, for every call, which cost 10 µs of a 15 µs decode of an 8 KiB chunk.  Several frames
stored one after the other (the inner chunks of a shard) decode with one call
(:func:`decode_frames_into`), the interpreter lock released once for all of them.
"""

from __future__ import annotations

import ctypes
import importlib.util
import threading
from collections.abc import Sequence
from typing import Any, cast

import numcodecs
import numpy as np
import zstandard
from numcodecs.compat import ensure_bytes, ensure_contiguous_ndarray

from ..errors import MetadataError
from .base import BytesBytesCodec

__all__ = ["ZstdCodec", "zstd_frame_size", "zstd_decode_upto", "decode_bounded", "decode_frames_into", "frames_in_place"]


def zstd_frame_size(data: Any) -> int | None:
    """The content size a zstd frame's header declares (None when it does not say, or when
    ``data`` starts with a skippable frame).  Data of several frames holds more than the
    first declares: decoders take a size other than the chunk's as a reason to decode it
    whole, bounded, rather than to refuse it."""
    view = memoryview(data).cast("B")
    head = bytes(view[:18])
    if len(head) >= 8 and 0x184D2A50 <= int.from_bytes(head[:4], "little") <= 0x184D2A5F:
        return None  # a skippable frame
    if len(head) < 5 or head[:4] != b"\x28\xb5\x2f\xfd":
        raise ValueError("not a zstd frame")
    fhd = head[4]
    fcs_flag, single, dict_flag = fhd >> 6, (fhd >> 5) & 1, fhd & 3
    pos = 5 + (0 if single else 1) + (0, 1, 2, 4)[dict_flag]
    size = (1 if single else 0, 2, 4, 8)[fcs_flag]
    if size == 0:
        return None
    if len(head) < pos + size:
        raise ValueError("zstd frame header cut short")
    value = int.from_bytes(head[pos : pos + size], "little")
    return value + 256 if size == 2 else value


def decode_bounded(codec: Any, data: Any, limit: int) -> Any:
    """numcodecs' Zstd ``codec`` decoding ``data`` into at most ``limit`` bytes: refused with
    a ``ValueError`` before decoding when a frame's header declares more, or as soon as the
    output grows beyond them when it does not say."""
    size = zstd_frame_size(data)
    if size is not None:
        if size > limit:
            raise ValueError(f"{codec.codec_id}: the frame declares {size} bytes, more than the chunk's {limit}")
        return codec.decode(data)
    if _ZSTD_STREAM is not None:
        return zstd_decode_upto(data, limit)  # (numcodecs would inflate a frame without a size whole)
    return codec.decode(data)


class _ZstdBuffer(ctypes.Structure):  # ZSTD_inBuffer and ZSTD_outBuffer
    _fields_ = [("ptr", ctypes.c_void_p), ("size", ctypes.c_size_t), ("pos", ctypes.c_size_t)]


_VOID_P, _SIZE = ctypes.c_void_p, ctypes.c_size_t
_BUFFER_P = ctypes.POINTER(_ZstdBuffer)
#: the functions of the zstd libraries numcodecs and zstandard bundle (and export) used here:
#: result type, argument types
_SIGNATURES: dict[str, tuple[Any, list[Any]]] = {
    "ZSTD_createDStream": (_VOID_P, []),
    "ZSTD_decompressStream": (_SIZE, [_VOID_P, _BUFFER_P, _BUFFER_P]),
    "ZSTD_freeDStream": (_SIZE, [_VOID_P]),
    "ZSTD_createDCtx": (_VOID_P, []),
    "ZSTD_decompressDCtx": (_SIZE, [_VOID_P, _VOID_P, _SIZE, _VOID_P, _SIZE]),
    "ZSTD_freeDCtx": (_SIZE, [_VOID_P]),
    "ZSTD_findFrameCompressedSize": (_SIZE, [_VOID_P, _SIZE]),
    "ZSTD_getFrameContentSize": (ctypes.c_ulonglong, [_VOID_P, _SIZE]),
    "ZSTD_isError": (ctypes.c_uint, [_SIZE]),
    "ZSTD_getErrorName": (ctypes.c_char_p, [_SIZE]),
    "ZSTD_versionNumber": (ctypes.c_uint, []),
    "ZSTD_createCCtx": (_VOID_P, []),
    "ZSTD_freeCCtx": (_SIZE, [_VOID_P]),
    "ZSTD_CCtx_setParameter": (_SIZE, [_VOID_P, ctypes.c_int, ctypes.c_int]),
    "ZSTD_compress2": (_SIZE, [_VOID_P, _VOID_P, _SIZE, _VOID_P, _SIZE]),
}


def _load(*names: str, holding_lock: bool = False, path: str | None = None) -> Any:
    """The functions ``names`` of the zstd library at ``path`` (the one numcodecs bundles when
    None), typed (None where it cannot be loaded or does not export them).  Calls release the
    interpreter lock, unless ``holding_lock``: for functions that take well under a
    microsecond, less than handing the lock over would."""
    try:
        lib = (ctypes.PyDLL if holding_lock else ctypes.CDLL)(path or numcodecs.zstd.__file__)
        fns = tuple(getattr(lib, name) for name in names)
    except (OSError, AttributeError):
        return None
    for name, f in zip(names, fns):
        f.restype, f.argtypes = _SIGNATURES[name]
    return fns


#: streaming decompression (frames that do not declare their size)
_ZSTD_STREAM = _load("ZSTD_createDStream", "ZSTD_decompressStream", "ZSTD_freeDStream", "ZSTD_isError",
                     "ZSTD_getErrorName")
#: one-shot decompression with a context of the caller's
_ZSTD_DCTX = _load("ZSTD_createDCtx", "ZSTD_decompressDCtx", "ZSTD_freeDCtx", "ZSTD_isError", "ZSTD_getErrorName")
#: a look at a frame without decoding it: its compressed size, and the content size it declares
_ZSTD_FRAMES = _load("ZSTD_findFrameCompressedSize", "ZSTD_getFrameContentSize", holding_lock=True)


class _Context:
    """A decompression context, freed with its owner (a thread's local state)."""

    def __init__(self) -> None:
        fns = _ZSTD_DCTX
        self.free = fns[2]  # (held: module globals may be gone when a thread ends at exit)
        self.ptr = fns[0]()
        if not self.ptr:
            raise MemoryError("zstd: cannot make a context")

    def __del__(self) -> None:
        if self.ptr:
            self.free(self.ptr)
            self.ptr = None


_local = threading.local()


def _address(data: Any) -> tuple[Any, int]:
    """What to pass for the bytes of ``data`` (a bytes object as it is, another buffer by its
    address), and their count."""
    if type(data) is bytes:
        return data, len(data)
    src = np.frombuffer(data, dtype=np.uint8) if not isinstance(data, np.ndarray) else data.reshape(-1).view(np.uint8)
    return src.__array_interface__["data"][0], src.nbytes


def _decompress(dst: int, capacity: int, data: Any) -> int:
    """Decompress the frames in ``data`` into ``capacity`` bytes at address ``dst``, with this
    thread's context; the count written (a ``ValueError`` for a bad frame, or more output)."""
    ctx = getattr(_local, "dctx", None)
    if ctx is None:
        ctx = _local.dctx = _Context()
    src, n = _address(data)
    ret = _ZSTD_DCTX[1](ctx.ptr, dst, capacity, src, n)
    if _ZSTD_DCTX[3](ret):
        raise ValueError(f"zstd: {_ZSTD_DCTX[4](ret).decode()}")
    return int(ret)


def _load_compression() -> Any:
    """The compression functions of the zstd library the ``zstandard`` package bundles (None
    where it cannot be found, does not export them, or is older than 1.5.7)."""
    try:
        spec = importlib.util.find_spec("zstandard._cffi")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    fns = _load("ZSTD_versionNumber", "ZSTD_createCCtx", "ZSTD_freeCCtx", "ZSTD_CCtx_setParameter",
                "ZSTD_compress2", "ZSTD_isError", "ZSTD_getErrorName", path=spec.origin)
    return fns[1:] if fns is not None and fns[0]() >= 10507 else None


#: ZSTD_cParameter values: the level, the content size and checksum flags, and the block
#: splitter's level (1: no splitting)
_LEVEL, _CONTENT_SIZE, _CHECKSUM, _BLOCK_SPLITTER = 100, 200, 201, 1017
#: levels up to this one (the default, 0, included) compress without the block splitter
NO_SPLIT_MAX_LEVEL = 3
#: a compression buffer a thread keeps, at most (a larger chunk's gets a buffer of its own)
KEPT_BUFFER_BYTES = 16 << 20
_ZSTD_COMPRESS = _load_compression()


class _Compressor:
    """A compression context, freed with its owner (a thread's local state), set for one
    (level, checksum), and the buffer its frames are made in."""

    def __init__(self, settings: tuple[int, bool]) -> None:
        fns = _ZSTD_COMPRESS
        self.free = fns[1]  # (held: module globals may be gone when a thread ends at exit)
        self.ptr = fns[0]()
        if not self.ptr:
            raise MemoryError("zstd: cannot make a compression context")
        self.settings = settings
        self.buffer = np.empty(0, dtype=np.uint8)
        level, checksum = settings
        for param, value in ((_LEVEL, level), (_CONTENT_SIZE, 1), (_CHECKSUM, int(checksum))) + (
            ((_BLOCK_SPLITTER, 1),) if level <= NO_SPLIT_MAX_LEVEL else ()
        ):
            _check(fns[2](self.ptr, param, value))

    def __del__(self) -> None:
        if self.ptr:
            self.free(self.ptr)
            self.ptr = None

    def compress(self, data: Any) -> memoryview:
        """One frame of ``data`` (a contiguous buffer), as a view of the buffer it is made in
        (this compressor's own, reused by its next call, unless the frame may be larger than
        :data:`KEPT_BUFFER_BYTES`)."""
        src, n = _address(data)
        bound = n + (n >> 8) + ((128 << 10) - n >> 11 if n < 128 << 10 else 0)  # ZSTD_COMPRESSBOUND
        out = self.buffer
        if out.nbytes < bound:
            out = np.empty(bound, dtype=np.uint8)
            if bound <= KEPT_BUFFER_BYTES:
                self.buffer = out
        size = _check(_ZSTD_COMPRESS[3](self.ptr, out.__array_interface__["data"][0], bound, src, n))
        return memoryview(out)[:size]


def _check(ret: int) -> int:
    """``ret``, a zstd function's result, unless it is an error (a ``ValueError``)."""
    if _ZSTD_COMPRESS[4](ret):
        raise ValueError(f"zstd: {_ZSTD_COMPRESS[5](ret).decode()}")
    return int(ret)


def compress(data: Any, level: int, checksum: bool) -> bytes:
    """``data`` (a contiguous buffer, in its memory order) as one zstd frame declaring its
    size, at ``level`` (0: zstd's default; above zstd's highest, its highest, as zstd's own
    settings take it), with a content checksum when ``checksum``: made by this thread's
    compressor (the interpreter lock released meanwhile).  A thread keeps one compressor,
    for the settings it last compressed with."""
    frame = compress_transient(data, level, checksum)
    return frame if type(frame) is bytes else bytes(frame)


def compress_transient(data: Any, level: int, checksum: bool) -> bytes | memoryview:
    """:func:`compress`, as a view of a buffer this thread reuses for its next frame where
    the compressor makes frames in one (valid until this thread compresses again)."""
    settings = (min(level, zstandard.MAX_COMPRESSION_LEVEL), checksum)
    if _ZSTD_COMPRESS is not None:
        kept = getattr(_local, "cctx", None)
        if kept is None or kept.settings != settings:
            kept = _local.cctx = _Compressor(settings)
        return kept.compress(data)
    compressor = getattr(_local, "compressor", None)
    if compressor is None or _local.settings != settings:
        compressor = _local.compressor = zstandard.ZstdCompressor(
            level=settings[0], write_checksum=checksum, write_content_size=True
        )
        _local.settings = settings
    return cast(bytes, compressor.compress(data))


def frames_in_place(data: Any, starts: Sequence[int], lengths: Sequence[int], size: int) -> list[bool]:
    """For each value at ``starts`` (of ``lengths`` bytes) in ``data``: whether it is exactly
    one zstd frame, ending where the value ends, whose header declares ``size`` bytes.
    Frames that all are decode together into consecutive places of ``size`` bytes
    (:func:`decode_frames_into`): zstd checks that each frame decodes to what it declares, and
    each starts where the one before ends.  Anything else (a frame running into the next
    value, one followed by a skippable frame or by a second frame) is decoded on its own."""
    if _ZSTD_FRAMES is None:
        return [False] * len(starts)
    find, content = _ZSTD_FRAMES
    base = np.frombuffer(data, dtype=np.uint8).__array_interface__["data"][0]
    return [n > 0 and content(base + at, n) == size and find(base + at, n) == n for at, n in zip(starts, lengths)]


def decode_frames_into(data: Any, out: np.ndarray) -> None:
    """Decode the zstd frames stored one after the other in ``data`` into ``out`` (a
    contiguous array), which they must fill exactly: one call into the library for all of
    them.  The caller has checked what each frame declares; zstd checks that every frame
    decodes to the size its header declares, and writes nothing beyond ``out``.  Raises
    ``ValueError``."""
    target = out.reshape(-1).view(np.uint8)
    if _ZSTD_DCTX is None:
        raise ValueError("zstd: no decompression context available")
    got = _decompress(target.__array_interface__["data"][0], target.nbytes, data)
    if got != target.nbytes:
        raise ValueError(f"zstd: the frames hold {got} bytes, expected {target.nbytes}")


def zstd_decode_upto(data: Any, limit: int) -> np.ndarray:
    """Decode zstd frames (ones that do not declare their decoded size included) into at
    most ``limit`` bytes, stopping with a ``ValueError`` as soon as the output would exceed
    them: the output grows as it fills, so a small bomb allocates nothing near what it
    claims."""
    create, stream, free, is_error, name = _ZSTD_STREAM
    src = np.frombuffer(memoryview(data).cast("B"), dtype=np.uint8)
    source = _ZstdBuffer(src.ctypes.data, src.nbytes, 0)
    out = np.empty(min(limit + 1, max(64 * 1024, 4 * src.nbytes)), dtype=np.uint8)
    total = 0
    zds = create()
    if not zds:
        raise MemoryError("zstd: cannot make a decompression stream")
    try:
        while True:
            if total == out.size:
                if out.size > limit:
                    raise ValueError(f"zstd: the data inflates to more than the chunk's {limit} bytes")
                grown = np.empty(min(2 * out.size, limit + 1), dtype=np.uint8)
                grown[:total] = out[:total]
                out = grown
            sink = _ZstdBuffer(out.ctypes.data + total, out.size - total, 0)
            before = source.pos
            ret = stream(zds, ctypes.byref(sink), ctypes.byref(source))
            if is_error(ret):
                raise ValueError(f"zstd: {name(ret).decode()}")
            total += sink.pos
            if total > limit:
                raise ValueError(f"zstd: the data inflates to more than the chunk's {limit} bytes")
            if source.pos == source.size and not ret:  # every frame read and flushed
                return out[:total]
            if not sink.pos and source.pos == before and total < out.size:
                # no input left for a frame not finished (or none taken)
                raise ValueError("zstd: the compressed data is cut short")
    finally:
        free(zds)


class ZstdCodec(BytesBytesCodec):
    """Zstandard compression, optionally with a content checksum."""

    name = "zstd"

    def __init__(self, level: int = 0, checksum: bool = False):
        if not isinstance(level, int) or isinstance(level, bool):
            raise MetadataError(f"zstd: level must be an int, got {level!r}")
        if not isinstance(checksum, bool):
            raise MetadataError(f"zstd: checksum must be a bool, got {checksum!r}")
        self.level = level
        self.checksum = checksum
        self.codec: Any = numcodecs.Zstd(level=level, checksum=checksum)

    def configuration(self) -> dict[str, Any]:
        return {"level": self.level, "checksum": self.checksum}

    def encode(self, data: Any) -> bytes:
        # (numcodecs' rules: contiguous memory of plain values, compressed in its own order)
        return compress(ensure_contiguous_ndarray(data), self.level, self.checksum)

    def encode_array(self, arr: np.ndarray) -> bytes | None:
        return self.encode(arr)

    def encode_transient(self, data: Any) -> Any:
        return compress_transient(ensure_contiguous_ndarray(data), self.level, self.checksum)

    def decode(self, data: Any) -> Any:
        return self.codec.decode(data)

    def decode_limited(self, data: Any, limit: int) -> Any:
        return decode_bounded(self.codec, data, limit)

    decodes_into = True
    decodes_frames: bool = _ZSTD_DCTX is not None

    def decode_frames_into(self, data: Any, out: np.ndarray) -> None:
        decode_frames_into(data, out)

    def frames_in_place(self, data: Any, starts: Sequence[int], lengths: Sequence[int], size: int) -> list[bool]:
        return frames_in_place(data, starts, lengths, size)

    def declared_size(self, data: Any) -> int | None:
        """The content size in the zstd frame header (None when the frame does not say)."""
        return zstd_frame_size(data)

    def decode_into(self, data: Any, out: np.ndarray) -> None:
        target = out.reshape(-1).view(np.uint8)
        size = self.declared_size(data)
        if size is not None and size > target.nbytes:  # (frames after it only add)
            raise ValueError(f"zstd: the frame holds {size} bytes, expected {target.nbytes}")
        if size != target.nbytes:
            # a frame without its size, or several frames (the first declaring a part of the
            # chunk): decoded apart (bounded), then copied
            decoded = zstd_decode_upto(data, target.nbytes) if _ZSTD_STREAM is not None else self.codec.decode(data)
            decoded = memoryview(ensure_bytes(decoded)).cast("B")
            if len(decoded) != target.nbytes:
                raise ValueError(f"zstd: decoded {len(decoded)} bytes, expected {target.nbytes}")
            target[...] = np.frombuffer(decoded, dtype=np.uint8)
            return
        if not size:
            return
        if _ZSTD_DCTX is None:
            self.codec.decode(data, out=target)
            return
        got = _decompress(target.__array_interface__["data"][0], size, data)
        if got != size:
            raise ValueError(f"zstd: the frame holds {got} bytes, expected {size}")
