"""Where the time of a sharded zstd write goes (the write half of the ZB sharded round trip).

    python benchmarks/profile_zstd.py [--runs 3] [--out benchmarks/PROFILE-zstd.md]

A quarter of the ZB array (256x1024x1024 uint16, the values of ``zarr_benchmarks.py``) is
written into a new array of the ZB sharded layout (256^3 shards of 64^3 inner chunks, zstd level
0, no checksum), on ONE thread, so that CPU seconds compare directly:

- by zarrkit (``config.threads = 1``) and by tensorstore (``data_copy_concurrency`` and
  ``file_io_concurrency`` limited to 1), each in a process of its own;
- by the least any writer using the zstd zarrkit uses (the ``zstandard`` package's) does: each
  inner chunk copied out of the source into a buffer, then compressed at zstd's default level;
  and the compression alone, of chunks copied out beforehand;
- by numcodecs' zstd alone (``numcodecs.Zstd(level=0).encode``, what zarr-python calls), of
  the same chunks.

CPU seconds (user + system, all threads of the process) and the bytes each writes: a different
size means a different build of zstd (the same level gives the same frames in one build).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np
import zarr_benchmarks as ZB

SHAPE = (256, 1024, 1024)
SHARD, INNER = (256,) * 3, (64,) * 3


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def measured(fn, runs: int, before=None) -> tuple[float, float]:
    """Median wall and CPU seconds of ``runs`` calls (``before()`` untimed before each)."""
    walls, cpus = [], []
    for _ in range(runs):
        if before is not None:
            before()
        c0, t0 = cpu(), time.perf_counter()
        fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(cpu() - c0)
    return statistics.median(walls), statistics.median(cpus)


def stored_bytes(path: str) -> int:
    return sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(os.path.join(path, "c"))
               for f in fs)


def child(lib: str, runs: int, path: str) -> None:
    """``runs`` writes of the array by ``lib`` into ``path`` (created anew before each), then a
    check of what was written; prints the median wall and CPU seconds and the bytes stored."""
    import zarrkit

    data = ZB.expected(0, SHAPE[0], SHAPE)

    def fresh() -> None:
        shutil.rmtree(path, ignore_errors=True)
        zarrkit.create_array(path, shape=SHAPE, chunks=INNER, shards=SHARD, dtype="uint16",
                             fill_value=0, compressors=[zarrkit.codecs.ZstdCodec(level=0)])

    if lib == "zarrkit":
        zarrkit.config.threads = 1

        def write() -> None:
            zarrkit.open_array(path, mode="r+")[...] = data
    else:
        import tensorstore as ts

        context = ts.Context({"data_copy_concurrency": {"limit": 1},
                              "file_io_concurrency": {"limit": 1}})
        spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": path + "/"}}

        def write() -> None:
            ts.open(spec, open=True, write=True, context=context).result().write(data).result()

    wall, cpus = measured(write, runs, fresh)
    if not np.array_equal(zarrkit.open_array(path, mode="r")[...], data):
        raise AssertionError(f"{lib} wrote the array wrong")
    print(json.dumps([wall, cpus, stored_bytes(path)]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", default=None, help="also write the report to this file")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--path", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.runs, args.path)
        return
    import numcodecs
    import zstandard

    import zarrkit

    zstd_version = ".".join(map(str, zstandard.ZSTD_VERSION))
    data = ZB.expected(0, SHAPE[0], SHAPE)
    scratch = tempfile.mkdtemp(prefix="zarrkit-bench-")
    rows: list[tuple[str, float, float, int | None]] = []
    try:
        for lib in ("zarrkit", "tensorstore"):  # each in a process of its own
            out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", lib,
                                  "--runs", str(args.runs), "--path", os.path.join(scratch, lib)],
                                 capture_output=True, text=True, check=False)
            if out.returncode:
                sys.exit(f"{lib}: the writes failed:\n{out.stderr[-3000:]}")
            wall, cpus, nbytes = json.loads(out.stdout.strip().splitlines()[-1])
            rows.append((lib, wall, cpus, nbytes))

        compressor = zstandard.ZstdCompressor(level=0, write_content_size=True)
        codec = numcodecs.Zstd(level=0)
        sels = [tuple(slice(c * n, (c + 1) * n) for c, n in zip(idx, INNER))
                for idx in np.ndindex(*(s // n for s, n in zip(SHAPE, INNER)))]
        buf = np.empty(INNER, np.uint16)

        def copy_encode() -> None:
            for sel in sels:
                buf[...] = data[sel]
                compressor.compress(buf)

        chunks = [np.ascontiguousarray(data[sel]) for sel in sels]
        w, c = measured(copy_encode, args.runs)
        rows.append((f"floor: copy each inner chunk out + zstd {zstd_version}", w, c, None))
        w, c = measured(lambda: [compressor.compress(x) for x in chunks], args.runs)
        rows.append((f"zstd {zstd_version} alone (chunks copied out beforehand)", w, c,
                     sum(len(compressor.compress(x)) for x in chunks)))
        w, c = measured(lambda: [codec.encode(x) for x in chunks], args.runs)
        rows.append(("numcodecs' zstd alone (as zarr-python writes)", w, c,
                     sum(len(codec.encode(x)) for x in chunks)))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    base = rows[2][2]
    L = ["# Where the time of a sharded zstd write goes (one thread)", "",
         f"Generated {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} by "
         f"`python benchmarks/profile_zstd.py --runs {args.runs}`: {SHAPE[0]}x{SHAPE[1]}x{SHAPE[2]} "
         f"uint16 ({data.nbytes / 2**20:.0f} MiB), 256^3 shards of 64^3 inner chunks, zstd level 0; "
         f"median of {args.runs} (zarrkit {zarrkit.__version__}, tensorstore {version('tensorstore')}, "
         f"numcodecs {numcodecs.__version__}; load average "
         f"{', '.join(f'{x:.2f}' for x in os.getloadavg())} at the end).", "",
         "| write | wall | CPU | CPU vs the floor | bytes of chunks |", "|---|---|---|---|---|"]
    for name, wall, cpus, nbytes in rows:
        L.append(f"| {name} | {wall:.2f} s | {cpus:.2f} s | {cpus / base:.2f}x | "
                 f"{'' if nbytes is None else f'{nbytes:,}'} |")
    report = "\n".join(L) + "\n"
    print(report)
    if args.out:
        with open(args.out, "w") as f:
            f.write(report)


if __name__ == "__main__":
    main()
