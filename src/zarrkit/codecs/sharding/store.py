"""The inner chunks of a sharded array as a store.

A shard is a small key-value store of inner chunks kept in one value of the array's store.
:class:`ShardedStore` shows the inner chunks of all the shards of one array as keys of their
own (``<shard key>@<i>.<j>...``, the shard's key and the chunk's coordinates on the inner grid,
which is also how errors name them), so the engine reads and writes them exactly as it reads
and writes the chunks of an array without shards:

* reading a shard's chunks reads its index with one ranged request, then the byte ranges of the
  chunks wanted, nearby ranges coalesced into one request (:meth:`ShardedStore.get_many`; by
  their coordinates, the chunks stored one after the other in runs, :meth:`~ShardedStore.get_runs`);
* writing goes through a :class:`ShardWrite` per shard (:meth:`ShardedStore.transaction`): the
  chunks set and deleted are gathered, the old shard is read at most once (not at all when every
  chunk of the shard is replaced) and the new shard is written once, on :meth:`ShardWrite.commit`.

The engine knows this view only as a store of :class:`GroupedKeys`: it asks
:meth:`ShardedStore.coord_groups` how to group the chunks of an operation, reads a group with
:meth:`~ShardedStore.get_runs` (or :meth:`~ShardedStore.get_many`) and writes it through
:meth:`~ShardedStore.transaction`.

A read of a shard takes its index and its inner chunks from one version of it
(:class:`ShardVersion`), though a writer replaces the shard meanwhile: a file held open, a
value held in memory, an object read ``If-Match`` the ETag of its first read.  Where a store
can hold none, a read that fails to decode while the shard's index changed is made again
(:meth:`ShardedStore.changed`).  Every index entry is checked against the shard's size and
the largest inner chunk its codecs write before anything it points to is read.

Decoded shard indexes are kept (:class:`~zarrkit.codecs.sharding.index.IndexCache`, bounded
in entries and bytes), so that reading a shard's inner chunks one after the other reads its
index once.  A ShardedStore
belongs to one :class:`~zarrkit.Array` object (it is built with the array's metadata), so the
cache is that object's.  Indexes are kept only in stores that tell cheaply whether a value
was replaced (a directory: the file's inode, size and modification time, see
:meth:`~zarrkit.storage.Store.version_token`), and a kept index is used only for a version
of the shard with the token it was read with: a shard rewritten by another Array object,
process or host is read afresh.  (Elsewhere checking would cost what reading the index
costs: a request to an object store, a slice of a value in memory.)  A shard written or
deleted through zarrkit is also dropped from the caches of every Array object on the same
store at once, and a kept index pointing beyond the end of a shard rewritten meanwhile is
dropped and read again.
"""

from __future__ import annotations

import itertools
import math
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Protocol, cast, runtime_checkable

import numpy as np

from ...config import config
from ...errors import ChunkDecodeError, ConcurrentModificationError, ReadOnlyError
from ...storage import cancel
from ...storage.base import ByteRange, Store
from ...storage.memory import HeldValue
from ...storage.optimistic import until_written
from .index import EMPTY, INDEX_CACHE_MAX_ENTRIES, IndexCache
from .shard_write import ShardWrite

_EMPTY = int(EMPTY)  # as the Python int an index entry's ``tolist()`` gives

__all__ = [
    "COALESCE_GAP", "GroupWrite", "GroupedKeys", "ShardVersion", "ShardWrite", "ShardedStore", "coalesce",
]


class GroupWrite(Protocol):
    """A write of one group of keys (:meth:`GroupedKeys.transaction`): values set and deleted
    are gathered, and written together by :meth:`commit`."""

    def get_many(self, keys: Iterable[str]) -> dict[str, Any]:
        """The stored values at ``keys`` of the group (None: not stored)."""

    def set(self, key: str, value: Any) -> None: ...

    def delete(self, key: str) -> None: ...

    def commit(self) -> None:
        """Write what was set and deleted; VersionConflictError when the group changed since
        it was read (nothing was written: start again from a new transaction)."""


@runtime_checkable
class GroupedKeys(Protocol):
    """A store whose keys are best read and written in groups (the inner chunks of a shard:
    :class:`ShardedStore`).  The engine asks :meth:`coord_groups` how to group the chunks of
    an operation, reads a group with :meth:`get_runs` or :meth:`get_many` and writes it
    through :meth:`transaction`, under the lock of :meth:`lock_key`."""

    @property
    def pins_versions(self) -> bool:
        """Whether every read of a group takes its values from one version of it."""

    def coord_groups(self, coords: Sequence[tuple[int, ...]]) -> list[list[int]]:
        """The positions of the chunks at grid coordinates ``coords``, grouped."""

    def get_runs(self, coords: Sequence[tuple[int, ...]]) -> list[tuple[Any, list[int], list[int]]]:
        """The chunks at ``coords`` of one group, from one version of it, as runs of chunks
        stored one after the other: ``(data, positions, lengths)``, ``data`` holding the
        chunks at those positions of ``coords``, of ``lengths`` bytes each, back to back, in
        the order they are stored.  A chunk not stored is in no run."""

    def lock_key(self, key: str) -> str:
        """What writers of ``key`` must lock: its group's key."""

    def get_many(self, keys: Iterable[str]) -> dict[str, Any]:
        """The values at ``keys`` of one group (None: not stored)."""

    def read_apart(self, key: str) -> Any:
        """The group of ``key`` open for reading its values each on its own (``getter(limit)``
        and ``close()``), when that is best; None otherwise."""

    def changed(self, key: str) -> bool:
        """Whether the group of ``key`` changed since it was last read (a read that failed
        to decode is then worth another try)."""

    def group_stored(self, key: str) -> bool:
        """Whether the group of ``key`` is stored at all (a key it leaves out is then simply
        not among its values)."""

    def transaction(self, key: str) -> GroupWrite:
        """A write of the group holding ``key``."""

    def group_shape(self, key: str) -> tuple[int, ...]:
        """The shape of the region of the array whose chunks make up the group of ``key``."""

    def group_origin(self, key: str) -> tuple[int, ...]:
        """The grid coordinates of the first inner chunk of the shard holding ``key``."""
        return tuple(first for first, _ in self._extent(self._locate(key)[0]))

    def group_size(self, key: str) -> int:
        """How many keys the group of ``key`` has."""

    def set_group(self, key: str, values: Any, keep: Callable[[Any], bool] | None) -> None:
        """Replace the whole group of ``key`` with the chunks of ``values`` (an array of
        :meth:`group_shape`), leaving out those ``keep`` refuses."""


def ranges_reader(base: Store, key: str) -> Callable[[Sequence[ByteRange]], Any] | None:
    """``base``'s reading of several ranges of ``key`` in one call, where the store has one of
    its own (coalesced, concurrent: an object store); None where it would read them one by
    one, which the shard reader does itself (in parallel)."""
    if getattr(type(base), "get_ranges", Store.get_ranges) is Store.get_ranges:
        return None
    return lambda ranges: base.get_ranges(key, ranges)

#: Inner chunks closer than this in a shard are fetched with one request (a wasted gap costs
#: less than a round trip on any store where ranges matter).
COALESCE_GAP = 256 * 1024


def coalesce(ranges: list[tuple[int, int, Any]], gap: int = COALESCE_GAP) -> list[list[tuple[int, int, Any]]]:
    """Group ``(offset, nbytes, item)`` ranges whose gaps are at most ``gap`` bytes."""
    groups: list[list[tuple[int, int, Any]]] = []
    end = -1
    for r in sorted(ranges, key=lambda r: r[0]):
        if groups and r[0] - end <= gap:
            groups[-1].append(r)
            end = max(end, r[0] + r[1])
        else:
            groups.append([r])
            end = r[0] + r[1]
    return groups


#: the ShardedStores alive in this process (whose index caches a write must reach)
_live: weakref.WeakSet[ShardedStore] = weakref.WeakSet()
_live_lock = threading.Lock()


def _drop_index(base: Store, key: str) -> None:
    """Forget the index of shard ``key`` of ``base`` in every ShardedStore over that store."""
    with _live_lock:
        stores = list(_live)
    for s in stores:
        if s.base is base or (type(s.base) is type(base) and s.base == base):
            s.indexes.drop(key)


def _serial_map(fn: Callable[[Any], Any], items: Sequence[Any], threads: int | None = None) -> list[Any]:
    return [fn(item) for item in items]


class ShardedStore(Store):
    """The inner chunks of one sharded array, over the store holding its shards.

    Parameters
    ----------
    base : Store
        The store holding the shards.
    shard_key : callable
        Shard grid coordinates → the shard's key in ``base``.
    parse_shard_key : callable
        A key of ``base`` → shard grid coordinates, or None for other keys.
    prefix : str
        The array's key prefix in ``base`` (what :meth:`list_prefix` lists).
    sharding : resolved sharding codec
        ``grid`` (inner chunks per shard), ``index`` (a
        :class:`~zarrkit.codecs.sharding.index.ShardIndex`) and ``assemble_parts()``.
    shape : tuple of int
        The array's shape (inner chunks outside it are not listed).
    map_tasks : callable, optional
        ``map_tasks(fn, items, threads)`` → results in order: how fetches of one shard run
        in parallel (serially by default).
    shard_dims : sequence, optional
        Shards of different shapes (a rectilinear grid of shards): per dimension, the shards'
        extents on the inner chunk grid, as objects answering ``index(c)`` (the shard holding
        inner chunk ``c``), ``start(s)`` and ``length(s)``; ``sharding_at(shard coordinates)``
        then gives the resolved sharding codec of each shard.  Without them every shard has
        ``sharding.grid`` inner chunks.
    """

    def __init__(
        self,
        base: Store,
        shard_key: Callable[[tuple[int, ...]], str],
        parse_shard_key: Callable[[str], tuple[int, ...] | None],
        prefix: str,
        sharding: Any,
        shape: tuple[int, ...],
        map_tasks: Callable[..., list[Any]] = _serial_map,
        shard_dims: Sequence[Any] | None = None,
        sharding_at: Callable[[tuple[int, ...]], Any] | None = None,
    ):
        self.base = base
        self._shard_key = shard_key
        self._parse_shard_key = parse_shard_key
        self._prefix = prefix
        self.sharding = sharding
        #: inner chunks per shard along each dimension (None: shards differ, see ``shard_dims``)
        self.ratio: tuple[Any, ...] | None = tuple(sharding.grid) if shard_dims is None else None
        self._dims: tuple[Any, ...] = () if shard_dims is None else tuple(shard_dims)
        self.sharding_at = sharding_at or (lambda coords: sharding)
        self.chunk_shape: tuple[Any, ...] = tuple(sharding.chunk_shape)
        self.shape: tuple[int, ...] = tuple(shape)
        self._map = map_tasks
        self.high_latency: bool = base.high_latency
        self.supports_writes: bool = base.supports_writes
        self.read_only: bool = getattr(base, "read_only", False)
        self._partial = getattr(base, "supports_partial_reads", False)
        #: one version of a shard, held for a read (see :class:`ShardVersion`), where the
        #: store can hold one
        self._pin: Callable[[str], Any] | None = getattr(base, "value_version", None)
        #: the index each shard's last read used, where no version can be held (see
        #: :meth:`changed`)
        self._seen: dict[str, bytes] = {}
        #: decoded indexes of the shards read (see the module's documentation)
        self.indexes: IndexCache = IndexCache()
        with _live_lock:
            _live.add(self)

    def __repr__(self) -> str:
        return f"ShardedStore({self.base!r}, {self._prefix!r})"

    # -- keys ---------------------------------------------------------------------------------
    def key_of(self, coords: tuple[int, ...]) -> str:
        """The key of the inner chunk at inner-grid ``coords``."""
        if self.ratio is not None:
            shard = self._shard_key(tuple(c // r for c, r in zip(coords, self.ratio)))
        else:
            shard = self._shard_key(tuple(d.index(c) for d, c in zip(self._dims, coords)))
        return shard + "@" + ".".join(map(str, coords))

    def _shard_of(self, coords: tuple[int, ...]) -> tuple[int, ...]:
        """The coordinates of the shard holding the inner chunk at ``coords``."""
        if self.ratio is not None:
            return tuple(c // r for c, r in zip(coords, self.ratio))
        return tuple(d.index(c) for d, c in zip(self._dims, coords))

    def _locate(self, key: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """``(shard coordinates, coordinates within the shard)`` of an inner chunk key."""
        coords = self._coords(key)
        shard = self._shard_of(coords)
        return shard, tuple(c - first for c, (first, _) in zip(coords, self._extent(shard)))

    @staticmethod
    def _coords(key: str) -> tuple[int, ...]:
        tail = key.rpartition("@")[2]
        return tuple(int(c) for c in tail.split(".")) if tail else ()

    def _in_shard(self, coords: Sequence[tuple[int, ...]]) -> tuple[tuple[int, ...], np.ndarray]:
        """The shard holding the inner chunks at ``coords`` (all in one shard), and their
        coordinates in it, one row each."""
        shard_coords = self._shard_of(coords[0])
        firsts = np.array([first for first, _ in self._extent(shard_coords)], dtype=np.intp)
        return shard_coords, np.array(coords, dtype=np.intp).reshape(len(coords), -1) - firsts

    def _extent(self, shard_coords: tuple[int, ...]) -> list[tuple[int, int]]:
        """``(first inner chunk, inner chunks)`` of a shard along each dimension."""
        if self.ratio is not None:
            return [(s * r, r) for s, r in zip(shard_coords, self.ratio)]
        return [(d.start(s), d.length(s)) for d, s in zip(self._dims, shard_coords)]

    def coord_groups(self, coords: Sequence[tuple[int, ...]]) -> list[list[int]]:
        """The positions of the inner chunks at ``coords`` (on the inner grid), grouped by
        shard (in order of first appearance)."""
        groups: dict[tuple[int, ...], list[int]] = {}
        if self.ratio is not None:
            ratio = self.ratio
            for i, coord in enumerate(coords):
                groups.setdefault(tuple(c // r for c, r in zip(coord, ratio)), []).append(i)
        else:
            for i, coord in enumerate(coords):
                groups.setdefault(self._shard_of(coord), []).append(i)
        return list(groups.values())

    def prefetch(self, keys: Iterable[str]) -> bool:
        """The shards holding ``keys`` read ahead whole by the store below (its ``prefetch``):
        an inner chunk's range is known only from its shard's index, so callers ask for
        one key of each shard they read whole.

        Parameters
        ----------
        keys : iterable of str
            Keys of inner chunks (anything else is passed over).

        Returns
        -------
        bool
            Whether any shard is being fetched.
        """
        shards = (key.rpartition("@")[0] for key in keys if isinstance(key, str) and "@" in key)
        return self.base.prefetch(shard for shard, _ in itertools.groupby(shards))

    def lock_key(self, key: str) -> str:
        """The key of the shard holding ``key``: what writers of that chunk must lock."""
        return key.rpartition("@")[0]

    # -- reading ------------------------------------------------------------------------------
    def version_of(self, shard: str, shard_coords: tuple[int, ...], whole: bool = False) -> ShardVersion | None:
        """The shard ``shard`` (at ``shard_coords``) as it is now, open for reading its index
        and inner chunks from that one version (read ``whole`` in one request when asked);
        None when there is no shard.  Close it."""
        if self._pin is not None and not whole:
            value = self._pin(shard)
        elif whole or not self._partial:  # read whole at once: that is one version
            limit = self.sharding_at(shard_coords).max_shard_size
            raw = self.base.get_upto(shard, limit if limit is not None else config.max_chunk_bytes)
            value = None if raw is None else HeldValue(raw)
        else:
            value = _Unpinned(self.base, shard)
        return None if value is None else self._version(shard, shard_coords, value)

    def _version(self, shard: str, shard_coords: tuple[int, ...], value: Any) -> ShardVersion | None:
        try:
            version = ShardVersion(self, shard, shard_coords, value)
        except BaseException:
            value.close()
            raise
        if version.index is None:
            version.close()
            return None
        return version

    def _load_index(self, value: Any, shard: str, shard_coords: tuple[int, ...], cached: bool) -> np.ndarray | None:
        """The index of the version ``value`` of ``shard``: kept from an earlier read of the
        same version (when ``cached``), or read from it (None: no shard)."""
        token = value.token  # None: this store's indexes are not kept
        if token is not None and cached:
            index = self.indexes.get(shard, token)
            if index is not None:
                return index
        generation = self.indexes.generation
        sharding = self.sharding_at(shard_coords)
        raw = value.read(*sharding.index.range())
        if raw is None:
            return None
        raw = bytes(raw)  # (a kept index must not keep the shard's bytes alive)
        if self._pin is None and self._partial:
            if len(self._seen) >= INDEX_CACHE_MAX_ENTRIES:
                self._seen.clear()
            self._seen[shard] = raw
        # sharding_at is typed Any (a codec given by the caller): its index decodes to an array
        index = cast(np.ndarray, sharding.index.decode(raw, shard, value.size))
        index.flags.writeable = False  # shared by the readers of the shard
        if token is not None:
            self.indexes.put(shard, index, generation, token)
        return index

    def _versions(self, shard: str, shard_coords: tuple[int, ...], read: Callable[[ShardVersion], Any]) -> Any:
        """``read(version)`` of ``shard`` as it is now, again (a bounded number of times)
        while the version first read is gone when the chunks are read (an object store
        answering that the object changed); ``_MISSING`` when there is no shard.  The last
        attempt reads the shard whole, in one request: one version by construction, so that a
        reader makes progress however often a writer replaces the shard."""
        for attempt in range(VERSION_ATTEMPTS):
            version = self.version_of(shard, shard_coords, whole=attempt == VERSION_ATTEMPTS - 1)
            if version is None:
                return _MISSING
            try:
                got = read(version)
            finally:
                version.close()
            if got is not _GONE:
                return got
        raise ConcurrentModificationError(f"expected one version of the shard, got {VERSION_ATTEMPTS} replaced", shard)

    def read_apart(self, key: str) -> ShardVersion | None:
        """The shard holding ``key``, open for reading its inner chunks each on its own (by
        the task decoding it) rather than together, when that is best: ranged reads of one
        version held open on a low-latency store (a file), so that reading overlaps decoding
        and no buffer of the shard's size is needed; None otherwise (or when there is no
        shard).  Its index is read here, once, for those tasks."""
        if self._pin is None or self.high_latency or not self._partial:
            return None
        shard = key.rpartition("@")[0]
        value = self._pin(shard)
        if value is None or not getattr(value, "holds_open", False):  # (not a file held open)
            if value is not None:
                value.close()
            return None
        return self._version(shard, self._locate(key)[0], value)

    @property
    def pins_versions(self) -> bool:
        """Whether every read of a shard takes its index and inner chunks from one version
        (a file held open, a value held in memory, an object read ``If-Match`` its ETag)."""
        return self._pin is not None or not self._partial

    def changed(self, key: str) -> bool:
        """Whether the index of the shard holding inner chunk ``key`` is no longer the one
        its last read used, on a store whose reads cannot be pinned to one version: a read
        that failed to decode may then have mixed two versions, and is worth another try."""
        shard = key.rpartition("@")[0]
        seen = self._seen.get(shard)
        if seen is None or self.pins_versions:
            return False
        sharding = self.sharding_at(self._locate(key)[0])
        raw = self.base.get(shard, ByteRange(*sharding.index.range()))
        return raw is None or bytes(raw) != seen

    def group_stored(self, key: str) -> bool:
        """Whether the shard holding inner chunk ``key`` is stored: an inner chunk missing
        from a stored shard is one its index leaves out, not one the store lost."""
        return self.base.exists(key.rpartition("@")[0])

    def _read_one(self, key: str, limit: int | None, transient: bool) -> bytes | memoryview | None:
        shard_coords, local = self._locate(key)
        got = self._versions(key.rpartition("@")[0], shard_coords, lambda version: version.get(local, limit, transient))
        # ShardVersion.get's value: bytes, or a view of the shard's held bytes
        return None if got is _MISSING else cast("bytes | memoryview", got)

    def _get(self, key: str, byte_range: ByteRange | None) -> bytes | None:
        value = self._read_one(key, None, False)
        if value is None:
            return None
        return byte_range.slice(value) if byte_range is not None else bytes(value)

    def get_upto(self, key: str, limit: int) -> bytes | memoryview | None:
        """The inner chunk at ``key`` (see :meth:`Store.get_upto`): one whose index entry
        claims more than ``limit`` bytes is refused before it is read."""
        return self._read_one(key, limit, False)

    def get_transient_upto(self, key: str, limit: int) -> bytes | memoryview | None:
        """:meth:`get_upto` into a buffer the store may reuse (see :meth:`Store.get_transient`)."""
        return self._read_one(key, limit, True)

    def get_transient(self, key: str, byte_range: ByteRange | None = None) -> bytes | memoryview | None:
        if byte_range is not None:
            return self.get(key, byte_range)
        return self._read_one(self._checked(key), None, True)

    def get_many(self, keys: Iterable[str]) -> dict[str, Any]:
        """The inner chunks at ``keys`` (None when not stored), a shard at a time: its index
        with one request, then the chunks' byte ranges, nearby ones in one request, all from
        one version of the shard."""
        keys = list(keys)
        coords = [self._coords(key) for key in keys]
        out: dict[str, Any] = {}
        for group in self.coord_groups(coords):
            wanted = [keys[i] for i in group]
            shard_coords, local = self._in_shard([coords[i] for i in group])
            got = self._versions(  # (the lambda is called at once)
                wanted[0].rpartition("@")[0], shard_coords, lambda version: version.get_many(local)  # noqa: B023
            )
            out.update(dict.fromkeys(wanted) if got is _MISSING else zip(wanted, got))
        return out

    def get_runs(self, coords: Sequence[tuple[int, ...]]) -> list[tuple[Any, list[int], list[int]]]:
        """The inner chunks at ``coords`` (on the inner grid, all in one shard), from one
        version of the shard, as runs of chunks stored one after the other, in the order they
        are stored: ``(data, positions, lengths)``, ``data`` holding the chunks at those
        positions of ``coords``, of ``lengths`` bytes each, back to back.  A chunk not stored
        (or no shard) is in no run."""
        shard_coords, local = self._in_shard(coords)
        got = self._versions(
            self._shard_key(shard_coords), shard_coords, lambda version: version.get_runs(local)
        )
        return [] if got is _MISSING else cast("list[tuple[Any, list[int], list[int]]]", got)

    def list_prefix(self, prefix: str) -> Iterator[str]:
        """The keys of the stored inner chunks inside the array (read from the shard indexes)."""
        limits = [-(-s // c) for s, c in zip(self.shape, self.chunk_shape)]
        shard, at, _ = prefix.partition("@")
        # a prefix naming a shard: that shard's chunks only
        keys = [shard] if at else self.base.list_prefix(self._prefix)
        for key in keys:
            shard_coords = self._parse_shard_key(key)
            if shard_coords is None:
                continue
            version = self.version_of(key, shard_coords)
            if version is None:
                continue
            index = cast(np.ndarray, version.index)  # _version returns only versions with an index
            version.close()
            firsts = [first for first, _ in self._extent(shard_coords)]
            for local in np.argwhere(index[..., 0] != EMPTY):
                coords = tuple(int(f + i) for f, i in zip(firsts, local))
                if all(c < m for c, m in zip(coords, limits)):
                    inner = self.key_of(coords)
                    if inner.startswith(prefix):
                        yield inner

    # -- writing ------------------------------------------------------------------------------
    def transaction(self, key: str) -> ShardWrite:
        """A write of the shard holding ``key``: chunks set and deleted in it are written
        together, in one new shard, by :meth:`ShardWrite.commit`."""
        if self.read_only or not self.supports_writes:
            raise ReadOnlyError(f"{self.base!r} is read-only")
        return ShardWrite(self, self._locate(key)[0])

    def group_shape(self, key: str) -> tuple[int, ...]:
        """The shape of the shard holding inner chunk ``key``."""
        return tuple(self.sharding_at(self._locate(key)[0]).spec.shape)

    def group_origin(self, key: str) -> tuple[int, ...]:
        """The grid coordinates of the first inner chunk of the shard holding ``key``."""
        return tuple(first for first, _ in self._extent(self._locate(key)[0]))

    def group_size(self, key: str) -> int:
        """How many inner chunks the shard holding ``key`` has (inside the array or not)."""
        return math.prod(self.sharding_at(self._locate(key)[0]).grid)

    def set_group(self, key: str, values: np.ndarray, keep: Callable[[np.ndarray], bool] | None) -> None:
        """Write the shard holding inner chunk ``key`` anew, from ``values`` (an array of the
        shard's shape): all its inner chunks encoded at once, without those ``keep`` refuses
        (and no shard when it refuses all), whatever the shard held before."""
        self._check_writable()
        shard_coords = self._locate(key)[0]
        shard = self._shard_key(shard_coords)
        sharding = self.sharding_at(shard_coords)
        firsts = [first for first, _ in self._extent(shard_coords)]
        at = shard + "@"

        def name(local: tuple[int, ...]) -> str:
            return at + ".".join(str(f + i) for f, i in zip(firsts, local))

        with sharding.encoded(values, shard, keep, name) as chunks:
            self._write_shard(shard, sharding.assemble_parts(chunks, shard))

    def forget_index(self, shard: str) -> None:
        """Forget the kept index of ``shard`` in every sharded store over this one's base."""
        _drop_index(self.base, shard)

    def _write_shard(self, shard: str, parts: list[Any]) -> None:
        """Store a shard's parts (none: delete it), and forget its index everywhere."""
        try:
            if parts:
                self.base.set_parts(shard, parts)
            else:
                self.base.delete(shard)
        finally:
            _drop_index(self.base, shard)

    def _set(self, key: str, value: bytes | memoryview) -> None:
        self._change(key, value)

    def _delete(self, key: str) -> None:
        self._change(key, None)

    def _change(self, key: str, value: Any) -> None:
        """Set (or delete, for None) one inner chunk: its shard's read-modify-write."""

        def attempt() -> None:
            txn = self.transaction(key)
            if value is None:
                txn.delete(key)
            else:
                txn.set(key, value)
            txn.commit()

        until_written(attempt, key.rpartition("@")[0], "the shard")

    def _check_writable(self) -> None:
        if self.read_only or not self.supports_writes:
            raise ReadOnlyError(f"{self.base!r} is read-only")
        cancel.check()

    def inner_in_bounds(self, shard_coords: tuple[int, ...]) -> int:
        """How many inner chunks of this shard intersect the array."""
        count = 1
        for (first, r), c, n in zip(self._extent(shard_coords), self.chunk_shape, self.shape):
            last = min(first + r, -(-n // c))
            count *= max(last - first, 0)
        return count


#: reads of a shard whose version is gone by the time its chunks are read, before giving up
VERSION_ATTEMPTS = 4
_MISSING = object()  # no shard
_GONE = object()  # the version of the shard being read is gone: read it again


class _Unpinned:
    """A shard read with the base store's ranged reads, on a store that cannot hold one
    version of a value (its reads may come from different versions: see
    :meth:`ShardedStore.changed`)."""

    size = None

    def __init__(self, base: Store, key: str):
        self.base = base
        self.key = key
        self.token = base.version_token(key)
        read_ranges = ranges_reader(base, key)
        if read_ranges is not None:
            self.read_ranges = read_ranges

    def read(self, offset: int, length: int | None = None, transient: bool = False) -> Any:
        if transient and length:
            return self.base.get_transient(self.key, ByteRange(offset, length))
        return self.base.get(self.key, ByteRange(offset, length))

    def close(self) -> None:
        pass


class ShardVersion:
    """One version of one shard, open for reading: its index, and the inner chunks that index
    points to, all read from that version.

    The version is the store's ``value_version(key)`` where it has one -- a file held open
    (read through although it is replaced meanwhile), a value held in memory, an object whose
    later reads ask for the ETag of the first (``If-Match``) -- which has ``size`` (None until
    known), ``token`` (what a kept index is kept with, None: not kept),
    ``read(offset, length=None, transient=False)`` (a suffix for a negative offset; None when
    the value is missing, or its version gone), optionally ``read_ranges(ranges)``, and
    ``close()``.  A store without it is read range by range, as it is now.
    """

    def __init__(self, store: ShardedStore, shard: str, shard_coords: tuple[int, ...], value: Any):
        self.store = store
        self.shard = shard
        self.coords = shard_coords
        self.value = value
        self.index = store._load_index(value, shard, shard_coords, True)

    def close(self) -> None:
        self.value.close()

    def _reload(self) -> bool:
        """Read the index again from this version, when the one used was kept (and a read
        through it failed: it was not this version's); False when it was read from it."""
        if not self.store.indexes.holds(self.shard, self.index):
            return False
        self.store.indexes.drop(self.shard)
        self.index = self.store._load_index(self.value, self.shard, self.coords, False)
        return self.index is not None

    def get(self, local: tuple[int, ...], limit: int | None = None, transient: bool = False) -> Any:
        """The inner chunk at ``local`` in this shard (None when not stored), refused unread
        when its index entry claims more than ``limit`` bytes; ``_GONE`` when this version is."""
        while True:
            off, n = self.index[local].tolist()  # type: ignore[index]
            if off == _EMPTY:
                return None
            if limit is not None and n > limit:
                raise ChunkDecodeError(
                    f"shard index entry of inner chunk {local} claims {n} bytes, more than the {limit} its "
                    "codecs write at most", self.shard
                )
            raw = self.value.read(off, n, transient)
            if raw is None:
                return _GONE
            if len(raw) >= n:
                return raw
            if not self._reload():
                raise self._beyond_end(local, off, n)

    def _beyond_end(self, local: tuple[int, ...], off: int, n: int) -> ChunkDecodeError:
        return ChunkDecodeError(
            f"shard index entry of inner chunk {local} points to bytes {off}..{off + n}, beyond the shard's end",
            self.shard,
        )

    def _read_span(self, span: ByteRange) -> Any:
        return self.value.read(span.offset, span.length)

    def getter(self, limit: int) -> Callable[[str], Any]:
        """The read of one inner chunk of this version (see :meth:`get`) into a buffer the
        store reuses, for tasks reading the chunks of a shard held open each on its own."""

        locate = self.store._locate

        def get(key: str) -> Any:
            raw = self.get(locate(key)[1], limit, True)
            if raw is _GONE:  # (a version held open is never gone)
                raise ConcurrentModificationError("expected the version held open, got it replaced", self.shard)
            return raw

        return get

    def _read(self, local: np.ndarray) -> Any:
        """The byte ranges of the stored inner chunks at ``local`` (an array of coordinates in
        the shard, one row each), nearby ones read together: ``(groups, raws)``, each group of
        ``(offset, nbytes, position in local)`` sorted by offset, with the bytes read for it
        from its first offset on; ``_GONE`` when this version is."""
        while True:
            index = cast(np.ndarray, self.index)
            entries = index[tuple(local.T)].reshape(-1, 2).tolist()
            groups = coalesce([(off, n, i) for i, (off, n) in enumerate(entries) if off != _EMPTY])
            spans = [ByteRange(g[0][0], max(o + n for o, n, _ in g) - g[0][0]) for g in groups]
            read_ranges = getattr(self.value, "read_ranges", None)
            if read_ranges is not None:  # every span in one call to the store
                raws = read_ranges(spans) if spans else []
            else:
                raws = self.store._map(self._read_span, spans, None)
            if raws is None or any(raw is None for raw in raws):
                return _GONE
            if all(len(raw) >= (span.length or 0) for span, raw in zip(spans, raws)):
                return groups, raws
            if not self._reload():
                o, n, i = next(
                    r for g, raw in zip(groups, raws) for r in g if r[0] + r[1] > g[0][0] + len(raw)
                )
                raise self._beyond_end(tuple(int(c) for c in local[i]), o, n)

    def get_many(self, local: np.ndarray) -> Any:
        """The inner chunks at ``local`` (an array of coordinates in the shard, one row each)
        in this version, a list (None: not stored); ``_GONE`` when this version is."""
        got = self._read(local)
        if got is _GONE:
            return got
        found: list[Any] = [None] * len(local)
        for group, raw in zip(*got):
            view = memoryview(raw)
            start = group[0][0]
            for o, n, i in group:
                found[i] = view[o - start : o - start + n]
        return found

    def get_runs(self, local: np.ndarray) -> Any:
        """The inner chunks at ``local`` (see :meth:`get_many`) in this version, as runs of
        chunks stored one after the other (see :meth:`ShardedStore.get_runs`); ``_GONE``
        when this version is."""
        got = self._read(local)
        if got is _GONE:
            return got
        runs: list[tuple[Any, list[int], list[int]]] = []
        for group, raw in zip(*got):
            view = memoryview(raw)
            start = end = group[0][0]
            first = start
            positions: list[int] = []
            lengths: list[int] = []
            for o, n, i in group:
                if o != end and positions:
                    runs.append((view[first - start : end - start], positions, lengths))
                    positions, lengths = [], []
                if not positions:
                    first = end = o
                positions.append(i)
                lengths.append(n)
                end += n
            if positions:
                runs.append((view[first - start : end - start], positions, lengths))
        return runs
