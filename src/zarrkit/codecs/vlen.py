"""The variable-length codecs: ``vlen-utf8`` strings and ``vlen-bytes`` byte strings.

numcodecs' ``VLenUTF8`` and ``VLenBytes`` do the framing; the chunk's item count is checked
against the frame's header before anything is allocated.
"""

from __future__ import annotations

from typing import Any, cast

import numcodecs
import numpy as np
from numcodecs.compat import ensure_bytes

from ..errors import MetadataError
from .base import ArrayBytesCodec, ChunkSpec
from .chain import check_vlen_count

__all__ = ["VLenUTF8Codec", "VLenBytesCodec"]


class _VLenCodec(ArrayBytesCodec):
    _impl: Any

    def to_dict(self) -> dict[str, Any]:
        # zarr-python's dict carries an empty configuration, which its JSON leaves out
        return {"name": self.name, "configuration": {}}

    def validate(self, spec: ChunkSpec) -> None:
        if spec.dtype.kind not in "OTU":
            raise MetadataError(f"{self.name} codec needs a variable-length string/bytes dtype, got {spec.dtype}")

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> bytes:
        flat = np.asarray(chunk, dtype=object).reshape(-1)
        return cast(bytes, ensure_bytes(self._impl.encode(flat)))  # numcodecs is untyped

    def decode(self, data: Any, spec: ChunkSpec) -> np.ndarray:
        n = int(np.prod(spec.shape, dtype=np.int64))
        check_vlen_count(data, n)
        arr: np.ndarray = self._impl.decode(data)
        if arr.size != n:
            raise ValueError(f"expected {n} items, got {arr.size}")
        arr = arr.reshape(spec.shape)
        if spec.dtype.kind == "T":
            arr = arr.astype(spec.dtype)
        return arr


class VLenUTF8Codec(_VLenCodec):
    """Variable-length UTF-8 strings (``vlen-utf8``)."""

    name = "vlen-utf8"

    def __init__(self) -> None:
        self._impl = numcodecs.VLenUTF8()


class VLenBytesCodec(_VLenCodec):
    """Variable-length byte strings (``vlen-bytes``)."""

    name = "vlen-bytes"

    def __init__(self) -> None:
        self._impl = numcodecs.VLenBytes()
