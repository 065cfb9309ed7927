"""The codec chain of an array, resolved once: array→array codecs, one array→bytes codec,
bytes→bytes codecs.

Both formats use it: a v3 array's ``codecs`` as they are, a v2 array's ``order``, ``filters`` and
``compressor`` as a transpose, the :class:`~zarrkit.codecs.v2.V2Filters` serialiser and the
compressor (see :func:`zarrkit.codecs.v2.v2_codecs`).

The engine sees four operations — :meth:`CodecChain.decode`, :meth:`CodecChain.decode_into` (a
stored chunk into a region of the output), :meth:`CodecChain.encode` and
:meth:`CodecChain.encode_transient` — and two capabilities asked once per array:
:attr:`CodecChain.decodes_into` (chunks decode straight into a caller's buffer, so the engine may
hand them over in buffers it reuses) and :attr:`CodecChain.stored_raw` (the stored bytes are the
chunk's memory itself: decoding is a copy).  Which codec can do what faster is settled here, once.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
from numcodecs.compat import ensure_bytes, ensure_contiguous_ndarray

from ..config import config
from ..errors import ChunkDecodeError, ChunkEncodeError, MetadataError, ValueEncodeError
from .base import ArrayArrayCodec, ArrayBytesCodec, BytesBytesCodec, ChunkSpec, V3Codec
from .buffers import copy_by_runs, held_at, is_view, place, runs_pay, scratch, selection_span

__all__ = ["CodecChain", "split_codecs", "check_vlen_count"]


def _span(first: Any, length: int) -> memoryview | None:
    """The ``length`` bytes from the start of ``first`` on, in the value holding ``first``
    (see :func:`~zarrkit.codecs.buffers.held_at`); None when they are not all there."""
    holder = first.obj if type(first) is memoryview else first
    try:
        whole = memoryview(holder).cast("B")
    except (TypeError, ValueError):  # (a holder that is not one flat run of bytes)
        return None
    start = held_at(first)[1] - np.frombuffer(whole, dtype=np.uint8).__array_interface__["data"][0]
    if start < 0 or start + length > len(whole):
        return None
    return whole[start : start + length]


def check_vlen_count(data: Any, nitems: int) -> None:
    """Check the item count heading a variable-length encoded chunk before it is decoded (the
    decoder allocates that many objects, so a corrupt count must not reach it)."""
    buf = ensure_contiguous_ndarray(data).reshape(-1).view(np.uint8)
    if buf.size < 4:
        raise ValueError(f"variable-length chunk of {buf.size} bytes has no 4-byte item count")
    count = int.from_bytes(buf[:4].tobytes(), "little")
    if count != nitems:
        raise ValueError(f"variable-length chunk holds {count} items, expected {nitems}")


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


def _memory_order(aa: Sequence[ArrayArrayCodec], ndim: int) -> Literal["C", "F"] | None:
    """'C' without array→array codecs, 'F' for one transpose reversing the dimensions (the
    encoded array is then the chunk's memory in F order), else None."""
    if not aa:
        return "C"
    if len(aa) == 1 and tuple(getattr(aa[0], "order", ())) == tuple(reversed(range(ndim))):
        return "F" if ndim > 1 else "C"
    return None


class CodecChain:
    """A codec chain resolved for chunks of one spec (shape, dtype, fill value)."""

    def __init__(self, codecs: Sequence[V3Codec], spec: ChunkSpec, key: str | None = None):
        aa, ab, bb = split_codecs(codecs, key)
        specs = [spec]
        resolved_aa: list[ArrayArrayCodec] = []
        try:
            for c in aa:
                c.validate(specs[-1])
                resolved_aa.append(c.evolve(specs[-1]))
                specs.append(c.resolve(specs[-1]))
            ab.validate(specs[-1])
        except MetadataError as exc:
            raise MetadataError(str(exc), key) from None
        self.aa = resolved_aa
        self.ab: ArrayBytesCodec = ab.evolve(specs[-1])
        self.bb: list[BytesBytesCodec] = [c.evolve(specs[-1]) for c in bb]
        self.specs = specs
        self.spec = spec
        self.chunk_shape: tuple[int, ...] = spec.shape
        self.dtype: np.dtype[Any] = spec.dtype
        self.codecs: tuple[V3Codec, ...] = (*self.aa, self.ab, *self.bb)
        self.nbytes: int = math.prod(self.chunk_shape) * self.dtype.itemsize
        #: whether a whole chunk is copied into a larger array by runs (asked once, not per chunk)
        self._by_runs = runs_pay(self.chunk_shape, self.dtype.itemsize)
        order = _memory_order(self.aa, len(spec.shape))
        #: memory order of the decoded chunk the fast paths work in
        self.order = order or "C"
        raw = self.ab.raw_dtype(specs[-1]) if order is not None else None
        if raw is not None and (raw.hasobject or self.dtype.hasobject):
            # stored bytes written straight into memory that holds references would become
            # pointers: never, whatever a serializer says (decided once, here, not per chunk)
            raw = None
        comp = self.bb[0] if len(self.bb) == 1 else None
        #: the dtype of a buffer chunks decode straight into (None: they never do)
        self._into_dtype = raw if raw is not None and (not self.bb or (comp and comp.decodes_into)) else None
        self.decodes_into: bool = self._into_dtype is not None
        self.stored_raw: bool = self.decodes_into and not self.bb
        self._comp = comp if self.decodes_into else None
        # compression of a whole chunk of raw memory in one call when written
        # (``raw is not None`` first: numpy takes ``None == dtype`` for float64)
        one_call = (
            raw is not None and raw == self.dtype and comp is not None and self.dtype.kind in "biufc"
            and self.dtype.type.__module__ == "numpy"  # not an ml_dtypes type (no buffer format)
        )
        self._one_call = comp if one_call else None
        self._transient = comp
        #: the decoded size of a chunk when the serializer's bytes are its memory: what the
        #: first compressor may inflate to at most (a small stored chunk cannot claim gigabytes)
        self._decode_limit = self.ab.max_encoded_size(specs[-1])
        #: array→array codecs that may refuse values (``cast_value``, ``scale_offset``): a
        #: write checks all its values with :meth:`check_values` before storing any chunk
        self.refuses_values: bool = any(c.elementwise for c in self.aa)

    def fixed_encoded_size(self) -> int | None:
        """The size every chunk encodes to, when the chain fixes it (a serializer of raw
        memory followed only by checksums, as a shard index is); None otherwise."""
        if self.ab.raw_dtype(self.specs[-1]) is None:
            return None
        size = self.ab.max_encoded_size(self.specs[-1])
        for c in self.bb:
            if size is None:
                return None
            size = c.encoded_size(size)
        return size

    def check_values(self, values: np.ndarray, key: str) -> None:
        """Run the elementwise array→array codecs on ``values`` (any shape) and raise
        :class:`~zarrkit.errors.ValueEncodeError` naming ``key`` when one refuses a value."""
        arr = values
        for c, s in zip(self.aa, self.specs[:-1]):
            if c.elementwise:
                try:
                    arr = c.encode(arr, s)
                except (ValueError, TypeError, OverflowError) as exc:
                    raise ValueEncodeError(f"{c.name}: {exc}", key) from None
            elif not c.moves_only:
                return  # not elementwise (delta, ...): chunks are checked as they encode

    # -- decoding ---------------------------------------------------------------------------
    def decode(self, raw: Any, key: str) -> np.ndarray:
        """The chunk stored as ``raw``: a new array, or a read-only view of ``raw``."""
        try:
            data = raw
            if self.bb:
                # every stage bounded: the last by what the serializer may take (the chunk's
                # size), earlier ones (and serializers of unbounded size: variable-length
                # items) by the largest chunk allowed at all
                cap = config.max_chunk_bytes
                last = len(self.bb) - 1
                for i, c in enumerate(reversed(self.bb)):
                    limit = self._decode_limit if i == last and self._decode_limit is not None else cap
                    data = c.decode_limited(data, limit)
            arr = self.ab.decode(data, self.specs[-1])
            for a, s in zip(reversed(self.aa), reversed(self.specs[:-1])):
                arr = a.decode(arr, s)
            return arr
        except ChunkDecodeError as exc:
            raise ChunkDecodeError(exc.reason, key) from None
        except Exception as exc:  # any codec failure means the stored bytes are bad
            raise ChunkDecodeError(f"cannot decode: {type(exc).__name__}: {exc}", key) from exc

    def decode_into(
        self,
        raw: Any,
        key: str,
        out: np.ndarray,
        out_selection: Any = Ellipsis,
        chunk_selection: Any = Ellipsis,
        complete: bool = True,
    ) -> None:
        """Decode the chunk stored as ``raw`` and put ``chunk[chunk_selection]`` into
        ``out[out_selection]`` (``complete``: the selection is the whole chunk).

        A complete chunk that is a contiguous view of ``out`` is decoded straight into it;
        otherwise a compressed chunk is decoded into this thread's reusable buffer (only the
        blocks holding the selection when the compressor can) and the part copied, and an
        uncompressed one is copied from its stored bytes.  The stored size is checked before a
        chunk-sized buffer is allocated, so a tiny corrupt chunk of an array that declares huge
        chunks fails without allocating.
        """
        if self.decodes_into:
            shape = self.chunk_shape
            if complete:
                target = out[out_selection]
                if target.shape == shape and is_view(target, out):
                    flags = target.flags
                    if (flags.c_contiguous or flags.f_contiguous) and self._into(raw, target, key):
                        return
                    if not self.stored_raw and out.dtype == self._into_dtype:
                        # not contiguous in the output: decode into this thread's buffer (of
                        # the chunk's shape and layout), copy
                        buf = self._scratch(raw, key, out.dtype)
                        self._decode_whole(raw, buf, key)
                        if self._by_runs:
                            copy_by_runs(target, buf)
                        else:
                            target[...] = buf
                        return
            elif not self.stored_raw:
                buf = self._scratch(raw, key, out.dtype)
                if self._span_into(raw, buf, key, chunk_selection) or self._into(raw, buf, key):
                    place(out, out_selection, buf[chunk_selection])
                    return
        chunk = self.decode(raw, key)
        place(out, out_selection, chunk if chunk_selection is Ellipsis else chunk[chunk_selection])

    @property
    def decodes_runs(self) -> bool:
        """Whether :meth:`decode_many` decodes chunks stored one after the other (and read
        together) with one call of the compressor for all of them."""
        return self._comp is not None and self._comp.decodes_frames

    def decode_many(self, raws: Sequence[Any], keys: Sequence[str], capacity: int) -> np.ndarray:
        """The stored chunks ``raws`` (of ``keys``; at most ``capacity``, none missing),
        decoded into this thread's buffer of ``capacity`` chunks: an array of ``len(raws)``
        chunks (each in the chain's memory order), valid until the thread's next call.
        Chunks whose bytes follow each other in one held value (see
        :func:`~zarrkit.codecs.buffers.held_at`) are decoded as :meth:`decode_joined` does."""
        n = len(raws)
        buf, chunks = self._run_buffer(n, capacity)
        where = [held_at(raw) for raw in raws] if self.decodes_runs else []
        i = 0
        while i < n:
            j = i + 1
            if where:
                holder, end = where[i][0], where[i][1] + len(raws[i])
                while j < n and where[j] == (holder, end):
                    end += len(raws[j])
                    j += 1
            span = _span(raws[i], end - where[i][1]) if j - i > 1 else None
            if span is None:
                for k in range(i, j):
                    self._decode_whole(raws[k], chunks[k], keys[k])
            else:
                self._decode_span(span, [len(raw) for raw in raws[i:j]], keys[i:j], buf[i:j], chunks[i:j])
            i = j
        return chunks

    def decode_joined(self, data: Any, lengths: Sequence[int], keys: Sequence[str], capacity: int) -> np.ndarray:
        """:meth:`decode_many` of the stored chunks held one after the other in ``data``
        (of ``lengths`` bytes each): each run of them that are each exactly one encoded value
        of the chunk's size (see ``frames_in_place`` of the compressor) decoded with one call
        (:attr:`decodes_runs`), the others one by one, as is a run that fails (which names
        the chunk at fault)."""
        buf, chunks = self._run_buffer(len(lengths), capacity)
        self._decode_span(memoryview(data).cast("B"), lengths, keys, buf, chunks)
        return chunks

    def _run_buffer(self, n: int, capacity: int) -> tuple[np.ndarray, np.ndarray]:
        """This thread's buffer of ``capacity`` chunks' bytes (rows), and its first ``n``
        rows as chunks."""
        buf = scratch((capacity, self.nbytes), np.dtype(np.uint8))
        shape = self.chunk_shape
        assert self._into_dtype is not None  # (only chains that decode into buffers have runs)
        typed = buf[:n].view(self._into_dtype)
        if self.order == "C":
            return buf, typed.reshape(n, *shape)
        # each chunk F-ordered: the reversed shape in C order, transposed
        return buf, typed.reshape(n, *shape[::-1]).transpose(0, *range(len(shape), 0, -1))

    def _decode_span(
        self, span: memoryview, lengths: Sequence[int], keys: Sequence[str], buf: np.ndarray, chunks: np.ndarray
    ) -> None:
        n = len(lengths)
        at = [0] * n
        for i in range(1, n):
            at[i] = at[i - 1] + lengths[i - 1]
        comp = self._comp
        if comp is not None and comp.decodes_frames:
            ok = comp.frames_in_place(span, at, lengths, self.nbytes)
        else:
            ok = [False] * n
        i = 0
        while i < n:
            j = i + 1
            while ok[i] and j < n and ok[j]:
                j += 1
            if j - i > 1:
                try:
                    assert comp is not None  # (ok only where it decodes frames)
                    comp.decode_frames_into(span[at[i] : at[j - 1] + lengths[j - 1]], buf[i:j])
                    i = j
                    continue
                except ValueError:
                    pass  # decoded one by one below, which names the chunk at fault
            for k in range(i, j):
                self._decode_whole(span[at[k] : at[k] + lengths[k]], chunks[k], keys[k])
            i = j

    def _fits(self, out: np.ndarray) -> bool:
        return (
            out.dtype == self._into_dtype
            and out.shape == self.chunk_shape
            and (out.flags.c_contiguous if self.order == "C" else out.flags.f_contiguous)
        )

    def _into(self, raw: Any, out: np.ndarray, key: str) -> bool:
        """Decode the whole chunk into ``out`` (its shape, contiguous in :attr:`order`), or
        return False when ``out`` is not such a buffer."""
        if not self._fits(out):
            return False
        self._decode_whole(raw, out, key)
        return True

    def _decode_whole(self, raw: Any, out: np.ndarray, key: str) -> None:
        """Decode the whole chunk into ``out``, a buffer that :meth:`_fits`."""
        mem = out if self.order == "C" else out.T
        try:
            if self._comp is not None:
                self._comp.decode_into(raw, mem)  # checks the decoded size itself
                return
            self._check_size(raw, key)
            mem.reshape(-1).view(np.uint8)[:] = np.frombuffer(raw, dtype=np.uint8)
        except ChunkDecodeError as exc:
            raise ChunkDecodeError(exc.reason, key) from None
        except Exception as exc:
            raise ChunkDecodeError(f"cannot decode: {type(exc).__name__}: {exc}", key) from exc

    def _span_into(self, raw: Any, buf: np.ndarray, key: str, selection: Any) -> bool:
        comp = self._comp
        if comp is None or not isinstance(selection, tuple) or not self._fits(buf):
            return False
        span = selection_span(selection, buf.strides, buf.itemsize)
        if span is None:
            return False
        try:
            return comp.decode_range_into(raw, buf if self.order == "C" else buf.T, span[0], span[1])
        except ChunkDecodeError as exc:
            raise ChunkDecodeError(exc.reason, key) from None
        except Exception as exc:
            raise ChunkDecodeError(f"cannot decode: {type(exc).__name__}: {exc}", key) from exc

    def _check_size(self, raw: Any, key: str) -> None:
        """Raise :class:`ChunkDecodeError` when ``raw`` declares a decoded size other than the
        chunk's (a look at the length or a frame header)."""
        try:
            size = len(raw) if self._comp is None else self._comp.declared_size(raw)
        except ValueError as exc:
            raise ChunkDecodeError(f"cannot decode: {exc}", key) from None
        if size is not None and size != self.nbytes:
            raise ChunkDecodeError(
                f"cannot decode: the stored chunk holds {size} bytes, expected {self.nbytes} for "
                f"chunk shape {self.chunk_shape} of {self.dtype}", key
            )

    def _scratch(self, raw: Any, key: str, dtype: np.dtype) -> np.ndarray:
        """This thread's buffer for a chunk; before one is allocated, the stored bytes must
        declare the chunk's size (the chunk shape comes from metadata, which may be corrupt)."""
        return scratch(self.chunk_shape, dtype, self.order, self._check_size, raw, key)

    # -- encoding ---------------------------------------------------------------------------
    def _encode_chunk(self, chunk: np.ndarray) -> Any:
        arr = chunk
        for c, s in zip(self.aa, self.specs[:-1]):
            arr = c.encode(arr, s)
        return self.ab.encode(arr, self.specs[-1])

    def encode(self, chunk: np.ndarray, key: str) -> bytes:
        """The bytes to store for ``chunk``: a new object, independent of ``chunk``."""
        try:
            comp = self._one_call
            if comp is not None and chunk.dtype == self.dtype:
                mem = chunk if self.order == "C" else chunk.T
                if mem.flags.c_contiguous:
                    out = comp.encode_array(mem)
                    if out is not None:
                        return out
            data = self._encode_chunk(chunk)
            for c in self.bb:
                data = c.encode(data)
            return data if type(data) is bytes else ensure_bytes(data)
        except ChunkEncodeError as exc:
            raise ChunkEncodeError(exc.reason, key) from None
        except Exception as exc:
            raise ChunkEncodeError(f"cannot encode: {type(exc).__name__}: {exc}", key) from exc

    def encode_transient(self, chunk: np.ndarray, key: str) -> Any:
        """:meth:`encode` for bytes stored at once: the result may be a view of ``chunk`` or of
        a buffer this thread reuses for its next call (no allocation per chunk)."""
        try:
            data = self._encode_chunk(chunk)
            if not self.bb:
                # the serialised chunk itself: as a byte view (stores take bytes-like values)
                return data.reshape(-1).view(np.uint8) if isinstance(data, np.ndarray) else data
            comp = self._transient
            if comp is not None:
                out = comp.encode_transient(data)
                if out is not None:
                    return out
            for c in self.bb:
                data = c.encode(data)
            return data
        except ChunkEncodeError as exc:
            raise ChunkEncodeError(exc.reason, key) from None
        except Exception as exc:
            raise ChunkEncodeError(f"cannot encode: {type(exc).__name__}: {exc}", key) from exc

    def to_json(self) -> list[dict[str, Any]]:
        return [c.to_json() for c in self.codecs]


# -- the largest stored chunk a chain writes ---------------------------------------------------

def _deflate_bound(n: int) -> int:
    # zlib's compressBound: stored blocks when nothing compresses, plus the stream's framing
    return n + (n >> 12) + (n >> 14) + (n >> 25) + 13


#: the most bytes each numcodecs compressor or checksum writes for ``n`` bytes: its format's
#: worst case for data that does not compress (the bounds its own library documents)
_WORST_CASE: dict[str, Callable[[int], int]] = {
    "zlib": _deflate_bound,
    "gzip": lambda n: _deflate_bound(n) + 12,  # gzip's header and trailer instead of zlib's
    "zstd": lambda n: n + (n >> 8) + ((128 * 1024 - n) >> 11 if n < 128 * 1024 else 0),  # ZSTD_compressBound
    "lz4": lambda n: 4 + n + n // 255 + 16,  # numcodecs' size header + LZ4_compressBound
    "blosc": lambda n: n + 16,  # BLOSC_MAX_OVERHEAD: c-blosc copies what does not compress
    "bz2": lambda n: n + n // 100 + 600,  # the bzip2 manual's output buffer size
    # xz stores what does not compress (3 bytes per 64 KiB); LZMA1 (FORMAT_ALONE, raw
    # filters) cannot, and grows incompressible data by about 1.5%
    "lzma": lambda n: n + n // 32 + 4096,
    "shuffle": lambda n: n,
    "base64": lambda n: 4 * (-(-n // 3)),
    "crc32": lambda n: n + 4,
    "crc32c": lambda n: n + 4,
    "adler32": lambda n: n + 4,
    "fletcher32": lambda n: n + 4,
    "jenkins_lookup3": lambda n: n + 4,
}

#: added to every bound, with 1/256 of the size: other writers frame the same format a little
#: differently (flushed deflate blocks, zstd frames split in several), and a stored object
#: that much larger is still harmless to read
_FRAMING_SLACK = 64


def max_compressed_size(codec: Any, size: int) -> int | None:
    """The most bytes the bytes→bytes ``codec`` (zarrkit's, or a v2 compressor wrapping a
    numcodecs codec) writes for ``size`` bytes; None when its format has no known bound."""
    fixed: int | None = codec.encoded_size(size)
    if fixed is not None:
        return fixed
    codec_id: str | None = getattr(getattr(codec, "codec", None), "codec_id", None)
    bound = None if codec_id is None else _WORST_CASE.get(codec_id)
    return None if bound is None else bound(size) + (size >> 8) + _FRAMING_SLACK


def max_stored_size(chain: CodecChain) -> int | None:
    """The largest stored object ``chain`` can write for one chunk: what its serializer
    writes at most, through each bytes→bytes codec's worst case; None when a codec has no
    bound (variable-length items, unknown codecs).  A larger stored object is not one of its
    chunks, and is refused from its size before it is read."""
    size = chain.ab.max_encoded_size(chain.specs[-1])
    for codec in chain.bb:
        if size is None:
            return None
        size = max_compressed_size(codec, size)
    return size
