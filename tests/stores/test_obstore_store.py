"""ObjectStore (zarrkit's store on obstore) against obstore's LocalStore and MemoryStore and a
moto S3 server on 127.0.0.1; arrays it writes read bit-exactly by zarr-python's own
``zarr.storage.ObjectStore`` over the same bucket, and the other way round."""

from __future__ import annotations

import pickle
import uuid

import numpy as np
import pytest

obstore = pytest.importorskip("obstore")
from moto_s3 import BUCKET
from obstore.store import LocalStore, MemoryStore, S3Store

import zarrkit
from zarrkit.storage import ByteRange, FsspecStore, ObjectStore, coerce_store
from zarrkit.testing import PublicAPISuite, StoreSuite


def _uid() -> str:
    return uuid.uuid4().hex[:12]


class TestLocalObjectStore(StoreSuite, PublicAPISuite):
    conditional = False  # obstore's local files have no conditional replace

    def make_store(self, tmp_path):
        return ObjectStore(LocalStore(tmp_path / "data.zarr", mkdir=True))

    def make_read_only_store(self, tmp_path, source):
        return ObjectStore(LocalStore(source.store.prefix), read_only=True)

    def reopen_store(self, tmp_path, store, mode):
        return ObjectStore(LocalStore(store.store.prefix), read_only=mode == "r")


class TestMemoryObjectStore(StoreSuite, PublicAPISuite):
    picklable = False  # obstore's MemoryStore does not pickle
    conditional = True

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
    conditional = True

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
    # the index again (object stores keep none: checking costs a request too), then the four
    # ranges, closer than the coalescing gap, in one request
    assert len(gets) == 2 and all(r[3] is not None for r in gets), gets
    assert len(s3.recorder.below(prefix)) == len(gets)  # no HEAD or listing either


# -- zarr-python's ObjectStore over the same bucket -----------------------------------------------

zarr = pytest.importorskip("zarr")


def _zarr_store(s3, prefix, read_only=False):
    from zarr.storage import ObjectStore as ZarrObjectStore

    return ZarrObjectStore(_s3(s3, prefix), read_only=read_only)


LAYOUTS = {
    "v2": {"zarr_format": 2, "chunks": (7, 9), "compressors": {"id": "zstd", "level": 1}},
    "v3": {"zarr_format": 3, "chunks": (7, 9), "compressors": [{"name": "zstd", "configuration": {"level": 1}}]},
    "sharded": {"zarr_format": 3, "chunks": (5, 5), "shards": (10, 20)},
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


# -- URLs, storage options, configuration -----------------------------------------------------------


def test_urls_open_with_obstore_or_fsspec_as_configured(s3):
    prefix = _uid()
    url = f"s3://{BUCKET}/{prefix}"
    data = np.arange(100, dtype="u2").reshape(10, 10)
    assert zarrkit.config.remote == "obstore"  # obstore is installed
    root = zarrkit.open_group(url, mode="w", storage_options=s3.options, zarr_format=3)
    assert type(root.store) is ObjectStore and root.store.url == url
    root.create_array("x", shape=(10, 10), chunks=(5, 5), dtype="u2")[:] = data
    with zarrkit.config.set(remote="fsspec"):
        again = zarrkit.open_group(url, mode="r", storage_options=s3.options)
        assert type(again.store) is FsspecStore
        np.testing.assert_array_equal(again["x"][:], data)
        assert type(coerce_store(url, storage_options=s3.options)) is FsspecStore
    with zarrkit.config.set({"remote": "obstore"}):
        assert type(coerce_store(url, storage_options=s3.options)) is ObjectStore
    with pytest.raises(ValueError, match="remote"):
        zarrkit.config.set(remote="boto")
    # options obstore has no equivalent for: the URL goes to fsspec
    fs_only = {**s3.options, "config_kwargs": {"max_pool_connections": 20}}
    store = coerce_store(url, storage_options=fs_only, read_only=True)
    assert type(store) is FsspecStore and store.read_only
    np.testing.assert_array_equal(zarrkit.open_array(store, path="x")[:], data)
    # asked for explicitly, obstore says which options it cannot take
    with pytest.raises(zarrkit.errors.StorageOptionsError, match="config_kwargs"):
        ObjectStore.from_url(url, storage_options=fs_only)
    # memory:// and chained URLs stay with fsspec
    assert type(coerce_store(f"memory://zk-{_uid()}")) is FsspecStore


def test_storage_options_are_mapped():
    from zarrkit.storage.obstore_options import obstore_kwargs

    assert obstore_kwargs("s3://b/x", {"key": "K", "secret": "S", "token": "T", "anon": False,
                                       "endpoint_url": "https://minio.example:9000"}) == {
        "access_key_id": "K", "secret_access_key": "S", "session_token": "T",
        "skip_signature": False, "endpoint": "https://minio.example:9000"}
    assert obstore_kwargs("s3://b/x", {"anon": True, "client_kwargs": {
        "endpoint_url": "http://127.0.0.1:9000", "region_name": "eu-west-1"}}) == {
        "skip_signature": True, "endpoint": "http://127.0.0.1:9000", "region": "eu-west-1",
        "client_options": {"allow_http": True}}
    # obstore's own keys, client options and retry configuration pass through
    retry = {"max_retries": 2}
    assert obstore_kwargs("s3://b/x", {"aws_region": "us-west-2", "retry_config": retry,
                                       "client_options": {"timeout": "5s"}}) == {
        "aws_region": "us-west-2", "retry_config": retry, "client_options": {"timeout": "5s"}}
    assert obstore_kwargs("gcs://b/x", {"token": "anon", "project": "p"}) == {"skip_signature": True}
    assert obstore_kwargs("abfs://c@acct.dfs.core.windows.net/x", {
        "account_name": "acct", "sas_token": "sv=1", "anon": False}) == {
        "account_name": "acct", "sas_key": "sv=1", "skip_signature": False}
    assert obstore_kwargs("http://h/x", {}) == {"client_options": {"allow_http": True}}
    assert obstore_kwargs("https://h/x", {"headers": {"A": "1"}}) == {
        "client_options": {"default_headers": {"A": "1"}}}
    for url, bad in [("s3://b/x", {"client_kwargs": {"aws_session_token": "t"}}),
                     ("https://h/x", {"client_kwargs": {"trust_env": True}}),
                     ("gs://b/x", {"token": {"type": "authorized_user"}})]:
        with pytest.raises(zarrkit.errors.StorageOptionsError):
            obstore_kwargs(url, bad)
    # the stores they make, named by their URLs (nothing is requested yet)
    assert repr(ObjectStore.from_url("gcs://bkt/a/b", {"token": "anon"})) == "ObjectStore('gs://bkt/a/b')"
    az = ObjectStore.from_url("az://cont/data.zarr", {"account_name": "acct", "anon": True})
    assert az.url == "az://cont@acct.blob.core.windows.net/data.zarr" and az.high_latency
    with pytest.raises(zarrkit.errors.StorageOptionsError, match="no_such_key"):
        ObjectStore.from_url("s3://b/x", {"no_such_key": "1"})


# -- errors ---------------------------------------------------------------------------------------


def test_missing_bucket(s3):
    store = ObjectStore(S3Store(f"no-such-bucket-{_uid()}", prefix="x", endpoint=s3.endpoint,
                                access_key_id="testing", secret_access_key="testing",
                                region="us-east-1", client_options={"allow_http": True}))
    assert store.get("k") is None and store.get("k", ByteRange(0, 4)) is None
    assert store.get_many(["a", "b/c"]) == {"a": None, "b/c": None}
    assert list(store) == [] and store.list_dir("") == []
    with pytest.raises(zarrkit.errors.NodeNotFoundError):
        zarrkit.open_array(store, mode="r")
    with pytest.raises(zarrkit.errors.StoreError, match=r"'a/b'.*no-such-bucket"):
        store["a/b"] = b"1"


@pytest.fixture
def s3_auth(s3):
    """moto checking credentials and IAM policies: a user allowed to read only."""
    import json
    import urllib.request

    boto3 = pytest.importorskip("boto3")
    iam = boto3.client("iam", endpoint_url=s3.endpoint, region_name="us-east-1",
                       aws_access_key_id="testing", aws_secret_access_key="testing")
    user = f"reader-{_uid()}"
    iam.create_user(UserName=user)
    policy = {"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": ["s3:GetObject", "s3:ListBucket"], "Resource": "*"}]}
    iam.put_user_policy(UserName=user, PolicyName="read", PolicyDocument=json.dumps(policy))
    key = iam.create_access_key(UserName=user)["AccessKey"]
    prefix = _uid()
    s3.fs.pipe_file(f"{BUCKET}/{prefix}/x", b"hello")  # (before moto checks credentials)

    def enforce(count: str) -> None:
        req = urllib.request.Request(f"{s3.endpoint}/moto-api/reset-auth", data=count.encode(),
                                     method="POST", headers={"Content-Type": "text/plain"})
        urllib.request.urlopen(req).read()

    enforce("0")
    try:
        yield key["AccessKeyId"], key["SecretAccessKey"], prefix
    finally:
        enforce("inf")


def test_permission_errors_name_store_and_key(s3, s3_auth):
    key, secret, prefix = s3_auth
    reader = ObjectStore(_s3(s3, prefix, access_key_id=key, secret_access_key=secret))
    assert reader["x"] == b"hello" and list(reader) == ["x"]
    with pytest.raises(zarrkit.errors.StoreError, match=r"write of key 'y' in ObjectStore\('s3://.*permission denied"):
        reader["y"] = b"1"
    wrong = ObjectStore(_s3(s3, prefix, access_key_id="AKIAWRONGWRONG", secret_access_key="no"))
    with pytest.raises(zarrkit.errors.StoreError, match=r"read of key 'x' .*permission denied"):
        wrong.get("x")
    with pytest.raises(zarrkit.errors.StoreError, match=r"list .*permission denied.*403"):
        wrong.list_dir("")
    assert reader.get_many(["x", "y"]) == {"x": b"hello", "y": None}


def test_read_only_refusal(s3):
    prefix = _uid()
    store = _store(s3, prefix)
    z = zarrkit.create_array(store, shape=(4,), chunks=(2,), dtype="i2", zarr_format=3)
    z[:] = 5
    ro = _store(s3, prefix, read_only=True)
    assert repr(ro).endswith("read_only=True)")
    for write in (lambda: ro.set("a", b"1"), lambda: ro.delete("zarr.json"),
                  lambda: ro.delete_prefix(""), lambda: zarrkit.open_array(ro, mode="r+").__setitem__(0, 1)):
        with pytest.raises(zarrkit.errors.ReadOnlyError):
            write()
    url_ro = zarrkit.open_array(f"s3://{BUCKET}/{prefix}", mode="r", storage_options=s3.options)
    assert type(url_ro.store) is ObjectStore and url_ro.store.read_only
    with pytest.raises(zarrkit.errors.ReadOnlyError):
        url_ro[:] = 1
    np.testing.assert_array_equal(zarrkit.open_array(store)[:], 5)


# -- HTTP: reads, ranges and obstore's retries ---------------------------------------------------


def _fast_retries(n: int) -> dict:
    from datetime import timedelta

    return {"max_retries": n, "backoff": {"init_backoff": timedelta(milliseconds=1),
                                          "max_backoff": timedelta(milliseconds=5)}}


def test_http_urls_read_arrays(http_serve, served_data):
    root, data, big = served_data
    base, log = http_serve(root)
    z = zarrkit.open_array(f"{base}/v3.zarr", mode="r")
    assert type(z.store) is ObjectStore and z.store.read_only and not z.store.supports_writes
    assert repr(z.store) == f"ObjectStore('{base}/v3.zarr')"
    expected = data.copy()
    expected[14:, 14:] = -5  # the missing chunk (a 404)
    np.testing.assert_array_equal(z[:], expected)
    with pytest.raises(zarrkit.errors.ReadOnlyError):
        z.store["x"] = b"1"
    # no WebDAV on a plain web server: listings are refused at once, naming what to do instead
    n = len(log)
    with pytest.raises(zarrkit.errors.StoreOperationNotSupported, match="remote='fsspec'"):
        z.store.list_dir("")
    with pytest.raises(zarrkit.errors.StoreOperationNotSupported, match="consolidated"):
        list(z.store.list_prefix("c/"))
    assert len(log) == n
    del log[:]
    sharded = zarrkit.open_array(f"{base}/sharded.zarr", mode="r")
    np.testing.assert_array_equal(sharded[0:8, 0:16], big[0:8, 0:16])
    ranges = [r[2] for r in log if "/c/" in r[1]]
    assert ranges[0] == "bytes=-260"  # the index of 4 x 4 inner chunks, and its checksum
    assert len(ranges) == 2 and ranges[1].startswith("bytes=0-")  # two chunks, one request


@pytest.mark.parametrize("drop", [False, True], ids=["503", "dropped"])
def test_http_transient_failures_are_retried_by_obstore(http_serve, served_data, drop):
    from http_serve import FaultyHandler
    from obstore.store import HTTPStore

    root, data, _ = served_data
    base, log = http_serve(root, FaultyHandler, fail_first=2, drop=drop)
    store = ObjectStore(HTTPStore.from_url(f"{base}/v2.zarr", retry_config=_fast_retries(3),
                                           client_options={"allow_http": True}))
    np.testing.assert_array_equal(zarrkit.open_array(store, mode="r")[:], data)
    assert len([r for r in log if r[3] == (0 if drop else 503)]) >= 2 * 9  # each chunk twice
    # retry_config in storage_options reaches obstore
    url_store = coerce_store(f"{base}/v3.zarr", storage_options={"retry_config": _fast_retries(3)})
    assert url_store.get("zarr.json") == (root / "v3.zarr" / "zarr.json").read_bytes()


def test_http_persistent_and_client_errors(http_serve, served_data):
    from http_serve import FaultyHandler
    from obstore.store import HTTPStore

    root, _, _ = served_data
    base, log = http_serve(root, FaultyHandler, fail_first=-1)
    store = ObjectStore(HTTPStore.from_url(f"{base}/v2.zarr", retry_config=_fast_retries(2),
                                           client_options={"allow_http": True}))
    with pytest.raises(zarrkit.errors.StoreError, match=rf"read of key '0.0' in ObjectStore\('{base}/v2.zarr'\) failed.*503"):
        store.get("0.0")
    assert len([r for r in log if r[1] == "/v2.zarr/0.0"]) == 3  # 2 retries
    with pytest.raises(zarrkit.errors.StoreError, match="'1.1'"):
        store.get_many(["1.1", "0.0"])
    with pytest.raises(zarrkit.errors.StoreError, match=r"'\.zarray'"):
        store.get(".zarray", ByteRange(0, 4))
    base403, log403 = http_serve(root, FaultyHandler, fail_first=-1, status=403)
    store = ObjectStore(HTTPStore.from_url(f"{base403}/v2.zarr", retry_config=_fast_retries(2),
                                           client_options={"allow_http": True}))
    with pytest.raises(zarrkit.errors.StoreError, match="'0.0'.*permission denied"):
        store.get("0.0")
    assert len([r for r in log403 if r[1] == "/v2.zarr/0.0"]) == 1  # not retried


def test_http_time_out_raises_store_error(http_serve, served_data):
    import time

    from http_serve import RangeHandler
    from obstore.store import HTTPStore

    class SlowHandler(RangeHandler):
        def do_GET(self):
            time.sleep(0.5)
            super().do_GET()

    root, _, _ = served_data
    base, _log = http_serve(root, SlowHandler)
    store = ObjectStore(HTTPStore.from_url(f"{base}/v2.zarr", retry_config=_fast_retries(1),
                                           client_options={"allow_http": True, "timeout": "100ms"}))
    with pytest.raises(zarrkit.errors.StoreError, match=r"read of key '\.zarray' in ObjectStore\('http://.*failed"):
        store.get(".zarray")
    patient = ObjectStore(HTTPStore.from_url(f"{base}/v2.zarr", client_options={"allow_http": True}))
    assert patient.get(".zarray") == (root / "v2.zarr" / ".zarray").read_bytes()


def test_obstore_is_imported_lazily():
    import subprocess
    import sys

    code = ("import sys, zarrkit, zarrkit.storage; assert zarrkit.config.remote == 'obstore'; "
            "assert 'obstore' not in sys.modules, 'zarrkit imports obstore eagerly'")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_an_obstore_store_is_taken_wherever_a_store_is(tmp_path):
    raw = LocalStore(str(tmp_path))
    z = zarrkit.create_array(store=raw, shape=(6,), chunks=(4,), dtype="i2")
    z[:] = np.arange(6, dtype="i2")
    assert type(z.store).__name__ == "ObjectStore"
    assert (tmp_path / "c" / "1").is_file()
    back = zarrkit.open_array(LocalStore(str(tmp_path)), mode="r")
    np.testing.assert_array_equal(back[:], np.arange(6))
    with pytest.raises(zarrkit.errors.ReadOnlyError):
        back[0] = 1
