"""What is stored for an array: its stored objects (chunks, or shards) and checking them, and
its metadata documents as they are stored now (:func:`current_documents`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ..metadata.consolidated import ConsolidatedStore
from ..storage.base import ByteRange, Store
from .chunks import ChunkContext, names_store

__all__ = ["iter_stored", "count_stored_chunks", "stored_totals", "check_stored", "current_documents"]


def current_documents(store: Store) -> Store:
    """``store`` as a read-modify-write of a metadata document must see it: ``store`` itself,
    or, for a store that answers metadata from a snapshot (a consolidated hierarchy opened
    with :func:`~zarrkit.open_consolidated`), a view reading the documents as they are stored
    now and writing through the snapshot, which so learns what was written.

    A shape, fill value or attributes computed from a snapshot and written back would undo
    what other writers stored since: their appended rows hidden, then deleted as leftovers.
    """
    if isinstance(store, ConsolidatedStore):
        return _CurrentDocuments(store)
    return store


class _CurrentDocuments(Store):
    """Reads from the store under a consolidated snapshot; writes through the snapshot."""

    def __init__(self, snapshot: ConsolidatedStore):
        self._snapshot = snapshot
        self._stored: Store = snapshot.store
        self.read_only = snapshot.read_only
        self.supports_writes = snapshot.supports_writes
        self.supports_deletes = snapshot.supports_deletes

    def _get(self, key: str, byte_range: ByteRange | None) -> bytes | None:
        return self._stored.get(key, byte_range)

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes | None]:
        return self._stored.get_many(keys)

    def _set(self, key: str, value: bytes | memoryview) -> None:
        self._snapshot.set(key, value)

    def _delete(self, key: str) -> None:
        self._snapshot.delete(key)

    @property
    def supports_conditional_writes(self) -> bool:  # type: ignore[override]
        """Whether the store under the snapshot has conditional writes."""
        return self._snapshot.supports_conditional_writes

    @property
    def versions_are_contents(self) -> bool:  # type: ignore[override]
        """Whether the versions of the store under this one are contents."""
        return getattr(self._snapshot, "versions_are_contents", False)

    @property
    def atomic_deletes(self) -> bool:  # type: ignore[override]
        """Whether the conditional deletes of the store are atomic."""
        return getattr(self._snapshot, "atomic_deletes", True)

    def _get_versioned(self, key: str, limit: int | None) -> tuple[Any, Any]:
        return self._stored.get_versioned(key, limit)

    def _set_if(self, key: str, value: bytes | memoryview, version: Any) -> Any:
        return self._snapshot.set_if(key, value, version)

    def _delete_if(self, key: str, version: Any) -> None:
        self._snapshot.delete_if(key, version)

    def list_prefix(self, prefix: str) -> Iterator[str]:
        return self._stored.list_prefix(prefix)

    def list_dir(self, prefix: str = "") -> list[str]:
        return self._stored.list_dir(prefix)

    def __repr__(self) -> str:
        return f"current documents of {self._snapshot!r}"


def iter_stored(ctx: ChunkContext, meta: Any, within: bool = True) -> Iterator[tuple[tuple[int, ...], str]]:
    """``(grid coordinates, key)`` of every stored object of the array (its chunks, or its
    shards), inside the array's grid unless ``within`` is False."""
    coords_of = _grid_coords(ctx, meta, within)
    for key in ctx.store.list_prefix(ctx.prefix):
        coords = coords_of(key)
        if coords is not None:
            yield coords, key


def _grid_coords(ctx: ChunkContext, meta: Any, within: bool = True) -> Callable[[str], tuple[int, ...] | None]:
    """The grid coordinates of a listed key of the array (None for its metadata documents and
    other keys, and for objects outside its grid unless ``within`` is False)."""
    n = len(ctx.prefix)
    cdata = meta.storage_grid.grid_shape

    def coords_of(key: str) -> tuple[int, ...] | None:
        coords = meta.parse_chunk_key(key[n:])
        if coords is None or (within and not all(c < m for c, m in zip(coords, cdata))):
            return None
        return coords

    return coords_of


@names_store
def count_stored_chunks(ctx: ChunkContext, meta: Any) -> int:
    """How many chunks are stored (the inner chunks of a sharded array, from its indexes)."""
    if ctx.chunks is ctx.store:
        return sum(1 for _ in iter_stored(ctx, meta))
    return sum(1 for _ in ctx.chunks.list_prefix(""))


def stored_totals(ctx: ChunkContext, meta: Any) -> tuple[int, int] | None:
    """``(bytes stored, chunks stored)`` of an array whose chunks live beside its metadata,
    unsharded, from one listing with sizes (what ``info`` shows: a store that lists sizes with
    its keys answers in one listing, not a request per chunk); None for the other arrays."""
    if ctx.chunks is not ctx.store or getattr(meta, "sharding", None) is not None:
        return None
    coords_of = _grid_coords(ctx, meta)
    nbytes = nchunks = 0
    for key, size in ctx.store.list_prefix_sizes(ctx.prefix):
        nbytes += size
        nchunks += coords_of(key) is not None
    return nbytes, nchunks


@names_store
def check_stored(ctx: ChunkContext, key: str) -> int:
    """Decode every chunk stored at ``key`` (a chunk, or the inner chunks of a shard) and
    return how many there are; raises :class:`~zarrkit.errors.ChunkDecodeError` naming the
    first that fails."""
    if ctx.chunks is ctx.store:
        raw = ctx.store.get(key)
        if raw is None:
            return 0
        codec = ctx.codec
        if ctx.codec_at is not None:  # chunks differ in shape: the chain of this one
            codec = ctx.codec_at(ctx.meta.parse_chunk_key(key[len(ctx.prefix):]))
        codec.decode(raw, key)
        return 1
    inner = list(ctx.chunks.list_prefix(key + "@"))
    for inner_key, raw in ctx.chunks.get_many(inner).items():
        if raw is not None:
            ctx.codec.decode(raw, inner_key)
    return len(inner)
