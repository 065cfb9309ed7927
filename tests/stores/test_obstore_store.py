"""ObjectStore (zarrkit's store on obstore) against obstore's LocalStore and MemoryStore and a
moto S3 server on 127.0.0.1; arrays it writes read bit-exactly by zarr-python's own
``zarr.storage.ObjectStore`` over the same bucket, and the other way round."""

from __future__ import annotations

import pickle
import uuid

import numpy as np
import pytest

obstore = pytest.importorskip("obstore")
from obstore.store import LocalStore, MemoryStore, S3Store  # noqa: E402

import zarrkit  # noqa: E402
from zarrkit.storage import ByteRange, FsspecStore, ObjectStore, coerce_store  # noqa: E402
from zarrkit.testing import PublicAPISuite, StoreSuite  # noqa: E402

from moto_s3 import BUCKET  # noqa: E402  (tests/stores is on sys.path; the s3 fixture is in conftest.py)


def _uid() -> str:
    return uuid.uuid4().hex[:12]


class TestLocalObjectStore(StoreSuite, PublicAPISuite):
    def make_store(self, tmp_path):
        return ObjectStore(LocalStore(tmp_path / "data.zarr", mkdir=True))

    def make_read_only_store(self, tmp_path, source):
        return ObjectStore(LocalStore(source.store.prefix), read_only=True)

    def reopen_store(self, tmp_path, store, mode):
        return ObjectStore(LocalStore(store.store.prefix), read_only=mode == "r")


class TestMemoryObjectStore(StoreSuite, PublicAPISuite):
    picklable = False  # obstore's MemoryStore does not pickle

    def make_store(self, tmp_path):
        return ObjectStore(MemoryStore())

    def make_read_only_store(self, tmp_path, source):
        return ObjectStore(source.store, read_only=True)

    def reopen_store(self, tmp_path, store, mode):
        return ObjectStore(store.store, read_only=mode == "r")
