"""Reads of one array asked for by several coroutines in the same turn of an event loop, read
as one: ``await asyncio.gather(*(arr.getitem(s) for s in regions))`` costs one read of all the
regions (:meth:`~zarrkit.core.selection.SelectionMethods.get_many`), not a read, a worker
thread and their Python per region.

Each :meth:`AsyncArray.getitem <zarrkit.api.AsyncArray.getitem>` joins the batch of its array,
loop and settings (those of ``with zarrkit.config.set(...)`` blocks, compared by value) still
being gathered, or starts one, which is read at the loop's next turn -- after every coroutine
ready in this turn has asked.  Each caller gets its own result (an array of a shape several
callers asked for is a view of one block holding all of theirs, as :meth:`get_many` gives
them: it stays alive while any of them does -- a copy each would double the work of a batch of
small reads); when the batch's read fails, every selection is read again on its own, so that
each caller gets its own result or error.  A caller cancelled stops waiting; the others' read
goes on.
"""

from __future__ import annotations

import asyncio
from typing import Any

from .. import config as config_module
from .async_run import run_in_thread

__all__ = ["gathered_read"]

class _Batch:
    """The selections asked of one array on one loop under one set of settings, not yet read."""

    __slots__ = ("array", "scope", "wanted")

    def __init__(self, array: Any, scope: object):
        self.array = array
        self.scope = scope
        self.wanted: list[tuple[Any, asyncio.Future[Any]]] = []


#: the batches being gathered, by the ids of their array and loop; a batch leaves this at the
#: loop's next turn, so it holds nothing for longer
_GATHERING: dict[tuple[int, int], list[_Batch]] = {}


async def gathered_read(array: Any, selection: Any) -> Any:
    """``array.get_basic_selection(selection)``, read with the other reads of ``array``
    asked for in this turn of the running loop under the same settings."""
    loop = asyncio.get_running_loop()
    scope = config_module.scope()
    key = (id(array), id(loop))
    batches = _GATHERING.setdefault(key, [])
    for batch in batches:
        if batch.scope is scope or batch.scope == scope:
            break
    else:
        batch = _Batch(array, scope)
        batches.append(batch)
        loop.call_soon(_start, key, batch, loop)
    future: asyncio.Future[Any] = loop.create_future()
    batch.wanted.append((selection, future))
    return await future


def _start(key: tuple[int, int], batch: _Batch, loop: asyncio.AbstractEventLoop) -> None:
    batches = _GATHERING[key]
    batches.remove(batch)
    if not batches:
        del _GATHERING[key]
    task = loop.create_task(_read(batch.array, batch.wanted))
    _RUNNING.add(task)
    task.add_done_callback(_RUNNING.discard)


#: the batches being read (a task the loop holds only weakly would be lost)
_RUNNING: set[asyncio.Task[None]] = set()


async def _read(array: Any, wanted: list[tuple[Any, asyncio.Future[Any]]]) -> None:
    try:
        live = [(s, f) for s, f in wanted if not f.done()]
        if len(live) > 1:
            results: list[Any] | None
            try:
                results = await run_in_thread(array.get_many, [s for s, _ in live])
            except Exception:  # noqa: BLE001 - each selection read again below, for its own error
                results = None
            if results is not None:
                for (_, future), result in zip(live, results):
                    if not future.done():
                        future.set_result(result)
                return
        await asyncio.gather(*(_read_one(array, s, f) for s, f in live))
    except BaseException:
        for _, future in wanted:
            if not future.done():
                future.cancel()
        raise


async def _read_one(array: Any, selection: Any, future: asyncio.Future[Any]) -> None:
    try:
        result = await run_in_thread(array.get_basic_selection, selection)
    except Exception as e:  # noqa: BLE001 - handed to the caller
        if not future.done():
            future.set_exception(e)
    else:
        if not future.done():
            future.set_result(result)
