#!/usr/bin/env python
"""zarrkit benchmark suite: zarrkit against zarr-python (3 pipelines) and tensorstore.

Usage::

    python benchmarks/run.py [--quick] [--out benchmarks/RESULTS.md] [--only W1,W2]

Workloads (full size; ``--quick`` shrinks W1/W2/W3/W6 to 256^3 and W4 to 2048^2):

W1  write 512^3 float32, 64^3 chunks, blosc lz4 clevel 5 byte-shuffle, local directory, v3 and v2
W2  read all of the W1 arrays (v3 and v2), into a new array and into an existing one (out=)
W3  random 8^3 reads from the 64^3-chunked v3 array (ms per read)
W4  4096^2 uint8, 32^2 chunks (16384 chunks), blosc lz4: write all, read all
W5  sharded v3: 256^3 float32, shard 256^3, inner chunks 64^3: write, read all, read 1 inner chunk
W6  read all from memory, uncompressed, 512^3 float32, 64^3 chunks
W7  read 256 uncompressed 64x64 float32 chunks through a store adding 10 ms per request
ZB  zarrs' published benchmark (github.com/zarrs/zarr_benchmarks): 1024^3 uint16 in 256^3
    chunks, uncompressed / zstd / sharded zstd (64^3 inner chunks): read all, round trip, every
    inner chunk one by one (``--quick``: 256^3, 128^3 chunks, 64^3 inner); see zarr_benchmarks.py
ZB8 the same with 8x smaller chunks: 128^3 chunks; 128^3 shards of 32^3 inner chunks (64 KiB)
    (``--quick``: 64^3 chunks, 64^3 shards of 32^3)

The ZB workloads run first, before the memory touch of the full run; each of their rows gives
the first run in a fresh process (cold) beside the median of the repeated runs (warm).

Sections in modules of their own (``--only remote,growth``; part of the default run):

remote  reads from S3 (moto) through a proxy adding 10 or 50 ms per request (``remote.py``)
threads zarrkit and tensorstore reading chunk-bound arrays with 1 and 2 threads, and the
        speed-up projected to more cores (``threads.py``; with ``--out`` its plot, and the two
        ZB chunkings', are written beside the report: ``scaling_plots.py``)
growth  how costs grow with hierarchy size, chunk count, ``zarrkit cp`` size and workers
        (``growth.py``; with ``--out`` its plots are written beside the report)

A tool of its own, not part of the run: ``profile_chunk_cost.py`` splits the per-chunk time of
a small-chunk zarrkit read into its stages (resolve, locate, read, decode, scatter), beside
tensorstore's per-chunk time.

Every (workload, library) pair runs in a fresh child process (this script with ``--_child``), so
imports, caches and peak memory are attributable; the child reports the peak RSS increase of
each timed sub-operation.  Read workloads read arrays written once by zarr-python (the neutral
writer); every library's output is checked for equality with the source data before timing.
The libraries' children of one operation are alive together and take the timed runs in turns
(one run each per round, in an order that changes every round).

The machine as users have it: ``--as-is`` touches no memory beforehand, leaves the VM's
free-page reporting as it is and never drops the page cache (``make bench-as-is`` writes
``RESULTS-as-is.md``); the default run does all three, so that the libraries' figures do not
depend on which of them first lands on memory the host took back.

Before and after a change: ``--baseline DIR`` adds library ``zarrkit-baseline``, whose children
import zarrkit from ``DIR`` (an earlier checkout's ``src``, e.g. from ``git worktree add``),
measured in the same turns as the current zarrkit; with ``--libs zarrkit`` the report is the
two alone, each row's ratio the current figure over the earlier one.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import platform
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import _benchlib as B
import growth
import remote
import scaling_plots
import threads
import zarr_benchmarks as ZB

WORKLOADS = ["W1", "W2", "W3", "W4", "W5", "W6", "W7", "ZB", "ZB8"]
TITLES = {
    "W1": "W1: write all, {s1}, float32, 64^3 chunks, blosc lz4 clevel 5 shuffle, local directory",
    "W2": "W2: read all of the W1 arrays ({s1}, local directory, page cache)",
    "W3": "W3: one random 8^3 read from the 64^3-chunked v3 array ({n3} reads per run, ms per read)",
    "W4": "W4: {s4} uint8, 32^2 chunks ({c4} chunks), blosc lz4, local directory (v3)",
    "W5": "W5: sharded v3, 256^3 float32, shard 256^3, inner chunks 64^3, blosc lz4",
    "W6": "W6: read all from memory, {s6} float32, 64^3 chunks, uncompressed (v3)",
    "W7": "W7: read all through a store adding 10 ms per request, 1024^2 float32, 64^2 chunks "
          "(256 chunks), uncompressed, in memory (v3)",
}
RESULT_TAG = "@@BENCH-RESULT@@ "
#: sections with their own modules (``--only remote,growth``): ``run(...)`` gives their report
SECTIONS = {"REMOTE": remote, "GROWTH": growth, "THREADS": threads}
CHILD_KINDS = {"remote": remote.child, "remote-prep": remote.prepare, "growth": growth.child,
               "threads": threads.child, "threads-prep": threads.prepare_child}


# --------------------------------------------------------------------------------------------
# child side


def child_main(spec: dict) -> None:
    kind = spec["kind"]
    t0 = time.perf_counter()
    if kind == "prep":
        out = B.prepare_refs(spec["tmp"], spec["quick"])
    elif kind == "limits":
        out = B.measure_limits(spec["tmp"], spec["quick"], spec["runs"])
    elif kind == "versions":
        out = versions()
    elif kind in CHILD_KINDS:
        out = CHILD_KINDS[kind](spec)
    elif kind == "zb-prep":
        out = ZB.prepare(spec["tmp"], spec["quick"], spec.get("workload", "ZB"))
    elif spec["workload"] in ZB.WORKLOADS:
        out = ZB.run_child(spec["op"], spec["lib"], spec["tmp"], spec["quick"],
                           B.Turns(sys.stdin, sys.stdout, gated=True), spec["workload"])
    else:
        out = B.run_child(spec["workload"], spec["op"], spec["lib"], spec["tmp"], spec["quick"],
                          B.Turns(sys.stdin, sys.stdout, gated=True))
    out["_wall"] = time.perf_counter() - t0
    sys.stdout.write("\n" + RESULT_TAG + json.dumps(out) + "\n")
    sys.stdout.flush()


def versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for pkg in ["zarrkit", "zarr", "zarrs", "tensorstore", "numcodecs", "numpy"]:
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = "not installed"
    import zarr.core.codec_pipeline as cp

    out["fused_pipeline"] = hasattr(cp, "FusedCodecPipeline")
    return out


# --------------------------------------------------------------------------------------------
# parent side


def child_command(spec: dict) -> tuple[list[str], dict]:
    """The command line and environment of a child running ``spec``."""
    cmd = [sys.executable, os.path.abspath(__file__), "--_child", json.dumps(spec)]
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    if spec.get("lib") == B.ZarrkitBaselineAdapter.key:
        env["PYTHONPATH"] = env[B.BASELINE_ENV]
    return cmd, env


def spawn(spec: dict, timeout: float) -> tuple[dict | None, str]:
    """Run one child; return (result, stderr tail)."""
    cmd, env = child_command(spec)
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                           check=False)
    except subprocess.TimeoutExpired as e:
        err = (e.stderr or b"")
        err = err.decode() if isinstance(err, bytes) else err
        return None, f"TIMEOUT after {timeout:.0f}s\n{err[-2000:]}"
    res = None
    for line in p.stdout.splitlines():
        if line.startswith(RESULT_TAG):
            res = json.loads(line[len(RESULT_TAG):])
    tail = p.stderr[-4000:]
    if res is None:
        tail = f"child exited with {p.returncode}\n{p.stdout[-1000:]}\n{tail}"
    return res, tail


class Child:
    """A child process taking timed runs in turns (see ``_benchlib.Turns``)."""

    def __init__(self, spec: dict):
        cmd, env = child_command(spec)
        self.err = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.err, env=env)
        self.buf = b""
        self.result: dict | None = None
        self.failure: str | None = None

    def send(self, word: str) -> None:
        try:
            self.proc.stdin.write(word.encode() + b"\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass  # the child is gone: the next wait() reports it

    def wait(self, timeout: float) -> tuple[str, object]:
        """The next tagged line: ("loaded", None), ("ready", None), ("time", seconds) or
        ("result", dict); or ("failed", None) when the child exits or times out first
        (``self.failure`` says why)."""
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while True:
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                text = line.decode(errors="replace")
                if text == B.READY_TAG:
                    return "ready", None
                if text == B.LOADED_TAG:
                    return "loaded", None
                if text.startswith(B.TIME_TAG):
                    return "time", float(text[len(B.TIME_TAG):])
                if text.startswith(RESULT_TAG):
                    self.result = json.loads(text[len(RESULT_TAG):])
                    return "result", self.result
            left = deadline - time.monotonic()
            if left <= 0:
                self.proc.kill()
                self.failure = f"TIMEOUT after {timeout:.0f}s"
                return "failed", None
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                data = os.read(fd, 65536)
                if data:
                    self.buf += data
                    continue
                self.proc.wait()
                self.failure = f"child exited with {self.proc.returncode}"
                return "failed", None

    def stderr_tail(self) -> str:
        self.err.seek(0)
        return self.err.read()[-4000:]

    def close(self) -> None:
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.err.close()


def turn_order(n: int, r: int) -> list[int]:
    """The order of ``n`` libraries in round ``r``: from library ``r``, every ``s``-th (``s``
    coprime with ``n``, changing from round to round), so that neither the first place nor the
    library run just before is always the same one (a plain rotation would have each library
    always follow the same other -- and pay for whatever that one leaves behind)."""
    strides = [s for s in range(1, n) if math.gcd(s, n) == 1] or [1]
    s = strides[r % len(strides)]
    return [(r + i * s) % n for i in range(n)]


def take_turns(children: list[Child], runs: int, timeout: float) -> None:
    """``runs`` rounds in which every child still measuring does one timed run, in the
    round's :func:`turn_order`."""
    for r in range(runs):
        live = [c for c in children if c.result is None and c.failure is None]
        if not live:
            break
        for c in (live[i] for i in turn_order(len(live), r)):
            c.send("run")
            c.wait(timeout)


def run_in_turns(specs: list[dict], runs: int, timeout: float,
                 cold=None, source: str | None = None, rotation: int = 0) -> list[tuple[dict | None, str]]:
    """Measure one operation with several libraries, one child each: the children start
    together (imports, data), then do their cold runs one after the other (in the order
    :func:`turn_order` gives for round ``rotation``: no library is always first), then
    ``runs`` rounds in which every library does one timed run (in the round's
    :func:`turn_order`); returns (result, stderr tail) per spec.  ``cold``, if given, is a
    context manager function the cold runs take place inside, yielding the pause (s) before
    each of them; the files under ``source``, if given, are read before each cold run, so
    that every library finds the data it reads in the page cache (a cold run measures a
    fresh process, not the disk: whichever library went first would otherwise read what
    memory pressure had evicted)."""
    children = [Child(spec) for spec in specs]
    loaded = [c.wait(timeout)[0] == "loaded" for c in children]  # or a result (n/a), a failure
    with (cold() if cold is not None else contextlib.nullcontext(0.0)) as pause:
        for i in turn_order(len(children), rotation):
            c = children[i]
            if loaded[i]:
                time.sleep(pause)
                if source is not None:
                    read_files(source)
                c.send("go")
                c.wait(timeout)  # ready, or a result already (failed)
    take_turns(children, runs, timeout)
    for c in children:
        if c.result is None and c.failure is None:
            c.send("stop")
    out = []
    for c in children:
        while c.result is None and c.failure is None:
            c.wait(timeout)
        tail = c.stderr_tail()
        if c.failure:
            tail = f"{c.failure}\n{tail}"
        c.close()
        out.append((c.result, tail))
    return out


def read_files(root: str) -> None:
    """Read every file under ``root`` once (into one reused buffer): into the page cache."""
    buf = bytearray(16 << 20)
    for d, _, files in os.walk(root):
        for name in files:
            with open(os.path.join(d, name), "rb", buffering=0) as f:
                while f.readinto(buf):
                    pass


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def ram_gib() -> float:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) / 1024 / 1024
    except OSError:
        pass
    return float("nan")


def fmt_size(shape) -> str:
    return "x".join(str(s) for s in shape) if len(set(shape)) > 1 else f"{shape[0]}^{len(shape)}"


def fmt_time(entry) -> str:
    if entry.get("unit") == "ms":
        return f"{entry['seconds'] * 1e3:.3f} ms"
    return f"{entry['seconds']:.3f} s"


def render(results, machine, limits, args, S, problems, wall, sections=(), zb_refs=None) -> str:
    L = []
    mode = "quick" if args.quick else "full"
    L.append(f"# zarrkit benchmarks ({mode})")
    L.append("")
    L.append(f"Generated {datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')} by "
             f"`python benchmarks/run.py{' --quick' if args.quick else ''}"
             f"{' --only ' + args.only if args.only else ''}` in {wall:.0f} s.")
    L.append("")
    L.append("Time is the median of "
             f"{args.runs} timed runs after one untimed cold run (per-op workloads: median over "
             "runs of the mean time per op). "
             "MiB/s counts uncompressed array bytes. **ratio = time(zarrkit) / time(peer)**: "
             "< 1 means zarrkit is faster. Peak RSS is the increase of the child process's RSS "
             "high-water mark (`ru_maxrss`, read as `VmHWM` after resetting it with "
             "`/proc/self/clear_refs`) during the cold run over the child's RSS just before it, "
             "i.e. the memory the operation itself needs (output array included, source data "
             "and open stores excluded). Every (workload, operation, library) runs in its own "
             "fresh process; the cold run's output is checked against the source data before "
             "the timed runs, which the libraries take in turns: each round runs every library "
             "once, in an order that changes every round (the first place and the library "
             "run just before each one vary), so that changes in the machine's speed during "
             "the measurement (a VM sharing its host), and what one library's run leaves for "
             "the next, fall on all libraries alike. Read workloads read arrays written once by zarr-python. Every "
             "write run writes a new directory after the previous runs' files were written "
             "back (`sync`) and, when allowed, dropped from the page cache; outputs are removed "
             "after the last run, followed by a pause (ext4 allocates inodes slowly right "
             "after many were deleted).")
    L.append("")
    L.append("## Machine")
    L.append("")
    for k, v in machine.items():
        L.append(f"- {k}: {v}")
    L.append("")
    if limits:
        L.append("## Machine limits (same run)")
        L.append("")
        L.append("| limit | GB/s |")
        L.append("|---|---|")
        rows = [
            ("memcpy into a fresh numpy array (incl. page faults)", "memcpy_fresh_GBps"),
            ("memcpy into an existing array", "memcpy_warm_GBps"),
            ((f"page-cache read of the W1 v3 chunk files ({limits.get('pagecache_files')} files, "
              f"{limits.get('pagecache_bytes', 0) / B.MiB:.0f} MiB compressed; GB/s of file "
              "bytes)"), "pagecache_read_GBps"),
            ("numcodecs Blosc lz4 encode, blosc 2 internal threads (uncompressed GB/s)",
             "blosc_encode_blosc2threads_GBps"),
            ("numcodecs Blosc lz4 decode into existing buffers, blosc 2 internal threads",
             "blosc_decode_blosc2threads_GBps"),
            ("numcodecs Blosc lz4 encode, 2 Python threads x 1 chunk (blosc single-threaded)",
             "blosc_encode_pool2_GBps"),
            ("numcodecs Blosc lz4 decode into existing buffers, 2 Python threads x 1 chunk",
             "blosc_decode_pool2_GBps"),
            ("numcodecs Blosc lz4 decode into new buffers, 2 Python threads x 1 chunk",
             "blosc_decode_pool2_fresh_GBps"),
            ("numcodecs Blosc lz4 decode into one new array (a part per chunk), 2 Python "
             "threads x 1 chunk", "blosc_decode_pool2_newarray_GBps"),
            ("numcodecs Blosc lz4 decode into existing buffers, 1 thread",
             "blosc_decode_1thread_GBps"),
            ("write floor: copy each W1 chunk out of the source + numcodecs Blosc encode, "
             "2 Python threads (uncompressed GB/s)", "write_floor_encode_GBps"),
            ("write floor as above + each chunk written to a new file (open/write/close, "
             "no temporary file)", "write_floor_files_GBps"),
        ]
        for label, key in rows:
            if key in limits:
                L.append(f"| {label} | {limits[key]:.2f} |")
        if "blosc_ratio" in limits:
            L.append("")
            L.append(f"Blosc on {limits['n_chunks']} W1 chunks of "
                     f"{limits['chunk_bytes'] / B.MiB:.0f} MiB; compression ratio "
                     f"{limits['blosc_ratio']:.2f}.")
        if "error" in limits:
            L.append(f"\nlimits failed: {limits['error']}")
        L.append("")
    for w in WORKLOADS:
        if w not in results:
            continue
        if w in ZB.WORKLOADS:
            L.extend(ZB.render(results[w], args.quick, (zb_refs or {}).get(w), fmt_time, _md,
                               w))
            continue
        title = TITLES[w].format(
            s1=fmt_size(S["W1"]["shape"]), n3=S["W3"]["n"], s4=fmt_size(S["W4"]["shape"]),
            c4=(S["W4"]["shape"][0] // 32) * (S["W4"]["shape"][1] // 32),
            s6=fmt_size(S["W6"]["shape"]))
        L.append(f"## {title}")
        L.append("")
        for label, per_lib in results[w].items():
            L.append(f"### {w} {label}")
            L.append("")
            L.append("| library | time | MiB/s | ratio zarrkit/peer | peak RSS MiB |")
            L.append("|---|---|---|---|---|")
            zk = per_lib.get("zarrkit")
            for lib, e in per_lib.items():
                name = e.get("library", lib)
                if "seconds" not in e:
                    if e.get("na"):
                        L.append(f"| {name} | n/a | n/a | n/a | n/a ({_md(e['na'])}) |")
                    elif e.get("wrong"):
                        L.append(f"| {name} | **WRONG DATA** | | | {_md(e['error'])} |")
                    else:
                        L.append(f"| {name} | **FAILED** | | | {_md(e.get('error', '?'))} |")
                    continue
                mibs = e["nbytes"] / e["seconds"] / B.MiB
                ratio = (f"{zk['seconds'] / e['seconds']:.2f}" if zk and "seconds" in zk
                         else "n/a")
                pk = e["peak_mib"]
                L.append(f"| {name} | {fmt_time(e)} | {mibs:,.0f} | {ratio} | "
                         f"{pk:,.1f} |" if pk < 10 else
                         f"| {name} | {fmt_time(e)} | {mibs:,.0f} | {ratio} | {pk:,.0f} |")
            L.append("")
    L.extend(render_targets(results, limits, args.quick))
    L.extend(render_floors(results, limits))
    L.extend(sections)
    if problems:
        L.append("## Problems")
        L.append("")
        for p in problems:
            L.append(f"- {p}")
        L.append("")
    return "\n".join(L)


def measured(results, w, label, lib) -> dict | None:
    """The entry of ``lib`` for operation ``label`` of workload ``w``, if it has a time."""
    e = results.get(w, {}).get(label, {}).get(lib)
    return e if e and "seconds" in e else None


def render_targets(results, limits, quick) -> list[str]:
    """The performance targets, each checked against this run's figures."""
    rows: list[tuple[str, str, str]] = []

    def verdict(ok):
        return "met" if ok else "**missed**"

    for w, label in [("W1", "write v3"), ("W1", "write v2"), ("W2", "read v3"), ("W2", "read v2"),
                     ("W3", "random 8^3 read v3"), ("W4", "write v3"), ("W5", "write sharded"),
                     ("W5", "read all sharded"), ("W5", "read 1 inner chunk"),
                     ("W6", "read all (memory, uncompressed)"),
                     ("W7", "read all (256 chunks, 10 ms/request)")]:
        zk = measured(results, w, label, "zarrkit")
        row = results.get(w, {}).get(label, {})
        peers = [(e["library"], e["seconds"]) for lib, e in row.items()
                 if not lib.startswith("zarrkit") and "seconds" in e]
        if not zk or not peers:
            continue
        name, best = min(peers, key=lambda p: p[1])
        ratio = zk["seconds"] / best
        rows.append((f"{w} {label}: at least as fast as the fastest peer",
                     f"{ratio:.2f}x of {name}", verdict(ratio <= 1.0)))
        if label.startswith("write") and w in ("W1", "W4", "W5"):
            rows += like_for_like(row, w, label, verdict)
    zk, ts, zp = (measured(results, "W4", "read v3", k)
                  for k in ("zarrkit", "tensorstore", "zarr"))
    if zk and ts:
        r = zk["seconds"] / ts["seconds"]
        rows.append(("W4 read: within 1.5x of tensorstore", f"{r:.2f}x", verdict(r <= 1.5)))
    if zk and zp:
        r = zp["seconds"] / zk["seconds"]
        rows.append(("W4 read: at least 5x faster than zarr-python", f"{r:.1f}x faster",
                     verdict(r >= 5.0)))
    w6 = measured(results, "W6", "read all (memory, uncompressed)", "zarrkit")
    if w6 and "memcpy_fresh_GBps" in limits:
        frac = w6["nbytes"] / w6["seconds"] / 1e9 / limits["memcpy_fresh_GBps"]
        rows.append(("W6: at least 85% of memcpy into a fresh array", f"{frac:.0%}",
                     verdict(frac >= 0.85)))
    for label in ("read v3", "read v2"):
        e = measured(results, "W2", label, "zarrkit")
        # the result is a new array: the decoded bytes land in new pages, which the kernel
        # zeroes on first touch -- the limit decodes into a new array too
        parts = w2_limits(e, limits, ("blosc_decode_pool2_newarray_GBps",
                                      "blosc_decode_pool2_fresh_GBps", "blosc_decode_pool2_GBps"))
        if parts:
            rows.append((f"W2 {label}: at least 80% of the file-read + Blosc-decode limit",
                         "; ".join(p[1] for p in parts), verdict(parts[0][0] >= 0.8)))
    for label in ("read v3", "read v2"):
        e = measured(results, "W2", label, "zarrkit")
        if e:
            n = e["nbytes"] / B.MiB
            bound = 1.2 * n + 2 * 1.0  # one 1 MiB chunk per worker, 2 workers
            rows.append((f"W2 {label}: peak memory at most 1.2 N + one chunk per worker",
                         f"{e['peak_mib']:.0f} MiB for N = {n:.0f} MiB (bound {bound:.0f})",
                         verdict(e["peak_mib"] <= bound)))
    w7 = measured(results, "W7", "read all (256 chunks, 10 ms/request)", "zarrkit")
    if w7:
        rows.append(("W7: 256 reads at 10 ms latency under 0.15 s", f"{w7['seconds']:.3f} s",
                     verdict(w7["seconds"] < 0.15)))
    if not rows:
        return []
    L = ["## Targets", ""]
    if quick:
        L += ["(quick sizes: indicative only; the targets are defined on the full sizes)", ""]
    L += ["| target | measured | |", "|---|---|---|"]
    L += [f"| {t} | {m} | {v} |" for t, m, v in rows]
    L.append("")
    return L


def like_for_like(row: dict, w: str, label: str, verdict) -> list[tuple[str, str, str]]:
    """The write targets between libraries making the same promise: zarrkit's atomic writes
    within 1.05x of the fastest atomic peer, its in-place ones within 1.05x of the in-place
    peer."""
    out = []
    zk, inplace = row.get("zarrkit"), row.get(B.ZarrkitInPlaceAdapter.key)
    atomic = [(e["library"], e["seconds"]) for lib, e in row.items()
              if lib in B.ATOMIC_WRITERS and lib != "zarrkit" and "seconds" in e]
    if zk and "seconds" in zk and atomic:
        name, best = min(atomic, key=lambda p: p[1])
        r = zk["seconds"] / best
        out.append((f"{w} {label}: atomic writes within 1.05x of the fastest atomic peer",
                    f"{r:.2f}x of {name}", verdict(r <= 1.05)))
    peer = row.get(B.IN_PLACE_WRITER)
    if inplace and "seconds" in inplace and peer and "seconds" in peer:
        r = inplace["seconds"] / peer["seconds"]
        target = f"{w} {label}: in-place writes (atomic=False) within 1.05x of {peer['library']}"
        out.append((target, f"{r:.2f}x", verdict(r <= 1.05)))
    return out


W2_DECODE_LIMITS = {
    "blosc_decode_pool2_newarray_GBps": "decoding into a new array",
    "blosc_decode_pool2_fresh_GBps": "decoding into new buffers",
    "blosc_decode_pool2_GBps": "decoding into existing buffers",
}


def w2_limits(e, limits, keys) -> list[tuple[float, str]]:
    """(fraction, text) of a W2 entry's throughput against the file-read + Blosc-decode limit,
    for each decode variant in ``keys`` this run measured."""
    ratio = limits.get("blosc_ratio")
    if not e or not ratio or "pagecache_read_GBps" not in limits:
        return []
    got = e["nbytes"] / e["seconds"] / 1e9
    read = limits["pagecache_read_GBps"] * ratio  # in uncompressed bytes
    parts = []
    for key in keys:
        if key in limits:
            limit = 1 / (1 / read + 1 / limits[key])
            parts.append((got / limit,
                          f"{got / limit:.0%} of {limit:.2f} GB/s ({W2_DECODE_LIMITS[key]})"))
    return parts


def render_floors(results, limits) -> list[str]:
    """Where the time of the workloads nearest the machine's limits goes, from this run."""
    rows = []

    for fmt in ("v3", "v2"):
        e = measured(results, "W2", f"read into an existing array {fmt}", "zarrkit")
        parts = w2_limits(e, limits, ("blosc_decode_pool2_GBps",))
        if parts:
            rows.append((f"W2 read {fmt} into an existing array (out=), zarrkit",
                         f"{e['seconds']:.3f} s: " + parts[0][1]))
    for fmt in ("v3", "v2"):
        e = measured(results, "W1", f"write {fmt}", "zarrkit")
        if not e:
            continue
        for key, what in (("write_floor_encode_GBps", "copy out + encode, no I/O"),
                          ("write_floor_files_GBps", "copy out + encode + plain file writes")):
            if key in limits:
                floor = e["nbytes"] / limits[key] / 1e9
                rows.append((f"W1 write {fmt}: write floor ({what})",
                             f"{floor:.3f} s; zarrkit {e['seconds']:.3f} s = "
                             f"{e['seconds'] / floor:.2f}x the floor"))
        for lib, e2 in results.get("W1", {}).get(f"write {fmt}", {}).items():
            if lib != "zarrkit" and "seconds" in e2 and "write_floor_files_GBps" in limits:
                floor = e2["nbytes"] / limits["write_floor_files_GBps"] / 1e9
                rows.append((f"W1 write {fmt}: {e2['library']}",
                             f"{e2['seconds']:.3f} s = {e2['seconds'] / floor:.2f}x the floor "
                             "with file writes"))
    e = measured(results, "W4", "write v3", "zarrkit")
    if e and "w4_write_floor_atomic_s" in limits:
        plain, atomic = limits["w4_write_floor_plain_s"], limits["w4_write_floor_atomic_s"]
        rows.append(("W4 write: write floor (copy out + encode + a new file per chunk, "
                     "open/write/close, 2 threads)", f"{plain:.3f} s"))
        rows.append(("W4 write: write floor as above, each file written to a temporary name "
                     "and renamed (an atomic write)", f"{atomic:.3f} s"))
        rows.append(("W4 write: zarrkit (atomic writes)",
                     f"{e['seconds']:.3f} s = {e['seconds'] / atomic:.2f}x the atomic floor"))
        for lib, e2 in results.get("W4", {}).get("write v3", {}).items():
            if lib != "zarrkit" and "seconds" in e2:
                rows.append((f"W4 write: {e2['library']}",
                             f"{e2['seconds']:.3f} s = {e2['seconds'] / plain:.2f}x the plain "
                             "floor"))
    if not rows:
        return []
    L = ["## Where the time goes", "",
         "The same run's floors for the workloads nearest the machine's limits: what the "
         "reads reach when the result's pages already exist, and the least a write of the W1 "
         "and W4 arrays costs from Python (numcodecs encoding on 2 threads).", "",
         "| measurement | figure |", "|---|---|"]
    L += [f"| {a} | {b} |" for a, b in rows]
    L.append("")
    return L


def _md(s: str) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")[:200]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, 3 runs (< 3 minutes)")
    ap.add_argument("--out", default=None, help="also write the markdown report here")
    ap.add_argument("--only", default=None, help="comma-separated workloads, e.g. W1,W2 "
                    "(remote, growth, threads: the remote-read, cost-growth and "
                    "thread-scaling sections)")
    ap.add_argument("--ops", default=None, help="comma-separated parts of operation names: only "
                    "the operations of the chosen workloads whose name holds one of them, e.g. "
                    "'inner chunks'")
    ap.add_argument("--libs", default=None, help="comma-separated libraries (default: all: "
                    + ",".join(B.LIBRARIES) + ")")
    ap.add_argument("--runs", type=int, default=None, help="timed runs (default 3 quick, 5 full)")
    ap.add_argument("--cold-runs", type=int, default=None,
                    help="fresh processes per library whose first runs give the ZB rows' cold "
                         "figure, their median (default 1 quick, 3 full)")
    ap.add_argument("--tmp", default=None, help="scratch directory parent (default: $TMPDIR)")
    ap.add_argument("--baseline", default=None, metavar="DIR",
                    help="also measure the zarrkit whose package is in DIR (an earlier "
                         "checkout's src), as library zarrkit-baseline, right after zarrkit")
    ap.add_argument("--as-is", action="store_true",
                    help="the machine as users have it: no memory touched beforehand, the VM's "
                         "free-page reporting left as it is, the page cache never dropped")
    ap.add_argument("--_child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.as_is:
        os.environ[B.AS_IS_ENV] = "1"  # (the children read it too)
    if args._child is not None:
        child_main(json.loads(args._child))
        return 0
    if args.runs is None:
        args.runs = 3 if args.quick else 5
    if args.runs < 3:
        ap.error("--runs must be >= 3")
    if args.cold_runs is None:
        args.cold_runs = 1 if args.quick else 3
    if args.cold_runs < 1:
        ap.error("--cold-runs must be >= 1")
    only = ([w.strip().upper() for w in args.only.split(",")] if args.only
            else WORKLOADS + list(SECTIONS))
    bad = [w for w in only if w not in WORKLOADS and w not in SECTIONS]
    if bad:
        ap.error(f"unknown workloads {bad}; choose from {WORKLOADS + list(SECTIONS)}")
    libs = args.libs.split(",") if args.libs else list(B.LIBRARIES)
    if args.baseline is not None:
        if not os.path.isdir(os.path.join(args.baseline, "zarrkit")):
            ap.error(f"--baseline {args.baseline}: no zarrkit package in that directory")
        os.environ[B.BASELINE_ENV] = os.path.abspath(args.baseline)
        at = libs.index("zarrkit") + 1 if "zarrkit" in libs else 0
        libs[at:at] = [B.ZarrkitBaselineAdapter.key]
    timeout = 300 if args.quick else 3600
    S = B.sizes(args.quick)

    t_start = time.perf_counter()
    tmp = tempfile.mkdtemp(prefix="zarrkit-bench-", dir=args.tmp)
    problems: list[str] = []
    results: dict[str, dict] = {}
    limits: dict = {}
    stack = contextlib.ExitStack()
    # a terminated run still restores what it changed (the finally clause below)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        held = stack.enter_context(B.page_reporting_held())
        def log(msg):
            print(f"[{time.perf_counter() - t_start:6.1f}s] {msg}", file=sys.stderr, flush=True)

        log(f"scratch dir {tmp}")
        vers, err = spawn({"kind": "versions"}, timeout)
        vers = vers or {}
        load = os.getloadavg()
        machine = {
            "CPU": cpu_model(),
            "cores": f"{os.cpu_count()} logical ({len(os.sched_getaffinity(0))} usable)",
            "RAM": f"{ram_gib():.1f} GiB",
            "OS": f"{platform.system()} {platform.release()}",
            "Python": platform.python_version(),
            "load average at start": ", ".join(f"{x:.2f}" for x in load),
            "libraries": ", ".join(f"{k} {v}" for k, v in vers.items()
                                   if k not in ("_wall", "fused_pipeline")),
            "zarr FusedCodecPipeline present": vers.get("fused_pipeline"),
            "scratch filesystem": tmp,
            "page cache dropped before write runs": B.settle_page_cache(),
            "free-page reporting": held or "not changed",
            "conditions": ("as users have them (--as-is): nothing touched, held or dropped"
                           if args.as_is else "tuned: see the lines above"),
        }
        # ZB and the sections need no reference arrays
        core = any(w in WORKLOADS and w not in ZB.WORKLOADS for w in only)
        sections: list[str] = []
        zb_refs: dict[str, dict] = {}

        def cold_runs(warm_next: bool = True):
            """The context of the ZB workloads' cold runs: the machine's own free-page
            reporting (memory freed by one cold run goes back to the host before the next,
            which pauses for the kernel's reporting delay in full runs).  After them, with
            reporting held again, a full run touches as much memory as one run needs, so
            that the warm runs that follow (``warm_next``) do not pay for what the cold runs
            handed back."""
            @contextlib.contextmanager
            def released():
                with B.page_reporting_released() as changed:
                    yield 2.5 if changed and not args.quick else 0.0
                if changed and not args.quick and warm_next:
                    B.touch_memory(3)
            return released

        def run_workload(w: str) -> None:
            results[w] = {}
            zb = w in ZB.WORKLOADS
            if zb:
                log(f"writing the {w} arrays with zarr-python")
                refs, err = spawn({"kind": "zb-prep", "tmp": tmp, "quick": args.quick,
                                   "workload": w}, timeout)
                if refs is None:
                    problems.append(f"preparing the {w} arrays failed: {_md(err[-500:])}")
                    return
                refs.pop("_wall", None)
                zb_refs[w] = refs
            for n, op in enumerate(ZB.OPS if zb else B.OPS[w]):
                if args.ops and not any(part.strip() in op for part in args.ops.split(",")):
                    continue
                results[w][op] = {}
                op_libs = B.libraries(w, op, libs)
                specs = [{"kind": "run", "workload": w, "op": op, "lib": lib, "tmp": tmp,
                          "quick": args.quick} for lib in op_libs]
                source = ZB.ref_path(tmp, ZB.dataset_of(op), w) if zb else None
                # the ZB rows' cold figure: the median of the first runs of --cold-runs fresh
                # processes per library, the extra ones (cold runs alone) first, each round
                # in an order of its own
                colds: list[list[float]] = [[] for _ in op_libs]
                for k in range(1, args.cold_runs if zb else 1):
                    for i, (r, err) in enumerate(run_in_turns(
                            specs, 0, timeout, cold=cold_runs(warm_next=False), source=source,
                            rotation=n + k)):
                        if r is not None and "cold" in r and "error" not in r:
                            colds[i].append(r["cold"])
                        elif r is None or "error" in r:  # (n/a: the main round says so)
                            why = err[-600:] if r is None else r["error"]
                            problems.append(f"{w} {op} {op_libs[i]}: cold round {k + 1} failed: "
                                            f"{_md(why)}")
                measured = run_in_turns(specs, args.runs, timeout,
                                        cold=cold_runs() if zb else None, source=source,
                                        rotation=n)
                for (r, _), more in zip(measured, colds):
                    if r is not None and "cold" in r and more:
                        r["colds"] = [r["cold"]] + more
                        r["cold"] = statistics.median(r["colds"])
                for lib, (r, err) in zip(op_libs, measured):
                    if r is None:
                        first = err.strip().splitlines()[0] if err.strip() else "child failed"
                        r = {"library": lib, "error": first}
                        problems.append(f"{w} {op} {lib}: child failed: {_md(err[-600:])}")
                    elif "error" in r:
                        problems.append(f"{w} {op} {r.get('library', lib)}: {_md(r['error'])}")
                    if "seconds" in r:
                        cold = ", ".join(f"{t:.3g}" for t in r.get("colds", [r["cold"]]))
                        log(f"{w} {op} {lib}: {fmt_time(r)}  peak +{r['peak_mib']:.0f} MiB "
                            f"(cold {cold}, runs: "
                            f"{', '.join(f'{t:.3g}' for t in r['times'])})")
                    else:
                        log(f"{w} {op} {lib}: {r.get('na') or r.get('error')}")
                    results[w][op][lib] = r

        # the ZB workloads first: their cold runs must not find memory the touch below left
        zbs = [w for w in only if w in ZB.WORKLOADS]
        if zbs and held:
            machine[f"{', '.join(zbs)} cold runs"] = (
                f"run first, {args.cold_runs} fresh process(es) per library, "
                "with the machine's own free-page reporting"
                + ("" if args.quick else ", 2.5 s apart; 3 GiB touched after them"))
        for w in zbs:
            run_workload(w)
        if held and not args.quick and core:  # (quick sizes allocate <= 64 MiB at once)
            log("touching 8 GiB of memory once")
            machine["memory touched once before the runs"] = (
                f"8 GiB ({B.touch_memory(8):.0f} s), after the ZB workloads")
        refs, err = {}, ""
        if core:
            log("preparing reference arrays with zarr-python")
            refs, err = spawn({"kind": "prep", "tmp": tmp, "quick": args.quick}, timeout)
        if refs is None:
            problems.append(f"preparing reference arrays failed: {err[-500:]}")
            print(err, file=sys.stderr)
        else:
            for k, v in refs.items():
                if isinstance(v, dict):
                    machine[f"reference array {k}"] = (
                        f"{v['files']} chunk files, {v['stored_bytes'] / B.MiB:.1f} MiB stored / "
                        f"{v['raw_bytes'] / B.MiB:.0f} MiB raw "
                        f"(ratio {v['raw_bytes'] / max(v['stored_bytes'], 1):.2f})")
            if core:
                log("measuring machine limits")
                limits, err = spawn({"kind": "limits", "tmp": tmp, "quick": args.quick,
                                     "runs": args.runs}, timeout)
                if limits is None:
                    problems.append(f"machine limits failed: {_md(err[-300:])}")
                    limits = {}
        for w in only:
            if w in SECTIONS:
                sections += SECTIONS[w].run(args, tmp, log, problems, spawn, Child, take_turns,
                                            RESULT_TAG)
            elif w not in ZB.WORKLOADS:
                run_workload(w)
        wall = time.perf_counter() - t_start
        report = render(results, machine, limits, args, S, problems, wall, sections, zb_refs)
        if args.out:  # the plots of the ZB chunkings and the thread scaling, beside the report
            report = scaling_plots.add_figures(report, os.path.dirname(os.path.abspath(args.out)))
        print(report)
        if args.out:
            os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
            with open(args.out, "w") as f:
                f.write(report + "\n")
            log(f"wrote {args.out}")
    finally:
        stack.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
