"""An append that loses its race takes back the chunk it created beyond the shape -- on a store
whose conditional delete is a version check followed by a delete (obstore's, on S3), another
append's rows merged into that chunk in between must not go with it.

The store below makes that window happen every time: its ``delete_if`` reads the version,
runs the writer waiting in the window, then deletes.  Three appends race on one array (no
synchronizer): L writes a long run of rows; right after L created the chunk past the first,
W appends a short run and wins the shape; while L takes its rows back, M appends after W,
into the chunk L created.  Every row of the three must be there once, where its append put
it, whichever way L takes its rows back (a store that deletes atomically is the control).
"""

from __future__ import annotations

import numpy as np
import pytest
from _check_then_delete import CheckThenDelete, inner_store  # (a sibling module)

import zarrkit


@pytest.mark.parametrize("kind", ["memory", "sqlite"])  # versions: objects, contents
@pytest.mark.parametrize("atomic", [False, True])
@pytest.mark.parametrize("layout", ["chunks", "shards"])
def test_a_lost_append_taking_back_its_chunk_keeps_another_appends_rows(tmp_path, kind, atomic, layout):
    # chunks of 5 (layout "shards": shards of 10 of inner chunks of 5): L's run reaches into
    # the second chunk (shard), W's stays in the first, M's reaches into the second
    per = 5 if layout == "chunks" else 10
    store = CheckThenDelete(inner_store(kind, tmp_path), "a/c/1", atomic)
    zarrkit.create_array(store, name="a", shape=(0,), chunks=(5,), dtype="i4", fill_value=-1,
                         shards=(10,) if layout == "shards" else None)
    handle = {w: zarrkit.open_array(store, path="a", mode="r+") for w in "LWM"}
    runs = {"L": np.arange(100, 100 + per + 2, dtype="i4"), "W": np.array([200, 201], dtype="i4"),
            "M": np.arange(300, 300 + per, dtype="i4")}
    landed = []

    def append(w):
        handle[w].append(runs[w])
        landed.append(w)

    def m_unless_run():
        if "M" not in landed:
            append("M")

    store.after_set = lambda: append("W")  # L has just created chunk 1: W wins the shape
    store.window = lambda: append("M")     # L taking chunk 1 back: M appends into it
    with zarrkit.config.set(threads=1):
        append("L")
        m_unless_run()  # (where L took its rows back without a delete, M comes after it)

    got = zarrkit.open_array(store, path="a", mode="r")[...]
    assert landed[0] == "W", landed
    where = {w: np.flatnonzero(np.isin(got, runs[w])) for w in "LWM"}
    for w in "LWM":
        assert len(where[w]) == len(runs[w]), (w, got.tolist())
        assert (got[where[w]] == runs[w]).all() and np.ptp(where[w]) == len(runs[w]) - 1, (w, got.tolist())
    assert got.size == sum(len(r) for r in runs.values()) and (got >= 0).all(), got.tolist()
    if not atomic:  # the window was never opened: no chunk another append may write is deleted
        assert store.deletes_of_key == 0


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
@pytest.mark.parametrize("atomic", [False, True])
@pytest.mark.parametrize("layout", ["chunks", "shards"])
def test_a_write_leaving_a_chunk_empty_keeps_another_writers_piece(tmp_path, kind, atomic, layout):
    # one chunk (shard) of 10: A clears its half to the fill value, which leaves the chunk
    # empty; B's half, written while A's delete is on its way, must stay
    store = CheckThenDelete(inner_store(kind, tmp_path), "a/c/0", atomic)
    a = zarrkit.create_array(store, name="a", shape=(10,), chunks=(5,) if layout == "shards" else (10,),
                             shards=(10,) if layout == "shards" else None, dtype="i4", fill_value=0,
                             config={"write_empty_chunks": False})
    b = zarrkit.open_array(store, path="a", mode="r+")
    a[0:5] = 1
    b_wrote = []

    def b_writes():
        b[5:10] = 7
        b_wrote.append(True)

    store.window = b_writes
    a[0:5] = 0
    if not b_wrote:
        b_writes()
    got = zarrkit.open_array(store, path="a", mode="r")[...]
    assert got.tolist() == [0] * 5 + [7] * 5
    if not atomic:
        assert store.deletes_of_key == 0
