"""Convenience functions of zarr-python 2: saving and loading, copying data, printing trees.

``save``/``load`` move NumPy arrays in and out of a store in one call; ``copy``, ``copy_all``
and ``copy_store`` copy arrays, groups or raw keys between stores (and to or from h5py files
when h5py is installed).  Copies stream: an array is copied one destination chunk (or shard)
at a time, so memory stays bounded by a few chunks whatever the size of the array.

Examples
--------
>>> import numpy as np, zarrkit
>>> from zarrkit import save, load
>>> store = {}
>>> save(store, np.arange(5))
>>> load(store)
array([0, 1, 2, 3, 4])
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..config import config
from ..core.array import Array
from ..core.group import Group
from ..core.tree import TreeView
from ..errors import CopyError, NodeNotFoundError
from ..metadata import io
from ..metadata.normalize import normalize_path
from ..metadata.spec import legacy_format
from ..storage.store_path import refuse_writing_mode
from .copying import copy, copy_all, copy_store  # zarr-python 2 has them here
from .creation import array, init_group
from .streaming import _is_h5py, _open_store, creation_kwargs, iter_blocks, stream_copy  # noqa: F401

__all__ = [
    "CopyError",
    "LazyLoader",
    "save",
    "load",
    "save_array",
    "save_group",
    "copy",
    "copy_all",
    "copy_store",
    "tree",
]


def save_array(store: Any, arr: Any, *, zarr_format: int | None = None, path: str | None = None,
               zarr_version: int | None = None, storage_options: dict[str, Any] | None = None,
               **kwargs: Any) -> None:
    """Save a NumPy array (or array-like) to the local file system or another store.

    Parameters
    ----------
    store : str, os.PathLike, MutableMapping or store
        Store or path to a directory (a path ending ``.zip`` gives a zip file).
    arr : ndarray
        The data to save.
    zarr_format : int (2 or 3), optional
        Format of the new array (default: ``zarrkit.config.zarr_format``).
    path : str, optional
        Path of the array within the store.
    zarr_version : int (2 or 3), optional
        zarr-python 2's spelling of ``zarr_format``.
    storage_options : dict, optional
        Options of the remote file system when ``store`` is a URL.
    **kwargs
        Passed to :func:`zarrkit.array` (``chunks``, ``compressor``, ...); ``mode``
        (zarr-python 3's) may be ``'w'`` (the default), ``'a'`` or ``'r+'`` (replace), or
        ``'w-'`` (fail if a node is there).

    Examples
    --------
    >>> import numpy as np, zarrkit
    >>> from zarrkit import save_array, load
    >>> store = {}
    >>> save_array(store, np.arange(10), chunks=5)
    >>> load(store)
    array([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    """
    mode = kwargs.pop("mode", "w")  # zarr-python 3 takes a mode; saving always replaces
    if mode not in ("w", "w-", "a", "r+"):
        raise ValueError(f"save_array: mode must be 'w', 'w-', 'a' or 'r+', got {mode!r}")
    s, close = _open_store(store, "w", storage_options)
    try:
        refuse_writing_mode(s, mode)
        array(arr, store=s, overwrite=mode != "w-", path=path, zarr_format=zarr_format,
              zarr_version=zarr_version, **kwargs)
    finally:
        if close:
            s.close()  # a zip file is only complete once closed


def save_group(store: Any, *args: Any, zarr_format: int | None = None, path: str | None = None,
               zarr_version: int | None = None, storage_options: dict[str, Any] | None = None,
               **kwargs: Any) -> None:
    """Save several NumPy arrays in a group: positional ones as ``arr_0``, ``arr_1``, ...,
    keyword ones under their keyword.

    Parameters
    ----------
    store : str, os.PathLike, MutableMapping or store
        Store or path to a directory (a path ending ``.zip`` gives a zip file).
    *args : ndarray
        Arrays saved as ``arr_0``, ``arr_1``, ...
    zarr_format : int (2 or 3), optional
        Format of the new group and arrays.
    path : str, optional
        Path of the group within the store.
    zarr_version : int (2 or 3), optional
        zarr-python 2's spelling of ``zarr_format``.
    storage_options : dict, optional
        Options of the remote file system when ``store`` is a URL (no array of that name).
    **kwargs : ndarray
        Arrays saved under their keyword.

    Examples
    --------
    >>> import numpy as np
    >>> from zarrkit import save_group, load
    >>> store = {}
    >>> save_group(store, np.arange(3), b=np.ones(2))
    >>> loader = load(store)
    >>> sorted(loader)
    ['arr_0', 'b']
    >>> loader['b']
    array([1., 1.])
    """
    if not args and not kwargs:
        raise ValueError("at least one array must be provided")
    zarr_format = legacy_format({"zarr_version": zarr_version}, zarr_format, "save_group")
    s, close = _open_store(store, "w", storage_options)
    try:
        refuse_writing_mode(s, "w")  # saving replaces the group
        init_group(s, overwrite=True, path=path,
                   zarr_format=config.zarr_format if zarr_format is None else zarr_format)
        grp = Group(s, path=path)
        for i, arr in enumerate(args):
            grp.create_dataset(f"arr_{i}", data=arr, overwrite=True)
        for k, arr in kwargs.items():
            grp.create_dataset(k, data=arr, overwrite=True)
    finally:
        if close:
            s.close()


def save(store: Any, *args: Any, zarr_format: int | None = None, path: str | None = None,
         zarr_version: int | None = None, storage_options: dict[str, Any] | None = None, **kwargs: Any) -> None:
    """Save one array (:func:`save_array`) or several in a group (:func:`save_group`).

    Parameters
    ----------
    store : str, os.PathLike, MutableMapping or store
        Store or path to a directory (a path ending ``.zip`` gives a zip file).
    *args : ndarray
        One array saved as the node at ``path``; several saved as ``arr_0``, ``arr_1``, ...
        in a group.
    zarr_format : int (2 or 3), optional
        Format of the new nodes (default: ``zarrkit.config.zarr_format``).
    path : str, optional
        Path of the array or group within the store.
    zarr_version : int (2 or 3), optional
        zarr-python 2's spelling of ``zarr_format``.
    storage_options : dict, optional
        Options of the remote file system when ``store`` is a URL (no array of that name).
    **kwargs : ndarray
        Arrays saved under their keyword (in a group).

    Raises
    ------
    ValueError
        No array given.

    Examples
    --------
    >>> import numpy as np
    >>> from zarrkit import save, load
    >>> store = {}
    >>> save(store, np.arange(4), np.zeros(2), extra=np.ones(1))
    >>> sorted(load(store))
    ['arr_0', 'arr_1', 'extra']
    """
    if not args and not kwargs:
        raise ValueError("at least one array must be provided")
    if len(args) == 1 and not kwargs:
        save_array(store, args[0], zarr_format=zarr_format, path=path, zarr_version=zarr_version,
                   storage_options=storage_options)
    else:
        save_group(store, *args, zarr_format=zarr_format, path=path, zarr_version=zarr_version,
                   storage_options=storage_options, **kwargs)


class LazyLoader(Mapping[str, Any]):
    """What :func:`load` returns for a group: a mapping that reads each array (into NumPy)
    on first access and keeps it."""

    def __init__(self, grp: Group):
        self.grp = grp
        self.cache: dict[str, Any] = {}

    def __getitem__(self, item: str) -> Any:
        try:
            return self.cache[item]
        except KeyError:
            node = self.grp[item]
            if not isinstance(node, Array):  # load() reads arrays
                raise NodeNotFoundError(f"{item!r} in {self.grp.name!r} is a group, not an array", node.path) from None
            arr = node[...]
            self.cache[item] = arr
            return arr

    def __len__(self) -> int:
        return len(self.grp)

    def __iter__(self) -> Iterator[str]:
        return iter(self.grp)

    def __contains__(self, item: object) -> bool:
        return item in self.grp

    def __repr__(self) -> str:
        return "<LazyLoader: " + ", ".join(sorted(self.grp.array_keys())) + ">"


def load(store: Any, zarr_format: int | None = None, path: str | None = None,
         zarr_version: int | None = None) -> Any:
    """Load what :func:`save` saved: an array as a NumPy array, a group as a lazy mapping of
    its arrays (each read on first access).

    Parameters
    ----------
    store : str, os.PathLike, MutableMapping or store
        Store or path to a directory or ``.zip`` file.
    zarr_format : int (2 or 3), optional
        Accepted for compatibility: the format is read from the store.
    path : str, optional
        Path of the array or group within the store.
    zarr_version : int (2 or 3), optional
        zarr-python 2's spelling of ``zarr_format``.

    Returns
    -------
    ndarray or LazyLoader
        The array's values, or a mapping of the group's array names to their values.

    Raises
    ------
    NodeNotFoundError
        Nothing is stored at ``path`` (zarr-python 2 returned None).

    Examples
    --------
    >>> import numpy as np
    >>> from zarrkit import save, load
    >>> store = {}
    >>> save(store, x=np.arange(3), y=np.zeros(3))
    >>> data = load(store)
    >>> data
    <LazyLoader: x, y>
    >>> data['x']
    array([0, 1, 2])
    """
    s, close = _open_store(store, "r")
    path = normalize_path(path)
    kind = io.node_kind(s, path)
    if kind == "array":
        try:
            return Array(s, path=path, read_only=True)[...]
        finally:
            if close:
                s.close()
    if kind == "group":
        return LazyLoader(Group(s, path=path, read_only=True))
    if close:
        s.close()
    raise NodeNotFoundError(io.not_found_message("array or group", store, path, "to load"), path)


def tree(grp: Group | Any, expand: bool = False, level: int | None = None) -> Any:
    """A printable tree of the hierarchy below ``grp`` (``str()`` gives the text).

    Parameters
    ----------
    grp : Group
        The group to start from (a zarrkit or an h5py group).
    expand : bool, optional
        Accepted for compatibility (the tree is plain text).
    level : int, optional
        How many levels below ``grp`` to show (all by default).

    Examples
    --------
    >>> import zarrkit
    >>> from zarrkit import tree
    >>> g = zarrkit.group(zarr_format=2)
    >>> _ = g.create_group('a').zeros('b', shape=(2, 3))
    >>> print(tree(g))
    /
     └── a
         └── b (2, 3) float64
    >>> print(tree(g, level=1))
    /
     └── a
    """
    if isinstance(grp, Group):
        return grp.tree(expand=expand, level=level)
    if _is_h5py(grp) or hasattr(grp, "items"):
        return _MappingTree(grp, level)
    raise TypeError(f"tree needs a group (zarrkit or h5py), got {type(grp).__name__}")


class _MappingTree(TreeView):
    """The text tree of an h5py group (or any mapping of names to datasets and groups)."""

    def _root_name(self) -> str:
        # as for a zarrkit group: the last segment of the name, '/' for the root
        return (getattr(self.group, "name", None) or "/").rstrip("/").rsplit("/", 1)[-1] or "/"

    def _members(self, g: Any) -> list[tuple[str, Any]]:
        return list(g.items())

    def _is_array(self, obj: Any) -> bool:
        return hasattr(obj, "shape")
