"""zarr-python 3 stores used as zarrkit stores: the store conformance suite and the public-API
round trips through :class:`~zarrkit.storage.zarr_store.ZarrStoreAdapter` over zarr-python's
``MemoryStore``, ``LocalStore`` and ``ObjectStore`` (on obstore's in-memory store), then what the
adapter adds: bytes that zarr-python reads back, ranged requests, read-only stores, pickling,
names in messages, and the error for a store object of an unknown kind."""

from __future__ import annotations

import pickle
import subprocess
import sys

import numpy as np
import pytest

zarr = pytest.importorskip("zarr")
obstore = pytest.importorskip("obstore")

import zarrkit  # noqa: E402
from zarrkit.errors import ReadOnlyError, StoreError  # noqa: E402
from zarrkit.storage import ByteRange, coerce_store  # noqa: E402
from zarrkit.storage.keys import describe_store  # noqa: E402
from zarrkit.storage.zarr_store import ZarrStoreAdapter  # noqa: E402
from zarrkit.testing import PublicAPISuite, StoreSuite  # noqa: E402

from zarr.storage import LocalStore, MemoryStore, ObjectStore  # noqa: E402


class TestAdapterOverMemoryStore(StoreSuite, PublicAPISuite):
    def make_store(self, tmp_path):
        return coerce_store(MemoryStore())

    def make_read_only_store(self, tmp_path, source):
        return coerce_store(MemoryStore(source.zarr_store._store_dict, read_only=True))


class TestAdapterOverLocalStore(StoreSuite, PublicAPISuite):
    #: zarr-python's LocalStore keeps the directory of a deleted file and lists it
    xfail_tests = dict.fromkeys(
        ["test_list_dir_forgets_deleted_children", "test_delete_prefix",
         "test_delete_prefix_missing_and_everything"],
        "zarr-python's LocalStore keeps the directory of deleted files and lists it",
    )

    def make_store(self, tmp_path):
        return coerce_store(LocalStore(tmp_path / "data.zarr"))

    def make_read_only_store(self, tmp_path, source):
        return coerce_store(LocalStore(source.zarr_store.root, read_only=True))


class TestAdapterOverObjectStore(StoreSuite):
    picklable = False  # obstore's in-memory store does not pickle (a TypeError)

    def make_store(self, tmp_path):
        return coerce_store(ObjectStore(obstore.store.MemoryStore()))

    def make_read_only_store(self, tmp_path, source):
        return coerce_store(ObjectStore(source.zarr_store.store, read_only=True))
