"""zarr-python 3's buffer types, over NumPy arrays and bytes.

zarr-python 3 passes stored values as ``Buffer`` objects (one-dimensional bytes) and decoded
chunks as ``NDBuffer`` objects, chosen through a ``BufferPrototype``; code written for it builds
values with ``default_buffer_prototype().buffer.from_bytes(b"...")`` and reads them back with
``to_bytes()``.  zarrkit's stores take and return bytes-like values, and its arrays give NumPy
arrays: these classes are thin wrappers so that such code runs (a :class:`Buffer` is accepted
wherever a store takes a value).  Only host memory exists here (zarr-python's ``cpu``).

Examples
--------
>>> from zarrkit.storage.buffer import default_buffer_prototype
>>> buf = default_buffer_prototype().buffer.from_bytes(b"abc")
>>> buf.to_bytes(), len(buf)
(b'abc', 3)
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any, ClassVar, NamedTuple, Protocol, runtime_checkable

import numpy as np

__all__ = ["Buffer", "BufferPrototype", "NDArrayLike", "NDArrayLikeOrScalar", "NDBuffer", "ScalarType",
           "buffer_prototype", "default_buffer_prototype"]


@runtime_checkable
class NDArrayLike(Protocol):
    """What an N-dimensional array offers (NumPy arrays and their likes): a structural type."""

    @property
    def dtype(self) -> np.dtype: ...

    @property
    def ndim(self) -> int: ...

    @property
    def size(self) -> int: ...

    @property
    def shape(self) -> tuple[int, ...]: ...

    def __len__(self) -> int: ...

    def __array__(self) -> np.ndarray: ...

    def reshape(self, shape: Any, *, order: Any = ...) -> Any: ...

    def view(self, dtype: Any) -> Any: ...

    def astype(self, dtype: Any, order: Any = ..., *, copy: bool = ...) -> Any: ...

    def fill(self, value: Any) -> None: ...

    def copy(self) -> Any: ...

    def transpose(self, axes: Any = ...) -> Any: ...

    def ravel(self, order: Any = ...) -> Any: ...

    def all(self) -> Any: ...


#: one element of an array
ScalarType = int | float | complex | bytes | str | bool | np.generic
#: an array, or one element of one
NDArrayLikeOrScalar = ScalarType | NDArrayLike


def _bytes_view(data: Any) -> np.ndarray:
    """``data`` as a one-dimensional ``uint8`` array (sharing its memory when it can)."""
    if isinstance(data, Buffer):
        return data._data
    array = np.asarray(data)
    if array.dtype != np.uint8 or array.ndim != 1:
        array = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
    return array


class Buffer:
    """A stored value: one-dimensional bytes in host memory.

    Parameters
    ----------
    array_like : array-like
        The bytes (a one-dimensional ``uint8`` array, or anything viewed as one).
    """

    def __init__(self, array_like: Any) -> None:
        self._data = _bytes_view(array_like)

    @classmethod
    def create_zero_length(cls) -> Buffer:
        """An empty buffer."""
        return cls(np.empty(0, dtype=np.uint8))

    @classmethod
    def from_array_like(cls, array_like: Any) -> Buffer:
        """A buffer over an array's bytes."""
        return cls(array_like)

    @classmethod
    def from_buffer(cls, buffer: Any) -> Buffer:
        """A buffer over another buffer's (or any bytes-like object's) bytes."""
        return cls(buffer._data if isinstance(buffer, Buffer) else np.frombuffer(buffer, dtype=np.uint8))

    @classmethod
    def from_bytes(cls, bytes_like: bytes | bytearray | memoryview) -> Buffer:
        """A buffer holding ``bytes_like``."""
        return cls(np.frombuffer(bytes_like, dtype=np.uint8))

    def as_array_like(self) -> np.ndarray:
        """The bytes as a ``uint8`` array (no copy)."""
        return self._data

    def as_numpy_array(self) -> np.ndarray:
        """The bytes as a NumPy ``uint8`` array (no copy)."""
        return self._data

    def as_buffer_like(self) -> memoryview:
        """The bytes as a memoryview (no copy)."""
        return memoryview(self._data)

    def to_bytes(self) -> bytes:
        """The bytes, copied into a ``bytes`` object."""
        return self._data.tobytes()

    def __buffer__(self, flags: int) -> memoryview:
        return memoryview(self._data)

    def __getitem__(self, key: slice) -> Buffer:
        return type(self)(self._data[key])

    def __setitem__(self, key: Any, value: Any) -> None:
        self._data[key] = value

    def __len__(self) -> int:
        return int(self._data.size)

    def __add__(self, other: Buffer) -> Buffer:
        return type(self)(np.concatenate((self._data, _bytes_view(other))))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Buffer) and np.array_equal(self._data, other._data)

    __hash__: ClassVar[None] = None  # type: ignore[assignment]  # mutable, like the array it wraps

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.to_bytes()!r})"


class NDBuffer:
    """A decoded chunk or selection: an N-dimensional NumPy array.

    Parameters
    ----------
    array : array-like
        The array wrapped (NumPy arrays are not copied).
    """

    def __init__(self, array: Any) -> None:
        self._data: np.ndarray = np.asarray(array)

    @classmethod
    def create(cls, *, shape: Iterable[int], dtype: Any, order: str = "C",
               fill_value: Any = None) -> NDBuffer:
        """A new buffer of ``shape`` and ``dtype``, filled with ``fill_value`` when given."""
        data = np.empty(tuple(shape), dtype=dtype, order="F" if order == "F" else "C")
        if fill_value is not None:
            data.fill(fill_value)
        return cls(data)

    @classmethod
    def empty(cls, shape: Iterable[int], dtype: Any, order: str = "C") -> NDBuffer:
        """A new buffer of ``shape`` and ``dtype``, its values unset."""
        return cls.create(shape=shape, dtype=dtype, order=order)

    @classmethod
    def from_numpy_array(cls, array_like: Any) -> NDBuffer:
        """A buffer over a NumPy array."""
        return cls(array_like)

    from_ndarray_like = from_numpy_array

    def as_numpy_array(self) -> np.ndarray:
        """The array (no copy)."""
        return self._data

    as_ndarray_like = as_numpy_array

    @property
    def dtype(self) -> np.dtype:
        return self._data.dtype

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._data.shape)

    @property
    def byteorder(self) -> str:
        """``'little'`` or ``'big'``: the order of the elements' bytes."""
        order = self._data.dtype.byteorder
        if order == "=":
            return sys.byteorder
        return "big" if order == ">" else "little"

    def reshape(self, newshape: Any) -> NDBuffer:
        return type(self)(self._data.reshape(newshape))

    def squeeze(self, axis: Any) -> NDBuffer:
        return type(self)(self._data.squeeze(axis=axis))

    def astype(self, dtype: Any, order: str = "K") -> NDBuffer:
        return type(self)(self._data.astype(dtype, order=order))  # type: ignore[call-overload]

    def copy(self) -> NDBuffer:
        return type(self)(self._data.copy())

    def transpose(self, axes: Any) -> NDBuffer:
        return type(self)(self._data.transpose(axes))

    def fill(self, value: Any) -> None:
        self._data.fill(value)

    def all_equal(self, other: Any, equal_nan: bool = True) -> bool:
        """Whether every element equals ``other`` (NaN equal to NaN when ``equal_nan``)."""
        data = self._data
        if equal_nan and data.dtype.kind in "fc" and np.all(np.isnan(other)):
            return bool(np.isnan(data).all())
        return bool(np.all(data == other))

    def __getitem__(self, key: Any) -> NDBuffer:
        return type(self)(np.asanyarray(self._data.__getitem__(key)))

    def __setitem__(self, key: Any, value: Any) -> None:
        self._data.__setitem__(key, value._data if isinstance(value, NDBuffer) else value)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._data!r})"


class BufferPrototype(NamedTuple):
    """The buffer classes values are made with: ``buffer`` (stored values) and ``nd_buffer``
    (decoded arrays)."""

    buffer: type[Buffer]
    nd_buffer: type[NDBuffer]


#: host memory's prototype, the only one here
buffer_prototype: BufferPrototype = BufferPrototype(buffer=Buffer, nd_buffer=NDBuffer)


def default_buffer_prototype() -> BufferPrototype:
    """The prototype values are made with: host memory's (:class:`Buffer`, :class:`NDBuffer`)."""
    return buffer_prototype
