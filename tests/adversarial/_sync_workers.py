"""Process bodies for the synchronizer and consolidated-writer tests, started with
multiprocessing's 'spawn' (a fresh interpreter: nothing inherited but what is pickled).

Every append writes a block of ``ROWS`` rows whose every element is derived from who wrote it
(process, thread, append number, row), so a lost, duplicated, shifted or torn row is told
apart from a good one by :func:`check_blocks`.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

import zarrkit

ROWS = 3  # rows per append: fewer than a chunk's, so appends share chunks
WIDTH = 6  # columns: process, thread, append, row, then two derived values


def block(p: int, t: int, k: int) -> np.ndarray:
    """The rows appended by thread ``t`` of process ``p`` in its ``k``-th append."""
    rows = np.empty((ROWS, WIDTH), dtype="i4")
    for j in range(ROWS):
        tag = ((p * 16 + t) * 1000 + k) * 8 + j
        rows[j] = (p, t, k, j, tag * 7 + 1, tag ^ 0x5A5A5)
    return rows


def check_blocks(data: np.ndarray, expected: list[tuple[int, int, int]]) -> None:
    """``data`` holds exactly the blocks ``expected`` names, each whole, in one piece."""
    assert data.shape == (len(expected) * ROWS, WIDTH), (
        f"{data.shape[0]} rows stored, {len(expected) * ROWS} appended: "
        f"{len(expected) * ROWS - data.shape[0]} lost"
    )
    found = []
    for start in range(0, len(data), ROWS):
        rows = data[start:start + ROWS]
        p, t, k = (int(v) for v in rows[0, :3])
        assert np.array_equal(rows, block(p, t, k)), f"rows {start}..{start + ROWS} torn or mixed:\n{rows}"
        found.append((p, t, k))
    missing = sorted(set(expected) - set(found))
    assert not missing, f"{len(missing)} appends lost (overwritten), e.g. {missing[:5]}"
    assert sorted(found) == sorted(expected)  # and none stored twice


def run_appenders(handles: list[Any], p: int, appends: int, start: Any = None) -> None:
    """Append ``appends`` blocks from one thread per handle (all released together)."""
    errors: list[BaseException] = []
    go = threading.Barrier(len(handles))

    def work(t: int) -> None:
        try:
            go.wait(timeout=60)
            for k in range(appends):
                handles[t].append(block(p, t, k))
        except BaseException as exc:  # noqa: BLE001 - raised below, in the process's main thread
            errors.append(exc)

    if start is not None:
        start.wait(timeout=60)
    threads = [threading.Thread(target=work, args=(t,)) for t in range(len(handles))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    if errors:
        raise errors[0]


def append_process(array: Any, p: int, n_threads: int, appends: int, start: Any) -> None:
    """Thread 0 appends through ``array`` as it was pickled (synchronizer and all); the others
    through handles of their own, opened with the unpickled synchronizer."""
    handles = [array] + [
        zarrkit.open_array(array.store, path=array.path, mode="r+", synchronizer=array.synchronizer)
        for _ in range(n_threads - 1)
    ]
    run_appenders(handles, p, appends, start)


def consolidated_append_process(root: str, p: int, n_threads: int, appends: int, lock_dir: str,
                                start: Any, consolidated: bool) -> None:
    """Threads appending to ``root``'s array ``a``, each through a handle of its own opened
    through the consolidated metadata, or normally."""
    sync = zarrkit.ProcessSynchronizer(lock_dir)
    if consolidated:
        handles = [zarrkit.open_consolidated(root, mode="r+", synchronizer=sync)["a"] for _ in range(n_threads)]
    else:
        handles = [zarrkit.open_array(root, path="a", mode="r+", synchronizer=sync) for _ in range(n_threads)]
    run_appenders(handles, p, appends, start)


def hold_and_report(lock_dir: str, key: str, result: Any) -> None:
    """Whether this process can take ``key`` of a synchronizer on ``lock_dir`` right now."""
    lock = zarrkit.ProcessSynchronizer(lock_dir)[key]
    got = lock.acquire(blocking=False)
    if got:
        lock.release()
    result.put(got)
