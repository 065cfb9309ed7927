"""The writers of the concurrency suite.

``python _workers.py JSON`` is one process: it opens the store of ``spec`` itself (as another
machine would), opens no synchronizer, starts ``threads`` threads of the workload ``op``,
waits at a start line shared with the other processes (``flags``: a file ``ready-<wid>`` from
each, then ``go``), and prints one JSON line: what its threads did (names created, reads
seen torn, the errors they met).  The memory stores run the same functions in threads of
the test process (:func:`run_threads`).

Writer ``g`` (``wid * threads + t``, of ``writers`` in all) of each workload:

* ``pieces``: writes the disjoint blocks ``i`` with ``i % writers == g`` of a grid of blocks
  that do not align with the chunks (or shards), each with values of its own;
* ``appends``: appends ``rounds`` runs of 1-3 rows tagged ``tag * 4 + j`` and sets the
  attribute ``a<tag>`` after each;
* ``creations``: creates every name ``n<k>`` with ``overwrite=False`` -- arrays filled with
  ``g``, groups with the attribute ``by = g`` -- and reports the ones it was told it created;
* ``torn``: writer 0 rewrites the whole (sharded) array with all 1 and all 2 in turn, the
  others read it whole and count reads where a shard mixes values;
* ``resizes``: writer 0 grows the array by ``resize`` (64 rows past the shape it reads), the
  others append tagged rows as in ``appends``.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _stores import close_store, open_store

import zarrkit
from zarrkit.errors import ContainsArrayError, ContainsGroupError

TORN_SECONDS = 2.5


def _block_grid(shape: list[int], block: list[int]) -> list[tuple[slice, ...]]:
    nr, nc = shape[0] // block[0], shape[1] // block[1]
    return [(slice(r * block[0], (r + 1) * block[0]), slice(c * block[1], (c + 1) * block[1]))
            for r in range(nr) for c in range(nc)]


def expected_pieces(shape: list[int]) -> np.ndarray:
    return np.arange(1, shape[0] * shape[1] + 1, dtype="i4").reshape(shape)


def run_lengths(tag: int) -> int:
    return 1 + tag % 3


def _pieces(store: Any, g: int, writers: int, p: dict) -> dict:
    z = zarrkit.open_array(store, path=p["path"], mode="r+")
    want = expected_pieces(p["shape"])
    for i, region in enumerate(_block_grid(p["shape"], p["block"])):
        if i % writers == g:
            z[region] = want[region]
    return {}


def append_tag(g: int, k: int) -> int:
    return g * 1000 + k


def _append_runs(z: Any, g: int, rounds: int, attrs: bool) -> dict:
    for k in range(rounds):
        tag = append_tag(g, k)
        z.append(np.arange(tag * 4, tag * 4 + run_lengths(tag), dtype="i4"))
        if attrs:
            z.attrs[f"a{tag}"] = k
    return {}


def _appends(store: Any, g: int, writers: int, p: dict) -> dict:
    z = zarrkit.open_array(store, path=p["path"], mode="r+")
    return _append_runs(z, g, p["rounds"], True)


def _creations(store: Any, g: int, writers: int, p: dict) -> dict:
    root = zarrkit.open_group(store, mode="r+")
    made = []
    for k in range(p["names"]):
        try:
            if k % 2 == 0:
                root.create_array(f"n{k}", data=np.full(6, g, "i4"), chunks=(4,), overwrite=False)
            else:
                root.create_group(f"n{k}", attributes={"by": g}, overwrite=False)
        except (ContainsArrayError, ContainsGroupError):
            continue
        made.append(k)
    return {"made": made}


def _torn(store: Any, g: int, writers: int, p: dict) -> dict:
    z = zarrkit.open_array(store, path=p["path"], mode="r+" if g == 0 else "r")
    shard = p["shard"]
    end = time.monotonic() + TORN_SECONDS
    if g == 0:
        rewrites = 0
        while time.monotonic() < end:
            z[:] = np.full(z.shape, 1 + rewrites % 2, dtype="i4")
            rewrites += 1
        return {"rewrites": rewrites}
    reads = torn = busy = 0
    examples: list = []
    while time.monotonic() < end:
        try:
            got = z[:]
        except zarrkit.errors.ConcurrentModificationError:
            busy += 1  # retryable: the shard was busy, nothing was read torn
            continue
        reads += 1
        for s in range(0, got.shape[0], shard):
            part = got[s : s + shard]
            if not (part == part[0]).all() or part[0] not in (1, 2):
                torn += 1
                if len(examples) < 3:
                    examples.append(np.unique(part).tolist())
    return {"reads": reads, "torn": torn, "busy": busy, "examples": examples}


def _resizes(store: Any, g: int, writers: int, p: dict) -> dict:
    if g != 0:
        z = zarrkit.open_array(store, path=p["path"], mode="r+")
        return _append_runs(z, g, p["rounds"], False)
    grown = 0
    for _ in range(p["resizes"]):
        z = zarrkit.open_array(store, path=p["path"], mode="r+")  # the shape as stored now
        z.resize(z.shape[0] + p["grow"])
        grown += 1
        time.sleep(0.01)
    return {"resizes": grown}


OPS = {"pieces": _pieces, "appends": _appends, "creations": _creations, "torn": _torn,
       "resizes": _resizes}


COUNTS = ("reads", "torn", "busy", "rewrites", "resizes")


def merge(results: list[dict]) -> dict:
    out: dict[str, Any] = {"errors": [], "made": {}}
    for r in results:
        out["errors"] += r.get("errors", [])
        if "made" in r:
            out["made"][str(r["g"])] = r["made"]
        for k in COUNTS:
            out[k] = out.get(k, 0) + r.get(k, 0)
        out.setdefault("examples", []).extend(r.get("examples", []))
    return out


def merge_outputs(outputs: list[dict]) -> dict:
    """What several processes' :func:`run_threads` returned, together."""
    out: dict[str, Any] = {"errors": [], "made": {}, "examples": []}
    for r in outputs:
        out["errors"] += r["errors"]
        out["made"].update(r["made"])
        out["examples"] += r["examples"]
        for k in COUNTS:
            out[k] = out.get(k, 0) + r.get(k, 0)
    return out


def run_threads(store: Any, op: str, wid: int, threads: int, writers: int, params: dict,
                start: Any = None) -> dict:
    """Run ``threads`` writers ``wid * threads + t`` of ``op`` on ``store``; merged results."""
    results: list[dict] = [{} for _ in range(threads)]
    barrier = threading.Barrier(threads + 1)

    def one(t: int) -> None:
        g = wid * threads + t
        barrier.wait()
        try:
            results[t] = OPS[op](store, g, writers, params) | {"g": g}
        except BaseException as exc:  # noqa: BLE001 - reported to the test
            results[t] = {"g": g, "errors": [f"{type(exc).__name__}: {exc}",
                                             traceback.format_exc()[-1500:]]}

    workers = [threading.Thread(target=one, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    if start is not None:
        start()
    barrier.wait()
    for w in workers:
        w.join()
    return merge(results)


def main(args: dict) -> None:
    store = open_store(args["spec"])
    flags = Path(args["flags"])

    def start() -> None:  # the start line shared by every process
        (flags / f"ready-{args['wid']}").touch()
        deadline = time.monotonic() + 120
        while not (flags / "go").exists():
            if time.monotonic() > deadline:
                sys.exit("no start signal")
            time.sleep(0.002)

    try:
        out = run_threads(store, args["op"], args["wid"], args["threads"], args["writers"],
                          args["params"], start)
    finally:
        close_store(store)
    print(json.dumps(out), flush=True)
    os._exit(0)  # no interpreter teardown racing the stores' background threads


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
