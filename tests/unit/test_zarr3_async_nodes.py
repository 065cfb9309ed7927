"""The asynchronous facade as zarr-python 3 code (and xarray) uses it: orthogonal and vectorised
reads through ``oindex.getitem``/``vindex.getitem``, store paths, counts and resizes."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest

import zarrkit
from zarrkit.api.async_nodes import AsyncArray, AsyncGroup, AsyncOIndex, AsyncVIndex
from zarrkit.compat import ZARR3_PATHS
from zarrkit.storage import MemoryStore, StorePath


def _array(**kwargs: Any) -> AsyncArray:
    z = zarrkit.create_array(MemoryStore(), shape=(6, 4), chunks=(2, 2), dtype="i4", **kwargs)
    z[:] = np.arange(24).reshape(6, 4)
    return AsyncArray(z)


def test_oindex_and_vindex_getitem_are_awaited() -> None:
    arr = _array()

    async def main() -> tuple[Any, Any]:
        return await asyncio.gather(arr.oindex.getitem(([0, 5], slice(1, 3))),
                                    arr.vindex.getitem((np.array([0, 5]), np.array([1, 3]))))

    outer, points = asyncio.run(main())
    np.testing.assert_array_equal(outer, [[1, 2], [21, 22]])
    np.testing.assert_array_equal(points, [1, 23])
    assert isinstance(arr.oindex, AsyncOIndex) and isinstance(arr.vindex, AsyncVIndex)


def test_zarr3_core_indexing_names_the_facade_classes() -> None:
    assert "api.async_nodes" in ZARR3_PATHS["core.indexing"]
    assert "core.indexing_tools" in ZARR3_PATHS["core.indexing"]


def test_store_path_of_arrays_and_groups() -> None:
    store = MemoryStore()
    group = asyncio.run(AsyncGroup.from_store(StorePath(store, "root")))
    child = asyncio.run(group.create_array("x", shape=(3,), dtype="u1"))
    assert group.store_path == StorePath(store, "root")
    assert child.store_path == StorePath(store, "root/x")
    assert child.store_path.store is store


def test_counts_of_stored_chunks_and_shards() -> None:
    arr = _array(shards=(2, 4))
    assert asyncio.run(arr.nchunks_initialized()) == 6
    assert asyncio.run(arr.nshards_initialized()) == 3
    assert asyncio.run(arr._nshards_initialized()) == 3


@pytest.mark.parametrize("delete", [True, False])
def test_resize_keeps_or_deletes_the_chunks_outside(delete: bool) -> None:
    arr = _array()
    store = arr.store
    before = set(store.list_prefix(""))
    asyncio.run(arr.resize((2, 4), delete_outside_chunks=delete))
    assert arr.shape == (2, 4)
    after = set(store.list_prefix(""))
    outside = {k for k in before if k.startswith("c/") and int(k.split("/")[1]) >= 1}
    assert after == (before - outside if delete else before)
    np.testing.assert_array_equal(asyncio.run(arr.getitem(...)), np.arange(8).reshape(2, 4))


def test_chunk_regions_of_the_facade() -> None:
    arr = _array()
    assert list(arr._iter_chunk_regions())[:2] == [(slice(0, 2, 1), slice(0, 2, 1)), (slice(0, 2, 1), slice(2, 4, 1))]
    assert len(list(arr._iter_shard_regions())) == 6


def test_sync_runs_a_coroutine_from_synchronous_code_and_inside_a_loop() -> None:
    from zarrkit.api.async_nodes import collect_aiterator, sync

    arr = _array()
    np.testing.assert_array_equal(sync(arr.getitem((0, slice(None)))), [0, 1, 2, 3])

    async def inside() -> Any:
        return sync(arr.getitem((1, 0)))

    assert asyncio.run(inside()) == 4
    group = sync(AsyncGroup.from_store(MemoryStore()))
    sync(group.create_group("a"))
    assert [name for name, _ in collect_aiterator(group.members())] == ["a"]
    assert ZARR3_PATHS["core.sync"] == ("api.async_nodes",)


def test_sync_raises_the_coroutine_error_and_refuses_its_own_loop() -> None:
    from zarrkit.api.async_nodes import sync

    async def fails() -> None:
        raise KeyError("missing")

    with pytest.raises(KeyError, match="missing"):
        sync(fails())

    async def nested() -> None:
        sync(fails())

    with pytest.raises(RuntimeError, match="loop it would wait for"):
        sync(nested())
