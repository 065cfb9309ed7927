"""Concurrent writers without a synchronizer: threads of one process and processes standing
in for machines, on stores with conditional writes.  Every partial chunk, shard and metadata
document is one read-modify-write conditioned on the version read, so no acknowledged write is
lost: every cell, row and attribute written is there at the end."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import zarrkit

WORKER = str(Path(__file__).with_name("_cas_workers.py"))
PIECE = 7  # elements per piece: pieces straddle chunks of 16 and shards of 64


def _stores(tmp_path):
    return {
        "memory": zarrkit.MemoryStore(),
        "directory": zarrkit.DirectoryStore(tmp_path / "d.zarr"),
    }


@pytest.mark.parametrize("store_kind", ["memory", "directory"])
@pytest.mark.parametrize("layout", ["v2", "v3", "sharded"])
def test_threads_writing_unaligned_pieces_lose_nothing(tmp_path, store_kind, layout):
    store = _stores(tmp_path)[store_kind]
    n = 8 * 40 * PIECE
    z = zarrkit.create_array(store, shape=(n,), chunks=(16,), shards=(64,) if layout == "sharded" else None,
                             dtype="i4", fill_value=0, zarr_format=2 if layout == "v2" else 3)

    def run(w: int) -> None:
        for i in range(w, n // PIECE, 8):
            z[i * PIECE : (i + 1) * PIECE] = np.arange(i * PIECE, (i + 1) * PIECE) + 1

    threads = [threading.Thread(target=run, args=(w,)) for w in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    got = zarrkit.open_array(store, mode="r")[:]
    assert int((got != np.arange(n) + 1).sum()) == 0


def _run_workers(args_of, nproc):
    procs = [subprocess.Popen([sys.executable, WORKER, *args_of(w)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) for w in range(nproc)]
    outs = [p.communicate(timeout=240) for p in procs]
    assert [p.returncode for p in procs] == [0] * nproc, [err.decode() for _, err in outs]
    return [out.decode() for out, _ in outs]


@pytest.mark.slow
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_processes_creating_one_name_make_it_once(tmp_path, zarr_format):
    # 4 processes each create the same 40 arrays with overwrite=False: each name is reported
    # created by exactly one of them, and holds that one's data
    path = str(tmp_path / "g.zarr")
    zarrkit.open_group(path, mode="w", zarr_format=zarr_format)
    nproc, names = 4, 40
    outs = _run_workers(lambda w: ["creations", path, str(w), str(names)], nproc)
    owner = {}
    for w, out in enumerate(outs):
        for n in out.split():
            assert int(n) not in owner, f"n{n} created by {owner[int(n)]} and {w}"
            owner[int(n)] = w
    assert sorted(owner) == list(range(names))
    root = zarrkit.open_group(path, mode="r")
    for n, w in owner.items():
        np.testing.assert_array_equal(root[f"n{n}"][:], np.full(8, w, "i4"))


@pytest.mark.slow
@pytest.mark.parametrize("layout", ["v2", "v3", "sharded"])
def test_processes_writing_unaligned_pieces_lose_nothing(tmp_path, layout):
    # 4 processes x 2 threads, no synchronizer, one directory store: 0 lost cells
    path = str(tmp_path / "a.zarr")
    nproc, n = 4, 8 * 30 * PIECE
    zarrkit.create_array(path, shape=(n,), chunks=(16,), shards=(64,) if layout == "sharded" else None,
                         dtype="i4", fill_value=0, zarr_format=2 if layout == "v2" else 3)
    _run_workers(lambda w: ["pieces", path, str(w), str(nproc), str(PIECE)], nproc)
    got = zarrkit.open_array(path, mode="r")[:]
    assert int((got != np.arange(n) + 1).sum()) == 0


@pytest.mark.slow
@pytest.mark.parametrize("layout", ["v2", "v3", "sharded"])
def test_processes_appending_lose_no_row_and_no_attribute(tmp_path, layout):
    # 4 processes x 2 threads appending a row and setting an attribute 10 times each: every
    # row appended is there once (no two appends claim the same rows, no loser's row is left
    # in a winner's) and every attribute update is kept
    path = str(tmp_path / "a.zarr")
    nproc, rounds = 4, 10
    zarrkit.create_array(path, shape=(0,), chunks=(3,), shards=(9,) if layout == "sharded" else None,
                         dtype="i4", fill_value=-1, zarr_format=2 if layout == "v2" else 3)
    _run_workers(lambda w: ["appends", path, str(w), str(rounds)], nproc)
    z = zarrkit.open_array(path, mode="r")
    tags = sorted(w * 1000 + t * 100 + k for w in range(nproc) for t in range(2) for k in range(rounds))
    assert sorted(z[:].tolist()) == tags
    assert len(z.attrs) == len(tags)


@pytest.mark.parametrize("sharded", [False, True])
def test_threads_appending_lose_no_row(tmp_path, sharded):
    store = zarrkit.DirectoryStore(tmp_path / "a.zarr")
    zarrkit.create_array(store, shape=(0,), chunks=(3,), shards=(9,) if sharded else None, dtype="i4",
                         fill_value=-1)

    def run(w: int) -> None:
        z = zarrkit.open_array(store, mode="r+")
        for k in range(8):
            z.append(np.array([w * 100 + k]))

    threads = [threading.Thread(target=run, args=(w,)) for w in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    got = zarrkit.open_array(zarrkit.DirectoryStore(tmp_path / "a.zarr"), mode="r")[:]
    assert sorted(got.tolist()) == sorted(w * 100 + k for w in range(8) for k in range(8))


def test_attribute_updates_from_threads_are_all_kept(tmp_path):
    for store in _stores(tmp_path).values():
        g = zarrkit.group(store=store, zarr_format=3)
        a = g.create_array("a", shape=(4,), chunks=(2,), dtype="u1")

        def run(w: int, a: zarrkit.Array = a) -> None:
            for k in range(25):
                a.attrs[f"{w}-{k}"] = k

        threads = [threading.Thread(target=run, args=(w,)) for w in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(zarrkit.open_array(store, path="a", mode="r").attrs) == 150


def test_a_store_without_versions_still_reads_merges_and_writes(tmp_path):
    # a plain mapping has no conditional writes: one writer's partial writes work as before
    store = zarrkit.storage.MappingStore({}) if hasattr(zarrkit.storage, "MappingStore") else {}
    z = zarrkit.create_array(store, shape=(30,), chunks=(16,), dtype="i4", fill_value=0)
    assert not z.store.supports_conditional_writes
    z[3:20] = 5
    z[10:12] = 7
    expected = np.zeros(30, "i4")
    expected[3:20] = 5
    expected[10:12] = 7
    np.testing.assert_array_equal(z[:], expected)
