"""Stopping an operation whose caller gave up on it: a cancelled coroutine of the asynchronous
facade, a ``sync(timeout=)`` that ran out of time.

The facade runs each synchronous operation in a worker thread with a :class:`threading.Event`
set as :data:`CANCELLED` in its context (pool tasks run in copies of their caller's context,
so they see it too).  Every write to a store first asks :func:`check` (it is part of
``Store._check_writable``): once the event is set, the next write raises
:class:`asyncio.CancelledError` instead, so nothing is written after the caller was told the
operation was cancelled -- the facade waits for the thread to stop before it says so.  What
was stored before stays (each value whole: a write in progress when the event is set
finishes first).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from contextvars import ContextVar

__all__ = ["CANCELLED", "check", "not_cancellable"]

#: the event that, once set, stops the writes of the operation running in this context
CANCELLED: ContextVar[threading.Event | None] = ContextVar("zarrkit_cancelled", default=None)


def check() -> None:
    """Raise :class:`asyncio.CancelledError` when the operation of this context was cancelled."""
    event = CANCELLED.get()
    if event is not None and event.is_set():
        raise asyncio.CancelledError("the operation was cancelled: nothing more is written")


@contextlib.contextmanager
def not_cancellable() -> Iterator[None]:
    """Writes that must finish once begun, whatever happens to the caller (putting back what
    an interrupted operation wrote): :func:`check` lets them through."""
    token = CANCELLED.set(None)
    try:
        yield
    finally:
        CANCELLED.reset(token)
