"""The store conformance suite and the public-API round trips run on every built-in store, plus
local-file-system specifics.  (The read-only wrappers get the conformance suite only: they cannot
be written through.)"""

from __future__ import annotations

import json
import os
import threading
import time
import types

import numpy as np
import pytest

import zarrkit
from zarrkit.errors import InvalidPathError, ReadOnlyError
from zarrkit.storage import (
    CountingStore,
    DictStore,
    DirectoryStore,
    MappingStore,
    MemoryStore,
    NestedDirectoryStore,
    ReadOnlyStore,
    TempStore,
)
from zarrkit.storage.local import TEMP_MARKER
from zarrkit.testing import PublicAPISuite, StoreSuite

# -- the conformance suite on each store ---------------------------------------------------------


class TestMemoryStore(StoreSuite, PublicAPISuite):

    def make_store(self, tmp_path):
        return MemoryStore()

    def make_read_only_store(self, tmp_path, source):
        return ReadOnlyStore(source)


class TestDictStore(StoreSuite, PublicAPISuite):

    def make_store(self, tmp_path):
        return DictStore()

    def make_read_only_store(self, tmp_path, source):
        return ReadOnlyStore(source)


class TestDirectoryStore(StoreSuite, PublicAPISuite):

    def make_store(self, tmp_path):
        return DirectoryStore(tmp_path / "data.zarr")

    def reopen_store(self, tmp_path, store, mode):
        return DirectoryStore(store.path, read_only=mode == "r")

    def make_read_only_store(self, tmp_path, source):
        return DirectoryStore(source.path, read_only=True)


class TestNestedDirectoryStore(StoreSuite, PublicAPISuite):

    def make_store(self, tmp_path):
        return NestedDirectoryStore(tmp_path / "nested.zarr")

    def reopen_store(self, tmp_path, store, mode):
        return NestedDirectoryStore(store.path, read_only=mode == "r")

    def make_read_only_store(self, tmp_path, source):
        return NestedDirectoryStore(source.path, read_only=True)


class TestTempStore(StoreSuite, PublicAPISuite):
    def make_store(self, tmp_path):
        return TempStore(dir=str(tmp_path))

    def make_read_only_store(self, tmp_path, source):
        return DirectoryStore(source.path, read_only=True)


class TestMappingStore(StoreSuite, PublicAPISuite):
    def make_store(self, tmp_path):
        return MappingStore({})

    def make_read_only_store(self, tmp_path, source):
        # a read-only Mapping gives a read-only store
        return MappingStore(types.MappingProxyType(source.mapping))


class TestReadOnlyStoreOverMemoryStore(StoreSuite):
    def make_store(self, tmp_path):
        return MemoryStore()

    def make_read_only_store(self, tmp_path, source):
        return ReadOnlyStore(source)


class TestReadOnlyStoreOverDirectoryStore(StoreSuite):
    def make_store(self, tmp_path):
        return DirectoryStore(tmp_path / "data.zarr")

    def make_read_only_store(self, tmp_path, source):
        return ReadOnlyStore(source)


class TestReadOnlyStoreOverMappingStore(StoreSuite):
    def make_store(self, tmp_path):
        return MappingStore({})

    def make_read_only_store(self, tmp_path, source):
        return ReadOnlyStore(source)


class TestReadOnlyStoreOverCountingStore(StoreSuite):
    def make_store(self, tmp_path):
        return CountingStore(MemoryStore())

    def make_read_only_store(self, tmp_path, source):
        return ReadOnlyStore(source)


class TestCountingStore(StoreSuite, PublicAPISuite):
    def make_store(self, tmp_path):
        return CountingStore(MemoryStore())

    def make_read_only_store(self, tmp_path, source):
        return CountingStore(ReadOnlyStore(source))


# -- DirectoryStore specifics --------------------------------------------------------------------


def _all_files(root):
    out = []
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            out.append(os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/"))
    return sorted(out)


def test_directory_store_values_are_files(tmp_path):
    root = tmp_path / "d"
    store = DirectoryStore(root)
    assert not root.exists()  # created on first write
    store["a"] = b"1"
    store["x/y/z"] = b"xyz"
    store["x/.zattrs"] = b"{}"
    assert (root / "a").read_bytes() == b"1"
    assert (root / "x").is_dir() and (root / "x" / "y").is_dir()
    assert (root / "x" / "y" / "z").read_bytes() == b"xyz"
    assert _all_files(root) == ["a", "x/.zattrs", "x/y/z"]
    # files written by someone else are keys
    (root / "x" / "y" / "w").write_bytes(b"external")
    assert store["x/y/w"] == b"external"
    assert sorted(store.list_prefix("x/y/")) == ["x/y/w", "x/y/z"]


def test_directory_store_path_types(tmp_path):
    a = DirectoryStore(tmp_path / "p")
    b = DirectoryStore(str(tmp_path / "p"))
    a["k"] = b"v"
    assert b["k"] == b"v"
    assert a == b
    assert a.path == os.path.abspath(tmp_path / "p")


def test_directory_store_temp_files_are_hidden(tmp_path):
    root = tmp_path / "d"
    store = DirectoryStore(root)
    store["a/b"] = b"1"
    store["c"] = b"2"
    # leftovers of a crashed writer
    (root / f"{TEMP_MARKER}deadbeef").write_bytes(b"partial")
    (root / "a" / f"{TEMP_MARKER}cafe").write_bytes(b"partial")
    assert sorted(store) == ["a/b", "c"]
    assert len(store) == 2
    assert store.list_dir("") == ["a", "c"]
    assert store.list_dir("a/") == ["b"]
    assert sorted(store.list_prefix("a/")) == ["a/b"]
    assert sorted(store.list_prefix("")) == ["a/b", "c"]


def test_directory_store_writes_leave_no_temp_files(tmp_path):
    root = tmp_path / "d"
    store = DirectoryStore(root)
    for i in range(20):
        store[f"k{i % 3}"] = os.urandom(1000)
        store[f"s/k{i % 3}"] = os.urandom(1000)
    assert _all_files(root) == ["k0", "k1", "k2", "s/k0", "s/k1", "s/k2"]


def test_directory_store_temp_files_never_visible_during_writes(tmp_path):
    store = DirectoryStore(tmp_path / "d")
    store["sub/k"] = b"0"
    stop = threading.Event()
    leaked: list[str] = []

    def writer():
        i = 0
        while not stop.is_set():
            store["sub/k"] = os.urandom(50_000)
            store[f"k{i % 4}"] = b"x"
            i += 1

    def lister():
        for _ in range(300):
            names = store.list_dir("") + store.list_dir("sub/") + list(store)
            leaked.extend(n for n in names if TEMP_MARKER in n)

    threads = [threading.Thread(target=writer) for _ in range(3)]
    for t in threads:
        t.start()
    try:
        lister()
    finally:
        stop.set()
        for t in threads:
            t.join(30)
    assert leaked == []


@pytest.mark.parametrize("key", ["k", "sub/dir/k"])
@pytest.mark.parametrize("exc", [OSError("disk full"), KeyboardInterrupt()], ids=repr)
def test_directory_store_failed_write_keeps_old_value(tmp_path, monkeypatch, key, exc):
    root = tmp_path / "d"
    store = DirectoryStore(root)
    store[key] = b"old value"

    def failing_replace(src, dst, *args, **kwargs):
        raise exc

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(type(exc)):
        store[key] = b"new value that never lands"
    monkeypatch.undo()

    assert store[key] == b"old value"
    assert _all_files(root) == [key]  # no temp file left behind
    assert sorted(store) == [key]


def _fail_writes(how, store, monkeypatch):
    """Make DirectoryStore writes fail while writing the content or when renaming the
    temporary file into place."""

    def failing(*args, **kwargs):
        raise OSError("disk full")

    if how == "content":
        monkeypatch.setattr(zarrkit.storage.fileio, "write_all", failing)
    else:
        monkeypatch.setattr(os, "replace", failing)


@pytest.mark.parametrize("how", ["content", "rename"])
def test_directory_store_failed_write_of_new_key_leaves_nothing(tmp_path, monkeypatch, how):
    root = tmp_path / "d"
    store = DirectoryStore(root)
    store["existing"] = b"1"
    _fail_writes(how, store, monkeypatch)
    with pytest.raises(OSError):
        store["new/nested/key"] = b"never"
    with pytest.raises(OSError):
        store["new_top"] = b"never"
    monkeypatch.undo()

    assert "new/nested/key" not in store
    assert "new_top" not in store
    assert sorted(store) == ["existing"]
    assert _all_files(root) == ["existing"]
    assert store.list_dir("") == ["existing"]  # no directories left either


def test_directory_store_escaping_prefixes(tmp_path):
    """Direct checks of the path-escape bugs of DirectoryStore listing and delete_prefix."""
    root = tmp_path / "store"
    (tmp_path / "secret.txt").write_bytes(b"outside")
    store = DirectoryStore(root)
    store["x"] = b"1"
    # validated: these are refused
    for bad in ("../secret.txt", "a/../../secret.txt"):
        with pytest.raises(InvalidPathError):
            store.get(bad)
        with pytest.raises(InvalidPathError):
            store.delete(bad)
        with pytest.raises(InvalidPathError):
            store.getsize(bad)
    with pytest.raises(InvalidPathError):
        store.rmdir("../store")
    with pytest.raises(InvalidPathError):
        store.delete_prefix("../")


def test_directory_store_delete_prefix_outside_root(tmp_path):
    (tmp_path / "secret.txt").write_bytes(b"outside")
    store = DirectoryStore(tmp_path / "store")
    store["x"] = b"1"
    try:
        store.delete_prefix("../sec")
    except InvalidPathError:
        pass
    assert (tmp_path / "secret.txt").exists()


def test_directory_store_list_prefix_outside_root(tmp_path):
    (tmp_path / "secret.txt").write_bytes(b"outside")
    store = DirectoryStore(tmp_path / "store")
    store["x"] = b"1"
    try:
        keys = list(store.list_prefix("../"))
    except InvalidPathError:
        keys = []
    assert keys == []


def test_directory_store_failed_temp_write_keeps_old_value(tmp_path, monkeypatch):
    """A failure while writing the temporary file (before the rename) also leaves no trace."""
    root = tmp_path / "d"
    store = DirectoryStore(root)
    store["k"] = b"old"

    real_write = os.write

    def failing_write(fd, data):
        real_write(fd, bytes(data)[:2])  # a partial write, then the device fails
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", failing_write)
    with pytest.raises(OSError):
        store["k"] = b"new value"
    monkeypatch.undo()
    assert store["k"] == b"old"
    assert _all_files(root) == ["k"]


def test_directory_store_read_only_creates_nothing(tmp_path):
    root = tmp_path / "missing"
    store = DirectoryStore(root, read_only=True)
    with pytest.raises(ReadOnlyError):
        store["a/b"] = b"1"
    with pytest.raises(ReadOnlyError):
        zarrkit.create(shape=(4,), chunks=(2,), dtype="i4", store=store, zarr_format=2)
    assert not root.exists()


def test_directory_store_not_a_directory(tmp_path):
    f = tmp_path / "file"
    f.write_bytes(b"x")
    with pytest.raises(OSError):
        DirectoryStore(f)


# -- NestedDirectoryStore ------------------------------------------------------------------------


def test_nested_directory_store_uses_slash_chunk_keys(tmp_path):
    root = tmp_path / "n"
    store = NestedDirectoryStore(root)
    data = np.arange(400, dtype="i4").reshape(20, 20)
    z = zarrkit.create(shape=(20, 20), chunks=(7, 7), dtype="i4", store=store, zarr_format=2)
    z[:] = data
    assert (root / "0" / "0").is_file()
    assert (root / "2" / "2").is_file()
    assert not (root / "0.0").exists()
    assert json.loads((root / ".zarray").read_text())["dimension_separator"] == "/"
    assert sorted(k for k in store if not k.startswith(".")) == [
        f"{i}/{j}" for i in range(3) for j in range(3)
    ]
    # reopened through a plain path / a read-only view it reads the same data
    np.testing.assert_array_equal(zarrkit.open_array(str(root), mode="r")[:], data)
    np.testing.assert_array_equal(zarrkit.open_array(ReadOnlyStore(store), mode="r")[:], data)


def test_directory_store_uses_dot_chunk_keys(tmp_path):
    root = tmp_path / "d"
    z = zarrkit.create(shape=(20, 20), chunks=(7, 7), dtype="i4", store=DirectoryStore(root),
                       zarr_format=2)
    z[:] = 1
    assert (root / "0.0").is_file()
    assert (root / "2.2").is_file()
    assert not (root / "0").exists()


# -- TempStore -----------------------------------------------------------------------------------


def test_temp_store_removed_on_close(tmp_path):
    store = TempStore(dir=str(tmp_path))
    path = store.path
    assert os.path.isdir(path)
    z = zarrkit.create(shape=(10,), chunks=(3,), dtype="i4", store=store, zarr_format=2)
    z[:] = np.arange(10)
    assert os.path.isfile(os.path.join(path, ".zarray"))
    store.close()
    assert not os.path.exists(path)
    store.close()  # closing twice is fine


def test_temp_store_context_manager(tmp_path):
    with TempStore(dir=str(tmp_path)) as store:
        store["a/b"] = b"1"
        path = store.path
        assert os.path.isfile(os.path.join(path, "a", "b"))
    assert not os.path.exists(path)


def test_temp_store_default_location():
    store = TempStore()
    try:
        assert os.path.isdir(store.path)
        store["k"] = b"v"
    finally:
        store.close()
    assert not os.path.exists(store.path)


# -- opening paths and mappings ------------------------------------------------------------------


def test_open_array_read_missing_path(tmp_path):
    path = tmp_path / "does" / "not" / "exist.zarr"
    with pytest.raises(FileNotFoundError):
        zarrkit.open_array(str(path), mode="r")
    with pytest.raises(FileNotFoundError):
        zarrkit.open_array(str(path), mode="r+")
    assert not path.exists()
    assert not (tmp_path / "does").exists()


def test_open_array_path_roundtrip(tmp_path):
    path = str(tmp_path / "a.zarr")
    z = zarrkit.open_array(path, mode="w", shape=(20, 20), chunks=(7, 7), dtype="i4")
    data = np.arange(400, dtype="i4").reshape(20, 20)
    z[:] = data
    np.testing.assert_array_equal(zarrkit.open_array(path, mode="r")[:], data)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_plain_dict_store_receives_keys(zarr_format):
    d: dict = {}
    z = zarrkit.create(shape=(20, 20), chunks=(7, 7), dtype="i4", store=d,
                       zarr_format=zarr_format)
    data = np.arange(400, dtype="i4").reshape(20, 20) + 1
    z[:] = data
    if zarr_format == 2:
        expected_meta = {".zarray", ".zattrs"}
        chunks = {f"{i}.{j}" for i in range(3) for j in range(3)}
    else:
        expected_meta = {"zarr.json"}
        chunks = {f"c/{i}/{j}" for i in range(3) for j in range(3)}
    assert set(d) == expected_meta | chunks
    assert all(isinstance(v, bytes) for v in d.values())
    # the very same dict reads back
    np.testing.assert_array_equal(zarrkit.open_array(d, mode="r")[:], data)
    # a copy of the dict holds the whole array
    d2 = dict(d)
    np.testing.assert_array_equal(zarrkit.open_array(d2, mode="r")[:], data)


def test_plain_dict_store_is_the_arrays_store():
    d: dict = {}
    z = zarrkit.zeros((4, 4), chunks=(2, 2), dtype="i4", store=d, zarr_format=2)
    z[:] = 5
    assert z.store is d
    assert "0.0" in d and "1.1" in d


def test_directory_store_removes_orphaned_temp_files(tmp_path):
    import subprocess
    import sys

    from zarrkit.storage import local

    root = tmp_path / "d"
    store = DirectoryStore(root)
    store["k"] = b"v"
    store["a/b"] = b"v"
    # a writer process that died mid-write, on this host
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    orphan = root / f"{TEMP_MARKER}{local._HOST}-{dead.pid}-1-1"
    orphan.write_bytes(b"half")
    nested_orphan = root / "a" / f"{TEMP_MARKER}{local._HOST}-{dead.pid}-1-2"
    nested_orphan.write_bytes(b"half")
    # a writer of this process, still running
    alive = root / f"{TEMP_MARKER}{local._HOST}-{os.getpid()}-1-3"
    alive.write_bytes(b"in flight")
    # another host's: recent (kept) and stale (removed)
    recent = root / f"{TEMP_MARKER}otherhost-1-1-1"
    recent.write_bytes(b"x")
    stale = root / f"{TEMP_MARKER}otherhost-2-1-1"
    stale.write_bytes(b"x")
    old = time.time() - local.ORPHAN_AGE - 10
    os.utime(stale, (old, old))
    DirectoryStore(root, read_only=True).list_dir("")  # read-only: touches nothing
    assert orphan.exists() and stale.exists()
    DirectoryStore(root)  # opening for writing cleans the root directory
    assert sorted(p.name for p in root.iterdir() if p.name.startswith(TEMP_MARKER)) == sorted(
        [alive.name, recent.name]
    )
    assert nested_orphan.exists()
    assert list(DirectoryStore(root).list_prefix("a/")) == ["a/b"]  # listings clean what they see
    assert not nested_orphan.exists()
    assert sorted(DirectoryStore(root)) == ["a/b", "k"]


def test_directory_store_fsync_option(tmp_path, monkeypatch):
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd)))
    DirectoryStore(tmp_path / "a")["x/y"] = b"1"
    assert synced == []
    store = DirectoryStore(tmp_path / "b", fsync=True)
    store["x/y"] = b"1"
    assert len(synced) == 2  # the file, then its directory
    assert store["x/y"] == b"1"


def test_a_group_or_array_is_not_taken_as_a_store():
    """A Group is a Mapping of its members; passed as ``store=`` it must be refused, not read
    as an empty store."""
    g = zarrkit.group()
    z = g.zeros("a", shape=(2,))
    for node in (g, z):
        with pytest.raises(TypeError, match="pass its store"):
            zarrkit.open_array(node, mode="r")
        with pytest.raises(TypeError, match="pass its store"):
            zarrkit.open_group(node, mode="r")
