"""A store in a single SQLite database file (stdlib :mod:`sqlite3`)."""

from __future__ import annotations

import os
import sqlite3
import threading
import urllib.parse
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from ..config import config
from ..errors import StoreError
from ._kvutil import prefix_upper_bound, token_version, version_conflict
from .base import (
    ABSENT,
    ByteRange,
    Store,
    Version,
    ensure_bytes_like,
    oversized,
    validate_key,
    validate_prefix,
)
from .memory import HeldValue

__all__ = ["SQLiteStore"]

#: Table layout, the one zarr-python 2's ``SQLiteStore`` used (its databases open here).
_TABLE = "zarr"
_SCHEMA = f"CREATE TABLE IF NOT EXISTS {_TABLE} (k TEXT PRIMARY KEY, v BLOB)"
#: The write tokens (see :func:`~zarrkit.storage._kvutil.token_version`): a table beside
#: ``zarr``, kept by triggers, so that every write through SQLite -- this store's, zarr-python
#: 2's, any tool's -- stores a new random token for its row
_TOKENS = "zarrkit_versions"
_TOKEN_SCHEMA = (
    f"CREATE TABLE IF NOT EXISTS {_TOKENS} (k TEXT PRIMARY KEY, t INTEGER NOT NULL)",
    (f"CREATE TRIGGER IF NOT EXISTS {_TOKENS}_insert AFTER INSERT ON {_TABLE} BEGIN "
     f"INSERT OR REPLACE INTO {_TOKENS} (k, t) VALUES (new.k, random()); END"),
    (f"CREATE TRIGGER IF NOT EXISTS {_TOKENS}_update AFTER UPDATE ON {_TABLE} BEGIN "
     f"DELETE FROM {_TOKENS} WHERE k = old.k; "
     f"INSERT OR REPLACE INTO {_TOKENS} (k, t) VALUES (new.k, random()); END"),
    (f"CREATE TRIGGER IF NOT EXISTS {_TOKENS}_delete AFTER DELETE ON {_TABLE} BEGIN "
     f"DELETE FROM {_TOKENS} WHERE k = old.k; END"),
)
#: The rows ``sqlite_master`` holds for them (type, name, table, SQL): a database whose
#: objects named like them, or whose triggers naming the tokens' table, are any other is a
#: stranger's (its tokens could repeat: see :meth:`SQLiteStore._token_objects`)
_TOKEN_OBJECTS = frozenset(
    [("table", _TOKENS, _TOKENS, _TOKEN_SCHEMA[0].replace(" IF NOT EXISTS", "", 1)),
     ("index", f"sqlite_autoindex_{_TOKENS}_1", _TOKENS, None)]
    + [("trigger", f"{_TOKENS}_{op}", _TABLE, sql.replace(" IF NOT EXISTS", "", 1))
       for op, sql in zip(("insert", "update", "delete"), _TOKEN_SCHEMA[1:])]
)
#: A row's token, as a column of a query of ``zarr`` (NULL: none)
_TOKEN_OF = f"(SELECT t FROM {_TOKENS} WHERE {_TOKENS}.k = {_TABLE}.k)"
#: Host parameters per statement in batched queries (SQLite's limit is 999 on old builds).
_BATCH = 500

#: this process's id, renewed in a forked child; and the connections a child inherited, kept
#: open and never used (see :meth:`SQLiteStore._conn`)
_PID = [os.getpid()]
_INHERITED: list[sqlite3.Connection] = []
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=lambda: _PID.__setitem__(0, os.getpid()))


class _Holder:
    """Holds one thread's connection (``sqlite3.Connection`` is not weak-referenceable)."""

    __slots__ = ("__weakref__", "conn")

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn


class SQLiteStore(Store):
    """Keys and values as rows of a table in an SQLite database file.

    Every value is a row of the table ``zarr(k TEXT PRIMARY KEY, v BLOB)`` (the layout of
    zarr-python 2's ``SQLiteStore``, whose files this store reads and writes).  While a
    writable store is open the database runs in WAL mode, so readers never wait for a writer;
    every write is one transaction, committed with ``synchronous=FULL`` (a write that returned
    survives the writer being killed, or the machine losing power).  Each thread gets its own
    connection (reads run in parallel), writes of this store are serialized by a lock, and
    other processes may use the same file at the same time.

    **Read-only opening changes nothing on disk.**  ``read_only=True`` connects through a
    ``file:...?mode=ro`` URI.  A writable store that is the last user of the database returns
    it to SQLite's rollback-journal mode when it closes (the write-ahead log checkpointed
    into the database and removed), and such a database is read without creating, changing
    or removing any file.  While the write-ahead log is in use -- another process has the
    database open for writing, or a writer was killed before closing it, or it closed while
    another process still had the file open -- SQLite needs the log's shared-memory index: a
    read-only store then creates or updates the ``-shm`` (and an empty ``-wal``) file beside
    the database, never the database itself.  SQLite's ``immutable=1`` would avoid that but is
    not used: it ignores the write-ahead log (committed writes still in the log would be
    missing) and gives wrong results when another process writes while it reads.  A writer
    killed while switching journal modes (as it opens or closes) may leave a *hot* rollback
    journal (``-journal``), which only a writable connection may roll back: a read-only store
    then raises :class:`~zarrkit.errors.StoreError` saying so, and opening the database for
    writing once (``SQLiteStore(path).close()``) repairs it.  Writes that had returned are
    never lost.

    Partial reads cut the range out of the BLOB inside SQLite (``substr``), so only the
    requested bytes are passed to Python; listings are range scans of the primary-key index.

    **Versions and conditional writes.**  The table stays zarr-python 2's two columns (whose
    writes, ``REPLACE INTO zarr VALUES (?, ?)``, a third column would break); beside it, the
    table ``zarrkit_versions`` holds a random token per row, which triggers on ``zarr`` renew
    at every write made through SQLite, by this store, zarr-python 2 or any tool.  A value's
    version is its token with its content, its length and BLAKE2b-128 digest (see
    :func:`~zarrkit.storage._kvutil.token_version`; a database opened read-only without the
    table has contents for versions): a value written again, equal bytes included, is a new
    version.  A writable store adds the table and triggers, in one transaction, to a
    database that has none; one with a table, view or trigger of these names that is not
    zarrkit's (or a trigger changing the tokens) is a stranger's file, whose tokens could stay
    the same over writes: a writable store refuses it (:class:`~zarrkit.errors.StoreError`,
    nothing changed), a read-only one has contents for versions.
    :meth:`set_if` and :meth:`delete_if` read the row, compare
    and write inside one ``BEGIN IMMEDIATE`` transaction, which holds the database's write
    lock from before the read to the commit: no other writer, in this process or another,
    writes in between.

    Parameters
    ----------
    path : str or os.PathLike
        The database file, created if missing (unless ``read_only``).  ``':memory:'`` gives a
        private in-memory database (one shared connection; it cannot be pickled).
    read_only : bool, default False
        Open the database read-only (it must exist) and refuse every write.
    dimension_separator : {'.', '/'}, optional
        Separator used by arrays *created* in this store when none is given.
    **kwargs
        Passed to :func:`sqlite3.connect` (e.g. ``timeout``, seconds to wait for another
        process's lock; default 30).

    Raises
    ------
    FileNotFoundError
        ``read_only`` and the database does not exist.
    zarrkit.errors.StoreError
        The file is not an SQLite database, or the database is not usable; the message names
        the path (and the key, for failures of a single operation).

    Examples
    --------
    >>> import os, tempfile, zarrkit
    >>> from zarrkit.storage.sqlite import SQLiteStore
    >>> path = os.path.join(tempfile.mkdtemp(), 'example.sqlite')
    >>> with SQLiteStore(path) as store:
    ...     z = zarrkit.zeros((4, 4), chunks=(2, 2), dtype='i4', store=store, zarr_format=2)
    ...     z[:] = 7
    ...     store.list_dir('')
    ['.zarray', '.zattrs', '0.0', '0.1', '1.0', '1.1']
    >>> with SQLiteStore(path, read_only=True) as store:
    ...     int(zarrkit.open_array(store, mode='r')[3, 3])
    7
    """

    supports_partial_reads = True

    def __init__(
        self, path: Any, read_only: bool = False, dimension_separator: str | None = None, **kwargs: Any
    ) -> None:
        if self._check_dimension_separator(dimension_separator) is not None:
            self.dimension_separator = dimension_separator
        self._memory = isinstance(path, str) and path == ":memory:"
        self.path: str = path if self._memory else os.path.abspath(os.fspath(path))
        self.read_only: bool = bool(read_only)
        self._kwargs = dict(kwargs)
        self._lock = threading.RLock()  # serializes writes (and everything for ':memory:')
        self._local = threading.local()
        self._holders: weakref.WeakSet[_Holder] = weakref.WeakSet()
        self._closed = False
        self._shared: sqlite3.Connection | None = None
        self._pid = _PID[0]
        if self.read_only and not self._memory and not os.path.exists(self.path):
            raise FileNotFoundError(f"SQLite database {self.path!r} does not exist")
        conn = self._connect()  # open now: bad paths and non-databases fail here
        if self._memory:
            self._shared = conn
        else:
            holder = _Holder(conn)
            self._local.holder = holder
            self._holders.add(holder)

    # -- connections --------------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        kwargs = dict(self._kwargs)
        kwargs.setdefault("timeout", 30.0)
        kwargs["check_same_thread"] = False  # close() may run on another thread
        kwargs["isolation_level"] = None  # autocommit; transactions are explicit
        try:
            if self._memory:
                conn: sqlite3.Connection = sqlite3.connect(":memory:", **kwargs)
            elif self.read_only:
                uri = "file:" + urllib.parse.quote(self.path) + "?mode=ro"
                conn = sqlite3.connect(uri, uri=True, **kwargs)
            else:
                conn = sqlite3.connect(self.path, **kwargs)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open SQLite database {self.path!r}: {exc}") from None
        try:
            if not self.read_only:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=FULL")
                conn.execute(_SCHEMA)
                if self._token_objects(conn) != _TOKEN_OBJECTS:
                    conn.execute("BEGIN IMMEDIATE")  # (all of them, or none: never a table alone)
                    try:
                        if self._token_objects(conn) is not None:
                            for statement in _TOKEN_SCHEMA:
                                conn.execute(statement)
                    except BaseException:
                        conn.execute("ROLLBACK")
                        raise
                    conn.execute("COMMIT")
                if self._token_objects(conn) is None:
                    raise StoreError(
                        f"SQLite database {self.path!r} has a table, view or trigger named "
                        f"{_TOKENS!r}, or one changing it, that is not zarrkit's write tokens "
                        "(left as it is): it is not written to; open it read-only (versions "
                        "are then the values' contents)"
                    )
                self._tokens = True
            else:
                found = conn.execute(
                    "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (_TABLE,)
                ).fetchone()
                if found is None:
                    raise StoreError(
                        f"SQLite database {self.path!r} has no table {_TABLE!r}: not a zarr store"
                    )
                self._tokens = self._token_objects(conn) == _TOKEN_OBJECTS
        except sqlite3.Error as exc:
            conn.close()
            if self.read_only and os.path.exists(self.path + "-journal"):
                raise StoreError(
                    f"cannot read SQLite database {self.path!r} read-only: a writer was killed "
                    f"in a transaction, and its rollback journal {self.path + '-journal'!r} must "
                    "be rolled back first, which writes; open the database for writing once "
                    f"(SQLiteStore(path).close()), then read it ({exc})"
                ) from None
            raise StoreError(f"cannot use SQLite database {self.path!r}: {exc}") from None
        except BaseException:
            conn.close()
            raise
        return conn

    @staticmethod
    def _token_objects(conn: sqlite3.Connection) -> frozenset[tuple[Any, ...]] | None:
        """The write tokens' objects of the database (a part of :data:`_TOKEN_OBJECTS`), or
        None when it has any other object named like them or changing their table: a table
        of another layout or a view (tokens read from it could stay the same over writes), a
        trigger of the same name doing something else, or one changing the tokens."""
        rows = conn.execute(
            "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE instr(lower(name), ?) "
            "OR lower(tbl_name) = ? OR (type = 'trigger' AND instr(lower(sql), ?))",
            (_TOKENS, _TOKENS, _TOKENS),
        ).fetchall()
        found = frozenset(tuple(r) for r in rows)
        return found if found <= _TOKEN_OBJECTS else None

    def _after_fork(self) -> None:
        """In a forked child (a store handed to a pool's workers by fork), the first time:
        leave the parent's connections, kept open and never used, for new ones.  SQLite's
        connections must not be carried across fork, and a child using its parent's repeats
        the random() values of its siblings -- the write tokens among them: a value changed
        and changed back would be the version read before.  (SQLite reseeds its generator
        when a new process opens a file.)"""
        if self._pid == _PID[0] or self._memory:
            return
        self._pid = _PID[0]
        _INHERITED.extend(h.conn for h in list(self._holders))
        self._holders = weakref.WeakSet()
        self._local = threading.local()
        self._lock = threading.RLock()  # (perhaps held by a thread the child does not have)

    def _conn(self) -> sqlite3.Connection:
        if self._closed:
            raise StoreError(f"SQLiteStore {self.path!r} is closed")
        if self._shared is not None:
            return self._shared
        self._after_fork()
        holder = getattr(self._local, "holder", None)
        if holder is None:
            holder = _Holder(self._connect())
            with self._lock:
                if self._closed:
                    holder.conn.close()
                    raise StoreError(f"SQLiteStore {self.path!r} is closed")
                self._holders.add(holder)
            self._local.holder = holder
        return holder.conn

    def _read(self, sql: str, params: tuple[Any, ...] | list[Any], what: str) -> list[tuple[Any, ...]]:
        try:
            if self._shared is not None:
                with self._lock:
                    return self._shared.execute(sql, params).fetchall()
            return self._conn().execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"SQLite read of {what} in {self.path!r} failed: {exc}") from None

    def _write(self, statements: list[tuple[str, tuple[Any, ...] | list[Any]]], what: str) -> None:
        self._after_fork()
        with self._lock:
            conn = self._conn()
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    for sql, params in statements:
                        conn.execute(sql, params)
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                raise StoreError(
                    f"SQLite write of {what} in {self.path!r} failed: {exc}"
                ) from None

    def _transact(self, work: Callable[[sqlite3.Connection], Any], what: str) -> Any:
        """Run ``work(connection)`` in one ``BEGIN IMMEDIATE`` transaction: committed when it
        returns, rolled back when it raises (a conflict is raised as it is)."""
        self._after_fork()
        with self._lock:
            conn = self._conn()
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    result = work(conn)
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                raise StoreError(
                    f"SQLite write of {what} in {self.path!r} failed: {exc}"
                ) from None
        return result

    # -- contract -----------------------------------------------------------------------------
    def _get(self, key: str, byte_range: ByteRange | None) -> bytes | None:
        if byte_range is None:
            rows = self._read(f"SELECT v FROM {_TABLE} WHERE k = ?", (key,), repr(key))
        elif byte_range.offset < 0:
            rows = self._read(
                f"SELECT substr(v, ?) FROM {_TABLE} WHERE k = ?", (byte_range.offset, key),
                repr(key),
            )
        elif byte_range.length is None:
            rows = self._read(
                f"SELECT substr(v, ?) FROM {_TABLE} WHERE k = ?", (byte_range.offset + 1, key),
                repr(key),
            )
        else:
            rows = self._read(
                f"SELECT substr(v, ?, ?) FROM {_TABLE} WHERE k = ?",
                (byte_range.offset + 1, byte_range.length, key), repr(key),
            )
        if not rows:
            return None
        return _as_bytes(rows[0][0])

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes | None]:
        """Return ``{key: value or None}``, reading up to 500 keys per query.

        Parameters
        ----------
        keys : iterable of str
            The keys.

        Returns
        -------
        dict
            ``{key: value or None}``.
        """
        keys = [validate_key(k) for k in keys]
        out: dict[str, bytes | None] = dict.fromkeys(keys)
        unique = list(out)
        for i in range(0, len(unique), _BATCH):
            batch = unique[i:i + _BATCH]
            marks = ",".join("?" * len(batch))
            rows = self._read(
                f"SELECT k, v FROM {_TABLE} WHERE k IN ({marks})", batch, f"{len(batch)} keys"
            )
            for k, v in rows:
                out[k] = _as_bytes(v)
        return out

    def _set(self, key: str, value: bytes | memoryview) -> None:
        self._write(
            [(f"INSERT OR REPLACE INTO {_TABLE} (k, v) VALUES (?, ?)", (key, bytes(value)))],
            repr(key),
        )

    def set_many(self, items: Mapping[str, Any]) -> None:
        """Store several values in a single transaction (all or none of them are written).

        Parameters
        ----------
        items : mapping of str to bytes-like
            The values by key.
        """
        self._check_writable()
        rows = [(validate_key(k), bytes(ensure_bytes_like(v, k))) for k, v in items.items()]
        if rows:
            self._write(
                [(f"INSERT OR REPLACE INTO {_TABLE} (k, v) VALUES (?, ?)", r) for r in rows],
                f"{len(rows)} keys",
            )

    def _delete(self, key: str) -> None:
        self._write([(f"DELETE FROM {_TABLE} WHERE k = ?", (key,))], repr(key))

    # -- versions and conditional writes (see the class's text) ------------------------------
    supports_conditional_writes = True
    _tokens = False  # (whether the database has the tokens' table: set when connecting)

    @property
    def versions_are_contents(self) -> bool:  # type: ignore[override]
        """Whether a value's version is its content alone (no tokens' table)."""
        return not self._tokens

    def _token_column(self) -> str:
        return _TOKEN_OF if self._tokens else "NULL"

    def _whole(self, key: str, limit: int | None) -> tuple[bytes | None, Any]:
        """The value at ``key`` and its token, read whole by one statement (one version of
        it), refused unread when larger than ``limit``; (None, None) when missing."""
        # a value over the limit is not passed to Python
        token = self._token_column()
        if limit is None:
            rows = self._read(f"SELECT v, NULL, {token} FROM {_TABLE} WHERE k = ?", (key,), repr(key))
        else:
            rows = self._read(
                f"SELECT CASE WHEN length(v) > ? THEN NULL ELSE v END, length(v), {token} "
                f"FROM {_TABLE} WHERE k = ?", (limit, key), repr(key),
            )
        if not rows:
            return None, None
        value, size, tok = rows[0]
        if value is None and limit is not None and size is not None and size > limit:
            raise oversized(key, size, limit)
        return _as_bytes(value), tok

    def _get_versioned(self, key: str, limit: int | None) -> tuple[bytes | None, Version]:
        data, token = self._whole(key, limit)  # one statement, one consistent read
        return (None, ABSENT) if data is None else (data, token_version(token, data))

    def value_version(self, key: str) -> HeldValue | None:
        """The value at ``key`` as it is now, held for reading several of its ranges (a
        shard's index, then its inner chunks) from that one version, whatever is written
        there meanwhile; None when missing.

        The value is read whole, by one statement: a statement reads one snapshot of the
        database (in WAL mode; in rollback-journal mode it holds the shared lock, which keeps
        writers out, until it is done), so the bytes are one version.  That costs no more than
        the ranged reads it replaces: ``substr`` of a BLOB loads the whole BLOB inside SQLite
        (a suffix of a 1 MiB value costs two thirds of reading it whole), so reading a
        shard's index and then its chunks loaded it twice.  A value larger than
        ``zarrkit.config.max_chunk_bytes`` is refused
        (:class:`~zarrkit.errors.ChunkDecodeError`) before it is passed to Python.

        Parameters
        ----------
        key : str
            The key.

        Returns
        -------
        HeldValue or None
            With ``size``, ``read(offset, length=None)`` (views of the bytes held) and
            ``close()``; its ``token`` is None (nothing tells cheaply that the value changed).
        """
        data, _ = self._whole(self._checked(key), config.max_chunk_bytes)
        return None if data is None else HeldValue(data)

    def _check_version(self, conn: sqlite3.Connection, key: str, version: Version) -> bool:
        """Whether the row of ``key`` is there, after checking that it is ``version``."""
        row = conn.execute(f"SELECT v, {self._token_column()} FROM {_TABLE} WHERE k = ?", (key,)).fetchone()
        current = None if row is None else _as_bytes(row[0])
        if current is None:
            if version is ABSENT:
                return False
        elif version is not ABSENT and token_version(row[1], current) == version:
            return True
        raise version_conflict(key, current, version)

    def _set_if(self, key: str, value: bytes | memoryview, version: Version) -> Version:
        new = bytes(value)

        def write(conn: sqlite3.Connection) -> Any:
            self._check_version(conn, key, version)
            conn.execute(f"INSERT OR REPLACE INTO {_TABLE} (k, v) VALUES (?, ?)", (key, new))
            if not self._tokens:
                return None
            # (none when another trigger of the database removed the row as it was written)
            row = conn.execute(f"SELECT t FROM {_TOKENS} WHERE k = ?", (key,)).fetchone()
            return None if row is None else row[0]

        token = self._transact(write, repr(key))
        return token_version(token, new)

    def _delete_if(self, key: str, version: Version) -> None:
        def delete(conn: sqlite3.Connection) -> None:
            if self._check_version(conn, key, version):
                conn.execute(f"DELETE FROM {_TABLE} WHERE k = ?", (key,))

        self._transact(delete, repr(key))

    def exists(self, key: str) -> bool:
        validate_key(key)
        return bool(self._read(f"SELECT 1 FROM {_TABLE} WHERE k = ?", (key,), repr(key)))

    def getsize(self, key: str) -> int:  # type: ignore[override]  # Store wraps it to take None too
        """Size in bytes of the value at ``key`` (0 if missing); the value is not read.

        Parameters
        ----------
        key : str
            The key (one holding no value: the total of the values directly below it).

        Returns
        -------
        int
        """
        validate_key(key)
        rows = self._read(f"SELECT length(v) FROM {_TABLE} WHERE k = ?", (key,), repr(key))
        return int(rows[0][0] or 0) if rows else 0

    @staticmethod
    def _range(prefix: str) -> tuple[str, tuple[str, ...]]:
        """A WHERE clause selecting the keys starting with ``prefix`` as an index range."""
        if not prefix:
            return "", ()
        upper = prefix_upper_bound(prefix)
        if upper is None:
            return " WHERE k >= ?", (prefix,)
        return " WHERE k >= ? AND k < ?", (prefix, upper)

    def list_prefix(self, prefix: str) -> Iterator[str]:
        validate_prefix(prefix)
        where, params = self._range(prefix)
        rows = self._read(f"SELECT k FROM {_TABLE}{where} ORDER BY k", params,
                          f"keys with prefix {prefix!r}")
        return iter([r[0] for r in rows])

    def list_dir(self, prefix: str = "") -> list[str]:
        validate_prefix(prefix)
        if prefix and not prefix.endswith("/"):
            prefix += "/"
        where, params = self._range(prefix)
        # the part of each key after the prefix, up to the next '/', deduplicated by SQLite
        n = len(prefix) + 1
        sql = (
            "SELECT DISTINCT CASE WHEN instr(rest, '/') > 0 "
            "THEN substr(rest, 1, instr(rest, '/') - 1) ELSE rest END "
            f"FROM (SELECT substr(k, {n}) AS rest FROM {_TABLE}{where})"
        )
        rows = self._read(sql, params, f"children of {prefix!r}")
        return sorted(r[0] for r in rows if r[0])

    def delete_prefix(self, prefix: str) -> None:
        self._check_writable()
        validate_prefix(prefix)
        where, params = self._range(prefix)
        self._write([(f"DELETE FROM {_TABLE}{where}", params)], f"keys with prefix {prefix!r}")

    def clear(self) -> None:
        """Remove every key."""
        self.delete_prefix("")

    def __len__(self) -> int:
        return int(self._read(f"SELECT count(*) FROM {_TABLE}", (), "the key count")[0][0])

    def vacuum(self) -> None:
        """Rebuild the database file, returning the space of deleted values to the OS."""
        self._check_writable()
        self._after_fork()
        with self._lock:
            try:
                self._conn().execute("VACUUM")
            except sqlite3.Error as exc:
                raise StoreError(f"VACUUM of {self.path!r} failed: {exc}") from None

    def close(self) -> None:
        """Close every connection of this store (closing twice is fine)."""
        self._after_fork()
        with self._lock:
            if self._closed:
                return
            self._closed = True
            conns = [h.conn for h in list(self._holders)]
            if self._shared is not None:
                conns.append(self._shared)
            self._holders = weakref.WeakSet()
            self._shared = None
        if conns and not self.read_only and not self._memory:
            last = conns.pop()
            for conn in conns:
                _close_quietly(conn)
            _leave_wal_mode(last)
            conns = [last]
        for conn in conns:
            _close_quietly(conn)

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is type(self) and not self._memory
            and other.path == self.path
        )

    def __hash__(self) -> int:
        return object.__hash__(self)

    def __repr__(self) -> str:
        mode = ", read_only=True" if self.read_only else ""
        return f"{type(self).__name__}({self.path!r}{mode})"

    # -- pickling: the path, reopened ---------------------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        if self._memory:
            raise TypeError("an in-memory SQLiteStore (':memory:') cannot be pickled")
        return {"path": self.path, "read_only": self.read_only, "kwargs": self._kwargs,
                "dimension_separator": self.dimension_separator}

    def __setstate__(self, state: dict[str, Any]) -> None:
        type(self).__init__(self, state["path"], read_only=state["read_only"],
                                  dimension_separator=state.get("dimension_separator"), **state["kwargs"])


def _as_bytes(value: Any) -> bytes:
    if value is None:  # substr() of an empty BLOB is NULL
        return b""
    if isinstance(value, str):  # a TEXT value written by another tool
        return value.encode("utf-8")
    return bytes(value)


def _close_quietly(conn: sqlite3.Connection) -> None:
    try:
        conn.close()
    except sqlite3.Error:
        pass


def _leave_wal_mode(conn: sqlite3.Connection) -> None:
    """Return the database to rollback-journal mode when ``conn`` is its last user.

    The log is checkpointed into the database and removed, so a later read-only connection
    reads the file without creating the ``-shm``/``-wal`` files WAL mode needs.  SQLite allows
    the switch only to the single connection of the database: while another process has it
    open the switch fails at once (no waiting) and the database stays in WAL mode, to be
    switched by whichever writer closes last.
    """
    try:
        conn.execute("PRAGMA busy_timeout=0")
        conn.execute("PRAGMA journal_mode=DELETE")
    except sqlite3.Error:
        pass
