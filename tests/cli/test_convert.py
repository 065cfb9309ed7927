"""``zarrkit.convert``: consolidated metadata is kept (and rewritten in the new format), never
lost."""

from __future__ import annotations

import json

import numpy as np
import pytest

import zarrkit
from zarrkit.errors import MetadataError


def hierarchy(zarr_format: int, consolidated: bool = True) -> dict:
    """/grp/a, /b; v3 made by converting v2 (chunk keys of the 'v2' encoding: convertible back)."""
    store: dict = {}
    root = zarrkit.group(store, zarr_format=2)
    root.attrs["title"] = "t"
    a = root.create_dataset("grp/a", shape=(6, 4), chunks=(3, 2), dtype="i4")
    a[:] = np.arange(24).reshape(6, 4)
    root.zeros("b", shape=(5,), chunks=(2,))
    if zarr_format == 3:
        zarrkit.convert(store, zarr_format=3)
    if consolidated:
        zarrkit.consolidate_metadata(store)
    return store


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_convert_to_the_same_format_changes_nothing(zarr_format):
    store = hierarchy(zarr_format)
    before = dict(store)
    zarrkit.convert(store, zarr_format=zarr_format)
    assert store == before  # .zmetadata (v2) / the inline document (v3) kept as they were
    assert zarrkit.open_consolidated(store)["grp/a"][1, 1] == 5


@pytest.mark.parametrize("path", ["grp", "grp/a", "b"])
def test_convert_subtree_already_converted_keeps_zmetadata(path):
    store = hierarchy(2)
    zmeta = store[".zmetadata"]
    zarrkit.convert(store, zarr_format=2, path=path)
    assert store[".zmetadata"] == zmeta


@pytest.mark.parametrize(("src", "dst"), [(2, 3), (3, 2)])
def test_convert_keeps_the_hierarchy_consolidated(src, dst):
    store = hierarchy(src)
    zarrkit.convert(store, zarr_format=dst)
    if dst == 3:
        assert ".zmetadata" not in store
        cm = json.loads(store["zarr.json"])["consolidated_metadata"]
        assert sorted(cm["metadata"]) == ["b", "grp", "grp/a"]
    else:
        assert "zarr.json" not in store
        docs = json.loads(store[".zmetadata"])["metadata"]
        assert {"grp/a/.zarray", "grp/.zgroup", "b/.zarray", ".zgroup", ".zattrs"} <= set(docs)
    root = zarrkit.open_consolidated(store)
    assert root.zarr_format == dst and root.attrs["title"] == "t"
    np.testing.assert_array_equal(root["grp/a"][:], np.arange(24).reshape(6, 4))
    # the consolidated documents are those of the converted nodes
    assert root["grp/a"].zarr_format == dst


def test_convert_unconsolidated_stays_unconsolidated():
    store = hierarchy(2, consolidated=False)
    zarrkit.convert(store, zarr_format=3)
    assert "consolidated_metadata" not in json.loads(store["zarr.json"])
    zarrkit.convert(store, zarr_format=2)
    assert ".zmetadata" not in store


def test_convert_nested_consolidated_group():
    store = hierarchy(2, consolidated=False)
    zarrkit.consolidate_metadata(store, path="grp")
    zarrkit.convert(store, zarr_format=3)
    assert "grp/.zmetadata" not in store
    assert "consolidated_metadata" in json.loads(store["grp/zarr.json"])
    assert "consolidated_metadata" not in json.loads(store["zarr.json"])
    assert zarrkit.open_consolidated(store, path="grp")["a"].zarr_format == 3


def test_convert_subtree_below_consolidated_group_of_the_target_format():
    # a v3 root (consolidated) above a v2 subtree: converting the subtree updates the root's
    # consolidated document
    store = hierarchy(3, consolidated=False)
    zarrkit.convert(store, zarr_format=2, path="grp")  # now mixed: v3 root, v2 grp
    zarrkit.consolidate_metadata(store, path="grp")
    zarrkit.convert(store, zarr_format=3, path="grp")
    assert "grp/.zmetadata" not in store
    zarrkit.consolidate_metadata(store)
    doc = store["zarr.json"]
    zarrkit.convert(store, zarr_format=3)  # nothing left to convert
    assert store["zarr.json"] == doc


def test_convert_subtree_below_consolidated_group_of_the_other_format_is_refused():
    # no consolidated document can describe a v2 root with a v3 subtree: refused, nothing
    # changed
    store = hierarchy(2)
    before = dict(store)
    with pytest.raises(MetadataError, match="consolidated"):
        zarrkit.convert(store, zarr_format=3, path="grp")
    assert store == before
