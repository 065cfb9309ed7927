"""Cost growth: how zarrkit's costs grow with the size of what it works on.

Part of ``benchmarks/run.py`` (``--only growth``); zarrkit only, one child process per part:

* **hierarchy**: open a v3 hierarchy of 10 / 1,000 / 10,000 nodes and walk it (every member
  opened), consolidated or not, in a local directory and on S3 (moto) through the latency
  proxy of ``s3proxy.py`` at 0 and 10 ms per request: time and requests per node;
* **nchunks**: ``nchunks_initialized`` and ``info`` of arrays of 10^4 - 10^6 stored chunks in
  memory, and of 10^4 - 10^5 in a local directory (a million files take longer to write than
  the rest of the section);
* **cp**: the ``zarrkit cp`` command copying arrays of up to 4 GiB (local directories): time and
  peak memory of the command's process, per GiB;
* **distributed**: storing a dask array into a zarrkit array from a ``distributed``
  LocalCluster of 1 and 2 worker processes.

Tables per size; with ``--out`` the plots go beside the report (``growth_*.png``), drawn by
``growth_plots.py`` from the tables (which can also draw them again from a committed report).
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
import traceback
from typing import Any

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import growth_plots
import s3proxy

GiB = 1 << 30
MiB = 1 << 20
PARTS = ["hierarchy", "nchunks", "cp", "distributed"]


def sizes(quick: bool) -> dict:
    if quick:
        return {"nodes": [10, 100], "remote_nodes": [10, 100],
                "latencies": [0.0, 0.01], "chunks": [10**3, 10**4, 10**5],
                "dir_chunks": [10**3, 4000],
                "cp_mib": [8, 32], "dist_mib": [16], "runs": 1}
    return {"nodes": [10, 1000, 10000], "remote_nodes": [10, 1000, 10000],
            "latencies": [0.0, 0.01], "chunks": [10**4, 10**5, 10**6],
            "dir_chunks": [10**4, 10**5],
            "cp_mib": [256, 1024, 4096], "dist_mib": [256, 1024], "runs": 5}


def timed(fn, runs: int) -> tuple[float, Any]:
    """Median seconds of ``runs`` calls after one untimed call, and the last result."""
    out = fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


# --------------------------------------------------------------------------------------------
# hierarchy


def build_hierarchy(path: str, n: int) -> int:
    """A v3 hierarchy of about ``n`` nodes in directory ``path``: the root and groups of 9
    arrays (metadata only); returns the node count."""
    import zarrkit

    root = zarrkit.open_group(path, mode="w", zarr_format=3)
    groups = max(1, round((n - 1) / 10))
    for i in range(groups):
        g = root.create_group(f"g{i}")
        for j in range(9):
            g.create_array(f"a{j}", shape=(100,), chunks=(10,), dtype="int32", fill_value=0)
    return 1 + 10 * groups


def walk(open_group) -> int:
    g = open_group()
    return 1 + len(g.members(max_depth=None))


def hierarchy_part(spec: dict) -> dict:
    import s3fs

    import zarrkit

    S = sizes(spec["quick"])
    tmp = spec["tmp"]
    endpoint = spec["endpoint"]
    os.environ.update({"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                       "AWS_DEFAULT_REGION": "us-east-1"})
    opts = {"key": "testing", "secret": "testing", "client_kwargs": {"endpoint_url": endpoint}}
    fs = s3fs.S3FileSystem(**opts)
    if not fs.exists("growth"):
        fs.mkdir("growth")
    rows = []
    for n in sorted(set(S["nodes"]) | set(S["remote_nodes"])):
        d = os.path.join(tmp, f"hierarchy-{n}")
        nodes = build_hierarchy(d, n)
        zarrkit.consolidate_metadata(d)
        places = [("local directory", 0.0, d)] if n in S["nodes"] else []
        if n in S["remote_nodes"]:
            s3proxy.control(endpoint, "latency", seconds=0)
            fs.put(d + "/", f"growth/h{n}/", recursive=True)
            places += [(f"S3, {lat * 1e3:.0f} ms", lat, f"s3://growth/h{n}")
                       for lat in S["latencies"]]
        for where, lat, url in places:
            remote = url.startswith("s3://")
            runs = S["runs"] if not (remote and nodes > 1000) else 1
            for consolidated in (True, False):
                def store(url=url, remote=remote):
                    return (zarrkit.storage.FsspecStore(url, storage_options=opts, read_only=True)
                            if remote else zarrkit.DirectoryStore(url, read_only=True))
                if consolidated:
                    def op():
                        return walk(lambda: zarrkit.open_consolidated(store(), mode="r"))
                else:
                    def op():
                        return walk(lambda: zarrkit.open_group(store(), mode="r"))
                if remote:
                    s3proxy.control(endpoint, "latency", seconds=lat)
                    s3proxy.control(endpoint, "reset")
                t, found = timed(op, runs)
                requests = None
                if remote:  # per walk (the untimed first one included: nothing is cached)
                    requests = s3proxy.control(endpoint, "stats")["requests"] / (runs + 1)
                    s3proxy.control(endpoint, "latency", seconds=0)
                if found != nodes:
                    raise AssertionError(f"walked {found} nodes of {nodes}")
                rows.append({"nodes": nodes, "where": where, "consolidated": consolidated,
                             "seconds": t, "requests": requests})
                print(f"hierarchy {nodes} {where} consolidated={consolidated}: {t:.4f} s "
                      f"{requests} requests", file=sys.stderr, flush=True)
        shutil.rmtree(d, ignore_errors=True)
    return {"rows": rows}


# --------------------------------------------------------------------------------------------
# nchunks_initialized / info


def nchunks_part(spec: dict) -> dict:
    import zarrkit

    S = sizes(spec["quick"])
    rows = []
    for where, counts in (("memory", S["chunks"]), ("local directory", S["dir_chunks"])):
        for n in counts:
            d = os.path.join(spec["tmp"], f"nchunks-{n}")
            side = 1000 if n >= 10**5 else 100
            store = zarrkit.MemoryStore() if where == "memory" else d
            a = zarrkit.create_array(store, shape=(side, n // side), chunks=(1, 1),
                                     dtype="uint8", fill_value=0, compressors=None,
                                     zarr_format=3, overwrite=True)
            t0 = time.perf_counter()
            if where == "memory":  # the chunks' keys put straight into the store
                store.set_many({f"c/{i}/{j}": b"\x01" for i in range(side)
                                for j in range(n // side)})
            else:
                a[...] = 1
            t_write = time.perf_counter() - t0
            a = zarrkit.open_array(store, mode="r")
            runs = S["runs"] if n < 10**6 else 1
            t_n, got = timed(lambda a=a: a.nchunks_initialized, runs)
            if got != n:
                raise AssertionError(f"nchunks_initialized {got}, want {n}")
            t_info, _ = timed(lambda a=a: str(a.info_complete()), runs)
            rows.append({"chunks": n, "where": where, "nchunks_initialized": t_n,
                         "info": t_info, "write": t_write})
            print(f"nchunks {where} {n}: {t_n:.4f} s, info {t_info:.4f} s (written in "
                  f"{t_write:.1f} s)", file=sys.stderr, flush=True)
            shutil.rmtree(d, ignore_errors=True)
    return {"rows": rows}


# --------------------------------------------------------------------------------------------
# zarrkit cp


def write_source(path: str, nbytes: int) -> tuple[int, ...]:
    """A float32 array of ``nbytes`` (rows of 1024 x 1024 chunks, 4 MiB each), written block
    by block so that the source is never whole in memory."""
    import zarrkit

    rows = max(1, nbytes // (1024 * 1024 * 4)) * 1024
    a = zarrkit.create_array(path, shape=(rows, 1024), chunks=(1024, 1024), dtype="float32",
                             fill_value=0, zarr_format=3, overwrite=True)
    block = np.random.default_rng(0).integers(0, 1024, size=(8192, 1024),
                                              dtype=np.uint16).astype(np.float32)
    for i in range(0, rows, 8192):
        n = min(8192, rows - i)
        a[i:i + n] = block[:n] + (i // 8192)
    return a.shape


def run_measured(cmd: list[str]) -> tuple[float, float]:
    """Run ``cmd``; (seconds, peak RSS MiB of that process)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    seconds = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    if p.returncode:
        raise RuntimeError(f"{' '.join(cmd[-4:])} exited with {p.returncode}: {err[-500:]}")
    return seconds, usage.ru_maxrss / 1024


def cp_part(spec: dict) -> dict:
    import zarrkit

    S = sizes(spec["quick"])
    rows = []
    cli = [sys.executable, "-c", "import sys; from zarrkit.cli import main; sys.exit(main())"]
    for mib in S["cp_mib"]:
        src = os.path.join(spec["tmp"], f"cp-src-{mib}")
        dst = os.path.join(spec["tmp"], f"cp-dst-{mib}")
        shape = write_source(src, mib * MiB)
        runs = []
        for _ in range(1 if mib >= 1024 or S["runs"] == 1 else 2):
            shutil.rmtree(dst, ignore_errors=True)
            runs.append(run_measured(cli + ["cp", "--no-progress", "--overwrite", src, dst]))
        a, b = zarrkit.open_array(src, mode="r"), zarrkit.open_array(dst, mode="r")
        for i in (0, shape[0] // 2, shape[0] - 1):
            if not np.array_equal(a[i], b[i]):
                raise AssertionError(f"zarrkit cp: row {i} differs")
        seconds = min(r[0] for r in runs)
        peak = max(r[1] for r in runs)
        nbytes = int(np.prod(shape)) * 4
        rows.append({"mib": nbytes / MiB, "seconds": seconds, "peak_mib": peak})
        print(f"cp {nbytes / MiB:.0f} MiB: {seconds:.2f} s, peak {peak:.0f} MiB",
              file=sys.stderr, flush=True)
        shutil.rmtree(src, ignore_errors=True)
        shutil.rmtree(dst, ignore_errors=True)
    # the interpreter alone, to tell the command's own memory from Python's
    base = run_measured([sys.executable, "-c", "import zarrkit.cli"])
    return {"rows": rows, "import_peak_mib": base[1], "import_seconds": base[0]}


# --------------------------------------------------------------------------------------------
# distributed


def distributed_part(spec: dict) -> dict:
    import dask.array as da
    from distributed import Client, LocalCluster

    import zarrkit
    import zarrkit.dask

    S = sizes(spec["quick"])
    rows = []
    # one cluster, scaled from 1 worker process to 2 (a second cluster would cost its start-up)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                      dashboard_address=None, silence_logs=50) as cluster, \
            Client(cluster) as client:
        for workers in (1, 2):
            if workers > 1:
                cluster.scale(workers)
                client.wait_for_workers(workers)
            client.run(_warm_up)  # imports, not timed
            for mib in S["dist_mib"]:
                n0 = mib * MiB // (1024 * 4)
                x = (da.arange(n0, chunks=256, dtype="float32")[:, None]
                     + da.arange(1024, chunks=1024, dtype="float32")[None, :]) % 1000
                times = []
                for r in range(1 if S["runs"] == 1 else 2):
                    d = os.path.join(spec["tmp"], f"dist-{workers}-{mib}-{r}")
                    arr = zarrkit.create_array(d, shape=x.shape, chunks=(256, 1024),
                                               dtype="float32", fill_value=0, zarr_format=3)
                    t0 = time.perf_counter()
                    zarrkit.dask.store(x, arr)
                    times.append(time.perf_counter() - t0)
                    if r == 0:
                        got = zarrkit.open_array(d, mode="r")[n0 - 3:]
                        want = x[n0 - 3:].compute()
                        if not np.array_equal(got, want):
                            raise AssertionError("distributed write: wrong data")
                    shutil.rmtree(d, ignore_errors=True)
                rows.append({"workers": workers, "mib": mib, "seconds": min(times)})
                print(f"distributed {workers} workers {mib} MiB: {min(times):.2f} s",
                      file=sys.stderr, flush=True)
    return {"rows": rows}


def _warm_up() -> None:
    import zarrkit.dask  # noqa: F401


PART_FUNCS = {"hierarchy": hierarchy_part, "nchunks": nchunks_part, "cp": cp_part,
              "distributed": distributed_part}


def child(spec: dict) -> dict:
    import warnings

    warnings.filterwarnings("ignore")
    os.makedirs(spec["tmp"], exist_ok=True)
    try:
        return PART_FUNCS[spec["part"]](spec)
    except Exception as e:  # noqa: BLE001 - reported
        traceback.print_exc()
        return {"error": f"{type(e).__name__}: {e}"[:400]}
    finally:
        shutil.rmtree(spec["tmp"], ignore_errors=True)


# --------------------------------------------------------------------------------------------
# the parent


def run(args, tmp: str, log, problems: list[str], spawn, Child, take_turns,
        result_tag: str) -> list[str]:
    timeout = 900 if args.quick else 7200
    results: dict[str, dict] = {}
    with s3proxy.S3Service(0.0) as svc:
        for part in PARTS:
            t0 = time.perf_counter()
            r, err = spawn({"kind": "growth", "part": part, "quick": args.quick,
                            "tmp": os.path.join(tmp, f"growth-{part}"),
                            "endpoint": svc.endpoint}, timeout)
            if r is None or "error" in r:
                problems.append(f"growth {part}: {(r or {}).get('error') or err[-600:]}")
                r = {"rows": []}
            results[part] = r
            log(f"growth {part}: {time.perf_counter() - t0:.1f} s")
    plots = os.path.dirname(os.path.abspath(args.out)) if args.out else None
    return render(results, plots)


def render(results: dict, plots: str | None) -> list[str]:
    L = ["## Cost growth (zarrkit)", ""]
    h = results.get("hierarchy", {}).get("rows", [])
    if h:
        L += ["### Open and walk a hierarchy", "",
              "A v3 hierarchy (the root and groups of 9 arrays of metadata only), opened "
              "(`open_consolidated` or `open_group`) and walked (`members(max_depth=None)`: "
              "every node opened). Median time; requests counted by the proxy.", "",
              "| nodes | where | consolidated | time | per node | requests | per node |",
              "|---|---|---|---|---|---|---|"]
        for r in h:
            req = "" if r["requests"] is None else f"{r['requests']:,.0f}"
            per = "" if r["requests"] is None else f"{r['requests'] / r['nodes']:.2f}"
            L.append(f"| {r['nodes']:,} | {r['where']} | {'yes' if r['consolidated'] else 'no'} | "
                     f"{r['seconds']:.4f} s | {r['seconds'] / r['nodes'] * 1e6:,.0f} µs | "
                     f"{req} | {per} |")
        L.append("")
        L += hierarchy_checks(h)
    n = results.get("nchunks", {}).get("rows", [])
    if n:
        L += ["### nchunks_initialized and info", "",
              "v3 arrays of 1-byte chunks, every chunk stored, in memory and in a local "
              "directory; `info` is `str(a.info_complete())` (bytes stored and chunks "
              "initialized).", "",
              "| chunks | store | nchunks_initialized | per chunk | info | per chunk |",
              "|---|---|---|---|---|---|"]
        for r in n:
            L.append(f"| {r['chunks']:,} | {r['where']} | {r['nchunks_initialized']:.4f} s | "
                     f"{r['nchunks_initialized'] / r['chunks'] * 1e6:.2f} µs | {r['info']:.4f} s"
                     f" | {r['info'] / r['chunks'] * 1e6:.2f} µs |")
        L.append("")
    c = results.get("cp", {})
    if c.get("rows"):
        L += ["### zarrkit cp", "",
              "`zarrkit cp SRC DST` (the command, in its own process) of a float32 array with "
              "1024x1024 chunks (4 MiB), blosc lz4, local directory to local directory. Peak "
              "memory is the command process's RSS high-water mark (`wait4`); the interpreter "
              f"importing `zarrkit.cli` alone peaks at {c['import_peak_mib']:.0f} MiB and takes "
              f"{c['import_seconds']:.2f} s (**net** time leaves that out). Flat in size: the "
              "net time per GiB and the peak stay the same as the array grows.", "",
              "| size | time | net s per GiB | peak RSS | peak over the smallest copy's |",
              "|---|---|---|---|---|"]
        first = c["rows"][0]["peak_mib"]
        for r in c["rows"]:
            gib = r["mib"] / 1024
            L.append(f"| {r['mib']:,.0f} MiB | {r['seconds']:.2f} s | "
                     f"{(r['seconds'] - c['import_seconds']) / gib:.2f} | "
                     f"{r['peak_mib']:.0f} MiB | {r['peak_mib'] - first:+,.0f} MiB |")
        L.append("")
    d = results.get("distributed", {}).get("rows", [])
    if d:
        L += ["### Writing from a distributed LocalCluster", "",
              "`zarrkit.dask.store` of a float32 dask array (256x1024 blocks = chunks, computed "
              "on the workers) into a local directory, from a LocalCluster of worker processes "
              "(1 thread each); cluster start-up not timed; best of 2 (1 in quick mode).", "",
              "| size | workers | time | MiB/s |", "|---|---|---|---|"]
        for r in d:
            L.append(f"| {r['mib']} MiB | {r['workers']} | {r['seconds']:.2f} s | "
                     f"{r['mib'] / r['seconds']:,.0f} |")
        L.append("")
    # the plots are drawn from the tables just rendered: what a plot shows is what they print
    return growth_plots.add_figures(L, plots)


def hierarchy_checks(rows: list[dict]) -> list[str]:
    out = []
    for r in rows:
        if r["consolidated"] and r["requests"] is not None and r["nodes"] >= 1000:
            out.append((f"consolidated {r['nodes']:,}-node open + walk on {r['where']}: one "
                        "request", f"{r['requests']:g}", r["requests"] == 1))
    groups: dict[tuple, list] = {}
    for r in rows:
        groups.setdefault((r["where"], r["consolidated"]), []).append(r)
    for (where, cons), rs in groups.items():
        rs = sorted(rs, key=lambda r: r["nodes"])
        if len(rs) > 1:
            per = [r["seconds"] / r["nodes"] for r in rs]
            growth = per[-1] / per[0]
            out.append((f"per-node time flat, {where}, {'consolidated' if cons else 'listed'} "
                        f"({rs[0]['nodes']:,} to {rs[-1]['nodes']:,} nodes; at most 1.5x)",
                        f"{growth:.2f}x", growth <= 1.5))
    if not out:
        return []
    L = ["| check | measured | |", "|---|---|---|"]
    L += [f"| {t} | {m} | {'met' if ok else '**missed**'} |" for t, m, ok in out]
    return L + [""]
