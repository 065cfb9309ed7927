"""zarr-python 2's ``zarr.attrs`` module: user attributes."""

from .core.attributes import Attributes  # noqa: F401
