"""Several selections read as one: ``Array.get_many`` and ``asyncio.gather`` over
``AsyncArray.getitem`` give what reading each selection alone gives, with the store requests of
one plan (a shard's index and inner chunks fetched once for all the selections in it)."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrkit
from zarrkit.errors import BoundsCheckError, ChunkNotFoundError
from zarrkit.storage import CountingStore, MemoryStore

SHAPE = (20, 17, 9)
DATA = np.arange(np.prod(SHAPE), dtype="i4").reshape(SHAPE)


def _arrays():
    plain = zarrkit.create_array(MemoryStore(), shape=SHAPE, chunks=(6, 5, 4), dtype="i4", fill_value=-1)
    sharded = zarrkit.create_array(MemoryStore(), shape=SHAPE, chunks=(3, 5, 2), shards=(6, 10, 4), dtype="i4",
                                   fill_value=-1)
    v2 = zarrkit.create_array(MemoryStore(), shape=SHAPE, chunks=(7, 4, 9), dtype="i4", fill_value=-1,
                              zarr_format=2)
    for z in (plain, sharded, v2):
        z[:] = DATA
    return {"plain": plain, "sharded": sharded, "v2": v2}


ARRAYS = _arrays()


def _item(n):
    """An int, or a slice with any step (negative ones too), within a dimension of ``n``."""
    ints = st.integers(-n, n - 1)
    bounds = st.one_of(st.none(), st.integers(-n - 2, n + 2))
    steps = st.one_of(st.none(), st.integers(1, 4), st.integers(-4, -1))
    return st.one_of(ints, st.builds(slice, bounds, bounds, steps))


SELECTION = st.tuples(*(_item(n) for n in SHAPE)).flatmap(
    lambda t: st.integers(0, len(t)).map(lambda k: t[:k])  # fewer items: the rest whole
)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(ARRAYS)), st.lists(SELECTION, max_size=12))
def test_get_many_is_each_selection_read_alone(name, selections):
    z = ARRAYS[name]
    got = z.get_many(selections)
    assert len(got) == len(selections)
    for selection, result in zip(selections, got):
        expected = DATA[selection]
        assert np.shape(result) == np.shape(expected), selection
        assert np.array_equal(result, expected), selection
        assert type(result) is type(z[selection])  # a scalar where z[...] gives one


@pytest.mark.parametrize("name", sorted(ARRAYS))
def test_gathered_getitems_are_each_selection_read_alone(name):
    z = ARRAYS[name]
    selections = [(i, slice(None, None, -2)) for i in range(SHAPE[0])] + [(1, 2, 3), (slice(5, 9), 4, slice(2, 3))]

    async def main():
        return await asyncio.gather(*(z._async_array.getitem(s) for s in selections))

    for selection, result in zip(selections, asyncio.run(main())):
        assert np.array_equal(result, DATA[selection])


def test_a_bad_selection_is_named_and_nothing_is_read():
    store = CountingStore(MemoryStore())
    z = zarrkit.create_array(store, shape=(10, 10), chunks=(5, 5), dtype="u1")
    z[:] = 1
    store.reset()
    with pytest.raises(BoundsCheckError) as e:
        z.get_many([(0, 0), (slice(None), 3), (11, 0)])
    assert any("selections[2]" in note for note in e.value.__notes__)
    assert not [k for k, _ in store.keys_read if k.startswith("c/")]
    with pytest.raises(TypeError, match="sequence of selections"):
        z.get_many((0, 0) for _ in range(2))


def test_unwritten_chunks_read_as_the_fill_value_or_raise():
    z = zarrkit.create_array(MemoryStore(), shape=(10,), chunks=(5,), dtype="i2", fill_value=7)
    z[:5] = np.arange(5)
    assert [r.tolist() for r in z.get_many([slice(3, 7), slice(6, 10)])] == [[3, 4, 7, 7], [7, 7, 7, 7]]
    strict = z.with_config({"read_missing_chunks": False})
    assert strict.get_many([slice(0, 5)])[0].tolist() == [0, 1, 2, 3, 4]
    with pytest.raises(ChunkNotFoundError):
        strict.get_many([slice(0, 2), slice(6, 8)])


def test_the_array_order_is_kept():
    z = zarrkit.create_array(MemoryStore(), shape=(4, 6), chunks=(2, 3), dtype="f8", config={"order": "F"})
    a = np.arange(24.0).reshape(4, 6)
    z[:] = a
    selections = [(slice(None), slice(None)), (slice(1, 3), slice(0, 4)), (2, slice(1, 5))]
    for selection, r in zip(selections, z.get_many(selections)):
        assert np.array_equal(r, a[selection])
        assert r.flags.f_contiguous and z[selection].flags.f_contiguous


def test_inner_chunks_of_one_shard_are_fetched_with_one_plan():
    store = CountingStore(MemoryStore())
    z = zarrkit.create_array(store, shape=(64, 64), chunks=(8, 8), shards=(32, 32), dtype="i4", compressors=None)
    z[:] = np.arange(64 * 64, dtype="i4").reshape(64, 64)
    r = zarrkit.open_array(store, mode="r")
    _ = r.dtype
    tiles = [(slice(i, i + 8), slice(j, j + 8)) for i in range(0, 32, 8) for j in range(0, 32, 8)]

    store.reset()
    alone = [r[t] for t in tiles]
    one_by_one = len([k for k, _ in store.keys_read if k.startswith("c/")])
    store.reset()
    together = r.get_many(tiles)
    reads = [k for k, _ in store.keys_read if k.startswith("c/")]
    assert reads == ["c/0/0", "c/0/0"], store.keys_read  # the index, then the 16 chunks at once
    assert one_by_one == 2 * len(tiles)  # (each read alone: the index, then its chunk)
    for a, b in zip(alone, together):
        assert np.array_equal(a, b)

    async def main():
        return await asyncio.gather(*(r._async_array.getitem(t) for t in tiles))

    store.reset()
    gathered = asyncio.run(main())
    assert [k for k, _ in store.keys_read if k.startswith("c/")] == ["c/0/0", "c/0/0"]
    for a, b in zip(alone, gathered):
        assert np.array_equal(a, b)


def test_a_failing_read_gives_each_caller_its_own_outcome():
    z = ARRAYS["plain"]

    async def main():
        return await asyncio.gather(z._async_array.getitem((0, 0, 0)), z._async_array.getitem((99,)),
                                    z._async_array.getitem((slice(0, 2), 1, 1)), return_exceptions=True)

    ok, bad, also_ok = asyncio.run(main())
    assert ok == DATA[0, 0, 0] and np.array_equal(also_ok, DATA[0:2, 1, 1])
    assert isinstance(bad, BoundsCheckError)


def test_a_cancelled_caller_leaves_the_others_their_reads():
    z = ARRAYS["sharded"]

    async def main():
        tasks = [asyncio.ensure_future(z._async_array.getitem((i,))) for i in range(6)]
        await asyncio.sleep(0)  # every task has asked
        tasks[2].cancel()
        done = await asyncio.gather(*tasks, return_exceptions=True)
        return done

    done = asyncio.run(main())
    assert isinstance(done[2], asyncio.CancelledError)
    for i in (0, 1, 3, 4, 5):
        assert np.array_equal(done[i], DATA[i])


def test_reads_under_other_settings_are_not_batched_together():
    store = CountingStore(MemoryStore())
    z = zarrkit.create_array(store, shape=(16,), chunks=(4,), shards=(16,), dtype="u1", compressors=None)
    z[:] = np.arange(16)
    r = zarrkit.open_array(store, mode="r")
    _ = r.dtype

    async def read(i, threads):
        with zarrkit.config.set(threads=threads):
            return (await r._async_array.getitem(slice(4 * i, 4 * i + 4))).tolist()

    def plans(*threads):
        store.reset()
        got = asyncio.run(_gather(*(read(i, t) for i, t in enumerate(threads))))
        assert got == [list(range(4 * i, 4 * i + 4)) for i in range(len(threads))]
        return len([k for k, _ in store.keys_read if k.startswith("c/")]) // 2  # an index and chunks each

    assert plans(1, 1, 1) == 1
    assert plans(1, 2, 1) == 2  # the second's settings are its own: a plan of its own


async def _gather(*coroutines):
    return await asyncio.gather(*coroutines)


def test_the_asynchronous_array_reads_many_too():
    z = ARRAYS["v2"]
    got = asyncio.run(z._async_array.get_many([(0,), (slice(3, 5), 2)]))
    assert np.array_equal(got[0], DATA[0]) and np.array_equal(got[1], DATA[3:5, 2])


def test_items_of_every_kind_of_data_type_come_as_z_gives_them():
    import numcodecs

    strings = zarrkit.create_array(MemoryStore(), shape=(10,), chunks=(3,), dtype=str)
    strings[:] = np.array([f"s{i}" for i in range(10)])
    objects = zarrkit.zeros((5,), chunks=(2,), dtype=object, object_codec=numcodecs.VLenUTF8())
    objects[:] = np.array(list("abcde"), dtype=object)
    records = zarrkit.create_array(MemoryStore(), shape=(6,), chunks=(4,), dtype=[("a", "i4"), ("b", "f8")],
                                   zarr_format=2)
    records[:] = np.array([(i, i / 2) for i in range(6)], dtype=records.dtype)
    zero_d = zarrkit.create_array(MemoryStore(), shape=(), dtype="f4")
    zero_d[...] = 3
    cases = [(strings, [slice(1, 5), 4, slice(None, None, -4)]), (objects, [slice(1, 4), 2]),
             (records, [slice(0, 2), 5]), (zero_d, [(), Ellipsis])]
    for z, selections in cases:
        for selection, got in zip(selections, z.get_many(selections)):
            want = z[selection]
            assert type(got) is type(want), (z.dtype, selection)
            assert np.array_equal(np.asarray(got), np.asarray(want)), (z.dtype, selection)
