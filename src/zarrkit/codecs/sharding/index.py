"""The index of a shard: where each inner chunk's bytes are.

``grid + (2,)`` pairs ``(offset, nbytes)`` as little-endian uint64 (``2**64 - 1`` for an empty
chunk), encoded with the index codecs to a fixed size and placed at the ``start`` or ``end`` of
the shard.  Every entry is checked against the shard's size and the largest inner chunk its
codecs write before anything it points to is allocated or read.  Decoded indexes are kept by
the store view of a sharded array (:class:`IndexCache`).
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from typing import Any

import numpy as np

from ...config import config
from ...errors import ChunkDecodeError, MetadataError
from ..chain import CodecChain

__all__ = ["EMPTY", "IndexCache", "ShardIndex"]

EMPTY = np.uint64(2**64 - 1)


class ShardIndex:
    """The index of the shards of one shape: its place and size, read (decoded and checked)
    and written (encoded).

    Parameters
    ----------
    chain : CodecChain
        The index codecs, resolved for the ``grid + (2,)`` uint64 index.
    grid : tuple of int
        Inner chunks per shard along each dimension.
    at_end : bool
        Whether the index follows the chunks (``index_location='end'``).
    max_inner_size : int or None
        The largest stored inner chunk the inner codecs write (None: no bound but
        ``config.max_chunk_bytes``).
    """

    def __init__(self, chain: CodecChain, grid: tuple[int, ...], at_end: bool, max_inner_size: int | None):
        nbytes = chain.fixed_encoded_size()
        if nbytes is None:
            raise MetadataError(
                "sharding_indexed: index_codecs must encode the index to a fixed size (a "
                f"serializer of raw memory and checksums such as crc32c), got {chain.to_json()}"
            )
        self.chain = chain
        self.grid = grid
        #: computed, not measured: an index is allocated only when a shard is read or written
        self.nbytes = nbytes
        self.at_end = at_end
        self.max_inner_size = max_inner_size
        #: the largest shard the codecs write (None: no bound)
        self.max_shard_size: int | None = None if max_inner_size is None else nbytes + math.prod(grid) * max_inner_size

    def range(self) -> tuple[int, int | None]:
        """``(offset, length)`` of the index (a negative offset means a suffix)."""
        if self.at_end:
            return -self.nbytes, None
        return 0, self.nbytes

    def decode(self, raw: Any, key: str, shard_size: int | None = None) -> np.ndarray:
        """The ``grid + (2,)`` uint64 index, every entry checked (see :meth:`check`)."""
        got = 0 if raw is None else len(raw)
        if got < self.nbytes:
            raise ChunkDecodeError(self.too_short(got), key)
        if got != self.nbytes:
            raise ChunkDecodeError(f"shard index: expected {self.nbytes} bytes, got {got}", key)
        index = self.chain.decode(raw, key)
        self.check(index, key, shard_size)
        return index

    def check(self, index: np.ndarray, key: str, shard_size: int | None = None) -> None:
        """Refuse an index with an entry no writer makes, before anything it points to is
        allocated or read: an inner chunk larger than the inner codecs write, or reaching
        beyond the shard (its size when known, else the largest shard the codecs write).  The
        error names the shard and the inner chunk's place in it."""
        offsets = index[..., 0]
        lengths = index[..., 1]
        used = offsets != EMPTY
        inner = self.max_inner_size if self.max_inner_size is not None else config.max_chunk_bytes
        limit = shard_size if shard_size is not None else self.max_shard_size
        if limit is None:
            limit = self.nbytes + math.prod(self.grid) * inner
        top = np.uint64(min(limit, 2**64 - 1))
        # an inner chunk not stored has both its offset and its length 2^64-1
        half = used != (lengths != EMPTY)
        big = used & (lengths > np.uint64(min(inner, 2**64 - 1)))
        # in uint64 without wrapping around: top - length only where length <= top
        past = used & ((lengths > top) | (offsets > top - np.minimum(lengths, top)))
        bad = half | big | past
        if not bad.any():
            return
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        off, n = (int(v) for v in index[where])
        if half[where]:
            why = f"has offset {off} and length {n}: only both 2^64-1 mark a chunk not stored"
        elif big[where]:
            why = f"claims {n} bytes, more than the {inner} its codecs write at most"
        else:
            size = f"{limit} bytes" if shard_size is not None else f"at most {limit} bytes from its codecs"
            why = f"claims bytes {off}..{off + n}, beyond the shard's end ({size})"
        raise ChunkDecodeError(f"shard index entry of inner chunk {where} {why}", key)

    def too_short(self, size: int) -> str:
        """What is wrong with a stored shard of ``size`` bytes, fewer than its index takes."""
        return f"the stored shard is too short to hold its index: {size} bytes, the index takes {self.nbytes}"

    def split(self, raw: Any, key: str) -> tuple[np.ndarray, memoryview]:
        """The index and the shard's bytes of a whole stored shard."""
        view = memoryview(raw).cast("B") if not isinstance(raw, bytes) else memoryview(raw)
        n = len(view)
        if n < self.nbytes:
            raise ChunkDecodeError(self.too_short(n), key)
        idx_raw = view[n - self.nbytes :] if self.at_end else view[: self.nbytes]
        return self.decode(bytes(idx_raw), key, n), view

    def encode(self, index: np.ndarray, key: str) -> bytes:
        """The stored bytes of ``index``."""
        return bytes(self.chain.encode(index, key))

    def empty(self) -> np.ndarray:
        """An index of a shard holding no chunk, to fill in."""
        return np.full(self.grid + (2,), EMPTY, dtype="<u8")


#: bounds of the decoded shard indexes one array keeps (an index of 4^3 inner chunks takes 1 KiB)
INDEX_CACHE_MAX_ENTRIES = 4096
INDEX_CACHE_MAX_BYTES = 16 << 20


class IndexCache:
    """Decoded shard indexes by shard key, least recently used dropped first beyond
    ``max_entries`` indexes or ``max_bytes`` bytes of them; safe to share between threads.

    An index read while the same store wrote or dropped any index (:meth:`drop`) is not kept:
    a reader that fetched the old index before a write must not store it after the write's
    drop (:meth:`generation` is taken before the fetch, :meth:`put` checks it).
    """

    def __init__(self, max_entries: int = INDEX_CACHE_MAX_ENTRIES, max_bytes: int = INDEX_CACHE_MAX_BYTES):
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._entries: OrderedDict[str, tuple[Any, np.ndarray]] = OrderedDict()
        self._bytes = 0
        self._generation = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def generation(self) -> int:
        return self._generation

    def get(self, key: str, token: Any = None) -> np.ndarray | None:
        """The kept index of ``key``, if it was kept with ``token`` (the shard unchanged)."""
        entries = self._entries
        entry = entries.get(key)
        if entry is None or entry[0] != token:
            return None
        with self._lock:
            if key in entries:
                entries.move_to_end(key)
        return entry[1]

    def put(self, key: str, index: np.ndarray, generation: int, token: Any = None) -> None:
        """Keep ``index``, read while the shard had ``token``, unless an index was dropped
        since ``generation`` was taken."""
        if index.nbytes > self.max_bytes:
            return
        with self._lock:
            if generation != self._generation:
                return
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= old[1].nbytes
            self._entries[key] = (token, index)
            self._bytes += index.nbytes
            while len(self._entries) > self.max_entries or self._bytes > self.max_bytes:
                self._bytes -= self._entries.popitem(last=False)[1][1].nbytes

    def holds(self, key: str, index: np.ndarray | None) -> bool:
        """Whether ``index`` is the one kept for ``key``."""
        entry = self._entries.get(key)
        return entry is not None and entry[1] is index

    def drop(self, key: str) -> None:
        """Forget the index of ``key`` (its shard was written or deleted)."""
        with self._lock:
            self._generation += 1
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= old[1].nbytes
