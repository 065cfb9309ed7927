"""zarr-python 3's ChunkGrid (``zarrkit.experimental.ChunkGrid``): grids made from chunk sizes,
their chunk coordinates and regions enumerated lazily, and the chunk keys of metadata."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from zarrkit.experimental import ChunkGrid

import zarrkit


def test_from_sizes_makes_regular_and_rectilinear_grids():
    regular = ChunkGrid.from_sizes((10, 7), (4, 3))
    assert regular.is_regular and regular.grid_shape == (3, 3) and regular.get_nchunks() == 9
    assert regular.chunk_sizes == ((4, 4, 2), (3, 3, 1))  # the edge chunks' parts in the array
    # a sequence of edges is rectilinear, even when they are all equal
    varying = ChunkGrid.from_sizes(12, [[4, 4, 4]])
    assert not varying.is_regular and varying.chunk_sizes == ((4, 4, 4),)
    mixed = ChunkGrid.from_sizes((10, 7), [[1, 2, 7], 5])
    assert mixed.grid_shape == (3, 2) and mixed.chunk_sizes == ((1, 2, 7), (5, 2))
    with pytest.raises(ValueError, match="dimensions"):
        ChunkGrid.from_sizes((10, 7), (4,))


def test_all_chunk_coords_and_regions_of_a_part_of_the_grid():
    grid = ChunkGrid.from_sizes((10, 7), (4, 3))
    assert list(grid.all_chunk_coords()) == list(itertools.product(range(3), range(3)))
    assert list(grid.all_chunk_coords(origin=(1, 1), selection_shape=(2, 1))) == [(1, 1), (2, 1)]
    assert list(grid.iter_chunk_regions(origin=(2, 2))) == [(slice(8, 10, 1), slice(6, 7, 1))]
    with pytest.raises(IndexError):
        grid.all_chunk_coords(origin=(2, 0), selection_shape=(2, 1))
    # made one at a time: a grid of 2**80 chunks is enumerated from its start at once
    huge = ChunkGrid.from_sizes((2**40, 2**40), (1, 1))
    assert huge.get_nchunks() == 2**80
    assert list(itertools.islice(huge.all_chunk_coords(), 2)) == [(0, 0), (0, 1)]
    assert list(ChunkGrid.from_sizes((), ()).all_chunk_coords()) == [()]


def test_array_grids_agree_with_the_chunks_stored():
    a = zarrkit.create_array({}, shape=(5, 4), chunks=(2, 3), dtype="u1")
    a[...] = 1
    grid = ChunkGrid.from_sizes(a.shape, a.chunks)
    assert sorted(a.metadata.encode_chunk_key(c) for c in grid.all_chunk_coords()) == sorted(
        key for key in a.store if key.startswith("c/"))
    for region in grid.iter_chunk_regions():
        assert np.all(a[region] == 1)
    v2 = zarrkit.create_array({}, shape=(5, 4), chunks=(2, 3), dtype="u1", zarr_format=2)
    assert v2.metadata.encode_chunk_key((2, 1)) == "2.1"


@pytest.mark.parametrize("kwargs", [dict(chunks=(3, 4)), dict(chunks=(3, 4), zarr_format=2),
                                    dict(chunks=(1, 1), shards=(3, 4)), dict(chunks=[[2, 3, 3], [3, 2, 4]])])
def test_the_grid_of_metadata_of_another_shape(kwargs):
    a = zarrkit.create_array({}, shape=(8, 9), dtype="int32", **kwargs)
    grid = ChunkGrid.from_metadata(a.metadata)  # of what is stored: chunks, or shards
    assert grid.grid_shape == (3, 3)
    smaller = a.metadata.update_shape((4, 5))
    assert smaller.shape == (4, 5) and a.metadata.shape == (8, 9)
    assert ChunkGrid.from_metadata(smaller).grid_shape == (2, 2)
    # the chunks a shrink leaves out are those no longer on the grid
    gone = set(grid.all_chunk_coords()) - set(ChunkGrid.from_metadata(smaller).all_chunk_coords())
    assert len(gone) == 9 - 4
