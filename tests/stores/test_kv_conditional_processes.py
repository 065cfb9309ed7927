"""Conditional writes of the database stores hold between processes.

Three processes each add one to a counter 30 times with the read-modify-write loop every
partial write of the engine is (``get_versioned``, change, ``set_if``, on a conflict read
again); they start together, so they meet on the key.  The count comes out exactly 90 only
when no conditional write can slip in between another's comparison and its store.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid

import pytest
from test_kv_stores import redis_url  # noqa: F401  (the session's redis-server; tests/stores is on sys.path)

from zarrkit.storage.base import ABSENT
from zarrkit.storage.lmdb import LMDBStore
from zarrkit.storage.redis import RedisStore
from zarrkit.storage.sqlite import SQLiteStore

pytestmark = pytest.mark.slow  # starts processes

PROCESSES, ROUNDS = 3, 30

#: one worker: open the store, say it is ready, wait for the start, then count
_WORKER = r"""
import json, os, sys, time
from zarrkit.errors import VersionConflictError
from zarrkit.storage.lmdb import LMDBStore
from zarrkit.storage.redis import RedisStore
from zarrkit.storage.sqlite import SQLiteStore

kind, where, ready, go, rounds = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
if kind == "sqlite":
    store = SQLiteStore(where)
elif kind == "lmdb":
    store = LMDBStore(where, map_size=2**24)
else:
    url, prefix = where.split(" ", 1)
    store = RedisStore(prefix=prefix, url=url)
store.get("n")  # connected
open(ready, "w").close()
deadline = time.monotonic() + 60
while not os.path.exists(go):
    if time.monotonic() > deadline:
        sys.exit("no start signal")
    time.sleep(0.001)
conflicts = 0
for _ in range(rounds):
    while True:
        value, version = store.get_versioned("n")
        try:
            store.set_if("n", str(int(bytes(value)) + 1).encode(), version)
            break
        except VersionConflictError:
            conflicts += 1
store.close()
print(json.dumps({"conflicts": conflicts}))
"""


#: one worker of two threads, each flipping a value between A and B: read it, write the other
#: on the condition of the version read, write the first back on the condition of the version
#: returned (the value is then what it was when first read), and try the first version once
#: more -- a write conditioned on it must fail, the value having been written twice since
_FLIPPER = _WORKER.split("conflicts = 0")[0] + r"""
import threading
done, stale_landed, lock = [], [], threading.Lock()

def flip(current):
    return b"B" if current == b"A" else b"A"

def run():
    for _ in range(rounds):
        value, first = store.get_versioned("x")
        try:
            second = store.set_if("x", flip(value), first)
            with lock:
                done.append([repr(first), repr(second)])
            third = store.set_if("x", value, second)
            with lock:
                done.append([repr(second), repr(third)])
        except VersionConflictError:
            continue
        try:
            store.set_if("x", flip(value), first)
            stale_landed.append(repr(first))
        except VersionConflictError:
            pass

threads = [threading.Thread(target=run) for _ in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
store.close()
print(json.dumps({"done": done, "stale_landed": stale_landed}))
"""


def _count_in_processes(tmp_path, kind: str, where: str, worker: str = _WORKER) -> list[dict]:
    """Run the workers against the store at ``where``; what each reported."""
    go = tmp_path / "go"
    ready = [tmp_path / f"ready{i}" for i in range(PROCESSES)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", worker, kind, where, str(r), str(go), str(ROUNDS)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
        )
        for r in ready
    ]
    try:
        deadline = time.monotonic() + 60
        while not all(r.exists() for r in ready):
            if time.monotonic() > deadline or any(p.poll() not in (None, 0) for p in procs):
                break
            time.sleep(0.005)
        go.touch()
        reports = []
        for p in procs:
            out, err = p.communicate(timeout=60)
            assert p.returncode == 0, err.decode(errors="replace")
            reports.append(json.loads(out.decode().strip().splitlines()[-1]))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.communicate()
    return reports


def test_sqlite_counter_between_processes(tmp_path):
    path = str(tmp_path / "n.sqlite")
    with SQLiteStore(path) as store:
        store.set_if("n", b"0", ABSENT)
    _count_in_processes(tmp_path, "sqlite", path)
    with SQLiteStore(path, read_only=True) as store:
        assert store.get("n") == str(PROCESSES * ROUNDS).encode()


def test_lmdb_counter_between_processes(tmp_path):
    path = str(tmp_path / "n.lmdb")
    with LMDBStore(path, map_size=2**24) as store:
        store.set_if("n", b"0", ABSENT)
    _count_in_processes(tmp_path, "lmdb", path)
    with LMDBStore(path, read_only=True) as store:
        assert store.get("n") == str(PROCESSES * ROUNDS).encode()


def test_redis_counter_between_processes(tmp_path, redis_url):  # noqa: F811
    prefix = f"count-{uuid.uuid4().hex}"
    with RedisStore(prefix=prefix, url=redis_url) as store:
        store.set_if("n", b"0", ABSENT)
        _count_in_processes(tmp_path, "redis", f"{redis_url} {prefix}")
        assert store.get("n") == str(PROCESSES * ROUNDS).encode()
        store.clear()


def _flip_in_processes(tmp_path, kind: str, where: str, store) -> None:
    """Flip a value between A and B from every worker's threads: no stale version takes a
    write, and the conditional writes that landed are one history, each version written over
    once, from the first version to the one stored."""
    first = store.set_if("x", b"A", ABSENT)
    reports = _count_in_processes(tmp_path, kind, where, _FLIPPER)
    assert [r["stale_landed"] for r in reports] == [[]] * PROCESSES
    done = [pair for r in reports for pair in r["done"]]
    after = dict(done)
    assert len(after) == len(done)  # no version was written over twice
    version = repr(first)
    for _ in done:
        version = after[version]
    value, last = store.get_versioned("x")
    assert version == repr(last) and value == (b"A", b"B")[len(done) % 2]


def test_sqlite_values_changed_back_between_processes(tmp_path):
    path = str(tmp_path / "x.sqlite")
    with SQLiteStore(path) as store:
        _flip_in_processes(tmp_path, "sqlite", path, store)


def test_lmdb_values_changed_back_between_processes(tmp_path):
    path = str(tmp_path / "x.lmdb")
    with LMDBStore(path, map_size=2**24) as store:
        _flip_in_processes(tmp_path, "lmdb", path, store)


def test_redis_values_changed_back_between_processes(tmp_path, redis_url):  # noqa: F811
    prefix = f"flip-{uuid.uuid4().hex}"
    with RedisStore(prefix=prefix, url=redis_url) as store:
        _flip_in_processes(tmp_path, "redis", f"{redis_url} {prefix}", store)
        store.clear()
