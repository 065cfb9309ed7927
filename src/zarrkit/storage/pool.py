"""The one thread pool: per-chunk tasks of the engine, and requests a store sends together.

Codec kernels (numcodecs), file I/O, network waits and numpy copies release the GIL, so plain
threads scale.  A run on ``n`` threads is the caller plus ``n - 1`` pool threads taking batches
of tasks from one list (the caller works instead of waiting, and a run of two tasks wakes one
thread, not two).  Tasks started from a thread that is already running tasks run inline:
nested parallel work (a sharded chunk, a store's batch of requests inside a chunk task, a user
calling zarrkit from a pool thread) must never wait on the pool it occupies.

What the calling thread is doing lives here too, read by the codecs and the engine:
``worker``, the thread is one of the pool's long-lived threads; ``busy``, the thread is running
tasks of a parallel run (a pool thread, or a caller taking its share), so nested parallel work
runs inline and codecs use no threads of their own.

Tasks run in the caller's :mod:`contextvars` context (a copy of it per pool thread), so work
started inside ``with zarrkit.config.set(...)`` sees the block's settings, not the process's.
"""

from __future__ import annotations

import contextvars
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager, nullcontext
from typing import TypeVar

from ..config import config

__all__ = ["is_busy", "is_worker", "run_pipelined", "run_tasks", "state"]

state: threading.local = threading.local()


def is_worker() -> bool:
    """Whether the calling thread is one of the pool's threads."""
    return getattr(state, "worker", False)


def is_busy() -> bool:
    """Whether the calling thread is running tasks of a parallel run."""
    return getattr(state, "busy", False)


T = TypeVar("T")
R = TypeVar("R")

#: batches of tasks per worker thread: taking a batch costs a lock and a list index, so many
#: small batches keep the workers busy to the end (with 4 per worker, a read of 512 large chunks
#: on 2 threads came in batches of 64, the last leaving one thread idle for several ms)
TASKS_PER_WORKER = 32
#: items :func:`run_pipelined` lets wait per pool thread before the caller consumes one itself
QUEUED_PER_WORKER = 2

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


def _submit(size: int, work: Callable[[], None]) -> Future[None]:
    """``work`` on the pool of ``size`` workers, in a copy of the caller's context (one context
    may not be entered by two threads at once, so each helper has its own copy)."""
    return _get_executor(size).submit(contextvars.copy_context().run, work)


def run_tasks(
    fn: Callable[[T], R],
    items: Sequence[T] | Iterable[T],
    threads: int | None = None,
    caller_context: Callable[[], AbstractContextManager[object]] = nullcontext,
) -> list[R]:
    """Apply ``fn`` to every item, in parallel when worthwhile; return results in order.

    ``threads`` counts the caller (``None``: ``config.threads``).  The first exception raised
    by a task is re-raised once every task started has finished (no task is still writing into
    a caller's buffer when this returns); after a failure the tasks not yet started are
    dropped.  The caller takes its share of the tasks inside ``caller_context()`` (the engine
    turns Blosc's own threads off there).
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
    futures = [_submit(n - 1, drain) for _ in range(helpers)]
    state.busy = True
    try:
        with caller_context():
            drain()
    finally:
        state.busy = False
        _join(futures, errors)  # no task may still write into a caller's buffer after we return
    return [r for out in results for r in out]  # type: ignore[union-attr]


def _join(futures: list[Future[None]], errors: list[BaseException]) -> None:
    """Wait for every future, then raise the first of ``errors`` and the futures' errors."""
    for f in futures:
        # The caller has taken every task left: a helper not started yet has nothing to do,
        # and its pool threads may all be held by tasks waiting on this caller (a task that
        # joins a thread of its own running parallel work), so it is not waited for.
        if f.cancel():
            continue
        try:
            f.result()
        except BaseException as exc:  # noqa: BLE001 - re-raised below
            errors.append(exc)
    if errors:
        raise errors[0]


def run_pipelined(
    produced: Iterator[T] | Iterable[T],
    consume: Callable[[T], object],
    threads: int | None = None,
    caller_context: Callable[[], AbstractContextManager[object]] = nullcontext,
) -> None:
    """Consume on pool threads each item the caller produces, while the caller makes the next.

    For work in two stages where the first holds the interpreter lock and the second mostly
    waits on the system (encoding tiny chunks, then writing them to files): the caller runs
    ``produced`` (an iterator doing the first stage as it goes), ``threads - 1`` pool threads
    run ``consume`` on what it yields.  When the consumers fall behind the caller consumes an
    item itself instead of producing more, so at most a few items wait at any time; once
    ``produced`` is exhausted the caller consumes what is left alongside the pool threads.

    The first exception, raised by ``produced`` or by ``consume``, is re-raised once every
    ``consume`` started has finished; the items not consumed by then are dropped.  The
    caller's work runs inside ``caller_context()``.
    """
    n = config.threads if threads is None else threads
    if n <= 1 or is_busy():
        with caller_context():
            for item in produced:
                consume(item)
        return
    queue: deque[T] = deque()
    errors: list[BaseException] = []
    cond = threading.Condition()
    finished = False
    limit = (n - 1) * QUEUED_PER_WORKER

    def take(wait: bool) -> tuple[bool, T | None]:
        with cond:
            while wait and not queue and not finished and not errors:
                cond.wait()
            if errors or not queue:
                return False, None
            return True, queue.popleft()

    def consume_one(item: T) -> None:
        try:
            consume(item)
        except BaseException as exc:  # noqa: BLE001 - re-raised by the caller
            with cond:
                errors.append(exc)
                cond.notify_all()

    def drain() -> None:
        while True:
            got, item = take(wait=True)
            if not got:
                return
            consume_one(item)  # type: ignore[arg-type]  # got: an item was taken

    futures = [_submit(n - 1, drain) for _ in range(n - 1)]
    state.busy = True
    try:
        with caller_context():
            for item in produced:
                with cond:
                    queue.append(item)
                    cond.notify()
                while len(queue) > limit and not errors:  # the consumers are behind: help
                    got, taken = take(wait=False)
                    if got:
                        consume_one(taken)  # type: ignore[arg-type]  # got: an item was taken
                if errors:
                    break
    except BaseException as exc:  # noqa: BLE001 - re-raised below, after the consumers stop
        with cond:
            errors.append(exc)
    finally:
        with cond:
            finished = True
            cond.notify_all()
        drain()
        state.busy = False
        _join(futures, errors)
