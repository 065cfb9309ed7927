"""The parallel chunk paths: same results with one thread and many, out= honoured, and
complete chunks decoded straight into the output (no temporary per chunk, no full copies)."""

from __future__ import annotations

import threading
import tracemalloc

import numcodecs
import numpy as np
import pytest

import zarrkit
from zarrkit.core.read import RUN_BYTES
from zarrkit.errors import ShapeMismatchError
from zarrkit.storage import MemoryStore

LAYOUTS = {
    "v2": dict(zarr_format=2),
    # (Blosc, as v2's default: v3's default, zstd, is read through its own batch path)
    "v3": dict(zarr_format=3, compressor=numcodecs.Blosc()),
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


def _peak_allocation(read) -> int:
    """The most memory allocated at once while ``read()`` runs (numpy buffers included)."""
    tracemalloc.start()
    try:
        read()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("layout", LAYOUTS)
def test_complete_chunks_decode_into_the_output(layout):
    # row-block chunks are contiguous in a C-order result: decoded in place, no temporary
    store = MemoryStore()
    if layout == "v3-sharded":
        z = zarrkit.create_array(store, shape=(64, 800), chunks=(16, 800), shards=(32, 800), dtype="f8")
    else:
        z = make(layout, shape=(64, 800), chunks=(16, 800), store=store)
    data = np.broadcast_to(np.arange(64.0)[:, None], (64, 800)).copy()  # compresses to little
    z[:] = data
    chunk = 16 * 800 * 8
    out = np.empty((64, 800))
    rows = np.empty((32, 800))
    with zarrkit.config.set(threads=1):
        z.get_basic_selection(Ellipsis, out=out)  # warm caches (metadata, buffers)
        assert _peak_allocation(lambda: z.get_basic_selection(Ellipsis, out=out)) < chunk / 2
        # whole chunks inside a selection: still in place
        assert _peak_allocation(lambda: z.get_basic_selection(slice(16, 48), out=rows)) < chunk / 2
        # part of a chunk: decoded into the thread's reusable buffer, not into fresh memory
        z[1:3, 1:3]
        assert _peak_allocation(lambda: z[5:7, 1:3]) < chunk / 2
    assert np.array_equal(out, data) and np.array_equal(rows, data[16:48])


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
    # the shard layout also holds the compressed bytes of one shard per worker in flight, and
    # each worker's buffer for a batch of inner chunks decoded together
    extra = 4 * chunk + (4 * 256 * 256 * 8 + 4 * RUN_BYTES if layout == "v3-sharded" else 0)
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


class ThreadRecordingStore(MemoryStore):
    """Records which thread reads each value, and how values are written (one ``set`` per
    chunk, or ``set_many`` batches); reads meet at a barrier while ``meet`` is set, so a run
    on several threads is seen as one."""

    def __init__(self):
        super().__init__()
        self.readers: set[int] = set()
        self.writes: list[tuple[str, int]] = []
        self.meet: threading.Barrier | None = None
        self._batch = threading.local()

    def _get(self, key, byte_range):
        self.readers.add(threading.get_ident())
        if self.meet is not None:
            try:
                self.meet.wait()
            except threading.BrokenBarrierError:
                pass
        return super()._get(key, byte_range)

    def set(self, key, value):
        if not getattr(self._batch, "on", False):
            self.writes.append(("set", 1))
        super().set(key, value)

    def set_many(self, items):
        self.writes.append(("set_many", len(items)))
        self._batch.on = True
        try:
            super().set_many(items)
        finally:
            self._batch.on = False


def test_small_chunks_are_read_and_encoded_on_one_thread_unless_configured():
    store = ThreadRecordingStore()
    z = zarrkit.create(shape=(64, 64), chunks=(8, 8), dtype="u1", store=store,
                       compressor=numcodecs.Blosc())  # 64 B chunks (zstd has its own batch path)
    z[:] = 3
    with zarrkit.config.set(threads=4):
        store.readers.clear()
        assert (z[:] == 3).all()
        assert store.readers == {threading.get_ident()}  # one thread: the caller
        for limit in (0, 64):  # 0: always parallel; 64: the chunks are not below it
            store.readers.clear()
            store.meet = threading.Barrier(2, timeout=5)
            with zarrkit.config.set(parallel_min_chunk_bytes=limit):
                assert (z[:] == 3).all()
            store.meet = None
            assert len(store.readers) >= 2, limit
        # writes of small chunks: encoded on the calling thread a batch at a time, stored in
        # batches; with every chunk in parallel, one store write per chunk
        store.writes.clear()
        z[:] = 4
        assert store.writes == [("set_many", 64)]
        store.writes.clear()
        with zarrkit.config.set(parallel_min_chunk_bytes=0):
            z[:] = 5
        assert store.writes == [("set", 1)] * 64
    assert (z[:] == 5).all()
    with pytest.raises(ValueError, match="parallel_min_chunk_bytes"):
        zarrkit.config.set(parallel_min_chunk_bytes=-1).__enter__()
