"""zarr-python 2's and 3's module names, in one table.

Code written for zarr-python imports modules zarrkit does not organise the same way
(``zarr.attrs``, ``zarr.meta``, ``zarr.dtype``...).  :data:`TABLE` says, for each such name,
where its names really live; importing zarrkit creates those modules from it (and registers
them in ``sys.modules``, so ``import zarrkit.attrs`` works).  To find the implementation of a
name a zarr-python module offers, read its row.

Two rows create no module; lower layers find their names through :func:`lookup`, by name and
only when used (:mod:`zarrkit.storage.zarr2_names` is the one place that does it):

* ``storage``: zarr-python 2's functions of ``zarr.storage`` that belong to the layers above
  the stores (creating an array, reading metadata).  ``zarrkit.storage`` reaches them from its
  module ``__getattr__``; so do the stores for their ``_metadata_class`` (the ``meta`` row's
  ``Metadata2``).
* ``api.asynchronous``: the asynchronous facade's classes, which ``Array._async_array`` and
  ``Group._async_group`` (zarr-python 3's names) wrap their node in.
* ``core``: not a row.  ``zarrkit.core`` is the engine package, and its ``Array`` and
  ``Group`` are zarr-python 2's ``zarr.core.Array`` as they are.

Examples
--------
>>> import zarrkit.attrs
>>> from zarrkit.meta import Metadata2
>>> zarrkit.dtype.Int8.__module__
'zarrkit.metadata.zdtypes'
>>> zarrkit.hierarchy.Group is zarrkit.Group
True
>>> from zarrkit.storage import init_array
>>> init_array.__module__
'zarrkit.api.creation'
"""

from __future__ import annotations

import importlib.machinery
import sys
from collections.abc import Iterator
from types import ModuleType
from typing import Any

from .api import async_nodes, copying, creation_like, opening, zarr2_storage
from .api import convenience as api_convenience
from .api import creation as api_creation
from .codecs import blosc_settings
from .core import attributes
from .core import group as core_group
from .core import sync as core_sync
from .metadata import (
    consolidated,
    dtype_json,
    grid,
    v2_documents,
    value_codecs,
    zdtype_base,
    zdtypes,
)
from .storage import cache

__all__ = ["PLACED", "TABLE", "ZARR3_API_VERSION", "ZARR3_PATHS", "lookup", "attrs", "blosc", "convenience", "creation", "dtype", "experimental",
           "hierarchy", "meta", "sync"]

#: Where a module's names come from: the real module itself (zarr-python's module *is* that
#: module under another name), or pairs of a real module and the names taken from it, written
#: ``"name"``, or ``"alias=name"`` for a name zarr-python spells differently.
Row = ModuleType | tuple[tuple[ModuleType, str], ...]

#: ``zarrkit.<key>`` (zarr-python's ``zarr.<key>``) -> where its names live
TABLE: dict[str, Row] = {
    # zarr-python 2
    "attrs": ((attributes, "Attributes"),),
    "blosc": blosc_settings,
    "convenience": (
        (api_convenience, "save save_array save_group load tree"),
        (copying, "copy copy_all copy_store"),
        (opening, "open consolidate_metadata open_consolidated"),
    ),
    "creation": (
        (api_creation, "create empty zeros ones full array"),
        (creation_like, "empty_like zeros_like ones_like full_like"),
        (opening, "open_array open_like"),
    ),
    "hierarchy": ((core_group, "Group"), (opening, "group open_group")),
    "meta": v2_documents,
    "sync": ((core_sync, "ThreadSynchronizer ProcessSynchronizer"),),
    "storage": (
        (api_creation, "init_array init_group"),
        (zarr2_storage, ("contains_array contains_group getsize listdir rmdir rename normalize_store_arg "
                         "migrate_1to2")),
        (consolidated, "ConsolidatedMetadataStore"),
    ),
    # zarr-python 3
    "dtype": (
        (zdtypes, ("Bool Complex64 Complex128 DateTime64 FixedLengthUTF32 Float16 Float32 Float64 "
                   "Int8 Int16 Int32 Int64 MLDataType NullTerminatedBytes RawBytes Struct Structured "
                   "TimeDelta64 UInt8 UInt16 UInt32 UInt64 VariableLengthBytes VariableLengthUTF8 "
                   "DataTypeRegistry data_type_registry data_type_of parse_dtype "
                   "parse_data_type=parse_dtype")),
        (zdtype_base, "ZDType check_dtype_spec_v2 check_dtype_spec_no_object_codec_v2"),
        (dtype_json, " ".join(dtype_json.__all__)),
    ),
    "experimental": ((cache, "CacheStore"), (grid, "ChunkGrid")),
    "experimental.cache_store": ((cache, "CacheStore"),),
    # zarr-python 3's Array._async_array / Group._async_group: the asynchronous facade's classes,
    # found by name from core/ (which lies below the facade); the module exists, none is made
    "api.asynchronous": ((async_nodes, "AsyncArray AsyncGroup"),),
}

#: The zarr-python release whose API zarrkit's zarr-python 3 names follow: what an import hook
#: aliasing ``zarr`` to zarrkit reports as ``zarr.__version__`` (code checks it to choose features)
ZARR3_API_VERSION = "3.4.2"

#: zarr-python 3's module paths -> the zarrkit modules (below ``zarrkit``) where their names
#: live, searched in order after ``zarrkit.<path>`` itself when that exists.  Code written for
#: zarr-python 3 imports from its internal layout (``zarr.core.dtype``, ``zarr.abc.store``,
#: ``zarr.storage._logging``...); an import hook aliasing ``zarr`` to zarrkit (such as the one
#: ``tools/zarr3_suite.py`` builds) resolves ``zarr.<path>.<name>`` through this table.  Module
#: names, not modules: nothing here is imported until a name is looked up.
ZARR3_PATHS: dict[str, tuple[str, ...]] = {
    "abc.codec": ("abc.codec", "codecs.base"),
    "abc.numcodec": ("codecs.numcodecs",),
    "abc.store": ("abc.store", "storage.base"),
    "codecs": ("metadata.value_codecs",),
    "codecs.cast_value": ("metadata.value_codecs", "codecs.cast"),
    "codecs.scale_offset": ("metadata.value_codecs", "codecs.cast"),
    "core.array": ("api.async_nodes", "api.asynchronous", "api.creation", "api.synchronous", "core.resize"),
    "core.array_spec": ("abc.codec", "core.views"),
    "core.buffer": ("buffer", "storage.buffer"),
    "core.buffer.core": ("storage.buffer",),
    "core.buffer.cpu": ("buffer.cpu", "storage.buffer"),
    "core.buffer.gpu": ("buffer.gpu",),
    "core.chunk_grids": ("metadata.grid",),
    "core.chunk_key_encodings": ("metadata.v3",),
    "core.common": ("metadata.normalize",),
    "core.config": ("config",),
    "core.dtype": ("metadata.zdtypes", "metadata.zdtype_base"),
    "core.dtype.common": ("metadata.zdtype_base",),
    "core.dtype.npy": ("metadata.zdtypes",),
    "core.dtype.npy.bool": ("metadata.zdtypes",),
    "core.dtype.npy.bytes": ("metadata.zdtypes",),
    "core.dtype.npy.common": ("metadata.zdtype_base", "metadata.scalars"),
    "core.dtype.npy.complex": ("metadata.zdtypes",),
    "core.dtype.npy.float": ("metadata.zdtypes",),
    "core.dtype.npy.int": ("metadata.zdtypes",),
    "core.dtype.npy.string": ("metadata.zdtypes",),
    "core.dtype.npy.structured": ("metadata.zdtypes",),
    "core.dtype.npy.time": ("metadata.zdtypes",),
    "core.dtype.registry": ("metadata.zdtypes",),
    "core.dtype.wrapper": ("metadata.zdtype_base",),
    "core.group": ("api.async_nodes", "core.group", "api.asynchronous"),
    "core.sync_group": ("api.synchronous", "api.hierarchy"),
    "core.indexing": ("core.indexing_tools", "api.async_nodes", "codecs.sharding"),
    "core.sync": ("api.async_nodes",),
    "core.metadata": ("metadata.v2", "metadata.v3"),
    "core.metadata.v2": ("metadata.v2",),
    "core.metadata.v3": ("metadata.v3",),
    "registry": ("codecs.registry",),
    "storage._common": ("storage.store_path", "storage.zarr3_paths"),
    "storage._utils": ("storage.store_path",),
    "storage._logging": ("storage.logging_store",),
    "testing.store": ("storage.wrappers",),
}

#: rows of modules that exist already: their names are looked up, no module is made
_NOT_MADE = ("storage", "api.asynchronous")


def _entries(row: Row) -> Iterator[tuple[str, ModuleType, str]]:
    """``(name in zarr-python, real module, name there)`` of each name of ``row``."""
    if isinstance(row, ModuleType):
        for name in row.__all__:
            yield name, row, name
        return
    for source, names in row:
        for entry in names.split():
            alias, _, name = entry.partition("=")
            yield alias, source, name or alias


def lookup(module: str, name: str) -> Any:
    """The object ``zarrkit.<module>.<name>`` stands for, as :data:`TABLE` says.

    Parameters
    ----------
    module : str
        A key of :data:`TABLE` (``'storage'``, ``'meta'``...).
    name : str
        A name of that module.

    Returns
    -------
    object

    Raises
    ------
    AttributeError
        When the row has no such name.
    """
    for alias, source, real in _entries(TABLE[module]):
        if alias == name:
            return getattr(source, real)
    raise AttributeError(f"module 'zarrkit.{module}' has no attribute {name!r}")


def _module(key: str) -> ModuleType:
    """The module ``zarrkit.<key>`` of :data:`TABLE`, registered in ``sys.modules``."""
    name = f"zarrkit.{key}"
    row = TABLE[key]
    if isinstance(row, ModuleType):
        module = row
    else:
        module = ModuleType(name)
        sources = ", ".join(f":mod:`{source.__name__}`" for source, _ in row)
        module.__doc__ = f"zarr-python's ``zarr.{key}``: names of {sources} (made by :mod:`zarrkit.compat`)."
        module.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
        module.__path__ = []  # its rows may have rows below them (experimental.cache_store)
        names = {alias: getattr(source, real) for alias, source, real in _entries(row)}
        module.__dict__.update(names)
        module.__all__ = list(names)  # type: ignore[attr-defined]
    sys.modules[name] = module
    parent, _, child = key.rpartition(".")
    if parent:  # zarrkit.experimental.cache_store: an attribute of the module made before it
        setattr(sys.modules[f"zarrkit.{parent}"], child, module)
    return module


_made = {key: _module(key) for key in TABLE if key not in _NOT_MADE}

attrs: ModuleType = _made["attrs"]
blosc: ModuleType = _made["blosc"]
convenience: ModuleType = _made["convenience"]
creation: ModuleType = _made["creation"]
dtype: ModuleType = _made["dtype"]
hierarchy: ModuleType = _made["hierarchy"]
meta: ModuleType = _made["meta"]
sync: ModuleType = _made["sync"]
experimental: ModuleType = _made["experimental"]


#: zarr-python 3's names of a lower-layer package whose implementation needs a higher layer:
#: ``zarr.codecs.CastValue`` and ``ScaleOffset`` convert between data types, which the
#: metadata layer (above the codecs) defines.  Set on the package when zarrkit is imported.
PLACED: dict[str, Row] = {
    "codecs": ((value_codecs, "CastValue ScaleOffset"),),
}


def _place(key: str) -> None:
    module = sys.modules[f"zarrkit.{key}"]
    for alias, source, real in _entries(PLACED[key]):
        setattr(module, alias, getattr(source, real))
        if alias not in module.__all__:
            module.__all__.append(alias)


for _key in PLACED:
    _place(_key)
