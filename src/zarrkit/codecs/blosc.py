"""The ``blosc`` codec and its fast path: c-blosc called through its context API.

:class:`BloscCodec` is the v3 codec; :class:`V2Blosc` runs a v2 array's numcodecs ``Blosc``
compressor (through :class:`~zarrkit.codecs.v2.V2Compressor`) with the same fast path, so the
frames of both formats are checked, decoded and encoded by the code below.

numcodecs bundles c-blosc and exports its C functions.  Its Python-level ``decompress``
normalises both buffers and, on the main thread, goes through Blosc's global state; for the
small chunks of many arrays that costs several times the decompression itself.  Calling
``blosc_decompress_ctx`` directly (after the same header checks numcodecs makes) decodes
straight into the output with one C call that releases the GIL.  Where the symbols are not
available, :func:`decompress_into` falls back to numcodecs' function.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import struct
import threading
from collections.abc import Callable, Iterator
from typing import Any, ClassVar, Final, Literal, cast

import numcodecs
import numpy as np
from numcodecs import blosc as _nc_blosc
from numcodecs.compat import ensure_bytes, ensure_contiguous_ndarray

from ..errors import MetadataError
from ..storage.pool import is_busy
from .base import BytesBytesCodec, ChunkSpec
from .legacy_enums import LegacyStrEnum, legacy_enum_value

__all__ = [
    "BloscCodec",
    "BLOSC_CNAME",
    "BLOSC_SHUFFLE",
    "BloscCname",
    "BloscCnameLiteral",
    "BloscShuffle",
    "BloscShuffleLiteral",
    "V2Blosc",
    "compress",
    "compress_transient",
    "check_frame",
    "decompress_into",
    "decompress_range_into",
    "frame_sizes",
    "decode_bounded",
    "no_blosc_threads",
    "remember",
    "forget",
    "HEADER_SIZE",
]

HEADER_SIZE = 16
#: (decoded size, compressed size) from a Blosc header
_SIZES = struct.Struct("<4xI4xI").unpack_from
#: (flags, decoded size, block size, compressed size) from a Blosc header
_HEADER = struct.Struct("<2xB1xIII")
#: (version, flags, typesize, decoded size, block size, compressed size) from a Blosc header
_FIELDS = struct.Struct("<BxBBIII").unpack_from
#: header flag: the frame holds the data uncompressed after its header
_MEMCPYED = 0x02
#: header flag of a later format c-blosc 1.x refuses
_FUTURE_FLAG = 0x08
#: the one frame format c-blosc 1.x reads
_VERSION = 2


def _load(loader: Any = ctypes.CDLL) -> Any:
    try:
        lib = loader(_nc_blosc.__file__)
        fn = lib.blosc_decompress_ctx
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    fn.restype = ctypes.c_int
    return fn


def _load_compress(loader: Any = ctypes.CDLL) -> Any:
    try:
        fn = loader(_nc_blosc.__file__).blosc_compress_ctx
    except (OSError, AttributeError):
        return None
    fn.argtypes = [
        ctypes.c_int, ctypes.c_int, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_void_p,
        ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int,
    ]
    fn.restype = ctypes.c_int
    return fn


_compress_ctx = _load_compress()
_compress_ctx_holding_gil = _load_compress(ctypes.PyDLL)
#: c-blosc's limit on the size of one buffer
_MAX_BUFFER = 2**31 - 1 - HEADER_SIZE
_decompress_ctx = _load()
#: the same function called without releasing the GIL: for small frames, handing the GIL to
#: another thread and taking it back costs more than the decompression itself
_decompress_ctx_holding_gil = _load(ctypes.PyDLL)
SMALL_FRAME = 64 * 1024
_main_ident = threading.main_thread().ident

#: frames smaller than this are decoded by one thread: Blosc's own threads only pay off on
#: large chunks (and pool workers decode different chunks in parallel anyway)
BLOSC_THREADS_MIN_BYTES = 1 << 20


#: data addresses of long-lived buffers (the engine's per-worker scratch buffers), by id;
#: each entry holds its buffer, so the id cannot be reused while it is here
_known: dict[int, tuple[np.ndarray, int]] = {}


@contextlib.contextmanager
def no_blosc_threads() -> Iterator[None]:
    """While inside, numcodecs' Blosc calls made by the main thread use no threads of their
    own (as in any other thread): the engine is running chunks on its threads already, and
    the main thread is taking its share."""
    if threading.get_ident() != _main_ident:
        yield
        return
    previous = _nc_blosc.use_threads
    _nc_blosc.use_threads = False
    try:
        yield
    finally:
        _nc_blosc.use_threads = previous


_compressed = threading.local()

#: numcodecs' Blosc compression of a buffer into a new ``bytes`` frame (typesize: the
#: buffer's itemsize; threads as numcodecs' ``use_threads`` says)
compress: Callable[..., bytes] = _nc_blosc.compress


def compress_transient(
    data: np.ndarray, cname: bytes, clevel: int, shuffle: int, blocksize: int, typesize: int
) -> memoryview | None:
    """Blosc-compress the C-contiguous array ``data`` into this thread's reusable buffer and
    return a view of the frame, valid until the same thread calls this again (a chunk about
    to be stored: no memory is allocated per chunk).  The frame is the one numcodecs' Blosc
    makes outside the main thread (``blosc_compress_ctx``, one internal thread); ``shuffle``
    -1 is numcodecs' AUTOSHUFFLE.  Returns None where numcodecs would use Blosc's own threads
    (a lone chunk on the main thread) or cannot compress: the caller uses numcodecs then.
    """
    nbytes = data.nbytes
    use_threads = _nc_blosc.use_threads  # numcodecs' switch (False inside no_blosc_threads)
    if (
        _compress_ctx is None
        or not data.flags.c_contiguous
        or nbytes > _MAX_BUFFER
        or use_threads is True
        or (use_threads is None and threading.get_ident() == _main_ident)
    ):
        return None
    if shuffle == -1:
        shuffle = 2 if typesize == 1 else 1
    size = nbytes + HEADER_SIZE
    buf = getattr(_compressed, "buf", None)
    if buf is None or buf.size < size:
        buf = _compressed.buf = np.empty(size, dtype=np.uint8)
    fn = _compress_ctx_holding_gil if nbytes < SMALL_FRAME else _compress_ctx
    n = fn(clevel, shuffle, typesize, nbytes, data.__array_interface__["data"][0],
           buf.__array_interface__["data"][0], size, cname, blocksize, 1)
    if n <= 0:
        raise ValueError(f"blosc compression failed (error {n})")
    return memoryview(buf)[:n]


def remember(buf: np.ndarray) -> None:
    """Note the address of a buffer that will be decoded into many times (C-contiguous ones
    only: :func:`decompress_into` writes a noted buffer's bytes in order)."""
    if _decompress_ctx is not None and buf.flags.c_contiguous:
        _known[id(buf)] = (buf, buf.__array_interface__["data"][0])


def forget(buf: np.ndarray) -> None:
    _known.pop(id(buf), None)


def _address(buf: Any) -> Any:
    if isinstance(buf, bytes):
        return buf  # ctypes passes a pointer to the bytes object's data
    return np.frombuffer(buf, dtype=np.uint8).ctypes.data


def frame_sizes(raw: Any) -> tuple[int, int]:
    """``(decoded size, compressed size)`` from the header of the Blosc frame ``raw``; raises
    ValueError when the frame is shorter than its header."""
    try:
        return _SIZES(raw)
    except (struct.error, TypeError):
        n = len(raw) if isinstance(raw, bytes) else memoryview(raw).nbytes
        raise ValueError(
            f"blosc frame of {n} bytes is shorter than its {HEADER_SIZE}-byte header"
        ) from None


def check_frame(raw: Any, n: int | None = None) -> int:
    """Check that c-blosc can decode the Blosc frame ``raw`` (of ``n`` bytes, its length when
    not given) reading nothing outside it, and return its decoded size; ValueError, naming the
    field, for one it cannot.

    c-blosc is handed a pointer, never the frame's length.  It checks every block offset and
    every stream size (the int32 before each stream) of a frame against the compressed size
    in the frame's own header, and reads nothing past that size; a header declaring more than
    the frame holds sends it reading past the end (a segmentation fault: the fuzzer's frame
    of 87 bytes declared 872 MB, and a block at 671 MB).  So that size must be the frame's
    length (and the rest of the header what c-blosc 1.x reads).  The offsets and stream sizes
    are left to c-blosc: it has checked them since 1.16 (numcodecs bundles 1.21), a walk over
    them here would cost about as much as decompressing a small chunk, and the releases
    before 1.16, which did not check them, also decoded LZ4 with a function that reads past a
    stream's end whatever its size says, which no walk here could prevent.
    """
    try:
        version, flags, typesize, nbytes, blocksize, cbytes = _FIELDS(raw)
    except (struct.error, TypeError):
        frame_sizes(raw)  # raises the error that explains it
        raise
    nbytes = cast(int, nbytes)  # an unsigned field of the header: struct types its fields Any
    if n is None:
        n = len(raw) if type(raw) is bytes else memoryview(raw).nbytes
    if cbytes != n:
        raise ValueError(f"blosc header says {cbytes} compressed bytes, the frame has {n}")
    known = version == _VERSION and not flags & _FUTURE_FLAG and typesize
    if not (known and 0 < blocksize <= nbytes <= _MAX_BUFFER):
        if not nbytes:
            return 0  # an empty frame: c-blosc reads nothing past the header
        if not known:
            raise ValueError(f"blosc header of an unknown format (version {version}, flags "
                             f"{flags:#04x}, typesize {typesize})")
        raise ValueError(f"blosc header says {nbytes} bytes in blocks of {blocksize}: expected "
                         f"at most {_MAX_BUFFER} bytes in blocks of 1 to that size")
    if flags & _MEMCPYED:
        if cbytes != nbytes + HEADER_SIZE:
            raise ValueError(f"uncompressed blosc frame of {cbytes} bytes should hold {nbytes}")
    elif HEADER_SIZE + 4 * -(-nbytes // blocksize) > cbytes:
        raise ValueError(f"blosc frame of {cbytes} bytes is too short for the offsets of its "
                         f"{-(-nbytes // blocksize)} blocks")
    return nbytes


def decompress_into(raw: Any, out: np.ndarray) -> None:
    """Decompress the Blosc frame ``raw`` into the C-contiguous array ``out``, whose size must
    be the frame's decoded size.  Raises ValueError for a frame that does not fit ``out``.

    The frame's header is checked first: its compressed size must be the length of ``raw``
    (all :func:`check_frame` needs to make sure of, for c-blosc to read nothing outside the
    frame: made here without a call, on the path of every small chunk) and its decoded size
    the size of ``out``.
    """
    is_bytes = type(raw) is bytes
    try:
        nbytes, cbytes = _SIZES(raw)
    except (struct.error, TypeError):
        nbytes, cbytes = frame_sizes(raw)  # raises the error that explains it
    n = len(raw) if is_bytes else memoryview(raw).nbytes
    if cbytes != n or nbytes != out.nbytes:
        check_frame(raw, n)  # raises what is wrong with the frame, if anything
        raise ValueError(f"blosc frame holds {nbytes} bytes, expected {out.nbytes}")
    known = _known.get(id(out))
    if known is not None and nbytes < BLOSC_THREADS_MIN_BYTES:
        # a reused buffer (C-contiguous, address noted): the common case of small chunks
        address = known[1]
    elif (
        _decompress_ctx is None
        or not out.flags.c_contiguous
        or (
            nbytes >= BLOSC_THREADS_MIN_BYTES
            and threading.get_ident() == _main_ident
            and not is_busy()
        )
    ):
        # a large chunk read on its own by the main thread: numcodecs uses Blosc's global pool
        # of threads (a context would start and stop its own threads for every call)
        _nc_blosc.decompress(raw, out)
        return
    else:
        address = out.__array_interface__["data"][0]
    fn = _decompress_ctx_holding_gil if nbytes < SMALL_FRAME else _decompress_ctx
    got = fn(raw if is_bytes else _address(raw), address, nbytes, 1)
    if got != nbytes:
        check_frame(raw, n)  # a header c-blosc refuses: say what is wrong with it
        raise ValueError(f"blosc decompression failed (error {got})")


_frames = threading.local()


def _frame_buffer(nbytes: int) -> np.ndarray:
    """This thread's reusable buffer for the frames :func:`decompress_range_into` builds."""
    buf = getattr(_frames, "buf", None)
    if buf is None or buf.size < nbytes:
        buf = _frames.buf = np.empty(max(nbytes, 2 * buf.size if buf is not None else 0), np.uint8)
    return buf


def decompress_range_into(raw: Any, out: np.ndarray, lo: int, hi: int) -> bool:
    """Decode only the Blosc blocks holding bytes ``lo:hi`` of the frame's data into the same
    bytes of the C-contiguous array ``out`` (the frame's decoded size); the rest of ``out`` is
    left as it was.  Returns False, having written nothing, when every block is needed or the
    frame's block table is laid out in an unusual way: the caller then decodes the whole frame.
    Raises ValueError for a frame that does not fit ``out``.

    A Blosc frame is a 16-byte header, a table of block offsets and the blocks, each compressed
    on its own.  The blocks wanted are copied, with a header and table of their own, into a
    smaller frame that c-blosc decodes (and checks) like any other, straight to their place in
    ``out``: a small read from a large chunk decodes a block or two instead of the chunk.
    """
    try:
        flags, nbytes, blocksize, cbytes = _HEADER.unpack_from(raw)
    except (struct.error, TypeError):
        return False  # too short for a header: the whole-frame decode reports it
    if _decompress_ctx is None or not out.flags.c_contiguous or not 0 <= lo < hi <= nbytes:
        return False
    memcpyed = flags & _MEMCPYED
    if not memcpyed:
        if blocksize <= 0:
            return False
        nblocks = -(-nbytes // blocksize)
        b0, b1 = lo // blocksize, -(-hi // blocksize)
        if b1 - b0 >= nblocks:
            return False  # every block: the whole-frame decode (which checks the frame)
    view = memoryview(raw).cast("B") if not isinstance(raw, bytes) else raw
    n = len(view)
    if cbytes != n or nbytes != out.nbytes or (memcpyed and cbytes != nbytes + HEADER_SIZE):
        check_frame(view, n)  # raises what is wrong with the frame, if anything
        raise ValueError(f"blosc frame holds {nbytes} bytes, expected {out.nbytes}")
    if memcpyed:
        data = np.frombuffer(view, dtype=np.uint8, count=hi - lo, offset=HEADER_SIZE + lo)
        out.reshape(-1).view(np.uint8)[lo:hi] = data
        return True
    table_end = HEADER_SIZE + 4 * nblocks
    starts = np.frombuffer(view, dtype="<u4", count=nblocks, offset=HEADER_SIZE).astype(np.int64)
    ends = np.append(starts[1:], cbytes)
    if not (starts[0] >= table_end and np.all(starts < ends) and ends[-1] <= n):
        return False  # blocks not stored one after the other: decode the whole frame
    size = min(b1 * blocksize, nbytes) - b0 * blocksize
    if size < blocksize:
        return False  # a lone short last block: c-blosc wants room for a whole block
    k = b1 - b0
    head = HEADER_SIZE + 4 * k
    first, last = int(starts[b0]), int(ends[b1 - 1])
    total = head + last - first
    frame = _frame_buffer(total)
    frame[:4] = np.frombuffer(view, dtype=np.uint8, count=4)
    frame[4:HEADER_SIZE].view("<u4")[:] = (size, blocksize, total)
    frame[HEADER_SIZE:head].view("<u4")[:] = starts[b0:b1] - first + head
    frame[head:total] = np.frombuffer(view, dtype=np.uint8, count=last - first, offset=first)
    address = out.__array_interface__["data"][0] + b0 * blocksize
    fn = _decompress_ctx_holding_gil if size < SMALL_FRAME else _decompress_ctx
    got = fn(frame.ctypes.data, address, size, 1)
    if got != size:
        raise ValueError(f"blosc decompression failed (error {got})")
    return True


def decode_bounded(codec: Any, data: Any, limit: int) -> Any:
    """numcodecs' Blosc ``codec`` decoding the frame ``data``, refused with a ``ValueError``
    when its header declares more than ``limit`` bytes (or is not the frame's own: see
    :func:`check_frame`) before anything is allocated."""
    size = check_frame(data)  # its compressed size too: c-blosc reads as far as it says
    if size > limit:
        raise ValueError(f"{codec.codec_id}: the frame declares {size} bytes, more than the chunk's {limit}")
    return codec.decode(data)


class _BloscFrames(BytesBytesCodec):
    """What reads Blosc frames, whichever format wrote them: every frame checked before
    c-blosc sees it, decoded straight into a caller's buffer, or only the blocks a selection
    needs.  ``codec`` is the numcodecs ``Blosc`` that encodes and decodes the rest."""

    codec: Any
    _frame: tuple[bytes, int, int, int]

    def decode(self, data: Any) -> Any:
        check_frame(data)  # c-blosc would trust the frame's header
        return self.codec.decode(data)

    def decode_limited(self, data: Any, limit: int) -> Any:
        return decode_bounded(self.codec, data, limit)

    decodes_into = True

    def declared_size(self, data: Any) -> int | None:
        return frame_sizes(data)[0]

    #: c-blosc straight into ``out`` (checking the frame first), with no call in between
    decode_into = staticmethod(decompress_into)  # type: ignore[assignment]

    def decode_range_into(self, data: Any, out: np.ndarray, lo: int, hi: int) -> bool:
        return decompress_range_into(data, out, lo, hi)


_SHUFFLE_NAMES = {"noshuffle": 0, "shuffle": 1, "bitshuffle": 2}
_SHUFFLE_BY_NUMBER = {v: k for k, v in _SHUFFLE_NAMES.items()}

#: the ``shuffle`` settings of the ``blosc`` codec
BloscShuffleLiteral = Literal["noshuffle", "shuffle", "bitshuffle"]
BLOSC_SHUFFLE: Final = ("noshuffle", "shuffle", "bitshuffle")
#: the compressors (``cname``) of the ``blosc`` codec
BloscCnameLiteral = Literal["lz4", "lz4hc", "blosclz", "snappy", "zlib", "zstd"]
BLOSC_CNAME: Final = ("lz4", "lz4hc", "blosclz", "snappy", "zlib", "zstd")


class BloscShuffle(metaclass=LegacyStrEnum):
    """Deprecated: pass ``shuffle`` as a string (``"noshuffle"``, ``"shuffle"`` or
    ``"bitshuffle"``).  ``BloscShuffle.shuffle`` is ``"shuffle"``, with a warning."""

    _members: ClassVar[dict[str, str]] = {name: name for name in BLOSC_SHUFFLE}

    @staticmethod
    def from_int(num: int) -> str:
        """The shuffle's name for its number in a Zarr v2 ``blosc`` configuration (0, 1, 2).

        Raises
        ------
        ValueError
            For another number.
        """
        if num not in _SHUFFLE_BY_NUMBER:
            raise ValueError(f"shuffle: expected 0, 1 or 2, got {num!r}")
        return _SHUFFLE_BY_NUMBER[num]


class BloscCname(metaclass=LegacyStrEnum):
    """Deprecated: pass ``cname`` as a string (one of :data:`BLOSC_CNAME`).
    ``BloscCname.zstd`` is ``"zstd"``, with a warning."""

    _members: ClassVar[dict[str, str]] = {name: name for name in BLOSC_CNAME}


def _int_setting(value: Any, argument: str) -> int:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
        raise MetadataError(f"blosc: {argument} must be an int, got {value!r}")
    return int(value)


class BloscCodec(_BloscFrames):
    """Blosc meta-compression.

    Parameters
    ----------
    cname : str, default "zstd"
        The compressor, one of :data:`BLOSC_CNAME`.
    clevel : int, default 5
        Compression level, 0 to 9.
    shuffle : str, optional
        ``"noshuffle"``, ``"shuffle"`` or ``"bitshuffle"``.  When not given, the array's data
        type decides: ``"bitshuffle"`` for 1-byte elements, ``"shuffle"`` for larger ones.
    typesize : int, optional
        The element size the shuffle works with; when not given, the data type's.
    blocksize : int, default 0
        Bytes per Blosc block (0: chosen by Blosc).

    Notes
    -----
    Settings left to the data type are listed in ``_tunable_attrs``; until the codec is
    fitted to an array they read ``typesize=1`` and ``shuffle="bitshuffle"``.
    """

    name = "blosc"

    def __init__(
        self,
        cname: Any = "zstd",
        clevel: int = 5,
        shuffle: Any = None,
        typesize: int | None = None,
        blocksize: int = 0,
    ):
        tunable: set[str] = set()
        if typesize is None:
            typesize = 1
            tunable.add("typesize")
        if shuffle is None:
            shuffle = "bitshuffle"
            tunable.add("shuffle")
        cname = legacy_enum_value(cname, "cname", "BloscCodec")
        shuffle = legacy_enum_value(shuffle, "shuffle", "BloscCodec")
        if isinstance(shuffle, (int, np.integer)) and not isinstance(shuffle, bool):
            shuffle = _SHUFFLE_BY_NUMBER.get(int(shuffle), shuffle)
        if shuffle not in BLOSC_SHUFFLE:
            raise MetadataError(f"blosc: shuffle must be one of {list(BLOSC_SHUFFLE)}, got {shuffle!r}")
        if cname not in BLOSC_CNAME:
            raise MetadataError(f"blosc: cname must be one of {list(BLOSC_CNAME)}, got {cname!r}")
        clevel = _int_setting(clevel, "clevel")
        if not 0 <= clevel <= 9:
            raise MetadataError(f"blosc: clevel must be an int in 0..9, got {clevel!r}")
        typesize = _int_setting(typesize, "typesize")
        if typesize < 1:
            raise MetadataError(f"blosc: typesize must be a positive int, got {typesize!r}")
        blocksize = _int_setting(blocksize, "blocksize")
        if not 0 <= blocksize < 2**31:  # 0: Blosc chooses; Blosc takes a C int
            raise MetadataError(f"blosc: blocksize must be an int in 0..{2**31 - 1} (0: automatic), got {blocksize!r}")
        self._tunable_attrs = tunable
        self.cname: str = cname
        self.clevel = clevel
        self.shuffle: str = shuffle
        self.typesize = typesize
        self.blocksize = blocksize
        self._frame = (cname.encode(), clevel, _SHUFFLE_NAMES[shuffle], blocksize)

    @functools.cached_property
    def codec(self) -> Any:
        """numcodecs' ``Blosc`` with these settings (made when first used: a compressor this
        build of Blosc lacks is refused by :meth:`check_available`)."""
        return numcodecs.Blosc(cname=self.cname, clevel=self.clevel, shuffle=_SHUFFLE_NAMES[self.shuffle],
                               blocksize=self.blocksize)

    def check_available(self) -> None:
        if self.cname not in numcodecs.blosc.list_compressors():
            raise MetadataError(
                f"blosc: cname {self.cname!r} is not built into this Blosc library "
                f"(it has {numcodecs.blosc.list_compressors()})"
            )

    def __repr__(self) -> str:  # zarr-python 3's form
        return (
            f"BloscCodec(_tunable_attrs={self._tunable_attrs or set()!r}, typesize={self.typesize!r}, "
            f"cname={self.cname!r}, clevel={self.clevel!r}, shuffle={self.shuffle!r}, "
            f"blocksize={self.blocksize!r})"
        )

    def configuration(self) -> dict[str, Any]:
        return {"typesize": self.typesize, "cname": self.cname, "clevel": self.clevel,
                "shuffle": self.shuffle, "blocksize": self.blocksize}

    def evolve(self, spec: ChunkSpec) -> BloscCodec:
        if not self._tunable_attrs:
            return self
        itemsize = max(spec.dtype.itemsize, 1) if spec.dtype.kind not in "OT" else 1
        typesize = itemsize if "typesize" in self._tunable_attrs else self.typesize
        shuffle = self.shuffle
        if "shuffle" in self._tunable_attrs:
            shuffle = "bitshuffle" if itemsize == 1 else "shuffle"
        return BloscCodec(self.cname, self.clevel, shuffle, typesize, self.blocksize)

    def encode(self, data: Any) -> bytes:
        # numcodecs' Blosc takes the typesize from the buffer's itemsize.
        buf = ensure_contiguous_ndarray(data).view(np.uint8)
        ts = self.typesize or 1
        if ts > 1 and buf.size % ts == 0:
            buf = buf.view(f"V{ts}") if ts not in (2, 4, 8) else buf.view(f"u{ts}")
        return cast(bytes, ensure_bytes(self.codec.encode(buf)))  # numcodecs is untyped

    def encode_array(self, arr: np.ndarray) -> bytes | None:
        # the frame numcodecs makes for an array of this itemsize: the configured typesize's
        if self.typesize not in (None, arr.dtype.itemsize):
            return None
        return compress(arr, *self._frame)

    def encode_transient(self, data: Any) -> Any:
        """:meth:`encode` into this thread's reusable buffer (the same frame), or None."""
        buf = ensure_contiguous_ndarray(data).view(np.uint8)
        ts = self.typesize or 1
        typesize = ts if ts > 1 and buf.size % ts == 0 else 1
        return compress_transient(buf, *self._frame, typesize)


class V2Blosc(_BloscFrames):
    """numcodecs' ``Blosc`` compressor of a v2 array on the fast path: the frames it makes
    are numcodecs' own, each with its buffer's itemsize as the typesize (as zarr-python 2
    wrote them); :class:`~zarrkit.codecs.v2.V2Compressor` hands its Blosc work to this."""

    name = "blosc"

    def __init__(self, codec: Any):
        cname = getattr(codec, "cname", None)
        if not isinstance(cname, str):
            raise MetadataError(f"compressor: blosc cname must be a string, got {cname!r}")
        self.codec = codec
        self._frame = (cname.encode(), codec.clevel, codec.shuffle, codec.blocksize)

    def encode(self, data: Any) -> Any:
        return self.codec.encode(data)

    def encode_transient(self, data: Any) -> Any:
        if not isinstance(data, np.ndarray):
            return None
        arr = ensure_contiguous_ndarray(data)  # what numcodecs' Blosc takes the typesize from
        return compress_transient(arr.reshape(-1).view(np.uint8), *self._frame, arr.dtype.itemsize)

    def encode_array(self, arr: np.ndarray) -> bytes | None:
        return compress(arr, *self._frame)
