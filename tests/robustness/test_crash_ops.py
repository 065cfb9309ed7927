"""Writers SIGKILLed during ``resize``/``append`` and during partial writes into shards.

``resize``/``append``: the writer is killed just before each of its changes to the store in
turn (every point the sequence can stop at).  Afterwards the array is always in one of the
states the sequence passes through (shape and chunks agree: no stale chunk shows up once the
array grows again), and finishing the sequence gives exactly the store an uninterrupted run
gives.  Partial writes: killed at random moments, every shard holds what the writes before
some point put there, never part of one write.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import zarrkit

HERE = Path(__file__).resolve().parent
WORKER = HERE / "_crash_ops_worker.py"
SRC = HERE.parent.parent / "src"
sys.path.insert(0, str(HERE))
from _crash_ops_worker import partial_regions, resize_steps, run_steps

SHAPE, CHUNKS = (40, 30), (10, 10)
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]))


def _create(path: Path, layout: str) -> np.ndarray:
    data = np.arange(np.prod(SHAPE), dtype="<f8").reshape(SHAPE) + 1
    if layout == "v2":
        z = zarrkit.create(shape=SHAPE, chunks=CHUNKS, dtype="<f8", zarr_format=2, store=str(path),
                           compressor=zarrkit.Zlib(level=1), fill_value=0)
    elif layout == "v3":
        z = zarrkit.create_array(str(path), shape=SHAPE, chunks=CHUNKS, dtype="float64", fill_value=0)
    else:
        z = zarrkit.create_array(str(path), shape=SHAPE, chunks=CHUNKS, shards=(20, 10), dtype="float64",
                                 fill_value=0)
    z[...] = data
    return data


def _snapshot(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def _worker(mode: str, args: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(WORKER), mode, json.dumps(args)], env=ENV,
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize("layout", ["v2", "v3", "v3-sharded"])
def test_resize_and_append_killed_before_every_change(layout, tmp_path):
    pristine = tmp_path / "pristine"
    data = _create(pristine, layout)
    rows = SHAPE[0]
    states = [  # what the sequence passes through
        ((rows, SHAPE[1]), data),
        ((rows // 2, SHAPE[1]), data[: rows // 2]),
        ((rows, SHAPE[1]), np.concatenate([data[: rows // 2], np.zeros_like(data[rows // 2:])])),
        ((rows + rows // 2, SHAPE[1]), np.concatenate([data[: rows // 2], np.zeros_like(data[rows // 2:]),
                                                        np.full((rows // 2, SHAPE[1]), -1.0)])),
    ]
    uninterrupted = tmp_path / "uninterrupted"
    shutil.copytree(pristine, uninterrupted)
    done = _worker("resize", {"path": str(uninterrupted), "kill_at": 0})
    assert done.returncode == 0, done.stderr[-2000:]
    changes = int(done.stdout)
    expected = _snapshot(uninterrupted)
    assert changes >= 8
    seen = set()
    for kill_at in range(1, changes + 1):
        path = tmp_path / f"killed-{kill_at}"
        shutil.copytree(pristine, path)
        proc = _worker("resize", {"path": str(path), "kill_at": kill_at})
        assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]
        z = zarrkit.open_array(str(path), mode="r+")
        got = z[...]
        matching = [i for i, (shape, values) in enumerate(states)
                    if z.shape == shape and np.array_equal(got, values)]
        assert matching, f"killed before change {kill_at}: shape {z.shape} holds no state of the sequence"
        state = max(matching)
        seen.add(state)
        run_steps(z, resize_steps(list(SHAPE))[state:])  # the user runs what is left again
        # a write killed mid-way leaves its temporary file, never a key: listings remove such
        # files where they go, and an append racing others lists nothing (see core/claims)
        zarrkit.DirectoryStore(path).remove_orphaned_temp_files()
        assert _snapshot(path) == expected, f"killed before change {kill_at}, then finished"
        shutil.rmtree(path)
    assert seen == {0, 1, 2}  # the kills landed inside every step


@pytest.mark.parametrize("seed", range(6))
def test_partial_writes_into_shards_killed_at_random(seed, tmp_path):
    path = tmp_path / "a"
    zarrkit.create_array(str(path), shape=SHAPE, chunks=(5, 5), shards=(10, 10), dtype="int32",
                         fill_value=0)
    regions = partial_regions(list(SHAPE))
    proc = subprocess.Popen([sys.executable, str(WORKER), "partial", json.dumps({"path": str(path)})],
                            env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "ready\n", proc.stderr.read()[-2000:]
        # (the first write acknowledged before the clock starts: a slow machine still kills
        # the writer between writes, not before the first)
        first = proc.stdout.readline()
        time.sleep(random.Random(seed).uniform(0.05, 0.6))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        acknowledged = [int(line) for line in (first + proc.stdout.read()).split()]
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    last = acknowledged[-1] if acknowledged else 0
    # the states after each write: the one in flight may have reached some shards, not others
    states = [np.zeros(SHAPE, dtype="int32")]
    for n in range(1, last + 2):
        state = states[-1].copy()
        state[regions[n % len(regions)]] = n
        states.append(state)
    got = zarrkit.open_array(str(path), mode="r")[...]
    for i in range(0, SHAPE[0], 10):
        for j in range(0, SHAPE[1], 10):
            shard = (slice(i, i + 10), slice(j, j + 10))
            assert any(np.array_equal(got[shard], s[shard]) for s in states[last:]), (
                f"shard at {i},{j} after {last} acknowledged writes holds no state of the writes"
            )
    assert last > 0
