"""zarr-python 3's creation functions that zarr-python 2 did not have: ``create_group``,
``from_array`` and ``create_hierarchy`` (``create_array`` is in :mod:`zarrkit.api`, beside
``create``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.array import Array
from ..core.creation import write_group_node
from ..core.creation_like import AS_SOURCE, v2_source_order
from ..core.group import Group, create_group_nodes
from ..metadata.normalize import normalize_path
from ..metadata.spec import zarr_format_arg
from ..storage.base import StoreLike
from ..storage.coerce import open_stores
from .creation import create_array

__all__ = ["create_group", "from_array", "create_hierarchy"]

_KEEP = "keep"


def create_group(
    store: StoreLike = None,
    *,
    path: str | None = None,
    zarr_format: int | None = None,
    overwrite: bool = False,
    attributes: dict[str, Any] | None = None,
    storage_options: dict[str, Any] | None = None,
) -> Group:
    """Create a group (zarr-python 3's function).

    Parameters
    ----------
    store : str, MutableMapping or store, optional
        A directory path, URL, mapping or store (default: a new in-memory store).
    path : str, optional
        Path of the group within the store.
    zarr_format : int (2 or 3), optional
        Format of the group (default: ``zarrkit.config.zarr_format``).
    overwrite : bool, optional
        Replace whatever is at ``path``.
    attributes : dict, optional
        Attributes of the new group.
    storage_options : dict, optional
        Options of the remote file system when ``store`` is a URL.

    Returns
    -------
    Group

    Raises
    ------
    ContainsGroupError, ContainsArrayError
        A node is already at ``path`` and ``overwrite`` is False.

    Examples
    --------
    >>> import zarrkit
    >>> g = zarrkit.create_group(store={}, attributes={'title': 'demo'})
    >>> g.attrs['title'], g.zarr_format
    ('demo', 3)
    """
    zarr_format = zarr_format_arg(zarr_format)
    stores = open_stores(store, storage_options=storage_options)
    path = normalize_path(path)
    write_group_node(stores, path, zarr_format, attributes, overwrite)
    return Group(stores.store_arg, path=path)


def create_hierarchy(
    *, store: StoreLike, nodes: dict[str, Any], overwrite: bool = False, storage_options: dict[str, Any] | None = None,
) -> Any:
    """Create the groups of ``nodes`` and the groups above them (zarr-python 3's function).

    Parameters
    ----------
    store : str, MutableMapping or store
        Where to create them.
    nodes : dict
        Paths mapped to :class:`~zarrkit.core.group.GroupMetadata` (format and
        attributes of each group); all of one format.
    overwrite : bool, optional
        Replace nodes already at the paths asked for (a node there is an error otherwise).
    storage_options : dict, optional
        Options of the remote file system when ``store`` is a URL.

    Yields
    ------
    tuple of (str, Group)
        ``(path, group)`` of the root, the groups made to hold the others and those asked
        for, parents first.

    Raises
    ------
    TypeError
        A node that is not a ``GroupMetadata``.
    ValueError
        Nodes of both formats.

    Examples
    --------
    >>> import zarrkit
    >>> from zarrkit.core.group import GroupMetadata
    >>> nodes = dict(zarrkit.create_hierarchy(store={}, nodes={'a/b': GroupMetadata()}))
    >>> sorted(nodes)
    ['', 'a', 'a/b']
    """
    stores = open_stores(store, storage_options=storage_options)
    yield from create_group_nodes(stores, nodes, overwrite=overwrite)


def from_array(
    store: StoreLike = None,
    *,
    data: Any,
    write_data: bool = True,
    name: str | None = None,
    chunks: Any = "keep",
    shards: Any = "keep",
    filters: Any = "keep",
    compressors: Any = "keep",
    serializer: Any = "keep",
    fill_value: Any = AS_SOURCE,
    order: str | None = None,
    zarr_format: int | None = None,
    attributes: dict[str, Any] | None = None,
    overwrite: bool = False,
    storage_options: dict[str, Any] | None = None,
    **kwargs: Any,
) -> Array:
    """Create an array like ``data`` (a zarrkit array or any array-like) and copy its values
    (zarr-python 3's function).  A source array is copied one chunk of the new array at a time,
    so memory stays bounded.

    Parameters
    ----------
    store : str, MutableMapping or store, optional
        Where to create the array (default: a new in-memory store).
    data : array-like
        The source: a zarrkit array, a NumPy array or anything with ``shape`` and ``dtype``.
    write_data : bool, optional
        Copy the values (False: only create the array).
    name : str, optional
        Path of the array within the store.
    chunks, shards, filters, compressors, serializer : optional
        As in :func:`create_array`; ``'keep'`` (the default) takes a zarrkit source's.
    fill_value : object, optional
        Default: a zarrkit source's fill value; ``None`` gives the new array the default of
        :func:`create_array` (the data type's default scalar for v3, none for v2).
    order : {'C', 'F'}, optional
        Memory layout within each chunk.
    zarr_format : int (2 or 3), optional
        Default: a zarrkit source's format, else ``zarrkit.config.zarr_format``.
    attributes : dict, optional
        Default: a zarrkit source's attributes.
    overwrite : bool, optional
        Replace whatever is at ``name``.
    storage_options : dict, optional
        Options of the remote file system when ``store`` is a URL.
    **kwargs
        Forwarded to :func:`create_array` (``chunk_key_encoding``, ``dimension_names``,
        ``config``...; by default a zarrkit source's chunk key encoding and dimension names).

    Returns
    -------
    Array
        The new array.

    Examples
    --------
    >>> import numpy as np, zarrkit
    >>> a = zarrkit.from_array({}, data=np.arange(12).reshape(3, 4), chunks=(2, 2))
    >>> a.chunks, int(a[2, 3])
    ((2, 2), 11)
    >>> b = zarrkit.from_array({}, data=a)  # chunks and codecs kept
    >>> b.chunks, int(b[2, 3])
    ((2, 2), 11)
    """
    source = data if isinstance(data, Array) else None
    if source is None and not (hasattr(data, "shape") and hasattr(data, "dtype")):
        data = np.asanyarray(data)
    keep = {"chunks": chunks, "shards": shards, "filters": filters, "compressors": compressors,
            "serializer": serializer}
    options: dict[str, Any] = {}
    for key, value in keep.items():
        if value is not _KEEP and not (isinstance(value, str) and value == _KEEP):
            options[key] = value
        elif source is not None:
            kept = _kept(source, key)
            if kept is not None:
                options[key] = kept
    if source is not None:
        zarr_format = source.zarr_format if zarr_format is None else zarr_format
        fill_value = source.fill_value if fill_value is AS_SOURCE else fill_value
        attributes = dict(source.attrs.asdict()) if attributes is None else attributes
        if source.zarr_format == 2:  # (a v2 array's order is in its metadata; v3 has none)
            order = v2_source_order(source.order, order, zarr_format)
        if zarr_format != source.zarr_format:  # codecs of one format need not exist in the other
            options = {k: v for k, v in options.items() if k in ("chunks", "shards")}
        elif kwargs.get("chunk_key_encoding") is None:  # the source's keys, as zarr-python 3
            meta = source.metadata
            kwargs["chunk_key_encoding"] = (
                meta.chunk_key_encoding if zarr_format == 3
                else {"name": "v2", "separator": meta.dimension_separator}
            )
        if kwargs.get("dimension_names") is None and source.zarr_format == 3:
            kwargs["dimension_names"] = source.metadata.dimension_names
    if fill_value is AS_SOURCE:  # (an array-like source has none)
        fill_value = None
    if zarr_format == 2:
        options.pop("shards", None)
        options.pop("serializer", None)
    # the data is written by the creation itself (an array's one stored object at a time), which
    # refuses to overwrite the node the data is read from
    return create_array(
        store, name=name, data=data, write_data=write_data, fill_value=fill_value,
        order=order, zarr_format=zarr_format,
        attributes=attributes, overwrite=overwrite,
        storage_options=storage_options, **options, **kwargs,
    )


def _kept(source: Array, key: str) -> Any:
    if key == "chunks":
        return source.chunks
    if key == "shards":
        return getattr(source, "shards", None)
    if source.zarr_format == 2:
        if key == "compressors":
            return source.compressor
        if key == "filters":
            return source.filters
        return None
    meta = source.metadata
    if key == "compressors":
        return tuple(meta.compressors)
    if key == "filters":
        return tuple(meta.filters or ())
    if key == "serializer":
        return meta.serializer
    return None
