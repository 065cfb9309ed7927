"""zarr-python 3's ``zarr.buffer.gpu``: buffers in device memory, over CuPy arrays.

Available when CuPy is installed (:data:`available`); without it, making a buffer here raises
``ImportError`` naming the package.  zarrkit's stores and codecs take these buffers as they
take host ones: a value is moved to host memory where a store or codec reads it
(``as_numpy_array``), and a chunk read through :data:`buffer_prototype` comes back on the
device.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np

from ..storage.buffer import Buffer as _HostBuffer
from ..storage.buffer import BufferPrototype
from ..storage.buffer import NDBuffer as _HostNDBuffer

__all__ = ["Buffer", "NDBuffer", "available", "buffer_prototype"]

#: whether CuPy is installed
available: bool = importlib.util.find_spec("cupy") is not None


def _cupy() -> Any:
    if not available:
        raise ImportError("GPU buffers need CuPy: pip install cupy-cuda12x (or the build for your CUDA)")
    import cupy  # type: ignore[import-not-found,unused-ignore]

    return cupy


class Buffer(_HostBuffer):
    """A stored value in device memory (a one-dimensional CuPy ``uint8`` array)."""

    def __init__(self, array_like: Any) -> None:
        cp = _cupy()
        data = cp.asarray(array_like)
        if data.dtype != cp.uint8 or data.ndim != 1:
            data = cp.ascontiguousarray(data).reshape(-1).view(cp.uint8)
        self._device = data
        self._data = np.empty(0, np.uint8)  # (filled from the device when read on the host)

    @classmethod
    def from_bytes(cls, bytes_like: bytes | bytearray | memoryview) -> Buffer:
        return cls(np.frombuffer(bytes_like, dtype=np.uint8))

    def as_array_like(self) -> Any:
        """The bytes on the device (no copy)."""
        return self._device

    def as_numpy_array(self) -> np.ndarray:
        """The bytes copied to host memory."""
        return np.asarray(self._device.get())

    def as_buffer_like(self) -> memoryview:
        return memoryview(self.as_numpy_array())

    def to_bytes(self) -> bytes:
        return self.as_numpy_array().tobytes()

    def __buffer__(self, flags: int) -> memoryview:
        return memoryview(self.as_numpy_array())

    def __getitem__(self, key: slice) -> Buffer:
        return type(self)(self._device[key])

    def __setitem__(self, key: Any, value: Any) -> None:
        self._device[key] = value

    def __len__(self) -> int:
        return int(self._device.size)

    def __add__(self, other: _HostBuffer) -> Buffer:
        other_data = other._device if isinstance(other, Buffer) else _cupy().asarray(other.as_numpy_array())
        return type(self)(_cupy().concatenate((self._device, other_data)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _HostBuffer) and self.to_bytes() == other.to_bytes()

    __hash__ = None


class NDBuffer(_HostNDBuffer):
    """A decoded chunk or selection in device memory (a CuPy array)."""

    _data: Any  # (a CuPy array)

    def __init__(self, array: Any) -> None:
        self._data = _cupy().asarray(array)

    @classmethod
    def create(cls, *, shape: Any, dtype: Any, order: str = "C", fill_value: Any = None) -> NDBuffer:
        cp = _cupy()
        data = cp.empty(tuple(shape), dtype=dtype, order="F" if order == "F" else "C")
        if fill_value is not None:
            data.fill(fill_value)
        return cls(data)

    def as_ndarray_like(self) -> Any:
        """The array on the device (no copy)."""
        return self._data

    def as_numpy_array(self) -> np.ndarray:
        """The array copied to host memory."""
        return np.asarray(self._data.get())


#: device memory's prototype
buffer_prototype: BufferPrototype = BufferPrototype(buffer=Buffer, nd_buffer=NDBuffer)
