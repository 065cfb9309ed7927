"""Why two Python threads each calling ``z[region]`` for small regions gain little, and what
reading the regions as one plan gains: writes ``benchmarks/PROFILE-threads.md``.

Usage::

    python benchmarks/profile_threads.py [--out benchmarks/PROFILE-threads.md] [--runs 5]

The array: 512^3 ``uint16`` in 128^3 shards of 32^3 inner chunks (64 KiB each, 4,096 of them),
zstd level 0, in a local directory (page cache), the values of zarrs' benchmark.  Every figure
is the best of ``--runs`` in one process, each way in turns:

* the cost of one thread waking another on this machine (two threads handing a semaphore to
  each other, and two processes a byte through pipes): what every hand-over of the interpreter
  lock to a thread that sleeps waiting for it costs;
* the 4,096 inner chunks read one call each (``z[region]``) by 1 and by 2 threads, with the
  process's CPU time, and the context switches per read (``getrusage``): how often the lock
  changed hands through a sleep;
* the parts of one read alone (its plan, the store's read of the inner chunk, the decode);
* the same regions as one ``get_many`` call with 1 and 2 pool threads, and as
  ``asyncio.gather`` over ``AsyncArray.getitem``;
* tiny chunks a compressor decodes one at a time: 4096^2 ``uint8`` in 32^2 chunks (1 KiB,
  16,384 of them), a v2 array with Blosc LZ4 level 5 and byte shuffle (zarr-python 2's
  default), read whole with 1 and 2 pool threads, and by 2 threads each reading half of it;
  the parts of a chunk's read alone (the store's batch read of the files, the decode).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import resource
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import zarrkit
from zarrkit.core.indexing import make_indexer

SHAPE, SHARD, INNER = (512,) * 3, (128,) * 3, (32,) * 3
TINY_SHAPE, TINY_CHUNKS = (4096, 4096), (32, 32)


def make_array(path: str) -> zarrkit.Array:
    z = zarrkit.create_array(path, shape=SHAPE, chunks=INNER, shards=SHARD, dtype="uint16",
                             compressors=zarrkit.codecs.ZstdCodec(level=0))
    for i0 in range(0, SHAPE[0], SHARD[0]):
        i, j, k = np.ogrid[i0 : i0 + SHARD[0], : SHAPE[1], : SHAPE[2]]
        z[i0 : i0 + SHARD[0]] = ((k + j * j // 32 + i**3) % 65536).astype("uint16")
    return zarrkit.open_array(path, mode="r")


def make_tiny(path: str) -> zarrkit.Array:
    z = zarrkit.create(shape=TINY_SHAPE, chunks=TINY_CHUNKS, dtype="uint8", store=path, zarr_format=2,
                       compressor=zarrkit.Blosc(cname="lz4", clevel=5, shuffle=1))
    i, j = np.ogrid[: TINY_SHAPE[0], : TINY_SHAPE[1]]
    z[...] = ((i * 7 + j) % 251).astype("uint8")
    return zarrkit.open_array(path, mode="r")


def tiny_profile(path: str, runs: int) -> tuple[list, list, int]:
    """The tiny-chunk reads (label, wall, CPU, switches) and the parts of one chunk's read
    (label, µs), and the number of chunks."""
    z = make_tiny(path)
    n = int(np.prod([s // c for s, c in zip(TINY_SHAPE, TINY_CHUNKS)]))
    z[...]
    half = TINY_SHAPE[0] // 2
    reads = []
    for threads in (1, 2):
        with zarrkit.config.set(threads=threads):
            wall, cpu, sw = best(lambda: z[...], runs)
        reads.append((f"`z[...]`, {threads} pool thread{'s' * (threads > 1)}", wall, cpu, sw))
    with zarrkit.config.set(threads=1):
        wall, cpu, sw = best(lambda: in_threads(z.__getitem__, [slice(0, half), slice(half, None)], 2), runs)
    reads.append(("`z[:2048]` and `z[2048:]` from 2 threads at once", wall, cpu, sw))
    ctx = z._ctx
    store, key_of = ctx.chunks, ctx.chunk_key_function()
    keys = [key_of(cc) for cc in np.ndindex(*(s // c for s, c in zip(TINY_SHAPE, TINY_CHUNKS)))]
    raws = store.get_many_upto(keys, 1 << 20)
    out = np.empty(TINY_CHUNKS, dtype="uint8")
    whole = (slice(None),) * 2
    parts = [
        ("the store's read of the chunk files, 256 a call (open, read, close: 3 system calls a file)",
         lambda: [store.get_many_upto(keys[k : k + 256], 1 << 20) for k in range(0, n, 256)]),
        ("the decode (Blosc LZ4 of 1 KiB, the interpreter lock held: releasing it costs more)",
         lambda: [ctx.codec.decode_into(raw, k, out, whole, whole, True) for raw, k in zip(raws, keys)]),
    ]
    return reads, [(what, best(fn, runs)[0] / n * 1e6) for what, fn in parts], n


def best(fn, runs: int) -> tuple[float, float, float]:
    """The best wall time of ``runs`` calls of ``fn``, with its CPU time and context switches."""
    out = (float("inf"), 0.0, 0.0)
    for _ in range(runs):
        r0 = resource.getrusage(resource.RUSAGE_SELF)
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        switches = (r1.ru_nvcsw - r0.ru_nvcsw) + (r1.ru_nivcsw - r0.ru_nivcsw)
        if wall < out[0]:
            out = (wall, cpu, switches)
    return out


def in_threads(work, items: list, n: int) -> None:
    if n == 1:
        for item in items:
            work(item)
        return
    threads = [threading.Thread(target=lambda part=items[k::n]: [work(x) for x in part]) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def wake_up_cost(n: int = 20_000) -> tuple[float, float]:
    """µs per wake-up: threads handing a semaphore back and forth, processes a byte."""
    a, b = threading.Semaphore(0), threading.Semaphore(0)

    def other() -> None:
        for _ in range(n):
            a.acquire()
            b.release()

    t = threading.Thread(target=other)
    t.start()
    t0 = time.perf_counter()
    for _ in range(n):
        a.release()
        b.acquire()
    threads = (time.perf_counter() - t0) / n / 2 * 1e6
    t.join()
    r1, w1 = os.pipe()
    r2, w2 = os.pipe()
    pid = os.fork()
    if pid == 0:
        for _ in range(n):
            os.read(r1, 1)
            os.write(w2, b"x")
        os._exit(0)
    t0 = time.perf_counter()
    for _ in range(n):
        os.write(w1, b"x")
        os.read(r2, 1)
    processes = (time.perf_counter() - t0) / n / 2 * 1e6
    os.waitpid(pid, 0)
    return threads, processes


def timing_lines(rows: list, n: int, base: float, per_digits: int = 0, switch_digits: int = 2) -> list[str]:
    """Table rows of timed reads (label, wall, CPU, context switches) of ``n`` items each: the
    wall time, per item, against ``base`` seconds, CPU over wall, switches per item."""
    return [f"| {what} | {wall:.3f} s | {wall / n * 1e6:.{per_digits}f} µs | {base / wall:.2f}x | "
            f"{cpu / wall:.2f} | {sw / n:.{switch_digits}f} |" for what, wall, cpu, sw in rows]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(Path(__file__).with_name("PROFILE-threads.md")))
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    wake_threads, wake_processes = wake_up_cost()  # (before the pool's threads: the fork is clean)
    with tempfile.TemporaryDirectory() as tmp:
        z = make_array(os.path.join(tmp, "a.zarr"))
        regions = [tuple(slice(c * s, (c + 1) * s) for c, s in zip(cc, INNER))
                   for cc in np.ndindex(*(n // s for n, s in zip(SHAPE, INNER)))]
        n = len(regions)
        for r in regions:  # the page cache and the shard indexes, as a warm reader has them
            z[r]
        rows = []
        for threads in (1, 2):
            wall, cpu, sw = best(lambda t=threads: in_threads(z.__getitem__, regions, t), args.runs)
            rows.append((f"`z[region]` from {threads} thread{'s' * (threads > 1)}", wall, cpu, sw))
        one = rows[0][1]
        ctx = z._ctx
        store, key_of = ctx.chunks, ctx.chunk_key_function()
        keys = [key_of(cc) for cc in np.ndindex(*(n // s for n, s in zip(SHAPE, INNER)))]
        raws = [store.get_upto(k, 1 << 30) for k in keys]
        out = np.empty(INNER, dtype="uint16")
        whole = (slice(None),) * 3
        parts = [
            ("its plan (indexer and its chunk projection)",
             lambda: [list(make_indexer(r, SHAPE, ctx.grid, "basic")) for r in regions]),
            ("the store's read of the inner chunk (shard index kept)",
             lambda: [store.get_upto(k, 1 << 30) for k in keys]),
            ("the decode (zstd, interpreter lock released)",
             lambda: [ctx.codec.decode_into(raw, k, out, whole, whole, True) for raw, k in zip(raws, keys)]),
        ]
        part_rows = [(what, best(fn, args.runs)[0] / n * 1e6) for what, fn in parts]
        many = []
        for threads in (1, 2):
            with zarrkit.config.set(threads=threads):
                wall, cpu, sw = best(lambda: z.get_many(regions), args.runs)
            many.append((f"`z.get_many(regions)`, {threads} pool thread{'s' * (threads > 1)}", wall, cpu, sw))

        async def gathered() -> None:
            await asyncio.gather(*(z.async_array.getitem(r) for r in regions))

        wall, cpu, sw = best(lambda: asyncio.run(gathered()), args.runs)
        many.append(("`asyncio.gather` over `AsyncArray.getitem`, 2 pool threads", wall, cpu, sw))
        tiny_reads, tiny_parts, tiny_n = tiny_profile(os.path.join(tmp, "tiny.zarr"), args.runs)

    L = ["# Many small reads from Python threads, and as one plan", "",
         (f"Generated {datetime.now(UTC):%Y-%m-%d %H:%M} UTC by `python benchmarks/profile_threads.py "
         f"--runs {args.runs}` (zarrkit {zarrkit.__version__}, Python {platform.python_version()}, "
         f"{os.cpu_count()} logical CPUs, load average {', '.join(f'{x:.2f}' for x in os.getloadavg())} at the "
         f"end): {n:,} inner chunks of 32^3 `uint16` (64 KiB) of a 512^3 array in 128^3 shards, zstd level 0, "
         "local directory (page cache); best of the runs."), "",
         "## One thread waking another", "",
         f"- threads handing a semaphore to each other: **{wake_threads:.1f} µs** per wake-up",
         f"- processes handing a byte to each other through pipes: {wake_processes:.1f} µs per wake-up", "",
         ("A thread that releases the interpreter lock (a system call, a decode) while another waits "
         "for it hands it over; when the first wants it back, it sleeps until the other releases "
         "it, and is woken: one such wake-up per hand-over."), "",
         "## The inner chunks one call each", "",
         "| reads | wall | per read | speed-up | CPU / wall | context switches per read |",
         "|---|---|---|---|---|---|"]
    L += timing_lines(rows, n, one)
    L += ["", "The parts of one read, each measured alone on one thread:", "",
          "| part | µs per read |", "|---|---|"]
    L += [f"| {what} | {us:.1f} |" for what, us in part_rows]
    decode = part_rows[2][1]
    held = rows[0][1] / n * 1e6 - decode
    L += ["", (f"Of the {rows[0][1] / n * 1e6:.0f} µs a read takes on one thread, {decode:.0f} µs (the decode) run "
          f"without the interpreter lock and about {held:.0f} µs hold it.  Two threads could at best overlap "
          f"one's decode with the other's held part: {rows[0][1] / n * 1e6 / max(held, rows[0][1] / n * 1e6 / 2):.2f}x "
          "if a hand-over cost nothing.  Each read hands the lock over at every release (the system calls "
          "of the store's read, the decode), and a hand-over to a sleeping thread costs the wake-up above, "
          "about as long as the decode itself: the two threads' reads take longer than one thread's.  "
          "Python threads cannot overlap work that releases the lock for less time than a wake-up "
          "takes; a plan for many regions releases it once per batch of chunks."), "",
          "## The same regions as one plan", "",
          "| reads | wall | per read | vs one thread calling `z[region]` | CPU / wall | context switches per read |",
          "|---|---|---|---|---|---|"]
    L += timing_lines(many, n, one)
    L += ["", f"`get_many` with 2 pool threads against 1: **{many[0][1] / many[1][1]:.2f}x**.", ""]
    t1 = tiny_reads[0][1]
    L += ["## Tiny chunks decoded one at a time", "",
          (f"{tiny_n:,} chunks of 32^2 `uint8` (1 KiB) of a 4096^2 v2 array, Blosc LZ4 level 5 with byte "
           "shuffle (zarr-python 2's default compressor), local directory (page cache), read whole."), "",
          "| reads | wall | per chunk | vs 1 pool thread | CPU / wall | context switches per chunk |",
          "|---|---|---|---|---|---|"]
    L += timing_lines(tiny_reads, tiny_n, t1, per_digits=1, switch_digits=3)
    L += ["", "The parts of one chunk's read, each measured alone on one thread:", "",
          "| part | µs per chunk |", "|---|---|"]
    L += [f"| {what} | {us:.2f} |" for what, us in tiny_parts]
    L += ["", (f"A chunk costs {t1 / tiny_n * 1e6:.1f} µs in all, and no part of it releases the interpreter "
          "lock for longer than a system call on a cached file (about a microsecond): the decode of 1 KiB is "
          "over before a release would hand the lock to another thread, and each of the store's system "
          f"calls releases it for far less than the {wake_threads:.0f} µs a wake-up costs.  So zarrkit reads "
          "such chunks on the calling thread whatever `threads` says, a batch of files with one call of the "
          "store; two threads splitting the read between them take turns a batch at a time (the last row: "
          "when every system call handed the lock over, the same took twice one thread's time).  "
          "A decoder working on many chunks per call without the lock (zstd's, which decodes a batch of "
          "chunks stored one after the other in one call) is what lets threads help."), ""]
    Path(args.out).write_text("\n".join(L))
    print("\n".join(L))


if __name__ == "__main__":
    main()
