"""Writing a selection: one task per chunk (fetch-if-partial → merge → encode → store)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..codecs.buffers import is_all_fill, place
from ..codecs.sharding import GroupedKeys
from ..config import config
from ..errors import ShapeMismatchError
from ..storage.optimistic import KEEP, until_written, update
from .chunks import ChunkContext, names_store, scratch
from .claims import Claim, restore_elements
from .indexing import ChunkProjection
from .pool import run_pipelined, run_tasks, threads_for

#: chunks encoded before their values are handed to the store together (tiny chunks)
WRITE_BATCH = 128


def prepare_value(value: Any, shape: tuple[int, ...], dtype: np.dtype) -> tuple[np.ndarray, bool]:
    """Cast ``value`` to ``dtype`` and broadcast it to the selection's shape, before any write.

    Returns the broadcast array (a zero-copy view for scalars) and whether it was a scalar.
    Raises before anything is written when the value does not fit.
    """
    if dtype.kind == "O":
        if shape == () and not (isinstance(value, np.ndarray) and value.ndim == 0):
            # one element: whatever is given is that element (a ragged row, a list, ...)
            arr: np.ndarray = np.empty((), dtype=object)
            arr[()] = value
        elif isinstance(value, np.ndarray):
            arr = value.astype(object, copy=False)
        elif isinstance(value, (list, tuple)):
            arr = np.asarray(value, dtype=object)
            if arr.shape != shape and len(shape) == 1 and len(value) == shape[0]:
                # a list of rows, one per element, that numpy would stack into more dimensions
                arr = np.empty(shape, dtype=object)
                for i, item in enumerate(value):
                    arr[i] = item
        else:  # str, bytes, numbers, None: one element repeated
            arr = np.empty((), dtype=object)
            arr[()] = value
    else:
        if dtype.kind == "T":
            _check_text(value, dtype)
        try:
            arr = np.asarray(value, dtype=dtype)
        except UnicodeError as exc:
            # a Unicode error cannot be rebuilt from a message alone
            raise ValueError(f"cannot store {type(value).__name__} value as {dtype}: {exc}") from None
        except (ValueError, TypeError) as exc:
            raise type(exc)(f"cannot store {type(value).__name__} value as {dtype}: {exc}") from None
    scalar = arr.ndim == 0
    if arr.shape != shape:
        try:
            arr = np.broadcast_to(arr, shape)
        except ValueError:
            raise ShapeMismatchError(
                f"shape mismatch: value of shape {arr.shape} cannot be broadcast to the selection's shape {shape}"
            ) from None
    return arr, scalar


def _check_text(value: Any, dtype: np.dtype) -> None:
    # NumPy's StringDType turns any object into text (None into 'None'): refuse what is not
    # text, as a string array's object form does, rather than store the caller's value changed
    if isinstance(value, np.ndarray) and value.dtype.kind in "UT":
        return
    for item in np.asarray(value, dtype=object).reshape(-1):
        if not isinstance(item, str):
            raise TypeError(
                f"cannot store {type(item).__name__} value as {dtype}: a string array takes str values"
            )


@names_store
def write_selection(
    ctx: ChunkContext,
    indexer: Any,
    value: Any,
    *,
    fields: Any = None,
    write_empty_chunks: bool = True,
    synchronizer: Any = None,
    claim: Claim | None = None,
    conditional: bool = False,
) -> None:
    """Write ``value`` into the chunks an indexer touches.

    A chunk the selection covers completely is encoded without reading the old one; a partial
    chunk is read (or started from the fill value), merged and written back by the one
    read-modify-write (:func:`~zarrkit.storage.optimistic.update`: conditioned on the version
    read, where the store can), under the synchronizer's lock for its key when one is given.
    On a store with versions an edge chunk (sticking out of the array) is such a partial
    write too: what lies outside the array may be rows another writer's append has not shown
    yet.  With ``write_empty_chunks=False`` a chunk left all fill value is deleted instead of
    stored.  With a ``claim`` (an append's rows,
    written out of sight: see :mod:`~zarrkit.core.claims`) every chunk, whole or not, is such
    a read-modify-write, checked against the claim before it is merged, and recorded in it.
    With ``conditional`` (on a store with versions) every chunk is a read-modify-write too:
    each written as a new version, which a write conditioned on one before cannot replace.
    """
    shape = tuple(indexer.shape)
    target_dtype = ctx.dtype if fields is None else ctx.dtype[fields] if isinstance(fields, str) else ctx.dtype[list(fields)]
    arr, scalar = prepare_value(value, shape, target_dtype)
    if arr.size == 0:
        return
    if ctx.codec.refuses_values and fields is None:
        # a value the codecs refuse fails the whole write before any chunk is stored
        ctx.codec.check_values(arr.reshape(-1)[:1] if scalar else arr, ctx.prefix + ctx.meta.metadata_key)
    store = ctx.chunks
    codec = ctx.codec
    codec_at = ctx.codec_at
    key_of = ctx.chunk_key_function()
    merged = _merger(ctx, arr, scalar, fields, write_empty_chunks)
    versioned = store.supports_conditional_writes
    # where a conditional delete is a version check and then a delete (obstore), a write
    # landing between the two would go with it: a read-modify-write leaves a chunk all fill
    # value stored as such (an absent one absent) instead of deleting it
    fill_kept = not write_empty_chunks and versioned and not store.atomic_deletes
    rmw_merged = _merger(ctx, arr, scalar, fields, True) if fill_kept else merged
    fill = ctx.fill_value

    def rmw_value(chunk: Any, raw: Any, c: Any, key: str) -> Any:
        """The value a read-modify-write of ``raw`` stores for ``chunk`` (see above)."""
        if chunk is None:
            return None
        if fill_kept and raw is None and is_all_fill(chunk, fill):
            return KEEP
        return c.encode_transient(chunk, key)

    chunks = list(iter(indexer))  # (list(indexer) would count the chunks first, via len)
    if ctx.grouped is not None:
        keep = None if write_empty_chunks else lambda chunk: not is_all_fill(chunk, ctx.fill_value)
        whole = arr if fields is None and ctx.codec_at is None else None
        _write_groups(ctx, ctx.grouped, chunks, merged, whole if claim is None and not conditional else None,
                      keep, fields, synchronizer, claim, conditional)
        return
    no_lock = contextlib.nullcontext()
    limit = ctx.stored_limit()
    every = versioned and conditional

    def write_one(p: ChunkProjection) -> None:
        key = key_of(p.chunk_coords)
        c = codec if codec_at is None else codec_at(p.chunk_coords)
        lock = synchronizer[key] if synchronizer is not None else no_lock
        if claim is not None:
            _claimed_write(ctx, claim, p, key, c, rmw_merged, rmw_value, limit, lock)
            return
        if not p.is_complete_chunk or fields is not None or every or (versioned and ctx.is_edge(p.chunk_coords)):
            def change(raw: Any) -> Any:
                return rmw_value(rmw_merged(p, key, {key: raw}), raw, c, key)

            update(store, key, change, limit=limit, lock=lock)
            return
        with lock:
            chunk = merged(p, key)
            if chunk is None:
                store.delete(key)
            else:
                # stored before this thread encodes again: the bytes may be in a reused buffer
                store.set(key, c.encode_transient(chunk, key))

    def encoded(chunks: list[ChunkProjection]) -> Iterator[dict[str, Any]]:
        """The stored values of ``chunks``, a batch at a time (chunks to delete are deleted
        on the way)."""
        for start in range(0, len(chunks), WRITE_BATCH):
            values: dict[str, Any] = {}
            for p in chunks[start : start + WRITE_BATCH]:
                if versioned and not (p.is_complete_chunk and fields is None and not ctx.is_edge(p.chunk_coords)):
                    write_one(p)
                    continue
                key = key_of(p.chunk_coords)
                chunk = merged(p, key)
                if chunk is None:
                    store.delete(key)
                else:
                    c = codec if codec_at is None else codec_at(p.chunk_coords)
                    values[key] = c.encode(chunk, key)
            if values:
                yield values

    nbytes = ctx.chunk_nbytes
    threads = threads_for(store, nbytes)
    if threads == 1 and synchronizer is None and claim is None and not every and len(chunks) > 1:
        # tiny chunks: the caller encodes them a batch at a time while pool threads store the
        # batches before (per-chunk Python work on one thread, system calls on all of them),
        # or stores them itself when the store's writes contend with each other
        concurrent = getattr(store, "concurrent_small_writes", True)
        run_pipelined(encoded(chunks), store.set_many, None if concurrent else 1)
    else:
        run_tasks(write_one, chunks, threads)


def _claimed_write(ctx: ChunkContext, claim: Claim, p: ChunkProjection, key: str, codec: Any,
                   merged: Any, value: Any, limit: int, lock: Any) -> None:
    """Write chunk ``p`` of claimed rows (see :mod:`~zarrkit.core.claims`): ``merged`` and
    ``value(chunk, raw, codec, key)`` make the value stored."""
    ours: list[Any] = [None]

    def change(raw: Any) -> Any:
        chunk = merged(p, key, {key: raw})
        ours[0] = None if chunk is None else np.array(chunk[p.chunk_selection], copy=True)
        return value(chunk, raw, codec, key)

    restore = restore_elements(lambda raw: codec.decode(raw, key), lambda chunk: codec.encode(chunk, key),
                               lambda: ctx.fill_chunk(p.chunk_coords), p.chunk_selection, lambda: ours[0])
    claim.write(ctx.chunks, key, change, restore, limit=limit, lock=lock)


def _merger(ctx: ChunkContext, arr: np.ndarray, scalar: bool, fields: Any, write_empty_chunks: bool) -> Any:
    """``merged(p, key, old=None)``: the chunk to store for projection ``p`` with the
    selection's part of ``arr`` written in, or None when it is to be deleted (left all fill
    value, with ``write_empty_chunks=False``).  A partial chunk starts from what is stored
    (``old``, a mapping of keys to stored values, or read from the store when not given)."""
    store = ctx.chunks
    codec_of = ctx.codec_of
    fill = ctx.fill_value
    dtype = ctx.dtype
    order = ctx.codec.order
    shape_of = None if ctx.codec_at is None else ctx.grid.chunk_shape
    limit = ctx.stored_limit()  # an old chunk larger than its codecs write is refused, unread

    def merged(p: ChunkProjection, key: str, old: Any = None) -> np.ndarray | None:
        # (an edge chunk read before, on a store with versions, keeps what lies outside the
        # array: another writer's rows, out of sight until its append shows them)
        if p.is_complete_chunk and fields is None and (old is None or not ctx.is_edge(p.chunk_coords)):
            chunk_shape = ctx.chunk_shape if shape_of is None else shape_of(p.chunk_coords)
            if ctx.is_edge(p.chunk_coords):
                chunk = ctx.fill_chunk(p.chunk_coords)
                chunk[p.chunk_selection] = arr[p.out_selection]
            elif dtype.kind == "O":
                chunk = np.empty(chunk_shape, dtype=dtype, order=order)
                chunk[p.chunk_selection] = arr[p.out_selection]
            else:
                # this thread's buffer: encoding copies it, so it is free again afterwards
                chunk = scratch(chunk_shape, dtype, order)
                if scalar:
                    chunk.fill(arr.reshape(-1)[0])
                else:
                    place(chunk, p.chunk_selection, arr[p.out_selection])
        else:
            raw = store.get_upto(key, limit) if old is None else old.get(key)
            if raw is None:
                chunk = ctx.fill_chunk(p.chunk_coords)
            else:
                chunk = codec_of(p.chunk_coords).decode(raw, key)
                if not chunk.flags.writeable:
                    chunk = chunk.copy(order="K")
            target = chunk if fields is None else chunk[fields]
            target[p.chunk_selection] = arr[p.out_selection]
        if not write_empty_chunks and is_all_fill(chunk, fill):
            return None
        return chunk

    return merged


def _write_groups(
    ctx: ChunkContext,
    store: GroupedKeys,
    chunks: list[ChunkProjection],
    merged: Any,
    whole: np.ndarray | None,
    keep: Any,
    fields: Any,
    synchronizer: Any,
    claim: Claim | None = None,
    conditional: bool = False,
) -> None:
    """A write to a store that writes keys best together (the inner chunks of a shard): a group
    per task, read at most once and written once, its chunks encoded in parallel when it is the
    only group written.  A group the selection covers whole is written from its region of
    ``whole`` (the value, when it may be: see :meth:`GroupedKeys.set_group`) with ``keep``
    deciding which chunks to store."""
    codec_of = ctx.codec_of
    key_of = ctx.chunk_key_function()
    no_lock = contextlib.nullcontext()
    chunk_shape = ctx.chunk_shape
    # (a group written whole needs the key of its first chunk only)
    groups = [[chunks[i] for i in g] for g in store.coord_groups([p.chunk_coords for p in chunks])]
    threads = threads_for(ctx.chunks)
    if len(groups) == 1 and (threads or config.threads) > 1:
        whole = None  # one group: its chunks are encoded in parallel instead

    def write_group(group: list[ChunkProjection]) -> None:
        first = key_of(group[0].chunk_coords)
        with synchronizer[store.lock_key(first)] if synchronizer is not None else no_lock:
            region = None if whole is None else _group_region(group, chunk_shape, store.group_size(first))
            values = None if whole is None or region is None else whole[region]
            if values is not None and values.shape == store.group_shape(first):
                store.set_group(first, values, keep)
                return
            keyed = [(p, key_of(p.chunk_coords)) for p in group]
            versioned = ctx.store.supports_conditional_writes
            partial = [key for p, key in keyed if not (p.is_complete_chunk and fields is None)
                       or (versioned and ctx.is_edge(p.chunk_coords))]
            # the shard's read-modify-write: read (with its version) where some of its chunks
            # keep part of what is stored, rebuilt, written on the condition that it is still
            # the version read; on a conflict, all again from the shard as it is then
            def attempt() -> None:
                txn = store.transaction(first)
                # (a claimed write reads the shard even when it replaces all of it: it is
                # written on the condition of the version read, and recorded with it; the
                # claim is checked after that read, so what was read predates any other
                # append's win)
                old = txn.get_many(partial) if partial or claim is not None or conditional else {}
                if claim is not None:
                    claim.check()

                def build(item: tuple[ChunkProjection, str]) -> None:
                    p, key = item
                    chunk = merged(p, key, old)
                    if chunk is None:
                        txn.delete(key)
                    else:
                        txn.set(key, codec_of(p.chunk_coords).encode(chunk, key))

                run_tasks(build, keyed)
                txn.commit()
                if claim is not None and txn.written_version is not None:
                    claim.written(ctx.store, txn.key, txn.before, txn.written_version,
                                  _shard_restore(ctx, store, group, txn))

            until_written(attempt, store.lock_key(first), "the shard")

    run_tasks(write_group, groups, threads)


def _shard_restore(ctx: ChunkContext, store: Any, group: list[ChunkProjection], txn: Any) -> Any:
    """The ``restore`` of a claimed shard write (see :func:`~zarrkit.core.claims.restore_elements`):
    the shard decoded whole, the elements of the group's selections that still hold what
    ``txn`` wrote there put back."""
    if ctx.codec_at is not None or not ctx.grid.regular or txn.written is None:
        return None
    first = ctx.chunk_key_function()(group[0].chunk_coords)
    shard_shape = store.group_shape(first)
    firsts = store.group_origin(first)
    mask = np.zeros(shard_shape, dtype=bool)
    for p in group:
        origin = [(c - f) * n for c, f, n in zip(p.chunk_coords, firsts, ctx.chunk_shape)]
        mask[tuple(slice(o, o + n) for o, n in zip(origin, ctx.chunk_shape))][p.chunk_selection] = True
    codec, key, written = ctx.meta.codec, ctx.prefix, txn.written
    fill = ctx.fill_value
    return restore_elements(lambda raw: codec.decode(raw, key), lambda shard: codec.encode(shard, key),
                            lambda: np.full(shard_shape, fill, dtype=ctx.dtype), mask,
                            lambda: codec.decode(written, key)[mask])


def _group_region(group: list[ChunkProjection], chunk_shape: tuple[int, ...], size: int) -> Any:
    """The region of the value that the chunks of a group tile, when the selection covers
    each of them whole, there are ``size`` of them (the whole group) and each lies where its
    place in the array puts it (the value's region is the group's, shifted); None otherwise."""
    if len(group) != size:
        return None
    ndim = len(chunk_shape)
    shift: list[int] | None = None
    lows = [min(p.chunk_coords[d] for p in group) for d in range(ndim)]
    for p in group:
        sel = p.out_selection
        if not p.is_complete_chunk or type(sel) is not tuple or len(sel) != ndim:
            return None
        here = []
        for s, c, n in zip(sel, p.chunk_coords, chunk_shape):
            if type(s) is not slice or s.step not in (None, 1) or s.stop - s.start != n:
                return None
            here.append(s.start - c * n)
        if shift is None:
            shift = here
        elif here != shift:
            return None
    assert shift is not None
    highs = [max(p.chunk_coords[d] for p in group) + 1 for d in range(ndim)]
    return tuple(slice(lo * n + d, hi * n + d) for lo, hi, n, d in zip(lows, highs, chunk_shape, shift))


__all__ = ["write_selection", "prepare_value"]
