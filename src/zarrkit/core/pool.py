"""The shared thread pool that runs per-chunk tasks.

Codec kernels (numcodecs), file I/O and numpy copies release the GIL, so plain threads scale.
Tasks started from inside a worker run inline: nested parallel work (a sharded chunk, a user
calling zarrkit from a pool thread) must never wait on the pool it occupies.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from ..config import config

T = TypeVar("T")
R = TypeVar("R")

#: batches of tasks queued per worker thread (more: better balance, fewer: less overhead)
TASKS_PER_WORKER = 4

_local = threading.local()
_executors: dict[int, ThreadPoolExecutor] = {}
_executor_lock = threading.Lock()


def _mark_worker() -> None:
    _local.in_worker = True


def in_worker() -> bool:
    """Whether the calling thread is one of the pool's workers."""
    return getattr(_local, "in_worker", False)


def _get_executor(size: int) -> ThreadPoolExecutor:
    """The pool of exactly ``size`` workers (one pool per size in use, so the configured
    number of threads is also the limit of tasks running at once)."""
    with _executor_lock:
        executor = _executors.get(size)
        if executor is None:  # idle pools cost only their sleeping threads
            executor = _executors[size] = ThreadPoolExecutor(
                max_workers=size, thread_name_prefix="zarrkit", initializer=_mark_worker
            )
        return executor


def threads_for(store: object, read_chunk_nbytes: int | None = None) -> int | None:
    """Worker count for per-chunk tasks on ``store``: one per CPU, or ``config.io_threads``
    (requests in flight) for high-latency stores; ``None`` means the configured default.
    Reads of chunks under ``config.parallel_read_min_chunk_bytes`` (``read_chunk_nbytes``)
    from other stores run on one thread."""
    if getattr(store, "high_latency", False):
        return max(config.threads, config.io_threads)
    if read_chunk_nbytes is not None and read_chunk_nbytes < config.parallel_read_min_chunk_bytes:
        return 1
    return None


def run_tasks(fn: Callable[[T], R], items: Sequence[T] | Iterable[T], threads: int | None = None) -> list[R]:
    """Apply ``fn`` to every item, in parallel when worthwhile; return results in order.

    The first exception raised by a task is re-raised after all tasks have finished, so no task
    is still writing into a caller's buffer once this returns.
    """
    items = items if isinstance(items, Sequence) else list(items)
    n = config.threads if threads is None else threads
    if n <= 1 or len(items) <= 1 or getattr(_local, "in_worker", False):
        return [fn(item) for item in items]
    executor = _get_executor(n)
    # Many small tasks go in batches (a future per task costs more than a tiny chunk), with
    # enough batches per worker that uneven tasks still balance.
    size = max(1, len(items) // (n * TASKS_PER_WORKER))
    batches = [items[i : i + size] for i in range(0, len(items), size)]

    def run_batch(batch: Sequence[T]) -> tuple[list[R], BaseException | None]:
        out: list[R] = []
        err: BaseException | None = None
        for item in batch:
            try:
                out.append(fn(item))
            except BaseException as exc:  # noqa: BLE001 - re-raised by the caller
                if err is None:
                    err = exc
                out.append(None)  # type: ignore[arg-type]
        return out, err

    futures = [executor.submit(run_batch, b) for b in batches]
    results: list[R] = []
    error: BaseException | None = None
    for f in futures:
        try:
            out, err = f.result()
        except BaseException as exc:  # noqa: BLE001 - re-raised below after all tasks finish
            out, err = [None] * 0, exc  # type: ignore[list-item]
        results.extend(out)
        if err is not None and error is None:
            error = err
    if error is not None:
        raise error
    return results
