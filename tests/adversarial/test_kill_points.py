"""Every mutating operation, SIGKILLed before each change it makes to the store, on every store.

Operations: ``resize`` and ``append`` (v2, v3, v3 sharded), attribute updates (v2, v3),
``consolidate_metadata`` (v2, v3), writes touching part of several shards, and ``zarrkit cp``.
Stores: DirectoryStore (atomic, and ``atomic=False``), SQLiteStore and LMDBStore.  The writer
(``_kill_worker.py``) is killed before its first, second, ... change -- each file-system event or database call that may write -- so every prefix of its
writes is left on disk once.  After each kill:

* the store opens and everything in it reads;
* what a reader sees is the state after the acknowledged operations or after the one in
  flight too -- never a mix, except value by value for an operation that writes several
  values (a write across shards: each shard old or new); ``zarrkit cp`` leaves its
  destination marked unfinished until it is complete;
* running the operations again from there (the one in flight included) gives exactly the
  keys and bytes of an uninterrupted run.

``DirectoryStore(atomic=False)`` documents torn values for a writer killed mid-write: there
only the acknowledged operations are checked (the values the one in flight touches may be
torn).  Set ``ZARRKIT_KILL_POINTS=all`` to kill at every point of every pair (the default
samples at most 16 points of a pair, spread evenly, the first and the last among them).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
SRC = HERE.parent.parent / "src"
sys.path.insert(0, str(HERE))
from _kill_worker import (
    SCENARIOS,
    TORN_VALUES,
    Scenario,
    close_store,
    contents,
    copy_source,
    kill_points,
    open_store,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform == "win32" or sys.version_info < (3, 12),
                       reason="fork, SIGKILL and sys.monitoring"),
]

MAX_POINTS = None if os.environ.get("ZARRKIT_KILL_POINTS") == "all" else 16

# DBMStore is not here: over dbm.dumb (the only backend of some Python builds) a killed writer
# can tear values or lose the index, as the threat model page and DBMStore's docstring say
PAIRS = [(kind, name) for name in SCENARIOS if name != "cp"
         for kind in ("dir", "dir-nonatomic", "sqlite", "lmdb")] + [("dir", "cp")]


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape
                and a.dtype == b.dtype and np.array_equal(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    return a == b


def _view(kind: str, folder: Path, scenario: Scenario) -> dict[str, Any]:
    store = open_store(kind, folder, read_only=kind != "dbm")
    try:
        return scenario.view(store)
    finally:
        close_store(store)


def _run_ops(kind: str, folder: Path, scenario: Scenario, start: int, stop: int | None = None) -> None:
    for _label, op in scenario.ops[start:stop]:
        store = open_store(kind, folder)
        try:
            op(store)
        finally:
            close_store(store)


def _raw(kind: str, folder: Path) -> dict[str, bytes]:
    store = open_store(kind, folder, read_only=kind != "dbm")
    try:
        return contents(store)
    finally:
        close_store(store)


def _mixed_ok(view: dict, before: dict, after: dict, regions: dict) -> bool:
    """Every written region of every array equals the state before or after (value by value)."""
    if view.keys() != before.keys():
        return False
    for key, value in view.items():
        suffix = key[key.index(":"):] if ":" in key else key
        if suffix in regions and isinstance(value, np.ndarray):
            if value.shape != before[key].shape:
                return False
            for region in regions[suffix]:
                if not (np.array_equal(value[region], before[key][region])
                        or np.array_equal(value[region], after[key][region])):
                    return False
        elif not (_equal(value, before[key]) or _equal(value, after[key])):
            return False
    return True


def _drive(kind: str, scenario: Scenario, root: Path) -> list[dict]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run(
        [sys.executable, str(HERE / "_kill_worker.py"),
         json.dumps({"kind": kind, "scenario": scenario.name, "root": str(root), "max_points": MAX_POINTS})],
        env=env, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    runs = [json.loads(line) for line in proc.stdout.splitlines()]
    assert runs and not runs[0]["error"], runs[:1]
    return runs


@pytest.mark.parametrize("kind,name", PAIRS, ids=[f"{k}-{n}" for k, n in PAIRS])
def test_killed_before_every_change(kind, name, tmp_path):
    if kind == "lmdb":
        pytest.importorskip("lmdb")
    scenario = SCENARIOS[name]
    pristine = tmp_path / "pristine"
    pristine.mkdir()
    if name == "cp":
        copy_source(tmp_path / "src.zarr")
    store = open_store(kind, pristine)
    try:
        scenario.setup(store)
    finally:
        close_store(store)
    # the states the operations pass through, on an uninterrupted copy
    ref = tmp_path / "reference"
    shutil.copytree(pristine, ref)
    views = [_view(kind, ref, scenario)]
    for i in range(len(scenario.ops)):
        _run_ops(kind, ref, scenario, i, i + 1)
        views.append(_view(kind, ref, scenario))
    final_raw = _raw(kind, ref)

    runs = _drive(kind, scenario, tmp_path)
    total = runs[0]["changes"]
    assert [r["kill_at"] for r in runs] == [0, *kill_points(total, MAX_POINTS)]
    assert _raw(kind, Path(runs[0]["path"])) == final_raw, "the writer's uninterrupted run differs"
    per_op = [0] * len(scenario.ops)
    failures: list[str] = []
    torn: list[str] = []
    regions = scenario.regions() if scenario.regions else {}
    for run in runs[1:]:
        folder, acks = Path(run["path"]), run["acks"]
        if acks == len(scenario.ops) and not run["killed"] and not run["error"]:
            # a threaded writer (``zarrkit cp``) may make fewer changes than its first run did
            # (two threads racing to make one directory): it finished before this kill point
            problem = _finished_differently(kind, folder, scenario, views[-1], final_raw)
            if problem:
                failures.append(f"finished before change {run['kill_at']} of {total}: {problem}")
            continue
        where = f"killed before change {run['kill_at']} of {total} (op {acks}: {scenario.ops[acks][0]!r})"
        if not run["killed"] or run["error"]:
            failures.append(f"{where}: the writer was not killed ({run})")
            continue
        per_op[acks] += 1
        try:
            view = _view(kind, folder, scenario)
        except Exception as exc:  # noqa: BLE001 - a finding, collected
            if kind in TORN_VALUES:  # the operation in flight may have torn a value
                torn.append(f"{where}: {type(exc).__name__}")
                continue
            failures.append(f"{where}: reading fails: {type(exc).__name__}: {exc}"[:400])
            continue
        before, after = views[acks], views[acks + 1]
        if _equal(view, before):
            state = acks
        elif _equal(view, after):
            state = acks + 1
        elif regions and _mixed_ok(view, before, after, regions):
            state = acks  # the operation in flight is re-run whole
        elif scenario.unfinished and scenario.unfinished(view):
            state = acks  # marked unfinished: the operation is run again
        elif kind in TORN_VALUES and _elementwise_ok(view, before, after):
            torn.append(f"{where}: mixed")  # what was acknowledged is there; the rest may be torn
            continue
        else:
            failures.append(f"{where}: the store holds neither the state before the operation in "
                            f"flight nor after it: {_diff(view, before, after)}")
            continue
        try:
            _run_ops(kind, folder, scenario, state)
        except Exception as exc:  # noqa: BLE001
            failures.append(f"{where}: re-running from op {state} fails: {type(exc).__name__}: {exc}"[:400])
            continue
        problem = _finished_differently(kind, folder, scenario, views[-1], final_raw)
        if problem:
            failures.append(f"{where}: re-run from op {state}, {problem}")
        shutil.rmtree(folder)
    print(f"{kind} {name}: {total} kill points, per operation {per_op} "
          f"({sum(per_op)} checked, {len(torn)} torn as documented), {len(failures)} failure(s)")
    for line in torn:
        print("  torn:", line)
    assert not failures, "\n".join(failures[:8])


def _finished_differently(kind: str, folder: Path, scenario: Scenario, final_view: dict,
                          final_raw: dict[str, bytes]) -> str:
    """What differs from an uninterrupted run once the operations were run again: what a
    reader sees, a key the uninterrupted run does not leave (a stale chunk), or the bytes of
    a chunk ('' when nothing).  Metadata documents may differ in bytes and not in meaning: a
    v2 node whose empty ``.zattrs`` was not written yet reads the same."""
    view = _view(kind, folder, scenario)
    if not _equal(view, final_view):
        return f"a reader sees {_diff(view, final_view, final_view)}"
    got = _raw(kind, folder)
    extra = sorted(set(got) - set(final_raw))
    if extra:
        return f"keys an uninterrupted run does not leave: {extra[:6]}"
    meta = (".zarray", ".zgroup", ".zattrs", ".zmetadata", "zarr.json")
    differ = sorted(k for k in got if got[k] != final_raw[k] and not k.endswith(meta))
    return f"values differ: {differ[:6]}" if differ else ""


def _elementwise_ok(view: dict, before: dict, after: dict) -> bool:
    """Every element of every array, and every other part, is as before or as after."""
    if view.keys() != before.keys():
        return False
    for key, value in view.items():
        old, new = before[key], after[key]
        arrays = all(isinstance(v, np.ndarray) for v in (value, old, new))
        if arrays and value.shape == old.shape == new.shape:
            if not np.all((value == old) | (value == new)):
                return False
            continue
        if not (_equal(value, old) or _equal(value, new)):
            return False
    return True


def _diff(view: dict, before: dict, after: dict) -> str:
    keys = sorted(set(view) | set(before) | set(after))
    bad = [k for k in keys if not (_equal(view.get(k), before.get(k)) or _equal(view.get(k), after.get(k)))]
    return ", ".join(f"{k}={_short(view.get(k))} (before {_short(before.get(k))}, after {_short(after.get(k))})"
                     for k in bad[:3])


def _short(v: Any) -> str:
    if isinstance(v, np.ndarray):
        return f"array{v.shape}[{np.array2string(v.ravel()[:8], separator=',')}...]"
    return repr(v)[:80]
