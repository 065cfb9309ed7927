#!/usr/bin/env python
"""Reading a whole array through zarr-python 3 stores adapted by zarrkit, against zarrkit's own
DirectoryStore and against zarr-python reading the same store.

Usage::

    python benchmarks/zarr_store_adapter.py [--runs 7]

Two arrays of 1000x1000 float64 (zstd, written once by zarrkit): 100 chunks of 100x100 (80 KB
each) and 10000 chunks of 10x10 (800 B each).  Readers, each timed ``--runs`` times in turns
(median shown, in ms):

* zarrkit, DirectoryStore;
* zarrkit, zarr-python's LocalStore (read synchronously on the calling threads: the store has
  ``get_sync``);
* zarrkit, the same LocalStore driven through zarr-python's event loop (as a store without
  synchronous reads is: Icechunk's, object stores);
* zarr-python, LocalStore;
* zarrkit and zarr-python, an Icechunk repository on the local file system (same data).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import icechunk
import numpy as np
import zarr
from zarr.storage import LocalStore

import zarrkit
from zarrkit.storage.zarr_store import ZarrStoreAdapter


def _through_the_loop(path: str) -> ZarrStoreAdapter:
    store = ZarrStoreAdapter(LocalStore(path, read_only=True))
    store._sync_io = False  # what a store without get_sync gets
    return store


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    tmp = tempfile.mkdtemp(prefix="zarrkit-adapter-bench-")
    data = np.random.default_rng(0).standard_normal((1000, 1000))
    for label, chunks in (("100 chunks of 80 KB", (100, 100)), ("10000 chunks of 800 B", (10, 10))):
        path = os.path.join(tmp, f"{chunks[0]}.zarr")
        zarrkit.create_array(path, shape=data.shape, chunks=chunks, dtype="f8")[:] = data
        repo = icechunk.Repository.create(
            icechunk.local_filesystem_storage(os.path.join(tmp, f"{chunks[0]}.icechunk"))
        )
        session = repo.writable_session("main")
        zarrkit.create_array(session.store, name="a", shape=data.shape, chunks=chunks,
                             dtype="f8")[:] = data
        session.commit("data")
        ice = repo.readonly_session(branch="main").store
        readers = {
            "zarrkit, DirectoryStore": zarrkit.open_array(zarrkit.DirectoryStore(path), mode="r"),
            "zarrkit, zarr LocalStore (get_sync)": zarrkit.open_array(
                LocalStore(path, read_only=True), mode="r"),
            "zarrkit, zarr LocalStore (event loop)": zarrkit.open_array(
                _through_the_loop(path), mode="r"),
            "zarr-python, zarr LocalStore": zarr.open_array(LocalStore(path, read_only=True), mode="r"),
            "zarrkit, Icechunk (event loop)": zarrkit.open_array(ice, path="a", mode="r"),
            "zarr-python, Icechunk": zarr.open_array(ice, path="a", mode="r"),
        }
        times: dict[str, list[float]] = {name: [] for name in readers}
        for name, array in readers.items():  # warm up, and check
            assert np.array_equal(array[:], data), name
        for _ in range(runs):
            for name, array in readers.items():
                t0 = time.perf_counter()
                array[:]
                times[name].append(time.perf_counter() - t0)
        print(f"{label} (median of {runs}, ms)")
        for name, ts in times.items():
            print(f"  {name:42s} {statistics.median(ts) * 1e3:9.1f}")


if __name__ == "__main__":
    main()
