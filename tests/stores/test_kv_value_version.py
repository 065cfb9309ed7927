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
from zarrkit.storage.redis import RedisStore
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


def test_a_held_version_reads_the_value_it_found(store):
    assert store.value_version("a/c/0") is None
    store.set("a/c/0", b"0123456789")
    held = store.value_version("a/c/0")
    try:
        store.set("a/c/0", b"abcdefghijklmnopqrstuvwxyz")  # replaced meanwhile
        assert held.size == 10
        assert bytes(held.read(-4)) == b"6789"
        assert bytes(held.read(2, 3)) == b"234"
        assert bytes(held.read(7)) == b"789"
        assert bytes(held.read(8, 100)) == b"89"  # clamped at the end, as ranged gets are
        reader = getattr(held, "read_ranges", None)
        if reader is not None:
            got = reader([ByteRange(0, 2), ByteRange(5, 5)])
            assert [bytes(g) for g in got] == [b"01", b"56789"]
        store.delete("a/c/0")
        assert bytes(held.read(0)) == b"0123456789"
    finally:
        held.close()
    held.close()  # twice is fine
    assert store.value_version("a/c/0") is None


@pytest.mark.parametrize("kind", ["sqlite", "redis"])
def test_a_value_larger_than_max_chunk_bytes_is_refused_unread(kind, tmp_path, request):
    if kind == "sqlite":
        s = SQLiteStore(str(tmp_path / "big.sqlite"))
    else:
        s = RedisStore(prefix=f"vv-{uuid.uuid4().hex}", url=request.getfixturevalue("redis_url"))
    try:
        s.set("a/c/0", bytes(1000))
        with zarrkit.config.set(max_chunk_bytes=999), pytest.raises(ChunkDecodeError, match="a/c/0"):
            s.value_version("a/c/0")
        with zarrkit.config.set(max_chunk_bytes=1000):
            held = s.value_version("a/c/0")
            assert held.size == 1000
            held.close()
    finally:
        if kind == "redis":
            s.clear()
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
