"""Creation arguments that cross the v2/v3 divide: string fill values, codec objects of the
other format, memory order."""

import json

import numcodecs
import numpy as np
import pytest

import zarrkit
import zarrkit.codecs


# -- default fill values of variable-length arrays -------------------------------------------------
@pytest.mark.parametrize("fn", ["create", "zeros", "empty"])
@pytest.mark.parametrize(
    ("kwargs", "data_type", "fill"),
    [
        ({"dtype": str}, "string", ""),
        ({"dtype": object, "object_codec": numcodecs.VLenUTF8()}, "string", ""),
        ({"dtype": bytes}, "bytes", ""),  # base64 of b""
        ({"dtype": object, "object_codec": numcodecs.VLenBytes()}, "bytes", ""),
    ],
)
def test_v3_vlen_arrays_default_to_the_empty_value(fn, kwargs, data_type, fill):
    # what zarr-python 3.4 writes for dtype=str without a fill value: "" (not 0 or "0")
    store = {}
    z = getattr(zarrkit, fn)(shape=(4,), chunks=(2,), store=store, zarr_format=3, **kwargs)
    doc = json.loads(store["zarr.json"])
    assert doc["data_type"] == data_type
    assert doc["fill_value"] == fill
    empty = "" if data_type == "string" else b""
    assert z.fill_value == empty
    assert list(z[:]) == [empty] * 4


def test_v3_string_fill_values_given_are_kept():
    store = {}
    z = zarrkit.create(shape=(3,), chunks=(2,), dtype=str, fill_value="0", store=store, zarr_format=3)
    assert json.loads(store["zarr.json"])["fill_value"] == "0"
    assert list(z[:]) == ["0", "0", "0"]
    z = zarrkit.full((3,), fill_value="n/a", chunks=(2,), dtype=str, store={}, zarr_format=3)
    assert list(z[:]) == ["n/a"] * 3


def test_v3_string_default_fill_read_by_zarr_python(tmp_path):
    zarr = pytest.importorskip("zarr")
    path = tmp_path / "s.zarr"
    z = zarrkit.create(shape=(4,), chunks=(2,), dtype=str, store=str(path), zarr_format=3)
    z[:2] = ["a", "b"]
    a = zarr.open_array(str(path), mode="r")
    assert a.fill_value == ""
    assert list(a[:]) == ["a", "b", "", ""]


# -- v3 codec objects given to v2 arrays -----------------------------------------------------------
@pytest.mark.parametrize(
    ("codec", "expected"),
    [
        (zarrkit.codecs.ZstdCodec(level=3), {"id": "zstd", "level": 3}),
        (zarrkit.codecs.GzipCodec(level=6), {"id": "gzip", "level": 6}),
        (
            zarrkit.codecs.BloscCodec(cname="zstd", clevel=4, shuffle="bitshuffle"),
            {"id": "blosc", "cname": "zstd", "clevel": 4, "shuffle": 2},
        ),
        ({"name": "zstd", "configuration": {"level": 3}}, {"id": "zstd", "level": 3}),
        ({"id": "zlib", "level": 2}, {"id": "zlib", "level": 2}),
    ],
)
def test_v2_compressor_given_as_v3_codec_is_converted(tmp_path, codec, expected):
    path = tmp_path / "a.zarr"
    z = zarrkit.zeros((20,), chunks=(5,), dtype="i4", compressor=codec, store=str(path), zarr_format=2)
    doc = json.loads((path / ".zarray").read_text())
    assert doc["compressor"] == expected
    z[:] = np.arange(20)
    assert isinstance(z.compressor, numcodecs.abc.Codec)
    back = zarrkit.open_array(str(path), mode="r")
    np.testing.assert_array_equal(back[:], np.arange(20))
    # the chunks are what numcodecs' codec makes
    raw = (path / "1").read_bytes()
    np.testing.assert_array_equal(
        np.frombuffer(numcodecs.get_codec(expected).decode(raw), dtype="i4"), np.arange(5, 10)
    )


def test_v2_filters_given_as_v3_codecs_are_converted():
    store = {}
    z = zarrkit.array(
        np.arange(10, dtype="i8"), chunks=5, store=store, zarr_format=2,
        filters=[{"name": "numcodecs.delta", "configuration": {"dtype": "<i8"}}],
        compressor=zarrkit.codecs.ZstdCodec(level=1),
    )
    doc = json.loads(store[".zarray"])
    assert doc["filters"] == [{"id": "delta", "dtype": "<i8", "astype": "<i8"}]
    np.testing.assert_array_equal(z[:], np.arange(10))


@pytest.mark.parametrize(
    ("kwargs", "argument", "name"),
    [
        ({"compressor": zarrkit.codecs.BytesCodec()}, "compressor", "bytes"),
        ({"compressor": zarrkit.codecs.TransposeCodec((0,))}, "compressor", "transpose"),
        ({"compressor": {"name": "sharding_indexed", "configuration": {"chunk_shape": [5]}}}, "compressor", "sharding"),
        ({"compressor": zarrkit.codecs.ZstdCodec(), "filters": [zarrkit.codecs.BytesCodec()]}, "filters", "bytes"),
        ({"compressor": 42}, "compressor", "int"),
    ],
)
def test_v2_codec_without_v2_equivalent_is_refused_at_creation(kwargs, argument, name):
    from zarrkit.errors import UnsupportedCodecError

    store = {}
    with pytest.raises(UnsupportedCodecError) as info:
        zarrkit.zeros((20,), chunks=(5,), store=store, zarr_format=2, **kwargs)
    assert argument in str(info.value) and name in str(info.value)
    assert info.value.argument == argument
    assert isinstance(info.value, TypeError) and isinstance(info.value, ValueError)
    assert store == {}  # nothing written


# -- memory order of v3 arrays -----------------------------------------------------------------------
def test_v3_order_keyword_is_ignored_with_a_warning_and_config_order_is_the_read_order(tmp_path):
    # Zarr v3 metadata has no order: as zarr-python 3, order= is ignored (RuntimeWarning naming
    # config=), nothing transposed is stored, and config={'order': 'F'} is the order reads return
    path = tmp_path / "f.zarr"
    data = np.arange(24, dtype="i4").reshape(4, 6)
    with pytest.warns(RuntimeWarning, match="has no effect for Zarr format 3 arrays") as caught:
        z = zarrkit.create(shape=(4, 6), chunks=(2, 3), dtype="i4", order="F", store=str(path), zarr_format=3)
    assert caught[0].filename == __file__  # the warning names the caller's line
    assert z.order == "C"
    assert [c["name"] for c in json.loads((path / "zarr.json").read_text())["codecs"]] == ["bytes", "zstd"]
    f = zarrkit.create(shape=(4, 6), chunks=(2, 3), dtype="i4", config={"order": "F"}, store={}, zarr_format=3)
    f[:] = data
    assert f.order == "F" and f[:].flags.f_contiguous
    np.testing.assert_array_equal(f[:], data)
    assert "transpose" not in [type(c).__name__.lower() for c in f.metadata.codecs]


@pytest.mark.parametrize("shape", [(6,), (4, 6), (2, 3, 4)])
def test_v3_reverse_transpose_is_a_filter_and_reads_come_in_the_configured_order(tmp_path, shape):
    # a v3 array whose chain begins with the reverse transpose (zarr-2's order 'F' converted):
    # its layout is the codec's business, the order of what reads return the reader's
    path = tmp_path / "f.zarr"
    data = np.arange(np.prod(shape), dtype="i4").reshape(shape)
    reverse = tuple(reversed(range(len(shape))))
    z = zarrkit.create_array(str(path), shape=shape, chunks=tuple(max(1, s // 2) for s in shape), dtype="i4",
                             filters=[zarrkit.codecs.TransposeCodec(reverse)], zarr_format=3)
    z[:] = data
    codecs = json.loads((path / "zarr.json").read_text())["codecs"]
    assert codecs[0] == {"name": "transpose", "configuration": {"order": list(reverse)}}
    back = zarrkit.open_array(str(path), mode="r")
    assert back.order == "C" and back.filters == (zarrkit.codecs.TransposeCodec(reverse),)
    assert back[:].flags["C_CONTIGUOUS"]
    np.testing.assert_array_equal(back[:], data)
    f = zarrkit.open_array(str(path), mode="r", config={"order": "F"})
    assert f.order == "F" and (f[:].flags["F_CONTIGUOUS"] or len(shape) == 1)
    np.testing.assert_array_equal(f[:], data)
    # *_like keeps the transpose (once)
    like = zarrkit.zeros_like(back, store={}, zarr_format=3)
    assert [type(c).__name__ for c in like.metadata.codecs].count("TransposeCodec") == 1
    like[:] = data
    np.testing.assert_array_equal(like[:], data)


def test_a_v2_order_f_source_made_v3_drops_the_order_with_a_warning():
    src = zarrkit.create_array({}, shape=(4,), dtype="i4", order="F", zarr_format=2)
    for make in (lambda: zarrkit.from_array({}, data=src, zarr_format=3),
                 lambda: zarrkit.zeros_like(src, zarr_format=3)):
        with pytest.warns(zarrkit.errors.ZarrUserWarning, match="order='F' of the source Zarr format 2"):
            new = make()
        assert new.order == "C" and new.metadata.zarr_format == 3
    assert zarrkit.from_array({}, data=src).order == "F"  # v2 to v2 keeps it


def test_v3_order_c_and_other_transposes():
    assert zarrkit.zeros((4, 6), chunks=(2, 3), zarr_format=3, store={}).order == "C"
    assert zarrkit.zeros((4, 6), chunks=(2, 3), zarr_format=3, config={"order": "C"}, store={}).order == "C"
    # a transpose that is not the reverse permutation has no zarr-2 order: 'C'
    z = zarrkit.create_array({}, shape=(2, 3, 4), chunks=(2, 3, 4), dtype="i2", zarr_format=3,
                             filters=[zarrkit.codecs.TransposeCodec((1, 0, 2))])
    assert z.order == "C"
    z[:] = np.arange(24).reshape(2, 3, 4)
    np.testing.assert_array_equal(z[:], np.arange(24).reshape(2, 3, 4))


def test_v3_order_f_written_by_zarr_python_with_a_transpose(tmp_path):
    zarr = pytest.importorskip("zarr")
    path = str(tmp_path / "zp.zarr")
    a = zarr.create_array(path, shape=(4, 6), chunks=(2, 3), dtype="f8",
                          filters=[zarr.codecs.TransposeCodec(order=(1, 0))])
    a[:] = np.arange(24.0).reshape(4, 6)
    z = zarrkit.open_array(path, mode="r")
    assert z.order == a.order == "C" and z[:].flags["C_CONTIGUOUS"] == a[:].flags["C_CONTIGUOUS"]
    np.testing.assert_array_equal(z[:], np.arange(24.0).reshape(4, 6))
    # and what zarrkit writes transposed zarr-python reads
    path2 = str(tmp_path / "zk.zarr")
    zarrkit.array(np.arange(24.0).reshape(4, 6), chunks=(2, 3), filters=[zarrkit.codecs.TransposeCodec((1, 0))],
                  store=path2, zarr_format=3)
    np.testing.assert_array_equal(zarr.open_array(path2, mode="r")[:], np.arange(24.0).reshape(4, 6))


@pytest.mark.parametrize(("src", "dst"), [(2, 3), (3, 2)])
def test_order_f_survives_conversion(src, dst):
    store = {}
    zarrkit.array(np.arange(12).reshape(3, 4), chunks=(2, 2), order="F", store=store, zarr_format=2)
    if src == 3:
        zarrkit.convert(store, zarr_format=3)
    zarrkit.convert(store, zarr_format=dst)
    z = zarrkit.open_array(store, mode="r")
    # v2 stores the order; v3 keeps the layout as the reverse transpose, first of its codecs
    if dst == 2:
        assert z.order == "F"
    else:
        assert z.metadata.codecs[0] == zarrkit.codecs.TransposeCodec((1, 0))
    np.testing.assert_array_equal(z[:], np.arange(12).reshape(3, 4))
