"""``bitround``, ``reshape`` and ``packbits`` (zarr-extensions registry): what each writes, read
back through whole arrays, and the documents they refuse."""

from __future__ import annotations

import json

import numcodecs
import numpy as np
import pytest

import zarrkit
from zarrkit.codecs.base import ChunkSpec
from zarrkit.codecs.extensions import BitroundCodec, PackBitsCodec, ReshapeCodec
from zarrkit.errors import MetadataError

ml_dtypes = pytest.importorskip("ml_dtypes")


@pytest.mark.parametrize("dtype", ["f4", "f8"])
@pytest.mark.parametrize("keepbits", [1, 3, 10, 22])
def test_bitround_rounds_floats_as_numcodecs_does(dtype, keepbits):
    x = np.random.default_rng(keepbits).standard_normal(2000).astype(dtype) * 1000
    got = BitroundCodec(keepbits).encode(x, ChunkSpec(x.shape, x.dtype))
    assert got.tobytes() == np.asarray(numcodecs.BitRound(keepbits).encode(x)).tobytes()


def test_bitround_rounds_integers_from_their_top_bit():
    x = np.array([0, 1, 5, 6, 7, 100, 1000, 65535], dtype="u2")
    got = BitroundCodec(2).encode(x, ChunkSpec(x.shape, x.dtype))
    # two significant bits kept, to nearest (ties to even); 65535 saturates before the mask
    assert got.tolist() == [0, 1, 4, 6, 8, 96, 1024, 49152]


def test_bitround_through_an_array_and_bfloat16():
    codecs = [{"name": "bitround", "configuration": {"keepbits": 4}}, {"name": "bytes", "configuration": {"endian": "little"}}]
    z = zarrkit.create_array({}, shape=(6,), chunks=(3,), dtype="f8", codecs=codecs)
    values = np.array([1.0, 1.03, 1.1, 3.14159, -2.7, 1e10])
    z[:] = values
    assert z[:].tolist()[:5] == [1.0, 1.0, 1.125, 3.125, -2.75]
    assert z[:].tobytes() == np.asarray(numcodecs.BitRound(4).encode(values)).tobytes()
    b = BitroundCodec(3).encode(np.array([1.1, 3.3], dtype=ml_dtypes.bfloat16), ChunkSpec((2,), np.dtype(ml_dtypes.bfloat16)))
    assert b.astype("f4").tolist() == [1.125, 3.25]
    with pytest.raises(MetadataError, match="keepbits"):
        BitroundCodec(0)


def test_reshape_codec():
    codec = ReshapeCodec([[0, 1], [2], 3])
    assert codec.resolve(ChunkSpec((100, 50, 64, 3), np.dtype("u1"))).shape == (5000, 64, 3)
    assert ReshapeCodec([-1]).resolve(ChunkSpec((4, 5), np.dtype("u1"))).shape == (20,)
    codecs = [{"name": "reshape", "configuration": {"shape": [-1, [2]]}}, {"name": "bytes", "configuration": {"endian": "little"}}]
    store = {}
    z = zarrkit.create_array(store, shape=(4, 6, 5), chunks=(2, 3, 5), dtype="i4", codecs=codecs)
    data = np.arange(120, dtype="i4").reshape(4, 6, 5)
    z[:] = data
    np.testing.assert_array_equal(zarrkit.open_array(store)[1:3, 2:5, ::2], data[1:3, 2:5, ::2])
    assert store["c/0/0/0"] == data[:2, :3].tobytes()  # C order is kept


@pytest.mark.parametrize("shape,message", [
    ([[1], [0]], "increase strictly"),
    ([-1, -1], "at most once"),
    ([7], "does not hold"),
    ([0], "positive integers"),
])
def test_reshape_refuses_bad_shapes(tmp_path, shape, message):
    path = tmp_path / "a.zarr"
    zarrkit.create_array(str(path), shape=(4, 6), chunks=(2, 3), dtype="i4")
    doc = json.loads((path / "zarr.json").read_text())
    doc["codecs"] = [{"name": "reshape", "configuration": {"shape": shape}}, {"name": "bytes", "configuration": {"endian": "little"}}]
    (path / "zarr.json").write_text(json.dumps(doc))
    with pytest.raises(MetadataError, match=message) as info:
        zarrkit.open_array(str(path))
    assert "zarr.json" in str(info.value)


@pytest.mark.parametrize("name,values,packed", [
    ("bool", [True, False, True, True, False], "0d"),
    ("int4", [1, -2, 3, 7, -8], "e17308"),
    ("uint2", [0, 1, 2, 3, 1], "e401"),
    ("int16", [-300, 5, 32767], "d4fe0500ff7f"),  # full width: the bytes codec's little-endian bytes
])
def test_packbits_layout(name, values, packed):
    dt = np.dtype(getattr(ml_dtypes, name, name))
    v = np.array(values).astype(dt)
    spec = ChunkSpec(v.shape, dt)
    assert PackBitsCodec().encode(v, spec).hex() == packed
    for padding in ("none", "first_byte", "last_byte"):
        codec = PackBitsCodec(padding)
        encoded = codec.encode(v, spec)
        pad = (-len(values) * (8 * dt.itemsize if name == "int16" else {"bool": 1, "int4": 4, "uint2": 2}[name])) % 8
        if padding == "first_byte":
            assert encoded[0] == pad
        elif padding == "last_byte":
            assert encoded[-1] == pad
        decoded = codec.decode(encoded, spec)
        assert decoded.dtype == dt and (decoded == v).all()


def test_packbits_bit_range_and_arrays():
    v = np.array([-300, 5, 1000], dtype="i2")
    codec = PackBitsCodec(first_bit=2, last_bit=11)
    assert codec.decode(codec.encode(v, ChunkSpec((3,), v.dtype)), ChunkSpec((3,), v.dtype)).tolist() == [-300, 4, 1000]
    store = {}
    z = zarrkit.create_array(store, shape=(10,), chunks=(5,), dtype="int4", codecs=[{"name": "packbits"}])
    z[:] = np.arange(-5, 5)
    assert len(store["c/0"]) == 3  # five 4-bit values
    assert zarrkit.open_array(store)[:].astype(int).tolist() == list(range(-5, 5))
    with pytest.raises(MetadataError, match="last_bit"):
        PackBitsCodec(first_bit=4, last_bit=2)
    with pytest.raises(ValueError, match="beyond the 4 bits"):
        zarrkit.create_array({}, shape=(2,), dtype="int4", codecs=[{"name": "packbits", "configuration": {"last_bit": 5}}])
