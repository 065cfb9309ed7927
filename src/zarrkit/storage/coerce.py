"""Turn what a user passes as ``store=`` into a :class:`~zarrkit.storage.base.Store`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from .base import Store
from .local import DirectoryStore
from .mapping import MappingStore
from .memory import MemoryStore

__all__ = ["coerce_store"]


def coerce_store(store: Any, read_only: bool = False) -> Store:
    """Return a :class:`Store` for ``store``.

    * a :class:`Store` is returned as is;
    * ``None`` gives a new :class:`MemoryStore`;
    * a ``str`` or ``os.PathLike`` names a local directory (:class:`DirectoryStore`);
    * any other mapping (e.g. a ``dict``) is used through :class:`MappingStore`.

    Examples
    --------
    >>> from zarrkit.storage import coerce_store
    >>> coerce_store({})
    MappingStore(dict)
    """
    if isinstance(store, Store):
        return store
    if store is None:
        return MemoryStore()
    if isinstance(store, (str, os.PathLike)):
        path = os.fspath(store)
        if "://" in path:
            raise ValueError(
                f"store URL {path!r}: remote stores are not available in this build; "
                "pass a local directory path, a mapping or a Store"
            )
        if path.endswith(".zip") and not os.path.isdir(path):
            from .zip import ZipStore

            return ZipStore(path, mode="r" if read_only else "a")
        return DirectoryStore(path, read_only=read_only)
    if isinstance(store, Mapping) or (
        hasattr(store, "__getitem__") and hasattr(store, "keys")
    ):
        return MappingStore(store)
    raise TypeError(
        f"store must be a Store, a mapping, a path or None, not {type(store).__name__}"
    )
