"""The inner chunks a sharded array keeps outside its shape, cleared (see
:func:`clear_inner_outside`): a shape change deletes the stored objects wholly outside the new
shape, and for a sharded array those include the inner chunks of the shards it keeps."""

from __future__ import annotations

from typing import Any

from ..storage.base import Store
from .chunks import ChunkContext
from .indexing import make_indexer
from .stored import iter_stored
from .write import write_selection

__all__ = ["clear_grown", "clear_inner_outside", "clear_stored"]


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


def clear_grown(store: Store, path: str, old: Any, new: Any, synchronizer: Any = None, claim: Any = None,
                stored: Any = None) -> None:
    """Write the fill value over what the stored objects hold in the region a resize from
    ``old``'s shape to ``new``'s grows over, so that it reads the fill value: what a shrink
    left there (whole chunks outside it are deleted, but a chunk straddling it keeps its
    elements; zarr-python shows them again), or rows an append that lost a race to the resize
    wrote there out of sight.

    Called before the resize shows the region (out of sight; through ``claim`` when the resize
    races other writers) and, racing them, once more after: an append that read the old shape
    and lost may have written its rows there meanwhile, and another such append over them;
    each puts back what it replaced, but a value put back may be the other's.  Only the stored
    objects reaching into the region are read -- ``stored``, their grid coordinates, when the
    caller listed them, else one listing -- each by the one read-modify-write, elements inside
    ``old``'s shape untouched.
    """
    old_shape, new_shape = tuple(old.shape), tuple(new.shape)
    if all(n <= o for n, o in zip(new_shape, old_shape)):
        return
    ctx = ChunkContext.build(store, path, new)
    dims = new.storage_grid.dims
    fill = ctx.missing
    if stored is None:
        stored = [coords for coords, _ in iter_stored(ctx, new)]
    grid = new.storage_grid.grid_shape
    for coords in stored:
        if any(c >= m for c, m in zip(coords, grid)):
            continue  # (wholly outside the new shape: not shown)
        lows = [d.start(c) for d, c in zip(dims, coords)]
        highs = [min(lo + d.length(c), n) for d, c, lo, n in zip(dims, coords, lows, new_shape)]
        for axis in range(len(new_shape)):
            if highs[axis] <= old_shape[axis]:
                continue
            # the part of this object outside ``old`` along ``axis`` (inside along those before)
            region = tuple(
                slice(lows[a], min(highs[a], old_shape[a])) if a < axis
                else slice(max(lows[a], old_shape[a]), highs[a]) if a == axis
                else slice(lows[a], highs[a])
                for a in range(len(new_shape))
            )
            if all(r.stop > r.start for r in region):
                write_selection(ctx, make_indexer(region, new_shape, ctx.grid, "basic"), fill,
                                write_empty_chunks=False, synchronizer=synchronizer, claim=claim)


def clear_stored(store: Store, path: str, meta: Any, stored: Any, synchronizer: Any = None, claim: Any = None) -> None:
    """Write the fill value over what the stored objects of ``meta``'s grid at ``stored``
    (grid coordinates) hold inside ``meta``'s shape, each by the one read-modify-write
    (``write_empty_chunks`` False: an object left all fill is stored so, not deleted, on a
    store whose conditional delete is not atomic) -- the objects a shrink leaves out there,
    cleared instead of deleted (see :func:`~zarrkit.core.resize.resize_locked`).  With a
    ``claim`` they are written through it."""
    shape = tuple(meta.shape)
    ctx = ChunkContext.build(store, path, meta)
    dims = meta.storage_grid.dims
    for coords in stored:
        lows = [d.start(c) for d, c in zip(dims, coords)]
        region = tuple(slice(lo, min(lo + d.length(c), n)) for d, c, lo, n in zip(dims, coords, lows, shape))
        if all(r.stop > r.start for r in region):
            write_selection(ctx, make_indexer(region, shape, ctx.grid, "basic"), ctx.missing,
                            write_empty_chunks=False, synchronizer=synchronizer, claim=claim)
