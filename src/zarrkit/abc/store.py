"""zarr-python 3's ``zarr.abc.store``: the store base class a package derives its stores
from, and the byte requests of ``get``.

:class:`Store` is zarrkit's one store base class.  A class deriving from it that defines
zarr-python 3's coroutines (``async def get(self, key, prototype, byte_range=None)``, ``set``,
``exists``, ``delete``, ``list``, ``list_prefix``, ``list_dir``...) is a store written for
zarr-python 3: zarrkit accepts it wherever it takes a store and calls it through
:class:`~zarrkit.storage.zarr_store.ZarrStoreAdapter` (see :mod:`zarrkit.storage.zarr3_api`).
"""

from __future__ import annotations

from ..storage.base import Store
from ..storage.zarr3_api import ByteRequest, OffsetByteRequest, RangeByteRequest, SuffixByteRequest

__all__ = ["ByteRequest", "OffsetByteRequest", "RangeByteRequest", "Store", "SuffixByteRequest"]
