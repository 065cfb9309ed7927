"""Validation shared by the v2 and v3 metadata dialects."""

from __future__ import annotations

from typing import Any

from ..errors import MetadataError

# A single chunk larger than this is refused: decoding it would need absurd memory, and no
# real-world writer produces one.  (Arrays themselves may be arbitrarily large.)
MAX_CHUNK_BYTES = 1 << 36
MAX_NDIM = 64
MAX_DIM_LENGTH = (1 << 63) - 1


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


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


def check_chunk_size(chunks: tuple[int, ...], itemsize: int, key: str | None = None) -> None:
    n = max(itemsize, 1)
    for c in chunks:
        n *= c
        if n > MAX_CHUNK_BYTES:
            raise MetadataError(
                f"chunk shape {tuple(chunks)} describes chunks of more than {MAX_CHUNK_BYTES} bytes",
                key,
            )
