"""Thread scaling: chunk-bound reads with 1 and 2 threads, and the speed-up projected to more
cores.

Part of ``benchmarks/run.py`` (``--only threads``): two arrays written by zarr-python (the
suite's neutral writer) into a local directory, each read whole, from the page cache, with 1
and with 2 threads:

* **sharded**: uint16, 128^3 shards of 32^3 inner chunks (64 KiB each), zstd level 0, the
  values of zarrs' benchmark (``zarr_benchmarks.py``): 512^3 (4,096 inner chunks; ``--quick``
  256^3, 512);
* **plain**: float64 in 32x32 chunks (8 KiB each), zstd level 0: 4096^2 (16,384 chunks;
  ``--quick`` 2048^2, 4,096);
* **blosc**: uint8 in 32x32 chunks (1 KiB each), a v2 array with zarr-python 2's default
  compressor (Blosc LZ4 level 5, byte shuffle): 4096^2 (16,384 chunks; ``--quick`` 2048^2).

Libraries: zarrkit (``zarrkit.config.set(threads=n)``; its small chunks are read by the
calling thread a batch at a time while the others decode), and tensorstore with
``data_copy_concurrency`` and ``file_io_concurrency`` limited to n.  One child process per
(array, library); in it, after one untimed read per thread count (checked against the data),
the two thread counts take turns, ``runs`` reads each; medians of wall time and of the
process's CPU time (all its threads) per read.

Projection (Amdahl): u, the process's CPU time over its wall time with 2 threads divided by the
same with 1 (which takes out time off the CPU that one thread also has: waits, other jobs of a
shared machine), is how many threads ran at once on average; counting the rest as serial (one
thread holding the GIL while the other could not run) gives the serial share s = 2/u - 1 and
the speed-up on n cores 1 / (s + (1 - s) / n) -- a ceiling: it leaves out contention that grows
with n.  The table also gives s as the measured speed-up alone implies it (2 T2 / T1 - 1).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
import traceback
from typing import Any

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

MiB = 1 << 20
ARRAYS = ["sharded", "plain", "blosc"]
LIBS = ["zarrkit", "tensorstore"]
#: zarrkit's threshold changes nothing for 64 KiB chunks: that row only for the plain array
LIBS_OF = {"sharded": LIBS, "plain": LIBS, "blosc": LIBS}
LIB_NAMES = {"zarrkit": "zarrkit",
             "tensorstore": "tensorstore (concurrency limits = threads)"}
THREADS = (1, 2)
PROJECTED = (4, 8, 16)
METHOD = ("Projection (Amdahl): u, the process's CPU time over its wall time with 2 threads "
          "divided by the same with 1 thread, is how many threads ran at once on average, so "
          "the serial share (time one thread held the GIL while the other could not run) is "
          "s = 2/u - 1 and the speed-up on n cores 1 / (s + (1 - s) / n), a ceiling that "
          "leaves out contention growing with n; *s (speed-up)* is the serial share the "
          "measured speed-up alone implies, 2 T2 / T1 - 1, as a cross-check.")


def sizes(quick: bool) -> dict:
    if quick:
        return {"sharded": {"shape": (256,) * 3}, "plain": {"shape": (2048, 2048)},
                "blosc": {"shape": (2048, 2048)}, "runs": 3}
    return {"sharded": {"shape": (512,) * 3}, "plain": {"shape": (4096, 4096)},
            "blosc": {"shape": (4096, 4096)}, "runs": 7}


SHARD, INNER, PLAIN_CHUNK = (128,) * 3, (32,) * 3, (32, 32)


def path_of(tmp: str, name: str) -> str:
    return os.path.join(tmp, "threads", name)


def plain_values(start: int, stop: int, shape: tuple[int, int]) -> np.ndarray:
    """Rows ``start:stop`` of the plain array (float64, compressible)."""
    i = np.arange(start, stop, dtype=np.int64)[:, None]
    j = np.arange(shape[1], dtype=np.int64)[None, :]
    return ((i * 7 + j) % 1000).astype(np.float64) * 0.25


def blosc_values(start: int, stop: int, shape: tuple[int, int]) -> np.ndarray:
    """Rows ``start:stop`` of the blosc array (uint8, compressible)."""
    i = np.arange(start, stop, dtype=np.int64)[:, None]
    j = np.arange(shape[1], dtype=np.int64)[None, :]
    return ((i * 7 + j) % 251).astype(np.uint8)


ITEMSIZE = {"sharded": 2, "plain": 8, "blosc": 1}


def expected(name: str, shape: tuple[int, ...]) -> np.ndarray:
    if name == "sharded":
        import zarr_benchmarks as ZB

        return ZB.expected(0, shape[0], shape)
    if name == "blosc":
        return blosc_values(0, shape[0], shape)
    return plain_values(0, shape[0], shape)


def chunk_count(name: str, shape: tuple[int, ...]) -> int:
    chunks = INNER if name == "sharded" else PLAIN_CHUNK
    return int(np.prod([s // c for s, c in zip(shape, chunks)]))


def prepare(tmp: str, quick: bool) -> dict:
    """Write the arrays with zarr-python (skipped when already there); return their facts."""
    import warnings

    import numcodecs
    import zarr
    from zarr.codecs import ZstdCodec

    warnings.filterwarnings("ignore")
    S = sizes(quick)
    out = {}
    for name in ARRAYS:
        shape = S[name]["shape"]
        path = path_of(tmp, name)
        if not any(os.path.exists(os.path.join(path, doc)) for doc in ("zarr.json", ".zarray")):
            kw: dict[str, Any] = {"compressors": [ZstdCodec(level=0, checksum=False)], "zarr_format": 3}
            if name == "blosc":
                kw.update(chunks=PLAIN_CHUNK, dtype="uint8", zarr_format=2,
                          compressors=numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1))
                step = 512
            elif name == "sharded":
                kw.update(chunks=INNER, shards=SHARD, dtype="uint16")
                step = SHARD[0]
            else:
                kw.update(chunks=PLAIN_CHUNK, dtype="float64")
                step = 512
            a = zarr.create_array(store=path, shape=shape, fill_value=0, overwrite=True, **kw)
            for z in range(0, shape[0], step):
                if name == "sharded":
                    import zarr_benchmarks as ZB

                    a[z : z + step] = ZB.expected(z, z + step, shape)
                elif name == "blosc":
                    a[z : z + step] = blosc_values(z, z + step, shape)
                else:
                    a[z : z + step] = plain_values(z, z + step, shape)
        stored = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(path)
                     for f in fs if f not in ("zarr.json", ".zarray", ".zattrs"))
        itemsize = ITEMSIZE[name]
        out[name] = {"path": path, "shape": list(shape), "chunks": chunk_count(name, shape),
                     "chunk_bytes": int(np.prod(INNER if name == "sharded" else PLAIN_CHUNK))
                     * itemsize, "stored_bytes": stored,
                     "raw_bytes": int(np.prod(shape)) * itemsize}
    return out


def prepare_child(spec: dict) -> dict:
    return prepare(spec["tmp"], spec["quick"])


def readers(lib: str, path: str) -> dict[int, Any]:
    """A function reading the whole array, per thread count."""
    if lib.startswith("zarrkit"):
        import zarrkit

        z = zarrkit.open_array(zarrkit.DirectoryStore(path), mode="r")

        def make(n):
            def read():
                with zarrkit.config.set(threads=n):
                    return z[...]
            return read

        return {n: make(n) for n in THREADS}
    import tensorstore as ts

    out = {}
    for n in THREADS:
        ctx = ts.Context({"data_copy_concurrency": {"limit": n},
                          "file_io_concurrency": {"limit": n}})
        driver = "zarr3" if os.path.exists(os.path.join(path, "zarr.json")) else "zarr"
        h = ts.open({"driver": driver, "kvstore": {"driver": "file", "path": path + "/"}},
                    read=True, context=ctx).result()
        out[n] = (lambda h=h: h[...].read().result())
    return out


def child(spec: dict) -> dict:
    """Measure one (array, library): wall and CPU time per read, per thread count."""
    import warnings

    warnings.filterwarnings("ignore")
    lib, name = spec["lib"], spec["array"]
    res: dict[str, Any] = {"lib": lib, "array": name}
    try:
        if lib == "tensorstore":
            try:
                import tensorstore  # noqa: F401
            except ImportError as e:
                res["na"] = f"tensorstore not importable: {e}"
                return res
        info = spec["info"]
        read = readers(lib, info["path"])
        want = expected(name, tuple(info["shape"]))
        for n in THREADS:  # the untimed first read, checked
            got = np.asarray(read[n]())
            if got.shape != want.shape or not np.array_equal(got, want):
                raise AssertionError(f"WRONG DATA: {lib} read of {name} with {n} threads")
            del got
        del want
        wall: dict[int, list[float]] = {n: [] for n in THREADS}
        cpu: dict[int, list[float]] = {n: [] for n in THREADS}
        for r in range(spec["runs"]):
            for n in (THREADS if r % 2 == 0 else THREADS[::-1]):
                c0, t0 = time.process_time(), time.perf_counter()
                out = read[n]()
                t1, c1 = time.perf_counter(), time.process_time()
                del out
                wall[n].append(t1 - t0)
                cpu[n].append(c1 - c0)
        res["wall"] = {str(n): statistics.median(v) for n, v in wall.items()}
        res["cpu"] = {str(n): statistics.median(v) for n, v in cpu.items()}
        res["times"] = {str(n): v for n, v in wall.items()}
    except AssertionError as e:
        res["error"] = str(e)
    except Exception as e:  # noqa: BLE001 - reported in the table
        res["error"] = f"{type(e).__name__}: {e}"[:400]
        traceback.print_exc()
    return res


def serial_share(cpu1: float, wall1: float, cpu2: float, wall2: float) -> float:
    """Amdahl's serial share from the CPU time over wall time of the 2-thread run relative to
    the 1-thread run's (see METHOD)."""
    if min(cpu1, wall1, cpu2, wall2) <= 0:
        return 1.0
    u = (cpu2 / wall2) / (cpu1 / wall1)
    return min(1.0, max(0.0, 2.0 / u - 1.0))


def amdahl(s: float, n: int) -> float:
    return 1.0 / (s + (1.0 - s) / n)


def run(args, tmp: str, log, problems: list[str], spawn, Child, take_turns,
        result_tag: str) -> list[str]:
    timeout = 600 if args.quick else 3600
    S = sizes(args.quick)
    t0 = time.perf_counter()
    info, err = spawn({"kind": "threads-prep", "tmp": tmp, "quick": args.quick}, timeout)
    if info is None:
        problems.append(f"threads: writing the arrays failed: {err[-500:]}")
        return []
    info.pop("_wall", None)
    log(f"threads: arrays written ({time.perf_counter() - t0:.1f} s)")
    rows = []
    for name in ARRAYS:
        for lib in LIBS_OF[name]:
            r, err = spawn({"kind": "threads", "lib": lib, "array": name, "info": info[name],
                            "runs": S["runs"]}, timeout)
            if r is None:
                r = {"lib": lib, "array": name, "error": err.strip().splitlines()[0]
                     if err.strip() else "child failed"}
                problems.append(f"threads {name} {lib}: child failed: {err[-400:]}")
            elif "error" in r:
                problems.append(f"threads {name} {lib}: {r['error']}")
            if "wall" in r:
                log(f"threads {name} {lib}: 1 thread {r['wall']['1']:.4f} s, "
                    f"2 threads {r['wall']['2']:.4f} s")
            rows.append(r)
    return render(rows, info)


def render(rows: list[dict], info: dict) -> list[str]:
    L = ["## Thread scaling: chunk-bound reads with 1 and 2 threads", ""]
    L.append("Whole-array reads from a local directory (page cache) of arrays written by "
             "zarr-python (zstd level 0 but for the blosc array):")
    L.append("")
    for name in ARRAYS:
        i = info.get(name)
        if i:
            what = {"sharded": "uint16, 128^3 shards of 32^3 inner chunks",
                    "plain": "float64, 32x32 chunks",
                    "blosc": "uint8, 32x32 chunks, v2, Blosc LZ4 level 5 with byte shuffle"}[name]
            L.append(f"- {name}: {'x'.join(map(str, i['shape']))} {what} ({i['chunks']:,} "
                     f"chunks of {i['chunk_bytes'] // 1024} KiB; "
                     f"{i['stored_bytes'] / MiB:.1f} MiB stored / {i['raw_bytes'] / MiB:.0f} "
                     "MiB raw)")
    L.append("")
    L.append("Median of the reads with each thread count (the two counts take turns in one "
             "process); *µs/chunk* is the 1-thread time per chunk; *CPU/wall* is the process's "
             "CPU time (all its threads) over the wall time. zarrkit reads the small chunks "
             "of the plain and blosc arrays with the calling thread reading a batch of chunk "
             "files while the others decode the batches before; "
             "tensorstore's "
             "`data_copy_concurrency` and `file_io_concurrency` limits are set to the thread "
             "count (its 1-thread figure may still use one I/O and one copy thread at once).")
    L.append("")
    L.append(METHOD)
    L.append("")
    L += [("| array | library | 1 thread | 2 threads | speed-up | µs/chunk | CPU/wall 1 | "
           "CPU/wall 2 | serial share s | s (speed-up) | projected 4 | projected 8 | "
           "projected 16 | limit 1/s |"),
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        name = LIB_NAMES.get(r["lib"], r["lib"])
        if "wall" not in r:
            why = r.get("na") or r.get("error", "?")
            tag = "n/a" if r.get("na") else "**FAILED**"
            L.append(f"| {r['array']} | {name} | {tag} | {str(why)[:150]} |"
                     + " |" * 11)
            continue
        w1, w2 = r["wall"]["1"], r["wall"]["2"]
        c1, c2 = r["cpu"]["1"], r["cpu"]["2"]
        s = serial_share(c1, w1, c2, w2)
        s_speed = min(1.0, max(0.0, 2 * w2 / w1 - 1))
        n = info.get(r["array"], {}).get("chunks") or 1
        proj = " | ".join(f"{amdahl(s, k):.2f}x" for k in PROJECTED)
        limit = "∞" if s <= 0 else f"{1 / s:.1f}x"
        L.append(f"| {r['array']} | {name} | {w1:.4f} s | {w2:.4f} s | {w1 / w2:.2f}x | "
                 f"{w1 / n * 1e6:.1f} | {c1 / w1:.2f} | {c2 / w2:.2f} | {s:.2f} | {s_speed:.2f} | "
                 f"{proj} | "
                 f"{limit} |")
    L.append("")
    return L
