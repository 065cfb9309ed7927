"""Values that are not text written into a string array: a typed error before any chunk is
stored, never a silent ``'None'``/``'1'`` in place of the caller's value, never a broken
exception from NumPy's decoding."""

from __future__ import annotations

import numpy as np
import pytest

import zarrkit
from zarrkit.storage import MemoryStore


def _snapshot(store):
    return {k: bytes(store[k]) for k in store}


@pytest.fixture
def strings():
    store = MemoryStore()
    arr = zarrkit.create_array(store=store, name="x", shape=(4,), chunks=(2,), dtype=str)
    arr[:] = ["a", "b", "c", "d"]
    # the test extra's NumPy is 2 or later (zarr-python 3.4 requires it): strings are StringDType
    assert arr.dtype == np.dtypes.StringDType()
    return store, arr


@pytest.mark.parametrize(
    "value",
    [
        np.array(["a", None, "b", "c"], dtype=object),
        np.array(["a", 1, "b", "c"], dtype=object),
        ["w", "x", "y", None],
        None,
        7,
    ],
    ids=["object-None", "object-int", "list-None", "scalar-None", "scalar-int"],
)
def test_non_text_into_string_array_is_a_type_error(strings, value):
    store, arr = strings
    before = _snapshot(store)
    with pytest.raises(TypeError, match="str"):
        arr[:] = value
    assert _snapshot(store) == before
    assert arr[:].tolist() == ["a", "b", "c", "d"]


def test_text_still_stored(strings):
    _, arr = strings
    arr[1:3] = np.array(["é", "zz"])
    arr[0] = np.str_("q")
    assert arr[:].tolist() == ["q", "é", "zz", "d"]


@pytest.mark.parametrize(("dtype", "value"), [("U3", b"\xff"), ("S3", "\u00e9")])
def test_undecodable_value_is_a_value_error(dtype, value):
    store = MemoryStore()
    arr = zarrkit.zeros((3,), dtype=dtype, store=store)
    before = _snapshot(store)
    with pytest.raises(ValueError, match=f"cannot store .* as {np.dtype(dtype)}"):
        arr[0] = value
    assert _snapshot(store) == before
