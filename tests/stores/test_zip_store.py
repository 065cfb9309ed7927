"""ZipStore: the conformance suite and the public-API round trips, what the zip format cannot do
(rewrite or remove a member in place), modes, closing, compression, ZIP64, damaged files, and
zip files exchanged with zarr-python."""

from __future__ import annotations

import gc
import pickle
import warnings
import zipfile

import numpy as np
import pytest

import zarrkit
from zarrkit.cli import main
from zarrkit.errors import NodeExistsError, ReadOnlyError, StoreError
from zarrkit.storage import ByteRange, CountingStore, ZipStore
from zarrkit.testing import PublicAPISuite, StoreSuite

REWRITE_WARNING = "ignore:ZipStore .* is written again:UserWarning"


def _members(path) -> list[str]:
    with zipfile.ZipFile(path) as zf:
        return zf.namelist()


# -- the conformance suite and the public API ----------------------------------------------------


@pytest.mark.filterwarnings(REWRITE_WARNING)  # the suite rewrites keys; checked on its own below
class TestZipStore(StoreSuite, PublicAPISuite):
    picklable = False  # a store open for writing; mode 'r' pickles (test_pickle_read_mode)

    def make_store(self, tmp_path):
        return ZipStore(tmp_path / "data.zip", mode="w")

    def make_read_only_store(self, tmp_path, source):
        source.flush()  # the central directory, so that another reader sees the members
        return ZipStore(source.path, mode="r")

    def reopen_store(self, tmp_path, store, mode):
        store.close()
        return ZipStore(store.path, mode="r" if mode == "r" else "a")


@pytest.mark.filterwarnings(REWRITE_WARNING)
class TestZipStoreDeflated(StoreSuite, PublicAPISuite):
    picklable = False

    def make_store(self, tmp_path):
        return ZipStore(tmp_path / "data.zip", mode="x", compression=zipfile.ZIP_DEFLATED)

    def make_read_only_store(self, tmp_path, source):
        source.flush()
        return ZipStore(source.path, mode="r")

    def reopen_store(self, tmp_path, store, mode):
        store.close()
        return ZipStore(store.path, mode="r" if mode == "r" else "a",
                        compression=zipfile.ZIP_DEFLATED)


# -- rewriting and deleting: what a zip file cannot do in place ----------------------------------


def test_rewrite_lists_each_name_once_with_a_warning(tmp_path):
    """A key written again leaves one member of that name in the central directory: zip files
    that list a name twice are ambiguous (readers disagree on which member counts)."""
    path = tmp_path / "z.zip"
    with ZipStore(path, mode="w") as store:
        store["k"] = b"first, longer value"
        store["other"] = b"o"
        with pytest.warns(UserWarning, match=r"z\.zip.*'k' is written again") as record:
            store["k"] = b"second"
        assert len(record) == 1  # zipfile's own "Duplicate name" warning is not passed on
        assert store["k"] == b"second"
        assert store.get("k", ByteRange(-3)) == b"ond"
        assert store.getsize("k") == 6
        assert sorted(store) == ["k", "other"] and len(store) == 2
        assert store.list_dir("") == ["k", "other"]
    assert _members(path) == ["other", "k"]
    assert b"first, longer value" in path.read_bytes()  # unlisted, its bytes still there
    with ZipStore(path, mode="r") as store:
        assert store["k"] == b"second" and sorted(store) == ["k", "other"]
    # the same in mode 'a', over members of the zip file being changed
    with ZipStore(path, mode="a") as store, pytest.warns(UserWarning, match="written again"):
        store["other"] = b"new"
    assert _members(path) == ["k", "other"]
    with zipfile.ZipFile(path) as zf:
        assert zf.read("other") == b"new" and zf.testzip() is None


def test_writing_each_key_once_leaves_no_duplicates(tmp_path):
    """A whole array written in one go writes every chunk and metadata document once."""
    path = tmp_path / "z.zip"
    data = np.arange(40 * 30, dtype="i2").reshape(40, 30)
    with ZipStore(path, mode="w") as store, warnings.catch_warnings():
        warnings.simplefilter("error")
        a = zarrkit.create_array(store, name="plain", shape=data.shape, chunks=(16, 16),
                                 dtype="i2", attributes={"a": 1})
        a[:] = data
        s = zarrkit.create_array(store, name="sharded", shape=data.shape, chunks=(8, 8),
                                 shards=(16, 16), dtype="i2")
        s[:] = data
    names = _members(path)
    assert len(names) == len(set(names))
    assert sum(n.startswith("sharded/c/") for n in names) == 3 * 2
    with ZipStore(path, mode="r") as store:
        np.testing.assert_array_equal(zarrkit.open_array(store, path="sharded", mode="r")[:], data)


@pytest.mark.parametrize("mode", ["w", "a"])
def test_delete_drops_the_member(tmp_path, mode):
    path = tmp_path / "z.zip"
    if mode == "a":
        _write_zip(path, {"a/b": b"1", "a/c": b"2", "keep": b"3"})
    store = ZipStore(path, mode=mode)
    if mode == "w":
        store.update({"a/b": b"1", "a/c": b"2", "keep": b"3"})
    assert store.supports_deletes is True
    store.delete("a/b")
    store.delete("missing")  # not an error, as in every store
    assert "a/b" not in store and sorted(store) == ["a/c", "keep"]
    store.rmdir("a")
    assert sorted(store) == ["keep"]
    # what the array API does to remove data works too: an array overwritten in place
    z = zarrkit.create(shape=(4,), chunks=(2,), dtype="i4", store=store, path="arr", zarr_format=2)
    z[:] = 1
    z = zarrkit.create(shape=(6,), chunks=(3,), dtype="i4", store=store, path="arr",
                       zarr_format=2, overwrite=True)
    z[:] = 2
    store.close()
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
    assert len(names) == len(set(names)) and "a/b" not in names and "arr/1" in names
    with ZipStore(path, mode="r") as ro:
        assert "keep" in ro and not any(k.startswith("a/") for k in ro)
        np.testing.assert_array_equal(zarrkit.open_array(ro, path="arr", mode="r")[:], 2)
        with pytest.raises(ReadOnlyError):  # read-only comes first
            ro.delete("keep")


# -- modes ---------------------------------------------------------------------------------------


def _write_zip(path, items):
    with ZipStore(path, mode="w") as store:
        for k, v in items.items():
            store[k] = v


def test_mode_r_reads_and_refuses_writes(tmp_path):
    path = tmp_path / "z.zip"
    _write_zip(path, {"k": b"v", "d/x": b"x"})
    before = path.read_bytes()
    store = ZipStore(path, mode="r")
    assert store.read_only and store.mode == "r"
    assert store["k"] == b"v" and sorted(store) == ["d/x", "k"]
    for action in (lambda: store.set("k", b"new"), lambda: store.set("new", b"1"),
                   lambda: store.delete("k"), lambda: store.delete("missing"),
                   lambda: store.delete_prefix("d/"), lambda: store.rmdir()):
        with pytest.raises(ReadOnlyError, match=r"z\.zip.*read-only"):
            action()
    with pytest.raises(ReadOnlyError):
        zarrkit.create(shape=(4,), chunks=(2,), dtype="i4", store=store, path="arr")
    store.flush()  # nothing to write: not an error
    store.close()
    assert path.read_bytes() == before


def test_mode_r_missing_file(tmp_path):
    path = tmp_path / "missing.zip"
    with pytest.raises(FileNotFoundError, match=r"missing\.zip"):
        ZipStore(path, mode="r")
    assert not path.exists()


def test_mode_w_replaces_the_file(tmp_path):
    path = tmp_path / "z.zip"
    _write_zip(path, {"old": b"1"})
    with ZipStore(path, mode="w") as store:
        assert len(store) == 0
        store["new"] = b"2"
    assert _members(path) == ["new"]


def test_mode_x_creates_and_refuses_an_existing_file(tmp_path):
    path = tmp_path / "z.zip"
    with ZipStore(path, mode="x") as store:
        store["k"] = b"v"
    before = path.read_bytes()
    with pytest.raises(NodeExistsError, match=r"z\.zip.*already exists") as info:
        ZipStore(path, mode="x")
    assert isinstance(info.value, FileExistsError)
    assert path.read_bytes() == before
    with ZipStore(path, mode="r") as store:
        assert store["k"] == b"v"


def test_mode_a_appends_to_an_existing_zip(tmp_path):
    path = tmp_path / "z.zip"
    _write_zip(path, {"first": b"1", "d/x": b"x"})
    with ZipStore(path, mode="a") as store:
        assert store["first"] == b"1"
        store["second"] = b"2"
        assert sorted(store) == ["d/x", "first", "second"]
    assert _members(path) == ["first", "d/x", "second"]
    # and 'a' (the default) creates a missing file
    new = tmp_path / "new.zip"
    with ZipStore(new) as store:
        assert store.mode == "a" and len(store) == 0
        store["k"] = b"v"
    assert _members(new) == ["k"]


def test_mode_a_array_added_to_an_existing_zip(tmp_path):
    path = tmp_path / "z.zip"
    with ZipStore(path, mode="w") as store:
        zarrkit.create_array(store, name="one", shape=(6,), chunks=(3,), dtype="i4")[:] = 1
    with ZipStore(path, mode="a") as store:
        zarrkit.create_array(store, name="two", shape=(6,), chunks=(3,), dtype="i4")[:] = 2
    with ZipStore(path, mode="r") as store:
        np.testing.assert_array_equal(zarrkit.open_array(store, path="one", mode="r")[:], 1)
        np.testing.assert_array_equal(zarrkit.open_array(store, path="two", mode="r")[:], 2)


def test_mode_a_changes_appear_whole_at_close(tmp_path):
    """An append writes a new archive beside the zip file and renames it over the zip file at
    close: until then the zip file is untouched, even once the new members are read back."""
    real = tmp_path / "real.zip"
    _write_zip(real, {"old": b"1" * 50_000})
    real.chmod(0o640)
    link = tmp_path / "link.zip"
    link.symlink_to(real)
    before = real.read_bytes()
    store = ZipStore(link, mode="a")
    store["new"] = b"2" * 50_000
    assert store["new"] == b"2" * 50_000 and store["old"] == b"1" * 50_000
    assert real.read_bytes() == before
    assert len(list(tmp_path.glob(".real.zip.zarrkit-append-*"))) == 1
    store.close()
    assert link.is_symlink() and _members(real) == ["old", "new"]
    assert real.stat().st_mode & 0o777 == 0o640  # the zip file's mode carries over
    assert list(tmp_path.glob(".real.zip.zarrkit-append-*")) == []
    # clear() in mode 'a': an empty zip file, at close
    with ZipStore(real, mode="a") as store:
        store.clear()
        assert len(store) == 0 and _members(real) == ["old", "new"]
        store["k"] = b"v"
    assert _members(real) == ["k"]

    # a store dropped without close keeps what was written, as zipfile does for a ZipFile
    def drop():
        store = ZipStore(real, mode="a")
        store["dropped"] = b"d"

    drop()
    gc.collect()
    assert _members(real) == ["k", "dropped"]


@pytest.mark.parametrize("kind", ["text", "unfinished-zip"])
def test_mode_a_refuses_a_file_that_is_not_a_zip_file(tmp_path, kind):
    path = tmp_path / "z.zip"
    if kind == "text":
        path.write_bytes(b"a text file, not a zip file\n" * 10)
    else:  # a writer that never closed the file: members, no central directory
        _write_zip(path, {"k": b"v" * 100})
        data = path.read_bytes()
        path.write_bytes(data[: data.index(b"PK\x01\x02")])
    before = path.read_bytes()
    with pytest.raises(StoreError, match=r"z\.zip.*not a zip file"):
        ZipStore(path, mode="a")
    assert path.read_bytes() == before  # no second archive appended


def test_mode_a_on_an_empty_file_starts_a_zip_file(tmp_path):
    path = tmp_path / "z.zip"
    path.write_bytes(b"")
    with ZipStore(path, mode="a") as store:
        store["k"] = b"v"
    assert _members(path) == ["k"]


def test_bad_mode(tmp_path):
    with pytest.raises(ValueError, match="'rw'"):
        ZipStore(tmp_path / "z.zip", mode="rw")
    assert not (tmp_path / "z.zip").exists()


# -- closing, flushing, context manager ----------------------------------------------------------


def test_close_writes_the_central_directory(tmp_path):
    path = tmp_path / "z.zip"
    store = ZipStore(path, mode="w")
    store["a"] = b"1"
    assert not zipfile.is_zipfile(path)  # no central directory before close/flush
    store.close()
    assert zipfile.is_zipfile(path) and _members(path) == ["a"]
    for action in (lambda: store.get("a"), lambda: store.set("b", b"2"), lambda: list(store),
                   lambda: store.exists("a"), lambda: store.getsize("a"), store.flush,
                   lambda: store.delete("a")):
        with pytest.raises(StoreError, match=r"z\.zip.*closed"):
            action()
    store.close()  # twice is fine


def test_flush_keeps_the_store_writable(tmp_path):
    path = tmp_path / "z.zip"
    store = ZipStore(path, mode="w")
    store["a"] = b"1"
    store.flush()
    with ZipStore(path, mode="r") as reader:
        assert reader["a"] == b"1"
    store["b"] = b"2"
    assert store["a"] == b"1" and store["b"] == b"2"
    store.close()
    assert _members(path) == ["a", "b"]


def test_context_manager(tmp_path):
    path = tmp_path / "z.zip"
    data = np.arange(50, dtype="u1")
    with ZipStore(path, mode="w") as store:
        zarrkit.array(data, chunks=10, store=store)
    with pytest.raises(StoreError, match="closed"):
        store.get("zarr.json")
    with ZipStore(path, mode="r") as store:
        np.testing.assert_array_equal(zarrkit.open_array(store, mode="r")[:], data)
    # an error inside the block still closes the file: what was written is readable
    with pytest.raises(RuntimeError, match="boom"), ZipStore(tmp_path / "e.zip", mode="w") as store:
        store["k"] = b"v"
        raise RuntimeError("boom")
    assert _members(tmp_path / "e.zip") == ["k"]


# -- compression, ZIP64 --------------------------------------------------------------------------


def test_deflated_members(tmp_path):
    path = tmp_path / "z.zip"
    value = b"0123456789" * 10_000
    with ZipStore(path, mode="w", compression=zipfile.ZIP_DEFLATED) as store:
        store["k"] = value
        assert store.get("k", ByteRange(50_005, 7)) == value[50_005:50_012]
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo("k")
        assert info.compress_type == zipfile.ZIP_DEFLATED
        assert info.compress_size < len(value) // 10
    with ZipStore(path, mode="r") as store:  # reading needs no compression argument
        assert store["k"] == value
        assert store.get("k", ByteRange(-4)) == b"6789"
    with ZipStore(tmp_path / "s.zip", mode="w") as store:  # the default: stored
        store["k"] = value
    with zipfile.ZipFile(tmp_path / "s.zip") as zf:
        assert zf.getinfo("k").compress_type == zipfile.ZIP_STORED


def test_allow_zip64(tmp_path, monkeypatch):
    # the limits of the classic format, lowered to keep the test quick: 5 members, 150 bytes
    monkeypatch.setattr(zipfile, "ZIP_FILECOUNT_LIMIT", 5)
    monkeypatch.setattr(zipfile, "ZIP64_LIMIT", 150)
    keys = [f"k{i}" for i in range(6)]
    with ZipStore(tmp_path / "big.zip", mode="w") as store:
        assert store.allowZip64 is True  # the default
        for k in keys:
            store[k] = k.encode() * 30
    with ZipStore(tmp_path / "big.zip", mode="r") as store:
        assert sorted(store) == keys and store["k5"] == b"k5" * 30

    # without ZIP64: a member past the limits is refused, and so is a central directory
    store = ZipStore(tmp_path / "small.zip", mode="w", allowZip64=False)
    store["a"] = bytes(60)
    store["b"] = bytes(60)
    with pytest.raises(StoreError, match=r"small\.zip.*'c'.*ZIP64.*allowZip64=False"):
        store["c"] = bytes(60)
    with pytest.raises(StoreError, match=r"small\.zip.*ZIP64.*allowZip64=False"):
        store.close()
    with pytest.raises(StoreError, match="closed"):
        store.get("a")
    store.close()  # already closed: nothing more to report
    monkeypatch.setattr(zipfile, "ZIP64_LIMIT", 2**31 - 1)
    store = ZipStore(tmp_path / "count.zip", mode="w", allowZip64=False)
    for k in keys[:5]:
        store[k] = k.encode()
    with pytest.raises(StoreError, match=r"count\.zip.*'k5'.*ZIP64"):
        store["k5"] = b"k5"
    store.close()  # the five members are complete
    assert _members(tmp_path / "count.zip") == keys[:5]


_METHODS = {"deflated": zipfile.ZIP_DEFLATED, "bzip2": zipfile.ZIP_BZIP2, "lzma": zipfile.ZIP_LZMA}


@pytest.mark.parametrize("method", ["stored", *_METHODS])
def test_every_method_reads_whole_and_by_ranges(tmp_path, method):
    """Members are read by zarrkit's own bounded reader: checked against zipfile's, for
    every compression method zipfile writes."""
    path = tmp_path / "m.zip"
    value = np.random.default_rng(3).integers(0, 40, 300_000, dtype=np.uint8).tobytes()
    kind = zipfile.ZIP_STORED if method == "stored" else _METHODS[method]
    with ZipStore(path, mode="w", compression=kind) as store:
        store["v"] = value
        store["empty"] = b""
        assert store["v"] == value  # read back before the file is complete
    with ZipStore(path, mode="r") as store:
        assert store["v"] == value and store["empty"] == b""
        for start, length in [(0, 1), (12_345, 70_000), (299_990, 10), (299_990, 100)]:
            got = store.get("v", ByteRange(start, length))
            assert got == value[start:start + length]
        assert store.get("v", ByteRange(-7)) == value[-7:]
    with zipfile.ZipFile(path) as zf:
        assert zf.read("v") == value and zf.getinfo("v").compress_type == kind


# -- damaged files -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "mode, content",
    [("r", b""), ("r", b"not a zip file at all" * 50), ("r", "truncated"),
     ("a", b"not a zip file at all" * 50), ("a", "truncated")],  # ('a', empty file): a new zip
    ids=["r-empty", "r-text", "r-truncated", "a-text", "a-truncated"],
)
def test_a_file_that_is_not_a_zip_file(tmp_path, mode, content):
    path = tmp_path / "bad.zip"
    if content == "truncated":
        _write_zip(path, {"k": b"v" * 1000})
        content = path.read_bytes()[:-10]  # the end of the central directory is cut off
    path.write_bytes(content)
    with pytest.raises(StoreError, match=r"bad\.zip.*not a (valid )?zip file"):
        ZipStore(path, mode=mode)
    assert path.read_bytes() == content


@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_a_damaged_member_is_a_store_error(tmp_path, compression):
    path = tmp_path / "z.zip"
    value = np.random.default_rng(0).integers(0, 256, 5000, dtype=np.uint8).tobytes()
    with ZipStore(path, mode="w", compression=compression) as store:
        store["good"] = b"fine"
        store["arr/c/0"] = value
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo("arr/c/0")
        start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    raw = bytearray(path.read_bytes())
    raw[start + 100 : start + 140] = bytes(40)  # damage the member's data
    path.write_bytes(bytes(raw))
    with ZipStore(path, mode="r") as store:
        assert store["good"] == b"fine"
        with pytest.raises(StoreError, match=r"z\.zip.*'arr/c/0'"):
            store.get("arr/c/0")


# -- pickling ------------------------------------------------------------------------------------


def test_pickle_read_mode(tmp_path):
    path = tmp_path / "z.zip"
    _write_zip(path, {"k": b"v", "d/x": b"x"})
    with ZipStore(path, mode="r") as store:
        clone = pickle.loads(pickle.dumps(store))
        try:
            assert type(clone) is ZipStore and clone.read_only and clone.path == store.path
            assert clone["k"] == b"v" and sorted(clone) == ["d/x", "k"]
            with pytest.raises(ReadOnlyError):
                clone["k"] = b"w"
        finally:
            clone.close()
    for mode in ("w", "a"):
        with ZipStore(tmp_path / f"{mode}.zip", mode=mode) as store, \
                pytest.raises(TypeError, match=f"mode='{mode}'"):
            pickle.dumps(store)


# -- zip files exchanged with zarr-python --------------------------------------------------------


@pytest.fixture
def zarr():
    """zarr-python, the reference implementation (a test dependency)."""
    return pytest.importorskip("zarr")


LAYOUTS = [
    pytest.param(2, None, id="v2"),
    pytest.param(3, None, id="v3"),
    pytest.param(3, (16, 12), id="v3-sharded"),
]


def _data():
    return (np.arange(37 * 23, dtype="f4").reshape(37, 23) - 100) / 3


@pytest.mark.parametrize("zarr_format, shards", LAYOUTS)
def test_zarr_python_zip_read_by_zarrkit(tmp_path, zarr, zarr_format, shards):
    path = tmp_path / "zp.zip"
    data = _data()
    zs = zarr.storage.ZipStore(path, mode="w")
    a = zarr.create_array(store=zs, name="grp/arr", shape=data.shape, chunks=(8, 6),
                          shards=shards, dtype="f4", fill_value=-9.0, zarr_format=zarr_format,
                          attributes={"units": "K"})
    a[:30] = data[:30]
    zs.close()
    expected = np.full(data.shape, -9.0, dtype="f4")
    expected[:30] = data[:30]
    with ZipStore(path, mode="r") as store:
        z = zarrkit.open_array(store, path="grp/arr", mode="r")
        got = z[:]
        assert got.dtype == np.dtype("f4") and got.tobytes() == expected.tobytes()  # bit-exact
        assert z.attrs["units"] == "K" and z.fill_value == -9.0
        assert z.chunks == (8, 6) and (shards is None or z.shards == shards)
        np.testing.assert_array_equal(z[3:29, 5:17], expected[3:29, 5:17])
        assert zarrkit.open_group(store, mode="r")["grp/arr"].shape == data.shape


class _CountingFile:
    """A file object that counts the bytes read through it."""

    def __init__(self, f):
        self._f = f
        self.bytes_read = 0

    def read(self, n=-1):
        data = self._f.read(n)
        self.bytes_read += len(data)
        return data

    def __getattr__(self, name):
        return getattr(self._f, name)


def test_zarr_python_sharded_zip_is_read_by_byte_ranges(tmp_path, zarr, monkeypatch):
    path = tmp_path / "zp.zip"
    data = np.random.default_rng(1).random((128, 96))  # incompressible: 48 KiB per shard
    zs = zarr.storage.ZipStore(path, mode="w")
    zarr.create_array(store=zs, shape=data.shape, chunks=(16, 16), shards=(64, 96), dtype="f8",
                      zarr_format=3)[:] = data
    zs.close()
    with ZipStore(path, mode="r") as store:
        z = zarrkit.open_array(store, mode="r")
        calls = []
        real_get = store._get

        def spy(key, byte_range):
            value = real_get(key, byte_range)
            calls.append((key, byte_range, None if value is None else len(value)))
            return value

        monkeypatch.setattr(store, "_get", spy)
        counting_file = _CountingFile(store._zf.fp)
        store._zf.fp = counting_file
        # one inner chunk (rows 80..95, columns 32..47) of the shard c/1/0
        np.testing.assert_array_equal(z[81:90, 33:40], data[81:90, 33:40])
        assert calls and {k for k, _, _ in calls} == {"c/1/0"}, calls
        assert all(r is not None for _, r, _ in calls), calls  # index and chunk: byte ranges
        shard_size = store.getsize("c/1/0")
        assert sum(n for _, _, n in calls) < shard_size / 8, (calls, shard_size)
        # and the zip file itself is read only there (zipfile reads at least 4 KiB at a time)
        assert counting_file.bytes_read < shard_size / 4, (counting_file.bytes_read, shard_size)
    # the same through a CountingStore: only ranged requests, fewer bytes than the shard
    with ZipStore(path, mode="r") as store:
        counting = CountingStore(store)
        z = zarrkit.open_array(counting, mode="r")
        counting.reset()
        np.testing.assert_array_equal(z[0:4, 0:4], data[0:4, 0:4])
        assert counting.keys_read and all(r is not None for _, r in counting.keys_read)
        assert counting.bytes_read < store.getsize("c/0/0") / 8


@pytest.mark.parametrize("zarr_format, shards", LAYOUTS)
@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED],
                         ids=["stored", "deflated"])
def test_zarrkit_zip_read_by_zarr_python(tmp_path, zarr, zarr_format, shards, compression):
    path = tmp_path / "zk.zip"
    data = _data()
    with ZipStore(path, mode="w", compression=compression) as store:
        root = zarrkit.group(store, zarr_format=zarr_format)
        with pytest.warns(UserWarning, match="written again"):
            root.attrs["title"] = "zk"  # a second member for the group's metadata
        a = zarrkit.create_array(store, name="arr", shape=data.shape, chunks=(8, 6),
                                 shards=shards, dtype="f4", fill_value=-9.0,
                                 zarr_format=zarr_format, attributes={"units": "K"})
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the array's keys are written once
            a[:30] = data[:30]
    expected = np.full(data.shape, -9.0, dtype="f4")
    expected[:30] = data[:30]
    names = _members(path)
    assert len(names) == len(set(names))  # the group's metadata, written twice, listed once
    zs = zarr.storage.ZipStore(path, mode="r")
    try:
        g = zarr.open_group(zs, mode="r", zarr_format=zarr_format)
        assert g.attrs["title"] == "zk"  # the newer member
        arr = g["arr"]
        got = arr[:]
        assert got.dtype == np.dtype("f4") and got.tobytes() == expected.tobytes()
        assert arr.attrs["units"] == "K" and arr.chunks == (8, 6)
        if shards is not None:
            assert arr.shards == shards
    finally:
        zs.close()


def test_clear_starts_the_zip_file_anew(tmp_path):
    path = tmp_path / "c.zip"
    store = ZipStore(path, mode="w")
    store["a/b"] = b"1"
    store["c"] = b"2"
    store.clear()
    assert list(store) == []
    store["d"] = b"3"
    store.close()
    with ZipStore(path, mode="r") as ro:
        assert list(ro) == ["d"]
        with pytest.raises(ReadOnlyError):
            ro.clear()


def test_members_no_key_can_name_are_not_listed(tmp_path):
    """A zip file written elsewhere may hold members named '/x', '//x', './x' or '../x': they
    are left out of listings, so the root does not list itself and the valid arrays beside
    them are listed, read, copied and verified."""
    path = tmp_path / "h.zip"
    with ZipStore(str(path), mode="w") as store:
        zarrkit.group(store=store).create_array("a", shape=(4,), chunks=(2,), dtype="i4")[:] = 1
    with zipfile.ZipFile(path, "a") as z:
        for name in ("/x", "//x", "./y", "../z", "a//b"):
            z.writestr(name, b"junk")
    store = ZipStore(str(path), mode="r")
    assert sorted(store.list_prefix("")) == ["a/c/0", "a/c/1", "a/zarr.json", "zarr.json"]
    assert store.list_dir("") == ["a", "zarr.json"]
    g = zarrkit.open_group(store, mode="r")
    assert list(g) == ["a"] and g["a"][:].tolist() == [1, 1, 1, 1]
    visited = []
    g.visit(visited.append)
    assert visited == ["a"]
    store.close()
    assert main(["verify", str(path)]) == 0
    assert main(["cp", str(path), str(tmp_path / "copy.zarr")]) == 0
    assert zarrkit.open_array(str(tmp_path / "copy.zarr"), path="a")[:].tolist() == [1, 1, 1, 1]


def test_path_given_as_bytes(tmp_path):
    path = str(tmp_path / "b.zip").encode()
    with ZipStore(path, mode="w") as store:
        store["k"] = b"v"
        assert store.path == str(tmp_path / "b.zip")
    assert _members(tmp_path / "b.zip") == ["k"]
    with ZipStore(path, mode="r") as store:
        assert store["k"] == b"v"
