"""The chunk engine and the node classes.  ``zarrkit.core.Array`` is zarr-python 2's path."""

from .array import Array
from .group import Group

__all__ = ["Array", "Group"]
