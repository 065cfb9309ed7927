"""A shard replaced under every read of it is a busy object, not a damaged one: after a few
ranged reads of versions that are gone, the read takes the shard whole in one request (one
version by construction) and returns its data; it never fails with
:class:`~zarrkit.errors.ChunkDecodeError` (which says the stored bytes are bad)."""

from __future__ import annotations

import numpy as np
import pytest

import zarrkit
from zarrkit.errors import ConcurrentModificationError

obstore = pytest.importorskip("obstore")
from zarrkit.storage.obstore import ObjectStore


class _ReplacedAfterEachRead(ObjectStore):
    """An object store another writer rewrites (same bytes, a new version) right after each
    ranged read of a version of an object; ``whole`` counts the reads of whole objects."""

    whole = 0

    def value_version(self, key):
        pinned = super().value_version(key)
        read = pinned.read

        def read_then_replaced(offset, length=None, transient=False):
            value = read(offset, length, transient)
            obstore.put(self.store, key, bytes(obstore.get(self.store, key).bytes()))
            return value

        pinned.read = read_then_replaced
        return pinned

    def get_upto(self, key, limit):
        type(self).whole += 1
        return super().get_upto(key, limit)


def test_a_shard_replaced_under_every_ranged_read_is_read_whole_in_one_version():
    raw = obstore.store.MemoryStore()
    z = zarrkit.create_array(ObjectStore(raw), shape=(64,), chunks=(4,), shards=(32,), dtype="i4")
    z[:] = np.arange(64, dtype="i4")
    busy = zarrkit.open_array(_ReplacedAfterEachRead(raw), mode="r")
    np.testing.assert_array_equal(busy[:], np.arange(64))  # no ChunkDecodeError, no mixed values
    assert _ReplacedAfterEachRead.whole >= 2  # each of the 2 shards, read whole at the end
    np.testing.assert_array_equal(busy[5:9], np.arange(5, 9))  # one inner chunk of each shard


def test_concurrent_modification_is_exported_and_documented_retryable():
    assert zarrkit.errors.ConcurrentModificationError is ConcurrentModificationError
    assert "ConcurrentModificationError" in zarrkit.errors.__all__
    assert "retryable" in (ConcurrentModificationError.__doc__ or "").lower()
