"""An xarray append (``zarrkit.xarray.to_zarr(..., mode="a", append_dim="time")``) SIGKILLed
before each change it makes to a directory store.

``python _xarray_append_kill_worker.py JSON`` is the driver: for ``kill_at`` = 0, 1, 2, ... (or
``max_points`` of them spread evenly) it copies the pristine store (``root/pristine``), forks a writer that appends
:func:`appended` and SIGKILLs itself before its ``kill_at``-th change (0: never; it reports how
many changes the append makes), and prints one JSON line per run, ``{"kill_at", "path",
"killed", "changes", "error"}``.  Changes are counted as ``_kill_worker.Trigger`` counts them
(audited file-system events under the store's folder).  The driver never starts a thread.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _kill_worker import Trigger, kill_points

STORE = "data.zarr"


def dataset(start: int, n: int) -> Any:
    """Rows ``start .. start + n`` of the dataset: variables along ``time`` (one sharded in
    v3), one without it, a coordinate and attributes."""
    import xarray as xr

    t = np.arange(start, start + n)
    return xr.Dataset(
        {
            "temp": (("time", "x"), (t[:, None] * 10 + np.arange(4)).astype("f8")),
            "count": ("time", (t * 3).astype("i4")),
            "elev": ("x", np.arange(4, dtype="f4")),
        },
        coords={"time": t.astype("i8"), "x": np.arange(4)},
        attrs={"title": "kill points"},
    )


BEFORE = (0, 5)
APPENDED = (5, 3)


def create(path: Path, zarr_format: int) -> None:
    import zarrkit.xarray

    ds = dataset(*BEFORE)
    encoding = {"temp": {"chunks": (2, 4)}, "count": {"chunks": (2,)}, "time": {"chunks": (2,)}}
    zarrkit.xarray.to_zarr(ds, str(path), mode="w", encoding=encoding, zarr_format=zarr_format)


def append(path: Path) -> None:
    import zarrkit.xarray

    zarrkit.xarray.to_zarr(dataset(*APPENDED), str(path), mode="a", append_dim="time")


def run_writer(folder: Path, kill_at: int, acks: int) -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    trigger = Trigger("dir", folder, kill_at)
    try:
        import xarray  # noqa: F401 (imported before counting starts)

        trigger.armed = True
        append(folder / STORE)
        trigger.armed = False
        os.write(acks, f"done {trigger.changes}\n".encode())
    except BaseException as exc:  # noqa: BLE001 - reported to the driver
        os.write(acks, f"error {type(exc).__name__}: {exc}\n".encode()[:2000])
        os._exit(1)
    os._exit(0)


def drive(args: dict[str, Any]) -> None:
    root = Path(args["root"])
    pristine = root / "pristine"
    todo, total = [0], None
    while todo:
        kill_at = todo.pop(0)
        folder = root / f"k{kill_at}"
        if folder.exists():
            shutil.rmtree(folder)
        shutil.copytree(pristine, folder, symlinks=True)
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_end)
            run_writer(folder, kill_at, write_end)
        os.close(write_end)
        with os.fdopen(read_end, "rb") as f:
            lines = f.read().decode(errors="replace").splitlines()
        _, status = os.waitpid(pid, 0)
        killed = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
        errors = [ln for ln in lines if ln.startswith("error")]
        done = [int(ln.split()[1]) for ln in lines if ln.startswith("done")]
        if kill_at == 0:
            if errors or not done:
                print(json.dumps({"kill_at": 0, "error": errors or lines}), flush=True)
                return
            total = done[0]
            todo = kill_points(total, args.get("max_points"))
        print(json.dumps({"kill_at": kill_at, "path": str(folder / STORE), "killed": killed,
                          "changes": done[0] if done else None, "error": errors}), flush=True)


if __name__ == "__main__":
    drive(json.loads(sys.argv[1]))
