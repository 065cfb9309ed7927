"""Worker processes for the robustness tests (run as ``python _robustness_worker.py MODE JSON``).

Kept in its own small script so the tests start workers with ``subprocess`` (a fresh interpreter,
no inherited threads or locks, nothing pickled) and can SIGKILL them at any moment.

Modes
-----
stripes   write interleaved, non-chunk-aligned column stripes under a ProcessSynchronizer
aligned   write whole chunks (no synchronizer)
append    append tagged rows under a ProcessSynchronizer
attrs     set (and delete) this worker's own attribute keys under a ProcessSynchronizer
crash     rewrite a whole array with A / B contents and its attributes forever (gets killed)
"""

from __future__ import annotations

import json
import os
import sys
import time

import numpy as np

import zarrkit


def wait_for_go(args: dict) -> None:
    """Announce readiness, then wait for the parent's go file so all workers start together."""
    sync_dir = args["sync_dir"]
    open(os.path.join(sync_dir, f"ready-{args['worker']}"), "w").close()
    go = os.path.join(sync_dir, "go")
    deadline = time.monotonic() + 60
    while not os.path.exists(go):
        if time.monotonic() > deadline:
            raise SystemExit("no go signal")
        time.sleep(0.002)


def stripe_columns(worker: int, n_workers: int, ncols: int, width: int) -> list[int]:
    return [c for c in range(ncols) if (c // width) % n_workers == worker]


def run_stripes(args: dict) -> None:
    sync = zarrkit.ProcessSynchronizer(args["lock_dir"])
    z = zarrkit.open_array(args["path"], mode="r+", synchronizer=sync)
    p, n = args["worker"], args["n_workers"]
    cols = stripe_columns(p, n, z.shape[1], args["width"])
    runs = []  # contiguous column runs of this worker
    for c in cols:
        if runs and runs[-1][1] == c:
            runs[-1][1] = c + 1
        else:
            runs.append([c, c + 1])
    wait_for_go(args)
    for r in range(args["rounds"]):
        rows = slice(2 * r, 2 * r + 2)
        value = p * 100 + r + 1
        if r % 2 == 0:
            z.set_orthogonal_selection((rows, np.array(cols)), value)
        else:
            for c0, c1 in runs:
                z[rows, c0:c1] = value


def run_aligned(args: dict) -> None:
    z = zarrkit.open_array(args["path"], mode="r+")  # no synchronizer
    p, n = args["worker"], args["n_workers"]
    cy, cx = z.chunks
    gy, gx = z.cdata_shape
    mine = [(i, j) for i in range(gy) for j in range(gx) if (i * gx + j) % n == p]
    wait_for_go(args)
    for r in range(args["rounds"]):
        value = 1000 * p + r + 1
        for i, j in mine:
            if r % 2 == 0:
                z.blocks[i, j] = value
            else:
                z[i * cy:(i + 1) * cy, j * cx:(j + 1) * cx] = value


def run_append(args: dict) -> None:
    sync = zarrkit.ProcessSynchronizer(args["lock_dir"])
    z = zarrkit.open_array(args["path"], mode="r+", synchronizer=sync)
    p = args["worker"]
    wait_for_go(args)
    for k in range(args["appends"]):
        rows = np.array([[p, k, j, 1000 * p + 10 * k + j] for j in range(args["rows"])], dtype="i4")
        z.append(rows)


def run_attrs(args: dict) -> None:
    sync = zarrkit.ProcessSynchronizer(args["lock_dir"])
    node = zarrkit.open(args["path"], mode="r+", synchronizer=sync)
    p = args["worker"]
    wait_for_go(args)
    for j in range(args["keys"]):
        node.attrs[f"w{p}_{j}"] = [p, j]
    for j in range(0, args["keys"], 2):
        del node.attrs[f"w{p}_{j}"]


def crash_contents(shape: list[int], which: str) -> np.ndarray:
    a = np.arange(int(np.prod(shape)), dtype="<f8").reshape(shape)
    return a if which == "A" else -a - 0.5


def run_crash(args: dict) -> None:
    z = zarrkit.open_array(args["path"], mode="r+")
    contents = {w: crash_contents(list(z.shape), w) for w in "AB"}
    print("ready", flush=True)
    r = 0
    while True:
        which = "AB"[r % 2]
        z[...] = contents[which]
        z.attrs.put({"round": r, "which": which, "pad": "x" * (r % 97)})
        r += 1


MODES = {
    "stripes": run_stripes,
    "aligned": run_aligned,
    "append": run_append,
    "attrs": run_attrs,
    "crash": run_crash,
}

if __name__ == "__main__":
    MODES[sys.argv[1]](json.loads(sys.argv[2]))
