"""The v3 codecs of the core spec and its extensions, with numcodecs doing the kernels.

``bytes``, ``transpose``, ``gzip``, ``zstd``, ``blosc``, ``crc32c``, ``vlen-utf8``,
``vlen-bytes`` and the ``numcodecs.*`` names zarr-python 3 writes.
"""

from __future__ import annotations

import bz2
import ctypes
import lzma
import math
import struct
import sys
import zlib
from typing import Any

import numcodecs
import numpy as np
from numcodecs.compat import ensure_bytes, ensure_contiguous_ndarray

from ..errors import ChunkDecodeError, MetadataError
from . import blosc_fast
from .base import ArrayArrayCodec, ArrayBytesCodec, BytesBytesCodec, ChunkSpec
from .chain import check_vlen_count
from .zfp import zfpy_frame

__all__ = [
    "BytesCodec",
    "TransposeCodec",
    "GzipCodec",
    "ZstdCodec",
    "BloscCodec",
    "Crc32cCodec",
    "VLenUTF8Codec",
    "VLenBytesCodec",
    "NumcodecsArrayArrayCodec",
    "NumcodecsBytesBytesCodec",
]


# -- array → bytes ------------------------------------------------------------------------------
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
        buf = ensure_contiguous_ndarray(data).view(np.uint8)
        if buf.size != n * stored.itemsize:
            raise ValueError(f"expected {n * stored.itemsize} bytes for chunk shape {spec.shape} of {spec.dtype}, got {buf.size}")
        arr = buf.view(stored).reshape(spec.shape)
        if stored != spec.dtype:
            arr = arr.astype(spec.dtype)
        return arr



def _is_bytes_like(dtype: np.dtype) -> bool:
    # Types without byte order: 1-byte numbers, raw bytes, fixed byte strings.
    return dtype.itemsize <= 1 or dtype.kind in "SV" and not dtype.names


class _VLenCodec(ArrayBytesCodec):
    _impl: Any

    def validate(self, spec: ChunkSpec) -> None:
        if spec.dtype.kind not in "OTU":
            raise MetadataError(f"{self.name} codec needs a variable-length string/bytes dtype, got {spec.dtype}")

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> bytes:
        flat = np.asarray(chunk, dtype=object).reshape(-1)
        return ensure_bytes(self._impl.encode(flat))

    def decode(self, data: Any, spec: ChunkSpec) -> np.ndarray:
        n = int(np.prod(spec.shape, dtype=np.int64))
        check_vlen_count(data, n)
        arr = self._impl.decode(data)
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


# -- array → array --------------------------------------------------------------------------------
class TransposeCodec(ArrayArrayCodec):
    """Permutes the chunk's dimensions: the encoded array is ``chunk.transpose(order)``."""

    name = "transpose"
    moves_only = True

    def __init__(self, order: Any):
        if isinstance(order, str):
            raise MetadataError(f"transpose: order must be a permutation list, got {order!r}")
        self.order = tuple(int(i) for i in order)
        if sorted(self.order) != list(range(len(self.order))):
            raise MetadataError(f"transpose: order {list(self.order)} is not a permutation")
        self.inverse = tuple(int(i) for i in np.argsort(self.order))

    def configuration(self) -> dict[str, Any]:
        return {"order": list(self.order)}

    def validate(self, spec: ChunkSpec) -> None:
        if len(self.order) != len(spec.shape):
            raise MetadataError(
                f"transpose: order {list(self.order)} has {len(self.order)} entries for a "
                f"{len(spec.shape)}-d chunk"
            )

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        return ChunkSpec(tuple(spec.shape[i] for i in self.order), spec.dtype, spec.fill_value)

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        return chunk.transpose(self.order)

    def decode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        return chunk.transpose(self.inverse)


class _NumcodecsWrapper:
    """What the ``numcodecs.<id>`` codecs share: a numcodecs codec under its v3 name, with the
    configuration kept as written in ``zarr.json`` (or as given), shown as zarr-python 3 shows
    it: ``Delta(codec_name='numcodecs.delta', codec_config={...})``."""

    name: str

    def __init__(self, name: str, codec: Any, config: dict[str, Any] | None = None):
        self.name = name
        self.codec = codec
        self._given = config

    def configuration(self) -> dict[str, Any]:
        if self._given is not None:
            return dict(self._given)
        return {k: v for k, v in self.codec.get_config().items() if k != "id"}

    def __repr__(self) -> str:
        return f"{type(self.codec).__name__}(codec_name={self.name!r}, codec_config={self.configuration()!r})"


class NumcodecsArrayArrayCodec(_NumcodecsWrapper, ArrayArrayCodec):
    """A numcodecs filter (delta, fixedscaleoffset, quantize, bitround, packbits, astype)."""

    def validate(self, spec: ChunkSpec) -> None:
        # numeric filters: a variable-length array needs an object codec before any of them
        if (spec.dtype.hasobject or spec.dtype.kind == "T") and self.codec.codec_id != "categorize":
            raise MetadataError(f"{self.name} codec cannot filter variable-length dtype {spec.dtype}")

    def _out_dtype(self, spec: ChunkSpec) -> np.dtype:
        for attr in ("astype", "encode_dtype"):
            v = getattr(self.codec, attr, None)
            if v is not None:
                return np.dtype(v)
        if self.codec.codec_id == "packbits":
            return np.dtype("u1")
        return spec.dtype

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        if self.codec.codec_id == "packbits":
            n = int(np.prod(spec.shape, dtype=np.int64))
            return ChunkSpec((1 + (n + 7) // 8,), np.dtype("u1"), 0)
        return ChunkSpec(spec.shape, self._out_dtype(spec), spec.fill_value)

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        out = np.asarray(self.codec.encode(np.ascontiguousarray(chunk)))
        return out.reshape(self.resolve(spec).shape)

    def decode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        out = np.asarray(self.codec.decode(np.ascontiguousarray(chunk)))
        return out.view(spec.dtype).reshape(spec.shape) if out.dtype != spec.dtype else out.reshape(spec.shape)


# -- bytes → bytes ------------------------------------------------------------------------------
class _NumcodecsBytes(BytesBytesCodec):
    codec: Any

    def encode(self, data: Any) -> bytes:
        return ensure_bytes(self.codec.encode(data))

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
    if cid == "zfpy":
        data, size = zfpy_frame(data, limit)
    elif cid == "blosc":
        # its compressed size too, not only the decoded one: c-blosc reads as far as it says
        size = blosc_fast.check_frame(data)
    else:
        size = declared_decoded_size(codec, data)
    if size is not None:
        if size > limit:
            raise ValueError(f"{codec.codec_id}: the frame declares {size} bytes, more than the chunk's {limit}")
        return codec.decode(data)
    if getattr(codec, "codec_id", None) == "zstd" and _ZSTD_STREAM is not None:
        return zstd_decode_upto(data, limit)  # (numcodecs would inflate a frame without a size whole)
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


class _ZstdBuffer(ctypes.Structure):  # ZSTD_inBuffer and ZSTD_outBuffer
    _fields_ = [("ptr", ctypes.c_void_p), ("size", ctypes.c_size_t), ("pos", ctypes.c_size_t)]


def _load_zstd_stream() -> Any:
    """zstd's streaming decompression, from the library numcodecs bundles and exports (None
    where it does not)."""
    try:
        lib = ctypes.CDLL(numcodecs.zstd.__file__)
        fns = (lib.ZSTD_createDStream, lib.ZSTD_decompressStream, lib.ZSTD_freeDStream,
               lib.ZSTD_isError, lib.ZSTD_getErrorName)
    except (OSError, AttributeError):
        return None
    create, stream, free, is_error, name = fns
    create.restype = ctypes.c_void_p
    create.argtypes = []
    stream.restype = ctypes.c_size_t
    stream.argtypes = [ctypes.c_void_p, ctypes.POINTER(_ZstdBuffer), ctypes.POINTER(_ZstdBuffer)]
    free.restype = ctypes.c_size_t
    free.argtypes = [ctypes.c_void_p]
    is_error.restype = ctypes.c_uint
    is_error.argtypes = [ctypes.c_size_t]
    name.restype = ctypes.c_char_p
    name.argtypes = [ctypes.c_size_t]
    return fns


_ZSTD_STREAM = _load_zstd_stream()


def zstd_decode_upto(data: Any, limit: int) -> np.ndarray:
    """Decode zstd frames (ones that do not declare their decoded size included) into at
    most ``limit`` bytes, stopping with a ``ValueError`` as soon as the output would exceed
    them: the output grows as it fills, so a small bomb allocates nothing near what it
    claims."""
    create, stream, free, is_error, name = _ZSTD_STREAM
    src = np.frombuffer(memoryview(data).cast("B"), dtype=np.uint8)
    source = _ZstdBuffer(src.ctypes.data, src.nbytes, 0)
    out = np.empty(min(limit + 1, max(64 * 1024, 4 * src.nbytes)), dtype=np.uint8)
    total = 0
    zds = create()
    if not zds:
        raise MemoryError("zstd: cannot make a decompression stream")
    try:
        while True:
            if total == out.size:
                if out.size > limit:
                    raise ValueError(f"zstd: the data inflates to more than the chunk's {limit} bytes")
                grown = np.empty(min(2 * out.size, limit + 1), dtype=np.uint8)
                grown[:total] = out[:total]
                out = grown
            sink = _ZstdBuffer(out.ctypes.data + total, out.size - total, 0)
            before = source.pos
            ret = stream(zds, ctypes.byref(sink), ctypes.byref(source))
            if is_error(ret):
                raise ValueError(f"zstd: {name(ret).decode()}")
            total += sink.pos
            if total > limit:
                raise ValueError(f"zstd: the data inflates to more than the chunk's {limit} bytes")
            if source.pos == source.size and not ret:  # every frame read and flushed
                return out[:total]
            if not sink.pos and source.pos == before and total < out.size:
                # no input left for a frame not finished (or none taken)
                raise ValueError("zstd: the compressed data is cut short")
    finally:
        free(zds)


def declared_decoded_size(codec: Any, data: Any) -> int | None:
    """The decoded size the header of ``data`` declares, for the numcodecs codecs whose frames
    have one (zstd when the frame says, Blosc, LZ4); None for the others (ValueError when the
    header itself is cut short)."""
    cid = getattr(codec, "codec_id", None)
    if cid == "zstd":
        return zstd_frame_size(data)
    if cid == "blosc":
        return blosc_fast.frame_sizes(data)[0]
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



class GzipCodec(_NumcodecsBytes):
    """gzip (RFC 1952) compression."""

    name = "gzip"

    def __init__(self, level: int = 5):
        if not isinstance(level, int) or isinstance(level, bool) or not 0 <= level <= 9:
            raise MetadataError(f"gzip: level must be an int in 0..9, got {level!r}")
        self.level = level
        self.codec = numcodecs.GZip(level)

    def configuration(self) -> dict[str, Any]:
        return {"level": self.level}


class ZstdCodec(_NumcodecsBytes):
    """Zstandard compression, optionally with a content checksum."""

    name = "zstd"

    def __init__(self, level: int = 0, checksum: bool = False):
        if not isinstance(level, int) or isinstance(level, bool):
            raise MetadataError(f"zstd: level must be an int, got {level!r}")
        if not isinstance(checksum, bool):
            raise MetadataError(f"zstd: checksum must be a bool, got {checksum!r}")
        self.level = level
        self.checksum = checksum
        self.codec = numcodecs.Zstd(level=level, checksum=checksum)

    def configuration(self) -> dict[str, Any]:
        return {"level": self.level, "checksum": self.checksum}

    decodes_into = True

    def declared_size(self, data: Any) -> int | None:
        """The content size in the zstd frame header (None when the frame does not say)."""
        return zstd_frame_size(data)

    def decode_into(self, data: Any, out: np.ndarray) -> None:
        target = out.reshape(-1).view(np.uint8)
        size = self.declared_size(data)
        if size is None:  # a frame without its size: decoded apart (bounded), then copied
            decoded = zstd_decode_upto(data, target.nbytes) if _ZSTD_STREAM is not None else self.codec.decode(data)
            decoded = memoryview(ensure_bytes(decoded)).cast("B")
            if len(decoded) != target.nbytes:
                raise ValueError(f"zstd: decoded {len(decoded)} bytes, expected {target.nbytes}")
            target[...] = np.frombuffer(decoded, dtype=np.uint8)
            return
        if size != target.nbytes:
            raise ValueError(f"zstd: the frame holds {size} bytes, expected {target.nbytes}")
        if size:
            self.codec.decode(data, out=target)


def zstd_frame_size(data: Any) -> int | None:
    """The content size a zstd frame's header declares (None when it does not say)."""
    head = bytes(memoryview(data).cast("B")[:18])
    if len(head) < 5 or head[:4] != b"\x28\xb5\x2f\xfd":
        raise ValueError("not a zstd frame")
    fhd = head[4]
    fcs_flag, single, dict_flag = fhd >> 6, (fhd >> 5) & 1, fhd & 3
    pos = 5 + (0 if single else 1) + (0, 1, 2, 4)[dict_flag]
    size = (1 if single else 0, 2, 4, 8)[fcs_flag]
    if size == 0:
        return None
    if len(head) < pos + size:
        raise ValueError("zstd frame header cut short")
    value = int.from_bytes(head[pos : pos + size], "little")
    return value + 256 if size == 2 else value


_SHUFFLE_NAMES = {"noshuffle": 0, "shuffle": 1, "bitshuffle": 2}
_SHUFFLE_BY_NUMBER = {v: k for k, v in _SHUFFLE_NAMES.items()}


class BloscCodec(_NumcodecsBytes):
    """Blosc meta-compression; ``typesize`` comes from the dtype when not given."""

    name = "blosc"

    def __init__(
        self,
        cname: str = "lz4",
        clevel: int = 5,
        shuffle: str | int | None = "shuffle",
        typesize: int | None = None,
        blocksize: int = 0,
    ):
        if isinstance(shuffle, int) and not isinstance(shuffle, bool):
            shuffle = _SHUFFLE_BY_NUMBER.get(shuffle, shuffle)
        if shuffle is None:
            shuffle = "shuffle"
        if shuffle not in _SHUFFLE_NAMES:
            raise MetadataError(f"blosc: shuffle must be one of {list(_SHUFFLE_NAMES)}, got {shuffle!r}")
        if cname not in numcodecs.blosc.list_compressors():
            raise MetadataError(f"blosc: cname must be one of {numcodecs.blosc.list_compressors()}, got {cname!r}")
        if not isinstance(clevel, int) or not 0 <= clevel <= 9:
            raise MetadataError(f"blosc: clevel must be an int in 0..9, got {clevel!r}")
        if typesize is not None and (not isinstance(typesize, int) or typesize < 1):
            raise MetadataError(f"blosc: typesize must be a positive int, got {typesize!r}")
        self.cname = cname
        self.clevel = clevel
        self.shuffle = shuffle
        self.typesize = typesize
        self.blocksize = blocksize
        self.codec = numcodecs.Blosc(cname=cname, clevel=clevel, shuffle=_SHUFFLE_NAMES[shuffle], blocksize=blocksize)
        self._frame = (cname.encode(), clevel, _SHUFFLE_NAMES[shuffle], blocksize)
        self._typesize_arg = typesize or 1

    def __repr__(self) -> str:  # zarr-python 3's form
        return (
            f"BloscCodec(_tunable_attrs=set(), typesize={self.typesize!r}, cname={self.cname!r}, "
            f"clevel={self.clevel!r}, shuffle={self.shuffle!r}, blocksize={self.blocksize!r})"
        )

    def configuration(self) -> dict[str, Any]:
        config: dict[str, Any] = {"cname": self.cname, "clevel": self.clevel, "shuffle": self.shuffle}
        if self.typesize is not None:
            config["typesize"] = self.typesize
        config["blocksize"] = self.blocksize
        return config

    def evolve(self, spec: ChunkSpec) -> BloscCodec:
        if self.typesize is not None:
            return self
        typesize = spec.dtype.itemsize if spec.dtype.kind not in "OT" else 1
        return BloscCodec(self.cname, self.clevel, self.shuffle, max(typesize, 1), self.blocksize)

    def encode(self, data: Any) -> bytes:
        # numcodecs' Blosc takes the typesize from the buffer's itemsize.
        buf = ensure_contiguous_ndarray(data).view(np.uint8)
        ts = self.typesize or 1
        if ts > 1 and buf.size % ts == 0:
            buf = buf.view(f"V{ts}") if ts not in (2, 4, 8) else buf.view(f"u{ts}")
        return ensure_bytes(self.codec.encode(buf))

    decodes_into = True

    def declared_size(self, data: Any) -> int | None:
        return blosc_fast.frame_sizes(data)[0]

    def decode(self, data: Any) -> Any:
        blosc_fast.check_frame(data)
        return self.codec.decode(data)

    #: c-blosc straight into ``out`` (checking the frame first), with no call in between
    decode_into = staticmethod(blosc_fast.decompress_into)  # type: ignore[assignment]

    def decode_range_into(self, data: Any, out: np.ndarray, lo: int, hi: int) -> bool:
        return blosc_fast.decompress_range_into(data, out, lo, hi)

    def encode_array(self, arr: np.ndarray) -> bytes | None:
        # the frame numcodecs makes for an array of this itemsize: the configured typesize's
        if self.typesize not in (None, arr.dtype.itemsize):
            return None
        return blosc_fast.compress(arr, *self._frame)

    def encode_transient(self, data: Any) -> Any:
        """:meth:`encode` into this thread's reusable buffer (the same frame), or None."""
        buf = ensure_contiguous_ndarray(data).view(np.uint8)
        ts = self.typesize or 1
        typesize = ts if ts > 1 and buf.size % ts == 0 else 1
        return blosc_fast.compress_transient(buf, *self._frame, typesize)


class Crc32cCodec(BytesBytesCodec):
    """Appends a CRC32C checksum (4 bytes, little-endian) and verifies it on decode."""

    name = "crc32c"

    def __init__(self) -> None:
        import google_crc32c

        value = google_crc32c.value
        # google-crc32c takes bytes or read-only arrays, not memoryviews: a read-only view of
        # the same memory, no copy
        self._crc = lambda buf: value(buf if isinstance(buf, bytes) else np.frombuffer(
            memoryview(buf).cast("B").toreadonly(), dtype=np.uint8))

    def encode(self, data: Any) -> bytes:
        b = ensure_bytes(data)
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


class NumcodecsBytesBytesCodec(_NumcodecsWrapper, _NumcodecsBytes):
    """A numcodecs compressor or checksum under its ``numcodecs.<id>`` name."""


class NumcodecsArrayBytesCodec(_NumcodecsWrapper, ArrayBytesCodec):
    """A numcodecs codec that turns arrays into bytes itself (``numcodecs.pcodec``,
    ``numcodecs.zfpy``), as zarr-python registers them: the chunk's serializer."""

    def validate(self, spec: ChunkSpec) -> None:
        # these codecs decode numbers: never a reason to view bytes as Python object references
        if spec.dtype.hasobject or spec.dtype.kind == "T":
            raise MetadataError(f"{self.name} codec cannot serialise variable-length dtype {spec.dtype}")

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> bytes:
        return bytes(memoryview(self.codec.encode(np.ascontiguousarray(chunk, dtype=spec.dtype))).cast("B"))

    def decode(self, data: Any, spec: ChunkSpec) -> np.ndarray:
        n = math.prod(spec.shape)
        out = np.asarray(decode_limited(self.codec, bytes(memoryview(data).cast("B")), n * spec.dtype.itemsize))
        if out.size != n:
            raise ValueError(f"{self.name}: decoded {out.size} elements, expected {n}")
        return out.reshape(-1).view(spec.dtype).reshape(spec.shape) if out.dtype != spec.dtype else out.reshape(spec.shape)


#: numcodecs codecs that are array→array under their ``numcodecs.<id>`` v3 names
_NUMCODECS_ARRAY = {"delta", "bitround", "fixedscaleoffset", "quantize", "packbits", "astype", "categorize"}
#: numcodecs codecs that serialise an array themselves (array→bytes), with the package each needs
NUMCODECS_SERIALIZERS = {"pcodec": "pcodec", "zfpy": "zfpy"}
#: numcodecs codecs that are bytes→bytes under their ``numcodecs.<id>`` v3 names
_NUMCODECS_BYTES = {
    "blosc", "lz4", "zstd", "zlib", "gzip", "bz2", "lzma", "shuffle",
    "crc32", "crc32c", "adler32", "fletcher32", "jenkins_lookup3", "base64",
}

NATIVE_LITTLE = sys.byteorder == "little"
