"""Decoding numcodecs codecs bounded by the chunk's size.

A stored chunk decodes to at most the chunk; :func:`decode_limited` stops a decode as soon as
its output exceeds that (deflate, bzip2, LZMA, zstd without a declared size), or refuses it
before decoding when a frame's header declares more (zstd, Blosc, LZ4, zfp): a small stored
chunk cannot make the reader allocate gigabytes.
"""

from __future__ import annotations

import bz2
import lzma
import zlib
from typing import Any, cast

from numcodecs.compat import ensure_bytes

from . import blosc, zstd
from .base import BytesBytesCodec
from .zfp import zfpy_frame

__all__ = ["NumcodecsBytes", "decode_limited", "declared_decoded_size"]


class NumcodecsBytes(BytesBytesCodec):
    """A bytes→bytes codec whose work a numcodecs codec (``codec``) does, decoded bounded by
    :func:`decode_limited`."""

    codec: Any

    def encode(self, data: Any) -> bytes:
        return cast(bytes, ensure_bytes(self.codec.encode(data)))  # numcodecs is untyped

    def decode(self, data: Any) -> Any:
        return self.codec.decode(data)

    def decode_limited(self, data: Any, limit: int) -> Any:
        return decode_limited(self.codec, data, limit)


def decode_limited(codec: Any, data: Any, limit: int) -> Any:
    """``codec.decode(data)``, stopped with a ``ValueError`` as soon as the output exceeds
    ``limit`` bytes where the format allows it (deflate, bzip2, LZMA), or before decoding
    when a header declares more (zstd, Blosc, LZ4): a small stored chunk cannot make the
    reader allocate gigabytes."""
    size: int | None
    cid = getattr(codec, "codec_id", None)
    if cid == "blosc":
        return blosc.decode_bounded(codec, data, limit)
    if cid == "zstd":
        return zstd.decode_bounded(codec, data, limit)
    if cid == "zfpy":
        data, size = zfpy_frame(data, limit)
    else:
        size = declared_decoded_size(codec, data)
    if size is not None:
        if size > limit:
            raise ValueError(f"{codec.codec_id}: the frame declares {size} bytes, more than the chunk's {limit}")
        return codec.decode(data)
    decompressor = _bounded_decompressor(codec)
    if decompressor is None:
        return codec.decode(data)
    out = decompressor.decompress(memoryview(data).cast("B"), limit + 1)
    if len(out) > limit or getattr(decompressor, "unconsumed_tail", None):
        raise ValueError(f"{codec.codec_id}: the data inflates to more than the chunk's {limit} bytes")
    if isinstance(decompressor, _ZLIB_DECOMPRESS):
        out += decompressor.flush()
    if not decompressor.eof:
        raise ValueError(f"{codec.codec_id}: the compressed data is cut short")
    return out


_ZLIB_DECOMPRESS = type(zlib.decompressobj())


def declared_decoded_size(codec: Any, data: Any) -> int | None:
    """The decoded size the header of ``data`` declares, for the numcodecs codecs whose frames
    have one (zstd when the frame says, Blosc, LZ4); None for the others (ValueError when the
    header itself is cut short)."""
    cid = getattr(codec, "codec_id", None)
    if cid == "zstd":
        return zstd.zstd_frame_size(data)
    if cid == "blosc":
        return blosc.frame_sizes(data)[0]
    if cid == "lz4":
        if len(data) < 4:
            raise ValueError(f"lz4 frame of {len(data)} bytes is shorter than its 4-byte header")
        return int.from_bytes(bytes(data[:4]), "little", signed=True)
    return None


def _bounded_decompressor(codec: Any) -> Any:
    """A streaming decompressor that can stop at a size, for the codecs that have one."""
    cid = getattr(codec, "codec_id", None)
    if cid in ("zlib", "gzip"):
        return zlib.decompressobj(47)  # zlib or gzip headers, detected
    if cid == "bz2":
        return bz2.BZ2Decompressor()
    if cid == "lzma" and getattr(codec, "format", lzma.FORMAT_XZ) != lzma.FORMAT_RAW:
        return lzma.LZMADecompressor(lzma.FORMAT_AUTO)
    return None
