"""Where the time of a W4 read goes: 16,384 tiny chunks read from a local directory.

    python benchmarks/profile_read.py [--runs 20] [--out benchmarks/PROFILE-read.md]

The W4 array of ``run.py`` (4096^2 uint8, 32^2 chunks, Blosc lz4 clevel 5 byte-shuffle, written
by zarr-python) is read whole into a new array, in one process:

- by zarrkit and by tensorstore, alternately (median of ``--runs`` reads each);
- by the least a Python reader of these files can do, on one thread: ``os.open``/``os.pread``/
  ``os.close`` of each chunk file alone, then the same plus Blosc decompression (c-blosc's
  context function, called directly) into a buffer and the copy of that buffer into the result;
- by zarrkit again, ``--runs`` reads sampled by ``perf record`` at 1999 Hz (``cpu-clock``, so it
  works inside a VM), the samples sorted by the shared object they land in.

Per chunk, zarrkit's time minus the Python floor is the work of its own per-chunk Python
(building the key, checking it, the chunk's projection into the result); the floor itself is
the kernel's three system calls per file and the interpreter's loop around them, which a
library whose per-chunk loop is compiled code (tensorstore) does not pay.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from importlib.metadata import version

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _benchlib as B
import numpy as np

HZ = 1999
GROUPS = [
    ("Python interpreter (`libpython`): zarrkit's per-chunk Python", ("libpython",)),
    ("kernel: `open`, `pread`, `close` of each chunk file, page-cache copies", ("kernel",)),
    ("libc (memcpy, allocation)", ("libc",)),
    ("numpy (the copy of each decoded chunk into the result)", ("_multiarray",)),
    ("Blosc / LZ4 decompression", ("blosc",)),
    ("ctypes, libffi and the dynamic loader (the direct Blosc call)", ("_ctypes", "libffi", "ld-linux")),
]


def median_time(fn, runs: int) -> float:
    fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def floors(path: str, shape: tuple[int, int], chunks: tuple[int, int], runs: int) -> tuple[float, float]:
    """Seconds of the two Python floors: the files' system calls alone, and with Blosc
    decompression and the copy into the result (one thread)."""
    from zarrkit.codecs import blosc as blosc_fast

    grid = [(i, j) for i in range(shape[0] // chunks[0]) for j in range(shape[1] // chunks[1])]
    names = [os.path.join(path, "c", str(i), str(j)) for i, j in grid]
    limit = chunks[0] * chunks[1] + 64
    flags = os.O_RDONLY

    def files() -> None:
        for name in names:
            fd = os.open(name, flags)
            try:
                os.pread(fd, limit, 0)
            finally:
                os.close(fd)

    out = np.empty(shape, np.uint8)
    buf = np.empty(chunks, np.uint8)
    address, nbytes = buf.ctypes.data, buf.nbytes
    decompress = blosc_fast._decompress_ctx_holding_gil
    c0, c1 = chunks

    def decoded() -> None:
        for (i, j), name in zip(grid, names):
            fd = os.open(name, flags)
            try:
                raw = os.pread(fd, limit, 0)
            finally:
                os.close(fd)
            if decompress(raw, address, nbytes, 1) != nbytes:
                raise AssertionError(f"blosc failed on {name}")
            out[i * c0:(i + 1) * c0, j * c1:(j + 1) * c1] = buf

    return median_time(files, runs), median_time(decoded, runs)


def perf_shares(read, runs: int, scratch: str) -> dict[str, float]:
    """Shares of the CPU samples of ``runs`` calls of ``read`` by group of shared objects."""
    data = os.path.join(scratch, "read.data")
    with B.perf_sampled(data, HZ):
        for _ in range(runs):
            read()

    def group(fields: list[str]) -> str:
        return next((g for g, keys in GROUPS if any(k in fields[0] for k in keys)), "everything else")

    counts = B.perf_samples(data, "dso", group)
    total = sum(counts.values()) or 1
    return {g: counts.get(g, 0) / total for g, _ in GROUPS + [("everything else", ())]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--out", default=None, help="also write the report to this file")
    args = ap.parse_args()
    if shutil.which("perf") is None:
        sys.exit("profile_read.py needs Linux perf ('perf' not found on PATH)")
    import tensorstore as ts

    import zarrkit

    d = B.sizes(False)["W4"]
    meta = B.meta_of(d, 3)
    data = B.make_data(meta["shape"], meta["dtype"])
    scratch = tempfile.mkdtemp(prefix="zarrkit-bench-")
    try:
        path = os.path.join(scratch, "w4")
        zp = B.ZarrPythonAdapter("zarr")
        zp.init()
        zp.create(("dir", path), meta)[...] = data
        z = zarrkit.open_array(path, mode="r")
        t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": path + "/"}},
                    read=True).result()
        if not (np.array_equal(z[...], data) and np.array_equal(t.read().result(), data)):
            raise AssertionError("a library read the W4 array wrong")
        times: dict[str, list[float]] = {"zarrkit": [], "tensorstore": []}
        reads = {"zarrkit": lambda: z[...], "tensorstore": lambda: t.read().result()}
        for r in range(args.runs):
            for lib in ("zarrkit", "tensorstore") if r % 2 else ("tensorstore", "zarrkit"):
                t0 = time.perf_counter()
                reads[lib]()
                times[lib].append(time.perf_counter() - t0)
        zk, tstore = (statistics.median(times[k]) for k in ("zarrkit", "tensorstore"))
        plain, decoded = floors(path, d["shape"], d["chunks"], args.runs)
        shares = perf_shares(reads["zarrkit"], args.runs, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    n = (d["shape"][0] // d["chunks"][0]) * (d["shape"][1] // d["chunks"][1])
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    us = 1e6 / n
    L = [f"# Where the time of a W4 read goes (4096^2 uint8, 32^2 chunks: {n:,} chunk files, "
         "Blosc lz4)", "",
         f"Generated {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} by "
         f"`python benchmarks/profile_read.py --runs {args.runs}` ({os.cpu_count()} cores, load "
         f"average {load} at the end; zarrkit {zarrkit.__version__}, tensorstore {version('tensorstore')}).",
         "", "| read of the whole array into a new array | seconds | per chunk | vs tensorstore |",
         "|---|---|---|---|"]
    for name, sec in [("tensorstore", tstore), ("zarrkit", zk),
                      ("Python floor: `open`/`pread`/`close` of each file, one thread", plain),
                      ("Python floor: the same + Blosc decompression + copy into the result, "
                       "one thread", decoded)]:
        L.append(f"| {name} | {sec:.3f} | {sec * us:.1f} us | {sec / tstore:.2f}x |")
    L += ["", f"zarrkit's own per-chunk work beyond the second floor: {(zk - decoded) * us:.1f} us "
          f"per chunk ({(zk - decoded) / zk:.0%} of its read).", "",
          f"CPU samples of {args.runs} zarrkit reads (`perf record -F {HZ}`), by where they land:",
          "", "| where (shared object) | share of samples |", "|---|---|"]
    L += [f"| {g} | {s:.0%} |" for g, s in shares.items()]
    report = "\n".join(L) + "\n"
    print(report)
    if args.out:
        with open(args.out, "w") as f:
            f.write(report)


if __name__ == "__main__":
    main()
