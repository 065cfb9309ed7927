"""Stores that wrap another store: read-only views, request counting, added latency."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

from .base import ByteRange, Store

__all__ = ["WrapperStore", "ReadOnlyStore", "CountingStore", "LatencyStore"]


class WrapperStore(Store):
    """Forward the store contract to ``inner``; subclasses override what they change."""

    def __init__(self, inner: Any) -> None:
        from .coerce import coerce_store

        self.inner: Store = coerce_store(inner)
        self.read_only = self.inner.read_only
        self.supports_partial_reads = self.inner.supports_partial_reads

    @property
    def dimension_separator(self) -> str | None:
        return getattr(self.inner, "dimension_separator", None)

    def _get(self, key: str, byte_range: ByteRange | None) -> bytes | None:
        return self.inner.get(key, byte_range)

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes | None]:
        return self.inner.get_many(keys)

    def _set(self, key: str, value: bytes | memoryview) -> None:
        self.inner.set(key, value)

    def _delete(self, key: str) -> None:
        self.inner.delete(key)

    def exists(self, key: str) -> bool:
        return self.inner.exists(key)

    def list_prefix(self, prefix: str) -> Iterator[str]:
        return self.inner.list_prefix(prefix)

    def list_dir(self, prefix: str = "") -> list[str]:
        return self.inner.list_dir(prefix)

    def delete_prefix(self, prefix: str) -> None:
        self._check_writable()
        self.inner.delete_prefix(prefix)

    def getsize(self, key: str) -> int:
        return self.inner.getsize(key)

    def close(self) -> None:
        self.inner.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.inner!r})"


class ReadOnlyStore(WrapperStore):
    """A read-only view of another store; every write raises :class:`~zarrkit.errors.ReadOnlyError`.

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

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.read_only = True


class CountingStore(WrapperStore):
    """Count the requests made to another store (``counts['get']``, ``'set'``, ``'list'``...).

    ``bytes_read`` sums the bytes returned.  Used to test how many requests an operation makes.

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

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        """Zero every counter."""
        self.counts: Counter[str] = Counter()
        self.bytes_read = 0
        self.keys_read: list[tuple[str, ByteRange | None]] = []

    def __getstate__(self):
        state = self.__dict__.copy()
        del state["_lock"]
        return state

    def __setstate__(self, state) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def _count(self, what: str, n: int = 1) -> None:
        with self._lock:
            self.counts[what] += n

    def _get(self, key: str, byte_range: ByteRange | None) -> bytes | None:
        value = self.inner.get(key, byte_range)
        with self._lock:
            self.counts["get"] += 1
            self.keys_read.append((key, byte_range))
            if value is not None:
                self.bytes_read += len(value)
        return value

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes | None]:
        return {k: self.get(k) for k in keys}

    def exists(self, key: str) -> bool:
        self._count("exists")
        return self.inner.exists(key)

    def _set(self, key: str, value: bytes | memoryview) -> None:
        self._count("set")
        self.inner.set(key, value)

    def _delete(self, key: str) -> None:
        self._count("delete")
        self.inner.delete(key)

    def list_prefix(self, prefix: str) -> Iterator[str]:
        self._count("list")
        return self.inner.list_prefix(prefix)

    def list_dir(self, prefix: str = "") -> list[str]:
        self._count("list")
        return self.inner.list_dir(prefix)

    def getsize(self, key: str) -> int:
        self._count("getsize")
        return self.inner.getsize(key)


class LatencyStore(WrapperStore):
    """Add a fixed delay to every request of another store (to model object storage).

    Examples
    --------
    >>> import zarrkit
    >>> from zarrkit.storage import LatencyStore
    >>> store = LatencyStore(zarrkit.MemoryStore(), seconds=0.001)
    >>> z = zarrkit.zeros(4, store=store)
    """

    def __init__(self, inner: Any, seconds: float = 0.01) -> None:
        super().__init__(inner)
        self.seconds = seconds

    def _get(self, key: str, byte_range: ByteRange | None) -> bytes | None:
        time.sleep(self.seconds)
        return self.inner.get(key, byte_range)

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes | None]:
        return {k: self.get(k) for k in keys}

    def _set(self, key: str, value: bytes | memoryview) -> None:
        time.sleep(self.seconds)
        self.inner.set(key, value)

    def list_prefix(self, prefix: str) -> Iterator[str]:
        time.sleep(self.seconds)
        return self.inner.list_prefix(prefix)

    def list_dir(self, prefix: str = "") -> list[str]:
        time.sleep(self.seconds)
        return self.inner.list_dir(prefix)
