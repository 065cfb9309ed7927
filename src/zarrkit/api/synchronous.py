"""zarr-python 3's ``zarr.api.synchronous``: the creation and opening functions, the synchronous
twins of :mod:`zarrkit.api.asynchronous` (they are zarrkit's own functions).

Examples
--------
>>> import zarrkit.api.synchronous as sync_api
>>> a = sync_api.zeros(shape=(4,), chunks=(2,))
>>> sync_api.open_array(a.store, mode='r')[:].tolist()
[0.0, 0.0, 0.0, 0.0]
"""

from .convenience import load, save, save_array, save_group, tree
from .copying import copy, copy_all, copy_store
from .creation import array, create, create_array, empty, full, ones, zeros
from .creation_like import empty_like, full_like, ones_like, zeros_like
from .hierarchy import create_group, create_hierarchy, from_array
from .opening import (
    consolidate_metadata,
    group,
    open,
    open_array,
    open_consolidated,
    open_group,
    open_like,
)

__all__ = [
    "array", "consolidate_metadata", "copy", "copy_all", "copy_store", "create", "create_array", "create_group",
    "create_hierarchy", "empty", "empty_like", "from_array", "full", "full_like", "group", "load", "ones",
    "ones_like", "open", "open_array", "open_consolidated", "open_group", "open_like", "save", "save_array",
    "save_group", "tree", "zeros", "zeros_like",
]
