"""Opening arrays and groups: the functions of the classic Zarr API (``open``,
``open_array``, ``open_group``, ``group``, ``open_like``) and consolidated metadata.

Thin functions: they check their arguments, turn ``store=`` into stores
(:mod:`zarrkit.api.stores`) and hand back an :class:`~zarrkit.core.array.Array` or
:class:`~zarrkit.core.group.Group`; what they create goes the one creation path
(:mod:`zarrkit.core.creation`).  Every argument is validated before anything is deleted or
written, so a bad call leaves the store as it was.
"""

from __future__ import annotations

from typing import Any

from .._warnings import warn
from ..core.array import Array
from ..core.creation import ArrayOptions, open_array_node, write_group_node
from ..core.creation_like import AS_SOURCE, given_args, like_args
from ..core.group import Group, Member
from ..errors import (
    ContainsArrayError,
    GroupNotFoundError,
    MetadataError,
    NodeNotFoundError,
    ZarrUserWarning,
)
from ..metadata import io
from ..metadata.consolidated import ConsolidatedStore, consolidate, load_consolidated
from ..metadata.normalize import normalize_path
from ..metadata.spec import (
    ArraySpec,
    array_config_arg,
    check_codec_arguments,
    legacy_format,
    pop_h5py_compression,
    pop_h5py_fillvalue,
    reject_unknown,
    resolve_order,
    with_array_config,
    zarr_format_arg,
)
from ..storage.base import StoreLike, describe_location, describe_store
from ..storage.coerce import open_store, open_stores
from ..storage.memory import DictStore
from ..storage.store_path import refuse_writing_mode

__all__ = [
    "open_array",
    "open_like",
    "group",
    "open_group",
    "open",
    "consolidate_metadata",
    "open_consolidated",
]

_MODES = ("r", "r+", "a", "w", "w-", "x")


#: what consolidating a v3 hierarchy warns of (code written for zarr-python 3 filters it by
#: its first sentence)
V3_CONSOLIDATED_WARNING = (
    "Consolidated metadata is currently not part in the Zarr format 3 specification. Other "
    "implementations may not read it, and its form may change."
)


def open_like(
    a: Any, path: Any, *, mode: str | None = "a", shape: Any = AS_SOURCE, chunks: Any = AS_SOURCE, dtype: Any = AS_SOURCE,
    compressor: Any = AS_SOURCE, fill_value: Any = AS_SOURCE, order: Any = AS_SOURCE, synchronizer: Any = None,
    filters: Any = AS_SOURCE, cache_metadata: bool = True, cache_attrs: bool = True, object_codec: Any = AS_SOURCE,
    chunk_store: StoreLike = None, write_empty_chunks: bool | None = None, dimension_separator: str | None = None,
    zarr_format: int | None = None, storage_options: dict[str, Any] | None = None, **kwargs: Any,
) -> Array:
    """Open a persistent array like ``a`` at ``path``: created (modes ``'a'``, ``'w'``...) with
    ``a``'s shape, chunks, data type, codecs and fill value, unless given.

    Parameters
    ----------
    a : array-like
        The array to take after (a zarrkit or NumPy array, or any object with a ``shape``).
    path : str or store
        Where the array is: a directory path, URL, mapping or store (the ``store`` of
        :func:`open_array`); with ``store=`` given (zarr-python 3), the path in that store.
    mode : {'r', 'r+', 'a', 'w', 'w-', 'x'} or None, optional
        As in :func:`open_array` (None: ``'a'``, as not given).
    shape, chunks, dtype, compressor, fill_value, order, filters, object_codec : optional
        As in :func:`open_array`; not given (``AS_SOURCE``): ``a``'s.
    synchronizer, chunk_store, write_empty_chunks, dimension_separator, zarr_format, storage_options : optional
        As in :func:`open_array`.
    cache_metadata, cache_attrs : optional
        As in :func:`open_array`.
    **kwargs
        zarr-python 2's and h5py's keywords, forwarded to :func:`open_array`.

    Returns
    -------
    Array
        The array opened or created.

    Examples
    --------
    >>> import numpy as np, zarrkit, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), 'like.zarr')
    >>> z = zarrkit.open_like(np.zeros((4, 6), dtype='u2'), path, chunks=(2, 3))
    >>> z.shape, z.chunks, z.dtype
    ((4, 6), (2, 3), dtype('uint16'))
    """
    kwargs = like_args("open_like", a, given_args(locals()))
    kwargs.pop("a")
    path = kwargs.pop("path")
    if kwargs.get("mode") is None:
        kwargs["mode"] = "a"
    if "store" in kwargs:  # zarr-python 3's open_like(a, path, store=...): a path in that store
        return open_array(kwargs.pop("store"), path=path, **kwargs)
    return open_array(path, **kwargs)


def _check_mode(mode: str) -> None:
    if mode not in _MODES:
        raise ValueError(f"mode must be one of {list(_MODES)}, got {mode!r}")


def open_array(
    store: StoreLike = None,
    mode: str = "a",
    shape: Any = None,
    chunks: Any = True,
    dtype: Any = None,
    compressor: Any = "default",
    fill_value: Any = 0,
    order: str | None = None,
    synchronizer: Any = None,
    filters: Any = None,
    cache_metadata: bool = True,
    cache_attrs: bool = True,
    path: str | None = None,
    object_codec: Any = None,
    chunk_store: StoreLike = None,
    write_empty_chunks: bool | None = None,
    dimension_separator: str | None = None,
    zarr_format: int | None = None,
    storage_options: dict[str, Any] | None = None,
    **kwargs: Any,
) -> Array:
    """Open an array using file-mode-like semantics.

    Parameters
    ----------
    store : str, MutableMapping or store, optional
        A directory path, URL, mapping or store (default: a new in-memory store).
    mode : {'r', 'r+', 'a', 'w', 'w-', 'x'}, optional
        ``'r'`` read only (must exist); ``'r+'`` read/write (must exist); ``'a'`` read/write
        (create if it doesn't exist); ``'w'`` create (overwrite if it exists); ``'w-'`` or
        ``'x'`` create (fail if it exists).
    shape : int or tuple of ints, optional
        Shape of an array to create (needed when one is created).
    chunks : optional
        Of an array to create, as in :func:`create` (``zarr_format`` also: open only an
        array of that format).
    dtype, filters, object_codec, dimension_separator, zarr_format : optional
        Of an array to create, as in :func:`create` (``zarr_format`` also: open only an
        array of that format).
    compressor : optional
        Of an array to create, as in :func:`create` (``zarr_format`` also: open only an
        array of that format).
    fill_value : optional
        Of an array to create, as in :func:`create` (``zarr_format`` also: open only an
        array of that format).
    order : optional
        Of an array to create, as in :func:`create` (``zarr_format`` also: open only an
        array of that format).
    synchronizer, chunk_store, write_empty_chunks : optional
        As in :func:`create`.
    cache_metadata, cache_attrs : optional
        As in :func:`create`.
    path : str, optional
        Path of the array within the store.
    storage_options : dict, optional
        Options of the remote file system when ``store`` is a URL.
    **kwargs
        zarr-python 2's and h5py's keywords, forwarded to the same translation as
        :func:`create` (``zarr_version``, ``compression``, ``fillvalue``...).

    Returns
    -------
    Array

    Raises
    ------
    ArrayNotFoundError
        ``mode`` is ``'r'`` or ``'r+'`` and there is no array.
    ContainsGroupError
        A group is at ``path``.
    ContainsArrayError
        ``mode`` is ``'w-'`` or ``'x'`` and an array is there.
    ValueError
        An unknown ``mode``.

    Examples
    --------
    >>> import zarrkit, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), 'example.zarr')
    >>> z1 = zarrkit.open_array(path, mode='w', shape=(100, 100), chunks=(10, 10), fill_value=0)
    >>> z1[:] = 42
    >>> z2 = zarrkit.open_array(path, mode='r')
    >>> int(z2[5, 5])
    42
    """
    _check_mode(mode)
    compressor = pop_h5py_compression(compressor, kwargs)
    fill_value = pop_h5py_fillvalue(fill_value, kwargs, 0)
    zarr_format = legacy_format(kwargs, zarr_format, "open_array")
    array_config = kwargs.pop("config", None)
    given = with_array_config({"write_empty_chunks": write_empty_chunks, "config": array_config})
    write_empty_chunks, config_order = given["write_empty_chunks"], given.get("config_order")
    reject_unknown(kwargs, "open_array")
    stores = open_stores(store, chunk_store, read_only=(mode == "r"), storage_options=storage_options)
    path = normalize_path(path)
    create_format = zarr_format_arg(zarr_format)
    settings = array_config_arg(array_config)
    options = ArrayOptions(
        synchronizer=synchronizer, cache_metadata=cache_metadata, cache_attrs=cache_attrs,
        write_empty_chunks=write_empty_chunks, order=settings.get("order"),
        read_missing_chunks=settings.get("read_missing_chunks"),
    )

    def make_spec() -> ArraySpec:
        # only when open_array creates: the creation arguments are checked then, as before
        if shape is None:
            raise TypeError(f"open_array(mode={mode!r}) must create an array and needs shape=")
        check_codec_arguments(compressor=compressor, filters=filters, object_codec=object_codec)
        stored, read_order = resolve_order(order, config_order, create_format)
        return ArraySpec(
            shape, chunks, dtype, create_format, fill_value, stored, compressor, filters, object_codec,
            dimension_separator, read_order=read_order,
        )

    return open_array_node(stores, path, mode, make_spec, options, zarr_format)


def group(
    store: StoreLike = None,
    overwrite: bool = False,
    chunk_store: StoreLike = None,
    cache_attrs: bool = True,
    synchronizer: Any = None,
    path: str | None = None,
    zarr_format: int | None = None,
    storage_options: dict[str, Any] | None = None,
    *,
    attributes: dict[str, Any] | None = None,
    **kwargs: Any,
) -> Group:
    """Create a group (or open the one that exists, unless ``overwrite``).

    Parameters
    ----------
    store : str, MutableMapping or store, optional
        A directory path, URL, mapping or store (default: a new in-memory store).
    overwrite : bool, optional
        Replace whatever is at ``path`` with a new, empty group.
    chunk_store : MutableMapping, optional
        Separate storage for the chunks of the group's arrays.
    cache_attrs : bool, optional
        If False, attributes are read again on every access.
    synchronizer : object, optional
        Synchronizer of the group and its arrays.
    path : str, optional
        Path of the group within the store.
    zarr_format : int (2 or 3), optional
        Format of a new group (default: ``zarrkit.config.zarr_format``).
    storage_options : dict, optional
        Options of the remote file system when ``store`` is a URL.
    attributes : dict, optional
        Attributes of the new group (merged into an existing group's).
    **kwargs
        zarr-python 2's keywords (``zarr_version``, ``meta_array``...), forwarded to the same
        translation as :func:`create`.

    Returns
    -------
    Group

    Raises
    ------
    ContainsArrayError
        An array is at ``path`` (and not ``overwrite``).

    Examples
    --------
    >>> import zarrkit
    >>> zarrkit.group(zarr_format=2)
    <zarrkit.Group '/'>
    >>> zarrkit.group()  # doctest: +ELLIPSIS
    <Group memory://...>
    """
    zarr_format = legacy_format(kwargs, zarr_format, "group")
    reject_unknown(kwargs, "group")
    zarr_format = zarr_format_arg(zarr_format)
    stores = open_stores(store, chunk_store, storage_options=storage_options, default=DictStore)
    path = normalize_path(path)
    kind = io.node_kind(stores.store, path)
    if overwrite or kind is None:
        write_group_node(stores, path, zarr_format, attributes, overwrite)
    elif kind == "array":
        raise ContainsArrayError(f"path {path!r} holds an array, not a group", path=path)
    g = Group(stores.store_arg, path=path, chunk_store=chunk_store, cache_attrs=cache_attrs, synchronizer=synchronizer)
    if attributes and kind is not None and not overwrite:
        g.attrs.update(attributes)  # an existing group: the attributes are merged in
    return g


def open_group(
    store: StoreLike = None,
    mode: str = "a",
    cache_attrs: bool = True,
    synchronizer: Any = None,
    path: str | None = None,
    chunk_store: StoreLike = None,
    zarr_format: int | None = None,
    storage_options: dict[str, Any] | None = None,
    *,
    use_consolidated: bool | None = None,
    attributes: dict[str, Any] | None = None,
    **kwargs: Any,
) -> Group:
    """Open a group using file-mode-like semantics (modes as :func:`open_array`).

    Parameters
    ----------
    store : str, MutableMapping or store, optional
        A directory path, URL, mapping or store (default: a new in-memory store).
    mode : {'r', 'r+', 'a', 'w', 'w-', 'x'}, optional
        As in :func:`open_array`.
    cache_attrs : bool, optional
        If False, attributes are read again on every access.
    synchronizer : object, optional
        Synchronizer of the group and its arrays.
    path : str, optional
        Path of the group within the store.
    chunk_store : MutableMapping, optional
        Separate storage for the chunks of the group's arrays.
    zarr_format : int (2 or 3), optional
        Format of a new group; for an existing one, open only a group of this format.
    storage_options : dict, optional
        Options of the remote file system when ``store`` is a URL.
    use_consolidated : bool, optional
        zarr-python 3's: if True, open through the consolidated metadata
        (:func:`open_consolidated`).
    attributes : dict, optional
        The attributes of a group this call creates (a group already there keeps its own).
    **kwargs
        zarr-python 2's keywords (``zarr_version``...), forwarded to the same translation as
        :func:`create`; with ``use_consolidated``, forwarded to :func:`open_consolidated`.

    Returns
    -------
    Group

    Raises
    ------
    GroupNotFoundError
        ``mode`` is ``'r'`` or ``'r+'`` and there is no group.
    ContainsArrayError
        An array is at ``path``.
    ContainsGroupError
        ``mode`` is ``'w-'`` or ``'x'`` and a group is there.

    Examples
    --------
    >>> import zarrkit, tempfile
    >>> root = zarrkit.open_group(tempfile.mkdtemp(), mode='w')
    >>> foo = root.create_group('foo')
    >>> sorted(root.group_keys())
    ['foo']
    """
    _check_mode(mode)
    zarr_format = legacy_format(kwargs, zarr_format, "open_group")
    if use_consolidated:  # zarr-python 3: read through the consolidated document ('a': of the group there)
        return open_consolidated(store, mode="r+" if mode == "a" else mode, path=path, zarr_format=zarr_format,
                                 chunk_store=chunk_store, storage_options=storage_options, **kwargs)
    reject_unknown(kwargs, "open_group")
    create_format = zarr_format_arg(zarr_format)
    stores = open_stores(
        store, chunk_store, read_only=(mode == "r"), storage_options=storage_options, default=DictStore,
    )
    path = normalize_path(path)
    kind = io.node_kind(stores.store, path)
    if mode in ("r", "r+"):
        if kind == "array":
            raise ContainsArrayError(f"path {path!r} holds an array, not a group", path=path)
        if kind is None:
            raise GroupNotFoundError(io.not_found_message("group", stores.store_arg, path), path=path)
    elif mode == "a":
        if kind == "array":
            raise ContainsArrayError(f"path {path!r} holds an array, not a group", path=path)
        if kind is None:
            refuse_writing_mode(stores.store, mode)
            write_group_node(stores, path, create_format, attributes)
    else:  # 'w' replaces what is there; 'w-' / 'x' refuse to
        refuse_writing_mode(stores.store, mode)
        write_group_node(stores, path, create_format, attributes, overwrite=(mode == "w"))
    return Group(
        stores.store_arg,
        path=path,
        read_only=(mode == "r"),
        chunk_store=chunk_store,
        cache_attrs=cache_attrs,
        synchronizer=synchronizer,
        zarr_format=zarr_format,
    )


def open(
    store: StoreLike = None, mode: str = "a", *, path: str | None = None,
    storage_options: dict[str, Any] | None = None, **kwargs: Any,
) -> Member:
    """Open whatever node is at ``path``: an array or a group (``Member``: typed ``Any``, as
    only the store knows which; :func:`open_array` and :func:`open_group` are typed precisely).

    With nothing there, ``mode='r'``/``'r+'`` raise :class:`~zarrkit.errors.NodeNotFoundError`;
    other modes create an array if ``shape=`` is given, else a group.

    Parameters
    ----------
    store : str, MutableMapping or store, optional
        A directory path, URL, mapping or store (default: a new in-memory store).
    mode : {'r', 'r+', 'a', 'w', 'w-', 'x'}, optional
        As in :func:`open_array`.
    path : str, optional
        Path of the node within the store.
    storage_options : dict, optional
        Options of the remote file system when ``store`` is a URL.
    **kwargs
        Forwarded to :func:`open_array` (for an array, or with ``shape=``) or to
        :func:`open_group`.

    Returns
    -------
    Array or Group

    Raises
    ------
    NodeNotFoundError
        ``mode`` is ``'r'`` or ``'r+'`` and nothing is at ``path``.

    Examples
    --------
    >>> import zarrkit, tempfile
    >>> d = tempfile.mkdtemp()
    >>> _ = zarrkit.open(d, mode='w', shape=(10,))
    >>> type(zarrkit.open(d, mode='r')).__name__
    'Array'
    """
    _check_mode(mode)
    # an array is made in a new in-memory store, a group in a new dict-backed one
    stores = open_stores(
        store, read_only=(mode == "r"), storage_options=storage_options,
        default=DictStore if "shape" not in kwargs else _no_store,
    )
    norm = normalize_path(path)
    kind = io.node_kind(stores.store, norm)
    store_arg = stores.store_arg
    if mode in ("r", "r+") and kind is None:
        raise NodeNotFoundError(io.not_found_message("array or group", store_arg, norm), norm)
    creates = mode == "w" or mode in ("w-", "x") or kind is None
    if ("shape" in kwargs) if creates else kind == "array":
        return open_array(store_arg, mode=mode, path=norm, **kwargs)
    if "config" in kwargs:  # checked before anything is written
        raise TypeError(f"open: config= holds an array's run-time settings, but {describe_location(store_arg, norm)} "
                        "resolves to a group (no shape= to create an array)")
    return open_group(store_arg, mode=mode, path=norm, **kwargs)


def _no_store() -> None:
    return None


def consolidate_metadata(
    store: Any, path: str | None = None, zarr_format: int | None = None,
    storage_options: dict[str, Any] | None = None,
) -> Group:
    """Gather all metadata of a hierarchy into one document, so opening it takes one read.

    v2 hierarchies get a ``.zmetadata`` key; v3 ones an inline ``consolidated_metadata`` in the
    root ``zarr.json`` (zarr-python 3's layout).

    Parameters
    ----------
    store : str, MutableMapping or store
        The store holding the hierarchy.
    path : str, optional
        Path of the group whose hierarchy is consolidated (default: the root).
    zarr_format : {2, 3}, optional
        Format of the group (default: the one found).  The group is reopened as this format,
        as zarr-python 3 does.
    storage_options : dict, optional
        Options of the remote file system when ``store`` is a URL.

    Returns
    -------
    Group
        The group, opened through its consolidated metadata (read-only when the store is).

    Examples
    --------
    >>> import zarrkit
    >>> store = {}
    >>> g = zarrkit.group(store, zarr_format=2)
    >>> _ = g.zeros('a', shape=(10,))
    >>> _ = zarrkit.consolidate_metadata(store)
    >>> '.zmetadata' in store
    True
    """
    if zarr_format not in (None, 2, 3):
        raise ValueError(f"zarr_format must be 2, 3 or None, got {zarr_format!r}")
    if not getattr(store, "supports_consolidated_metadata", True):
        raise TypeError(f"{describe_store(store)} doesn't support consolidated metadata: it keeps its metadata "
                        "together itself")
    s = open_store(store, storage_options=storage_options)
    zarr_format_found, below = consolidate(s, normalize_path(path))
    if zarr_format_found == 3 and below:
        warn(V3_CONSOLIDATED_WARNING, ZarrUserWarning)
    return open_consolidated(s, mode="r" if s.read_only else "r+", path=path, zarr_format=zarr_format)


def open_consolidated(
    store: Any, mode: str = "r", path: str | None = None, zarr_format: int | None = None,
    storage_options: dict[str, Any] | None = None, **kwargs: Any,
) -> Group:
    """Open a group using its consolidated metadata: one store read for all metadata.

    ``mode`` is ``'r'`` or ``'r+'`` (data may be written; metadata changes are not
    re-consolidated).  ``zarr_format`` says where to look (v3: the group's ``zarr.json``;
    v2: ``.zmetadata``); without it a v2 hierarchy costs one more request (the ``zarr.json``
    that is not there).

    Parameters
    ----------
    store : str, MutableMapping or store
        The store holding the hierarchy.
    mode : {'r', 'r+'}, optional
        Read only, or data may be written.
    path : str, optional
        Path of the group (default: the root).
    zarr_format : int (2 or 3), optional
        Where to look for the consolidated metadata.
    storage_options : dict, optional
        Options of the remote file system when ``store`` is a URL.
    **kwargs
        Forwarded to :class:`~zarrkit.Group` (``cache_attrs``, ``synchronizer``,
        ``chunk_store``).

    Returns
    -------
    Group

    Raises
    ------
    MetadataError
        The hierarchy has no consolidated metadata.
    ValueError
        A ``mode`` other than ``'r'`` and ``'r+'``.

    Examples
    --------
    >>> import zarrkit
    >>> store = zarrkit.MemoryStore()
    >>> root = zarrkit.open_group(store, mode='w')
    >>> _ = root.zeros('a/b', shape=(4,))
    >>> _ = zarrkit.consolidate_metadata(store)
    >>> g = zarrkit.open_consolidated(store)
    >>> g['a/b'].shape
    (4,)
    """
    if kwargs.pop("use_consolidated", True) is not True:
        raise TypeError("open_consolidated() always reads the consolidated metadata: use_consolidated must be "
                        "True (use open_group(use_consolidated=False) to ignore it)")
    if mode not in ("r", "r+"):
        raise ValueError(f"open_consolidated mode must be 'r' or 'r+', got {mode!r}")
    s = open_store(store, read_only=(mode == "r"), storage_options=storage_options)
    path = normalize_path(path)
    docs = load_consolidated(s, path, zarr_format)
    if docs is None:
        raise MetadataError(f"Consolidated metadata requested, but none found at {describe_location(store, path)}")
    return Group(ConsolidatedStore(s, docs), path=path, read_only=(mode == "r"), **kwargs)
