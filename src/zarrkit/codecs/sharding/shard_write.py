"""A write of one shard: the inner chunks set and deleted in it, written together as one new
shard (see :class:`~zarrkit.codecs.sharding.store.ShardedStore`)."""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable
from typing import Any

import numpy as np

from ...config import config
from ...storage.base import ABSENT
from .index import EMPTY

#: the store this module serves (store.py, which imports this module: not imported back)
ShardedStore = Any

__all__ = ["ShardWrite"]


class ShardWrite:
    """Chunks set and deleted in one shard, written as a new shard by :meth:`commit`.

    :meth:`get_many` reads the old shard whole, once; :meth:`commit` reads it (to keep the
    chunks not replaced, byte for byte) only when the chunks set or deleted do not cover the
    shard and it was not read already.  ``set`` and ``delete`` may be called from several threads.
    """

    def __init__(self, store: ShardedStore, shard_coords: tuple[int, ...]):
        self.store = store
        self.shard_coords = shard_coords
        self.key: str = store._shard_key(shard_coords)
        self.sharding: Any = store.sharding_at(shard_coords)
        self._old: dict[tuple[int, ...], Any] | None = None
        self._new: dict[tuple[int, ...], Any] = {}
        self._lock = threading.Lock()
        self._version: Any = None  # the version of the shard read, on a store that has them
        #: the shard as read (None: none was read, or there was none): what a claim puts back
        self.before: Any = None
        #: the version of the shard written conditionally (ABSENT: deleted), None otherwise,
        #: and the bytes written so
        self.written_version: Any = None
        self.written: bytes | None = None

    def _load(self) -> dict[tuple[int, ...], Any]:
        if self._old is None:
            old: dict[tuple[int, ...], Any] = {}
            limit = self.sharding.max_shard_size
            limit = limit if limit is not None else config.max_chunk_bytes
            base = self.store.base
            if base.supports_conditional_writes:  # the version the new shard is conditioned on
                raw, self._version = base.get_versioned(self.key, limit)
            else:
                raw = base.get_upto(self.key, limit)
            self.before = None if raw is None else bytes(raw)
            if raw is not None:
                index, view = self.sharding.index.split(raw, self.key)
                for row in np.argwhere(index[..., 0] != EMPTY):
                    local = tuple(int(i) for i in row)
                    off, n = index[local]
                    old[local] = view[int(off) : int(off) + int(n)]
            self._old = old
        return self._old

    def get_many(self, keys: Iterable[str]) -> dict[str, Any]:
        """The stored inner chunks at ``keys`` of this shard (None: not stored)."""
        old = self._load()
        return {k: old.get(self.store._locate(k)[1]) for k in keys}

    def set(self, key: str, value: Any) -> None:
        local = self.store._locate(key)[1]
        data = value if isinstance(value, (bytes, bytearray)) else bytes(memoryview(value).cast("B"))
        with self._lock:
            self._new[local] = data

    def delete(self, key: str) -> None:
        with self._lock:
            self._new[self.store._locate(key)[1]] = None

    def commit(self) -> None:
        """Write the new shard (or delete it when no chunk is left in it).  A shard that keeps
        chunks of the one read is written on the condition that it is still that version,
        where the store has versions: VersionConflictError when it is not (nothing was
        written: start again from a new transaction)."""
        store = self.store
        # a shard whose chunks are all replaced is written without reading it: on a store with
        # versions, all of them, those outside the array too (another writer's rows, out of
        # sight until its append shows them, may be there)
        whole = math.prod(self.sharding.grid) if store.base.supports_conditional_writes \
            else store.inner_in_bounds(self.shard_coords)
        if self._old is None and len(self._new) >= whole:
            chunks: dict[tuple[int, ...], Any] = {}
        else:
            chunks = dict(self._load())
        for local, value in self._new.items():
            if value is None:
                chunks.pop(local, None)
            else:
                chunks[local] = value
        # (a shard left without chunks is deleted -- conditionally, where the store's delete
        # is atomic; where it is a version check and then a delete, a write landing between
        # the two would go with it: the empty shard, its index alone, is written instead)
        kept = self._version not in (None, ABSENT) and not store.base.atomic_deletes
        parts = self.sharding.assemble_parts(chunks, self.key, keep_empty=kept)
        if self._version is None:  # written whole, or a store without versions
            store._write_shard(self.key, parts)
            return
        base = store.base
        try:
            if parts:
                self.written = b"".join(parts)
                self.written_version = base.set_if(self.key, self.written, self._version)
            elif self._version is not ABSENT:
                base.delete_if(self.key, self._version)
                self.written_version = ABSENT
        finally:
            store.forget_index(self.key)
