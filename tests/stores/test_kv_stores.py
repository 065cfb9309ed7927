"""The key/value database stores: SQLite, DBM, LMDB and Redis.

Each runs the store conformance suite (with a read-only variant) and the round trips through the
public API (``zarrkit.testing.PublicAPISuite``).  The Redis tests start their own
``redis-server`` (which must be installed: ``make test`` installs it); they fail, not skip, when
it is missing.
"""

from __future__ import annotations

import dbm
import dbm.dumb
import os
import pickle
import shutil
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import uuid

import pytest

from zarrkit.errors import (
    ConditionalWritesUnsupportedError,
    ReadOnlyError,
    StoreError,
    VersionConflictError,
)
from zarrkit.storage import ReadOnlyStore
from zarrkit.storage.base import ABSENT, ByteRange
from zarrkit.storage.dbm import DBMStore
from zarrkit.storage.lmdb import LMDBStore
from zarrkit.storage.redis import RedisStore
from zarrkit.storage.sqlite import SQLiteStore
from zarrkit.testing import PublicAPISuite, StoreSuite

# -- a redis-server of our own -------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory):
    """Start ``redis-server`` on a free local port; yield its URL; stop it at the end."""
    exe = shutil.which("redis-server")
    if exe is None:
        pytest.fail(
            "redis-server is not installed (needed by the RedisStore tests): "
            "apt-get install redis-server (`make test` installs it)",
            pytrace=False,
        )
    import redis

    workdir = tmp_path_factory.mktemp("redis")
    last_error = ""
    for _ in range(5):  # another process may take the port between choice and bind: retry
        port = _free_port()
        proc = subprocess.Popen(
            [exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(workdir), "--daemonize", "no", "--protected-mode", "yes"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )
        client = redis.Redis(host="127.0.0.1", port=port, socket_connect_timeout=1)
        deadline = time.monotonic() + 15
        ready = False
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                ready = bool(client.ping())
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        client.close()
        if ready:
            break
        proc.kill()
        out, _ = proc.communicate(timeout=10)
        last_error = out.decode(errors="replace")[-2000:]
    else:
        pytest.fail(f"could not start redis-server: {last_error}", pytrace=False)
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.kill()
        proc.communicate(timeout=10)


# -- SQLite --------------------------------------------------------------------------------------


class TestSQLiteStore(StoreSuite, PublicAPISuite):
    conditional = True

    def make_store(self, tmp_path):
        return SQLiteStore(tmp_path / "data.sqlite")

    def reopen_store(self, tmp_path, store, mode):
        return SQLiteStore(store.path, read_only=mode == "r")

    def make_read_only_store(self, tmp_path, source):
        return SQLiteStore(source.path, read_only=True)


class TestSQLiteStoreInMemory(StoreSuite, PublicAPISuite):
    conditional = True

    picklable = False

    def make_store(self, tmp_path):
        return SQLiteStore(":memory:")

    def make_read_only_store(self, tmp_path, source):
        return ReadOnlyStore(source)  # a private in-memory database cannot be reopened


def test_sqlite_file_layout_is_zarr2s(tmp_path):
    path = tmp_path / "z.sqlite"
    with SQLiteStore(path) as store:
        store["a/b"] = b"123"
        probe = sqlite3.connect(path)
        assert probe.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        probe.close()
    # the last writer to close returns the database to rollback-journal mode (read-only
    # connections then need no -shm/-wal files)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["z.sqlite"]
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
        assert conn.execute("SELECT k, v FROM zarr").fetchall() == [("a/b", b"123")]
        # a database written by zarr-python 2 (same table) is readable
        conn.execute("INSERT INTO zarr (k, v) VALUES (?, ?)", ("other", b"xyz"))
        conn.commit()
    finally:
        conn.close()
    with SQLiteStore(path, read_only=True) as store:
        assert store["other"] == b"xyz"
        assert sorted(store) == ["a/b", "other"]


def test_sqlite_versions_keep_zarr2s_table_and_see_its_writes(tmp_path):
    # versions are the content: the table keeps zarr-python 2's two columns (its writes are
    # ``REPLACE INTO zarr VALUES (?, ?)``), and a write through another connection, as
    # zarr-python 2 makes it, is a new version
    path = tmp_path / "z.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE zarr(k TEXT PRIMARY KEY, v BLOB)")
    conn.execute("REPLACE INTO zarr VALUES (?, ?)", ("old", b"from zarr 2"))
    conn.commit()
    with SQLiteStore(path) as store:
        value, version = store.get_versioned("old")
        assert value == b"from zarr 2"
        new = store.set_if("old", b"changed", version)
        conn.execute("REPLACE INTO zarr VALUES (?, ?)", ("old", b"zarr 2 again"))
        conn.commit()
        with pytest.raises(VersionConflictError, match="'old'"):
            store.set_if("old", b"lost", new)
        with pytest.raises(VersionConflictError):
            store.delete_if("old", new)
        assert store.get("old") == b"zarr 2 again"
        conn.execute("REPLACE INTO zarr VALUES (?, ?)", ("text", "written as TEXT"))
        conn.commit()
        value, version = store.get_versioned("text")
        store.set_if("text", value + b"!", version)
        assert store["text"] == b"written as TEXT!"
        with pytest.raises(ValueError, match="more than|10"):
            store.get_versioned("text", limit=10)
    assert [r[1] for r in conn.execute("PRAGMA table_info(zarr)")] == ["k", "v"]
    conn.close()
    with SQLiteStore(path, read_only=True) as ro:
        assert ro.get_versioned("old")[0] == b"zarr 2 again"
        with pytest.raises(ReadOnlyError):
            ro.set_if("old", b"x", ABSENT)


def test_sqlite_conditional_write_waits_for_another_writer(tmp_path):
    # the comparison runs under the database's write lock: while another connection holds
    # it, a conditional write neither compares nor writes (it waits, here in vain)
    path = tmp_path / "z.sqlite"
    with SQLiteStore(path, timeout=0.2) as store:
        version = store.set_if("k", b"1", ABSENT)
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        other.execute("UPDATE zarr SET v = ? WHERE k = ?", (b"2", "k"))
        with pytest.raises(StoreError, match="locked"):
            store.set_if("k", b"3", version)
        other.execute("COMMIT")
        other.close()
        with pytest.raises(VersionConflictError):
            store.set_if("k", b"3", version)
        assert store["k"] == b"2"


def test_sqlite_partial_read_and_size_in_sql(tmp_path):
    with SQLiteStore(tmp_path / "z.sqlite") as store:
        value = bytes(range(256)) * 1000
        store["big"] = value
        assert store.get("big", ByteRange(1000, 10)) == value[1000:1010]
        assert store.get("big", ByteRange(-7)) == value[-7:]
        assert store.get("big", ByteRange(255_990)) == value[255_990:]
        assert store.getsize("big") == len(value)
        traced: list[str] = []
        store._conn().set_trace_callback(traced.append)
        store.get("big", ByteRange(5, 3))
        assert any("substr" in sql for sql in traced), traced


def test_sqlite_list_prefix_is_a_range_scan(tmp_path):
    with SQLiteStore(tmp_path / "z.sqlite") as store:
        keys = ["a", "a/b", "a/c/d", "a0", "a.z", "b", "\U0010ffff", "\U0010ffff/x",
                "\ud7ff", "\ud7ffq", "\ue000"]  # U+D7FF + 1 is a surrogate: skipped
        for k in keys:
            store[k] = b"1"
        assert list(store.list_prefix("a/")) == ["a/b", "a/c/d"]
        assert list(store.list_prefix("a")) == ["a", "a.z", "a/b", "a/c/d", "a0"]
        assert list(store.list_prefix("\U0010ffff")) == ["\U0010ffff", "\U0010ffff/x"]
        assert list(store.list_prefix("\ud7ff")) == ["\ud7ff", "\ud7ffq"]
        assert store.list_dir("") == sorted({k.split("/")[0] for k in keys})
        plan = " ".join(
            str(r) for r in store._conn().execute(
                "EXPLAIN QUERY PLAN SELECT k FROM zarr WHERE k >= ? AND k < ?", ("a/", "a0")
            )
        )
        assert "USING" in plan and "INDEX" in plan.upper(), plan


def test_sqlite_threads_get_their_own_connections(tmp_path):
    store = SQLiteStore(tmp_path / "z.sqlite")
    store["k"] = b"v"
    conns = []

    def work():
        assert store["k"] == b"v"
        conns.append(store._conn())

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(c) for c in conns} | {id(store._conn())}) == 4
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.get("k")
    store.close()  # twice is fine


def test_sqlite_errors_name_the_path(tmp_path):
    missing = tmp_path / "missing.sqlite"
    with pytest.raises(FileNotFoundError, match="missing.sqlite"):
        SQLiteStore(missing, read_only=True)
    assert not missing.exists()
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="junk.sqlite"):
        SQLiteStore(junk)
    with SQLiteStore(tmp_path / "ro.sqlite") as s:
        s["x"] = b"1"
    with SQLiteStore(tmp_path / "ro.sqlite", read_only=True) as ro:
        with pytest.raises(ReadOnlyError, match="SQLiteStore"):
            ro["y"] = b"2"
        assert ro["x"] == b"1"
    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    with pytest.raises(StoreError, match="other.sqlite.*no table"):
        SQLiteStore(other, read_only=True)


def test_sqlite_set_many_is_one_transaction(tmp_path):
    with SQLiteStore(tmp_path / "z.sqlite") as store:
        store.set_many({"a": b"1", "b/c": bytearray(b"22")})
        assert store.get_many(["a", "b/c", "x"]) == {"a": b"1", "b/c": b"22", "x": None}
        with pytest.raises(TypeError):
            store.set_many({"d": b"1", "e": "not bytes"})
        assert "d" not in store


def test_sqlite_pickle_in_another_process(tmp_path):
    store = SQLiteStore(tmp_path / "z.sqlite")
    store["k"] = b"from parent"
    code = (
        "import pickle, sys; s = pickle.loads(sys.stdin.buffer.read()); "
        "s['child'] = s['k'] + b' and child'; s.close()"
    )
    subprocess.run([sys.executable, "-c", code], input=pickle.dumps(store), check=True,
                   timeout=60)
    assert store["child"] == b"from parent and child"
    store.close()


# -- DBM -----------------------------------------------------------------------------------------


class TestDBMStore(StoreSuite, PublicAPISuite):
    conditional = False

    def make_store(self, tmp_path):
        return DBMStore(tmp_path / "data.db", open=dbm.dumb.open)

    def make_read_only_store(self, tmp_path, source):
        source.flush()
        return DBMStore(source.path, flag="r", open=dbm.dumb.open)

    def reopen_store(self, tmp_path, store, mode):
        store.close()  # one writer at a time: dbm.dumb keeps its index in memory
        return DBMStore(store.path, flag="r" if mode == "r" else "w", open=dbm.dumb.open)


def test_dbm_default_backend(tmp_path):
    path = tmp_path / "default.db"
    with DBMStore(path) as store:
        store["a/b"] = b"1"
        store["c"] = b"22"
    assert dbm.whichdb(str(path)) is not None
    with DBMStore(path, flag="r") as store:
        assert store.read_only
        assert sorted(store) == ["a/b", "c"]
        assert store.get("c", ByteRange(1)) == b"2"


def test_dbm_flags_and_errors(tmp_path):
    missing = tmp_path / "missing.db"
    with pytest.raises(FileNotFoundError, match="missing.db"):
        DBMStore(missing, flag="r")
    with pytest.raises(ValueError):
        DBMStore(tmp_path / "x.db", flag="z")
    path = tmp_path / "n.db"
    store = DBMStore(path, flag="n", open=dbm.dumb.open)
    store["k"] = b"v"
    clone = pickle.loads(pickle.dumps(store))  # reopening must not empty it ('n' -> 'c')
    assert clone["k"] == b"v"
    clone.close()
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store["k"]
    with DBMStore(path, flag="n", open=dbm.dumb.open) as fresh:
        assert len(fresh) == 0
    with DBMStore(path, open=dbm.dumb.open, write_lock=False) as unlocked:
        unlocked["x/y"] = b"1"
        assert unlocked.list_dir("x") == ["y"]


# -- LMDB ----------------------------------------------------------------------------------------


class TestLMDBStore(StoreSuite, PublicAPISuite):
    conditional = True

    def make_store(self, tmp_path):
        return LMDBStore(tmp_path / "data.lmdb", map_size=2**28)

    def make_read_only_store(self, tmp_path, source):
        return LMDBStore(source.path, read_only=True)

    def reopen_store(self, tmp_path, store, mode):
        return LMDBStore(store.path, read_only=mode == "r")


class TestLMDBStoreNoBuffers(StoreSuite):
    conditional = True

    def make_store(self, tmp_path):
        return LMDBStore(tmp_path / "data.lmdb", buffers=False, map_size=2**28, subdir=False)

    def make_read_only_store(self, tmp_path, source):
        return LMDBStore(source.path, buffers=False, read_only=True, subdir=False)


def test_lmdb_list_dir_skips_subtrees(tmp_path):
    with LMDBStore(tmp_path / "l", map_size=2**24) as store:
        store.set_many({f"big/{i}/{j}": b"x" for i in range(20) for j in range(20)})
        store.set_many({"big/.zarray": b"{}", "big/10": b"y", "big0": b"z", "big.x": b"z"})
        assert store.list_dir("big/") == sorted([".zarray"] + [str(i) for i in range(20)])
        assert store.list_dir("") == ["big", "big.x", "big0"]
        assert len(store) == 404


def test_lmdb_errors(tmp_path, monkeypatch):
    with pytest.raises(FileNotFoundError, match="nope"):
        LMDBStore(tmp_path / "nope", read_only=True)
    with LMDBStore(tmp_path / "small", map_size=2**16) as store:
        with pytest.raises(StoreError, match="map_size"):
            store["huge"] = b"x" * 2**20
        with pytest.raises(StoreError, match="511"):
            store["k" * 600] = b"x"
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.get("a")
    monkeypatch.setitem(sys.modules, "lmdb", None)
    with pytest.raises(ImportError, match=r"pip install 'zarrkit\[lmdb\]'"):
        LMDBStore(tmp_path / "x")


def test_lmdb_versions(tmp_path):
    with LMDBStore(tmp_path / "l", map_size=2**24) as store:
        version = store.set_if("k", b"1", ABSENT)
        # a plain write from another process (its own environment) is another version
        code = (
            "import sys; from zarrkit.storage.lmdb import LMDBStore; "
            "s = LMDBStore(sys.argv[1], map_size=2**24); s['k'] = b'2'; s.close()"
        )
        subprocess.run([sys.executable, "-c", code, store.path], check=True, timeout=60)
        with pytest.raises(VersionConflictError, match="'k'"):
            store.set_if("k", b"3", version)
        assert store["k"] == b"2"
        with pytest.raises(VersionConflictError):
            store.set_if("k", b"3", ("not", "a version"))
    # without LMDB's locks nothing keeps other processes' writes out: no conditional writes
    with LMDBStore(tmp_path / "u", map_size=2**24, lock=False) as unlocked:
        assert not unlocked.supports_conditional_writes
        with pytest.raises(ConditionalWritesUnsupportedError):
            unlocked.set_if("k", b"1", ABSENT)
        assert not pickle.loads(pickle.dumps(unlocked)).supports_conditional_writes


def test_lmdb_stores_on_one_path_share_the_environment(tmp_path):
    a = LMDBStore(tmp_path / "l", map_size=2**24)
    b = LMDBStore(tmp_path / "l", read_only=True)
    assert a.env is b.env
    a["k"] = b"v"
    assert b["k"] == b"v"
    with pytest.raises(ReadOnlyError):
        b["k"] = b"w"
    b.close()
    assert a["k"] == b"v"  # still open
    a.close()
    with LMDBStore(tmp_path / "l", read_only=True) as c:  # reopened from disk
        assert c["k"] == b"v"


# -- Redis ---------------------------------------------------------------------------------------


class TestRedisStore(StoreSuite, PublicAPISuite):
    conditional = True

    @pytest.fixture(autouse=True)
    def _server(self, redis_url):
        self.url = redis_url

    def make_store(self, tmp_path):
        # glob characters in the prefix: listings must escape them
        return RedisStore(prefix=f"test*[{uuid.uuid4().hex}]?", url=self.url)

    def make_read_only_store(self, tmp_path, source):
        return RedisStore(prefix=source.prefix, url=source.url, read_only=True)

    def reopen_store(self, tmp_path, store, mode):
        return RedisStore(prefix=store.prefix, url=store.url, read_only=mode == "r")


class TestRedisStoreHostPort(StoreSuite):
    """Connection by keyword arguments instead of a URL."""

    conditional = True

    @pytest.fixture(autouse=True)
    def _server(self, redis_url):
        self.port = int(redis_url.rsplit(":", 1)[1].split("/")[0])

    def make_store(self, tmp_path):
        return RedisStore(prefix=uuid.uuid4().hex, host="127.0.0.1", port=self.port, db=1)

    def make_read_only_store(self, tmp_path, source):
        return RedisStore(prefix=source.prefix, read_only=True, **source.redis_kwargs)


def test_redis_prefixes_are_isolated(redis_url):
    tag = uuid.uuid4().hex
    a = RedisStore(prefix=f"{tag}a*", url=redis_url)
    ab = RedisStore(prefix=f"{tag}ab", url=redis_url)
    a_star_b = RedisStore(prefix=f"{tag}a*:b", url=redis_url)
    try:
        a["x"] = b"1"
        ab["x"] = b"2"
        a_star_b["y"] = b"3"  # the Redis key f"{tag}a*:b:y" is below a's namespace
        assert sorted(a) == ["b:y", "x"]
        assert list(ab) == ["x"]
        assert list(a_star_b) == ["y"]
        assert a.client.get(f"{tag}a*:x".encode()) == b"1"
        ab.clear()
        assert a["x"] == b"1" and len(ab) == 0
    finally:
        for s in (a, ab, a_star_b):
            s.clear()
            s.close()


def test_redis_byte_ranges_and_batches(redis_url):
    with RedisStore(prefix=uuid.uuid4().hex, url=redis_url) as store:
        store.set_many({f"k{i}": str(i).encode() for i in range(2500)})
        got = store.get_many([f"k{i}" for i in range(2500)] + ["missing"])
        assert got["k2499"] == b"2499" and got["missing"] is None
        assert len(store) == 2500
        store["e"] = b""
        assert store.get("e", ByteRange(0, 0)) == b""
        assert store.get("missing", ByteRange(0, 0)) is None
        assert store.get("e", ByteRange(-3)) == b""
        store.delete_prefix("k1")
        assert len(store) == 2500 - 1111 + 1


def test_redis_versions_see_other_clients(redis_url):
    import redis

    with RedisStore(prefix=uuid.uuid4().hex, url=redis_url) as store:
        other = redis.Redis.from_url(redis_url)
        version = store.set_if("k", b"1", ABSENT)
        assert store.get_versioned("k") == (b"1", version)
        other.set(store._key("k"), b"2")  # a plain write by another client
        with pytest.raises(VersionConflictError, match="'k'"):
            store.set_if("k", b"3", version)
        with pytest.raises(VersionConflictError):
            store.delete_if("k", version)
        with pytest.raises(VersionConflictError):
            store.set_if("k", b"3", object())  # not a version of this store
        assert store["k"] == b"2"
        other.delete(store._key("k"))
        with pytest.raises(VersionConflictError):
            store.set_if("k", b"3", version)  # deleted meanwhile
        assert store.get("k") is None
        store["empty"] = b""
        value, empty = store.get_versioned("empty", limit=0)
        assert value == b"" and empty is not ABSENT
        store.delete_if("empty", empty)
        assert store.get("empty") is None
        store.client.rpush(store._key("list"), b"x")  # not a string value
        with pytest.raises(StoreError, match="'list'"):
            store.set_if("list", b"v", ABSENT)
        other.close()
        store.clear()


class _ReplyDropper:
    """A TCP proxy to the Redis server that, once armed, closes the connection instead of
    passing on the answer to the next ``EVALSHA``: the server ran the script, the client
    never hears of it (and sends the command again, as redis-py does on a broken
    connection)."""

    def __init__(self, port: int):
        self.upstream = port
        self.armed = False
        self.dropped = 0
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.upstream))
            state = {"script": False}
            threading.Thread(target=self._pump, args=(client, upstream, state, True),
                             daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, state, False),
                             daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, state: dict, request: bool) -> None:
        try:
            while data := src.recv(65536):
                if request:
                    state["script"] = b"EVALSHA" in data.upper()
                elif self.armed and state["script"]:
                    self.armed = False
                    self.dropped += 1
                    break  # the answer is lost with the connection
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def close(self) -> None:
        self.server.close()


def test_redis_conditional_write_whose_answer_is_lost(redis_url):
    # the server ran the script, the answer was lost, the client sent it again: the second
    # run finds the first's tag and answers success, not a conflict with its own write
    proxy = _ReplyDropper(int(redis_url.rsplit(":", 1)[1].split("/")[0]))
    store = RedisStore(prefix=uuid.uuid4().hex, host="127.0.0.1", port=proxy.port)
    try:
        store.set_if("k", b"0", ABSENT)
        for i in range(1, 4):
            _, version = store.get_versioned("k")
            proxy.armed = True
            written = store.set_if("k", str(i).encode(), version)
            assert proxy.dropped == i
            # the version returned is the one stored by the first run (its token), not another
            assert store.get_versioned("k") == (str(i).encode(), written)
        _, version = store.get_versioned("k")
        proxy.armed = True
        store.delete_if("k", version)
        assert proxy.dropped == 4 and store.get("k") is None
        # the tags expire by themselves and stay out of the store's keys
        tags = store.client.keys(b"zarrkit-conditional-write:*")
        assert tags and all(0 < store.client.pttl(t) <= 300_000 for t in tags)
        assert list(store) == []
    finally:
        store.close()
        proxy.close()


def test_redis_errors(redis_url, monkeypatch):
    dead = RedisStore(prefix="p", url=f"redis://127.0.0.1:{_free_port()}/0",
                      socket_connect_timeout=1)
    with pytest.raises(StoreError, match=r"'some/key'.*127\.0\.0\.1"):
        dead.get("some/key")
    dead.close()
    with pytest.raises(StoreError, match="closed"):
        dead.get("k")
    with pytest.raises(ValueError, match="decode_responses"):
        RedisStore(url=redis_url, decode_responses=True)
    with RedisStore(prefix=uuid.uuid4().hex, url=redis_url) as store:
        store.client.rpush(store._key("list"), b"x")  # not a string value
        with pytest.raises(StoreError, match="'list'"):
            store.get("list")
        store.clear()
    monkeypatch.setitem(sys.modules, "redis", None)
    with pytest.raises(ImportError, match=r"pip install 'zarrkit\[redis\]'"):
        RedisStore()


def test_module_imports_do_not_need_optional_packages():
    code = (
        "import sys; sys.modules['lmdb'] = None; sys.modules['redis'] = None; "
        "import zarrkit.storage.lmdb, zarrkit.storage.redis"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60,
                   env={**os.environ, "PYTHONWARNINGS": "error::ImportWarning"})


def test_lmdb_pickle_in_another_process(tmp_path):
    store = LMDBStore(tmp_path / "l", map_size=2**24)
    store["k"] = b"from parent"
    code = (
        "import pickle, sys; s = pickle.loads(sys.stdin.buffer.read()); "
        "s['child'] = s['k'] + b' and child'; s.close()"
    )
    subprocess.run([sys.executable, "-c", code], input=pickle.dumps(store), check=True,
                   timeout=60)
    assert store["child"] == b"from parent and child"
    store.close()
