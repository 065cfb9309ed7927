"""The module-level functions of zarr-python 2's ``zarr.storage`` that tell and change what a
store holds: ``contains_array``, ``contains_group``, ``getsize``, ``listdir``, ``rmdir``,
``rename`` and ``normalize_store_arg``.

They take any store zarrkit accepts (a :class:`~zarrkit.storage.Store`, a ``dict`` or other
mapping, a path) and are reached as ``zarrkit.storage.<name>``, beside the stores, through the
compatibility table (:mod:`zarrkit.compat`).  They live with the entrances, not in ``storage/``,
because they read node paths and metadata documents and take whatever store argument an
entrance takes.

Examples
--------
>>> import zarrkit
>>> from zarrkit.storage import contains_array, contains_group, getsize, init_array
>>> store = {}
>>> init_array(store, shape=100, chunks=10, path='a')
>>> contains_array(store, 'a'), contains_group(store), contains_group(store, 'a')
(True, True, False)
"""

from __future__ import annotations

import os
from typing import Any

from .._warnings import warn
from ..metadata import io, v1
from ..metadata.normalize import normalize_path
from ..storage.base import Store, StoreLike
from ..storage.coerce import open_store
from ..storage.mapping import KVStore, MappingStore

__all__ = [
    "contains_array",
    "contains_group",
    "getsize",
    "listdir",
    "rmdir",
    "rename",
    "normalize_store_arg",
    "migrate_1to2",
]


def contains_array(store: Any, path: str | None = None) -> bool:
    """Whether an array (of either format) is stored at ``path``.

    Parameters
    ----------
    store : Store, MutableMapping or str
        The store (a mapping or a directory path).
    path : str, optional
        Path within the store (default: the root).

    Returns
    -------
    bool
    """
    return io.node_kind(open_store(store), normalize_path(path)) == "array"


def contains_group(store: Any, path: str | None = None) -> bool:
    """Whether a group (of either format) is stored at ``path``.

    Parameters
    ----------
    store : Store, MutableMapping or str
        The store (a mapping or a directory path).
    path : str, optional
        Path within the store (default: the root).

    Returns
    -------
    bool
    """
    return io.node_kind(open_store(store), normalize_path(path)) == "group"


def getsize(store: Any, path: str | None = None) -> int:
    """Bytes stored at ``path``: the value's size, or for a path that holds no value the total
    of the values directly below it; -1 when the store cannot tell (values that are not
    bytes-like, or an object that is not a store).

    Parameters
    ----------
    store : Store, MutableMapping or str
        The store (a mapping or a directory path).
    path : str, optional
        Path within the store (default: the root).

    Returns
    -------
    int

    Examples
    --------
    >>> from zarrkit.storage import getsize
    >>> getsize({'a/x': b'12345', 'a/y': b'67'}, 'a')
    7
    """
    if not isinstance(store, (Store, str, os.PathLike)) and not hasattr(store, "keys"):
        return -1
    s = open_store(store)
    path = normalize_path(path)
    try:
        if path and s.exists(path):
            return s.getsize(path)
        prefix = f"{path}/" if path else ""
        return sum(s.getsize(prefix + name) for name in s.list_dir(prefix) if s.exists(prefix + name))
    except TypeError:
        return -1


def listdir(store: Any, path: str | None = None) -> list[str]:
    """Sorted names directly below ``path``.

    Parameters
    ----------
    store : Store, MutableMapping or str
        The store (a mapping or a directory path).
    path : str, optional
        Path within the store (default: the root).

    Returns
    -------
    list of str

    Examples
    --------
    >>> from zarrkit.storage import MemoryStore, listdir
    >>> store = MemoryStore()
    >>> store.update({'a/x': b'1', 'a/y/z': b'2', 'b': b'3'})
    >>> listdir(store, 'a')
    ['x', 'y']
    """
    if not isinstance(store, Store) and not hasattr(store, "listdir"):
        warn(
            f"{type(store).__name__} has no `listdir`: its names are found by listing every key",
            UserWarning,
        )
    if hasattr(store, "listdir") and not isinstance(store, Store):
        return sorted(store.listdir(normalize_path(path)))
    return open_store(store).listdir(normalize_path(path))


def rmdir(store: Any, path: str | None = None) -> None:
    """Remove everything stored below ``path`` (the whole store when ``path`` is empty).

    Parameters
    ----------
    store : Store, MutableMapping or str
        The store (a mapping or a directory path).
    path : str, optional
        Path within the store (default: the root).

    Examples
    --------
    >>> from zarrkit.storage import rmdir
    >>> store = {'a/x': b'1', 'b': b'2'}
    >>> rmdir(store, 'a')
    >>> store
    {'b': b'2'}
    """
    open_store(store).rmdir(normalize_path(path))


def rename(store: Any, src_path: str, dst_path: str) -> None:
    """Move the value at ``src_path`` and everything below it to ``dst_path``.

    Parameters
    ----------
    store : Store, MutableMapping or str
        The store (a mapping or a directory path).
    src_path, dst_path : str
        Where from and where to.

    Examples
    --------
    >>> from zarrkit.storage import rename
    >>> store = {'a/x': b'1'}
    >>> rename(store, 'a', 'b')
    >>> store
    {'b/x': b'1'}
    """
    open_store(store).rename(normalize_path(src_path), normalize_path(dst_path))


def normalize_store_arg(
    store: Any, storage_options: dict[str, Any] | None = None, mode: str = "r",
    zarr_version: int | None = None,
) -> Store:
    """The store zarrkit uses for ``store``: a path gives a directory (``.zip``: a zip file), a
    URL an fsspec store, a mapping a :class:`KVStore`, None a new in-memory one.

    Parameters
    ----------
    store : Store, MutableMapping, str or None
        What to store in.
    storage_options : dict, optional
        Options of the file system of a URL.
    mode : str, optional
        ``'r'`` opens a path or URL read-only.
    zarr_version : int (2 or 3), optional
        Accepted for compatibility (checked, not used).

    Returns
    -------
    Store
    """
    if zarr_version not in (None, 2, 3):
        raise ValueError(f"zarr_version must be 2 or 3, got {zarr_version!r}")
    if store is None:
        return KVStore(dict())
    s = open_store(store, read_only=(mode == "r"), storage_options=storage_options)
    return KVStore(store) if type(s) is MappingStore else s


def migrate_1to2(store: StoreLike) -> None:
    """Migrate array metadata in ``store`` from Zarr format version 1 to version 2.

    Version 1 had no hierarchies: the single array's ``meta`` key becomes ``.zarray``
    (``compression``/``compression_opts`` become a ``compressor``) and ``attrs`` becomes
    ``.zattrs``.  Chunks are untouched.  The new documents are validated before the old keys
    are removed.

    Parameters
    ----------
    store : MutableMapping or Store
        The store holding a version 1 array.

    Examples
    --------
    >>> import json
    >>> from zarrkit.storage import migrate_1to2
    >>> store = {'meta': json.dumps({'zarr_format': 1, 'shape': [4], 'chunks': [2],
    ...     'dtype': '<i4', 'compression': 'zlib', 'compression_opts': 1,
    ...     'fill_value': 0, 'order': 'C'}).encode(), 'attrs': b'{}'}
    >>> migrate_1to2(store)
    >>> sorted(store)
    ['.zarray', '.zattrs']
    """
    v1.migrate_1to2(open_store(store))
