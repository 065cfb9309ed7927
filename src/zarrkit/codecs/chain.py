"""Chunk codecs: turn one chunk's stored bytes into an array of the chunk shape, and back.

A :class:`ChunkCodec` is resolved once per array (dtype, chunk shape, codecs) so the per-chunk path
does no lookups.  The v2 dialect's chain is filters → compressor over the chunk's bytes in C or F
order; the engine in ``core/`` only sees the :class:`ChunkCodec` interface.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numcodecs.abc import Codec
from numcodecs.compat import ensure_bytes, ensure_ndarray_like

from ..errors import ChunkDecodeError, ChunkEncodeError

__all__ = ["ChunkCodec", "V2ChunkCodec"]

# Compressors whose ``decode(buf, out=...)`` writes straight into ``out`` without a temporary.
_DECODE_INTO_IDS = frozenset({"blosc", "lz4"})


class ChunkCodec:
    """Interface of a resolved chunk codec.

    ``decode`` returns an array of exactly ``chunk_shape`` and the array's dtype (possibly
    read-only); ``decode_into`` decodes straight into a caller's buffer of that shape when the
    chain allows it and reports whether it did; ``encode`` returns the bytes to store.
    """

    chunk_shape: tuple[int, ...]
    dtype: np.dtype

    def decode(self, raw: bytes, key: str) -> np.ndarray:
        raise NotImplementedError

    def decode_into(self, raw: bytes, out: np.ndarray, key: str) -> bool:
        return False

    def encode(self, chunk: np.ndarray, key: str) -> bytes:
        raise NotImplementedError


class V2ChunkCodec(ChunkCodec):
    """Zarr v2 chain: ``filters`` (in order) then ``compressor`` over the chunk in ``order``."""

    def __init__(
        self,
        chunk_shape: tuple[int, ...],
        dtype: np.dtype,
        order: str,
        filters: Sequence[Codec] | None,
        compressor: Codec | None,
    ):
        self.chunk_shape = tuple(chunk_shape)
        self.dtype = dtype
        self.order = order
        self.filters = tuple(filters or ())
        self.compressor = compressor
        self.nitems = int(np.prod(self.chunk_shape, dtype=np.int64))
        self.is_object = dtype.kind == "O"
        self._can_decode_into = (
            not self.filters
            and not self.is_object
            and (compressor is None or getattr(compressor, "codec_id", None) in _DECODE_INTO_IDS)
        )

    def decode(self, raw: bytes, key: str) -> np.ndarray:
        try:
            buf: Any = raw if self.compressor is None else self.compressor.decode(raw)
            for f in reversed(self.filters):
                buf = f.decode(buf)
            if self.is_object:
                arr = np.asarray(buf, dtype=object)
            else:
                arr = ensure_ndarray_like(buf)
                if arr.dtype != self.dtype:
                    arr = arr.reshape(-1, order="A").view(self.dtype)
            if arr.size != self.nitems:
                raise ValueError(
                    f"expected {self.nitems} items of {self.dtype} for chunk shape "
                    f"{self.chunk_shape}, got {arr.size}"
                )
            return arr.reshape(self.chunk_shape, order=self.order)
        except ChunkDecodeError:
            raise
        except Exception as exc:  # any codec failure means the stored bytes are bad
            raise ChunkDecodeError(f"cannot decode: {type(exc).__name__}: {exc}", key) from exc

    def decode_into(self, raw: bytes, out: np.ndarray, key: str) -> bool:
        if not self._can_decode_into or out.dtype != self.dtype or out.shape != self.chunk_shape:
            return False
        if self.order == "C":
            if not out.flags.c_contiguous:
                return False
            flat = out.reshape(-1)
        else:
            if not out.flags.f_contiguous:
                return False
            flat = out.T.reshape(-1)
        try:
            if self.compressor is None:
                if len(raw) != flat.nbytes:
                    raise ValueError(f"expected {flat.nbytes} bytes, got {len(raw)}")
                flat.view(np.uint8)[:] = np.frombuffer(raw, dtype=np.uint8)
            else:
                self.compressor.decode(raw, out=flat)
        except Exception as exc:
            raise ChunkDecodeError(f"cannot decode: {type(exc).__name__}: {exc}", key) from exc
        return True

    def encode(self, chunk: np.ndarray, key: str) -> bytes:
        try:
            data: Any = chunk.reshape(-1, order=self.order)
            if not self.is_object and not data.flags.c_contiguous:
                data = np.ascontiguousarray(data)
            for f in self.filters:
                data = f.encode(data)
            if self.compressor is not None:
                data = self.compressor.encode(data)
            return data if isinstance(data, bytes) else ensure_bytes(data)
        except Exception as exc:
            raise ChunkEncodeError(f"cannot encode: {type(exc).__name__}: {exc}", key) from exc
