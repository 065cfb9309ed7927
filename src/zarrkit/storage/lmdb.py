"""A store in an LMDB database (the optional ``lmdb`` package: ``pip install 'zarrkit[lmdb]'``)."""

from __future__ import annotations

import os
import sys
import threading

try:
    import fcntl
except ImportError:  # Windows: LMDB's lock file is always used there
    fcntl = None  # type: ignore[assignment]
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from ..errors import InvalidPathError, StoreError, VersionConflictError
from . import fileio
from ._kvutil import new_token, token_version, version_conflict
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
from .extras import missing_extra

__all__ = ["LMDBStore"]

#: Default largest size the database may grow to (address space only; the file grows as needed).
DEFAULT_MAP_SIZE = 2**40 if sys.maxsize > 2**32 else 2**28


def _import_lmdb() -> Any:
    try:
        import lmdb
    except ImportError as exc:
        raise missing_extra("LMDBStore", "lmdb", "lmdb") from exc
    return lmdb


# LMDB forbids opening one environment twice in a process (its locks would break): stores on
# the same path share one ``lmdb.Environment``, closed when the last of them closes.
# (An environment must not be used in a forked child either: entries are per process id.)
_ENVS: dict[tuple[int, str], list[Any]] = {}  # (pid, path) -> [environment, users, read-only]
_ENVS_LOCK = threading.Lock()


#: the named database of write tokens (see :func:`~zarrkit.storage._kvutil.token_version`);
#: LMDB records it as a key of the main database, which listings skip (names starting with
#: ``__`` are reserved in Zarr)
TOKENS_DB = b"__zarrkit_versions"


def _encode(key: str) -> bytes:
    return key.encode("utf-8")


def _lock_in_use(path: str, subdir: bool) -> bool:
    """Whether a process may be using the LMDB database at ``path`` through its lock file.

    Every process with an LMDB environment open holds a POSIX lock on the first byte of the
    lock file; taking (and at once releasing) an exclusive lock on that byte tells whether any
    does, without changing the file.  True when it cannot be told.  Called only while this
    process has no environment open on ``path`` (closing a descriptor drops every POSIX lock
    the process holds on the file, LMDB's own included).
    """
    if fcntl is None:
        return True
    lock_file = os.path.join(path, "lock.mdb") if subdir else path + "-lock"
    real = os.path.realpath(path)
    if any(
        pid == os.getpid() and os.path.realpath(other) == real for pid, other in _ENVS
    ):  # the same database under another name: its locks must not be dropped
        return True
    try:
        fd = os.open(lock_file, os.O_RDWR)
    except FileNotFoundError:
        return False  # no process has used the lock file
    except OSError:
        return True
    try:
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 0, os.SEEK_SET)
        except OSError:
            return True  # another process holds it
        fcntl.lockf(fd, fcntl.LOCK_UN, 1, 0, os.SEEK_SET)
        return False
    finally:
        os.close(fd)


class LMDBStore(Store):
    """Keys and values in an LMDB memory-mapped database.

    LMDB keeps keys sorted, so listings are cursor range scans (``set_range``) of just the
    requested prefix.  Reads never block and run in parallel from any number of threads or
    processes; writes are transactions (serialized by LMDB).  Stores opened on the same path
    in one process share the LMDB environment.

    Parameters
    ----------
    path : str or os.PathLike
        The database directory (created if missing, unless ``read_only``), or a single file
        with ``subdir=False``.
    buffers : bool, default True
        Read values through LMDB's zero-copy buffers: only the requested bytes of a partial
        read, and none for :meth:`getsize`, are copied.
    map_size : int, default 1 TiB (256 MiB on 32-bit systems)
        Largest size the database may reach; address space is reserved, the file grows as
        needed.
    read_only : bool, default False
        Open the database read-only (it must exist) and refuse every write.  See *Read-only
        opening* below.
    dimension_separator : {'.', '/'}, optional
        Separator used by arrays *created* in this store when none is given.
    **kwargs
        Passed to :func:`lmdb.open` (e.g. ``subdir``, ``sync``, ``lock``, ``max_readers``).
        Writes are durable by default (``sync=True``: a write that returned survives the
        writer being killed or the machine losing power).

    Notes
    -----
    **Versions and conditional writes.**  LMDB keeps no version per key, so the store keeps
    one: every write also stores a new random token for its key, in a named database of the
    same environment (``__zarrkit_versions``, hidden from listings), and a value's version is
    that token with the value's content, its length and BLAKE2b-128 digest (see
    :func:`~zarrkit.storage._kvutil.token_version`), both read by one transaction.  A value
    written again, equal bytes included, is a new version; one changed by a writer that keeps
    no tokens (zarr-python 2) is one by its content.  A writable store must keep the tokens:
    opened with ``max_dbs=0``, or on a file with a value or another kind of database (other
    flags) under that name, it raises :class:`~zarrkit.errors.StoreError` (read-only, it has
    contents for versions); the key ``__zarrkit_versions`` itself is reserved
    (:class:`~zarrkit.errors.InvalidPathError`).  :meth:`set_if` and :meth:`delete_if` read, compare and
    write inside one write transaction, and LMDB runs one write transaction at a time across
    every process using the database (its lock file's writer mutex), so no write lands in
    between.  Opened with ``lock=False`` (no locking: the caller serializes processes), the
    store declares no conditional writes.

    **Read-only opening.**  LMDB readers normally register in the database's lock file
    (``lock.mdb``, or ``<path>-lock`` with ``subdir=False``), which rewrites it.  When no
    other process has the database open (no process holds a lock on that file), a read-only
    store opens it with ``lock=False``: nothing on disk is created or changed.  That is safe
    as long as no process writes while the store is open: a writer that opens the database
    afterwards cannot see an unregistered reader and may reuse the pages it is reading, so
    its reads could return wrong bytes.  Pass ``lock=True`` to a read-only store that must
    read while another process may start writing (the lock file is then updated, as LMDB
    requires).  When another process already has the database open, and on systems without
    ``fcntl`` (Windows), read-only stores use the lock file.

    Raises
    ------
    ImportError
        The ``lmdb`` package is not installed (``pip install 'zarrkit[lmdb]'``).
    FileNotFoundError
        ``read_only`` and the database does not exist.
    zarrkit.errors.StoreError
        LMDB fails (the map is full, a key is longer than 511 bytes, ...); the message names
        the path and the key.

    Examples
    --------
    >>> import os, tempfile, zarrkit
    >>> from zarrkit.storage.lmdb import LMDBStore
    >>> path = os.path.join(tempfile.mkdtemp(), 'example.lmdb')
    >>> with LMDBStore(path, map_size=2**24) as store:
    ...     z = zarrkit.zeros((4, 4), chunks=(2, 2), dtype='i4', store=store, zarr_format=2)
    ...     z[:] = 3
    ...     list(store.list_prefix('1.'))
    ['1.0', '1.1']
    >>> with LMDBStore(path, read_only=True) as store:
    ...     int(zarrkit.open_array(store, mode='r')[2, 2])
    3
    """

    supports_partial_reads = True

    def __init__(
        self,
        path: Any,
        buffers: bool = True,
        map_size: int = DEFAULT_MAP_SIZE,
        read_only: bool = False,
        dimension_separator: str | None = None,
        **kwargs: Any,
    ) -> None:
        if self._check_dimension_separator(dimension_separator) is not None:
            self.dimension_separator = dimension_separator
        lmdb = _import_lmdb()
        self._lmdb = lmdb
        self.path: str = os.path.abspath(os.fspath(path))
        self.buffers: bool = bool(buffers)
        self.map_size: int = int(map_size)
        if "readonly" in kwargs:  # lmdb's own spelling
            read_only = bool(read_only or kwargs.pop("readonly"))
        self.read_only: bool = bool(read_only)
        self.kwargs: dict[str, Any] = dict(kwargs)
        # without LMDB's locks, nothing keeps another process's write transaction out
        self.supports_conditional_writes = bool(kwargs.get("lock", True))
        self._lock = threading.Lock()  # serializes this store's write transactions
        self._closed = False
        fileio.check_regular_files(
            f"LMDB database {self.path!r}", self.path, self.path + "-lock",
            *(os.path.join(self.path, n) for n in ("data.mdb", "lock.mdb")),
        )
        if self.read_only and not os.path.exists(self.path):
            raise FileNotFoundError(f"LMDB database {self.path!r} does not exist")
        options = dict(kwargs)
        options.setdefault("max_spare_txns", os.cpu_count() or 1)
        options.setdefault("readahead", False)  # chunks are read at random
        options.setdefault("meminit", False)
        options.setdefault("max_dbs", 1)  # (the write tokens' database)
        with _ENVS_LOCK:
            self._env_key = (os.getpid(), self.path)
            shared = _ENVS.get(self._env_key)
            if shared is None and self.read_only and "lock" not in options:
                options["lock"] = _lock_in_use(self.path, options.get("subdir", True))
            if shared is not None:
                if shared[2] and not self.read_only:
                    raise StoreError(
                        f"LMDB database {self.path!r} is open read-only in this process; close "
                        "those stores before opening it for writing"
                    )
                shared[1] += 1
                self.env = shared[0]
                self._tokens = shared[3]
            else:
                try:
                    self.env = lmdb.open(
                        self.path, map_size=self.map_size, readonly=self.read_only, **options
                    )
                except lmdb.Error as exc:
                    raise StoreError(f"cannot open LMDB database {self.path!r}: {exc}") from None
                self._tokens = self._open_tokens()
                _ENVS[self._env_key] = [self.env, 1, self.read_only, self._tokens]
        # without tokens (a read-only database that has none usable) a version is the content
        self.versions_are_contents = self._tokens is None

    def _open_tokens(self) -> Any:
        """The handle of the write tokens' database (created unless read-only); None when a
        read-only store finds none it can use (its versions are then the contents).

        A writable store that cannot keep the tokens raises: its writes, renewing no token,
        would let other writers' writes conditioned on a version from before them land (a
        value changed and changed back by it would be the version read before).  So does one
        finding another database under the name: a plain value (LMDB cannot open it), or a
        database with other flags (with duplicates, a key keeps its first token)."""
        try:
            with self.env.begin(write=not self.read_only) as txn:
                db = self.env.open_db(TOKENS_DB, txn=txn, create=not self.read_only)
                plain = not any(db.flags(txn).values())
        except self._lmdb.Error as exc:
            if self.read_only:
                return None
            self.env.close()
            raise StoreError(
                f"LMDB database {self.path!r} cannot keep its write tokens (the named database "
                f"{TOKENS_DB.decode()!r}; it needs max_dbs >= 1, and its name must not hold a "
                f"value): {exc}"
            ) from None
        if plain:
            return db
        if self.read_only:
            return None
        self.env.close()
        raise StoreError(
            f"LMDB database {self.path!r} has a database {TOKENS_DB.decode()!r} with flags "
            "(duplicates, integer keys, ...) that zarrkit's write tokens never have: not written to"
        )

    # -- helpers ------------------------------------------------------------------------------
    def _env(self) -> Any:
        if self._closed:
            raise StoreError(f"LMDBStore {self.path!r} is closed")
        return self.env

    def _raw(self, key: str) -> bytes:
        """``key`` encoded; the tokens' database's name (a record of the main database, not a
        value) is refused."""
        raw = _encode(key)
        if raw == TOKENS_DB:
            raise InvalidPathError(
                f"store key {key!r} is reserved in LMDB database {self.path!r}: it names the "
                "database of write tokens"
            )
        return raw

    def _fail(self, what: str, exc: BaseException) -> StoreError:
        hint = ""
        if isinstance(exc, self._lmdb.MapFullError):
            hint = f" (the database reached map_size={self.map_size}; reopen with a larger one)"
        elif isinstance(exc, self._lmdb.BadValsizeError):
            hint = " (LMDB keys are limited to 511 bytes)"
        return StoreError(f"LMDB {what} in {self.path!r} failed: {exc}{hint}")

    # -- contract -----------------------------------------------------------------------------
    def _get(self, key: str, byte_range: ByteRange | None) -> bytes | None:
        try:
            with self._env().begin(buffers=self.buffers) as txn:
                value = txn.get(self._raw(key))
                if value is None:
                    return None
                if byte_range is None:
                    return bytes(value)
                return byte_range.slice(value)  # copies only the range out of the buffer
        except self._lmdb.Error as exc:
            raise self._fail(f"read of {key!r}", exc) from None

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes | None]:
        """Return ``{key: value or None}`` from one read transaction (a consistent snapshot).

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
        out: dict[str, bytes | None] = {}
        try:
            with self._env().begin(buffers=self.buffers) as txn:
                for k in keys:
                    v = txn.get(self._raw(k))
                    out[k] = None if v is None else bytes(v)
        except self._lmdb.Error as exc:
            raise self._fail(f"read of {len(keys)} keys", exc) from None
        return out

    def _stamp(self, txn: Any, raw: bytes, deleted: bool = False) -> bytes | None:
        """Record a write of ``raw`` (or its deletion) in the tokens' database, inside the
        write transaction ``txn``: the new write's token."""
        if self._tokens is None:
            return None
        if deleted:
            txn.delete(raw, db=self._tokens)
            return None
        token = new_token()
        txn.put(raw, token, db=self._tokens)
        return token

    def _set(self, key: str, value: bytes | memoryview) -> None:
        with self._lock:
            try:
                with self._env().begin(write=True) as txn:
                    txn.put(self._raw(key), value)
                    self._stamp(txn, self._raw(key))
            except self._lmdb.Error as exc:
                raise self._fail(f"write of {key!r}", exc) from None

    def set_many(self, items: Mapping[str, Any]) -> None:
        """Store several values in one write transaction (all or none of them are written).

        Parameters
        ----------
        items : mapping of str to bytes-like
            The values by key.
        """
        self._check_writable()
        rows = [(self._raw(validate_key(k)), ensure_bytes_like(v, k)) for k, v in items.items()]
        with self._lock:
            try:
                with self._env().begin(write=True) as txn:
                    for k, v in rows:
                        txn.put(k, v)
                        self._stamp(txn, k)
            except self._lmdb.Error as exc:
                raise self._fail(f"write of {len(rows)} keys", exc) from None

    def _delete(self, key: str) -> None:
        with self._lock:
            try:
                with self._env().begin(write=True) as txn:
                    txn.delete(self._raw(key))
                    self._stamp(txn, self._raw(key), deleted=True)
            except self._lmdb.Error as exc:
                raise self._fail(f"delete of {key!r}", exc) from None

    # -- versions and conditional writes (see the class's notes) ------------------------------
    supports_conditional_writes = True

    def _version(self, txn: Any, raw: bytes, value: Any) -> Version:
        """The version of ``value``, stored at ``raw``, as transaction ``txn`` sees it."""
        token = None if self._tokens is None else txn.get(raw, db=self._tokens)
        return token_version(None if token is None else bytes(token), value)

    def _get_versioned(self, key: str, limit: int | None) -> tuple[bytes | None, Version]:
        raw = self._raw(key)
        try:
            with self._env().begin(buffers=True) as txn:
                value = txn.get(raw)
                if value is None:
                    return None, ABSENT
                if limit is not None and len(value) > limit:
                    raise oversized(key, len(value), limit)
                # hashed from the mapped pages, copied once
                return bytes(value), self._version(txn, raw, value)
        except self._lmdb.Error as exc:
            raise self._fail(f"read of {key!r}", exc) from None

    def _conditional(self, key: str, version: Version, value: bytes | memoryview | None) -> Version:
        """In one write transaction: check that ``key`` is ``version``, then store ``value``
        there (None: remove the key); the version stored."""
        raw = self._raw(key)
        with self._lock:
            try:
                with self._env().begin(write=True, buffers=True) as txn:
                    current = txn.get(raw)
                    if current is None:
                        if version is not ABSENT:
                            raise version_conflict(key, None, version)
                    elif version is ABSENT or self._version(txn, raw, current) != version:
                        raise version_conflict(key, current, version)
                    if value is not None:
                        txn.put(raw, value)
                        return token_version(self._stamp(txn, raw), value)
                    if current is not None:
                        txn.delete(raw)
                        self._stamp(txn, raw, deleted=True)
                    return ABSENT
            except VersionConflictError:
                raise  # (the transaction was aborted: nothing written)
            except self._lmdb.Error as exc:
                raise self._fail(f"conditional write of {key!r}", exc) from None

    def _set_if(self, key: str, value: bytes | memoryview, version: Version) -> Version:
        return self._conditional(key, version, value)

    def _delete_if(self, key: str, version: Version) -> None:
        self._conditional(key, version, None)

    def value_version(self, key: str) -> _Snapshot | None:
        """The value at ``key`` as it is now, held for reading several of its ranges (a
        shard's index, then its inner chunks) from that one version, whatever is written
        there meanwhile; None when missing.

        A read transaction is held open until ``close()``: it is an MVCC snapshot, and LMDB
        reuses no page a live reader may see, so the value stays where it was in the memory
        map, and each range read is a copy of just those bytes out of the map (nothing else
        is copied, and no read goes to LMDB again).  The transaction may end on another
        thread than the one that began it (this package opens every environment with
        ``MDB_NOTLS``), and the ranges are copied with no LMDB call, so any thread may read
        them.  It takes one of the environment's reader slots (``max_readers``) while it is
        held.

        Parameters
        ----------
        key : str
            The key.

        Returns
        -------
        object or None
            With ``size``, ``read(offset, length=None)`` and ``read_ranges(ranges)`` (new
            bytes), and ``close()`` (ends the transaction); its ``token`` is None (nothing
            tells cheaply that the value changed).
        """
        key = self._checked(key)
        try:
            txn = self._env().begin(buffers=True)
        except self._lmdb.Error as exc:
            raise self._fail(f"read of {key!r}", exc) from None
        try:
            view = txn.get(self._raw(key))
        except BaseException as exc:
            txn.abort()
            if isinstance(exc, self._lmdb.Error):
                raise self._fail(f"read of {key!r}", exc) from None
            raise
        if view is None:
            txn.abort()
            return None
        return _Snapshot(self, key, txn, view)

    def exists(self, key: str) -> bool:
        validate_key(key)
        try:
            with self._env().begin(buffers=True) as txn:
                return txn.get(self._raw(key)) is not None
        except self._lmdb.Error as exc:
            raise self._fail(f"lookup of {key!r}", exc) from None

    def getsize(self, key: str) -> int:  # type: ignore[override]  # Store wraps it to take None too
        """Size in bytes of the value at ``key`` (0 if missing).

        Parameters
        ----------
        key : str
            The key (one holding no value: the total of the values directly below it).

        Returns
        -------
        int
        """
        validate_key(key)
        try:
            with self._env().begin(buffers=True) as txn:
                value = txn.get(self._raw(key))
                return 0 if value is None else len(value)
        except self._lmdb.Error as exc:
            raise self._fail(f"size of {key!r}", exc) from None

    def _scan(self, txn: Any, prefix: str) -> Iterator[bytes]:
        """Keys (encoded) starting with ``prefix``, by a cursor range scan."""
        raw = _encode(prefix)
        cursor = txn.cursor()
        if not cursor.set_range(raw):
            return
        for k in cursor.iternext(keys=True, values=False):
            k = bytes(k)
            if not k.startswith(raw):
                return
            if k != TOKENS_DB:
                yield k

    def list_prefix(self, prefix: str) -> Iterator[str]:
        validate_prefix(prefix)
        try:
            with self._env().begin() as txn:
                keys = [k.decode("utf-8") for k in self._scan(txn, prefix)]
        except self._lmdb.Error as exc:
            raise self._fail(f"listing of prefix {prefix!r}", exc) from None
        return iter(keys)

    def list_dir(self, prefix: str = "") -> list[str]:
        """Sorted names directly below ``prefix``; skips over each child's subtree with a seek.

        Parameters
        ----------
        prefix : str, optional
            The directory (``''``: the root).

        Returns
        -------
        list of str
        """
        validate_prefix(prefix)
        if prefix and not prefix.endswith("/"):
            prefix += "/"
        raw = _encode(prefix)
        n = len(raw)
        names: list[str] = []
        try:
            with self._env().begin() as txn:
                cursor = txn.cursor()
                found = cursor.set_range(raw)
                while found:
                    k = bytes(cursor.key())
                    if not k.startswith(raw):
                        break
                    child, sep, _ = k[n:].partition(b"/")
                    if k != TOKENS_DB:
                        names.append(child.decode("utf-8"))
                    if sep:  # a "directory": jump past every key below it ('/' + 1 == '0')
                        found = cursor.set_range(raw + child + b"0")
                    else:
                        found = cursor.next()
        except self._lmdb.Error as exc:
            raise self._fail(f"listing of {prefix!r}", exc) from None
        return sorted(set(names))

    def delete_prefix(self, prefix: str) -> None:
        self._check_writable()
        validate_prefix(prefix)
        with self._lock:
            try:
                with self._env().begin(write=True) as txn:
                    for k in list(self._scan(txn, prefix)):
                        txn.delete(k)
                        self._stamp(txn, k, deleted=True)
            except self._lmdb.Error as exc:
                raise self._fail(f"delete of prefix {prefix!r}", exc) from None

    def clear(self) -> None:
        """Remove every key."""
        self.delete_prefix("")

    def __len__(self) -> int:
        with self._env().begin() as txn:  # (the tokens' database is an entry of the main one)
            return int(txn.stat()["entries"]) - (txn.get(TOKENS_DB) is not None)

    def flush(self) -> None:
        """Force the data to disk (needed only when opened with ``sync=False``)."""
        if not self.read_only:
            self._env().sync(True)

    def close(self) -> None:
        """Release the environment (closed when no other store of this process uses it)."""
        with _ENVS_LOCK:
            if self._closed:
                return
            self._closed = True
            shared = _ENVS.get(self._env_key)
            if shared is not None and shared[0] is self.env:
                shared[1] -= 1
                if shared[1] > 0:
                    return
                del _ENVS[self._env_key]
            self.env.close()

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.path == self.path

    def __hash__(self) -> int:
        return object.__hash__(self)

    def __repr__(self) -> str:
        mode = ", read_only=True" if self.read_only else ""
        return f"{type(self).__name__}({self.path!r}{mode})"

    # -- pickling: the path, reopened ---------------------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        if not self._closed:
            self.flush()
        return {
            "path": self.path, "buffers": self.buffers, "map_size": self.map_size,
            "read_only": self.read_only, "kwargs": self.kwargs,
            "dimension_separator": self.dimension_separator,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        type(self).__init__(self, state["path"], buffers=state["buffers"], map_size=state["map_size"],
                                  read_only=state["read_only"],
                                  dimension_separator=state.get("dimension_separator"), **state["kwargs"])


class _Snapshot:
    """One version of a value of an :class:`LMDBStore`, held by a read transaction (see
    :meth:`LMDBStore.value_version`): ranges of it are copied out of the memory map."""

    __slots__ = ("_key", "_store", "_txn", "_view", "size")
    token = None  # no index of it is kept: nothing tells cheaply that the key changed since

    def __init__(self, store: LMDBStore, key: str, txn: Any, view: Any):
        self._store = store
        self._key = key
        self._txn = txn
        self._view = memoryview(view)
        self.size = len(self._view)

    def _live(self) -> memoryview:
        # the view points into the map: never read it once the transaction (or the
        # environment) is gone
        if self._txn is None or self._store._closed:
            raise StoreError(f"LMDB value {self._key!r} of {self._store.path!r} read after it was closed")
        return self._view

    def read(self, offset: int, length: int | None = None, transient: bool = False) -> bytes:
        """``length`` bytes from ``offset`` (a suffix for a negative offset, to the end for
        no length), as new bytes."""
        return ByteRange(offset, None if offset < 0 else length).slice(self._live())

    def read_ranges(self, ranges: Sequence[ByteRange]) -> list[bytes]:
        """Each of ``ranges``, as new bytes."""
        view = self._live()
        return [r.slice(view) for r in ranges]

    def close(self) -> None:
        txn, self._txn = self._txn, None
        self._view = memoryview(b"")
        if txn is not None:
            try:
                txn.abort()
            except self._store._lmdb.Error:
                pass
