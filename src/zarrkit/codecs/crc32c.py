"""The ``crc32c`` codec: a CRC32C checksum appended to the bytes, verified on decode."""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

import numpy as np
from numcodecs.compat import ensure_bytes

from ..errors import ChunkDecodeError
from .base import BytesBytesCodec

__all__ = ["Crc32cCodec"]


class Crc32cCodec(BytesBytesCodec):
    """Appends a CRC32C checksum (4 bytes, little-endian) and verifies it on decode."""

    name = "crc32c"

    def __init__(self) -> None:
        import google_crc32c

        value = google_crc32c.value
        # google-crc32c takes bytes or read-only arrays, not memoryviews: a read-only view of
        # the same memory, no copy
        self._crc: Callable[[Any], int] = lambda buf: value(buf if isinstance(buf, bytes) else np.frombuffer(
            memoryview(buf).cast("B").toreadonly(), dtype=np.uint8))

    def __getstate__(self) -> dict[str, Any]:
        return {}  # the checksum function is looked up again when unpickled

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__()  # type: ignore[misc]

    def encode(self, data: Any) -> bytes:
        b: bytes = ensure_bytes(data)
        return b + struct.pack("<I", self._crc(b))

    def decode(self, data: Any) -> Any:
        view = memoryview(data).cast("B") if not isinstance(data, bytes) else memoryview(data)
        if len(view) < 4:
            raise ChunkDecodeError(f"crc32c: expected at least 4 bytes, got {len(view)}")
        body = view[:-4]
        (stored,) = struct.unpack("<I", view[-4:])
        actual = self._crc(body)
        if actual != stored:
            raise ChunkDecodeError(f"crc32c checksum mismatch: stored {stored:#010x}, computed {actual:#010x}")
        return body

    def encoded_size(self, size: int) -> int:
        return size + 4
