"""FsspecStore against real servers on 127.0.0.1: fsspec memory://, local files, S3 (moto's
server), HTTP (http.server with Range support), and servers that fail on purpose."""

from __future__ import annotations

import os
import pickle
import socket
import uuid

import numpy as np
import pytest

pytest.importorskip("fsspec")

import fsspec
from http_serve import FaultyHandler
from moto_s3 import BUCKET

import zarrkit
from zarrkit.errors import ReadOnlyError, StoreError
from zarrkit.storage import CountingStore, DirectoryStore, coerce_store
from zarrkit.storage.base import ByteRange
from zarrkit.storage.fsspec import TEMP_MARKER, FsspecStore, FSStore
from zarrkit.testing import PublicAPISuite, StoreSuite

FAST = {"retries": 3, "retry_delay": 0.001, "max_retry_delay": 0.01}


def _uid() -> str:
    return uuid.uuid4().hex[:12]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# =================================================================================================
# memory://
# =================================================================================================


class TestMemoryFsspecStore(StoreSuite, PublicAPISuite):
    conditional = False  # fsspec's memory file system cannot compare and write atomically

    def make_store(self, tmp_path):
        return FsspecStore(f"memory://zk-{_uid()}/data.zarr")

    def make_read_only_store(self, tmp_path, source):
        return FsspecStore(source.fs, path=source.root, read_only=True)

    def reopen_store(self, tmp_path, store, mode):
        return FsspecStore(f"memory://{store.root}", read_only=mode == "r")


class TestLocalFsspecStore(StoreSuite, PublicAPISuite):
    conditional = False  # (conditional writes on local files: DirectoryStore)

    def make_store(self, tmp_path):
        return FsspecStore(f"file://{tmp_path}/data.zarr")

    def reopen_store(self, tmp_path, store, mode):
        return FsspecStore.from_url(f"file://{store.root}", read_only=mode == "r")

    def make_read_only_store(self, tmp_path, source):
        return FsspecStore.from_url(f"file://{source.root}", read_only=True)


def test_construction_forms():
    root = f"zk-{_uid()}"
    a = FsspecStore(f"memory://{root}/x")
    a["k/v"] = b"1"
    b = FsspecStore.from_url(f"memory://{root}", read_only=True)
    assert b.get("x/k/v") == b"1"
    c = FsspecStore(fsspec.get_mapper(f"memory://{root}/x"))
    assert c.get("k/v") == b"1" and c == a
    d = FsspecStore(fsspec.filesystem("memory"), path=f"/{root}/x")
    assert d.get("k/v") == b"1"
    e = FsspecStore(f"memory://{root}", path="x")
    assert e.get("k/v") == b"1"
    f = FSStore(f"/{root}/x", fs=fsspec.filesystem("memory"), mode="r")  # zarr-2 spelling
    assert f.read_only and f.get("k/v") == b"1"
    assert FSStore is FsspecStore
    with pytest.raises(ReadOnlyError):
        b["y"] = b"2"
    with pytest.raises(TypeError):
        FsspecStore(fsspec.get_mapper(f"memory://{root}"), storage_options={"x": 1})
    with pytest.raises(TypeError):
        FsspecStore(12)
    assert repr(b) == f"FsspecStore('memory:///{root}', read_only=True)"


def test_coerce_store_urls_and_mappers(tmp_path):
    root = f"zk-{_uid()}"
    s = coerce_store(f"memory://{root}/a.zarr")
    assert isinstance(s, FsspecStore) and not s.read_only
    s2 = coerce_store(f"memory://{root}/a.zarr", read_only=True, storage_options={})
    assert isinstance(s2, FsspecStore) and s2.read_only
    m = coerce_store(fsspec.get_mapper(f"memory://{root}/b.zarr"))
    assert isinstance(m, FsspecStore) and m.root == f"/{root}/b.zarr"
    fs_store = coerce_store(fsspec.filesystem("memory"))
    assert isinstance(fs_store, FsspecStore)
    # file:// without storage options is zarrkit's own DirectoryStore; with them, fsspec
    d = coerce_store(f"file://{tmp_path}/c.zarr")
    assert isinstance(d, DirectoryStore) and d.path == str(tmp_path / "c.zarr")
    f = coerce_store(f"file://{tmp_path}/c.zarr", storage_options={"auto_mkdir": True})
    assert isinstance(f, FsspecStore)
    with pytest.raises(TypeError):
        coerce_store({}, storage_options={"anon": True})
    with pytest.raises(TypeError):
        coerce_store(str(tmp_path / "p"), storage_options={"anon": True})


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_memory_url_through_public_api(zarr_format):
    url = f"memory://zk-{_uid()}/arr.zarr"
    data = np.arange(100, dtype="f8").reshape(10, 10)
    z = zarrkit.open_array(url, mode="w", shape=(10, 10), chunks=(3, 3), dtype="f8",
                           zarr_format=zarr_format)
    z[:] = data
    np.testing.assert_array_equal(zarrkit.open_array(url, mode="r")[:], data)
    fs = fsspec.filesystem("memory")
    meta = ".zarray" if zarr_format == 2 else "zarr.json"
    assert fs.exists(url.replace("memory://", "/") + "/" + meta)
    # an FSMap works as a store too
    np.testing.assert_array_equal(zarrkit.open_array(fsspec.get_mapper(url), mode="r")[:], data)


def test_pickle_roundtrip_memory():
    store = FsspecStore(f"memory://zk-{_uid()}", **FAST)
    store["a"] = b"1"
    clone = pickle.loads(pickle.dumps(store))
    assert clone == store and clone.retries == 3 and clone.get("a") == b"1"


def test_local_writes_are_atomic_and_leave_nothing(tmp_path, monkeypatch):
    store = FsspecStore(f"file://{tmp_path}/d")
    store["k"] = b"old"
    store["sub/k"] = b"old"

    def failing_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", failing_replace)
    for key in ("k", "sub/k", "new/key"):
        with pytest.raises(OSError):
            store[key] = b"new value"
    monkeypatch.undo()
    assert store["k"] == b"old" and store["sub/k"] == b"old" and "new/key" not in store
    files = sorted(
        os.path.relpath(os.path.join(d, f), tmp_path / "d")
        for d, _, fs in os.walk(tmp_path / "d") for f in fs
    )
    assert files == ["k", os.path.join("sub", "k")]
    # temp files of writers in flight are never listed
    (tmp_path / "d" / f"{TEMP_MARKER}123").write_bytes(b"partial")
    assert sorted(store) == ["k", "sub/k"]
    assert store.list_dir("") == ["k", "sub"]


def test_fsspec_is_imported_lazily():
    import subprocess
    import sys

    code = ("import sys, zarrkit, zarrkit.storage; "
            "assert 'fsspec' not in sys.modules, 'zarrkit imports fsspec eagerly'")
    subprocess.run([sys.executable, "-c", code], check=True)


# =================================================================================================
# S3 through moto's server
# =================================================================================================

def _s3_store(s3, prefix=None, **kw) -> FsspecStore:
    prefix = prefix or _uid()
    return FsspecStore(f"s3://{BUCKET}/{prefix}", storage_options=s3.options, **kw)


class TestS3FsspecStore(StoreSuite, PublicAPISuite):
    conditional = True

    @pytest.fixture(autouse=True)
    def _server(self, s3):
        self.s3 = s3

    def make_store(self, tmp_path):
        return _s3_store(self.s3)

    def make_read_only_store(self, tmp_path, source):
        return FsspecStore.from_url(f"s3://{source.root}", storage_options=self.s3.options,
                                    read_only=True)

    def reopen_store(self, tmp_path, store, mode):
        # a new store object: nothing cached by the writer's file system instance is seen
        return FsspecStore.from_url(f"s3://{store.root}", storage_options=self.s3.options,
                                    read_only=mode == "r")


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_s3_array_roundtrip_public_api(s3, zarr_format):
    prefix = _uid()
    store = _s3_store(s3, prefix)
    data = np.arange(30 * 40, dtype="i4").reshape(30, 40)
    g = zarrkit.open_group(store, mode="w", zarr_format=zarr_format)
    z = g.create("a/b", shape=(30, 40), chunks=(7, 9), dtype="i4", fill_value=-1)
    z[:] = data
    z[3:5, 10:30] = 0
    data[3:5, 10:30] = 0
    # a fresh store object (and the URL through zarrkit.open) sees the same data
    again = zarrkit.open_group(_s3_store(s3, prefix), mode="r")
    np.testing.assert_array_equal(again["a/b"][:], data)
    np.testing.assert_array_equal(again["a/b"][5:20, 8:33], data[5:20, 8:33])
    assert s3.fs.exists(f"{BUCKET}/{prefix}/a/b/" + (".zarray" if zarr_format == 2 else "zarr.json"))


def test_s3_sharded_roundtrip(s3):
    prefix = _uid()
    store = _s3_store(s3, prefix)
    z = zarrkit.create_array(store, shape=(64, 64), chunks=(8, 8), shards=(32, 32), dtype="i4",
                             zarr_format=3)
    data = np.arange(64 * 64, dtype="i4").reshape(64, 64)
    z[:] = data
    assert sorted(k for k in store if k.startswith("c/")) == [
        f"c/{i}/{j}" for i in range(2) for j in range(2)
    ]
    z2 = zarrkit.open_array(_s3_store(s3, prefix), mode="r")
    np.testing.assert_array_equal(z2[:], data)
    np.testing.assert_array_equal(z2[5:40, 30:63], data[5:40, 30:63])


def test_s3_sharded_inner_chunk_read_costs_at_most_two_gets(s3):
    prefix = _uid()
    store = _s3_store(s3, prefix)
    z = zarrkit.create_array(store, shape=(64, 64), chunks=(8, 8), shards=(32, 32), dtype="i4",
                             zarr_format=3)
    data = np.arange(64 * 64, dtype="i4").reshape(64, 64)
    z[:] = data
    counting = CountingStore(_s3_store(s3, prefix))
    a = zarrkit.open_array(counting, mode="r")
    counting.reset()
    s3.recorder.reset()
    np.testing.assert_array_equal(a[40:48, 8:16], data[40:48, 8:16])
    assert counting.counts["get"] <= 2, counting.keys_read
    gets = s3.recorder.object_gets(prefix)
    assert len(gets) in (1, 2), gets
    assert all(r[3] is not None for r in gets), "shard reads must be byte-range requests"
    assert len(s3.recorder.below(prefix)) == len(gets)  # no HEAD or listing either
    assert counting.bytes_read < 8 * 8 * 4 * 2 + 1024  # not the whole shard


def test_s3_consolidated_open_is_one_get(s3, tmp_path):
    prefix = _uid()
    local = DirectoryStore(tmp_path / "h.zarr")  # built locally, uploaded in one batch
    root = zarrkit.open_group(local, mode="w", zarr_format=3)
    for i in range(100):
        root.create(f"g{i % 10}/a{i}", shape=(4,), chunks=(2,), dtype="i2")
    s3.fs.put(f"{local.path}/", f"{BUCKET}/{prefix}/", recursive=True)
    store = _s3_store(s3, prefix)
    assert len(store.list_dir("")) == 11
    zarrkit.consolidate_metadata(store)

    counting = CountingStore(_s3_store(s3, prefix))
    s3.recorder.reset()
    g = zarrkit.open_consolidated(counting)
    shapes = {f"g{i % 10}/a{i}": g[f"g{i % 10}/a{i}"].shape for i in range(100)}
    assert len(shapes) == 100 and set(shapes.values()) == {(4,)}
    assert counting.counts["get"] == 1, counting.keys_read
    assert counting.keys_read == [("zarr.json", None)]
    gets = s3.recorder.object_gets(prefix)
    assert [r[1] for r in gets] == [f"/{BUCKET}/{prefix}/zarr.json"]
    assert len(s3.recorder.below(prefix)) == 1  # and nothing else reached the server


def _requests_in_flight(s3, n_side, delay, **config):
    """Most object GETs in flight at once while reading an array of n_side² chunks with
    ``delay`` added to every GET (serial reads would have one at a time)."""
    prefix = _uid()
    store = _s3_store(s3, prefix)
    z = zarrkit.create(shape=(n_side * 2, n_side * 2), chunks=(2, 2), dtype="u1", store=store,
                       zarr_format=3, compressor=None)
    data = (np.arange(z.size) % 251).astype("u1").reshape(z.shape)
    z[:] = data
    a = zarrkit.open_array(_s3_store(s3, prefix), mode="r")
    with zarrkit.config.set(**config):
        s3.recorder.reset()
        s3.recorder.get_delay = delay
        try:
            out = a[:]
        finally:
            s3.recorder.get_delay = 0.0
        np.testing.assert_array_equal(out, data)
    assert len(s3.recorder.object_gets(prefix)) == n_side * n_side
    return s3.recorder.max_in_flight


def test_s3_reads_chunks_concurrently(s3):
    """256 chunks behind 50 ms of latency each: many requests are in flight at once."""
    assert _s3_store(s3).high_latency
    assert _requests_in_flight(s3, 16, 0.05) >= 8  # the default configuration


def test_s3_read_concurrency_follows_io_threads(s3):
    # one CPU thread, but io_threads requests in flight on a high-latency store
    assert _requests_in_flight(s3, 6, 0.05, threads=1, io_threads=32) >= 8


def test_s3_consolidated_arrays_read_concurrently(s3):
    prefix = _uid()
    root = zarrkit.open_group(_s3_store(s3, prefix), mode="w", zarr_format=3)
    a = root.create("a", shape=(24,), chunks=(1,), dtype="u1")
    a[:] = 7
    zarrkit.consolidate_metadata(_s3_store(s3, prefix))
    arr = zarrkit.open_consolidated(_s3_store(s3, prefix))["a"]
    with zarrkit.config.set(threads=1, io_threads=32):
        s3.recorder.reset()
        s3.recorder.get_delay = 0.05
        try:
            assert (arr[:] == 7).all()
        finally:
            s3.recorder.get_delay = 0.0
    assert s3.recorder.max_in_flight >= 8


def test_s3_connection_pool_is_as_large_as_io_threads(s3):
    """botocore's pool of 10 connections would leave most of io_threads' requests waiting."""
    store = _s3_store(s3)
    want = max(zarrkit.config.threads, zarrkit.config.io_threads)
    assert store.fs.config_kwargs["max_pool_connections"] == want
    assert _requests_in_flight(s3, 8, 0.05, threads=1, io_threads=32) > 10
    # a pool the caller chose is kept
    options = dict(s3.options, config_kwargs={"max_pool_connections": 4})
    chosen = FsspecStore(f"s3://{BUCKET}/{_uid()}", storage_options=options)
    assert chosen.fs.config_kwargs["max_pool_connections"] == 4


def test_s3_walk_lists_a_level_at_a_time_and_opens_members_together(s3, tmp_path):
    prefix = _uid()
    local = DirectoryStore(tmp_path / "h.zarr")
    root = zarrkit.open_group(local, mode="w", zarr_format=3)
    for i in range(3):
        for j in range(4):
            root.create(f"g{i}/a{j}", shape=(j + 1,), chunks=(1,), dtype="i2")
    s3.fs.put(f"{local.path}/", f"{BUCKET}/{prefix}/", recursive=True)
    def described(group):
        return [(name, type(node).__name__, node.shape if isinstance(node, zarrkit.Array) else None)
                for name, node in group.members(max_depth=None)]

    want = described(zarrkit.open_group(local, mode="r"))
    g = zarrkit.open_group(_s3_store(s3, prefix), mode="r")
    s3.recorder.reset()
    s3.recorder.get_delay = 0.05
    try:
        got = described(g)
    finally:
        s3.recorder.get_delay = 0.0
    assert got == want and len(got) == 15
    # the three groups' members looked up together, not one group after the other
    assert s3.recorder.max_in_flight >= 8
    # and each node's document read once: opening a member reuses what the listing read
    gets = [r[1] for r in s3.recorder.object_gets(prefix)]
    assert sorted(gets) == sorted({f"/{BUCKET}/{prefix}/{name}/zarr.json" for name, _, _ in got})


def test_memory_and_local_stores_are_not_high_latency(tmp_path):
    assert not FsspecStore(f"memory://zk-{_uid()}").high_latency
    assert not FsspecStore(f"file://{tmp_path}").high_latency


def test_s3_get_many_is_one_concurrent_batch(s3):
    prefix = _uid()
    store = _s3_store(s3, prefix)
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


def test_s3_suffix_and_ranges_are_single_requests(s3):
    prefix = _uid()
    store = _s3_store(s3, prefix)
    value = bytes(range(256)) * 4
    store["v"] = value
    s3.recorder.reset()
    assert store.get("v", ByteRange(-16)) == value[-16:]
    assert store.get("v", ByteRange(100, 20)) == value[100:120]
    assert store.get("v", ByteRange(5000)) == b""
    gets = s3.recorder.object_gets(prefix)
    assert [r[3] for r in gets] == ["bytes=-16", "bytes=100-119", "bytes=5000-"]


def test_s3_missing_bucket_reads_as_missing(s3):
    store = FsspecStore(f"s3://no-such-bucket-{_uid()}/x", storage_options=s3.options, **FAST)
    assert store.get("k") is None
    assert store.get_many(["a", "b/c"]) == {"a": None, "b/c": None}
    assert list(store) == [] and store.list_dir("") == []


# -- write failures -------------------------------------------------------------------------------


@pytest.fixture
def s3_faulty(s3):
    """A separate s3fs instance without botocore/s3fs retries, with a PutObject hook."""
    import botocore.exceptions

    fs = fsspec.filesystem("s3", skip_instance_cache=True,
                           config_kwargs={"retries": {"total_max_attempts": 1}}, **s3.options)
    fs.retries = 1  # s3fs's own retry loop: one attempt
    fs.connect()
    state = {"calls": 0, "fail": 0}

    def hook(request, **kwargs):
        state["calls"] += 1
        if state["fail"] < 0 or state["calls"] <= state["fail"]:
            raise botocore.exceptions.ConnectionClosedError(endpoint_url=request.url)

    fs.s3.meta.events.register("before-send.s3.PutObject", hook)
    return fs, state


def test_s3_write_retried_after_connection_error(s3, s3_faulty):
    fs, state = s3_faulty
    prefix = _uid()
    store = FsspecStore(fs, path=f"{BUCKET}/{prefix}", **FAST)
    state["fail"] = 1  # the first attempt dies
    store["a/b"] = b"payload"
    assert state["calls"] == 2
    assert s3.fs.cat_file(f"{BUCKET}/{prefix}/a/b") == b"payload"


def test_s3_write_failure_is_clean(s3, s3_faulty):
    fs, state = s3_faulty
    prefix = _uid()
    store = FsspecStore(fs, path=f"{BUCKET}/{prefix}", **FAST)
    store["old"] = b"old value"
    state["calls"], state["fail"] = 0, -1  # every attempt dies
    with pytest.raises(StoreError) as info:
        store["new/key"] = b"x" * 100_000
    msg = str(info.value)
    assert "'new/key'" in msg and f"s3://{BUCKET}/{prefix}/new/key" in msg
    assert state["calls"] == FAST["retries"] + 1
    with pytest.raises(StoreError):
        store["old"] = b"new value"
    # nothing partial: the new key does not exist, the old value is intact
    check = _s3_store(s3, prefix)
    assert sorted(check) == ["old"]
    assert check["old"] == b"old value"
    assert not s3.fs.exists(f"{BUCKET}/{prefix}/new/key")
    # an array write that fails raises and leaves the array as it was
    state["fail"] = 0
    z = zarrkit.create(shape=(8,), chunks=(4,), dtype="i4", store=store, path="arr",
                       zarr_format=3, fill_value=0)
    z[:] = 1
    state["calls"], state["fail"] = 0, -1
    with pytest.raises(StoreError):
        z[:] = 2
    state["fail"] = 0
    np.testing.assert_array_equal(zarrkit.open_array(check, path="arr", mode="r")[:], 1)


# =================================================================================================
# HTTP
# =================================================================================================


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_http_read_arrays(http_serve, served_data, zarr_format):
    root, data, _ = served_data
    base, log = http_serve(root)
    url = f"{base}/v{zarr_format}.zarr"
    expected = data.copy()
    if zarr_format == 3:
        expected[14:, 14:] = -5
    with zarrkit.config.set(remote="fsspec"):
        z = zarrkit.open_array(url, mode="r")  # a URL string goes through FsspecStore
    assert type(z.store) is FsspecStore
    np.testing.assert_array_equal(z[:], expected)
    store = FsspecStore(url)
    assert store.read_only and not store.supports_writes
    np.testing.assert_array_equal(zarrkit.open_array(store, mode="r")[2:19, 5:17],
                                  expected[2:19, 5:17])
    if zarr_format == 3:
        assert store.get("c/2/2") is None  # a 404
        assert any(status == 404 for *_, status in log)


def test_http_is_read_only(http_serve, served_data):
    root, _data, _ = served_data
    base, log = http_serve(root)
    store = FsspecStore(f"{base}/v2.zarr", read_only=False)
    assert store.read_only
    with pytest.raises(ReadOnlyError):
        store["x"] = b"1"
    with pytest.raises(ReadOnlyError):
        store.delete(".zarray")
    z = zarrkit.open_array(store, mode="a")
    with pytest.raises(PermissionError):
        z[0, 0] = 1
    assert all(cmd in ("GET", "HEAD") for cmd, *_ in log)


def test_http_store_contract(http_serve, served_data):
    root, _, _ = served_data
    base, _ = http_serve(root)
    store = FsspecStore(f"{base}/v2.zarr")
    raw = (root / "v2.zarr" / ".zarray").read_bytes()
    assert store.get(".zarray") == raw
    assert store.get(".zarray", ByteRange(2, 5)) == raw[2:7]
    assert store.get(".zarray", ByteRange(-7)) == raw[-7:]
    assert store.get(".zarray", ByteRange(-10_000)) == raw
    assert store.get(".zarray", ByteRange(len(raw) + 10)) == b""  # a 416
    assert store.get(".zarray", ByteRange(len(raw) + 10, 4)) == b""
    assert store.get(".zarray", ByteRange(3, 0)) == b""
    assert store.get("nope", ByteRange(3, 0)) is None
    assert store.get("nope") is None and store.get("nope", ByteRange(-4)) is None
    assert store.getsize(".zarray") == len(raw) and store.getsize("nope") == 0
    assert ".zarray" in store and "nope" not in store
    assert store.get_many([".zarray", "nope", "0.0"]) == {
        ".zarray": raw, "nope": None, "0.0": (root / "v2.zarr" / "0.0").read_bytes()}
    # listings come from the server's directory pages
    assert {".zarray", "0.0", "2.2"} <= set(store.list_dir(""))


def test_http_sharded_reads_use_ranges(http_serve, served_data):
    root, _, big = served_data
    base, log = http_serve(root)
    z = zarrkit.open_array(FsspecStore(f"{base}/sharded.zarr"), mode="r")
    log.clear()
    np.testing.assert_array_equal(z[40:48, 8:16], big[40:48, 8:16])
    chunk_requests = [r for r in log if "/c/" in r[1]]
    assert len(chunk_requests) in (1, 2), log
    assert all(r[2] is not None and r[3] == 206 for r in chunk_requests), log
    np.testing.assert_array_equal(z[:], big)


# -- fault injection ------------------------------------------------------------------------------


@pytest.mark.parametrize("drop", [False, True], ids=["503", "dropped"])
def test_http_transient_failures_are_retried(http_serve, served_data, drop):
    root, data, big = served_data
    base, log = http_serve(root, FaultyHandler, fail_first=2, drop=drop)
    store = FsspecStore(f"{base}/v2.zarr", **FAST)
    np.testing.assert_array_equal(zarrkit.open_array(store, mode="r")[:], data)
    failures = [r for r in log if r[3] == (0 if drop else 503)]
    assert len(failures) >= 2 * 9  # every chunk failed twice first
    sharded = zarrkit.open_array(FsspecStore(f"{base}/sharded.zarr", **FAST), mode="r")
    np.testing.assert_array_equal(sharded[:], big)
    # get_many retries only what failed
    store2 = FsspecStore(f"{base}/v3.zarr", **FAST)
    keys = ["c/0/0", "c/0/1", "c/2/2", "zarr.json"]
    got = store2.get_many(keys)
    assert got["c/2/2"] is None
    assert all(got[k] == (root / "v3.zarr" / k).read_bytes() for k in keys if k != "c/2/2")


def test_http_persistent_failure_raises_store_error(http_serve, served_data):
    root, _data, _ = served_data
    base, log = http_serve(root, FaultyHandler, fail_first=-1)
    store = FsspecStore(f"{base}/v2.zarr", **FAST)
    with pytest.raises(StoreError) as info:
        store.get("0.0")
    msg = str(info.value)
    assert "'0.0'" in msg and f"{base}/v2.zarr/0.0" in msg and "4 attempts" in msg
    assert len([r for r in log if r[1] == "/v2.zarr/0.0"]) == FAST["retries"] + 1
    with pytest.raises(StoreError, match="'1.1'"):
        store.get_many(["1.1"])
    with pytest.raises(StoreError, match="'.zarray'"):
        store.get(".zarray", ByteRange(0, 4))
    with pytest.raises(OSError):  # StoreError is an OSError
        zarrkit.open_array(store, mode="r")


def test_http_chunk_failure_through_array_raises_store_error(http_serve, served_data):
    root, _data, _ = served_data
    base, _log = http_serve(root, FaultyHandler, fail_first=-1, only=r"/\d+\.\d+$")
    z = zarrkit.open_array(FsspecStore(f"{base}/v2.zarr", retries=1, retry_delay=0.001),
                           mode="r")
    with pytest.raises(StoreError, match=r"read of key '\d\.\d'"):
        z[:]


@pytest.mark.parametrize("status", [403, 404])
def test_http_client_errors_are_not_retried(http_serve, served_data, status):
    root, _, _ = served_data
    base, log = http_serve(root, FaultyHandler, fail_first=-1, status=status)
    store = FsspecStore(f"{base}/v2.zarr", **FAST)
    if status == 404:
        assert store.get("0.0") is None
    else:
        with pytest.raises(StoreError, match="403"):
            store.get("0.0")
    assert len([r for r in log if r[1] == "/v2.zarr/0.0"]) == 1


def test_urls_and_storage_options_through_the_api():
    url = f"memory://zk-api-{_uid()}/data.zarr"
    z = zarrkit.open_array(url, mode="w", shape=(6,), chunks=(2,), dtype="i2", storage_options={})
    z[:] = np.arange(6)
    r = zarrkit.open_array(url, mode="r", storage_options={})
    assert isinstance(r.store, FsspecStore) and r.store.read_only and r.read_only
    assert list(r[:]) == list(range(6))
    g = zarrkit.open_group(f"memory://zk-api-{_uid()}/g.zarr", mode="w", storage_options={})
    g.zeros("x", shape=(3,))
    zarrkit.consolidate_metadata(g.store)
    assert list(zarrkit.open_consolidated(g.store).array_keys()) == ["x"]
    assert isinstance(zarrkit.open(url, mode="r"), zarrkit.Array)
    with pytest.raises(TypeError):
        zarrkit.open_array({}, mode="r", storage_options={"anon": True})
