"""The shared thread pool that runs per-chunk tasks.

Codec kernels (numcodecs), file I/O and numpy copies release the GIL, so plain threads scale.
A run on ``n`` threads is the caller plus ``n - 1`` pool threads taking batches of tasks from
one list (the caller works instead of waiting, and a run of two tasks wakes one thread, not
two).  Tasks started from a thread that is already running tasks run inline: nested parallel
work (a sharded chunk, a user calling zarrkit from a pool thread) must never wait on the pool
it occupies.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from .._threads import is_busy, state
from ..codecs.blosc_fast import no_blosc_threads
from ..config import config

T = TypeVar("T")
R = TypeVar("R")

#: batches of tasks queued per worker thread (more: better balance, fewer: less overhead)
TASKS_PER_WORKER = 4

_executors: dict[int, ThreadPoolExecutor] = {}
_executor_lock = threading.Lock()


def _mark_worker() -> None:
    state.worker = state.busy = True


def _get_executor(size: int) -> ThreadPoolExecutor:
    """The pool of exactly ``size`` workers (one pool per size in use, so a run on ``size + 1``
    threads, its caller included, never has more tasks running at once)."""
    with _executor_lock:
        executor = _executors.get(size)
        if executor is None:  # idle pools cost only their sleeping threads
            executor = _executors[size] = ThreadPoolExecutor(
                max_workers=size, thread_name_prefix="zarrkit", initializer=_mark_worker
            )
        return executor


def threads_for(store: object, chunk_nbytes: int | None = None) -> int | None:
    """Worker count for per-chunk tasks on ``store``: one per CPU, or ``config.io_threads``
    (requests in flight) for high-latency stores; ``None`` means the configured default.
    Chunks under ``config.parallel_min_chunk_bytes`` (``chunk_nbytes``, uncompressed) on
    other stores are read and written on one thread."""
    if getattr(store, "high_latency", False):
        return max(config.threads, config.io_threads)
    if chunk_nbytes is not None and chunk_nbytes < config.parallel_min_chunk_bytes:
        return 1
    return None


def run_tasks(fn: Callable[[T], R], items: Sequence[T] | Iterable[T], threads: int | None = None) -> list[R]:
    """Apply ``fn`` to every item, in parallel when worthwhile; return results in order.

    The first exception raised by a task is re-raised once every task started has finished (no
    task is still writing into a caller's buffer when this returns); after a failure the tasks
    not yet started are dropped.
    """
    items = items if isinstance(items, Sequence) else list(items)
    n = config.threads if threads is None else threads
    if n <= 1 or len(items) <= 1 or is_busy():
        return [fn(item) for item in items]
    # Many small tasks go in batches (a future per task costs more than a tiny chunk), with
    # enough batches per worker that uneven tasks still balance.
    size = max(1, len(items) // (n * TASKS_PER_WORKER))
    batches = [items[i : i + size] for i in range(0, len(items), size)]
    results: list[list[R] | None] = [None] * len(batches)
    errors: list[BaseException] = []
    taken = iter(range(len(batches)))
    lock = threading.Lock()

    def drain() -> None:
        while not errors:  # after a failure, the tasks not started are dropped
            with lock:
                i = next(taken, None)
            if i is None:
                return
            out: list[R] = []
            for item in batches[i]:
                try:
                    out.append(fn(item))
                except BaseException as exc:  # noqa: BLE001 - re-raised by the caller
                    errors.append(exc)
                    out.append(None)  # type: ignore[arg-type]
            results[i] = out

    helpers = min(n - 1, len(batches) - 1)
    futures = [_get_executor(n - 1).submit(drain) for _ in range(helpers)]
    state.busy = True
    try:
        with no_blosc_threads():
            drain()
    finally:
        state.busy = False
        for f in futures:  # no task may still write into a caller's buffer after we return
            try:
                f.result()
            except BaseException as exc:  # noqa: BLE001 - re-raised below
                errors.append(exc)
    if errors:
        raise errors[0]
    return [r for out in results for r in out]  # type: ignore[union-attr]
