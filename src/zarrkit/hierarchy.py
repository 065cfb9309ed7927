"""zarr-python 2's ``zarr.hierarchy`` module: groups."""

from .api.opening import group, open_group  # noqa: F401
from .core.group import Group  # noqa: F401
