"""Rechunking arrays and hierarchies in bounded memory, resumably.

:func:`rechunk` copies an array (or every array of a group, with the attributes of every
node) to a target with other chunks, shards, codecs, data type or Zarr format, holding at
most ``max_mem`` bytes of array data at once whatever the chunk shapes.  The plan
(:mod:`.rechunk_plan`) reads and writes blocks that are whole multiples of the chunks, going
through a temporary intermediate array when the source's and the target's chunks cross.

The run is resumable: a small progress document (:data:`PROGRESS_KEY`, below the target)
records the plan and every block written, after each block; it is written before anything
else and says ``"complete"`` at the end.  Running the same rechunk again after an
interruption (even ``SIGKILL``) skips the blocks recorded and gives the same bytes as a run
that was never interrupted: every block covers whole chunks, so writing one again writes the
same objects.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
import math
import os
import pathlib
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Self

import numpy as np
from tqdm import tqdm

from ..config import config
from ..core.array import Array
from ..core.group import Group, Member
from ..core.pool import run_tasks
from ..errors import ContainsArrayError, NodeNotFoundError, NodesOverlapError
from ..metadata import io
from ..metadata.normalize import normalize_chunks
from ..metadata.walk import iter_nodes
from ..storage.base import Store, join_path, paths_overlap
from ..storage.coerce import StoreLike, open_store
from ..storage.local import DirectoryStore
from ..storage.memory import MemoryStore
from .creation import create
from .rechunk_plan import (
    RechunkPlan,
    Stage,
    count_blocks,
    iter_block_regions,
    parse_memory,
    plan_rechunk,
)
from .streaming import creation_kwargs

__all__ = ["rechunk", "RechunkEvent", "RechunkVerifyError", "PROGRESS_KEY", "TEMP_SUFFIX"]

#: The key (below the target node) of the progress document of a rechunk.
PROGRESS_KEY = ".zarrkit-rechunk.json"
#: What the default temporary store's name adds to the target directory's.
TEMP_SUFFIX = ".rechunk-tmp"
#: The path, in a store holding other things, below which the intermediate arrays live.
_TEMP_DIR = ".zarrkit-rechunk-tmp"

_CODEC_KEYS = ("compressor", "compressors", "filters", "serializer", "codecs", "dtype", "fill_value")


class RechunkVerifyError(ValueError):
    """``verify=True`` found a target array whose values differ from the source's."""


@dataclasses.dataclass(frozen=True)
class RechunkEvent:
    """What the ``callback`` of :func:`rechunk` is told after each block is written and recorded.

    Attributes
    ----------
    array : str
        The path of the array, relative to the rechunked node (``""`` for a lone array).
    stage, stages : int
        The stage (1: into the intermediate array or straight to the target; 2: from the
        intermediate array to the target) and how many the array has.
    block, blocks : int
        The index of the block in its stage and how many the stage has.
    nbytes : int
        The bytes of the block (uncompressed).
    done, total : int
        Bytes processed so far in the whole rechunk (resumed blocks included) and in all.
    """

    array: str
    stage: int
    stages: int
    block: int
    blocks: int
    nbytes: int
    done: int
    total: int


@dataclasses.dataclass
class _Job:
    """The rechunk of one array: its source, target and temporary arrays and its plan."""

    rel: str
    source: Array
    target: Array
    plan: RechunkPlan
    temp_path: str | None
    temp: Array | None = None


# -- opening what users pass -----------------------------------------------------------------------
def _node_of(obj: Any, path: str | None, *, write: bool, storage_options: dict[str, Any] | None
             ) -> tuple[Store, str, bool]:
    """``(store, path, opened here)`` of what the user passed as a source or a target."""
    if isinstance(obj, (Array, Group)):
        return open_store(obj.store), join_path(obj.path, path or ""), False
    named = isinstance(obj, (str, os.PathLike))
    store = open_store(obj, read_only=not write, storage_options=storage_options)
    return store, (path or "").strip("/"), named


def _temp_location(target: Store, tpath: str, temp_store: StoreLike) -> tuple[Store, str, bool]:
    """Where the intermediate arrays live: the user's ``temp_store``, else a directory beside
    a target directory (``<target>.rechunk-tmp``), else a hidden path in the target store."""
    if temp_store is not None:
        store = open_store(temp_store)
        return store, _TEMP_DIR, isinstance(temp_store, (str, os.PathLike))
    if isinstance(target, DirectoryStore):
        root = pathlib.Path(target.root)
        # its chunks are written in place, not renamed in (one file operation less per chunk):
        # each is written once, and read only once the block that wrote it is recorded, so a
        # write cut short by a kill is written again whole before anything reads it
        temp = DirectoryStore(root.parent / (root.name + TEMP_SUFFIX), atomic=False)
        return temp, join_path(tpath, _TEMP_DIR), True
    return target, join_path(tpath, _TEMP_DIR), False


def _describe_store(store: Store) -> Any:
    holder, prefix = store.location()
    return [str(holder), str(prefix)]


# -- target chunks -----------------------------------------------------------------------------------
def _chunks_for(rel: str, src: Array, chunks: Any) -> Any:
    """The chunks the target of ``src`` gets: from a dict by array path, a shape for arrays of
    its rank, ``"auto"``, or None (the source's)."""
    if isinstance(chunks, Mapping):
        # a lone array (rel "") may also be named by its own name
        for key in (rel, "/" + rel) if rel else ("", "/", src.basename or ""):
            if key in chunks:
                return chunks[key]
        return None
    if chunks is None or isinstance(chunks, str):
        return chunks
    if isinstance(chunks, (int, np.integer)):
        return chunks
    shape = tuple(chunks)
    return shape if len(shape) == src.ndim else None


def _target_kwargs(rel: str, src: Array, fmt: int, chunks: Any, shards: Any, codecs: dict[str, Any]
                   ) -> dict[str, Any]:
    ov = dict(codecs)
    mine = _chunks_for(rel, src, chunks)
    if mine is not None:
        dtype = np.dtype(ov.get("dtype", src.dtype))
        ov["chunks"] = normalize_chunks(mine, tuple(src.shape), max(dtype.itemsize, 1))
    my_shards = _chunks_for(rel, src, shards)
    if my_shards is not None:
        ov["shards"] = tuple(normalize_chunks(my_shards, tuple(src.shape), 1)) \
            if not isinstance(my_shards, str) else my_shards
        ov.setdefault("chunks", src.chunks)
    return creation_kwargs(src, fmt, ov)


def _documents(path: str, fmt: int, kwargs: dict[str, Any] | None, attrs: dict[str, Any]) -> dict[str, bytes]:
    """The metadata documents of the target node (an array when ``kwargs`` are given), by key."""
    if kwargs is None:
        return io.group_documents(path, fmt, attrs)
    mem = MemoryStore()
    create(store=mem, path=path or None, zarr_format=fmt, attributes=attrs, **kwargs)
    # the node's own documents, not those of the groups made above it
    return {key: bytes(mem.get(key) or b"") for key in mem.list_prefix("")
            if (key.rpartition("/")[0] if "/" in key else "") == path}


def _same_json(a: bytes | None, b: bytes) -> bool:
    if a is None:
        return False
    try:
        return bool(json.loads(a) == json.loads(b))
    except ValueError:
        return False


# -- the progress document ------------------------------------------------------------------------
class _Progress:
    """The progress document: the plan and the blocks written, rewritten after each block."""

    def __init__(self, store: Store, key: str, plan: dict[str, Any], done: dict[str, list[list[int]]],
                 complete: bool):
        self.store, self.key, self.plan, self.complete = store, key, plan, complete
        self.done = {rel: [set(s) for s in stages] for rel, stages in done.items()}

    @classmethod
    def load(cls, store: Store, key: str) -> _Progress | None:
        raw = store.get(key)
        if raw is None:
            return None
        try:
            doc = json.loads(bytes(raw))
            return cls(store, key, doc["plan"], doc["done"], bool(doc["complete"]))
        except (ValueError, KeyError, TypeError):
            return None

    def save(self) -> None:
        doc = {
            "zarrkit_rechunk": 1, "complete": self.complete, "plan": self.plan,
            "done": {rel: [sorted(s) for s in stages] for rel, stages in self.done.items()},
        }
        self.store.set(self.key, json.dumps(doc, separators=(",", ":")).encode())

    def blocks(self, rel: str, stage: int, n_stages: int) -> set[int]:
        stages = self.done.setdefault(rel, [set() for _ in range(n_stages)])
        return stages[stage]


# -- running the blocks -------------------------------------------------------------------------------
def _copy_block(source: Array, target: Array, region: tuple[slice, ...], stage: Stage,
                scratch: np.ndarray | None = None) -> int:
    """Copy one block of ``source`` into ``target``: pieces read into the block's buffer, then
    pieces of whole target chunks written from it, ``stage.threads`` and ``stage.writers``
    tasks at a time (each piece's chunks on its task's thread, so a task holds one piece's
    encoded bytes).  ``scratch``: a flat buffer of the stage's largest block, used for every
    block of the stage (its memory is taken once, not once per block)."""
    if not region:
        target[()] = source[()]
        return int(np.dtype(source.dtype).itemsize)
    block_shape = tuple(r.stop - r.start for r in region)
    n = math.prod(block_shape)
    if scratch is not None and scratch.size >= n:
        buffer = scratch[:n].reshape(block_shape)
    else:
        buffer = np.empty(block_shape, dtype=source.dtype)

    def placed(local: tuple[slice, ...]) -> tuple[slice, ...]:
        return tuple(slice(r.start + sl.start, r.start + sl.stop) for r, sl in zip(region, local))

    def read(local: tuple[slice, ...]) -> None:
        source.get_basic_selection(placed(local), out=buffer[local])

    def write(local: tuple[slice, ...]) -> None:
        target[placed(local)] = buffer[local]

    with config.set(threads=1):  # the pieces are the tasks: one thread each
        run_tasks(read, list(iter_block_regions(block_shape, stage.read_piece)), stage.threads)
        run_tasks(write, list(iter_block_regions(block_shape, stage.write_piece)), stage.writers)
    return int(buffer.nbytes)


def _drop_chunks_within(array: Array, region: tuple[slice, ...]) -> None:
    """Delete the chunks of ``array`` lying wholly within ``region`` (those reaching the
    array's end included)."""
    ranges = []
    for sl, c, n in zip(region, array.chunks, array.shape):
        first = -(-sl.start // c)
        last = -(-sl.stop // c) if sl.stop >= n else sl.stop // c
        ranges.append(range(first, last))
    meta = array.metadata
    for coords in itertools.product(*ranges):
        array.store.delete(join_path(array.path, meta.chunk_key(coords)))


class _Dropper:
    """Deletes the chunks of ``array`` within the regions it is given (see
    :func:`_drop_chunks_within`) on a thread of its own, in order; leaving the ``with`` block
    waits for them and raises the first failure (unless the block itself failed).  With
    ``array`` None it does nothing."""

    def __init__(self, array: Array | None):
        self.array = array
        self.pending: list[Future[None]] = []
        self.executor = ThreadPoolExecutor(1, thread_name_prefix="zarrkit-rechunk-drop") if array is not None else None

    def drop(self, region: tuple[slice, ...]) -> None:
        if self.executor is not None and self.array is not None:
            self.pending.append(self.executor.submit(_drop_chunks_within, self.array, region))

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        if self.executor is None:
            return
        self.executor.shutdown(wait=True)
        if kind is None:
            for future in self.pending:
                future.result()


class _Runner:
    """Runs the stages block by block on the thread pool or on a dask cluster, recording each
    block, moving the bar and telling the callback."""

    def __init__(self, progress: _Progress, bar: Any, callback: Callable[[RechunkEvent], Any] | None,
                 client: Any, total: int, done: int):
        self.progress, self.bar, self.callback, self.client = progress, bar, callback, client
        self.total, self.done = total, done

    def stage(self, job: _Job, index: int, src: Array, dst: Array) -> None:
        stage = job.plan.stages[index]
        n_stages = len(job.plan.stages)
        shape = job.plan.shape
        n = count_blocks(shape, stage.block)
        done = self.progress.blocks(job.rel, index, n_stages)
        todo = [(i, r) for i, r in enumerate(iter_block_regions(shape, stage.block)) if i not in done]
        todo_regions = dict(todo)

        def finished(i: int, nbytes: int) -> None:
            done.add(i)
            self.progress.save()
            self.done += nbytes
            self.bar.update(nbytes)
            if self.callback is not None:
                self.callback(RechunkEvent(job.rel, index + 1, n_stages, i, n, nbytes, self.done, self.total))

        # the intermediate's chunks a block of the last stage has read are not read again:
        # removed once the block is recorded, on a thread of their own (a deletion can wait
        # for the system to finish writing the file) while the next blocks are copied
        with _Dropper(src if index == 1 and n_stages == 2 else None) as dropper:
            if self.client is None:
                largest = math.prod(min(b, n) for b, n in zip(stage.block, shape))
                scratch = np.empty(largest if todo else 0, dtype=src.dtype)
                for i, region in todo:
                    finished(i, _copy_block(src, dst, region, stage, scratch))
                    dropper.drop(region)
                return
            from distributed import as_completed  # an optional dependency, used only with a client

            one = dataclasses.replace(stage, threads=1, write_threads=1)  # a task per block, on a worker's thread
            futures = {self.client.submit(_copy_block, src, dst, region, one, pure=False): i for i, region in todo}
            for future in as_completed(futures):  # type: ignore[no-untyped-call]
                finished(futures[future], int(future.result()))
                dropper.drop(todo_regions[futures[future]])


def _client_of(executor: str, client: Any) -> Any:
    if client is not None:
        return client
    if executor == "threads":
        return None
    if executor != "dask":
        raise ValueError(f"executor: expected 'threads' or 'dask', got {executor!r}")
    try:
        from distributed import get_client
    except ImportError:
        raise ImportError("executor='dask' needs dask.distributed (pip install 'zarrkit[dask]')") from None
    return get_client()


# -- verification ---------------------------------------------------------------------------------------
def _verify(job: _Job, max_mem: int) -> None:
    """Compare the target with the source block by block (two blocks in memory at once)."""
    src, dst = job.source, job.target
    write = job.plan.stages[-1].block
    block = write
    if src.ndim:
        # half the memory for each of the two blocks compared
        per = job.plan.block_bytes
        while per > max_mem // 2 and any(b > c for b, c in zip(block, job.plan.stages[-1].write_chunks)):
            ax = max(range(len(block)), key=lambda a: block[a] // job.plan.stages[-1].write_chunks[a])
            block = tuple(max(job.plan.stages[-1].write_chunks[a], b // 2) if a == ax else b
                          for a, b in enumerate(block))
            per //= 2
    for region in iter_block_regions(job.plan.shape, block):
        a = np.asarray(src[region] if region else src[()])
        b = np.asarray(dst[region] if region else dst[()])
        if a.dtype != b.dtype:
            with np.errstate(all="ignore"):
                a = a.astype(b.dtype)
        equal_nan = b.dtype.kind in "fc"
        if not np.array_equal(a, b, equal_nan=equal_nan):
            where = ", ".join(f"{r.start}:{r.stop}" for r in region)
            raise RechunkVerifyError(f"verify: the target array {dst.name or '/'} differs from the source in [{where}]")


# -- the entry point ---------------------------------------------------------------------------------------
def rechunk(
    source: Any,
    target: StoreLike,
    chunks: Any = None,
    *,
    shards: Any = None,
    max_mem: int | str = "256MiB",
    zarr_format: int | None = None,
    dtype: Any = None,
    compressor: Any = None,
    compressors: Any = None,
    filters: Any = None,
    serializer: Any = None,
    codecs: Any = None,
    fill_value: Any = None,
    source_path: str | None = None,
    target_path: str | None = None,
    temp_store: StoreLike = None,
    overwrite: bool = False,
    executor: str = "threads",
    client: Any = None,
    progress: bool = True,
    callback: Callable[[RechunkEvent], Any] | None = None,
    verify: bool = False,
    storage_options: dict[str, Any] | None = None,
) -> Member:  # an Array or a Group (Any, as Group.__getitem__: see core.group.Member)
    """Copy an array, or a group with every node below it, to ``target`` with new chunks,
    holding at most ``max_mem`` bytes of array data in memory.

    Parameters
    ----------
    source : Array, Group or StoreLike
        What is rechunked: an array or group, or a store (path, URL, mapping) holding one at
        ``source_path``.
    target : StoreLike
        The store the copy is written to (at ``target_path``); may be another kind of store
        than the source's.
    chunks : tuple, dict, int or "auto", optional
        The chunk shape of the copy: one shape (applied to every array of its rank; ``None``
        or ``-1`` in it spans the dimension), a dict of shapes by array path (relative to the
        rechunked group), ``"auto"`` (a guessed shape) or None (the source's chunks).
    shards : tuple or dict, optional
        The shard shape of the copy (Zarr v3), given as ``chunks`` is.
    max_mem : int or str, default "256MiB"
        The memory for blocks of array data and the buffers of their chunk tasks, in bytes
        or as a size (``"1GiB"``, ``"500MB"``).  It must hold about three times the
        largest chunk (or shard) of the source and the target: one in a block, one being
        decoded or encoded with its compressed bytes.  With a dask client, each task holds
        one block.
    zarr_format : {2, 3}, optional
        The format of the copy (default: the source's).
    dtype, compressor, compressors, filters, serializer, codecs, fill_value : optional
        Creation arguments of the copy (values are cast to a new ``dtype``); None keeps the
        source's (translated between formats).  ``compressor="none"``, ``compressors=()``
        and ``filters=()`` store the copy without them.
    source_path, target_path : str, optional
        The node inside the source and target stores.
    temp_store : StoreLike, optional
        Where the intermediate arrays live (deleted at the end), uncompressed: it needs as
        much free space as the array's ``nbytes``.  Default: a directory beside a directory
        target (``<target>.rechunk-tmp``), else a hidden path in the target store.
    overwrite : bool, default False
        Replace a node at the target that is not an interrupted rechunk of this one.
    executor : {"threads", "dask"}, default "threads"
        Run the blocks on zarrkit's thread pool, or as tasks of the current dask client.
    client : distributed.Client, optional
        Run the blocks on this dask client.
    progress : bool, default True
        Show a progress bar (bytes and MB/s).
    callback : callable, optional
        Called with a :class:`RechunkEvent` after every block is written and recorded.
    verify : bool, default False
        At the end, compare the values of the target with the source's.
    storage_options : dict, optional
        fsspec options for URL stores.

    Returns
    -------
    Array or Group
        The target node.

    Notes
    -----
    Running the same call again after an interruption finishes the rechunk: the blocks
    recorded in the progress document (``.zarrkit-rechunk.json`` below the target) are
    skipped, and the result is byte for byte the one an uninterrupted run gives.  A finished
    rechunk says ``"complete": true`` there; running it again does nothing.

    Examples
    --------
    >>> import zarrkit
    >>> src = zarrkit.array(__import__("numpy").arange(10000.0).reshape(100, 100), chunks=(100, 1))
    >>> dst = zarrkit.rechunk(src, zarrkit.storage.MemoryStore(), chunks=(1, 100),
    ...                       max_mem="1MiB", progress=False)
    >>> dst.chunks, bool((dst[:] == src[:]).all())
    ((1, 100), True)
    """
    limit = parse_memory(max_mem)
    if zarr_format not in (None, 2, 3):
        raise ValueError(f"zarr_format: expected 2 or 3, got {zarr_format!r}")
    given = dict(dtype=dtype, compressor=compressor, compressors=compressors, filters=filters,
                 serializer=serializer, codecs=codecs, fill_value=fill_value)
    overrides = {k: v for k, v in given.items() if v is not None}
    if isinstance(overrides.get("compressor"), str) and overrides["compressor"] == "none":
        overrides["compressor"] = None
    if "dtype" in overrides:
        overrides["dtype"] = np.dtype(overrides["dtype"])
    run_client = _client_of(executor, client)
    with contextlib.ExitStack() as stack:
        sstore, spath, s_opened = _node_of(source, source_path, write=False, storage_options=storage_options)
        if s_opened:
            stack.callback(sstore.close)
        tstore, tpath, t_opened = _node_of(target, target_path, write=True, storage_options=storage_options)
        if t_opened:
            stack.callback(tstore.close)
        if io.node_kind(sstore, spath) is None:
            raise NodeNotFoundError(f"rechunk: no Zarr array or group at source path {spath or '/'!r}", path=spath)
        if paths_overlap(sstore, spath, tstore, tpath):
            raise NodesOverlapError(
                f"rechunk: expected a target apart from the source, got source path {spath or '/'!r} "
                f"and target path {tpath or '/'!r} in one store"
            )
        tmp_store, tmp_base, tmp_opened = _temp_location(tstore, tpath, temp_store)
        if tmp_opened:
            stack.callback(tmp_store.close)
        return _rechunk(sstore, spath, tstore, tpath, tmp_store, tmp_base, chunks, shards, limit,
                        zarr_format, overrides, overwrite, run_client, progress, callback, verify)


def _plan_nodes(sstore: Store, spath: str, tpath: str, tmp_base: str, chunks: Any, shards: Any,
                limit: int, zarr_format: int | None, overrides: dict[str, Any]
                ) -> tuple[list[tuple[str, dict[str, bytes]]], list[tuple[str, Array, RechunkPlan, str | None, dict[str, Any]]]]:
    """The metadata documents of every target node, and the plan of every array."""
    nodes: list[tuple[str, dict[str, bytes]]] = []
    arrays: list[tuple[str, Array, RechunkPlan, str | None, dict[str, Any]]] = []
    base = len(spath) + 1 if spath else 0
    threads = max(1, int(config.threads))
    for node_path, kind, fmt_src, _ in iter_nodes(sstore, spath):
        rel = node_path[base:] if node_path != spath else ""
        fmt = zarr_format or fmt_src or 2
        attrs = io.read_attributes(sstore, node_path, fmt_src or 2)
        dpath = join_path(tpath, rel)
        if kind == "group":
            nodes.append((dpath, _documents(dpath, fmt, None, attrs)))
            continue
        src = Array(sstore, path=node_path or None, read_only=True)
        kwargs = _target_kwargs(rel, src, fmt, chunks, shards, overrides)
        docs = _documents(dpath, fmt, kwargs, attrs)
        nodes.append((dpath, docs))
        probe = MemoryStore()
        for key, value in docs.items():
            probe.set(key, value)
        made = Array(probe, path=dpath or None)
        unit = made.shards or made.chunks
        itemsize = max(np.dtype(src.dtype).itemsize, np.dtype(made.dtype).itemsize, 1)
        plan = plan_rechunk(src.shape, itemsize, src.chunks, unit, limit, threads=threads,
                            cast=np.dtype(made.dtype) != np.dtype(src.dtype), name=src.name or "/")
        temp = join_path(tmp_base, rel) if plan.intermediate is not None else None
        arrays.append((rel, src, plan, temp, kwargs))
    return nodes, arrays


def _rechunk(sstore: Store, spath: str, tstore: Store, tpath: str, tmp_store: Store, tmp_base: str,
             chunks: Any, shards: Any, limit: int, zarr_format: int | None, overrides: dict[str, Any],
             overwrite: bool, client: Any, progress: bool, callback: Callable[[RechunkEvent], Any] | None,
             verify: bool) -> Array | Group:
    nodes, arrays = _plan_nodes(sstore, spath, tpath, tmp_base, chunks, shards, limit, zarr_format, overrides)
    fingerprint = {
        "source": {"path": spath, "nodes": [[rel, list(a.shape), str(a.dtype), list(a.chunks)]
                                            for rel, a, _, _, _ in arrays]},
        "target": {"path": tpath, "documents": {k: json.loads(v) for _, docs in nodes for k, v in docs.items()}},
        "temp": [_describe_store(tmp_store), tmp_base],
        "arrays": {rel: plan.to_json() for rel, _, plan, _, _ in arrays},
    }
    key = join_path(tpath, PROGRESS_KEY)
    record = _Progress.load(tstore, key)
    fingerprint = json.loads(json.dumps(fingerprint))  # as the document stores it
    same_nodes = record is not None and all(record.plan.get(k) == fingerprint[k] for k in ("source", "target"))
    if same_nodes and record is not None and not overwrite and record.plan != fingerprint and not record.complete:
        # the same rechunk with another plan (max_mem, temporary store): the target's chunks
        # do not depend on the plan, so what was written stays and every block is written again
        _remove_temp(tmp_store, tmp_base)
        record = _Progress(tstore, key, fingerprint, {}, False)
        record.save()
    resume = same_nodes and not overwrite
    if not resume:
        if io.node_kind(tstore, tpath) is not None or record is not None:
            if not overwrite:
                raise ContainsArrayError(
                    f"rechunk: the target path {tpath or '/'!r} holds a node that is not an "
                    "interrupted rechunk with these arguments; pass overwrite=True to replace it",
                    path=tpath,
                )
            tstore.rmdir(tpath)
        record = _Progress(tstore, key, fingerprint, {}, False)
        record.save()  # first: a target with this document is known to be this rechunk's
    assert record is not None
    if not record.complete:
        if tpath:
            io.require_parent_groups(tstore, tpath, zarr_format or _format_of(nodes))
        for _, docs in nodes:
            for doc_key, value in docs.items():
                existing = tstore.get(doc_key)
                if existing is None or not _same_json(bytes(existing), value):
                    tstore.set(doc_key, value)
        _run_arrays(arrays, tstore, tpath, tmp_store, record, client, progress, callback)
        if any(plan.intermediate is not None for _, _, plan, _, _ in arrays):
            _remove_temp(tmp_store, tmp_base)
        record.complete = True
        record.save()
    if verify:
        for rel, src, plan, _, _ in arrays:
            dst = Array(tstore, path=join_path(tpath, rel) or None, read_only=True)
            _verify(_Job(rel, src, dst, plan, None), limit)
    kind = io.node_kind(tstore, tpath)
    if kind == "group":
        return Group(tstore, path=tpath or None)
    return Array(tstore, path=tpath or None)


def _format_of(nodes: list[tuple[str, dict[str, bytes]]]) -> int:
    return 3 if any(k.endswith("zarr.json") for _, docs in nodes for k in docs) else 2


def _run_arrays(arrays: list[tuple[str, Array, RechunkPlan, str | None, dict[str, Any]]], tstore: Store,
                tpath: str, tmp_store: Store, record: _Progress, client: Any, progress: bool,
                callback: Callable[[RechunkEvent], Any] | None) -> None:
    total = 0
    done = 0
    jobs: list[_Job] = []
    for rel, src, plan, temp, _ in arrays:
        dst = Array(tstore, path=join_path(tpath, rel) or None, write_empty_chunks=False)
        jobs.append(_Job(rel, src, dst, plan, temp))
        nbytes = int(np.prod(plan.shape, dtype=np.int64)) * np.dtype(src.dtype).itemsize
        for index, stage in enumerate(plan.stages):
            n = count_blocks(plan.shape, stage.block)
            total += nbytes
            finished = record.blocks(rel, index, len(plan.stages))
            if n:
                done += nbytes * len(finished) // n
    bar = tqdm(total=total, initial=done, unit="iB", unit_scale=True, unit_divisor=1024,
               desc="rechunk", disable=not progress, leave=False)
    try:
        runner = _Runner(record, bar, callback, client, total, done)
        for job in jobs:
            bar.set_description(f"rechunk {job.rel}" if job.rel else "rechunk")  # (a lone array: no name)
            _run_job(job, tmp_store, runner, record)
    finally:
        bar.close()


def _temp_array(job: _Job, tmp_store: Store) -> Array:
    """The intermediate array of ``job``: made (or made again, same metadata) when missing;
    only its own documents are written (no group above it)."""
    assert job.temp_path is not None and job.plan.intermediate is not None
    if io.node_kind(tmp_store, job.temp_path) is None:
        src = job.source
        kwargs = dict(
            shape=src.shape, chunks=job.plan.intermediate, dtype=src.dtype, fill_value=src.fill_value,
            compressor=None,
        )
        for key, value in _documents(job.temp_path, 2, kwargs, {}).items():
            tmp_store.set(key, value)
    return Array(tmp_store, path=job.temp_path, write_empty_chunks=False)


def _run_job(job: _Job, tmp_store: Store, runner: _Runner, record: _Progress) -> None:
    n_stages = len(job.plan.stages)
    blocks = [count_blocks(job.plan.shape, s.block) for s in job.plan.stages]
    complete = [len(record.blocks(job.rel, i, n_stages)) >= blocks[i] for i in range(n_stages)]
    if n_stages == 1:
        if not complete[0]:
            runner.stage(job, 0, job.source, job.target)
        return
    if not complete[1]:
        temp = _temp_array(job, tmp_store)
        if not complete[0]:
            runner.stage(job, 0, job.source, temp)
        runner.stage(job, 1, temp, job.target)
    # the intermediate array is no longer needed (also when a run stopped after the last block)
    assert job.temp_path is not None
    tmp_store.rmdir(job.temp_path)


def _remove_temp(store: Store, base: str) -> None:
    """Remove what is left below the temporary path, and the default temporary directory."""
    store.rmdir(base)
    if isinstance(store, DirectoryStore) and store.root.name.endswith(TEMP_SUFFIX):
        with contextlib.suppress(OSError):
            for dirpath, _, _ in sorted(os.walk(store.root), key=lambda t: -len(t[0])):
                os.rmdir(dirpath)
