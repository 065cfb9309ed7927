"""zarr-python 2's ``FSStore`` keywords: ``key_separator``, ``normalize_keys``, ``check``,
``create``, ``missing_exceptions``, ``exceptions``, ``fs=`` with a path; ``.map``, ``.path``,
``.mode``; storage options refused (as ValueError and TypeError) with a file system instance."""

from __future__ import annotations

import fsspec
import pytest

import zarrkit as zarr
from zarrkit.errors import StorageOptionsError, StoreError
from zarrkit.storage import FSStore


def test_zarr2_keywords_on_a_local_path(tmp_path):
    root = tmp_path / "a.zarr"
    store = FSStore(str(root), key_separator="/", auto_mkdir=True, check=False, create=True,
                    missing_exceptions=None)
    assert root.is_dir()  # create=True made the root
    z = zarr.zeros((4, 4), chunks=(2, 2), store=store, zarr_format=2)
    z[:] = 1
    assert (root / "1" / "1").is_file()  # '/' between chunk indices
    assert store.key_separator == "/" and store.path == str(root) and store.mode == "w"
    assert store.map[".zarray"] == store[".zarray"]


def test_check_refuses_a_missing_root(tmp_path):
    with pytest.raises(StoreError, match="check=True"):
        FSStore(str(tmp_path / "nothing"), check=True)


def test_key_separator_and_dimension_separator_must_agree(tmp_path):
    with pytest.raises(ValueError, match="contradicts"):
        FSStore(str(tmp_path), key_separator="/", dimension_separator=".")


def test_fs_instance_with_a_path_and_normalized_keys(tmp_path):
    fs = fsspec.filesystem("file")
    store = FSStore(str(tmp_path), fs=fs, normalize_keys=True)
    store["A/.ZARRAY"] = b"{}"
    assert (tmp_path / "a" / ".zarray").is_file()
    assert store["a/.zarray"] == b"{}"


def test_storage_options_with_a_file_system_instance_are_refused(tmp_path):
    fs = fsspec.filesystem("file")
    with pytest.raises(ValueError, match="auto_mkdir"):
        FSStore(str(tmp_path), fs=fs, auto_mkdir=True)
    with pytest.raises(TypeError):
        FSStore(str(tmp_path), fs=fs, auto_mkdir=True)
    with pytest.raises(StorageOptionsError, match="mapper"):
        FSStore(fsspec.get_mapper(str(tmp_path)), auto_mkdir=True)


def test_read_only_mode_and_the_memory_root():
    store = FSStore("memory://")
    g = zarr.open(store, mode="w")
    g.create_dataset("x", data=[1, 2, 3])
    g2 = zarr.open(store, mode="w")  # clearing the root of a memory file system terminates
    assert list(g2) == []
    ro = FSStore("memory://", mode="r")
    assert ro.read_only and ro.mode == "r"


def test_keys_no_store_can_hold_are_simply_not_in_it():
    store = FSStore("memory://zk-contains")
    store["a/b"] = b"1"
    assert "a/b" in store
    assert "c/" not in store and "../x" not in store and "" not in store


def test_an_fsspec_mapper_given_shows_as_its_store():
    mapper = fsspec.get_mapper("memory://zk-mapper-store")
    z = zarr.create(10, store=mapper, zarr_format=2)
    assert isinstance(z.store, FSStore)
    assert z.store.map.root == mapper.root
    d: dict = {}
    assert zarr.create(10, store=d).store is d  # a plain dict stays the user's dict
