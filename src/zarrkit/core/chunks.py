"""What reads and writes share: the per-array chunk context resolved once."""

from __future__ import annotations

import dataclasses
import threading
from typing import Any

import numpy as np

from ..codecs.blosc_fast import forget as forget_address, remember as remember_address
from ..codecs.chain import ChunkCodec
from .._threads import is_worker
from ..storage.base import Store


@dataclasses.dataclass(frozen=True, slots=True)
class ChunkContext:
    """Everything the per-chunk path needs, resolved once per array (never per chunk)."""

    store: Store
    prefix: str  # the array's key prefix: '' or 'path/to/array/'
    meta: Any  # ArrayMetadataV2 / ArrayMetadataV3
    codec: ChunkCodec
    shape: tuple[int, ...]
    chunk_shape: tuple[int, ...]  # the grid selections are projected on (inner chunks if sharded)
    dtype: np.dtype
    fill_value: Any
    sharding: Any = None  # the resolved sharding codec of a sharded array
    ragged: bool = False  # some chunks stick out of the array (the shape is not a multiple)
    #: what a chunk not stored reads as: the fill value, zero bytes of the dtype when there is
    #: none (None for object arrays)
    missing: Any = None

    @classmethod
    def build(cls, store: Store, path: str, meta: Any) -> ChunkContext:
        return cls(
            store=store,
            prefix=f"{path}/" if path else "",
            meta=meta,
            codec=meta.codec,
            shape=tuple(meta.shape),
            chunk_shape=tuple(meta.chunks),
            dtype=meta.dtype,
            fill_value=meta.fill_value,
            sharding=getattr(meta, "sharding", None),
            ragged=any(s % c for s, c in zip(meta.shape, meta.chunks)),
            missing=(
                np.zeros((), dtype=meta.dtype)[()]
                if meta.fill_value is None and meta.dtype.kind != "O"
                else meta.fill_value
            ),
        )

    def key(self, coords: tuple[int, ...]) -> str:
        """Store key of the stored object (chunk, or shard when sharded) at grid ``coords``."""
        return self.prefix + self.meta.chunk_key(coords)

    def key_function(self) -> Any:
        """:meth:`key` as one function of the coordinates, for per-chunk loops."""
        if not self.shape:
            return self.key
        head, sep = self.meta.chunk_key_parts()
        head = self.prefix + head
        join = sep.join
        return lambda coords: head + join(map(str, coords))

    def fill_chunk(self) -> np.ndarray:
        """A new writable chunk holding the fill value (zeros when there is none)."""
        return filled(self.chunk_shape, self.dtype, self.fill_value, self.meta.order)

    def is_edge(self, coords: tuple[int, ...]) -> bool:
        """Whether the chunk at ``coords`` (on the ``chunk_shape`` grid) sticks out of the array."""
        return self.ragged and any((c + 1) * cs > s for c, cs, s in zip(coords, self.chunk_shape, self.shape))


def is_view(target: np.ndarray, out: np.ndarray) -> bool:
    """Whether ``target`` (``out[selection]``) is a view of ``out``, not a fancy-index copy."""
    base = target.base
    return base is not None and (base is out or (out.base is not None and base is out.base))


_scratch = threading.local()


def _checked_scratch(
    codec: ChunkCodec, raw: Any, key: str, shape: tuple[int, ...], dtype: np.dtype, order: str
) -> np.ndarray:
    """This worker's buffer for a chunk; before one is allocated, the stored bytes must
    declare the chunk's size (the chunk shape comes from metadata, which may be corrupt)."""
    bufs = getattr(_scratch, "bufs", None)
    buf = bufs.get((shape, dtype, order)) if bufs is not None else None
    if buf is None:
        codec.check_size(raw, key)
        buf = scratch(shape, dtype, order)
    return buf


def scratch(shape: tuple[int, ...], dtype: np.dtype, order: str = "C") -> np.ndarray:
    """A per-thread reusable buffer for one decoded chunk.

    Decoding a chunk that is not contiguous in the output into a fresh array would map and
    fault in new pages for every chunk; a worker reuses one buffer per chunk layout instead.
    The buffer is only valid until the same thread asks for it again.
    """
    bufs = getattr(_scratch, "bufs", None)
    if bufs is None:
        bufs = _scratch.bufs = {}
    key = (shape, dtype, order)
    buf = bufs.get(key)
    if buf is None:
        if len(bufs) >= 4:
            for old in bufs.values():
                forget_address(old)
            bufs.clear()
        buf = bufs[key] = np.empty(shape, dtype=dtype, order=order)
        if is_worker():  # pool threads live as long as the pool: their buffers may be noted
            remember_address(buf)
    return buf


def decode_to_output(
    codec: ChunkCodec,
    raw: Any,
    key: str,
    p: Any,
    out: np.ndarray,
    chunk_shape: tuple[int, ...],
    order: str = "C",
) -> None:
    """Decode one stored chunk (projection ``p``) into its region of ``out``.

    A complete chunk that is a contiguous view of ``out`` is decoded straight into it; otherwise
    a compressed chunk is decoded into this worker's reusable buffer (when the codec chain can
    decode into one) and the needed part copied, and an uncompressed one is copied from its
    stored bytes; other chains return a new array.  The stored size is checked before a
    chunk-sized buffer is used, so a tiny corrupt chunk of an array that declares huge chunks
    fails without allocating.
    """
    if codec.decodes_into:
        if p.is_complete_chunk:
            target = out[p.out_selection]
            if target.shape == chunk_shape and is_view(target, out):
                # the codec checks the layout too; this look at the flags spares the call for
                # the usual case of a chunk strided in the output (per chunk, tiny chunks)
                flags = target.flags
                if (flags.c_contiguous or flags.f_contiguous) and codec.decode_into(raw, target, key):
                    return
                if not codec.decode_is_view:
                    # not contiguous in the output: decode into this worker's buffer, then copy
                    buf = _checked_scratch(codec, raw, key, chunk_shape, out.dtype, order)
                    if codec.decode_into(raw, buf, key):
                        target[...] = buf
                        return
        elif not codec.decode_is_view:
            # part of a chunk: decode into this worker's buffer (no fresh pages) only the blocks
            # holding the part when the chain can, else the whole chunk; take the part
            buf = _checked_scratch(codec, raw, key, chunk_shape, out.dtype, order)
            sel = p.chunk_selection
            if (codec.decodes_ranges and _decode_span(codec, raw, key, buf, sel)) or (
                codec.decode_into(raw, buf, key)
            ):
                out[p.out_selection] = buf[sel]
                return
    # a new array, or a view of the stored bytes (uncompressed): copied once into ``out``
    chunk = codec.decode(raw, key)
    out[p.out_selection] = chunk[p.chunk_selection]


def selection_span(selection: tuple[Any, ...], strides: tuple[int, ...], itemsize: int) -> Any:
    """``(lo, hi)``: the bytes of a C- or F-contiguous buffer (``strides``) that ``selection``
    (ints, positive-step slices and integer arrays, one per dimension, as chunk selections are)
    reads lie in ``buf[lo:hi]``; None for anything else or an empty selection."""
    lo = hi = 0
    if len(selection) != len(strides):
        return None
    for s, stride in zip(selection, strides):
        if isinstance(s, slice):
            start, step = s.start or 0, s.step or 1
            if s.stop is None or step < 0 or s.stop <= start:
                return None
            first, last = start, start + (s.stop - 1 - start) // step * step
        elif isinstance(s, np.ndarray):
            if s.size == 0 or s.dtype.kind not in "iu":
                return None
            first, last = int(s.min()), int(s.max())
        elif isinstance(s, (int, np.integer)):
            first = last = int(s)
        else:
            return None
        lo += first * stride
        hi += last * stride
    return lo, hi + itemsize


def _decode_span(codec: ChunkCodec, raw: Any, key: str, buf: np.ndarray, sel: Any) -> bool:
    span = selection_span(sel, buf.strides, buf.itemsize)
    return span is not None and codec.decode_range_into(raw, buf, span[0], span[1], key)


def filled(shape: tuple[int, ...], dtype: np.dtype, fill_value: Any, order: str = "C") -> np.ndarray:
    if fill_value is None:
        if dtype.kind == "O":
            return np.empty(shape, dtype=dtype, order=order)
        return np.zeros(shape, dtype=dtype, order=order)
    if dtype.kind == "O":
        out = np.empty(shape, dtype=dtype, order=order)
        out.fill(fill_value)
        return out
    return np.full(shape, fill_value, dtype=dtype, order=order)


def is_all_fill(chunk: np.ndarray, fill_value: Any) -> bool:
    """Whether every element of ``chunk`` equals the fill value (NaN equals NaN)."""
    if fill_value is None:
        if chunk.dtype.kind == "O":
            return all(v is None for v in chunk.flat)
        fill_value = np.zeros((), dtype=chunk.dtype)[()]
    if chunk.dtype.kind in "fc":
        fv = np.asarray(fill_value, dtype=chunk.dtype)
        if chunk.size and fv.ndim == 0 and not np.isnan(fv):
            # most chunks of real data differ from the fill value at once: look at two
            # elements before comparing all of them
            first, last = chunk.flat[0], chunk.flat[-1]
            if first != fv or last != fv:
                return False
        if np.isnan(fv).any():
            same = (chunk == fv) | (np.isnan(chunk) & np.isnan(fv))
            return bool(np.all(same))
        return bool(np.all(chunk == fv))
    if chunk.dtype.kind == "V" or chunk.dtype.names:
        fv = np.asarray(fill_value, dtype=chunk.dtype)
        return np.ascontiguousarray(chunk).tobytes() == fv.tobytes() * chunk.size
    try:
        return bool(np.all(chunk == fill_value))
    except (TypeError, ValueError):
        return False
