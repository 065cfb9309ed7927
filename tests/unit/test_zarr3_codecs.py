"""zarr-python 3's codec classes: constructors, settings given the old enum way, pickling,
sharding's write order and index location, the ``numcodecs.*`` classes and the registry."""

from __future__ import annotations

import enum
import pickle
import warnings

import numpy as np
import pytest

import zarrkit
from zarrkit.codecs import (
    BloscCodec,
    BytesCodec,
    Crc32cCodec,
    GzipCodec,
    ShardingCodec,
    TransposeCodec,
)
from zarrkit.codecs import numcodecs as nc
from zarrkit.codecs.blosc import BLOSC_CNAME, BLOSC_SHUFFLE, BloscCname, BloscShuffle
from zarrkit.codecs.bytes import ENDIAN, Endian
from zarrkit.codecs.registry import get_codec_class, get_numcodec, parse_v3_codec, register_codec
from zarrkit.codecs.sharding import (
    INDEX_LOCATION,
    SUBCHUNK_WRITE_ORDER,
    ShardingCodecIndexLocation,
    subchunk_order,
)
from zarrkit.errors import MetadataError, UnknownCodecError


# -- settings given as strings, and the old enum classes --------------------------------------
@pytest.mark.parametrize("cls,member", [(BloscShuffle, "shuffle"), (BloscCname, "zstd"), (Endian, "big"),
                                        (ShardingCodecIndexLocation, "start")])
def test_legacy_enum_member_is_its_string_with_a_warning(cls, member):
    with pytest.warns(DeprecationWarning, match=rf"{cls.__name__}\.{member}"):
        assert getattr(cls, member) == member
    with pytest.raises(AttributeError):
        cls.not_a_member


def test_an_enum_member_given_to_a_codec_is_taken_by_value_with_a_warning():
    class Old(enum.Enum):
        big = "big"
        lz4 = "lz4"
        start = "start"

    with pytest.warns(DeprecationWarning, match="Passing an enum to BytesCodec"):
        assert BytesCodec(endian=Old.big).endian == "big"
    with pytest.warns(DeprecationWarning, match="Passing an enum to BloscCodec"):
        assert BloscCodec(cname=Old.lz4).cname == "lz4"
    with pytest.warns(DeprecationWarning, match="Passing an enum to ShardingCodec"):
        assert ShardingCodec(chunk_shape=(1,), index_location=Old.start).index_location == "start"


def test_importing_the_legacy_classes_warns_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from zarrkit.codecs.blosc import BloscShuffle as _  # noqa: F401


@pytest.mark.parametrize("cname", BLOSC_CNAME)
@pytest.mark.parametrize("shuffle", BLOSC_SHUFFLE)
def test_blosc_settings_round_trip_through_documents(cname, shuffle):
    codec = BloscCodec(typesize=2, cname=cname, clevel=3, shuffle=shuffle, blocksize=0)
    assert BloscCodec.from_dict(codec.to_dict()) == codec


def test_blosc_defaults_are_fitted_to_the_data_type():
    codec = BloscCodec()
    assert (codec.cname, codec.typesize, codec.shuffle) == ("zstd", 1, "bitshuffle")
    assert codec._tunable_attrs == {"typesize", "shuffle"}
    a = zarrkit.create_array({}, shape=(8,), chunks=(4,), dtype="u2", compressors=codec)
    blosc = a.metadata.codecs[-1]
    assert (blosc.typesize, blosc.shuffle) == (2, "shuffle")
    a[:] = np.arange(8)
    assert a[:].tolist() == list(range(8))
    fixed = BloscCodec(typesize=4, shuffle="noshuffle")
    assert zarrkit.create_array({}, shape=(8,), chunks=(4,), dtype="u2", compressors=fixed).metadata.codecs[-1] == fixed


@pytest.mark.parametrize("kwargs,argument", [({"cname": "nope"}, "cname"), ({"shuffle": "nope"}, "shuffle"),
                                             ({"clevel": 12}, "clevel"), ({"typesize": 0}, "typesize")])
def test_blosc_refuses_bad_settings_naming_them(kwargs, argument):
    with pytest.raises(ValueError, match=f"{argument} must be"):
        BloscCodec(**kwargs)


@pytest.mark.parametrize("endian", ENDIAN)
def test_bytes_codec_documents(endian):
    codec = BytesCodec(endian=endian)
    assert codec.to_dict() == {"name": "bytes", "configuration": {"endian": endian}}
    assert BytesCodec.from_dict(codec.to_dict()) == codec
    assert BytesCodec.from_dict({"name": "bytes"}).endian is None
    with pytest.raises(ValueError, match="endian must be one of"):
        BytesCodec(endian="north")


# -- sharding ------------------------------------------------------------------------------
@pytest.mark.parametrize("order", SUBCHUNK_WRITE_ORDER)
def test_shards_are_written_in_the_codec_s_subchunk_order(order):
    codec = ShardingCodec(chunk_shape=(2, 2), subchunk_write_order=order)
    store: dict = {}
    a = zarrkit.create_array(store, shape=(6, 4), chunks=(6, 4), dtype="u1", serializer=codec,
                             compressors=None, fill_value=0)
    a[:] = np.arange(1, 25, dtype="u1").reshape(6, 4)
    raw = store["c/0/0"]
    index = np.frombuffer(raw[-(3 * 2 * 16 + 4):-4], dtype="<u8").reshape(3, 2, 2)
    by_offset = sorted(np.ndindex(3, 2), key=lambda c: int(index[c][0]))
    assert by_offset == codec._subchunk_order_iter((3, 2))
    assert by_offset == subchunk_order(np.ndindex(3, 2), (3, 2), order)
    np.testing.assert_array_equal(a[:], np.arange(1, 25).reshape(6, 4))


def test_subchunk_orders():
    coords = list(np.ndindex(2, 2))
    assert subchunk_order(coords, (2, 2), "lexicographic") == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert subchunk_order(coords, (2, 2), "colexicographic") == [(0, 0), (1, 0), (0, 1), (1, 1)]
    assert subchunk_order(coords, (2, 2), "morton") == [(0, 0), (1, 0), (0, 1), (1, 1)]


def test_sharding_codec_pickles_with_its_write_order():
    codec = ShardingCodec(chunk_shape=(8, 8), subchunk_write_order="colexicographic")
    restored = pickle.loads(pickle.dumps(codec))
    assert restored == codec and restored.subchunk_write_order == "colexicographic"
    assert restored != ShardingCodec(chunk_shape=(8, 8))
    assert "subchunk_write_order" not in codec.to_dict()["configuration"]


@pytest.mark.parametrize("location", INDEX_LOCATION)
def test_shards_dict_gives_the_index_location(location):
    store: dict = {}
    a = zarrkit.create_array(store, shape=(8,), chunks=(2,), shards={"shape": (4,), "index_location": location},
                             dtype="u1", compressors=None)
    assert a.metadata.codecs[0].index_location == location
    a[:] = np.arange(1, 9)
    first = bytes(store["c/0"])
    # the index (4 chunks x 16 bytes + crc32c) is at the start or at the end
    assert (first[:2] == b"\x01\x02") == (location == "end")
    np.testing.assert_array_equal(a[:], np.arange(1, 9))
    with pytest.raises(TypeError, match="shards"):
        zarrkit.create_array({}, shape=(8,), chunks=(2,), shards={"shape": (4,), "other": 1}, dtype="u1")


@pytest.mark.parametrize("chunk_shape", [(0, 5), (False, 5), [0], 0])
def test_sharding_codec_refuses_empty_inner_chunks(chunk_shape):
    with pytest.raises(ValueError, match=r"Dimension \d: chunk edge length must be >= 1"):
        ShardingCodec(chunk_shape=chunk_shape)


def test_sharding_codec_arguments():
    with pytest.raises(ValueError, match="index_location must be one of"):
        ShardingCodec(chunk_shape=(1,), index_location="middle")
    with pytest.raises(ValueError, match="subchunk_write_order must be one of"):
        ShardingCodec(chunk_shape=(1,), subchunk_write_order="random")
    for compressor in (GzipCodec(), BloscCodec()):
        with pytest.raises(ValueError, match="must produce a fixed-size encoding"):
            ShardingCodec(chunk_shape=(2,), index_codecs=(BytesCodec(), compressor))
    # fixed-size index chains, a numcodecs checksum included
    for index_codecs in [(TransposeCodec(order=(1, 0)), BytesCodec(), Crc32cCodec()), (BytesCodec(), nc.CRC32())]:
        a = zarrkit.create_array({}, shape=(16,), chunks=(8,), dtype="u2", compressors=None,
                                 serializer=ShardingCodec(chunk_shape=(2,), index_codecs=index_codecs))
        a[:] = np.arange(16)
        np.testing.assert_array_equal(a[:], np.arange(16))
    # codecs given as documents
    codec = ShardingCodec(chunk_shape=(2,), codecs=[{"name": "bytes", "configuration": {"endian": "big"}}])
    assert codec.codecs == (BytesCodec(endian="big"),)


def test_sharding_shape_mismatches_name_the_dimension():
    with pytest.raises(ValueError, match="Chunk edge length 16 in dimension 0 is not divisible by the shard's inner chunk size 9"):
        zarrkit.create_array({}, shape=(16, 16), chunks=(16, 16), dtype="u1",
                             serializer=ShardingCodec(chunk_shape=(9, 9)))
    with pytest.raises(ValueError, match="same number of dimensions"):
        zarrkit.create_array({}, shape=(6, 20), chunks=(6, 20), dtype="u1",
                             serializer=ShardingCodec(chunk_shape=(6, 20), codecs=[ShardingCodec(chunk_shape=(3, 2, 1))]))


@pytest.mark.parametrize("location", INDEX_LOCATION)
@pytest.mark.parametrize("stored", [b"", b"abc"])
def test_a_shard_shorter_than_its_index_is_refused(location, stored):
    store: dict = {}
    a = zarrkit.create_array(store, shape=(8,), chunks=(2,), shards={"shape": (4,), "index_location": location},
                             dtype="i4", compressors=None, fill_value=-1)
    store["c/0"] = stored
    for op in (lambda: a[0:4], lambda: a[0:2], lambda: a.__setitem__(slice(0, 2), 7)):
        with pytest.raises(ValueError, match="too short to hold its index"):
            op()


# -- numcodecs.* -------------------------------------------------------------------------------
def test_numcodecs_classes():
    assert "Zlib" in nc.__all__ and "PCodec" in nc.__all__
    codec = nc.LZ4(level=5)
    assert repr(codec) == "LZ4(codec_name='numcodecs.lz4', codec_config={'level': 5})"
    assert codec.to_dict() == {"name": "numcodecs.lz4", "configuration": {"level": 5}}
    assert nc.LZ4.codec_name == "numcodecs.lz4" and "See [numcodecs." in nc.LZ4.__doc__
    assert nc.LZ4.from_dict(codec.to_dict()) == codec
    for name in nc.__all__:
        cls = getattr(nc, name)
        made = cls()  # made lazily: settings the array decides may be missing
        assert pickle.loads(pickle.dumps(made)) == made
        assert get_codec_class(cls.codec_name) is cls
    assert isinstance(parse_v3_codec({"name": "numcodecs.zlib", "configuration": {"level": 1}}), nc.Zlib)


def test_numcodecs_filters_take_missing_settings_from_the_array():
    data = np.linspace(0, 10, 64, dtype="f4")
    a = zarrkit.create_array({}, shape=data.shape, chunks=(64,), dtype=data.dtype, fill_value=0,
                             filters=[nc.FixedScaleOffset(offset=0, scale=10)])
    assert a.metadata.codecs[0].to_dict()["configuration"]["dtype"] == "float32"
    a[:] = data
    np.testing.assert_allclose(a[:], data, atol=0.1)
    b = zarrkit.create_array({}, shape=data.shape, chunks=(64,), dtype=data.dtype, fill_value=0,
                             filters=[nc.BitRound(keepbits=3)])
    b[:] = data
    np.testing.assert_allclose(b[:], data, atol=0.5)
    with pytest.raises(ValueError, match="requires bool dtype"):
        zarrkit.create_array({}, shape=(8,), chunks=(8,), dtype="u4", filters=[nc.PackBits()])


def test_numcodecs_checksums_have_a_fixed_size():
    assert nc.CRC32().encoded_size(10) == 14
    assert nc.Zlib().encoded_size(10) is None


def test_registry_names():
    assert get_codec_class("blosc") is BloscCodec
    with pytest.raises(UnknownCodecError):
        get_codec_class("no-such-codec")
    assert get_numcodec({"id": "gzip", "level": 2}).level == 2
    assert nc.is_numcodec(get_numcodec({"id": "zlib"})) and not nc.is_numcodec(nc.Zlib())

    class Twice(TransposeCodec):
        name = "test.twice"

    register_codec("test.twice", Twice)
    assert get_codec_class("test.twice") is Twice
    assert isinstance(parse_v3_codec({"name": "test.twice", "configuration": {"order": [0]}}), Twice)
    with pytest.raises(TypeError, match="codec_cls"):
        register_codec("test.bad", int)


def test_a_section_of_settings_given_as_a_dict():
    with zarrkit.config.set({"codecs": {"blosc": "zarr.codecs.blosc.BloscCodec"}}):
        assert zarrkit.config.get("codecs.blosc") == "zarr.codecs.blosc.BloscCodec"


# -- cast_value and scale_offset ----------------------------------------------------------------
def test_cast_value_and_scale_offset_classes():
    from zarrkit.metadata.value_codecs import CastValue, ScaleOffset
    from zarrkit.metadata.zdtypes import UInt8

    assert CastValue(data_type=UInt8()).dtype.to_native_dtype() == np.dtype("u1")
    codec = CastValue(data_type="uint8", out_of_range="clamp", scalar_map={"encode": [("NaN", 0)]})
    assert codec.to_dict()["configuration"]["scalar_map"] == {"encode": [("NaN", 0)]}
    assert CastValue.from_dict(codec.to_dict()) == codec
    with pytest.raises(ValueError, match="Invalid target data type"):
        CastValue(data_type="complex64")
    assert ScaleOffset().to_dict() == {"name": "scale_offset"}
    assert ScaleOffset(offset=5, scale=0.1).to_dict() == {"name": "scale_offset",
                                                          "configuration": {"offset": 5, "scale": 0.1}}
    assert (ScaleOffset().offset, ScaleOffset().scale) == (0, 1)
    with pytest.raises(TypeError, match="offset must be a number or string"):
        ScaleOffset(offset=[1, 2])
    with pytest.raises(ValueError, match="scale must be non-zero"):
        zarrkit.create_array({}, shape=(4,), chunks=(4,), dtype="f8", filters=[ScaleOffset(scale=0.0)])
    with pytest.raises(ValueError, match="offset value 1.5 is not representable"):
        zarrkit.create_array({}, shape=(4,), chunks=(4,), dtype="i4", filters=[ScaleOffset(offset=1.5)])
    a = zarrkit.create_array({}, shape=(4,), chunks=(4,), dtype="f8", compressors=None, fill_value=0,
                             filters=[ScaleOffset(offset=0, scale=10), CastValue(data_type="int16")])
    a[:] = [0.1, 0.2, 0.3, 0.4]
    np.testing.assert_allclose(a[:], [0.1, 0.2, 0.3, 0.4])


def test_scale_offset_decode_of_a_stored_value_that_does_not_divide():
    from zarrkit.metadata.value_codecs import ScaleOffset

    store = zarrkit.storage.MemoryStore()
    a = zarrkit.create_array(store, shape=(3,), chunks=(3,), dtype="i1", compressors=None, fill_value=0,
                             filters=[ScaleOffset(offset=0, scale=2)])
    a[:] = [1, 2, 3]
    assert a[:].tolist() == [1, 2, 3]
    store["c/0"] = np.array([2, 3, 4], dtype="i1").tobytes()  # 3 is not 2 times an int8
    with pytest.raises(ValueError, match=r"not a multiple of scale 2 \(its division leaves a non-zero remainder\)"):
        a[:]


def test_parse_scalar_map():
    from zarrkit.codecs.cast import parse_scalar_map

    assert parse_scalar_map({"encode": [("NaN", 0)], "decode": [(0, "NaN")]}) == {
        "encode": {"NaN": 0}, "decode": {0: "NaN"}}
    assert parse_scalar_map({"encode": {"NaN": 0}}) == {"encode": {"NaN": 0}}
    with pytest.raises(MetadataError):
        parse_scalar_map({"other": []})


def test_codecs_evolve_from_a_zarr3_array_spec():
    from types import SimpleNamespace

    from zarrkit.metadata.zdtypes import UInt16

    spec = SimpleNamespace(shape=(4,), dtype=UInt16(), fill_value=0)
    evolved = BloscCodec().evolve_from_array_spec(spec)
    assert (evolved.typesize, evolved.shuffle) == (2, "shuffle")
    spec8 = SimpleNamespace(shape=(4,), dtype=np.dtype("u1"), fill_value=0)
    assert BloscCodec(shuffle="noshuffle").evolve_from_array_spec(spec8).shuffle == "noshuffle"
