"""``value_version`` of the database stores: one version of a value, held for several reads.

A sharded read takes a shard's index and then its inner chunks from what ``value_version``
holds (see :class:`zarrkit.codecs.sharding.store.ShardVersion`); the reads between processes
are in ``test_kv_pinned_reads.py``.
"""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from test_kv_stores import redis_url  # noqa: F401  (the session's redis-server; tests/stores is on sys.path)

import zarrkit
from zarrkit.errors import ChunkDecodeError, StoreError
from zarrkit.storage.base import ByteRange
from zarrkit.storage.lmdb import LMDBStore
from zarrkit.storage.redis import WHOLE_READ_BYTES, RedisStore
from zarrkit.storage.sqlite import SQLiteStore

KINDS = ["sqlite", "sqlite-memory", "lmdb", "lmdb-copies", "redis"]


@pytest.fixture(params=KINDS)
def store(request, tmp_path):
    kind = request.param
    if kind == "sqlite":
        s = SQLiteStore(str(tmp_path / "v.sqlite"))
    elif kind == "sqlite-memory":
        s = SQLiteStore(":memory:")
    elif kind.startswith("lmdb"):
        s = LMDBStore(str(tmp_path / "v.lmdb"), map_size=2**24, buffers=kind == "lmdb")
    else:
        s = RedisStore(prefix=f"vv-{uuid.uuid4().hex}", url=request.getfixturevalue("redis_url"))
    yield s
    if kind == "redis":
        s.clear()
    s.close()


def _missing(store, key: str) -> bool:
    """Whether ``value_version`` finds no value at ``key`` (at once, or by its first read)."""
    held = store.value_version(key)
    if held is None:
        return True
    try:
        return held.read(-4) is None
    finally:
        held.close()


def test_a_held_version_reads_the_value_it_found(store):
    assert _missing(store, "a/c/0")
    store.set("a/c/0", b"0123456789")
    held = store.value_version("a/c/0")
    try:
        assert bytes(held.read(-4)) == b"6789"
        assert held.size == 10
        store.set("a/c/0", b"abcdefghijklmnopqrstuvwxyz")  # replaced meanwhile
        assert bytes(held.read(2, 3)) == b"234"
        assert bytes(held.read(7)) == b"789"
        assert bytes(held.read(8, 100)) == b"89"  # clamped at the end, as ranged gets are
        assert bytes(held.read(3, 0)) == b""
        reader = getattr(held, "read_ranges", None)
        if reader is not None:
            got = reader([ByteRange(0, 2), ByteRange(5, 5)])
            assert [bytes(g) for g in got] == [b"01", b"56789"]
        store.delete("a/c/0")
        assert bytes(held.read(0)) == b"0123456789"
    finally:
        held.close()
    held.close()  # twice is fine
    assert _missing(store, "a/c/0")


def test_sqlite_value_larger_than_max_chunk_bytes_is_refused_unread(tmp_path):
    s = SQLiteStore(str(tmp_path / "big.sqlite"))  # (read whole: Redis and LMDB read ranges)
    try:
        s.set("a/c/0", bytes(1000))
        with zarrkit.config.set(max_chunk_bytes=999), pytest.raises(ChunkDecodeError, match="a/c/0"):
            s.value_version("a/c/0")
        with zarrkit.config.set(max_chunk_bytes=1000):
            held = s.value_version("a/c/0")
            assert held.size == 1000
            held.close()
    finally:
        s.close()


def test_lmdb_versions_are_snapshots_any_thread_may_read_and_end(tmp_path):
    with LMDBStore(str(tmp_path / "t.lmdb"), map_size=2**24) as store:
        store.set("k", b"x" * 100_000)
        held = [store.value_version("k")]  # several at once on one thread
        store.set("k", b"y" * 100_000)
        held.append(store.value_version("k"))

        def work() -> list[bytes]:
            got = [bytes(h.read(99_990, 10)) for h in held]
            for h in held:
                h.close()  # ended on another thread than the one that began it
            return got

        with ThreadPoolExecutor(1) as pool:
            got = pool.submit(work).result()
        assert got == [b"x" * 10, b"y" * 10]
        again = store.value_version("k")
        assert bytes(again.read(0, 1)) == b"y"
        again.close()
        with pytest.raises(StoreError, match="closed"):
            again.read(0, 1)
        last = store.value_version("k")
    with pytest.raises(StoreError, match="closed"):  # the store (and its map) is gone
        last.read(0, 1)
    last.close()


def test_redis_held_version_reads_only_while_the_bytes_read_are_unchanged(redis_url):  # noqa: F811
    big = WHOLE_READ_BYTES + 1000  # read range by range
    with RedisStore(prefix=f"vv-{uuid.uuid4().hex}", url=redis_url) as store:
        try:
            old = bytes(range(256)) * (big // 256)
            store.set("s", old)
            held = store.value_version("s")
            assert bytes(held.read(-16)) == old[-16:]  # (the index)
            assert held.size == len(old)
            got = held.read_ranges([ByteRange(0, 10), ByteRange(1000, 5)])
            assert got == [old[:10], old[1000:1005]]
            # the end (the index) kept, a byte read before changed: another version
            store.set("s", b"x" + old[1:])
            assert held.read(20, 4) is None
            held.close()
            again = store.value_version("s")  # read whole: no writer comes between
            assert bytes(again.read(0, 2)) == b"x\x01"
            again.close()
            # replaced by one of another size after the first read: gone
            held = store.value_version("s")
            assert bytes(held.read(-16)) == old[-16:]
            store.set("s", old + b"!")
            assert held.read_ranges([ByteRange(0, 4)]) is None
            held.close()
            # bytes not read before may change meanwhile: what was read is still one version
            held = store.value_version("s")
            assert bytes(held.read(-16)) == (old + b"!")[-16:]
            store.set("s", b"y" + old[1:] + b"!")
            assert held.read(1, 3) == old[1:4]
            held.close()
            store.delete("s")
            assert _missing(store, "s")
        finally:
            store.clear()
