"""What a store offers beyond the contract, derived from it: the ``MutableMapping`` interface
and zarr-python 2's store methods (``getitems``, ``listdir``, ``rmdir``, ``getsize``, ``rename``...),
so that code treating a store as a dict, or written for zarr-python 2's stores, keeps working.

A store written for zarr-python 2 implements the ``MutableMapping`` methods and none of the
contract: the contract is then served through them.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Mapping, MutableMapping
from typing import TYPE_CHECKING, Any, Self

from .keys import ByteRange, is_valid_key, validate_key, validate_prefix

__all__ = ["StoreConveniences"]


class StoreConveniences(MutableMapping[str, Any]):
    """The derived methods of :class:`~zarrkit.storage.base.Store`."""

    if TYPE_CHECKING:  # the contract they are derived from, which Store defines
        def get(self, key: str, byte_range: ByteRange | None = None) -> bytes | None: ...  # type: ignore[override]  # MutableMapping.get's second argument is a default value
        def get_many(self, keys: Iterable[str]) -> dict[str, bytes | None]: ...
        def set(self, key: str, value: bytes | bytearray | memoryview, byte_range: None = None) -> Any: ...
        def set_many(self, items: Mapping[str, bytes | bytearray | memoryview]) -> None: ...
        def delete(self, key: str) -> Any: ...
        def list_prefix(self, prefix: str) -> Iterator[str]: ...
        def list_dir(self, prefix: str = "") -> list[str]: ...
        def close(self) -> None: ...
        def _checked(self, key: str) -> str: ...
        def _get(self, key: str, byte_range: ByteRange | None) -> bytes | None: ...
        def _delete(self, key: str) -> None: ...
        def _check_writable(self) -> None: ...

    def exists(self, key: str) -> bool:
        """Whether a value is stored at ``key``.

        Parameters
        ----------
        key : str
            The key (``/``-separated path).

        Returns
        -------
        bool
        """
        return self.get(key) is not None

    # -- zarr-python 2's batch names ---------------------------------------------------------
    def getitems(self, keys: Iterable[str], *, contexts: Any = None) -> dict[str, bytes]:
        """The values of the ``keys`` that are present (zarr-python 2's name; ``contexts`` is
        accepted and unused).

        Parameters
        ----------
        keys : iterable of str
            The keys.
        contexts : optional
            zarr-python 2's per-key contexts (unused).

        Returns
        -------
        dict
        """
        return {k: v for k, v in self.get_many(keys).items() if v is not None}

    def setitems(self, values: Mapping[str, bytes | bytearray | memoryview]) -> None:
        """Store several values (zarr-python 2's name of :meth:`set_many`).

        Parameters
        ----------
        values : mapping of str to bytes-like
            The values by key.
        """
        self.set_many(values)

    def delitems(self, keys: Iterable[str]) -> None:
        """Delete several keys; missing ones are not an error (zarr-python 2's name).

        Parameters
        ----------
        keys : iterable of str
            The keys.
        """
        for key in list(keys):
            self.delete(key)

    def delete_prefix(self, prefix: str) -> None:
        """Remove every key starting with ``prefix``.

        Parameters
        ----------
        prefix : str
            The start of the keys removed (``''``: all).
        """
        self._check_writable()
        validate_prefix(prefix)
        for key in list(self.list_prefix(prefix)):
            self._delete(key)

    def getsize(self, key: str | None = None) -> int:
        """Size in bytes of the value at ``key``; for a key that holds no value (a "directory",
        or no key: the root), the total of the values directly below it, as zarr-python 2's
        stores answer; 0 when there is nothing.

        Parameters
        ----------
        key : str, optional
            The key (default: the root).

        Returns
        -------
        int
        """
        return _value_or_children_size(self, key, _value_size)

    def rename(self, src_path: str, dst_path: str) -> None:
        """Move the value at ``src_path``, and every value below it, to ``dst_path``.

        Parameters
        ----------
        src_path : str
            Where from.
        dst_path : str
            Where to.

        Raises
        ------
        KeyError
            Nothing is stored at or below ``src_path``.
        """
        self._check_writable()
        src, dst = src_path.strip("/"), dst_path.strip("/")
        validate_key(src)
        validate_key(dst)
        moves = [(k, dst + k[len(src):]) for k in self.list_prefix(src + "/")]
        if self.get(src) is not None:
            moves.append((src, dst))
        if not moves:
            raise KeyError(src_path)
        for old, new in moves:
            value = self.get(old)
            if value is not None:
                self.set(new, value)
        for old, _ in moves:
            self.delete(old)

    # -- zarr-2 conveniences -----------------------------------------------------------------
    def listdir(self, path: str = "") -> list[str]:
        """Names directly below ``path`` (zarr-2 spelling of :meth:`list_dir`).

        Parameters
        ----------
        path : str, optional
            The directory (default: the root).

        Returns
        -------
        list of str
        """
        return self.list_dir(path.strip("/"))

    def rmdir(self, path: str = "") -> None:
        """Remove everything below ``path`` (zarr-2 spelling of :meth:`delete_prefix`).

        Parameters
        ----------
        path : str, optional
            The directory (default: the root: everything).
        """
        path = path.strip("/")
        self.delete_prefix(path + "/" if path else "")

    # -- MutableMapping ----------------------------------------------------------------------
    def __getitem__(self, key: str) -> bytes:
        value = self.get(key)
        if value is None:
            raise KeyError(key)
        return value

    def __setitem__(self, key: str, value: Any) -> None:
        self.set(key, value)

    def __delitem__(self, key: str) -> None:
        self._check_writable()
        key = self._checked(key)
        if self._get(key, None) is None:
            raise KeyError(key)
        self._delete(key)

    def __contains__(self, key: object) -> bool:
        # a key no store can hold ('c/', '../x', '') is simply not in it
        if not key or not is_valid_key(key):
            return False
        return self.exists(key)  # type: ignore[arg-type]

    def __iter__(self) -> Iterator[str]:
        return iter(self.list_prefix(""))

    def __len__(self) -> int:
        return sum(1 for _ in self.list_prefix(""))

    def __eq__(self, other: object) -> bool:
        return self is other

    __hash__ = object.__hash__

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _get_through_getitem(self: Any, key: str, byte_range: Any) -> bytes | None:
    try:
        value = type(self).__getitem__(self, key)
    except KeyError:
        return None
    value = value if isinstance(value, bytes) else bytes(memoryview(value).cast("B"))
    return value if byte_range is None else byte_range.slice(value)


def _set_through_setitem(self: Any, key: str, value: bytes | memoryview) -> None:
    type(self).__setitem__(self, key, bytes(value))


def _delete_through_delitem(self: Any, key: str) -> None:
    try:
        type(self).__delitem__(self, key)
    except KeyError:
        pass


def _list_through_iter(self: Any, prefix: str) -> Iterator[str]:
    keys = list(type(self).__iter__(self))
    return iter(keys) if not prefix else (k for k in keys if k.startswith(prefix))


def _value_size(store: Any, key: str) -> int:
    value = store.get(key)
    return 0 if value is None else len(value)


def _value_or_children_size(store: Any, key: str | None, value_size: Any) -> int:
    if key is not None:
        size: int = value_size(store, key)
        if size:
            return size
    prefix = (key or "").strip("/")
    prefix = f"{prefix}/" if prefix else ""
    n = len(prefix)
    return sum(value_size(store, k) for k in store.list_prefix(prefix) if "/" not in k[n:])


def _getsize_of_root_too(getsize: Any) -> Any:
    """A store's own ``getsize(key)`` (the size of one value), also answering for directories
    and the root as :meth:`Store.getsize` does."""
    if getattr(getsize, "_answers_root", False):
        return getsize

    @functools.wraps(getsize)
    def wrapper(self: Any, key: str | None = None) -> int:
        return _value_or_children_size(self, key, getsize)

    wrapper._answers_root = True  # type: ignore[attr-defined]
    return wrapper
