"""zarr-python 3's asynchronous store interface on zarrkit's stores: ``await Store.open(...)``,
``is_empty``, ``list``, ``delete_dir``, ``getsize_prefix``, ``_is_open`` and reopening."""

from __future__ import annotations

import asyncio
import os
import zipfile

import numpy as np
import pytest

import zarrkit
from zarrkit.errors import InvalidPathError, StoreError
from zarrkit.storage import DirectoryStore, FsspecStore, LocalStore, MemoryStore, ZipStore


def run(coro):  # type: ignore[no-untyped-def]
    return asyncio.run(coro)


def test_memory_store_open_passes_arguments():
    data: dict = {}
    store = run(MemoryStore.open(store_dict=data, read_only=True))
    assert isinstance(store, MemoryStore)
    assert store.read_only and store._is_open
    assert store._data is data


def test_open_of_a_subclass_gives_that_subclass():
    class Mine(MemoryStore):
        pass

    assert type(run(Mine.open())) is Mine


def test_local_store_open_makes_the_directory(tmp_path):
    root = tmp_path / "a" / "b"
    store = run(LocalStore.open(str(root)))
    assert isinstance(store, DirectoryStore)
    assert root.is_dir()
    assert store.root == root


def test_local_store_open_read_only_needs_the_directory(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        run(LocalStore.open(str(tmp_path / "missing"), read_only=True))
    assert not (tmp_path / "missing").exists()


@pytest.mark.parametrize("mode", ["r", "r+"])
def test_local_store_open_mode_r_does_not_make_the_directory(tmp_path, mode):
    with pytest.raises(FileNotFoundError):
        run(LocalStore.open(str(tmp_path / "missing"), mode=mode))
    (tmp_path / "there").mkdir()
    store = run(LocalStore.open(str(tmp_path / "there"), mode=mode))
    assert not store.read_only  # the mode only governs opening


def test_zip_store_open_and_reopen(tmp_path):
    path = tmp_path / "x.zip"
    store = run(ZipStore.open(str(path), mode="w"))
    assert store._is_open
    z = zarrkit.create_array(store, shape=(4,), chunks=(2,), dtype="i2")
    z[:] = np.arange(4)
    store.close()
    assert not store._is_open
    with pytest.raises(StoreError, match="closed"):
        store.get("zarr.json")
    run(store._open())  # reopened for appending: what was written stays
    assert store._is_open and store.mode == "a"
    np.testing.assert_array_equal(zarrkit.open_array(store)[:], np.arange(4))
    with pytest.raises(ValueError, match="already open"):
        run(store._open())
    store.close()
    assert "zarr.json" in zipfile.ZipFile(path).namelist()


def test_ensure_open_reopens_only_a_closed_store(tmp_path):
    store = ZipStore(str(tmp_path / "y.zip"), mode="w")
    run(store._ensure_open())  # open: nothing to do
    store.close()
    run(store._ensure_open())
    assert store._is_open
    store.close()


def test_fsspec_store_open_takes_its_arguments():
    store = run(FsspecStore.open("memory://zarr3-open-test/a", read_only=True))
    assert isinstance(store, FsspecStore) and store.read_only


def test_is_empty_list_and_delete_dir():
    async def main():  # type: ignore[no-untyped-def]
        store = await MemoryStore.open()
        assert await store.is_empty("")
        store.set_many({"a/b/c": b"1", "a/d": b"22", "ab": b"333"})
        found = (await store.is_empty("a"), await store.is_empty("a/b/"), await store.is_empty("x"),
                 await store.is_empty(""))
        keys = sorted([k async for k in store.list()])
        sizes = (await store.getsize_prefix("a"), await store.getsize_prefix(""))
        await store.delete_dir("a")
        return found, keys, sizes, sorted(store)

    found, keys, sizes, left = run(main())
    assert found == (False, False, True, False)
    assert keys == ["a/b/c", "a/d", "ab"]
    assert sizes == (3, 6)
    assert left == ["ab"]  # 'ab' is not below 'a'


def test_delete_dir_refuses_a_read_only_store():
    store = MemoryStore({"a/b": b"1"}, read_only=True)
    with pytest.raises(zarrkit.errors.ReadOnlyError):
        run(store.delete_dir("a"))
    assert store.get("a/b") == b"1"


def test_bad_prefix_refused_with_its_name():
    store = MemoryStore()
    with pytest.raises(TypeError, match="prefix"):
        run(store.is_empty(3))  # type: ignore[arg-type]
    with pytest.raises(InvalidPathError):
        run(store.is_empty("../up"))


def test_zarr3_flags():
    store = MemoryStore()
    assert store.supports_consolidated_metadata is True
    assert store.supports_partial_writes is False


def test_local_store_open_then_write(tmp_path):
    store = run(LocalStore.open(str(tmp_path / "data")))
    z = zarrkit.create_array(store, shape=(3,), dtype="u1")
    z[:] = 7
    assert os.path.exists(tmp_path / "data" / "zarr.json")


def test_store_path_open_modes():
    from zarrkit.storage import StorePath

    store = MemoryStore({"a/x": b"1"})
    sp = run(StorePath.open(store, "a", mode="r"))
    assert sp.read_only and sp.path == "a"
    assert not store.read_only  # a read-only copy, the store itself unchanged
    assert run(StorePath.open(store, "b", mode="w-")).path == "b"
    with pytest.raises(FileExistsError, match="'a'"):
        run(StorePath.open(store, "a", mode="w-"))
    with pytest.raises(ValueError, match="mode"):
        run(StorePath.open(store, "a", mode="q"))
    with pytest.raises(ValueError, match="read-only"):
        run(StorePath.open(MemoryStore(read_only=True), "a", mode="a"))
    assert run(sp.is_empty()) is False
    assert run((sp / "x").exists()) is True
    writable = run(StorePath.open(store, "a", mode="a"))
    run(writable.delete_dir())
    assert dict(store) == {}


def test_store_path_open_r_of_a_zip_store_needs_a_read_only_one(tmp_path):
    from zarrkit.storage import StorePath

    store = ZipStore(str(tmp_path / "z.zip"), mode="w")
    with pytest.raises(ValueError, match="read-only"):
        run(StorePath.open(store, "", mode="r"))
    store.close()


def test_zip_stores_of_one_file_are_equal(tmp_path):
    a = ZipStore(str(tmp_path / "e.zip"), mode="w")
    a.close()
    b = ZipStore(str(tmp_path / "e.zip"), mode="r")
    c = ZipStore(str(tmp_path / "f.zip"), mode="w")
    assert a == b and a != c
    assert hash(a) != hash(b) or a is b  # kept by identity
    b.close()
    c.close()
