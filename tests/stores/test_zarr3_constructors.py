"""Stores constructed as zarr-python 3 code constructs them, beside zarr-python 2's forms."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest

import zarrkit
from zarrkit.errors import ReadOnlyError
from zarrkit.storage import LocalStore, MemoryStore, StorePath, ZipStore
from zarrkit.storage.store_path import PrefixStore


def test_memory_store_keywords_and_positional_dict():
    held: dict = {}
    store = MemoryStore(store_dict=held, read_only=False)
    store.set("k", b"v")
    assert held == {"k": b"v"}
    assert MemoryStore(held)._data is held  # zarr-2 and zarr-3 positional form
    assert MemoryStore(read_only=True).read_only
    with pytest.raises(TypeError):
        MemoryStore({}, store_dict={})


def test_memory_store_read_only_refuses_writes():
    store = MemoryStore(read_only=True)
    with pytest.raises(ReadOnlyError):
        store.set("k", b"v")


def test_memory_store_equality_by_contents_and_flag():
    held = {"k": b"v"}
    assert MemoryStore(held) == MemoryStore(dict(held))
    assert MemoryStore(held) != MemoryStore(held, read_only=True)
    assert MemoryStore(held) != MemoryStore({})


def test_with_read_only_shares_the_data():
    store = MemoryStore()
    array = zarrkit.zeros((4,), chunks=(2,), store=store)
    frozen = store.with_read_only(True)
    assert frozen.read_only and not store.read_only
    with pytest.raises(ReadOnlyError):
        zarrkit.open_array(frozen)[:] = 1
    array[:] = 3
    np.testing.assert_array_equal(zarrkit.open_array(frozen)[:], 3)
    writable = frozen.with_read_only()
    zarrkit.open_array(writable)[:] = 4
    np.testing.assert_array_equal(array[:], 4)


def test_local_store_root_keyword_and_with_read_only(tmp_path):
    store = LocalStore(tmp_path / "d", read_only=False)
    assert LocalStore(root=tmp_path / "d") == store
    zarrkit.zeros((2,), store=store)
    frozen = store.with_read_only(True)
    assert isinstance(frozen, LocalStore) and frozen.read_only
    with pytest.raises(ReadOnlyError):
        frozen.set("x", b"1")
    assert frozen.path == store.path


def test_zip_store_read_only_keyword(tmp_path):
    path = tmp_path / "a.zip"
    with ZipStore(path, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True) as store:
        zarrkit.zeros((2,), store=store)
    with ZipStore(path, read_only=True) as store:
        assert store.read_only and store.mode == "r"
        with pytest.raises(NotImplementedError):
            store.with_read_only(False)


def test_store_capability_flags():
    store = MemoryStore()
    assert store.supports_writes and store.supports_deletes and store.supports_listing


def test_store_path_joins_and_prints():
    store = MemoryStore()
    sp = StorePath(store, "/a/") / "b//c"
    assert sp.store is store and sp.path == "a/b/c"
    assert str(sp) == f"{store}/a/b/c"
    assert StorePath(store).path == "" and str(StorePath(store)) == str(store)
    assert sp == StorePath(store, "a/b/c") and sp != StorePath(store, "a")
    assert not sp.read_only and StorePath(MemoryStore(read_only=True)).read_only


def test_store_path_accepted_as_store_with_path_joined():
    store = MemoryStore()
    group = zarrkit.open_group(StorePath(store, "a"), mode="w")
    group.create_array("x", shape=(3,), dtype="i4")[:] = 7
    assert "a/x/zarr.json" in store
    # the call's path= is read below the StorePath's own path
    np.testing.assert_array_equal(zarrkit.open_array(StorePath(store, "a"), path="x")[:], 7)
    np.testing.assert_array_equal(zarrkit.open_array(StorePath(store), path="a/x")[:], 7)


def test_prefix_store_lists_and_deletes_under_its_prefix():
    store = MemoryStore()
    store.set_many({"p/a": b"1", "p/d/b": b"2", "q": b"3"})
    under = PrefixStore(store, "p")
    assert sorted(under.list_prefix("")) == ["a", "d/b"]
    assert under.list_dir() == ["a", "d"]
    assert under.get("d/b") == b"2" and under.getsize("a") == 1
    under.delete_prefix("d/")
    assert sorted(store) == ["p/a", "q"]
