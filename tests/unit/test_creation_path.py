"""The one creation path: arguments of either API generation become one ArraySpec, its
metadata is written once, and the array is made of that metadata object, not read back."""

import numcodecs
import numpy as np
import pytest

import zarrkit
from zarrkit.metadata import io
from zarrkit.metadata.build import build_metadata
from zarrkit.metadata.spec import ArraySpec, classic_spec, zarr3_spec
from zarrkit.storage.memory import MemoryStore


class _CountingStore(MemoryStore):
    """A memory store that records the keys read after the first array document is written."""

    def __init__(self):
        super().__init__()
        self.written = False
        self.read_after = []

    def set(self, key, value):
        super().set(key, value)
        if key in ("a/zarr.json", "a/.zarray"):
            self.written = True

    def get(self, key, *args, **kwargs):
        if self.written:
            self.read_after.append(key)
        return super().get(key, *args, **kwargs)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_the_new_array_is_made_of_the_metadata_written(zarr_format):
    store = _CountingStore()
    z = zarrkit.create_array(store, name="a", shape=(4,), chunks=(2,), dtype="i4", zarr_format=zarr_format)
    assert not [k for k in store.read_after if k.endswith(("zarr.json", ".zarray"))]
    assert z.metadata == io.load_array_metadata(store, "a")


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("kwargs", [
    dict(dtype=str), dict(dtype="f4", compressor=numcodecs.Zlib(1)), dict(dtype="i2", filters=[numcodecs.Delta("i2")]),
    dict(dtype="M8[ns]"), dict(dtype=[("a", "i4"), ("b", "f8")]),
])
def test_the_metadata_object_is_the_one_opening_gives(zarr_format, kwargs):
    z = zarrkit.create((6,), chunks=3, zarr_format=zarr_format, store={}, **kwargs)
    opened = zarrkit.open_array(z.store, mode="r")
    assert repr(z.metadata) == repr(opened.metadata)


def test_both_generations_meet_in_one_spec():
    classic = classic_spec((10,), chunks=5, dtype="i4", compressor=None, fill_value=0, zarr_format=3)
    modern = zarr3_spec((10,), chunks=5, dtype="i4", compressors=None, fill_value=0, zarr_format=3)
    assert isinstance(classic, ArraySpec) and isinstance(modern, ArraySpec)
    assert build_metadata(classic).to_json() == build_metadata(modern).to_json()


def test_a_group_creates_members_through_the_same_path():
    g = zarrkit.group(zarr_format=2)
    a = g.zeros("x", shape=(4,), chunks=2, dtype="i4")
    b = zarrkit.zeros((4,), chunks=2, dtype="i4", zarr_format=2, store={}, path="x")
    assert a.metadata == b.metadata


def test_the_store_shown_is_what_the_user_gave():
    store = {}
    assert zarrkit.zeros((2,), store=store, path="a").store is store
    assert zarrkit.create_array(store, name="b", shape=(2,)).store is store
    assert np.all(zarrkit.open_array(store, path="b", mode="r")[:] == 0)
