"""xarray integration: read with ``xr.open_dataset(path, engine="zarrkit")`` (and
``xr.open_datatree``), write with :func:`zarrkit.xarray.to_zarr` (a DataTree with
:func:`zarrkit.xarray.datatree_to_zarr`).

Both follow xarray's Zarr encoding convention (``_ARRAY_DIMENSIONS`` for v2, ``dimension_names``
for v3, CF encoding by xarray itself), so stores move freely between zarrkit and
xarray + zarr-python.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..storage.extras import import_extra

import_extra("xarray", "zarrkit.xarray", "xarray", "xarray")  # the error naming the extra, if missing

from .backend import ZarrkitBackendEntrypoint
from .datatree import datatree_to_zarr
from .writer import to_zarr

if TYPE_CHECKING:
    import xarray as xr

__all__ = ["ZarrkitBackendEntrypoint", "datatree_to_zarr", "open_dataset", "open_datatree", "to_zarr"]


def __dir__() -> list[str]:
    # the public names only (not what the module imports for itself, nor its submodules)
    return sorted(__all__)


def open_dataset(store: Any, **kwargs: Any) -> xr.Dataset:
    """``xr.open_dataset(store, engine="zarrkit", **kwargs)``.

    ``chunks={}`` gives dask arrays aligned to the Zarr chunks; ``group``, ``consolidated``
    (``None`` uses consolidated metadata when present), ``decode_times`` etc. as in xarray.
    """
    import xarray as xr

    kwargs.setdefault("engine", "zarrkit")
    return xr.open_dataset(store, **kwargs)


def open_datatree(store: Any, **kwargs: Any) -> xr.DataTree:
    """``xr.open_datatree(store, engine="zarrkit", **kwargs)``: every group as a tree node."""
    import xarray as xr

    kwargs.setdefault("engine", "zarrkit")
    return xr.open_datatree(store, **kwargs)
