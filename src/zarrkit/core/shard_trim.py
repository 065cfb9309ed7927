"""The inner chunks a sharded array keeps outside its shape, cleared (see
:func:`clear_inner_outside`): a shape change deletes the stored objects wholly outside the new
shape, and for a sharded array those include the inner chunks of the shards it keeps."""

from __future__ import annotations

from typing import Any

from ..storage.base import Store
from .chunks import ChunkContext
from .indexing import make_indexer
from .write import write_selection

__all__ = ["clear_inner_outside"]


def clear_inner_outside(store: Store, path: str, meta: Any, synchronizer: Any = None, claim: Any = None) -> None:
    """Delete, from the shards holding part of ``meta``'s shape, the inner chunks wholly
    outside that shape.

    An unsharded array's chunks wholly outside a shrunk shape are deleted, and growing over
    them reads the fill value; a shard partly inside the shape is kept, and with it its inner
    chunks wholly outside, which growing would show again.  Those are deleted here the way the
    engine deletes any chunk, by writing the fill value over them (``write_empty_chunks``
    False: a chunk left all fill is not stored).  An inner chunk straddling the shape keeps its
    elements outside it, as an unsharded chunk straddling the shape does (zarr-python's
    "boundary chunks remain intact").  Nothing inside the shape is written: every inner chunk
    written lies wholly outside it, so the caller may call this before the shape grows over
    them (no reader sees them change) or after it shrank (no reader sees them any more).
    With a ``claim`` (a shape change racing other writers) they are written through it.
    """
    sharding = getattr(meta, "sharding", None)
    shape = tuple(meta.shape)
    if sharding is None or not shape or 0 in shape:
        return
    shards = meta.storage_grid
    # the end of the last shard holding part of the shape, along each dimension
    ends = tuple(d.start(n - 1) + d.length(n - 1) for d, n in zip(shards.dims, shards.grid_shape))
    # the first inner chunk wholly outside (shards are whole inner chunks: their starts align)
    firsts = tuple(min(-(-s // c) * c, e) for s, c, e in zip(shape, sharding.chunk_shape, ends))
    if firsts == ends:
        return
    extent = meta.evolve(shape=ends)
    ctx = ChunkContext.build(store, path, extent)
    fill = ctx.missing
    for axis in range(len(shape)):
        if firsts[axis] == ends[axis]:
            continue
        # the slabs outside, one per dimension, disjoint (dimensions before ``axis`` inside)
        region = tuple(
            slice(0, firsts[a]) if a < axis
            else slice(firsts[a], ends[a]) if a == axis
            else slice(0, ends[a])
            for a in range(len(shape))
        )
        write_selection(ctx, make_indexer(region, ends, ctx.grid, "basic"), fill,
                        write_empty_chunks=False, synchronizer=synchronizer, claim=claim)
