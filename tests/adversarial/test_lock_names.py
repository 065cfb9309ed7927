"""A :class:`~zarrkit.ProcessSynchronizer` locks keys of any length.

A lock file is named after its key; a key longer than a file name may be (an array at a
304-character path) maps to a short name of its own, the same in every process (a hash of the
key, not of anything per process), so the lock still excludes other processes.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from pathlib import Path

import numpy as np
import pytest

import zarrkit
from zarrkit.errors import LockError

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _sync_workers import hold_and_report

SPAWN = multiprocessing.get_context("spawn")
LONG = "/".join(["d" * 75] * 4)  # 303 characters, a chunk key below it longer still


def test_an_array_at_a_long_path_is_written_with_a_process_synchronizer(tmp_path):
    sync = zarrkit.ProcessSynchronizer(str(tmp_path / "locks"))
    store = zarrkit.MemoryStore()
    z = zarrkit.open_array(store, mode="w", path=LONG + "x", shape=(10,), chunks=(4,), dtype="i4",
                           synchronizer=sync)
    z[1:7] = 5
    z.append(np.arange(3, dtype="i4"))
    z.attrs["k"] = 1
    assert z[:].tolist() == [0, 5, 5, 5, 5, 5, 5, 0, 0, 0, 0, 1, 2]
    for name in os.listdir(tmp_path / "locks"):
        assert len(os.fsencode(name)) <= 255


def test_long_and_non_ascii_keys_get_distinct_short_stable_names(tmp_path):
    sync = zarrkit.ProcessSynchronizer(str(tmp_path))
    keys = [LONG + "/0", LONG + "/1", "é" * 200, "é" * 200 + "/0", "short/0"]
    paths = [sync[k].path for k in keys]
    assert len(set(paths)) == len(keys)
    assert all(len(os.fsencode(os.path.basename(p))) <= 255 for p in paths)
    assert sync["short/0"].path == os.path.join(str(tmp_path), "short%2F0.lock")
    assert [zarrkit.ProcessSynchronizer(str(tmp_path))[k].path for k in keys] == paths
    for key in keys[:3]:
        with sync[key]:
            pass


def test_a_long_key_excludes_another_process(tmp_path):
    sync = zarrkit.ProcessSynchronizer(str(tmp_path))
    key = LONG + "/c/0"

    def other_process_gets_it() -> bool:
        result = SPAWN.Queue()
        p = SPAWN.Process(target=hold_and_report, args=(str(tmp_path), key, result))
        p.start()
        try:
            return result.get(timeout=60)
        finally:
            p.join(timeout=60)

    with sync[key]:
        assert not other_process_gets_it()
    assert other_process_gets_it()


def test_a_lock_file_that_cannot_be_made_is_a_typed_error(tmp_path):
    (tmp_path / "file").write_bytes(b"")
    sync = zarrkit.ProcessSynchronizer(str(tmp_path / "file" / "locks"))
    z = zarrkit.zeros(10, chunks=4, dtype="i4", synchronizer=sync)
    with pytest.raises(LockError, match="lock file") as info:
        z[1:3] = 1
    assert isinstance(info.value, OSError)
