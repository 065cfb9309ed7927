"""How many store requests reads and writes make (sharding, consolidated metadata)."""

from __future__ import annotations

import numpy as np
import pytest

import zarrkit
from zarrkit.storage import ByteRange, CountingStore, MemoryStore


def sharded(store, shape=(64, 64), chunks=(8, 8), shards=(32, 32), **kw):
    return zarrkit.create_array(store, shape=shape, chunks=chunks, shards=shards, dtype="i4",
                                zarr_format=3, **kw)


@pytest.fixture
def counting():
    return CountingStore(MemoryStore())


def data(shape=(64, 64)):
    return np.arange(np.prod(shape), dtype="i4").reshape(shape)


@pytest.mark.parametrize("index_location", ["end", "start"])
def test_one_inner_chunk_reads_index_and_that_chunk_only(counting, index_location):
    from zarrkit.codecs import ShardingCodec

    codecs = [ShardingCodec(chunk_shape=(8, 8), index_location=index_location)]
    z = zarrkit.create_array(counting, shape=(64, 64), chunks=(32, 32), dtype="i4",
                             codecs=codecs, zarr_format=3)
    a = data()
    z[:] = a
    r = zarrkit.open_array(counting, mode="r")
    _ = r.dtype  # metadata loaded
    counting.reset()
    assert np.array_equal(r[9:12, 17:20], a[9:12, 17:20])
    reads = [(k, br) for k, br in counting.keys_read if k != "zarr.json"]
    assert len(reads) == 2, reads
    (k1, idx), (k2, chunk) = reads
    assert k1 == k2 == "c/0/0"
    assert isinstance(idx, ByteRange) and isinstance(chunk, ByteRange)
    # the chunk's range is exactly one encoded inner chunk (8*8 int32 = 256 bytes, 'bytes' only)
    assert chunk.length == 8 * 8 * 4
    # the index (16 entries of 16 bytes + crc32c) and one chunk: not the 4 KiB shard
    assert counting.bytes_read == 16 * 16 + 4 + 256


def test_many_inner_chunks_of_one_shard_are_coalesced(counting):
    z = sharded(counting, compressors=None)
    a = data()
    z[:] = a
    counting.reset()
    out = z[0:32, 0:32]  # all 16 inner chunks of shard (0, 0)
    assert np.array_equal(out, a[0:32, 0:32])
    reads = [k for k, _ in counting.keys_read if k.startswith("c/")]
    # the index, then the 16 adjacent inner chunks in one ranged read
    assert reads == ["c/0/0", "c/0/0"], counting.keys_read


def test_inner_chunks_far_apart_are_separate_requests():
    # incompressible chunks big enough that the gap between them exceeds the coalescing gap
    store = CountingStore(MemoryStore())
    z = zarrkit.create_array(store, shape=(4 * 65536,), chunks=(65536,), shards=(4 * 65536,),
                             dtype="f8", zarr_format=3, compressors=None)
    a = np.random.default_rng(0).random(4 * 65536)
    z[:] = a
    store.reset()
    assert np.array_equal(z.get_orthogonal_selection(np.array([0, 3 * 65536 + 5])),
                          a[[0, 3 * 65536 + 5]])
    reads = [br for k, br in store.keys_read if k == "c/0"]
    assert len(reads) == 3  # index + two distant inner chunks


def test_whole_shard_write_is_one_write_and_no_read(counting):
    z = sharded(counting)
    counting.reset()
    z[0:32, 32:64] = data((32, 32))
    assert counting.counts["set"] == 1
    assert [k for k, _ in counting.keys_read if k.startswith("c/")] == []


def test_partial_shard_write_reads_once_and_writes_once(counting):
    z = sharded(counting)
    a = data()
    z[:] = a
    counting.reset()
    # touches 9 inner chunks of shard (0, 0) and leaves the rest
    z[4:20, 4:20] = -1
    assert counting.counts["set"] == 1
    assert len([k for k, _ in counting.keys_read if k.startswith("c/")]) == 1
    a[4:20, 4:20] = -1
    assert np.array_equal(z[:], a)


def test_missing_shard_reads_fill_value_with_one_request(counting):
    z = sharded(counting, fill_value=7)
    counting.reset()
    assert (z[40:50, 40:50] == 7).all()
    assert len([k for k, _ in counting.keys_read if k.startswith("c/")]) == 1


def test_empty_inner_chunks_are_not_stored_without_write_empty_chunks():
    store = MemoryStore()
    z = sharded(store, fill_value=0, compressors=None, config={"write_empty_chunks": False})
    block = np.zeros((32, 32), dtype="i4")
    block[0, 0] = 1  # only inner chunk (0, 0) differs from the fill value
    z[0:32, 0:32] = block
    raw = store.get("c/0/0")
    index_bytes = 16 * 16 + 4
    assert len(raw) == 8 * 8 * 4 + index_bytes
    z[0:32, 0:32] = 0  # all fill: the shard goes away
    assert store.get("c/0/0") is None


def test_inner_chunks_follow_write_empty_chunks_as_chunks_do():
    # one rule for chunks and inner chunks: all-fill ones are stored with write_empty_chunks
    store = MemoryStore()
    z = sharded(store, fill_value=0, compressors=None, config={"write_empty_chunks": True})
    z[0:32, 0:32] = 0
    index_bytes = 16 * 16 + 4
    assert len(store.get("c/0/0")) == 16 * 8 * 8 * 4 + index_bytes
    assert z.nchunks_initialized == 16
    plain = zarrkit.create_array(MemoryStore(), shape=(64, 64), chunks=(8, 8), dtype="i4",
                                 fill_value=0, config={"write_empty_chunks": True})
    plain[0:32, 0:32] = 0
    assert plain.nchunks_initialized == 16


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_consolidated_open_and_walk_costs_one_read(zarr_format):
    base = MemoryStore()
    root = zarrkit.open_group(base, mode="w", zarr_format=zarr_format)
    for g in ("a", "b", "a/c"):
        root.create_group(g)
    for name in ("x", "a/y", "a/c/z", "b/w"):
        root.zeros(name, shape=(10,), chunks=(5,))
    root.attrs["title"] = "t"
    zarrkit.consolidate_metadata(base)
    store = CountingStore(base)
    g = zarrkit.open_consolidated(store, zarr_format=zarr_format)
    names: list[str] = []
    g.visitvalues(lambda node: names.append((node.path, node.attrs.asdict(), getattr(node, "shape", None))) and None)
    assert g.attrs["title"] == "t"
    assert sorted(p for p, _, _ in names) == ["a", "a/c", "a/c/z", "a/y", "b", "b/w", "x"]
    assert store.counts["get"] == 1, store.keys_read
    assert store.counts["list"] == 0


def test_large_inner_chunks_of_a_local_shard_are_read_each_on_its_own(tmp_path):
    # a directory keeps shard indexes (its files have version tokens): the inner chunks of
    # a whole-shard read are fetched by the tasks decoding them, one ranged read each, and
    # the index once; no read spans several chunks
    store = CountingStore(zarrkit.DirectoryStore(tmp_path / "a"))
    z = zarrkit.create_array(store, shape=(4 * 65536,), chunks=(65536,), shards=(4 * 65536,),
                             dtype="f8", zarr_format=3, compressors=None)
    a = np.random.default_rng(1).random(4 * 65536)
    z[:] = a
    r = zarrkit.open_array(store, mode="r")
    _ = r.dtype
    store.reset()
    assert np.array_equal(r[:], a)
    reads = sorted((br.offset, br.length) for k, br in store.keys_read if k == "c/0")
    chunk_bytes = 65536 * 8
    assert reads[0][1] is None and reads[0][0] < 0  # the index, at the end
    assert reads[1:] == [(i * chunk_bytes, chunk_bytes) for i in range(4)]
    # rewritten in place meanwhile: the kept index is not used for the new shard
    z[:] = a[::-1]
    assert np.array_equal(r[:], a[::-1])


def test_large_inner_chunks_from_memory_come_in_one_request():
    # a store without version tokens keeps no index: one coalesced request after the index
    store = CountingStore(MemoryStore())
    z = zarrkit.create_array(store, shape=(4 * 65536,), chunks=(65536,), shards=(4 * 65536,),
                             dtype="f8", zarr_format=3, compressors=None)
    a = np.random.default_rng(2).random(4 * 65536)
    z[:] = a
    store.reset()
    assert np.array_equal(z[:], a)
    assert len([br for k, br in store.keys_read if k == "c/0"]) == 2
