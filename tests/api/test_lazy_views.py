"""Lazy views (``Array.lazy``): what they compose, what they read and write, and who takes them."""

from __future__ import annotations

import numpy as np
import pytest

import zarrkit
from zarrkit.errors import BoundsCheckError, ReadOnlyError, SelectionError, ShapeMismatchError
from zarrkit.storage import CountingStore

pytest.importorskip("zarr_indexing")

SHAPE = (40, 30)
DATA = np.arange(1200, dtype="i4").reshape(SHAPE)


def counted(sharded: bool = False, zarr_format: int = 3):
    """An array of DATA in chunks of (4, 5) (shards of (8, 10)) over a counting store."""
    store = CountingStore(zarrkit.MemoryStore())
    if sharded:
        z = zarrkit.create_array(store, shape=SHAPE, chunks=(4, 5), shards=(8, 10), dtype="i4",
                                 zarr_format=3)
    else:
        z = zarrkit.create(shape=SHAPE, chunks=(4, 5), dtype="i4", store=store, zarr_format=zarr_format)
    z[...] = DATA
    store.reset()
    return z, store


def positions_of(build):
    """Which flat positions of DATA each cell of ``build(view)`` shows, by NumPy."""
    return build(np.arange(DATA.size).reshape(SHAPE))


def touched(positions, grid):
    """The grid cells (chunks or shards of ``grid``) that hold the given positions."""
    rows, cols = np.unravel_index(np.asarray(positions).reshape(-1), SHAPE)
    return set(zip((rows // grid[0]).tolist(), (cols // grid[1]).tolist()))


def key_of(z):
    full = zarrkit.open_array(z.store, mode="r")
    return dict(full.iter_stored())


# -- composing ---------------------------------------------------------------------------
def test_the_example_of_the_brief_composes_and_reads_as_numpy():
    z = zarrkit.array(DATA, chunks=(7, 9), zarr_format=3)
    v = z.lazy[5:50:2, ::-3].oindex[[3, 1, 1], :]
    assert v.shape == (3, 10) and v.ndim == 2 and v.dtype == np.dtype("i4") and v.size == 30
    expected = DATA[5:50:2, ::-3][[3, 1, 1], :]
    np.testing.assert_array_equal(np.asarray(v), expected)
    np.testing.assert_array_equal(v.read(), expected)


@pytest.mark.parametrize("build", [
    lambda a: a.T[::-2, 3:40],
    lambda a: a[::-1, 7][2:30:3],
    lambda a: a[None, 4:9, None, ::7],
])
def test_basic_selections_and_transposes(build):
    z = zarrkit.array(DATA, chunks=(7, 9), zarr_format=2)
    np.testing.assert_array_equal(build(z.lazy).read(), build(DATA))


def test_points_masks_and_their_compositions():
    z = zarrkit.array(DATA, chunks=(7, 9), zarr_format=3)
    mask = DATA % 7 == 0
    np.testing.assert_array_equal(z.lazy.vindex[mask].read(), DATA[mask])
    np.testing.assert_array_equal(z.lazy[mask].read(), DATA[mask])  # [] reads a mask as the array does
    pts = z.lazy.T.vindex[[1, 5, 5], [2, 0, 3]][::-1]
    np.testing.assert_array_equal(pts.read(), DATA.T[[1, 5, 5], [2, 0, 3]][::-1])
    sub = z.lazy[10:20, ::-2].oindex[[0, 9, 3], [1, 1, 4]].T.vindex[[0, 2], [1, 1]]
    np.testing.assert_array_equal(sub.read(), DATA[10:20, ::-2][np.ix_([0, 9, 3], [1, 1, 4])].T[[0, 2], [1, 1]])
    # an integer in oindex drops its dimension; [] with one array is orthogonal
    np.testing.assert_array_equal(z.lazy.oindex[3, [4, 0]].read(), DATA[3, [4, 0]])
    np.testing.assert_array_equal(z.lazy[:, [4, 0]].read(), DATA[:, [4, 0]])


def test_a_single_element_view_is_zero_dimensional():
    z = zarrkit.array(DATA, chunks=(7, 9), zarr_format=3)
    v = z.lazy[-1, 3]
    assert v.shape == () and v.read().shape == ()
    assert int(np.asarray(v)) == DATA[-1, 3]
    with pytest.raises(TypeError):
        len(v)
    assert [int(np.asarray(row[0])) for row in z.lazy[:3]] == [0, 30, 60]


def test_blocks_are_the_chunks_as_the_view_sees_them():
    z = zarrkit.array(DATA, chunks=(7, 9), zarr_format=3)
    np.testing.assert_array_equal(z.lazy.blocks[1, 2].read(), DATA[7:14, 18:27])
    np.testing.assert_array_equal(z.lazy.blocks[-1, 1:3].read(), DATA[35:40, 9:27])
    # cut by the view: its first block ends where the array's first chunk does
    np.testing.assert_array_equal(z.lazy[3:].blocks[0].read(), DATA[3:7])
    np.testing.assert_array_equal(z.lazy.T[2:].blocks[0, 1].read(), DATA.T[2:9, 7:14])
    # any step: runs of the view's positions in one chunk; 3 columns of the reversed last chunk
    strided = z.lazy[::2, ::-1]
    assert strided.chunks == ((4, 3, 4, 3, 4, 2), (3, 9, 9, 9))
    np.testing.assert_array_equal(strided.blocks[1, 0].read(), DATA[::2, ::-1][4:7, 0:3])
    assert z.lazy.oindex[[0, 1, 20, 8, 9], 5].chunks == ((2, 1, 2),)
    assert z.lazy.T.chunks == ((9, 9, 9, 3), (7, 7, 7, 7, 7, 5))
    points = z.lazy.vindex[[0, 1], [1, 0]]
    assert points.chunks is None
    with pytest.raises(SelectionError, match="points or of a mask"):
        points.blocks[0]
    with pytest.raises(IndexError, match="out of range"):
        z.lazy.blocks[6]


def test_astype_reads_and_writes_through_the_new_type():
    z = zarrkit.array(DATA, chunks=(7, 9), zarr_format=3)
    v = z.lazy[:2, :3].astype("f4")
    assert v.dtype == np.dtype("f4")
    got = v.read()
    assert got.dtype == np.dtype("f4")
    np.testing.assert_array_equal(got, DATA[:2, :3].astype("f4"))
    v[...] = 2.75  # cast to f4, then to the array's i4
    assert (z[:2, :3] == 2).all() and z[2, 0] == DATA[2, 0]


@pytest.mark.parametrize(("select", "error", "message"), [
    (lambda v: v[40], BoundsCheckError, "index 40 is out of bounds for axis 0 with size 40"),
    (lambda v: v[::-1].oindex[:, [30]], BoundsCheckError, "out of bounds for axis 1"),
    (lambda v: v.T.vindex[[0], [-41]], BoundsCheckError, "out of bounds for axis 1 with size 40"),
    (lambda v: v[1, 2, 3], SelectionError, "too many indices"),
    (lambda v: v.vindex[np.ones((3, 3), bool)], SelectionError, r"boolean index has shape \(3, 3\)"),
])
def test_a_bad_selection_is_an_index_error_naming_what_is_wrong(select, error, message):
    z = zarrkit.array(DATA, chunks=(7, 9), zarr_format=3)
    with pytest.raises(error, match=message) as caught:
        select(z.lazy)
    assert isinstance(caught.value, IndexError)
    with pytest.raises(ValueError, match="step cannot be zero"):
        z.lazy[::0]


def test_read_into_out_and_its_checks():
    z = zarrkit.array(DATA, chunks=(7, 9), zarr_format=3)
    out = np.zeros((5, 3), dtype="i4")
    assert z.lazy[::-8, 2:5].read(out=out) is out
    np.testing.assert_array_equal(out, DATA[::-8, 2:5])
    with pytest.raises(ShapeMismatchError, match=r"expected \(5, 30\) and int32"):
        z.lazy[:5].read(out=out)
    with pytest.raises(ValueError, match="copy=False"):
        np.asarray(z.lazy, copy=False)


# -- what a read asks the store for ---------------------------------------------------------
@pytest.mark.parametrize(("build", "reference"), [
    (lambda a: a[5:23:2, ::-3].T[1:, ::2], None),
    (lambda a: a[3:37].T.vindex[[0, 29, 29, 3], [0, 33, 2, 15]],
     lambda a: a[3:37].T[[0, 29, 29, 3], [0, 33, 2, 15]]),
    (lambda a: a[::-1][np.arange(40) % 9 == 0][:, 4:26], None),
], ids=["strided-transposed", "points", "mask-rows"])
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_a_read_fetches_each_chunk_in_the_view_once_and_no_other(build, reference, zarr_format):
    reference = reference or build
    z, store = counted(zarr_format=zarr_format)
    keys = key_of(z)
    store.reset()
    view = build(z.lazy)
    assert sum(store.counts.values()) == 0  # composing reads nothing
    np.testing.assert_array_equal(view.read(), reference(DATA))
    wanted = {keys[c] for c in touched(positions_of(reference), (4, 5))}
    read = [k for k, _ in store.keys_read]
    assert set(read) == wanted
    assert len(read) == len(wanted)


def test_a_sharded_read_asks_only_for_the_shards_in_the_view():
    z, store = counted(sharded=True)
    shard_keys = key_of(z)

    def build(a):
        return a[9:30:3, ::-4].T[[0, 5, 5], :]  # one array: orthogonal, for both

    store.reset()
    np.testing.assert_array_equal(build(z.lazy).read(), build(DATA))
    positions = positions_of(build)
    assert {k for k, _ in store.keys_read} == {shard_keys[c] for c in touched(positions, (8, 10))}
    # per shard: its index and at most one range per inner chunk the view touches
    inner = touched(positions, (4, 5))
    assert len(store.keys_read) <= len(touched(positions, (8, 10))) + len(inner)


# -- writing ---------------------------------------------------------------------------------
@pytest.mark.parametrize("sharded", [False, True])
@pytest.mark.parametrize(("build", "reference"), [
    (lambda a: a[2:31:2, ::-1].T[3:17], None),
    (lambda a: a.T[::-1].vindex[[0, 29, 3, 3], [39, 0, 17, 18]],
     lambda a: a.T[::-1][[0, 29, 3, 3], [39, 0, 17, 18]]),
], ids=["strided-transposed", "points"])
def test_a_write_stores_each_shard_it_touches_once(sharded, build, reference):
    reference = reference or build
    z, store = counted(sharded=sharded)
    view = build(z.lazy)
    values = -np.arange(view.size, dtype="i4").reshape(view.shape) - 1
    view[...] = values
    expected = DATA.copy()
    expected.reshape(-1)[positions_of(reference)] = values
    np.testing.assert_array_equal(z[...], expected)
    grid = (8, 10) if sharded else (4, 5)
    assert store.counts["set"] == len(touched(positions_of(reference), grid))


def test_writes_of_points_masks_and_accessors():
    z = zarrkit.array(DATA, chunks=(7, 9), zarr_format=3)
    expected = DATA.copy()
    z.lazy.T.vindex[[1, 5], [2, 0]] = [-1, -2]
    expected.T[[1, 5], [2, 0]] = [-1, -2]
    mask = DATA % 11 == 0
    z.lazy[::-1].vindex[mask[::-1]] = -3
    expected[mask] = -3
    z.lazy[4:20].oindex[[0, 2], [1, 29]] = [[-4, -5], [-6, -7]]
    expected[4:20][np.ix_([0, 2], [1, 29])] = [[-4, -5], [-6, -7]]
    z.lazy.blocks[0, 1].write(-8)
    expected[0:7, 9:18] = -8
    np.testing.assert_array_equal(z[...], expected)


def test_a_value_that_does_not_fit_is_refused_before_anything_is_written():
    z, store = counted()
    with pytest.raises(ShapeMismatchError, match=r"broadcast to the selection's shape \(3, 10\)"):
        z.lazy[:3, :10].write(np.ones((3, 9)))
    assert store.counts["set"] == 0


def test_a_read_only_array_refuses_a_write_through_a_view():
    z, _ = counted()
    ro = zarrkit.open_array(z.store, mode="r")
    with pytest.raises(ReadOnlyError):
        ro.lazy[0] = 1
    np.testing.assert_array_equal(ro.lazy[0].read(), DATA[0])


# -- dask and xarray ---------------------------------------------------------------------------
def test_dask_takes_a_view_as_an_array():
    da = pytest.importorskip("dask.array")
    z, store = counted()
    view = z.lazy[::-1, 3:].T
    d = da.from_array(view, chunks=(9, 16))
    assert d.shape == view.shape and d.dtype == view.dtype
    assert da.from_array(view, chunks=view.chunks).chunks == ((2, 5, 5, 5, 5, 5), (4,) * 10)
    assert store.counts["get"] == 0
    np.testing.assert_array_equal(d.compute(scheduler="sync"), DATA[::-1, 3:].T)
    np.testing.assert_array_equal(da.from_array(view).sum().compute(scheduler="sync"), DATA[::-1, 3:].sum())


def test_xarray_takes_a_view_as_data_and_through_its_lazy_indexing():
    xr = pytest.importorskip("xarray")
    from xarray.core import indexing

    from zarrkit.xarray.backend import ZarrkitBackendArray

    z, store = counted()
    view = z.lazy[::2, ::-1]
    var = xr.Variable(("y", "x"), view)
    np.testing.assert_array_equal(var.values, DATA[::2, ::-1])

    store.reset()
    lazy = xr.Variable(("y", "x"), indexing.LazilyIndexedArray(ZarrkitBackendArray(view)))
    part = lazy[3:6, [0, 4]]
    assert store.counts["get"] == 0
    np.testing.assert_array_equal(part.values, DATA[::2, ::-1][3:6][:, [0, 4]])
    assert {k for k, _ in store.keys_read} == {key_of(z)[c] for c in touched(
        positions_of(lambda a: a[::2, ::-1][3:6][:, [0, 4]]), (4, 5))}


def test_a_view_pickles_with_its_array(tmp_path):
    """(dask's distributed scheduler ships views to other processes)"""
    import pickle

    z = zarrkit.open_array(str(tmp_path / "a.zarr"), mode="w", shape=SHAPE, chunks=(4, 5), dtype="i4",
                           zarr_format=3)
    z[...] = DATA
    view = z.lazy[::-3].T.oindex[[2, 0], :]
    back = pickle.loads(pickle.dumps(view))
    assert back.shape == view.shape
    np.testing.assert_array_equal(back.read(), DATA[::-3].T[[2, 0], :])
