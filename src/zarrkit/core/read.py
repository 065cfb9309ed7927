"""Reading a selection: one task per chunk (fetch → decode → scatter into the output)."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ..errors import ShapeMismatchError
from ..storage.base import Store
from .chunks import ChunkContext, decode_to_output, filled
from .indexing import ChunkProjection
from .pool import run_tasks, threads_for
from .sharded import read_sharded


#: chunks (decoded size) from which reads use :meth:`Store.get_transient`: allocating a new
#: buffer for every large chunk maps fresh pages (and the C library may hand them back to the
#: system in between); small allocations are cheap
TRANSIENT_MIN_BYTES = 64 * 1024


def read_selection(
    ctx: ChunkContext,
    indexer: Any,
    out: np.ndarray | None = None,
    fields: Any = None,
) -> np.ndarray:
    """Read the chunks an indexer touches into ``out`` (allocated here when not given).

    Chunks are independent and write disjoint regions of ``out``, so tasks need no locks.
    A missing chunk reads as the fill value.
    """
    shape = tuple(indexer.shape)
    if fields is not None:
        result = read_selection(ctx, indexer)
        view = result[fields]
        if out is not None:
            _check_out(out, shape, view.dtype)
            out[...] = view
            return out
        return view.copy()
    if out is None:
        if ctx.fill_value is None and ctx.dtype.kind != "O":
            out = np.zeros(shape, dtype=ctx.dtype)
        else:
            out = np.empty(shape, dtype=ctx.dtype)
    else:
        _check_out(out, shape, ctx.dtype)
    if out.size == 0:
        return out

    store = ctx.store
    codec = ctx.codec
    fill = ctx.fill_value
    chunk_shape = ctx.chunk_shape
    key_of = ctx.key_function()
    order = ctx.meta.order
    zero = np.zeros((), dtype=ctx.dtype)[()] if ctx.dtype.kind != "O" else None

    nbytes = int(np.prod(chunk_shape, dtype=np.int64)) * ctx.dtype.itemsize
    # chains that decode into a buffer are done with the stored bytes when decode_to_output
    # returns, so the store may hand large chunks over in a buffer it reuses (small ones come
    # cheaper as bytes of their own)
    if codec.decodes_into and nbytes >= TRANSIENT_MIN_BYTES:
        get = store.get_transient
    elif type(store).get is Store.get:
        # the keys built here are valid by construction: skip get()'s per-key validation; a
        # stored chunk rarely holds much more than its decoded size
        get = functools.partial(store._get_upto, limit=nbytes + 64)
    else:
        get = store.get

    def read_one(p: ChunkProjection) -> None:
        key = key_of(p.chunk_coords)
        raw = get(key)
        if raw is None:
            if fill is None and ctx.dtype.kind != "O":
                out[p.out_selection] = zero  # no fill value: zero bytes of the dtype
            else:
                out[p.out_selection] = fill
            return
        decode_to_output(codec, raw, key, p, out, chunk_shape, order)

    if ctx.sharding is not None:
        read_sharded(ctx, list(indexer), out)
    else:
        run_tasks(read_one, list(indexer), threads_for(store, nbytes))
    return out


def _check_out(out: np.ndarray, shape: tuple[int, ...], dtype: np.dtype) -> None:
    if not isinstance(out, np.ndarray):
        raise TypeError(f"out must be a numpy array, got {type(out).__name__}")
    if tuple(out.shape) != shape:
        raise ShapeMismatchError(f"out has shape {out.shape}, expected {shape} for this selection")
    if out.dtype != dtype:
        raise ShapeMismatchError(f"out has dtype {out.dtype}, expected {dtype}")


__all__ = ["read_selection", "filled"]
