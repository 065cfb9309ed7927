"""Any zarr-python 3 store as a zarrkit store.

zarrkit's calls are synchronous; a zarr-python 3 store (:class:`zarr.abc.store.Store`:
``LocalStore``, ``MemoryStore``, ``FsspecStore``, ``ObjectStore``, Icechunk's
``IcechunkStore``, VirtualiZarr's ``ManifestStore``...) offers coroutines.
:class:`ZarrStoreAdapter` runs those coroutines on zarr-python's own event-loop thread (the
one its synchronous API uses), so every adapted store, and zarr-python itself, share one loop.
Stores that also read and write synchronously (zarr-python's ``LocalStore`` and
``MemoryStore``: ``get_sync``, ``set_sync``, ``delete_sync`` from the class that implements
the coroutines) serve single requests on the calling thread instead, without a trip through
the loop:

* ``get(key, byte_range)`` awaits ``store.get`` with the matching ``ByteRequest``
  (``RangeByteRequest``, ``OffsetByteRequest``, ``SuffixByteRequest``), so a ranged read (a
  shard's index, one inner chunk of a shard) moves only those bytes;
* ``get_many(keys)`` and ``set_many(items)`` put every request in flight at once
  (``asyncio.gather``) and wait once;
* ``list_prefix`` / ``list_dir`` / ``delete`` / ``delete_prefix`` / ``getsize`` / ``exists``
  use the store's own listing, deletion and size calls;
* a store whose ``read_only`` flag is set (an Icechunk read-only session, a store opened
  read-only) refuses writes with :class:`~zarrkit.errors.ReadOnlyError` naming it, before
  anything reaches the store.

zarr-python is imported only when such a store is given: :func:`is_zarr_store` looks for it
in ``sys.modules``.  The adapter pickles when the store does (an Icechunk store of a fork
session or of a read-only session; zarr-python's local and object stores), so arrays over it
go to dask workers.
"""

from __future__ import annotations

import asyncio
import inspect
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, cast

from ..errors import ReadOnlyError, StoreError, StoreOperationNotSupported, ZarrkitError
from . import cancel, zarr3_api
from .base import ByteRange, Store, ensure_bytes_like, oversized, validate_prefix
from .buffer import default_buffer_prototype
from .local_confine import confinement_of

__all__ = ["ZarrStoreAdapter", "is_zarr_store"]

#: zarr-python stores whose requests take about as long as decoding a chunk: the engine keeps
#: one request per CPU in flight on them (every other store gets ``config.io_threads``)
_LOW_LATENCY = {"LocalStore", "MemoryStore", "GpuMemoryStore", "ManagedMemoryStore"}

#: the files zarr-python's LocalStore writes a value to before renaming it over the key
#: (``<key without suffix>.<uuid hex>.partial``): listed while a write is in flight, never keys
_LOCAL_STORE_TEMP = re.compile(r"\.[0-9a-f]{32}\.partial$")


def is_zarr_store(obj: Any) -> bool:
    """Whether ``obj`` is a store written for zarr-python 3: of a class derived from
    zarr-python's ``zarr.abc.store.Store`` (without importing zarr-python: such an object can
    only exist once it is imported), or from zarrkit's :class:`Store` with zarr-python 3's
    coroutine methods (``zarr.abc.store.Store`` when ``zarr`` is zarrkit)."""
    if isinstance(obj, Store):
        return bool(getattr(type(obj), "_speaks_zarr3", False)) or zarr3_api.speaks_zarr3(obj)
    abc = sys.modules.get("zarr.abc.store")
    return abc is not None and abc.Store is not Store and isinstance(obj, abc.Store)


class _Zarr:
    """What the adapter uses of zarr-python, imported on first use."""

    def __init__(self) -> None:
        from zarr.abc import store as abc
        from zarr.core import sync
        from zarr.core.buffer import default_buffer_prototype

        self.sync = sync.sync
        #: zarr-python's loop (started on first use, made anew in a forked child)
        self.loop = getattr(sync, "_get_loop", None)
        self.prototype = default_buffer_prototype()
        self.Range = abc.RangeByteRequest
        self.Offset = abc.OffsetByteRequest
        self.Suffix = abc.SuffixByteRequest


class _Zarrkit(_Zarr):
    """The same, for a store written for zarr-python 3 over zarrkit's base class: zarrkit's
    buffers and byte requests, its background loop."""

    def __init__(self) -> None:
        self.sync = None  # type: ignore[assignment]
        self.loop = zarr3_api.BackgroundLoop.get
        self.prototype = default_buffer_prototype()  # type: ignore[assignment]
        self.Range = zarr3_api.RangeByteRequest  # type: ignore[assignment]
        self.Offset = zarr3_api.OffsetByteRequest  # type: ignore[assignment]
        self.Suffix = zarr3_api.SuffixByteRequest  # type: ignore[assignment]


_kits: dict[bool, _Zarr] = {}


def _z(own: bool = False) -> _Zarr:
    """What the adapter uses: zarr-python's (``own``: zarrkit's, for a store over its base)."""
    if own not in _kits:
        _kits[own] = _Zarrkit() if own else _Zarr()
    return _kits[own]


async def _result(value: Any) -> Any:
    """``value`` awaited when it is awaitable: a store written for zarr-python 3 over zarrkit's
    base class may leave a method zarrkit's base gives synchronously (``getsize``)."""
    return await value if inspect.isawaitable(value) else value


class ZarrStoreAdapter(Store):
    """A zarr-python 3 store used as a zarrkit store.

    Parameters
    ----------
    store : zarr.abc.store.Store
        The store: ``zarr.storage.LocalStore``, ``MemoryStore``, ``FsspecStore``,
        ``ObjectStore``, an Icechunk session's ``session.store``, a VirtualiZarr
        ``ManifestStore``...
    read_only : bool, default False
        Refuse writes even if ``store`` accepts them (the store's own ``read_only`` flag is
        always honoured).

    Notes
    -----
    zarrkit adapts such a store by itself wherever it takes one (``store=`` of every function,
    :func:`zarrkit.storage.coerce_store`), so the class is rarely named.  ``close()`` leaves the
    store open: it belongs to the caller (an Icechunk session is committed after zarrkit has
    written through it).

    Examples
    --------
    >>> import numpy as np, zarr, zarrkit
    >>> z = zarrkit.zeros((4, 4), chunks=(2, 2), dtype='i2', store=zarr.storage.MemoryStore())
    >>> z[1] = 7
    >>> type(z.store).__name__
    'ZarrStoreAdapter'
    >>> zarr.open_array(z.store.zarr_store, mode='r')[1]
    array([7, 7, 7, 7], dtype=int16)
    """

    def __init__(self, store: Any, read_only: bool = False) -> None:
        if not is_zarr_store(store):
            raise TypeError(
                f"ZarrStoreAdapter needs a zarr-python 3 store (zarr.abc.store.Store), "
                f"not {type(store).__name__}"
            )
        self.zarr_store = store
        #: a store over zarrkit's base class: zarrkit's buffers and loop, not zarr-python's
        self._own = isinstance(store, Store)
        self._read_only = bool(read_only)
        self.supports_writes: bool = bool(store.supports_writes)
        self.supports_deletes: bool = bool(store.supports_deletes)
        self.supports_listing: bool = bool(store.supports_listing)
        self.high_latency: bool = type(store).__name__ not in _LOW_LATENCY
        self.transactional: bool = type(store).__name__ == "IcechunkStore"
        #: the store reads and writes as well without the loop (zarr-python's LocalStore and
        #: MemoryStore): single requests run on the calling thread
        self._sync_io = _synchronous(store)
        #: zarr-python's own stores answer a range with the value's bytes in it only; others
        #: may not (VirtualiZarr's ManifestStore reads on into the file past a chunk's end), so
        #: a read of limit + 1 bytes tells nothing there, and they are read whole
        self._exact_ranges = any(c.__module__.startswith("zarr.storage.") for c in type(store).__mro__)
        #: zarr-python's LocalStore: deleting a directory's name removes the directory, and
        #: listings show the temporary files of writes in flight
        self._local_files = any(
            c.__name__ == "LocalStore" and c.__module__.startswith("zarr.")
            for c in type(store).__mro__
        )
        # its keys leading out through a symbolic link refused, as DirectoryStore does
        self._confined = confinement_of(
            getattr(store, "root", None) if self._local_files else None, self.store_description
        )

    # -- flags and names ------------------------------------------------------------------------
    @property
    def store_description(self) -> str:
        """The adapter's name in messages: ``ZarrStoreAdapter(LocalStore('file:///data/x'))``,
        ``ZarrStoreAdapter(IcechunkStore(branch 'main'))``."""
        return f"{type(self).__name__}({_describe(self.zarr_store)})"

    @property
    def read_only(self) -> bool:
        """Whether writes are refused: asked for, or the store's own flag (an Icechunk session
        becomes read-only once committed)."""
        # (a flag that is not a bool -- a mock's attribute -- says nothing)
        return self._read_only or getattr(self.zarr_store, "read_only", False) is True

    @read_only.setter
    def read_only(self, value: bool) -> None:
        self._read_only = bool(value)

    def _check_writable(self) -> None:
        if self.read_only or not self.supports_writes:
            raise ReadOnlyError(f"{self.store_description} is read-only")
        cancel.check()

    def __repr__(self) -> str:
        return self.store_description

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.zarr_store, self._read_only))

    def close(self) -> None:
        """Nothing to release: the zarr-python store stays open (it belongs to the caller)."""

    # -- running coroutines ------------------------------------------------------------------------
    def _run(
        self, op: str, key: str, coro: Any, what: str = "key", direct: bool = False
    ) -> Any:
        """Run ``coro`` on zarr-python's event-loop thread (``direct``: on this thread, for a
        coroutine whose store calls are synchronous) and return its result; a failure of the
        store becomes :class:`StoreError` naming ``op``, the ``key`` (or prefix: ``what``) and
        the store."""
        of = f" of {what} {key!r}" if key else ""
        try:
            return _drive(coro) if direct else _on_the_loop(coro, _z(self._own))
        except ZarrkitError:
            raise
        except NotImplementedError as exc:
            raise StoreOperationNotSupported(
                f"{self.store_description} does not support {op}{of}"
            ) from exc
        except Exception as exc:
            if any(c.__name__ == "ReadOnlyError" for c in type(exc).__mro__):
                # the store turned read-only (a committed Icechunk session)
                raise ReadOnlyError(f"{self.store_description} is read-only: {exc}") from exc
            raise StoreError(
                f"{op}{of} failed in {self.store_description}: {type(exc).__name__}: {exc}"
            ) from exc

    # -- reading -------------------------------------------------------------------------------
    async def _aget(self, key: str, byte_range: ByteRange | None) -> Any:
        """The store's Buffer for ``key`` (None: missing), ``byte_range`` applied."""
        request = _request(byte_range, _z(self._own))
        try:
            if request is None:
                return await self._fetch(key, None)
            try:
                value = await self._fetch(key, request)
            except (FileNotFoundError, ZarrkitError):
                raise
            except Exception:  # noqa: BLE001 - a range past the end: some stores refuse it
                value = await self._fetch(key, None)
                return None if value is None else byte_range.slice(value.as_numpy_array())  # type: ignore[union-attr]
        except FileNotFoundError:
            return None
        if value is not None and byte_range is not None and byte_range.length == 0:
            return b""
        return value

    async def _fetch(self, key: str, request: Any) -> Any:
        self._confined(key)
        z = _z(self._own)
        if self._sync_io:
            return self.zarr_store.get_sync(key, prototype=z.prototype, byte_range=request)
        return await _result(await self.zarr_store.get(key, z.prototype, request))

    def _get(self, key: str, byte_range: ByteRange | None) -> bytes | None:
        return _to_bytes(self._run("read", key, self._aget(key, byte_range), direct=self._sync_io))

    def get_transient(
        self, key: str, byte_range: ByteRange | None = None
    ) -> bytes | memoryview | None:
        value = self._run(
            "read", key, self._aget(self._checked(key), byte_range), direct=self._sync_io
        )
        if value is None or isinstance(value, bytes):
            return value
        return memoryview(value.as_numpy_array()).cast("B")

    def _upto(self, key: str, limit: int) -> Any:
        # one ranged read of limit + 1 bytes: a larger value is refused without being read whole
        byte_range = ByteRange(0, limit + 1) if self._exact_ranges else None
        value = self._run("read", key, self._aget(key, byte_range), direct=self._sync_io)
        if value is not None and len(value) > limit:
            raise oversized(key, len(value) if len(value) > limit + 1 else None, limit)
        return value

    def get_upto(self, key: str, limit: int) -> bytes | None:
        """The value at ``key`` (see :meth:`Store.get_upto`), read with one request for its
        first ``limit + 1`` bytes: a larger value is refused without being read whole.

        Parameters
        ----------
        key : str
            The key (valid: not checked again).
        limit : int
            The most bytes the value may hold.

        Returns
        -------
        bytes, memoryview or None
        """
        return _to_bytes(self._upto(key, limit))

    def get_transient_upto(self, key: str, limit: int) -> bytes | memoryview | None:
        """:meth:`get_upto` as a view of the store's buffer (no copy).

        Parameters
        ----------
        key : str
            The key (valid: not checked again).
        limit : int
            The most bytes the value may hold.

        Returns
        -------
        bytes, memoryview or None
        """
        value = self._upto(key, limit)
        if value is None or isinstance(value, bytes):
            return value
        return memoryview(value.as_numpy_array()).cast("B")

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes | None]:
        """The values at ``keys`` (None when missing), every request in flight at once."""
        keys = [self._checked(k) for k in keys]
        if not keys:
            return {}
        if self._sync_io:  # quicker one after the other than through the loop
            return {k: self._get(k, None) for k in keys}

        async def gather() -> list[Any]:
            return await asyncio.gather(*(self._aget(k, None) for k in keys), return_exceptions=True)

        values = self._run("read", "", gather())
        for key, value in zip(keys, values):
            if isinstance(value, BaseException):  # the first failed key, named
                self._run("read", key, _raise(value))
        return {k: _to_bytes(v) for k, v in zip(keys, values)}

    def exists(self, key: str) -> bool:
        return bool(self._run("exists", key, self._aexists(self._checked(key))))

    async def _aexists(self, key: str) -> bool:
        self._confined(key, "list")
        try:
            return bool(await _result(self.zarr_store.exists(key)))
        except NotImplementedError:  # a store that only reads (VirtualiZarr's)
            try:
                return await self._aget(key, ByteRange(0, 0)) is not None
            except (ValueError, IndexError, KeyError):  # how it refuses keys that hold nothing
                return False

    def getsize(self, key: str) -> int:  # type: ignore[override]
        """Size of the value at ``key`` (0 when missing; a "directory": see Store.getsize)."""
        key = self._checked(key)

        async def size() -> int:
            if not await self._aexists(key):
                return 0
            try:
                return int(await _result(self.zarr_store.getsize(key)))
            except FileNotFoundError:
                return 0

        return int(self._run("getsize", key, size()))

    # -- writing -------------------------------------------------------------------------------
    def _buffer(self, value: bytes | memoryview) -> Any:
        # a copy of a caller's buffer: an in-memory store keeps the object it is given
        return _z(self._own).prototype.buffer.from_bytes(value if isinstance(value, bytes) else bytes(value))

    async def _put(self, key: str, buffer: Any) -> None:
        self._confined(key, "write")
        if self._sync_io:
            self.zarr_store.set_sync(key, buffer)
        else:
            await _result(await _result(self.zarr_store.set(key, buffer)))

    def _set(self, key: str, value: bytes | memoryview) -> None:
        self._run("write", key, self._put(key, self._buffer(value)), direct=self._sync_io)

    def set_many(self, items: Mapping[str, bytes | bytearray | memoryview]) -> None:
        """Store several values, every request in flight at once."""
        self._check_writable()
        buffers = [
            (self._checked(k), self._buffer(ensure_bytes_like(v, k))) for k, v in items.items()
        ]
        if not buffers:
            return

        async def gather() -> list[Any]:
            return await asyncio.gather(*(self._put(k, b) for k, b in buffers), return_exceptions=True)

        for (key, _), outcome in zip(buffers, self._run("write", "", gather())):
            if isinstance(outcome, BaseException):  # the first failed key, named
                self._run("write", key, _raise(outcome))

    def _delete(self, key: str) -> None:
        async def delete() -> None:
            # only a value: LocalStore removes a whole directory given its name
            self._confined(key, "delete")
            if not self._local_files or await self._aexists(key):
                await _result(self.zarr_store.delete(key))

        self._run("delete", key, delete())

    def delete_prefix(self, prefix: str) -> None:
        """Remove every key starting with ``prefix``, the deletions in flight at once."""
        self._check_writable()
        keys = list(self.list_prefix(validate_prefix(prefix)))

        async def gather() -> None:
            await asyncio.gather(*(_result(self.zarr_store.delete(k)) for k in keys))

        if keys:
            self._run("delete", prefix, gather(), what="prefix")

    # -- listing -------------------------------------------------------------------------------
    def list_prefix(self, prefix: str) -> Iterator[str]:
        validate_prefix(prefix)
        store = self.zarr_store

        async def collect() -> list[str]:
            # zarr-python's stores list below a "directory" (the contract is a string
            # prefix), and some only below a node (Icechunk): the nearest one that lists
            parent = prefix[: prefix.rfind("/") + 1]
            while True:
                try:
                    listing = store.list_prefix(parent) if parent else store.list()
                    return [k async for k in listing]
                except (NotImplementedError, ZarrkitError):
                    raise
                except Exception:
                    if not parent:
                        raise
                    parent = parent[: parent.rstrip("/").rfind("/") + 1]

        keys = self._run("listing", prefix, collect(), what="prefix")
        return iter([k for k in self._visible(keys) if k.startswith(prefix)])

    def list_dir(self, prefix: str = "") -> list[str]:
        validate_prefix(prefix)
        path = prefix.rstrip("/")

        async def collect() -> list[str]:
            return [k async for k in self.zarr_store.list_dir(path)]

        try:
            names = self._run("listing", prefix, collect(), what="prefix")
        except StoreError:  # a store that lists only some "directories" (Icechunk: nodes)
            return super().list_dir(prefix)
        within = path + "/" if path else ""
        return sorted({name.rstrip("/") for name in self._visible(names, within)})

    def _visible(self, names: list[str], prefix: str = "") -> list[str]:
        if not self._local_files:
            return names
        names = [n for n in names if not _LOCAL_STORE_TEMP.search(n)]
        return self._confined.visible(names, prefix)  # type: ignore[attr-defined]


def _request(byte_range: ByteRange | None, z: _Zarr) -> Any:
    """zarr-python's ByteRequest for a zarrkit :class:`ByteRange` (None: the whole value)."""
    if byte_range is None:
        return None
    offset, length = byte_range.offset, byte_range.length
    if offset < 0:
        return z.Suffix(-offset)
    if length is None:
        return z.Offset(offset) if offset else None
    # an empty range is asked as one byte: present values answer b"" (stores refuse empty
    # ranges)
    return z.Range(offset, offset + max(length, 1))


def _synchronous(store: Any) -> bool:
    """Whether ``store`` serves reads, writes and deletes synchronously too (zarr-python's
    ``get_sync``, ``set_sync``, ``delete_sync``), each from the class that implements the
    coroutine (a wrapper that changes ``get`` and inherits ``get_sync`` must be awaited)."""
    if not getattr(store, "_supports_sync_io", True):
        return False
    for name in ("get", "set", "delete"):
        owner = _owner(type(store), name)
        if owner is None or owner is not _owner(type(store), f"{name}_sync"):
            return False
    return True


def _owner(cls: type, name: str) -> type | None:
    return next((c for c in cls.__mro__ if name in c.__dict__), None)


def _on_the_loop(coro: Any, z: _Zarr) -> Any:
    """The result of ``coro`` run on zarr-python's event-loop thread (zarrkit's, for ``z`` of
    a store over zarrkit's base class)."""
    loop = None if z.loop is None else z.loop()
    try:
        called_from = asyncio.get_running_loop()
    except RuntimeError:  # the usual case: no loop runs on this thread
        called_from = None
    if called_from is loop and z.sync is None:
        coro.close()
        raise RuntimeError("a store written for zarr-python 3 was called synchronously from its own loop")
    if loop is None or called_from is loop:  # zarr-python's own call (which refuses the latter)
        return z.sync(coro)
    return asyncio.run_coroutine_threadsafe(coro, loop).result()


async def _raise(exc: BaseException) -> Any:
    raise exc


def _drive(coro: Any) -> Any:
    """The result of a coroutine that never waits (its store calls are synchronous), run on
    the calling thread."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    coro.close()
    raise RuntimeError("a synchronous store call waited for the event loop")


def _to_bytes(value: Any) -> bytes | None:
    if value is None or isinstance(value, bytes):
        return value
    # zarr's Buffer.to_bytes returns bytes; its value arrives untyped here
    return cast(bytes, value.to_bytes())


def _describe(store: Any) -> str:
    """A one-line name of a zarr-python store: its repr when that is one line and says more
    than the class (``LocalStore('file:///data/x.zarr')``), else its class and what
    identifies it (an Icechunk store's branch or snapshot)."""
    text = repr(store)
    if "\n" not in text and len(text) < 200 and " object at 0x" not in text:
        return text[1:-1] if text.startswith("<") and text.endswith(">") else text
    name = type(store).__name__
    session = getattr(type(store), "session", None)
    if session is not None:  # Icechunk: the session's branch or snapshot
        try:
            s = store.session
            where = f"branch {s.branch!r}" if s.branch else f"snapshot {s.snapshot_id}"
        except Exception:  # noqa: BLE001 - only used in messages
            return name
        return f"{name}({where}{', read-only' if s.read_only else ''})"
    return name
