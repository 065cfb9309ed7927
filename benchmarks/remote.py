"""Remote reads: S3 (a local moto server) behind a proxy adding 10 ms or 50 ms per request.

Part of ``benchmarks/run.py`` (``--only remote``).  Rows:

* open a consolidated hierarchy of 100 arrays (open the group, then every array);
* read a whole array of 1,000 chunks (opened before the timed run);
* read one inner chunk of a sharded array with 1,024 inner chunks per shard (ms per read);
* read a random 1% of the chunks of the 1,000-chunk array: one coordinate selection with a
  point in each of those chunks (ms per selection).

Libraries (each in its own process, the timed runs taken in turns): zarrkit over fsspec
(s3fs), zarrkit over obstore (``zarrkit.storage.ObjectStore``; n/a where that store does not
exist), zarr-python with its ``FsspecStore`` and with its ``ObjectStore``, and tensorstore's
``s3`` kvstore.  One process per library runs every row, each row's cold run alone (the proxy
counts its requests), then the timed runs in turns.  The data are written once by zarr-python.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import sys
import time
import traceback
from typing import Any

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import _benchlib as B
import s3proxy

BUCKET = "bench"
REGION = "us-east-1"
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
               "AWS_DEFAULT_REGION": REGION, "AWS_REGION": REGION}

LIBS = ["zarrkit-fsspec", "zarrkit-obstore", "zarr-fsspec", "zarr-obstore", "tensorstore"]
NAMES = {
    "zarrkit-fsspec": "zarrkit, FsspecStore (s3fs)",
    "zarrkit-obstore": "zarrkit, ObjectStore (obstore)",
    "zarr-fsspec": "zarr-python, FsspecStore (s3fs) (its default for s3://)",
    "zarr-obstore": "zarr-python, ObjectStore (obstore)",
    "tensorstore": "tensorstore, s3 kvstore",
}
OPS = ["open consolidated", "read whole array", "read 1 inner chunk", "read random 1%"]
#: round trips that must follow one another whatever the concurrency (metadata before chunks
#: is outside the timed runs, except in the open; a shard's index before its inner chunk)
DEPENDENT = {"open consolidated": 1, "read whole array": 1, "read 1 inner chunk": 2,
             "read random 1%": 1}
PER_OP = {"read 1 inner chunk": "shard_reads", "read random 1%": "random_reads"}


def sizes(quick: bool) -> dict:
    # 64x64 float32 chunks (16 KiB); the whole array has 1,000 chunks (100 in quick mode)
    rows = 4 if quick else 40
    return {
        "n_arrays": 100,
        "whole": dict(shape=(rows * 64, 25 * 64), chunks=(64, 64), dtype="float32"),
        "sharded": dict(shape=(1024, 1024), chunks=(32, 32), shards=(1024, 1024),
                        dtype="float32"),
        "shard_reads": 3 if quick else 20,
        "random_reads": 2 if quick else 10,
        "latencies": [0.01] if quick else [0.01, 0.05],
    }


# --------------------------------------------------------------------------------------------
# data (written once, by zarr-python, through the proxy at no latency)


def prepare(spec: dict) -> dict:
    """Write the data with zarr-python into a local directory, then upload it (moto takes
    several milliseconds per request, and zarr-python's writes make several per object)."""
    import warnings

    import s3fs
    import zarr

    warnings.filterwarnings("ignore")
    os.environ.update(CREDENTIALS)
    S = sizes(spec["quick"])
    local = os.path.join(spec["tmp"], "remote-data")
    t0 = time.perf_counter()
    g = zarr.open_group(os.path.join(local, "consolidated"), mode="w", zarr_format=3)
    for i in range(S["n_arrays"]):
        g.create_array(f"a{i:03d}", shape=(100,), chunks=(10,), dtype="int32", fill_value=0)
    zarr.consolidate_metadata(os.path.join(local, "consolidated"))
    for name in ("whole", "sharded"):
        d = S[name]
        a = zarr.create_array(os.path.join(local, name), shape=d["shape"], chunks=d["chunks"],
                              shards=d.get("shards"), dtype=d["dtype"], fill_value=0,
                              compressors=[zarr.codecs.BloscCodec(cname="lz4", clevel=5,
                                                                  shuffle="shuffle")],
                              overwrite=True)
        a[...] = B.make_data(d["shape"], d["dtype"])
    fs = s3fs.S3FileSystem(**s3_options(spec["endpoint"]))
    if not fs.exists(BUCKET):
        fs.mkdir(BUCKET)
    fs.put(local + "/", f"{BUCKET}/", recursive=True)
    shutil.rmtree(local, ignore_errors=True)
    return {"seconds": time.perf_counter() - t0}


def s3_options(endpoint: str) -> dict:
    return {"key": CREDENTIALS["AWS_ACCESS_KEY_ID"], "secret": CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
            "client_kwargs": {"endpoint_url": endpoint}}


def obstore_store(endpoint: str, prefix: str):
    from obstore.store import S3Store

    return S3Store(BUCKET, prefix=prefix, endpoint=endpoint, region=REGION,
                   access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
                   secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
                   client_options={"allow_http": True})


# --------------------------------------------------------------------------------------------
# adapters (child side)


class Remote:
    """One library reading from the bucket: ``store(prefix)``, ``open_hierarchy(prefix)``,
    ``open(prefix)``, ``read(handle, selection)`` and ``vindex(handle, coords)``."""

    concurrency = "?"

    def __init__(self, key: str, endpoint: str):
        self.key, self.endpoint = key, endpoint

    def available(self) -> str | None:
        try:
            __import__("obstore" if self.key.endswith("obstore") else "s3fs")
        except ImportError as e:
            return f"{e.name} is not installed (pip install -e '.[bench]')"
        return None

    def read(self, h, sel):
        return h[sel]

    def vindex(self, h, coords):
        return h.vindex[coords]


class ZarrkitRemote(Remote):
    def __init__(self, key, endpoint):
        super().__init__(key, endpoint)
        import zarrkit

        self.zk = zarrkit
        io = max(zarrkit.config.threads, zarrkit.config.io_threads)
        self.concurrency = f"{io} threads (config.io_threads)"

    def available(self):
        if self.key == "zarrkit-obstore" and not hasattr(self.zk.storage, "ObjectStore"):
            return "zarrkit.storage.ObjectStore is not in this zarrkit"
        return super().available()

    def store(self, prefix):
        if self.key == "zarrkit-fsspec":
            return self.zk.storage.FsspecStore(f"s3://{BUCKET}/{prefix}",
                                               storage_options=s3_options(self.endpoint),
                                               read_only=True)
        try:
            return self.zk.storage.ObjectStore(obstore_store(self.endpoint, prefix),
                                               read_only=True)
        except TypeError:  # a store without that keyword
            return self.zk.storage.ObjectStore(obstore_store(self.endpoint, prefix))

    def open_hierarchy(self, prefix):
        g = self.zk.open_consolidated(self.store(prefix), mode="r")
        return {name: a.shape for name, a in g.arrays()}

    def open(self, prefix):
        return self.zk.open_array(self.store(prefix), mode="r")


class ZarrRemote(Remote):
    concurrency = "10 (zarr config async.concurrency)"

    def __init__(self, key, endpoint):
        super().__init__(key, endpoint)
        import warnings

        import zarr

        warnings.filterwarnings("ignore")
        self.zarr = zarr
        self.concurrency = f"{zarr.config.get('async.concurrency')} (async.concurrency)"

    def store(self, prefix):
        zarr = self.zarr
        if self.key == "zarr-fsspec":
            return zarr.storage.FsspecStore.from_url(f"s3://{BUCKET}/{prefix}",
                                                     storage_options=s3_options(self.endpoint),
                                                     read_only=True)
        return zarr.storage.ObjectStore(obstore_store(self.endpoint, prefix), read_only=True)

    def open_hierarchy(self, prefix):
        g = self.zarr.open_group(self.store(prefix), mode="r")  # consolidated by default
        return {name: a.shape for name, a in g.arrays()}

    def open(self, prefix):
        return self.zarr.open_array(self.store(prefix), mode="r")


class TensorstoreRemote(Remote):
    def __init__(self, key, endpoint):
        super().__init__(key, endpoint)
        import tensorstore as ts

        self.ts = ts
        # its default, stated so that the floor's concurrency is certain
        self.context = ts.Context({"s3_request_concurrency": {"limit": 32}})
        self.concurrency = "32 (s3_request_concurrency)"

    def available(self):
        return None

    def kvstore(self, prefix):
        return {"driver": "s3", "bucket": BUCKET, "path": prefix.rstrip("/") + "/",
                "endpoint": self.endpoint, "aws_region": REGION}

    def open_hierarchy(self, prefix):
        # tensorstore reads neither groups nor consolidated metadata: every array is opened by
        # name, all at once
        names = [f"a{i:03d}" for i in range(100)]
        futures = [self.ts.open({"driver": "zarr3", "kvstore": self.kvstore(f"{prefix}/{n}")},
                                read=True, context=self.context) for n in names]
        return {n: tuple(f.result().shape) for n, f in zip(names, futures)}

    def open(self, prefix):
        return self.ts.open({"driver": "zarr3", "kvstore": self.kvstore(prefix)}, read=True,
                            context=self.context).result()

    def read(self, h, sel):
        return h[sel].read().result()

    def vindex(self, h, coords):
        return h.vindex[coords].read().result()


def make_remote(key: str, endpoint: str) -> Remote:
    if key.startswith("zarrkit"):
        return ZarrkitRemote(key, endpoint)
    if key.startswith("zarr"):
        return ZarrRemote(key, endpoint)
    return TensorstoreRemote(key, endpoint)


# --------------------------------------------------------------------------------------------
# the child


def child(spec: dict) -> dict:
    """Run every row of ``spec['ops']`` with one library, each when the parent says ``go``;
    one result line per row (``run.py`` prints the final one)."""
    os.environ.update(CREDENTIALS)
    turns = B.Turns(sys.stdin, sys.stdout)
    endpoint, quick = spec["endpoint"], spec["quick"]
    S = sizes(quick)
    try:
        R = make_remote(spec["lib"], endpoint)
        why = R.available()
    except Exception as e:  # noqa: BLE001 - reported in the table
        R, why = None, f"{type(e).__name__}: {e}"
    for op in spec["ops"]:
        if sys.stdin.readline().strip() != "go":
            break
        res: dict[str, Any] = {"library": NAMES[spec["lib"]], "label": op}
        if why:
            res["na"] = why
        else:
            try:
                res.update(measure(R, op, S, endpoint, turns))
                res["concurrency"] = R.concurrency
            except AssertionError as e:
                res.update(error=str(e), wrong=True)
                traceback.print_exc()
            except Exception as e:  # noqa: BLE001 - reported in the table
                res["error"] = f"{type(e).__name__}: {e}"[:400]
                traceback.print_exc()
        sys.stdout.write("\n" + spec["result_tag"] + json.dumps(res) + "\n")
        sys.stdout.flush()
    return {"done": True}


def plan(R: Remote, op: str, S: dict) -> tuple[str | None, list, Any, Any]:
    """What a row does: (the array opened before each run or None, the selections one run
    reads, ``read(handle, selection)``, the expected result of a selection)."""
    if op == "open consolidated":
        want = {f"a{i:03d}": (100,) for i in range(S["n_arrays"])}
        return None, [None], lambda h, _: R.open_hierarchy("consolidated"), lambda _: want
    d = S["sharded" if op == "read 1 inner chunk" else "whole"]
    data = B.make_data(d["shape"], d["dtype"])
    if op == "read whole array":
        return "whole", [...], R.read, lambda sel: data
    if op == "read 1 inner chunk":
        starts = B.region_starts(d["shape"], d["chunks"], S["shard_reads"], seed=3,
                                 step=d["chunks"])
        sels = [tuple(slice(s, s + c) for s, c in zip(st, d["chunks"])) for st in starts]
        return "sharded", sels, R.read, lambda sel: data[sel]
    if op == "read random 1%":
        # a point in each of 1% of the chunks, chosen at random
        grid = [s // c for s, c in zip(d["shape"], d["chunks"])]
        nchunks = math.prod(grid)
        rng = np.random.default_rng(4)
        k = max(1, nchunks // 100)
        sels = []
        for _ in range(S["random_reads"]):
            idx = np.unravel_index(rng.choice(nchunks, size=k, replace=False), grid)
            sels.append(tuple(np.asarray(i * c + rng.integers(0, c, size=k), dtype=np.int64)
                              for i, c in zip(idx, d["chunks"])))
        return "whole", sels, R.vindex, lambda sel: data[sel]
    raise KeyError(op)


def measure(R: Remote, op: str, S: dict, endpoint: str, turns) -> dict:
    """One row: the cold run's and the last timed run's requests counted by the proxy."""
    counts: dict[str, Any] = {}
    target, sels, read, expected = plan(R, op, S)

    def take(name):
        st = s3proxy.control(endpoint, "stats")
        counts[name] = st["requests"]
        counts[name + "_by_method"] = st["by_method"]

    def prepare():
        h = R.open(target) if target else None
        s3proxy.control(endpoint, "reset")
        return {"h": h, "out": []}

    def run(st):
        for sel in sels:
            st["out"].append(read(st["h"], sel))

    def verify(st):
        take("requests")
        for sel, got in zip(sels, st["out"]):
            want = expected(sel)
            if isinstance(want, dict):
                got = {k: tuple(v) for k, v in got.items()}
                if got != want:
                    raise AssertionError(f"WRONG hierarchy: {len(got)} arrays, want {len(want)}")
            else:
                B._check(np.asarray(got), want, f"{R.key} {op}")

    n = len(sels)
    r = B._measure(prepare, run, verify, turns, after=lambda st: take("requests_last_run"))
    r.update(seconds=r["seconds"] / n, times=[t / n for t in r["times"]], cold=r["cold"] / n,
             n=n, unit="ms" if n > 1 else "s")
    r["requests"] = counts["requests"] / n
    r["requests_by_method"] = counts["requests_by_method"]
    r["requests_last_run"] = counts["requests_last_run"] / n
    return r


# --------------------------------------------------------------------------------------------
# the parent


def run_rows(Child, specs: list[dict], ops: list[str], runs: int, timeout: float,
             take_turns) -> dict[str, list[tuple[dict | None, str]]]:
    """Every row with one child per library, alive for all rows: each row's cold runs one
    child after the other (``go``), then ``runs`` rounds of timed runs in turns."""
    children = [Child(spec) for spec in specs]
    out: dict[str, list] = {op: [] for op in ops}
    for op in ops:
        for c in children:
            c.result = None
            if c.failure is None:
                c.send("go")
                c.wait(timeout)  # ready, or the row's result already (n/a, failed)
        take_turns(children, runs, timeout)
        for c in children:
            if c.result is None and c.failure is None:
                c.send("stop")
            while c.result is None and c.failure is None:
                c.wait(timeout)
            out[op].append((c.result, f"{c.failure}\n{c.stderr_tail()}" if c.failure else ""))
    for c in children:
        c.send("end")
        c.close()
    return out


def run(args, tmp: str, log, problems: list[str], spawn, Child, take_turns,
        result_tag: str) -> list[str]:
    """The remote rows; returns the report's markdown lines."""
    S = sizes(args.quick)
    timeout = 600 if args.quick else 3600
    results: dict[float, dict[str, list]] = {}
    with s3proxy.S3Service(0.0) as svc:
        log(f"remote: moto at {svc.moto}, proxy at {svc.endpoint}; writing the data")
        prep, err = spawn({"kind": "remote-prep", "endpoint": svc.endpoint, "tmp": tmp,
                           "quick": args.quick}, timeout)
        if prep is None or "error" in prep:
            problems.append(f"remote: preparing the data failed: {err[-500:]}")
            return []
        log(f"remote: data written in {prep['seconds']:.1f} s")
        for lat in S["latencies"]:
            s3proxy.control(svc.endpoint, "latency", seconds=lat)
            specs = [{"kind": "remote", "lib": lib, "ops": OPS, "endpoint": svc.endpoint,
                      "quick": args.quick, "result_tag": result_tag} for lib in LIBS]
            rows = run_rows(Child, specs, OPS, args.runs, timeout, take_turns)
            results[lat] = rows
            for op, per_lib in rows.items():
                for lib, (r, err) in zip(LIBS, per_lib):
                    if r is None:
                        problems.append(f"remote {op} {lib}: child failed: {err[-600:]}")
                        per_lib[LIBS.index(lib)] = ({"library": NAMES[lib],
                                                     "error": err.strip()[:200]}, err)
                    elif "error" in r:
                        problems.append(f"remote {op} {lib}: {r['error'][:300]}")
                    r = per_lib[LIBS.index(lib)][0]
                    if "seconds" in r:
                        log(f"remote {lat * 1e3:.0f} ms {op} {lib}: {r['seconds']:.4f} s, "
                            f"{r['requests']:.1f} requests")
                    else:
                        log(f"remote {lat * 1e3:.0f} ms {op} {lib}: "
                            f"{r.get('na') or r.get('error')}")
    return render(results, S)


def concurrency_number(text: str) -> int | None:
    try:
        return int(str(text).split()[0])
    except (ValueError, IndexError):
        return None


def floor_of(op: str, e: dict, lat: float) -> float | None:
    """requests / concurrency round trips of ``lat``, and at least the row's dependent ones."""
    conc = concurrency_number(e.get("concurrency", ""))
    if not conc:
        return None
    return max(DEPENDENT[op], math.ceil(e["requests"] / conc)) * lat


def render(results: dict, S: dict) -> list[str]:
    L = ["## Remote reads: S3 (moto) behind a proxy adding latency per request", ""]
    d, sh = S["whole"], S["sharded"]
    nch = math.prod(s // c for s, c in zip(d["shape"], d["chunks"]))
    L += [
        f"A local moto S3 server behind a proxy (`benchmarks/s3proxy.py`) that delays every "
        f"request by the latency and counts it. The hierarchy: {S['n_arrays']} arrays, v3, "
        f"consolidated by zarr-python. The whole array: {d['shape'][0]}x{d['shape'][1]} "
        f"float32, 64x64 chunks ({nch} chunks, 16 KiB each), blosc lz4. The sharded array: "
        f"{sh['shape'][0]}^2 float32, one shard of {len(range(0, sh['shards'][0], 32)) ** 2} "
        f"inner 32x32 chunks (ms per read of one inner chunk, {S['shard_reads']} different "
        f"ones per run, array opened before). Random 1%: one coordinate selection with a point "
        f"in each of {max(1, nch // 100)} random chunks (ms per selection, "
        f"{S['random_reads']} per run). **requests** are the proxy's count per operation in "
        "the cold run (the last timed run's in brackets when it differs). **floor** = "
        "max(dependent round trips, ceil(requests / concurrency)) x latency, with each "
        "library's concurrency as stated (requests it keeps in flight); the dependent round "
        "trips are 1, except 2 for an inner chunk (the shard index, then the chunk). "
        "**vs zarr-python** = time(zarr-python FsspecStore) / time(library): > 1 means faster "
        "than zarr-python's default. The proxy answers a repeated GET itself (moto costs ~6 ms "
        "of CPU per request on this machine, which would hide the latency), so the time is "
        "the latency, the proxy's and the client's work.", ""]
    for lat, rows in results.items():
        for op, per_lib in rows.items():
            unit = "ms per op" if op in PER_OP else "s"
            L.append(f"### {op}, {lat * 1e3:.0f} ms per request")
            L.append("")
            L.append(f"| library | time ({unit}) | requests | concurrency | floor | time / floor "
                     "| vs zarr-python |")
            L.append("|---|---|---|---|---|---|---|")
            base = next((e for e, _ in per_lib if e and e.get("library") == NAMES["zarr-fsspec"]
                         and "seconds" in e), None)
            for e, _ in per_lib:
                if "seconds" not in e:
                    what = e.get("na") and f"n/a ({e['na']})" or f"**FAILED** {e.get('error', '?')}"
                    L.append(f"| {e['library']} | {_md(what)} | | | | | |")
                    continue
                t = e["seconds"]
                scale = 1e3 if op in PER_OP else 1
                fl = floor_of(op, e, lat)
                req = f"{e['requests']:.4g}"
                if abs(e["requests_last_run"] - e["requests"]) > 1e-9:
                    req += f" ({e['requests_last_run']:.4g})"
                vs = f"{base['seconds'] / t:.2f}x" if base else "n/a"
                L.append(f"| {e['library']} | {t * scale:.{1 if scale > 1 else 3}f} | {req} | "
                         f"{_md(e['concurrency'])} | "
                         f"{'n/a' if fl is None else f'{fl * scale:.{1 if scale > 1 else 3}f}'} | "
                         f"{'n/a' if fl is None else f'{t / fl:.2f}x'} | {vs} |")
            L.append("")
    L += targets(results)
    return L


def targets(results: dict) -> list[str]:
    rows = []
    for lat, per_op in results.items():
        for op, per_lib in per_op.items():
            byname = {e.get("library"): e for e, _ in per_lib if e and "seconds" in e}
            base = byname.get(NAMES["zarr-fsspec"])
            for key in ("zarrkit-fsspec", "zarrkit-obstore"):
                e = byname.get(NAMES[key])
                if not e:
                    continue
                fl = floor_of(op, e, lat)
                if fl:
                    r = e["seconds"] / fl
                    rows.append((f"{lat * 1e3:.0f} ms, {op}, {NAMES[key]}: within 1.2x of the "
                                 "floor", f"{r:.2f}x", r <= 1.2))
                if base and op in ("open consolidated", "read whole array"):
                    r = base["seconds"] / e["seconds"]
                    rows.append((f"{lat * 1e3:.0f} ms, {op}, {NAMES[key]}: at least 2x faster "
                                 "than zarr-python's default", f"{r:.2f}x", r >= 2))
    if not rows:
        return []
    L = ["### Remote targets", "", "| target | measured | |", "|---|---|---|"]
    L += [f"| {t} | {m} | {'met' if ok else '**missed**'} |" for t, m, ok in rows]
    L.append("")
    return L


def _md(s) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")[:200]
