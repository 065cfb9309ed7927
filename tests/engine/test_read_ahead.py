"""Reads of large chunks ask the store for the chunks a window ahead (``Store.prefetch``) before
each task reads its own, so that a local directory has the system read the files from disk
meanwhile: every chunk asked for once, before it is read; never for small chunks, nor for
stores that keep requests in flight themselves; whole shards asked for by their key, parts of
shards not.  (What a directory store does when asked, and reads from disk with read-ahead in
play: tests/adversarial/test_read_ahead_attack.py.)"""

from __future__ import annotations

import contextlib
import threading

import numpy as np
import pytest

import zarrkit
import zarrkit.core.read as read_mod
from zarrkit.storage import MemoryStore


class RecordingStore(MemoryStore):
    """Records, in order, the keys asked for ahead and the chunks read; answers that it is
    fetching a value unless ``at_hand`` says it has it."""

    def __init__(self, high_latency: bool = False, at_hand=lambda key: False):
        super().__init__()
        self.events: list[tuple[str, str]] = []
        self.record = threading.Lock()
        self.high_latency = high_latency
        self.at_hand = at_hand  # which values the store has at hand (answers False for)

    def prefetch(self, keys):
        keys = list(keys)
        with self.record:
            self.events.extend(("prefetch", k) for k in keys)
        return not all(self.at_hand(k) for k in keys)

    def _get(self, key, byte_range):
        if key.startswith("c"):
            with self.record:
                self.events.append(("get", key))
        return super()._get(key, byte_range)


@contextlib.contextmanager
def read_ahead_for_small_arrays(window_bytes: int):
    """Thresholds that make a small test array's chunks count as large (module settings)."""
    names = ("READ_AHEAD_MIN_BYTES", "READ_AHEAD_BYTES", "ROW_MIN_CHUNK_BYTES", "TINY_BATCHED_MIN_CHUNKS")
    saved = [getattr(read_mod, name) for name in names]
    # (compressed chunks under ROW_MIN_CHUNK_BYTES, and many tiny ones, are read in batches:
    # see test_small_chunk_rows)
    for name, value in zip(names, (1, window_bytes, 0, 1 << 62)):
        setattr(read_mod, name, value)
    try:
        yield
    finally:
        for name, value in zip(names, saved):
            setattr(read_mod, name, value)


def _stored(store):
    return sorted(k for k in store.list_prefix("c"))


@pytest.mark.parametrize("compressors", [None, "zstd"])
@pytest.mark.parametrize("threads", [1, 2, 4])
@pytest.mark.parametrize("shape,chunks", [((64, 48), (8, 8)), ((200,), (16,)), ((12, 10, 9), (4, 5, 3))])
def test_every_chunk_asked_for_once_before_it_is_read(compressors, threads, shape, chunks):
    store = RecordingStore()
    data = np.arange(np.prod(shape), dtype="f8").reshape(shape)
    codec = zarrkit.codecs.ZstdCodec(level=1) if compressors else None
    a = zarrkit.create_array(store, shape=shape, chunks=chunks, dtype="f8", compressors=codec, fill_value=0)
    a[...] = data
    # a few chunks never written: asked for (the engine cannot know), read as the fill value
    gone = _stored(store)[1::5]
    for k in gone:
        store.delete(k)
        data[tuple(slice(i * c, (i + 1) * c) for i, c in zip(map(int, k.split("/")[1:]), chunks))] = 0
    store.events.clear()
    chunk_bytes = int(np.prod(chunks)) * 8
    with read_ahead_for_small_arrays(3 * chunk_bytes), zarrkit.config.set(threads=threads):
        got = a[...]
    np.testing.assert_array_equal(got, data)
    asked = [k for e, k in store.events if e == "prefetch"]
    read = [k for e, k in store.events if e == "get"]
    n_chunks = int(np.prod([-(-s // c) for s, c in zip(shape, chunks)]))
    assert len(asked) == n_chunks and len(set(asked)) == n_chunks  # each once
    assert set(read) | set(gone) <= set(asked)
    first_asked = {}
    for i, (e, k) in enumerate(store.events):
        if e == "prefetch":
            first_asked.setdefault(k, i)
        else:
            assert first_asked.get(k, len(store.events)) < i, f"chunk {k} read before it was asked for"


def test_the_window_stays_ahead_by_its_bytes():
    """One thread: before the i-th chunk is read, the chunks up to the window's bytes beyond
    it have been asked for, and no more."""
    store = RecordingStore()
    a = zarrkit.create_array(store, shape=(400,), chunks=(10,), dtype="i8", compressors=None, fill_value=0)
    a[...] = np.arange(400)
    store.events.clear()
    window = 1 + 4  # the one worker's task, and READ_AHEAD_BYTES of chunks (4 of 80 bytes)
    with read_ahead_for_small_arrays(4 * 80), zarrkit.config.set(threads=1):
        np.testing.assert_array_equal(a[...], np.arange(400))
    asked = reads = 0
    for e, _ in store.events:
        if e == "prefetch":
            asked += 1
        else:
            assert min(40, reads + 1) <= asked <= min(40, window + reads + 1)
            reads += 1
    assert (asked, reads) == (40, 40)


@pytest.mark.parametrize("threads", [1, 2])
def test_while_every_value_is_at_hand_only_a_sample_is_asked_for(threads):
    store = RecordingStore(at_hand=lambda key: True)
    n = 80 * 2560  # 80 chunks of 20 KiB (chunks under config.parallel_min_chunk_bytes are read on one thread)
    a = zarrkit.create_array(store, shape=(n,), chunks=(2560,), dtype="i8", compressors=None, fill_value=0)
    a[...] = np.arange(n)
    store.events.clear()
    with read_ahead_for_small_arrays(4 * 20480), zarrkit.config.set(threads=threads):
        np.testing.assert_array_equal(a[...], np.arange(n))
    asked = [k for e, k in store.events if e == "prefetch"]
    window = threads + read_mod.READ_AHEAD_SAMPLE
    assert len(asked) == len(set(asked))
    assert len(asked) <= window + 80 // read_mod.READ_AHEAD_SAMPLE + 1
    assert {f"c/{i}" for i in range(window)} <= set(asked)


@pytest.mark.parametrize("threads", [1, 2])
def test_once_a_value_is_not_at_hand_every_chunk_from_there_is_asked_for(threads):
    """The first 30 chunks are at hand, the rest are not: every one of the rest is asked for
    before it is read."""
    store = RecordingStore(at_hand=lambda key: int(key.split("/")[1]) < 30)
    n = 80 * 2560  # 80 chunks of 20 KiB (chunks under config.parallel_min_chunk_bytes are read on one thread)
    a = zarrkit.create_array(store, shape=(n,), chunks=(2560,), dtype="i8", compressors=None, fill_value=0)
    a[...] = np.arange(n)
    store.events.clear()
    with read_ahead_for_small_arrays(4 * 20480), zarrkit.config.set(threads=threads):
        np.testing.assert_array_equal(a[...], np.arange(n))
    first_asked: dict[str, int] = {}
    for i, (e, k) in enumerate(store.events):
        if e == "prefetch":
            first_asked.setdefault(k, i)
        elif int(k.split("/")[1]) >= 30 + 2 * read_mod.READ_AHEAD_SAMPLE + threads:
            assert first_asked.get(k, len(store.events)) < i, f"chunk {k} read before it was asked for"


def test_small_chunks_are_not_asked_for():
    store = RecordingStore()
    a = zarrkit.create_array(store, shape=(256, 256), chunks=(32, 32), dtype="f8", fill_value=0)
    a[...] = 1.0
    store.events.clear()
    assert (a[...] == 1.0).all()
    assert not [k for e, k in store.events if e == "prefetch"]
    assert [k for e, k in store.events if e == "get"]


def test_stores_keeping_requests_in_flight_are_not_asked():
    store = RecordingStore(high_latency=True)
    a = zarrkit.create_array(store, shape=(64, 64), chunks=(16, 16), dtype="f8", compressors=None, fill_value=0)
    a[...] = 2.0
    store.events.clear()
    with read_ahead_for_small_arrays(1 << 20):
        assert (a[...] == 2.0).all()
    assert not [k for e, k in store.events if e == "prefetch"]


@pytest.mark.parametrize("compressors", [None, "zstd"])
def test_whole_shards_are_asked_for_by_their_key_parts_are_not(compressors):
    store = RecordingStore()
    data = np.arange(64 * 64, dtype="u2").reshape(64, 64)
    codec = zarrkit.codecs.ZstdCodec(level=1) if compressors else None
    a = zarrkit.create_array(store, shape=(64, 64), chunks=(8, 8), shards=(16, 32), dtype="u2",
                             compressors=codec, fill_value=0)
    a[...] = data
    shards = _stored(store)
    store.events.clear()
    with read_ahead_for_small_arrays(1):
        np.testing.assert_array_equal(a[...], data)
        asked = [k for e, k in store.events if e == "prefetch"]
        assert sorted(asked) == shards  # each shard once, by its own key
        store.events.clear()
        np.testing.assert_array_equal(a[3:40, 5:60], data[3:40, 5:60])  # parts of shards
        assert not [k for e, k in store.events if e == "prefetch"]
