"""zarr-python 3's ``make_store`` and ``make_store_path``: a store, or a store and a path in it,
from what a user passes as ``store=``, checked against an access mode.

Both turn their argument into a store through :func:`~zarrkit.storage.coerce_store` (the one
conversion), with zarr-python 3's choices where it makes others: a ``dict`` is held by a
:class:`~zarrkit.storage.MemoryStore` (its values visible in the dict), a local path by a
:class:`~zarrkit.storage.DirectoryStore` made as ``LocalStore.open`` makes it.
"""

from __future__ import annotations

import os
from typing import Any

from .base import Store
from .coerce import coerce_store
from .local import DirectoryStore
from .memory import MemoryStore
from .store_path import StorePath, normalize_path

__all__ = ["make_store", "make_store_path", "ACCESS_MODES"]

#: zarr-python 3's access modes
ACCESS_MODES = ("r", "r+", "a", "w", "w-")


async def make_store(store_like: Any, *, mode: str | None = None,
                     storage_options: dict[str, Any] | None = None) -> Store:
    """The store ``store_like`` stands for (zarr-python 3's
    ``zarr.storage._common.make_store``).

    Parameters
    ----------
    store_like : Store, StorePath, str, os.PathLike, dict, MutableMapping or None
        What to store in (None: a new in-memory store); a :class:`StorePath` gives its store.
    mode : {'r', 'r+', 'a', 'w', 'w-'}, optional
        ``'r'``: a path, URL or dict is opened read-only.
    storage_options : dict, optional
        Options of the file system of a URL.

    Returns
    -------
    Store

    Raises
    ------
    ValueError
        An unknown mode.
    TypeError
        ``store_like`` is no store, or ``storage_options`` come without a URL.
    """
    if mode is not None and mode not in ACCESS_MODES:
        raise ValueError(f"Invalid mode: {mode!r}, expected one of {ACCESS_MODES}")
    read_only = mode == "r"
    url = isinstance(store_like, str) and "://" in store_like
    if storage_options is not None and not url:
        raise TypeError("'storage_options' was given but is unused: it applies only to a URL "
                        f"(with '://'), not to {type(store_like).__name__}")
    if isinstance(store_like, StorePath):
        return store_like.store
    if store_like is None or isinstance(store_like, dict):
        return await MemoryStore.open(store_dict={} if store_like is None else store_like, read_only=read_only)
    if isinstance(store_like, (str, os.PathLike)) and not url and not os.fspath(store_like).endswith(".zip"):
        return await DirectoryStore.open(os.fspath(store_like), read_only=read_only, mode=mode)
    return coerce_store(store_like, read_only=read_only, storage_options=storage_options)


async def make_store_path(store_like: Any, *, path: str | None = "", mode: str | None = None,
                          storage_options: dict[str, Any] | None = None) -> StorePath:
    """A store and a path in it (zarr-python 3's ``zarr.storage._common.make_store_path``):
    the store as :func:`make_store` makes it, the path checked against ``mode`` as
    :meth:`StorePath.open` checks it.

    Parameters
    ----------
    store_like : Store, StorePath, str, os.PathLike, dict, MutableMapping or None
        What to store in; a :class:`StorePath`'s own path comes before ``path``.
    path : str, optional
        A path in the store.
    mode : {'r', 'r+', 'a', 'w', 'w-'}, optional
        The access mode (see :meth:`StorePath.open`).
    storage_options : dict, optional
        Options of the file system of a URL.

    Returns
    -------
    StorePath

    Examples
    --------
    >>> import asyncio
    >>> sp = asyncio.run(make_store_path({}, path="a//b", mode="w"))
    >>> type(sp.store).__name__, sp.path
    ('MemoryStore', 'a/b')
    """
    normal = normalize_path(path)
    if isinstance(store_like, StorePath):
        if storage_options is not None:
            raise TypeError("'storage_options' was given but is unused: a StorePath has its store")
        joined = store_like / normal if normal else store_like
        return await StorePath.open(joined.store, joined.path, mode=mode)
    store = await make_store(store_like, mode=mode, storage_options=storage_options)
    return await StorePath.open(store, normal, mode=mode)
