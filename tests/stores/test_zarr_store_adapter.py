"""zarr-python 3 stores used as zarrkit stores: the store conformance suite and the public-API
round trips through :class:`~zarrkit.storage.zarr_store.ZarrStoreAdapter` over zarr-python's
``MemoryStore``, ``LocalStore`` and ``ObjectStore`` (on obstore's in-memory store), then what the
adapter adds: bytes that zarr-python reads back, ranged requests, read-only stores, pickling,
names in messages, and the error for a store object of an unknown kind."""

from __future__ import annotations

import pickle
import subprocess
import sys

import numpy as np
import pytest

zarr = pytest.importorskip("zarr")
obstore = pytest.importorskip("obstore")

from zarr.storage import LocalStore, MemoryStore, ObjectStore

import zarrkit
from zarrkit.errors import ReadOnlyError, StoreError
from zarrkit.storage import coerce_store
from zarrkit.storage.keys import describe_store
from zarrkit.storage.zarr_store import ZarrStoreAdapter
from zarrkit.testing import PublicAPISuite, StoreSuite


class TestAdapterOverMemoryStore(StoreSuite, PublicAPISuite):
    conditional = False  # zarr-3's Store ABC has no conditional writes

    def make_store(self, tmp_path):
        return coerce_store(MemoryStore())

    def make_read_only_store(self, tmp_path, source):
        return coerce_store(MemoryStore(source.zarr_store._store_dict, read_only=True))


class TestAdapterOverLocalStore(StoreSuite, PublicAPISuite):
    conditional = False  # zarr-3's Store ABC has no conditional writes

    #: zarr-python's LocalStore keeps the directory of a deleted file and lists it
    xfail_tests = dict.fromkeys(
        ["test_list_dir_forgets_deleted_children", "test_delete_prefix",
         "test_delete_prefix_missing_and_everything"],
        "zarr-python's LocalStore keeps the directory of deleted files and lists it",
    )

    def make_store(self, tmp_path):
        return coerce_store(LocalStore(tmp_path / "data.zarr"))

    def make_read_only_store(self, tmp_path, source):
        return coerce_store(LocalStore(source.zarr_store.root, read_only=True))


class TestAdapterOverObjectStore(StoreSuite):
    conditional = False  # zarr-3's Store ABC has no conditional writes
    picklable = False  # obstore's in-memory store does not pickle (a TypeError)

    def make_store(self, tmp_path):
        return coerce_store(ObjectStore(obstore.store.MemoryStore()))

    def make_read_only_store(self, tmp_path, source):
        return coerce_store(ObjectStore(source.zarr_store.store, read_only=True))


# -- what the adapter adds --------------------------------------------------------------------


class RecordingStore(zarr.storage.WrapperStore):
    """A zarr-python store over another that records each read: the key, the byte request,
    the thread it ran on and how many reads were in flight at once."""

    def __init__(self, store):
        super().__init__(store)
        self.reads: list[tuple[str, object]] = []
        self.threads: set[int] = set()
        self.in_flight = self.most_in_flight = 0

    async def get(self, key, prototype, byte_range=None):
        import asyncio
        import threading

        self.reads.append((key, byte_range))
        self.threads.add(threading.get_ident())
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            await asyncio.sleep(0.002)  # a request that takes a while
            return await self._store.get(key, prototype, byte_range)
        finally:
            self.in_flight -= 1


def test_get_many_keeps_every_read_in_flight_on_one_loop_thread():
    import threading

    inner = MemoryStore()
    store = coerce_store(RecordingStore(inner))
    store.set_many({f"k/{i}": bytes([i]) * (i + 1) for i in range(40)})
    got = store.get_many([f"k/{i}" for i in range(40)] + ["k/missing"])
    assert got["k/missing"] is None
    assert all(got[f"k/{i}"] == bytes([i]) * (i + 1) for i in range(40))
    rec = store.zarr_store
    assert rec.most_in_flight == 41  # one batch: every request at once
    assert len(rec.threads) == 1 and threading.get_ident() not in rec.threads


def test_sharded_reads_stay_ranged(tmp_path):
    rec = RecordingStore(LocalStore(tmp_path / "s.zarr"))
    data = np.random.default_rng(1).integers(0, 2**31, (64, 64)).astype("<i4")  # incompressible
    z = zarrkit.create_array(rec, shape=data.shape, chunks=(8, 8), shards=(32, 32),
                             dtype=data.dtype)
    z[:] = data
    shard = "c/0/1"
    size = len(zarrkit.open_array(rec).store.get(shard))
    rec.reads.clear()
    np.testing.assert_array_equal(z[3:5, 40:42], data[3:5, 40:42])  # one inner chunk
    requests = [r for k, r in rec.reads if k == shard]
    assert len(requests) == 2, rec.reads  # the shard's index, then the inner chunk
    assert {type(r).__name__ for r in requests} <= {"SuffixByteRequest", "RangeByteRequest"}
    fetched = sum(r.suffix if hasattr(r, "suffix") else r.end - r.start for r in requests)
    assert fetched < size // 4  # an index of 16 entries and one chunk of 16 in the shard


def test_zarr_python_reads_zarrkit_bytes_and_zarrkit_reads_zarr_pythons(tmp_path):
    data = np.random.default_rng(0).standard_normal((30, 40)).astype("<f4")
    gz = {"name": "gzip", "configuration": {"level": 1}}
    kwargs = {"shape": data.shape, "chunks": (7, 9), "dtype": data.dtype, "compressors": [gz]}
    ours, theirs = LocalStore(tmp_path / "ours.zarr"), LocalStore(tmp_path / "theirs.zarr")
    zarrkit.create_array(ours, **kwargs)[:] = data
    zarr.create_array(theirs, **kwargs)[:] = data
    assert zarr.open_array(ours, mode="r")[:].tobytes() == data.tobytes()
    assert zarrkit.open_array(theirs, mode="r")[:].tobytes() == data.tobytes()
    chunks = sorted(p.relative_to(tmp_path / "theirs.zarr").as_posix()
                    for p in (tmp_path / "theirs.zarr" / "c").rglob("*") if p.is_file())
    assert len(chunks) == 5 * 5
    for key in chunks:  # the same stored chunks, but for the gzip header's modification time
        ours_raw, theirs_raw = ((tmp_path / d / key).read_bytes() for d in ("ours.zarr", "theirs.zarr"))
        assert ours_raw[:4] + ours_raw[8:] == theirs_raw[:4] + theirs_raw[8:]  # bytes 4-7: MTIME
    # a zarr-python hierarchy (v2 and v3) seen through zarrkit
    for fmt in (2, 3):
        root = zarr.open_group(MemoryStore(), mode="w", zarr_format=fmt)
        root.create_group("a").create_array("b", shape=(4,), dtype="i2")[:] = [1, 2, 3, 4]
        root.attrs["fmt"] = fmt
        g = zarrkit.open_group(root.store, mode="r")
        assert g.attrs["fmt"] == fmt and list(g.group_keys()) == ["a"]
        np.testing.assert_array_equal(g["a/b"][:], [1, 2, 3, 4])


def test_fsspec_store_of_zarr_python():
    store = zarr.storage.FsspecStore.from_url("memory://zarrkit-adapter/fs.zarr")
    z = zarrkit.zeros((10, 10), chunks=(4, 4), dtype="u2", store=store)
    z[2:9, 1:3] = 9
    np.testing.assert_array_equal(zarr.open_array(store, mode="r")[:], z[:])
    assert "FsspecStore" in repr(z.store) and "/zarrkit-adapter/fs.zarr" in repr(z.store)


def test_read_only_flags_and_pickling(tmp_path):
    local = LocalStore(tmp_path / "x.zarr")
    zarrkit.zeros((4,), chunks=(2,), dtype="i1", store=local)[:] = 3
    forced = coerce_store(local, read_only=True)  # zarrkit asked for read-only
    with pytest.raises(ReadOnlyError, match=r"ZarrStoreAdapter\(LocalStore\('file://.*x.zarr'\)\) is read-only"):
        forced.set("c/0", b"")
    ro = coerce_store(LocalStore(tmp_path / "x.zarr", read_only=True))  # the store's flag
    assert ro.read_only
    with pytest.raises(ReadOnlyError):
        zarrkit.open_array(ro, mode="a")[:] = 1
    clone = pickle.loads(pickle.dumps(ro))
    assert clone.read_only and clone.zarr_store.root == ro.zarr_store.root
    np.testing.assert_array_equal(zarrkit.open_array(clone)[:], [3, 3, 3, 3])


def test_messages_name_the_zarr_python_store(tmp_path):
    local = LocalStore(tmp_path / "named.zarr")
    z = zarrkit.zeros((4,), chunks=(2,), dtype="i4", store=local, compressors=None)
    z[:] = 1
    (tmp_path / "named.zarr" / "c" / "1").write_bytes(b"bad")  # a truncated chunk
    expected = f"ZarrStoreAdapter(LocalStore('file://{tmp_path / 'named.zarr'}'))"
    assert describe_store(z.store) == expected
    with pytest.raises(zarrkit.errors.ChunkDecodeError) as err:
        zarrkit.open_array(local)[:]
    assert "c/1" in str(err.value) and expected in str(err.value)


class ResettingStore(zarr.storage.WrapperStore):
    """A zarr-python store whose reads of ``bad/...`` keys fail as a dropped connection."""

    async def get(self, key, prototype, byte_range=None):
        if key.startswith("bad/"):
            raise ConnectionResetError("connection reset by peer")
        return await self._store.get(key, prototype, byte_range)


def test_failures_of_the_store_are_store_errors_naming_key_and_store():
    store = coerce_store(ResettingStore(MemoryStore()))
    store.set("bad/k", b"1")
    with pytest.raises(StoreError, match=r"read of key 'bad/k' failed in ZarrStoreAdapter\(.*"
                                         r"ConnectionResetError: connection reset") as err:
        store.get("bad/k")
    assert isinstance(err.value.__cause__, ConnectionResetError)
    with pytest.raises(StoreError, match="read of key 'bad/k'"):
        store.get_many(["bad/k"])
    assert store.get_many(["good", "bad/k"][:1]) == {"good": None}


def test_an_unknown_store_object_gets_a_typed_error_saying_what_is_accepted():
    class Unknown:
        pass

    with pytest.raises(TypeError) as err:
        zarrkit.open_group(Unknown(), mode="r")
    for accepted in ("zarrkit Store", "zarr-python 3 store", "Icechunk", "fsspec", "mapping",
                     "path", "not Unknown"):
        assert accepted in str(err.value)
    with pytest.raises(TypeError, match="zarr-python 3 store"):
        ZarrStoreAdapter({})


def test_zarr_python_is_imported_only_for_its_stores():
    code = (
        "import sys, zarrkit\n"
        "z = zarrkit.zeros((4,), chunks=(2,), store=zarrkit.storage.coerce_store({}))\n"
        "z[:] = 1\n"
        "assert 'zarr' not in sys.modules, 'zarr imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
