"""Synchronizers exclude every thread of every process, reentrantly, across fork and pickle.

A file lock belongs to a process: granted to one thread, it is granted to every other thread
of that process too, and closing any descriptor of the lock file drops it.  These tests append
from several processes with several threads each, and probe the locks directly, from other
threads and from other processes.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import sys
import threading
import warnings
from pathlib import Path

import numpy as np
import pytest

import zarrkit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _sync_workers import WIDTH, append_process, block, check_blocks, hold_and_report, run_appenders

SPAWN = multiprocessing.get_context("spawn")
TOTAL_APPENDS = 48


def _empty_log(store, zarr_format: int, synchronizer=None):
    return zarrkit.open_array(store, mode="w", shape=(0, WIDTH), chunks=(4, WIDTH), dtype="i4",
                              fill_value=-1, zarr_format=zarr_format, synchronizer=synchronizer)


def _probe(lock_dir: Path, key: str) -> bool:
    """Whether another process can take ``key`` now."""
    result = SPAWN.Queue()
    p = SPAWN.Process(target=hold_and_report, args=(str(lock_dir), key, result))
    p.start()
    try:
        return result.get(timeout=30)
    finally:
        p.join(timeout=30)


def _try_from_another_thread(lock) -> bool:
    got: list[bool] = []

    def attempt() -> None:
        ok = lock.acquire(blocking=False)
        if ok:
            lock.release()
        got.append(ok)

    t = threading.Thread(target=attempt)
    t.start()
    t.join(timeout=30)
    return got[0]


@pytest.mark.parametrize(
    ("processes", "threads", "zarr_format"),
    [(1, 4, 2), (2, 2, 3), (4, 1, 2), (2, 4, 3)],
    ids=["1x4-v2", "2x2-v3", "4x1-v2", "2x4-v3"],
)
def test_appends_from_processes_and_threads_keep_every_row(tmp_path, processes, threads, zarr_format):
    sync = zarrkit.ProcessSynchronizer(tmp_path / "sync")
    z = _empty_log(zarrkit.DirectoryStore(tmp_path / "log.zarr"), zarr_format, synchronizer=sync)
    appends = TOTAL_APPENDS // (processes * threads)
    start = SPAWN.Barrier(processes)
    # the array travels pickled, with its synchronizer, as dask sends it to its workers
    procs = [SPAWN.Process(target=append_process, args=(z, p, threads, appends, start))
             for p in range(processes)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=60)
    assert [p.exitcode for p in procs] == [0] * processes
    expected = [(p, t, k) for p in range(processes) for t in range(threads) for k in range(appends)]
    check_blocks(zarrkit.open_array(tmp_path / "log.zarr", mode="r")[...], expected)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_thread_synchronizer_eight_threads_through_any_handle(tmp_path, zarr_format):
    # half the threads write through handles opened from the consolidated metadata, which
    # describes the array as it was before any of these appends
    root = tmp_path / "root.zarr"
    g = zarrkit.open_group(root, mode="w", zarr_format=zarr_format)
    g.create_dataset("a", shape=(0, WIDTH), chunks=(4, WIDTH), dtype="i4", fill_value=-1)
    zarrkit.consolidate_metadata(root)
    sync = zarrkit.ThreadSynchronizer()
    handles = [
        zarrkit.open_consolidated(root, mode="r+", synchronizer=sync)["a"] if t % 2
        else zarrkit.open_array(root, path="a", mode="r+", synchronizer=sync)
        for t in range(8)
    ]
    run_appenders(handles, 0, 6)
    check_blocks(zarrkit.open_array(root, path="a", mode="r")[...],
                 [(0, t, k) for t in range(8) for k in range(6)])


def test_a_held_key_excludes_the_other_threads_of_the_process(tmp_path):
    sync = zarrkit.ProcessSynchronizer(tmp_path / "sync")
    copies = [sync, zarrkit.ProcessSynchronizer(tmp_path / "sync"), pickle.loads(pickle.dumps(sync))]
    with sync["a/.zarray"]:
        assert [_try_from_another_thread(s["a/.zarray"]) for s in copies] == [False, False, False]
        assert _try_from_another_thread(sync["a/0.0"])  # another key is free
    assert [_try_from_another_thread(s["a/.zarray"]) for s in copies] == [True, True, True]


def test_reentering_a_key_keeps_it_until_the_outermost_exit(tmp_path):
    lock_dir = tmp_path / "sync"
    sync = zarrkit.ProcessSynchronizer(lock_dir)
    z = _empty_log(zarrkit.DirectoryStore(tmp_path / "log.zarr"), 3, synchronizer=sync)
    with sync["zarr.json"]:
        with sync["zarr.json"]:
            pass
        # append takes the metadata document's key again, inside the caller's hold
        z.append(block(0, 0, 0))
        z.attrs["note"] = "kept"  # a v3 array's attributes share that document and its key
        with pytest.raises(ValueError):  # a refused append lets go of its own hold only
            z.append(np.zeros((2, WIDTH + 1), dtype="i4"))
        assert not _try_from_another_thread(sync["zarr.json"])
        assert not _probe(lock_dir, "zarr.json")
    assert _probe(lock_dir, "zarr.json")
    check_blocks(z[...], [(0, 0, 0)])
    assert z.attrs["note"] == "kept"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX only")
def test_a_forked_child_inherits_no_held_locks(tmp_path):
    psync = zarrkit.ProcessSynchronizer(tmp_path / "sync")
    tsync = zarrkit.ThreadSynchronizer()
    holding, release = threading.Event(), threading.Event()

    def holder() -> None:  # a thread of the parent, which the child will not have
        with psync["held"], tsync["held"]:
            holding.set()
            release.wait(30)

    t = threading.Thread(target=holder)
    t.start()
    assert holding.wait(30)
    to_child_r, to_child_w = os.pipe()
    from_child_r, from_child_w = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork with threads running
        pid = os.fork()
    if pid == 0:  # the child: report what it sees as one byte per check, then exit
        code = 1
        try:
            mine = psync["k"]
            mine.acquire()
            results = [
                tsync["held"].acquire(timeout=5),            # not held by any thread here
                not psync["held"].acquire(blocking=False),   # held by the parent process
                not _try_from_another_thread(psync["k"]),    # held by this thread
            ]
            mine.release()
            os.write(from_child_w, bytes(results))
            os.read(to_child_r, 1)  # the parent has let go of "held"
            os.write(from_child_w, bytes([psync["held"].acquire(timeout=10)]))
            code = 0
        finally:
            os._exit(code)
    os.close(to_child_r)
    os.close(from_child_w)  # so a child that died reads as an end of file, not a hang
    answer = os.read(from_child_r, 3)
    release.set()
    t.join(30)
    os.write(to_child_w, b"x")
    answer += os.read(from_child_r, 1)
    os.close(to_child_w)
    os.close(from_child_r)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    # the thread lock is free, the parent's file lock excludes the child, the child's threads
    # exclude each other, and the parent's released lock is the child's to take
    assert list(answer) == [1, 1, 1, 1]
