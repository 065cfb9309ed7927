"""zarr-python 3's synchronous names beside zarr-python 2's: ``create_group``, ``from_array``,
``Group.create_array`` and the group and array methods zarr-python 3 code calls."""

from __future__ import annotations

import numpy as np
import pytest

import zarrkit as zarr
from zarrkit.errors import ContainsArrayError, ContainsGroupError
from zarrkit.storage import MemoryStore

FORMATS = [2, 3]


@pytest.mark.parametrize("fmt", FORMATS)
def test_create_group_with_attributes_and_overwrite(fmt):
    store = MemoryStore()
    g = zarr.create_group(store, attributes={"title": "t"}, zarr_format=fmt)
    assert g.attrs["title"] == "t" and g.zarr_format == fmt
    assert g.metadata.attributes == {"title": "t"} and g.metadata.node_type == "group"
    with pytest.raises(ContainsGroupError):
        zarr.create_group(store, zarr_format=fmt)
    g.create_array("a", shape=(2,), dtype="i1")
    with pytest.raises(ContainsArrayError):
        zarr.create_group(store, path="a", zarr_format=fmt)
    again = zarr.create_group(store, overwrite=True, zarr_format=fmt)
    assert list(again) == [] and dict(again.attrs) == {}


@pytest.mark.parametrize("fmt", FORMATS)
def test_group_create_array_and_the_member_accessors(fmt):
    g = zarr.create_group({}, zarr_format=fmt)
    a = g.create_array("a", shape=(4, 4), chunks=(2, 2), dtype="i4", fill_value=7,
                       attributes={"units": "m"})
    assert (a.shape, a.chunks, a.dtype, a.fill_value) == ((4, 4), (2, 2), np.dtype("i4"), 7)
    assert a.attrs["units"] == "m"
    sub = g.create_group("sub")
    b = sub.create_array("b", data=np.arange(6).reshape(2, 3))
    assert b.dtype == np.arange(1).dtype and (b[:] == np.arange(6).reshape(2, 3)).all()
    with pytest.raises(ValueError, match="contradicts"):
        sub.create_array("c", shape=(5,), data=np.arange(6))
    with pytest.raises(TypeError, match="shape"):
        sub.create_array("c")
    assert g.get_array("a") == a
    assert g.get_group("sub") == sub
    with pytest.raises(zarr.errors.ContainsGroupError, match="A group exists in store .* at path 'sub'"):
        g.get_array("sub")
    with pytest.raises(zarr.errors.ContainsArrayError, match="An array exists in store .* at path 'a'"):
        g.get_group("a")
    with pytest.raises(KeyError):
        g.get_array("nothing")
    assert [x.path for x in g.array_values()] == ["a"]
    assert [x.path for x in g.group_values()] == ["sub"]
    assert g.nmembers() == 2 and g.nmembers(max_depth=None) == 3 and g.nmembers(max_depth=1) == 3
    assert [name for name, _ in g.members(max_depth=None)] == ["a", "sub", "sub/b"]
    assert [name for name, _ in g.members()] == ["a", "sub"]
    assert [name for name, _ in g.members(max_depth=np.int64(1))] == ["a", "sub", "sub/b"]
    for depth in (-1, 0.5, True):  # no depth: refused, for the count too
        with pytest.raises(ValueError, match="max_depth"):
            g.members(max_depth=depth)
        with pytest.raises(ValueError, match="max_depth"):
            g.nmembers(max_depth=depth)
    assert g.require_array("a", shape=(4, 4)) == a
    with pytest.raises(TypeError):
        g.require_array("a", shape=(5, 5))
    assert g.require_array("new", shape=(3,), dtype="u1").shape == (3,)


@pytest.mark.parametrize("fmt", FORMATS)
def test_update_attributes_merges_and_returns_the_node(fmt):
    g = zarr.create_group({}, attributes={"a": 1}, zarr_format=fmt)
    assert g.update_attributes({"b": 2}) is g
    assert dict(g.attrs) == {"a": 1, "b": 2}
    a = g.create_array("x", shape=(2,))
    assert a.update_attributes({"c": 3}) is a and dict(a.attrs) == {"c": 3}


def test_array_serializer_and_info_complete():
    a = zarr.create_array({}, shape=(10,), chunks=(5,), dtype="<i4", zarr_format=3)
    assert a.serializer.name == "bytes"
    a[:] = 1
    assert "Chunks Initialized : 2" in str(a.info_complete())
    assert "No. bytes stored" not in str(a.info)  # zarr-python 3's info reads nothing stored
    assert zarr.create_array({}, shape=(3,), zarr_format=2).serializer is None


@pytest.mark.parametrize("fmt", FORMATS)
def test_from_array_keeps_the_sources_layout_and_copies_in_bounded_steps(fmt):
    data = np.arange(120, dtype="i2").reshape(10, 12)
    a = zarr.from_array({}, data=data, chunks=(4, 5), zarr_format=fmt, attributes={"k": 1})
    assert a.chunks == (4, 5) and (a[:] == data).all() and a.attrs["k"] == 1
    b = zarr.from_array({}, data=a)
    assert b.chunks == a.chunks and b.zarr_format == fmt and b.dtype == a.dtype
    assert (b[:] == data).all() and dict(b.attrs) == {"k": 1}
    c = zarr.from_array({}, data=a, chunks=(10, 12), zarr_format=5 - fmt, write_data=False)
    assert c.chunks == (10, 12) and c.zarr_format == 5 - fmt and c.nchunks_initialized == 0


def test_from_array_of_a_sharded_source_keeps_its_shards():
    a = zarr.create_array({}, shape=(20, 20), chunks=(5, 5), shards=(10, 10), dtype="f4",
                          zarr_format=3)
    a[:] = np.arange(400, dtype="f4").reshape(20, 20)
    b = zarr.from_array({}, data=a)
    assert b.shards == (10, 10) and b.chunks == (5, 5)
    assert (b[:] == a[:]).all()


def test_config_with_zarr3_keys_applies_at_once_and_restores_in_a_block():
    cfg = zarr.config
    before = cfg.threads
    with cfg.set({"threading.max_workers": 1, "array.write_empty_chunks": False}):
        assert cfg.threads == 1 and cfg.get("array.write_empty_chunks") is False
    # unset again: each format's default, zarr-python 3's (False) for v3 arrays
    assert cfg.threads == before and cfg.write_empty_chunks is None and cfg.get("array.write_empty_chunks") is False
    cfg.set({"array.order": "F"})  # without `with`: stays set
    try:
        assert cfg.get("array.order") == "F"
        # the order of every new array not given one: stored by v2, read in by v3
        assert zarr.create_array({}, shape=(2, 2)).order == "F"
        assert zarr.zeros((2, 2), zarr_format=3).order == "F"
        assert zarr.zeros((2, 2), zarr_format=2).order == "F"
        assert zarr.zeros((2, 2), zarr_format=2, order="C").order == "C"
    finally:
        cfg.reset()
    assert cfg.order == "C" and cfg.get("no.such.key", 5) == 5
    with pytest.raises(TypeError, match="unknown config"):
        cfg.set({"array.nope": 1})
    with pytest.raises(ValueError, match="order"):
        cfg.set(order="X")


def test_per_array_config():
    a = zarr.create_array({}, shape=(4,), chunks=(2,), fill_value=0,
                          config={"write_empty_chunks": False, "order": "F"})
    a[:] = 0
    assert a.nchunks_initialized == 0 and a.order == "F"
    with pytest.raises(TypeError, match="config"):
        zarr.create_array({}, shape=(4,), config={"bogus": 1})


def test_local_and_zip_stores_with_read_only(tmp_path):
    store = zarr.storage.LocalStore(str(tmp_path / "d"), read_only=False)
    zarr.zeros(3, store=store)
    assert zarr.storage.LocalStore(str(tmp_path / "d"), read_only=True).read_only
    z = zarr.storage.ZipStore(str(tmp_path / "a.zip"), mode="w")
    z["k"] = b"1"
    z.close()
    ro = zarr.storage.ZipStore(str(tmp_path / "a.zip"), read_only=True)
    assert ro.read_only and ro["k"] == b"1"


def test_group_attributes_and_open_group_use_consolidated():
    store: dict = {}
    g = zarr.group(store, attributes={"a": 1}, zarr_format=2)
    assert dict(g.attrs) == {"a": 1}
    g.zeros("x", shape=3)
    assert dict(zarr.group(store, attributes={"b": 2}).attrs) == {"a": 1, "b": 2}
    zarr.consolidate_metadata(store)
    c = zarr.open_group(store, mode="r", use_consolidated=True)
    assert isinstance(c.store, zarr.storage.ConsolidatedMetadataStore) and list(c) == ["x"]
    assert list(zarr.open_group(store, mode="r", use_consolidated=False)) == ["x"]


@pytest.mark.parametrize("zarr_format, encoding", [
    (3, {"name": "default", "separator": "."}), (2, {"name": "v2", "separator": "/"}),
])
def test_from_array_keeps_dimension_names_and_chunk_keys_as_zarr_python(zarr_format, encoding):
    """zarr-python 3's flat ``{"name", "separator"}`` form is honoured, and ``from_array``
    keeps a source's dimension names and chunk key encoding: the same keys as zarr-python."""
    import zarr as zarr_python  # the reference library (this module's ``zarr`` is zarrkit)

    names = {"dimension_names": ["x", "y"]} if zarr_format == 3 else {}
    stores = []
    for lib in (zarr, zarr_python):
        src = lib.create_array({}, shape=(4, 4), chunks=(2, 2), dtype="i4", zarr_format=zarr_format,
                               chunk_key_encoding=encoding, **names)
        src[:] = np.arange(16).reshape(4, 4)
        out = {}
        copy = lib.from_array(out if lib is zarr else zarr_python.storage.MemoryStore(out), data=src)
        if zarr_format == 3:
            assert tuple(copy.metadata.dimension_names) == ("x", "y")
        stores.append(sorted(k for k in out if not k.startswith((".", "zarr.json"))))
    assert stores[0] == stores[1] and stores[0][0] == ("c.0.0" if zarr_format == 3 else "0/0")


def test_group_update_attributes_async_replaces_the_attributes():
    import asyncio

    for zarr_format in (2, 3):
        store = MemoryStore()
        g = zarr.create_group(store, zarr_format=zarr_format, attributes={"foo": 1, "keep": 2})
        g.update_attributes({"bar": 3})  # merges
        assert dict(g.attrs) == {"foo": 1, "keep": 2, "bar": 3}
        got = asyncio.run(g.update_attributes_async({"only": 4}))  # replaces, as zarr-python 3's
        assert got is g and dict(g.attrs) == {"only": 4}
        assert dict(zarr.open_group(store, mode="r").attrs) == {"only": 4}
