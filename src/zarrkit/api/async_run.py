"""Running the synchronous engine from coroutines, and coroutines from synchronous code: the
two bridges of the asynchronous facade (:func:`run`, :func:`sync`), and how each stops an
operation its caller gave up on (see :mod:`zarrkit.storage.cancel`)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from ..storage import cancel
from ..storage.zarr3_api import BackgroundLoop, Finished

__all__ = ["run_in_thread", "sync"]

R = TypeVar("R")


async def run_in_thread(fn: Callable[..., R], /, *args: Any, **kwargs: Any) -> R:
    """``fn(*args, **kwargs)`` in a worker thread of the running loop, in a copy of the
    caller's context; its result, or its exception unchanged.

    Parameters
    ----------
    fn : callable
        A synchronous function or method.
    *args, **kwargs
        Its arguments.

    Returns
    -------
    object
        What ``fn`` returns.

    Notes
    -----
    Cancelled (``task.cancel()``, ``asyncio.wait_for`` running out of time), the operation
    stops before the cancellation reaches the caller: the thread is told to write nothing
    more (:mod:`zarrkit.storage.cancel`), and waited for.  Values it stored before stay.
    """
    stop = threading.Event()
    context = contextvars.copy_context()  # (the caller's settings, as to_thread gives them)
    context.run(cancel.CANCELLED.set, stop)
    work = asyncio.get_running_loop().run_in_executor(None, functools.partial(context.run, fn, *args, **kwargs))
    try:
        return await asyncio.shield(work)
    except asyncio.CancelledError:
        stop.set()
        await _stopped(work)
        raise


async def _stopped(work: asyncio.Future[Any]) -> None:
    """Wait until ``work`` (told to stop) has ended, however often this is cancelled again."""
    while not work.done():
        try:
            await asyncio.shield(work)
        except asyncio.CancelledError:
            continue
        except BaseException:  # noqa: BLE001 - its end is all that matters here
            return
    if not work.cancelled():
        work.exception()  # (retrieved: no "exception was never retrieved" warning)


#: the event loop :func:`sync` runs coroutines on (the storage layer's, which stores written
#: for zarr-python 3 run on too: one loop)
_Loop = BackgroundLoop


def sync(coro: Coroutine[Any, Any, R] | R, loop: asyncio.AbstractEventLoop | None = None,
         timeout: float | None = None) -> R:
    """Run a coroutine to its end from synchronous code and return its result (zarr-python 3's
    ``zarr.core.sync.sync``): on ``loop``, by default a loop of zarrkit's own in a background
    thread, so it may be called while another loop runs in the calling thread.

    Parameters
    ----------
    coro : coroutine
        What to run (a coroutine of this facade, or any other).  Anything else is the result
        of a call already made and is returned as it is: code written for zarr-python 3's
        asynchronous stores wraps their calls in ``sync(store.set(...))``, and zarrkit's store
        methods are synchronous.
    loop : asyncio.AbstractEventLoop, optional
        A loop running in another thread.
    timeout : float, optional
        Seconds to wait; :class:`TimeoutError` after them.

    Returns
    -------
    object
        What the coroutine returns; its exception is raised unchanged.

    Raises
    ------
    RuntimeError
        Called from a coroutine running on ``loop`` itself (it would wait for itself).

    Examples
    --------
    >>> import zarrkit
    >>> from zarrkit.api.async_nodes import AsyncArray
    >>> sync(AsyncArray(zarrkit.zeros(3, dtype='i1')).getitem(1))
    np.int8(0)
    """
    if isinstance(coro, Finished):  # a store call already made (``sync(store.set(...))``)
        return coro.value  # type: ignore[no-any-return]
    if not asyncio.iscoroutine(coro):
        return coro
    target = _Loop.get() if loop is None else loop
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is target:
        coro.close()
        raise RuntimeError("sync() was called from a coroutine running on the loop it would wait for")
    # the coroutine runs in the caller's context (a copy): inside ``with zarrkit.config.set``
    # it sees the block's settings, as code called without sync() does
    context = contextvars.copy_context()
    result: concurrent.futures.Future[R] = concurrent.futures.Future()
    tasks: list[asyncio.Task[R] | None] = []

    def start() -> None:
        if tasks:  # given up on before it started: nothing to run
            coro.close()
            result.cancel()
            result.set_running_or_notify_cancel()
            return
        task = target.create_task(coro, context=context)
        tasks.append(task)
        task.add_done_callback(lambda t: _hand_over(t, result))

    def stop() -> None:
        if tasks:
            tasks[0].cancel()  # type: ignore[union-attr]
        else:
            tasks.append(None)

    target.call_soon_threadsafe(start)
    try:
        return result.result(timeout)
    except concurrent.futures.TimeoutError:
        # out of time: the coroutine is cancelled, and what it runs stops writing (see run)
        # before this raises
        target.call_soon_threadsafe(stop)
        concurrent.futures.wait([result])
        raise TimeoutError(f"the operation did not finish in {timeout} s: it was stopped") from None


def _hand_over(task: asyncio.Task[R], result: concurrent.futures.Future[R]) -> None:
    """Hand the end of ``task`` to ``result``: its value, its exception or its cancellation."""
    if task.cancelled():
        result.cancel()
        result.set_running_or_notify_cancel()  # (what wakes concurrent.futures.wait)
    elif task.exception() is not None:
        result.set_exception(task.exception())
    else:
        result.set_result(task.result())
