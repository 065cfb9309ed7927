"""A shard replaced under every read of it is a busy object, not a damaged one: the read fails
with :class:`~zarrkit.errors.ConcurrentModificationError` (retryable), never with
:class:`~zarrkit.errors.ChunkDecodeError` (which says the stored bytes are bad)."""

from __future__ import annotations

import numpy as np
import pytest

import zarrkit
from zarrkit.errors import ChunkDecodeError, ConcurrentModificationError, StoreError

obstore = pytest.importorskip("obstore")
from zarrkit.storage.obstore import ObjectStore


class _ReplacedAfterEachRead(ObjectStore):
    """An object store another writer rewrites (same bytes, a new version) right after each
    ranged read of a version of an object."""

    def value_version(self, key):
        pinned = super().value_version(key)
        read = pinned.read

        def read_then_replaced(offset, length=None, transient=False):
            value = read(offset, length, transient)
            obstore.put(self.store, key, bytes(obstore.get(self.store, key).bytes()))
            return value

        pinned.read = read_then_replaced
        return pinned


def test_a_shard_replaced_under_every_read_raises_a_retryable_concurrent_modification():
    raw = obstore.store.MemoryStore()
    z = zarrkit.create_array(ObjectStore(raw), shape=(64,), chunks=(4,), shards=(32,), dtype="i4")
    z[:] = np.arange(64, dtype="i4")
    busy = zarrkit.open_array(_ReplacedAfterEachRead(raw), mode="r")
    with pytest.raises(ConcurrentModificationError) as info:
        busy[:]
    err = info.value
    assert not isinstance(err, ChunkDecodeError) and isinstance(err, (StoreError, OSError))
    assert err.retryable and err.key is not None and err.key.startswith("c/")
    assert "expected" in str(err) and err.key in str(err)
    # nothing is damaged: the same read through a store left alone succeeds
    np.testing.assert_array_equal(zarrkit.open_array(ObjectStore(raw), mode="r")[:], np.arange(64))


def test_concurrent_modification_is_exported_and_documented_retryable():
    assert zarrkit.errors.ConcurrentModificationError is ConcurrentModificationError
    assert "ConcurrentModificationError" in zarrkit.errors.__all__
    assert "retryable" in (ConcurrentModificationError.__doc__ or "").lower()
