"""zarr-python 3's ``make_store``, ``make_store_path`` and ``normalize_path`` (its
``zarr.storage._common`` and ``zarr.storage._utils``)."""

from __future__ import annotations

import asyncio
import pathlib

import pytest

from zarrkit.errors import InvalidPathError
from zarrkit.storage import DirectoryStore, MemoryStore, StorePath, ZipStore
from zarrkit.storage.store_path import normalize_path
from zarrkit.storage.zarr3_paths import make_store, make_store_path


def run(coro):  # type: ignore[no-untyped-def]
    return asyncio.run(coro)


@pytest.mark.parametrize("path", ["/foo/bar", "//foo/bar", "foo///bar", "foo/bar///",
                                  pathlib.PurePosixPath("foo/bar"), b"foo/bar"])
def test_normalize_path(path):
    assert normalize_path(path) == "foo/bar"


def test_normalize_path_none_and_escapes():
    assert normalize_path(None) == ""
    for bad in (".", "..", "a/../b"):
        with pytest.raises(InvalidPathError):
            normalize_path(bad)
    assert issubclass(InvalidPathError, ValueError)


def test_make_store_of_a_dict_holds_its_values_in_it():
    data: dict = {}
    store = run(make_store(data, mode="r"))
    assert isinstance(store, MemoryStore) and store.read_only
    assert store._store_dict is data
    assert isinstance(run(make_store(None)), MemoryStore)


def test_make_store_of_a_path_is_a_local_store(tmp_path):
    store = run(make_store(tmp_path / "new"))
    assert isinstance(store, DirectoryStore) and (tmp_path / "new").is_dir()
    with pytest.raises(FileNotFoundError):
        run(make_store(str(tmp_path / "missing"), mode="r"))
    zipped = run(make_store(str(tmp_path / "x.zip"), mode="a"))
    assert isinstance(zipped, ZipStore)
    zipped.close()


def test_make_store_checks_mode_and_storage_options():
    with pytest.raises(ValueError, match="Invalid mode"):
        run(make_store({}, mode="x"))
    with pytest.raises(TypeError, match="storage_options"):
        run(make_store({}, storage_options={"anon": True}))
    store = MemoryStore()
    assert run(make_store(StorePath(store, "a"))) is store
    assert run(make_store(store)) is store


def test_make_store_path_joins_paths_and_applies_the_mode(tmp_path):
    sp = run(make_store_path(None, path="bar"))
    assert isinstance(sp.store, MemoryStore) and sp.path == "bar"
    local = run(make_store_path(str(tmp_path), path="a//b", mode="r"))
    assert isinstance(local.store, DirectoryStore) and local.path == "a/b" and local.read_only
    base = StorePath(MemoryStore({"root/x": b"1"}), "root")
    joined = run(make_store_path(base, path="sub", mode="w"))
    assert joined.path == "root/sub" and joined.store is base.store
    assert run(make_store_path(base, path=None)).path == "root"
    with pytest.raises(FileExistsError):
        run(make_store_path(base, mode="w-"))
    with pytest.raises(TypeError, match="storage_options"):
        run(make_store_path(base, storage_options={}))
