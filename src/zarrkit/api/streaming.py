"""Copying an array chunk by chunk: the creation arguments of a copy, and the streaming copy
itself (one destination chunk, or shard, at a time, so memory stays bounded)."""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from typing import Any

import numcodecs
import numpy as np
from numcodecs.abc import Codec

from ..codecs.v3_builtin import TransposeCodec, VLenBytesCodec, VLenUTF8Codec
from ..config import config
from ..core.array import Array
from ..core.group import Group
from ..errors import CopyError
from ..metadata.grid import ChunkGrid, RegularGrid
from ..storage.base import Store
from ..storage.coerce import coerce_store
from ..storage.zip import ZipStore

__all__ = ["creation_kwargs", "iter_blocks", "stream_copy", "write_block"]


# -- opening what users pass as a store -----------------------------------------------------------
def _open_store(store: Any, mode: str) -> tuple[Store, bool]:
    """``(store, we_opened_it)``: paths and URLs are opened here (and must be closed here); a
    ``*.zip`` path opened for writing is truncated, as zarr-python 2's ``save`` did."""
    if isinstance(store, (str, os.PathLike)):
        path = os.fspath(store)
        if isinstance(path, str) and "://" not in path and path.endswith(".zip") and not os.path.isdir(path):
            return ZipStore(path, mode="r" if mode == "r" else "w" if mode == "w" else "a"), True
        return coerce_store(store, read_only=(mode == "r")), True
    return coerce_store(store), False



# -- copying arrays: creation arguments and streaming ------------------------------------------------
_V2_CODEC_KEYS = ("compressor", "filters", "order", "object_codec")
_V3_CODEC_KEYS = ("compressors", "filters", "serializer")


def _is_zarrkit(obj: Any) -> bool:
    return isinstance(obj, (Array, Group))


def _is_h5py(obj: Any) -> bool:
    return obj is not None and type(obj).__module__.startswith("h5py")


def _to_numcodecs(codec: Any, what: str) -> Any:
    """The numcodecs object of a (v3 or numcodecs) codec, for a v2 array."""
    if isinstance(codec, Codec):
        return codec
    inner = getattr(codec, "codec", None)
    if isinstance(inner, Codec):
        return inner
    name = getattr(codec, "name", type(codec).__name__)
    raise CopyError(f"the {what} {name!r} has no Zarr v2 equivalent; give another one explicitly")


def _v2_codecs_of_v3(src: Array) -> dict[str, Any]:
    """v2 creation arguments (filters, compressor, order, object_codec) equivalent to the codec
    chain of a v3 array (the inner chain of a sharded one)."""
    meta = src.metadata
    out: dict[str, Any] = {"order": "C", "object_codec": None}
    filters = list(meta.filters or ())
    if filters and isinstance(filters[0], TransposeCodec):
        if tuple(filters[0].order) != tuple(reversed(range(len(meta.shape)))):
            raise CopyError(f"transpose order {list(filters[0].order)} has no Zarr v2 equivalent")
        out["order"] = "F"
        filters = filters[1:]
    out["filters"] = [_to_numcodecs(f, "filter") for f in filters] or None
    serializer = meta.serializer
    if isinstance(serializer, VLenUTF8Codec):
        out["object_codec"] = numcodecs.VLenUTF8()
    elif isinstance(serializer, VLenBytesCodec):
        out["object_codec"] = numcodecs.VLenBytes()
    compressors = [c for c in meta.compressors if getattr(c, "name", "") != "crc32c"]
    if len(compressors) > 1:
        raise CopyError(f"a Zarr v2 array takes one compressor; {src.name or '/'} has {len(compressors)}")
    out["compressor"] = _to_numcodecs(compressors[0], "compressor") if compressors else None
    return out


def _v2_codecs_of_v2(src: Array) -> dict[str, Any]:
    meta = src.metadata
    filters = list(meta.filters or ())
    object_codec = filters.pop(0) if meta.dtype.kind == "O" and filters else None
    return {
        "compressor": meta.compressor,
        "filters": filters or None,
        "order": meta.order,
        "object_codec": object_codec,
    }


def _cast_fill(fill: Any, src_dtype: np.dtype, dtype: np.dtype) -> Any:
    if fill is None or dtype == src_dtype or dtype.kind == "O":
        return fill
    with np.errstate(all="ignore"):
        return np.asarray(fill).astype(dtype)[()]


def creation_kwargs(src: Array, zarr_format: int, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Keyword arguments of :func:`zarrkit.create` that make an array like ``src`` in
    ``zarr_format``: same shape, dtype, chunks, codecs and fill value (translated between
    formats where needed), with ``overrides`` (user-given creation arguments) applied.

    Without overrides a v3 → v3 copy keeps the codec chain exactly (sharding included).
    """
    ov = dict(overrides or {})
    meta = src.metadata
    dtype = np.dtype(ov.get("dtype", src.dtype))
    kw: dict[str, Any] = {"shape": src.shape, "dtype": src.dtype}
    kw["fill_value"] = _cast_fill(meta.fill_value, src.dtype, dtype)
    edges = meta.declared_edges() if meta.chunk_shapes is not None else None
    kw["chunks"] = meta.chunks if edges is None or meta.shards else edges
    if zarr_format == 3:
        if src.zarr_format == 3:
            kw["chunk_key_encoding"] = meta.chunk_key_encoding.to_json()
            if meta.dimension_names is not None:
                kw["dimension_names"] = list(meta.dimension_names)
            touched = set(ov) & {"chunks", "shards", "dtype", "codecs", "compressor", *_V3_CODEC_KEYS, *_V2_CODEC_KEYS}
            if not touched:
                kw["chunks"] = meta.grid_chunks if edges is None else edges
                kw["codecs"] = [c.to_json() for c in meta.codecs]
            else:
                if meta.shards and "chunks" not in ov:
                    kw["shards"] = meta.shards if edges is None else edges
                if not set(ov) & {"codecs", "compressor", "compressors"}:
                    kw["compressors"] = list(meta.compressors)
                if not set(ov) & {"codecs", "filters"}:
                    kw["filters"] = list(meta.filters or ()) or None
                if not set(ov) & {"codecs", "serializer", "object_codec", "dtype"}:
                    kw["serializer"] = meta.serializer
        else:
            kw.update(_v2_codecs_of_v2(src))
            if meta.dimension_separator == "/":
                kw["chunk_key_encoding"] = {"name": "default", "configuration": {"separator": "/"}}
    else:
        kw.update(_v2_codecs_of_v2(src) if src.zarr_format == 2 else _v2_codecs_of_v3(src))
        if src.zarr_format == 2:
            kw["dimension_separator"] = meta.dimension_separator
    if "compressor" in ov:
        kw.pop("compressors", None)
    if "codecs" in ov:
        for k in ("compressor", "compressors", "filters", "serializer", "shards"):
            kw.pop(k, None)
    kw.update(ov)
    if kw.get("object_codec") is None:
        kw.pop("object_codec", None)
    return kw


def iter_blocks(
    shape: tuple[int, ...], block: tuple[int, ...] | ChunkGrid
) -> Iterator[tuple[tuple[int, ...], tuple[slice, ...]]]:
    """``(grid coords, region)`` of every block over ``shape``, in C order: the blocks of a
    chunk grid, or of a regular grid of ``block``-shaped blocks."""
    if not isinstance(block, ChunkGrid):
        if not all(block):
            return
        block = RegularGrid(shape, block)
    dims = block.dims
    for coords in itertools.product(*(range(d.n) for d in dims)):
        yield coords, tuple(slice(d.start(c), d.stop(c)) for d, c in zip(dims, coords))


def write_block(dest: Any) -> tuple[int, ...] | ChunkGrid:
    """The unit a streaming copy writes into ``dest`` at once: its shard, else its chunk (the
    grid of them for a zarrkit array)."""
    if isinstance(dest, Array):
        return dest.metadata.storage_grid
    chunks = getattr(dest, "chunks", None)
    if chunks:
        return tuple(chunks)
    return tuple(dest.shape)


def stream_copy(
    source: Any,
    dest: Any,
    *,
    units: Any = None,
    window_bytes: int = 16 * 2**20,
    threads: int | None = None,
    on_written: Callable[[tuple[int, ...], tuple[slice, ...], int], None] | None = None,
    stop: threading.Event | None = None,
) -> int:
    """Copy the data of ``source`` into ``dest`` (same shape) block by block: for every
    destination write unit (shard or chunk), read that region of the source and write it.

    At most ``window_bytes`` of blocks (and at least one) are in flight at once; with
    ``threads`` > 1 they are copied in parallel.  ``units`` restricts the copy to some
    ``(coords, region)`` blocks.  ``on_written(coords, region, nbytes)`` is called (in the
    calling thread) after each block is written.  Returns the number of bytes copied.
    """
    block = write_block(dest)
    if units is None:
        units = iter_blocks(tuple(dest.shape), block)
    itemsize = max(np.dtype(dest.dtype).itemsize, 1)
    block_shape = block.max_chunk_shape if isinstance(block, ChunkGrid) else block
    unit_bytes = max(int(np.prod(block_shape, dtype=np.int64)) * itemsize, 1)
    n_threads = config.threads if threads is None else threads
    window = max(1, min(n_threads, window_bytes // unit_bytes))

    def one(region: tuple[slice, ...]) -> int:
        data = source[region]
        dest[region] = data
        return int(getattr(data, "nbytes", 0))

    total = 0
    if window == 1 or not _is_zarrkit(dest):
        for coords, region in units:
            if stop is not None and stop.is_set():
                break
            n = one(region)
            total += n
            if on_written is not None:
                on_written(coords, region, n)
        return total

    executor = ThreadPoolExecutor(max_workers=window, thread_name_prefix="zarrkit-copy")
    pending: dict[Any, tuple[tuple[int, ...], tuple[slice, ...]]] = {}

    def drain(block_until: int) -> None:
        nonlocal total
        while len(pending) > block_until:
            done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
            for f in done:
                coords, region = pending.pop(f)
                n = f.result()
                total += n
                if on_written is not None:
                    on_written(coords, region, n)

    try:
        for coords, region in units:
            if stop is not None and stop.is_set():
                break
            drain(window - 1)
            pending[executor.submit(one, region)] = (coords, region)
        drain(0)
    except BaseException:
        # let running blocks finish (each is one atomic store write), start no more
        for f in pending:
            f.cancel()
        executor.shutdown(wait=True, cancel_futures=True)
        raise
    executor.shutdown(wait=True)
    return total
