"""An xarray append SIGKILLed before each change it makes: the dataset opens (``engine="zarrkit"``)
equal to the dataset before the append or after it, with or without its consolidated metadata,
and running the same append again gives exactly the dataset after it.

The writer (``_xarray_append_kill_worker.py``) appends 3 rows along ``time`` to a dataset of 5
(variables along ``time`` with partial chunks at the end, one variable without ``time``, a
coordinate, attributes); it is killed before its 1st, 2nd, ... change to the store (12 of them spread evenly, the first
and the last among them; every one with ``ZARRKIT_KILL_POINTS=all``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SRC = HERE.parent.parent / "src"
sys.path.insert(0, str(HERE))
from _kill_worker import kill_points
from _xarray_append_kill_worker import APPENDED, BEFORE, STORE, append, create, dataset

xr = pytest.importorskip("xarray")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform == "win32", reason="fork and SIGKILL"),
]


#: kill points tried per format: all of them with ZARRKIT_KILL_POINTS=all
MAX_POINTS = None if os.environ.get("ZARRKIT_KILL_POINTS") == "all" else 12


def _open(path, consolidated=None):
    with xr.open_dataset(path, engine="zarrkit", consolidated=consolidated) as ds:
        return ds.load()


def _drive(root: Path) -> list[dict]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run(
        [sys.executable, str(HERE / "_xarray_append_kill_worker.py"), json.dumps({"root": str(root), "max_points": MAX_POINTS})],
        env=env, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    runs = [json.loads(line) for line in proc.stdout.splitlines()]
    assert runs and not runs[0]["error"], runs[:1]
    return runs


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_an_append_killed_at_every_change_leaves_before_or_after_and_a_rerun_finishes(tmp_path, zarr_format):
    (tmp_path / "pristine").mkdir()
    create(tmp_path / "pristine" / STORE, zarr_format)
    before = dataset(*BEFORE)
    after = xr.concat([before, dataset(*APPENDED)], dim="time", data_vars="minimal", coords="minimal",
                      compat="override")
    xr.testing.assert_identical(_open(tmp_path / "pristine" / STORE), before)
    runs = _drive(tmp_path)
    total = runs[0]["changes"]
    assert total >= 3 and [r["kill_at"] for r in runs] == [0, *kill_points(total, MAX_POINTS)]
    xr.testing.assert_identical(_open(runs[0]["path"]), after)
    failures = []
    for run in runs[1:]:
        where = f"killed before change {run['kill_at']} of {total}"
        if not run["killed"] or run["error"]:
            failures.append(f"{where}: not killed ({run})")
            continue
        path = run["path"]
        for consolidated in (None, False):
            try:
                seen = _open(path, consolidated)
            except Exception as exc:  # noqa: BLE001 - reported below
                failures.append(f"{where}: does not open (consolidated={consolidated}): {exc!r}")
                continue
            if not (seen.identical(before) or seen.identical(after)):
                failures.append(f"{where}: neither before nor after (consolidated={consolidated}):\n{seen}")
        try:
            append(Path(path))
            for consolidated in (None, False):
                rerun = _open(path, consolidated)
                if not rerun.identical(after):
                    failures.append(f"{where}: the rerun gives another dataset (consolidated={consolidated}):"
                                    f"\n{rerun}")
        except Exception as exc:  # noqa: BLE001 - reported below
            failures.append(f"{where}: the rerun fails: {exc!r}")
        shutil.rmtree(Path(path).parent)
    assert not failures, "\n".join(failures)
