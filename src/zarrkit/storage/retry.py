"""How often, and after what wait, a read-modify-write that met another writer's change tries
again (:func:`zarrkit.core.optimistic.update`, and a shard's rebuild)."""

from __future__ import annotations

import random
import time

__all__ = ["ATTEMPTS", "BACKOFF_BASE", "BACKOFF_MAX", "backoff"]

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
