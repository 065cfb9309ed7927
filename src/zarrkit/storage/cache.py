"""A store cached in another store (zarr-python 3's ``CacheStore``): values read from a slow
store are kept in a second store (memory, a local directory...), least recently used first out
beyond ``max_size`` bytes, and older than ``max_age_seconds`` read again."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

from .base import ByteRange, Store, StoreLike, oversized
from .wrappers import WrapperStore

__all__ = ["CacheStore"]


class CacheStore(WrapperStore):
    """``store`` with the values it reads (and, with ``cache_set_data``, those written to it)
    kept in ``cache_store``.

    Parameters
    ----------
    store : store
        The store read and written (the source of truth).
    cache_store : store
        Where cached values are kept: a ``MemoryStore`` for this process, a local directory to
        keep them between runs.
    max_age_seconds : int, float or ``"infinity"``
        How long a cached value is used before it is read again.
    max_size : int or None
        The most bytes kept in the cache (None: no limit); least recently used values go first.
    cache_set_data : bool
        Whether values written through this store are cached too.

    Examples
    --------
    >>> from zarrkit.storage import MemoryStore
    >>> from zarrkit.storage.cache import CacheStore
    >>> source = MemoryStore()
    >>> source["k"] = b"value"
    >>> cached = CacheStore(source, cache_store=MemoryStore(), max_size=1024)
    >>> cached["k"], cached.cache_info()["cached_keys"]
    (b'value', 1)
    """

    def __init__(
        self,
        store: StoreLike,
        *,
        cache_store: StoreLike,
        max_age_seconds: float | str = "infinity",
        max_size: int | None = None,
        key_insert_times: dict[str, float] | None = None,
        cache_set_data: bool = True,
    ) -> None:
        super().__init__(store)
        if max_age_seconds != "infinity" and (
            isinstance(max_age_seconds, bool) or not isinstance(max_age_seconds, (int, float)) or max_age_seconds < 0
        ):
            raise ValueError(f"max_age_seconds must be a non-negative number or 'infinity', got {max_age_seconds!r}")
        if max_size is not None and (isinstance(max_size, bool) or not isinstance(max_size, int) or max_size < 0):
            raise ValueError(f"max_size must be a non-negative int or None, got {max_size!r}")
        self.cache: Store = self._coerce(cache_store)
        self.max_age_seconds = max_age_seconds
        self.max_size = max_size
        self.cache_set_data = cache_set_data
        self._times: dict[str, float] = dict(key_insert_times or {})
        self._sizes: OrderedDict[str, int] = OrderedDict()  # least recently used first
        self._lock = threading.Lock()

    # -- the cache ------------------------------------------------------------------------
    def _fresh(self, key: str) -> bool:
        if self.max_age_seconds == "infinity":
            return True
        inserted = self._times.get(key)
        return inserted is not None and time.monotonic() - inserted <= float(self.max_age_seconds)

    def _remember(self, key: str, value: bytes) -> None:
        n = len(value)
        if self.max_size is not None and n > self.max_size:
            return  # larger than the whole cache: not kept
        with self._lock:
            self._forget_locked(key)
            while self.max_size is not None and self._sizes and sum(self._sizes.values()) + n > self.max_size:
                old, _ = self._sizes.popitem(last=False)
                self._times.pop(old, None)
                self.cache.delete(old)
            self.cache.set(key, value)
            self._sizes[key] = n
            self._times[key] = time.monotonic()

    def _forget_locked(self, key: str) -> None:
        if key in self._sizes:
            del self._sizes[key]
            self._times.pop(key, None)
            self.cache.delete(key)

    def _forget(self, key: str) -> None:
        with self._lock:
            self._forget_locked(key)

    #: reads go through the cache
    value_version = None

    # -- the store contract ---------------------------------------------------------------
    def _get(self, key: str, byte_range: ByteRange | None) -> bytes | None:
        if key in self._sizes and self._fresh(key):
            value = self.cache.get(key)
            if value is not None:
                with self._lock:
                    if key in self._sizes:
                        self._sizes.move_to_end(key)
                return value if byte_range is None else byte_range.slice(value)
        if key in self._sizes:
            self._forget(key)
        value = self.inner.get(key)
        if value is None:
            return None
        value = bytes(value)
        self._remember(key, value)
        return value if byte_range is None else byte_range.slice(value)

    def get_upto(self, key: str, limit: int) -> bytes | memoryview | None:
        """A cached value, or the source store's :meth:`~zarrkit.storage.Store.get_upto`
        (then cached): a value larger than ``limit`` bytes is refused, unread where the source
        store can.

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
        if not (key in self._sizes and self._fresh(key)):
            if key in self._sizes:
                self._forget(key)
            value = self.inner.get_upto(key, limit)
            if value is not None:
                self._remember(key, bytes(value))
            return value
        value = self._get(key, None)
        if value is not None and len(value) > limit:
            raise oversized(key, len(value), limit)
        return value

    get_transient_upto = get_upto

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes | None]:
        return {key: self._get(key, None) for key in keys}

    def _set(self, key: str, value: bytes | memoryview) -> None:
        self.inner.set(key, value)
        if self.cache_set_data:
            self._remember(key, bytes(value))
        else:
            self._forget(key)

    def _delete(self, key: str) -> None:
        self.inner.delete(key)
        self._forget(key)

    # a versioned read asks the source store; a conditional write forgets the cached value
    _passes_versions = True

    def _set_if(self, key: str, value: bytes | memoryview, version: Any) -> Any:
        try:
            return self.inner.set_if(key, value, version)
        finally:
            self._forget(key)

    def _delete_if(self, key: str, version: Any) -> None:
        try:
            self.inner.delete_if(key, version)
        finally:
            self._forget(key)

    def delete_prefix(self, prefix: str) -> None:
        super().delete_prefix(prefix)
        for key in [k for k in list(self._sizes) if k.startswith(prefix)]:
            self._forget(key)

    # -- zarr-python 3's cache API --------------------------------------------------------
    def cache_info(self) -> dict[str, Any]:
        """What the cache holds: its store's type, limits, size and keys."""
        with self._lock:
            return {
                "cache_store_type": type(self.cache).__name__,
                "max_age_seconds": self.max_age_seconds,
                "max_size": self.max_size,
                "current_size": sum(self._sizes.values()),
                "cache_set_data": self.cache_set_data,
                "tracked_keys": len(self._times),
                "cached_keys": len(self._sizes),
            }

    def clear_cache_sync(self) -> None:
        """Empty the cache (the source store is untouched)."""
        with self._lock:
            for key in list(self._sizes):
                self.cache.delete(key)
            self._sizes.clear()
            self._times.clear()

    async def clear_cache(self) -> None:
        """:meth:`clear_cache_sync` as a coroutine (zarr-python 3's form)."""
        self.clear_cache_sync()

    def __repr__(self) -> str:
        return f"CacheStore({self.inner!r}, cache_store={self.cache!r})"
