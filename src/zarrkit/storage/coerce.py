"""Turn what a user passes as ``store=`` into a :class:`~zarrkit.storage.base.Store`."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote, urlparse

from ..errors import StorageOptionsError
from .base import Store
from .fsspec import FsspecStore
from .local import DirectoryStore
from .mapping import KVStore, MappingStore
from .memory import MemoryStore
from .obstore import ObjectStore
from .obstore_options import fsspec_available, use_obstore
from .zarr_store import ZarrStoreAdapter, is_zarr_store
from .zip import ZipStore

__all__ = ["coerce_store"]

#: what ``store=`` accepts, as messages say it
_ACCEPTED = (
    "a zarrkit Store, a zarr-python 3 store (zarr.abc.store.Store: LocalStore, ObjectStore, "
    "an Icechunk session's store...), an obstore store, an fsspec mapper or file system, a "
    "mapping, a path or "
    "URL, or None"
)


def coerce_store(
    store: Any, read_only: bool = False, storage_options: dict[str, Any] | None = None
) -> Store:
    """Return a :class:`Store` for ``store``.

    * a :class:`Store` is returned as is;
    * ``None`` gives a new :class:`MemoryStore`;
    * an ``s3://``, ``gs://``, ``az://``/``abfs://`` or ``http(s)://`` URL gives an
      :class:`~zarrkit.storage.obstore.ObjectStore` when ``zarrkit.config.remote`` is
      ``'obstore'`` (the default when obstore is installed; fsspec-style ``storage_options``
      are translated, and options obstore has no equivalent for send the URL to fsspec), else
      an :class:`~zarrkit.storage.fsspec.FsspecStore`;
    * any other URL (a ``str`` with ``://``: ``memory://``, chained URLs such as
      ``simplecache::s3://...``) gives an :class:`~zarrkit.storage.fsspec.FsspecStore` made
      with ``storage_options``;
    * a ``file://`` URL without ``storage_options`` names a local directory and gives a
      :class:`DirectoryStore` (same files, but zarrkit's native local store, without fsspec);
      with ``storage_options`` it goes through fsspec like any other URL;
    * an obstore store (``obstore.store.S3Store(...)``, ...) gives an
      :class:`~zarrkit.storage.obstore.ObjectStore` over it;
    * an fsspec mapper (``fsspec.get_mapper(...)``, an ``FSMap``) or file system instance
      gives an :class:`~zarrkit.storage.fsspec.FsspecStore` over it;
    * any other ``str`` or ``os.PathLike`` names a local directory (:class:`DirectoryStore`);
    * a zarr-python 3 store (``zarr.storage.LocalStore``, ``MemoryStore``, ``FsspecStore``,
      ``ObjectStore``, an Icechunk session's ``session.store``, a VirtualiZarr
      ``ManifestStore``: any ``zarr.abc.store.Store``) is used through
      :class:`~zarrkit.storage.zarr_store.ZarrStoreAdapter`;
    * any other mapping (e.g. a ``dict``) is used through :class:`KVStore` (zarr-python 2's
      name of :class:`MappingStore`).

    Parameters
    ----------
    store : Store, str, os.PathLike, MutableMapping or None
        What to store in.
    read_only : bool, optional
        Open a path or URL read-only.
    storage_options : dict, optional
        Options of the file system of a URL; giving them with anything else is an error.

    Returns
    -------
    Store

    Raises
    ------
    TypeError
        ``store`` is none of the above, or ``storage_options`` come without a URL.

    Examples
    --------
    >>> from zarrkit.storage import coerce_store
    >>> coerce_store({})
    KVStore(dict)
    >>> coerce_store('memory://doc-coerce', storage_options={})
    FsspecStore('memory:///doc-coerce')
    """
    if isinstance(store, (str, os.PathLike)):
        path = os.fspath(store)
        if isinstance(path, str) and "://" in path:
            if path.startswith("file://") and "::" not in path and not storage_options:
                parsed = urlparse(path)
                local = unquote(parsed.path)
                if parsed.netloc not in ("", "localhost"):  # file://server/share (UNC)
                    local = f"//{parsed.netloc}{local}"
                elif len(local) > 2 and local[0] == "/" and local[2] == ":":  # file:///C:/x
                    local = local[1:]
                return DirectoryStore(local, read_only=read_only)
            return _remote_store(path, storage_options, read_only)
    if storage_options:
        raise TypeError(
            f"storage_options apply only to URLs (with '://'), not to {type(store).__name__} "
            f"{store!r}"
        )
    if isinstance(store, Store):
        return store
    if store is None:
        return MemoryStore()
    if _is_fsspec_object(store):
        return FsspecStore(store, read_only=read_only)
    if is_zarr_store(store):
        return ZarrStoreAdapter(store, read_only=read_only)
    if getattr(type(store), "__module__", "").split(".")[0] == "obstore":
        return ObjectStore(store, read_only=read_only)
    if isinstance(store, (str, os.PathLike)):
        path = os.fspath(store)
        if path.endswith(".zip") and not os.path.isdir(path):
            return ZipStore(path, mode="r" if read_only else "a")
        return DirectoryStore(path, read_only=read_only)
    node = getattr(type(store), "__module__", "").startswith("zarrkit.")
    if node and type(store).__name__ in ("Group", "Array"):
        # a Group is a Mapping of its members: taken as a store it would read as an empty one
        raise TypeError(
            f"store must be {_ACCEPTED}, not a zarrkit {type(store).__name__} "
            f"(pass its store: {type(store).__name__.lower()}.store)"
        )
    if isinstance(store, Mapping) or (
        hasattr(store, "__getitem__") and hasattr(store, "keys")
    ):
        return KVStore(store)
    raise TypeError(f"store must be {_ACCEPTED}, not {type(store).__name__}")


def _remote_store(url: str, storage_options: dict[str, Any] | None, read_only: bool) -> Store:
    """The store of a URL: obstore's or fsspec's, as ``config.remote`` and the options say."""
    if use_obstore(url):
        try:
            return ObjectStore.from_url(url, storage_options=storage_options, read_only=read_only)
        except StorageOptionsError:
            if not fsspec_available():
                raise
    return FsspecStore.from_url(url, storage_options=storage_options, read_only=read_only)


def _is_fsspec_object(obj: Any) -> bool:
    """Whether ``obj`` is an fsspec ``FSMap`` or file system (without importing fsspec)."""
    mapping = sys.modules.get("fsspec.mapping")
    spec = sys.modules.get("fsspec.spec")
    return (mapping is not None and isinstance(obj, mapping.FSMap)) or (
        spec is not None and isinstance(obj, spec.AbstractFileSystem)
    )


def user_store(given: Any, coerced: Store) -> Any:
    """What a node shows as its ``.store``: a plain mapping the user gave (a ``dict``, as the
    Zarr tutorial shows it), else the store made of what was given (an fsspec mapper shows
    as its :class:`~zarrkit.storage.fsspec.FsspecStore`, as zarr-python 2's ``FSStore``)."""
    if isinstance(coerced, MappingStore) and coerced.mapping is given:
        return given
    return coerced
