"""Creation as zarr-python 2 documents it: subarray and structured dtypes, h5py's keywords,
``read_only`` arrays made from data, overwriting an array that sits above a new node, ragged
object rows, and the numcodecs view of a v3 array's codecs."""

from __future__ import annotations

import json
import warnings

import numcodecs
import numpy as np
import pytest

import zarrkit as zarr
from zarrkit.errors import ContainsArrayError, UnsupportedCodecError
from zarrkit.storage import MemoryStore

FORMATS = [2, 3]


@pytest.mark.parametrize("fmt", FORMATS)
def test_subarray_dtype_extends_the_shape(fmt):
    z = zarr.zeros(10, chunks=5, dtype=("<f4", (2, 2)), zarr_format=fmt)
    expected = np.zeros(10, dtype=("<f4", (2, 2)))
    assert z.shape == expected.shape == (10, 2, 2)
    assert z.dtype == expected.dtype == np.dtype("<f4")
    z[3] = np.arange(4).reshape(2, 2)
    assert z[3].tolist() == [[0, 1], [2, 3]]


@pytest.mark.parametrize("fmt", [2])
@pytest.mark.parametrize("fill", [b"", b"ab", np.void(b"abc\x07\x00\x00\x00")])
def test_structured_fill_value_from_raw_bytes(fmt, fill):
    dt = np.dtype([("foo", "S3"), ("bar", "<i4")])
    z = zarr.create(3, dtype=dt, fill_value=fill, zarr_format=fmt)
    raw = fill.tobytes() if isinstance(fill, np.void) else fill
    expected = np.frombuffer(raw.ljust(dt.itemsize, b"\0"), dtype=dt)[0]
    assert z.fill_value == expected
    assert (z[:] == expected).all()
    # and it survives a round trip through the metadata
    again = zarr.open_array(z.store, mode="r")
    assert again.fill_value == expected


def test_structured_fill_value_longer_than_an_element_is_refused():
    with pytest.raises(ValueError, match="fill_value"):
        zarr.create(3, dtype=[("a", "<i2")], fill_value=b"toolong", zarr_format=2)


@pytest.mark.parametrize("fmt", FORMATS)
def test_zero_d_cdata_shape(fmt):
    z = zarr.create((), dtype="i4", zarr_format=fmt)
    assert z.cdata_shape == (1,)
    assert z.nchunks == 1
    z[...] = 7
    assert z.nchunks_initialized == 1 and int(z[...]) == 7


def test_ragged_rows_in_a_vlen_array():
    z = zarr.empty(4, dtype=object, object_codec=numcodecs.VLenArray(int), zarr_format=2)
    z[0] = np.array([1, 2])
    z[1] = np.array([1, 2, 3])
    z[2:4] = [np.array([7, 8]), np.array([5, 6])]  # same lengths: still one row per element
    got = z[:]
    assert [list(r) for r in got] == [[1, 2], [1, 2, 3], [7, 8], [5, 6]]


def test_objects_without_a_v3_data_type_are_refused_by_name():
    with pytest.raises(UnsupportedCodecError, match="object_codec"):
        zarr.empty(4, dtype=object, object_codec=numcodecs.VLenArray(int), zarr_format=3)


@pytest.mark.parametrize("fmt", FORMATS)
def test_h5py_fillvalue_and_compression_keywords(fmt):
    g = zarr.group(zarr_format=fmt)
    d = g.create_dataset("x", shape=100, chunks=10, fillvalue=42)
    assert d.fill_value == 42 and d[0] == 42
    with pytest.raises(ValueError, match="fillvalue"):
        g.create_dataset("y", shape=10, fillvalue=1, fill_value=2)
    z = zarr.create(100, compression="zlib", compression_opts=9, zarr_format=fmt)
    assert z.compressor == numcodecs.Zlib(9)
    with pytest.warns(UserWarning, match="ignored"):
        z = zarr.create(100, compressor=numcodecs.Zlib(3), compression="bz2", zarr_format=fmt)
    assert z.compressor == numcodecs.Zlib(3)


@pytest.mark.parametrize("fmt", FORMATS)
def test_array_from_data_read_only(fmt):
    a = np.arange(100)
    z = zarr.array(a, read_only=True, zarr_format=fmt)
    assert z.read_only and (z[:] == a).all()
    with pytest.raises(PermissionError):
        z[:] = 0


@pytest.mark.parametrize("fmt", FORMATS)
def test_overwrite_replaces_an_array_above_the_new_node(fmt):
    store = MemoryStore()
    g = zarr.group(store, zarr_format=fmt)
    g.zeros("foo", shape=100, chunks=10)[:] = 1
    with pytest.raises(ContainsArrayError):
        g.zeros("foo/bar", shape=4)
    d = g.zeros("foo/bar", shape=400, chunks=40, overwrite=True)
    assert d.shape == (400,)
    assert isinstance(g["foo"], zarr.Group)
    # nothing of the old array is left behind: no chunk directly below foo
    old_chunks = [k for k in store if k.startswith("foo/c/") or (k.count("/") == 1 and k[4:].isdigit())]
    assert old_chunks == []
    assert list(g["foo"]) == ["bar"]


def test_v3_codecs_seen_through_numcodecs():
    z = zarr.zeros(10, compressor=numcodecs.Zstd(3), zarr_format=3)
    assert z.compressor == numcodecs.Zstd(3)
    assert z.compressor.codec_id == "zstd"
    assert z.compressor.decode(z.compressor.encode(b"abc")) == b"abc"
    # the array→array codecs, as numcodecs objects where there is one (a byte filter such as
    # adler32 runs among the compressors)
    z = zarr.array(np.arange(10), filters=[zarr.codecs.TransposeCodec((0,)), numcodecs.Delta("<i8"),
                                           numcodecs.Adler32()], zarr_format=3)
    assert z.filters == (zarr.codecs.TransposeCodec((0,)), numcodecs.Delta("<i8"))
    assert (z[:] == np.arange(10)).all()


def test_categorize_and_checksum_filters_under_v3():
    data = np.array(["a", "b", "a", "c"], dtype=object)
    z = zarr.array(data, filters=[numcodecs.Categorize(["a", "b", "c"], dtype=object)],
                   zarr_format=3)
    assert list(z[:]) == list(data)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        z = zarr.array(np.arange(10), filters=[numcodecs.Adler32()], zarr_format=3)
    assert (zarr.open_array(z.store, mode="r")[:] == np.arange(10)).all()


@pytest.mark.parametrize("fn, value", [(zarr.zeros, 0), (zarr.ones, 1)])
def test_zeros_and_ones_refuse_another_fill_value(fn, value):
    with pytest.raises(TypeError, match="fill_value='abc'"):
        fn(5, fill_value="abc")
    with pytest.raises(TypeError, match="fill_value=7"):
        fn(5, fill_value=7)
    assert fn(5, fill_value=value)[0] == value  # the same value is no contradiction
    g = zarr.group()
    with pytest.raises(TypeError):
        getattr(g, fn.__name__)("x", shape=5, fill_value=7)


def test_full_and_empty_honour_fill_value():
    with pytest.raises(ValueError, match="fill_value 'abc'"):
        zarr.full(5, "abc")
    assert zarr.full(5, 3, dtype="i2")[4] == 3
    assert zarr.empty(5, dtype="i2", fill_value=9)[0] == 9
    assert zarr.zeros(5, 2, "i2").chunks == (2,)  # chunks and dtype positional, as in create


def test_like_functions_with_plain_and_legacy_array_likes():
    assert zarr.empty_like([0] * 100, shape=200).shape == (200,)
    with pytest.raises(TypeError, match="shape"):
        zarr.empty_like([0] * 100)

    class ChunkedRows:  # an array-like chunked along its first dimension (bcolz-style)
        def __init__(self, a, n):
            self.shape, self.dtype, self.chunklen = a.shape, a.dtype, n

    z = zarr.zeros_like(ChunkedRows(np.arange(1000).reshape(100, 10), 10))
    assert z.chunks == (10, 10)
    with pytest.raises(TypeError, match="fill_value"):
        zarr.full_like(np.zeros(3))
    assert zarr.full_like(np.zeros(3), fill_value=4)[0] == 4


def test_h5py_only_options_are_ignored_with_a_warning_and_typos_are_errors():
    g = zarr.group()
    with pytest.warns(UserWarning, match="ignoring keyword argument 'shuffle'"):
        g.create_dataset("y", shape=10, chunks=5, shuffle=True)
    with pytest.raises(TypeError, match="chuncks"):
        g.create_dataset("z", shape=10, chuncks=5)


def test_open_array_exclusive_modes_refuse_existing_data_first(tmp_path):
    path = str(tmp_path / "a.zarr")
    zarr.open_array(path, mode="w-", shape=10)
    for mode in ("w-", "x"):
        with pytest.raises(zarr.errors.ContainsArrayError):
            zarr.open_array(path, mode=mode)


@pytest.mark.parametrize("dtype", ["M8", "m8"])
def test_datetimes_without_a_unit_are_refused(dtype):
    with pytest.raises(ValueError, match="unit"):
        zarr.create(10, dtype=dtype, zarr_format=2)


@pytest.mark.parametrize("dtype, codec", [("array:i4", numcodecs.VLenArray("<i4")),
                                          ("str", numcodecs.VLenUTF8()),
                                          ("bytes", numcodecs.VLenBytes())])
def test_object_dtypes_named_by_string(dtype, codec):
    z = zarr.create(4, dtype=dtype, zarr_format=2)
    assert z.dtype == object and z.filters == [codec]
    with pytest.raises(TypeError, match="element dtype"):
        zarr.create(4, dtype="array", zarr_format=2)


def test_object_codec_given_as_first_filter_still_works_with_a_future_warning():
    with pytest.warns(FutureWarning, match="object_codec="):
        z = zarr.create(10, chunks=3, dtype=object, filters=[numcodecs.MsgPack()], zarr_format=2)
    z[3] = [2, 4, "baz"]
    z[4] = {"a": 1}
    assert z[3] == [2, 4, "baz"] and z[4] == {"a": 1}
    with pytest.raises(ValueError, match="object_codec"):
        zarr.create(10, dtype=object, zarr_format=2)


def test_object_codec_for_a_plain_dtype_is_ignored_with_a_warning():
    with pytest.warns(UserWarning, match="only needed for object arrays"):
        z = zarr.create(10, dtype="i4", object_codec=numcodecs.JSON(), zarr_format=2)
    assert z.filters is None


def test_structured_dtypes_with_object_fields_are_refused_by_name():
    with pytest.raises(zarr.errors.UnsupportedDtypeError, match="object fields"):
        zarr.create(10, dtype=[("x", float), ("y", object)], object_codec=numcodecs.Pickle(),
                    zarr_format=2)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("order", ["C", "F"])
def test_reads_come_back_in_the_arrays_order(fmt, order):
    a = np.arange(10000).reshape(100, 100)
    # v2 stores the order; v3 none: its reads return config={'order': ...}'s
    how = {"order": order} if fmt == 2 else {"config": {"order": order}}
    z = zarr.create(a.shape, chunks=(10, 10), dtype=a.dtype, zarr_format=fmt, **how)
    z[:] = a
    got = z[:]
    assert got.flags.f_contiguous if order == "F" else got.flags.c_contiguous
    np.testing.assert_array_equal(got, a)
    np.testing.assert_array_equal(z[5:37, 3:91], a[5:37, 3:91])


def test_whole_float_shapes_are_taken_with_a_warning_others_refused():
    with pytest.warns(UserWarning, match="float"):
        z = zarr.create((3.0,), chunks=(1.0,), dtype="u1")
    assert z.shape == (3,) and z.chunks == (1,)
    with pytest.raises(TypeError, match=r"shape: expected an int or a tuple of ints, got \(1.5,\)"):
        zarr.create((1.5,))


def test_array_with_dtype_none_keeps_the_datas_dtype():
    a = np.arange(100, dtype="i4")
    z = zarr.array(a, dtype=None)
    assert z.dtype == a.dtype and (z[:] == a).all()


BYTE_CODECS = [numcodecs.Adler32(), numcodecs.CRC32(), numcodecs.Fletcher32(),
               numcodecs.JenkinsLookup3(), numcodecs.Base64(), numcodecs.Zlib(1), numcodecs.BZ2(1),
               numcodecs.LZMA(), numcodecs.GZip(1), numcodecs.LZ4(), numcodecs.Zstd(1),
               numcodecs.Shuffle(8), numcodecs.Blosc()]


@pytest.mark.parametrize("codec", BYTE_CODECS, ids=lambda c: c.codec_id)
def test_numcodecs_byte_codecs_under_v3_as_compressor_and_as_filter(codec):
    data = np.arange(1000, dtype="<i8")
    for kwargs in ({"compressor": codec}, {"filters": [numcodecs.Delta("<i8"), codec]}):
        z = zarr.array(data, chunks=300, zarr_format=3, **kwargs)
        again = zarr.open_array(z.store, mode="r")
        np.testing.assert_array_equal(again[:], data)
        names = [c["name"] for c in json.loads(z.store["zarr.json"])["codecs"]]
        # numcodecs' codecs under their numcodecs.* names; the core v3 ones under their own
        assert f"numcodecs.{codec.codec_id}" in names or codec.codec_id in names


@pytest.mark.parametrize("codec", [numcodecs.Delta("<i8"), numcodecs.AsType("<i4", "<i8"),
                                   numcodecs.FixedScaleOffset(0, 1, "<i8", "<i4")],
                         ids=lambda c: c.codec_id)
def test_numcodecs_array_codecs_under_v3_as_filters(codec):
    data = np.arange(1000, dtype="<i8")
    z = zarr.array(data, chunks=300, filters=[codec], zarr_format=3)
    np.testing.assert_array_equal(zarr.open_array(z.store, mode="r")[:], data)
    assert z.filters == (codec,)  # (a v3 array's filters are a tuple, as in zarr-python 3)
