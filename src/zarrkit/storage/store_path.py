"""zarr-python 3's ``StorePath``: a store and a path in it, accepted wherever a store is.

A :class:`StorePath` whose path is empty stands for its store.  One with a path stands for the
part of its store under that path: :func:`~zarrkit.storage.coerce_store` gives a
:class:`PrefixStore` over the store, so the ``path=`` of a call (``open_group(StorePath(store,
'a'), path='b')``) is read under the StorePath's own (``a/b``), as zarr-python 3 joins them.
"""

from __future__ import annotations

import os
import pathlib
from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import Any, ClassVar

from ..errors import InvalidPathError, ReadOnlyError
from .base import ByteRange, Store
from .keys import describe_store, validate_key

__all__ = ["StorePath", "PrefixStore", "normalize_path", "refuse_writing_mode"]


def refuse_writing_mode(store: Any, mode: str | None) -> None:
    """Refuse ``mode`` (one that writes: anything but 'r') on a read-only ``store``, before
    anything is written, with an error naming both.

    Raises
    ------
    ReadOnlyError
        ``store`` is read-only and ``mode`` writes (a ``ValueError`` too).
    """
    if mode is not None and mode != "r" and getattr(store, "read_only", False) is True:
        raise ReadOnlyError(
            f"Store is read-only but mode is {mode!r}, which writes: {describe_store(store)} "
            "refuses writes; open a writable store or use mode 'r'")


class StorePath:
    """A store and a path in it (zarr-python 3's ``zarr.storage.StorePath``).

    Parameters
    ----------
    store : Store
        The store.
    path : str, default ''
        A path in ``store``; leading, trailing and repeated ``/`` are dropped.

    Examples
    --------
    >>> from zarrkit.storage import MemoryStore, StorePath
    >>> sp = StorePath(MemoryStore(), 'a') / 'b'
    >>> sp.path
    'a/b'
    """

    def __init__(self, store: Store, path: str = "") -> None:
        self.store = store
        self.path: str = normalize_storage_path(path)

    @property
    def read_only(self) -> bool:
        """Whether the store refuses writes."""
        return getattr(self.store, "read_only", False) is True  # (a mock's flag says nothing)

    @classmethod
    async def open(cls, store: Store, path: str = "", mode: str | None = None) -> StorePath:
        """A path in ``store``, checked against ``mode`` (zarr-python 3's
        ``await StorePath.open(store, path, mode)``); nothing is written or removed.

        Parameters
        ----------
        store : Store
            The store.
        path : str, default ''
            A path in it.
        mode : {'r', 'r+', 'a', 'w', 'w-'}, optional
            ``'r'``: the store as read-only (a read-only copy of a writable one); the others
            need a writable store; ``'w-'`` also needs nothing below ``path``.  None: as it is.

        Returns
        -------
        StorePath

        Raises
        ------
        ValueError
            An unknown mode; a writing mode on a read-only store; ``'r'`` on a writable store
            that has no read-only copy (a zip file).
        FileExistsError
            ``'w-'`` and keys below ``path``.
        """
        if mode is not None and mode not in ("r", "r+", "a", "w", "w-"):
            raise ValueError(f"mode must be one of 'r', 'r+', 'a', 'w', 'w-', got {mode!r}")
        refuse_writing_mode(store, mode)
        if mode == "r" and not store.read_only:
            try:
                store = store.with_read_only(True)
            except NotImplementedError as exc:
                raise ValueError(f"mode 'r' needs a read-only store; {type(store).__name__} has no "
                                 "read-only copy: open it read-only") from exc
        await store._ensure_open()
        opened = cls(store, path)
        if mode == "w-" and not await opened.is_empty():
            raise FileExistsError(f"{opened.path!r} of {store} holds data already: mode 'w-' only creates")
        return opened

    async def exists(self) -> bool:
        """Whether a value is stored at this path (zarr-python 3)."""
        return bool(self.store.exists(self.path)) if self.path else False

    async def is_empty(self) -> bool:
        """Whether no key lies below this path (zarr-python 3)."""
        return await self.store.is_empty(self.path)

    async def delete_dir(self) -> None:
        """Remove every key below this path (zarr-python 3)."""
        await self.store.delete_dir(self.path)

    def __truediv__(self, other: str) -> StorePath:
        return type(self)(self.store, _join(self.path, normalize_storage_path(other)))

    def __str__(self) -> str:
        return _join(str(self.store), self.path)

    def __repr__(self) -> str:
        return f"StorePath({type(self.store).__name__}, '{self}')"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, StorePath):
            return NotImplemented
        return self.store == other.store and self.path == other.path

    __hash__: ClassVar[None] = None  # type: ignore[assignment]  # zarr-python 3's StorePath is not hashable either


def _join(a: str, b: str) -> str:
    return f"{a}/{b}" if a and b else a or b


def normalize_storage_path(path: str) -> str:
    """``path`` without empty parts (leading, trailing, repeated ``/``), checked as a key."""
    normal = "/".join(part for part in str(path).split("/") if part)
    return validate_key(normal) if normal else ""


def normalize_path(path: str | bytes | os.PathLike[str] | None) -> str:
    """A node path as stores take it (zarr-python 3's ``zarr.storage._utils.normalize_path``):
    None is the root (``''``); bytes are decoded; a ``pathlib.Path`` gives its ``/``-separated
    form; leading, trailing and repeated ``/`` are dropped.

    Parameters
    ----------
    path : str, bytes, os.PathLike or None
        The path.

    Returns
    -------
    str

    Raises
    ------
    InvalidPathError
        (a ``ValueError``) a part ``.`` or ``..``, or a character no key may hold.

    Examples
    --------
    >>> normalize_path('//foo///bar/'), normalize_path(None)
    ('foo/bar', '')
    """
    if path is None:
        return ""
    if isinstance(path, bytes):
        try:
            path = path.decode()
        except UnicodeDecodeError:
            raise InvalidPathError(f"path {path!r} is not UTF-8 text, as a key must be") from None
    elif isinstance(path, os.PathLike):
        path = pathlib.PurePath(os.fspath(path)).as_posix()
    return normalize_storage_path(path)


class PrefixStore(Store):
    """The keys of ``inner`` under ``prefix``, as a store of their own (the store a
    :class:`StorePath` with a path stands for).

    Parameters
    ----------
    inner : Store
        The store holding the values.
    prefix : str
        The path in ``inner`` (not empty).
    """

    def __init__(self, inner: Store, prefix: str) -> None:
        # ``inner`` is a Store already (coerce_store made it): this module sits below the
        # wrappers, which coerce what they are given
        self.inner = inner
        self.prefix: str = normalize_storage_path(prefix)
        self.read_only: bool = inner.read_only
        self.supports_writes: bool = inner.supports_writes
        self.supports_partial_reads: bool = inner.supports_partial_reads
        self.supports_deletes: bool = inner.supports_deletes
        self.supports_listing: bool = inner.supports_listing

    @property
    def dimension_separator(self) -> str | None:  # type: ignore[override]  # the inner store's
        """The wrapped store's separator of new arrays' chunk keys."""
        return getattr(self.inner, "dimension_separator", None)

    def location(self) -> tuple[Hashable, str]:
        """The wrapped store's holder, under this store's prefix."""
        holder, prefix = self.inner.location()
        return holder, _join(prefix, self.prefix)

    @property
    def high_latency(self) -> bool:  # type: ignore[override]
        """Whether the wrapped store is slow to answer (object storage)."""
        return getattr(self.inner, "high_latency", False)

    @property
    def transactional(self) -> bool:  # type: ignore[override]
        """Whether the wrapped store's changes land together, at a commit."""
        return getattr(self.inner, "transactional", False)

    def close(self) -> None:
        self.inner.close()

    def _key(self, key: str) -> str:
        return f"{self.prefix}/{key}" if key else self.prefix

    def _under(self, prefix: str) -> str:
        # a listing prefix: "" is everything under our own prefix, directory included
        return f"{self.prefix}/{prefix}"

    def _strip(self, key: str) -> str:
        return key[len(self.prefix) + 1:]

    def version_token(self, key: str) -> Any:  # (documented by Store.version_token)
        return self.inner.version_token(self._key(key))

    @property
    def value_version(self) -> Callable[[str], Any] | None:
        """The wrapped store's ``value_version``, under the prefix."""
        held = getattr(self.inner, "value_version", None)
        return None if held is None else (lambda key: held(self._key(key)))

    def _get(self, key: str, byte_range: ByteRange | None) -> bytes | None:
        return self.inner.get(self._key(key), byte_range)

    def get_upto(self, key: str, limit: int) -> bytes | memoryview | None:  # (documented by Store.get_upto)
        return self.inner.get_upto(self._key(key), limit)

    def get_transient_upto(self, key: str, limit: int) -> bytes | memoryview | None:
        """:meth:`get_upto` into a buffer the wrapped store may reuse.

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
        return getattr(self.inner, "get_transient_upto", self.inner.get_upto)(self._key(key), limit)

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes | None]:
        return Store.get_many(self, keys)

    def _set(self, key: str, value: bytes | memoryview) -> None:
        self.inner.set(self._key(key), value)

    def _delete(self, key: str) -> None:
        self.inner.delete(self._key(key))

    @property
    def supports_conditional_writes(self) -> bool:  # type: ignore[override]
        """Whether the wrapped store has conditional writes."""
        return self.inner.supports_conditional_writes

    @property
    def versions_are_contents(self) -> bool:  # type: ignore[override]
        """Whether the versions of the store under this one are contents."""
        return getattr(self.inner, "versions_are_contents", False)

    @property
    def atomic_deletes(self) -> bool:  # type: ignore[override]
        """Whether the conditional deletes of the store under this one are atomic."""
        return getattr(self.inner, "atomic_deletes", True)

    def _get_versioned(self, key: str, limit: int | None) -> tuple[bytes | memoryview | None, Any]:
        return self.inner.get_versioned(self._key(key), limit)

    def _set_if(self, key: str, value: bytes | memoryview, version: Any) -> Any:
        return self.inner.set_if(self._key(key), value, version)

    def _delete_if(self, key: str, version: Any) -> None:
        self.inner.delete_if(self._key(key), version)

    def exists(self, key: str) -> bool:
        return self.inner.exists(self._key(key))

    def list_prefix(self, prefix: str) -> Iterator[str]:
        return (self._strip(k) for k in self.inner.list_prefix(self._under(prefix)))

    def list_dir(self, prefix: str = "") -> list[str]:
        return self.inner.list_dir(self._key(prefix.rstrip("/")) + "/")

    def list_prefix_sizes(self, prefix: str) -> Iterator[tuple[str, int]]:
        return ((self._strip(k), n) for k, n in self.inner.list_prefix_sizes(self._under(prefix)))

    def delete_prefix(self, prefix: str) -> None:
        self._check_writable()
        self.inner.delete_prefix(self._under(prefix))

    def getsize(self, key: str) -> int:  # type: ignore[override]  # Store wraps it to take None too
        return self.inner.getsize(self._key(key))

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.inner == self.inner and other.prefix == self.prefix

    def __hash__(self) -> int:
        return object.__hash__(self)  # identity, as for every store

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.inner!r}, {self.prefix!r})"

    def __str__(self) -> str:
        return f"{self.inner}/{self.prefix}"
