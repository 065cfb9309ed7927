"""Turn what a user passes as ``store=`` into a :class:`~zarrkit.storage.base.Store`."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlparse

from ..errors import StorageOptionsError
from .base import Store, StoreLike
from .fsspec import FsspecStore
from .local import DirectoryStore
from .mapping import KVStore, MappingStore
from .memory import MemoryStore
from .obstore import ObjectStore
from .obstore_options import fsspec_available, use_obstore
from .store_path import PrefixStore, StorePath
from .zarr_store import ZarrStoreAdapter, is_zarr_store
from .zip import ZipStore

__all__ = ["NodeStores", "StoreLike", "coerce_store", "open_store", "open_stores", "user_store"]

#: what ``store=`` accepts, as messages say it
_ACCEPTED = (
    "a zarrkit Store, a zarr-python 3 store (zarr.abc.store.Store: LocalStore, ObjectStore, "
    "an Icechunk session's store...), an obstore store, an fsspec mapper or file system, a "
    "mapping, a path or "
    "URL, or None"
)


def coerce_store(
    store: StoreLike, read_only: bool = False, storage_options: dict[str, Any] | None = None
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
    if isinstance(store, StorePath):
        # zarr-python 3's StorePath: its store, or the part of it under its path (the caller's
        # own path= is then read below it, as zarr-python 3 joins the two)
        inner = coerce_store(store.store, read_only=read_only, storage_options=storage_options)
        return PrefixStore(inner, store.path) if store.path else inner
    if isinstance(store, (str, os.PathLike)):
        path = os.fspath(store)
        if isinstance(path, str) and "://" in path:
            if path.startswith("file://") and "::" not in path and not storage_options:
                return DirectoryStore(_local_path(path), read_only=read_only)
            return _remote_store(path, storage_options, read_only)
    if storage_options:
        raise TypeError(
            f"storage_options apply only to URLs (with '://'), not to {type(store).__name__} "
            f"{store!r}"
        )
    if isinstance(store, Store) and not is_zarr_store(store):
        return store  # (one written for zarr-python 3, with coroutine get..., is adapted below)
    if store is None:
        return MemoryStore()
    for is_kind, store_over in _OTHER_LIBRARIES:
        if is_kind(store):
            return store_over(store, read_only=read_only)
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


def _local_path(url: str) -> str:
    """The local path of a ``file://`` URL."""
    parsed = urlparse(url)
    local = unquote(parsed.path)
    if parsed.netloc not in ("", "localhost"):  # file://server/share (UNC)
        local = f"//{parsed.netloc}{local}"
    elif len(local) > 2 and local[0] == "/" and local[2] == ":":  # file:///C:/x
        local = local[1:]
    return local


def _remote_store(url: str, storage_options: dict[str, Any] | None, read_only: bool) -> Store:
    """The store of a URL: obstore's or fsspec's, as ``config.remote`` and the options say
    (options obstore has no equivalent for send the URL to fsspec, when it is installed)."""
    openers = _URL_OPENERS if use_obstore(url) else _URL_OPENERS[1:]
    for i, open_url in enumerate(openers):
        try:
            return open_url(url, storage_options=storage_options, read_only=read_only)
        except StorageOptionsError:
            if i == len(openers) - 1 or not fsspec_available():
                raise
    raise AssertionError("unreachable: the last opener returns or raises")


def _is_fsspec_object(obj: Any) -> bool:
    """Whether ``obj`` is an fsspec ``FSMap`` or file system (without importing fsspec)."""
    mapping = sys.modules.get("fsspec.mapping")
    spec = sys.modules.get("fsspec.spec")
    return (mapping is not None and isinstance(obj, mapping.FSMap)) or (
        spec is not None and isinstance(obj, spec.AbstractFileSystem)
    )


def _is_obstore_object(obj: Any) -> bool:
    """Whether ``obj`` is an obstore store (without importing obstore)."""
    return getattr(type(obj), "__module__", "").split(".")[0] == "obstore"


#: the stores over other libraries' store objects: (whether an object is of that kind, the
#: store over it), tried in order, as fsspec's and zarr-python 3's registries of store kinds
_OTHER_LIBRARIES: tuple[tuple[Callable[[Any], bool], Callable[..., Store]], ...] = (
    (_is_fsspec_object, FsspecStore),
    (is_zarr_store, ZarrStoreAdapter),
    (_is_obstore_object, ObjectStore),
)

#: who opens a remote URL, in the order tried: obstore (when ``config.remote`` chooses it),
#: then fsspec
_URL_OPENERS: tuple[Callable[..., Store], ...] = (ObjectStore.from_url, FsspecStore.from_url)


def user_store(given: Any, coerced: Store) -> Any:
    """What a node shows as its ``.store``: a plain mapping the user gave (a ``dict``, as the
    Zarr tutorial shows it), else the store made of what was given (an fsspec mapper shows
    as its :class:`~zarrkit.storage.fsspec.FsspecStore`, as zarr-python 2's ``FSStore``)."""
    if isinstance(coerced, MappingStore) and coerced.mapping is given:
        return given
    return coerced


@dataclass(frozen=True, eq=False)
class NodeStores:
    """The stores of a node: ``store`` (metadata, and chunks unless ``chunk_store`` differs)
    and ``chunk_store``, with what each shows to the user (``store_arg``, ``chunk_store_arg``:
    the user's ``dict`` itself, else the store).

    The members of a group share their group's: a hierarchy's stores are made once.
    """

    store: Store
    store_arg: Any
    chunk_store: Store
    #: None: the chunks are in ``store``
    chunk_store_arg: Any = None

    @classmethod
    def of(cls, store: Any, chunk_store: Any = None) -> NodeStores:
        """The stores of what a user passes as ``store=`` and ``chunk_store=`` (a
        :class:`NodeStores` is taken as it is)."""
        if isinstance(store, NodeStores):
            return store
        return open_stores(store, chunk_store, default=MemoryStore)


def open_stores(
    store: StoreLike, chunk_store: StoreLike = None, *, read_only: bool = False,
    storage_options: dict[str, Any] | None = None, default: Callable[[], Any] = dict,
) -> NodeStores:
    """The stores of a node from what the user passed.

    A path or URL becomes its store (read-only when ``read_only``: the call only reads) and
    the node shows that store; a mapping or store the user made is used as given, and the
    node shows the user's own object (a ``dict`` stays a ``dict``, as the Zarr tutorial shows
    it).

    Parameters
    ----------
    store : StoreLike
        The ``store=`` argument; None: ``default()`` (a new in-memory mapping).
    chunk_store : StoreLike, optional
        A separate store for the chunks.
    read_only : bool, optional
        Open a path or URL read-only.
    storage_options : dict, optional
        Options of the file system of a URL.
    default : callable, optional
        What a ``store`` of None stands for.

    Returns
    -------
    NodeStores
    """
    main, shown = _store_of(default() if store is None else store, read_only, storage_options)
    if chunk_store is None:
        return NodeStores(main, shown, main)
    chunks, chunks_shown = _store_of(chunk_store, False, None)
    return NodeStores(main, shown, chunks, chunks_shown)


def open_store(store: StoreLike, *, read_only: bool = False, storage_options: dict[str, Any] | None = None) -> Store:
    """The :class:`~zarrkit.storage.base.Store` of what the user passed as ``store=`` (None: a
    new in-memory store), as :func:`open_stores` makes a node's."""
    return _store_of(store, read_only, storage_options)[0]


def _store_of(given: Any, read_only: bool, storage_options: dict[str, Any] | None) -> tuple[Store, Any]:
    # read_only applies to what a path or URL opens; a store the user made keeps its own
    named = isinstance(given, (str, os.PathLike)) or storage_options is not None
    store = coerce_store(given, read_only=read_only and named, storage_options=storage_options)
    return store, (store if named else user_store(given, store))
