"""Rechunking benchmark: a float32 array from (64, 512, 512) chunks to (2048, 16, 16) chunks.

Each tool runs in a fresh subprocess; the parent measures its wall time and its peak resident
memory (``ru_maxrss`` of the child, from ``os.wait4``):

* ``zarrkit``  — ``zarrkit.rechunk(..., max_mem=...)``
* ``dask``     — ``dask.array.from_zarr(...).rechunk(target).to_zarr(...)`` (zarr-python 3)
* ``rechunker`` — ``rechunker.rechunk(..., max_mem=...)`` with dask, run by the Python given
  with ``--rechunker-python`` (rechunker needs zarr-python 2, so it lives in its own venv)

Usage::

    python benchmarks/rechunk.py --sizes 1 --max-mem 256MiB --tools zarrkit,dask
    python benchmarks/rechunk.py --sizes 0.25,1,4 --max-mem 128MiB,256MiB --tools zarrkit

Sizes are in GiB (shape (n, 1024, 512) float32, n = 512 per GiB); the source is written once
per size and format by zarrkit in ``--workdir``: random normal values rounded to 0.01, in Zarr
v2 (``--format 2``, the default: Blosc LZ4, the format rechunker reads) or v3 (``--format 3``:
Zstd). Every tool reads that one source and writes the target in its format and codecs.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

SOURCE_CHUNKS = (64, 512, 512)
TARGET_CHUNKS = (2048, 16, 16)


def shape_for(gib: float) -> tuple[int, int, int]:
    return (max(64, round(gib * 512)), 1024, 512)


def make_source(path: Path, gib: float, zarr_format: int = 3) -> None:
    import numpy as np

    import zarrkit

    shape = shape_for(gib)
    if (path / ("zarr.json" if zarr_format == 3 else ".zarray")).exists():
        a = zarrkit.open_array(path, mode="r")
        if a.shape == shape:
            return
    a = zarrkit.open_array(path, mode="w", shape=shape, chunks=SOURCE_CHUNKS, dtype="f4",
                           zarr_format=zarr_format)
    rng = np.random.default_rng(0)
    for start in range(0, shape[0], SOURCE_CHUNKS[0]):
        stop = min(start + SOURCE_CHUNKS[0], shape[0])
        block = rng.standard_normal((stop - start, *shape[1:]), dtype="f4").round(2)
        a[start:stop] = block


def child(tool: str, src: str, dst: str, max_mem: str, temp: str) -> None:
    """Runs in the measured subprocess."""
    target = tuple(min(c, s) for c, s in zip(TARGET_CHUNKS, _shape_of(src)))
    if tool == "zarrkit":
        import zarrkit

        zarrkit.rechunk(src, dst, chunks=target, max_mem=max_mem, progress=False)
    elif tool == "dask":
        import dask.array as da
        import zarr

        # the target in the source's format and codecs, as zarrkit and rechunker write it
        source = zarr.open_array(src, mode="r")
        x = da.from_zarr(source)
        x.rechunk(target).to_zarr(dst, overwrite=True, zarr_format=source.metadata.zarr_format,
                                  compressors=source.compressors)
    elif tool == "rechunker":
        import rechunker
        import zarr

        source = zarr.open_array(src, mode="r")
        plan = rechunker.rechunk(source, target, max_mem, dst, temp_store=temp)
        plan.execute()
    else:
        raise SystemExit(f"unknown tool {tool!r}")
    # the high-water mark of this process's resident memory (ru_maxrss of a child forked from
    # a big parent would start at the parent's)
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            print("VmHWM", int(line.split()[1]), file=sys.stderr, flush=True)


def _shape_of(src: str) -> tuple[int, ...]:
    for name in ("zarr.json", ".zarray"):
        p = Path(src) / name
        if p.exists():
            return tuple(json.loads(p.read_text())["shape"])
    raise SystemExit(f"no array at {src}")


def measure(python: str, tool: str, src: Path, dst: Path, max_mem: str, temp: Path) -> dict:
    for p in (dst, temp, Path(str(dst) + ".rechunk-tmp")):
        shutil.rmtree(p, ignore_errors=True)
    env = dict(os.environ)
    start = time.perf_counter()
    proc = subprocess.Popen([python, __file__, "--child", tool, str(src), str(dst), max_mem, str(temp)],
                            env=env, stderr=subprocess.PIPE, text=True)
    err = proc.stderr.read() if proc.stderr else ""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    ok = os.waitstatus_to_exitcode(status) == 0
    hwm = [int(line.split()[1]) for line in err.splitlines() if line.startswith("VmHWM ")]
    peak_kib = hwm[-1] if hwm else usage.ru_maxrss
    result = {"tool": tool, "max_mem": max_mem, "wall_s": round(wall, 2),
              "peak_rss_mib": round(peak_kib / 1024, 1), "ok": ok}
    if not ok:
        result["error"] = err.strip().splitlines()[-1:] if err.strip() else []
    for p in (dst, temp, Path(str(dst) + ".rechunk-tmp")):
        shutil.rmtree(p, ignore_errors=True)
    return result


def report(jsonl: str, png: str) -> None:
    """A markdown table of the results and, with matplotlib, a plot of zarrkit's time and peak
    memory against the array's size and max_mem."""
    rows = [json.loads(line) for line in Path(jsonl).read_text().splitlines() if line.strip()]
    print("| tool | size | max_mem | wall time | throughput | peak RSS |")
    print("|---|---|---|---|---|---|")
    from zarrkit.api.rechunk_plan import parse_memory as size

    for r in sorted(rows, key=lambda r: (r["size_gib"], size(r["max_mem"]), r["tool"])):
        if not r["ok"]:
            continue
        print(f"| {r['tool']} | {r['size_gib']:g} GiB | {r['max_mem']} | {r['wall_s']:.1f} s | "
              f"{r['mb_per_s']:.0f} MiB/s | {r['peak_rss_mib']:.0f} MiB |")
    from zarrkit.api.rechunk_plan import parse_memory

    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    mine = [r for r in rows if r["tool"] == "zarrkit" and r["ok"]]
    mib = {m: parse_memory(m) // 2**20 for m in {r["max_mem"] for r in mine}}
    fig, (ax_t, ax_m) = plt.subplots(1, 2, figsize=(10, 4))
    for mem in sorted({r["max_mem"] for r in mine}, key=mib.__getitem__):
        pts = sorted((r["size_gib"], r["wall_s"], r["peak_rss_mib"]) for r in mine if r["max_mem"] == mem)
        ax_t.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=f"max_mem {mem}")
        ax_m.plot([p[0] for p in pts], [p[2] for p in pts], "o-", label=f"max_mem {mem}")
        ax_m.axhline(mib[mem] + 100, ls=":", lw=0.8, color=ax_m.lines[-1].get_color())
    ax_t.set(xlabel="array size (GiB)", ylabel="wall time (s)", title="zarrkit.rechunk time")
    ax_m.set(xlabel="array size (GiB)", ylabel="peak RSS (MiB)", title="peak RSS (dotted: max_mem + 100 MiB)")
    ax_t.legend()
    ax_m.legend()
    fig.tight_layout()
    fig.savefig(png, dpi=100)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--report":
        report(sys.argv[2], sys.argv[3])
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(*sys.argv[2:7])
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--make-source":
        make_source(Path(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]))
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default=os.environ.get("RECHUNK_BENCH_SIZES", "1"), help="GiB, comma-separated")
    ap.add_argument("--max-mem", default="256MiB", help="comma-separated sizes")
    ap.add_argument("--tools", default="zarrkit,dask", help="zarrkit,dask,rechunker")
    ap.add_argument("--rechunker-python", default=sys.executable)
    ap.add_argument("--format", type=int, default=2, choices=(2, 3),
                    help="the source's Zarr format, read by every tool (rechunker reads 2 only)")
    ap.add_argument("--workdir", default="/tmp/zarrkit-rechunk-bench")
    ap.add_argument("--out", default=None, help="append the results to this JSON-lines file")
    args = ap.parse_args()
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    for gib in (float(s) for s in args.sizes.split(",")):
        if args.format == 3 and "rechunker" in args.tools.split(","):
            raise SystemExit("rechunker reads Zarr v2 only: --format 2")
        # in a subprocess: the parent stays small.  Every tool reads this one source and
        # writes the target in its format and codecs
        src = work / f"src-{gib:g}GiB-v{args.format}.zarr"
        subprocess.run([sys.executable, __file__, "--make-source", str(src), str(gib), str(args.format)],
                       check=True)
        for max_mem in args.max_mem.split(","):
            for tool in args.tools.split(","):
                python = args.rechunker_python if tool == "rechunker" else sys.executable
                r = measure(python, tool, src, work / "dst.zarr", max_mem, work / "temp.zarr")
                r.update(size_gib=gib, shape=list(shape_for(gib)), mb_per_s=round(gib * 1024 / r["wall_s"], 1),
                         format=args.format)
                print(json.dumps(r), flush=True)
                if args.out:
                    with open(args.out, "a") as f:
                        f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
