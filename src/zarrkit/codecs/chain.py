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
from numcodecs.compat import ensure_bytes, ensure_contiguous_ndarray, ensure_ndarray_like

from ..errors import ChunkDecodeError, ChunkEncodeError
from .blosc_fast import (
    compress as blosc_compress,
    compress_transient as blosc_compress_transient,
    decompress_into as blosc_decompress_into,
    decompress_range_into as blosc_decompress_range_into,
    frame_sizes as blosc_frame_sizes,
)

__all__ = ["ChunkCodec", "V2ChunkCodec", "declared_size", "check_vlen_count"]

# Compressors whose ``decode(buf, out=...)`` writes straight into ``out`` without a temporary.
_DECODE_INTO_IDS = frozenset({"blosc", "lz4"})

#: Codecs whose encoded form starts with a 4-byte little-endian item count.
VLEN_IDS = frozenset({"vlen-utf8", "vlen-bytes", "vlen-array"})


def declared_size(codec_id: str | None, raw: Any) -> int | None:
    """The decoded size in bytes that the header of ``raw`` declares, for compressors whose
    frames carry one (Blosc: bytes 4-8 of its 16-byte header; numcodecs' LZ4: a 4-byte prefix);
    None for others.  Raises ValueError when the header itself is cut short.

    ``decode(raw, out=buffer)`` of these codecs accepts a buffer larger than the frame and
    leaves the rest of it untouched, so the size must be checked before decoding into one.
    """
    if codec_id == "blosc":
        return blosc_frame_sizes(raw)[0]
    if codec_id == "lz4":
        if len(raw) < 4:
            raise ValueError(f"lz4 frame of {len(raw)} bytes is shorter than its 4-byte header")
        return int.from_bytes(bytes(raw[:4]), "little", signed=True)
    return None


def check_vlen_count(data: Any, nitems: int) -> None:
    """Check the item count heading a variable-length encoded chunk before it is decoded (the
    decoder allocates that many objects, so a corrupt count must not reach it)."""
    buf = ensure_contiguous_ndarray(data).reshape(-1).view(np.uint8)
    if buf.size < 4:
        raise ValueError(f"variable-length chunk of {buf.size} bytes has no 4-byte item count")
    count = int.from_bytes(buf[:4].tobytes(), "little")
    if count != nitems:
        raise ValueError(f"variable-length chunk holds {count} items, expected {nitems}")


class ChunkCodec:
    """Interface of a resolved chunk codec.

    ``decode`` returns an array of exactly ``chunk_shape`` and the array's dtype (possibly
    read-only); ``decode_into`` decodes straight into a caller's buffer of that shape when the
    chain allows it and reports whether it did; ``encode`` returns the bytes to store.
    """

    chunk_shape: tuple[int, ...]
    dtype: np.dtype
    #: whether ``decode_into`` can ever succeed (callers skip allocating a buffer otherwise)
    decodes_into: bool = False
    #: whether ``decode`` returns a view of the stored bytes (no copy: uncompressed chunks), so
    #: copying its result into the output is already the one copy a read needs
    decode_is_view: bool = False

    def decode(self, raw: bytes, key: str) -> np.ndarray:
        raise NotImplementedError

    def decode_into(self, raw: bytes, out: np.ndarray, key: str) -> bool:
        """Decode straight into ``out`` (the chunk's shape and dtype, contiguous in the
        chain's order) and return True, or return False when this chain or ``out`` does not
        allow it."""
        return False

    #: whether ``decode_range_into`` can ever succeed
    decodes_ranges: bool = False

    def decode_range_into(self, raw: Any, out: np.ndarray, lo: int, hi: int, key: str) -> bool:
        """Decode at least bytes ``lo:hi`` (in memory order) of the chunk into the same bytes of
        ``out`` (as for :meth:`decode_into`), leaving other bytes possibly stale; return False,
        having written nothing, when only a whole decode would do (then call ``decode_into``)."""
        return False

    #: decoded size of a chunk in bytes (set by chains that decode into buffers)
    nbytes: int = 0

    def check_size(self, raw: Any, key: str) -> None:
        """Raise :class:`ChunkDecodeError` when ``raw`` declares a decoded size other than the
        chunk's: a cheap look at the length or a frame header, made before a buffer of the
        chunk's size is allocated for it (metadata may declare huge chunks)."""
        if not self.decodes_into:
            return
        try:
            size = self._declared_size(raw)
        except ValueError as exc:
            raise ChunkDecodeError(f"cannot decode: {exc}", key) from None
        if size is not None and size != self.nbytes:
            raise ChunkDecodeError(
                f"cannot decode: the stored chunk holds {size} bytes, expected {self.nbytes} for "
                f"chunk shape {self.chunk_shape} of {self.dtype}", key
            )

    def _declared_size(self, raw: Any) -> int | None:
        """The decoded size ``raw`` declares, when it can be told cheaply (else None)."""
        return None

    def encode(self, chunk: np.ndarray, key: str) -> bytes:
        raise NotImplementedError

    def encode_transient(self, chunk: np.ndarray, key: str) -> Any:
        """:meth:`encode` for bytes stored at once: the result may be a view of a buffer this
        thread reuses for its next ``encode_transient`` (no allocation per chunk)."""
        return self.encode(chunk, key)

    #: memory order of the encoded chunk
    order: str = "C"
    #: ``(cname, clevel, shuffle, blocksize)`` when the stored value is one Blosc frame of the
    #: chunk's memory (in ``order``, typesize the itemsize): set by chains that are Blosc alone
    blosc_frame: tuple[bytes, int, int, int] | None = None

    def encode_bytes(self, chunk: np.ndarray, key: str) -> bytes:
        """:meth:`encode` as a new ``bytes`` object, kept after the call (values written in
        batches); a Blosc-only chain compresses a chunk contiguous in its order in one call,
        which for small chunks costs less than the general path."""
        frame = self.blosc_frame
        if frame is not None and chunk.dtype == self.dtype and (
            chunk.flags.c_contiguous if self.order == "C" else chunk.flags.f_contiguous
        ):
            try:
                return blosc_compress(chunk, *frame)
            except Exception as exc:
                raise ChunkEncodeError(f"cannot encode: {type(exc).__name__}: {exc}", key) from exc
        data = self.encode(chunk, key)
        return data if type(data) is bytes else bytes(data)


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
        self.nbytes = self.nitems * dtype.itemsize
        self._codec_id = getattr(compressor, "codec_id", None)
        self.decodes_into = (
            not self.filters
            and not self.is_object
            and (compressor is None or self._codec_id in _DECODE_INTO_IDS)
        )
        self.decode_is_view = self.decodes_into and compressor is None
        self._blosc = self._codec_id == "blosc"
        self.decodes_ranges = self.decodes_into and self._blosc
        # numeric chunks under Blosc alone are compressed with one call when written
        if self._blosc and not self.filters and dtype.kind in "biufc":
            self.blosc_frame = (compressor.cname.encode(), compressor.clevel, compressor.shuffle,
                                compressor.blocksize)
        self._vlen_filter = next(
            (i for i, f in enumerate(self.filters) if getattr(f, "codec_id", None) in VLEN_IDS), None
        )

    def _declared_size(self, raw: Any) -> int | None:
        return len(raw) if self.compressor is None else declared_size(self._codec_id, raw)

    def decode(self, raw: bytes, key: str) -> np.ndarray:
        try:
            buf: Any = raw if self.compressor is None else self.compressor.decode(raw)
            for i in range(len(self.filters) - 1, -1, -1):
                if i == self._vlen_filter:
                    check_vlen_count(buf, self.nitems)
                buf = self.filters[i].decode(buf)
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
        if not self.decodes_into or out.dtype != self.dtype or out.shape != self.chunk_shape:
            return False
        if not (out.flags.c_contiguous if self.order == "C" else out.flags.f_contiguous):
            return False
        try:
            if self._blosc:  # checks the frame's sizes itself
                blosc_decompress_into(raw, out if self.order == "C" else out.T)
                return True
            self.check_size(raw, key)
            if self.compressor is None:
                (out if self.order == "C" else out.T).reshape(-1).view(np.uint8)[:] = np.frombuffer(
                    raw, dtype=np.uint8
                )
            else:
                self.compressor.decode(raw, out=(out if self.order == "C" else out.T).reshape(-1))
        except Exception as exc:
            raise ChunkDecodeError(f"cannot decode: {type(exc).__name__}: {exc}", key) from exc
        return True

    def decode_range_into(self, raw: Any, out: np.ndarray, lo: int, hi: int, key: str) -> bool:
        if not self.decodes_ranges or out.dtype != self.dtype or out.shape != self.chunk_shape:
            return False
        flat = out if self.order == "C" else out.T
        try:
            return blosc_decompress_range_into(raw, flat, lo, hi)
        except Exception as exc:
            raise ChunkDecodeError(f"cannot decode: {type(exc).__name__}: {exc}", key) from exc

    def encode_transient(self, chunk: np.ndarray, key: str) -> Any:
        if self.blosc_frame is not None:
            try:
                out = blosc_compress_transient(
                    chunk.reshape(-1, order=self.order), *self.blosc_frame, self.dtype.itemsize
                )
            except Exception as exc:
                raise ChunkEncodeError(f"cannot encode: {type(exc).__name__}: {exc}", key) from exc
            if out is not None:
                return out
        return self.encode(chunk, key)

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
