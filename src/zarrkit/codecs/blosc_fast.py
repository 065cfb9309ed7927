"""Blosc decompression into a caller's buffer through c-blosc's context API.

numcodecs bundles c-blosc and exports its C functions.  Its Python-level ``decompress``
normalises both buffers and, on the main thread, goes through Blosc's global state; for the
small chunks of many arrays that costs several times the decompression itself.  Calling
``blosc_decompress_ctx`` directly (after the same header checks numcodecs makes) decodes
straight into the output with one C call that releases the GIL.  Where the symbols are not
available, :func:`decompress_into` falls back to numcodecs' function.
"""

from __future__ import annotations

import ctypes
import struct
import threading
from typing import Any

import numpy as np
from numcodecs import blosc as _nc_blosc

__all__ = ["decompress_into", "frame_sizes", "remember", "forget", "HEADER_SIZE"]

HEADER_SIZE = 16
#: (decoded size, compressed size) from a Blosc header
_SIZES = struct.Struct("<4xI4xI").unpack_from


def _load(loader: Any = ctypes.CDLL) -> Any:
    try:
        lib = loader(_nc_blosc.__file__)
        fn = lib.blosc_decompress_ctx
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    fn.restype = ctypes.c_int
    return fn


_decompress_ctx = _load()
#: the same function called without releasing the GIL: for small frames, handing the GIL to
#: another thread and taking it back costs more than the decompression itself
_decompress_ctx_holding_gil = _load(ctypes.PyDLL)
SMALL_FRAME = 64 * 1024
_main_ident = threading.main_thread().ident

#: frames smaller than this are decoded by one thread: Blosc's own threads only pay off on
#: large chunks (and pool workers decode different chunks in parallel anyway)
BLOSC_THREADS_MIN_BYTES = 1 << 20


#: data addresses of long-lived buffers (the engine's per-worker scratch buffers), by id;
#: each entry holds its buffer, so the id cannot be reused while it is here
_known: dict[int, tuple[np.ndarray, int]] = {}


def remember(buf: np.ndarray) -> None:
    """Note the address of a buffer that will be decoded into many times."""
    _known[id(buf)] = (buf, buf.__array_interface__["data"][0])


def forget(buf: np.ndarray) -> None:
    _known.pop(id(buf), None)


def _address(buf: Any) -> Any:
    if isinstance(buf, bytes):
        return buf  # ctypes passes a pointer to the bytes object's data
    return np.frombuffer(buf, dtype=np.uint8).ctypes.data


def frame_sizes(raw: Any) -> tuple[int, int]:
    """``(decoded size, compressed size)`` from the header of the Blosc frame ``raw``; raises
    ValueError when the frame is shorter than its header."""
    try:
        return _SIZES(raw)
    except (struct.error, TypeError):
        n = len(raw) if isinstance(raw, bytes) else memoryview(raw).nbytes
        raise ValueError(
            f"blosc frame of {n} bytes is shorter than its {HEADER_SIZE}-byte header"
        ) from None


def decompress_into(raw: Any, out: np.ndarray) -> None:
    """Decompress the Blosc frame ``raw`` into the C-contiguous array ``out``, whose size must
    be the frame's decoded size.  Raises ValueError for a frame that does not fit ``out``.

    The frame's header is checked first: its compressed size must be the length of ``raw``
    (c-blosc reads no further than that size) and its decoded size the size of ``out``.
    """
    nbytes, cbytes = frame_sizes(raw)
    n = len(raw) if isinstance(raw, bytes) else memoryview(raw).nbytes
    if cbytes != n:
        raise ValueError(f"blosc header says {cbytes} compressed bytes, the frame has {n}")
    if nbytes != out.nbytes:
        raise ValueError(f"blosc frame holds {nbytes} bytes, expected {out.nbytes}")
    if (
        _decompress_ctx is None
        or not out.flags.c_contiguous
        or (nbytes >= BLOSC_THREADS_MIN_BYTES and threading.get_ident() == _main_ident)
    ):
        # a large chunk on the main thread: numcodecs uses Blosc's global pool of threads
        # (a context would start and stop its own threads for every call)
        _nc_blosc.decompress(raw, out)
        return
    known = _known.get(id(out))
    address = known[1] if known is not None else out.__array_interface__["data"][0]
    fn = _decompress_ctx_holding_gil if nbytes < SMALL_FRAME else _decompress_ctx
    got = fn(_address(raw), address, nbytes, 1)
    if got != nbytes:
        raise ValueError(f"blosc decompression failed (error {got})")
