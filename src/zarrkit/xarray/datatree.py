"""Writing an :class:`xarray.DataTree` to Zarr with zarrkit: :func:`datatree_to_zarr`.

Every node becomes a Zarr group at its path, written as :func:`~zarrkit.xarray.to_zarr` writes
a Dataset (the layout ``DataTree.to_zarr`` gives with zarr-python); the metadata of the whole
hierarchy is consolidated once at the root, and the dask-backed data of all nodes is stored
in one :func:`dask.array.store`.  Read it back with ``xr.open_datatree(store,
engine="zarrkit")`` (or ``engine="zarr"``).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

from ..storage.base import join_path
from .writer import finish_writes, write_dataset

__all__ = ["datatree_to_zarr"]


def datatree_to_zarr(
    dt: Any,
    store: Any = None,
    mode: str = "w-",
    encoding: Mapping[str, Mapping[Hashable, Mapping[str, Any]]] | None = None,
    consolidated: bool | None = True,
    group: str | None = None,
    write_inherited_coords: bool = False,
    zarr_format: int | None = None,
    *,
    compute: bool = True,
    **options: Any,
) -> Any:
    """Write the DataTree ``dt`` to a Zarr hierarchy with zarrkit (``DataTree.to_zarr``'s layout).

    Parameters
    ----------
    dt : xarray.DataTree
        The tree; each node is written as a group holding its own variables.
    store
        Where (as :func:`zarrkit.xarray.to_zarr`; default a new in-memory store).
    mode : {'w-', 'w', 'a', 'r+'}
        For the root group; nodes below it are added to it (``'a'``) after ``'w'``/``'w-'``.
    encoding : dict, optional
        Per-node encodings, keyed by node path (``{"/": {...}, "/child": {"var": {...}}}``).
    consolidated : bool, optional
        Consolidate the metadata of the whole hierarchy at the root afterwards (default True).
    group : str, optional
        Write the tree under this group of the store instead of at its root.
    write_inherited_coords : bool
        Also write in each node the coordinates it inherits from its parents (the root writes
        its own in any case).
    zarr_format, compute
        As in :func:`zarrkit.xarray.to_zarr`.
    **options
        ``safe_chunks``, ``align_chunks``, ``storage_options``, ``chunk_store``,
        ``synchronizer``, ``write_empty_chunks``: as in :func:`zarrkit.xarray.to_zarr`.

    Returns
    -------
    zarrkit.Group
        The root group written (the pending dask store when ``compute=False`` and there is
        dask data).
    """
    import xarray as xr

    if not isinstance(dt, xr.DataTree):
        raise TypeError(f"datatree_to_zarr writes an xarray DataTree, got {type(dt).__name__}")
    encoding = dict(encoding or {})
    unknown = set(encoding) - set(dt.groups)
    if unknown:
        raise ValueError(f"unexpected encoding group name(s) provided: {sorted(unknown)}")
    base = (group or "").strip("/")
    root: Any = None
    pending: list[Any] = []
    child_mode = "a" if mode in ("w", "w-") else mode
    for rel_path, node in dt.subtree_with_keys:
        at_root = node is dt
        ds = node.to_dataset(inherit=write_inherited_coords or at_root)
        grp, writes = write_dataset(
            ds, store, mode if at_root else child_mode, join_path(base, "" if at_root else rel_path) or None,
            None, None, encoding.get(node.path), zarr_format, **options,
        )
        if root is None:
            # the nodes below go to the store the root was opened on, in the root's format
            root, store, zarr_format = grp, grp.store, grp.zarr_format
            options["storage_options"] = None
        pending += writes
    return finish_writes(root, pending, consolidated, compute)
