"""In-memory stores."""

from __future__ import annotations

import threading
from collections.abc import Hashable, Iterable, Iterator
from typing import Any

from ..errors import VersionConflictError
from .base import ABSENT, ByteRange, Store, oversized, validate_key

__all__ = ["MemoryStore", "DictStore", "HeldValue"]


class HeldValue:
    """One version of a value, held in memory for a read of several of its ranges (see
    :class:`~zarrkit.codecs.shard_store.ShardVersion`): ranges of it are views, no copies."""

    __slots__ = ("size", "view")
    token = None  # no index of it is kept: nothing tells cheaply that the key changed since

    def __init__(self, value: Any):
        self.view: memoryview[int] = memoryview(value) if isinstance(value, bytes) else memoryview(value).cast("B")
        self.size: int = len(self.view)

    def read(self, offset: int, length: int | None = None, transient: bool = False) -> memoryview:
        if offset < 0:
            return self.view[max(self.size + offset, 0):]
        return self.view[offset:] if length is None else self.view[offset : offset + length]

    def close(self) -> None:
        pass


def hold_value(store: Store, key: str) -> HeldValue | None:
    """The value at ``key`` as it is now, held for reading several of its ranges (a shard's
    index and chunks), whatever is stored there meanwhile; None when missing.  The
    ``value_version`` of the stores keeping values in memory.

    Parameters
    ----------
    store : Store
        The store (this is its method).
    key : str
        The key.

    Returns
    -------
    HeldValue or None
    """
    value = store.get(key)
    return None if value is None else HeldValue(value)


class StoredObject:
    """The version of a value held in memory: the value object itself, equal only to a
    version of the same object (held here, so no other object can take its identity)."""

    __slots__ = ("value",)

    def __init__(self, value: object):
        self.value: object = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StoredObject) and other.value is self.value

    def __hash__(self) -> int:
        return id(self.value)

    def __repr__(self) -> str:
        return f"StoredObject(at {id(self.value):#x})"


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
    store_dict : dict, optional
        zarr-python 3's keyword name of ``root``.
    read_only : bool, default False
        Refuse writes (zarr-python 3).

    Examples
    --------
    >>> import zarrkit
    >>> store = zarrkit.MemoryStore()
    >>> z = zarrkit.zeros((4, 4), chunks=(2, 2), store=store)
    >>> sorted(store)
    ['zarr.json']
    """

    #: values are read straight from the dict (False: a subclass reads its own way)
    _reads_itself = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._reads_itself = cls._get is MemoryStore._get and cls.get is Store.get

    def __init__(
        self, root: dict[str, bytes] | None = None, cls: type = dict,
        dimension_separator: str | None = None, *,
        store_dict: dict[str, bytes] | None = None, read_only: bool = False,
    ) -> None:
        # ``root``: a dict of keys to values to hold the data (its values are visible there,
        # as zarr-python 3's MemoryStore(dict)); ``cls``: the mapping type of a new one;
        # ``store_dict`` is zarr-python 3's keyword name of ``root``
        if store_dict is not None:
            if root is not None:
                raise TypeError("MemoryStore() takes root or store_dict, not both")
            root = store_dict
        self._data: dict[str, bytes] = cls() if root is None else root
        self._lock = threading.Lock()
        self.read_only = bool(read_only)
        if self._check_dimension_separator(dimension_separator) is not None:
            self.dimension_separator = dimension_separator

    @property
    def _store_dict(self) -> dict[str, bytes]:
        """The dict holding the values (zarr-python 3's name)."""
        return self._data

    def _get(self, key: str, byte_range: ByteRange | None) -> bytes | None:
        value = self._data.get(key)
        if value is None or byte_range is None:
            return value
        return byte_range.slice(value)

    def get_upto(self, key: str, limit: int) -> bytes | memoryview | None:
        """The value at ``key`` (None when missing), refused with
        :class:`~zarrkit.errors.ChunkDecodeError` when it holds more than ``limit`` bytes
        (see :meth:`Store.get_upto`).

        Parameters
        ----------
        key : str
            The key (valid: not checked again).
        limit : int
            The most bytes the value may hold.

        Returns
        -------
        bytes or None
        """
        if self._reads_itself and not self.normalize_keys:
            value = self._data.get(key)
            if value is None or len(value) <= limit:
                return value
            raise oversized(key, len(value), limit)
        return super().get_upto(key, limit)

    value_version = hold_value

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes | None]:
        if self.normalize_keys:
            return super().get_many(keys)
        data = self._data
        return {validate_key(k): data.get(k) for k in keys}

    def _set(self, key: str, value: bytes | memoryview) -> None:
        value = bytes(value)
        with self._lock:  # (a conditional write checks and stores under the same lock)
            self._data[key] = value

    def _delete(self, key: str) -> None:
        with self._lock:
            self._data.pop(key, None)

    # versions: a value's version is the stored object itself, held (so its identity is never
    # another's), compared by identity -- any store of a value, through this store or straight
    # into its dict, makes another
    supports_conditional_writes = True

    def _get_versioned(self, key: str, limit: int | None) -> tuple[bytes | None, Any]:
        value = self._data.get(key)
        return value, ABSENT if value is None else StoredObject(value)

    def _set_if(self, key: str, value: bytes | memoryview, version: Any) -> Any:
        new = bytes(value)
        with self._lock:
            self._check_version(key, version)
            self._data[key] = new
        return StoredObject(new)

    def _delete_if(self, key: str, version: Any) -> None:
        with self._lock:
            self._check_version(key, version)
            if version is not ABSENT:
                del self._data[key]

    def _check_version(self, key: str, version: Any) -> None:
        current = self._data.get(key)
        if current is None:
            if version is ABSENT:
                return
        elif version is not ABSENT and isinstance(version, StoredObject) and version.value is current:
            return
        raise VersionConflictError("the value was changed by another writer", key)

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

    def location(self) -> tuple[Hashable, str]:
        """The dictionary holding the values (shared by this store's read-only copies)."""
        return ("memory", id(self._data)), ""

    def __eq__(self, other: object) -> bool:
        # zarr-python 3: the same class over equal contents with the same read_only setting
        if type(other) is not type(self):
            return NotImplemented
        return self.read_only == other.read_only and self._data == other._data

    # kept by identity: the engine keys per-store caches on the store object
    def __hash__(self) -> int:
        return object.__hash__(self)  # identity, as for every store

    def __getstate__(self) -> dict[str, Any]:
        return {"data": dict(self._data), "read_only": self.read_only,
                "dimension_separator": self.dimension_separator}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._data = state["data"]
        self.read_only: bool = state["read_only"]
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
    store_dict : dict, optional
        zarr-python 3's keyword name of ``root``.
    read_only : bool, default False
        Refuse writes (zarr-python 3).
    """
