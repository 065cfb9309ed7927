"""Stores: where zarrkit keeps metadata documents and chunks.

Every store implements the small contract of :class:`~zarrkit.storage.base.Store`; any
``MutableMapping`` works too (it is wrapped in a :class:`MappingStore`).
"""

from __future__ import annotations

from typing import Any

import numcodecs

from .base import ByteRange, Store
from .coerce import coerce_store
from .local import DirectoryStore, NestedDirectoryStore, TempStore
from .mapping import MappingStore
from .memory import DictStore, MemoryStore
from .dbm import DBMStore
from .fsspec import FSStore, FsspecStore
from .lmdb import LMDBStore
from .redis import RedisStore
from .sqlite import SQLiteStore
from .zip import ZipStore
from .wrappers import CountingStore, LatencyStore, LRUStoreCache, ReadOnlyStore, WrapperStore

#: The compressor new arrays get when none is given; assign another codec (or ``None``) to
#: change the default for every array created afterwards.
default_compressor: Any = numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE)

__all__ = [
    "ByteRange",
    "Store",
    "MemoryStore",
    "DictStore",
    "DirectoryStore",
    "NestedDirectoryStore",
    "TempStore",
    "ZipStore",
    "FsspecStore",
    "FSStore",
    "SQLiteStore",
    "DBMStore",
    "LMDBStore",
    "RedisStore",
    "MappingStore",
    "WrapperStore",
    "ReadOnlyStore",
    "CountingStore",
    "LatencyStore",
    "LRUStoreCache",
    "coerce_store",
    "default_compressor",
    "init_array",
    "init_group",
    "migrate_1to2",
]


def __getattr__(name: str) -> Any:
    # these live with the API / metadata code, which imports this package
    if name in ("init_array", "init_group"):
        from .. import api

        return getattr(api, name)
    if name == "migrate_1to2":
        from ..metadata.v1 import migrate_1to2

        return migrate_1to2
    raise AttributeError(f"module 'zarrkit.storage' has no attribute {name!r}")
