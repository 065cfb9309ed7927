"""zarr-python's module names come from one table (``zarrkit.compat.TABLE``): each module it makes
is importable under its zarr-python name, each of its names is the object the table says, and
the table names the module that defines it (the implementation is one hop away)."""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import zarrkit
import zarrkit.storage
from zarrkit import compat

SRC = Path(zarrkit.__file__).parent
ROWS = [key for key in compat.TABLE if key != "storage"]


def _entries(key):
    row = compat.TABLE[key]
    if isinstance(row, ModuleType):
        return [(row, name, name) for name in row.__all__]
    out = []
    for source, names in row:
        for entry in names.split():
            alias, _, name = entry.partition("=")
            out.append((source, alias, name or alias))
    return out


@pytest.mark.parametrize("key", ROWS)
def test_each_row_is_a_module_under_its_zarr_python_name(key):
    module = importlib.import_module(f"zarrkit.{key}")
    assert sys.modules[f"zarrkit.{key}"] is module
    for _, alias, name in _entries(key):
        assert getattr(module, alias) is compat.lookup(key, alias)
    if "." not in key:
        assert getattr(zarrkit, key) is module


@pytest.mark.parametrize("key", list(compat.TABLE))
def test_the_table_names_the_module_that_defines_each_name(key):
    for source, alias, name in _entries(key):
        obj = getattr(source, name)
        if inspect.isfunction(obj):
            assert Path(obj.__code__.co_filename) == Path(source.__file__), f"zarrkit.{key}.{alias}"
        elif inspect.isclass(obj):  # a class may show zarr-python's module name, the row's
            assert obj.__module__ in (source.__name__, f"zarrkit.{key}"), f"zarrkit.{key}.{alias}"


def test_the_storage_row_is_what_zarrkit_storage_offers():
    names = {alias for _, alias, _ in _entries("storage")}
    assert names == set(zarrkit.storage.ZARR2_FUNCTIONS)
    assert names <= set(zarrkit.storage.__all__) and names <= set(dir(zarrkit.storage))
    for name in names:
        assert getattr(zarrkit.storage, name) is compat.lookup("storage", name)
    with pytest.raises(AttributeError):
        zarrkit.storage.no_such_function


def test_stores_offer_zarr_python_2s_metadata_dialect():
    from zarrkit.meta import Metadata2

    assert zarrkit.storage.Store._metadata_class is Metadata2
    assert zarrkit.storage.MemoryStore()._metadata_class is Metadata2


def test_zarr_python_spellings():
    import zarrkit.attrs
    import zarrkit.experimental.cache_store
    from zarrkit.dtype import parse_data_type, parse_dtype

    assert parse_data_type is parse_dtype
    assert zarrkit.attrs.Attributes.__name__ == "Attributes"
    assert zarrkit.experimental.cache_store.CacheStore is zarrkit.experimental.CacheStore
    assert zarrkit.blosc.__name__ == "zarrkit.codecs.blosc_settings"  # the module itself


def test_a_fresh_interpreter_imports_a_table_module_first():
    code = "import zarrkit.meta as m, zarrkit.experimental.cache_store as c; print(m.Metadata2.__name__, c.CacheStore.__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["Metadata2", "CacheStore"]


#: the top of the package: the public entrances, the layers' packages, the one compatibility
#: table, zarr-python 3's packages other packages build on (abc: base classes of stores and
#: codecs; buffer), which are edges over the layers, and beside errors.py in the base layer the
#: one helper every warning goes through; the drop-in installer and its runner
TOP = {"__init__.py", "__main__.py", "config.py", "errors.py", "_warnings.py", "dask.py", "compat.py", "py.typed",
       "drop_in.py", "as_zarr.py",
       "api", "cli", "xarray", "testing", "core", "storage", "codecs", "metadata", "abc", "buffer"}


def test_the_top_level_holds_the_entrances_and_the_table_only():
    found = {p.name for p in SRC.iterdir() if p.name != "__pycache__"}
    assert found <= TOP, found - TOP
