"""zarr-python 3's keywords of the opening functions."""

from __future__ import annotations

import numpy as np
import pytest

import zarrkit
from zarrkit.api.async_nodes import AsyncGroup, sync
from zarrkit.storage import MemoryStore


def test_open_like_with_a_store_takes_path_as_the_path_in_it():
    store = MemoryStore()
    opened = zarrkit.open_like(np.zeros(4, dtype="i4"), path="inner/x", store=store, zarr_format=3)
    assert opened.path == "inner/x" and store.get("inner/x/zarr.json") is not None


def test_open_like_with_mode_none_creates_as_without_a_mode():
    source = zarrkit.create_array({}, shape=(3, 4), chunks=(3, 4), dtype="u1", fill_value=9)
    store = MemoryStore()
    made = zarrkit.open_like(source, path="x", store=store, mode=None)
    assert (made.shape, made.chunks, made.dtype, made[0, 0]) == ((3, 4), (3, 4), np.dtype("u1"), 9)
    made[0, 0] = 1
    assert zarrkit.open_like(source, path="x", store=store, mode=None)[0, 0] == 1  # 'a': opened again


def test_open_group_writes_the_attributes_of_a_group_it_creates_only():
    store = MemoryStore()
    g = zarrkit.open_group(store, mode="a", attributes={"a": 1})
    assert dict(g.attrs) == {"a": 1}
    again = zarrkit.open_group(store, mode="a", attributes={"b": 2})
    assert dict(again.attrs) == {"a": 1}


def test_a_write_to_an_array_opened_read_only_is_a_value_error_and_a_permission_error():
    store = MemoryStore()
    zarrkit.ones(store=store, shape=(3,))
    readonly = zarrkit.open(store=store, mode="r")
    for expected in (ValueError, PermissionError, zarrkit.errors.ReadOnlyError):
        with pytest.raises(expected):
            readonly[:] = 3
    assert readonly[:].tolist() == [1, 1, 1]


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_empty_like_keeps_a_v3_arrays_fill_value_a_v2_or_numpy_array_gives_none(zarr_format):
    # zarr-python 3 keeps a v3 array's fill value; zarr-python 2's empty copy of a v2 array has none
    a = zarrkit.full(4, fill_value=7, dtype="i4", zarr_format=zarr_format)
    group = zarrkit.group(zarr_format=zarr_format)
    kept = 7 if zarr_format == 3 else None
    assert zarrkit.empty_like(a).fill_value == group.empty_like("x", a).fill_value == kept
    assert zarrkit.empty_like(a, fill_value=1).fill_value == group.empty_like("y", a, fill_value=1).fill_value == 1
    assert zarrkit.empty_like(a, zarr_format=3).fill_value == (7 if zarr_format == 3 else 0)
    assert zarrkit.empty_like(np.zeros(4), zarr_format=2).fill_value is None
    assert group.empty_like("n", np.zeros(4), fill_value=3).fill_value == 3


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_group_of_an_async_group_is_the_group_it_wraps(zarr_format):
    store = MemoryStore()
    wrapped = sync(AsyncGroup.from_store(store=store, zarr_format=zarr_format, attributes={"k": 1}))
    group = zarrkit.Group(wrapped)
    assert group.zarr_format == zarr_format and dict(group.attrs) == {"k": 1}
    assert group._async_group == wrapped
    group.create_group("sub")
    assert "sub" in zarrkit.open_group(store, mode="r")


def test_the_configured_order_applies_to_reads_of_v3_arrays_only():
    store = MemoryStore()
    zarrkit.create_array(store, name="v3", shape=(3, 4), dtype="i4", zarr_format=3)
    zarrkit.create_array(store, name="v2", shape=(3, 4), dtype="i4", zarr_format=2)
    with zarrkit.config.set({"array.order": "F"}):
        v3 = zarrkit.open_array(store, path="v3")
        v2 = zarrkit.open_array(store, path="v2")
    assert v3[:].flags["F_CONTIGUOUS"] and not v3[:].flags["C_CONTIGUOUS"]
    assert v2[:].flags["C_CONTIGUOUS"]
    assert zarrkit.open_array(store, path="v3")[:].flags["C_CONTIGUOUS"]
