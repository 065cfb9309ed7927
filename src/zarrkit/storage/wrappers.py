"""Stores that wrap another store: read-only views, request counting, added latency."""

from __future__ import annotations

import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

from .base import ByteRange, Store, StoreLike, oversized
from .coerce import coerce_store

__all__ = ["WrapperStore", "ReadOnlyStore", "CountingStore", "LatencyStore", "LRUStoreCache"]

# A read's result, passed through counting unchanged.
_Value = TypeVar("_Value", bound="bytes | memoryview | None")


class WrapperStore(Store):
    """Forward the store contract to ``inner``; subclasses override what they change.

    Parameters
    ----------
    inner : Store, MutableMapping or str
        The store wrapped (anything :func:`~zarrkit.storage.coerce_store` takes).
    """

    _store: Store

    def __init__(self, inner: StoreLike) -> None:
        # ``_store``: the name zarr-python 3's wrapper stores keep the wrapped store under, which
        # subclasses written for it set directly
        self._store = self._coerce(inner)

    def location(self) -> tuple[Hashable, str]:
        """The wrapped store's."""
        return self._store.location()

    @property
    def inner(self) -> Store:
        """The wrapped store."""
        return self._store

    @property
    def read_only(self) -> bool:
        """Whether writes are refused: set on this wrapper, or else the wrapped store's."""
        own = self.__dict__.get("_read_only")
        return self._store.read_only if own is None else own

    @read_only.setter
    def read_only(self, value: bool) -> None:
        self._read_only = bool(value)

    @property
    def supports_partial_reads(self) -> bool:  # type: ignore[override]
        """Whether the wrapped store reads byte ranges."""
        return self._store.supports_partial_reads

    @property
    def supports_deletes(self) -> bool:  # type: ignore[override]
        """Whether the wrapped store deletes keys."""
        return self._store.supports_deletes

    @staticmethod
    def _coerce(store: StoreLike) -> Store:
        """``store`` as a :class:`Store`: the one conversion of the stores a wrapper is given
        (the wrapped one, and any other it keeps, such as a cache's)."""
        return coerce_store(store)

    @property
    def dimension_separator(self) -> str | None:  # type: ignore[override]  # the inner store's, read only
        """The wrapped store's separator of new arrays' chunk keys."""
        return getattr(self.inner, "dimension_separator", None)

    @property
    def high_latency(self) -> bool:  # type: ignore[override]
        """Whether the wrapped store is slow to answer (object storage)."""
        return getattr(self.inner, "high_latency", False)

    def version_token(self, key: str) -> Any:
        """The wrapped store's version token of ``key``.

        Parameters
        ----------
        key : str
            The value's key.

        Returns
        -------
        hashable or None
        """
        return self.inner.version_token(key)

    @property
    def value_version(self) -> Callable[[str], Any] | None:
        """The wrapped store's ``value_version`` (one version of a value held for a read of
        several of its ranges, see :class:`~zarrkit.codecs.shard_store.ShardVersion`), or
        None when it has none."""
        return getattr(self.inner, "value_version", None)

    @property
    def transactional(self) -> bool:  # type: ignore[override]
        """Whether the wrapped store's changes land together, at a commit."""
        return getattr(self.inner, "transactional", False)

    def _get(self, key: str, byte_range: ByteRange | None) -> bytes | None:
        return self.inner.get(key, byte_range)

    def get_upto(self, key: str, limit: int) -> bytes | memoryview | None:  # (documented by Store.get_upto)
        return self.inner.get_upto(key, limit)

    def get_many_upto(self, keys: Sequence[str], limit: int) -> list[bytes | memoryview | None]:
        """The wrapped store's ``get_many_upto``, unless this wrapper reads a chunk its own
        way (:meth:`get_upto`): then a chunk at a time through that.

        Parameters
        ----------
        keys : sequence of str
            The keys (valid: not checked again).
        limit : int
            The most bytes each value may hold.

        Returns
        -------
        list
            Each value, or None where it is missing.
        """
        if type(self).get_upto is not WrapperStore.get_upto:
            return super().get_many_upto(keys, limit)
        return self.inner.get_many_upto(keys, limit)

    def prefetch(self, keys: Iterable[str]) -> bool:
        """The wrapped store's ``prefetch``, unless this wrapper reads a chunk its own way.

        Parameters
        ----------
        keys : iterable of str
            The keys about to be read.

        Returns
        -------
        bool
            Whether any value is being fetched.
        """
        return type(self).get_upto is WrapperStore.get_upto and self.inner.prefetch(keys)

    def get_transient_upto(self, key: str, limit: int) -> bytes | memoryview | None:
        """:meth:`get_upto` into a buffer the wrapped store may reuse (its
        ``get_transient_upto``, where it has one).

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
        return getattr(self.inner, "get_transient_upto", self.inner.get_upto)(key, limit)

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes | None]:
        return self.inner.get_many(keys)

    def _set(self, key: str, value: bytes | memoryview) -> None:
        self.inner.set(key, value)

    def _delete(self, key: str) -> None:
        self.inner.delete(key)

    #: the wrapper's reads and writes reach the wrapped store's values unchanged, so its
    #: versions and conditional writes are passed through (a wrapper changing values on the
    #: way -- one of a user's that compresses them -- has none unless it says so)
    _passes_versions: bool = False

    @property
    def supports_conditional_writes(self) -> bool:  # type: ignore[override]
        """Whether the wrapped store has conditional writes, and this wrapper passes them on."""
        cls = type(self)
        plain = all(getattr(cls, n) is getattr(WrapperStore, n) for n in ("_get", "_set", "_delete"))
        return (plain or cls._passes_versions) and self.inner.supports_conditional_writes

    @property
    def versions_are_contents(self) -> bool:  # type: ignore[override]
        """Whether the wrapped store's versions are contents."""
        return getattr(self.inner, "versions_are_contents", False)

    @property
    def atomic_deletes(self) -> bool:  # type: ignore[override]
        """Whether the conditional deletes of the wrapped store are atomic."""
        return getattr(self.inner, "atomic_deletes", True)

    def _get_versioned(self, key: str, limit: int | None) -> tuple[bytes | memoryview | None, Any]:
        return self.inner.get_versioned(key, limit)

    def _set_if(self, key: str, value: bytes | memoryview, version: Any) -> Any:
        return self.inner.set_if(key, value, version)

    def _delete_if(self, key: str, version: Any) -> None:
        self.inner.delete_if(key, version)

    def exists(self, key: str) -> bool:
        return self.inner.exists(key)

    def list_prefix(self, prefix: str) -> Iterator[str]:
        return self.inner.list_prefix(prefix)

    def list_dir(self, prefix: str = "") -> list[str]:
        return self.inner.list_dir(prefix)

    def list_prefix_sizes(self, prefix: str) -> Iterator[tuple[str, int]]:
        return self.inner.list_prefix_sizes(prefix)

    def delete_prefix(self, prefix: str) -> None:
        self._check_writable()
        self.inner.delete_prefix(prefix)

    def getsize(self, key: str) -> int:  # type: ignore[override]  # Store wraps it to take None too
        return self.inner.getsize(key)

    def close(self) -> None:
        self.inner.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.inner!r})"

    def __str__(self) -> str:
        return str(self.inner)


class ReadOnlyStore(WrapperStore):
    """A read-only view of another store; every write raises :class:`~zarrkit.errors.ReadOnlyError`.

    Parameters
    ----------
    inner : Store, MutableMapping or str
        The store wrapped (anything :func:`~zarrkit.storage.coerce_store` takes).

    Examples
    --------
    >>> import zarrkit
    >>> from zarrkit.storage import ReadOnlyStore
    >>> store = zarrkit.MemoryStore()
    >>> _ = zarrkit.zeros(4, store=store)
    >>> z = zarrkit.open_array(ReadOnlyStore(store))
    >>> z.read_only
    True
    """

    def __init__(self, inner: StoreLike) -> None:
        super().__init__(inner)
        self.read_only = True


class CountingStore(WrapperStore):
    """Count the requests made to another store (``counts['get']``, ``'set'``, ``'list'``...).

    ``bytes_read`` sums the bytes returned.  Used to test how many requests an operation makes.

    Parameters
    ----------
    inner : Store, MutableMapping or str
        The store wrapped (anything :func:`~zarrkit.storage.coerce_store` takes).

    Examples
    --------
    >>> import zarrkit
    >>> from zarrkit.storage import CountingStore
    >>> store = CountingStore(zarrkit.MemoryStore())
    >>> z = zarrkit.zeros(4, chunks=2, store=store)
    >>> store.reset()
    >>> z[0:2] = 1
    >>> store.counts['set']
    1
    """

    def __init__(self, inner: StoreLike) -> None:
        super().__init__(inner)
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        """Zero every counter."""
        self.counts: Counter[str] = Counter()
        self.bytes_read = 0
        self.keys_read: list[tuple[str, ByteRange | None]] = []

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def _count(self, what: str, n: int = 1) -> None:
        with self._lock:
            self.counts[what] += n

    def _get(self, key: str, byte_range: ByteRange | None) -> bytes | None:
        return self._counted(key, self.inner.get(key, byte_range), byte_range)

    def get_upto(self, key: str, limit: int) -> bytes | memoryview | None:
        return self._counted(key, self.inner.get_upto(key, limit))

    def get_transient_upto(self, key: str, limit: int) -> bytes | memoryview | None:
        return self._counted(key, super().get_transient_upto(key, limit))

    def _counted(self, key: str, value: _Value, byte_range: ByteRange | None = None) -> _Value:
        """``value``, read from ``key``: counted as a get (every read goes through here)."""
        with self._lock:
            self.counts["get"] += 1
            self.keys_read.append((key, byte_range))
            if value is not None:
                self.bytes_read += len(value)
        return value

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes | None]:
        return {k: self.get(k) for k in keys}

    @property
    def value_version(self) -> Callable[[str], Any] | None:
        """The wrapped store's ``value_version``, its reads counted as gets (None when it has
        none)."""
        inner = getattr(self.inner, "value_version", None)
        if inner is None:
            return None

        def version(key: str) -> Any:
            held = inner(key)
            if held is None:  # a request that found nothing
                return self._counted(key, None)
            return _CountedVersion(self, key, held)

        return version

    def exists(self, key: str) -> bool:
        self._count("exists")
        return self.inner.exists(key)

    def _set(self, key: str, value: bytes | memoryview) -> None:
        self._count("set")
        self.inner.set(key, value)

    def _delete(self, key: str) -> None:
        self._count("delete")
        self.inner.delete(key)

    _passes_versions = True

    def _get_versioned(self, key: str, limit: int | None) -> tuple[bytes | memoryview | None, Any]:
        value, version = self.inner.get_versioned(key, limit)
        return self._counted(key, value), version

    def _set_if(self, key: str, value: bytes | memoryview, version: Any) -> Any:
        self._count("set")
        return self.inner.set_if(key, value, version)

    def _delete_if(self, key: str, version: Any) -> None:
        self._count("delete")
        self.inner.delete_if(key, version)

    def list_prefix(self, prefix: str) -> Iterator[str]:
        self._count("list")
        return self.inner.list_prefix(prefix)

    def list_dir(self, prefix: str = "") -> list[str]:
        self._count("list")
        return self.inner.list_dir(prefix)

    def list_prefix_sizes(self, prefix: str) -> Iterator[tuple[str, int]]:
        if type(self.inner).list_prefix_sizes is Store.list_prefix_sizes:
            yield from Store.list_prefix_sizes(self, prefix)  # counted: a listing, then sizes
            return
        self._count("list")
        yield from self.inner.list_prefix_sizes(prefix)

    def getsize(self, key: str) -> int:  # type: ignore[override]  # Store wraps it to take None too
        self._count("getsize")
        return self.inner.getsize(key)


class _CountedVersion:
    """A version of a value held by the store a :class:`CountingStore` wraps: each read is
    counted as a get of that range."""

    def __init__(self, store: CountingStore, key: str, held: Any):
        self._store = store
        self._key = key
        self._held = held
        self.size = held.size
        self.token = held.token
        self.holds_open = getattr(held, "holds_open", False)

    def read(self, offset: int, length: int | None = None, transient: bool = False) -> Any:
        value = self._held.read(offset, length, transient)
        return self._store._counted(self._key, value, ByteRange(offset, length))

    def close(self) -> None:
        self._held.close()


class LatencyStore(WrapperStore):
    """Add a fixed delay to every request of another store (to model object storage).

    Parameters
    ----------
    inner : Store, MutableMapping or str
        The store wrapped (anything :func:`~zarrkit.storage.coerce_store` takes).
    seconds : float, optional
        The delay added to each request.
    get_latency, set_latency : float, optional
        zarr-python 3's ``zarr.testing.store.LatencyStore`` keywords: the delay of reads
        (reads and listings) and of writes, instead of ``seconds``.

    Examples
    --------
    >>> import zarrkit
    >>> from zarrkit.storage import LatencyStore
    >>> store = LatencyStore(zarrkit.MemoryStore(), seconds=0.001)
    >>> z = zarrkit.zeros(4, store=store)
    >>> LatencyStore(zarrkit.MemoryStore(), get_latency=0.001, set_latency=0.0).set_latency
    0.0
    """

    high_latency = True

    def __init__(self, inner: StoreLike, seconds: float = 0.01, *,
                 get_latency: float | None = None, set_latency: float | None = None) -> None:
        super().__init__(inner)
        for name, value in (("seconds", seconds), ("get_latency", get_latency), ("set_latency", set_latency)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0):
                raise ValueError(f"{name} must be a number of seconds >= 0, got {value!r}")
        self.seconds = seconds
        self.get_latency: float = seconds if get_latency is None else get_latency
        self.set_latency: float = seconds if set_latency is None else set_latency

    def _get(self, key: str, byte_range: ByteRange | None) -> bytes | None:
        time.sleep(self.get_latency)
        return self.inner.get(key, byte_range)

    #: reads go through :meth:`get`, which adds the delay
    value_version = None

    def get_upto(self, key: str, limit: int) -> bytes | memoryview | None:
        time.sleep(self.get_latency)
        return self.inner.get_upto(key, limit)

    def get_transient_upto(self, key: str, limit: int) -> bytes | memoryview | None:
        time.sleep(self.get_latency)
        return super().get_transient_upto(key, limit)

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes | None]:
        return {k: self.get(k) for k in keys}

    def _set(self, key: str, value: bytes | memoryview) -> None:
        time.sleep(self.set_latency)
        self.inner.set(key, value)

    _passes_versions = True

    def _get_versioned(self, key: str, limit: int | None) -> tuple[bytes | memoryview | None, Any]:
        time.sleep(self.get_latency)
        return self.inner.get_versioned(key, limit)

    def _set_if(self, key: str, value: bytes | memoryview, version: Any) -> Any:
        time.sleep(self.set_latency)
        return self.inner.set_if(key, value, version)

    def _delete_if(self, key: str, version: Any) -> None:
        time.sleep(self.set_latency)
        self.inner.delete_if(key, version)

    def list_prefix(self, prefix: str) -> Iterator[str]:
        time.sleep(self.get_latency)
        return self.inner.list_prefix(prefix)

    def list_dir(self, prefix: str = "") -> list[str]:
        time.sleep(self.get_latency)
        return self.inner.list_dir(prefix)

    def list_prefix_sizes(self, prefix: str) -> Iterator[tuple[str, int]]:
        time.sleep(self.get_latency)
        return self.inner.list_prefix_sizes(prefix)


class LRUStoreCache(WrapperStore):
    """Keep recently read values of another (slow) store in memory, up to ``max_size`` bytes.

    Reads of whole values are cached, least recently used first out; a byte range of a cached
    value is served from the cache.  Writes and deletes go to the inner store and update the
    cache, so this process never reads stale data it wrote itself; call :meth:`invalidate` when
    another process may have changed the store.  Listings are cached too (until the next write).

    Parameters
    ----------
    store : Store or MutableMapping
        The store to cache.
    max_size : int or None
        Most bytes of values held; ``None`` means no limit.

    Examples
    --------
    >>> import zarrkit
    >>> from zarrkit.storage import LRUStoreCache
    >>> cache = LRUStoreCache(zarrkit.MemoryStore(), max_size=2**28)
    >>> z = zarrkit.zeros((100, 100), chunks=(10, 10), store=cache)
    >>> z[:] = 1
    >>> _ = z[:]; _ = z[:]
    >>> cache.hits > 0
    True
    """

    def __init__(self, store: StoreLike, max_size: int | None) -> None:
        super().__init__(store)
        if max_size is not None and (not isinstance(max_size, int) or max_size < 0):
            raise ValueError(f"max_size must be a non-negative int or None, got {max_size!r}")
        self.max_size = max_size
        self._lock = threading.RLock()
        self._init_cache()

    def _init_cache(self) -> None:
        self._values: OrderedDict[str, bytes] = OrderedDict()
        self._current_size = 0
        self._listings: dict[tuple[str, str], list[str]] = {}
        self.hits = 0
        self.misses = 0

    # -- cache management -------------------------------------------------------------------
    def invalidate(self) -> None:
        """Forget every cached value and listing."""
        with self._lock:
            self._values.clear()
            self._current_size = 0
            self._listings.clear()

    def invalidate_values(self) -> None:
        """Forget every cached value."""
        with self._lock:
            self._values.clear()
            self._current_size = 0

    def invalidate_keys(self) -> None:
        """Forget every cached listing."""
        with self._lock:
            self._listings.clear()

    def _forget(self, key: str) -> None:
        value = self._values.pop(key, None)
        if value is not None:
            self._current_size -= len(value)

    def _remember(self, key: str, value: bytes) -> None:
        n = len(value)
        if self.max_size is not None and n > self.max_size:
            return
        self._forget(key)
        self._values[key] = value
        self._current_size += n
        if self.max_size is not None:
            while self._current_size > self.max_size:
                _, old = self._values.popitem(last=False)
                self._current_size -= len(old)

    #: reads go through the cache
    value_version = None

    # -- reads ------------------------------------------------------------------------------
    def get_upto(self, key: str, limit: int) -> bytes | memoryview | None:
        """A cached value, or the wrapped store's :meth:`~zarrkit.storage.Store.get_upto`
        (then cached): a value larger than ``limit`` bytes is refused, unread where the
        wrapped store can.

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
        with self._lock:
            value: bytes | memoryview | None = self._values.get(key)
            if value is not None:
                self._values.move_to_end(key)
                self.hits += 1
            else:
                self.misses += 1
        if value is None:
            value = self.inner.get_upto(key, limit)
            if value is None:
                return None
            value = bytes(value)
            with self._lock:
                self._remember(key, value)
        if len(value) > limit:
            raise oversized(key, len(value), limit)
        return value

    get_transient_upto = get_upto

    def _get(self, key: str, byte_range: ByteRange | None) -> bytes | None:
        with self._lock:
            value = self._values.get(key)
            if value is not None:
                self._values.move_to_end(key)
                self.hits += 1
                return value if byte_range is None else byte_range.slice(value)
            self.misses += 1
        if byte_range is not None:
            return self.inner.get(key, byte_range)
        value = self.inner.get(key)
        if value is not None:
            value = bytes(value)
            with self._lock:
                self._remember(key, value)
        return value

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes | None]:
        keys = list(keys)
        out: dict[str, bytes | None] = {}
        missing = []
        with self._lock:
            for k in keys:
                v = self._values.get(k)
                if v is None:
                    missing.append(k)
                else:
                    self._values.move_to_end(k)
                    self.hits += 1
                    out[k] = v
            self.misses += len(missing)
        if missing:
            fetched = self.inner.get_many(missing)
            with self._lock:
                for k, v in fetched.items():
                    if v is not None:
                        v = bytes(v)
                        self._remember(k, v)
                    out[k] = v
        return {k: out.get(k) for k in keys}

    def exists(self, key: str) -> bool:
        with self._lock:
            if key in self._values:
                return True
        return self.inner.exists(key)

    def list_prefix(self, prefix: str) -> Iterator[str]:
        with self._lock:
            cached = self._listings.get(("prefix", prefix))
        if cached is None:
            cached = list(self.inner.list_prefix(prefix))
            with self._lock:
                self._listings[("prefix", prefix)] = cached
        return iter(list(cached))

    def list_dir(self, prefix: str = "") -> list[str]:
        with self._lock:
            cached = self._listings.get(("dir", prefix))
        if cached is None:
            cached = self.inner.list_dir(prefix)
            with self._lock:
                self._listings[("dir", prefix)] = cached
        return list(cached)

    def getsize(self, key: str) -> int:  # type: ignore[override]  # Store wraps it to take None too
        with self._lock:
            value = self._values.get(key)
        return len(value) if value is not None else self.inner.getsize(key)

    # -- writes -----------------------------------------------------------------------------
    def _set(self, key: str, value: bytes | memoryview) -> None:
        self.inner.set(key, value)
        with self._lock:
            self._listings.clear()
            self._remember(key, bytes(value))

    def _delete(self, key: str) -> None:
        self.inner.delete(key)
        with self._lock:
            self._listings.clear()
            self._forget(key)

    # a versioned read asks the wrapped store (another writer's change is what it is for);
    # a conditional write forgets the cached value, whatever its answer
    _passes_versions = True

    def _set_if(self, key: str, value: bytes | memoryview, version: Any) -> Any:
        try:
            return self.inner.set_if(key, value, version)
        finally:
            with self._lock:
                self._listings.clear()
                self._forget(key)

    def _delete_if(self, key: str, version: Any) -> None:
        try:
            self.inner.delete_if(key, version)
        finally:
            with self._lock:
                self._listings.clear()
                self._forget(key)

    def delete_prefix(self, prefix: str) -> None:
        self._check_writable()
        self.inner.delete_prefix(prefix)
        with self._lock:
            self._listings.clear()
            for k in [k for k in self._values if k.startswith(prefix)]:
                self._forget(k)

    def __getstate__(self) -> dict[str, Any]:
        return {"inner": self.inner, "max_size": self.max_size}

    def __setstate__(self, state: dict[str, Any]) -> None:
        type(self).__init__(self, state["inner"], state["max_size"])

    def __repr__(self) -> str:
        return f"LRUStoreCache({self.inner!r}, max_size={self.max_size})"
