"""Writes covering whole shards: every inner chunk of a shard encoded in one task.

A write that covers all the inner chunks of several shards stores each shard from its region
of the value at once; a write of one shard, with several threads, encodes its inner chunks in
parallel one by one.  Both must store the same bytes, and read back as numpy has them.
"""

from __future__ import annotations

import numpy as np
import pytest
import zarr as zarr_python

import zarrkit
from zarrkit.codecs import BytesCodec, TransposeCodec, ZstdCodec
from zarrkit.storage import LocalStore


def _values(shape: tuple[int, ...], dtype: str, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    base = np.indices(shape).sum(axis=0) % 7  # compressible, with runs
    noise = rng.integers(0, 3, size=shape)
    return (base * 3 + noise).astype(dtype)


def _array(store: LocalStore, shape: tuple[int, ...], shards: tuple[int, ...], chunks: tuple[int, ...],
           dtype: str = "uint16", **kw: object) -> zarrkit.Array:
    kw.setdefault("compressors", [ZstdCodec(level=1)])
    return zarrkit.create_array(store, shape=shape, dtype=dtype, shards=shards, chunks=chunks, **kw)


def _shard_regions(shape: tuple[int, ...], shards: tuple[int, ...]) -> list[tuple[slice, ...]]:
    return [tuple(slice(i * s, (i + 1) * s) for i, s in zip(idx, shards))
            for idx in np.ndindex(*(n // s for n, s in zip(shape, shards)))]


def _stored(store: LocalStore) -> dict[str, bytes]:
    return {k: bytes(store.get(k)) for k in store.list_prefix("") if k != "zarr.json"}


def _stores(tmp_path, *names: str) -> list[LocalStore]:
    return [LocalStore(str(tmp_path / name)) for name in names]


@pytest.mark.parametrize("write_empty_chunks", [True, False])
@pytest.mark.parametrize("dtype", ["uint16", ">f8", "int8"])
def test_shards_written_together_are_the_bytes_of_shards_written_one_by_one(tmp_path, dtype, write_empty_chunks):
    shape, shards, chunks = (32, 48, 16), (16, 16, 16), (8, 4, 16)
    data = _values(shape, dtype)
    data[:8, :16] = 0  # an inner chunk of zeros (the fill value): left out when empty chunks are
    together, apart = _stores(tmp_path, "together", "apart")
    cfg = {"array.write_empty_chunks": write_empty_chunks}
    with zarrkit.config.set(cfg):
        a = _array(together, shape, shards, chunks, dtype)
        a[...] = data
        b = _array(apart, shape, shards, chunks, dtype)
        with zarrkit.config.set({"threads": 2}):
            for region in _shard_regions(shape, shards):
                b[region] = data[region]
    assert _stored(together) == _stored(apart)
    np.testing.assert_array_equal(a[...], data)
    np.testing.assert_array_equal(zarr_python.open_array(together.root, mode="r")[...], data)


def test_a_scalar_over_whole_shards_reads_back_and_matches_shards_written_one_by_one(tmp_path):
    shape, shards, chunks = (16, 16), (8, 8), (4, 2)
    together, apart = _stores(tmp_path, "together", "apart")
    a = _array(together, shape, shards, chunks, fill_value=1)
    a[...] = 5
    b = _array(apart, shape, shards, chunks, fill_value=1)
    with zarrkit.config.set({"threads": 2}):
        for region in _shard_regions(shape, shards):
            b[region] = 5
    assert _stored(together) == _stored(apart)
    np.testing.assert_array_equal(a[...], np.full(shape, 5, dtype="uint16"))


def test_fill_values_over_whole_shards_delete_them_when_empty_chunks_are_not_written(tmp_path):
    (store,) = _stores(tmp_path, "a")
    a = _array(store, (16, 16), (8, 8), (4, 4), write_empty_chunks=False)
    a[...] = _values((16, 16), "uint16") + 1
    assert len(_stored(store)) == 4
    a[:, :8] = 0  # two shards, all fill value
    assert sorted(_stored(store)) == ["c/0/1", "c/1/1"]
    a[...] = np.zeros((16, 16), dtype="uint16")
    assert _stored(store) == {}
    np.testing.assert_array_equal(a[...], 0)


def test_whole_shards_are_written_where_the_value_lies_in_the_selection(tmp_path):
    # the selection starts inside the value's frame: the shards' regions are shifted
    shape, shards, chunks = (24, 24), (8, 8), (4, 4)
    big = _values((40, 60), "uint16")
    (store,) = _stores(tmp_path, "a")
    a = _array(store, shape, shards, chunks)
    a[8:24, :] = big[3:19, 5:29]
    want = np.zeros(shape, dtype="uint16")
    want[8:24] = big[3:19, 5:29]
    np.testing.assert_array_equal(a[...], want)
    # strided and reversed values too
    a[...] = big[::-1, ::2][:24, :24].T
    np.testing.assert_array_equal(a[...], big[::-1, ::2][:24, :24].T)


def test_edge_shards_and_partial_shards_keep_what_they_hold(tmp_path):
    shape, shards, chunks = (20, 20), (8, 8), (4, 4)  # the last shards stick out of the array
    data = _values(shape, "int32")
    (store,) = _stores(tmp_path, "a")
    a = _array(store, shape, shards, chunks, dtype="int32")
    a[...] = data
    np.testing.assert_array_equal(a[...], data)
    a[2:18, 0:16] = -data[2:18, 0:16]
    data[2:18, 0:16] *= -1
    np.testing.assert_array_equal(a[...], data)


def test_a_shard_larger_than_a_gathering_block_is_written_in_slabs(tmp_path):
    # a 32 MiB shard of 512 KiB inner chunks, gathered a slab of them at a time
    shape, shards, chunks = (2048, 4096), (2048, 2048), (256, 256)
    data = _values(shape, "float64")
    together, apart = _stores(tmp_path, "together", "apart")
    a = _array(together, shape, shards, chunks, dtype="float64")
    a[...] = data
    b = _array(apart, shape, shards, chunks, dtype="float64")
    with zarrkit.config.set({"threads": 2}):
        for region in _shard_regions(shape, shards):
            b[region] = data[region]
    assert _stored(together) == _stored(apart)
    np.testing.assert_array_equal(a[...], data)


def test_inner_chunks_larger_than_a_gathering_block_are_gathered_one_at_a_time(tmp_path):
    n = 17 * 2**20  # one inner chunk is more than a gathering block
    data = np.zeros((4, n), dtype="uint8")
    data[:, ::4097] = np.arange(4)[:, None] + 1
    (store,) = _stores(tmp_path, "a")
    a = _array(store, data.shape, (2, n), (1, n), dtype="uint8")
    a[...] = data
    np.testing.assert_array_equal(a[...], data)


def test_inner_chains_in_f_order_and_index_at_the_start(tmp_path):
    shape, shards, chunks = (16, 24, 8), (8, 12, 8), (4, 4, 2)
    data = _values(shape, "uint32")
    (store,) = _stores(tmp_path, "a")
    a = zarrkit.create_array(
        store, shape=shape, dtype="uint32", chunks=shards,
        serializer={"name": "sharding_indexed", "configuration": {
            "chunk_shape": list(chunks), "index_location": "start",
            "codecs": [TransposeCodec(order=(2, 1, 0)).to_dict(), BytesCodec().to_dict(), ZstdCodec().to_dict()]}},
    )
    a[...] = data
    np.testing.assert_array_equal(a[...], data)
    np.testing.assert_array_equal(zarr_python.open_array(store.root, mode="r")[...], data)


def test_variable_length_strings_over_whole_shards(tmp_path):
    shape, shards, chunks = (12, 8), (6, 4), (3, 2)
    data = np.array([f"v{i}" * (i % 4) for i in range(96)], dtype=object).reshape(shape)
    (store,) = _stores(tmp_path, "a")
    a = zarrkit.create_array(store, shape=shape, dtype=str, shards=shards, chunks=chunks)
    a[...] = data
    assert a[...].tolist() == data.tolist()
    assert zarr_python.open_array(store.root, mode="r")[...].tolist() == data.tolist()


@pytest.mark.parametrize("threads", [1, 2])
def test_compressed_inner_chunks_beyond_a_threads_buffer_are_stored_whole(tmp_path, threads):
    # 64 inner chunks of 512 KiB of noise: zstd's frames (a view of the compressor's buffer)
    # are copied into the thread's buffer of the shard's chunks until it is full, then into
    # bytes of their own; every frame must be stored as compressed, in the shard's order
    rng = np.random.default_rng(7)
    data = rng.integers(0, 256, size=(2048, 16384), dtype="uint8")
    data[:256, :2048] = 3  # one inner chunk that compresses to a few bytes
    (store,) = _stores(tmp_path, "a")
    a = _array(store, data.shape, (2048, 16384), (256, 2048), dtype="uint8")
    with zarrkit.config.set({"threads": threads}):
        a[...] = data
    assert len(store.get("c/0/0")) > 16 * 2**20  # more than one thread's buffer of them
    np.testing.assert_array_equal(a[...], data)
    np.testing.assert_array_equal(zarr_python.open_array(store.root, mode="r")[...], data)


@pytest.mark.parametrize("threads", [1, 2])
def test_zstd_chunks_stored_from_the_compressors_buffer_stay_distinct(threads):
    # each chunk's frame is handed to the store as a view of a buffer the thread compresses
    # its next chunk into: an in-memory store must keep its own copy of every one
    data = (np.arange(64 * 4096, dtype="uint32") * 2654435761 % 1000).reshape(64, 4096)
    memory, mapping = zarrkit.MemoryStore(), {}
    for store, stored in ((memory, memory.get), (mapping, mapping.get)):
        a = zarrkit.create_array(store, shape=data.shape, chunks=(1, 4096), dtype="uint32",
                                 compressors=[ZstdCodec(level=3)])
        with zarrkit.config.set({"threads": threads}):
            a[...] = data
        np.testing.assert_array_equal(a[...], data)
        assert len({bytes(stored(f"c/{i}/0")) for i in range(64)}) == 64
