"""A read of a sharded array from a database store takes each shard from one version of it.

A writer process rewrites the one shard of an array over and over, alternating between two
whole values, A (every element 1) and B (every element 2), while this process reads the array:
every read must find all A or all B, and fail with no error.  B's inner chunks are stored
further on in the shard than A's (after some padding, as a valid shard may have them), so an
index of one version read with the bytes of the other finds wrong values or no chunk; and the
inner chunks of a partial read are far apart (more than the gap that ranges are read together
across), so a reader that takes each range with a read of its own can find some chunks of A
and others of B.  A reader pinned to one version of the shard (``value_version``) does neither.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid

import numpy as np
import pytest
from numcodecs import CRC32C
from test_kv_stores import redis_url  # noqa: F401  (the session's redis-server; tests/stores is on sys.path)

import zarrkit
from zarrkit.codecs.sharding.store import COALESCE_GAP
from zarrkit.errors import ZarrkitError
from zarrkit.storage.lmdb import LMDBStore
from zarrkit.storage.redis import RedisStore
from zarrkit.storage.sqlite import SQLiteStore

pytestmark = pytest.mark.slow  # starts processes

#: inner chunks per shard, and elements per inner chunk: an inner chunk is longer than the gap
#: ranges are coalesced across, so the even chunks are read as separate ranges
CHUNKS = 8
CHUNK = COALESCE_GAP // 4 + 64
READS = 200
SHARD_KEY = "a/c/0"
#: bytes before B's inner chunks in its shard
PAD = 64

#: writes the reader waits for, at least (it reads READS times, and on until they are made)
WRITES = 30

#: the writer: open the store, say it is ready, then store the two values of the shard in
#: turn until told to stop (saying when it made WRITES)
_WRITER = r"""
import os, sys, time
from zarrkit.storage.lmdb import LMDBStore
from zarrkit.storage.redis import RedisStore
from zarrkit.storage.sqlite import SQLiteStore

kind, where, key, a, b, ready, enough, stop, writes = sys.argv[1:10]
if kind == "sqlite":
    store = SQLiteStore(where)
elif kind == "lmdb":
    store = LMDBStore(where, map_size=2**26)
else:
    url, prefix = where.split(" ", 1)
    store = RedisStore(prefix=prefix, url=url)
values = [open(a, "rb").read(), open(b, "rb").read()]
open(ready, "w").close()
deadline = time.monotonic() + 60
n = 0
while not os.path.exists(stop) and time.monotonic() < deadline:
    store.set(key, values[n % 2])
    n += 1
    if n == int(writes):
        open(enough, "w").close()
store.close()
print(n)
"""


def _make(store) -> zarrkit.Array:
    return zarrkit.create_array(
        store, name="a", shape=(CHUNKS * CHUNK,), chunks=(CHUNK,), shards=(CHUNKS * CHUNK,),
        dtype="uint32", compressors=None, fill_value=0,
    )


def _padded(shard: bytes) -> bytes:
    """``shard`` with its inner chunks ``PAD`` bytes further on, after padding: its index (at
    the end, with its CRC32C) moved as they are."""
    n = CHUNKS * 16
    index = np.frombuffer(shard[-n - 4 : -4], "<u8").reshape(-1, 2).copy()
    assert bytes(CRC32C().encode(index.tobytes()))[-4:] == shard[-4:]  # (the layout expected)
    index[index[:, 0] != 2**64 - 1, 0] += PAD
    raw = index.tobytes()
    return b"\x07" * PAD + shard[: -n - 4] + raw + bytes(CRC32C().encode(raw))[-4:]


def _torn_reads(tmp_path, store, kind: str, where: str) -> tuple[int, int, int]:
    """Read the array while a writer process rewrites its shard: (reads that were not all A
    or all B, or failed; reads; writes)."""
    z = _make(store)
    values = {}
    for name, fill in (("a", 1), ("b", 2)):
        z[:] = fill
        shard = store.get(SHARD_KEY)
        if name == "b":
            shard = _padded(shard)
            store.set(SHARD_KEY, shard)
            assert np.all(z[:] == 2)  # a valid shard
        values[name] = tmp_path / f"shard-{name}"
        values[name].write_bytes(shard)
    ready, enough, stop = tmp_path / "ready", tmp_path / "enough", tmp_path / "stop"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    proc = subprocess.Popen(
        [sys.executable, "-c", _WRITER, kind, where, SHARD_KEY, str(values["a"]), str(values["b"]),
         str(ready), str(enough), str(stop), str(WRITES)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )
    try:
        deadline = time.monotonic() + 60
        while not ready.exists():
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[1].decode()
            time.sleep(0.005)
        reader = zarrkit.open_array(store, path="a", mode="r")
        picks = np.arange(0, CHUNKS, 2) * CHUNK + CHUNK // 2  # one element of each even chunk
        mixed = reads = 0
        while reads < READS or not enough.exists():
            assert time.monotonic() < deadline and (proc.poll() is None or enough.exists()), (
                "expected the writer to make its writes"
            )
            i, reads = reads, reads + 1
            try:
                got = reader[:] if i % 2 == 0 else reader.get_coordinate_selection(picks)
            except ZarrkitError:  # (a ChunkDecodeError: an index beyond the bytes read)
                mixed += 1
                continue
            if not (np.all(got == 1) or np.all(got == 2)):
                mixed += 1
        stop.touch()
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err.decode(errors="replace")
        writes = int(out.decode().split()[-1])
    finally:
        stop.touch()
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return mixed, reads, writes


def _check(mixed: int, reads: int, writes: int) -> None:
    assert writes >= WRITES, f"expected the writer to rewrite the shard while it was read, got {writes} writes"
    assert mixed == 0, f"expected every read to be all A or all B, got {mixed} of {reads} mixed or failed"


def test_sqlite_sharded_reads_are_pinned(tmp_path):
    with SQLiteStore(str(tmp_path / "s.sqlite")) as store:
        _check(*_torn_reads(tmp_path, store, "sqlite", store.path))


def test_lmdb_sharded_reads_are_pinned(tmp_path):
    path = str(tmp_path / "s.lmdb")
    with LMDBStore(path, map_size=2**26) as store:
        _check(*_torn_reads(tmp_path, store, "lmdb", path))


def test_redis_sharded_reads_are_pinned(tmp_path, redis_url):  # noqa: F811
    prefix = f"pinned-{uuid.uuid4().hex}"
    with RedisStore(prefix=prefix, url=redis_url) as store:
        try:
            _check(*_torn_reads(tmp_path, store, "redis", f"{redis_url} {prefix}"))
        finally:
            store.clear()
