"""A writer killed with SIGKILL at random moments never leaves a DirectoryStore damaged.

The writer process rewrites a whole array with contents A, then B, then A, ... and replaces its
attributes after every round.  After each kill: the store opens, every chunk decodes and equals
its A or its B contents (never a mix of both, never truncated), every metadata/attributes
document parses, and temporary files (which may remain) are never listed as keys.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import zarrkit
from zarrkit.storage.local import TEMP_MARKER

HERE = Path(__file__).resolve().parent
WORKER = HERE / "_robustness_worker.py"
SRC = HERE.parent.parent / "src"
sys.path.insert(0, str(HERE))
from _robustness_worker import crash_contents

KILLS = 20
SHAPE, CHUNKS = (120, 100), (12, 10)  # 100 chunks (25 shards of 2x2 chunks when sharded)


def _create(path: Path, layout: str) -> zarrkit.Array:
    store = zarrkit.DirectoryStore(path)
    if layout == "v2":
        z = zarrkit.create(shape=SHAPE, chunks=CHUNKS, dtype="<f8", zarr_format=2, store=store,
                           compressor=zarrkit.Zlib(level=1))
    elif layout == "v2-nested":
        z = zarrkit.create(shape=SHAPE, chunks=CHUNKS, dtype="<f8", zarr_format=2, store=store,
                           dimension_separator="/", compressor=None)
    elif layout == "v3":
        z = zarrkit.create_array(store, shape=SHAPE, chunks=CHUNKS, dtype="float64", zarr_format=3)
    else:
        z = zarrkit.create_array(store, shape=SHAPE, chunks=CHUNKS, dtype="float64", zarr_format=3,
                                 shards=(2 * CHUNKS[0], 2 * CHUNKS[1]))
    z[...] = crash_contents(list(SHAPE), "A")
    z.attrs.put({"round": -1, "which": "A", "pad": ""})
    return z


def _meta_files(path: Path) -> list[Path]:
    return [p for p in path.rglob("*") if p.name in (".zarray", ".zattrs", ".zgroup", "zarr.json")]


def _check_store(path: Path, contents: dict[str, np.ndarray], grid: tuple[int, int]) -> dict[str, int]:
    """Everything a reader can see is whole and consistent; returns how many A/B regions."""
    for meta in _meta_files(path):
        doc = json.loads(meta.read_bytes())  # whole JSON, never truncated
        assert isinstance(doc, dict), meta
    store = zarrkit.DirectoryStore(path, read_only=True)
    keys = list(store)
    assert keys, "no keys listed"
    assert not [k for k in keys if TEMP_MARKER in k], "temporary files listed as keys"
    for prefix in {"", *(k.rsplit("/", 1)[0] + "/" for k in keys if "/" in k)}:
        assert not [n for n in store.list_dir(prefix) if n.startswith(TEMP_MARKER)]
    z = zarrkit.open_array(store, mode="r")
    assert z.shape == SHAPE
    data = z[...]  # raises ChunkDecodeError for any damaged chunk
    attrs = z.attrs.asdict()
    assert attrs["which"] in ("A", "B") and isinstance(attrs["round"], int)
    assert attrs["pad"] == "x" * (attrs["round"] % 97 if attrs["round"] >= 0 else 0)
    seen = {"A": 0, "B": 0}
    gy, gx = grid  # the regions written atomically: chunks, or shards
    for i in range(SHAPE[0] // gy):
        for j in range(SHAPE[1] // gx):
            region = (slice(i * gy, (i + 1) * gy), slice(j * gx, (j + 1) * gx))
            part = data[region]
            which = [w for w in "AB" if np.array_equal(part, contents[w][region])]
            assert which, f"region {i},{j} is neither all A nor all B"
            seen[which[0]] += 1
    return seen


@pytest.mark.parametrize("layout", ["v2", "v2-nested", "v3", "v3-sharded"])
def test_sigkilled_writer_leaves_store_consistent(layout, tmp_path):
    path = tmp_path / "array"
    z = _create(path, layout)
    grid = z.shards or z.chunks
    contents = {w: crash_contents(list(SHAPE), w) for w in "AB"}
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]))
    rng = random.Random(f"crash-{layout}")
    totals = {"A": 0, "B": 0, "mixed_states": 0}
    for _ in range(KILLS):
        proc = subprocess.Popen(
            [sys.executable, str(WORKER), "crash", json.dumps({"path": str(path)})],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        try:
            line = proc.stdout.readline()
            assert line == b"ready\n", (line, proc.stderr.read().decode()[-2000:])
            time.sleep(rng.uniform(0.02, 0.2))
            assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
            proc.send_signal(signal.SIGKILL)
        finally:
            proc.kill()
            proc.wait()
            proc.stdout.close()
            proc.stderr.close()
        seen = _check_store(path, contents, grid)
        totals["A"] += seen["A"]
        totals["B"] += seen["B"]
        totals["mixed_states"] += bool(seen["A"] and seen["B"])
    # the writer really wrote between kills (B contents only come from it)
    assert totals["B"] > 0, totals
    # temporary files of the killed writers may remain on disk: opening the store for writing
    # (or an explicit clean-up) removes those of dead processes
    store = zarrkit.DirectoryStore(path)
    store.remove_orphaned_temp_files()
    assert not [p for p in path.rglob(f"{TEMP_MARKER}*")]
    _check_store(path, contents, grid)
