"""A sharded array shrunk and grown again reads what an unsharded array of its inner chunks
reads: the inner chunks wholly outside the shrunk shape are gone (the regrown region reads the
fill value), as an unsharded array's chunks are, even in the shards the shrink keeps; an inner
chunk straddling the shape keeps its elements as a straddling chunk does (zarr-python's
"boundary chunks remain intact")."""

from __future__ import annotations

import numpy as np
import pytest

import zarrkit
from zarrkit.storage import MemoryStore


def _pair(shape, inner, shards, fill=0):
    """An unsharded array of chunks ``inner`` and a sharded one of inner chunks ``inner``,
    both holding 7 everywhere."""
    plain = zarrkit.create_array(MemoryStore(), shape=shape, chunks=inner, dtype="i4",
                                 fill_value=fill, zarr_format=3)
    sharded = zarrkit.create_array(MemoryStore(), shape=shape, chunks=inner, shards=shards,
                                   dtype="i4", fill_value=fill, zarr_format=3)
    plain[...] = 7
    sharded[...] = 7
    return plain, sharded


def test_regrown_region_of_a_sharded_array_reads_the_fill_value():
    plain, sharded = _pair((100,), (5,), (20,))
    for z in (plain, sharded):
        z.resize(55)
        z.resize(100)
    np.testing.assert_array_equal(plain[:], np.r_[np.full(55, 7), np.zeros(45)])
    np.testing.assert_array_equal(sharded[:], plain[:])


def test_shrink_deletes_the_inner_chunks_outside_from_the_shards_kept():
    plain, sharded = _pair((100,), (5,), (20,))
    for z in (plain, sharded):
        z.resize(55)
    assert sharded.nchunks_initialized == plain.nchunks_initialized == 11


def test_a_straddling_chunk_regrown_reads_the_fill_value():
    # a chunk (inner chunk) straddling the shrunk shape keeps its elements outside it, but
    # growing over them shows the fill value, sharded or not (zarr-python shows them again)
    plain, sharded = _pair((100,), (10,), (40,))
    for z in (plain, sharded):
        z.resize(55)
        z.resize(100)
    np.testing.assert_array_equal(sharded[:], plain[:])
    assert (plain[:55] == 7).all() and (plain[55:] == 0).all()


def test_growing_clears_what_a_shrink_without_deleting_left():
    plain, sharded = _pair((100,), (5,), (20,))
    for z in (plain, sharded):
        z.resize(55, delete_outside_chunks=False)
        np.testing.assert_array_equal(z[:], np.full(55, 7))
        z.resize(100)
    np.testing.assert_array_equal(sharded[:], plain[:])
    assert (sharded[55:] == 0).all()


@pytest.mark.parametrize("fill", [0, -3])
def test_random_shape_changes_of_a_sharded_array_match_the_unsharded(fill):
    rng = np.random.default_rng(53)
    plain, sharded = _pair((13, 11), (2, 3), (6, 6), fill=fill)
    for _ in range(25):
        shape = tuple(int(n) for n in rng.integers(1, 16, size=2))
        delete = bool(rng.integers(0, 4))  # sometimes keep what lies outside
        for z in (plain, sharded):
            z.resize(shape, delete_outside_chunks=delete)
        np.testing.assert_array_equal(sharded[...], plain[...])
        if rng.integers(0, 2):
            region = tuple(slice(int(rng.integers(0, n)), None) for n in shape)
            value = int(rng.integers(1, 100))
            plain[region] = value
            sharded[region] = value
    for z in (plain, sharded):
        z.resize(20, 20)
    np.testing.assert_array_equal(sharded[...], plain[...])


def test_appending_to_a_sharded_array_after_a_shrink_matches_the_unsharded():
    plain, sharded = _pair((30, 4), (3, 2), (12, 4))
    for z in (plain, sharded):
        z.resize(16, 4)
        z.append(np.full((2, 4), 5, dtype="i4"))
        z.resize(30, 4)
    np.testing.assert_array_equal(sharded[...], plain[...])
    assert (sharded[18:] == 0).all()


def test_a_rectilinear_grid_of_shards_regrows_as_the_unsharded():
    plain = zarrkit.create_array(MemoryStore(), shape=(30,), chunks=(2,), dtype="i4", zarr_format=3)
    sharded = zarrkit.create_array(MemoryStore(), shape=(30,), chunks=(2,), shards=[[4, 8, 6, 12]],
                                   dtype="i4", zarr_format=3)
    for z in (plain, sharded):
        z[:] = 7
        z.resize(15)
        z.resize(30)
    np.testing.assert_array_equal(sharded[:], plain[:])
    assert (sharded[16:] == 0).all()
