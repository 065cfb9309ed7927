"""zarr-python 2 names that existing code reads: ``zarr.meta``, the stores' metadata dialect and
format tag, ``_version`` of nodes, ``_chunk_key`` of arrays; dicts wrapped as ``KVStore``;
``open_consolidated`` answering as a ``ConsolidatedMetadataStore``."""

from __future__ import annotations

import numcodecs
import numpy as np
import pytest
from zarrkit.meta import Metadata2

import zarrkit as zarr
from zarrkit.storage import (
    ConsolidatedMetadataStore,
    DirectoryStore,
    KVStore,
    MemoryStore,
    coerce_store,
    init_array,
)


@pytest.mark.parametrize("make", [lambda p: MemoryStore(), lambda p: DirectoryStore(str(p)), lambda p: KVStore({})])
def test_stores_decode_what_init_array_writes(tmp_path, make):
    store = make(tmp_path)
    init_array(store, shape=1000, chunks=100, dtype="<i4", compressor=numcodecs.Zlib(1))
    assert store._store_version == 2
    meta = store._metadata_class.decode_array_metadata(store[".zarray"])
    assert meta["shape"] == (1000,) and meta["chunks"] == (100,)
    assert meta["dtype"] == np.dtype("<i4")
    assert meta["compressor"] == numcodecs.Zlib(1).get_config()
    # codec configurations come back completed with their defaults, as get_config() gives them
    store["b/.zarray"] = store[".zarray"].replace(b'"level": 1', b'"level": 1').replace(
        b'"id": "zlib",\n        "level": 1', b'"clevel": 5,\n        "cname": "lz4",\n        "id": "blosc",\n        "shuffle": 1')
    assert store._metadata_class.decode_array_metadata(store["b/.zarray"])["compressor"] == \
        numcodecs.Blosc("lz4", 5, 1).get_config()
    assert meta["filters"] is None and meta["order"] == "C"


def test_metadata2_round_trips_an_array_document():
    meta = dict(shape=(20, 3), chunks=(5, 3), dtype=np.dtype([("a", "<f4"), ("b", "S2")]),
                compressor=numcodecs.Zstd(2), fill_value=None, order="F",
                filters=[numcodecs.Delta("<f4")], dimension_separator="/")
    raw = Metadata2.encode_array_metadata(meta)
    back = Metadata2.decode_array_metadata(raw)
    assert back["dtype"] == meta["dtype"] and back["order"] == "F"
    assert back["compressor"] == numcodecs.Zstd(2).get_config()
    assert back["filters"] == [numcodecs.Delta("<f4").get_config()]
    assert back["dimension_separator"] == "/" and back["fill_value"] is None
    # what is written is what zarrkit itself reads
    store = {".zarray": raw}
    z = zarr.open_array(store, mode="r")
    assert z.shape == (20, 3) and z.order == "F"


def test_metadata2_refuses_other_formats_and_non_json():
    with pytest.raises(zarr.errors.MetadataError):
        Metadata2.decode_array_metadata(b'{"zarr_format": 3}')
    with pytest.raises(zarr.errors.MetadataError):
        Metadata2.decode_group_metadata(b"not json")
    assert Metadata2.decode_group_metadata(Metadata2.encode_group_metadata()) == {"zarr_format": 2}


@pytest.mark.parametrize("fmt", [2, 3])
def test_version_and_chunk_key(fmt):
    g = zarr.group(zarr_format=fmt)
    z = g.zeros("x", shape=(4, 4), chunks=(2, 2))
    assert g._version == fmt and z._version == fmt
    z[:] = 1
    key = z._chunk_key((1, 0))
    assert key in z.chunk_store
    del z.chunk_store[key]
    assert (z[2:, :2] == 0).all() and (z[:2] == 1).all()


def test_plain_mappings_are_used_through_kvstore():
    store = coerce_store({})
    assert isinstance(store, KVStore)


def test_open_consolidated_store_is_a_consolidated_metadata_store():
    store = MemoryStore()
    g = zarr.group(store, zarr_format=2)
    g.zeros("a", shape=3)
    zarr.consolidate_metadata(store)
    g2 = zarr.open_consolidated(store)
    assert isinstance(g2.store, ConsolidatedMetadataStore)
    assert g2["a"].shape == (3,)


@pytest.mark.parametrize("fmt, sep", [(2, "."), (2, "/"), (3, "/")])
def test_dimension_separator_of_an_array(fmt, sep):
    kwargs = {"dimension_separator": sep} if fmt == 2 else {}
    z = zarr.zeros((4, 4), chunks=(2, 2), zarr_format=fmt, **kwargs)
    assert z._dimension_separator == sep
    z[:] = 1
    assert sep.join(["1", "1"]) in z._chunk_key((1, 1))


def test_store_sizes_of_directories_and_the_root():
    store = MemoryStore()
    g = zarr.group(store, zarr_format=2)
    z = g.zeros("a", shape=4, chunks=2, compressor=None, dtype="u1")
    z[:] = 1
    meta = len(store["a/.zarray"]) + len(store["a/.zattrs"])
    assert store.getsize("a") == meta + 4  # two chunks of 2 bytes, below 'a' directly
    assert store.getsize() == len(store[".zgroup"]) + len(store[".zattrs"])
    assert store.getsize("a/0") == 2


def test_digest_is_the_same_with_or_without_an_empty_attributes_document():
    import hashlib

    s1: dict = {}
    init_array(s1, shape=(1050,), chunks=100, dtype="<i4", compressor=numcodecs.Zlib(1))
    z1 = zarr.Array(s1)
    z1[200:400] = np.arange(200, 400, dtype="i4")
    s2 = {k: v for k, v in s1.items() if k != ".zattrs"}  # as zarr-python 2 leaves it
    z2 = zarr.Array(s2)
    assert z1.hexdigest() == z2.hexdigest()
    # what is hashed: every chunk in order (missing ones as nothing), then the metadata
    h = hashlib.sha1()
    for i in range(11):
        h.update(s2.get(str(i), b""))
    h.update(s2[".zarray"])
    assert z2.hexdigest() == h.hexdigest()
    z1.attrs["foo"] = "bar"
    assert z1.hexdigest() != z2.hexdigest()


@pytest.mark.parametrize("fmt", [2, 3])
def test_init_group_refuses_a_group_already_there_unless_overwrite(fmt):
    from zarrkit.errors import ContainsGroupError
    from zarrkit.storage import init_group

    store = MemoryStore()
    init_group(store, zarr_format=fmt)
    with pytest.raises(ContainsGroupError):
        init_group(store, zarr_format=fmt)
    init_group(store, overwrite=True, zarr_format=fmt)


def test_batch_names_of_zarr2_stores():
    store = MemoryStore()
    store.setitems({"a": b"1", "b/c": b"2"})
    assert store.getitems(["a", "b/c", "missing"], contexts={}) == {"a": b"1", "b/c": b"2"}
    store.delitems(["a", "missing"])
    assert list(store) == ["b/c"]


def test_bytes_fill_value_for_text_is_refused():
    with pytest.raises(ValueError, match="fill_value"):
        zarr.full(10, fill_value=b"xxx", dtype="U3")
    assert zarr.full(10, fill_value="xxx", dtype="U3")[0] == "xxx"
