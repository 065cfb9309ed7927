"""A write of the asynchronous facade that its caller gave up on (a cancelled task,
``asyncio.wait_for`` or ``sync(timeout=)`` running out of time) stops before the caller hears
of it: the chunks stored before stay, nothing is written afterwards, so a later acknowledged
write of the same chunks is never overwritten by the abandoned one."""

from __future__ import annotations

import asyncio
import time

import numpy as np
import pytest

import zarrkit
from zarrkit.api.async_nodes import AsyncArray, sync
from zarrkit.storage import LatencyStore

CHUNKS = 40


def _slow_array():
    # each stored value takes 10 ms: a write of 40 chunks takes about 0.4 s on one thread
    inner = zarrkit.MemoryStore()
    store = LatencyStore(inner, get_latency=0.0, set_latency=0.01)
    z = zarrkit.create_array(store, shape=(CHUNKS * 10,), chunks=(10,), dtype="i4", fill_value=0)
    return inner, z


def _snapshot(inner):
    return {k: bytes(v) for k, v in inner._store_dict.items()}


@pytest.mark.parametrize("how", ["wait_for", "cancel"])
def test_a_cancelled_write_stops_before_the_caller_hears_of_it(how):
    inner, z = _slow_array()

    async def main():
        with zarrkit.config.set(threads=1, io_threads=1):
            write = AsyncArray(z).setitem(slice(None), np.ones(CHUNKS * 10, "i4"))
            if how == "wait_for":
                with pytest.raises(TimeoutError):
                    await asyncio.wait_for(write, timeout=0.05)
            else:
                task = asyncio.ensure_future(write)
                await asyncio.sleep(0.05)
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task
            at_cancel = _snapshot(inner)
            # the caller now writes the last chunk itself (which the abandoned write had not
            # reached), and is acknowledged; then waits as long as the abandoned write would
            # have gone on, had it
            await AsyncArray(z).setitem(slice(CHUNKS * 10 - 10, None), np.full(10, 7, "i4"))
            await asyncio.sleep(0.5)
            return at_cancel, z[:]

    at_cancel, after = asyncio.run(main())
    stored = sum(1 for k in at_cancel if k.startswith("c/"))
    assert 0 < stored < CHUNKS  # it had begun, and it stopped
    assert (after[-10:] == 7).all()
    assert set(np.unique(after[:-10])) <= {0, 1}


def test_sync_with_a_timeout_stops_the_write_before_it_raises():
    inner, z = _slow_array()
    with zarrkit.config.set(threads=1, io_threads=1), pytest.raises(TimeoutError):
        sync(AsyncArray(z).setitem(slice(None), np.ones(CHUNKS * 10, "i4")), timeout=0.05)
    at_timeout = _snapshot(inner)
    time.sleep(0.3)
    assert _snapshot(inner) == at_timeout  # nothing written after the TimeoutError
    assert 0 < sum(1 for k in at_timeout if k.startswith("c/")) < CHUNKS


def test_a_cancelled_append_leaves_the_array_before_it():
    # an append on a store with versions, cancelled while writing its rows: the rows it wrote
    # out of sight are put back, the shape is the old one, and a later append lands at it
    inner, z = _slow_array()

    async def main():
        with zarrkit.config.set(threads=1, io_threads=1), pytest.raises(TimeoutError):
            await asyncio.wait_for(AsyncArray(z).append(np.ones(200, "i4")), timeout=0.05)

    asyncio.run(main())
    again = zarrkit.open_array(inner, mode="r+")
    assert again.shape == (CHUNKS * 10,)
    again.append(np.full(5, 3, "i4"))
    time.sleep(0.3)
    np.testing.assert_array_equal(zarrkit.open_array(inner, mode="r")[CHUNKS * 10:], np.full(5, 3))


def test_an_uncancelled_write_is_untouched():
    _, z = _slow_array()
    sync(AsyncArray(z).setitem(slice(0, 50), np.arange(50, dtype="i4")), timeout=30)
    np.testing.assert_array_equal(z[:50], np.arange(50))
