"""Red-team attacks on appends racing each other without a synchronizer (core/claims.py).

A loser's undo (``Claim._undo``) decides "nobody wrote it since" by comparing the chunk's
bytes with what it wrote, and ``restore_elements`` picks the elements to put back by comparing
values.  Appenders writing *equal* values (a constant, a flag, a repeated row) defeat both
comparisons: the winner's rows look like the loser's own, and are put back to what the loser
read before (the fill value) after the winner has confirmed them.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import zarrkit


def _race_appends(store, data_of, threads=8, per=8, chunks=(4,), shards=None, fill=0):
    zarrkit.create_array(store, shape=(0,), chunks=chunks, shards=shards, dtype="i4", fill_value=fill)

    def run(w: int) -> None:
        z = zarrkit.open_array(store, mode="r+")
        for k in range(per):
            z.append(data_of(w, k))

    ts = [threading.Thread(target=run, args=(w,)) for w in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return zarrkit.open_array(store, mode="r")[:]


def test_threads_appending_equal_rows_lose_none(tmp_path):
    # 8 threads x 8 one-row appends of the same value: every trial of 5 lost rows when found
    for trial in range(3):
        store = zarrkit.DirectoryStore(tmp_path / f"a{trial}.zarr")
        got = _race_appends(store, lambda w, k: np.ones(1, dtype="i4"))
        assert got.size == 64
        assert (got == 1).all(), f"rows lost to the fill value: {np.flatnonzero(got != 1).tolist()}"


def test_threads_appending_distinct_rows_lose_none(tmp_path):
    # the same race with distinct values holds (8 trials of 8 x 8 appends)
    store = zarrkit.DirectoryStore(tmp_path / "a.zarr")
    got = _race_appends(store, lambda w, k: np.array([w * 100 + k + 1], dtype="i4"))
    assert sorted(got.tolist()) == sorted(w * 100 + k + 1 for w in range(8) for k in range(8))
