"""zarr-python 3's asynchronous store methods, served by the store contract.

zarr-python 3 makes a store with ``await LocalStore.open(root)`` and asks it questions with
``await store.is_empty(prefix)``, ``async for key in store.list()``, ``await
store.delete_dir(prefix)``...  zarrkit's stores are synchronous and ready once constructed; the
methods here give zarr-python 3's names over the contract of
:class:`~zarrkit.storage.base.Store` (each runs the synchronous operation and returns its
result), so code written against zarr-python 3's ``zarr.abc.store.Store`` works with them.

The names zarr-python 3 shares with the contract (``get``, ``set``, ``exists``, ``delete``,
``list_prefix``, ``list_dir``, ``getsize``) keep their synchronous meaning.

Examples
--------
>>> import asyncio
>>> from zarrkit.storage import MemoryStore
>>> async def main():
...     store = await MemoryStore.open()
...     store.set("a/b", b"1")
...     return await store.is_empty("a"), [k async for k in store.list()]
>>> asyncio.run(main())
(False, ['a/b'])
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any, Self

from .keys import validate_prefix

__all__ = ["Zarr3StoreMethods", "as_prefix"]


def as_prefix(prefix: str) -> str:
    """``prefix`` as the start of the keys below it: ``''`` (everything) or ending in ``/``.

    Parameters
    ----------
    prefix : str
        A path in the store (``''``: the root).

    Returns
    -------
    str
    """
    if not isinstance(prefix, str):
        raise TypeError(f"prefix must be a str, got {type(prefix).__name__}")
    prefix = prefix.strip("/")
    if prefix:
        validate_prefix(prefix + "/")
        return prefix + "/"
    return ""


class Zarr3StoreMethods:
    """zarr-python 3's ``open``, ``is_empty``, ``list``, ``delete_dir``... of
    :class:`~zarrkit.storage.base.Store`."""

    if TYPE_CHECKING:  # the contract the methods are served by, which Store defines
        supports_deletes: bool
        supports_listing: bool
        def list_prefix(self, prefix: str) -> Iterator[str]: ...
        def list_prefix_sizes(self, prefix: str) -> Iterator[tuple[str, int]]: ...
        def delete_prefix(self, prefix: str) -> None: ...
        def _check_writable(self) -> None: ...

    #: zarr-python 3's flag of a store that is open.  zarrkit's stores are open once
    #: constructed; a store whose :meth:`close` releases what it reads from (a zip file) is
    #: not open after it.
    _is_open: bool = True
    #: zarr-python 3: whether ``consolidate_metadata`` may write into the store
    supports_consolidated_metadata: bool = True
    #: zarr-python 3: partial writes are not used by the format any more
    supports_partial_writes: bool = False

    @classmethod
    async def open(cls, *args: Any, **kwargs: Any) -> Self:
        """Make a store and open it (zarr-python 3's ``await Store.open(...)``).

        Parameters
        ----------
        *args, **kwargs
            The arguments of the store's constructor.

        Returns
        -------
        Store
            The store, ready for use.

        Examples
        --------
        >>> import asyncio
        >>> from zarrkit.storage import MemoryStore
        >>> store = asyncio.run(MemoryStore.open(read_only=True))
        >>> store.read_only, store._is_open
        (True, True)
        """
        store = cls(*args, **kwargs)
        store._on_open()
        return store

    def _on_open(self) -> None:
        """What :meth:`open` does beyond constructing the store (a local store makes its
        directory); nothing by default."""

    async def _open(self) -> None:
        """Open the store again after :meth:`close` (zarr-python 3's ``Store._open``).

        Raises
        ------
        ValueError
            The store is open already.
        """
        if self._is_open:
            raise ValueError("store is already open")
        self._reopen()
        self._is_open = True

    def _reopen(self) -> None:
        """Take up again what :meth:`close` released; stores that release nothing need nothing."""

    async def _ensure_open(self) -> None:
        """Open the store if it is not open (zarr-python 3's ``Store._ensure_open``)."""
        if not self._is_open:
            await self._open()

    async def is_empty(self, prefix: str = "") -> bool:
        """Whether no key lies below ``prefix`` (zarr-python 3).

        Parameters
        ----------
        prefix : str, default ''
            A path in the store (``''``: the whole store).

        Returns
        -------
        bool
        """
        return next(iter(self.list_prefix(as_prefix(prefix))), None) is None

    async def delete_dir(self, prefix: str) -> None:
        """Remove every key below ``prefix`` (zarr-python 3's name of
        :meth:`~zarrkit.storage.base.Store.delete_prefix` for a directory).

        Parameters
        ----------
        prefix : str
            A path in the store (``''``: everything).
        """
        self.delete_prefix(as_prefix(prefix))

    async def getsize_prefix(self, prefix: str) -> int:
        """Total size in bytes of the values below ``prefix`` (zarr-python 3).

        Parameters
        ----------
        prefix : str
            A path in the store (``''``: everything).

        Returns
        -------
        int
        """
        return sum(size for _, size in self.list_prefix_sizes(as_prefix(prefix)))

    async def list(self) -> AsyncIterator[str]:
        """Every key of the store, as zarr-python 3's ``async for key in store.list()``.

        Yields
        ------
        str
        """
        for key in self.list_prefix(""):
            yield key
