"""The one read-modify-write of the engine: read a value with its version, change it, write it
back on the condition that it is still that version, and on a conflict read it again.

Every operation that changes part of a stored value goes through :func:`update`: a partial
chunk, a shard some of whose inner chunks change, a metadata document (attributes, a shape),
a node created only where there is none.  On a store with conditional writes
(``supports_conditional_writes``) no two writers can lose each other's change, whatever
thread, process or machine they run in, and no lock is needed; a synchronizer, when given,
is still taken around the loop (it saves retries when many writers meet on one value).  On a
store without them the value is read, changed and written plainly, as one writer would: two
writers of one value need a synchronizer there (see the guide's consistency page).

Writes of whole values (a chunk the selection covers) need no version and never come here.

The loop lives with the store contract, below every layer that changes stored values: the
engine (``core``), the shard writer (``codecs.sharding``) and the metadata writers
(``metadata``) all use this one.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Callable
from typing import Any, TypeVar

from ..errors import ConflictRetriesExhaustedError, VersionConflictError
from .base import ABSENT, Store

__all__ = ["KEEP", "ATTEMPTS", "BACKOFF_BASE", "BACKOFF_MAX", "backoff", "until_written", "update"]

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


#: what a change returns to leave the value as it is (write nothing)
KEEP: Any = type("Keep", (), {"__repr__": lambda self: "KEEP"})()

def update(
    store: Store,
    key: str,
    change: Callable[[Any], Any],
    *,
    limit: int | None = None,
    lock: Any = None,
    written: list[Any] | None = None,
) -> Any:
    """Change the value at ``key`` of ``store`` by ``change``, atomically where the store can.

    ``change(old)`` is given the stored value (bytes or a memoryview, None when there is
    none) and returns the value to store (bytes-like), None to delete it, or :data:`KEEP` to
    leave it; on a conflict it is called again with the value as it is then, so it must
    derive everything it writes from its argument (and may be called several times).

    Parameters
    ----------
    store : Store
        The store.
    key : str
        The key.
    change : callable
        ``change(old) -> new | None | KEEP``.
    limit : int, optional
        The most bytes the stored value may hold (a chunk's: see :meth:`Store.get_upto`).
    lock : context manager, optional
        Held around the whole read-modify-write (a synchronizer's lock of the key).
    written : list, optional
        Given the version of the value stored (or :data:`ABSENT`: deleted, or none; None on a
        store without versions), appended, when one was stored or deleted.

    Returns
    -------
    object
        What ``change`` returned the last time it was called.

    Raises
    ------
    ConflictRetriesExhaustedError
        Another writer changed the value before each of :data:`ATTEMPTS` attempts.
    """
    with lock if lock is not None else contextlib.nullcontext():
        if not store.supports_conditional_writes:
            old = store.get(key) if limit is None else store.get_upto(key, limit)
            new = change(old)
            if new is None:
                if old is not None:
                    store.delete(key)
            elif new is not KEEP:
                store.set(key, new)
            return new
        def attempt() -> Any:
            old, version = store.get_versioned(key, limit)
            new = change(old)
            if new is None:
                if version is not ABSENT:
                    store.delete_if(key, version)
                    if written is not None:
                        written.append(ABSENT)
            elif new is not KEEP:
                stored = store.set_if(key, new, version)
                if written is not None:
                    written.append(stored)
            return new

        return until_written(attempt, key)
