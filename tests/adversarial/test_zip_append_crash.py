"""Changes to an existing zip file (``ZipStore(path, mode='a')``), SIGKILLed at every write.

Scenarios (``_zip_kill_worker.py``): a new array and a rewritten attribute document; a shrink
that deletes chunks and a group deleted; two commits (``flush``, then ``close``); ``zarrkit
convert data.zip --to 3``, then ``--to 2``.  The writer is killed before each change it makes under the folder
-- the new archive created, the old members copied into it, each member's header and data,
each entry of the central directory, its mode set, its rename over the zip file -- and after
each kill:

* the zip file holds what it held before the step in flight, bit for bit, or what it holds
  after it, complete (keys and values), and every array in it reads;
* the new archive a killed writer leaves beside it (``.data.zip.zarrkit-append-*``) is not the
  zip file, and the next writer removes it;
* running the steps again from there ends with exactly the keys and values of an
  uninterrupted run.

A zip file written with mode ``'w'`` and killed before ``close`` is refused with a
``StoreError`` naming it: ``tests/robustness/test_crash_stores.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
SRC = HERE.parent.parent / "src"
sys.path.insert(0, str(HERE))
from _zip_kill_worker import SCENARIOS, ZIP_NAME, build, run_steps

import zarrkit
from zarrkit.storage import ZipStore

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not sys.platform.startswith("linux") or sys.version_info < (3, 12),
                       reason="fork, SIGKILL, /proc and sys.monitoring"),
    pytest.mark.filterwarnings("ignore:ZipStore .* is written again:UserWarning"),
]

ORPHAN = "." + ZIP_NAME + ".zarrkit-append-"


def contents(path: Path) -> dict[str, bytes]:
    with ZipStore(path, mode="r") as store:
        return {k: store[k] for k in sorted(store)}


def arrays(path: Path) -> dict[str, np.ndarray]:
    """Every array of the hierarchy, read whole (what a reader of the zip file gets)."""
    with ZipStore(path, mode="r") as store:
        root = zarrkit.open_group(store, mode="r")
        return {name: node[...] for name, node in sorted(root.members(max_depth=None))
                if isinstance(node, zarrkit.Array)}


def orphans(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(ORPHAN))


def drive(name: str, root: Path) -> list[dict]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
               PYTHONWARNINGS="ignore")
    proc = subprocess.run(
        [sys.executable, str(HERE / "_zip_kill_worker.py"),
         json.dumps({"scenario": name, "root": str(root)})],
        env=env, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    runs = [json.loads(line) for line in proc.stdout.splitlines()]
    assert runs and not runs[0]["error"], runs[:1]
    return runs


def _same(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    return a.keys() == b.keys() and all(
        a[k].dtype == b[k].dtype and np.array_equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_killed_at_every_write_keeps_the_old_zip_or_the_new(name, tmp_path):
    pristine = tmp_path / "pristine"
    build(pristine)
    old_bytes = (pristine / ZIP_NAME).read_bytes()
    # the states the steps pass through, on an uninterrupted copy
    ref = tmp_path / "reference"
    shutil.copytree(pristine, ref)
    states, views = [contents(ref / ZIP_NAME)], [arrays(ref / ZIP_NAME)]
    for i in range(len(SCENARIOS[name])):
        run_steps(name, ref / ZIP_NAME, i, i + 1)
        states.append(contents(ref / ZIP_NAME))
        views.append(arrays(ref / ZIP_NAME))
    assert all(states[i] != states[i + 1] for i in range(len(states) - 1))

    runs = drive(name, tmp_path)
    total = runs[0]["changes"]
    assert contents(Path(runs[0]["path"]) / ZIP_NAME) == states[-1]
    labels = runs[0]["labels"]

    outcomes = {"old": 0, "new": 0}
    per_step = [0] * len(SCENARIOS[name])
    failures: list[str] = []
    for run in runs[1:]:
        folder, acks = Path(run["path"]), run["acks"]
        path = folder / ZIP_NAME
        where = f"killed before change {run['kill_at']} of {total} ({run['label']})"
        if not run["killed"] or run["error"]:
            failures.append(f"{where}: the writer was not killed: {run}")
            continue
        per_step[acks] += 1
        try:
            got = contents(path)
        except zarrkit.errors.StoreError as exc:
            failures.append(f"{where}: the zip file cannot be read: {exc}"[:300])
            continue
        if got == states[acks]:
            state = acks
            outcomes["old"] += 1
            if acks == 0 and path.read_bytes() != old_bytes:
                failures.append(f"{where}: the zip file holds its keys, but not bit for bit")
        elif got == states[acks + 1]:
            state = acks + 1
            outcomes["new"] += 1
        else:
            failures.append(f"{where}: the zip file holds neither the state before the step in "
                            f"flight nor after it: {sorted(set(got) ^ set(states[acks]))[:6]}")
            continue
        if not _same(arrays(path), views[state]):
            failures.append(f"{where}: the arrays read differently from state {state}")
        left = orphans(folder)
        if left:
            # not a zip file to anyone who opens the folder's zip file, and removed by the
            # next writer
            with ZipStore(path, mode="r") as store:
                assert sorted(store) == sorted(got)
            assert orphans(folder) == left  # a reader removes nothing
            ZipStore(path, mode="a").close()
            if orphans(folder):
                failures.append(f"{where}: the next writer left {orphans(folder)}")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            run_steps(name, path, state)
        if contents(path) != states[-1]:
            failures.append(f"{where}: re-run from step {state}, the zip file differs from an "
                            "uninterrupted run")
        shutil.rmtree(folder)
    print(f"{name}: {total} kill points, {len(runs) - 1} checked, per step {per_step}, {outcomes}")
    assert not failures, "\n".join(failures[:8])
    assert outcomes["old"] and outcomes["new"] and all(per_step)
    # every member and central directory entry is written by calls of its own, and each step
    # becomes visible with one rename
    assert sum("_write_end_record" in label for label in labels) >= len(states[-1])
    assert sum(label.startswith("os.rename") for label in labels) == len(SCENARIOS[name])


def test_a_killed_append_of_a_new_file_leaves_no_zip_file(tmp_path):
    """Mode 'a' on a path with no file yet: killed before close, there is still none (a zip
    file appears whole, at close)."""
    path = tmp_path / "new.zip"
    code = (
        "import os, signal, zarrkit\n"
        f"s = zarrkit.ZipStore({str(path)!r}, mode='a')\n"
        "zarrkit.array(list(range(10)), chunks=3, store=s)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, timeout=120, check=False)
    assert proc.returncode == -9, proc.stderr
    assert not path.exists()
    assert len(orphans_of(tmp_path, "new.zip")) == 1
    with ZipStore(path, mode="a") as store:  # the next writer starts afresh, and cleans up
        store["k"] = b"v"
    assert orphans_of(tmp_path, "new.zip") == []
    assert contents(path) == {"k": b"v"}


def orphans_of(folder: Path, name: str) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(f".{name}.zarrkit-append-"))
