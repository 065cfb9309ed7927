"""zarr-python 3's ``zarr.abc.codec``: the classes another package derives a Zarr v3 codec from.

A codec written for zarr-python 3 derives from :class:`ArrayArrayCodec` (a chunk array to an
array: a filter), :class:`ArrayBytesCodec` (an array to bytes: a serializer) or
:class:`BytesBytesCodec` (bytes to bytes: a compressor, a checksum), usually as a frozen
dataclass, and defines zarr-python 3's methods:

* ``async def _encode_single(self, chunk, chunk_spec)`` and ``_decode_single`` (or the
  synchronous ``_encode_sync`` / ``_decode_sync``), over :mod:`zarrkit.buffer`'s ``Buffer``
  and ``NDBuffer``; ``chunk_spec`` is an :class:`ArraySpec`;
* ``to_dict()`` (its ``{"name": ..., "configuration": {...}}``) and ``from_dict()``;
* optionally ``resolve_metadata``, ``evolve_from_array_spec``, ``validate(*, shape, dtype,
  chunk_grid)``, ``compute_encoded_size`` with ``is_fixed_size``.

Each class here derives from zarrkit's own codec base (:mod:`zarrkit.codecs.base`), so such a
codec runs in zarrkit's one codec chain, as every built-in codec does: the chain calls the
codec's zarrkit methods (``encode``, ``decode``, ``resolve``, ``evolve``), which call the
zarr-python 3 ones above.  Coroutines that wait (``await asyncio.to_thread(...)``) run on
zarrkit's background loop; the synchronous variants, when defined, are called directly.

Register the class with ``zarrkit.registry.register_codec(name, cls)``, or from the package
that ships it, as an entry point of the group ``zarr.codecs``::

    [project.entry-points."zarr.codecs"]
    my_codec = "my_package.codecs:MyCodec"

zarrkit loads it the first time an array's metadata names ``my_codec``.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
from typing import Any, Protocol, Self, runtime_checkable

import numpy as np

from ..codecs import base as _base
from ..core.views import ArrayConfig
from ..metadata.zdtypes import data_type_of
from ..storage.buffer import Buffer, NDBuffer, default_buffer_prototype
from ..storage.zarr3_api import BackgroundLoop

__all__ = ["ArrayArrayCodec", "ArrayBytesCodec", "ArraySpec", "BaseCodec", "BytesBytesCodec", "SupportsSyncCodec"]


@runtime_checkable
class SupportsSyncCodec(Protocol):
    """A codec that encodes and decodes a chunk without an event loop (zarr-python 3's
    protocol): every built-in codec, and a zarr-python 3 codec that defines both methods."""

    def _decode_sync(self, chunk_data: Any, chunk_spec: Any) -> Any: ...

    def _encode_sync(self, chunk_data: Any, chunk_spec: Any) -> Any: ...


@dataclasses.dataclass(frozen=True)
class ArraySpec:
    """What a codec is given with a chunk (zarr-python 3's ``ArraySpec``): its ``shape``, data
    type (a :mod:`zarrkit.dtype` object), ``fill_value``, the array's ``config`` and the
    ``prototype`` buffers are made with."""

    shape: tuple[int, ...]
    dtype: Any
    fill_value: Any
    config: Any = dataclasses.field(default_factory=ArrayConfig)
    prototype: Any = dataclasses.field(default_factory=default_buffer_prototype)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @classmethod
    def of(cls, spec: _base.ChunkSpec) -> ArraySpec:
        """The spec zarr-python 3 codecs are given for zarrkit's ``spec``."""
        return cls(tuple(spec.shape), data_type_of(spec.dtype), spec.fill_value)

    def chunk_spec(self) -> _base.ChunkSpec:
        """zarrkit's spec of the same chunk."""
        dtype = self.dtype.to_native_dtype() if hasattr(self.dtype, "to_native_dtype") else np.dtype(self.dtype)
        return _base.ChunkSpec(tuple(self.shape), dtype, self.fill_value)


def _run(coro: Any) -> Any:
    """The result of a codec's coroutine, run on zarrkit's background loop."""
    return asyncio.run_coroutine_threadsafe(coro, BackgroundLoop.get()).result()


class BaseCodec:
    """What zarr-python 3's three codec kinds share (``zarr.abc.codec.BaseCodec``)."""

    #: whether :meth:`compute_encoded_size` tells the encoded size
    is_fixed_size: bool = False
    #: zarr-python 3's synchronous methods, when the codec defines them (else its coroutines
    #: run; the built-in codecs' versions, over zarrkit's methods, are not these codecs')
    _encode_sync: Any = None
    _decode_sync: Any = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("validate")
        if own is not None and not getattr(own, "_chain_form", False):
            # zarr-python 3's validate(*, shape, dtype, chunk_grid), called by zarrkit's chain
            # with a chunk spec
            def validate(self: Any, spec: Any = None, **given: Any) -> None:
                if spec is None:
                    own(self, **given)
                    return
                arr = ArraySpec.of(spec)
                own(self, shape=arr.shape, dtype=arr.dtype, chunk_grid=None)

            validate._chain_form = True  # type: ignore[attr-defined]
            cls.validate = validate  # type: ignore[attr-defined]

    @property
    def name(self) -> str:
        """The codec's name in ``zarr.json`` (from :meth:`to_dict`)."""
        return str(self.to_dict()["name"])

    def to_dict(self) -> dict[str, Any]:
        """The codec's metadata document; a codec defines it."""
        raise NotImplementedError(f"{type(self).__name__} must define to_dict()")

    def to_json(self) -> dict[str, Any]:
        return dict(self.to_dict())

    def configuration(self) -> dict[str, Any] | None:
        return self.to_dict().get("configuration")

    @classmethod
    def from_dict(cls, data: Any) -> Self:
        """The codec of a metadata document: its configuration as keyword arguments."""
        return cls(**dict(data.get("configuration") or {}))

    def evolve_from_array_spec(self, array_spec: Any) -> Self:
        """Settings that depend on the array filled in (zarr-python 3); default: unchanged."""
        return self

    def resolve_metadata(self, chunk_spec: ArraySpec) -> ArraySpec:
        """The spec of the encoded chunk (zarr-python 3); default: unchanged."""
        return chunk_spec

    def compute_encoded_size(self, input_byte_length: int, chunk_spec: ArraySpec) -> int:
        """The encoded size, when :attr:`is_fixed_size`."""
        raise NotImplementedError

    # -- what zarrkit's chain calls -------------------------------------------------------
    def evolve(self, spec: _base.ChunkSpec) -> Self:
        arr = ArraySpec.of(spec)
        evolved = copy.copy(self.evolve_from_array_spec(arr))
        object.__setattr__(evolved, "_chunk_spec", arr)  # (frozen dataclasses too)
        return evolved

    def _spec(self, spec: _base.ChunkSpec | None = None) -> ArraySpec:
        if spec is not None:
            return ArraySpec.of(spec)
        return self.__dict__.get("_chunk_spec") or ArraySpec((), data_type_of(np.dtype("u1")), 0)

    def _encode(self, value: Any, arr: ArraySpec) -> Any:
        sync = getattr(self, "_encode_sync", None)
        return sync(value, arr) if sync is not None else _run(self._encode_single(value, arr))  # type: ignore[attr-defined]

    def _decode(self, value: Any, arr: ArraySpec) -> Any:
        sync = getattr(self, "_decode_sync", None)
        return sync(value, arr) if sync is not None else _run(self._decode_single(value, arr))  # type: ignore[attr-defined]


class ArrayArrayCodec(BaseCodec, _base.ArrayArrayCodec):  # type: ignore[override]  # (its name is to_dict()'s)
    """A zarr-python 3 codec from a chunk array to an array (a filter)."""

    def resolve(self, spec: _base.ChunkSpec) -> _base.ChunkSpec:
        return self.resolve_metadata(ArraySpec.of(spec)).chunk_spec()

    def encode(self, chunk: np.ndarray, spec: _base.ChunkSpec) -> np.ndarray:
        out = self._encode(NDBuffer(chunk), ArraySpec.of(spec))
        return np.asarray(out.as_numpy_array())

    def decode(self, chunk: np.ndarray, spec: _base.ChunkSpec) -> np.ndarray:
        out = self._decode(NDBuffer(chunk), ArraySpec.of(spec))  # (``spec``: the decoded chunk's)
        return np.asarray(out.as_numpy_array())


class ArrayBytesCodec(BaseCodec, _base.ArrayBytesCodec):  # type: ignore[override]  # (its name is to_dict()'s)
    """A zarr-python 3 codec from a chunk array to bytes (a serializer)."""

    def encode(self, chunk: np.ndarray, spec: _base.ChunkSpec) -> bytes:
        return bytes(self._encode(NDBuffer(chunk), ArraySpec.of(spec)).to_bytes())

    def decode(self, data: bytes, spec: _base.ChunkSpec) -> np.ndarray:
        out = self._decode(Buffer.from_bytes(bytes(data)), ArraySpec.of(spec))
        return np.asarray(out.as_numpy_array()).reshape(spec.shape)


class BytesBytesCodec(BaseCodec, _base.BytesBytesCodec):  # type: ignore[override]  # (its name is to_dict()'s)
    """A zarr-python 3 codec from bytes to bytes (a compressor, a checksum)."""

    def encode(self, data: Any) -> bytes:
        return bytes(self._encode(Buffer.from_bytes(bytes(memoryview(data).cast("B"))), self._spec()).to_bytes())

    def decode(self, data: Any) -> Any:
        return self._decode(Buffer.from_bytes(bytes(memoryview(data).cast("B"))), self._spec()).to_bytes()

    def encoded_size(self, size: int) -> int | None:
        if not self.is_fixed_size:
            return None
        try:
            return int(self.compute_encoded_size(size, self._spec()))
        except NotImplementedError:
            return None
