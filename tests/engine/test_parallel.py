"""The parallel chunk paths: same results with one thread and many, out= honoured, and
complete chunks decoded straight into the output (no temporary per chunk, no full copies)."""

from __future__ import annotations

import threading
import tracemalloc

import numcodecs
import numpy as np
import pytest

import zarrkit
from zarrkit.errors import ShapeMismatchError
from zarrkit.storage import MemoryStore

LAYOUTS = {
    "v2": dict(zarr_format=2),
    "v3": dict(zarr_format=3),
    "v3-sharded": dict(zarr_format=3, shards=(32, 40)),
}


def make(layout, shape=(64, 80), chunks=(16, 20), dtype="f8", store=None):
    opts = dict(LAYOUTS[layout])
    store = MemoryStore() if store is None else store
    if "shards" in opts:
        return zarrkit.create_array(store, shape=shape, chunks=chunks, dtype=dtype, **opts)
    return zarrkit.create(shape=shape, chunks=chunks, dtype=dtype, store=store, **opts)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_one_thread_and_many_give_identical_results(layout):
    rng = np.random.default_rng(1)
    data = rng.standard_normal((64, 80))
    stores = []
    for threads in (1, 8):
        with zarrkit.config.set(threads=threads, parallel_min_chunk_bytes=0):
            store = MemoryStore()
            z = make(layout, store=store)
            z[:] = data
            z[3:50, 7:71] = data[3:50, 7:71] * 2  # partial chunks: read-modify-write
            z[::3, ::-2] = -1.0
            stores.append(store)
            got = [z[:], z[5:60:7, ::-3], z.oindex[[3, 1, 40], :], z.vindex[[0, 63], [79, 0]]]
            if threads == 1:
                first = got
            else:
                for a, b in zip(first, got):
                    assert a.tobytes() == b.tobytes()
    a, b = stores
    assert sorted(a) == sorted(b)
    for key in a:
        assert a[key] == b[key], key


@pytest.mark.parametrize("layout", LAYOUTS)
def test_tasks_run_on_several_threads(layout):
    seen: set[int] = set()
    barrier = threading.Barrier(2, timeout=5)
    waiting = [False]

    class MeetingStore(MemoryStore):
        """Reads wait until a second read is in flight (while ``waiting``)."""

        def _get(self, key, byte_range):
            if waiting[0]:
                seen.add(threading.get_ident())
                try:
                    barrier.wait()
                except threading.BrokenBarrierError:
                    pass
            return super()._get(key, byte_range)

    z = make(layout, store=MeetingStore())
    z[:] = 1.0
    waiting[0] = True
    with zarrkit.config.set(threads=4, parallel_min_chunk_bytes=0):
        assert (z[:] == 1.0).all()
    assert len(seen) >= 2


@pytest.mark.parametrize("layout", LAYOUTS)
def test_out_is_filled_and_returned(layout):
    z = make(layout)
    data = np.arange(64 * 80, dtype="f8").reshape(64, 80)
    z[:] = data
    out = np.full((64, 80), -1.0)
    res = z.get_basic_selection(Ellipsis, out=out)
    assert res is out and np.array_equal(out, data)
    out2 = np.empty((10, 5))
    assert z.get_basic_selection((slice(3, 13), slice(70, 75)), out=out2) is out2
    assert np.array_equal(out2, data[3:13, 70:75])
    out3 = np.empty(3)
    assert z.get_coordinate_selection(([1, 2, 3], [4, 5, 6]), out=out3) is out3
    assert np.array_equal(out3, data[[1, 2, 3], [4, 5, 6]])
    with pytest.raises(ShapeMismatchError):
        z.get_basic_selection(Ellipsis, out=np.empty((64, 79)))
    with pytest.raises(ShapeMismatchError):
        z.get_basic_selection(Ellipsis, out=np.empty((64, 80), dtype="f4"))


def _spy_blosc_decode(monkeypatch):
    """Record the destination of every Blosc decode (None: a new buffer), whichever way the
    codec chains call it (numcodecs' codec object, or zarrkit's direct c-blosc call)."""
    calls: list = []
    original = numcodecs.Blosc.decode
    original_decompress = zarrkit.codecs.blosc_fast.decompress_into

    def spy(self, buf, out=None):
        calls.append(out)
        return original(self, buf, out)

    def spy_decompress(source, dest):
        calls.append(dest)
        return original_decompress(source, dest)

    monkeypatch.setattr(numcodecs.Blosc, "decode", spy)
    for module in (zarrkit.codecs.v2, zarrkit.codecs.v3_builtin):
        monkeypatch.setattr(module, "blosc_decompress_into", spy_decompress)
    return calls


@pytest.mark.parametrize("layout", LAYOUTS)
def test_complete_chunks_decode_into_the_output(layout, monkeypatch):
    # row-block chunks are contiguous in a C-order result: decoded in place, no temporary
    store = MemoryStore()
    if layout == "v3-sharded":
        z = zarrkit.create_array(store, shape=(64, 80), chunks=(16, 80), shards=(32, 80), dtype="f8")
    else:
        z = make(layout, chunks=(16, 80), store=store)
    z[:] = np.random.default_rng(0).standard_normal((64, 80))
    calls = _spy_blosc_decode(monkeypatch)
    result = z[:]
    assert len(calls) == 4
    assert all(o is not None and np.shares_memory(o, result) for o in calls)
    calls.clear()
    rows = z[16:48]  # whole chunks inside a selection: still in place
    assert len(calls) == 2 and all(o is not None and np.shares_memory(o, rows) for o in calls)
    # part of a chunk: decoded into the worker's reusable buffer, not into fresh memory
    calls.clear()
    with zarrkit.config.set(threads=1):
        first = z[1:3, 1:3]
        second = z[5:7, 1:3]
    assert len(calls) == 2 and all(o is not None for o in calls)
    assert np.shares_memory(calls[0], calls[1])
    assert not np.shares_memory(calls[0], first) and not np.shares_memory(calls[1], second)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_reading_allocates_no_more_than_the_result_and_a_chunk_per_worker(layout):
    shape, chunks = (512, 512), (64, 64)
    if layout == "v3-sharded":
        z = zarrkit.create_array(MemoryStore(), shape=shape, chunks=chunks, shards=(256, 256), dtype="f8")
    else:
        z = make(layout, shape=shape, chunks=chunks)
    z[:] = np.random.default_rng(0).standard_normal(shape)
    nbytes = 512 * 512 * 8
    chunk = 64 * 64 * 8
    with zarrkit.config.set(threads=4, parallel_min_chunk_bytes=0):
        z[:]  # warm caches (metadata, pool)
        tracemalloc.start()
        try:
            result = z[:]
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert result.nbytes == nbytes
    # the shard layout also holds the compressed bytes of one shard per worker in flight
    extra = 4 * chunk + (4 * 256 * 256 * 8 if layout == "v3-sharded" else 0)
    assert peak <= 1.2 * nbytes + extra, (peak, nbytes)


class _SlowStore(MemoryStore):
    """A high-latency store that records how many requests are in flight at once."""

    high_latency = True

    def __init__(self):
        super().__init__()
        self.in_flight = 0
        self.max_in_flight = 0
        self.counter_lock = threading.Lock()
        self.slow = False

    def _get(self, key, byte_range):
        if not self.slow:
            return super()._get(key, byte_range)
        with self.counter_lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            threading.Event().wait(0.02)
            return super()._get(key, byte_range)
        finally:
            with self.counter_lock:
                self.in_flight -= 1


@pytest.mark.parametrize("sharded", [False, True])
def test_high_latency_stores_keep_many_requests_in_flight(sharded):
    store = _SlowStore()
    if sharded:
        z = zarrkit.create_array(store, shape=(256, 256), chunks=(16, 16), shards=(16, 32), dtype="f4")
    else:
        z = zarrkit.create_array(store, shape=(256, 256), chunks=(16, 16), dtype="f4")
    z[:] = 1.0
    store.slow = True
    with zarrkit.config.set(threads=2, io_threads=32):
        assert (z[:] == 1.0).all()  # 256 chunks (128 shards)
    assert store.max_in_flight >= 16


def test_single_items_of_any_selection_kind_are_scalars():
    z = zarrkit.create(shape=(4, 5), chunks=(2, 2), dtype="i4", store=MemoryStore())
    z[:] = np.arange(20).reshape(4, 5)
    for got in (z[1, 2], z.oindex[1, 2], z.get_orthogonal_selection((1, 2)), z.vindex[1, 2],
                z.get_coordinate_selection((1, 2))):
        assert isinstance(got, np.integer) and got == 7
    assert z[1:2, 2:3].shape == (1, 1)


def test_small_chunks_are_read_and_encoded_on_one_thread_unless_configured(monkeypatch):
    z = zarrkit.create(shape=(64, 64), chunks=(8, 8), dtype="u1", store=MemoryStore())  # 64 B
    z[:] = 3
    asked: list = []
    original = zarrkit.core.read.read_selection.__globals__["run_tasks"]

    def spy(fn, items, threads=None):
        asked.append(threads)
        return original(fn, items, threads)

    monkeypatch.setitem(zarrkit.core.read.read_selection.__globals__, "run_tasks", spy)
    with zarrkit.config.set(threads=4):
        assert (z[:] == 3).all()
        with zarrkit.config.set(parallel_min_chunk_bytes=0):
            assert (z[:] == 3).all()
        with zarrkit.config.set(parallel_min_chunk_bytes=64):  # not below: 64 is enough
            assert (z[:] == 3).all()
    assert asked == [1, None, None]
    asked.clear()
    write_globals = zarrkit.core.write.write_selection.__globals__
    monkeypatch.setitem(write_globals, "run_tasks", spy)
    pipelined = write_globals["run_pipelined"]

    def pipeline_spy(produced, consume, threads=None):
        asked.append("pipelined")
        return pipelined(produced, consume, threads)

    monkeypatch.setitem(write_globals, "run_pipelined", pipeline_spy)
    with zarrkit.config.set(threads=4):
        z[:] = 4  # writes of small chunks: encoded on one thread, stored on the others
        with zarrkit.config.set(parallel_min_chunk_bytes=0):
            z[:] = 5
    assert asked == ["pipelined", None]
    assert (z[:] == 5).all()
    with pytest.raises(ValueError, match="parallel_min_chunk_bytes"):
        zarrkit.config.set(parallel_min_chunk_bytes=-1).__enter__()
