import numpy as np
import pytest

import zarrkit
from zarrkit.errors import (
    ContainsArrayError,
    ContainsGroupError,
    InvalidPathError,
    NodeNotFoundError,
)


def test_hierarchy_basics():
    root = zarrkit.group()
    foo = root.create_group("foo")
    foo.create_group("bar")
    root.zeros("baz", shape=(5,), chunks=2)
    assert list(root) == ["baz", "foo"]
    assert len(root) == 2
    assert "foo/bar" in root and "nope" not in root
    assert sorted(root.group_keys()) == ["foo"]
    assert sorted(root.array_keys()) == ["baz"]
    assert isinstance(root["foo/bar"], zarrkit.Group)
    assert root.foo.bar.path == "foo/bar"
    with pytest.raises(KeyError):
        root["nope"]
    with pytest.raises(AttributeError):
        root.nope


def test_parents_created_for_deep_paths():
    root = zarrkit.group()
    root.create_dataset("a/b/c", shape=10, chunks=5)
    assert isinstance(root["a"], zarrkit.Group) and isinstance(root["a/b"], zarrkit.Group)
    with pytest.raises(ContainsArrayError):
        root.create_group("a/b/c/d")


def test_require_group_and_dataset():
    g = zarrkit.group()
    assert g.require_group("x") == g.require_group("x")
    d = g.require_dataset("d", shape=(4,), dtype="i4")
    d[:] = 3
    d2 = g.require_dataset("d", shape=(4,), dtype="i2")
    assert d2[0] == 3
    with pytest.raises(TypeError):
        g.require_dataset("d", shape=(5,))
    with pytest.raises(TypeError):
        g.require_dataset("d", shape=(4,), dtype="i2", exact=True)
    with pytest.raises(ContainsGroupError):
        g.require_dataset("x", shape=(4,))


def test_delete_move_visit():
    g = zarrkit.group()
    g.create_group("a").zeros("z", shape=3)
    g.create_group("b")
    g.move("a", "c/d")
    assert "a" not in g and isinstance(g["c/d/z"], zarrkit.Array)
    seen = []
    g.visit(seen.append)
    assert seen == ["b", "c", "c/d", "c/d/z"]
    items = []
    g.visititems(lambda name, obj: items.append((name, type(obj).__name__)))
    assert items[-1] == ("c/d/z", "Array")
    del g["c"]
    assert list(g) == ["b"]
    with pytest.raises(NodeNotFoundError):
        del g["c"]


def test_setitem_creates_array_and_tree():
    g = zarrkit.group()
    g["data"] = np.arange(4)
    np.testing.assert_array_equal(g["data"][:], np.arange(4))
    g.create_group("sub").zeros("x", shape=(2, 2))
    text = str(g.tree())
    assert text.splitlines()[0] == "/"
    assert "data (4,) int64" in text and "x (2, 2) float64" in text


def test_group_modes(tmp_path):
    p = str(tmp_path / "g")
    with pytest.raises(NodeNotFoundError):
        zarrkit.open_group(p, mode="r")
    g = zarrkit.open_group(p, mode="w")
    g.attrs["k"] = [1, 2]
    r = zarrkit.open_group(p, mode="r")
    assert r.attrs["k"] == [1, 2]
    with pytest.raises(PermissionError):
        r.create_group("x")
    with pytest.raises(ContainsGroupError):
        zarrkit.open_group(p, mode="w-")
    assert zarrkit.open_group(p, mode="a") == g


def test_invalid_paths_refused():
    g = zarrkit.group()
    for bad in ("../x", "a/../b", "./a"):
        with pytest.raises(InvalidPathError):
            g.create_group(bad)


def test_attrs_are_json_on_disk(tmp_path):
    g = zarrkit.open_group(str(tmp_path / "h"), mode="w")
    g.attrs.update(b=1, a="x")
    assert (tmp_path / "h" / ".zattrs").read_text() == '{\n    "a": "x",\n    "b": 1\n}'
    with pytest.raises(TypeError):
        g.attrs["bad"] = object()
    assert dict(g.attrs) == {"a": "x", "b": 1}


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_group_is_a_mapping(zarr_format):
    from collections.abc import Mapping

    root = zarrkit.group(zarr_format=zarr_format)
    root.create_group("foo").zeros("bar", shape=(3,))
    root.zeros("baz", shape=(5,), chunks=2)
    assert isinstance(root, Mapping)
    keys = root.keys()
    assert list(keys) == list(root) == ["baz", "foo"]
    assert len(keys) == 2 and "foo" in keys and "nope" not in keys
    values = list(root.values())
    assert [v.path for v in values] == ["baz", "foo"]
    assert isinstance(values[0], zarrkit.Array) and isinstance(values[1], zarrkit.Group)
    items = list(root.items())
    assert [k for k, _ in items] == ["baz", "foo"]
    assert all(v == root[k] for k, v in items)
    assert dict(root.items()).keys() == set(root.keys())
    # the views are live, as a dict's are
    root.create_group("qux")
    assert list(keys) == ["baz", "foo", "qux"]
    assert root.get("foo/bar").path == "foo/bar" and root.get("nope") is None
    assert next(iter(root["foo"].items()))[0] == "bar"
    # a member named like a method is still reachable by item access
    root.create_group("keys")
    assert root["keys"].path == "keys" and "keys" in root.keys()  # noqa: SIM118 - the view
