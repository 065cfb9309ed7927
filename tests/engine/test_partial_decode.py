"""Reading part of a chunk decodes only the Blosc blocks holding it, chunk bytes are read and
encoded into reused buffers, and a parallel run shares its tasks with the calling thread."""

from __future__ import annotations

import struct
import threading

import numcodecs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrkit
from zarrkit.codecs import blosc as blosc_fast
from zarrkit.codecs.buffers import selection_span
from zarrkit.core.pool import run_tasks
from zarrkit.errors import ChunkDecodeError
from zarrkit.storage import DirectoryStore, MemoryStore

CNAMES = ["lz4", "zstd", "blosclz", "zlib", "lz4hc"]


def _frame(data: np.ndarray, cname="lz4", shuffle=1, blocksize=0, clevel=5) -> bytes:
    return numcodecs.Blosc(cname, clevel, shuffle, blocksize=blocksize).encode(data)


@settings(max_examples=300, deadline=None)
@given(
    cname=st.sampled_from(CNAMES),
    shuffle=st.sampled_from([0, 1, 2]),
    blocksize=st.sampled_from([0, 128, 256, 1000, 4096]),
    clevel=st.sampled_from([0, 1, 5, 9]),
    dtype=st.sampled_from(["u1", "<f4", "<i8", "V3"]),
    n=st.integers(1, 30_000),
    seed=st.integers(0, 2**32 - 1),
    data=st.data(),
)
def test_a_range_decodes_like_the_whole_frame(cname, shuffle, blocksize, clevel, dtype, n, seed, data):
    itemsize = np.dtype(dtype).itemsize
    rng = np.random.default_rng(seed)
    source = rng.integers(0, 40, size=n * itemsize, dtype=np.uint8)
    raw = _frame(source.view(dtype), cname, shuffle, blocksize, clevel)
    full = np.frombuffer(numcodecs.Blosc().decode(raw), dtype=np.uint8)
    assert np.array_equal(full, source)
    lo = data.draw(st.integers(0, full.size - 1))
    hi = data.draw(st.integers(lo + 1, full.size))
    out = np.full(full.size, 0xA5, dtype=np.uint8)
    if blosc_fast.decompress_range_into(raw, out, lo, hi):
        assert np.array_equal(out[lo:hi], full[lo:hi])
        _, _, bsize, _ = blosc_fast._HEADER.unpack_from(raw)
        flags = raw[2]
        if not flags & 0x02:  # compressed blocks: at most the blocks holding lo:hi are written
            written = np.flatnonzero(out != 0xA5)
            if written.size:
                assert written[0] >= lo // bsize * bsize
                assert written[-1] < -(-hi // bsize) * bsize
    else:
        assert (out == 0xA5).all()  # nothing written: the caller decodes the whole frame


def test_ranges_in_one_block_of_many_are_decoded_alone():
    data = np.arange(100_000, dtype="<f4")
    raw = _frame(data, blocksize=4096)
    bsize = blosc_fast._HEADER.unpack_from(raw)[2]
    assert bsize * 4 < data.nbytes
    out = np.zeros(data.size, dtype="<f4")
    assert blosc_fast.decompress_range_into(raw, out, 2 * bsize + 40, 2 * bsize + 400)
    b2 = slice(2 * bsize // 4, 3 * bsize // 4)
    assert np.array_equal(out[b2], data[b2])  # block 2, whole
    assert not out[: b2.start].any() and not out[b2.stop :].any()
    # every block needed: nothing done here
    assert not blosc_fast.decompress_range_into(raw, out, 0, out.nbytes)
    # one frame's decoded size is checked against the buffer
    with pytest.raises(ValueError, match="expected"):
        blosc_fast.decompress_range_into(raw, np.zeros(10, "<f4"), 0, 4)
    with pytest.raises(ValueError, match="compressed bytes"):
        blosc_fast.decompress_range_into(raw[:-1], out, 0, 4)


@pytest.mark.parametrize(
    "selection,expected",
    [
        ((slice(2, 5), 3), (2 * 80 + 3, 4 * 80 + 3 + 1)),
        ((slice(0, 10, 4), slice(5, 6)), (5, 8 * 80 + 5 + 1)),
        ((np.array([7, 3]), np.array([[1], [60]])), (3 * 80 + 1, 7 * 80 + 60 + 1)),
        ((slice(3, 3), 0), None),
        ((Ellipsis,), None),
    ],
)
def test_selection_span(selection, expected):
    strides = np.empty((10, 80), dtype="u1").strides
    assert selection_span(selection, strides, 1) == expected


LAYOUTS = {
    "v2-C": dict(zarr_format=2, order="C"),
    "v2-F": dict(zarr_format=2, order="F"),
    "v3": dict(zarr_format=3),
    "v3-sharded": dict(zarr_format=3, shards=(64, 60)),
}


def _blocky_array(layout, store):
    """An array whose 32x30 f4 chunks are Blosc frames of fifteen 256-byte blocks."""
    opts = dict(LAYOUTS[layout])
    if opts["zarr_format"] == 2:
        compressor = numcodecs.Blosc("lz4", 5, 1, blocksize=256)
        return zarrkit.create(shape=(100, 90), chunks=(32, 30), dtype="f4", store=store,
                              compressor=compressor, **opts)
    blosc = zarrkit.codecs.BloscCodec(cname="lz4", clevel=5, shuffle="shuffle",
                                                 typesize=4, blocksize=256)
    return zarrkit.create_array(store, shape=(100, 90), chunks=(32, 30), dtype="f4",
                                compressors=[blosc], **opts)


def _only_first_block_decodable(raw: bytes) -> bytes:
    """The Blosc frame ``raw`` with every block but the first made undecodable (the size of its
    first stream set far beyond the frame)."""
    nbytes, blocksize = struct.unpack_from("<II", raw, 4)
    nblocks = -(-nbytes // blocksize)
    starts = struct.unpack_from(f"<{nblocks}I", raw, 16)
    assert list(starts) == sorted(starts)  # the blocks one after the other
    out = bytearray(raw)
    for start in starts[1:]:
        struct.pack_into("<i", out, start, 0x7FFFFFFF)
    return bytes(out)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_small_reads_of_large_chunks_are_right(layout, tmp_path):
    z = _blocky_array(layout, DirectoryStore(str(tmp_path / "a")))
    data = np.random.default_rng(3).integers(0, 1000, size=z.shape).astype("f4")
    z[:] = data
    rng = np.random.default_rng(4)
    with zarrkit.config.set(threads=1):
        for _ in range(40):
            r0, c0 = int(rng.integers(0, 98)), int(rng.integers(0, 88))
            sel = (slice(r0, r0 + 2), slice(c0, c0 + 2))
            assert np.array_equal(z[sel], data[sel])
        assert np.array_equal(z.oindex[[5, 2, 9], [3, 1]], data[np.ix_([5, 2, 9], [3, 1])])
        assert np.array_equal(z.vindex[[40, 41], [50, 52]], data[[40, 41], [50, 52]])
        assert np.array_equal(z[::7, 1::9], data[::7, 1::9])
        assert np.array_equal(z[:], data)


@pytest.mark.parametrize("layout", ["v2-C", "v2-F", "v3"])
def test_small_reads_of_large_chunks_decode_only_the_blocks_they_need(layout, tmp_path, monkeypatch):
    # Blosc's own threads may store blocks out of order: compress on one thread
    monkeypatch.setattr(numcodecs.blosc, "use_threads", False)
    store = DirectoryStore(str(tmp_path / "a"))
    z = _blocky_array(layout, store)
    data = np.random.default_rng(3).integers(0, 1000, size=z.shape).astype("f4")
    z[:] = data
    key = "0.0" if layout.startswith("v2") else "c/0/0"
    store[key] = _only_first_block_decodable(store[key])
    # rows 0-1 of columns 0-1 lie in the first 256-byte block, in C order and in F order
    assert np.array_equal(z[0:2, 0:2], data[0:2, 0:2])
    assert np.array_equal(z[1, 1], data[1, 1])
    # reads needing another block meet the damage
    with pytest.raises(zarrkit.errors.ChunkDecodeError, match=key.replace(".", r"\.")):
        z[30:32, 28:30]
    with pytest.raises(zarrkit.errors.ChunkDecodeError):
        z[:32, :30]


@pytest.mark.parametrize("layout", ["v2-C", "v3"])
def test_corrupt_blocks_read_in_part_raise_chunk_decode_errors(layout, tmp_path):
    store = DirectoryStore(str(tmp_path / "a"))
    z = _blocky_array(layout, store)
    z[:] = np.random.default_rng(5).integers(0, 1000, size=z.shape).astype("f4")
    key = "0.0" if layout.startswith("v2") else "c/0/0"
    good = store[key]
    rng = np.random.default_rng(6)
    failures = 0
    for i in range(300):
        bad = bytearray(good)
        for pos in rng.integers(16, len(bad), size=int(rng.integers(1, 6))):
            bad[pos] = int(rng.integers(0, 256))
        store[key] = bytes(bad)
        r0, c0 = int(rng.integers(0, 31)), int(rng.integers(0, 29))
        try:
            z[r0 : r0 + 2, c0 : c0 + 2]  # garbage may decode; anything else must be typed
        except ChunkDecodeError as exc:
            assert key in str(exc)
            failures += 1
    assert failures > 0


def test_directory_store_hands_out_chunks_in_a_reused_buffer(tmp_path):
    store = DirectoryStore(str(tmp_path / "s"))
    store["a/0"] = b"x" * 1000
    store["a/1"] = b"y" * 10
    first = store.get_transient("a/0")
    assert bytes(first) == b"x" * 1000
    second = store.get_transient("a/1")
    assert bytes(second) == b"y" * 10
    assert bytes(first[:10]) == b"y" * 10  # the same buffer: a transient value is not kept
    assert store.get_transient("missing") is None
    assert store.get("a/0") == b"x" * 1000  # get() always returns a value of its own
    store["a/2"] = b""
    assert bytes(store.get_transient("a/2")) == b""
    with pytest.raises(zarrkit.errors.InvalidPathError):
        store.get_transient("../up")
    memory = MemoryStore()
    memory["k"] = b"v"
    assert memory.get_transient("k") == b"v"
    # small chunks: one read of at most limit + 1 bytes; a larger value is refused, unread
    assert store.get_upto("a/1", 100) == b"y" * 10
    for limit in (100, 999):
        with pytest.raises(zarrkit.errors.ChunkDecodeError, match="'a/0'.*more than the"):
            store.get_upto("a/0", limit)
    assert store.get_upto("a/0", 1000) == b"x" * 1000
    assert store.get_upto("missing", 10) is None
    assert store.get_upto("a", 10) is None  # a directory

    class Counting(DirectoryStore):  # a subclass reading its own way is asked every time
        reads = 0

        def _get(self, key, byte_range):
            Counting.reads += 1
            return super()._get(key, byte_range)

    counting = Counting(str(tmp_path / "s"))
    assert bytes(counting.get_transient("a/0")) == b"x" * 1000
    assert counting.get_upto("a/1", 100) == b"y" * 10
    assert Counting.reads == 2


def test_sharded_writes_go_to_the_store_in_parts_seen_by_subclasses(tmp_path):
    seen: list[str] = []

    class Recording(DirectoryStore):
        def set(self, key, value):
            seen.append(key)
            super().set(key, value)

    data = np.arange(64 * 60, dtype="f4").reshape(64, 60)
    for store in (DirectoryStore(str(tmp_path / "plain")), Recording(str(tmp_path / "rec"))):
        z = zarrkit.create_array(store, shape=(64, 60), chunks=(16, 20), shards=(32, 60), dtype="f4")
        z[:] = data
        assert np.array_equal(zarrkit.open_array(store, mode="r")[:], data)
    assert "c/0/0" in seen and "c/1/0" in seen


def test_one_inner_chunk_is_read_from_a_range_and_checked(tmp_path):
    store = DirectoryStore(str(tmp_path / "s"))
    z = zarrkit.create_array(store, shape=(64, 60), chunks=(16, 20), shards=(64, 60), dtype="f4")
    data = np.random.default_rng(7).standard_normal((64, 60)).astype("f4")
    z[:] = data
    assert np.array_equal(z[16:32, 20:40], data[16:32, 20:40])
    assert np.array_equal(z[17:19, 21:22], data[17:19, 21:22])
    shard = store["c/0/0"]
    store["c/0/0"] = shard[:100] + shard[-z.metadata.sharding.index_nbytes:]  # chunks cut off
    with pytest.raises(ChunkDecodeError, match="beyond the shard's end"):
        z[48:64, 40:60]


def test_a_run_shares_its_tasks_with_the_calling_thread():
    caller = threading.get_ident()
    seen: list[int] = []
    lock = threading.Lock()
    active = [0, 0]

    def task(i):
        with lock:
            active[0] += 1
            active[1] = max(active[1], active[0])
        threading.Event().wait(0.002)
        seen.append(threading.get_ident())
        with lock:
            active[0] -= 1
        return i * i

    with zarrkit.config.set(threads=3):
        assert run_tasks(task, range(60)) == [i * i for i in range(60)]
    assert caller in seen and len(set(seen)) >= 2
    assert active[1] <= 3  # the caller and two pool threads

    def failing(i):
        if i == 0:
            raise KeyError("first task fails")
        threading.Event().wait(0.01)
        return i

    done: list[int] = []

    def counted(i):
        out = failing(i)
        done.append(i)
        return out

    with zarrkit.config.set(threads=2), pytest.raises(KeyError, match="first task fails"):
        run_tasks(counted, range(200))
    assert len(done) < 199  # tasks not started when the first failed are dropped


def _in_a_thread(fn):
    out: list = []
    t = threading.Thread(target=lambda: out.append(fn()))
    t.start()
    t.join()
    return out[0]


@pytest.mark.parametrize("cname", CNAMES)
@pytest.mark.parametrize("shuffle", [-1, 0, 1, 2])
@pytest.mark.parametrize("dtype", ["u1", "<f4", "<i8"])
def test_transient_compression_makes_numcodecs_frames(cname, shuffle, dtype, monkeypatch):
    monkeypatch.setattr(numcodecs.blosc, "use_threads", None)  # numcodecs' default
    data = np.random.default_rng(8).integers(0, 50, size=70_000).astype(dtype)
    for blocksize in (0, 4096):
        codec = numcodecs.Blosc(cname, 5, shuffle, blocksize=blocksize)
        # outside the main thread numcodecs compresses with a context of one thread, as we do
        want = _in_a_thread(lambda: codec.encode(data))
        got = _in_a_thread(
            lambda: bytes(blosc_fast.compress_transient(
                data, cname.encode(), 5, shuffle, blocksize, data.dtype.itemsize))
        )
        assert got == want
    # on the main thread numcodecs would use Blosc's own threads: not done here
    assert blosc_fast.compress_transient(data, cname.encode(), 5, shuffle, 0, 1) is None
    with blosc_fast.no_blosc_threads():
        assert blosc_fast.compress_transient(data, cname.encode(), 5, shuffle, 0, 1) is not None


@pytest.mark.parametrize("layout", ["v2-C", "v2-F", "v3"])
def test_parallel_writes_store_frames_that_decode_to_the_data(layout, tmp_path):
    store = DirectoryStore(str(tmp_path / "a"))
    z = _blocky_array(layout, store)
    data = np.random.default_rng(9).integers(0, 1000, size=z.shape).astype("f4")
    with zarrkit.config.set(threads=3):
        z[:] = data  # encoded by the caller and two pool threads into their reused buffers
        z[32:64, 30:60] = data[32:64, 30:60] + 1
    want = data.copy()
    want[32:64, 30:60] += 1
    assert np.array_equal(zarrkit.open_array(store, mode="r")[:], want)
    import zarr

    assert np.array_equal(zarr.open_array(str(tmp_path / "a"), mode="r")[:], want)
    with zarrkit.config.set(threads=1):  # numcodecs alone (main thread): the same chunks
        z2 = _blocky_array(layout, DirectoryStore(str(tmp_path / "b")))
        z2[:] = want
    for key in store:
        if not key.startswith((".z", "zarr.json")):
            assert np.array_equal(
                np.frombuffer(numcodecs.Blosc().decode(store[key]), np.uint8),
                np.frombuffer(numcodecs.Blosc().decode(z2.store[key]), np.uint8),
            ), key


def test_directory_store_without_gathered_io(tmp_path, monkeypatch):
    # platforms without preadv/writev: whole values are read and parts written one by one
    monkeypatch.setattr(zarrkit.storage.fileio, "HAS_PREADV", False)
    monkeypatch.setattr(zarrkit.storage.fileio, "_HAS_WRITEV", False)
    store = DirectoryStore(str(tmp_path / "s"))
    store.set_parts("k", [b"ab", b"", b"cd" * 1000, memoryview(b"e")])
    assert store.get("k") == b"ab" + b"cd" * 1000 + b"e"
    assert bytes(store.get_transient("k")) == store.get("k")
