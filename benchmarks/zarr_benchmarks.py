"""The workloads of zarrs' published benchmark (github.com/zarrs/zarr_benchmarks), run by
``benchmarks/run.py`` as workload ``ZB`` with the suite's protocol (a fresh process per library
and operation, timed runs in turns, peak RSS of the cold run).

Data, as that benchmark generates it: a 1024^3 ``uint16`` array (value at ``(i, j, k)`` is
``(k + j*j // 32 + i**3) mod 65536``) in 256^3 chunks, stored

* uncompressed,
* with zstd at level 0 (zstd's default level, no checksum),
* sharded: 256^3 shards of 64^3 inner chunks, each compressed with zstd level 0.

Operations, as that benchmark runs them:

* read all: the whole array into a new array;
* round trip: read one array whole and write it to another array of the same metadata (an
  existing empty array: its ``zarr.json`` is copied before the timed run; zarrs' benchmark
  creates it in the same way, untimed);
* inner chunks one by one: every 64^3 inner chunk of the sharded array read on its own, with
  as many reads in flight as the machine has cores (the published benchmark reads with 1, 2,
  4 and 8 in flight; its scripts use asyncio tasks behind a semaphore for zarr-python and
  tensorstore, which this does too; zarrkit's reads run on a thread pool of that size).
* inner chunks all at once (not in the published benchmark): the same reads, all asked for
  at once in each library's own way of asking for many -- tensorstore a future per read,
  all issued before any is awaited; zarr-python ``asyncio.gather`` over every
  ``AsyncArray.getitem`` (its own limit on concurrent work applies); zarrkit
  ``Array.get_many`` with every selection.

Differences from the published runs: the arrays are written by zarr-python here (the suite's
neutral writer; the stored values and metadata are the same), reads come from the page cache
(the published runs drop it before every run), the figures are medians of the runs in turns
(the published ones are the best of 5), and tensorstore's round trip writes the array in one
call (the published script writes it a batch of shards at a time in transactions).

``--quick`` reads and writes 256^3 arrays in 128^3 chunks (shards of 2^3 inner chunks of 64^3,
as large as the published ones): 1/64 of the bytes.

Workload ``ZB8`` is the same with 8x smaller chunks: the same array, its chunks and shards halved
along every dimension (1024^3 in 128^3 chunks; sharded: 128^3 shards of 32^3 inner chunks, 64 KiB
each; ``--quick``: 256^3 in 64^3 chunks, 64^3 shards of 32^3 inner chunks), every operation and
library as ``ZB``: where per-chunk costs, not bytes, start to decide.

Cold and warm: ``run.py`` runs the ZB workloads before anything else, and before it touches
memory once for the other workloads; each child's first run (the first read, or round trip, in
a fresh process, its imports done and the array opened; the *cold* figure is the median of
those of ``--cold-runs`` fresh processes per library, 3 in a full run) runs while the
machine's free-page reporting is back to its own setting, so that no memory an earlier run
left backed by the host is waiting for it (a full run pauses 2.5 s before each, the kernel's
reporting delay, so that what the previous one freed has gone back), right after the parent
has read the operation's source files once (every library finds them in the page cache: the
first would otherwise read from disk what memory pressure evicted; a round trip then drops
the page cache before each of its runs, cold or warm, as the published runs do, and reads its
source from the disk), the libraries in an order that changes from round to round; the *warm*
figure is the median of the runs repeated afterwards in the last of those processes, with the
reporting held again (and,
in a full run, 3 GiB touched first: the memory one run needs, which the cold runs handed back).
"""

from __future__ import annotations

import asyncio
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import _benchlib as B
import numpy as np

DATASETS = {
    "uncompressed": {"compress": False, "shards": False},
    "zstd": {"compress": True, "shards": False},
    "sharded zstd": {"compress": True, "shards": True},
}

OPS = [f"read all {d}" for d in DATASETS] + [f"round trip {d}" for d in DATASETS] + [
    "inner chunks one by one sharded zstd", "inner chunks all at once sharded zstd"]

#: zarrs' published figures (README and measurements/ of github.com/zarrs/zarr_benchmarks at
#: commit 5f65c77): seconds, best of 5, on an Intel Core Ultra 7 268V (8 cores), 32 GB,
#: Linux 6.18, data read from a cold disk cache (KIOXIA SSD)
PUBLISHED_MACHINE = ("Intel Core Ultra 7 268V, 8 cores, 32 GB LPDDR5X, KIOXIA SSD, Linux 6.18; "
                     "page cache dropped before every run; best of 5")
PUBLISHED_LIBS = ["zarrs (Rust)", "tensorstore", "zarr-python", "zarr-python + zarrs pipeline"]
PUBLISHED = {
    "read all": {"uncompressed": (0.54, 0.72, 1.03, 0.90), "zstd": (0.27, 0.53, 0.82, 0.64),
                 "sharded zstd": (0.45, 0.60, 1.97, 0.80)},
    "round trip": {"uncompressed": (0.59, 2.04, 4.03, 1.12), "zstd": (0.46, 2.04, 3.81, 1.10),
                   "sharded zstd": (1.37, 1.46, 7.23, 1.84)},
    # by reads in flight
    "inner chunks one by one": {1: (1.80, 3.81, 7.34, 7.68), 2: (0.96, 2.75, 3.78, 2.84),
                                4: (0.64, 1.03, 3.58, 2.02), 8: (0.49, 0.85, 3.65, 1.77)},
}
#: peak memory of the published read-all runs (GB; the whole process)
PUBLISHED_READ_ALL_GB = {"uncompressed": (2.40, 2.37, 2.44, 2.39),
                         "zstd": (2.41, 2.40, 2.43, 2.40),
                         "sharded zstd": (2.17, 2.38, 2.58, 2.21)}
#: our library keys -> position in the published tuples
PUBLISHED_POS = {"tensorstore": 1, "zarr": 2, "zarr-zarrs": 3}


def dataset_of(op: str) -> str:
    """The dataset an operation reads ("... sharded zstd" before "... zstd")."""
    return max((d for d in DATASETS if op.endswith(" " + d)), key=len)


#: the chunkings: the published one, and chunks and shards halved along every dimension
WORKLOADS = {"ZB": 1, "ZB8": 2}


def sizes(quick: bool, workload: str = "ZB") -> dict:
    d = WORKLOADS[workload]
    if quick:
        shape, chunks, inner = (256,) * 3, (128,) * 3, (64,) * 3
    else:
        shape, chunks, inner = (1024,) * 3, (256,) * 3, (64,) * 3
    return {"shape": shape, "chunks": tuple(c // d for c in chunks),
            "inner": tuple(c // d for c in inner)}


def concurrency() -> int:
    """Reads in flight for the inner-chunk operation: one per usable core."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def ref_path(tmp: str, dataset: str, workload: str = "ZB") -> str:
    return os.path.join(tmp, "ref", workload.lower() + "-" + dataset.replace(" ", "-"))


def expected(start: int, stop: int, shape: tuple[int, ...]) -> np.ndarray:
    """Planes ``start:stop`` (first dimension) of the benchmark array."""
    _, n1, n2 = shape
    j = np.arange(n1, dtype=np.uint64)[:, None]
    k = np.arange(n2, dtype=np.uint64)[None, :]
    plane = ((k + j * j // 32) % 65536).astype(np.uint16)
    i = np.arange(start, stop, dtype=np.uint64)
    first = (i ** 3 % 65536).astype(np.uint16)
    return plane[None, :, :] + first[:, None, None]  # uint16: wraps modulo 65536


def prepare(tmp: str, quick: bool, workload: str = "ZB") -> dict:
    """Write the three arrays with zarr-python, a slab of chunks at a time."""
    import warnings

    import zarr
    from zarr.codecs import ZstdCodec

    warnings.filterwarnings("ignore")
    S = sizes(quick, workload)
    shape, chunks = S["shape"], S["chunks"]
    out = {}
    for name, d in DATASETS.items():
        path = ref_path(tmp, name, workload)
        kw: dict[str, Any] = {"compressors": [ZstdCodec(level=0, checksum=False)]
                                  if d["compress"] else None}
        if d["shards"]:
            kw.update(chunks=S["inner"], shards=chunks)
        else:
            kw.update(chunks=chunks)
        a = zarr.create_array(store=path, shape=shape, dtype="uint16", fill_value=0,
                              zarr_format=3, overwrite=True, **kw)
        for z in range(0, shape[0], chunks[0]):
            a[z : z + chunks[0]] = expected(z, z + chunks[0], shape)
        stored = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(path)
                     for f in fs if f != "zarr.json")
        out[name] = {"stored_bytes": stored, "raw_bytes": int(np.prod(shape)) * 2}
    return out


def check(read_planes, shape: tuple[int, ...], what: str, step: int = 64) -> None:
    """Compare an array, read ``step`` planes at a time by ``read_planes(start, stop)``,
    with the benchmark's values (without holding a second copy of the whole array)."""
    for z in range(0, shape[0], step):
        got = np.asarray(read_planes(z, min(z + step, shape[0])))
        want = expected(z, min(z + step, shape[0]), shape)
        if got.shape != want.shape or got.dtype != want.dtype or not np.array_equal(got, want):
            raise AssertionError(f"WRONG DATA in {what}: planes {z}..{z + step} differ "
                                 f"(got {got.shape} {got.dtype})")


def writable(A: B.Adapter, path: str) -> Any:
    """Open the existing array at ``path`` for writing with adapter ``A``."""
    if isinstance(A, B.ZarrkitAdapter):
        return A.zk.open_array(A._store(("dir", path)), mode="r+")
    if A.key == "tensorstore":
        return A.ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": path + "/"}},
                         open=True, read=True, write=True).result()
    return A._check_pipeline(A.zarr.open_array(store=path, mode="r+"))


def inner_chunk_reader(A: B.Adapter, h: Any, sels: list, n: int):
    """A function reading every selection of ``sels`` with ``n`` reads in flight (0: all
    asked for at once), keeping the results of a few (returned)."""
    keep = set(range(0, len(sels), max(1, len(sels) // 16)))
    if n == 0:  # all at once, each library's own way
        if isinstance(A, B.ZarrkitAdapter):
            return lambda: {i: r for i, r in enumerate(h.get_many(sels)) if i in keep}
        if A.key == "tensorstore":
            def issue_all():
                futures = [h[s].read() for s in sels]
                results = [f.result() for f in futures]
                return {i: r for i, r in enumerate(results) if i in keep}

            return issue_all
        aa = h._async_array

        async def gathered():
            results = await asyncio.gather(*(aa.getitem(s) for s in sels))
            return {i: r for i, r in enumerate(results) if i in keep}

        return lambda: asyncio.run(gathered())
    # every library's task drops a result not kept as soon as it is read (a task holds what it
    # returns until the results are gathered)
    if isinstance(A, B.ZarrkitAdapter):
        pool = ThreadPoolExecutor(n)

        def read(i):
            r = h[sels[i]]
            return r if i in keep else None

        def run():
            return {i: r for i, r in enumerate(pool.map(read, range(len(sels)))) if i in keep}

        return run
    if A.key == "tensorstore":
        async def one(i, sem):
            async with sem:
                r = await h[sels[i]].read()
                return i, (r if i in keep else None)
    else:
        aa = h._async_array

        async def one(i, sem):
            async with sem:
                r = await aa.getitem(sels[i])
                return i, (r if i in keep else None)

    async def all_reads():
        sem = asyncio.Semaphore(n)
        got = {}
        async with asyncio.TaskGroup() as tg:
            tasks = [tg.create_task(one(i, sem)) for i in range(len(sels))]
        for t in tasks:
            i, r = t.result()
            if i in keep:
                got[i] = r
        return got

    return lambda: asyncio.run(all_reads())


def run_child(op: str, libkey: str, tmp: str, quick: bool, turns: B.Turns,
              workload: str = "ZB") -> dict:
    import warnings

    warnings.filterwarnings("ignore")
    A = B.make_adapter(libkey)
    res: dict[str, Any] = {"library": A.name, "label": op}
    why = A.available()
    if why:
        res["na"] = why
        return res
    A.init()
    res["version"] = A.version()
    S = sizes(quick, workload)
    shape = S["shape"]
    nbytes = int(np.prod(shape)) * 2
    dataset = dataset_of(op)
    src = ref_path(tmp, dataset, workload)
    loc = ("dir", src)
    meta: dict[str, Any] = {"zarr_format": 3}
    scratch = os.path.join(tmp, "scratch", f"{workload}-{libkey}")
    try:
        if op.startswith("read all"):
            def prepare_run():
                return {"h": A.open(loc, meta)}

            def run(st):
                st["out"] = A.read(st["h"], ...)

            def verify(st):
                out = st["out"]
                check(lambda a, b: out[a:b], shape, f"{A.name} {op}")

            r = B._measure(prepare_run, run, verify, turns)
            r.update(nbytes=nbytes, unit="s")
        elif op.startswith("round trip"):
            dst = os.path.join(scratch, "out")
            os.makedirs(dst, exist_ok=True)
            shutil.copy(os.path.join(src, "zarr.json"), os.path.join(dst, "zarr.json"))

            def prepare_run():
                # the previous run's chunks removed and written back first (untimed)
                shutil.rmtree(os.path.join(dst, "c"), ignore_errors=True)
                B.settle_page_cache()
                return {"src": A.open(loc, meta), "dst": writable(A, dst)}

            def run(st):
                A.write(st["dst"], A.read(st["src"], ...))

            def verify(st):
                back = A.open(("dir", dst), meta)
                check(lambda a, b: A.read(back, (slice(a, b),)), shape,
                      f"{A.name} {op}, read back by itself")
                if isinstance(A, B.ZarrkitAdapter):
                    zp = B.ZarrPythonAdapter("zarr")
                    zp.init()
                    h = zp.open(("dir", dst), meta)
                    check(lambda a, b: h[a:b], shape, f"{A.name} {op}, read back by zarr-python")

            r = B._measure(prepare_run, run, verify, turns)
            r.update(nbytes=nbytes, unit="s")
        else:
            inner = S["inner"]
            sels = [tuple(slice(c * s, (c + 1) * s) for c, s in zip(coords, inner))
                    for coords in np.ndindex(*(n // s for n, s in zip(shape, inner)))]
            n = 0 if "all at once" in op else concurrency()

            def prepare_run():
                return {"read": inner_chunk_reader(A, A.open(loc, meta), sels, n)}

            def run(st):
                st["kept"] = st["read"]()

            def verify(st):
                for i, got in st["kept"].items():
                    sel = sels[i]
                    want = expected(sel[0].start, sel[0].stop, shape)[(slice(None),) + sel[1:]]
                    if not np.array_equal(np.asarray(got), want):
                        raise AssertionError(f"WRONG DATA in {A.name} {op}: inner chunk {sel}")

            r = B._measure(prepare_run, run, verify, turns)
            r.update(nbytes=nbytes, unit="s", n=len(sels), in_flight=n)
        res.update(r)
    except B.NotAvailable as e:
        res["na"] = str(e)
    except AssertionError as e:
        res["error"] = str(e)
        res["wrong"] = True
    except Exception as e:  # noqa: BLE001 - reported in the table
        res["error"] = f"{type(e).__name__}: {e}"[:400]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return res


def _published(op: str, libkey: str, n: int) -> str:
    kind = next((k for k in PUBLISHED if op.startswith(k)), None)
    pos = PUBLISHED_POS.get(libkey)
    if pos is None or kind is None:
        return ""
    if kind == "inner chunks one by one":
        table = PUBLISHED[kind]
        row = table.get(n) or table[8]
        return f"{row[pos]:.2f} s ({n if n in table else 8} in flight)"
    dataset = dataset_of(op)
    return f"{PUBLISHED[kind][dataset][pos]:.2f} s"


def render(results: dict, quick: bool, refs: dict | None, fmt_time, md,
           workload: str = "ZB") -> list[str]:
    """A ZB section of the report: our rows (cold and warm), the published figures beside
    them (the published chunking only)."""
    S = sizes(quick, workload)
    size = "x".join(map(str, S["shape"]))
    published = workload == "ZB"
    if published:
        L = [(f"## ZB: zarrs' benchmark workloads ({size} uint16, {S['chunks'][0]}^3 chunks; "
              f"sharded: {S['inner'][0]}^3 inner chunks; zstd level 0)"), ""]
        L.append("The workloads of https://github.com/zarrs/zarr_benchmarks (see "
                 "`benchmarks/zarr_benchmarks.py` for what differs). The *published* column is "
                 "that benchmark's figure for the same library on the full 1024^3 arrays, on "
                 f"another machine ({PUBLISHED_MACHINE}); zarrs' own Rust figure is given in "
                 "the zarrkit row. Compare ratios between libraries, not times across machines"
                 + (" (and not at all in --quick, whose arrays are 64x smaller)." if quick
                    else "."))
    else:
        inner_kib = int(np.prod(S["inner"])) * 2 // 1024
        L = [(f"## ZB8: zarrs' benchmark workloads with 8x smaller chunks ({size} uint16, "
              f"{S['chunks'][0]}^3 chunks; sharded: {S['chunks'][0]}^3 shards of "
              f"{S['inner'][0]}^3 inner chunks, {inner_kib} KiB each; zstd level 0)"), ""]
        L.append("The ZB workloads on the same array with its chunks and shards halved along "
                 "every dimension (8x as many chunks, each 1/8 of the size): the same "
                 "operations and libraries, where per-chunk costs weigh more. No published "
                 "figures exist for this chunking.")
    L.append("")
    L.append("*cold*: the median of the first runs of several fresh processes per library "
             "(imports done and the array opened, untimed; no memory left backed by an "
             "earlier run; its source files read once just before, into the page cache -- "
             "a round trip drops the page cache before each of its runs, cold or warm, so it "
             "reads its source from the disk; the libraries' cold runs in an order that "
             "changes from round to round: see `benchmarks/zarr_benchmarks.py`); *warm*: the "
             "median of the runs repeated in the last of those processes after its cold "
             "run. MiB/s is of the warm figure; the ratios are zarrkit's figure over the "
             "library's, cold and warm.")
    L.append("")
    if refs:
        for name, v in refs.items():
            L.append(f"- {name}: {v['stored_bytes'] / B.MiB:.1f} MiB stored / "
                     f"{v['raw_bytes'] / B.MiB:.0f} MiB raw")
        L.append("")
    head = "| library | cold | warm | MiB/s | ratio zarrkit/peer, cold | warm | peak RSS MiB |"
    rule = "|---|---|---|---|---|---|---|"
    if published:
        head += " published |"
        rule += "---|"
    for op, per_lib in results.items():
        zk = per_lib.get("zarrkit")
        n = next((e.get("in_flight") for e in per_lib.values() if e.get("in_flight")),
                 concurrency())
        reads = next((e['n'] for e in per_lib.values() if e.get('n')), '?')
        extra = ((f" ({reads} reads, {n} in flight)" if "one by one" in op else f" ({reads} reads)")
                 if op.startswith("inner") else "")
        L += [f"### {workload} {op}{extra}", "", head, rule]
        for lib, e in per_lib.items():
            name = e.get("library", lib)
            pub = _published(op, lib, n) if published else ""
            kind = next((k for k in PUBLISHED if op.startswith(k)), None)
            if lib == "zarrkit" and published and kind is not None:
                if kind == "inner chunks one by one":
                    row = PUBLISHED[kind].get(n) or PUBLISHED[kind][8]
                    pub = f"zarrs (Rust): {row[0]:.2f} s"
                else:
                    ds = dataset_of(op)
                    pub = f"zarrs (Rust): {PUBLISHED[kind][ds][0]:.2f} s"
            if "seconds" not in e:
                why = e.get("na") or e.get("error", "?")
                tag = "n/a" if e.get("na") else ("**WRONG DATA**" if e.get("wrong") else "**FAILED**")
                L.append(f"| {name} | {tag} | | | | | | {md(why)} |" if published else
                         f"| {name} | {tag} | | | | | {md(why)} |")
                continue
            mibs = e["nbytes"] / e["seconds"] / B.MiB
            ratio = f"{zk['seconds'] / e['seconds']:.2f}" if zk and "seconds" in zk else "n/a"
            cold_ratio = (f"{zk['cold'] / e['cold']:.2f}" if zk and "cold" in zk and "cold" in e
                          else "n/a")
            cold = fmt_time(dict(e, seconds=e["cold"])) if "cold" in e else "n/a"
            L.append(f"| {name} | {cold} | {fmt_time(e)} | {mibs:,.0f} | {cold_ratio} | {ratio} | "
                     f"{e['peak_mib']:,.0f} |" + (f" {pub} |" if published else ""))
        L.append("")
    return L
