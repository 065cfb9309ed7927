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

#: zarr-python 3's name of :class:`DirectoryStore`: ``LocalStore(root, read_only=False)``
LocalStore = DirectoryStore
from .mapping import KVStore, MappingStore
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

#: zarr-python 2's names of the v2 metadata keys
array_meta_key = ".zarray"
group_meta_key = ".zgroup"
attrs_key = ".zattrs"

# zarr-python 2's ``zarr.storage`` functions, which know about metadata: they live in the API
# layer and are resolved on first use (this package is below it)
_FUNCTIONS = {
    "init_array": "api",
    "init_group": "api",
    "contains_array": "store_functions",
    "contains_group": "store_functions",
    "getsize": "store_functions",
    "listdir": "store_functions",
    "rmdir": "store_functions",
    "rename": "store_functions",
    "normalize_store_arg": "store_functions",
    "ConsolidatedMetadataStore": "store_functions",
}

__all__ = [
    "ByteRange",
    "Store",
    "MemoryStore",
    "DictStore",
    "DirectoryStore",
    "LocalStore",
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
    "KVStore",
    "array_meta_key",
    "group_meta_key",
    "attrs_key",
    "WrapperStore",
    "ReadOnlyStore",
    "CountingStore",
    "LatencyStore",
    "LRUStoreCache",
    "coerce_store",
    "default_compressor",
    "migrate_1to2",
    *_FUNCTIONS,
]


def __getattr__(name: str) -> Any:
    if name in _FUNCTIONS:
        import importlib

        return getattr(importlib.import_module(f"..{_FUNCTIONS[name]}", __name__), name)
    if name == "migrate_1to2":
        from ..metadata.v1 import migrate_1to2

        return migrate_1to2
    raise AttributeError(f"module 'zarrkit.storage' has no attribute {name!r}")
