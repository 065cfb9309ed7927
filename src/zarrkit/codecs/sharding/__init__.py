"""Sharding: many inner chunks stored in one object (a shard) with an index.

* :mod:`~zarrkit.codecs.sharding.codec`: the ``sharding_indexed`` codec, whole shards encoded
  and decoded;
* :mod:`~zarrkit.codecs.sharding.index`: the shard index, read (decoded and checked against
  the shard's size), written, and kept once decoded;
* :mod:`~zarrkit.codecs.sharding.store`: the inner chunks of a sharded array as a store of
  keys read and written in groups (:class:`GroupedKeys`), which is how the chunk engine
  reads and writes them.
"""

from .codec import ShardingCodec, morton_sorted
from .index import EMPTY, IndexCache, ShardIndex
from .store import COALESCE_GAP, GroupedKeys, GroupWrite, ShardedStore

__all__ = [
    "COALESCE_GAP", "EMPTY", "GroupWrite", "GroupedKeys", "IndexCache", "ShardIndex", "ShardedStore",
    "ShardingCodec", "morton_sorted",
]
