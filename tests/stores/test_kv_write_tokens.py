"""The database stores' versions are new at every write: a value changed and changed back is
not the version read before it changed (a write conditioned on that one must fail), while
writers that keep no tokens (zarr-python 2's plain writes) are still seen by the content.
The tokens are kept out of sight: listings, lengths and other prefixes never show them."""

from __future__ import annotations

import os
import sqlite3
import uuid
import warnings

import lmdb
import pytest
import redis
from test_kv_stores import redis_url  # noqa: F401  (the session's redis-server; tests/stores is on sys.path)

from zarrkit.errors import InvalidPathError, StoreError, VersionConflictError
from zarrkit.storage.base import ABSENT
from zarrkit.storage.lmdb import LMDBStore
from zarrkit.storage.redis import RedisStore
from zarrkit.storage.sqlite import SQLiteStore

KINDS = ["sqlite", "lmdb", "redis"]


@pytest.fixture(params=KINDS)
def store(request, tmp_path):
    kind = request.param
    if kind == "sqlite":
        s = SQLiteStore(tmp_path / "t.sqlite")
    elif kind == "lmdb":
        s = LMDBStore(tmp_path / "t.lmdb", map_size=2**24)
    else:
        s = RedisStore(prefix=uuid.uuid4().hex, url=request.getfixturevalue("redis_url"))
    yield s
    if kind == "redis":
        s.clear()
    s.close()


def test_a_value_written_back_is_a_new_version(store):
    # X, then Y, then X again: a write conditioned on the first X must not land
    first = store.set_if("c/0", b"X", ABSENT)
    assert store.get_versioned("c/0") == (b"X", first)
    store.set_if("c/0", b"Y", first)
    store["c/0"] = b"X"  # a plain write of the same bytes
    value, now = store.get_versioned("c/0")
    assert value == b"X" and now != first
    with pytest.raises(VersionConflictError, match="'c/0'"):
        store.set_if("c/0", b"Z", first)
    with pytest.raises(VersionConflictError):
        store.delete_if("c/0", first)
    # conditional writes and batches renew it too
    again = store.set_if("c/0", b"X", now)
    assert again != now and store.get_versioned("c/0")[1] == again
    store.set_many({"c/0": b"X", "c/1": b"W"})
    assert store.get_versioned("c/0")[1] != again
    with pytest.raises(VersionConflictError):
        store.set_if("c/0", b"Z", again)
    assert store["c/0"] == b"X"


def test_a_deleted_and_recreated_value_is_a_new_version(store):
    first = store.set_if("k", b"same", ABSENT)
    store.delete_if("k", first)
    store["k"] = b"same"
    with pytest.raises(VersionConflictError):
        store.set_if("k", b"other", first)
    store.delete_prefix("")
    assert store.get_versioned("k") == (None, ABSENT)
    recreated = store.set_if("k", b"same", ABSENT)
    assert recreated != first


def test_tokens_stay_out_of_listings(store):
    store.set_many({"a/zarr.json": b"{}", "a/c/0": b"1", "b": b"2"})
    store.set_if("b", b"3", store.get_versioned("b")[1])
    assert sorted(store.list_prefix("")) == ["a/c/0", "a/zarr.json", "b"]
    assert store.list_dir("") == ["a", "b"]
    assert len(store) == 3
    store.clear()
    assert len(store) == 0 and list(store.list_prefix("")) == [] and store.list_dir("") == []
    # and the store stays usable after clearing
    store.set_if("b", b"4", ABSENT)
    assert list(store) == ["b"]


def test_sqlite_plain_writes_of_other_tools_renew_the_token(tmp_path):
    # zarr-python 2 writes ``REPLACE INTO zarr VALUES (?, ?)`` through its own connection:
    # the triggers renew the token, equal bytes included
    path = tmp_path / "z.sqlite"
    with SQLiteStore(path) as store:
        version = store.set_if("k", b"v", ABSENT)
        conn = sqlite3.connect(path)
        conn.execute("REPLACE INTO zarr VALUES (?, ?)", ("k", b"v"))
        conn.commit()
        conn.close()
        assert store.get_versioned("k")[0] == b"v"
        with pytest.raises(VersionConflictError):
            store.set_if("k", b"w", version)


def test_sqlite_database_without_tokens_read_only_is_unchanged(tmp_path):
    # a database zarr-python 2 wrote, opened read-only: nothing is added to it, and its
    # versions are the contents
    path = tmp_path / "z2.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE zarr(k TEXT PRIMARY KEY, v BLOB)")
    conn.execute("REPLACE INTO zarr VALUES (?, ?)", ("k", b"v"))
    conn.commit()
    before = path.read_bytes()
    with SQLiteStore(path, read_only=True) as ro:
        assert ro.versions_are_contents
        value, version = ro.get_versioned("k")
        assert value == b"v" and ro.get_versioned("k")[1] == version
    assert path.read_bytes() == before
    # a writable store adds the tokens' table; the rows stay readable by plain SQL
    with SQLiteStore(path) as store:
        assert not store.versions_are_contents
        store["k2"] = b"w"
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert names == {"zarr", "zarrkit_versions"}
    assert conn.execute("SELECT k, v FROM zarr ORDER BY k").fetchall() == [("k", b"v"), ("k2", b"w")]
    conn.close()


def test_lmdb_values_stay_where_plain_lmdb_reads_them(tmp_path):
    # the main database keeps the values as zarr-python 2's LMDBStore wrote them; its
    # listing (a plain cursor) sees one more entry, the tokens' database
    path = tmp_path / "z.lmdb"
    with LMDBStore(path, map_size=2**24) as store:
        store["a/zarr.json"] = b"{}"
        version = store.set_if("a/c/0", b"1", ABSENT)
    env = lmdb.open(str(path), map_size=2**24)
    with env.begin(write=True) as txn:
        assert txn.get(b"a/c/0") == b"1"
        assert {bytes(k) for k, _ in txn.cursor()} == {b"a/zarr.json", b"a/c/0", b"__zarrkit_versions"}
        txn.put(b"a/c/0", b"2")  # a writer that keeps no tokens: told by the content
    env.close()
    with LMDBStore(path, map_size=2**24) as store:
        with pytest.raises(VersionConflictError):
            store.set_if("a/c/0", b"3", version)
        assert store["a/c/0"] == b"2"
        assert sorted(store) == ["a/c/0", "a/zarr.json"]


def test_lmdb_without_tokens_has_content_versions(tmp_path):
    path = tmp_path / "z.lmdb"
    env = lmdb.open(str(path), map_size=2**24)
    with env.begin(write=True) as txn:
        txn.put(b"k", b"v")
    env.close()
    with LMDBStore(path, map_size=2**24, read_only=True) as ro:
        assert ro.versions_are_contents
        assert ro.get_versioned("k")[0] == b"v"
        assert sorted(ro) == ["k"] and len(ro) == 1
    with LMDBStore(path, map_size=2**24, max_dbs=0, read_only=True) as no_dbs:
        assert no_dbs.versions_are_contents and no_dbs.get("k") == b"v"


def test_lmdb_writable_stores_keep_tokens(tmp_path):
    # a writer renewing no token would let another's write conditioned on a version from
    # before its writes land: with max_dbs=0 (no named database) a writable store is refused
    path = tmp_path / "z.lmdb"
    with LMDBStore(path, map_size=2**24) as store:
        first = store.set_if("k", b"A", ABSENT)
    with pytest.raises(StoreError, match=r"z\.lmdb.*max_dbs"):
        LMDBStore(path, map_size=2**24, max_dbs=0)
    with LMDBStore(path, map_size=2**24, max_dbs=0, read_only=True) as ro:
        assert ro.versions_are_contents and ro.get("k") == b"A"
    with LMDBStore(path, map_size=2**24) as store:  # (nothing was left open)
        assert store.get_versioned("k")[1] == first


def _plain_value(env):
    with env.begin(write=True) as txn:
        txn.put(b"__zarrkit_versions", b"a value")


@pytest.mark.parametrize("make", [
    _plain_value,
    lambda env: env.open_db(b"__zarrkit_versions", dupsort=True),  # a key keeps its first token
    lambda env: env.open_db(b"__zarrkit_versions", integerkey=True),
], ids=["plain value", "dupsort", "integerkey"])
def test_lmdb_foreign_tokens_database_is_refused(tmp_path, make):
    # another database (or a value) under the tokens' name: writable, refused; read-only,
    # the values are read, with content versions
    path = tmp_path / "f.lmdb"
    env = lmdb.open(str(path), map_size=2**24, max_dbs=2)
    make(env)
    with env.begin(write=True) as txn:
        txn.put(b"k", b"v")
    env.close()
    with pytest.raises(StoreError, match=r"f\.lmdb.*__zarrkit_versions"):
        LMDBStore(path, map_size=2**24)
    with LMDBStore(path, map_size=2**24, read_only=True) as ro:
        assert ro.versions_are_contents
        assert ro.get_versioned("k")[0] == b"v" and list(ro) == ["k"] and len(ro) == 1


def test_lmdb_the_tokens_name_is_a_reserved_key(tmp_path):
    # the name is a record of the main database (LMDB's description of the tokens'
    # database), not a value: no operation reads, writes or removes it as one
    path = tmp_path / "r.lmdb"
    with LMDBStore(path, map_size=2**24) as store:
        store["k"] = b"v"
        key = "__zarrkit_versions"
        for op in (lambda: store.get(key), lambda: store.get_versioned(key), lambda: store.exists(key),
                   lambda: store.getsize(key), lambda: store.get_many([key]),
                   lambda: store.set(key, b"x"), lambda: store.set_many({key: b"x"}),
                   lambda: store.set_if(key, b"x", ABSENT), lambda: store.delete(key),
                   lambda: store.delete_if(key, ABSENT), lambda: store.value_version(key)):
            with pytest.raises(InvalidPathError, match=r"'__zarrkit_versions'.*reserved.*r\.lmdb"):
                op()
        store["__zarrkit_versions/k"] = b"below it"  # an ordinary key
        version = store.get_versioned("k")[1]
        store["k"] = b"w"
        store["k"] = b"v"
        with pytest.raises(VersionConflictError):
            store.set_if("k", b"x", version)
        assert sorted(store) == ["__zarrkit_versions/k", "k"] and len(store) == 2


def test_redis_tokens_are_outside_every_namespace(redis_url):  # noqa: F811
    prefix = uuid.uuid4().hex
    client = redis.Redis.from_url(redis_url)
    with RedisStore(prefix=prefix, url=redis_url) as store, \
            RedisStore(prefix=prefix + "-other", url=redis_url) as other:
        store["k"] = b"1"
        other["k"] = b"1"
        assert sorted(client.keys(f"{prefix}:*")) == [f"{prefix}:k".encode()]
        assert client.hkeys(f"zarrkit-versions:{prefix}") == [b"k"]
        version = store.get_versioned("k")[1]
        other["k"] = b"2"  # another store's writes leave this one's versions alone
        assert store.set_if("k", b"3", version) != version
        store.clear()
        assert client.exists(f"zarrkit-versions:{prefix}") == 0
        other.clear()
    client.close()


#: objects a stranger's database may have under the tokens' names: a table of another layout
#: (no key: a write adds a row, and the first one, read as the token, never changes), a view,
#: a trigger of the same name keeping one token, one changing the tokens after ours
STRANGERS = {
    "table without a key": ["CREATE TABLE zarrkit_versions (k TEXT, t INTEGER)"],
    "view": ["CREATE VIEW zarrkit_versions AS SELECT k, 1 AS t FROM zarr"],
    "trigger of the same name": [
        "CREATE TABLE zarrkit_versions (k TEXT PRIMARY KEY, t INTEGER NOT NULL)",
        ("CREATE TRIGGER zarrkit_versions_insert AFTER INSERT ON zarr BEGIN "
         "INSERT OR REPLACE INTO zarrkit_versions (k, t) VALUES (new.k, 7); END"),
    ],
    "trigger changing the tokens": [
        "CREATE TABLE zarrkit_versions (k TEXT PRIMARY KEY, t INTEGER NOT NULL)",
        ("CREATE TRIGGER pin AFTER INSERT ON zarrkit_versions BEGIN "
         "UPDATE zarrkit_versions SET t = 7 WHERE k = new.k; END"),
    ],
}


@pytest.mark.parametrize("stranger", sorted(STRANGERS))
def test_sqlite_foreign_tokens_objects_are_refused(tmp_path, stranger):
    # its tokens could stay the same over writes (a value changed and changed back would be
    # the version read before): a writable store refuses the file, changing nothing of it
    path = tmp_path / "s.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE zarr (k TEXT PRIMARY KEY, v BLOB)")
    conn.execute("INSERT INTO zarr VALUES ('k', x'41')")
    for statement in STRANGERS[stranger]:
        conn.execute(statement)
    conn.commit()
    schema = sorted(conn.execute("SELECT type, name, sql FROM sqlite_master").fetchall(), key=repr)
    with pytest.raises(StoreError, match=r"s\.sqlite.*'zarrkit_versions'.*read-only"):
        SQLiteStore(path)
    assert sorted(conn.execute("SELECT type, name, sql FROM sqlite_master").fetchall(), key=repr) == schema
    assert conn.execute("SELECT k, v FROM zarr").fetchall() == [("k", b"A")]
    conn.close()
    with SQLiteStore(path, read_only=True) as ro:
        assert ro.versions_are_contents and ro.get_versioned("k")[0] == b"A"


def test_sqlite_tokens_table_without_its_triggers(tmp_path):
    # (a writer killed between creating them, before they were created together): read-only,
    # the versions are the contents; a writable store adds the triggers
    path = tmp_path / "p.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE zarr (k TEXT PRIMARY KEY, v BLOB)")
    conn.execute("CREATE TABLE zarrkit_versions (k TEXT PRIMARY KEY, t INTEGER NOT NULL)")
    conn.execute("INSERT INTO zarr VALUES ('k', x'41')")
    conn.commit()
    conn.close()
    with SQLiteStore(path, read_only=True) as ro:
        assert ro.versions_are_contents
    with SQLiteStore(path) as store:
        assert not store.versions_are_contents
        first = store.set_if("k", b"A", store.get_versioned("k")[1])
        store["k"] = b"B"
        store["k"] = b"A"
        with pytest.raises(VersionConflictError):
            store.set_if("k", b"C", first)


@pytest.mark.parametrize("prefix", ["zarrkit-versions", "zarrkit-versions:a", "zarrkit-conditional-write"])
def test_redis_prefixes_of_the_tokens_are_reserved(prefix, redis_url):  # noqa: F811
    # a store there would list every store's tokens as its keys, delete them in clear() and
    # overwrite them (the other store's writes then failing, after storing their values)
    with pytest.raises(ValueError, match="reserved"):
        RedisStore(prefix=prefix, url=redis_url)
    with RedisStore(prefix=prefix.replace(":", "-") + "-x", url=redis_url) as store:  # (its own)
        store["k"] = b"v"
        assert list(store) == ["k"]
        store.clear()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX only")
def test_sqlite_store_used_in_forked_children(tmp_path):
    # a store inherited by forked children (a pool's workers): with the parent's connection a
    # child repeats the random() values of its siblings, and the trigger's tokens with them
    path = tmp_path / "f.sqlite"
    store = SQLiteStore(path)
    store["x"] = b"A"

    def in_a_child(value: bytes) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # fork with threads running
            pid = os.fork()
        if pid == 0:
            code = 1
            try:
                store["x"] = value
                code = 0 if store["x"] == value else 1
            finally:
                os._exit(code)
        assert os.waitpid(pid, 0)[1] == 0

    in_a_child(b"A")
    version = store.get_versioned("x")[1]
    in_a_child(b"B")
    in_a_child(b"A")  # changed and changed back, by two children
    assert store.get_versioned("x") != (b"A", version)
    with pytest.raises(VersionConflictError):
        store.set_if("x", b"C", version)
    store.close()


@pytest.mark.parametrize("store", ["sqlite", "redis"], indirect=True)
def test_keys_named_like_the_tokens_are_ordinary_keys(store):
    # (SQLite and Redis keep the tokens outside the keys: only LMDB reserves the name)
    for key in ("__zarrkit_versions", "zarrkit_versions", "zarrkit-versions"):
        first = store.set_if(key, b"A", ABSENT)
        store[key] = b"B"
        store[key] = b"A"
        with pytest.raises(VersionConflictError):
            store.set_if(key, b"C", first)
        assert store.get(key) == b"A"
    assert sorted(store) == ["__zarrkit_versions", "zarrkit-versions", "zarrkit_versions"]
    store.delete_prefix("")
    assert len(store) == 0


def test_redis_stores_of_nested_prefixes_share_the_tokens(redis_url):  # noqa: F811
    # 'p' and 'p:arr' reach the Redis key 'p:arr:c' both: a value changed and changed back
    # through one is not the version the other read before
    root = uuid.uuid4().hex
    with RedisStore(prefix=root, url=redis_url) as outer, \
            RedisStore(prefix=f"{root}:arr", url=redis_url) as inner:
        first = outer.set_if("arr:c", b"A", ABSENT)
        assert inner.get_versioned("c") == (b"A", first)
        inner["c"] = b"B"
        inner["c"] = b"A"
        with pytest.raises(VersionConflictError):
            outer.set_if("arr:c", b"Z", first)
        now = inner.set_if("c", b"B", inner.get_versioned("c")[1])
        outer.set_if("arr:c", b"A", now)
        with pytest.raises(VersionConflictError):
            inner.delete_if("c", now)
        outer.set_many({"arr:c": b"A", "arr:d": b"D"})
        inner.delete_prefix("")
        assert outer.get_versioned("arr:c") == (None, ABSENT) and list(outer) == []
        client = redis.Redis.from_url(redis_url)
        assert client.exists(f"zarrkit-versions:{root}") == 0  # (the fields went with the values)
        client.close()


def test_sqlite_row_removed_by_another_trigger_as_it_is_written(tmp_path):
    # a stranger's trigger, older than the tokens' ones, removes the row a write inserts: the
    # write returns a version no value has (a TypeError used to escape)
    path = tmp_path / "t.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE zarr (k TEXT PRIMARY KEY, v BLOB)")
    conn.execute("CREATE TRIGGER gone AFTER INSERT ON zarr WHEN new.k = 'k' BEGIN "
                 "DELETE FROM zarr WHERE k = new.k; END")
    conn.commit()
    conn.close()
    with SQLiteStore(path) as store:
        version = store.set_if("k", b"v", ABSENT)
        assert store.get_versioned("k") == (None, ABSENT)
        with pytest.raises(VersionConflictError):
            store.set_if("k", b"w", version)
