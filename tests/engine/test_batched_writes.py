"""Writes of small chunks: encoded a batch at a time on the calling thread while pool threads
store the batches before (``run_pipelined`` + ``Store.set_many``), or stored by the calling
thread too where the store's writes contend with each other (a DirectoryStore)."""

from __future__ import annotations

import os
import threading

import numcodecs
import numpy as np
import pytest

import zarrkit
from zarrkit.core.pool import run_pipelined
from zarrkit.core.write import WRITE_BATCH
from zarrkit.errors import StoreError
from zarrkit.storage import DirectoryStore, MemoryStore
from zarrkit.storage.local import TEMP_MARKER


def _stored(store) -> dict[str, bytes]:
    return {k: bytes(store[k]) for k in store.list_prefix("")}


def _temp_files(root) -> list[str]:
    """Temporary files and directories below ``root``."""
    return [n for _, dirs, names in os.walk(root) for n in dirs + names if n.startswith(TEMP_MARKER)]


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("shape", [(100, 70), (96, 64)])  # with and without edge chunks
def test_small_chunk_writes_store_the_same_bytes_with_one_thread_and_many(tmp_path, fmt, shape):
    rng = np.random.default_rng(3)
    data = rng.integers(0, 9, shape).astype("i2")
    stored = []
    for threads in (1, 2, 5):
        with zarrkit.config.set(threads=threads):
            store = DirectoryStore(tmp_path / f"t{threads}")
            z = zarrkit.create(shape=shape, chunks=(8, 8), dtype="i2", store=store, zarr_format=fmt)
            z[:] = data
            z[3:50, 5:41] = -data[3:50, 5:41]  # partial chunks: read, merged, written back
            z[60:, ::3] = 7  # a scalar over a strided selection
            expected = data.copy()
            expected[3:50, 5:41] = -data[3:50, 5:41]
            expected[60:, ::3] = 7
            np.testing.assert_array_equal(z[:], expected)
            stored.append(_stored(store))
            assert _temp_files(tmp_path / f"t{threads}") == []
    assert stored[0] == stored[1] == stored[2]
    n_chunks = -(-shape[0] // 8) * -(-shape[1] // 8)
    assert len([k for k in stored[0] if not k.split("/")[-1].startswith((".z", "zarr"))]) == n_chunks


@pytest.mark.parametrize("fmt", [2, 3])
def test_small_chunks_left_at_the_fill_value_are_deleted(tmp_path, fmt):
    store = DirectoryStore(tmp_path / "a")
    z = zarrkit.create(shape=(64, 64), chunks=(8, 8), dtype="u1", fill_value=0, store=store,
                       zarr_format=fmt, write_empty_chunks=False)
    with zarrkit.config.set(threads=2):
        z[:] = 1
        assert z.nchunks_initialized == 64
        z[:32] = 0  # half of the chunks become empty: removed, the others rewritten
        assert z.nchunks_initialized == 32
        expected = np.ones((64, 64), "u1")
        expected[:32] = 0
        np.testing.assert_array_equal(z[:], expected)


def test_small_chunk_writes_hand_batches_to_set_many_on_pool_threads():
    seen: list[tuple[int, str]] = []

    class Recording(MemoryStore):
        def set_many(self, items):
            seen.append((len(items), threading.current_thread().name))
            super().set_many(items)

    store = Recording()
    z = zarrkit.create(shape=(512, 512), chunks=(8, 8), dtype="u1", store=store, zarr_format=3)
    data = np.arange(512 * 512, dtype="u1").reshape(512, 512)
    with zarrkit.config.set(threads=2):
        z[:] = data
    assert sum(n for n, _ in seen) == 4096 and len(seen) >= 32
    assert any(name.startswith("zarrkit") for _, name in seen)  # not all on the caller
    np.testing.assert_array_equal(z[:], data)


def test_small_chunks_of_a_directory_store_are_stored_by_the_calling_thread(tmp_path):
    # files made from two threads at once contend in the file system: a DirectoryStore says so,
    # and its small chunks are encoded and stored by the caller, a batch at a time
    seen: list[tuple[int, str]] = []

    class Recording(DirectoryStore):
        def set_many(self, items):
            seen.append((len(items), threading.current_thread().name))
            super().set_many(items)

    assert DirectoryStore.concurrent_small_writes is False
    assert MemoryStore.concurrent_small_writes is True
    store = Recording(tmp_path / "a")
    z = zarrkit.create(shape=(256, 256), chunks=(8, 8), dtype="u1", store=store, zarr_format=3)
    data = np.arange(256 * 256, dtype="u1").reshape(256, 256)
    with zarrkit.config.set(threads=4):
        z[:] = data
    assert sum(n for n, _ in seen) == 1024 and len(seen) == 1024 // WRITE_BATCH
    assert {name for _, name in seen} == {threading.current_thread().name}
    np.testing.assert_array_equal(zarrkit.open_array(str(tmp_path / "a"), mode="r")[:], data)


def test_a_failed_batch_stops_the_write_and_leaves_no_temporary_files(tmp_path):
    store = DirectoryStore(tmp_path / "a")
    z = zarrkit.create(shape=(64, 64), chunks=(4, 4), dtype="u1", store=store, zarr_format=3)
    (tmp_path / "a" / "c").mkdir()
    (tmp_path / "a" / "c" / "9").write_bytes(b"a file where a directory of chunks goes")
    with zarrkit.config.set(threads=2), pytest.raises(StoreError, match="c/9/0"):
        z[:] = 5
    assert _temp_files(tmp_path / "a") == []
    assert (tmp_path / "a" / "c" / "9").read_bytes().startswith(b"a file")
    # every chunk that was written holds the new value in full
    written = [k for k in store.list_prefix("c/") if k != "c/9"]
    assert written
    for key in written:
        i, j = map(int, key.split("/")[1:])
        np.testing.assert_array_equal(z[i * 4 : i * 4 + 4, j * 4 : j * 4 + 4], 5)


class _FailingCodec(numcodecs.abc.Codec):
    """A pass-through compressor that fails on the ``fail_at``-th encode (counted over all
    instances: the array makes its own from the stored configuration)."""

    codec_id = "zarrkit-test-fail-at"
    calls = 0

    def __init__(self, fail_at: int):
        self.fail_at = fail_at

    def encode(self, buf):
        type(self).calls += 1
        if type(self).calls == self.fail_at:
            raise RuntimeError("the codec gave up")
        return bytes(memoryview(buf).cast("B"))

    def decode(self, buf, out=None):
        return numcodecs.compat.ndarray_copy(buf, out)


numcodecs.register_codec(_FailingCodec)


def test_an_encode_failure_stops_the_write_at_a_batch_boundary():
    store = MemoryStore()
    z = zarrkit.create(shape=(64, 64), chunks=(4, 4), dtype="u1", store=store, zarr_format=2,
                       compressor=_FailingCodec(fail_at=200))
    _FailingCodec.calls = 0
    with zarrkit.config.set(threads=2), pytest.raises(zarrkit.errors.ChunkEncodeError, match="gave up"):
        z[:] = 1
    calls = [_FailingCodec.calls]
    chunks = [k for k in store.list_prefix("") if not k.startswith(".z")]
    # the batch before the failing one was stored or dropped whole; nothing from the failing
    # batch on was stored
    assert len(chunks) in (0, WRITE_BATCH) and calls[0] == 200


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_run_pipelined_consumes_every_item_once(threads):
    got: list[int] = []
    lock = threading.Lock()

    def consume(item):
        with lock:
            got.append(item)

    with zarrkit.config.set(threads=threads):
        run_pipelined(iter(range(500)), consume)
    assert sorted(got) == list(range(500))


@pytest.mark.parametrize("where", ["produce", "consume"])
def test_run_pipelined_raises_the_first_error_after_every_consumer_stopped(where):
    running = [0]
    finished_after_return = []
    lock = threading.Lock()

    def produced():
        for i in range(1000):
            if where == "produce" and i == 50:
                raise KeyError("made")
            yield i

    def consume(item):
        with lock:
            running[0] += 1
        try:
            if where == "consume" and item == 30:
                raise KeyError("consumed")
            threading.Event().wait(0.0005)
        finally:
            with lock:
                running[0] -= 1
        finished_after_return.append(item)

    with zarrkit.config.set(threads=3), pytest.raises(KeyError):
        run_pipelined(produced(), consume)
    assert running[0] == 0
    count = len(finished_after_return)
    threading.Event().wait(0.01)
    assert len(finished_after_return) == count < 999  # nothing runs on; the rest was dropped


@pytest.mark.parametrize(
    "compressor",
    [
        numcodecs.Blosc("lz4", 5, numcodecs.Blosc.SHUFFLE),
        numcodecs.Blosc("zstd", 3, numcodecs.Blosc.BITSHUFFLE, blocksize=256),
        numcodecs.Blosc("lz4", 5, numcodecs.Blosc.AUTOSHUFFLE),
    ],
)
@pytest.mark.parametrize("dtype", ["<f4", ">i8", "u1"])
@pytest.mark.parametrize("order", ["C", "F"])
def test_v2_small_chunks_are_stored_as_numcodecs_encodes_them(tmp_path, compressor, dtype, order):
    data = (np.arange(40 * 24) % 37).astype(dtype).reshape(40, 24)
    store = MemoryStore()
    z = zarrkit.create(shape=data.shape, chunks=(8, 6), dtype=dtype, order=order,
                       compressor=compressor, store=store, zarr_format=2)
    with zarrkit.config.set(threads=2):
        z[:] = data
    for key, value in _stored(store).items():
        if key.startswith(".z"):
            continue
        i, j = map(int, key.split("."))
        chunk = np.asarray(data[i * 8 : i * 8 + 8, j * 6 : j * 6 + 6], order=order)
        assert value == compressor.encode(chunk.ravel(order=order)), key


@pytest.mark.parametrize("typesize", [None, 1])
@pytest.mark.parametrize("endian", ["little", "big"])
def test_v3_small_chunks_are_stored_as_the_general_encoder_stores_them(typesize, endian):
    data = (np.arange(40 * 24) * 7).astype("<u4").reshape(40, 24)
    blosc = zarrkit.codecs.BloscCodec("lz4", 5, "shuffle", typesize=typesize)
    store = MemoryStore()
    z = zarrkit.create_array(store, shape=data.shape, chunks=(8, 6), dtype="u4",
                             serializer=zarrkit.codecs.BytesCodec(endian),
                             compressors=[blosc], zarr_format=3)
    with zarrkit.config.set(threads=2):
        z[:] = data
    codec = z._ctx.codec
    for key, value in _stored(store).items():
        if key.endswith("zarr.json"):
            continue
        i, j = map(int, key.split("/")[1:])
        assert value == bytes(codec.encode(np.ascontiguousarray(data[i * 8 : i * 8 + 8, j * 6 : j * 6 + 6]), key))


def test_values_for_a_new_directory_appear_together_and_existing_ones_one_by_one(tmp_path, monkeypatch):
    store = DirectoryStore(tmp_path)
    renamed: list[tuple[str, str]] = []
    real_rename = os.rename

    def spy(src, dst, *args, **kwargs):
        renamed.append((os.path.basename(src), os.path.relpath(dst, tmp_path)))
        return real_rename(src, dst, *args, **kwargs)

    monkeypatch.setattr("zarrkit.storage.local.os.rename", spy)
    store.set_many({f"a/c/{j}": bytes([j]) * 5 for j in range(20)})  # a new directory: one rename
    assert len(renamed) == 1 and renamed[0][0].startswith(TEMP_MARKER) and renamed[0][1] == "a/c"
    assert sorted(store.list_prefix("a/")) == sorted(f"a/c/{j}" for j in range(20))
    assert all(store[f"a/c/{j}"] == bytes([j]) * 5 for j in range(20))
    # the directory exists now: values replace files one by one, the others are kept
    store.set_many({f"a/c/{j}": b"new" for j in range(10, 30)})
    assert store["a/c/3"] == bytes([3]) * 5 and store["a/c/15"] == b"new" and store["a/c/29"] == b"new"
    assert len(renamed) == 1
    assert _temp_files(tmp_path) == []


def test_a_directory_made_by_another_writer_meanwhile_keeps_its_files(tmp_path, monkeypatch):
    store = DirectoryStore(tmp_path)
    real_rename = os.rename

    def other_writer_first(src, dst, *args, **kwargs):
        os.makedirs(dst, exist_ok=True)
        with open(os.path.join(dst, "99"), "wb") as f:
            f.write(b"theirs")
        with open(os.path.join(dst, "0"), "wb") as f:
            f.write(b"old")
        return real_rename(src, dst, *args, **kwargs)  # fails: the directory is not empty

    monkeypatch.setattr("zarrkit.storage.local.os.rename", other_writer_first)
    store.set_many({f"c/{j}": b"ours" for j in range(10)})
    assert store["c/99"] == b"theirs"
    assert all(store[f"c/{j}"] == b"ours" for j in range(10))
    assert _temp_files(tmp_path) == []


def test_the_temporary_directory_of_a_dead_writer_is_never_listed_and_is_removed(tmp_path):
    dead = f"{TEMP_MARKER}{zarrkit.storage.local._HOST}-999999999-1-2-0"
    os.makedirs(tmp_path / "c" / dead)
    (tmp_path / "c" / dead / "5").write_bytes(b"half")
    (tmp_path / "c" / "1").write_bytes(b"x")
    store = DirectoryStore(tmp_path, read_only=True)
    assert list(store.list_prefix("")) == ["c/1"] and store.list_dir("c") == ["1"]
    assert (tmp_path / "c" / dead).exists()  # a read-only store removes nothing
    assert DirectoryStore(tmp_path).remove_orphaned_temp_files() == 1
    assert sorted(os.listdir(tmp_path / "c")) == ["1"]


def test_an_interrupted_new_directory_leaves_nothing(tmp_path, monkeypatch):
    store = DirectoryStore(tmp_path)
    real_open = os.open
    opened = [0]

    def failing_open(path, flags, *args, **kwargs):
        if TEMP_MARKER in str(path):
            opened[0] += 1
            if opened[0] == 5:
                raise OSError(28, "No space left on device")
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr("zarrkit.storage.local.os.open", failing_open)
    with pytest.raises(OSError, match="No space"):
        store.set_many({f"c/{j}": b"v" for j in range(10)})
    assert not (tmp_path / "c").exists()
    assert _temp_files(tmp_path) == []


def test_a_parent_removed_meanwhile_is_made_again(tmp_path, monkeypatch):
    store = DirectoryStore(tmp_path)
    store.set_many({f"g/a/{j}": b"1" for j in range(10)})
    real_mkdir = os.mkdir
    removed = [False]

    def parent_gone_first(path, *args, **kwargs):
        if TEMP_MARKER in str(path) and not removed[0]:
            removed[0] = True
            os.rmdir(os.path.dirname(path)) if not os.listdir(os.path.dirname(path)) else None
            raise FileNotFoundError(2, "No such file or directory", path)
        return real_mkdir(path, *args, **kwargs)

    monkeypatch.setattr("zarrkit.storage.local.os.mkdir", parent_gone_first)
    store.set_many({f"g/b/{j}": b"2" for j in range(10)})
    assert removed[0]
    assert all(store[f"g/b/{j}"] == b"2" for j in range(10))
    assert _temp_files(tmp_path) == []
