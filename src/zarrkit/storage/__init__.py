"""Stores: where zarrkit keeps metadata documents and chunks.

Every store implements the small contract of :class:`~zarrkit.storage.base.Store`; any
``MutableMapping`` works too (it is wrapped in a :class:`MappingStore`).
"""

from __future__ import annotations

import sys
import types
from typing import Any

from ..config import config
from .base import ByteRange, Store
from .coerce import coerce_store
from .local import DirectoryStore
from .local_variants import NestedDirectoryStore, TempStore

#: zarr-python 3's name of :class:`DirectoryStore`: ``LocalStore(root, read_only=False)``
LocalStore = DirectoryStore
from .dbm import DBMStore
from .fsspec import FsspecStore, FSStore
from .lmdb import LMDBStore
from .logging_store import LoggingStore
from .mapping import KVStore, MappingStore
from .memory import DictStore, MemoryStore
from .obstore import ObjectStore
from .redis import RedisStore
from .sqlite import SQLiteStore
from .store_path import StorePath
from .wrappers import CountingStore, LatencyStore, LRUStoreCache, ReadOnlyStore, WrapperStore
from .zarr2_names import zarr2_name
from .zip import ZipStore

#: zarr-python 2's functions of ``zarr.storage``: they create arrays or read metadata, so they live
#: in the layers above the stores; the compatibility table (:mod:`zarrkit.compat`, row
#: ``storage``) says where, and :func:`__getattr__` below reaches them (:mod:`.zarr2_names`)
ZARR2_FUNCTIONS = (
    "init_array", "init_group", "contains_array", "contains_group", "getsize", "listdir",
    "rmdir", "rename", "normalize_store_arg", "ConsolidatedMetadataStore", "migrate_1to2",
)

#: zarr-python 2's names of the v2 metadata keys
array_meta_key = ".zarray"
group_meta_key = ".zgroup"
attrs_key = ".zattrs"

__all__ = [  # noqa: PLE0604 (the starred ZARR2_FUNCTIONS is a tuple of names, given by __getattr__)
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
    "ObjectStore",
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
    "LoggingStore",
    "LRUStoreCache",
    "coerce_store",
    "StorePath",
    "default_compressor",
    *ZARR2_FUNCTIONS,
]


class _StorageModule(types.ModuleType):
    """This package as a module whose ``default_compressor`` is ``zarrkit.config``'s: zarr-python
    2 code reads and assigns it here."""

    @property
    def default_compressor(self) -> Any:
        return config.default_compressor

    @default_compressor.setter
    def default_compressor(self, codec: Any) -> None:
        config.default_compressor = codec


def __getattr__(name: str) -> Any:
    # zarr-python 2 code finds ZARR2_FUNCTIONS here, beside the stores, while they belong above
    # them: looked up in the compatibility table when used (the exception .zarr2_names states)
    if name in ZARR2_FUNCTIONS:
        return zarr2_name("storage", name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    # the public names only (not what the module imports for itself, nor its submodules)
    return sorted(__all__)


sys.modules[__name__].__class__ = _StorageModule
