"""zarr-python 3's Group API: ``Group.from_store``, ``Group.open``, ``create_hierarchy``,
``Attributes(node)``, ``tree(level=, plain=, max_nodes=)``."""

from __future__ import annotations

import asyncio

import pytest

import zarrkit
from zarrkit.api.async_nodes import AsyncGroup
from zarrkit.core.attributes import Attributes
from zarrkit.core.group import Group, GroupMetadata
from zarrkit.errors import ContainsGroupError, GroupNotFoundError
from zarrkit.storage import MemoryStore, StorePath


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_from_store_creates_the_group_with_its_attributes(zarr_format):
    store = MemoryStore()
    g = Group.from_store(store, attributes={"a": 1}, zarr_format=zarr_format)
    assert g.attrs.asdict() == {"a": 1} and g.metadata.zarr_format == zarr_format and g.path == ""
    with pytest.raises(ContainsGroupError):
        Group.from_store(store, zarr_format=zarr_format)
    again = Group.from_store(store, attributes={"b": 2}, zarr_format=zarr_format, overwrite=True)
    assert again.attrs.asdict() == {"b": 2}


def test_from_store_refuses_bad_arguments_before_writing():
    store = {}
    with pytest.raises(ValueError, match="zarr_format"):
        Group.from_store(store, zarr_format=4)
    with pytest.raises(TypeError, match="attributes"):
        Group.from_store(store, attributes=[1])
    assert store == {}


def test_from_store_and_open_with_a_store_path_use_its_path():
    store = MemoryStore()
    g = Group.from_store(StorePath(store, "x/y"), zarr_format=3)
    assert g.path == "x/y" and g.name == "/x/y" and g.basename == "y"
    assert Group.open(StorePath(store, "x/y")).path == "x/y"


def test_open_finds_a_group_and_refuses_nothing():
    store = MemoryStore()
    with pytest.raises(FileNotFoundError):
        Group.open(store)
    Group.from_store(store, zarr_format=2)
    assert Group.open(store, zarr_format=None).metadata.zarr_format == 2
    with pytest.raises(GroupNotFoundError):
        Group.open(store, zarr_format=3)


def test_open_uses_consolidated_metadata_when_there_is_some():
    store = MemoryStore()
    g = Group.from_store(store)
    g.create_group("a")
    with pytest.warns(zarrkit.errors.ZarrUserWarning, match="Consolidated metadata"):
        zarrkit.consolidate_metadata(store)
    g.create_group("b")  # not in the consolidated metadata
    assert sorted(Group.open(store)) == ["a"]
    assert Group.open(store).metadata.consolidated_metadata is not None
    fresh = Group.open(store, use_consolidated=False)
    assert sorted(fresh) == ["a", "b"] and fresh.metadata.consolidated_metadata is None
    with pytest.raises(GroupNotFoundError, match="consolidated"):
        Group.open(_plain_group(), use_consolidated=True)


def _plain_group():
    store = MemoryStore()
    Group.from_store(store)
    return store


def test_create_hierarchy_below_a_group_makes_the_missing_parents():
    g = zarrkit.create_group({})
    sub = g.create_group("sub")
    made = dict(sub.create_hierarchy({"a/b": GroupMetadata(attributes={"k": 1})}))
    assert list(made) == ["a", "a/b"]
    assert made["a/b"].path == "sub/a/b" and made["a/b"].attrs.asdict() == {"k": 1}
    assert g["sub/a"].attrs.asdict() == {}
    with pytest.raises(TypeError, match="GroupMetadata"):
        list(sub.create_hierarchy({"c": {"zarr_format": 3}}))


def test_async_create_hierarchy_and_tree_match_the_group():
    g = zarrkit.create_group({})

    async def run():
        ag = AsyncGroup(g)
        made = [path async for path, _ in ag.create_hierarchy({"x/y": GroupMetadata()})]
        return made, str(await ag.tree(level=0, plain=True))

    made, tree = asyncio.run(run())
    assert made == ["x", "x/y"] and tree == "/\n└── x\n"


def test_attributes_of_a_node_are_its_own():
    g = zarrkit.create_group({}, attributes={"a": 1})
    a = g.create_array("arr", shape=(2,), dtype="i2", attributes={"u": "m"})
    assert Attributes(g).asdict() == {"a": 1}
    Attributes(a).put({"u": "s"})
    assert a.attrs.asdict() == {"u": "s"}
    assert Attributes(AsyncGroup(g)).asdict() == {"a": 1}


def _hierarchy():
    g = zarrkit.create_group({})
    g.create_group("A").create_array("x", shape=(2,), dtype="f8")
    g.create_group("B").create_group("C")
    return g


def test_tree_level_counts_from_zero_for_a_v3_group():
    g = _hierarchy()
    assert str(g.tree(level=0)) == "/\n├── A\n└── B\n"
    assert str(g.tree()) == "/\n├── A\n│   └── x (2,) float64\n└── B\n    └── C\n"


def test_tree_of_a_v2_group_keeps_its_level_and_drawing():
    g = zarrkit.group(zarr_format=2)
    g.create_group("A").create_group("B")
    assert str(g.tree(level=1)) == "/\n └── A"


def test_tree_root_is_named_by_its_full_name_and_bold_on_a_terminal(monkeypatch):
    g = zarrkit.create_group({}, path="r/s")
    g.create_group("A")
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    assert str(g.tree()) == "\x1b[1m/r/s\x1b[0m\n└── \x1b[1mA\x1b[0m\n"
    assert str(g.tree(plain=True)) == "/r/s\n└── A\n"
    monkeypatch.setattr("sys.stdout.isatty", lambda: False)
    assert str(g.tree()) == "/r/s\n└── A\n"


def test_tree_max_nodes_truncates_with_a_note():
    g = zarrkit.create_group({})
    for name in "abcde":
        g.create_group(name)
    text = str(g.tree(max_nodes=2, plain=True))
    assert text.startswith("Truncated at max_nodes=2") and [line for line in text.splitlines() if "──" in line] == [
        "├── a", "├── b"]
    assert "Truncated" not in str(g.tree(max_nodes=5))
    bundle = g.tree(max_nodes=2)._repr_mimebundle_()
    assert "Truncated" in bundle["text/plain"] and "Truncated" in bundle["text/html"]
    with pytest.raises(ValueError, match="max_nodes"):
        g.tree(max_nodes=-1)


def test_tree_refuses_expand_and_bad_levels_for_a_v3_group():
    g = _hierarchy()
    with pytest.raises(NotImplementedError):
        g.tree(expand=True)
    with pytest.raises(ValueError, match="level"):
        g.tree(level=-1)
    assert str(g.tree(expand=False)).count("\n") == 5


def test_tree_html_escapes_names():
    g = zarrkit.create_group({})
    g.create_group("<i>x")
    bundle = g.tree()._repr_mimebundle_()
    assert "&lt;i&gt;x" in bundle["text/html"] and "<i>" not in bundle["text/html"]
    assert "<i>x" in bundle["text/plain"]
