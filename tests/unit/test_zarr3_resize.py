"""Resizing as zarr-python 3 does it: keeping the chunks outside (``delete_outside_chunks``),
the coordinates a shrink leaves out, stores that cannot list, and the errors."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import numpy as np
import pytest

import zarrkit
from zarrkit.core.resize import chunk_coords_outside
from zarrkit.storage import MemoryStore


def _filled(store: MemoryStore, **kwargs: object) -> zarrkit.Array:
    z = zarrkit.create_array(store, shape=(8, 9), chunks=(3, 4), dtype="i4", **kwargs)
    z[:] = np.arange(1, 73, dtype="i4").reshape(8, 9)
    return z


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_resize_without_deleting_keeps_every_stored_chunk(zarr_format: int) -> None:
    store = MemoryStore()
    z = _filled(store, zarr_format=zarr_format)
    chunks_before = {k: store.get(k) for k in store.list_prefix("") if not k.endswith(("json", "zarray", "zattrs"))}
    z.resize((4, 5), delete_outside_chunks=False)
    assert z.shape == (4, 5)
    assert {k: store.get(k) for k in chunks_before} == chunks_before
    np.testing.assert_array_equal(z[:], np.arange(1, 73).reshape(8, 9)[:4, :5])


def test_resize_deleting_removes_exactly_the_chunks_outside() -> None:
    store = MemoryStore()
    z = _filled(store)
    z.resize((4, 5))
    kept = sorted(k for k in store.list_prefix("c/"))
    assert kept == ["c/0/0", "c/0/1", "c/1/0", "c/1/1"]


class _Unlisted(MemoryStore):
    """A store that cannot list its keys (as some HTTP stores)."""

    supports_listing = False

    def list_prefix(self, prefix: str) -> Iterator[str]:
        raise AssertionError("this store cannot list")


def test_resize_on_a_store_that_cannot_list_deletes_by_coordinates() -> None:
    store = _Unlisted()
    z = _filled(store)
    z.resize((3, 9))
    assert z.shape == (3, 9)
    for coords in itertools.product(range(3), range(3)):
        key = "c/" + "/".join(map(str, coords))
        assert (store.get(key) is not None) == (coords[0] == 0)
    np.testing.assert_array_equal(z[:], np.arange(1, 73).reshape(8, 9)[:3])


@pytest.mark.parametrize(("old", "new"), [((4, 3), (2, 5)), ((3,), (0,)), ((2, 2, 2), (1, 2, 1)), ((), ())])
def test_chunk_coords_outside_are_the_difference_of_the_grids(old: tuple[int, ...], new: tuple[int, ...]) -> None:
    found = list(chunk_coords_outside(old, new))
    expected = set(itertools.product(*map(range, old))) - set(itertools.product(*map(range, new)))
    assert set(found) == expected and len(found) == len(expected)


def test_chunk_coords_outside_a_huge_grid_are_made_lazily() -> None:
    coords = chunk_coords_outside((2**40, 2**40), (0, 1))
    assert list(itertools.islice(coords, 3)) == [(0, 0), (0, 1), (0, 2)]


def test_resize_to_another_number_of_dimensions_is_refused() -> None:
    z = zarrkit.create_array({}, shape=(10, 10), chunks=(5, 5), dtype="i4")
    with pytest.raises(ValueError, match="same number of dimensions"):
        z.resize((20,))
    assert z.shape == (10, 10)


def test_zarr3_core_array_finds_the_chunk_coordinates_to_delete() -> None:
    import importlib

    from zarrkit.compat import ZARR3_PATHS

    modules = [importlib.import_module(f"zarrkit.{m}") for m in ZARR3_PATHS["core.array"]]
    found = next(m._iter_chunk_coords_to_delete for m in modules if hasattr(m, "_iter_chunk_coords_to_delete"))
    assert found is chunk_coords_outside
