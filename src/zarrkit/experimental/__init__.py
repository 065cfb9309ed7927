"""zarr-python 3's ``zarr.experimental`` names: :class:`~zarrkit.storage.cache.CacheStore`."""

from ..storage.cache import CacheStore

__all__ = ["CacheStore"]
