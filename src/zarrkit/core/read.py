"""Reading a selection: one task per chunk (fetch → decode → scatter into the output), or per
row of chunks spanning the output's last dimension."""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Sequence
from typing import Any, Literal, NamedTuple, overload

import numpy as np

from ..codecs.buffers import copy_runs, new_array, place
from ..codecs.sharding import GroupedKeys
from ..config import config
from ..errors import ChunkDecodeError, ConcurrentModificationError, ShapeMismatchError
from .chunks import ChunkContext, filled, names_store, scratch
from .indexing import ChunkProjection
from .pool import run_pipelined, run_tasks, threads_for, turns_for

#: chunks (decoded size) from which reads use :meth:`Store.get_transient`: allocating a new
#: buffer for every large chunk maps fresh pages (and the C library may hand them back to the
#: system in between); small allocations are cheap
TRANSIENT_MIN_BYTES = 64 * 1024

#: a row of complete chunks that together span the output's last dimension is decoded into one
#: per-worker buffer and copied out with one assignment when each chunk's runs along that
#: dimension are short (at most ROW_MAX_RUN_BYTES): the output is then written plane by plane
#: in address order, instead of in each chunk's short runs strided across it, which the CPU
#: handles badly (for 64^3 float32 chunks of a 512^3 array the copies take 2.5x less time on one
#: thread; on two, decoding included, the whole read takes 4-8% less).  Longer runs are copied
#: well enough chunk by chunk, and the second pass over a buffer beyond ROW_MAX_BYTES (no longer
#: held in the CPU's caches) cost more than it saved, as did rows of chunks under
#: ROW_MIN_CHUNK_BYTES
ROW_MAX_RUN_BYTES = 512
ROW_MAX_BYTES = 8 * 1024 * 1024
ROW_MIN_CHUNK_BYTES = 64 * 1024
#: rows are used only when the output is at least this many times the workers' row buffers
#: together: smaller outputs stay in the CPU caches, where strided copies cost nothing extra,
#: and the buffers stay a small part of the memory a read needs
ROW_OUTPUT_FACTOR = 8
#: inner chunks of a shard up to this size (decoded) that a compressor can decode several at
#: a time (:attr:`CodecChain.decodes_runs`) are read a group at a time (the shard's ranges
#: for them in one request) and decoded in batches of up to RUN_BYTES (a buffer per worker):
#: one call of the compressor per run of chunks stored one after the other, and one release
#: of the interpreter lock, instead of a read, a decode and their Python for every chunk.
#: 512^3 uint16 in 128^3 shards of 32^3 inner chunks, read whole from a local directory: 0.36 s
#: on one thread and 0.27 s on two chunk by chunk; 0.33 s and 0.20 s in batches.  Small chunk
#: files (see _read_small) go in batches of the same size: 8 KiB chunks read in 0.198 s on two
#: threads with 1 MiB batches, 0.176 s with 4 MiB ones
RUN_MAX_CHUNK_BYTES = 256 * 1024
RUN_BYTES = 4 * 1024 * 1024
#: reads of at least TINY_BATCHED_MIN_CHUNKS chunks under ``config.parallel_min_chunk_bytes``
#: that a compressor decodes one at a time (Blosc's, gzip's, none) go the way of small zstd
#: chunks (see _read_small), in batches of at most TINY_BATCH_CHUNKS, but on the calling
#: thread alone: each chunk's decoding holds the interpreter lock for most of its work, as its
#: read does, and a thread decoding beside the reader made the whole slower (4096^2 uint8 in
#: 1 KiB Blosc LZ4 chunks: 0.13 s on two threads, 0.10 s on one, 0.15 s chunk by chunk before;
#: benchmarks/PROFILE-threads.md).  Smaller reads go chunk by chunk (four chunks: 66 µs a
#: read that way, 77 in a batch)
TINY_BATCHED_MIN_CHUNKS = 32
TINY_BATCH_CHUNKS = 256
#: ... unless the read takes less than 1/TINY_SPARSE_FACTOR of each chunk on average: a sparse
#: selection (a step across chunks) read chunk by chunk took 0.82 s, in batches 0.88 s (250,000
#: chunks of 16 bytes, an element of each, most not stored)
TINY_SPARSE_FACTOR = 4
#: a batch of tiny chunks read in more than this many seconds a chunk came from a disk, not
#: from the system's cache (about 3 µs a file there): the rest of the read no longer takes
#: turns with other threads for its reads (two threads each reading half of 16,384 Blosc
#: chunks of 1 KiB from a disk: 1.2 s overlapping their reads, 1.4 s taking turns)
TINY_SLOW_READ_SECONDS = 20e-6
#: reads of chunk files (or shards read whole) of at least READ_AHEAD_MIN_BYTES (decoded) ask
#: the store for those of the tasks READ_AHEAD_BYTES beyond the ones being read, every
#: READ_AHEAD_SAMPLE-th task while the store has them all at hand (see _run_reads)
READ_AHEAD_MIN_BYTES = 1 << 20
READ_AHEAD_BYTES = 32 << 20
READ_AHEAD_SAMPLE = 4
#: a read of a shard on a store that cannot hold one version of it for the read, which fails
#: to decode while the shard's index changes, is tried again this many times, after a pause
#: that doubles from VERSION_RETRY_PAUSE seconds (a writer replacing the shard again and again
#: made two immediate tries fail now and then on a loaded machine)
VERSION_RETRIES = 6
VERSION_RETRY_PAUSE = 0.002


@names_store
def read_selection(
    ctx: ChunkContext,
    indexer: Any,
    out: np.ndarray | None = None,
    fields: Any = None,
) -> np.ndarray:
    """Read the chunks an indexer touches into ``out`` (allocated here when not given).

    Chunks are independent and write disjoint regions of ``out``, so tasks need no locks.
    A missing chunk reads as the fill value (or raises: :meth:`ChunkContext.missing_chunk`).
    """
    shape = tuple(indexer.shape)
    if fields is not None:
        view: np.ndarray = read_selection(ctx, indexer)[fields]
        if out is None:
            return view.copy()
        _check_out(out, shape, view.dtype)
        out[...] = view
        return out
    store = ctx.chunks
    codec = ctx.codec
    nbytes = ctx.chunk_nbytes
    grouped = ctx.grouped
    high_latency = getattr(store, "high_latency", False)
    # small chunks from a store that answers quickly: read a batch at a time (_read_small),
    # the result's pages faulted in by the threads decoding into it while the caller reads
    # (backing them first would hold the reads up: 2 threads took 0.187 s instead of 0.134
    # for a first read of 4096^2 float64 in 8 KiB zstd chunks; 1 thread, the same)
    small = (
        grouped is None and codec.decodes_runs and nbytes < ROW_MIN_CHUNK_BYTES and ctx.codec_at is None
        and not high_latency
    )
    # many tiny chunks decoded one at a time: the same, all on the calling thread (a result
    # this large spans at least TINY_BATCHED_MIN_CHUNKS chunks)
    tiny = (
        math.prod(shape) * ctx.dtype.itemsize >= TINY_BATCHED_MIN_CHUNKS * nbytes
        and grouped is None and not codec.decodes_runs and ctx.codec_at is None and not high_latency
        and nbytes < config.parallel_min_chunk_bytes
    )
    out = _output(ctx, shape, out, prefault=not (small or tiny or high_latency))
    if out.size == 0:
        return out
    limit = ctx.stored_limit()
    threads = threads_for(store, nbytes)
    rows = None
    if (
        grouped is None and codec.order == "C" and ctx.codec_at is None
        and (small or tiny or (codec.decodes_into and not codec.stored_raw and nbytes >= ROW_MIN_CHUNK_BYTES))
    ):
        rows = chunk_rows(indexer, out, ctx.chunk_shape, config.threads if small or threads is None else threads)
    if (small or tiny) and rows is not None:  # (rows only of outputs of many chunks)
        _read_small(ctx, rows, out, limit)
        return out
    get = chunk_getter(store, limit, codec.decodes_into and nbytes >= TRANSIENT_MIN_BYTES)
    read_one, read_row = _chunk_readers(ctx, out, get, rows is not None)
    if rows is not None:
        row_bytes = nbytes * (len(rows[0].indices) if rows and type(rows[0]) is Row else 1)
        _run_reads(store, rows, lambda task: read_row(task) if type(task) is Row else read_one(task), threads,
                   _chunk_keys(ctx, rows), nbytes, row_bytes, out.nbytes)
        return out
    projections = list(iter(indexer))  # (list(indexer) would count the chunks first, via len)
    # one chunk (an inner chunk read on its own): no tasks to plan, unless a failed read
    # of a shard may have to be tried again (see _read_groups)
    if len(projections) == 1 and (grouped is None or grouped.pins_versions):
        read_one(projections[0])
        return out
    if grouped is not None:
        _read_groups(ctx, grouped, projections, out, read_one, limit)
        return out
    if small or (tiny and out.nbytes * TINY_SPARSE_FACTOR >= len(projections) * nbytes):
        _read_small(ctx, projections, out, limit)
        return out
    _run_reads(store, projections, read_one, threads, _chunk_keys(ctx, projections), nbytes, nbytes, out.nbytes)
    return out


def _run_reads(
    store: Any, tasks: Sequence[Any], read: Callable[[Any], None], threads: int | None,
    task_keys: Callable[[], list[list[str]]], file_bytes: int, task_bytes: int, result_bytes: int,
) -> None:
    """``run_tasks(read, tasks, threads)``, the keys of the tasks a window ahead (``task_keys``:
    those of each task) asked of the store before each task reads its own
    (:meth:`Store.prefetch`) when each key's value is large (``file_bytes``, decoded, at least
    READ_AHEAD_MIN_BYTES): a local directory then has the system read their files from disk
    while the workers decode the ones before, instead of one read waiting at a time per worker
    (a first read of 2 GiB in 4 MiB chunks from disk: 1.1-1.9 s instead of 1.6-3.3).  The window
    is the workers' tasks and READ_AHEAD_BYTES (``task_bytes`` a task) beyond them.  While the
    store has every value asked for at hand (all files cached), only every READ_AHEAD_SAMPLE-th
    task asks (asking costs a few µs a file); once one is not, every task does, and the tasks
    passed over since the last that asked are asked for at once.  A read of small parts of
    its chunks (``result_bytes`` in all, less than READ_AHEAD_MIN_BYTES a task) reads ahead
    nothing: each part is a few of a file's bytes, and asking costs more than they do (random
    8^3 float32 reads of 64^3 chunks: about 10 µs a read)."""
    if (
        min(file_bytes, result_bytes // max(len(tasks), 1)) < READ_AHEAD_MIN_BYTES or len(tasks) < 2
        or getattr(store, "high_latency", False)
    ):
        run_tasks(read, tasks, threads)
        return
    keys = task_keys()
    window = (threads or config.threads) + max(READ_AHEAD_SAMPLE, READ_AHEAD_BYTES // max(task_bytes, 1))
    prefetch = store.prefetch
    fetching = [bool(prefetch([key for some in keys[:window] for key in some]))]
    n = len(tasks)

    def read_ahead(i: int) -> None:
        j = i + window
        if j < n and (fetching[0] or j % READ_AHEAD_SAMPLE == 0) and prefetch(keys[j]) and not fetching[0]:
            fetching[0] = True
            prefetch([key for some in keys[j - READ_AHEAD_SAMPLE + 1 : j] for key in some])
        read(tasks[i])

    run_tasks(read_ahead, range(n), threads)


def _chunk_keys(ctx: ChunkContext, tasks: list[Any]) -> Callable[[], list[list[str]]]:
    """The keys of each task of a read (a chunk, or a row of them), as :func:`_run_reads` asks."""
    def keys() -> list[list[str]]:
        key_of = ctx.chunk_key_function()
        row_keys = ctx.row_keys_function() if any(type(t) is Row for t in tasks) else None
        return [row_keys(t.coords, t.indices) if row_keys is not None and type(t) is Row else [key_of(t.chunk_coords)]
                for t in tasks]

    return keys


def _output(ctx: ChunkContext, shape: tuple[int, ...], out: np.ndarray | None, prefault: bool) -> np.ndarray:
    """``out`` checked, or a new result array for the selection (its pages backed up front
    when ``prefault``: see :func:`~zarrkit.codecs.buffers.new_array`)."""
    if out is not None:
        _check_out(out, shape, ctx.dtype)
        return out
    # the order the chunks decode into (an F-ordered v2 array reads into an F-ordered result,
    # as numpy and zarr-python 2; a v3 array's is C, made F by the caller when configured)
    layout: Literal["C", "F"] = "F" if ctx.meta.order == "F" else "C"
    zeroed = ctx.fill_value is None and ctx.dtype.kind != "O"
    return new_array(shape, ctx.dtype, layout, zeroed, prefault)


def chunk_getter(store: Any, limit: int, transient: bool) -> Callable[[str], Any]:
    """The read of one whole stored chunk from ``store``: refused, unread, when it holds more
    than ``limit`` bytes (what the codecs write at most, see :meth:`ChunkContext.stored_limit`).
    Chains that decode into a buffer (``transient``) are done with the stored bytes when
    decode_into returns, so the store may hand large chunks over in a buffer it reuses
    (small ones come cheaper as bytes of their own)."""
    get_upto = getattr(store, "get_transient_upto", store.get_upto) if transient else store.get_upto

    def get(key: str) -> Any:  # (a partial with a keyword argument costs more per call)
        return get_upto(key, limit)

    return get


def _chunk_readers(
    ctx: ChunkContext, out: np.ndarray, get: Callable[[str], Any], rows: bool = False
) -> tuple[Any, Any]:
    """The tasks of a read into ``out``, each chunk read with ``get``: one chunk, and (when
    ``rows``) one row of chunks (see :func:`chunk_rows`); closures, so that the per-chunk path
    looks nothing up."""
    codec = ctx.codec
    missing = ctx.missing_chunk
    chunk_shape = ctx.chunk_shape
    dtype = ctx.dtype
    key_of = ctx.chunk_key_function()
    row_keys = ctx.row_keys_function() if rows else None
    codec_at = ctx.codec_at

    def read_one(p: ChunkProjection) -> None:
        key = key_of(p.chunk_coords)
        raw = get(key)
        if raw is None:
            out[p.out_selection] = missing(key)
            return
        c = codec if codec_at is None else codec_at(p.chunk_coords)
        c.decode_into(raw, key, out, p.out_selection, p.chunk_selection, p.is_complete_chunk)

    def read_row(row: Row) -> None:
        # every chunk of the row whole into this worker's buffer, then the row into ``out``
        buf = scratch((len(row.last), *chunk_shape), dtype)
        assert row_keys is not None
        for part, key in zip(buf, row_keys(row.coords, row.indices)):
            raw = get(key)
            if raw is None:
                part[...] = missing(key)
            else:
                codec.decode_into(raw, key, part)
        copy_row(buf, row.out_selection, out)

    return read_one, read_row


def _read_groups(
    ctx: ChunkContext,
    store: GroupedKeys,
    projections: list[ChunkProjection],
    out: np.ndarray,
    read_one: Any,
    limit: int,
) -> None:
    """A read from a store that reads keys best together (the inner chunks of a shard): a
    group per task, its chunks fetched together and decoded in parallel when the group is the
    only one being read, all from one version of the shard.  Where the store cannot hold a
    version for a read, a read that fails to decode is tried again while the shard's index
    changes (a writer replaced the shard between the index and the chunks).  Chunks are
    grouped and fetched by their coordinates; their keys are made only where a store's read
    or an error needs them."""
    codec_of = ctx.codec_of
    missing = ctx.missing_chunk
    key_of = ctx.chunk_key_function()
    nbytes = ctx.chunk_nbytes
    runs = ctx.codec.decodes_runs and nbytes <= RUN_MAX_CHUNK_BYTES and ctx.codec_at is None
    # large inner chunks from a local store may be read each by the task that decodes it (into
    # a reused buffer: see _chunk_readers), the reads spread over the workers
    large = not runs and ctx.codec.decodes_into and nbytes >= TRANSIENT_MIN_BYTES
    pinned = store.pins_versions
    per_batch = max(1, RUN_BYTES // max(nbytes, 1))
    coords = [p.chunk_coords for p in projections]

    def read_group(group: list[int]) -> None:
        if pinned:
            read_version(group)
            return
        for attempt in range(VERSION_RETRIES + 1):
            try:
                read_version(group)
                return
            except (ChunkDecodeError, ConcurrentModificationError):
                if attempt == VERSION_RETRIES or not store.changed(key_of(coords[group[0]])):
                    raise
                time.sleep(VERSION_RETRY_PAUSE * 2**attempt)

    def read_version(group: list[int]) -> None:
        if len(group) == 1:
            read_one(projections[group[0]])
            return
        if runs:
            _decode_runs(ctx, [projections[i] for i in group], store.get_runs([coords[i] for i in group]), out,
                         per_batch)
            return
        version = store.read_apart(key_of(coords[group[0]])) if large else None
        if version is not None:
            try:
                run_tasks(_chunk_readers(ctx, out, version.getter(limit))[0], [projections[i] for i in group])
            finally:
                version.close()
            return
        keys = {i: key_of(coords[i]) for i in group}
        raws = store.get_many(keys.values())

        def scatter(i: int) -> None:
            p = projections[i]
            key = keys[i]
            raw = raws[key]
            if raw is None:
                out[p.out_selection] = missing(key)
            else:
                codec_of(p.chunk_coords).decode_into(raw, key, out, p.out_selection, p.chunk_selection, p.is_complete_chunk)

        run_tasks(scatter, group)

    groups = store.coord_groups(coords)
    heads = [key_of(coords[g[0]]) for g in groups]
    # a shard is read ahead whole (its file), when the read takes all of it
    whole = len(groups) > 1 and all(len(g) == store.group_size(heads[i]) for i, g in ((0, groups[0]), (-1, groups[-1])))
    _run_reads(store, groups, read_group, threads_for(ctx.chunks), lambda: [[head] for head in heads],
               nbytes * len(groups[0]) if whole else 0, nbytes * len(groups[0]), out.nbytes)


def _read_small(ctx: ChunkContext, tasks: list[Any], out: np.ndarray, limit: int) -> None:
    """Read small chunks (under ROW_MIN_CHUNK_BYTES) a batch at a time: the calling thread
    reads a batch's stored chunks (rows of chunks spanning ``out``'s last dimension, see
    :func:`chunk_rows`, or other chunks one after the other; about RUN_BYTES decoded) with one
    call of the store (:meth:`Store.get_many_upto`), while pool threads decode the batches
    read before, each with one call of the compressor (the stored chunks joined), and copy
    them out, a row with one assignment.  The reads are what holds the interpreter lock (a
    few system calls and their Python per chunk); the decoding threads need it a few times
    per batch, so they run beside the reader instead of taking turns with it.  Chunks of a
    compressor that decodes one at a time are decoded one by one, on the calling thread
    (TINY_BATCH_CHUNKS)."""
    codec = ctx.codec
    missing = ctx.missing_chunk
    key_of = ctx.chunk_key_function()
    row_keys = ctx.row_keys_function()
    get_many = ctx.chunks.get_many_upto
    joined = codec.decodes_runs
    per_batch = max(2, RUN_BYTES // max(ctx.chunk_nbytes, 1))
    if not joined:
        per_batch = min(per_batch, TINY_BATCH_CHUNKS)
    batches: list[list[Any]] = [[]]
    count = capacity = 0
    for task in tasks:
        n = len(task.last) if type(task) is Row else 1
        if count and count + n > per_batch:
            batches.append([])
            count = 0
        batches[-1].append(task)
        count += n
        capacity = max(capacity, count)

    def keys_of(batch: list[Any]) -> list[str]:
        keys: list[str] = []
        for task in batch:
            if type(task) is Row:
                keys += row_keys(task.coords, task.indices)
            else:
                keys.append(key_of(task.chunk_coords))
        return keys

    def fetched() -> Any:
        for batch in batches:
            keys = keys_of(batch)
            yield batch, keys, get_many(keys, limit)

    def decode(item: tuple[list[Any], list[str], list[Any]]) -> None:
        batch, keys, raws = item
        if not joined or any(raw is None for raw in raws):  # chunk by chunk
            chunks = [p for task in batch for p in (task.projections() if type(task) is Row else (task,))]
            for p, key, raw in zip(chunks, keys, raws):
                if raw is None:
                    out[p.out_selection] = missing(key)
                else:
                    codec.decode_into(raw, key, out, p.out_selection, p.chunk_selection, p.is_complete_chunk)
            return
        decoded = codec.decode_joined(b"".join(raws), [len(raw) for raw in raws], keys, capacity)
        i = 0
        for task in batch:
            if type(task) is Row:
                n = len(task.last)
                copy_row(decoded[i : i + n], task.out_selection, out)
                i += n
            else:
                place(out, task.out_selection, decoded[i][task.chunk_selection])
                i += 1

    if joined:
        run_pipelined(fetched(), decode, None if len(batches) > 1 else 1)
        return
    # (see TINY_BATCH_CHUNKS) a batch at a time, in turns with other threads reading tiny
    # chunks, unless the files come from a disk: then the reads are left to overlap theirs
    turns, slow = turns_for(ctx.chunks), False
    for batch in batches:
        keys = keys_of(batch)
        raws = get_many(keys, limit) if slow else None
        turn = turns is not None and turns.take()
        try:
            if raws is None:
                t0 = time.perf_counter()
                raws = get_many(keys, limit)
                slow = time.perf_counter() - t0 > TINY_SLOW_READ_SECONDS * len(keys)
            decode((batch, keys, raws))
        finally:
            if turn:
                turns.give()


def _decode_runs(
    ctx: ChunkContext, group: list[ChunkProjection], runs: list[tuple[Any, list[int], list[int]]], out: np.ndarray,
    per_batch: int,
) -> None:
    """Decode the chunks of ``group``, stored in ``runs`` (see :meth:`GroupedKeys.get_runs`),
    in batches of up to ``per_batch`` chunks stored one after the other, each batch with one
    call of the compressor, and copy them into ``out`` (a batch tiling a box of the chunk
    grid as one box, see :func:`place_box`); chunks in no run read as missing
    (:meth:`ChunkContext.missing_chunk`)."""
    codec = ctx.codec
    key_of = ctx.chunk_key_function()
    batches = []
    stored = [False] * len(group)
    for data, positions, lengths in runs:
        at = 0
        for k in range(0, len(positions), per_batch):
            some = lengths[k : k + per_batch]
            size = sum(some)
            batches.append((data[at : at + size], positions[k : k + per_batch], some))
            at += size
        for i in positions:
            stored[i] = True
    for p, there in zip(group, stored):
        if not there:
            out[p.out_selection] = ctx.missing_chunk(key_of(p.chunk_coords))

    def decode(batch: tuple[Any, list[int], list[int]]) -> None:
        data, positions, lengths = batch
        chunks = [group[i] for i in positions]
        decoded = codec.decode_joined(data, lengths, _Keys(key_of, chunks), per_batch)
        if not place_box(out, chunks, decoded):
            for p, chunk in zip(chunks, decoded):
                place(out, p.out_selection, chunk[p.chunk_selection])

    run_tasks(decode, batches)


class _Keys(Sequence[str]):
    """The keys of chunks, each made when asked for (a decode names the chunk it fails on)."""

    def __init__(self, key_of: Callable[[tuple[int, ...]], str], chunks: list[ChunkProjection]):
        self.key_of = key_of
        self.chunks = chunks

    def __len__(self) -> int:
        return len(self.chunks)

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[str]: ...

    def __getitem__(self, i: int | slice) -> str | Sequence[str]:
        if isinstance(i, slice):
            return _Keys(self.key_of, self.chunks[i])
        return self.key_of(self.chunks[i].chunk_coords)


def place_box(out: np.ndarray, chunks: list[ChunkProjection], decoded: np.ndarray) -> bool:
    """Copy decoded chunks (``decoded[i]`` the chunk of ``chunks[i]``, each whole, C-ordered)
    into ``out`` as one box, when they are complete chunks tiling a box of the chunk
    grid and the selection places them as the grid does (basic slices); False otherwise
    (nothing copied).  The chunks may come in C order of their coordinates or, in a box of
    2^k chunks along each dimension, in any order that permutes the bits of that position (a
    Morton order, as zarr-python stores the inner chunks of a shard).  The box is then copied
    with a few assignments (one per chunk along the last dimension), each releasing the
    interpreter lock, instead of one assignment (and its Python) per chunk."""
    n = len(chunks)
    shape = decoded.shape[1:]
    ndim = len(shape)
    if n < 2 or out.ndim != ndim or not decoded.flags.c_contiguous:
        return False
    at = np.array([p.chunk_coords for p in chunks], dtype=np.int64).reshape(n, ndim)
    lo = at.min(axis=0)
    counts = [int(c) for c in at.max(axis=0) - lo + 1]
    if math.prod(counts) != n or not all(p.is_complete_chunk for p in chunks):
        return False
    weights = np.array([math.prod(counts[d + 1 :]) for d in range(ndim)], dtype=np.int64)
    order = (at - lo) @ weights  # each chunk's place in C order of the box
    digits = _digits(order, counts)
    if digits is None:
        return False
    first, last = chunks[int(np.argmin(order))], chunks[int(np.argmax(order))]
    if len(first.out_selection) != ndim or len(last.out_selection) != ndim:
        return False
    box = []
    for a, b, c, length in zip(first.out_selection, last.out_selection, counts, shape):
        if type(a) is not slice or type(b) is not slice or a.step not in (None, 1) or b.step not in (None, 1):
            return False
        if b.stop - a.start != c * length:
            return False
        box.append(slice(a.start, b.stop))
    radices, axes = digits
    region = out[tuple(box)]
    # each axis of the box split into its digits (chunk positions along it), then the place
    # in the chunk; the decoded chunks split likewise, their digits in the order they came
    target_shape: list[int] = []
    target_strides: list[int] = []
    for d in range(ndim):
        step = region.strides[d] * shape[d] * counts[d]
        for r in radices[d]:
            step //= r
            target_shape.append(r)
            target_strides.append(step)
        target_shape.append(shape[d])
        target_strides.append(region.strides[d])
    target = np.lib.stride_tricks.as_strided(region, target_shape, target_strides, writeable=True)
    flat = [r for rs in radices for r in rs]
    source = decoded.reshape(*(flat[a] for a in axes), *shape)
    k = len(flat)
    perm: list[int] = []
    at_digit = 0
    for d in range(ndim):
        for _ in radices[d]:
            perm.append(axes.index(at_digit))
            at_digit += 1
        perm.append(k + d)
    source = source.transpose(perm)
    if ndim < 2:
        copy_runs(target, source)
        return True
    # one assignment per place along the last dimension's digits: each then copies runs
    # along the next-to-last dimension (as many as a chunk has there), not the few chunks of
    # the box side by side along the last (for 128^3 of 32^3 uint16 chunks: 20% less time)
    lead: tuple[Any, ...] = (slice(None),) * (target.ndim - len(radices[-1]) - 1)
    for place_at in itertools.product(*map(range, radices[-1])):
        here = lead + place_at
        copy_runs(target[here], source[here])
    return True


def _digits(order: np.ndarray, counts: list[int]) -> tuple[list[list[int]], list[int]] | None:
    """How chunks that come in ``order`` (each one's place in C order of a box of ``counts``
    chunks) are laid out, as digits: per dimension the radices of its digits (most
    significant first), and the digits of the C-order place (numbered from the most
    significant) in the order of the chunks' own places, most significant first; None when
    the order is neither C order nor a permutation of the bits of the C-order place."""
    n = len(order)
    if bool((order == np.arange(n)).all()):
        return [[c] for c in counts], list(range(len(counts)))
    bits = [c.bit_length() - 1 for c in counts]
    if any(c != 1 << b for c, b in zip(counts, bits)):
        return None
    total = sum(bits)
    # bit j of a chunk's own place moves to bit ``moved[j]`` of its C-order place
    moved = []
    for j in range(total):
        v = int(order[1 << j])
        if v & (v - 1) or not v:
            return None
        moved.append(v.bit_length() - 1)
    if len(set(moved)) != total:
        return None
    own = np.arange(n)
    expect = np.zeros(n, dtype=np.int64)
    for j, m in enumerate(moved):
        expect |= ((own >> j) & 1) << m
    if not bool((expect == order).all()):
        return None
    # C-order digits numbered from the most significant bit: bit m is digit total - 1 - m
    return [[2] * b for b in bits], [total - 1 - moved[j] for j in range(total - 1, -1, -1)]


class Row(NamedTuple):
    """A row of complete chunks spanning the output's last dimension (see :func:`chunk_rows`):
    the leading dimensions' chunk coordinates, chunk selections and out selections (slices),
    and the last dimension's chunks, ``(index, chunk selection, out selection, complete)``,
    with their ``indices``, which every row of a read shares."""

    coords: tuple[int, ...]
    chunk_selection: tuple[Any, ...]
    out_selection: tuple[Any, ...]
    last: list[tuple[int, Any, Any, bool]]
    indices: list[int]

    def projections(self) -> list[ChunkProjection]:
        """The row's chunks, one projection each."""
        coords, chunk_sel, out_sel = self.coords, self.chunk_selection, self.out_selection
        return [ChunkProjection((*coords, c), (*chunk_sel, cs), (*out_sel, o), True) for c, cs, o, _ in self.last]


def chunk_rows(indexer: Any, out: np.ndarray, chunk_shape: tuple[int, ...], workers: int) -> list[Any] | None:
    """The chunks of the selection of ``indexer`` (in the order of its projections), each row
    of complete chunks that spans the last dimension of ``out`` (a C-contiguous array) as one
    :class:`Row`, the others as projections; None when no row qualifies, or the indexer does
    not give its projections as rows (see ``rows`` of the product indexers).

    A row's chunks share every out selection but the last, whose slices follow each other
    from 0 to the end of the axis; every chunk but the row's last is whole there, and all have
    the row's lengths in the other dimensions (edge chunks of those hold a part of the same
    size).  The last dimension's chunks are the same for every row, so they are checked once.
    """
    ndim = len(chunk_shape)
    width = out.shape[-1] if out.ndim else 0
    if ndim < 2 or out.ndim != ndim or not out.flags.c_contiguous or width <= chunk_shape[-1]:
        return None
    if chunk_shape[-1] * out.dtype.itemsize > ROW_MAX_RUN_BYTES:
        return None
    per_row = -(-width // chunk_shape[-1])
    row_bytes = per_row * int(np.prod(chunk_shape, dtype=np.int64)) * out.dtype.itemsize
    if row_bytes > ROW_MAX_BYTES or out.nbytes < ROW_OUTPUT_FACTOR * max(workers, 1) * row_bytes:
        return None
    factors = indexer.rows() if hasattr(indexer, "rows") else None
    if factors is None:
        return None
    lead, last = factors
    if len(last) != per_row:
        return None
    at = 0
    for i, (_, _, s, complete) in enumerate(last):
        if not (complete and type(s) is slice and s.step in (None, 1) and s.start == at):
            return None
        if i < per_row - 1 and s.stop - s.start != chunk_shape[-1]:
            return None
        at = s.stop
    if at != width:
        return None
    indices = [c for c, _, _, _ in last]
    tasks: list[Any] = []
    grouped = False
    for coords, chunk_sel, out_sel, complete in lead:
        if complete:
            tasks.append(Row(coords, chunk_sel, out_sel, last, indices))
            grouped = True
        else:
            tasks += [ChunkProjection((*coords, c), (*chunk_sel, cs), (*out_sel, o), False) for c, cs, o, _ in last]
    return tasks if grouped else None


def copy_row(buf: np.ndarray, lead: tuple[Any, ...], out: np.ndarray) -> None:
    """Copy a row of decoded chunks (``buf[i]`` holding its ``i``-th chunk, see :class:`Row`),
    whose out selection in the leading dimensions is ``lead``, into ``out``: one assignment
    for the whole chunks, one for a last, partial one."""
    region = out[lead]  # the row's span of every leading dimension, the whole last one
    lengths = region.shape[:-1]
    last = buf.shape[-1]
    src = buf[(slice(None), *(slice(0, n) for n in lengths))]
    whole = region.shape[-1] // last
    rest = region.shape[-1] - whole * last
    if whole:
        target = region[..., : whole * last].reshape(*lengths, whole, last)
        # the last axis of ``region`` is contiguous, so splitting it gives a view
        target[...] = np.moveaxis(src[:whole], 0, -2)
    if rest:
        region[..., whole * last :] = src[whole, ..., :rest]


def _check_out(out: np.ndarray, shape: tuple[int, ...], dtype: np.dtype) -> None:
    if not isinstance(out, np.ndarray):
        raise TypeError(f"out must be a numpy array, got {type(out).__name__}")
    if tuple(out.shape) != shape:
        raise ShapeMismatchError(f"out has shape {out.shape}, expected {shape} for this selection")
    if out.dtype != dtype:
        raise ShapeMismatchError(f"out has dtype {out.dtype}, expected {dtype}")


__all__ = ["read_selection", "filled"]
