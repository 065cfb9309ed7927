"""zarr-python 2's store constructors, ``zarr.storage`` functions and keyword arguments, as its
documentation describes them."""

from __future__ import annotations

import os
import pickle
from collections.abc import MutableMapping

import numcodecs
import numpy as np
import pytest

import zarrkit as zarr
from zarrkit.errors import (
    ArrayNotFoundError,
    ContainsArrayError,
    ContainsGroupError,
    GroupNotFoundError,
    MetadataError,
)
from zarrkit.storage import (
    ConsolidatedMetadataStore,
    DBMStore,
    DirectoryStore,
    KVStore,
    LMDBStore,
    MemoryStore,
    NestedDirectoryStore,
    SQLiteStore,
    Store,
    TempStore,
    ZipStore,
    array_meta_key,
    attrs_key,
    contains_array,
    contains_group,
    getsize,
    group_meta_key,
    init_array,
    init_group,
    listdir,
    normalize_store_arg,
    rename,
    rmdir,
)


# -- store constructors -----------------------------------------------------------------------
@pytest.mark.parametrize(
    "make",
    [
        lambda p: DirectoryStore(p, dimension_separator="/"),
        lambda p: TempStore(dimension_separator="/"),
        lambda p: MemoryStore(dimension_separator="/"),
        lambda p: ZipStore(os.path.join(p, "a.zip"), mode="w", dimension_separator="/"),
        lambda p: DBMStore(os.path.join(p, "a.db"), flag="c", mode=0o644, dimension_separator="/"),
        lambda p: LMDBStore(os.path.join(p, "a.lmdb"), buffers=False, dimension_separator="/"),
        lambda p: SQLiteStore(os.path.join(p, "a.sqlite"), dimension_separator="/"),
        lambda p: NestedDirectoryStore(p, normalize_keys=False, dimension_separator="/"),
    ],
    ids=["directory", "temp", "memory", "zip", "dbm", "lmdb", "sqlite", "nested"],
)
def test_store_dimension_separator_reaches_new_arrays(tmp_path, make):
    store = make(str(tmp_path))
    z = zarr.zeros((4, 4), chunks=(2, 2), store=store, zarr_format=2)
    z[:] = 1
    assert "1/1" in store and "1.1" not in store
    assert z.metadata.dimension_separator == "/"
    store.close()


def test_store_dimension_separator_is_validated(tmp_path):
    for make in (lambda: DirectoryStore(tmp_path, dimension_separator="-"),
                 lambda: MemoryStore(dimension_separator=":"),
                 lambda: NestedDirectoryStore(tmp_path, dimension_separator=".")):
        with pytest.raises(ValueError, match="dimension_separator"):
            make()


def test_normalize_keys_lower_cases_keys(tmp_path):
    store = DirectoryStore(tmp_path, normalize_keys=True)
    store["FOO/Bar"] = b"x"
    assert os.listdir(tmp_path / "foo") == ["bar"]
    assert store["foo/bar"] == b"x" and store["FOO/BAR"] == b"x" and "Foo/BAR" in store
    g = zarr.group(store, zarr_format=2)
    g.zeros("Data", shape=4, chunks=2)[:] = 3
    assert (tmp_path / "data" / ".zarray").exists()
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "data"), mode="r")[:], 3)
    plain = DirectoryStore(tmp_path / "plain")
    plain["FOO"] = b"x"
    assert "foo" not in plain and "FOO" in plain


def test_memory_store_root_dict_holds_the_data():
    d: dict = {}
    store = MemoryStore(root=d)
    zarr.zeros(4, chunks=2, store=store, zarr_format=2)
    assert ".zarray" in d
    assert pickle.loads(pickle.dumps(MemoryStore(dimension_separator="/"))).dimension_separator == "/"


def test_kvstore_wraps_a_mapping():
    d: dict = {}
    z = zarr.zeros(4, chunks=2, store=KVStore(d), zarr_format=2)
    z[:] = 1
    assert {".zarray", "0", "1"} <= set(d)
    assert repr(KVStore(d)) == "KVStore(dict)"
    assert isinstance(normalize_store_arg(None), KVStore)
    assert isinstance(normalize_store_arg({}), KVStore)


def test_keys_no_store_can_hold_are_not_in_it(tmp_path):
    for store in (MemoryStore(), KVStore({}), DirectoryStore(tmp_path)):
        for key in ("c/", "", "../x", "/abs", "a//b"):
            assert key not in store


# -- stores written for zarr-python 2 ---------------------------------------------------------
class CountingStore(Store):
    """A store written for zarr-python 2: only the MutableMapping methods."""

    def __init__(self):
        self.wrapped: dict = {}
        self.counts: dict = {}

    def _count(self, what):
        self.counts[what] = self.counts.get(what, 0) + 1

    def __getitem__(self, key):
        self._count("getitem")
        return self.wrapped[key]

    def __setitem__(self, key, value):
        self._count("setitem")
        self.wrapped[key] = value

    def __delitem__(self, key):
        self._count("delitem")
        del self.wrapped[key]

    def __iter__(self):
        return iter(self.wrapped)

    def __len__(self):
        return len(self.wrapped)


class PlainMapping(MutableMapping):
    def __init__(self):
        self.d: dict = {}

    def __getitem__(self, k):
        return self.d[k]

    def __setitem__(self, k, v):
        self.d[k] = v

    def __delitem__(self, k):
        del self.d[k]

    def __iter__(self):
        return iter(self.d)

    def __len__(self):
        return len(self.d)


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("kind", [CountingStore, PlainMapping])
def test_zarr2_style_stores_work(kind, fmt):
    store = kind()
    z = zarr.create((10, 10), chunks=(5, 5), dtype="i4", store=store, zarr_format=fmt)
    data = np.arange(100, dtype="i4").reshape(10, 10)
    z[:] = data
    z[0, 0] = -1
    data[0, 0] = -1
    np.testing.assert_array_equal(zarr.open_array(store, mode="r")[:], data)
    g = zarr.group(kind(), zarr_format=fmt)
    g.create_group("a/b")
    assert list(g.group_keys()) == ["a"]
    del g["a"]
    assert list(g.group_keys()) == []
    if kind is CountingStore:
        assert store.counts["setitem"] >= 5 and store.counts["getitem"] >= 1


# -- zarr.storage functions -------------------------------------------------------------------
def test_key_constants():
    assert (array_meta_key, group_meta_key, attrs_key) == (".zarray", ".zgroup", ".zattrs")


def test_contains_getsize_listdir_rmdir_rename():
    store = KVStore({})
    init_group(store)
    init_array(store, shape=100, chunks=10, dtype="u1", path="g/a")
    assert contains_group(store) and contains_group(store, "g")
    assert contains_array(store, "g/a") and not contains_array(store, "g")
    assert not contains_group(store, "nope") and not contains_array(store, "nope")
    store["g/a/0"] = b"xyz"
    assert getsize(store, "g/a/0") == 3
    assert getsize(store, "g/a") == 3 + len(store["g/a/.zarray"]) + len(store["g/a/.zattrs"])
    assert getsize(object()) == -1
    assert listdir(store, "g/a") == [".zarray", ".zattrs", "0"]
    rename(store, "g/a", "g/b")
    assert contains_array(store, "g/b") and not contains_array(store, "g/a")
    rmdir(store, "g")
    assert sorted(store) == [".zattrs", ".zgroup"]
    d = {"a/b": b""}
    rename(d, "a", "c")
    assert d == {"c/b": b""}
    with pytest.warns(UserWarning, match="listdir"):
        listdir({"a/b": b""})


def test_init_functions_write_format_2_whatever_the_default():
    with zarr.config.set(zarr_format=3):
        store: dict = {}
        init_array(store, shape=10, chunks=5)
        assert ".zarray" in store and "zarr.json" not in store
        store = {}
        init_group(store, path="g")
        assert "g/.zgroup" in store and ".zgroup" in store and "zarr.json" not in store
        init_group(store, path="v3", zarr_format=3)
        assert "v3/zarr.json" in store


def test_consolidated_metadata_store():
    store: dict = {}
    zarr.group(store, zarr_format=2).zeros("a", shape=4, chunks=2)
    zarr.consolidate_metadata(store)
    cms = ConsolidatedMetadataStore(store)
    assert cms[".zgroup"] and "a/.zarray" in cms
    with pytest.raises(PermissionError):
        cms["x"] = b"1"
    bad: dict = {".zmetadata": b'{"zarr_consolidated_format": 2, "metadata": {}}'}
    with pytest.raises(MetadataError, match="zarr_consolidated_format"):
        ConsolidatedMetadataStore(bad)


# -- keyword arguments of zarr-python 2.18 -----------------------------------------------------
def test_zarr_version_names_the_format():
    assert zarr.zeros(10, chunks=5, zarr_version=2).zarr_format == 2
    assert zarr.zeros(10, chunks=5, zarr_version=3).zarr_format == 3
    assert zarr.group(zarr_version=2).zarr_format == 2
    assert zarr.open_group({}, mode="w", zarr_version=2).zarr_format == 2
    assert zarr.open_array({}, mode="w", shape=4, zarr_version=2).zarr_format == 2
    with pytest.raises(ValueError, match="zarr_version"):
        zarr.zeros(10, zarr_version=4)
    with pytest.raises(ValueError, match="contradicts"):
        zarr.zeros(10, zarr_version=2, zarr_format=3)
    store: dict = {}
    zarr.save(store, np.arange(3), zarr_version=2)
    assert ".zarray" in store


def test_ignored_and_refused_keywords():
    z = zarr.zeros(10, chunks=5, storage_transformers=(), partial_decompress=True, meta_array=np.empty(0))
    a = zarr.Array(z.store, partial_decompress=True, meta_array=np.empty(0), zarr_version=z.zarr_format)
    assert a.shape == (10,)
    with pytest.raises(ValueError, match="storage_transformers"):
        zarr.zeros(10, storage_transformers=["something"])


def test_zarr_format_honoured_when_opening():
    store: dict = {}
    zarr.zeros(4, store=store, zarr_format=2)
    with pytest.raises(ArrayNotFoundError, match="v3"):
        zarr.open_array(store, mode="r", zarr_format=3)
    with pytest.raises(ArrayNotFoundError):
        zarr.Array(store, zarr_version=3)
    g: dict = {}
    zarr.group(g, zarr_format=3)
    with pytest.raises(GroupNotFoundError):
        zarr.open_group(g, mode="r", zarr_format=2)


@pytest.mark.parametrize("fmt", [2, 3])
def test_empty_compressor_list_means_none(fmt):
    for value in ([], (), "none", None):
        z = zarr.zeros(10, chunks=5, compressor=value, filters=[], zarr_format=fmt)
        assert z.compressor is None and not z.filters


def test_errors_keep_zarr2_bases():
    for exc in (ContainsArrayError, ContainsGroupError, ArrayNotFoundError, GroupNotFoundError):
        assert issubclass(exc, ValueError)
    assert issubclass(ContainsArrayError, FileExistsError)
    assert issubclass(GroupNotFoundError, FileNotFoundError) and issubclass(GroupNotFoundError, KeyError)
    store: dict = {}
    zarr.zeros(4, store=store)
    with pytest.raises(ValueError):
        zarr.Group(store)
    with pytest.raises(ValueError):
        zarr.Group({})
    assert numcodecs  # the numcodecs registry is what zarr 2 code imports codecs from
