"""Copying an array chunk by chunk: the creation arguments of a copy, and the streaming copy
itself (one destination chunk, or shard, at a time, so memory stays bounded)."""

from __future__ import annotations

import itertools
import os
import threading
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from typing import Any, cast

import numpy as np

from ..codecs import TransposeCodec
from ..config import config
from ..core.array import Array
from ..core.group import Group
from ..core.pool import run_pipelined
from ..errors import CopyError, UnsupportedCodecError
from ..metadata.codec_args import v3_chain_to_v2
from ..metadata.grid import ChunkGrid, RegularGrid
from ..storage.base import Store
from ..storage.coerce import StoreLike, open_store
from ..storage.zip import ZipStore

__all__ = ["creation_kwargs", "iter_blocks", "stream_copy", "write_block"]


# -- opening what users pass as a store -----------------------------------------------------------
def _open_store(store: StoreLike, mode: str, storage_options: dict[str, Any] | None = None) -> tuple[Store, bool]:
    """``(store, we_opened_it)``: paths and URLs are opened here (and must be closed here), a
    URL with ``storage_options``; a ``*.zip`` path opened for writing is truncated, as
    zarr-python 2's ``save`` did."""
    if isinstance(store, (str, os.PathLike)):
        path = os.fspath(store)
        if isinstance(path, str) and "://" not in path and path.endswith(".zip") and not os.path.isdir(path):
            return ZipStore(path, mode="r" if mode == "r" else "w" if mode == "w" else "a"), True
        return open_store(store, read_only=(mode == "r"), storage_options=storage_options), True
    return open_store(store, storage_options=storage_options), False



# -- copying arrays: creation arguments and streaming ------------------------------------------------
_V2_CODEC_KEYS = ("compressor", "filters", "order", "object_codec")
_V3_CODEC_KEYS = ("compressors", "filters", "serializer")


def _is_zarrkit(obj: Any) -> bool:
    return isinstance(obj, (Array, Group))


def _is_h5py(obj: Any) -> bool:
    return obj is not None and type(obj).__module__.startswith("h5py")


def _v2_codecs_of_v3(src: Array) -> dict[str, Any]:
    """v2 creation arguments (filters, compressor, order, object_codec) equivalent to the codec
    chain of a v3 array (the inner chain of a sharded one)."""
    meta = src.metadata
    try:
        # the copy encodes every chunk again: a crc32c checksum is the v3 chain's own, dropped
        chain = v3_chain_to_v2(
            meta.filters, meta.serializer, meta.compressors, len(meta.shape), crc32c="drop",
            key=src.name or "/",
        )
    except UnsupportedCodecError as exc:
        raise CopyError(f"{exc}; give the codecs of the copy explicitly") from None
    return {
        "order": chain.order,
        "object_codec": chain.object_codec,
        "filters": list(chain.filters) or None,
        "compressor": chain.compressor,
    }


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
            if kw.pop("order") == "F" and not set(ov) & {"codecs", "filters", "order"}:
                # the v2 array's F-ordered chunks as v3 stores them: a transpose codec first
                kw["filters"] = [TransposeCodec.reversing(len(src.shape)), *(kw["filters"] or ())]
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
        # Array.metadata is typed Any (either format's); both give their storage grid
        return cast(ChunkGrid, dest.metadata.storage_grid)
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
    # blocks written and not yet reported: on_written runs in the calling thread only
    written: deque[tuple[tuple[int, ...], tuple[slice, ...], int]] = deque()

    def report() -> None:
        nonlocal total
        while written:
            coords, region, n = written.popleft()
            total += n
            if on_written is not None:
                on_written(coords, region, n)

    def todo() -> Iterator[tuple[tuple[int, ...], tuple[slice, ...]]]:
        for unit in units:
            if stop is not None and stop.is_set():
                return
            yield unit
            report()  # on one thread, each block is reported before the next is taken

    def copy(unit: tuple[tuple[int, ...], tuple[slice, ...]]) -> None:
        coords, region = unit
        written.append((coords, region, one(region)))

    if window == 1 or not _is_zarrkit(dest):  # (h5py datasets: from the calling thread only)
        for unit in todo():
            copy(unit)
    else:
        # a failed block lets the blocks running finish (each is one atomic store write) and
        # starts no more
        run_pipelined(todo(), copy, threads=window)
    report()
    return total
