"""zarr-python 2's convenience functions: save/load, copy, copy_all, copy_store, tree."""

from __future__ import annotations

import io
import re
import tracemalloc
import warnings

import numcodecs
import numpy as np
import pytest

import zarrkit
from zarrkit.api.convenience import (
    CopyError,
    LazyLoader,
    copy,
    copy_all,
    copy_store,
    load,
    save,
    save_array,
    save_group,
    tree,
)
from zarrkit.errors import NodeNotFoundError


def _source(zarr_format=2):
    """A small hierarchy: /foo (attrs) with /foo/bar (data) and /foo/baz (sparse), and /spam."""
    store = zarrkit.MemoryStore()
    root = zarrkit.group(store, zarr_format=zarr_format)
    root.attrs["title"] = "source"
    foo = root.create_group("foo")
    foo.attrs["level"] = 1
    bar = foo.array("bar", np.arange(100, dtype="i4").reshape(10, 10), chunks=(3, 4))
    bar.attrs["units"] = "m"
    baz = foo.zeros("baz", shape=(20,), chunks=(5,), dtype="f8")
    baz[:5] = 1.5
    root.array("spam", np.linspace(0, 1, 7), chunks=3)
    return store, root


# -- save / load ---------------------------------------------------------------------------------
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_save_load_array_roundtrip(tmp_path, zarr_format):
    data = np.arange(1000, dtype="f4").reshape(10, 100)
    for target in ({}, str(tmp_path / "a.zarr"), str(tmp_path / "a.zip")):
        save(target, data, zarr_format=zarr_format)
        out = load(target)
        assert isinstance(out, np.ndarray)
        np.testing.assert_array_equal(out, data)


def test_save_array_kwargs_and_path(tmp_path):
    store = {}
    save_array(store, np.arange(10), chunks=5, path="x/y", zarr_format=2)
    z = zarrkit.open_array(store, path="x/y", mode="r")
    assert z.chunks == (5,)
    np.testing.assert_array_equal(load(store, path="x/y"), np.arange(10))


def test_save_zip_overwrites(tmp_path):
    path = str(tmp_path / "data.zip")
    save(path, np.arange(3))
    save(path, np.arange(5))  # the zip is rewritten, not appended to
    np.testing.assert_array_equal(load(path), np.arange(5))


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_save_group_roundtrip(tmp_path, zarr_format):
    a, b, c = np.arange(5), np.ones((2, 3)), np.array(["x", "yy"], dtype="U2")
    target = str(tmp_path / "g.zarr")
    save_group(target, a, b, named=c, zarr_format=zarr_format)
    loader = load(target)
    assert isinstance(loader, LazyLoader)
    assert sorted(loader) == ["arr_0", "arr_1", "named"]
    assert len(loader) == 3 and "named" in loader and "nope" not in loader
    np.testing.assert_array_equal(loader["arr_0"], a)
    np.testing.assert_array_equal(loader["arr_1"], b)
    np.testing.assert_array_equal(loader["named"], c)
    assert loader["arr_0"] is loader["arr_0"]  # cached
    assert repr(loader) == "<LazyLoader: arr_0, arr_1, named>"
    zarrkit.open_group(target).create_group("sub")
    with pytest.raises(NodeNotFoundError, match="'sub' in '/' is a group, not an array"):
        load(target)["sub"]


def test_save_several_makes_a_group():
    store = {}
    save(store, np.arange(2), x=np.zeros(3))
    assert sorted(load(store)) == ["arr_0", "x"]


def test_save_needs_arrays_and_load_needs_a_node(tmp_path):
    with pytest.raises(ValueError):
        save({})
    with pytest.raises(ValueError):
        save_group({})
    with pytest.raises(NodeNotFoundError):
        load({})


def test_tree():
    _, root = _source()
    text = str(tree(root))
    assert text.splitlines()[0] == "/"
    assert "bar (10, 10) int32" in text
    assert "bar" not in str(tree(root, level=1))


# -- copy_store ----------------------------------------------------------------------------------
def test_copy_store_all_keys():
    source, _ = _source()
    dest = {}
    n_copied, n_skipped, n_bytes = copy_store(source, dest)
    keys = sorted(source)
    assert sorted(dest) == keys
    assert (n_copied, n_skipped) == (len(keys), 0)
    assert n_bytes == sum(len(source[k]) for k in keys)
    np.testing.assert_array_equal(zarrkit.open_array(dest, path="foo/bar", mode="r")[:], np.arange(100).reshape(10, 10))


def test_copy_store_paths_excludes_includes():
    source, _ = _source()
    dest = {}
    copy_store(source, dest, source_path="foo", dest_path="new/place")
    assert all(k.startswith("new/place/") for k in dest)
    assert "new/place/bar/.zarray" in dest and "new/place/.zgroup" in dest

    dest = {}
    copy_store(source, dest, excludes=r"^foo/", includes=r"\.z")
    assert "foo/bar/.zarray" in dest and "foo/.zgroup" in dest
    assert not any(re.match(r"foo/bar/\d", k) for k in dest)  # chunks excluded
    assert "spam/0" in dest

    dest = {}
    copy_store(source, dest, excludes=["SPAM"], flags=re.IGNORECASE)
    assert not any(k.startswith("spam") for k in dest)


def test_copy_store_if_exists_and_dry_run():
    source, _ = _source()
    dest = {}
    copy_store(source, dest)
    with pytest.raises(CopyError):
        copy_store(source, dest)
    n = len(list(source))
    assert copy_store(source, dest, if_exists="skip") == (0, n, 0)
    dest[".zattrs"] = b"{}"
    c, s, nbytes = copy_store(source, dest, if_exists="replace")
    assert (c, s) == (n, 0) and nbytes > 0
    assert dest[".zattrs"] == source[".zattrs"]
    with pytest.raises(ValueError):
        copy_store(source, dest, if_exists="skip_initialized")

    empty = {}
    assert copy_store(source, empty, dry_run=True) == (n, 0, 0)
    assert empty == {}


def test_copy_store_log_forms(tmp_path):
    source, _ = _source()
    lines = []
    copy_store(source, {}, log=lines.append)
    assert lines[0] == "copy .zattrs" and lines[-1].startswith("all done: ")
    buf = io.StringIO()
    copy_store(source, {}, source_path="spam", dest_path="eggs", log=buf)
    assert "copy spam/.zarray -> eggs/.zarray" in buf.getvalue()
    log_path = tmp_path / "copy.log"
    copy_store(source, {}, dry_run=True, log=str(log_path))
    assert log_path.read_text().splitlines()[-1].startswith("dry run: ")
    with pytest.raises(TypeError):
        copy_store(source, {}, log=42)


def test_copy_store_between_directory_and_zip(tmp_path):
    source, _ = _source()
    zpath = tmp_path / "out.zip"
    with zarrkit.ZipStore(zpath, mode="w") as z:
        copy_store(source, z)
    dest = zarrkit.DirectoryStore(tmp_path / "out.zarr")
    with zarrkit.ZipStore(zpath, mode="r") as z:
        copy_store(z, dest)
    np.testing.assert_array_equal(zarrkit.open_array(dest, path="spam", mode="r")[:], np.linspace(0, 1, 7))


# -- copy / copy_all -----------------------------------------------------------------------------
@pytest.mark.parametrize("src_format,dst_format", [(2, 2), (2, 3), (3, 2), (3, 3)])
def test_copy_group_between_formats(src_format, dst_format):
    _, root = _source(src_format)
    dest = zarrkit.group(zarr_format=dst_format)
    lines = []
    n_copied, n_skipped, n_bytes = copy(root["foo"], dest, log=lines.append)
    assert (n_copied, n_skipped) == (3, 0)
    assert n_bytes == 100 * 4 + 20 * 8
    assert lines == [
        "copy /foo",
        "copy /foo/bar (10, 10) int32",
        "copy /foo/baz (20,) float64",
        f"all done: 3 copied, 0 skipped, {n_bytes:,} bytes copied",
    ]
    bar = dest["foo/bar"]
    assert bar.zarr_format == dst_format
    assert bar.chunks == (3, 4)
    np.testing.assert_array_equal(bar[:], np.arange(100).reshape(10, 10))
    np.testing.assert_array_equal(dest["foo/baz"][:], root["foo/baz"][:])
    assert dest["foo"].attrs["level"] == 1 and bar.attrs["units"] == "m"


def test_copy_array_name_and_root_needs_name():
    _, root = _source()
    dest = zarrkit.group()
    copy(root["spam"], dest, name="eggs")
    np.testing.assert_array_equal(dest["eggs"][:], np.linspace(0, 1, 7))
    with pytest.raises(TypeError, match="name"):
        copy(root, dest)
    copy(root, dest, name="everything")
    assert sorted(dest["everything"]) == ["foo", "spam"]
    with pytest.raises(ValueError):
        copy(root["spam"], root["spam"])  # dest must be a group


def test_copy_if_exists():
    _, root = _source()
    dest = zarrkit.group(zarr_format=2)
    copy(root["foo"], dest)
    with pytest.raises(CopyError):
        copy(root["foo"], dest)
    assert copy(root["foo"], dest, if_exists="skip")[:2] == (1, 2)  # the group is walked
    dest["foo/bar"][0, 0] = -1
    c, s, _ = copy(root["foo"], dest, if_exists="replace")
    assert (c, s) == (3, 0)
    assert dest["foo/bar"][0, 0] == 0
    with pytest.raises(ValueError):
        copy(root["foo"], dest, if_exists="sometimes")


def test_copy_skip_initialized():
    _, root = _source()
    dest = zarrkit.group(zarr_format=2)
    copy(root["foo/bar"], dest)  # complete: every chunk written
    partial = dest.zeros("baz", shape=(20,), chunks=(5,))
    partial[:5] = 9
    log = []
    c, s, _ = copy(root["foo/bar"], dest, if_exists="skip_initialized", log=log.append)
    assert (c, s) == (0, 1) and log[0] == "skip /foo/bar (10, 10) int32"
    c, s, _ = copy(root["foo/baz"], dest, if_exists="skip_initialized")
    assert (c, s) == (1, 0)
    np.testing.assert_array_equal(dest["baz"][:], root["foo/baz"][:])


def test_copy_dry_run_writes_nothing():
    _, root = _source()
    dest_store = {}
    dest = zarrkit.group(dest_store)
    before = dict(dest_store)
    log = []
    assert copy(root["foo"], dest, dry_run=True, log=log.append) == (3, 0, 0)
    assert dest_store == before
    assert log[-1] == "dry run: 3 copied, 0 skipped"


def test_copy_shallow_and_without_attrs():
    _, root = _source()
    dest = zarrkit.group()
    c, _, _ = copy(root, dest, name="r", shallow=True, without_attrs=True)
    assert sorted(dest["r"]) == ["spam"]  # foo (a group) is not copied
    assert c == 2
    assert dict(dest["r"].attrs) == {}


def test_copy_create_kws():
    _, root = _source()
    dest = zarrkit.group(zarr_format=2)
    copy(root["foo/bar"], dest, chunks=(5, 5), compressor=numcodecs.Zstd(level=1))
    bar = dest["bar"]
    assert bar.chunks == (5, 5) and bar.compressor == numcodecs.Zstd(level=1)
    np.testing.assert_array_equal(bar[:], root["foo/bar"][:])
    dest3 = zarrkit.group(zarr_format=3)
    copy(root["foo/bar"], dest3, chunks=(2, 10), shards=(4, 10))
    assert dest3["bar"].shards == (4, 10) and dest3["bar"].chunks == (2, 10)
    np.testing.assert_array_equal(dest3["bar"][:], root["foo/bar"][:])


def test_copy_keeps_v3_codecs_exactly():
    src = zarrkit.create_array(
        {}, name="x", shape=(40, 30), dtype="u2", chunks=(5, 5), shards=(10, 15),
        compressors=[{"name": "zstd", "configuration": {"level": 5}}], dimension_names=["y", "x"],
        zarr_format=3, fill_value=7,
    )
    src[:20] = np.arange(600, dtype="u2").reshape(20, 30)
    dest = zarrkit.group(zarr_format=3)
    copy(src, dest)
    out = dest["x"]
    assert out.metadata.to_json() == src.metadata.to_json()
    np.testing.assert_array_equal(out[:], src[:])


def test_copy_v3_sharded_to_v2_and_back():
    src = zarrkit.create_array({}, name="s", shape=(12, 12), dtype="f4", chunks=(3, 3), shards=(6, 6),
                               zarr_format=3, compressors=[{"name": "gzip", "configuration": {"level": 1}}])
    src[:] = np.random.default_rng(1).random((12, 12), dtype="f4")
    v2 = zarrkit.group(zarr_format=2)
    copy(src, v2)
    assert v2["s"].chunks == (3, 3) and v2["s"].compressor == numcodecs.GZip(level=1)
    np.testing.assert_array_equal(v2["s"][:], src[:])
    v3 = zarrkit.group(zarr_format=3)
    copy(v2["s"], v3)
    np.testing.assert_array_equal(v3["s"][:], src[:])


@pytest.mark.parametrize("dst_format", [2, 3])
def test_copy_strings_filters_order_and_no_fill(dst_format):
    root = zarrkit.group(zarr_format=2)
    s = root.array("s", np.array(["a", "bb", "", "dddd"], dtype=object), chunks=3,
                   object_codec=numcodecs.VLenUTF8())
    d = root.array("d", np.arange(50, dtype="i8"), chunks=10, filters=[numcodecs.Delta(dtype="i8")])
    f = root.array("f", np.arange(12.0).reshape(3, 4), chunks=(2, 2), order="F")
    n = root.empty("n", shape=(6,), chunks=3, dtype="f4", fill_value=None)
    n[:3] = 1
    dest = zarrkit.group(zarr_format=dst_format)
    copy_all(root, dest)
    for name, a in (("s", s), ("d", d), ("f", f)):
        np.testing.assert_array_equal(dest[name][:], a[:])
    np.testing.assert_array_equal(dest["n"][:3], n[:3])


def test_copy_all():
    _, root = _source()
    dest = zarrkit.group(zarr_format=3)
    log = []
    c, s, _ = copy_all(root, dest, log=log.append)
    assert (c, s) == (4, 0)
    assert sorted(dest) == ["foo", "spam"] and dest.attrs["title"] == "source"
    assert log[-1].startswith("all done: 4 copied")
    assert copy_all(root, dest, if_exists="skip")[:2] == (1, 3)
    with pytest.raises(CopyError):
        copy_all(root, dest)
    dry = zarrkit.group()
    assert copy_all(root, dry, dry_run=True) == (4, 0, 0)
    assert len(dry) == 0 and "title" not in dry.attrs


def test_copy_between_directory_stores_and_zip(tmp_path):
    _, root = _source()
    with zarrkit.ZipStore(tmp_path / "c.zip", mode="w") as zs, warnings.catch_warnings():
        warnings.simplefilter("error")  # each key is written once: no duplicate zip members
        copy(root["foo"], zarrkit.group(zs, zarr_format=3))
    with zarrkit.ZipStore(tmp_path / "c.zip", mode="r") as zs:
        out = zarrkit.open_group(zs, mode="r")
        np.testing.assert_array_equal(out["foo/bar"][:], root["foo/bar"][:])
        assert out["foo/bar"].attrs["units"] == "m" and out["foo"].attrs["level"] == 1


def test_copy_streams_with_bounded_memory(tmp_path):
    """A 64 MiB array in 1 MiB chunks is copied without ever holding the whole array."""
    mib = 2**20
    n = 64 * mib // 8
    src = zarrkit.open_array(tmp_path / "src.zarr", mode="w", shape=(n,), chunks=(mib // 8,), dtype="f8",
                             compressor=None, zarr_format=2)
    for i in range(64):  # written chunk by chunk, too
        src[i * (mib // 8) : (i + 1) * (mib // 8)] = np.arange(mib // 8, dtype="f8") + i
    dest = zarrkit.open_group(tmp_path / "dst.zarr", mode="w", zarr_format=3)
    with zarrkit.config.set(threads=4):
        tracemalloc.start()
        try:
            copy(src, dest, name="copy", compressor=None)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    print(f"peak {peak / mib:.1f} MiB")
    assert peak < 16 * mib, f"peak {peak / mib:.1f} MiB"
    out = dest["copy"]
    assert out.nchunks_initialized == 64
    for i in (0, 31, 63):
        np.testing.assert_array_equal(out.blocks[i], np.arange(mib // 8, dtype="f8") + i)
