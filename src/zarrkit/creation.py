"""zarr-python 2's ``zarr.creation`` module: the array creation functions."""

from .api.opening import (  # noqa: F401
    array,
    create,
    empty,
    empty_like,
    full,
    full_like,
    ones,
    ones_like,
    open_array,
    open_like,
    zeros,
    zeros_like,
)
