"""zarr-python 2's ``zarr.sync`` module: synchronizers."""

from .core.sync import ProcessSynchronizer, ThreadSynchronizer  # noqa: F401
