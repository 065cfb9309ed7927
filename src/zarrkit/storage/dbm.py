"""A store in a DBM-style database (stdlib :mod:`dbm`, or any ``dbm``-like ``open``)."""

from __future__ import annotations

import dbm as _dbm
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import nullcontext
from typing import Any

from ..errors import StoreError
from . import fileio
from .base import ByteRange, Store, validate_key, validate_prefix

__all__ = ["DBMStore"]


def _encode(key: str) -> bytes:
    return key.encode("utf-8")


class DBMStore(Store):
    """Keys and values in a DBM database (``dbm.gnu``, ``dbm.ndbm``, ``dbm.dumb``, ``dbm.sqlite3``...).

    Keys are stored UTF-8 encoded, values as bytes.  By default :func:`dbm.open` picks the
    backend (the one an existing database was made with, else the best available); pass
    ``open=`` to choose one, e.g. ``open=dbm.dumb.open`` or ``open=dbm.gnu.open``.

    DBM databases are not safe for concurrent use: with ``write_lock=True`` (the default)
    every operation of this store holds a lock, so one store may be shared by threads.  DBM
    has no ordered keys, so listings read every key.  Most backends keep some changes in memory
    until :meth:`flush` or :meth:`close`; flush before another store or process opens the same
    database.

    A crash is survived only as well as the backend survives it: ``dbm.dumb`` (the fallback
    where no other backend is built) rewrites values in place and its index by renaming, so a
    writer killed mid-write can leave torn values or an empty-looking database.  For data that
    must survive a killed writer use :class:`SQLiteStore`, :class:`LMDBStore` or a
    :class:`DirectoryStore`.

    Parameters
    ----------
    path : str or os.PathLike
        The database (backends may add suffixes such as ``.db`` or ``.dat``/``.dir``).
    flag : {'c', 'w', 'r', 'n'}, default 'c'
        As :func:`dbm.open`: ``'c'`` create if missing, ``'w'`` open existing for writing,
        ``'n'`` always start empty, ``'r'`` read-only (the store refuses writes).  Backend
        modifiers (``'cf'``, ``'cu'``, ...) may follow.
    mode : int, default 0o666
        Permissions of a new database file (before the umask).
    open : callable, optional
        ``open(path, flag, mode, **open_kwargs)`` returning a DBM object; default
        :func:`dbm.open`.
    write_lock : bool, default True
        Serialize every operation with a lock (needed unless a single thread uses the store).
    dimension_separator : {'.', '/'}, optional
        Separator used by arrays *created* in this store when none is given.
    **open_kwargs
        Passed to ``open``.

    Raises
    ------
    FileNotFoundError
        The database does not exist and ``flag`` does not create it.
    zarrkit.errors.StoreError
        The database cannot be opened or an operation fails; the message names the path (and
        the key).

    Examples
    --------
    >>> import dbm.dumb, os, tempfile, zarrkit
    >>> from zarrkit.storage.dbm import DBMStore
    >>> path = os.path.join(tempfile.mkdtemp(), 'example.db')
    >>> with DBMStore(path, open=dbm.dumb.open) as store:
    ...     z = zarrkit.zeros((4, 4), chunks=(2, 2), dtype='i4', store=store, zarr_format=2)
    ...     z[:] = 5
    ...     sorted(store)
    ['.zarray', '.zattrs', '0.0', '0.1', '1.0', '1.1']
    >>> with DBMStore(path, flag='r', open=dbm.dumb.open) as store:
    ...     int(zarrkit.open_array(store, mode='r')[0, 0])
    5
    """

    supports_partial_reads = True

    #: no versions: a DBM database is one process's at a time and has no transactions, so
    #: nothing could make a compare-and-write atomic against another process (read-modify-
    #: writes on it need a synchronizer, as the guide's consistency page says)
    supports_conditional_writes = False

    def __init__(
        self,
        path: Any,
        flag: str = "c",
        mode: int = 0o666,
        open: Callable[..., Any] | None = None,
        write_lock: bool = True,
        dimension_separator: str | None = None,
        **open_kwargs: Any,
    ) -> None:
        if self._check_dimension_separator(dimension_separator) is not None:
            self.dimension_separator = dimension_separator
        self.mode = mode
        if not isinstance(flag, str) or not flag or flag[0] not in "cwrn":
            raise ValueError(f"DBMStore flag must start with 'c', 'w', 'r' or 'n', got {flag!r}")
        self.path: str = os.path.abspath(os.fspath(path))
        self.flag = flag
        opener: Callable[..., Any] = _dbm.open if open is None else open  # any dbm flag string
        # zarr-python 2's attribute: the dbm module's open (on the class, open is zarr-python 3's
        # classmethod making a store)
        self.open = opener  # type: ignore[method-assign]
        self.write_lock: bool = bool(write_lock)
        self.open_kwargs: dict[str, Any] = dict(open_kwargs)
        self.read_only: bool = flag[0] == "r"
        self._lock: Any = threading.RLock() if write_lock else nullcontext()
        self._closed = False
        # the backends add their own suffixes to the path
        fileio.check_regular_files(
            f"DBM database {self.path!r}", *(self.path + s for s in ("", ".db", ".dat", ".dir", ".bak", ".pag"))
        )
        try:
            self.db = opener(self.path, flag, mode, **open_kwargs)
        except FileNotFoundError:
            raise FileNotFoundError(f"DBM database {self.path!r} does not exist") from None
        except _dbm.error[0] as exc:  # dbm.error is a tuple of the backends' error classes
            if "doesn't exist" in str(exc) or "need 'c' or 'n' flag" in str(exc):
                raise FileNotFoundError(
                    f"DBM database {self.path!r} does not exist (flag {flag!r} does not "
                    "create it)"
                ) from None
            raise StoreError(f"cannot open DBM database {self.path!r}: {exc}") from None
        except (OSError, *_dbm.error) as exc:
            raise StoreError(f"cannot open DBM database {self.path!r}: {exc}") from None

    # -- helpers ------------------------------------------------------------------------------
    def _db(self) -> Any:
        if self._closed:
            raise StoreError(f"DBMStore {self.path!r} is closed")
        return self.db

    def _fail(self, what: str, exc: BaseException) -> StoreError:
        return StoreError(f"DBM {what} in {self.path!r} failed: {exc}")

    # -- contract -----------------------------------------------------------------------------
    def _get(self, key: str, byte_range: ByteRange | None) -> bytes | None:
        with self._lock:
            db = self._db()
            try:
                value = db.get(_encode(key))
            except (OSError, *_dbm.error) as exc:
                raise self._fail(f"read of {key!r}", exc) from None
        if value is None:
            return None
        value = bytes(value)
        return value if byte_range is None else byte_range.slice(value)

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes | None]:
        """Return ``{key: value or None}`` under one acquisition of the lock.

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
        with self._lock:
            return {k: self._get(k, None) for k in keys}

    def _set(self, key: str, value: bytes | memoryview) -> None:
        with self._lock:
            db = self._db()
            try:
                db[_encode(key)] = bytes(value)
            except (OSError, *_dbm.error) as exc:
                raise self._fail(f"write of {key!r}", exc) from None

    def _delete(self, key: str) -> None:
        with self._lock:
            db = self._db()
            try:
                del db[_encode(key)]
            except KeyError:
                pass
            except (OSError, *_dbm.error) as exc:
                raise self._fail(f"delete of {key!r}", exc) from None

    def _keys(self) -> list[str]:
        with self._lock:
            db = self._db()
            try:
                raw = list(db.keys())
            except (OSError, *_dbm.error) as exc:
                raise self._fail("listing", exc) from None
        return [k.decode("utf-8") if isinstance(k, bytes) else str(k) for k in raw]

    def list_prefix(self, prefix: str) -> Iterator[str]:
        validate_prefix(prefix)
        keys = self._keys()
        return iter(sorted(k for k in keys if k.startswith(prefix)))

    def delete_prefix(self, prefix: str) -> None:
        self._check_writable()
        validate_prefix(prefix)
        with self._lock:
            for key in self.list_prefix(prefix):
                self._delete(key)

    def exists(self, key: str) -> bool:
        validate_key(key)
        with self._lock:
            db = self._db()
            try:
                return _encode(key) in db
            except (OSError, *_dbm.error) as exc:
                raise self._fail(f"lookup of {key!r}", exc) from None

    def clear(self) -> None:
        """Remove every key."""
        self.delete_prefix("")

    def __len__(self) -> int:
        with self._lock:
            try:
                return len(self._db())
            except (OSError, *_dbm.error) as exc:
                raise self._fail("key count", exc) from None

    def flush(self) -> None:
        """Write changes held in memory to disk (``sync()``, for backends that have it)."""
        with self._lock:
            db = self._db()
            sync = getattr(db, "sync", None)
            if sync is not None and not self.read_only:
                sync()

    def close(self) -> None:
        """Flush and close the database (closing twice is fine)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self.db.close()

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.path == self.path

    def __hash__(self) -> int:
        return object.__hash__(self)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.path!r}, flag={self.flag!r})"

    # -- pickling: the path, reopened ---------------------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        if not self._closed:
            self.flush()  # the copy must see everything written so far
        return {
            "path": self.path, "flag": self.flag, "open": self.open,
            "write_lock": self.write_lock, "open_kwargs": self.open_kwargs, "mode": self.mode,
            "dimension_separator": self.dimension_separator,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        flag = state["flag"]
        if flag[0] == "n":  # reopening must not empty the database again
            flag = "c" + flag[1:]
        type(self).__init__(self, state["path"], flag=flag, mode=state.get("mode", 0o666), open=state["open"],
                                  write_lock=state["write_lock"],
                                  dimension_separator=state.get("dimension_separator"), **state["open_kwargs"])
