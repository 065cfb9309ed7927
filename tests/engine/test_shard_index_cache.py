"""The decoded shard indexes an Array keeps (in stores with cheap version tokens: directories):
one index read per shard for inner chunks read one by one, never used once the shard changed --
written by zarrkit (from any Array object on the store) or rewritten by another writer, whatever
the new layout -- and none kept where the store cannot tell (memory, object stores)."""

from __future__ import annotations

import numpy as np
import pytest
import zarr

import zarrkit
from zarrkit.codecs.sharding import IndexCache
from zarrkit.storage import CountingStore, DirectoryStore, MemoryStore

SHAPE, CHUNKS, SHARDS = (32, 32), (4, 4), (16, 16)


def make(store, **kw):
    z = zarrkit.create_array(store, shape=SHAPE, chunks=CHUNKS, shards=SHARDS, dtype="i4",
                             zarr_format=3, **kw)
    z[...] = np.arange(32 * 32, dtype="i4").reshape(SHAPE)
    return z


def inner_reads(z):
    """Every inner chunk read on its own, in order; returns the chunks read."""
    return [z[i:i + 4, j:j + 4] for i in range(0, 32, 4) for j in range(0, 32, 4)]


def test_inner_chunks_one_by_one_read_each_index_once(tmp_path):
    store = CountingStore(DirectoryStore(tmp_path))
    make(store)
    r = zarrkit.open_array(store, mode="r")
    store.reset()
    got = inner_reads(r)
    want = np.arange(32 * 32, dtype="i4").reshape(SHAPE)
    assert all(np.array_equal(g, want[i:i + 4, j:j + 4]) for g, (i, j) in
               zip(got, [(i, j) for i in range(0, 32, 4) for j in range(0, 32, 4)]))
    reads = [k for k, _ in store.keys_read if k.startswith("c/")]
    # 4 shards: 4 index reads, then one read per inner chunk (64)
    assert len(reads) == 4 + 64, reads
    store.reset()
    inner_reads(r)  # the indexes are kept: inner chunks only
    assert len([k for k, _ in store.keys_read if k.startswith("c/")]) == 64


def test_own_writes_and_other_array_objects_writes_are_seen(tmp_path):
    z = make(DirectoryStore(tmp_path))
    reader = zarrkit.open_array(DirectoryStore(tmp_path), mode="r")  # an equal, other store
    assert reader[0, 0] == 0
    # the shard is rewritten with inner chunks of other sizes (compressed differently)
    z[0:16, 0:16] = 7
    assert np.array_equal(reader[0:4, 0:4], np.full((4, 4), 7))
    assert np.array_equal(z[0:4, 0:4], np.full((4, 4), 7))
    z[0:4, 0:4] = -1
    assert reader[3, 3] == -1 and z[3, 3] == -1
    z.store.delete("c/0/0")
    assert reader[1, 1] == 0  # a shard gone reads as the fill value


def test_shard_rewritten_by_another_writer_past_the_kept_index_is_read_again(tmp_path):
    z = make(DirectoryStore(tmp_path), compressors=None)
    assert z[12, 12] == 12 * 32 + 12  # index of shard c/0/0 kept
    # zarr-python rewrites the shard with most inner chunks empty (fill value): the shard is
    # much shorter, and the kept index points past its end
    other = zarr.open_array(str(tmp_path), mode="r+")
    other[0:16, 0:16] = 0
    other[12:16, 12:16] = 5
    assert np.array_equal(z[12:16, 12:16], np.full((4, 4), 5))
    assert z[0, 0] == 0


def test_shard_rewritten_by_another_writer_with_other_offsets_is_read_afresh(tmp_path):
    """A kept index whose offsets still fall inside the rewritten shard would read other
    chunks' bytes: the shard's version token tells the index is no longer the shard's."""
    z = make(DirectoryStore(tmp_path), compressors=None)
    reader = zarrkit.open_array(str(tmp_path), mode="r")
    assert reader[14, 14] == 14 * 32 + 14  # index of shard c/0/0 kept
    other = zarr.open_array(str(tmp_path), mode="r+")
    new = np.arange(256, dtype="i4").reshape(16, 16) + 5000
    new[0:4, 0:4] = 0  # the first inner chunk is not stored: every other one moves 64 bytes up
    other[0:16, 0:16] = new
    # the old offset of the last inner chunk now holds bytes of the shard's index
    assert np.array_equal(reader[12:16, 12:16], new[12:16, 12:16])
    assert np.array_equal(reader[0:16, 0:16], new)
    assert np.array_equal(z[0:16, 0:16], new)


def test_no_index_is_kept_where_the_store_cannot_tell_a_change():
    store = CountingStore(MemoryStore())
    make(store)
    r = zarrkit.open_array(store, mode="r")
    store.reset()
    inner_reads(r)
    reads = [k for k, _ in store.keys_read if k.startswith("c/")]
    assert len(reads) == 2 * 64  # each inner read: its shard's index, then the chunk


def test_array_without_cached_metadata_reads_every_index_afresh(tmp_path):
    make(DirectoryStore(tmp_path), compressors=None)
    fresh = zarrkit.open_array(str(tmp_path), mode="r", cache_metadata=False)
    assert fresh[5, 5] == 5 * 32 + 5
    other = zarr.open_array(str(tmp_path), mode="r+")
    other[0:16, 0:16] = np.arange(256, dtype="i4").reshape(16, 16) + 1000  # same sizes
    assert fresh[5, 5] == 5 * 16 + 5 + 1000


def test_index_cache_is_bounded_in_entries_and_bytes():
    cache = IndexCache(max_entries=3, max_bytes=1000)
    idx = [np.zeros((4, 2), dtype="<u8") for _ in range(5)]  # 64 bytes each
    for i, a in enumerate(idx):
        cache.put(f"s{i}", a, cache.generation)
    assert len(cache) == 3 and cache.get("s0") is None and cache.get("s4") is idx[4]
    cache.get("s2")  # used: s3 is now the least recently used
    cache.put("s5", idx[0], cache.generation)
    assert cache.get("s3") is None and cache.get("s2") is not None
    big = np.zeros((40, 2), dtype="<u8")  # 640 bytes: two of them exceed 1000
    cache.put("b1", big, cache.generation)
    cache.put("b2", big.copy(), cache.generation)
    assert cache.get("b1") is None and cache.get("b2") is not None
    cache.put("huge", np.zeros((100, 2), dtype="<u8"), cache.generation)  # over the bound
    assert cache.get("huge") is None


def test_index_read_before_a_write_is_not_kept_after_it():
    cache = IndexCache()
    before = cache.generation
    cache.drop("s")  # a write of some shard happened while the index was being read
    cache.put("s", np.zeros((1, 2), dtype="<u8"), before)
    assert cache.get("s") is None


@pytest.mark.parametrize("n_threads", [2])
def test_inner_chunks_read_from_threads_match(n_threads):
    from concurrent.futures import ThreadPoolExecutor

    store = MemoryStore()
    make(store)
    r = zarrkit.open_array(store, mode="r")
    want = np.arange(32 * 32, dtype="i4").reshape(SHAPE)
    sels = [(slice(i, i + 4), slice(j, j + 4)) for i in range(0, 32, 4) for j in range(0, 32, 4)]
    with ThreadPoolExecutor(n_threads) as ex:
        got = list(ex.map(r.__getitem__, sels))
    assert all(np.array_equal(g, want[s]) for g, s in zip(got, sels))
