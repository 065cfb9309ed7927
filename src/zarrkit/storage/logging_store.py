"""A store that logs every request made to another, and counts them (zarr-python 3's
``zarr.storage.LoggingStore``)."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterator
from typing import Any, Self

from .base import ByteRange, Store, StoreLike
from .wrappers import CountingStore, _Value

__all__ = ["LoggingStore"]


class LoggingStore(CountingStore):
    """Log each request made to another store, and count them by kind.

    Each request (``get``, ``set``, ``exists``, ``delete``, ``list_prefix``, ``list_dir``,
    ``getsize``) is logged as an ``INFO`` record of the logger ``LoggingStore(<store>)``, naming
    the store's type, the request and its key; :attr:`counter` counts them by kind.

    Parameters
    ----------
    store : Store, MutableMapping or str
        The store wrapped (anything :func:`~zarrkit.storage.coerce_store` takes).
    log_level : str or int, default 'DEBUG'
        The level of the logger.
    log_handler : logging.Handler, optional
        A handler added to the logger (by default the records go where the logging
        configuration sends them).

    Examples
    --------
    >>> import zarrkit
    >>> from zarrkit.storage import LoggingStore, MemoryStore
    >>> store = LoggingStore(MemoryStore())
    >>> z = zarrkit.create_array(store, shape=(4,), chunks=(2,), dtype="i1")
    >>> store.counter.clear()
    >>> z[:2] = 1
    >>> store.counter["set"]
    1
    """

    def __init__(self, store: StoreLike, log_level: str | int = "DEBUG",
                 log_handler: logging.Handler | None = None) -> None:
        super().__init__(store)
        self.log_level = log_level
        self.log_handler = log_handler
        self.logger: logging.Logger = logging.getLogger(f"LoggingStore({self.inner})")
        self.logger.setLevel(log_level)
        if log_handler is not None and log_handler not in self.logger.handlers:
            self.logger.addHandler(log_handler)

    @classmethod
    async def open(cls, store_cls: type[Store], *args: Any, **kwargs: Any) -> Self:
        """Open a store of ``store_cls`` and wrap it (zarr-python 3's
        ``await LoggingStore.open(MemoryStore, ...)``).

        Parameters
        ----------
        store_cls : type
            The class of the store wrapped.
        *args, **kwargs
            Its arguments; ``log_level`` and ``log_handler`` are this class's.

        Returns
        -------
        LoggingStore
        """
        log_level = kwargs.pop("log_level", "DEBUG")
        log_handler = kwargs.pop("log_handler", None)
        return cls(await store_cls.open(*args, **kwargs), log_level=log_level, log_handler=log_handler)

    @property
    def counter(self) -> Counter[str]:
        """How many requests of each kind were made (zarr-python 3's name of ``counts``)."""
        return self.counts

    def _log(self, what: str, key: object = "") -> None:
        if self.logger.isEnabledFor(logging.INFO):
            self.logger.info("Calling %s.%s(%s)", type(self.inner).__name__, what, key)

    def _set(self, key: str, value: bytes | memoryview) -> None:
        self._log("set", key)
        super()._set(key, value)

    def _delete(self, key: str) -> None:
        self._log("delete", key)
        super()._delete(key)

    def exists(self, key: str) -> bool:
        self._log("exists", key)
        return super().exists(key)

    def getsize(self, key: str) -> int:  # type: ignore[override]  # Store wraps it to take None too
        self._log("getsize", key)
        return super().getsize(key)

    def _counted(self, key: str, value: _Value, byte_range: ByteRange | None = None) -> _Value:
        self._log("get", key)
        return super()._counted(key, value, byte_range)

    def list_prefix(self, prefix: str) -> Iterator[str]:
        self._count("list_prefix")
        self._log("list_prefix", prefix)
        return self.inner.list_prefix(prefix)

    def list_dir(self, prefix: str = "") -> list[str]:
        self._count("list_dir")
        self._log("list_dir", prefix)
        return self.inner.list_dir(prefix)

    def __repr__(self) -> str:
        return f"LoggingStore({self.inner!r})"
