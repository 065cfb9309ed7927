"""Any ``MutableMapping`` (a plain ``dict``, a ``shelve``, ...) used as a store."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, MutableMapping
from typing import Any

from .base import ByteRange, Store, oversized
from .memory import hold_value

__all__ = ["MappingStore", "KVStore"]


class MappingStore(Store):
    """Adapt a user's mapping to the store contract.

    Reads and writes go straight through to ``mapping``, so the user's object holds the data:
    ``store = {}; zarrkit.zeros(..., store=store)`` fills ``store``.  A read-only ``Mapping``
    gives a read-only store.

    Parameters
    ----------
    mapping : MutableMapping or Mapping
        The user's mapping of keys to values.

    Examples
    --------
    >>> from zarrkit.storage import MappingStore
    >>> d = {}
    >>> s = MappingStore(d)
    >>> s['a/b'] = b'1'
    >>> d
    {'a/b': b'1'}
    """

    def __init__(self, mapping: Any) -> None:
        self.mapping = mapping
        self.read_only: bool = not isinstance(mapping, MutableMapping) and not hasattr(
            mapping, "__setitem__"
        )

    def _get(self, key: str, byte_range: ByteRange | None) -> bytes | None:
        try:
            value = self.mapping[key]
        except KeyError:
            return None
        if not isinstance(value, bytes):
            value = _to_bytes(value, key)
        return value if byte_range is None else byte_range.slice(value)

    def get_upto(self, key: str, limit: int) -> bytes | memoryview | None:
        """The value at ``key`` (None when missing), refused with
        :class:`~zarrkit.errors.ChunkDecodeError` when it holds more than ``limit`` bytes; a
        value that is not ``bytes`` is measured before it is copied into bytes.

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
        if type(self)._get is not MappingStore._get or type(self).get is not Store.get:
            return super().get_upto(key, limit)
        try:
            value = self.mapping[key]
        except KeyError:
            return None
        if type(value) is not bytes:
            size = _nbytes(value)
            if size is not None and size > limit:
                raise oversized(key, size, limit)
            value = _to_bytes(value, key)
        if len(value) > limit:
            raise oversized(key, len(value), limit)
        return value

    value_version = hold_value

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes | None]:
        return {k: self.get(k) for k in keys}

    def _set(self, key: str, value: bytes | memoryview) -> None:
        self.mapping[key] = bytes(value)

    def _delete(self, key: str) -> None:
        try:
            del self.mapping[key]
        except KeyError:
            pass

    def list_prefix(self, prefix: str) -> Iterator[str]:
        keys = list(self.mapping.keys())
        return iter(keys) if not prefix else (k for k in keys if k.startswith(prefix))

    def close(self) -> None:
        close = getattr(self.mapping, "close", None)
        if callable(close):
            close()

    def __len__(self) -> int:
        return len(self.mapping)

    def __repr__(self) -> str:
        return f"MappingStore({type(self.mapping).__name__})"

    def __str__(self) -> str:
        """As zarr-python 3 shows a store over a dict in reprs: ``memory://<id>``."""
        return f"memory://{id(self.mapping)}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MappingStore) and other.mapping is self.mapping

    def __hash__(self) -> int:
        return object.__hash__(self)


class KVStore(MappingStore):
    """zarr-python 2's name for a store over a user's mapping: ``KVStore(dict())``.

    Parameters
    ----------
    mapping : MutableMapping or Mapping
        The user's mapping of keys to values.

    Examples
    --------
    >>> import zarrkit
    >>> d = {}
    >>> z = zarrkit.zeros(4, chunks=2, store=zarrkit.storage.KVStore(d), zarr_format=2)
    >>> sorted(d)
    ['.zarray', '.zattrs']
    """

    def __repr__(self) -> str:
        return f"KVStore({type(self.mapping).__name__})"


def _nbytes(value: Any) -> int | None:
    """The size of a buffer or string value without copying it (None: not known)."""
    if isinstance(value, str):
        return len(value)  # its UTF-8 form holds at least as many bytes: enough to refuse
    try:
        return memoryview(value).nbytes
    except TypeError:
        return None


def _to_bytes(value: Any, key: str) -> bytes:
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    try:
        return bytes(memoryview(value))
    except TypeError:
        raise TypeError(
            f"value stored at key {key!r} is a {type(value).__name__}, not bytes"
        ) from None


def is_plain_mapping(obj: object) -> bool:
    """Whether ``obj`` is a mapping zarrkit should wrap in a :class:`MappingStore`."""
    return isinstance(obj, Mapping) and not isinstance(obj, Store)
