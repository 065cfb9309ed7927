"""The bytes zarrkit stores, against bytes written out by hand from the specs (``bytes``,
``transpose``, ``crc32c``, ``vlen-utf8``, the shard layout, v2's order and filters), and fixed
frames of the compressors decoded to known data."""

from __future__ import annotations

import itertools
import struct

import google_crc32c
import numcodecs
import numpy as np
import pytest

import zarrkit
from zarrkit.codecs import BytesCodec, Crc32cCodec, TransposeCodec, VLenUTF8Codec
from zarrkit.codecs.sharding import morton_sorted
from zarrkit.storage import MemoryStore

EMPTY = 2**64 - 1


def crc(data: bytes) -> bytes:
    return struct.pack("<I", google_crc32c.value(data))


def stored(store: MemoryStore, key: str) -> bytes:
    return bytes(store[key])


def v3(shape, chunks, dtype, **kwargs):
    store = MemoryStore()
    kwargs.setdefault("compressors", None)
    z = zarrkit.create_array(store, shape=shape, chunks=chunks, dtype=dtype, zarr_format=3, **kwargs)
    return store, z


# -- array → bytes and array → array ------------------------------------------------------------
@pytest.mark.parametrize("endian, expected", [
    ("little", bytes.fromhex("0100 0201 0302")),
    ("big", bytes.fromhex("0001 0102 0203")),
])
def test_bytes_codec_writes_the_elements_in_the_byte_order(endian, expected):
    store, z = v3((3,), (3,), "u2", serializer=BytesCodec(endian))
    z[:] = [0x0001, 0x0102, 0x0203]
    assert stored(store, "c/0") == expected


def test_transpose_codec_writes_the_permuted_array():
    store, z = v3((2, 3), (2, 3), "u1", filters=[TransposeCodec((1, 0))])
    z[:] = [[1, 2, 3], [4, 5, 6]]
    assert stored(store, "c/0/0") == bytes([1, 4, 2, 5, 3, 6])  # column after column


def test_crc32c_codec_appends_the_checksum_little_endian():
    store, z = v3((4,), (4,), "u1", compressors=[Crc32cCodec()])
    z[:] = [1, 2, 3, 4]
    body = bytes([1, 2, 3, 4])
    assert stored(store, "c/0") == body + crc(body)
    # the check value of the CRC-32C specification
    assert google_crc32c.value(b"123456789") == 0xE3069283


def test_vlen_utf8_codec_writes_a_count_then_length_prefixed_items():
    store, z = v3((3,), (3,), str, serializer=VLenUTF8Codec())
    z[:] = ["a", "βc", ""]
    items = [b"a", "βc".encode(), b""]
    expected = struct.pack("<I", 3) + b"".join(struct.pack("<I", len(i)) + i for i in items)
    assert stored(store, "c/0") == expected


# -- the shard layout ---------------------------------------------------------------------------
def _index(entries) -> bytes:
    return b"".join(struct.pack("<QQ", off, n) for off, n in entries)


def test_shard_layout_index_at_the_end():
    store, z = v3((4,), (2,), "<u2", shards=(4,), fill_value=0, config={"write_empty_chunks": False})
    z[:] = [0, 0, 3, 4]  # inner chunk 0 is all fill value: left out
    chunk1 = bytes.fromhex("0300 0400")
    index = _index([(EMPTY, EMPTY), (0, 4)])
    assert stored(store, "c/0") == chunk1 + index + crc(index)


def test_shard_layout_index_at_the_start():
    codecs = [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [2],
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
        "index_location": "start",
    }}]
    store = MemoryStore()
    z = zarrkit.create_array(store, shape=(4,), chunks=(4,), dtype="<u2", codecs=codecs, zarr_format=3)
    z[:] = [1, 2, 3, 4]
    index_size = 2 * 16 + 4
    index = _index([(index_size, 4), (index_size + 4, 4)])
    assert stored(store, "c/0") == index + crc(index) + bytes.fromhex("0100 0200 0300 0400")


def test_shard_inner_chunks_are_laid_out_in_morton_order():
    # Z order with the first dimension on the lowest bit: (0,0) (1,0) (0,1) (1,1), as
    # zarr-python writes them; the index stays in C order of the coordinates
    store, z = v3((2, 4), (1, 2), "u1", shards=(2, 4))
    z[:] = [[1, 2, 3, 4], [5, 6, 7, 8]]
    index = _index([(0, 2), (4, 2), (2, 2), (6, 2)])
    assert stored(store, "c/0/0") == bytes([1, 2, 5, 6, 3, 4, 7, 8]) + index + crc(index)


def test_morton_order_of_uneven_grids():
    # a dimension with fewer bits drops out of the interleaving once its bits are used
    order = morton_sorted(itertools.product(range(3), range(2)), (3, 2))
    assert order == [(0, 0), (1, 0), (0, 1), (1, 1), (2, 0), (2, 1)]
    assert morton_sorted([(0, 2), (0, 0), (0, 1)], (1, 3)) == [(0, 0), (0, 1), (0, 2)]


# -- v2: order and filters ----------------------------------------------------------------------
def test_v2_order_f_stores_the_chunk_column_major():
    store = MemoryStore()
    z = zarrkit.create(shape=(2, 3), chunks=(2, 3), dtype="u1", order="F", compressor=None,
                       store=store, zarr_format=2)
    z[:] = [[1, 2, 3], [4, 5, 6]]
    assert stored(store, "0.0") == bytes([1, 4, 2, 5, 3, 6])


def test_v2_filters_run_in_order_before_the_compressor():
    store = MemoryStore()
    z = zarrkit.create(shape=(4,), chunks=(4,), dtype="<i2", compressor=None, store=store, zarr_format=2,
                       filters=[numcodecs.Delta(dtype="<i2"), numcodecs.AsType(encode_dtype="<i4", decode_dtype="<i2")])
    z[:] = [5, 7, 4, 4]
    # delta: 5, 2, -3, 0; then widened to int32
    assert stored(store, "0") == struct.pack("<4i", 5, 2, -3, 0)


@pytest.mark.parametrize("compressor", [None, numcodecs.Blosc(), numcodecs.Zlib(level=1)])
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_float64_filters_run_before_every_compressor(compressor, zarr_format):
    # float64 is the dtype numpy takes None for: no fast path may skip the filters
    store = MemoryStore()
    flt = numcodecs.FixedScaleOffset(scale=10, offset=1000, dtype="<f8", astype="u1")
    data = np.linspace(1000, 1001, 10)
    z = zarrkit.array(data, chunks=5, filters=[flt], compressor=compressor, store=store,
                      zarr_format=zarr_format)
    raw = stored(store, "0" if zarr_format == 2 else "c/0")
    expected = bytes(range(5))  # (x - 1000) * 10, rounded, as uint8
    decoded = raw if compressor is None else numcodecs.get_codec(compressor.get_config()).decode(raw)
    assert bytes(decoded) == expected
    np.testing.assert_allclose(z[:], data, atol=0.05)


def test_v2_big_endian_dtype_is_stored_as_is():
    store = MemoryStore()
    z = zarrkit.create(shape=(2,), chunks=(2,), dtype=">u2", compressor=None, store=store, zarr_format=2)
    z[:] = [1, 0x0203]
    assert stored(store, "0") == bytes.fromhex("0001 0203")


# -- compressors: fixed frames decode to known data ----------------------------------------------
FRAMES = {
    "blosc": bytes.fromhex("0201330218000000180000002800000000000100020003000400050006000700080009000a000b00"),
    "zstd": bytes.fromhex("28b52ffd2018c1000000000100020003000400050006000700080009000a000b00"),
    "gzip": bytes.fromhex("1f8b08002451066b04ff05c10701003008002074eef7ef2b10d250a6653baee76bafea71b118000000"),
}


@pytest.mark.parametrize("name", sorted(FRAMES))
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_compressed_frames_decode_to_their_data(name, zarr_format):
    store = MemoryStore()
    compressor = {"blosc": numcodecs.Blosc(), "zstd": numcodecs.Zstd(), "gzip": numcodecs.GZip()}[name]
    z = zarrkit.create(shape=(12,), chunks=(12,), dtype="<u2", compressor=compressor, store=store,
                       zarr_format=zarr_format)
    store["0" if zarr_format == 2 else "c/0"] = FRAMES[name]
    np.testing.assert_array_equal(z[:], np.arange(12, dtype="<u2"))
    np.testing.assert_array_equal(z[3:7], np.arange(3, 7, dtype="<u2"))
