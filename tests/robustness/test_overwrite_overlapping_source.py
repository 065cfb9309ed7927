"""Overwriting a node with data read from an array it contains, or that contains it, would delete
the data before it is copied: creation refuses before writing anything."""

from __future__ import annotations

import numpy as np
import pytest

import zarrkit
from zarrkit.storage import LocalStore, MemoryStore, StorePath, ZipStore


def _stores(tmp_path):
    return {
        "memory": MemoryStore,
        "local": lambda: LocalStore(str(tmp_path / "d")),
        "zip": lambda: ZipStore(str(tmp_path / "z.zip"), mode="w"),
    }


@pytest.mark.parametrize("kind", ["memory", "local", "zip"])
@pytest.mark.parametrize(("src", "dest"), [("a", "a"), ("g/a", "g"), ("g/a", ""), ("a", "a/c")])
def test_overwriting_an_overlapping_source_is_refused_and_keeps_it(tmp_path, kind, src, dest):
    store = _stores(tmp_path)[kind]()
    source = zarrkit.create_array(store, name=src, data=np.arange(4.0), fill_value=-1.0)
    before = sorted(store.list_prefix(""))
    for create in (zarrkit.from_array, zarrkit.create_array):
        with pytest.raises(ValueError, match="overlap"):
            create(store, name=dest, data=source, overwrite=True)
    assert sorted(store.list_prefix("")) == before
    assert source[...].tolist() == [0.0, 1.0, 2.0, 3.0]


def test_a_read_only_copy_or_a_path_of_the_same_store_overlaps_too():
    store = MemoryStore()
    zarrkit.create_array(store, name="g/a", data=np.arange(3))
    read_only = zarrkit.open_array(store.with_read_only(True), path="g/a")
    with pytest.raises(ValueError, match="overlap"):
        zarrkit.from_array(store, name="g/a", data=read_only, overwrite=True)
    through_path = zarrkit.open_array(StorePath(store, "g"), path="a")
    with pytest.raises(ValueError, match="overlap"):
        zarrkit.from_array(store, name="g", data=through_path, overwrite=True)
    assert zarrkit.open_array(store, path="g/a")[...].tolist() == [0, 1, 2]


def test_distinct_stores_and_sibling_paths_do_not_overlap():
    src_store, dest_store = MemoryStore(), MemoryStore()
    source = zarrkit.create_array(src_store, name="a", data=np.arange(4.0))
    zarrkit.create_array(dest_store, name="a", data=np.arange(4.0))  # equal contents, other dict
    assert zarrkit.from_array(dest_store, name="a", data=source, overwrite=True)[...].tolist() == [0, 1, 2, 3]
    sibling = zarrkit.from_array(src_store, name="ab", data=source, overwrite=True)
    assert sibling[...].tolist() == [0, 1, 2, 3]
