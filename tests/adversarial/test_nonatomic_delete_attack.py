"""Deletes a shape change makes on a store whose conditional delete is a version check and then a
delete (obstore's): a write landing between the two goes with the delete.

The store below opens that window every time: its ``delete_if`` reads the version, runs the
writer waiting in the window (once), then deletes.  A store that deletes atomically is the
control.  An append whose rows land in the window, and whose shape is written there, must find
its rows where it put them afterwards:

* a shrink deletes, once its shape is shown, the objects wholly outside it -- and an append
  after it writes its rows into one of them;
* a resize deletes, before its shape, the objects left outside the grid by an earlier one (an
  interrupted resize, ``delete_outside_chunks=False``) -- and an append racing it, which read
  the same shape, writes its rows into one of them and wins.

An append that lost its race and takes back the chunk it created writes the fill value into
its rows there instead of deleting it: on the condition that the chunk is the version it wrote,
so that another append's rows merged in right after its read stay, equal to its own or not.
A put-back failing midway leaves none of the loser's rows to be seen.

Also here: every store wrapping another says whether the deletes under it are atomic.
"""

from __future__ import annotations

import numpy as np
import pytest
from _check_then_delete import CheckThenDelete, inner_store  # (a sibling module)

import zarrkit
from zarrkit.errors import StoreError
from zarrkit.storage import LRUStoreCache, MemoryStore, ObjectStore
from zarrkit.storage.cache import CacheStore
from zarrkit.storage.store_path import PrefixStore
from zarrkit.storage.wrappers import CountingStore, LatencyStore, ReadOnlyStore


def _setup(tmp_path, kind, atomic, layout, shape):
    # chunks of 5 (layout "shards": shards of 10 of inner chunks of 5); the object watched is
    # the second one
    store = CheckThenDelete(inner_store(kind, tmp_path), "a/c/1", atomic)
    a = zarrkit.create_array(store, name="a", shape=shape, chunks=(5,), dtype="i4", fill_value=-1,
                             shards=(10,) if layout == "shards" else None)
    a[...] = np.arange(shape[0], dtype="i4")
    return store, a


@pytest.mark.parametrize("kind", ["memory", "sqlite"])  # versions: objects, contents
@pytest.mark.parametrize("atomic", [False, True])
@pytest.mark.parametrize("layout", ["chunks", "shards"])
def test_a_shrink_deleting_outside_keeps_an_append_after_it(tmp_path, kind, atomic, layout):
    per = 5 if layout == "chunks" else 10
    store, a = _setup(tmp_path, kind, atomic, layout, (2 * per,))
    w = zarrkit.open_array(store, path="a", mode="r+")
    rows = np.array([100, 101], dtype="i4")
    appended = []

    def append():
        w.append(rows)
        appended.append(True)

    store.window = append  # the shrink deleting the object past its shape: W appends into it
    with zarrkit.config.set(threads=1):
        a.resize(per)
        if not appended:
            append()
    got = zarrkit.open_array(store, path="a", mode="r")[...]
    assert got.tolist() == list(range(per)) + [100, 101]
    if not atomic:  # the window was never opened: no object an append may write is deleted
        assert store.deletes_of_key == 0


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
@pytest.mark.parametrize("atomic", [False, True])
@pytest.mark.parametrize("layout", ["chunks", "shards"])
def test_a_resize_deleting_leftovers_keeps_an_append_racing_it(tmp_path, kind, atomic, layout):
    per = 5 if layout == "chunks" else 10
    store, a = _setup(tmp_path, kind, atomic, layout, (2 * per,))
    a.resize(per, delete_outside_chunks=False)  # the second object is left outside the grid
    w = zarrkit.open_array(store, path="a", mode="r+")
    rows = np.array([100, 101], dtype="i4")
    appended = []

    def append():
        w.append(rows)
        appended.append(True)

    store.window = append  # R deleting the leftover: W, which read the same shape, appends
    with zarrkit.config.set(threads=1):
        a.resize(per + per // 2 + 2)
        if not appended:
            append()
    got = zarrkit.open_array(store, path="a", mode="r")[...]
    assert got[:per].tolist() == list(range(per)), got.tolist()
    where = np.flatnonzero(np.isin(got, rows))
    assert len(where) == 2 and got[where].tolist() == [100, 101] and where[1] == where[0] + 1, got.tolist()
    rest = np.delete(got[per:], where - per)
    assert (rest == -1).all(), got.tolist()  # (nothing of the rows the first resize cut off)
    if not atomic:
        assert store.deletes_of_key == 0


@pytest.mark.parametrize("atomic", [False, True])
@pytest.mark.parametrize("layout", ["chunks", "shards"])
def test_a_shrink_still_clears_what_it_cuts_off(tmp_path, atomic, layout):
    # the objects wholly outside a shrunk shape hold nothing of it afterwards, deleted or not:
    # growing over them without clearing them shows what is stored, the fill value
    per = 5 if layout == "chunks" else 10
    store, a = _setup(tmp_path, "memory", atomic, layout, (3 * per,))
    a.resize(per)
    a.resize(3 * per, delete_outside_chunks=False)
    assert a[...].tolist() == list(range(per)) + [-1] * (2 * per)
    assert zarrkit.open_array(store, path="a", mode="r").nchunks_initialized <= (1 if atomic else 3) * (per // 5)


def test_wrappers_say_the_deletes_under_them_are_not_atomic(tmp_path):
    obstore = pytest.importorskip("obstore.store")
    base = ObjectStore(obstore.MemoryStore())
    assert base.atomic_deletes is False and base.supports_conditional_writes
    wrapped = [PrefixStore(base, "p"), CountingStore(base), LatencyStore(base, 0.0), ReadOnlyStore(base),
               LRUStoreCache(base, max_size=1 << 20), CacheStore(base, cache_store=MemoryStore())]
    for store in wrapped:
        assert store.atomic_deletes is False, type(store).__name__
    z = zarrkit.create_array(PrefixStore(base, "p"), name="a", shape=(4,), chunks=(2,), dtype="i4")
    assert z._ctx.store.atomic_deletes is False


class FailingPutBack(CheckThenDelete):
    """A :class:`CheckThenDelete` whose conditional write or delete of ``key`` after
    ``after_set`` has run fails (once), as a store failing mid put-back does."""

    def __init__(self, inner, key, atomic):
        super().__init__(inner, key, atomic)
        self.armed = False

    def after_set_ran(self):
        self.armed = True

    def _fail(self, key):
        if key == self.key and self.armed:
            self.armed = False
            raise StoreError("the store went away", key)

    def _set_if(self, key, value, version):
        self._fail(key)
        return super()._set_if(key, value, version)

    def _delete_if(self, key, version):
        self._fail(key)
        return super()._delete_if(key, version)


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
@pytest.mark.parametrize("atomic", [False, True])
def test_a_put_back_failing_midway_shows_none_of_the_losers_rows(tmp_path, kind, atomic):
    # L appends 7 rows (chunks of 5) and has just written the second chunk when W wins the
    # shape with 2 rows; L's put-back of the second chunk fails, so L fails.  M appends one
    # row after W, then the array grows: only W's and M's rows show, the rest the fill value
    store = FailingPutBack(inner_store(kind, tmp_path), "a/c/1", atomic)
    zarrkit.create_array(store, name="a", shape=(0,), chunks=(5,), dtype="i4", fill_value=-1)
    handle = {w: zarrkit.open_array(store, path="a", mode="r+") for w in "LWM"}
    store.after_set = lambda: handle["W"].append(np.array([200, 201], dtype="i4"))
    with zarrkit.config.set(threads=1):
        with pytest.raises(StoreError, match="went away"):
            handle["L"].append(np.arange(100, 107, dtype="i4"))
        handle["M"].append(np.array([300], dtype="i4"))
        handle["M"].resize(12)
    got = zarrkit.open_array(store, path="a", mode="r")[...]
    assert got.tolist() == [200, 201, 300] + [-1] * 9


class ReadThenWindow(CheckThenDelete):
    """A :class:`CheckThenDelete` whose read of ``key`` with its version, after ``after_set``
    has run, runs ``window`` (once) once it has read -- the put-back's read, and another
    writer right after it."""

    def __init__(self, inner, key, atomic):
        super().__init__(inner, key, atomic)
        self.armed = False

    def after_set_ran(self):
        self.armed = True

    def _get_versioned(self, key, limit):
        got = self.inner.get_versioned(key, limit)
        if key == self.key and self.armed and self.window is not None:
            self.armed = False
            run, self.window = self.window, None
            run()
        return got


@pytest.mark.parametrize("atomic", [False, True])
def test_a_put_back_keeps_equal_rows_another_append_merged_after_its_read(atomic):
    # L appends 7 rows (chunks of 5) and has just created the second chunk when W wins the
    # shape with 2 rows; right after L's put-back read the chunk, M appends after W the
    # values L wrote at those rows (rows 2 to 6).  M's rows stay, equal to L's or not.
    # (Where versions are contents that is the documented limit: not run here.)
    store = ReadThenWindow(MemoryStore(), "a/c/1", atomic)
    zarrkit.create_array(store, name="a", shape=(0,), chunks=(5,), dtype="i4", fill_value=-1)
    handle = {w: zarrkit.open_array(store, path="a", mode="r+") for w in "LWM"}
    landed = []

    def append(w, rows):
        handle[w].append(np.array(rows, dtype="i4"))
        landed.append(w)

    store.after_set = lambda: append("W", [200, 201])
    store.window = lambda: append("M", list(range(102, 107)))
    with zarrkit.config.set(threads=1):
        append("L", list(range(100, 107)))
        if "M" not in landed:
            append("M", list(range(102, 107)))
    got = zarrkit.open_array(store, path="a", mode="r")[...].tolist()
    assert landed[:2] == ["W", "M"], landed
    # (L appends again after them, unless it gave up)
    assert got[:7] == [200, 201, 102, 103, 104, 105, 106], got
    assert got[7:] in ([], list(range(100, 107))), got
