"""Zarr v2's chunk encoding as codecs of the one chain.

A v2 array stores a chunk as its elements in ``order`` (C or F), passed through ``filters`` in
turn, then through ``compressor``.  In the chain that is: a transpose reversing the dimensions for
``order='F'``, the :class:`V2Filters` serialiser (the filters over the flattened chunk; with no
filters, the chunk's memory as it is), and the compressor as a :class:`V2Compressor`.  The
filters and the compressor are numcodecs codecs, called exactly as zarr-python 2 calls them, so
the bytes are the same.
"""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from typing import Any, cast

import numpy as np
from numcodecs.abc import Codec
from numcodecs.compat import ensure_contiguous_ndarray, ensure_ndarray_like

from ..config import config
from ..errors import MetadataError
from .base import ArrayBytesCodec, BytesBytesCodec, ChunkSpec, V3Codec
from .blosc import V2Blosc
from .bounded import declared_decoded_size, decode_limited
from .chain import check_vlen_count
from .transpose import TransposeCodec

__all__ = [
    "V2Filters", "V2Compressor", "v2_codecs", "check_codecs_allowed", "OBJECT_CODEC_IDS", "UNSAFE_CODEC_IDS",
]

#: Codecs whose encoded form starts with a 4-byte little-endian item count.
VLEN_IDS = frozenset({"vlen-utf8", "vlen-bytes", "vlen-array"})
#: Codecs that turn an array of Python objects into bytes and back: the first of an object
#: array's ``filters`` must be one of them (nothing else may see its elements).
OBJECT_CODEC_IDS = frozenset({*VLEN_IDS, "json2", "msgpack2", "pickle", "categorize"})
#: Codecs whose decoding can run code the data names (``pickle``: unpickling calls whatever
#: the stream says).  numcodecs' ``msgpack2`` and ``json2`` are not among them: their decoders
#: take no hooks, and their configuration, read from metadata, cannot add any.
UNSAFE_CODEC_IDS = frozenset({"pickle"})


def check_codecs_allowed(codecs: Sequence[Any], field: str, key: str | None = None) -> None:
    """Refuse, with :class:`~zarrkit.errors.MetadataError` naming ``field`` and ``key``, a codec
    that can run code named by the data it decodes, unless ``zarrkit.config.allow_unsafe_codecs``
    is set.  Checked when a chain is built (an array opened or created), before any chunk."""
    if config.allow_unsafe_codecs:
        return
    for c in codecs:
        codec_id = getattr(c, "codec_id", None)
        if codec_id in UNSAFE_CODEC_IDS:
            raise MetadataError(
                f"{field}: codec {codec_id!r} runs code named by the stored data when it decodes it; "
                f"expected no such codec, got {codec_id!r} (for data you trust, opt in with "
                "zarrkit.config.set(allow_unsafe_codecs=True))",
                key,
            )


def _unpickle(data: Any) -> Any:
    # numcodecs' Pickle.decode, without numcodecs' own process-wide switch: zarrkit's opt-in
    # (checked when the array was opened) is what allows it
    return pickle.loads(ensure_contiguous_ndarray(data))


class V2Filters(ArrayBytesCodec):
    """A v2 array's ``filters`` (numcodecs codecs, applied in order to the flattened chunk) as
    the chain's serialiser; with no filters, the chunk's memory as it is."""

    name = "v2-filters"

    def __init__(self, filters: Sequence[Codec] = ()):
        check_codecs_allowed(filters, "filters")
        self.filters: tuple[Any, ...] = tuple(filters)
        self._decoders = tuple(
            _unpickle if getattr(f, "codec_id", None) == "pickle" else f.decode for f in self.filters
        )
        #: filters whose frames are checked as a compressor's are (the bytes come from the
        #: store just the same, and Blosc and zfp trust their frames' headers)
        self._bounded = frozenset(
            i for i, f in enumerate(self.filters) if getattr(f, "codec_id", None) in ("blosc", "zfpy")
        )
        self._vlen = next(
            (i for i, f in enumerate(self.filters) if getattr(f, "codec_id", None) in VLEN_IDS), None
        )

    def configuration(self) -> dict[str, Any]:
        return {"filters": [f.get_config() for f in self.filters]}

    def raw_dtype(self, spec: ChunkSpec) -> np.dtype | None:
        # stored bytes are never the memory of elements that are references (object fields)
        return None if self.filters or spec.dtype.hasobject else spec.dtype

    def max_encoded_size(self, spec: ChunkSpec) -> int | None:
        if not self.filters:
            return super().max_encoded_size(spec)
        if spec.dtype.hasobject or self._vlen is not None or any(
            getattr(f, "codec_id", None) in ("json2", "msgpack2", "pickle") for f in self.filters
        ):
            return None
        # numeric filters (delta, astype, fixedscaleoffset, quantize, packbits...) give at
        # most 16 bytes per element (complex128), and a small header
        return int(np.prod(spec.shape, dtype=np.int64)) * max(spec.dtype.itemsize, 16) + 1024

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> Any:
        data: Any = chunk.reshape(-1)
        if spec.dtype.kind != "O" and not data.flags.c_contiguous:
            data = np.ascontiguousarray(data)
        for f in self.filters:
            data = f.encode(data)
        return data

    def decode(self, data: Any, spec: ChunkSpec) -> np.ndarray:
        nitems = int(np.prod(spec.shape, dtype=np.int64))
        buf = data
        for i in range(len(self.filters) - 1, -1, -1):
            if i == self._vlen:
                check_vlen_count(buf, nitems)
            if i in self._bounded:
                # the first filter decodes to the chunk itself: no larger than it
                first = i == 0 and not spec.dtype.hasobject
                limit = nitems * spec.dtype.itemsize if first else config.max_chunk_bytes
                buf = decode_limited(self.filters[i], buf, limit)
            else:
                buf = self._decoders[i](buf)
        if spec.dtype.kind == "O":
            arr = np.asarray(buf, dtype=object)
        else:
            arr = ensure_ndarray_like(buf)
            if arr.dtype != spec.dtype:
                if spec.dtype.hasobject:  # only its object codec's own array will do
                    raise ValueError(f"expected items of {spec.dtype}, got {arr.dtype}")
                arr = arr.reshape(-1, order="A").view(spec.dtype)
        if arr.size != nitems:
            raise ValueError(
                f"expected {nitems} items of {spec.dtype} for chunk shape {spec.shape}, got {arr.size}"
            )
        return arr.reshape(spec.shape)


class V2Compressor(BytesBytesCodec):
    """A v2 array's ``compressor`` (a numcodecs codec) in the chain; Blosc and LZ4 decode
    straight into a caller's buffer, Blosc also block ranges of a frame (Blosc's fast paths
    are :class:`~zarrkit.codecs.blosc.V2Blosc`'s, the v3 ``blosc`` codec's own)."""

    name = "v2-compressor"

    def __init__(self, codec: Codec):
        check_codecs_allowed([codec], "compressor")
        self.codec = codec
        self._id = codec.codec_id
        #: the Blosc codec doing this compressor's work, when it is Blosc
        self._blosc = V2Blosc(codec) if self._id == "blosc" else None
        self._decode = (
            _unpickle if self._id == "pickle" else self._blosc.decode if self._blosc is not None else codec.decode
        )
        self.decodes_into: bool = self._id in ("blosc", "lz4")
        if self._blosc is not None:
            # c-blosc straight into ``out`` (checking the frame first), no call in between
            self.decode_into = self._blosc.decode_into  # type: ignore[assignment]

    def configuration(self) -> dict[str, Any]:
        return cast(dict[str, Any], self.codec.get_config())  # numcodecs is untyped

    def encode(self, data: Any) -> Any:
        return self.codec.encode(data)

    def decode(self, data: Any) -> Any:
        return self._decode(data)

    def decode_limited(self, data: Any, limit: int) -> Any:
        if self._decode is _unpickle:
            return _unpickle(data)
        return decode_limited(self.codec, data, limit)

    def declared_size(self, data: Any) -> int | None:
        return declared_decoded_size(self.codec, data) if self.decodes_into else None

    def decode_into(self, data: Any, out: np.ndarray) -> None:
        size = self.declared_size(data)
        if size != out.nbytes:
            raise ValueError(f"the frame holds {size} bytes, expected {out.nbytes}")
        self.codec.decode(data, out=out.reshape(-1))

    def decode_range_into(self, data: Any, out: np.ndarray, lo: int, hi: int) -> bool:
        return self._blosc is not None and self._blosc.decode_range_into(data, out, lo, hi)

    def encode_transient(self, data: Any) -> Any:
        return None if self._blosc is None else self._blosc.encode_transient(data)

    def encode_array(self, arr: np.ndarray) -> bytes | None:
        return None if self._blosc is None else self._blosc.encode_array(arr)


def v2_codecs(
    ndim: int, order: str, filters: Sequence[Codec] | None, compressor: Codec | None
) -> list[V3Codec]:
    """The chain of a v2 array: ``[transpose (order 'F')], V2Filters, [V2Compressor]``."""
    codecs: list[V3Codec] = []
    if order == "F" and ndim > 1:
        codecs.append(TransposeCodec.reversing(ndim))
    codecs.append(V2Filters(filters or ()))
    if compressor is not None:
        codecs.append(V2Compressor(compressor))
    return codecs

