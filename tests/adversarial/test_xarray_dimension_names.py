"""Dimension names from a store are checked before xarray sees them: malformed
``_ARRAY_DIMENSIONS`` or ``dimension_names`` raise zarrkit's typed
:class:`~zarrkit.errors.DimensionNamesError` (a ``MetadataError``, and a ``KeyError`` as
xarray's own backend raises) naming the array and the attribute; a v3 ``dimension_names``
entry of null is valid and names its dimension ``None``, as xarray over zarr-python does."""

from __future__ import annotations

import json

import numpy as np
import pytest

import zarrkit
from zarrkit.errors import DimensionNamesError, MetadataError

xr = pytest.importorskip("xarray")
zarr = pytest.importorskip("zarr")


def _v2_store(dims: object) -> dict:
    store: dict = {}
    g = zarrkit.open_group(store, mode="w", zarr_format=2)
    g.zeros("temp", shape=(3,), chunks=(3,), dtype="f8")
    store["temp/.zattrs"] = json.dumps({"_ARRAY_DIMENSIONS": dims}).encode()
    return store


@pytest.mark.parametrize("dims", [5, [["a"]], "x", [1], {"x": 1}, ["x", "y"]])
def test_malformed_array_dimensions_raise_a_typed_error_naming_array_and_attribute(dims):
    with pytest.raises(DimensionNamesError) as info:
        xr.open_dataset(_v2_store(dims), engine="zarrkit")
    assert isinstance(info.value, MetadataError) and isinstance(info.value, KeyError)
    assert "'temp'" in str(info.value) and "_ARRAY_DIMENSIONS" in str(info.value)
    assert "expected" in str(info.value)


def test_missing_dimension_names_are_a_typed_key_error():
    store = _v2_store(["x"])
    del store["temp/.zattrs"]
    with pytest.raises(DimensionNamesError, match="_ARRAY_DIMENSIONS"):
        xr.open_dataset(store, engine="zarrkit")


def _v3_store_with(names: list) -> dict:
    store: dict = {}
    g = zarrkit.open_group(store, mode="w", zarr_format=3)
    a = g.create_array("y", shape=(3, 2), chunks=(3, 2), dtype="f8", dimension_names=["p", "q"])
    a[:] = np.arange(6.0).reshape(3, 2)
    doc = json.loads(store["y/zarr.json"])
    doc["dimension_names"] = names
    store["y/zarr.json"] = json.dumps(doc).encode()
    return store


def test_a_null_v3_dimension_name_is_named_as_xarray_over_zarr_python_names_it(tmp_path):
    path = str(tmp_path / "n.zarr")
    g = zarr.open_group(path, mode="w", zarr_format=3)
    g.create_array("y", shape=(3, 2), dtype="f8", dimension_names=["p", None])[:] = np.arange(6.0).reshape(3, 2)
    theirs = xr.open_dataset(path, engine="zarr", consolidated=False)
    ours = xr.open_dataset(path, engine="zarrkit")
    assert ours["y"].dims == theirs["y"].dims == ("p", None)
    xr.testing.assert_identical(ours.load(), theirs.load())
    tree = xr.open_datatree(path, engine="zarrkit")
    assert tree["y"].dims == ("p", None)


@pytest.mark.parametrize("names", [[None], ["p", "q", "r"]])
def test_v3_dimension_names_of_the_wrong_length_are_a_typed_error(names):
    with pytest.raises(MetadataError, match="dimension_names"):
        xr.open_dataset(_v3_store_with(names), engine="zarrkit")
