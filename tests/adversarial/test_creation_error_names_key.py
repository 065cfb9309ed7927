"""A creation with a shape no reader would open is refused where the shape enters, naming the
argument, and writes nothing."""

from __future__ import annotations

import pytest

import zarrkit
from zarrkit.storage import MemoryStore


@pytest.mark.parametrize("name", ["b", "g/b"])
def test_unstorable_shape_names_the_array_document(name):
    store = MemoryStore()
    # refused where the shape enters, naming the argument, before anything is written (the
    # metadata parser's limit, applied to every shape given: creation, resize, append)
    with pytest.raises(ValueError, match=r"^shape: expected lengths of at most"):
        zarrkit.create_array(store=store, name=name, shape=(2**70,), dtype="i4")
    assert list(store.keys()) == []


def test_unstorable_shape_through_open_array_names_the_document():
    store = MemoryStore()
    with pytest.raises(ValueError, match=r"^shape: expected lengths of at most"):
        zarrkit.open_array(store, mode="w", path="c", shape=(2**70,), dtype="i4", zarr_format=3)
    assert list(store.keys()) == []
