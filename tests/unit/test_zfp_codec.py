"""The registry's ``zfp`` codec: headerless zfp streams, modes, the specification's integer
promotion, and errors naming the array."""

from __future__ import annotations

import json

import numpy as np
import pytest

import zarrkit
from zarrkit.codecs import ZfpCodec
from zarrkit.errors import ChunkDecodeError, MetadataError

zfpy = pytest.importorskip("zfpy")

MODES = [
    ({"mode": "reversible"}, {}),
    ({"mode": "fixed_rate", "rate": 12.0}, {"rate": 12.0}),
    ({"mode": "fixed_precision", "precision": 14}, {"precision": 14}),
    ({"mode": "fixed_accuracy", "tolerance": 0.01}, {"tolerance": 0.01}),
]


def _array(store, data, chunks, config, **kw):
    z = zarrkit.create_array(store=store, shape=data.shape, chunks=chunks, dtype=data.dtype,
                             serializer={"name": "zfp", "configuration": config}, compressors=None, **kw)
    z[...] = data
    return z


def _promoted(values: np.ndarray) -> np.ndarray:
    """The specification's promotion to int32, element by element with Python integers."""
    bits = 8 * values.dtype.itemsize
    signed = values.dtype.kind == "i"
    out = [((int(v) if signed else int(v) - (1 << (bits - 1))) << (31 - bits)) for v in values.ravel()]
    return np.array(out, dtype=np.int32).reshape(values.shape)


@pytest.mark.parametrize("config,keywords", MODES, ids=[m[0]["mode"] for m in MODES])
@pytest.mark.parametrize("shape,chunks", [((9,), (4,)), ((10, 12), (4, 5)), ((6, 7, 5), (3, 4, 5)),
                                          ((3, 4, 5, 6), (2, 3, 4, 5))])
def test_chunks_are_the_zfp_library_stream_without_header(config, keywords, shape, chunks):
    rng = np.random.default_rng(1)
    data = rng.normal(size=shape).astype("f8")
    store: dict = {}
    z = _array(store, data, chunks, config)
    assert json.loads(store["zarr.json"])["codecs"] == [{"name": "zfp", "configuration": config}]
    first = data[tuple(slice(0, c) for c in chunks)]
    key = "c/" + "/".join("0" * len(shape))
    assert store[key] == zfpy.compress_numpy(np.ascontiguousarray(first), write_header=False, **keywords)
    back = z[...]
    if config["mode"] == "reversible":
        np.testing.assert_array_equal(back, data)
    elif config["mode"] == "fixed_accuracy":
        assert np.abs(back - data).max() <= config["tolerance"]
    else:
        assert np.abs(back - data).max() < 0.05
    # a stream the library wrote is read back as the library reads it
    assert np.array_equal(zarrkit.open_array(store, mode="r")[...], back)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16"])
def test_small_integers_are_promoted_as_the_specification_says(dtype):
    info = np.iinfo(dtype)
    data = np.linspace(info.min, info.max, 64).astype(dtype).reshape(8, 8)
    store: dict = {}
    z = _array(store, data, (8, 8), {"mode": "reversible"})
    assert store["c/0/0"] == zfpy.compress_numpy(_promoted(data), write_header=False)
    np.testing.assert_array_equal(z[...], data)
    # lossy modes decode into range (demotion clamps)
    lossy = _array({}, data, (8, 8), {"mode": "fixed_precision", "precision": 6})[...]
    assert lossy.dtype == data.dtype and np.abs(lossy.astype(int) - data.astype(int)).max() < (info.max - info.min) / 8


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint32", "uint64", "float16", "float32", "float64"])
def test_reversible_round_trip(dtype):
    rng = np.random.default_rng(2)
    if np.dtype(dtype).kind == "f":
        data = rng.normal(size=(13, 11)).astype(dtype)
    else:
        top = min(np.iinfo(dtype).max, 2**31 - 1)
        data = rng.integers(0, top, size=(13, 11)).astype(dtype)
    np.testing.assert_array_equal(_array({}, data, (5, 4), {"mode": "reversible"})[...], data)


def test_unsigned_past_the_signed_range_is_clamped():
    data = np.array([0, 7, 2**31 - 1, 2**31, 2**32 - 1], dtype="u4")
    back = _array({}, data, (5,), {"mode": "reversible"})[...]
    np.testing.assert_array_equal(back, [0, 7, 2**31 - 1, 2**31 - 1, 2**31 - 1])


def test_bfloat16_through_float32():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    data = np.linspace(-3, 3, 40).astype(ml_dtypes.bfloat16).reshape(5, 8)
    store: dict = {}
    z = _array(store, data, (5, 8), {"mode": "reversible"})
    assert store["c/0/0"] == zfpy.compress_numpy(data.astype("f4"), write_header=False)
    np.testing.assert_array_equal(z[...], data)


def test_zero_dimensional_and_sharded():
    store: dict = {}
    z = _array(store, np.array(2.5), (), {"mode": "reversible"})
    assert z[()] == 2.5
    data = np.arange(24 * 20, dtype="f4").reshape(24, 20)
    s = zarrkit.create_array(store={}, shape=data.shape, chunks=(4, 5), shards=(12, 10), dtype="f4",
                             serializer=ZfpCodec("fixed_rate", rate=16.0), compressors=None)
    s[...] = data
    assert np.abs(s[...] - data).max() < 1e-2 * data.max()
    np.testing.assert_array_equal(s[5:9, 3:17], s[...][5:9, 3:17])


def test_codec_object_and_configuration():
    codec = ZfpCodec("fixed_precision", precision=10)
    assert codec.to_json() == {"name": "zfp", "configuration": {"mode": "fixed_precision", "precision": 10}}
    for bad in [dict(mode="fast"), dict(mode="fixed_rate"), dict(mode="fixed_rate", rate=-1.0),
                dict(mode="reversible", rate=2.0), dict(mode="fixed_precision", precision=2.5),
                dict(mode="fixed_accuracy", tolerance=float("nan")), dict(mode="fixed_precision", precision=10**30),
                dict(mode="fixed_rate", rate=1e300)]:
        with pytest.raises(MetadataError, match="zfp"):
            ZfpCodec(**bad)


@pytest.mark.parametrize("config,dtype,shape,match", [
    ({"mode": "fixed_accuracy", "tolerance": 0.5}, "i4", (4,), "floating-point"),
    ({"mode": "reversible"}, "c8", (4,), "not supported"),
    ({"mode": "reversible"}, "f4", (1, 1, 1, 1, 2), "dimensions"),
    ({"mode": "expert", "minbits": 1, "maxbits": 64, "maxprec": 32, "minexp": -1074}, "f8", (4,), "expert"),
])
def test_unusable_settings_are_refused_naming_the_array(tmp_path, config, dtype, shape, match):
    with pytest.raises(ValueError, match=match):
        zarrkit.create_array(store=str(tmp_path / "new"), shape=shape, dtype=dtype,
                             serializer={"name": "zfp", "configuration": config}, compressors=None)
    assert not (tmp_path / "new" / "zarr.json").exists()
    # a document written elsewhere with such settings is refused when opened, naming it
    doc = {"zarr_format": 3, "node_type": "array", "shape": list(shape), "data_type": np.dtype(dtype).name,
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(shape)}},
           "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
           "codecs": [{"name": "zfp", "configuration": config}]}
    if np.dtype(dtype).kind == "c":
        doc["fill_value"] = [0.0, 0.0]
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "zarr.json").write_text(json.dumps(doc))
    with pytest.raises(MetadataError, match=match) as info:
        zarrkit.open_array(str(tmp_path / "old"), mode="r")[...]
    assert "zarr.json" in str(info.value)


@pytest.mark.parametrize("length", [0, 2, 23, 40])
def test_fixed_rate_chunk_of_the_wrong_size_names_its_key(length):
    store: dict = {}
    _array(store, np.ones((8, 8)), (8, 8), {"mode": "fixed_rate", "rate": 4.0})
    assert len(store["c/0/0"]) == 32  # 4 blocks of 16 values at 4 bits
    store["c/0/0"] = bytes(range(length))
    with pytest.raises(ChunkDecodeError) as info:
        zarrkit.open_array(store, mode="r")[...]
    assert "c/0/0" in str(info.value)


@pytest.mark.parametrize("dtype", ["f4", "f8", "i4", "i8"])
def test_truncated_or_oversized_streams_are_read_safely(dtype):
    rng = np.random.default_rng(3)
    data = rng.integers(0, 2**8, size=(7, 9, 5)).astype(dtype)
    store: dict = {}
    _array(store, data, (7, 9, 5), {"mode": "reversible"})
    whole = store["c/0/0/0"]
    for cut in (0, 8, len(whole) // 2, len(whole) - 8):
        store["c/0/0/0"] = whole[:cut]  # zfp cannot tell: the values decoded are garbage
        back = zarrkit.open_array(store, mode="r")[...]
        assert back.shape == data.shape and back.dtype == data.dtype
    # more than any stream of the chunk's shape can take (one block of 4x4x4 values: at most
    # 64 values x 64 bits and a few bits more)
    store = {}
    _array(store, data[:4, :4, :4], (4, 4, 4), {"mode": "reversible"})
    store["c/0/0/0"] += bytes(600)
    with pytest.raises(ChunkDecodeError, match="at most"):
        zarrkit.open_array(store, mode="r")[...]


@pytest.mark.parametrize("dtype,shape,rate,ok", [
    ("f4", (8,), 2.0, False), ("f4", (8,), 2.25, True), ("f8", (8, 8), 0.5, False), ("f8", (8, 8), 0.75, True),
    ("f4", (4, 4, 4), 0.125, False), ("f4", (4, 4, 4), 0.15, True), ("i4", (8,), 0.1, False), ("i8", (8,), 0.25, True),
])
def test_rates_too_low_for_the_type_are_refused(dtype, shape, rate, ok):
    """Below a float's sign and exponent bits per block, zfp would write past its buffer."""
    data = np.arange(np.prod(shape)).reshape(shape).astype(dtype)
    if ok:
        back = _array({}, data, shape, {"mode": "fixed_rate", "rate": rate})[...]
        assert back.shape == shape
    else:
        with pytest.raises(ValueError, match="too low"):
            _array({}, data, shape, {"mode": "fixed_rate", "rate": rate})


def _numcodecs_zfpy(fmt: int, store: dict):
    numcodecs = pytest.importorskip("numcodecs")
    if fmt == 3:
        z = zarrkit.create_array(store=store, shape=(8, 8), chunks=(4, 4), dtype="f8", compressors=None,
                                 serializer={"name": "numcodecs.zfpy", "configuration": {"mode": 2, "rate": 16}})
    else:
        z = zarrkit.create(store=store, shape=(8, 8), chunks=(4, 4), dtype="f8", zarr_format=2,
                           compressor=numcodecs.ZFPY(mode=2, rate=16))
    z[...] = np.arange(64.0).reshape(8, 8)
    return "c/0/0" if fmt == 3 else "0.0"


@pytest.mark.parametrize("fmt", [2, 3])
def test_numcodecs_zfpy_frames_are_checked_before_zfp_reads_them(fmt):
    """numcodecs.zfpy frames carry zfp's header: the shape it declares is checked against the
    chunk before anything is allocated, and a cut frame is never read past its end."""
    store: dict = {}
    key = _numcodecs_zfpy(fmt, store)
    good = store[key]
    np.testing.assert_array_equal(zarrkit.open_array(store, mode="r")[...], np.arange(64.0).reshape(8, 8))
    cases = {
        "declares 32000000 bytes": zfpy.compress_numpy(np.zeros((2000, 2000)), rate=16),
        "unreadable zfp header": b"",
        "at most": good + bytes(4096),
    }
    for match, frame in cases.items():
        store[key] = frame
        with pytest.raises(ChunkDecodeError, match=match) as info:
            zarrkit.open_array(store, mode="r")[...]
        assert key in str(info.value)
    for cut in range(24, len(good), 8):  # past the header, cut short: read from a zero-filled frame
        store[key] = good[:cut]
        assert zarrkit.open_array(store, mode="r")[:4, :4].shape == (4, 4)
