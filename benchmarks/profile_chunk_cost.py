"""Where the time of a small chunk goes: a zarrkit read, per chunk, split into its stages.

    python benchmarks/profile_chunk_cost.py [--quick] [--runs 7] [--dir DIR] [--out FILE]

The two chunk-bound arrays of the thread-scaling section (``threads.py``, written by
zarr-python into ``--dir``, or a temporary directory, unless already there): *plain*, float64
in 32x32 chunks (8 KiB), and *sharded*, uint16 in 128^3 shards of 32^3 inner chunks (64 KiB),
both zstd level 0, read whole from a local directory (page cache) on one thread
(``zarrkit.config.set(threads=1)``).

Each stage is timed on its own, from outside the engine, doing what the engine does for every
chunk of the read, and divided by the number of chunks:

* **resolve**: the selection into the chunk list (``make_indexer`` and its projections);
* **locate**: each chunk's store key; for the sharded array, as the engine does, the inner
  chunks grouped by shard from their coordinates (no keys), each shard's index (read and
  decoded once per shard) and the chunks' entries in it;
* **read**: the store's I/O: the chunk file's bytes (``store.get``), or the span of a shard
  that holds its chunks, read once from the shard held open and sliced, as the engine does;
* **decode**: the codec chain's ``decode_into`` of those bytes into a chunk-shaped buffer, one
  chunk at a time (the engine decodes zstd chunks stored one after the other a batch at a
  time: what that saves shows in *other*);
* **scatter**: the numpy copy of that buffer into a new result array (its first-touch page
  faults included, as in a read); for the sharded array a shard's decoded chunks at a time
  (``place_box``, as the engine copies them);
* **other**: the whole read's time minus the five: the engine's own per-chunk work (tasks,
  closures, checks) and whatever the stages overlap or cost differently inside it.

Beside it, per chunk: zarrkit's whole read with its default thread count, and tensorstore's
whole read of the same array with its concurrency limits at 1 and at its defaults.  Every
figure is the median of ``--runs`` runs, the stages taking turns round by round.  Markdown on
stdout (and in ``--out``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import numpy as np
import threads as T

STAGES = ["resolve", "locate", "read", "decode", "scatter"]


def stage_functions(path: str) -> tuple[dict[str, Callable[[], Any]], int, str]:
    """The timed functions of one array: each stage, and the whole read; the chunk count;
    what the array is."""
    import zarrkit
    from zarrkit.codecs.buffers import copy_runs
    from zarrkit.core.indexing import make_indexer
    from zarrkit.core.read import place_box
    from zarrkit.storage import ByteRange

    z = zarrkit.open_array(zarrkit.DirectoryStore(path), mode="r")
    ctx = z._ctx
    meta = ctx.meta
    shape = tuple(meta.shape)
    codec = ctx.codec
    chunk_shape = tuple(ctx.chunk_shape)
    dtype = ctx.dtype
    sel = (slice(None),) * len(shape)
    projections = list(iter(make_indexer(sel, shape, ctx.grid, "basic")))
    key_of = ctx.chunk_key_function()
    keys = [key_of(p.chunk_coords) for p in projections]
    sharding = getattr(meta, "sharding", None)
    base = ctx.store
    limit = ctx.stored_limit()

    def resolve():
        return list(iter(make_indexer(sel, shape, ctx.grid, "basic")))

    if sharding is None:
        def locate():
            return [key_of(p.chunk_coords) for p in projections]

        def read():
            get = base.get
            return [get(k) for k in keys]
    else:
        inner = ctx.chunks  # the store of the inner chunks
        coords = [p.chunk_coords for p in projections]
        shards = []  # (shard key, the chunks' coordinates in it, their positions in the read)
        for group in inner.coord_groups(coords):
            shard_coords, local = inner._in_shard([coords[i] for i in group])
            shards.append((inner._shard_key(shard_coords), local, group))
        order = [i for _, _, group in shards for i in group]
        off, length = sharding.index.range()
        index_range = ByteRange(off, length)

        def indexes():
            out = {}
            for shard, _, _ in shards:
                raw = base.get(shard, index_range)
                out[shard] = sharding.index.decode(bytes(raw), shard, None)
            return out

        def entries_of(found):
            return {shard: found[shard][tuple(local.T)].reshape(-1, 2).tolist() for shard, local, _ in shards}

        def locate():  # the chunks grouped by shard from their coordinates, their entries looked up
            inner.coord_groups([p.chunk_coords for p in projections])
            return entries_of(indexes())

        spans = entries_of(indexes())
        held = getattr(base, "value_version", None)

        def read():  # each shard's span of the chunks read once (held open), sliced into them
            got = []
            for shard, entries in spans.items():
                lo = min(o for o, _ in entries)
                hi = max(o + n for o, n in entries)
                version = held(shard) if held is not None else None
                if version is not None:
                    try:
                        span = memoryview(version.read(lo, hi - lo))
                    finally:
                        version.close()
                else:
                    span = memoryview(base.get(shard, ByteRange(lo, hi - lo)))
                got += [span[o - lo : o - lo + n] for o, n in entries]
            out: list[Any] = [None] * len(got)
            for i, raw in zip(order, got):
                out[i] = raw
            return out

    raws = read()
    if len(raws) != len(keys) or any(r is None for r in raws):
        raise RuntimeError(f"{path}: a chunk is missing")
    buf = np.empty(chunk_shape, dtype)
    bufs = []

    def decode():
        for raw, k in zip(raws, keys):
            codec.decode_into(raw, k, buf)

    # the decoded chunks, for the scatter stage (decoded once, untimed)
    for raw, k in zip(raws, keys):
        b = np.empty(chunk_shape, dtype)
        codec.decode_into(raw, k, b)
        bufs.append(b)

    if sharding is None:
        def scatter():  # (short runs along the last axis copied as single items, as the engine does)
            out = np.zeros(shape, dtype)
            for p, b in zip(projections, bufs):
                copy_runs(out[p.out_selection], b[p.chunk_selection])
            return out
    else:
        # a shard's chunks, decoded one after the other in the order they are stored, copied
        # a shard at a time as the engine does (place_box)
        boxes = []
        for shard, _, group in shards:
            stored = sorted(range(len(group)), key=lambda k: spans[shard][k][0])
            chunks = [projections[group[k]] for k in stored]
            boxes.append((chunks, np.stack([bufs[group[k]] for k in stored])))

        def scatter():
            out = np.zeros(shape, dtype)
            for chunks, decoded in boxes:
                if not place_box(out, chunks, decoded):
                    raise RuntimeError("a shard's chunks do not tile a box")
            return out

    def whole():
        with zarrkit.config.set(threads=1):
            return z[...]

    def whole_default():
        return z[...]

    what = (f"{'x'.join(map(str, shape))} {dtype}, "
            + (f"{'x'.join(map(str, meta.sharding.chunk_shape))} inner chunks in shards"
               if sharding is not None else f"{'x'.join(map(str, chunk_shape))} chunks"))
    del limit
    return ({"resolve": resolve, "locate": locate, "read": read, "decode": decode,
             "scatter": scatter, "whole": whole, "whole_default": whole_default},
            len(projections), what)


def tensorstore_functions(path: str) -> dict[str, Callable[[], Any]]:
    try:
        import tensorstore as ts
    except ImportError:
        return {}
    out = {}
    for label, ctx in (("ts_1", {"data_copy_concurrency": {"limit": 1},
                                 "file_io_concurrency": {"limit": 1}}), ("ts_default", {})):
        h = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": path + "/"}},
                    read=True, context=ts.Context(ctx)).result()
        out[label] = (lambda h=h: h[...].read().result())
    return out


def measure(fns: dict[str, Callable[[], Any]], runs: int) -> dict[str, float]:
    """Median seconds of each function: one untimed call each, then ``runs`` rounds in which
    every function runs once (the order reversed every other round)."""
    names = list(fns)
    for n in names:
        fns[n]()
    times: dict[str, list[float]] = {n: [] for n in names}
    for r in range(runs):
        for n in (names if r % 2 == 0 else names[::-1]):
            t0 = time.perf_counter()
            fns[n]()
            times[n].append(time.perf_counter() - t0)
    return {n: statistics.median(v) for n, v in times.items()}


def render(rows: list[dict], quick: bool, runs: int) -> str:
    from importlib.metadata import PackageNotFoundError, version

    def v(pkg):
        try:
            return version(pkg)
        except PackageNotFoundError:
            return "not installed"

    L = ["# Per-chunk cost of small-chunk reads (zarrkit)", "",
         (f"`python benchmarks/profile_chunk_cost.py{' --quick' if quick else ''} --runs {runs}` "
          f"on {os.cpu_count()} logical cores (load average at the end "
          f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}); zarrkit {v('zarrkit')}, "
          f"tensorstore {v('tensorstore')}, numpy {v('numpy')}."), "",
         ("Microseconds per chunk, median of the runs. The stages are timed each on its own "
         "from outside the engine (one thread): **resolve** the selection into the chunk "
         "list, **locate** the keys (and, sharded, each shard's index read and decoded once "
         "and each inner chunk's entry), **read** the store I/O, **decode** the codec chain "
         "into a chunk buffer, **scatter** the copy into a new result; **other** is zarrkit's "
         "whole read on one thread minus those five (its own per-chunk work). tensorstore "
         "reads the same array whole, with its concurrency limits at 1 and at its defaults."),
         "",
         ("| array | chunks | resolve | locate | read | decode | scatter | other | zarrkit, "
          "1 thread | zarrkit, default threads | tensorstore, limits 1 | tensorstore, default |"),
         "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            L.append(f"| {r['array']} | | **FAILED**: {r['error'][:200]} |" + " |" * 9)
            continue
        n = r["chunks"]
        us = {k: s / n * 1e6 for k, s in r["t"].items()}
        other = us["whole"] - sum(us[s] for s in STAGES)

        def cell(key, us=us):
            return f"{us[key]:.1f}" if key in us else "n/a"

        L.append(f"| {r['array']}: {r['what']} | {n:,} | "
                 + " | ".join(cell(s) for s in STAGES)
                 + f" | {other:.1f} | {cell('whole')} | {cell('whole_default')} | "
                 f"{cell('ts_1')} | {cell('ts_default')} |")
    L.append("")
    L.append("The stages' sum can exceed the whole read (a negative *other*): the engine "
             "decodes a chunk whose place in the result is contiguous straight into it, "
             "holds a shard open once for all its inner chunks, and keeps decoded shard "
             "indexes between reads, where the stages here each pay their own way.")
    L.append("")
    return "\n".join(L)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="the smaller arrays, 3 runs")
    ap.add_argument("--runs", type=int, default=None, help="runs per figure (default 7; 3 quick)")
    ap.add_argument("--dir", default=None, help="where the arrays are (written when missing; "
                    "default: a temporary directory, removed after)")
    ap.add_argument("--out", default=None, help="also write the markdown here")
    args = ap.parse_args(argv)
    runs = args.runs or (3 if args.quick else 7)
    tmp = args.dir or tempfile.mkdtemp(prefix="zarrkit-chunkcost-")
    try:
        info = T.prepare(tmp, args.quick)
        rows = []
        for name in ("plain", "sharded"):
            path = info[name]["path"]
            row: dict[str, Any] = {"array": name}
            try:
                fns, n, what = stage_functions(path)
                want = T.expected(name, tuple(info[name]["shape"]))
                got = fns["whole"]()
                if not np.array_equal(got, want) or not np.array_equal(fns["scatter"](), want):
                    raise AssertionError("WRONG DATA")
                del got, want
                fns.update(tensorstore_functions(path))
                row.update(chunks=n, what=what, t=measure(fns, runs))
            except Exception as e:  # noqa: BLE001 - reported in the table
                row["error"] = f"{type(e).__name__}: {e}"
            print(f"{name}: done", file=sys.stderr, flush=True)
            rows.append(row)
        report = render(rows, args.quick, runs)
        print(report)
        if args.out:
            with open(args.out, "w") as f:
                f.write(report + "\n")
    finally:
        if args.dir is None:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
