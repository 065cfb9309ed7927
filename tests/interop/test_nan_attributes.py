"""NaN and the infinities in attributes, as zarr-python 2 and 3 store them: bare ``NaN``,
``Infinity`` and ``-Infinity`` JSON tokens, in v2's ``.zattrs`` and in v3's ``zarr.json``
(zarr-python 3.4 writes both so).  zarrkit reads what zarr-python writes and writes what it
reads, a node holding a NaN attribute takes further attribute writes, numpy scalars are
stored as the numbers they are (zarr-python 2's encoder), and an attribute that cannot be
stored is named, before anything is written (``to_zarr`` of a CF dataset included)."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest

import zarrkit

zarr = pytest.importorskip("zarr")

NONFINITE = {"nan": math.nan, "inf": math.inf, "ninf": -math.inf, "lst": [1.0, math.nan], "s": "NaN"}


def _same(got: dict, want: dict) -> None:
    assert set(got) >= set(want)
    for k, v in want.items():
        if isinstance(v, list):
            assert len(got[k]) == len(v) and all(a == b or (math.isnan(a) and math.isnan(b)) for a, b in zip(got[k], v))
        elif isinstance(v, float) and math.isnan(v):
            assert isinstance(got[k], float) and math.isnan(got[k]), (k, got[k])
        else:
            assert got[k] == v, (k, got[k])


def _attrs_text(path: str, fmt: int, name: str = "a") -> str:
    with open(os.path.join(path, name, ".zattrs" if fmt == 2 else "zarr.json")) as f:
        return f.read()


@pytest.mark.parametrize("fmt", [2, 3])
def test_zarrkit_reads_and_extends_nan_attributes_zarr_python_wrote(tmp_path, fmt):
    path = str(tmp_path / "z.zarr")
    g = zarr.open_group(path, mode="w", zarr_format=fmt)
    g.create_array("a", shape=(2,), dtype="f4").attrs.update(NONFINITE)
    g.attrs["nan"] = math.nan
    a = zarrkit.open_array(path, path="a", mode="r+")
    _same(dict(a.attrs), NONFINITE)
    a.attrs["units"] = "K"  # a node holding NaN takes more attributes
    _same(dict(zarrkit.open_group(path, mode="r").attrs), {"nan": math.nan})
    _same(dict(zarr.open_array(path, path="a", mode="r").attrs), {**NONFINITE, "units": "K"})


@pytest.mark.parametrize("fmt", [2, 3])
def test_zarr_python_reads_nan_attributes_zarrkit_wrote(tmp_path, fmt):
    path = str(tmp_path / "k.zarr")
    g = zarrkit.open_group(path, mode="w", zarr_format=fmt)
    g.zeros("a", shape=(2,), dtype="f4").attrs.update(NONFINITE)
    g.attrs["inf"] = math.inf
    text = _attrs_text(path, fmt)
    assert '"nan": NaN' in text and '"inf": Infinity' in text and '"ninf": -Infinity' in text
    _same(dict(zarr.open_array(path, path="a", mode="r").attrs), NONFINITE)
    _same(dict(zarr.open_group(path, mode="r").attrs), {"inf": math.inf})
    zarrkit.consolidate_metadata(path)
    _same(dict(zarr.open_consolidated(path, mode="r")["a"].attrs), NONFINITE)
    # created with the attributes in one go, too
    zarrkit.create_array(store=path, name="b", shape=(2,), dtype="i1", zarr_format=fmt, attributes=NONFINITE)
    _same(dict(zarr.open_array(path, path="b", mode="r").attrs), NONFINITE)


@pytest.mark.parametrize("fmt", [2, 3])
def test_numpy_scalars_are_stored_as_numbers(fmt):
    a = zarrkit.zeros(3, store={}, zarr_format=fmt)
    a.attrs["s"] = np.float32(1.5)
    a.attrs.update(i=np.int64(3), b=np.bool_(True), n=np.float32("nan"), nested={"x": [np.int8(1)]})
    got = zarrkit.open_array(a.store, mode="r").attrs.asdict()
    assert got["s"] == 1.5 and type(got["s"]) is float and got["i"] == 3 and type(got["i"]) is int
    assert got["b"] is True and math.isnan(got["n"]) and got["nested"] == {"x": [1]}
    cached = zarrkit.open_array(a.store, mode="r+", cache_attrs=True)
    cached.attrs["t"] = np.int16(2)
    assert type(cached.attrs["t"]) is int


@pytest.mark.parametrize("fmt", [2, 3])
def test_an_unstorable_attribute_is_named_and_nothing_is_written(fmt):
    a = zarrkit.zeros(3, store={}, zarr_format=fmt)
    a.attrs["ok"] = 1
    before = dict(a.store)
    with pytest.raises(TypeError, match=r"attribute 's' cannot be stored.*got object"):
        a.attrs["s"] = object()
    with pytest.raises(TypeError, match=r"attribute 'z' cannot be stored.*got complex"):
        a.attrs.update(y=1, z=1j)
    assert dict(a.store) == before
    store: dict = {}
    with pytest.raises(TypeError, match="attribute 'x' cannot be stored"):
        zarrkit.create_array(store=store, shape=(2,), dtype="i1", zarr_format=fmt, attributes={"x": {1, 2}})
    with pytest.raises(TypeError, match="attribute 'x' cannot be stored"):
        zarrkit.group(store=store, zarr_format=fmt).attrs["x"] = {1, 2}


xr = pytest.importorskip("xarray")


@pytest.mark.parametrize("fmt", [2, 3])
def test_a_cf_dataset_with_missing_value_nan_round_trips(tmp_path, fmt):
    import zarrkit.xarray as zx

    ds = xr.Dataset({"t": ("x", np.arange(3.0), {"missing_value": np.nan, "units": "K"})},
                    attrs={"valid_max": np.inf})
    path = str(tmp_path / "cf.zarr")
    zx.to_zarr(ds, path, zarr_format=fmt, mode="w")
    for engine in ("zarrkit", "zarr"):
        back = xr.open_dataset(path, engine=engine, mask_and_scale=False)
        assert math.isnan(back.t.attrs["missing_value"]) and back.t.attrs["units"] == "K"
        assert back.attrs["valid_max"] == math.inf


def test_to_zarr_refuses_an_unstorable_attribute_before_writing(tmp_path):
    import zarrkit.xarray as zx

    ds = xr.Dataset({"t": ("x", np.arange(3.0), {"units": "K", "bad": object()})})
    path = tmp_path / "bad.zarr"
    with pytest.raises(TypeError, match=r"variable 't': attribute 'bad' cannot be stored"):
        zx.to_zarr(ds, str(path), mode="w")
    assert not path.exists()
    store: dict = {}
    with pytest.raises(TypeError, match=r"the dataset: attribute 'bad'"):
        zx.to_zarr(xr.Dataset(attrs={"bad": object()}), store, mode="w")
    assert store == {}


def test_the_nan_tokens_are_zarr_pythons(tmp_path):
    path = str(tmp_path / "p.zarr")
    zarr.open_group(path, mode="w", zarr_format=3).attrs["n"] = math.nan
    doc = os.path.join(path, "zarr.json")
    with open(doc) as f:
        theirs = json.load(f)["attributes"]
    zarrkit.open_group(path, mode="r+").attrs["n"] = math.nan
    with open(doc) as f:
        assert '"n": NaN' in f.read()
    assert math.isnan(theirs["n"])
