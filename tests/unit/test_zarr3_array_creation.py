"""zarr-python 3's creation keywords: create_array(data=), create(data=, chunk_shape=), v2
arrays given compressors= or a 'v2' chunk_key_encoding, config= and the zarr-3 names of the
metadata classes and helpers."""

from __future__ import annotations

import asyncio

import numcodecs
import numpy as np
import pytest

import zarrkit
from zarrkit.api.async_nodes import AsyncArray
from zarrkit.api.creation import _parse_chunk_encoding_v2, _parse_chunk_encoding_v3
from zarrkit.codecs import BytesCodec, ZstdCodec
from zarrkit.metadata.normalize import ceildiv, parse_shapelike
from zarrkit.metadata.v2 import ArrayV2Metadata
from zarrkit.metadata.v3 import ArrayV3Metadata


def test_create_array_takes_shape_and_dtype_from_data() -> None:
    data = np.arange(12, dtype="i2").reshape(3, 4)
    a = zarrkit.create_array({}, name="x", data=data, chunks=(2, 2))
    assert a.shape == (3, 4) and a.dtype == np.dtype("i2") and a.path == "x"
    np.testing.assert_array_equal(a[:], data)


def test_create_array_write_data_false_leaves_fill_value() -> None:
    a = zarrkit.create_array({}, data=np.arange(4), fill_value=7, write_data=False)
    assert a[:].tolist() == [7, 7, 7, 7]


def test_create_array_copies_a_zarrkit_array_region_by_region() -> None:
    src = zarrkit.create_array({}, data=np.arange(10.0), chunks=(3,))
    dest = zarrkit.create_array({}, data=src, chunks=(4,))
    np.testing.assert_array_equal(dest[:], np.arange(10.0))


@pytest.mark.parametrize("given", [{"shape": (4,)}, {"dtype": "i4"}])
def test_create_array_refuses_data_with_shape_or_dtype(given: dict) -> None:
    store: dict = {}
    with pytest.raises(ValueError, match=next(iter(given))):
        zarrkit.create_array(store, data=np.arange(4), **given)
    assert store == {}


def test_create_array_needs_shape_or_data() -> None:
    with pytest.raises(ValueError, match="shape was not specified"):
        zarrkit.create_array({})
    with pytest.raises(TypeError, match="shape is required"):
        zarrkit.create_array({})


def test_create_takes_data_and_chunk_shape() -> None:
    a = zarrkit.create((4,), chunk_shape=(2,), data=np.arange(4), zarr_format=3)
    assert a.chunks == (2,) and a[:].tolist() == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="chunk_shape"):
        zarrkit.create((4,), chunks=(1,), chunk_shape=(2,))


def test_unknown_keyword_named_like_python() -> None:
    with pytest.raises(TypeError, match=r"^create\(\) got an unexpected keyword argument 'typo'$"):
        zarrkit.create((3,), typo=1)


def test_v2_array_takes_compressors_and_v2_chunk_key_encoding() -> None:
    g = zarrkit.group(zarr_format=2)
    a = g.create("x", shape=(4,), dtype="i4", compressors=numcodecs.Zstd(level=1),
                 chunk_key_encoding={"name": "v2", "separator": "/"})
    assert a.metadata.compressor == numcodecs.Zstd(level=1)
    assert a.metadata.dimension_separator == "/"
    b = zarrkit.create_array({}, shape=(4,), dtype="i4", zarr_format=2, compressors=[])
    assert b.compressor is None


def test_v2_array_refuses_two_compressors_and_default_encoding() -> None:
    with pytest.raises(ValueError, match="at most one"):
        zarrkit.create_array({}, shape=(4,), dtype="i4", zarr_format=2,
                             compressors=[numcodecs.Zstd(), numcodecs.Zlib()])
    with pytest.raises(ValueError, match="'v2'"):
        zarrkit.create_array({}, shape=(4,), dtype="i4", zarr_format=2,
                             chunk_key_encoding={"name": "default", "separator": "/"})


def test_v3_only_arguments_are_type_and_value_errors() -> None:
    with pytest.raises(TypeError):
        zarrkit.create_array({}, shape=(4,), dtype="i4", zarr_format=2, dimension_names=["x"])
    with pytest.raises(ValueError):
        zarrkit.create_array({}, shape=(4,), dtype="i4", zarr_format=2, shards=(2,))


def test_create_takes_chunk_key_encoding_as_a_pair() -> None:
    a = zarrkit.create((4, 4), chunks=(2, 2), chunk_key_encoding=("default", "."), zarr_format=3)
    assert a.metadata.chunk_key((1, 0)) == "c.1.0"


def test_big_endian_dtype_gets_big_endian_serializer() -> None:
    a = zarrkit.create_array({}, shape=(3,), dtype=">i4")
    a[:] = [1, 2, 3]
    assert a.serializer == BytesCodec("big")
    assert a[:].tolist() == [1, 2, 3]
    assert zarrkit.create_array({}, shape=(3,), dtype="<i4").serializer == BytesCodec("little")


def test_filters_auto_is_the_default() -> None:
    assert zarrkit.create_array({}, shape=(3,), dtype="i4", filters="auto").metadata.filters in (None, ())


def test_chunk_encoding_helpers_follow_create_array() -> None:
    filters, serializer, compressors = _parse_chunk_encoding_v3(dtype="i2")
    assert filters == () and serializer == BytesCodec("little")
    assert compressors == (ZstdCodec(level=0, checksum=False),)
    a = zarrkit.create_array({}, shape=(2,), dtype="i2")
    assert (a.metadata.filters or (), a.serializer, a.compressors) == (filters, serializer, compressors)
    v2_filters, compressor = _parse_chunk_encoding_v2(filters=None, compressor=None, dtype="i4")
    assert (v2_filters, compressor) == (None, None)


def test_array_wraps_an_async_array() -> None:
    a = zarrkit.create_array({}, shape=(3,), dtype="i4", fill_value=2)
    b = zarrkit.Array(AsyncArray(a))
    assert b.shape == (3,) and b[:].tolist() == [2, 2, 2]
    b[0] = 5
    assert a[0] == 5


def test_async_array_filters_are_the_metadata_tuple() -> None:
    a = zarrkit.create_array({}, shape=(3,), dtype="i4", filters=[zarrkit.codecs.TransposeCodec((0,))], zarr_format=3)
    assert AsyncArray(a).filters == tuple(a.metadata.filters)
    b = zarrkit.create_array({}, shape=(3,), dtype="i4")
    assert AsyncArray(b).filters == ()


def test_empty_like_keeps_the_fill_value() -> None:
    src = zarrkit.create_array({}, shape=(2, 2), dtype="u1", fill_value=100)
    assert zarrkit.empty_like(src).fill_value == 100
    assert zarrkit.empty_like(src, fill_value=3).fill_value == 3


def test_open_array_applies_config_order_to_an_existing_array() -> None:
    store: dict = {}
    zarrkit.create_array(store, shape=(2, 2), dtype="u1")
    a = zarrkit.open_array(store, mode="a", config={"order": "F"})
    assert a.config.order == "F"
    assert a[:].flags.f_contiguous


def test_config_read_missing_chunks_false_is_kept() -> None:
    a = zarrkit.create_array({}, shape=(2,), dtype="u1", config={"read_missing_chunks": False})
    assert a.config.read_missing_chunks is False
    assert zarrkit.create_array({}, shape=(2,), dtype="u1").config.read_missing_chunks is True


def test_order_none_is_the_configured_order() -> None:
    with zarrkit.config.set({"array.order": "F"}):
        assert zarrkit.ones((2, 2), order=None, zarr_format=2).order == "F"


def test_metadata_from_dict_to_dict_v2() -> None:
    d = {"zarr_format": 2, "shape": (1, 2), "chunks": (1, 1), "dtype": "|u1", "order": "C",
         "compressor": {"id": "gzip", "level": 1}, "filters": None, "fill_value": 0,
         "attributes": {"a": 1}}
    m = ArrayV2Metadata.from_dict(d)
    assert m.attributes == {"a": 1}
    assert m.to_dict() == {**d, "dimension_separator": "."}


def test_metadata_from_dict_to_dict_v3() -> None:
    d = {"zarr_format": 3, "node_type": "array", "shape": (4, 4), "data_type": "float64",
         "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": (2, 2)}},
         "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
         "fill_value": 0.0, "codecs": ({"name": "bytes", "configuration": {"endian": "little"}},),
         "attributes": {"k": "v"}, "storage_transformers": (), "dimension_names": ("x", "y")}
    m = ArrayV3Metadata.from_dict(d)
    assert m.attributes == {"k": "v"} and m.shape == (4, 4)
    assert m.to_dict() == d


def test_common_helpers() -> None:
    assert ceildiv(10, 3) == 4 and ceildiv(9, 3) == 3 and ceildiv(0, 5) == 0
    assert parse_shapelike(5) == (5,)


def test_async_create_array_with_data() -> None:
    import zarrkit.api.asynchronous as aapi

    async def main() -> list[int]:
        arr = await aapi.create_array({}, data=np.arange(3))
        return (await arr.getitem(slice(None))).tolist()

    assert asyncio.run(main()) == [0, 1, 2]


@pytest.mark.parametrize("source_format", [2, 3])
def test_like_functions_keep_the_source_format_unless_asked(source_format: int) -> None:
    src = zarrkit.create_array({}, shape=(4,), dtype="i4", compressors=None, zarr_format=source_format)
    assert zarrkit.zeros_like(src).metadata.zarr_format == source_format
    assert zarrkit.zeros_like(src).compressors == ()
    other = 5 - source_format
    new = zarrkit.ones_like(src, zarr_format=other)
    assert new.metadata.zarr_format == other and new[:].tolist() == [1, 1, 1, 1]


def test_gpu_test_marks_and_skips_without_cupy() -> None:
    from zarrkit.testing.utils import gpu_test, has_cupy

    def probe() -> None:
        pass

    marked = gpu_test(probe)
    names = [m.name for m in marked.pytestmark]  # type: ignore[attr-defined]
    assert "gpu" in names and "skipif" in names
    assert has_cupy() == (__import__("importlib").util.find_spec("cupy") is not None)


def test_grid_shapes_and_shard_keys() -> None:
    a = zarrkit.create_array({}, name="foo", shape=(40,), chunks=(5,), shards=(20,), dtype="i1")
    assert a._chunk_grid_shape == (8,) and a._shard_grid_shape == (2,) and a._nshards == 2
    assert list(a._iter_shard_keys()) == ["foo/c/0", "foo/c/1"]
    assert a._nshards_initialized == 0
    a[:5] = 1
    assert a._nshards_initialized == 1
    b = zarrkit.create_array({}, shape=(4, 4), chunks=(2, 2), dtype="i1", zarr_format=2)
    assert list(b._iter_shard_keys(origin=(1, 0))) == ["1.0", "1.1"]


@pytest.mark.parametrize("config", [{"read_missing_chunks": "yes"}, {"write_empty_chunks": 1},
                                    {"sharding_coalesce_max_bytes": "big"}])
def test_config_values_of_the_wrong_type_are_refused_before_writing(config: dict) -> None:
    store: dict = {}
    with pytest.raises(ValueError, match=next(iter(config))):
        zarrkit.create_array(store, shape=(2,), dtype="u1", config=config)
    assert store == {}


@pytest.mark.parametrize("codec, place", [(ZstdCodec(), "compressors"), (BytesCodec(), "serializer")])
def test_a_v3_codec_of_another_kind_among_the_filters_is_refused_before_writing(codec, place):
    store = {}
    with pytest.raises(TypeError, match=rf"filters: '{codec.name}' is not a filter .*{place}= takes it"):
        zarrkit.create_array(store, shape=(4,), dtype="i4", filters=[codec])
    assert store == {}
    # zarr-2 style byte filters (numcodecs checksums) still run before the compressors
    a = zarrkit.create_array(store, shape=(4,), dtype="i4", filters=[numcodecs.Adler32()])
    assert [c.name for c in a.metadata.codecs] == ["bytes", "numcodecs.adler32", "zstd"]


@pytest.mark.parametrize("method", ["create_dataset", "zeros", "ones", "empty", "create"])
def test_a_group_method_names_itself_in_argument_errors_and_warnings(method):
    g = zarrkit.group(zarr_format=2)
    with pytest.raises(TypeError, match=rf"^{method}\(\) got an unexpected keyword argument 'typo'"):
        getattr(g, method)("x", shape=3, typo=1)
    assert "x" not in g
    with pytest.warns(UserWarning, match=rf"^{method}\(\): ignoring keyword argument 'fletcher32'"):
        getattr(g, method)("y", shape=3, fletcher32=True)
