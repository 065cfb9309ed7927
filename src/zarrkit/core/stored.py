"""What is stored for an array: its stored objects (chunks, or shards) and checking them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .chunks import ChunkContext, names_store

__all__ = ["iter_stored", "count_stored_chunks", "check_stored"]


def iter_stored(ctx: ChunkContext, meta: Any, within: bool = True) -> Iterator[tuple[tuple[int, ...], str]]:
    """``(grid coordinates, key)`` of every stored object of the array (its chunks, or its
    shards), inside the array's grid unless ``within`` is False."""
    prefix = ctx.prefix
    n = len(prefix)
    cdata = meta.storage_grid.grid_shape
    for key in ctx.store.list_prefix(prefix):
        coords = meta.parse_chunk_key(key[n:])
        if coords is not None and (not within or all(c < m for c, m in zip(coords, cdata))):
            yield coords, key


@names_store
def count_stored_chunks(ctx: ChunkContext, meta: Any) -> int:
    """How many chunks are stored (the inner chunks of a sharded array, from its indexes)."""
    if ctx.chunks is ctx.store:
        return sum(1 for _ in iter_stored(ctx, meta))
    return sum(1 for _ in ctx.chunks.list_prefix(""))


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
