"""``copy``/``copy_all`` between h5py files and zarrkit, both ways (zarr-python 2's documented
use: if_exists, dry_run, log)."""

from __future__ import annotations

import io

import numcodecs
import numpy as np
import pytest

import zarrkit
from zarrkit.api.convenience import CopyError, copy, copy_all, tree

h5py = pytest.importorskip("h5py")


@pytest.fixture
def h5(tmp_path):
    """The file of zarr-python 2's ``copy`` docs, plus attributes, strings and a 2-d array."""
    f = h5py.File(tmp_path / "example.h5", mode="w")
    foo = f.create_group("foo")
    foo.attrs["level"] = 1
    baz = foo.create_dataset("bar/baz", data=np.arange(100), chunks=(50,))
    baz.attrs["units"] = "m"
    baz.attrs["scale"] = np.float32(0.5)
    baz.attrs["dims"] = np.array([1, 2, 3])
    f.create_dataset("spam", data=np.arange(100, 200), chunks=(30,))
    f.attrs["title"] = "example"
    yield f
    f.close()


def test_tree_of_an_h5py_file(h5):
    assert str(tree(h5)).splitlines() == [
        "/",
        " ├── foo",
        " │   └── bar",
        " │       └── baz (100,) int64",
        " └── spam (100,) int64",
    ]
    assert str(tree(h5, level=1)) == "/\n ├── foo\n └── spam (100,) int64"


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_copy_from_h5py_documented_example(h5, zarr_format):
    dest = zarrkit.group(zarr_format=zarr_format)
    out = io.StringIO()
    assert copy(h5["foo"], dest, log=out) == (3, 0, 800)
    assert out.getvalue().splitlines() == [
        "copy /foo",
        "copy /foo/bar",
        "copy /foo/bar/baz (100,) int64",
        "all done: 3 copied, 0 skipped, 800 bytes copied",
    ]
    drawn = (
        "/\n └── foo\n     └── bar\n         └── baz (100,) int64" if zarr_format == 2
        else "/\n└── foo\n    └── bar\n        └── baz (100,) int64\n"
    )
    assert str(dest.tree()) == drawn  # no spam
    baz = dest["foo/bar/baz"]
    assert baz.zarr_format == zarr_format and baz.chunks == (50,)
    np.testing.assert_array_equal(baz[:], np.arange(100))
    assert dest["foo"].attrs["level"] == 1
    assert baz.attrs.asdict() == {"units": "m", "scale": 0.5, "dims": [1, 2, 3]}


def test_copy_all_from_h5py(h5):
    dest = zarrkit.group()
    out = io.StringIO()
    assert copy_all(h5, dest, log=out) == (4, 0, 1600)
    assert out.getvalue().splitlines() == [
        "copy /foo",
        "copy /foo/bar",
        "copy /foo/bar/baz (100,) int64",
        "copy /spam (100,) int64",
        "all done: 4 copied, 0 skipped, 1,600 bytes copied",
    ]
    assert dest.attrs["title"] == "example"
    np.testing.assert_array_equal(dest["spam"][:], np.arange(100, 200))
    assert dest["spam"].chunks == (30,)


def test_copy_if_exists_and_dry_run_from_h5py(h5):
    dest = zarrkit.group()
    existing = dest.create_dataset("foo/bar/baz", data=np.zeros(100, dtype="i8"))
    before = {k: dest.store[k] for k in dest.store}
    log = []
    with pytest.raises(CopyError, match="'baz' already exists in destination '/foo/bar'"):
        copy(h5["foo"], dest, dry_run=True, log=log.append)
    assert log == ["copy /foo", "copy /foo/bar"]
    log = []
    assert copy(h5["foo"], dest, dry_run=True, if_exists="replace", log=log.append) == (3, 0, 0)
    assert log[-2:] == ["copy /foo/bar/baz (100,) int64", "dry run: 3 copied, 0 skipped"]
    log = []
    assert copy(h5["foo"], dest, dry_run=True, if_exists="skip", log=log.append) == (2, 1, 0)
    assert log[-2:] == ["skip /foo/bar/baz (100,) int64", "dry run: 2 copied, 1 skipped"]
    assert {k: dest.store[k] for k in dest.store} == before  # dry runs write nothing
    assert copy(h5["foo"], dest, if_exists="skip") == (2, 1, 0)
    np.testing.assert_array_equal(existing[:], 0)
    assert copy(h5["foo"], dest, if_exists="replace") == (3, 0, 800)
    np.testing.assert_array_equal(dest["foo/bar/baz"][:], np.arange(100))
    # skip_initialized: the copy is complete, so skipped
    assert copy(h5["foo"], dest, if_exists="skip_initialized") == (2, 1, 0)


def test_copy_h5py_data_types_and_layouts(tmp_path):
    rng = np.random.default_rng(0)
    structured = np.zeros(4, dtype=[("a", "<i4"), ("b", "<f8")])
    structured["a"] = [1, 2, 3, 4]
    with h5py.File(tmp_path / "types.h5", "w") as f:
        f.create_dataset("f4_gzip", data=rng.random((20, 30), dtype="f4"), chunks=(10, 10),
                         compression="gzip", compression_opts=4, shuffle=True)
        f.create_dataset("contiguous", data=np.arange(12, dtype=">i2").reshape(3, 4))  # no chunks
        f.create_dataset("fill", shape=(10,), dtype="f8", chunks=(5,), fillvalue=np.nan)
        f.create_dataset("scalar", data=3.5)
        f.create_dataset("fixed", data=np.array([b"ab", b"cde"], dtype="S3"))
        f.create_dataset("text", data=["a", "bb", "ccc", "é"], dtype=h5py.string_dtype())
        f.create_dataset("raw", data=[b"x", b"\xff\x01"], dtype=h5py.string_dtype("ascii"))
        f.create_dataset("struct", data=structured)
        f.create_dataset("flags", data=np.array([True, False, True]))
        f.create_dataset("empty", shape=(0, 3), dtype="i4")
        for zarr_format in (2, 3):
            dest = zarrkit.group(zarr_format=zarr_format)
            copy_all(f, dest)
            for name in ("f4_gzip", "contiguous", "scalar", "fixed", "struct", "flags", "empty"):
                np.testing.assert_array_equal(dest[name][...], f[name][...], err_msg=name)
                assert dest[name].shape == f[name].shape, name
            assert dest["f4_gzip"].chunks == (10, 10)
            assert np.isnan(dest["fill"].fill_value) and np.isnan(dest["fill"][:]).all()
            assert list(dest["text"][:]) == ["a", "bb", "ccc", "é"]
            assert list(dest["raw"][:]) == [b"x", b"\xff\x01"]
            assert dest["contiguous"].dtype.newbyteorder("=") == np.dtype("i2")


def test_copy_zarrkit_to_h5py_and_back(tmp_path):
    src = zarrkit.group(zarr_format=3)
    src.attrs["title"] = "round trip"
    src.attrs["nested"] = {"a": [1, 2]}
    a = src.create_dataset("grp/a", data=np.arange(60, dtype="i4").reshape(6, 10), chunks=(3, 5))
    a.attrs["_ARRAY_DIMENSIONS"] = ["y", "x"]
    src.array("grp/s", np.array(["x", "yy", "zzz"], dtype=object), chunks=2, dtype=str)
    src.array("grp/b", np.array([b"x", b"\x01\xff"], dtype=object), chunks=2, dtype=bytes)
    src.full("f", fill_value=-1.5, shape=(7,), chunks=(4,), dtype="f8")
    sh = src.create_dataset("sh", shape=(8, 8), chunks=(2, 2), shards=(4, 4), dtype="u1")
    sh[:] = np.arange(64, dtype="u1").reshape(8, 8)
    with h5py.File(tmp_path / "out.h5", "w") as f:
        log = []
        c, s, _ = copy_all(src, f, log=log.append)
        assert (c, s) == (6, 0)
        assert log[-1].startswith("all done: 6 copied, 0 skipped")
        ds = f["grp/a"]
        assert ds.chunks == (3, 5) and ds.compression == "gzip"
        np.testing.assert_array_equal(ds[...], np.arange(60).reshape(6, 10))
        assert list(ds.attrs["_ARRAY_DIMENSIONS"]) == ["y", "x"]
        assert list(f["grp/s"].asstr()[...]) == ["x", "yy", "zzz"]
        assert list(f["grp/b"][...]) == [b"x", b"\x01\xff"]
        assert f["f"].fillvalue == -1.5
        assert f.attrs["title"] == "round trip"
        assert f.attrs["nested"] == '{"a": [1, 2]}'  # HDF5 has no mappings: their JSON text
        np.testing.assert_array_equal(f["sh"][...], sh[:])
        # an existing object: raise / skip / replace, and a dry run that writes nothing
        with pytest.raises(CopyError):
            copy(src["grp"], f)
        assert copy(src["grp"], f, if_exists="skip")[:2] == (1, 3)
        f["grp/a"][0, 0] = 99
        assert copy(src["grp/a"], f["grp"], if_exists="replace", dry_run=True) == (1, 0, 0)
        assert f["grp/a"][0, 0] == 99
        copy(src["grp/a"], f["grp"], if_exists="replace")
        assert f["grp/a"][0, 0] == 0
        with pytest.raises(ValueError, match="skip_initialized"):
            copy(src["grp/a"], f["grp"], if_exists="skip_initialized")
        # what HDF5 cannot hold is a CopyError naming the array, and leaves nothing behind
        nul = zarrkit.array(np.array([b"a\x00b"], dtype=object), dtype=bytes, store={}, zarr_format=2)
        with pytest.raises(CopyError, match="NUL"):
            copy(nul, f, name="nul")
        assert "nul" not in f
        obj = zarrkit.array(np.array([{"a": 1}], dtype=object), object_codec=numcodecs.JSON(), store={},
                            zarr_format=2)
        with pytest.raises(CopyError, match="no HDF5 equivalent"):
            copy(obj, f, name="obj")
        dt = zarrkit.array(np.arange(3).astype("M8[D]"), store={})
        with pytest.raises(CopyError, match="HDF5"):
            copy(dt, f, name="dt")
        assert "obj" not in f and "dt" not in f
        # and back into zarrkit, both formats
        for zarr_format in (2, 3):
            back = zarrkit.group(zarr_format=zarr_format)
            copy_all(f, back)
            np.testing.assert_array_equal(back["grp/a"][:], a[:])
            assert list(back["grp/s"][:]) == ["x", "yy", "zzz"]
            assert list(back["grp/b"][:]) == [b"x", b"\x01\xff"]
            np.testing.assert_array_equal(back["sh"][:], sh[:])
            assert back["f"].fill_value == -1.5
            assert back.attrs["title"] == "round trip"
            assert back["grp/a"].attrs["_ARRAY_DIMENSIONS"] == ["y", "x"]


def test_copy_h5py_to_h5py_keeps_compression(h5, tmp_path):
    with h5py.File(tmp_path / "copy.h5", "w") as f:
        h5.create_dataset("z", data=np.arange(10.0), chunks=(5,), compression="gzip", compression_opts=7,
                          shuffle=True, fletcher32=True)
        copy(h5["z"], f)
        assert (f["z"].compression, f["z"].compression_opts, f["z"].shuffle, f["z"].fletcher32) == ("gzip", 7, True, True)
        np.testing.assert_array_equal(f["z"][...], np.arange(10.0))


def test_copy_h5py_create_kws(h5):
    dest = zarrkit.group(zarr_format=2)
    copy(h5["spam"], dest, chunks=(25,), compressor=numcodecs.Zstd(level=2))
    assert dest["spam"].chunks == (25,) and dest["spam"].compressor == numcodecs.Zstd(level=2)
    dest3 = zarrkit.group(zarr_format=3)
    copy(h5["spam"], dest3, chunks=(10,), shards=(50,), compressor=zarrkit.codecs.ZstdCodec(level=3))
    assert dest3["spam"].shards == (50,)
    np.testing.assert_array_equal(dest3["spam"][:], np.arange(100, 200))


def test_copy_to_directory_store_from_h5py_file(h5, tmp_path):
    dest = zarrkit.open_group(tmp_path / "out.zarr", mode="w")
    copy_all(h5, dest)
    h5.close()
    back = zarrkit.open_group(tmp_path / "out.zarr", mode="r")
    np.testing.assert_array_equal(back["foo/bar/baz"][:], np.arange(100))
