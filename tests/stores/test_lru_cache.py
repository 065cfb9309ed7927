"""LRUStoreCache: the store contract, bounded size, counters, invalidation."""

from __future__ import annotations

import numpy as np
import pytest

import zarrkit
from zarrkit.storage import CountingStore, DirectoryStore, LRUStoreCache, MemoryStore, ReadOnlyStore
from zarrkit.testing import PublicAPISuite, StoreSuite


class TestLRUStoreCacheOverMemory(StoreSuite, PublicAPISuite):
    def make_store(self, tmp_path):
        return LRUStoreCache(MemoryStore(), max_size=2**20)

    def make_read_only_store(self, tmp_path, source):
        return LRUStoreCache(ReadOnlyStore(source.inner), max_size=2**20)


class TestLRUStoreCacheOverDirectory(StoreSuite, PublicAPISuite):
    def make_store(self, tmp_path):
        return LRUStoreCache(DirectoryStore(tmp_path / "d"), max_size=None)

    def make_read_only_store(self, tmp_path, source):
        return LRUStoreCache(ReadOnlyStore(source.inner), max_size=None)

    def reopen_store(self, tmp_path, store, mode):
        # a cold cache over a new store object on the same directory
        return LRUStoreCache(DirectoryStore(store.inner.path, read_only=mode == "r"),
                             max_size=None)


def test_repeated_reads_hit_the_cache():
    inner = CountingStore(MemoryStore())
    cache = LRUStoreCache(inner, max_size=2**24)
    z = zarrkit.zeros((100, 100), chunks=(10, 10), dtype="i4", store=cache)
    z[:] = np.arange(10000).reshape(100, 100)
    inner.reset()
    a = z[:]
    b = z[:]
    assert np.array_equal(a, b)
    # the writes populated the cache: nothing was read from the inner store at all
    assert inner.counts["get"] == 0
    assert cache.hits >= 200


def test_cold_cache_reads_each_chunk_once():
    inner = CountingStore(MemoryStore())
    z = zarrkit.zeros((100, 100), chunks=(10, 10), dtype="i4", store=inner)
    z[:] = 7
    cache = LRUStoreCache(inner, max_size=None)
    r = zarrkit.open_array(cache, mode="r")
    inner.reset()
    r[:]
    r[:]
    chunk_gets = [k for k, _ in inner.keys_read if k.startswith("c/")]
    assert len(chunk_gets) == 100 and len(set(chunk_gets)) == 100
    assert cache.misses >= 100


def test_size_bound_evicts_least_recently_used():
    cache = LRUStoreCache(MemoryStore(), max_size=250)
    for k in "abc":
        cache.inner.set(k, bytes(100))
    cache.get("a")
    cache.get("b")
    cache.get("a")  # a is now more recent than b
    cache.get("c")  # 300 bytes > 250: evicts b
    assert set(cache._values) == {"a", "c"}
    assert cache._current_size == 200
    big = LRUStoreCache(MemoryStore(), max_size=10)
    big.set("x", bytes(100))  # larger than the cache: not cached, still stored
    assert big._current_size == 0 and big.get("x") == bytes(100)


def test_invalidate_sees_changes_made_elsewhere():
    inner = MemoryStore()
    cache = LRUStoreCache(inner, max_size=None)
    cache.set("k", b"1")
    inner.set("k", b"2")  # another writer
    assert cache.get("k") == b"1"
    cache.invalidate()
    assert cache.get("k") == b"2"
    inner.set("new", b"x")
    assert "new" in cache.list_dir("")  # listings are cached until a write or invalidate
    cache.list_dir("")
    inner.set("newer", b"x")
    assert "newer" not in cache.list_dir("")
    cache.invalidate_keys()
    assert "newer" in cache.list_dir("")


def test_byte_ranges_from_cached_values():
    inner = CountingStore(MemoryStore())
    cache = LRUStoreCache(inner, max_size=None)
    cache.set("k", b"0123456789")
    inner.reset()
    assert cache.get("k", zarrkit.storage.ByteRange(2, 3)) == b"234"
    assert cache.get("k", zarrkit.storage.ByteRange(-4)) == b"6789"
    assert inner.counts["get"] == 0


def test_bad_max_size():
    with pytest.raises(ValueError, match="max_size"):
        LRUStoreCache(MemoryStore(), max_size=-1)
