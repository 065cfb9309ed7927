"""Reading and writing sharded arrays: projections on the inner-chunk grid, grouped per shard.

Reads fetch a shard's index with one ranged request, then only the byte ranges of the inner
chunks the selection needs, with nearby ranges coalesced into one request.  Writes rebuild each
touched shard once: a shard the selection covers completely is encoded without any read; a
partially covered shard is read once, its untouched inner chunks are kept byte for byte, and the
shard is written once.
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..codecs.sharding import EMPTY
from ..errors import ChunkDecodeError
from ..storage.base import ByteRange
from .chunks import ChunkContext, filled, is_all_fill, scratch
from .indexing import ChunkProjection
from .pool import run_tasks, threads_for

# Inner chunks closer than this in a shard are fetched with one request (a wasted gap costs
# less than a round trip on any store where ranges matter).
COALESCE_GAP = 256 * 1024


def group_by_shard(
    ctx: ChunkContext, projections: Sequence[ChunkProjection]
) -> dict[tuple[int, ...], list[ChunkProjection]]:
    ratio = ctx.sharding.grid
    groups: dict[tuple[int, ...], list[ChunkProjection]] = defaultdict(list)
    for p in projections:
        groups[tuple(c // r for c, r in zip(p.chunk_coords, ratio))].append(p)
    return groups


def _local(coords: tuple[int, ...], ratio: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(c % r for c, r in zip(coords, ratio))


def coalesce(ranges: list[tuple[int, int, Any]], gap: int = COALESCE_GAP) -> list[list[tuple[int, int, Any]]]:
    """Group ``(offset, nbytes, item)`` ranges whose gaps are at most ``gap`` bytes."""
    groups: list[list[tuple[int, int, Any]]] = []
    end = -1
    for r in sorted(ranges, key=lambda r: r[0]):
        if groups and r[0] - end <= gap:
            groups[-1].append(r)
            end = max(end, r[0] + r[1])
        else:
            groups.append([r])
            end = r[0] + r[1]
    return groups


def read_sharded(ctx: ChunkContext, projections: Sequence[ChunkProjection], out: np.ndarray) -> None:
    sh = ctx.sharding
    ratio = sh.grid
    store = ctx.store
    inner = sh.inner
    inner_shape = sh.chunk_shape
    missing = ctx.missing
    partial = getattr(store, "supports_partial_reads", False)

    threads = threads_for(store)

    def scatter(task: tuple[ChunkProjection, Any, str]) -> None:
        p, data, key = task
        inner.decode_into(data, key, out, p.out_selection, p.chunk_selection, p.is_complete_chunk)

    def read_shard(item: tuple[tuple[int, ...], list[ChunkProjection]]) -> None:
        # Inner chunks are decoded in parallel when this shard is the only one being read (a
        # task started inside a pool worker runs inline: several shards go one per worker).
        shard_coords, ps = item
        key = ctx.key(shard_coords)
        tasks: list[tuple[ChunkProjection, Any, str]] = []
        if partial:
            offset, length = sh.index_range()
            idx_raw = store.get(key, ByteRange(offset, length))
            if idx_raw is None:
                for p in ps:
                    out[p.out_selection] = missing
                return
            index = sh.decode_index(idx_raw, key)
            wanted = []
            for p in ps:
                off, n = index[_local(p.chunk_coords, ratio)]
                if off == EMPTY:
                    out[p.out_selection] = missing
                else:
                    wanted.append((int(off), int(n), p))
            groups = coalesce(wanted)

            def fetch(group: list[tuple[int, int, Any]], get: Any = store.get) -> memoryview:
                start = group[0][0]
                stop = max(o + n for o, n, _ in group)
                raw = get(key, ByteRange(start, stop - start))
                if raw is None or len(raw) < stop - start:
                    raise ChunkDecodeError(
                        f"shard index points to bytes {start}..{stop} beyond the shard's end", key
                    )
                return memoryview(raw)

            if len(groups) == 1 and len(groups[0]) == 1:
                # one inner chunk: fetched and decoded here, its bytes in a buffer the store
                # may reuse (nothing else reads into it before the decode is done)
                p = groups[0][0][2]
                raw = fetch(groups[0], store.get_transient)
                inner.decode_into(raw, f"{key}@{p.chunk_coords}", out, p.out_selection, p.chunk_selection, p.is_complete_chunk)
                return

            for group, view in zip(groups, run_tasks(fetch, groups, threads)):
                start = group[0][0]
                for o, n, p in group:
                    tasks.append((p, view[o - start : o - start + n], f"{key}@{p.chunk_coords}"))
        else:
            raw = store.get(key)
            if raw is None:
                for p in ps:
                    out[p.out_selection] = missing
                return
            index, view = sh.split_shard(raw, key)
            for p in ps:
                off, n = index[_local(p.chunk_coords, ratio)]
                if off == EMPTY:
                    out[p.out_selection] = missing
                else:
                    tasks.append((p, view[int(off) : int(off) + int(n)], f"{key}@{p.chunk_coords}"))
        run_tasks(scatter, tasks)

    run_tasks(read_shard, list(group_by_shard(ctx, projections).items()), threads)


def _inner_in_bounds(ctx: ChunkContext, shard_coords: tuple[int, ...]) -> int:
    """How many inner chunks of this shard intersect the array."""
    sh = ctx.sharding
    count = 1
    for s, r, c, n in zip(shard_coords, sh.grid, sh.chunk_shape, ctx.shape):
        first = s * r
        last = min(first + r, -(-n // c))
        count *= max(last - first, 0)
    return count


def write_sharded(
    ctx: ChunkContext,
    projections: Sequence[ChunkProjection],
    arr: np.ndarray,
    fields: Any,
    synchronizer: Any,
) -> None:
    sh = ctx.sharding
    ratio = sh.grid
    store = ctx.store
    inner = sh.inner
    inner_shape = sh.chunk_shape

    def inner_fill() -> np.ndarray:
        return filled(inner_shape, ctx.dtype, ctx.fill_value)

    def write_shard(item: tuple[tuple[int, ...], list[ChunkProjection]]) -> None:
        shard_coords, ps = item
        key = ctx.key(shard_coords)
        lock = synchronizer[key] if synchronizer is not None else contextlib.nullcontext()
        with lock:
            complete = (
                fields is None
                and all(p.is_complete_chunk for p in ps)
                and len({p.chunk_coords for p in ps}) == _inner_in_bounds(ctx, shard_coords)
            )
            chunks: dict[tuple[int, ...], bytes] = {}
            index = None
            view: Any = None
            if not complete:
                raw = store.get(key)
                if raw is not None:
                    index, view = sh.split_shard(raw, key)
                    for local in zip(*np.nonzero(index[..., 0] != EMPTY)):
                        local = tuple(int(i) for i in local)
                        off, n = index[local]
                        chunks[local] = bytes(view[int(off) : int(off) + int(n)])
            # one inner chunk per task: build it, encode it, let it go (memory: one chunk per
            # worker); the inner chunks of a shard written alone are encoded in parallel
            by_local: dict[tuple[int, ...], list[ChunkProjection]] = {}
            for p in ps:
                by_local.setdefault(_local(p.chunk_coords, ratio), []).append(p)

            def build(item: tuple[tuple[int, ...], list[ChunkProjection]]) -> Any:
                local, lps = item
                first = lps[0]
                if first.is_complete_chunk and fields is None:
                    if ctx.is_edge(first.chunk_coords):
                        chunk = inner_fill()
                    elif ctx.dtype.kind == "O":
                        chunk = np.empty(inner_shape, dtype=ctx.dtype)
                    else:  # this worker's buffer (no fresh pages): the encoded bytes are a copy
                        chunk = scratch(inner_shape, ctx.dtype)
                elif local in chunks:
                    chunk = inner.decode(chunks[local], f"{key}@{first.chunk_coords}")
                    if not chunk.flags.writeable:
                        chunk = chunk.copy()
                else:
                    chunk = inner_fill()
                target = chunk if fields is None else chunk[fields]
                for p in lps:
                    target[p.chunk_selection] = arr[p.out_selection]
                if is_all_fill(chunk, ctx.fill_value):
                    return None
                encoded = inner.encode(chunk, f"{key}@{local}")
                # kept until the shard is written: never a view of a buffer reused meanwhile
                return encoded if isinstance(encoded, bytes) else bytes(encoded)

            items = list(by_local.items())
            for (local, _), encoded in zip(items, run_tasks(build, items)):
                if encoded is None:
                    chunks.pop(local, None)
                else:
                    chunks[local] = encoded
            parts = sh.assemble_parts(chunks, key)
            if parts:
                store.set_parts(key, parts)
            else:
                store.delete(key)

    run_tasks(write_shard, list(group_by_shard(ctx, projections).items()), threads_for(ctx.store))
