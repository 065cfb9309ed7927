"""The engine's entry to the thread pool (:mod:`zarrkit.storage.pool`): per-chunk tasks, their
thread count per store, and Blosc's own threads turned off while the caller takes its share.
A warning raised by a task on a pool thread is attributed to the user's call that started it.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TypeVar

from .._warnings import user_call
from ..codecs.blosc import no_blosc_threads
from ..config import config
from ..storage import pool
from ..storage.local import DirectoryStore
from ..storage.memory import MemoryStore

T = TypeVar("T")
R = TypeVar("R")


def threads_for(store: object, chunk_nbytes: int | None = None) -> int | None:
    """Worker count for per-chunk tasks on ``store``: one per CPU, or ``config.io_threads``
    (requests in flight) for high-latency stores; ``None`` means the configured default.
    Chunks under ``config.parallel_min_chunk_bytes`` (``chunk_nbytes``, uncompressed) on
    other stores are read, and encoded for writing, on one thread (1)."""
    if getattr(store, "high_latency", False):
        return max(config.threads, config.io_threads)
    if chunk_nbytes is not None and chunk_nbytes < config.parallel_min_chunk_bytes:
        return 1
    return None


class Turns:
    """The turns threads take at reads of tiny chunks (see :func:`turns_for`): one lock for the
    process.  A thread waiting longer than WAIT seconds for its turn proceeds without, and the
    process takes no turns from then on: a turn that long means the thread holding it waits
    on another (a codec's decoding waiting for a read on another thread), and waiting for it
    in turn would never end."""

    WAIT = 0.2

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self.off = False

    def take(self) -> bool:
        """Wait for this thread's turn; False (no turn to give back) once turns are off."""
        if self.off:
            return False
        if self._lock.acquire(timeout=self.WAIT):
            return True
        self.off = True
        return False

    def give(self) -> None:
        """End the turn :meth:`take` gave."""
        self._lock.release()


_turns = Turns()
_LOCKED_INTERPRETER = getattr(sys, "_is_gil_enabled", lambda: True)()


def _new_turns_in_child() -> None:
    # a thread of the parent may hold the lock when it forks: that thread does not exist in
    # the child, which would wait for it at its first read of tiny chunks
    global _turns
    _turns = Turns()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_turns_in_child)


def turns_for(store: object) -> Turns | None:
    """The turns a thread takes to read and decode each batch of tiny chunks from ``store``:
    on an interpreter with a global lock, the process's when ``store`` is a local directory
    or memory (whose reads call nothing else), so that threads reading such chunks at once
    take turns a batch at a time rather than at every system call -- each turn there costs a
    wake-up, longer than the work between two calls (two threads each reading half of 16,384
    Blosc chunks of 1 KiB took twice one thread's time: see benchmarks/PROFILE-threads.md)."""
    if _LOCKED_INTERPRETER and type(store) in (DirectoryStore, MemoryStore):
        return _turns
    return None


def run_tasks(fn: Callable[[T], R], items: Sequence[T] | Iterable[T], threads: int | None = None) -> list[R]:
    """:func:`zarrkit.storage.pool.run_tasks` of per-chunk tasks (``threads``: see
    :func:`threads_for`), the caller's share run with Blosc's own threads off."""
    with user_call():
        return pool.run_tasks(fn, items, threads, no_blosc_threads)


def run_pipelined(
    produced: Iterator[T] | Iterable[T], consume: Callable[[T], object], threads: int | None = None
) -> None:
    """:func:`zarrkit.storage.pool.run_pipelined` of per-chunk work, the caller's share run
    with Blosc's own threads off."""
    with user_call():
        pool.run_pipelined(produced, consume, threads, no_blosc_threads)
