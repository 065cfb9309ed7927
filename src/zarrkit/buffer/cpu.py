"""zarr-python 3's ``zarr.buffer.cpu``: buffers in host memory, over NumPy arrays."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..storage.buffer import Buffer, BufferPrototype, NDBuffer, buffer_prototype

__all__ = ["Buffer", "NDBuffer", "as_numpy_array_wrapper", "buffer_prototype", "numpy_buffer_prototype"]


def numpy_buffer_prototype() -> BufferPrototype:
    """Host memory's prototype (:class:`Buffer`, :class:`NDBuffer`)."""
    return buffer_prototype


def as_numpy_array_wrapper(func: Any, buf: Buffer, prototype: BufferPrototype) -> Buffer:
    """``func`` (bytes-like -> bytes-like, a numcodecs ``encode``...) applied to ``buf``'s
    bytes, its result as a buffer of ``prototype``.

    Parameters
    ----------
    func : callable
    buf : Buffer
    prototype : BufferPrototype

    Returns
    -------
    Buffer
    """
    out = func(buf.as_numpy_array())
    return prototype.buffer.from_bytes(out if isinstance(out, bytes) else np.asarray(out).tobytes())
