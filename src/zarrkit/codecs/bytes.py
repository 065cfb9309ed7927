"""The ``bytes`` codec: fixed-size elements as raw bytes in C order, in a given byte order."""

from __future__ import annotations

from typing import Any

import numpy as np
from numcodecs.compat import ensure_contiguous_ndarray

from ..errors import MetadataError
from .base import ArrayBytesCodec, ChunkSpec

__all__ = ["BytesCodec"]


class BytesCodec(ArrayBytesCodec):
    """Fixed-size elements as raw bytes in C order with the given ``endian``."""

    name = "bytes"

    def __init__(self, endian: str | None = "little"):
        if endian not in ("little", "big", None):
            raise MetadataError(f"bytes codec: endian must be 'little' or 'big', got {endian!r}")
        self.endian = endian

    def configuration(self) -> dict[str, Any] | None:
        return None if self.endian is None else {"endian": self.endian}

    def __repr__(self) -> str:
        return f"BytesCodec(endian={self.endian!r})"

    def validate(self, spec: ChunkSpec) -> None:
        if spec.dtype.kind == "O" or spec.dtype.kind == "T":
            raise MetadataError(f"bytes codec cannot serialise variable-length dtype {spec.dtype}")
        if self.endian is None and spec.dtype.itemsize > 1 and not _is_bytes_like(spec.dtype):
            raise MetadataError(f"bytes codec needs 'endian' for multi-byte dtype {spec.dtype}")

    def evolve(self, spec: ChunkSpec) -> BytesCodec:
        if spec.dtype.itemsize == 1 and self.endian is not None and not spec.dtype.names:
            return self
        return self

    def _stored_dtype(self, dtype: np.dtype) -> np.dtype:
        if self.endian is None or _is_bytes_like(dtype):
            return dtype
        return dtype.newbyteorder("<" if self.endian == "little" else ">")

    def raw_dtype(self, spec: ChunkSpec) -> np.dtype | None:
        return None if spec.dtype.kind in "OT" else self._stored_dtype(spec.dtype)

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> Any:
        # a flat byte view of the (contiguous) chunk: the next codec or the store copies it
        stored = self._stored_dtype(spec.dtype)
        arr = np.ascontiguousarray(chunk, dtype=stored) if chunk.dtype != stored else np.ascontiguousarray(chunk)
        return arr.reshape(-1).view(np.uint8)

    def decode(self, data: Any, spec: ChunkSpec) -> np.ndarray:
        stored = self._stored_dtype(spec.dtype)
        n = int(np.prod(spec.shape, dtype=np.int64))
        buf: np.ndarray = ensure_contiguous_ndarray(data).view(np.uint8)
        if buf.size != n * stored.itemsize:
            raise ValueError(f"expected {n * stored.itemsize} bytes for chunk shape {spec.shape} of {spec.dtype}, got {buf.size}")
        arr = buf.view(stored).reshape(spec.shape)
        if stored != spec.dtype:
            arr = arr.astype(spec.dtype)
        return arr


def _is_bytes_like(dtype: np.dtype) -> bool:
    # Types without byte order: 1-byte numbers, raw bytes, fixed byte strings.
    return dtype.itemsize <= 1 or dtype.kind in "SV" and not dtype.names
