"""ObjectStore (zarrkit's store on obstore) against obstore's LocalStore and MemoryStore and a
moto S3 server on 127.0.0.1; arrays it writes read bit-exactly by zarr-python's own
``zarr.storage.ObjectStore`` over the same bucket, and the other way round."""

from __future__ import annotations

import pickle
import uuid

import numpy as np
import pytest

obstore = pytest.importorskip("obstore")
from obstore.store import LocalStore, MemoryStore, S3Store  # noqa: E402

import zarrkit  # noqa: E402
from zarrkit.storage import ByteRange, FsspecStore, ObjectStore, coerce_store  # noqa: E402
from zarrkit.testing import PublicAPISuite, StoreSuite  # noqa: E402

from moto_s3 import BUCKET  # noqa: E402  (tests/stores is on sys.path; the s3 fixture is in conftest.py)


def _uid() -> str:
    return uuid.uuid4().hex[:12]


class TestLocalObjectStore(StoreSuite, PublicAPISuite):
    def make_store(self, tmp_path):
        return ObjectStore(LocalStore(tmp_path / "data.zarr", mkdir=True))

    def make_read_only_store(self, tmp_path, source):
        return ObjectStore(LocalStore(source.store.prefix), read_only=True)

    def reopen_store(self, tmp_path, store, mode):
        return ObjectStore(LocalStore(store.store.prefix), read_only=mode == "r")


class TestMemoryObjectStore(StoreSuite, PublicAPISuite):
    picklable = False  # obstore's MemoryStore does not pickle

    def make_store(self, tmp_path):
        return ObjectStore(MemoryStore())

    def make_read_only_store(self, tmp_path, source):
        return ObjectStore(source.store, read_only=True)

    def reopen_store(self, tmp_path, store, mode):
        return ObjectStore(store.store, read_only=mode == "r")


# =================================================================================================
# S3 through moto's server
# =================================================================================================


def _s3(s3, prefix: str | None = None, **kw) -> S3Store:
    """An obstore S3Store on the moto server, rooted at ``prefix`` in the test bucket."""
    options = {"access_key_id": "testing", "secret_access_key": "testing", "region": "us-east-1",
               "endpoint": s3.endpoint, **kw}
    return S3Store(BUCKET, prefix=prefix or _uid(), client_options={"allow_http": True}, **options)


def _store(s3, prefix: str | None = None, **kw) -> ObjectStore:
    return ObjectStore(_s3(s3, prefix), **kw)


class TestS3ObjectStore(StoreSuite, PublicAPISuite):
    @pytest.fixture(autouse=True)
    def _server(self, s3):
        self.s3 = s3

    def make_store(self, tmp_path):
        return _store(self.s3)

    def make_read_only_store(self, tmp_path, source):
        return ObjectStore(source.store, read_only=True)

    def reopen_store(self, tmp_path, store, mode):
        return ObjectStore(_s3(self.s3, store.store.prefix), read_only=mode == "r")


def test_s3_store_basics(s3):
    prefix = _uid()
    store = _store(s3, prefix)
    assert store.high_latency and not store.read_only
    assert repr(store) == f"ObjectStore('s3://{BUCKET}/{prefix}')"
    value = bytes(range(256)) * 4
    store["a/v"] = value
    assert store.getsize("a/v") == 1024 and store.getsize("a/missing") == 0
    copy = pickle.loads(pickle.dumps(store))
    assert copy == store and copy["a/v"] == value
    s3.recorder.reset()
    assert store.get("a/v", ByteRange(-16)) == value[-16:]
    assert store.get("a/v", ByteRange(100, 20)) == value[100:120]
    assert store.get("a/v", ByteRange(1000)) == value[1000:]
    gets = s3.recorder.object_gets(prefix)
    assert [r[3] for r in gets] == ["bytes=-16", "bytes=100-119", "bytes=1000-"]
    # beyond the end: empty (a HEAD tells it from a missing object)
    assert store.get("a/v", ByteRange(5000)) == b"" and store.get("a/nope", ByteRange(5000)) is None
    # several ranges of one object in one call; far-apart ones are separate requests
    s3.recorder.reset()
    spans = [ByteRange(0, 4), ByteRange(10, 5), ByteRange(1020, 4)]
    assert store.get_ranges("a/v", spans) == [value[0:4], value[10:15], value[1020:1024]]
    assert store.get_ranges("a/nope", spans) is None
    store.coalesce = 0
    assert store.get_ranges("a/v", spans) == [value[0:4], value[10:15], value[1020:1024]]
    ranges = [r[3] for r in s3.recorder.object_gets(prefix)]
    assert ranges[0] == "bytes=0-1023"  # coalesced into one request
    assert sorted(ranges[2:]) == ["bytes=0-3", "bytes=10-14", "bytes=1020-1023"]


def test_s3_get_many_keeps_requests_in_flight(s3):
    prefix = _uid()
    store = _store(s3, prefix)
    for i in range(40):
        store[f"k/{i}"] = bytes([i]) * 10
    s3.recorder.reset()
    s3.recorder.get_delay = 0.05
    try:
        got = store.get_many([f"k/{i}" for i in range(40)] + ["k/missing", "nope/x"])
    finally:
        s3.recorder.get_delay = 0.0
    assert got["k/missing"] is None and got["nope/x"] is None
    assert all(got[f"k/{i}"] == bytes([i]) * 10 for i in range(40))
    assert s3.recorder.max_in_flight >= 8
    assert len(s3.recorder.object_gets(prefix)) == 42


def test_s3_listing_uses_delimiters(s3):
    prefix = _uid()
    store = _store(s3, prefix)
    for key in ["a/x", "a/y/z", "ab", "b/c/d/e"]:
        store[key] = b"1"
    s3.recorder.reset()
    assert store.list_dir("") == ["a", "ab", "b"]
    assert store.list_dir("a") == store.list_dir("a/") == ["x", "y"]
    lists = [r[2] for r in s3.recorder.below(prefix)]
    assert len(lists) == 3 and all("delimiter=%2F" in q for q in lists)
    assert list(store.list_prefix("a")) == ["a/x", "a/y/z", "ab"]
    assert list(store.list_prefix("a/")) == ["a/x", "a/y/z"]
    assert sorted(store.list_prefix_sizes("b/")) == [("b/c/d/e", 1)]


def test_s3_sharded_partial_read_is_one_get_ranges_call(s3):
    prefix = _uid()
    store = _store(s3, prefix)
    z = zarrkit.create_array(store, shape=(64, 64), chunks=(8, 8), shards=(64, 64), dtype="i4",
                             compressors=None, zarr_format=3)
    data = np.arange(64 * 64, dtype="i4").reshape(64, 64)
    z[:] = data
    a = zarrkit.open_array(_store(s3, prefix), mode="r")
    s3.recorder.reset()
    np.testing.assert_array_equal(a[0:8, 0:16], data[0:8, 0:16])  # two adjacent inner chunks
    gets = s3.recorder.object_gets(prefix)
    assert len(gets) == 2, gets  # the index, then both chunks' bytes (coalesced)
    assert all(r[3] is not None for r in gets), "shard reads must be byte-range requests"
    s3.recorder.reset()
    np.testing.assert_array_equal(a[::56, ::56], data[::56, ::56])  # four far-apart chunks
    gets = s3.recorder.object_gets(prefix)
    assert 2 <= len(gets) <= 5 and all(r[3] is not None for r in gets)
    assert len(s3.recorder.below(prefix)) == len(gets)  # no HEAD or listing either


# -- zarr-python's ObjectStore over the same bucket -----------------------------------------------

zarr = pytest.importorskip("zarr")


def _zarr_store(s3, prefix, read_only=False):
    from zarr.storage import ObjectStore as ZarrObjectStore

    return ZarrObjectStore(_s3(s3, prefix), read_only=read_only)


LAYOUTS = {
    "v2": dict(zarr_format=2, chunks=(7, 9), compressors={"id": "zstd", "level": 1}),
    "v3": dict(zarr_format=3, chunks=(7, 9), compressors=[{"name": "zstd", "configuration": {"level": 1}}]),
    "sharded": dict(zarr_format=3, chunks=(5, 5), shards=(10, 20)),
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_zarrkit_writes_zarr_python_reads(s3, layout):
    prefix = _uid()
    data = (np.arange(30 * 40, dtype="f8").reshape(30, 40) * 1.5) - 7
    kw = dict(LAYOUTS[layout])
    z = zarrkit.create_array(_store(s3, prefix), name="a", shape=data.shape, dtype="f8",
                             fill_value=-1, **kw)
    z[:25] = data[:25]  # the last rows stay unwritten: fill value
    expected = data.copy()
    expected[25:] = -1
    theirs = zarr.open_array(_zarr_store(s3, prefix, read_only=True), path="a", mode="r")
    got = theirs[:]
    assert got.dtype == expected.dtype and got.tobytes() == expected.tobytes()
    assert theirs.metadata.zarr_format == kw["zarr_format"]


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_zarr_python_writes_zarrkit_reads(s3, layout):
    prefix = _uid()
    data = np.arange(30 * 40, dtype="i4").reshape(30, 40) - 500
    kw = dict(LAYOUTS[layout])
    if kw["zarr_format"] == 2:
        import numcodecs

        kw["compressors"] = numcodecs.Zstd(level=1)
    theirs = zarr.create_array(_zarr_store(s3, prefix), name="a", shape=data.shape, dtype="i4",
                               fill_value=7, **kw)
    theirs[:20] = data[:20]
    expected = data.copy()
    expected[20:] = 7
    ours = zarrkit.open_array(_store(s3, prefix, read_only=True), path="a", mode="r")
    got = ours[:]
    assert got.dtype == expected.dtype and got.tobytes() == expected.tobytes()
    np.testing.assert_array_equal(ours[3:17, 5:33], expected[3:17, 5:33])
    # the same objects, byte for byte, through either store
    key = "a/c/0/0" if kw["zarr_format"] == 3 else "a/0.0"
    assert _store(s3, prefix)[key] == bytes(obstore.get(_s3(s3, prefix), key).bytes())
