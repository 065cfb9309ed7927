"""Zarr v3 interop, both directions, bit for bit: zarrkit ⇄ zarr-python 3.4 ⇄ tensorstore."""

from __future__ import annotations

import json

import google_crc32c
import numpy as np
import pytest

import zarrkit

zarr = pytest.importorskip("zarr")
ts = pytest.importorskip("tensorstore")
from zarr.codecs import (
    BloscCodec,
    BytesCodec,
    Crc32cCodec,
    GzipCodec,
    TransposeCodec,
    ZstdCodec,
)

CORE_DTYPES = [
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128",
]


def sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, size=shape).astype(dt)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)
    if dt.kind == "f":
        a = (rng.standard_normal(shape) * 1000).astype(dt)
        if a.size > 3:
            a.flat[1] = np.nan
            a.flat[2] = np.inf
            a.flat[3] = -0.0
        return a
    if dt.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    raise AssertionError(dtype)


def assert_identical(a, b):
    a = np.asarray(a)
    b = np.asarray(b)
    assert a.shape == b.shape
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    assert a.tobytes() == b.tobytes()


def ts_open(path, **kw):
    spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)}}
    spec.update(kw)
    return ts.open(spec).result()


# -- data types --------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", CORE_DTYPES)
def test_dtypes_zarr_python_to_zarrkit(tmp_path, dtype):
    data = sample((7, 5), dtype)
    z = zarr.create_array(store=str(tmp_path / "a"), shape=data.shape, chunks=(3, 2), dtype=dtype)
    z[:] = data
    k = zarrkit.open_array(str(tmp_path / "a"), mode="r")
    assert k.zarr_format == 3
    assert_identical(k[:], data)


@pytest.mark.parametrize("dtype", CORE_DTYPES)
def test_dtypes_zarrkit_to_zarr_python_and_tensorstore(tmp_path, dtype):
    data = sample((7, 5), dtype)
    k = zarrkit.create_array(str(tmp_path / "a"), shape=data.shape, chunks=(3, 2), dtype=dtype, zarr_format=3)
    k[:] = data
    assert_identical(zarr.open_array(str(tmp_path / "a"), mode="r")[:], data)
    assert_identical(ts_open(tmp_path / "a").read().result(), data)


# -- codecs --------------------------------------------------------------------------------------
CODEC_CASES = {
    "bytes-little": dict(serializer=BytesCodec(endian="little"), compressors=None),
    "bytes-big": dict(serializer=BytesCodec(endian="big"), compressors=None),
    "gzip": dict(compressors=[GzipCodec(level=3)]),
    "zstd": dict(compressors=[ZstdCodec(level=5)]),
    "zstd-checksum": dict(compressors=[ZstdCodec(level=1, checksum=True)]),
    "blosc-lz4-shuffle": dict(compressors=[BloscCodec(cname="lz4", clevel=5, shuffle="shuffle")]),
    "blosc-zstd-bitshuffle": dict(compressors=[BloscCodec(cname="zstd", clevel=3, shuffle="bitshuffle")]),
    "blosc-noshuffle": dict(compressors=[BloscCodec(cname="blosclz", clevel=1, shuffle="noshuffle")]),
    "crc32c": dict(compressors=[Crc32cCodec()]),
    "gzip+crc32c": dict(compressors=[GzipCodec(level=1), Crc32cCodec()]),
    "transpose": dict(filters=[TransposeCodec(order=(1, 0))]),
    "transpose+zstd": dict(filters=[TransposeCodec(order=(1, 0))], compressors=[ZstdCodec(level=1)]),
}


@pytest.mark.parametrize("case", sorted(CODEC_CASES))
def test_codecs_zarr_python_to_zarrkit(tmp_path, case):
    data = sample((9, 6), "int32")
    z = zarr.create_array(store=str(tmp_path / "a"), shape=data.shape, chunks=(4, 4), dtype="int32", **CODEC_CASES[case])
    z[:] = data
    assert_identical(zarrkit.open_array(str(tmp_path / "a"), mode="r")[:], data)


@pytest.mark.parametrize("case", sorted(CODEC_CASES))
def test_codecs_zarrkit_to_zarr_python_bit_exact_chunks(tmp_path, case):
    """zarrkit copies the codec chain from zarr-python's zarr.json; every chunk it writes must be
    byte-identical to zarr-python's (compressors are deterministic), and both read each other."""
    data = sample((9, 6), "int32")
    z = zarr.create_array(store=str(tmp_path / "ref"), shape=data.shape, chunks=(4, 4), dtype="int32", **CODEC_CASES[case])
    z[:] = data
    codecs = json.loads((tmp_path / "ref" / "zarr.json").read_text())["codecs"]
    k = zarrkit.create_array(str(tmp_path / "k"), shape=data.shape, chunks=(4, 4), dtype="int32", codecs=codecs, zarr_format=3)
    k[:] = data
    assert_identical(zarr.open_array(str(tmp_path / "k"), mode="r")[:], data)
    ref_chunks = sorted(p.relative_to(tmp_path / "ref") for p in (tmp_path / "ref").rglob("*") if p.is_file() and p.name != "zarr.json")
    k_chunks = sorted(p.relative_to(tmp_path / "k") for p in (tmp_path / "k").rglob("*") if p.is_file() and p.name != "zarr.json")
    assert ref_chunks == k_chunks
    crc = codecs[-1]["name"] == "crc32c"
    for rel in ref_chunks:
        ref = _comparable((tmp_path / "ref" / rel).read_bytes(), crc)
        assert ref == _comparable((tmp_path / "k" / rel).read_bytes(), crc), rel


def _comparable(raw: bytes, crc: bool) -> bytes:
    """The chunk bytes two writers must agree on.  A gzip member records the time it was
    written (header bytes 4-8), and a crc32c suffix covers it: the suffix is checked against
    the bytes it follows, then both are compared without the time."""
    if crc:
        raw, suffix = raw[:-4], raw[-4:]
        assert google_crc32c.value(raw) == int.from_bytes(suffix, "little")
    return raw[:4] + bytes(4) + raw[8:] if raw[:2] == b"\x1f\x8b" else raw


@pytest.mark.parametrize("separator", ["/", "."])
@pytest.mark.parametrize("encoding", ["default", "v2"])
def test_chunk_key_encodings(tmp_path, encoding, separator):
    data = sample((5, 5), "uint16")
    cke = {"name": encoding, "configuration": {"separator": separator}}
    z = zarr.create_array(store=str(tmp_path / "a"), shape=(5, 5), chunks=(2, 2), dtype="uint16", chunk_key_encoding=cke)
    z[:] = data
    assert_identical(zarrkit.open_array(str(tmp_path / "a"), mode="r")[:], data)
    k = zarrkit.create_array(str(tmp_path / "b"), shape=(5, 5), chunks=(2, 2), dtype="uint16", chunk_key_encoding=cke, zarr_format=3)
    k[:] = data
    assert sorted(p.name for p in (tmp_path / "a").rglob("*")) == sorted(p.name for p in (tmp_path / "b").rglob("*"))
    assert_identical(zarr.open_array(str(tmp_path / "b"), mode="r")[:], data)
    assert_identical(ts_open(tmp_path / "b").read().result(), data)


# -- fill values, missing chunks, 0-d, empty ------------------------------------------------------
@pytest.mark.parametrize(
    "dtype, fill",
    [("float64", np.nan), ("float32", np.inf), ("float32", -np.inf), ("int16", -7), ("uint8", 255),
     ("bool", True), ("complex64", 1 + 2j), ("float64", -0.0)],
)
def test_fill_values_and_missing_chunks(tmp_path, dtype, fill):
    z = zarr.create_array(store=str(tmp_path / "a"), shape=(6,), chunks=(2,), dtype=dtype, fill_value=fill)
    z[0:2] = np.ones(2, dtype=dtype)
    expected = z[:]
    k = zarrkit.open_array(str(tmp_path / "a"), mode="r")
    assert_identical(k[:], expected)
    assert np.asarray(k.fill_value, dtype=dtype).tobytes() == np.asarray(fill, dtype=dtype).tobytes()
    k2 = zarrkit.create_array(str(tmp_path / "b"), shape=(6,), chunks=(2,), dtype=dtype, fill_value=fill, zarr_format=3)
    k2[0:2] = np.ones(2, dtype=dtype)
    assert_identical(zarr.open_array(str(tmp_path / "b"), mode="r")[:], expected)
    assert_identical(ts_open(tmp_path / "b").read().result(), expected)


def test_nan_payload_fill_value_is_bit_exact(tmp_path):
    payload = np.array([0x7FC00001], dtype="<u4").view("<f4")[0]
    k = zarrkit.create_array(str(tmp_path / "a"), shape=(4,), chunks=(2,), dtype="float32", fill_value=payload, zarr_format=3)
    doc = json.loads((tmp_path / "a" / "zarr.json").read_text())
    assert doc["fill_value"] == "0x7fc00001"
    back = zarrkit.open_array(str(tmp_path / "a"), mode="r")
    assert np.asarray(back[:]).view("<u4").tolist() == [0x7FC00001] * 4
    assert k.fill_value.tobytes() == payload.tobytes()


def test_zero_d_and_empty(tmp_path):
    z = zarr.create_array(store=str(tmp_path / "s"), shape=(), dtype="float64")
    z[()] = 3.25
    assert zarrkit.open_array(str(tmp_path / "s"), mode="r")[()] == 3.25
    k = zarrkit.create_array(str(tmp_path / "k"), shape=(), dtype="int8", zarr_format=3)
    k[()] = -4
    assert zarr.open_array(str(tmp_path / "k"), mode="r")[()] == -4
    e = zarrkit.create_array(str(tmp_path / "e"), shape=(0, 5), chunks=(2, 2), dtype="int32", zarr_format=3)
    assert e[:].shape == (0, 5)
    assert zarr.open_array(str(tmp_path / "e"), mode="r")[:].shape == (0, 5)


# -- sharding ------------------------------------------------------------------------------------
SHARD_CASES = {
    "end": dict(chunks=(4, 4), shards=(8, 8)),
    "edge-shards": dict(chunks=(3, 3), shards=(6, 6)),
}


@pytest.mark.parametrize("case", sorted(SHARD_CASES))
def test_sharding_both_ways(tmp_path, case):
    data = sample((13, 11), "float32")
    kw = SHARD_CASES[case]
    z = zarr.create_array(store=str(tmp_path / "a"), shape=data.shape, dtype="float32", **kw)
    z[:] = data
    k = zarrkit.open_array(str(tmp_path / "a"), mode="r")
    assert k.shards == kw["shards"] and k.chunks == kw["chunks"]
    assert_identical(k[:], data)
    assert_identical(k[2:9, 3:10], data[2:9, 3:10])
    k2 = zarrkit.create_array(str(tmp_path / "b"), shape=data.shape, dtype="float32", zarr_format=3, **kw)
    k2[:] = data
    assert_identical(zarr.open_array(str(tmp_path / "b"), mode="r")[:], data)
    assert_identical(ts_open(tmp_path / "b").read().result(), data)


def _sharding_json(index_location, nested=False):
    inner = [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": 1}}]
    if nested:
        inner = [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [2, 2], "codecs": inner,
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
            "index_location": "end"}}]
    return [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [4, 4], "codecs": inner,
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
        "index_location": index_location}}]


@pytest.mark.parametrize("index_location", ["start", "end"])
@pytest.mark.parametrize("nested", [False, True])
def test_sharding_layouts_with_tensorstore_and_zarr_python(tmp_path, index_location, nested):
    data = sample((16, 12), "int32")
    codecs = _sharding_json(index_location, nested)
    k = zarrkit.create_array(str(tmp_path / "k"), shape=data.shape, chunks=(8, 8), dtype="int32", codecs=codecs, zarr_format=3)
    k[:] = data
    k[0:4, 0:4] = 0  # an all-fill inner chunk is left out of its shard
    expected = data.copy()
    expected[0:4, 0:4] = 0
    assert_identical(k[:], expected)
    assert_identical(zarr.open_array(str(tmp_path / "k"), mode="r")[:], expected)
    assert_identical(ts_open(tmp_path / "k").read().result(), expected)
    # and the other way: tensorstore writes the same layout
    t = ts.open({
        "driver": "zarr3", "kvstore": {"driver": "file", "path": str(tmp_path / "t")},
        "metadata": {"shape": list(data.shape), "data_type": "int32",
                     "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [8, 8]}},
                     "codecs": codecs},
        "create": True,
    }).result()
    t.write(expected).result()
    assert_identical(zarrkit.open_array(str(tmp_path / "t"), mode="r")[:], expected)


def test_missing_shards_read_as_fill(tmp_path):
    z = zarr.create_array(store=str(tmp_path / "a"), shape=(16,), chunks=(2,), shards=(8,), dtype="int8", fill_value=9)
    z[0:3] = 1
    k = zarrkit.open_array(str(tmp_path / "a"), mode="r")
    assert k[:].tolist() == [1, 1, 1] + [9] * 13


# -- groups, attributes, dimension names, consolidated metadata ---------------------------------
def test_groups_attributes_dimension_names_both_ways(tmp_path):
    g = zarr.open_group(str(tmp_path / "zp"), mode="w")
    g.attrs["title"] = "from zarr-python"
    sub = g.create_group("sub")
    sub.attrs["n"] = 3
    a = sub.create_array("x", shape=(4, 3), chunks=(2, 3), dtype="int16", dimension_names=["time", "y"])
    a[:] = np.arange(12).reshape(4, 3)
    a.attrs["units"] = "m"
    kg = zarrkit.open_group(str(tmp_path / "zp"), mode="r")
    assert kg.zarr_format == 3 and kg.attrs["title"] == "from zarr-python"
    assert list(kg) == ["sub"] and kg["sub"].attrs["n"] == 3
    kx = kg["sub/x"]
    assert kx.metadata.dimension_names == ("time", "y") and kx.attrs["units"] == "m"
    assert kx[:].tolist() == np.arange(12).reshape(4, 3).tolist()

    kg2 = zarrkit.open_group(str(tmp_path / "zk"), mode="w", zarr_format=3)
    kg2.attrs["title"] = "from zarrkit"
    s2 = kg2.create_group("sub")
    x2 = zarrkit.create_array(str(tmp_path / "zk"), name="sub/x", shape=(4, 3), chunks=(2, 3), dtype="int16",
                              dimension_names=["time", None], attributes={"units": "m"}, zarr_format=3)
    x2[:] = np.arange(12).reshape(4, 3)
    s2.attrs["n"] = 3
    g2 = zarr.open_group(str(tmp_path / "zk"), mode="r")
    assert g2.attrs["title"] == "from zarrkit" and g2["sub"].attrs["n"] == 3
    assert g2["sub/x"].metadata.dimension_names == ("time", None)
    assert g2["sub/x"].attrs["units"] == "m"
    assert g2["sub/x"][:].tolist() == np.arange(12).reshape(4, 3).tolist()


def test_consolidated_v3_both_ways(tmp_path):
    g = zarr.open_group(str(tmp_path / "zp"), mode="w")
    g.create_array("a", shape=(3,), dtype="int8")[:] = [1, 2, 3]
    g.create_group("b").attrs["k"] = "v"
    zarr.consolidate_metadata(str(tmp_path / "zp"))
    kg = zarrkit.open_consolidated(str(tmp_path / "zp"))
    assert list(kg) == ["a", "b"] and kg["b"].attrs["k"] == "v" and kg["a"][:].tolist() == [1, 2, 3]

    kg2 = zarrkit.open_group(str(tmp_path / "zk"), mode="w", zarr_format=3)
    zarrkit.create_array(str(tmp_path / "zk"), name="a", shape=(3,), dtype="int8", zarr_format=3)[:] = [1, 2, 3]
    kg2.create_group("b").attrs["k"] = "v"
    zarrkit.consolidate_metadata(str(tmp_path / "zk"))
    g2 = zarr.open_consolidated(str(tmp_path / "zk"))
    assert sorted(g2.keys()) == ["a", "b"] and g2["b"].attrs["k"] == "v"
    assert g2.metadata.consolidated_metadata is not None


def test_consolidated_v2_both_ways(tmp_path):
    g = zarr.open_group(str(tmp_path / "zp"), mode="w", zarr_format=2)
    g.create_array("a", shape=(3,), dtype="int8")[:] = [1, 2, 3]
    g.create_group("b").attrs["k"] = "v"
    zarr.consolidate_metadata(str(tmp_path / "zp"), zarr_format=2)
    kg = zarrkit.open_consolidated(str(tmp_path / "zp"))
    assert list(kg) == ["a", "b"] and kg["b"].attrs["k"] == "v" and kg["a"][:].tolist() == [1, 2, 3]
    kg2 = zarrkit.open_group(str(tmp_path / "zk"), mode="w", zarr_format=2)
    kg2.zeros("a", shape=(3,), dtype="int8")[:] = [1, 2, 3]
    kg2.create_group("b").attrs["k"] = "v"
    zarrkit.consolidate_metadata(str(tmp_path / "zk"))
    g2 = zarr.open_consolidated(str(tmp_path / "zk"), zarr_format=2)
    assert sorted(g2.keys()) == ["a", "b"] and g2["b"].attrs["k"] == "v"
    assert g2["a"][:].tolist() == [1, 2, 3]


# -- extension data types ----------------------------------------------------------------------
EXTENSION_CASES = {
    "string": (str, np.array(["a", "bcd", "", "héllo", "x" * 40], dtype=object)),
    "datetime64[s]": ("M8[s]", np.array([0, 1, -5, 10**9, "NaT"], dtype="M8[s]")),
    "datetime64[10ms]": ("M8[10ms]", np.array([0, 1, -5, 7, "NaT"], dtype="M8[10ms]")),
    "timedelta64[ms]": ("m8[ms]", np.array([0, 1, -5, 7, 2**40], dtype="m8[ms]")),
    "fixed_length_utf32": ("U5", np.array(["a", "bcd", "", "héllo", "zz"], dtype="U5")),
    "null_terminated_bytes": ("S4", np.array([b"a", b"bcd", b"", b"xyzw", b"\x01"], dtype="S4")),
    "struct": ([("a", "<i4"), ("b", "S2"), ("c", "<f8")],
               np.array([(1, b"ab", 0.5), (2, b"c", -1.0), (3, b"", 2.0), (4, b"zz", 3.0), (5, b"q", 4.0)],
                        dtype=[("a", "<i4"), ("b", "S2"), ("c", "<f8")])),
}


def same_values(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind in "mM":
        return a.shape == b.shape and a.view("i8").tolist() == b.astype(a.dtype).view("i8").tolist()
    if a.dtype.kind == "O" or b.dtype.kind in "OT":
        return [str(x) for x in a.tolist()] == [str(x) for x in b.tolist()]
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", EXTENSION_CASES)
def test_extension_dtypes_zarr_python_to_zarrkit(tmp_path, name):
    dtype, data = EXTENSION_CASES[name]
    z = zarr.create_array(store=str(tmp_path / "a"), shape=data.shape, chunks=(2,), dtype=dtype)
    z[:4] = data[:4]  # the last chunk is partly fill value
    expected = z[:]
    k = zarrkit.open_array(str(tmp_path / "a"), mode="r")
    assert same_values(k[:], expected)
    doc = json.loads((tmp_path / "a" / "zarr.json").read_text())
    assert k.metadata.to_json()["data_type"] == doc["data_type"]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", EXTENSION_CASES)
def test_extension_dtypes_zarrkit_to_zarr_python(tmp_path, name):
    dtype, data = EXTENSION_CASES[name]
    k = zarrkit.create_array(str(tmp_path / "k"), shape=data.shape, chunks=(2,), dtype=dtype, zarr_format=3)
    k[:4] = data[:4]
    z = zarr.open_array(str(tmp_path / "k"), mode="r")
    assert same_values(k[:], z[:])
    assert same_values(k[:4], data[:4])
    # same document as zarr-python writes for the same array, data type and fill value included
    zarr.create_array(store=str(tmp_path / "z"), shape=data.shape, chunks=(2,), dtype=dtype,
                      fill_value=k.fill_value if name != "string" else "")
    ours = json.loads((tmp_path / "k" / "zarr.json").read_text())
    theirs = json.loads((tmp_path / "z" / "zarr.json").read_text())
    assert ours["data_type"] == theirs["data_type"]
    assert ours["fill_value"] == theirs["fill_value"] or name == "null_terminated_bytes"


def test_bytes_data_type_zarrkit_to_zarr_python(tmp_path):
    # zarr-python 3.4 reads but does not create the 'bytes' data type
    data = np.array([b"a", b"", b"xyz", b"\x00\x01"], dtype=object)
    k = zarrkit.create_array(str(tmp_path / "b"), shape=(4,), chunks=(2,), dtype=bytes, zarr_format=3)
    k[:3] = data[:3]
    doc = json.loads((tmp_path / "b" / "zarr.json").read_text())
    assert doc["data_type"] == "bytes" and doc["codecs"][0]["name"] == "vlen-bytes"
    assert list(zarr.open_array(str(tmp_path / "b"), mode="r")[:]) == [b"a", b"", b"xyz", b""]
    assert list(zarrkit.open_array(str(tmp_path / "b"), mode="r")[:]) == [b"a", b"", b"xyz", b""]


def test_raw_bits_r_n(tmp_path):
    data = np.frombuffer(bytes(range(30)), dtype="V6")
    # zarrkit writes the core r<N> type with the spec's fill value, an array of byte values
    # (zarr-python 3.4 writes its raw_bytes extension instead; tensorstore 0.1.86 aborts the
    # process on r<N> metadata with a fill value, so it is not exercised here)
    k = zarrkit.create_array(str(tmp_path / "k"), shape=(5,), chunks=(2,), dtype="V6", zarr_format=3,
                             fill_value=np.frombuffer(b"\x01" * 6, dtype="V6")[0])
    k[:4] = data[:4]
    doc = json.loads((tmp_path / "k" / "zarr.json").read_text())
    assert doc["data_type"] == "r48" and doc["fill_value"] == [1] * 6
    assert zarrkit.open_array(str(tmp_path / "k"), mode="r")[:].tobytes() == data[:4].tobytes() + b"\x01" * 6
    # a base64 fill value, as tensorstore expects for r<N>, is read too
    doc["fill_value"] = "AQEBAQEB"
    (tmp_path / "k" / "zarr.json").write_text(json.dumps(doc))
    got = zarrkit.open_array(str(tmp_path / "k"), mode="r")
    assert got.dtype == np.dtype("V6")
    assert got[:].tobytes() == data[:4].tobytes() + b"\x01" * 6
    # what zarr-python writes (its raw_bytes extension), zarrkit reads
    z = zarr.create_array(store=str(tmp_path / "z"), shape=(5,), chunks=(2,), dtype="V6")
    z[:] = data
    assert zarrkit.open_array(str(tmp_path / "z"), mode="r")[:].tobytes() == data.tobytes()


@pytest.mark.parametrize("dtype", ["M8[ns]", "m8[s]"])
def test_datetime_nat_fill_value_both_spellings(tmp_path, dtype):
    for spelling in ("NaT", -(2**63)):
        path = tmp_path / f"a{spelling}"
        zarrkit.create_array(str(path), shape=(3,), chunks=(3,), dtype=dtype, zarr_format=3)
        doc = json.loads((path / "zarr.json").read_text())
        doc["fill_value"] = spelling
        (path / "zarr.json").write_text(json.dumps(doc))
        assert np.isnat(zarrkit.open_array(str(path), mode="r")[:]).all()


def test_variable_length_bytes_from_zarr_python(tmp_path):
    """zarr-python 3.4 writes dtype=bytes as 'variable_length_bytes'; zarrkit reads and extends
    it, and takes the v3 names 'string', 'bytes' and 'variable_length_bytes' as dtype=."""
    values = np.array([b"a", b"", b"\x00\xffz", b"xyz"], dtype=object)
    theirs = zarr.create_array(str(tmp_path / "t.zarr"), shape=(4,), chunks=(3,), dtype="variable_length_bytes")
    theirs[...] = values
    assert json.loads((tmp_path / "t.zarr" / "zarr.json").read_text())["data_type"] == "variable_length_bytes"
    z = zarrkit.open_array(str(tmp_path / "t.zarr"), mode="r+")
    assert list(z[...]) == list(values)
    z[1] = b"new"
    assert list(zarr.open_array(str(tmp_path / "t.zarr"))[...]) == [b"a", b"new", b"\x00\xffz", b"xyz"]
    for name, data in (("string", ["x", "yz"]), ("bytes", [b"x", b"yz"]), ("variable_length_bytes", [b"x", b"yz"])):
        a = zarrkit.create_array(str(tmp_path / f"{name}.zarr"), shape=(2,), chunks=(2,), dtype=name)
        a[...] = np.array(data, dtype=object)
        assert list(zarr.open_array(str(tmp_path / f"{name}.zarr"))[...]) == data


@pytest.mark.parametrize("name,config", [("pcodec", {"level": 8}), ("zfpy", {"mode": 4, "tolerance": -1, "rate": -1, "precision": -1})])
def test_numcodecs_serializers_both_ways(tmp_path, name, config):
    """``numcodecs.pcodec`` and ``numcodecs.zfpy`` as zarr-python 3.4 registers them (array→bytes),
    the same chunk bytes both ways."""
    pytest.importorskip(name)
    from zarr.codecs import numcodecs as zn

    from zarrkit.codecs import numcodecs as kn

    cls = {"pcodec": "PCodec", "zfpy": "ZFPY"}[name]
    data = np.linspace(-1, 1, 300).reshape(3, 100)
    theirs = zarr.create_array(str(tmp_path / "t.zarr"), shape=data.shape, chunks=(2, 50), dtype="f8",
                               compressors=None, serializer=getattr(zn, cls)(**config))
    theirs[:] = data
    ours = zarrkit.create_array(str(tmp_path / "o.zarr"), shape=data.shape, chunks=(2, 50), dtype="f8",
                                compressors=None, serializer=getattr(kn, cls)(**config))
    ours[:] = data
    assert json.loads((tmp_path / "o.zarr" / "zarr.json").read_text())["codecs"] == [{"name": f"numcodecs.{name}", "configuration": config}]
    for key in ("c/0/0", "c/1/1"):
        assert (tmp_path / "o.zarr" / key).read_bytes() == (tmp_path / "t.zarr" / key).read_bytes()
    np.testing.assert_array_equal(zarrkit.open_array(str(tmp_path / "t.zarr"))[:], theirs[:])
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "o.zarr"))[:], ours[:])
