"""Selections as zarr-python 3 code uses them: its error wording, unsigned indices, several
Boolean arrays, the helpers of ``zarr.core.indexing`` and an array's chunk regions."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import zarrkit
from zarrkit.core import indexing_tools as tools
from zarrkit.errors import BoundsCheckError, SelectionError, ShapeMismatchError


@pytest.fixture
def z1() -> zarrkit.Array:
    z = zarrkit.create_array({}, shape=(30,), chunks=(7,), dtype="i8")
    z[:] = np.arange(30)
    return z


@pytest.fixture
def z2() -> zarrkit.Array:
    z = zarrkit.create_array({}, shape=(12, 5), chunks=(5, 2), dtype="i8")
    z[:] = np.arange(60).reshape(12, 5)
    return z


@pytest.mark.parametrize(("selection", "words"), [
    (2.3, "unsupported selection item for basic indexing; expected integer or slice, got <class 'float'>"),
    (None, "unsupported selection item for basic indexing; expected integer or slice, got <class 'NoneType'>"),
    (b"x", "unsupported selection item for basic indexing; expected integer or slice, got <class 'bytes'>"),
    ([1, 0], "unsupported selection item for basic indexing; expected integer or slice, got <class 'list'>"),
    ((0, 0), "too many indices for array; expected 1, got 2"),
    (30, "index out of bounds for dimension with length 30"),
])
def test_basic_selection_errors_name_the_problem(z1: zarrkit.Array, selection: object, words: str) -> None:
    with pytest.raises(IndexError) as info:
        z1.get_basic_selection(selection)
    assert words in str(info.value)
    assert isinstance(info.value, SelectionError)


@pytest.mark.parametrize(("selection", "words"), [
    (np.zeros(5, dtype=bool), "wrong length for dimension; expected 30, got 5"),
    (np.zeros((2, 2), dtype=bool), "Boolean arrays in an orthogonal selection must be 1-dimensional only"),
    ([[2, 4], [6, 8]], "integer arrays in an orthogonal selection must be 1-dimensional only"),
    ([31], "index out of bounds for dimension with length 30"),
    ([-31], "index out of bounds for dimension with length 30"),
    (2.3, "unsupported selection item for orthogonal indexing"),
])
def test_orthogonal_selection_errors_name_the_problem(z1: zarrkit.Array, selection: object, words: str) -> None:
    with pytest.raises(IndexError, match=words):
        z1.get_orthogonal_selection(selection)


@pytest.mark.parametrize("index", [2**63, 2**64 - 4, 2**64 - 1])
@pytest.mark.parametrize("accessor", ["oindex", "vindex"])
def test_unsigned_indices_too_large_for_intp_are_out_of_bounds(z2: zarrkit.Array, index: int, accessor: str) -> None:
    before = z2[:]
    selection = (np.array([0, 1]), np.array([0, index], dtype="uint64"))
    with pytest.raises(BoundsCheckError, match="out of bounds"):
        getattr(z2, accessor)[selection]
    with pytest.raises(BoundsCheckError, match="out of bounds"):
        getattr(z2, accessor)[selection] = 99
    np.testing.assert_array_equal(z2[:], before)


def test_unsigned_indices_in_bounds_read_and_write(z1: zarrkit.Array) -> None:
    rows = np.array([29, 0, 3], dtype="uint64")
    np.testing.assert_array_equal(z1.oindex[rows], [29, 0, 3])
    z1.vindex[rows] = -1
    assert z1[29] == z1[0] == z1[3] == -1


def test_boolean_arrays_on_several_dimensions_select_orthogonally(z2: zarrkit.Array) -> None:
    a = np.arange(60).reshape(12, 5)
    rows = np.tile([True, False], 6)
    cols = [True, False, True, False, True]
    np.testing.assert_array_equal(z2[rows, cols], a[np.ix_(rows, cols)])
    np.testing.assert_array_equal(z2[rows, np.array([0, 4])], a[np.ix_(rows, [0, 4])])


def test_integer_arrays_on_every_dimension_still_select_points(z2: zarrkit.Array) -> None:
    np.testing.assert_array_equal(z2[[0, 11], [1, 4]], [1, 59])


def test_vindex_takes_a_boolean_list_as_a_mask(z1: zarrkit.Array) -> None:
    mask = [i % 10 == 0 for i in range(30)]
    np.testing.assert_array_equal(z1.vindex[mask], [0, 10, 20])


def test_coordinate_selection_refuses_slices(z2: zarrkit.Array) -> None:
    with pytest.raises(SelectionError, match="unsupported selection item for coordinate indexing"):
        z2.get_coordinate_selection((slice(None), [0, 1]))


def test_value_of_the_wrong_rank_is_a_shape_mismatch(z2: zarrkit.Array) -> None:
    with pytest.raises(ShapeMismatchError, match="shape mismatch"):
        z2.vindex[np.array([1, 2]), np.array([1, 2])] = np.zeros((2, 2))


@pytest.mark.parametrize(("selection", "words"), [
    (5, "block index out of bounds"),
    (-6, "block index out of bounds"),
    (slice(0, 4, 2), "step=1"),
    ([0, 1], "unsupported selection item for block indexing"),
])
def test_block_selection_errors(z1: zarrkit.Array, selection: object, words: str) -> None:
    with pytest.raises(IndexError, match=words):
        z1.get_block_selection(selection)


def test_block_slices_clamp_to_the_grid_as_numpy_slices_do(z1: zarrkit.Array) -> None:
    np.testing.assert_array_equal(z1.blocks[3:10], np.arange(21, 30))
    assert z1.blocks[5:9].shape == (0,)


def test_get_selection_fills_an_object_with_a_numpy_array() -> None:
    class Holder:
        def __init__(self, array: np.ndarray) -> None:
            self.array = array

        def as_numpy_array(self) -> np.ndarray:
            return self.array

    z = zarrkit.create_array({}, shape=(6,), chunks=(4,), dtype="i2")
    z[:] = np.arange(6)
    out = Holder(np.zeros(3, dtype="i2"))
    assert z.get_basic_selection(slice(1, 4), out=out) is out
    np.testing.assert_array_equal(out.array, [1, 2, 3])


# -- helpers outside an array ----------------------------------------------------------------


def test_replace_ellipsis_and_normalize_integer_selection() -> None:
    assert tools.replace_ellipsis((Ellipsis, 0), (3, 4, 5)) == (slice(None), slice(None), 0)
    assert tools.replace_ellipsis(slice(2, None), (3, 4)) == (slice(2, None), slice(None))
    assert tools.normalize_integer_selection(-1, 10) == 9
    with pytest.raises(IndexError):
        tools.normalize_integer_selection(10, 10)
    with pytest.raises(IndexError):
        tools.replace_ellipsis((0, 0, 0), (3, 4))


def test_make_slice_selection_keeps_every_dimension() -> None:
    a = np.arange(24).reshape(4, 6)
    sel = tools.make_slice_selection((np.uint64(3), np.array([2])))
    assert a[tuple(sel)].shape == (1, 1)
    with pytest.raises(IndexError):
        tools.make_slice_selection((np.array([1, 2]),))


@pytest.mark.parametrize("selection", [
    (0, slice(None), [0, 2]),
    (0, slice(None), [True, False, True]),
    ([1, 0], 1, slice(0, 3, 2)),
    (Ellipsis, [2]),
])
def test_oindex_matches_the_array_oindex(selection: tuple[object, ...]) -> None:
    a = np.arange(2 * 3 * 3).reshape(2, 3, 3)
    z = zarrkit.array(a, chunks=(1, 2, 2))
    np.testing.assert_array_equal(tools.oindex(a, selection), z.oindex[selection])
    b = a.copy()
    value = np.full(z.oindex[selection].shape, -5)
    tools.oindex_set(b, selection, value)
    z.oindex[selection] = value
    np.testing.assert_array_equal(b, z[:])


def test_iter_grid_walks_a_block_in_c_order() -> None:
    assert list(tools.iter_grid((2, 3))) == list(itertools.product(range(2), range(3)))
    assert list(tools.iter_grid((4, 5), origin=(1, 2), selection_shape=(2, 2))) == [(1, 2), (1, 3), (2, 2), (2, 3)]
    with pytest.raises(IndexError):
        list(tools.iter_grid((5,), origin=(0,), selection_shape=(10,)))
    with pytest.raises(ValueError):
        list(tools.iter_grid((5,), origin=(0, 0)))


@pytest.mark.parametrize("trim", [True, False])
def test_iter_regions_of_a_regular_grid(trim: bool) -> None:
    regions = list(tools.iter_regions((5, 3), (2, 3), trim_excess=trim))
    last = slice(4, 5, 1) if trim else slice(4, 6, 1)
    assert regions == [(slice(0, 2, 1), slice(0, 3, 1)), (slice(2, 4, 1), slice(0, 3, 1)), (last, slice(0, 3, 1))]


def test_chunk_and_shard_regions_of_an_array() -> None:
    z = zarrkit.create_array({}, shape=(10, 10), chunks=(2, 5), shards=(4, 10), dtype="u1")
    chunks = list(z._iter_chunk_regions())
    shards = list(z._iter_shard_regions())
    assert len(chunks) == 10 and len(shards) == 3
    assert chunks[1] == (slice(0, 2, 1), slice(5, 10, 1))
    assert shards[-1] == (slice(8, 10, 1), slice(0, 10, 1))
    for region in chunks:
        z[region] = 1
        np.testing.assert_array_equal(z[region], 1)
    assert list(z._iter_chunk_regions(origin=(4, 1))) == [(slice(8, 10, 1), slice(5, 10, 1))]


def test_points_on_a_grid_of_more_chunks_than_intp_counts() -> None:
    z = zarrkit.create_array({}, shape=(2**40, 2**40), chunks=(1, 1), dtype="i4", fill_value=-1)
    rows, cols = np.array([7, 0, 3, 0]), np.array([1, 5, 2**40 - 1, 5])
    z.vindex[rows, cols] = np.array([10, 20, 30, 20], dtype="i4")
    np.testing.assert_array_equal(z.vindex[rows, cols], [10, 20, 30, 20])
    np.testing.assert_array_equal(z.vindex[np.array([0, 42]), np.array([0, 42])], [-1, -1])


def test_zarr3_signature_indexers_project_like_make_indexer() -> None:
    from zarrkit.core.indexing import (
        BasicIndexer,
        BlockIndexer,
        CoordinateIndexer,
        MaskIndexer,
        OrthogonalIndexer,
        make_indexer,
    )
    from zarrkit.metadata.grid import RectilinearGrid

    grid = RectilinearGrid((60, 100), ([(10, 1), (20, 1), (30, 1)], [(50, 2)]))
    projections = list(BasicIndexer((15, slice(None)), (60, 100), grid))
    assert [p.chunk_coords for p in projections] == [(1, 0), (1, 1)]
    assert projections[0].chunk_selection == (5, slice(0, 50, 1))
    assert len(list(OrthogonalIndexer((np.array([5, 15, 35]), slice(None)), (60, 100), grid))) == 6
    assert [p.chunk_coords for p in BlockIndexer((2, 1), (60, 100), grid)] == [(2, 1)]
    points = list(CoordinateIndexer((np.array([3, 4, 4, 19]),), (20,), (3,)))
    assert [p.chunk_coords for p in points] == [(1,), (6,)]
    mask = np.zeros(20, dtype=bool)
    mask[[1, 4, 19]] = True
    assert MaskIndexer((mask,), (20,), (3,)).shape == (3,)
    assert make_indexer(slice(2, 7), (10,), (4,), "basic").shape == (5,)
