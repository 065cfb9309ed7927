"""Names zarr-python 2 code finds on the stores whose implementation lives in a higher layer.

``zarr.storage.init_array`` creates an array, ``store._metadata_class`` decodes metadata
documents: zarr-python 2 keeps them beside its stores, zarrkit in the layers above them.  This
module is the one place the storage layer reaches up: by name, through the compatibility table
(:mod:`zarrkit.compat`), only when such a name is used, never when the stores are imported (by
then importing zarrkit has imported the table; no cycle, no higher module loaded early).  The
layer contract lists this exception.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["zarr2_name", "Zarr2Name"]


def zarr2_name(module: str, name: str) -> Any:
    """The object ``zarrkit.<module>.<name>`` stands for, as the compatibility table says.

    Parameters
    ----------
    module : str
        A row of :data:`zarrkit.compat.TABLE` (``'storage'``, ``'meta'``...).
    name : str
        A name of that row.

    Returns
    -------
    object
    """
    return importlib.import_module("zarrkit.compat").lookup(module, name)


class Zarr2Name:
    """A class attribute that is :func:`zarr2_name` ``(module, name)`` when read (on the class or
    an instance)."""

    def __init__(self, module: str, name: str) -> None:
        self.module = module
        self.name = name

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        return zarr2_name(self.module, self.name)
