"""In-memory stores."""

from __future__ import annotations

import threading
from collections.abc import Iterator

from .base import ByteRange, Store, validate_key

__all__ = ["MemoryStore", "DictStore"]


class MemoryStore(Store):
    """A store holding every value in a Python ``dict`` in this process.

    Values are kept as immutable ``bytes``; the store is safe to share between threads.

    Parameters
    ----------
    root : dict, optional
        The dict to keep the values in (default: a new one).
    cls : type, optional
        zarr-python 2's type of the new dict (``dict`` by default).
    dimension_separator : {'.', '/'}, optional
        Separator used by arrays *created* in this store when none is given.

    Examples
    --------
    >>> import zarrkit
    >>> store = zarrkit.MemoryStore()
    >>> z = zarrkit.zeros((4, 4), chunks=(2, 2), store=store)
    >>> sorted(store)
    ['zarr.json']
    """

    def __init__(
        self, root: dict[str, bytes] | None = None, cls: type = dict,
        dimension_separator: str | None = None,
    ) -> None:
        # ``root``: a dict of keys to values to hold the data (its values are visible there,
        # as zarr-python 3's MemoryStore(dict)); ``cls``: the mapping type of a new one
        self._data: dict[str, bytes] = cls() if root is None else root
        self._lock = threading.Lock()
        if self._check_dimension_separator(dimension_separator) is not None:
            self.dimension_separator = dimension_separator

    def _get(self, key: str, byte_range: ByteRange | None) -> bytes | None:
        value = self._data.get(key)
        if value is None or byte_range is None:
            return value
        return byte_range.slice(value)

    def get_many(self, keys):
        if self.normalize_keys:
            return super().get_many(keys)
        data = self._data
        return {validate_key(k): data.get(k) for k in keys}

    def _set(self, key: str, value: bytes | memoryview) -> None:
        self._data[key] = bytes(value)

    def _delete(self, key: str) -> None:
        self._data.pop(key, None)

    def list_prefix(self, prefix: str) -> Iterator[str]:
        with self._lock:
            keys = list(self._data)
        if not prefix:
            return iter(keys)
        return (k for k in keys if k.startswith(prefix))

    def getsize(self, key: str) -> int:  # type: ignore[override]  # Store wraps it to take None too
        value = self._data.get(self._checked(key))
        return 0 if value is None else len(value)

    def clear(self) -> None:
        """Remove every key."""
        self._check_writable()
        self._data.clear()

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self._data)} keys)"

    def __str__(self) -> str:
        """The store as zarr-python 3 names it in reprs: ``memory://<id>``."""
        return f"memory://{id(self._data)}"

    def __getstate__(self):
        return {"data": dict(self._data), "read_only": self.read_only,
                "dimension_separator": self.dimension_separator}

    def __setstate__(self, state) -> None:
        self._data = state["data"]
        self.read_only = state["read_only"]
        self.dimension_separator = state.get("dimension_separator")
        self._lock = threading.Lock()


class DictStore(MemoryStore):
    """Alias of :class:`MemoryStore` under its zarr-2 name (the default store of ``group()``).

    Parameters
    ----------
    root : dict, optional
        The dict to keep the values in (default: a new one).
    cls : type, optional
        zarr-python 2's type of the new dict (``dict`` by default).
    dimension_separator : {'.', '/'}, optional
        Separator used by arrays *created* in this store when none is given.
    """
