"""A ``with zarrkit.config.set(...)`` block's settings stay in its scope: the thread or asyncio
task running the block, and the work it hands to zarrkit's threads.  Two blocks overlapping
in two tasks or two threads each leave with their own scope: after both have ended every
setting is what it was, so an opt-in to unsafe codecs never outlives its block (a stranger's
pickle array opened afterwards is refused, and runs nothing)."""

from __future__ import annotations

import asyncio
import json
import os
import pickle
import threading

import numpy as np
import pytest

import zarrkit
from zarrkit.api import asynchronous as async_api
from zarrkit.api.async_nodes import sync
from zarrkit.core import pool
from zarrkit.errors import MetadataError


class _WritesMarker:
    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def _pickle_store(marker: str) -> dict:
    meta = {"zarr_format": 2, "shape": [2], "chunks": [2], "dtype": "|O", "compressor": None,
            "fill_value": None, "order": "C", "filters": [{"id": "pickle", "protocol": 5}]}
    chunk = pickle.dumps(np.array([_WritesMarker(marker), 1], dtype=object))
    return {"a/.zarray": json.dumps(meta).encode(), "a/0": chunk}


def _assert_refused(tmp_path) -> None:
    marker = str(tmp_path / "ran")
    with pytest.raises(MetadataError, match="pickle"):
        zarrkit.open_array(_pickle_store(marker), path="a", mode="r")[:]
    assert not os.path.exists(marker), "the chunk's code ran"


def test_overlapping_blocks_in_two_asyncio_tasks_leave_nothing_behind(tmp_path):
    first_in, second_in = asyncio.Event(), asyncio.Event()
    seen = {}

    async def first():
        with zarrkit.config.set(allow_unsafe_codecs=True, max_chunk_bytes=1 << 40):
            first_in.set()
            await second_in.wait()  # the second block starts inside this one...
            seen["first"] = zarrkit.config.allow_unsafe_codecs
        seen["first after"] = zarrkit.config.allow_unsafe_codecs  # ...and ends after it

    async def second():
        await first_in.wait()
        seen["second before"] = zarrkit.config.allow_unsafe_codecs  # not the first's scope
        with zarrkit.config.set(allow_unsafe_codecs=True, max_chunk_bytes=1 << 41):
            second_in.set()
            await asyncio.sleep(0)
            seen["second"] = zarrkit.config.max_chunk_bytes

    async def main():
        await asyncio.gather(first(), second())

    before = zarrkit.config.max_chunk_bytes
    asyncio.run(main())
    assert seen == {"second before": False, "first": True, "second": 1 << 41, "first after": False}
    assert zarrkit.config.allow_unsafe_codecs is False
    assert zarrkit.config.max_chunk_bytes == before
    _assert_refused(tmp_path)


def test_overlapping_blocks_in_two_threads_leave_nothing_behind(tmp_path):
    first_in, second_in, second_out = threading.Event(), threading.Event(), threading.Event()
    seen = {}

    def first():
        with zarrkit.config.set(allow_unsafe_codecs=True, max_chunk_bytes=1 << 40):
            first_in.set()
            second_in.wait(10)
            seen["first"] = zarrkit.config.allow_unsafe_codecs
        second_out.wait(10)  # the first ends first, the second after it (the leaking order)...

    def second():
        first_in.wait(10)
        seen["second before"] = zarrkit.config.allow_unsafe_codecs
        with zarrkit.config.set(allow_unsafe_codecs=True, max_chunk_bytes=1 << 41):
            second_in.set()
            seen["second"] = zarrkit.config.max_chunk_bytes
        second_out.set()

    before = zarrkit.config.max_chunk_bytes
    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert seen == {"second before": False, "first": True, "second": 1 << 41}
    assert zarrkit.config.allow_unsafe_codecs is False
    assert zarrkit.config.max_chunk_bytes == before
    _assert_refused(tmp_path)


def test_a_block_in_one_thread_is_never_seen_by_another():
    stop = threading.Event()
    seen = []

    def watch():
        while not stop.is_set():
            seen.append(zarrkit.config.allow_unsafe_codecs)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        for _ in range(2000):
            with zarrkit.config.set(allow_unsafe_codecs=True):
                pass
    finally:
        stop.set()
        watcher.join(10)
    assert seen and not any(seen)


def test_a_change_outside_a_block_is_for_the_process():
    before = zarrkit.config.io_threads
    try:
        zarrkit.config.set(io_threads=7)
        got = []
        t = threading.Thread(target=lambda: got.append(zarrkit.config.io_threads))
        t.start()
        t.join(10)
        assert got == [7]
        scope = zarrkit.config.set(io_threads=9)  # made now, taken back when the block starts
        with scope:
            t = threading.Thread(target=lambda: got.append(zarrkit.config.io_threads))
            t.start()
            t.join(10)
            assert zarrkit.config.io_threads == 9
        assert got == [7, 7]
        assert zarrkit.config.io_threads == 7
    finally:
        zarrkit.config.set(io_threads=before)


def test_pool_tasks_see_the_block_they_were_started_in():
    with zarrkit.config.set(allow_unsafe_codecs=True, max_chunk_bytes=12345):
        got = pool.run_tasks(lambda _: (zarrkit.config.allow_unsafe_codecs,
                                        zarrkit.config.max_chunk_bytes,
                                        threading.current_thread().name), range(64), threads=4)
        seen = []
        pool.run_pipelined(iter(range(64)), lambda _: seen.append(
            (zarrkit.config.max_chunk_bytes, threading.current_thread().name)), threads=4)
    assert {g[:2] for g in got} == {(True, 12345)}
    assert any(name.startswith("zarrkit") for *_, name in got), "no task ran on the pool"
    assert {s[0] for s in seen} == {12345}
    # and outside the block, the pool's threads see the process's settings again
    after = pool.run_tasks(lambda _: zarrkit.config.allow_unsafe_codecs, range(64), threads=4)
    assert not any(after)


def test_a_chunk_read_in_a_block_uses_its_settings_on_the_pool():
    z = zarrkit.zeros((64,), chunks=(1,), dtype="f8")
    z[:] = np.arange(64)
    with zarrkit.config.set(threads=4, parallel_min_chunk_bytes=0):
        np.testing.assert_array_equal(z[:], np.arange(64))


def test_the_async_facade_runs_in_the_callers_scope(tmp_path):
    marker = str(tmp_path / "ran")

    async def opened():
        return await async_api.open_array(_pickle_store(marker), path="a", mode="r")

    async def main():
        with zarrkit.config.set(allow_unsafe_codecs=True):
            arr = await opened()
        return arr

    arr = asyncio.run(main())  # opened inside the block: allowed
    assert arr.shape == (2,)
    with zarrkit.config.set(allow_unsafe_codecs=True):  # sync() carries the caller's scope
        assert sync(opened()).shape == (2,)
    with pytest.raises(MetadataError, match="pickle"):
        sync(opened())
    assert zarrkit.config.allow_unsafe_codecs is False
