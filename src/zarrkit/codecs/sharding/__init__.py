"""Sharding: many inner chunks stored in one object (a shard) with an index.

* :mod:`~zarrkit.codecs.sharding.codec`: the ``sharding_indexed`` codec, whole shards encoded
  and decoded;
* :mod:`~zarrkit.codecs.sharding.index`: the shard index, read (decoded and checked against
  the shard's size), written, and kept once decoded;
* :mod:`~zarrkit.codecs.sharding.store`: the inner chunks of a sharded array as a store of
  keys read and written in groups (:class:`GroupedKeys`), which is how the chunk engine
  reads and writes them.
"""

from .codec import (
    INDEX_LOCATION,
    MAX_UINT_64,
    SUBCHUNK_WRITE_ORDER,
    IndexLocation,
    ShardingCodec,
    ShardingCodecIndexLocation,
    SubchunkWriteOrder,
    colexicographic_order_coords,
    lexicographic_order_coords,
    morton_order_coords,
    morton_sorted,
    shards_argument,
    subchunk_order,
    with_write_settings,
)
from .index import EMPTY, IndexCache, ShardIndex
from .store import COALESCE_GAP, GroupedKeys, GroupWrite, ShardedStore

__all__ = [
    "INDEX_LOCATION", "IndexLocation", "MAX_UINT_64", "SUBCHUNK_WRITE_ORDER", "ShardingCodecIndexLocation",
    "SubchunkWriteOrder", "colexicographic_order_coords", "lexicographic_order_coords",
    "morton_order_coords", "shards_argument", "subchunk_order", "with_write_settings",
    "COALESCE_GAP", "EMPTY", "GroupWrite", "GroupedKeys", "IndexCache", "ShardIndex", "ShardedStore",
    "ShardingCodec", "morton_sorted",
]
