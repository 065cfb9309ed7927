"""Where the CPU time of a write goes, for zarrkit and its peers, sampled with Linux ``perf``.

    python benchmarks/profile_write.py [--format 2,3] [--runs 6] [--libs zarrkit,zarr-zarrs]
                                       [--quick] [--out benchmarks/PROFILE.md]

Each library writes the W1 array of ``run.py`` (512^3 float32, 64^3 chunks, Blosc lz4 clevel 5
byte-shuffle, a local directory; 256^3 with ``--quick``) in its own process: one untimed write,
then ``--runs`` writes, each into a new directory after the page cache was written back and
dropped (as ``run.py`` does), each sampled by ``perf record -p`` at 1999 Hz (the ``cpu-clock``
event: no hardware counters needed, so it works inside a VM).  The libraries take their turns
alternately.  Samples are sorted by the code they land in:

- Blosc: LZ4 compression and the byte shuffle (numcodecs' c-blosc, or the one built into zarrs);
- copying each chunk out of the source array (``memmove`` and numpy's or zarrs' copy loops);
- the kernel: copying the written bytes into the page cache, making files and directories,
  renaming temporary files;
- the Python interpreter;
- everything else.

The table gives CPU seconds per write for each, and the median wall time of the sampled writes.
Sampling slows each write by a few per cent; the CPU split, not the wall time, is the result.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _benchlib as B

HZ = 1999
CATEGORIES = [
    "Blosc (LZ4 + shuffle)",
    "copying chunks out of the source",
    "kernel (page-cache copies, files, renames)",
    "Python interpreter",
]
_BLOSC = re.compile(r"LZ4|blosc|fastcopy|shuffle", re.IGNORECASE)
_COPY = re.compile(r"memmove|memcpy|raw_array_assign|_contig_to_|_strided_to_|zarrs_chunk_grid|"
                   r"byte_range")


def category(dso: str, sym: str) -> str:
    """The category of a sample in shared object ``dso`` at symbol ``sym``."""
    if "kernel" in dso:
        return CATEGORIES[2]
    if _BLOSC.search(sym):
        return CATEGORIES[0]
    if _COPY.search(sym):
        return CATEGORIES[1]
    if "libpython" in dso:
        return CATEGORIES[3]
    return "everything else"


def child(lib: str, fmt: int, runs: int, scratch: str, quick: bool) -> None:
    """Write the W1 array ``runs`` times under ``perf record``; print wall times as JSON."""
    d = B.sizes(quick)["W1"]
    meta = B.meta_of(d, fmt)
    data = B.make_data(meta["shape"], meta["dtype"])
    a = B.make_adapter(lib)
    a.init()
    a.write(a.create(("dir", os.path.join(scratch, f"{lib}-warm")), meta), data)
    walls = []
    for i in range(runs):
        B.settle_page_cache()
        time.sleep(0.3)
        with B.perf_sampled(os.path.join(scratch, f"{lib}-{i}.data"), HZ):
            t0 = time.perf_counter()
            a.write(a.create(("dir", os.path.join(scratch, f"{lib}-{i}")), meta), data)
            walls.append(time.perf_counter() - t0)
    print(json.dumps(walls))


def samples(path: str) -> dict[str, int]:
    """Samples of one ``perf record`` file by category."""
    return B.perf_samples(path, "dso,sym", lambda f: category(f[0], f[1] if len(f) > 1 else ""))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--format", default="2,3", help="2, 3 or 2,3")
    ap.add_argument("--runs", type=int, default=6)
    ap.add_argument("--libs", default="zarrkit,zarr-zarrs")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=None, help="also write the table to this file")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--scratch", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, int(args.format), args.runs, args.scratch, args.quick)
        return
    if shutil.which("perf") is None:
        sys.exit("profile_write.py needs Linux perf ('perf' not found on PATH)")
    libs = args.libs.split(",")
    for lib in libs:
        if lib not in B.LIBRARIES:
            sys.exit(f"--libs: unknown library {lib!r} (known: {', '.join(B.LIBRARIES)})")
    formats = [int(f) for f in args.format.split(",")]
    if not set(formats) <= {2, 3}:
        sys.exit(f"--format: {args.format!r} is not 2, 3 or 2,3")
    shape = "x".join(map(str, B.sizes(args.quick)["W1"]["shape"]))
    generated = (
        f"Generated {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} by "
        f"`python benchmarks/profile_write.py --format {args.format} --runs {args.runs}"
        f"{' --quick' if args.quick else ''}`: every write sampled by `perf record` at {HZ} Hz; "
        "CPU seconds per write (all threads of the writing process)."
    )
    text = [f"# Where the CPU time of a W1 write goes ({shape} float32, 64^3 chunks, Blosc lz4)",
            "", generated, ""]
    with B.page_reporting_held() as held:  # as run.py: see there
        if held:
            B.touch_memory(4)
        for fmt in formats:
            walls, counts = profile(args, libs, fmt)
            text += table(fmt, libs, walls, counts)
    out = "\n".join(text) + "\n"
    print(out)
    if args.out:
        with open(args.out, "w") as f:
            f.write(out)


def profile(args, libs: list[str], fmt: int) -> tuple[dict, dict]:
    """Wall times and samples by category of ``args.runs`` writes per library, in format
    ``fmt``: each library in two processes taking turns, so that a drift in the machine's speed
    falls on all alike."""
    walls: dict[str, list[float]] = {lib: [] for lib in libs}
    counts: dict[str, dict[str, int]] = {lib: {} for lib in libs}
    scratch = tempfile.mkdtemp(prefix="zarrkit-bench-")
    try:
        for turn in range(2):
            for lib in libs if turn == 0 else libs[::-1]:
                sub = os.path.join(scratch, f"{lib}-{turn}")
                os.mkdir(sub)
                runs = (args.runs + 1 - turn) // 2
                out = subprocess.run(
                    [sys.executable, os.path.abspath(__file__), "--child", lib, "--scratch", sub,
                     "--format", str(fmt), "--runs", str(runs)]
                    + (["--quick"] if args.quick else []),
                    check=False, capture_output=True, text=True)
                if out.returncode:
                    sys.exit(f"{lib}: the profiled writes failed:\n{out.stderr[-3000:]}")
                walls[lib] += json.loads(out.stdout.strip().splitlines()[-1])
                for i in range(runs):
                    for c, k in samples(os.path.join(sub, f"{lib}-{i}.data")).items():
                        counts[lib][c] = counts[lib].get(c, 0) + k
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return walls, counts


def table(fmt: int, libs: list[str], walls: dict, counts: dict) -> list[str]:
    """The CPU split per write in format ``fmt`` as markdown lines, one column per library."""
    names = {lib: B.make_adapter(lib).name for lib in libs}
    L = [f"## v{fmt} ({len(walls[libs[0]])} writes per library)", "",
         "| | " + " | ".join(names[lib] for lib in libs) + " |",
         "|---|" + "---|" * len(libs)]
    per = {lib: {c: k / HZ / max(1, len(walls[lib])) for c, k in counts[lib].items()}
           for lib in libs}
    for c in CATEGORIES + ["everything else"]:
        cells = []
        for lib in libs:
            v = per[lib].get(c, 0.0)
            cells.append(f"{v:.3f} s ({100 * v / (sum(per[lib].values()) or 1.0):.0f} %)")
        L.append(f"| {c} | " + " | ".join(cells) + " |")
    L.append("| **CPU time per write** | "
             + " | ".join(f"**{sum(per[lib].values()):.3f} s**" for lib in libs) + " |")
    L.append("| wall time per write (median of the sampled writes) | "
             + " | ".join(f"{statistics.median(walls[lib]):.3f} s" for lib in libs) + " |")
    return L + [""]


if __name__ == "__main__":
    main()
