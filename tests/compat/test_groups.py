"""zarr-python 2 behaviour of groups, attributes, errors and ``.info`` (issue 17: items 2, 5, 6,
7, 10 and 13), checked on real stores in both formats."""

from __future__ import annotations

import json
import multiprocessing
import pickle
import warnings

import numcodecs
import numpy as np
import pytest
from zarrkit.attrs import Attributes
from zarrkit.hierarchy import Group

import zarrkit
from zarrkit import errors
from zarrkit.core.info import InfoReporter
from zarrkit.storage import (
    CountingStore,
    DirectoryStore,
    LatencyStore,
    LMDBStore,
    MemoryStore,
    SQLiteStore,
    init_array,
    init_group,
)


@pytest.fixture(params=[2, 3], ids=["v2", "v3"])
def fmt(request):
    with zarrkit.config.set(zarr_format=request.param):
        yield request.param


@pytest.fixture(params=["directory", "lmdb", "sqlite", "dict"])
def store(request, tmp_path):
    if request.param == "directory":
        s = DirectoryStore(str(tmp_path / "d.zarr"))
    elif request.param == "lmdb":
        s = LMDBStore(str(tmp_path / "d.lmdb"))
    elif request.param == "sqlite":
        s = SQLiteStore(str(tmp_path / "d.sqlite"))
    else:
        s = {}
    yield s
    if hasattr(s, "close"):
        s.close()


# -- item 2: error classes keep zarr-python 2's bases, and zarrkit's --------------------------
@pytest.mark.parametrize(
    ("cls", "bases"),
    [
        (errors.ContainsArrayError, (ValueError, FileExistsError)),
        (errors.ContainsGroupError, (ValueError, FileExistsError)),
        (errors.ArrayNotFoundError, (ValueError, FileNotFoundError, KeyError)),
        (errors.GroupNotFoundError, (ValueError, FileNotFoundError, KeyError)),
        (errors.PathNotFoundError, (ValueError, FileNotFoundError, KeyError)),
        (errors.FSPathExistNotDir, (errors.GroupNotFoundError, ValueError, OSError)),
        (errors.ReadOnlyError, (PermissionError,)),
        (errors.BoundsCheckError, (IndexError,)),
        (errors.ArrayIndexError, (IndexError,)),
        (errors.NegativeStepError, (IndexError,)),
        (errors.VindexInvalidSelectionError, (IndexError,)),
        (errors.MetadataError, (Exception, ValueError)),
        (errors.BadCompressorError, (ValueError,)),
        (errors.CopyError, (RuntimeError,)),
    ],
)
def test_error_classes_keep_both_bases(cls, bases):
    for base in (*bases, errors.ZarrkitError):
        assert issubclass(cls, base), (cls, base)
    err = cls("something at 'foo' went wrong")
    # KeyError would quote its message: str() stays the message itself
    assert str(err) == "something at 'foo' went wrong"
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is cls and str(back) == str(err)


def test_convenience_copy_error_is_the_errors_one():
    from zarrkit.api.convenience import CopyError

    assert CopyError is errors.CopyError


def test_zarr2_except_clauses_catch_node_errors(tmp_path, fmt):
    path = str(tmp_path / "g.zarr")
    with pytest.raises(ValueError):  # zarr-python 2: ArrayNotFoundError(ValueError)
        zarrkit.open_array(path, mode="r")
    with pytest.raises(FileNotFoundError):
        zarrkit.open_array(path, mode="r")
    g = zarrkit.open_group(path, mode="w")
    g.create_group("foo")
    for clause in (ValueError, FileExistsError, errors.ContainsGroupError):
        with pytest.raises(clause):
            g.create_group("foo")
    g.zeros("arr", shape=10)
    with pytest.raises(ValueError, match="array"):
        g.create_group("arr/sub")  # an array is in the way
    with pytest.raises(KeyError) as info:
        g["nope"]
    assert not str(info.value).startswith(("'", '"'))  # readable, not KeyError's quoted repr
    assert "'nope'" in str(info.value) and "DirectoryStore" in str(info.value)
    with pytest.raises(PermissionError):
        zarrkit.open_group(path, mode="r").create_group("bar")


def test_group_constructor_errors_name_the_store(tmp_path, fmt):
    store = DirectoryStore(str(tmp_path / "s.zarr"))
    with pytest.raises(ValueError, match=r"No group found in store DirectoryStore\('.*s\.zarr'\) at path ''"):
        Group(store)
    with pytest.raises(errors.GroupNotFoundError):
        Group(store)
    init_array(store, shape=100, chunks=10, zarr_format=fmt)
    with pytest.raises(ValueError, match="holds an array, not a group") as info:
        Group(store)
    assert isinstance(info.value, errors.ContainsArrayError)


def test_group_zarr_format_is_honoured(tmp_path):
    store = DirectoryStore(str(tmp_path / "f.zarr"))
    init_group(store, zarr_format=2)
    assert Group(store, zarr_format=2).zarr_format == 2
    with pytest.raises(errors.GroupNotFoundError, match="No Zarr v3 group found in store"):
        Group(store, zarr_format=3)
    with pytest.raises(errors.GroupNotFoundError):
        Group(store, zarr_version=3)


# -- item 5: a leading '/' is the root of the store ------------------------------------------
def test_absolute_paths_are_from_the_store_root(store, fmt):
    root = zarrkit.group(store=store)
    sub = root.create_group("foo/bar")
    g = sub.create_group("/a/b")
    assert g.path == "a/b" and g.name == "/a/b"
    assert "a/b" in root and "foo/bar/a" not in root
    assert sub["/"] == root and root["/"] == root and root["//"] == root
    assert sub["/a/b"] == g and "/a/b" in sub and "a/b" not in sub
    assert root["//foo//bar//"] == sub and root["/foo/bar/"] == sub
    d = sub.create_dataset("/x/y", shape=10, chunks=5)
    assert d.path == "x/y"
    d[:] = np.arange(10)
    assert sub.require_group("/a/b/") == g
    assert root.require_group("quux") == root.require_group("/quux/")
    sub.zeros("local", shape=3)
    sub.move("local", "/moved")  # from the group to the root
    assert "moved" in root and "local" not in sub
    np.testing.assert_array_equal(sub["/x/y"][:], np.arange(10))
    del sub["/x"]
    assert "x" not in root
    for bad in (".", "..", "foo/.", "foo/../bar"):
        with pytest.raises(ValueError):
            root[bad]


def test_names_that_designate_the_group_itself_are_refused(fmt):
    root = zarrkit.group()
    sub = root.create_group("foo")
    sub.zeros("keep", shape=3)
    for g, name in ((root, ""), (root, "/"), (sub, ""), (sub, "/"), (sub, "/foo")):
        for overwrite in (False, True):
            with pytest.raises(ValueError):
                g.create_group(name, overwrite=overwrite)
            with pytest.raises(ValueError):
                g.zeros(name, shape=3, overwrite=overwrite)
    assert "foo/keep" in root  # nothing was replaced


def test_non_str_names():
    g = zarrkit.group()
    assert g.create_group(b"bytes/name").path == "bytes/name"

    class Name:
        def __str__(self):
            return "as/str"

    assert g.create_group(Name()).path == "as/str"


def test_move_errors_are_value_errors(fmt):
    g = zarrkit.group()
    g["a"] = np.arange(3)
    g["b"] = np.arange(3)
    with pytest.raises(ValueError, match="holds an array"):
        g.move("a", "b")
    with pytest.raises(ValueError):
        g.move("nope", "c")
    with pytest.raises(ValueError):
        g.move("a", "a/inner")
    g.move("a", "c/d")
    assert isinstance(g["c"], Group) and "a" not in g


# -- iteration semantics ---------------------------------------------------------------------
def test_recursive_array_keys_give_names(fmt):
    root = zarrkit.group()
    foo = root.create_group("foo")
    foo.create_group("bar").zeros("zab", shape=3)
    foo.zeros("baz", shape=3)
    root.zeros("top", shape=3)
    assert list(foo.array_keys()) == ["baz"]
    assert list(foo.array_keys(recurse=True)) == ["zab", "baz"]  # depth first, by name
    arrays = list(foo.arrays(recurse=True))
    assert [(n, a.path) for n, a in arrays] == [("zab", "foo/bar/zab"), ("baz", "foo/baz")]
    assert list(root.array_keys(recurse=True)) == ["zab", "baz", "top"]
    assert list(root.group_keys()) == ["foo"] and [n for n, _ in root.groups()] == ["foo"]


# -- item 6: Jupyter display, tab completion, tree bytes, info --------------------------------
def test_ipython_hooks(fmt):
    g = zarrkit.group()
    g.create_groups("foo", "123")
    g.zeros("xxx", shape=3)
    g.zeros("asdf;", shape=3)
    g.zeros("class", shape=3)
    for name in ("markdown", "svg", "png", "jpeg", "latex", "json", "javascript", "pdf"):
        assert getattr(g, f"_repr_{name}_")() is None  # IPython falls back to the text repr
    # a view read from no store: the members (none looked up among them as an attribute)
    # where they are known without a listing, from consolidated metadata
    assert g._repr_html_().count("<li>") == 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", errors.ZarrUserWarning)
        assert zarrkit.consolidate_metadata(g.store)._repr_html_().count("<li>") == 5
    assert g._repr_mimebundle_() is None
    with pytest.raises(AttributeError):
        g._ipython_display_
    assert g._ipython_key_completions_() == ["123", "asdf;", "class", "foo", "xxx"]
    d = dir(g)
    assert "foo" in d and "xxx" in d and "create_group" in d
    assert "123" not in d and "asdf;" not in d and "class" not in d  # not attribute names
    assert g.foo == g["foo"]


def test_tree_text_and_bytes(fmt):
    g = zarrkit.group(path="group1")
    g.create_group("foo")
    bar = g.create_group("bar")
    bar.create_group("baz")
    bar.create_group("quux").zeros("baz", shape=100, chunks=10)
    if fmt == 3:  # zarr-python 3's drawing: branches flush left, a final newline, the
        # root by its full name
        assert str(g.tree()) == (
            "/group1\n├── bar\n│   ├── baz\n│   └── quux\n│       └── baz (100,) float64\n└── foo\n"
        )
        assert bytes(bar.tree()) == b"/group1/bar\n+-- baz\n+-- quux\n    +-- baz (100,) float64\n"
        assert str(zarrkit.group().tree()) == "/\n"
        return
    assert str(g.tree()) == (
        "group1\n"
        " ├── bar\n"
        " │   ├── baz\n"
        " │   └── quux\n"
        " │       └── baz (100,) float64\n"
        " └── foo"
    )
    assert repr(g.tree()) == str(g.tree())
    assert bytes(g.tree()) == (
        b"group1\n"
        b" +-- bar\n"
        b" |   +-- baz\n"
        b" |   +-- quux\n"
        b" |       +-- baz (100,) float64\n"
        b" +-- foo"
    )
    assert str(bar.tree()) == "bar\n ├── baz\n └── quux\n     └── baz (100,) float64"
    assert bytes(g["foo"].tree()) == b"foo"
    assert str(zarrkit.group().tree()) == "/"


def test_tree_of_an_h5py_subgroup_is_named_like_a_zarrkit_one(tmp_path):
    h5py = pytest.importorskip("h5py")
    with h5py.File(tmp_path / "t.h5", "w") as f:
        f.create_group("foo/bar").create_dataset("d", data=np.arange(2))
        assert bytes(zarrkit.tree(f["foo/bar"])) == b"bar\n +-- d (2,) int64"
        assert str(zarrkit.tree(f)).splitlines()[0] == "/"


def test_group_and_array_info(fmt):
    g = zarrkit.group(store={}, chunk_store={}, synchronizer=zarrkit.ThreadSynchronizer())
    g.create_group("foo")
    filters = [numcodecs.Delta(dtype="<f8")] if fmt == 2 else None
    z = g.zeros("bar", shape=100, chunks=10, filters=filters)
    z[:15] = 1
    assert isinstance(g.info, InfoReporter) and isinstance(z.info, InfoReporter)
    items = dict(g.info_items())
    assert set(items) == {
        "Name", "Type", "Zarr format", "Read-only", "Synchronizer type", "Store type",
        "Chunk store type", "No. members", "No. arrays", "No. groups", "Arrays", "Groups",
    }
    assert items["Name"] == "/" and items["Type"] == "zarrkit.Group"
    assert (items["No. members"], items["Arrays"], items["Groups"]) == ("2", "bar", "foo")
    assert items["Zarr format"] == str(fmt) and items["Read-only"] == "False"
    assert items["Synchronizer type"] == "zarrkit.sync.ThreadSynchronizer"
    zitems = dict(z.info_items())
    assert {"Name", "Type", "Data type", "Shape", "Chunk shape", "Order", "Read-only",
            "Compressor", "Synchronizer type", "Store type", "Chunk store type", "No. bytes",
            "No. bytes stored", "Storage ratio", "Chunks initialized"} <= set(zitems)
    assert zitems["Chunks initialized"] == "2/10" and zitems["No. bytes"] == "800"
    if fmt == 2:
        assert zitems["Filter [0]"].startswith("Delta(")  # one item per filter, from 0
    text = repr(g.info)
    html = z.info._repr_html_()
    assert html.startswith("<table") and "<th" in html
    if fmt == 3:  # a v3 node's report is zarr-python 3's
        assert text.splitlines()[:2] == ["Name        : ", "Type        : Group"]
        assert "No. members : 2" in str(g.info_complete())
        assert "Type</th>" in html and "Array</td>" in html
        return
    assert text == str(g.info) and text.splitlines()[0] == "Name              : /"
    assert "/bar" in html


def test_info_text_wraps_and_html_escapes():
    g = zarrkit.group(zarr_format=2)  # zarr-python 2's report (v3's has no member list)
    names = [f"array_with_a_long_name_{i:02d}" for i in range(8)]
    for n in names:
        g.zeros(n, shape=1)
    g.zeros("<b>&", shape=1)
    lines = repr(g.info).splitlines()
    assert all(len(line) <= 80 for line in lines)
    assert sum(line.startswith("Arrays") for line in lines) == 1
    assert sum(line.startswith("       ") and " : " in line for line in lines) >= 2  # wrapped
    html = g.info._repr_html_()
    assert "&lt;b&gt;&amp;" in html and "<b>&" not in html


# -- item 7: Attributes as zarr-python 2 constructs them -------------------------------------
def test_attributes_over_a_plain_dict():
    store = {}
    a = Attributes(store, key=".zattrs")
    assert dict(a) == {} and "foo" not in a and a.asdict() == {}
    a["foo"] = "bar"
    a.update(baz=42, qux=[1, 2])
    assert json.loads(store[".zattrs"]) == {"foo": "bar", "baz": 42, "qux": [1, 2]}
    assert isinstance(store[".zattrs"], bytes)
    a.put({"only": 1})
    assert dict(Attributes(store)) == {"only": 1}  # key defaults to '.zattrs'
    del a["only"]
    with pytest.raises(KeyError):
        a["only"]
    assert a._ipython_key_completions_() == []


def test_attributes_on_a_real_store_beside_a_node(tmp_path, fmt):
    store = DirectoryStore(str(tmp_path / "a.zarr"))
    g = zarrkit.open_group(store, mode="w")
    sub = g.create_group("sub")
    key = "sub/.zattrs" if fmt == 2 else "sub/zarr.json"
    a = Attributes(store, key=key)
    a["units"] = "m"
    assert sub.attrs["units"] == "m"  # what the group reads: the same document
    if fmt == 3:  # the v3 node document is kept whole around its attributes
        assert json.loads(store["sub/zarr.json"])["node_type"] == "group"
    ro = Attributes(store, key=key, read_only=True)
    assert ro["units"] == "m"
    for change in (lambda: ro.__setitem__("x", 1), lambda: ro.__delitem__("units"),
                   lambda: ro.update(x=1), lambda: ro.put({})):
        with pytest.raises(PermissionError):
            change()
    assert dict(Attributes(store, key=key)) == {"units": "m"}


def test_attributes_cache_and_refresh():
    inner = MemoryStore()
    store = CountingStore(inner)
    inner[".zattrs"] = json.dumps({"foo": "xxx"}).encode()
    cached = Attributes(store, key=".zattrs")
    assert cached["foo"] == "xxx" and "foo" in cached and len(cached) == 1
    assert store.counts["get"] == 1  # one read, then the cache
    cached["foo"] = "yyy"  # read-modify-write: one more read, one write
    assert (store.counts["get"], store.counts["set"]) == (2, 1)
    inner[".zattrs"] = json.dumps({"foo": "zzz"}).encode()
    assert cached["foo"] == "yyy"
    cached.refresh()
    assert store.counts["get"] == 3 and cached["foo"] == "zzz"
    uncached = Attributes(store, key=".zattrs", cache=False)
    store.reset()
    assert uncached["foo"] == "zzz" and "foo" in uncached
    assert store.counts["get"] == 2


def test_attribute_keys_that_are_not_strings_warn():
    store = {}
    a = Attributes(store, synchronizer=zarrkit.ThreadSynchronizer())
    with pytest.warns(DeprecationWarning, match="only attribute keys of type 'string'"):
        a[1] = "foo"
    with pytest.warns(DeprecationWarning):
        a.update({2.5: "bar"})
    with pytest.warns(DeprecationWarning):
        a.put({True: "x", "s": 1})
    assert dict(a) == {"true": "x", "s": 1} == json.loads(store[".zattrs"])
    with pytest.raises(TypeError, match="attribute keys"):
        a[(1, 2)] = "tuple"  # no JSON spelling: refused, nothing written
    assert dict(a) == {"true": "x", "s": 1}


# -- item 10: concurrent require_group under a ProcessSynchronizer ---------------------------
N_NAMES = 25


def _require_all(path, sync_path, worker, barrier, results):
    try:
        g = zarrkit.open_group(path, mode="r+", synchronizer=zarrkit.ProcessSynchronizer(sync_path))
        barrier.wait()  # all processes race for the same names from here
        got = []
        for i in range(N_NAMES):
            sub = g.require_group(f"g{i}")
            sub.attrs.update({worker: True})
            got.append(sub.path)
        results.put((worker, got))
    except Exception as exc:  # noqa: BLE001 (reported to the test, not lost in the child)
        results.put((worker, repr(exc)))


def test_require_group_from_processes(tmp_path, fmt):
    path = str(tmp_path / "p.zarr")
    sync_path = str(tmp_path / "sync")
    zarrkit.open_group(path, mode="w")
    ctx = multiprocessing.get_context("spawn")
    workers = [f"w{i}" for i in range(3)]
    barrier, results = ctx.Barrier(len(workers)), ctx.Queue()
    procs = [ctx.Process(target=_require_all, args=(path, sync_path, w, barrier, results)) for w in workers]
    for p in procs:
        p.start()
    got = dict(results.get(timeout=120) for _ in procs)
    for p in procs:
        p.join(timeout=60)
    expected = [f"g{i}" for i in range(N_NAMES)]
    assert got == {w: expected for w in workers}  # every process got every group
    g = zarrkit.open_group(path, mode="r")
    assert sorted(g) == sorted(expected)
    for name in expected:  # no require re-initialised a group another process had marked
        assert set(g[name].attrs) == set(workers), name


# -- item 13: repr reads nothing on a remote store; info costs a listing ----------------------
def test_repr_and_info_costs_on_a_high_latency_store(fmt):
    store = CountingStore(LatencyStore(MemoryStore(), seconds=0))
    root = zarrkit.group(store=store)
    sub = root.create_group("sub")
    for i in range(5):
        sub.zeros(f"a{i}", shape=100, chunks=10)[:] = 1
    sub.create_group("inner")
    store.reset()
    text = repr(sub)
    assert sum(store.counts.values()) == 0  # nothing read
    # zarr-python 2's form for a v2 group, zarr-python 3's for a v3 one
    assert text == ("<zarrkit.Group '/sub'>" if fmt == 2 else f"<Group {store}/sub>")
    items = dict(sub.info_items())
    assert (items["No. arrays"], items["No. groups"]) == ("5", "1")
    assert store.counts["list"] == 1 and store.counts["getsize"] == 0
    assert store.counts["get"] <= 3 * 6  # the members' metadata, not their chunks


def test_repr_on_a_local_store(tmp_path, fmt):
    g = zarrkit.open_group(str(tmp_path / "r.zarr"), mode="w")
    g.create_group("foo")
    g.zeros("bar", shape=3)
    if fmt == 3:
        assert repr(g) == f"<Group file://{tmp_path / 'r.zarr'}>"
        assert repr(g["foo"]) == f"<Group file://{tmp_path / 'r.zarr'}/foo>"
        assert repr(g["bar"]) == f"<Array file://{tmp_path / 'r.zarr'}/bar shape=(3,) dtype=float64>"
        return
    assert repr(g) == "<zarrkit.Group '/'>"  # zarr-python 2's, which lists nothing
