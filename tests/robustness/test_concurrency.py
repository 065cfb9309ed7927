"""Concurrent writers (threads and processes) with and without synchronizers.

Every test is designed so the final contents are deterministic: writers touch the same chunks
but never the same elements (or, without a synchronizer, only whole chunks), so any lost update
shows up as a wrong element.  Nothing here depends on a race being lost: no "it fails without
a lock" tests.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import zarrkit

HERE = Path(__file__).resolve().parent
WORKER = HERE / "_robustness_worker.py"
SRC = HERE.parent.parent / "src"

FORMATS = [
    pytest.param(dict(zarr_format=2), id="v2"),
    pytest.param(dict(zarr_format=3), id="v3"),
]
LAYOUTS = FORMATS + [pytest.param(dict(zarr_format=3, shards="yes"), id="v3-sharded")]


def _create(store, shape, chunks, dtype="i4", **kw):
    """An array in ``store``; ``shards='yes'`` makes shards of 2x2 chunks."""
    fmt = kw.pop("zarr_format")
    if kw.pop("shards", None):
        return zarrkit.create_array(store, shape=shape, chunks=chunks, dtype=dtype, zarr_format=fmt,
                                    shards=tuple(2 * c for c in chunks), fill_value=0, **kw)
    return zarrkit.create(shape=shape, chunks=chunks, dtype=dtype, zarr_format=fmt, store=store,
                          fill_value=0, **kw)


def run_workers(mode: str, n: int, tmp_path: Path, timeout: float = 120, **args) -> None:
    """Start ``n`` worker processes, release them at once, wait and check they all succeeded."""
    sync_dir = tmp_path / f"start-{mode}"
    sync_dir.mkdir()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]))
    procs = []
    for w in range(n):
        a = dict(args, worker=w, n_workers=n, sync_dir=str(sync_dir))
        procs.append(subprocess.Popen([sys.executable, str(WORKER), mode, json.dumps(a)], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    try:
        deadline = time.monotonic() + timeout
        while len(list(sync_dir.glob("ready-*"))) < n:
            if any(p.poll() is not None for p in procs) or time.monotonic() > deadline:
                break
            time.sleep(0.01)
        (sync_dir / "go").touch()
        for p in procs:
            _out, err = p.communicate(timeout=max(deadline - time.monotonic(), 1))
            assert p.returncode == 0, f"worker failed ({p.returncode}):\n{err.decode()[-3000:]}"
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()


# =============================================================================================
# (a) threads, overlapping non-aligned regions, ThreadSynchronizer


@pytest.mark.parametrize("layout", LAYOUTS)
def test_threads_interleaved_stripes_with_thread_synchronizer(layout):
    n_threads, rounds, width = 8, 20, 3
    shape, chunks = (61, 37), (7, 5)
    sync = zarrkit.ThreadSynchronizer()
    store = zarrkit.MemoryStore()
    _create(store, shape, chunks, **layout)
    rows_of = [[r for r in range(shape[0]) if (r // width) % n_threads == t] for t in range(n_threads)]
    problems: list[str] = []
    expected = np.zeros(shape, dtype="i4")
    checker = zarrkit.open_array(store, mode="r")

    def owner(rnd: int, t: int) -> int:
        return (t + rnd) % n_threads  # stripe set of thread t in this round: rotates every round

    def check_round() -> None:
        # runs once per round, after every thread wrote and before any starts the next round
        rnd = state["round"]
        for t in range(n_threads):
            expected[rows_of[owner(rnd, t)], :] = rnd * n_threads + t + 1
        got = checker[...]
        if not np.array_equal(got, expected):
            bad = np.argwhere(got != expected)
            problems.append(f"round {rnd}: {len(bad)} wrong elements, first at {bad[0].tolist()}")
        state["round"] += 1

    state = {"round": 0}
    barrier = threading.Barrier(n_threads, action=check_round)
    errors: list[BaseException] = []

    def work(t: int) -> None:
        try:
            z = zarrkit.open_array(store, mode="r+", synchronizer=sync)  # own Array object
            for rnd in range(rounds):
                rows = rows_of[owner(rnd, t)]
                value = rnd * n_threads + t + 1
                # stripes of 3 rows: basic slices on even rounds, one orthogonal call on odd ones
                if rnd % 2 == 0:
                    for r0 in rows[::width]:
                        z[r0:r0 + width, :] = value
                else:
                    z.set_orthogonal_selection((np.array(rows), slice(None)), value)
                barrier.wait(timeout=60)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
            barrier.abort()

    threads = [threading.Thread(target=work, args=(t,)) for t in range(n_threads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    assert state["round"] == rounds
    assert not problems, problems
    np.testing.assert_array_equal(zarrkit.open_array(store, mode="r")[...], expected)


# =============================================================================================
# (b) processes, overlapping non-aligned regions, ProcessSynchronizer


@pytest.mark.parametrize("layout", LAYOUTS)
def test_processes_interleaved_stripes_with_process_synchronizer(layout, tmp_path):
    from _robustness_worker import stripe_columns

    n, rounds, width = 4, 20, 3
    shape, chunks = (2 * rounds, 50), (3, 7)
    path = tmp_path / "array"
    _create(zarrkit.DirectoryStore(path), shape, chunks, **layout)
    run_workers("stripes", n, tmp_path, path=str(path), lock_dir=str(tmp_path / "sync"),
                rounds=rounds, width=width)
    expected = np.zeros(shape, dtype="i4")
    for p in range(n):
        cols = stripe_columns(p, n, shape[1], width)
        for r in range(rounds):
            expected[2 * r:2 * r + 2, cols] = p * 100 + r + 1
    got = zarrkit.open_array(str(path), mode="r")[...]
    np.testing.assert_array_equal(got, expected)


# =============================================================================================
# (c) processes, chunk-aligned writes, no synchronizer


@pytest.mark.parametrize("layout", FORMATS)
def test_processes_chunk_aligned_writes_without_synchronizer(layout, tmp_path):
    n, rounds = 4, 10
    shape, chunks = (30, 28), (4, 6)  # edge chunks on both axes
    path = tmp_path / "array"
    z = _create(zarrkit.DirectoryStore(path), shape, chunks, **layout)
    gy, gx = z.cdata_shape
    run_workers("aligned", n, tmp_path, path=str(path), rounds=rounds)
    expected = np.zeros(shape, dtype="i4")
    for i in range(gy):
        for j in range(gx):
            p = (i * gx + j) % n
            expected[i * 4:(i + 1) * 4, j * 6:(j + 1) * 6] = 1000 * p + rounds
    z = zarrkit.open_array(str(path), mode="r")
    np.testing.assert_array_equal(z[...], expected)
    assert z.nchunks_initialized == gy * gx
    leftovers = [f for _, _, files in os.walk(path) for f in files if "partial" in f]
    assert leftovers == []  # every writer finished: no temporary files remain


# =============================================================================================
# (d) concurrent appends


def _check_appended(z, initial: np.ndarray, n: int, appends: int, rows: int) -> None:
    data = z[...]
    assert data.shape == (len(initial) + n * appends * rows, 4), data.shape
    np.testing.assert_array_equal(data[: len(initial)], initial)
    tail = data[len(initial):]
    got = sorted(map(tuple, tail.tolist()))
    want = sorted((p, k, j, 1000 * p + 10 * k + j) for p in range(n) for k in range(appends)
                  for j in range(rows))
    assert got == want  # no row lost, none duplicated, none zero (fill value)
    # every append landed as one contiguous block of rows, in order
    for start in range(0, len(tail), rows):
        block = tail[start:start + rows]
        assert (block[:, 0] == block[0, 0]).all() and (block[:, 1] == block[0, 1]).all()
        assert block[:, 2].tolist() == list(range(rows))


@pytest.mark.parametrize("layout", FORMATS)
def test_processes_concurrent_append_with_process_synchronizer(layout, tmp_path):
    n, appends, rows = 4, 8, 3
    path = tmp_path / "array"
    initial = np.arange(20, dtype="i4").reshape(5, 4) + 7
    z = _create(zarrkit.DirectoryStore(path), (5, 4), (7, 4), **layout)
    z[...] = initial
    run_workers("append", n, tmp_path, path=str(path), lock_dir=str(tmp_path / "sync"),
                appends=appends, rows=rows)
    _check_appended(zarrkit.open_array(str(path), mode="r"), initial, n, appends, rows)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_threads_concurrent_append_with_thread_synchronizer(layout):
    n, appends, rows = 8, 10, 3
    store = zarrkit.MemoryStore()
    initial = np.arange(20, dtype="i4").reshape(5, 4) + 7
    z = _create(store, (5, 4), (7, 4), **layout)
    z[...] = initial
    sync = zarrkit.ThreadSynchronizer()
    errors: list[BaseException] = []
    start = threading.Barrier(n)

    def work(p: int) -> None:
        try:
            a = zarrkit.open_array(store, mode="r+", synchronizer=sync)
            start.wait(timeout=30)
            for k in range(appends):
                a.append(np.array([[p, k, j, 1000 * p + 10 * k + j] for j in range(rows)], dtype="i4"))
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(p,)) for p in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    _check_appended(zarrkit.open_array(store, mode="r"), initial, n, appends, rows)


# =============================================================================================
# (e) attributes


def _node(store, kind: str, fmt: int):
    if kind == "array":
        return zarrkit.create(shape=(4,), chunks=(2,), dtype="i4", zarr_format=fmt, store=store)
    return zarrkit.group(store, zarr_format=fmt)


@pytest.mark.parametrize("kind", ["array", "group"])
@pytest.mark.parametrize("layout", FORMATS)
def test_threads_attribute_updates_lose_no_keys(layout, kind):
    n, keys = 8, 15
    store = zarrkit.MemoryStore()
    _node(store, kind, layout["zarr_format"]).attrs["initial"] = True
    sync = zarrkit.ThreadSynchronizer()
    errors: list[BaseException] = []
    start = threading.Barrier(n)

    def work(t: int) -> None:
        try:
            node = zarrkit.open(store, mode="r+", synchronizer=sync)  # own node object
            start.wait(timeout=30)
            for j in range(keys):
                if j % 3 == 0:
                    node.attrs.update({f"t{t}_{j}": [t, j]})
                else:
                    node.attrs[f"t{t}_{j}"] = [t, j]
            for j in range(0, keys, 2):
                del node.attrs[f"t{t}_{j}"]
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    want = {"initial": True}
    want.update({f"t{t}_{j}": [t, j] for t in range(n) for j in range(1, keys, 2)})
    assert zarrkit.open(store, mode="r").attrs.asdict() == want


@pytest.mark.parametrize("layout", FORMATS)
def test_processes_attribute_updates_lose_no_keys(layout, tmp_path):
    n, keys = 4, 12
    path = tmp_path / "array"
    _node(zarrkit.DirectoryStore(path), "array", layout["zarr_format"]).attrs["initial"] = True
    run_workers("attrs", n, tmp_path, path=str(path), lock_dir=str(tmp_path / "sync"), keys=keys)
    want = {"initial": True}
    want.update({f"w{p}_{j}": [p, j] for p in range(n) for j in range(1, keys, 2)})
    assert zarrkit.open(str(path), mode="r").attrs.asdict() == want


def test_threads_v3_append_and_attribute_updates_share_zarr_json():
    """In v3 the shape and the attributes live in the same ``zarr.json``: appends (rewriting the
    shape) and attribute updates (rewriting the attributes) must not undo each other."""
    store = zarrkit.MemoryStore()
    z = _create(store, (0, 4), (7, 4), zarr_format=3)
    sync = zarrkit.ThreadSynchronizer()
    errors: list[BaseException] = []
    n_appenders, n_attr_writers, count = 4, 4, 12
    start = threading.Barrier(n_appenders + n_attr_writers)

    def append(p: int) -> None:
        try:
            a = zarrkit.open_array(store, mode="r+", synchronizer=sync)
            start.wait(timeout=30)
            for k in range(count):
                a.append(np.full((2, 4), 100 * p + k + 1, dtype="i4"))
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    def set_attrs(t: int) -> None:
        try:
            a = zarrkit.open_array(store, mode="r+", synchronizer=sync)
            start.wait(timeout=30)
            for j in range(count):
                a.attrs[f"a{t}_{j}"] = j
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=append, args=(p,)) for p in range(n_appenders)]
    threads += [threading.Thread(target=set_attrs, args=(t,)) for t in range(n_attr_writers)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    z = zarrkit.open_array(store, mode="r")
    assert z.shape == (n_appenders * count * 2, 4)
    assert z.attrs.asdict() == {f"a{t}_{j}": j for t in range(n_attr_writers) for j in range(count)}
    values = sorted(set(z[...][:, 0].tolist()))
    assert values == sorted(100 * p + k + 1 for p in range(n_appenders) for k in range(count))
