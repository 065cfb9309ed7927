"""A resolved v3 codec chain: array→array codecs, one array→bytes codec, bytes→bytes codecs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import ChunkDecodeError, ChunkEncodeError, MetadataError
from .base import ArrayArrayCodec, ArrayBytesCodec, BytesBytesCodec, ChunkSpec, V3Codec
from .blosc_fast import (
    decompress_into as blosc_decompress_into,
    decompress_range_into as blosc_decompress_range_into,
)
from .chain import ChunkCodec, declared_size

__all__ = ["V3ChunkCodec", "split_codecs"]


def split_codecs(
    codecs: Sequence[V3Codec], key: str | None = None
) -> tuple[list[ArrayArrayCodec], ArrayBytesCodec, list[BytesBytesCodec]]:
    """Check the chain's shape (array→array*, array→bytes, bytes→bytes*) and split it."""
    aa: list[ArrayArrayCodec] = []
    ab: ArrayBytesCodec | None = None
    bb: list[BytesBytesCodec] = []
    for c in codecs:
        if isinstance(c, ArrayArrayCodec):
            if ab is not None:
                raise MetadataError(f"codecs: array→array codec {c.name!r} after the array→bytes codec", key)
            aa.append(c)
        elif isinstance(c, ArrayBytesCodec):
            if ab is not None:
                raise MetadataError(f"codecs: a second array→bytes codec {c.name!r}", key)
            ab = c
        elif isinstance(c, BytesBytesCodec):
            if ab is None:
                raise MetadataError(f"codecs: bytes→bytes codec {c.name!r} before the array→bytes codec", key)
            bb.append(c)
        else:
            raise MetadataError(f"codecs: {c!r} is not a codec", key)
    if ab is None:
        raise MetadataError("codecs: exactly one array→bytes codec (e.g. 'bytes') is required", key)
    return aa, ab, bb


class V3ChunkCodec(ChunkCodec):
    """A codec chain resolved for chunks of one spec (shape, dtype, fill value)."""

    def __init__(self, codecs: Sequence[V3Codec], spec: ChunkSpec, key: str | None = None):
        aa, ab, bb = split_codecs(codecs, key)
        specs = [spec]
        resolved_aa = []
        for c in aa:
            try:
                c.validate(specs[-1])
            except MetadataError as exc:
                raise MetadataError(str(exc), key) from None
            resolved_aa.append(c.evolve(specs[-1]))
            specs.append(c.resolve(specs[-1]))
        try:
            ab.validate(specs[-1])
        except MetadataError as exc:
            raise MetadataError(str(exc), key) from None
        self.aa = resolved_aa
        self.ab = ab.evolve(specs[-1])
        self.bb = [c.evolve(specs[-1]) for c in bb]
        self.specs = specs
        self.spec = spec
        self.chunk_shape = spec.shape
        self.dtype = spec.dtype
        self.codecs = tuple(self.aa) + (self.ab,) + tuple(self.bb)
        # Chains decoded straight into a buffer: ``bytes`` alone (a copy) or ``bytes`` + ``blosc``
        # (one c-blosc call); ``_into_dtype`` is the dtype such a buffer must have.
        stored = getattr(self.ab, "_stored_dtype", None)
        self._blosc = len(self.bb) == 1 and self.bb[0].name == "blosc"
        simple = stored is not None and not self.aa and (not self.bb or self._blosc)
        self._into_dtype = stored(self.dtype) if simple else None
        self.decodes_into = simple
        # bytes + blosc: written chunks are compressed into a reused buffer
        self._compress_transient = (
            getattr(self.bb[0], "encode_transient", None) if self._blosc and not self.aa else None
        )
        # bytes (native order) + blosc: small chunks are compressed in one call when written
        blosc = self.bb[0] if self._blosc and simple else None
        if (
            hasattr(blosc, "frame_args")
            and self._into_dtype == self.dtype
            and self.dtype.kind in "biufc"
            and blosc.typesize in (None, self.dtype.itemsize)
        ):
            self.blosc_frame = blosc.frame_args()
        self.decode_is_view = simple and not self.bb
        self.decodes_ranges = simple and self._blosc
        self.nbytes = int(np.prod(self.chunk_shape, dtype=np.int64)) * self.dtype.itemsize

    def _declared_size(self, raw: Any) -> int | None:
        return declared_size("blosc", raw) if self._blosc else len(raw)

    def decode(self, raw: Any, key: str) -> np.ndarray:
        try:
            data = raw
            for c in reversed(self.bb):
                data = c.decode(data)
            arr = self.ab.decode(data, self.specs[-1])
            for c, s in zip(reversed(self.aa), reversed(self.specs[:-1])):
                arr = c.decode(arr, s)
            return arr
        except ChunkDecodeError as exc:
            raise ChunkDecodeError(str(exc), key) from None
        except Exception as exc:  # any codec failure means the stored bytes are bad
            raise ChunkDecodeError(f"cannot decode: {type(exc).__name__}: {exc}", key) from exc

    def _fits(self, out: np.ndarray) -> bool:
        """Whether ``out`` is a buffer this chain decodes into."""
        return (
            out.dtype == self._into_dtype
            and out.shape == self.chunk_shape
            and out.flags.c_contiguous
        )

    def decode_into(self, raw: Any, out: np.ndarray, key: str) -> bool:
        if not self.decodes_into or not self._fits(out):
            return False
        try:
            if self._blosc:  # checks the frame's sizes itself
                blosc_decompress_into(raw, out)
                return True
            self.check_size(raw, key)
            out.reshape(-1).view(np.uint8)[:] = np.frombuffer(raw, dtype=np.uint8)
            return True
        except ChunkDecodeError as exc:
            raise ChunkDecodeError(str(exc), key) from None
        except Exception as exc:
            raise ChunkDecodeError(f"cannot decode: {type(exc).__name__}: {exc}", key) from exc

    def decode_range_into(self, raw: Any, out: np.ndarray, lo: int, hi: int, key: str) -> bool:
        if not self.decodes_ranges or not self._fits(out):
            return False
        try:
            return blosc_decompress_range_into(raw, out, lo, hi)
        except Exception as exc:
            raise ChunkDecodeError(f"cannot decode: {type(exc).__name__}: {exc}", key) from exc

    def encode_transient(self, chunk: np.ndarray, key: str) -> Any:
        if self._compress_transient is not None:
            try:
                data: Any = self.ab.encode(chunk, self.specs[-1])
                out = self._compress_transient(data)
            except Exception as exc:
                raise ChunkEncodeError(f"cannot encode: {type(exc).__name__}: {exc}", key) from exc
            if out is not None:
                return out
        return self.encode(chunk, key)

    def encode(self, chunk: np.ndarray, key: str) -> bytes:
        try:
            arr = chunk
            for c, s in zip(self.aa, self.specs[:-1]):
                arr = c.encode(arr, s)
            data: Any = self.ab.encode(arr, self.specs[-1])
            for c in self.bb:
                data = c.encode(data)
            # bytes, or a byte view of the chunk (stores copy or write it before returning)
            return data
        except Exception as exc:
            raise ChunkEncodeError(f"cannot encode: {type(exc).__name__}: {exc}", key) from exc

    def to_json(self) -> list[dict[str, Any]]:
        return [c.to_json() for c in self.codecs]
