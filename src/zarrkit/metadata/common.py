"""Validation shared by the v2 and v3 metadata dialects."""

from __future__ import annotations

import math
from typing import Any

from ..codecs.sharding import ShardingCodec
from ..config import config
from ..errors import MetadataError

MAX_NDIM = 64
MAX_DIM_LENGTH = (1 << 63) - 1


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def parse_document(doc: Any, required: tuple[str, ...] | list[str], key: str | None) -> dict[str, Any]:
    """``doc`` checked to be a JSON object holding every field in ``required``; errors name
    ``key``."""
    if not isinstance(doc, dict):
        raise MetadataError(f"expected a JSON object, got {type(doc).__name__}", key)
    missing = [k for k in required if k not in doc]
    if missing:
        raise MetadataError(f"missing required field(s) {missing}", key)
    return doc


def parse_shape_field(value: Any, key: str | None, field: str = "shape") -> tuple[int, ...]:
    if not isinstance(value, list):
        raise MetadataError(f"{field}: expected a list of integers, got {value!r}", key)
    if len(value) > MAX_NDIM:
        raise MetadataError(f"{field}: expected at most {MAX_NDIM} dimensions, got {len(value)}", key)
    for v in value:
        if not _is_int(v) or v < 0 or v > MAX_DIM_LENGTH:
            raise MetadataError(f"{field}: expected non-negative integers, got {value!r}", key)
    return tuple(value)


def parse_chunks_field(value: Any, ndim: int, key: str | None, field: str = "chunks") -> tuple[int, ...]:
    if not isinstance(value, list):
        raise MetadataError(f"{field}: expected a list of integers, got {value!r}", key)
    if len(value) != ndim:
        raise MetadataError(
            f"{field}: expected {ndim} dimension(s) like shape, got {len(value)}: {value!r}", key
        )
    for v in value:
        if not _is_int(v) or v < 1 or v > MAX_DIM_LENGTH:
            raise MetadataError(f"{field}: expected positive integers, got {value!r}", key)
    return tuple(value)


def check_declared_sizes(meta: Any) -> None:
    """Refuse metadata declaring a chunk (decoded), or a shard index, larger than
    ``config.max_chunk_bytes``: what reading or writing one of them would allocate, decided by
    the metadata alone before any data proves it.  (Arrays themselves, and shards, may be
    arbitrarily large: a shard is read and written an inner chunk at a time.)"""
    cap = config.max_chunk_bytes
    sizes = [("a chunk", math.prod(meta.grid.max_chunk_shape) * max(meta.dtype.itemsize, 1))]
    sharding = getattr(meta, "sharding", None)
    if sharding is not None:
        inner = math.prod(
            -(-s // c) for s, c in zip(meta.storage_grid.max_chunk_shape, sharding.chunk_shape)
        )
        sizes.append(("a shard's index", inner * 16))
    chain = sharding.inner if sharding is not None else meta.codec
    if isinstance(chain.ab, ShardingCodec):
        sizes.append(("an inner shard's index", chain.ab.resolved(chain.specs[-1]).index_nbytes))
    for what, nbytes in sizes:
        if nbytes > cap:
            raise MetadataError(
                f"{what} declares {nbytes} bytes, more than max_chunk_bytes ({cap}); raise it "
                "with zarrkit.config.set(max_chunk_bytes=...) if the data is meant to be so large"
            )
