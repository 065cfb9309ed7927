"""zarr-python 3's ``from_dict`` constructors: a node described by a metadata document given as a
dict, at a place of a store, with nothing read or written there."""

import asyncio

import numpy as np
import pytest

import zarrkit
from zarrkit.api.asynchronous import AsyncArray, AsyncGroup
from zarrkit.errors import ContainsArrayError, MetadataError
from zarrkit.storage import MemoryStore, StorePath


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_array_from_dict_reads_the_chunks_stored_there_and_writes_nothing(zarr_format):
    store = MemoryStore()
    stored = zarrkit.create_array(store, name="a", data=np.arange(6, dtype="i2"), chunks=(4,),
                                  zarr_format=zarr_format)
    document = {**stored.metadata.to_dict(), "attributes": {"units": "m"}}
    keys = sorted(store._store_dict)
    described = zarrkit.Array.from_dict(StorePath(store, "a"), document)
    assert described.shape == (6,) and described.chunks == (4,) and described.dtype == np.dtype("i2")
    assert described.metadata.zarr_format == zarr_format
    assert described[...].tolist() == [0, 1, 2, 3, 4, 5]
    assert dict(described.attrs) == {"units": "m"}
    assert sorted(store._store_dict) == keys


def test_array_from_dict_of_a_place_with_nothing_stored():
    document = zarrkit.create_array({}, shape=(3,), dtype="f4", fill_value=2.5).metadata.to_dict()
    store = MemoryStore()
    described = zarrkit.Array.from_dict(StorePath(store, "x"), {**document, "attributes": {"k": 1}})
    assert described[...].tolist() == [2.5, 2.5, 2.5]  # no chunk: the fill value
    assert described.attrs["k"] == 1
    assert dict(store._store_dict) == {}
    wrapped = AsyncArray.from_dict(StorePath(store, "x"), document)
    assert asyncio.run(wrapped.getitem(slice(None))).tolist() == [2.5, 2.5, 2.5]


@pytest.mark.parametrize("zarr_format", [4, "invalid", None])
def test_array_from_dict_refuses_another_format(zarr_format):
    with pytest.raises(MetadataError, match=f"Invalid zarr_format: {zarr_format}. Expected 2 or 3"):
        zarrkit.Array.from_dict(StorePath(MemoryStore()), {"zarr_format": zarr_format, "shape": (1,)})


def test_array_from_dict_names_an_invalid_field():
    document = zarrkit.create_array({}, shape=(3,), dtype="u1").metadata.to_dict()
    with pytest.raises(MetadataError, match="shape"):
        zarrkit.Array.from_dict(StorePath(MemoryStore()), {**document, "shape": "three"})


@pytest.mark.parametrize(
    "document",
    [{"zarr_format": 3, "node_type": "group", "attributes": {"foo": 100}},
     {"zarr_format": 2, "attributes": {"foo": 100}}],
)
def test_group_from_dict_holds_the_documents_format_and_attributes(document):
    store = MemoryStore()
    group = AsyncGroup.from_dict(StorePath(store, "test"), document)
    assert group.metadata.zarr_format == document["zarr_format"]
    assert group.metadata.attributes == {"foo": 100}
    assert group.attrs == {"foo": 100}
    assert dict(store._store_dict) == {}


def test_group_from_dict_refuses_an_arrays_document():
    with pytest.raises(ContainsArrayError, match="describes an array"):
        AsyncGroup.from_dict(StorePath(MemoryStore()), {"zarr_format": 3, "node_type": "array"})
