"""Writers whose picture of an array is out of date: handles opened through consolidated
metadata (a snapshot, which appends do not re-consolidate) and handles opened before another
writer changed the shape.  Every metadata read-modify-write -- append, resize, attributes,
fill value -- starts from the document as stored now, so none undoes another writer's work.
"""

from __future__ import annotations

import multiprocessing
import sys
from pathlib import Path

import numpy as np
import pytest

import zarrkit
from zarrkit.storage import CountingStore

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _sync_workers import ROWS, WIDTH, block, check_blocks, consolidated_append_process

SPAWN = multiprocessing.get_context("spawn")
FORMATS = [pytest.param(2, id="v2"), pytest.param(3, id="v3")]
SYNCS = [pytest.param(None, id="no-sync"), pytest.param(zarrkit.ThreadSynchronizer, id="thread-sync")]


def _consolidated_log(root: Path, zarr_format: int) -> None:
    """A hierarchy whose array ``a`` holds block (9, 0, 0), consolidated as it is now."""
    g = zarrkit.open_group(root, mode="w", zarr_format=zarr_format)
    a = g.create_dataset("a", shape=(0, WIDTH), chunks=(4, WIDTH), dtype="i4", fill_value=-1)
    a.append(block(9, 0, 0))
    zarrkit.consolidate_metadata(root)


def _other_writer(root: Path) -> zarrkit.Array:
    return zarrkit.open_array(root, path="a", mode="r+")


def _stored(root: Path) -> zarrkit.Array:
    return zarrkit.open_array(root, path="a", mode="r")


@pytest.mark.parametrize("sync", SYNCS)
@pytest.mark.parametrize("zarr_format", FORMATS)
def test_append_through_a_consolidated_handle_follows_the_other_writers_rows(tmp_path, zarr_format, sync):
    root = tmp_path / "root.zarr"
    _consolidated_log(root, zarr_format)
    mine = zarrkit.open_consolidated(root, mode="r+", synchronizer=sync and sync())["a"]
    _other_writer(root).append(block(1, 0, 0))
    _other_writer(root).append(block(1, 0, 1))
    assert mine.append(block(2, 0, 0)) == (4 * ROWS, WIDTH)
    data = _stored(root)[...]
    check_blocks(data, [(9, 0, 0), (1, 0, 0), (1, 0, 1), (2, 0, 0)])
    np.testing.assert_array_equal(data[-ROWS:], block(2, 0, 0))
    assert mine.shape == (4 * ROWS, WIDTH)  # the handle learnt the shape it extended


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_resize_through_a_consolidated_handle_deletes_only_outside_the_stored_shape(tmp_path, zarr_format):
    root = tmp_path / "root.zarr"
    _consolidated_log(root, zarr_format)
    mine = zarrkit.open_consolidated(root, mode="r+")["a"]
    other = _other_writer(root)
    for k in range(3):
        other.append(block(1, 0, k))  # rows 3..11: chunks 0, 1 and 2, outside the snapshot's grid
    # growing: the other writer's chunks are not leftovers of an interrupted resize
    mine.resize(20, WIDTH)
    data = _stored(root)[...]
    check_blocks(data[:12], [(9, 0, 0), (1, 0, 0), (1, 0, 1), (1, 0, 2)])
    assert (data[12:] == -1).all()
    # shrinking: only what lies outside the new shape goes
    stale = zarrkit.open_consolidated(root, mode="r+")["a"]
    _other_writer(root).resize(30, WIDTH)
    _other_writer(root)[20:30] = 5
    stale.resize(24, WIDTH)
    z = _stored(root)
    assert z.shape == (24, WIDTH)
    check_blocks(z[:12], [(9, 0, 0), (1, 0, 0), (1, 0, 1), (1, 0, 2)])
    assert (z[20:24] == 5).all()
    assert sorted(c for c, _ in z.iter_stored()) == [(0, 0), (1, 0), (2, 0), (5, 0)]


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_attribute_updates_through_a_consolidated_handle_undo_nothing(tmp_path, zarr_format):
    root = tmp_path / "root.zarr"
    _consolidated_log(root, zarr_format)
    group = zarrkit.open_consolidated(root, mode="r+")
    mine = group["a"]
    other = _other_writer(root)
    other.append(block(1, 0, 0))
    other.attrs["theirs"] = 1
    zarrkit.open_group(root, mode="r+").attrs["theirs"] = 1
    mine.attrs["mine"] = 2
    mine.attrs.update(also=3)
    group.attrs["mine"] = 2
    z = _stored(root)
    assert z.shape == (2 * ROWS, WIDTH)  # a v3 document holds the shape beside the attributes
    check_blocks(z[...], [(9, 0, 0), (1, 0, 0)])
    assert z.attrs.asdict() == {"theirs": 1, "mine": 2, "also": 3}
    assert zarrkit.open_group(root, mode="r").attrs.asdict() == {"theirs": 1, "mine": 2}
    other.append(block(1, 0, 1))
    mine.attrs.put({"only": 4})
    assert _stored(root).shape == (3 * ROWS, WIDTH)


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_fill_value_through_a_consolidated_handle_keeps_the_shape(tmp_path, zarr_format):
    root = tmp_path / "root.zarr"
    _consolidated_log(root, zarr_format)
    mine = zarrkit.open_consolidated(root, mode="r+")["a"]
    _other_writer(root).append(block(1, 0, 0))
    mine.fill_value = -2
    z = _stored(root)
    assert (z.shape, z.fill_value) == ((2 * ROWS, WIDTH), -2)
    check_blocks(z[...], [(9, 0, 0), (1, 0, 0)])


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_a_stale_handle_without_synchronizer_neither_overwrites_nor_deletes(tmp_path, zarr_format):
    path = tmp_path / "log.zarr"
    zarrkit.open_array(path, mode="w", shape=(0, WIDTH), chunks=(4, WIDTH), dtype="i4", fill_value=-1,
                       zarr_format=zarr_format)
    stale = zarrkit.open_array(path, mode="r+")
    other = zarrkit.open_array(path, mode="r+")
    other.append(block(1, 0, 0))
    stale.append(block(2, 0, 0))
    other.append(block(1, 0, 1))
    stale.resize(3 * ROWS + 1, WIDTH)
    z = zarrkit.open_array(path, mode="r")
    check_blocks(z[:3 * ROWS], [(1, 0, 0), (2, 0, 0), (1, 0, 1)])
    assert (z[3 * ROWS:] == -1).all()


@pytest.mark.parametrize("synchronized", [True, False])
@pytest.mark.parametrize("zarr_format", FORMATS)
def test_an_append_reads_the_metadata_document_once_and_data_access_never(zarr_format, synchronized):
    # with a synchronizer an append reads the document once; racing other writers without
    # one (on a store with versions) it also checks, before and after each chunk it merges
    # its rows into, that no other append has claimed them; a resize the same for the one
    # chunk whose elements past the old shape it clears
    store = CountingStore(zarrkit.MemoryStore())
    z = zarrkit.open_array(store, mode="w", shape=(0, WIDTH), chunks=(4, WIDTH), dtype="i4",
                           zarr_format=zarr_format,
                           synchronizer=zarrkit.ThreadSynchronizer() if synchronized else None)
    doc = "zarr.json" if zarr_format == 3 else ".zarray"
    checks = 0 if synchronized else 2 * -(-ROWS // 4)  # (before and after each chunk)

    def documents_read() -> int:
        n = sum(1 for key, _ in store.keys_read if key == doc)
        store.reset()
        return n

    store.reset()
    z.append(block(0, 0, 0))
    assert documents_read() == 1 + checks
    z.resize(2 * ROWS, WIDTH)
    assert documents_read() == 1 + (0 if synchronized else 2)
    z[ROWS:] = block(0, 0, 1)
    z[...]
    z.get_orthogonal_selection(([0, 4], slice(None)))
    assert documents_read() == 0


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_processes_appending_through_consolidated_and_plain_handles(tmp_path, zarr_format):
    root = tmp_path / "root.zarr"
    _consolidated_log(root, zarr_format)
    threads, appends = 2, 8
    start = SPAWN.Barrier(2)
    procs = [
        SPAWN.Process(target=consolidated_append_process,
                      args=(str(root), p, threads, appends, str(tmp_path / "sync"), start, p == 0))
        for p in range(2)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=60)
    assert [p.exitcode for p in procs] == [0, 0]
    expected = [(9, 0, 0)] + [(p, t, k) for p in range(2) for t in range(threads) for k in range(appends)]
    check_blocks(_stored(root)[...], expected)
