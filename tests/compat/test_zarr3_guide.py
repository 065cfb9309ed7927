"""What zarr-python 3's user guide shows, as our own tests: v3 nodes print and report as
zarr-python 3 prints them, and the guide's functions and names exist and do what it says."""

from __future__ import annotations

import asyncio
import io
import json
import lzma
import zipfile

import numpy as np
import pytest
from zarrkit.dtype import Float64, Int8, Int64, Struct, parse_dtype
from zarrkit.experimental.cache_store import CacheStore

import zarrkit as zarr
from zarrkit.errors import ChunkNotFoundError, ContainsGroupError
from zarrkit.storage import LocalStore, MemoryStore, ZipStore


def test_v3_reprs_name_the_store_and_path(tmp_path):
    root = zarr.open_group(str(tmp_path / "g.zarr"), mode="w")
    a = root.create_group("foo").create_array("bar", shape=(4, 5), dtype="int32")
    url = f"file://{tmp_path / 'g.zarr'}"
    assert repr(root) == f"<Group {url}>"
    assert repr(root["foo"]) == f"<Group {url}/foo>"
    assert repr(a) == f"<Array {url}/foo/bar shape=(4, 5) dtype=int32>"
    mem = zarr.create_array(MemoryStore(), shape=(2,), dtype="f8")
    assert repr(mem).startswith("<Array memory://") and repr(mem).endswith(" shape=(2,) dtype=float64>")
    with ZipStore(str(tmp_path / "d.zip"), mode="w") as zs:
        z = zarr.create_array(zs, shape=(2,), dtype="f8")
        assert repr(z) == f"<Array zip://{tmp_path / 'd.zip'} shape=(2,) dtype=float64>"
    # v2 nodes keep zarr-python 2's forms
    assert repr(zarr.group(zarr_format=2)) == "<zarrkit.Group '/'>"


def test_info_and_info_complete_of_a_v3_array():
    a = zarr.create_array({}, shape=(100, 100), chunks=(10, 10), shards=(50, 50), dtype="uint8")
    a[:] = 1
    lines = str(a.info).splitlines()
    assert lines[:5] == [
        "Type               : Array",
        "Zarr format        : 3",
        "Data type          : UInt8()",
        "Fill value         : 0",
        "Shape              : (100, 100)",
    ]
    assert "Shard shape        : (50, 50)" in lines and "Chunk shape        : (10, 10)" in lines
    assert "Serializer         : BytesCodec(endian=None)" in lines
    assert "Compressors        : (ZstdCodec(level=0, checksum=False),)" in lines
    assert "Store type         : MemoryStore" in lines
    assert lines[-1] == "No. bytes          : 10000 (9.8K)"
    complete = str(a.info_complete()).splitlines()
    assert complete[-1] == "Shards Initialized : 4" and complete[-3].startswith("No. bytes stored   : ")


def test_group_info_and_tree():
    root = zarr.create_group(store={})
    foo = root.create_group("foo")
    foo.create_array("bar", shape=(1000000,), dtype="int64")
    foo.create_array("baz", shape=(1000, 1000), dtype="float32")
    assert str(root.info).splitlines() == [
        "Name        : ", "Type        : Group", "Zarr format : 3", "Read-only   : False",
        "Store type  : MemoryStore",
    ]
    assert str(foo.info_complete()).splitlines()[-3:] == ["No. members : 2", "No. arrays  : 2", "No. groups  : 0"]
    assert str(root.tree()) == "/\n└── foo\n    ├── bar (1000000,) int64\n    └── baz (1000, 1000) float32\n"


def test_create_array_defaults_are_zarr_python_3s():
    a = zarr.create_array({}, shape=(10000, 10000), dtype="int32")
    assert a.chunks == (625, 625)  # zarr-python 3's guess (zarr-python 2's gave (313, 313))
    assert [c.to_json() for c in a.compressors] == [{"name": "zstd", "configuration": {"level": 0, "checksum": False}}]
    assert a.config.write_empty_chunks is False
    a[:10, :10] = 0  # all fill value: nothing stored
    assert a.nchunks_initialized == 0
    kept = zarr.create_array({}, shape=(10,), dtype="int8", config={"write_empty_chunks": True})
    kept[:] = 0
    assert kept.nchunks_initialized == 1 and kept.config.write_empty_chunks is True


def test_with_config_changes_runtime_settings_only():
    a = zarr.create_array({}, shape=(4, 3), chunks=(2, 2), dtype="int8", config={"write_empty_chunks": True})
    a[:] = np.arange(12).reshape(4, 3)
    f = a.with_config({"order": "F"})
    assert f.config.order == "F" and a.config.order == "C"
    assert f[:].flags.f_contiguous and (f[:] == a[:]).all()
    with pytest.raises(TypeError, match="unknown setting"):
        a.with_config({"colour": "blue"})


def test_chunk_sizes_of_regular_and_rectilinear_grids():
    a = zarr.create_array({}, shape=(100, 80), chunks=(30, 40), dtype="int32")
    assert a.write_chunk_sizes == a.read_chunk_sizes == ((30, 30, 30, 10), (40, 40))
    s = zarr.create_array({}, shape=(6, 6), chunks=(2, 2), shards=(4, 6), dtype="int64")
    assert s.write_chunk_sizes == ((4, 2), (6,)) and s.read_chunk_sizes == ((2, 2, 2), (2, 2, 2))
    r = zarr.create_array({}, shape=(60, 100), chunks=[[10, 20, 30], [50, 50]], dtype="int32")
    assert r.write_chunk_sizes == ((10, 20, 30), (50, 50))


def test_get_array_on_a_group_names_it():
    root = zarr.create_group(store={})
    root.create_group("foo")
    with pytest.raises(ContainsGroupError, match="A group exists in store .* at path 'foo'"):
        root.get_array("foo")


def test_create_hierarchy_and_group_metadata(tmp_path):
    from zarrkit.core.group import GroupMetadata

    nodes = dict(zarr.create_hierarchy(store=LocalStore(root=str(tmp_path / "h")), nodes={"a/b/c": GroupMetadata()},
                                       overwrite=True))
    assert sorted(nodes) == ["", "a", "a/b", "a/b/c"]
    assert repr(nodes["a/b"]) == f"<Group file://{tmp_path / 'h'}/a/b>"
    g = zarr.open_group(str(tmp_path / "h"), use_consolidated=False)
    assert g.metadata.consolidated_metadata is None
    child = g.create_group("child", attributes={"kind": "child"})
    assert dict(child.attrs) == {"kind": "child"}
    zarr.consolidate_metadata(str(tmp_path / "h"))
    assert "child" in zarr.open_consolidated(str(tmp_path / "h")).metadata.consolidated_metadata.metadata


def test_data_type_objects():
    int8 = Int8.from_native_dtype(np.dtype("int8"))
    assert int8.to_native_dtype() == np.dtype("int8") and int8.default_scalar() == np.int8(0)
    assert int8.to_json(zarr_format=2) == {"name": "|i1", "object_codec_id": None}
    assert int8.to_json(zarr_format=3) == "int8"
    assert int8.to_json_scalar(42, zarr_format=3) == 42 and int8.from_json_scalar(42, zarr_format=3) == np.int8(42)
    a = zarr.create_array({}, shape=(10,), dtype=[("a", "f8"), ("b", "i8")])
    assert a.metadata.data_type == Struct(a.dtype)
    assert repr(a.metadata.data_type) == (
        "Struct(fields=(('a', Float64(endianness='little')), ('b', Int64(endianness='little'))))"
    )
    assert parse_dtype("<f8") == Float64(np.dtype("<f8")) and isinstance(parse_dtype("i8"), Int64)
    with pytest.raises(TypeError):
        Int8.from_native_dtype(np.dtype("f4"))


def test_numcodecs_codec_objects_keep_their_configuration():
    from zarrkit.codecs.numcodecs import LZMA, Delta

    filters = [Delta(dtype="int32")]
    lzma_filters = [dict(id=lzma.FILTER_DELTA, dist=4), dict(id=lzma.FILTER_LZMA2, preset=1)]
    assert LZMA(filters=lzma_filters).to_json() == {"name": "numcodecs.lzma", "configuration": {"filters": lzma_filters}}
    compressors = LZMA(preset=1)
    store = {}
    z = zarr.create_array(store, shape=(1000,), dtype="int32", filters=filters, compressors=compressors)
    z[:] = np.arange(1000)
    codecs = json.loads(store["zarr.json"])["codecs"]
    assert codecs[0] == {"name": "numcodecs.delta", "configuration": {"dtype": "int32"}}
    assert repr(z.metadata.filters) == "(Delta(codec_name='numcodecs.delta', codec_config={'dtype': 'int32'}),)"
    assert (zarr.open_array(store)[:] == np.arange(1000)).all()


def test_cache_store(tmp_path):
    source = LocalStore(str(tmp_path / "src.zarr"))
    cached = CacheStore(store=source, cache_store=MemoryStore(), max_size=256 * 1024)
    z = zarr.zeros((100, 100), chunks=(10, 10), dtype="f8", store=cached, mode="w")
    z[:] = np.arange(10000.0).reshape(100, 100)
    info = cached.cache_info()
    assert info["cached_keys"] == info["tracked_keys"] == 101 and info["cache_set_data"] is True
    assert 0 < info["current_size"] <= 256 * 1024
    assert (zarr.open_array(cached, mode="r")[:] == np.arange(10000.0).reshape(100, 100)).all()
    asyncio.run(cached.clear_cache())
    assert cached.cache_info()["cached_keys"] == 0 and cached.cache_info()["current_size"] == 0
    small = CacheStore(store=source, cache_store=MemoryStore(), max_size=2000, cache_set_data=False)
    small_z = zarr.open_array(small, mode="r")
    _ = small_z[:]
    assert small.cache_info()["current_size"] <= 2000  # least recently used values went first
    with pytest.raises(ValueError):
        CacheStore(store=source, cache_store=MemoryStore(), max_age_seconds="forever")


def test_config_keys_without_effect_and_pprint():
    with zarr.config.set({"codec_pipeline.path": "zarr.core.codec_pipeline.FusedCodecPipeline"}):
        assert zarr.config.get("codec_pipeline.path").endswith("FusedCodecPipeline")
    zarr.config.set({"codec_pipeline.max_workers": None})
    out = io.StringIO()
    zarr.config.pprint(stream=out, width=60)
    assert "'threads'" in out.getvalue()
    zarr.config.reset()
    assert zarr.config.get("codec_pipeline.path").endswith("BatchedCodecPipeline")


def test_save_takes_storage_options_for_the_store_not_as_an_array(tmp_path):
    zarr.save(str(tmp_path / "one.zarr"), np.arange(4), storage_options=None)
    assert isinstance(zarr.open(str(tmp_path / "one.zarr"), mode="r"), zarr.Array)
    # options reach a URL's file system, for arrays given by position too
    zarr.save_group(f"file://{tmp_path}/new/dir/g.zarr", np.arange(3), np.ones(2), storage_options={"auto_mkdir": True})
    assert sorted(zarr.open_group(str(tmp_path / "new/dir/g.zarr"), mode="r")) == ["arr_0", "arr_1"]
    zarr.save_array(f"file://{tmp_path}/x.zarr", np.arange(2), storage_options={"auto_mkdir": True})
    assert zarr.load(str(tmp_path / "x.zarr")).tolist() == [0, 1]


def test_save_array_mode_zipstore_over_a_file(tmp_path):
    zarr.save_array(str(tmp_path / "a.zarr"), np.arange(10), mode="w")
    assert (zarr.load(str(tmp_path / "a.zarr")) == np.arange(10)).all()
    with ZipStore(str(tmp_path / "data.zip"), mode="w") as zs:
        zarr.create_array(zs, shape=(2,), dtype="f8")[:] = 42
    with open(tmp_path / "data.zip", mode="rb") as f:
        assert zipfile.is_zipfile(f)
        array = zarr.open_array(store=ZipStore(f), mode="r")
        assert array[:].tolist() == [42.0, 42.0]
        with pytest.raises(ValueError, match="read-only"):
            ZipStore(f, mode="w")


def test_with_config_read_missing_chunks_and_create_hierarchy_keeps_parents():
    a = zarr.create_array({}, shape=(4,), dtype="int8")
    with pytest.raises(ChunkNotFoundError, match="'c/0'"):
        a.with_config({"read_missing_chunks": False})[:]
    assert a[:].tolist() == [0] * 4
    from zarrkit.core.group import GroupMetadata

    store = {}
    root = zarr.create_group(store=store, attributes={"keep": 1})
    root.create_group("a", attributes={"also": 2})
    nodes = dict(zarr.create_hierarchy(store=store, nodes={"a/b": GroupMetadata(attributes={"new": 3})}, overwrite=True))
    assert sorted(nodes) == ["", "a", "a/b"]
    # the parents that were there are kept as they were; the node asked for is written
    assert dict(nodes[""].attrs) == {"keep": 1} and dict(nodes["a"].attrs) == {"also": 2}
    assert dict(nodes["a/b"].attrs) == {"new": 3}
