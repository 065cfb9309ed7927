"""zarrkit and xarray, both directions, against xarray + zarr-python as the oracle.

* stores written by ``Dataset.to_zarr`` (zarr-python, v2 and v3, consolidated or not, groups,
  appends, region writes) read through ``engine="zarrkit"`` identical to ``engine="zarr"``;
* stores written by :func:`zarrkit.xarray.to_zarr` read by ``xr.open_zarr`` (zarr-python)
  identical to the dataset written;
* reads are lazy: opening reads metadata (and the index coordinates xarray loads), a selection
  reads just the chunks it touches.
"""

from __future__ import annotations

import json
import os
import warnings

import numpy as np
import pandas as pd
import pytest

xr = pytest.importorskip("xarray")
pytest.importorskip("zarr")
pytest.importorskip("dask.array")

import zarrkit
import zarrkit.xarray as zx
from zarrkit.storage import CountingStore, DirectoryStore

pytestmark = [
    pytest.mark.filterwarnings("ignore:.*[Cc]onsolidated metadata.*"),
    pytest.mark.filterwarnings("ignore::UserWarning:zarr"),
    pytest.mark.filterwarnings("ignore:.*does not have a Zarr V3 specification.*"),
    pytest.mark.filterwarnings("ignore:.*not part in the Zarr format 3 specification.*"),
]

FORMATS = [2, 3]
PACKED = {"dtype": "i2", "scale_factor": 0.01, "add_offset": 1.0, "_FillValue": -999}
META_NAMES = {".zarray", ".zgroup", ".zattrs", ".zmetadata", "zarr.json"}


def make_dataset(ntime: int = 10, start: str = "2000-01-01") -> xr.Dataset:
    rng = np.random.default_rng(0)
    time = pd.date_range(start, periods=ntime, freq="D")
    temp = rng.random((ntime, 6)).astype("f4")
    temp[0, 0] = np.nan
    packed = np.round(np.linspace(0, 10, ntime * 6).reshape(ntime, 6), 2)
    packed[1, 1] = np.nan
    ds = xr.Dataset(
        {
            "temp": (("time", "x"), temp, {"units": "K", "long_name": "temperature"}),
            "packed": (("time", "x"), packed),
            "counts": (("x",), np.arange(6, dtype="i2")),
            "flag": (("x",), np.array([True, False] * 3)),
            "label": (("x",), np.array(["a", "bb", "c", "d", "e", "f"])),
        },
        coords={"time": time, "x": np.arange(6) * 10.0, "lat": (("x",), np.linspace(-5, 5, 6))},
        attrs={"title": "test", "history": "made in a test", "version": 3},
    )
    ds["packed"].encoding = dict(PACKED)
    ds["time"].encoding = {"units": "days since 2000-01-01", "dtype": "i8"}
    return ds


def open_both(path, **kwargs):
    a = xr.open_dataset(path, engine="zarr", **kwargs)
    b = xr.open_dataset(path, engine="zarrkit", **kwargs)
    return a, b


def assert_encoding_matches(a, b):
    """The CF encoding both engines report is the same (zarr-python codec objects aside)."""
    for name in a.variables:
        ea, eb = a[name].encoding, b[name].encoding
        for key in ("dtype", "units", "calendar", "scale_factor", "add_offset", "_FillValue",
                    "chunks", "preferred_chunks", "fill_value"):
            assert (key in ea) == (key in eb), (name, key, ea, eb)
            if key in ea:
                va, vb = ea[key], eb[key]
                if isinstance(va, (float, np.floating)) and np.isnan(va):
                    assert np.isnan(vb), (name, key)
                else:
                    assert va == vb, (name, key, va, vb)


# -- reading what xarray + zarr-python wrote -----------------------------------------------------
@pytest.mark.parametrize("zarr_format", FORMATS)
@pytest.mark.parametrize("consolidated", [True, False])
def test_read_xarray_written(tmp_path, zarr_format, consolidated):
    ds = make_dataset()
    path = str(tmp_path / "data.zarr")
    ds.chunk({"time": 4}).to_zarr(path, zarr_format=zarr_format, consolidated=consolidated)
    a, b = open_both(path, consolidated=consolidated)
    xr.testing.assert_identical(a, b)
    assert_encoding_matches(a, b)
    assert b.time.dtype.kind == "M" and b.time.encoding["units"] == "days since 2000-01-01"
    np.testing.assert_array_equal(b.time.values, ds.time.values)
    np.testing.assert_allclose(b.packed.values, ds.packed.values, atol=0.006)
    assert np.isnan(b.packed.values[1, 1]) and np.isnan(b.temp.values[0, 0])
    assert b.packed.encoding["scale_factor"] == 0.01 and b.packed.encoding["dtype"] == np.dtype("i2")
    assert b.flag.dtype == bool and b.label.values.tolist() == ds.label.values.tolist()
    # the undecoded view is identical as well
    a2, b2 = open_both(path, consolidated=consolidated, decode_times=False, mask_and_scale=False)
    xr.testing.assert_identical(a2, b2)
    assert b2.packed.dtype == np.dtype("i2") and b2.time.dtype == np.dtype("i8")


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_consolidated_none_and_true(tmp_path, zarr_format):
    ds = make_dataset()
    path = str(tmp_path / "data.zarr")
    ds.to_zarr(path, zarr_format=zarr_format, consolidated=False)
    b = xr.open_dataset(path, engine="zarrkit")  # falls back to the hierarchy
    xr.testing.assert_identical(xr.open_dataset(path, engine="zarr", consolidated=False), b)
    with pytest.raises(zarrkit.errors.MetadataError):
        xr.open_dataset(path, engine="zarrkit", consolidated=True)
    zarrkit.consolidate_metadata(path)
    xr.testing.assert_identical(b, xr.open_dataset(path, engine="zarrkit", consolidated=True))


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_chunks_aligned_to_zarr_chunks(tmp_path, zarr_format):
    ds = make_dataset()
    path = str(tmp_path / "data.zarr")
    ds.chunk({"time": 4, "x": 3}).to_zarr(path, zarr_format=zarr_format)
    b = xr.open_dataset(path, engine="zarrkit", chunks={})
    assert b.temp.chunks == ((4, 4, 2), (3, 3))
    assert b.temp.encoding["preferred_chunks"] == {"time": 4, "x": 3}
    assert b.temp.encoding["chunks"] == (4, 3)
    a = xr.open_dataset(path, engine="zarr", chunks={})
    assert a.temp.chunks == b.temp.chunks
    xr.testing.assert_identical(a.compute(), b.compute())
    assert float(b.temp.mean().compute()) == pytest.approx(float(np.nanmean(ds.temp.values)))
    c = zx.open_dataset(path, chunks={"time": 8})  # multiples of the Zarr chunks work too
    assert c.temp.chunks[0] == (8, 2)
    b = xr.open_dataset(path, engine="zarrkit", chunks=None)
    assert b.temp.chunks is None


@pytest.mark.parametrize("zarr_format", FORMATS)
@pytest.mark.parametrize("consolidated", [True, False])
def test_lazy_no_data_read_at_open(tmp_path, zarr_format, consolidated):
    ds = make_dataset()
    path = str(tmp_path / "data.zarr")
    ds.chunk({"time": 4, "x": 3}).to_zarr(path, zarr_format=zarr_format, consolidated=consolidated)
    store = CountingStore(DirectoryStore(path))
    b = xr.open_dataset(store, engine="zarrkit", consolidated=consolidated)

    def chunk_keys(var):
        return sorted(
            k for k, _ in store.keys_read
            if k.split("/")[0] == var and k.rsplit("/", 1)[-1] not in META_NAMES
        )

    # opening reads metadata; of the data only the index coordinates xarray itself loads
    for var in ("temp", "packed", "counts", "flag", "label", "lat"):
        assert chunk_keys(var) == [], var
    store.reset()
    sub = b.temp.isel(time=slice(0, 2), x=slice(0, 2)).values  # basic: one chunk
    np.testing.assert_array_equal(sub, ds.temp.values[:2, :2])
    assert len(chunk_keys("temp")) == 1
    store.reset()
    sub = b.temp.isel(time=[0, 9], x=[1, 4]).values  # outer: 2 x 2 chunks
    np.testing.assert_array_equal(sub, ds.temp.values[np.ix_([0, 9], [1, 4])])
    assert len(chunk_keys("temp")) == 4
    assert chunk_keys("packed") == []
    store.reset()
    # vectorized indexing is decomposed by xarray into an outer read + numpy
    pts = b.temp.isel(time=xr.DataArray([0, 5, 9], dims="p"), x=xr.DataArray([1, 4, 5], dims="p")).values
    np.testing.assert_array_equal(pts, ds.temp.values[[0, 5, 9], [1, 4, 5]])
    # a negative-step slice and an integer index
    np.testing.assert_array_equal(b.temp[::-3, 2].values, ds.temp.values[::-3, 2])
    np.testing.assert_array_equal(b.counts[3].values, ds.counts.values[3])


def load_json(*parts):
    with open(os.path.join(*parts)) as f:
        return json.load(f)


def _write_tree(path, zarr_format):
    ds = make_dataset()
    root = xr.Dataset(attrs={"root": "yes"})
    root.to_zarr(path, zarr_format=zarr_format, mode="w", consolidated=False)
    ds.to_zarr(path, group="a", zarr_format=zarr_format, mode="a", consolidated=False)
    inner = xr.Dataset({"z": (("y",), np.arange(3.0))}, coords={"y": [1, 2, 3]}, attrs={"inner": 1})
    inner.to_zarr(path, group="a/b", zarr_format=zarr_format, mode="a", consolidated=False)
    return ds, inner


@pytest.mark.parametrize("zarr_format", FORMATS)
@pytest.mark.parametrize("consolidated", [True, False])
def test_groups_and_datatree(tmp_path, zarr_format, consolidated):
    path = str(tmp_path / "tree.zarr")
    _, inner = _write_tree(path, zarr_format)
    if consolidated:
        import zarr

        zarr.consolidate_metadata(path, zarr_format=zarr_format)
    for group in ("a", "a/b", "/a/b"):
        a = xr.open_dataset(path, engine="zarr", group=group, consolidated=consolidated)
        b = xr.open_dataset(path, engine="zarrkit", group=group, consolidated=consolidated)
        xr.testing.assert_identical(a, b)
    xr.testing.assert_identical(xr.open_dataset(path, engine="zarrkit", group="a/b"), inner)
    ta = xr.open_datatree(path, engine="zarr", consolidated=consolidated)
    tb = xr.open_datatree(path, engine="zarrkit", consolidated=consolidated)
    xr.testing.assert_identical(ta, tb)
    assert set(tb.groups) == {"/", "/a", "/a/b"}
    assert tb.attrs == {"root": "yes"}
    sub = xr.open_datatree(path, engine="zarrkit", group="a")
    assert set(sub.groups) == {"/", "/b"}


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_read_xarray_appended(tmp_path, zarr_format):
    ds = make_dataset()
    path = str(tmp_path / "data.zarr")
    ds.isel(time=slice(0, 4)).to_zarr(path, zarr_format=zarr_format)
    ds.isel(time=slice(4, 7)).to_zarr(path, append_dim="time")
    ds.isel(time=slice(7, None)).to_zarr(path, append_dim="time")
    a, b = open_both(path)
    xr.testing.assert_identical(a, b)
    assert b.sizes["time"] == 10
    np.testing.assert_array_equal(b.time.values, ds.time.values)


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_read_xarray_region_writes(tmp_path, zarr_format):
    ds = make_dataset()
    path = str(tmp_path / "data.zarr")
    ds.chunk({"time": 5}).to_zarr(path, zarr_format=zarr_format, compute=False)  # metadata only
    ds.isel(time=slice(0, 5)).drop_vars(["x", "counts", "flag", "label", "lat"]).to_zarr(
        path, region={"time": slice(0, 5)}
    )
    a, b = open_both(path)
    # 'label' (never written, v2 fill_value null) is checked in test_unwritten_v2_string_chunks
    xr.testing.assert_identical(a.drop_vars("label"), b.drop_vars("label"))
    assert np.isnan(b.temp.values[5:]).all()
    np.testing.assert_array_equal(b.temp.values[1:5], ds.temp.values[1:5])


# -- zarrkit writes, xarray + zarr-python reads ---------------------------------------------------
def _reference(ds, tmp_path, zarr_format):
    """What xarray itself makes of ``ds`` after a round trip through zarr-python."""
    path = str(tmp_path / f"ref{zarr_format}.zarr")
    ds.to_zarr(path, zarr_format=zarr_format, mode="w")
    return xr.open_zarr(path).load()


@pytest.mark.parametrize("zarr_format", FORMATS)
@pytest.mark.parametrize("consolidated", [True, False])
def test_writer_read_by_xarray(tmp_path, zarr_format, consolidated):
    ds = make_dataset()
    path = str(tmp_path / "zk.zarr")
    grp = zx.to_zarr(ds, path, zarr_format=zarr_format, consolidated=consolidated)
    assert isinstance(grp, zarrkit.Group) and grp.zarr_format == zarr_format
    got = xr.open_zarr(path, consolidated=consolidated).load()
    ref = _reference(ds, tmp_path, zarr_format)
    xr.testing.assert_identical(ref, got)
    assert_encoding_matches(ref, got)
    # and zarrkit reads its own output identically
    xr.testing.assert_identical(ref, xr.open_dataset(path, engine="zarrkit").load())
    # the layout of xarray's convention
    if zarr_format == 2:
        zattrs = load_json(path, "temp", ".zattrs")
        assert zattrs["_ARRAY_DIMENSIONS"] == ["time", "x"]
        assert load_json(path, "packed", ".zarray")["fill_value"] == -999
        assert os.path.exists(os.path.join(path, ".zmetadata")) == consolidated
    else:
        meta = load_json(path, "temp", "zarr.json")
        assert meta["dimension_names"] == ["time", "x"] and "_ARRAY_DIMENSIONS" not in meta["attributes"]
        root = load_json(path, "zarr.json")
        assert ("consolidated_metadata" in root) == consolidated
    with pytest.raises(zarrkit.errors.ContainsGroupError):
        zx.to_zarr(ds, path)  # mode 'w-' is the default
    zx.to_zarr(ds.isel(time=slice(0, 3)), path, mode="w")
    assert xr.open_zarr(path).sizes["time"] == 3


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_writer_dask_and_encoding(tmp_path, zarr_format):
    ds = make_dataset().chunk({"time": 5, "x": 3})
    path = str(tmp_path / "zk.zarr")
    zx.to_zarr(ds, path, zarr_format=zarr_format, encoding={"counts": {"chunks": (3,)}})
    g = zarrkit.open_group(path, mode="r")
    assert g["temp"].chunks == (5, 3) and g["counts"].chunks == (3,)
    got = xr.open_zarr(path)
    assert got.temp.chunks == ((5, 5), (3, 3))
    xr.testing.assert_identical(_reference(make_dataset(), tmp_path, zarr_format), got.load())
    # dask blocks that would share a Zarr chunk are regrouped along the Zarr chunks (xarray
    # refuses them unless align_chunks=True): the store is the same
    unaligned = make_dataset().chunk({"time": 3})
    zx.to_zarr(unaligned, str(tmp_path / "un.zarr"), zarr_format=zarr_format, encoding={"temp": {"chunks": (5, 6)}})
    xr.testing.assert_identical(_reference(make_dataset(), tmp_path, zarr_format), xr.open_zarr(str(tmp_path / "un.zarr")).load())
    with pytest.raises(ValueError, match="unexpected encoding"):
        zx.to_zarr(make_dataset(), str(tmp_path / "bad2.zarr"), encoding={"temp": {"bogus": 1}})


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_writer_groups(tmp_path, zarr_format):
    path = str(tmp_path / "tree.zarr")
    ds = make_dataset()
    inner = xr.Dataset({"z": (("y",), np.arange(3.0))}, coords={"y": [1, 2, 3]})
    zx.to_zarr(ds, path, group="a", zarr_format=zarr_format)
    zx.to_zarr(inner, path, group="a/b", mode="a")
    got = xr.open_zarr(path, group="a/b").load()
    xr.testing.assert_identical(inner, got)
    tree = xr.open_datatree(path, engine="zarr")
    assert set(tree.groups) == {"/", "/a", "/a/b"}
    xr.testing.assert_identical(tree, xr.open_datatree(path, engine="zarrkit"))


@pytest.mark.parametrize("zarr_format", FORMATS)
@pytest.mark.parametrize("chunked", [False, True])
def test_writer_append(tmp_path, zarr_format, chunked):
    ds = make_dataset()
    if chunked:
        ds = ds.chunk({"time": 2})
    path = str(tmp_path / "zk.zarr")
    zx.to_zarr(ds.isel(time=slice(0, 4)), path, zarr_format=zarr_format,
               encoding={"temp": {"chunks": (2, 6)}, "packed": {**PACKED, "chunks": (2, 6)}})
    zx.to_zarr(ds.isel(time=slice(4, 6)), path, append_dim="time")
    zx.to_zarr(ds.isel(time=slice(6, None)), path, append_dim="time", mode="a")
    got = xr.open_zarr(path).load()
    ref = _reference(make_dataset(), tmp_path, zarr_format)
    xr.testing.assert_identical(ref, got)
    # appended times use the stored units, packed values the stored scale factor
    assert got.time.encoding["units"] == "days since 2000-01-01"
    raw = xr.open_zarr(path, decode_times=False, mask_and_scale=False)
    np.testing.assert_array_equal(raw.time.values, np.arange(10))
    assert raw.packed.dtype == np.dtype("i2")
    with pytest.raises(ValueError, match="append_dim"):
        zx.to_zarr(ds.isel(time=slice(0, 1)), path, append_dim="nope")


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_cross_appends(tmp_path, zarr_format):
    """zarrkit appends to what xarray wrote, and xarray appends to what zarrkit wrote."""
    ds = make_dataset()
    p1 = str(tmp_path / "x_then_zk.zarr")
    ds.isel(time=slice(0, 5)).to_zarr(p1, zarr_format=zarr_format)
    zx.to_zarr(ds.isel(time=slice(5, None)), p1, append_dim="time")
    p2 = str(tmp_path / "zk_then_x.zarr")
    zx.to_zarr(ds.isel(time=slice(0, 5)), p2, zarr_format=zarr_format)
    ds.isel(time=slice(5, None)).to_zarr(p2, append_dim="time")
    ref = _reference(ds, tmp_path, zarr_format)
    for p in (p1, p2):
        for engine in ("zarr", "zarrkit"):
            xr.testing.assert_identical(ref, xr.open_dataset(p, engine=engine).load())


@pytest.mark.parametrize("zarr_format", FORMATS)
@pytest.mark.parametrize("chunked", [False, True])
def test_writer_region(tmp_path, zarr_format, chunked):
    ds = make_dataset()
    path = str(tmp_path / "zk.zarr")
    # a template: all metadata, fill values only
    template = ds.copy()
    template["temp"] = xr.full_like(ds.temp, np.nan)
    template["packed"] = xr.full_like(ds.packed, np.nan)
    zx.to_zarr(template, path, zarr_format=zarr_format,
               encoding={"temp": {"chunks": (5, 6)}, "packed": {**PACKED, "chunks": (5, 6)}})
    part = ds[["temp", "packed"]].drop_vars(["x", "lat"])
    if chunked:
        part = part.chunk({"time": 5})
    zx.to_zarr(part.isel(time=slice(5, 10)), path, region={"time": slice(5, 10)})
    zx.to_zarr(part.isel(time=slice(0, 5)), path, region={"time": slice(0, 5)}, mode="a")
    got = xr.open_zarr(path).load()
    xr.testing.assert_identical(_reference(ds, tmp_path, zarr_format), got)
    # region='auto' finds the slice from the stored (CF-encoded) time coordinate
    shifted = part.isel(time=slice(2, 7)) + 1
    shifted = shifted.assign_coords(time=ds.time[2:7])
    zx.to_zarr(shifted, path, region="auto")
    got = xr.open_dataset(path, engine="zarrkit")
    np.testing.assert_allclose(got.temp.values[2:7], ds.temp.values[2:7] + 1)
    np.testing.assert_array_equal(got.temp.values[7:], ds.temp.values[7:])
    with pytest.raises(KeyError, match="were found"):
        zx.to_zarr(shifted.assign_coords(time=shifted.time + np.timedelta64(30, "D")), path, region="auto")
    with pytest.raises(ValueError, match="at least one dimension in common"):
        zx.to_zarr(ds.isel(time=slice(0, 2)), path, region={"time": slice(0, 2)})
    with pytest.raises(ValueError, match="non-pre-existing"):
        zx.to_zarr(part.rename(temp="other").isel(time=slice(0, 2)), path, region={"time": slice(0, 2)})
    # xarray's region writes into a zarrkit-written store
    xr.Dataset({"temp": (("time", "x"), np.zeros((5, 6), "f4"))}).to_zarr(path, region={"time": slice(0, 5)})
    assert float(xr.open_dataset(path, engine="zarrkit").temp[:5].sum()) == 0.0


def test_open_dataset_wrapper_and_stores(tmp_path):
    ds = make_dataset()
    store = zarrkit.MemoryStore()
    zx.to_zarr(ds, store, zarr_format=3)
    got = zx.open_dataset(store)
    assert isinstance(got, xr.Dataset)
    xr.testing.assert_identical(_reference(ds, tmp_path, 3), got.load())
    # a zarrkit Group is accepted, and the engine is guessed for zarrkit objects
    g = zarrkit.open_group(store, mode="r")
    xr.testing.assert_identical(got, xr.open_dataset(g).load())
    tree = zx.open_datatree(store)
    assert set(tree.groups) == {"/"}
    # DataArrays are written under their name
    mem = {}
    zx.to_zarr(ds.temp, mem, zarr_format=2)
    xr.testing.assert_identical(ds.temp, xr.open_dataset(mem, engine="zarrkit").temp)


def test_missing_dimension_names_error(tmp_path):
    g = zarrkit.open_group(str(tmp_path / "raw.zarr"), mode="w", zarr_format=2)
    g.zeros("a", shape=(3,), chunks=(3,))
    with pytest.raises(KeyError, match="_ARRAY_DIMENSIONS"):
        xr.open_dataset(str(tmp_path / "raw.zarr"), engine="zarrkit")
    with pytest.raises(FileNotFoundError):
        xr.open_dataset(str(tmp_path / "missing.zarr"), engine="zarrkit")
    assert not (tmp_path / "missing.zarr").exists()
    with pytest.raises(KeyError):
        xr.open_dataset(str(tmp_path / "raw.zarr"), engine="zarrkit", group="nope")


def test_no_spurious_warnings(tmp_path):
    ds = make_dataset()
    path = str(tmp_path / "zk.zarr")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        zx.to_zarr(ds, path, zarr_format=2)
        xr.open_dataset(path, engine="zarrkit").load()


def test_unwritten_v2_string_chunks(tmp_path):
    path = str(tmp_path / "u.zarr")
    ds = xr.Dataset({"label": (("x",), np.array(["a", "bb"]))})
    ds.chunk().to_zarr(path, zarr_format=2, compute=False)  # metadata only: fill_value null
    a, b = open_both(path)
    xr.testing.assert_identical(a, b)
    # the zarrkit-only repro
    z = zarrkit.empty((2,), chunks=(2,), dtype="<U2", zarr_format=2)
    assert z[:].tolist() == ["", ""]
    assert zarrkit.empty((2,), chunks=(2,), dtype="S2", zarr_format=2)[:].tolist() == [b"", b""]
