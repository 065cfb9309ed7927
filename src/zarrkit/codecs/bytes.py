"""The ``bytes`` codec: fixed-size elements as raw bytes in C order, in a given byte order."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any, ClassVar, Final, Literal

import numpy as np
from numcodecs.compat import ensure_contiguous_ndarray

from ..errors import MetadataError
from .base import ArrayBytesCodec, ChunkSpec
from .legacy_enums import LegacyStrEnum, legacy_enum_value

__all__ = ["BytesCodec", "ENDIAN", "Endian", "EndianLiteral"]

#: byte orders of the ``bytes`` codec
EndianLiteral = Literal["little", "big"]
ENDIAN: Final = ("little", "big")


class Endian(metaclass=LegacyStrEnum):
    """Deprecated: pass ``endian`` as a string (``"little"`` or ``"big"``).  ``Endian.little``
    is ``"little"``, with a warning."""

    _members: ClassVar[dict[str, str]] = {"little": "little", "big": "big"}


class BytesCodec(ArrayBytesCodec):
    """Fixed-size elements as raw bytes in C order.

    Parameters
    ----------
    endian : {"little", "big"} or None, default: this machine's byte order
        The byte order multi-byte elements are stored in; None only for data types whose
        elements have none (1-byte numbers, raw bytes).
    """

    name = "bytes"

    def __init__(self, endian: Any = sys.byteorder):
        endian = legacy_enum_value(endian, "endian", "BytesCodec")
        if endian not in (*ENDIAN, None):
            raise MetadataError(f"bytes codec: endian must be one of {list(ENDIAN)}, got {endian!r}")
        self.endian: str | None = endian

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BytesCodec:
        """The codec a metadata document describes; without an ``endian``, none (as for a
        1-byte data type).

        Raises
        ------
        ValueError
            If the document names another codec.
        """
        if isinstance(data, Mapping) and data.get("name") == cls.name:
            data = {"name": cls.name, "configuration": {"endian": None, **(data.get("configuration") or {})}}
        return super().from_dict(data)

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
