"""Creation arguments that cross the v2/v3 divide: string fill values, codec objects of the
other format, memory order."""

import json

import numcodecs
import numpy as np
import pytest

import zarrkit
import zarrkit.codecs


# -- default fill values of variable-length arrays -------------------------------------------------
@pytest.mark.parametrize("fn", ["create", "zeros", "empty"])
@pytest.mark.parametrize(
    ("kwargs", "data_type", "fill"),
    [
        ({"dtype": str}, "string", ""),
        ({"dtype": object, "object_codec": numcodecs.VLenUTF8()}, "string", ""),
        ({"dtype": bytes}, "bytes", ""),  # base64 of b""
        ({"dtype": object, "object_codec": numcodecs.VLenBytes()}, "bytes", ""),
    ],
)
def test_v3_vlen_arrays_default_to_the_empty_value(fn, kwargs, data_type, fill):
    # what zarr-python 3.4 writes for dtype=str without a fill value: "" (not 0 or "0")
    store = {}
    z = getattr(zarrkit, fn)(shape=(4,), chunks=(2,), store=store, zarr_format=3, **kwargs)
    doc = json.loads(store["zarr.json"])
    assert doc["data_type"] == data_type
    assert doc["fill_value"] == fill
    empty = "" if data_type == "string" else b""
    assert z.fill_value == empty
    assert list(z[:]) == [empty] * 4


def test_v3_string_fill_values_given_are_kept():
    store = {}
    z = zarrkit.create(shape=(3,), chunks=(2,), dtype=str, fill_value="0", store=store, zarr_format=3)
    assert json.loads(store["zarr.json"])["fill_value"] == "0"
    assert list(z[:]) == ["0", "0", "0"]
    z = zarrkit.full((3,), fill_value="n/a", chunks=(2,), dtype=str, store={}, zarr_format=3)
    assert list(z[:]) == ["n/a"] * 3


def test_v3_string_default_fill_read_by_zarr_python(tmp_path):
    zarr = pytest.importorskip("zarr")
    path = tmp_path / "s.zarr"
    z = zarrkit.create(shape=(4,), chunks=(2,), dtype=str, store=str(path), zarr_format=3)
    z[:2] = ["a", "b"]
    a = zarr.open_array(str(path), mode="r")
    assert a.fill_value == ""
    assert list(a[:]) == ["a", "b", "", ""]
