"""What a new user meets first: ``repr`` and ``.info`` on object storage cost (almost) nothing,
and errors say which store they are about."""

from __future__ import annotations

import pytest

import zarrkit as zarr
from zarrkit.errors import ArrayNotFoundError, ContainsGroupError, GroupNotFoundError
from zarrkit.storage import CountingStore, DirectoryStore, LatencyStore, MemoryStore


def _remote_like_array(zarr_format=2):
    inner = MemoryStore()
    z = zarr.zeros((100, 100), chunks=(10, 10), store=inner, zarr_format=zarr_format)
    z[:] = 1
    counting = CountingStore(LatencyStore(inner, seconds=0))
    return zarr.open_array(counting, mode="r"), counting


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_repr_on_a_high_latency_store_asks_nothing(zarr_format):
    z, counting = _remote_like_array(zarr_format)
    counting.reset()
    text = repr(z)
    assert sum(counting.counts.values()) == 0
    # zarr-python 2's repr for a v2 array, zarr-python 3's for a v3 one
    assert (text == "<zarrkit.Array (100, 100) float64 read-only>") if zarr_format == 2 else text.endswith(
        "shape=(100, 100) dtype=float64>"
    )


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_info_on_a_high_latency_store_costs_listings_not_a_request_per_chunk(zarr_format):
    z, counting = _remote_like_array(zarr_format)
    counting.reset()
    info = str(z.info if zarr_format == 2 else z.info_complete())
    assert ("100/100" if zarr_format == 2 else "Chunks Initialized : 100") in info
    assert counting.counts["get"] == 0 and counting.counts["getsize"] == 0
    assert counting.counts["list"] <= 2


def test_info_on_a_local_store_has_the_documented_summary():
    z = zarr.zeros((10, 10), chunks=(5, 5), store=MemoryStore(), zarr_format=2)
    z[:] = 1
    assert "Chunks initialized : 4/4" in str(z.info)


def test_errors_name_the_store_and_place(tmp_path):
    where = str(tmp_path / "data.zarr")
    with pytest.raises(ArrayNotFoundError, match=r"in store DirectoryStore\('.*data\.zarr'\) at path ''"):
        zarr.open_array(DirectoryStore(where), mode="r")
    with pytest.raises(GroupNotFoundError, match=r"DirectoryStore\('.*data\.zarr'\) at path 'a/b'"):
        zarr.open_group(DirectoryStore(where), path="a/b", mode="r")
    g = zarr.group(DirectoryStore(where))
    with pytest.raises(ContainsGroupError, match=r"the root of DirectoryStore\('.*data\.zarr'\)"):
        zarr.create(10, store=g.store)
    with pytest.raises(ArrayNotFoundError, match=r"FsspecStore\('memory://"):
        zarr.open_array("memory://nothing-here", mode="r")
