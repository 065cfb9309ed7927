"""zarrkit: chunked, compressed N-dimensional arrays in the Zarr format.

The classic synchronous Zarr API: ``import zarrkit as zarr`` and zarr-python 2 style code runs.

Examples
--------
>>> import zarrkit as zarr
>>> z = zarr.zeros((1000, 1000), chunks=(100, 100), dtype='i4')
>>> z[0, :] = 1
>>> int(z[0].sum())
1000
"""

from types import ModuleType as _ModuleType

from . import abc, buffer, errors  # noqa: F401  (zarr.abc, zarr.buffer)
from .api import asynchronous as _asynchronous  # noqa: F401  (zarr.api.asynchronous, loaded with the package)
from .api.async_nodes import AsyncArray, AsyncGroup
from .api.convenience import copy, copy_all, copy_store, load, save, save_array, save_group, tree
from .api.conversion import convert
from .api.creation import array, create, create_array, empty, full, ones, zeros
from .api.creation_like import empty_like, full_like, ones_like, zeros_like
from .api.hierarchy import create_group, create_hierarchy, from_array
from .api.opening import (
    consolidate_metadata,
    group,
    open,
    open_array,
    open_consolidated,
    open_group,
    open_like,
)
from .api.rechunking import rechunk
from .codecs import (
    BZ2,
    CRC32,
    CRC32C,
    JSON,
    LZ4,
    LZMA,
    Adler32,
    AsType,
    Base64,
    BitRound,
    Blosc,
    Categorize,
    Delta,
    FixedScaleOffset,
    Fletcher32,
    GZip,
    JenkinsLookup3,
    MsgPack,
    PackBits,
    Pickle,
    Quantize,
    Shuffle,
    VLenArray,
    VLenBytes,
    VLenUTF8,
    Zlib,
    Zstd,
)

# zarr-python's module names (zarrkit.attrs, zarrkit.meta...), made from the compatibility table
from .compat import attrs, blosc, convenience, creation, dtype, experimental, hierarchy, meta, sync  # noqa: F401
from .config import config
from .core.array import Array
from .core.group import Group
from .core.sync import ProcessSynchronizer, ThreadSynchronizer
from .drop_in import install_as_zarr, print_debug_info
from .storage import (
    DBMStore,
    DictStore,
    DirectoryStore,
    FsspecStore,
    FSStore,
    LMDBStore,
    LRUStoreCache,
    MemoryStore,
    NestedDirectoryStore,
    RedisStore,
    SQLiteStore,
    TempStore,
    ZipStore,
)

__version__ = "0.1.0"


def __getattr__(name: str) -> _ModuleType:
    # optional integrations, imported on first use (xarray and dask are optional dependencies)
    if name in ("xarray", "dask"):
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'zarrkit' has no attribute {name!r}")

__all__ = [
    "Array",
    "AsyncArray",
    "install_as_zarr",
    "print_debug_info",
    "AsyncGroup",
    "create_group",
    "create_hierarchy",
    "from_array",
    "Group",
    "array",
    "create",
    "create_array",
    "consolidate_metadata",
    "open_consolidated",
    "convert",
    "rechunk",
    "copy",
    "copy_all",
    "copy_store",
    "load",
    "save",
    "save_array",
    "save_group",
    "tree",
    "empty",
    "empty_like",
    "full",
    "full_like",
    "group",
    "ones",
    "ones_like",
    "open",
    "open_array",
    "open_group",
    "open_like",
    "zeros",
    "zeros_like",
    "config",
    "errors",
    "blosc",
    "ThreadSynchronizer",
    "ProcessSynchronizer",
    "MemoryStore",
    "DictStore",
    "DirectoryStore",
    "NestedDirectoryStore",
    "TempStore",
    "ZipStore",
    "LRUStoreCache",
    "FsspecStore",
    "FSStore",
    "SQLiteStore",
    "DBMStore",
    "LMDBStore",
    "RedisStore",
    "Adler32",
    "AsType",
    "Base64",
    "BitRound",
    "Blosc",
    "BZ2",
    "Categorize",
    "CRC32",
    "CRC32C",
    "Delta",
    "FixedScaleOffset",
    "Fletcher32",
    "GZip",
    "JenkinsLookup3",
    "JSON",
    "LZ4",
    "LZMA",
    "MsgPack",
    "PackBits",
    "Pickle",
    "Quantize",
    "Shuffle",
    "VLenArray",
    "VLenBytes",
    "VLenUTF8",
    "Zlib",
    "Zstd",
]
