"""The entrances: creating, opening, copying and converting arrays and groups.

Each module holds the public functions of one kind of work; they normalise their arguments and
hand them to the engine in :mod:`zarrkit.core`: :mod:`.creation` and :mod:`.creation_like`
(``create``, ``zeros``, ``create_array``...), :mod:`.opening` (``open``, ``open_array``...),
:mod:`.hierarchy` (``create_group``...), :mod:`.convenience`, :mod:`.copying`,
:mod:`.conversion`, :mod:`.streaming`; :mod:`.stores` turns ``store=`` into stores.
"""

from .convenience import copy, copy_all, copy_store, load, save, save_array, save_group, tree
from .conversion import convert
from .creation import array, create, create_array, empty, full, init_array, init_group, ones, zeros
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
    "array", "consolidate_metadata", "convert", "copy", "copy_all", "copy_store", "create", "create_array",
    "create_group", "create_hierarchy", "empty", "empty_like", "from_array", "full", "full_like", "group",
    "init_array", "init_group", "load", "ones", "ones_like", "open", "open_array", "open_consolidated",
    "open_group", "open_like", "save", "save_array", "save_group", "tree", "zeros", "zeros_like",
]
