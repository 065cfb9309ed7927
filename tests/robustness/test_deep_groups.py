"""Walking a hierarchy thousands of levels deep works (no RecursionError, nothing in the
walk grows with depth but the paths themselves), and hostile member names are skipped with a
warning while the valid nodes beside them stay readable."""

from __future__ import annotations

import json
import warnings

import pytest

import zarrkit
from zarrkit.errors import MetadataError
from zarrkit.storage import MemoryStore
from zarrkit.storage.base import Store

DEPTH = 10_000


class TreeIndexedStore(Store):
    """A store in memory whose listing of a directory costs what is in it (a dict of children
    per directory), so that a walk 10,000 levels deep measures the walk, not the listing."""

    def __init__(self):
        super().__init__()
        self.data: dict[str, bytes] = {}
        self.children: dict[str, set[str]] = {}

    def _get(self, key, byte_range):
        value = self.data.get(key)
        return value if value is None or byte_range is None else byte_range.slice(value)

    def _set(self, key, value):
        self.data[key] = bytes(value)
        parent, _, name = key.rpartition("/")
        while True:
            entries = self.children.setdefault(parent + "/" if parent else "", set())
            known = name in entries
            entries.add(name)
            if known or not parent:
                break
            parent, _, name = parent.rpartition("/")

    def _delete(self, key):
        self.data.pop(key, None)

    def list_prefix(self, prefix):
        return (k for k in list(self.data) if k.startswith(prefix))

    def list_dir(self, prefix=""):
        return sorted(self.children.get(prefix, ()))


def deep_hierarchy(store, depth, zarr_format):
    """The root group and ``depth`` groups ``g/g/g/...`` below it, one inside the other, and
    an array ``a`` in the deepest."""
    doc = (b'{"zarr_format": 3, "node_type": "group", "attributes": {}}' if zarr_format == 3
           else b'{"zarr_format": 2}')
    name = "zarr.json" if zarr_format == 3 else ".zgroup"
    store[name] = doc
    path = ""
    for _ in range(depth):
        path += "g/"
        store[path + name] = doc
    zarrkit.create(shape=(4,), chunks=(2,), dtype="i2", store=store, path=path + "a", zarr_format=zarr_format,
                   fill_value=0)[:] = [1, 2, 3, 4]
    return path + "a"


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_a_hierarchy_ten_thousand_levels_deep_is_walked(zarr_format):
    store = TreeIndexedStore()
    deepest = deep_hierarchy(store, DEPTH, zarr_format)
    g = zarrkit.open_group(store, mode="r")
    seen = []
    assert g.visit(seen.append) is None
    assert len(seen) == DEPTH + 1  # the groups below the root, and the array
    assert seen[-1] == deepest and seen[0] == "g"
    assert [name for name, _ in g.members(max_depth=None)] == seen
    assert [name for name, _ in g.members(max_depth=2)] == seen[:3]
    assert list(g.array_keys(recurse=True)) == ["a"]
    (_name, arr), = g.arrays(recurse=True)
    assert arr.path == deepest and arr[:].tolist() == [1, 2, 3, 4]
    found = g.visititems(lambda path, node: node if isinstance(node, zarrkit.Array) else None)
    assert found.path == deepest
    assert g[deepest][1:3].tolist() == [2, 3]
    # 40 levels: zarr-python 3 counts a v3 group's levels from 0, zarr-python 2 from 1
    lines = str(g.tree(level=39 if zarr_format == 3 else 40)).splitlines()
    assert len(lines) == 41 and lines[-1].strip(" │├└─") == "g"


def test_the_full_tree_of_a_deep_hierarchy_is_drawn():
    store = TreeIndexedStore()
    deep_hierarchy(store, 2_000, 2)
    lines = bytes(zarrkit.open_group(store, mode="r").tree()).decode().splitlines()
    assert len(lines) == 2_002  # the root, 2,000 groups, the array
    assert lines[-1].endswith("+-- a (4,) int16") and lines[-1].startswith(" " * (4 * 2_000))


@pytest.mark.parametrize("bad", ["..", ".", ""])
def test_a_listed_name_no_node_can_have_is_skipped_with_a_warning(bad):
    store = MemoryStore()
    g = zarrkit.group(store=store, zarr_format=3)
    g.zeros("a", shape=3)
    g.create_group("sub").ones("b", shape=2)

    class Listing(Store):
        """The same keys, listed with one more name beside them."""
        def _get(self, key, byte_range):
            return store.get(key, byte_range)

        def list_prefix(self, prefix):
            return store.list_prefix(prefix)

        def list_dir(self, prefix=""):
            return sorted(store.list_dir(prefix) + ([bad] if prefix == "" else []))

    view = zarrkit.open_group(Listing(), mode="r")
    with pytest.warns(UserWarning, match=f"skipping {bad!r}, which no node can be named"):
        assert sorted(view) == ["a", "sub"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert [p for p, _ in view.members(max_depth=None)] == ["a", "sub", "sub/b"]
        assert view["sub/b"][:].tolist() == [1.0, 1.0]


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_deeply_nested_json_is_a_typed_error_naming_the_document(zarr_format):
    store = MemoryStore()
    zarrkit.group(store=store, zarr_format=zarr_format).zeros("a", shape=3)
    deep = "[" * 100_000 + "]" * 100_000
    if zarr_format == 2:
        key, text = "a/.zattrs", f'{{"x": {deep}}}'
    else:
        doc = json.loads(store["a/zarr.json"])
        doc.pop("attributes", None)
        key, text = "a/zarr.json", json.dumps(doc)[:-1] + f', "attributes": {{"x": {deep}}}}}'
    store[key] = text.encode()
    with pytest.raises(MetadataError, match=f"{key}: JSON nested too deeply"):
        dict(zarrkit.open_array(store, path="a", mode="r").attrs)
    assert dict(zarrkit.open_group(store, mode="r").attrs) == {}  # the group holding it stays readable
