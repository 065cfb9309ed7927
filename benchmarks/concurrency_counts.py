"""Lost updates of writers without locks, zarrkit beside zarr-python 3.

Runs three workloads of the concurrency suite (tests/adversarial/concurrency) with 4
processes x 2 threads and no synchronizer, each process opening the store itself, on a
directory and on S3 (a moto server started here, reached through s3fs by both libraries):

* unaligned pieces straddling chunks (v3): cells lost;
* appends of tagged runs of rows, an attribute after each: rows lost or duplicated,
  attributes lost;
* same-name creations with ``overwrite=False``: names reported created by two writers.

and prints one table.  Not a test (zarr-python makes no promise here): ``python
benchmarks/concurrency_counts.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PROCESSES, THREADS = 4, 2
WRITERS = PROCESSES * THREADS
SHAPE, BLOCK, CHUNKS = (24, 40), (3, 5), (7, 8)
ROUNDS, NAMES = 4, 10
BUCKET = "zarrkit-test"


def _lib(name: str):
    if name == "zarrkit":
        import zarrkit

        return zarrkit
    import zarr

    return zarr


def _store(lib: str, where: dict):
    if where["kind"] == "directory":
        return where["path"]
    options = {"key": "testing", "secret": "testing", "client_kwargs": {"endpoint_url": where["endpoint"]},
               "skip_instance_cache": True}
    url = f"s3://{BUCKET}/{where['prefix']}"
    if lib == "zarrkit":
        from zarrkit.storage import FsspecStore

        return FsspecStore(url, storage_options=options)
    import zarr

    return zarr.storage.FsspecStore.from_url(url, storage_options={**options, "asynchronous": True})


def _thread(lib: str, store, op: str, g: int) -> dict:
    z_ = _lib(lib)
    if op == "pieces":
        z = z_.open_array(store, path="a", mode="r+")
        want = np.arange(1, SHAPE[0] * SHAPE[1] + 1, dtype="i4").reshape(SHAPE)
        nr, nc = SHAPE[0] // BLOCK[0], SHAPE[1] // BLOCK[1]
        for i in range(nr * nc):
            if i % WRITERS == g:
                r, c = divmod(i, nc)
                region = (slice(r * BLOCK[0], (r + 1) * BLOCK[0]), slice(c * BLOCK[1], (c + 1) * BLOCK[1]))
                z[region] = want[region]
        return {}
    if op == "appends":
        z = z_.open_array(store, path="a", mode="r+")
        for k in range(ROUNDS):
            tag = g * 1000 + k
            z.append(np.arange(tag * 4, tag * 4 + 1 + tag % 3, dtype="i4"))
            z.attrs[f"a{tag}"] = k
        return {}
    root = z_.open_group(store, mode="r+")
    made = []
    for k in range(NAMES):
        try:
            root.create_array(f"n{k}", shape=(6,), chunks=(4,), dtype="i4", fill_value=g, overwrite=False)
        except Exception as exc:  # noqa: BLE001 - ContainsArrayError of either library
            if "Contains" not in type(exc).__name__:
                raise
            continue
        made.append(k)
    return {"made": made}


def worker(args: dict) -> None:
    store = _store(args["lib"], args["where"])
    flags = Path(args["flags"])
    results: list = [None] * THREADS
    barrier = threading.Barrier(THREADS + 1)

    def one(t: int) -> None:
        g = args["wid"] * THREADS + t
        barrier.wait()
        try:
            results[t] = {"g": g, **_thread(args["lib"], store, args["op"], g)}
        except Exception as exc:  # noqa: BLE001
            results[t] = {"g": g, "error": f"{type(exc).__name__}: {exc}"[:300]}

    threads = [threading.Thread(target=one, args=(t,)) for t in range(THREADS)]
    for t in threads:
        t.start()
    (flags / f"ready-{args['wid']}").touch()
    while not (flags / "go").exists():
        time.sleep(0.002)
    barrier.wait()
    for t in threads:
        t.join()
    print(json.dumps(results), flush=True)
    os._exit(0)


def _run(lib: str, where: dict, op: str, tmp: Path) -> list:
    flags = tmp / uuid.uuid4().hex[:8]
    flags.mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    procs = [subprocess.Popen([sys.executable, __file__, "--worker", json.dumps(
        {"lib": lib, "where": where, "op": op, "wid": w, "flags": str(flags)})],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) for w in range(PROCESSES)]
    while len(list(flags.glob("ready-*"))) < PROCESSES and all(p.poll() is None for p in procs):
        time.sleep(0.005)
    (flags / "go").touch()
    out = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=600)
        if p.returncode != 0:
            raise RuntimeError(stderr[-2000:])
        out += json.loads(stdout.strip().splitlines()[-1])
    return out


def _count(lib: str, where: dict, op: str, tmp: Path) -> str:
    z_ = _lib(lib)
    store = _store(lib, where)
    if op == "creations":
        z_.open_group(store, mode="w", zarr_format=3)
    else:
        shape, chunks = (SHAPE, CHUNKS) if op == "pieces" else ((0,), (5,))
        z_.create_array(store, name="a", shape=shape, chunks=chunks, dtype="i4",
                        fill_value=0 if op == "pieces" else -1, zarr_format=3)
    results = _run(lib, where, op, tmp)
    errors = sum("error" in r for r in results)
    store = _store(lib, where)
    if op == "pieces":
        got = z_.open_array(store, path="a", mode="r")[...]
        want = np.arange(1, SHAPE[0] * SHAPE[1] + 1, dtype="i4").reshape(SHAPE)
        return f"{int((got != want).sum())}/{got.size} cells lost" + (f", {errors} errors" if errors else "")
    if op == "appends":
        z = z_.open_array(store, path="a", mode="r")
        got = z[...]
        tags = [g * 1000 + k for g in range(WRITERS) for k in range(ROUNDS)]
        expected = {t * 4 + j for t in tags for j in range(1 + t % 3)}
        seen = Counter(int(v) for v in got if v >= 0)
        attrs = dict(z.attrs)
        lost_attrs = sum(attrs.get(f"a{t}") != t % 1000 for t in tags)
        return (f"{len(expected - set(seen))}/{len(expected)} rows lost, "
                f"{sum(c - 1 for c in seen.values() if c > 1)} duplicated, "
                f"{lost_attrs}/{len(tags)} attrs lost" + (f", {errors} errors" if errors else ""))
    owners = Counter(k for r in results for k in r.get("made", []))
    return (f"{sum(1 for c in owners.values() if c > 1)}/{NAMES} names created twice"
            + (f", {errors} errors" if errors else ""))


def main() -> None:
    sys.path.insert(0, str(ROOT / "tests" / "stores"))
    from moto_s3 import start_server

    import fsspec

    server, endpoint = start_server()
    fsspec.filesystem("s3", key="testing", secret="testing",
                      client_kwargs={"endpoint_url": endpoint}).mkdir(BUCKET)
    rows = []
    with tempfile.TemporaryDirectory() as tmp_:
        tmp = Path(tmp_)
        for store_name in ("directory", "S3 (moto, s3fs)"):
            for op in ("pieces", "appends", "creations"):
                line = [store_name, op]
                for lib in ("zarrkit", "zarr-python"):
                    if store_name == "directory":
                        where = {"kind": "directory", "path": str(tmp / f"{lib}-{op}.zarr")}
                    else:
                        where = {"kind": "s3", "endpoint": endpoint, "prefix": f"{lib}-{op}-{uuid.uuid4().hex[:6]}"}
                    try:
                        line.append(_count(lib, where, op, tmp))
                    except Exception as exc:  # noqa: BLE001
                        line.append(f"failed: {type(exc).__name__}: {exc}"[:80])
                rows.append(line)
                print(" | ".join(line), file=sys.stderr, flush=True)
    server.stop()
    import zarr

    import zarrkit

    print(f"\n4 processes x 2 threads, no synchronizer; zarrkit {zarrkit.__version__}, zarr-python {zarr.__version__}\n")
    print("| store | workload | zarrkit | zarr-python |\n|---|---|---|---|")
    for line in rows:
        print("| " + " | ".join(line) + " |")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--worker":
        worker(json.loads(sys.argv[2]))
    else:
        main()
