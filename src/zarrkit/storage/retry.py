"""How often, and after what wait, a read-modify-write that met another writer's change tries
again (:func:`zarrkit.core.optimistic.update`, and a shard's rebuild)."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TypeVar

from ..errors import ConflictRetriesExhaustedError, VersionConflictError

__all__ = ["ATTEMPTS", "BACKOFF_BASE", "BACKOFF_MAX", "backoff", "until_written"]

T = TypeVar("T")

#: conflicts met before a read-modify-write gives up (each costs a read and a write; with
#: the backoff below, a value written by a dozen writers at once settles in a few rounds)
ATTEMPTS = 64
#: the wait after the n-th conflict: random, up to BACKOFF_BASE * 2**n seconds and at most
#: BACKOFF_MAX (full jitter: writers that met once are unlikely to meet again)
BACKOFF_BASE = 0.0005
BACKOFF_MAX = 0.25


def backoff(attempt: int) -> None:
    """Wait before the attempt after the ``attempt``-th conflict (numbered from 0)."""
    time.sleep(random.uniform(0, min(BACKOFF_MAX, BACKOFF_BASE * (1 << min(attempt, 20)))))


def until_written(attempt: Callable[[], T], key: str, what: str = "the value") -> T:
    """``attempt()``, called again (after :func:`backoff`) each time it raises
    :class:`~zarrkit.errors.VersionConflictError` -- a read-modify-write whose conditional
    write found another writer's change -- at most :data:`ATTEMPTS` times.

    Raises
    ------
    ConflictRetriesExhaustedError
        Every attempt met a conflict (``key``: what it was writing).
    """
    for n in range(ATTEMPTS):
        try:
            return attempt()
        except VersionConflictError:
            backoff(n)
    raise ConflictRetriesExhaustedError(
        f"another writer changed {what} before each of {ATTEMPTS} attempts to change it", key
    )
