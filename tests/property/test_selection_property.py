"""Property tests: every selection kind reads and writes exactly what NumPy does.

Random shapes (0-3 dims, each 0..12), chunk shapes, dtypes and selections are checked against a
NumPy reference for basic, orthogonal, coordinate, mask and block selections, on three array
layouts: Zarr v2, Zarr v3, and sharded Zarr v3.
"""

from __future__ import annotations

import math
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrkit as zarr
from zarrkit.errors import BoundsCheckError

# ---------------------------------------------------------------------------------------------
# configuration

DTYPES = ["i1", "u2", "i4", "f4", "f8", "bool", "c8"]
LAYOUTS = ["v2", "v3", "v3-sharded"]
MAX_DIM = 12

# ZARRKIT_PROPERTY_EXAMPLES=500 for a longer bug hunt
PROPERTY_SETTINGS = settings(
    max_examples=int(os.environ.get("ZARRKIT_PROPERTY_EXAMPLES", "100")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# ---------------------------------------------------------------------------------------------
# array construction


def make_array(layout, shape, chunks, dtype, shard_factors=None, fill_value=None):
    """Create an empty array of the given layout in a fresh MemoryStore."""
    store = zarr.MemoryStore()
    kwargs = {} if fill_value is None else {"fill_value": fill_value}
    if layout == "v2":
        z = zarr.create(
            shape=shape, chunks=chunks, dtype=dtype, store=store, zarr_format=2, **kwargs
        )
    elif layout == "v3":
        z = zarr.create(
            shape=shape, chunks=chunks, dtype=dtype, store=store, zarr_format=3, **kwargs
        )
    elif layout == "v3-sharded":
        shards = tuple(c * f for c, f in zip(chunks, shard_factors))
        z = zarr.create_array(
            store, shape=shape, chunks=chunks, shards=shards, dtype=dtype, zarr_format=3, **kwargs
        )
        assert z.shards == shards
    else:  # pragma: no cover
        raise AssertionError(layout)
    assert z.shape == tuple(shape)
    assert z.chunks == tuple(chunks)
    assert z.dtype == np.dtype(dtype)
    return z, store


def random_values(rng, shape, dtype):
    """An ndarray of random values of ``dtype`` (so misplaced items are detected)."""
    return np.array(_random_values(rng, shape, np.dtype(dtype)), dtype=dtype).reshape(shape)


def _random_values(rng, shape, dtype):
    if dtype == bool:
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)
    if dtype.kind == "f":
        vals = np.array(rng.standard_normal(size=shape) * 1000, dtype=dtype)
        # sprinkle special values
        special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan], dtype=dtype)
        pick = rng.random(size=shape) < 0.05
        if np.any(pick):
            vals[pick] = rng.choice(special, size=int(pick.sum()))
        return vals
    if dtype.kind == "c":
        re = rng.standard_normal(size=shape) * 1000
        im = rng.standard_normal(size=shape) * 1000
        return (re + 1j * im).astype(dtype)
    raise AssertionError(dtype)  # pragma: no cover


def random_scalar(rng, dtype):
    return random_values(rng, (), dtype)[()]


def assert_same(got, expected, strict_scalar=True):
    """Exact equality of values, dtype and shape (and array-vs-scalar-ness if ``strict_scalar``).

    ``strict_scalar`` is for selections with a NumPy meaning (``z[sel]``), where NumPy decides
    between a scalar and a 0-d array; oindex/vindex/blocks have no NumPy spelling for that.
    """
    if strict_scalar:
        assert isinstance(got, np.ndarray) == isinstance(expected, np.ndarray), (
            type(got),
            type(expected),
        )
    got_a = np.asarray(got)
    exp_a = np.asarray(expected)
    assert got_a.dtype == exp_a.dtype, (got_a.dtype, exp_a.dtype)
    assert got_a.shape == exp_a.shape, (got_a.shape, exp_a.shape)
    np.testing.assert_array_equal(got_a, exp_a)


# ---------------------------------------------------------------------------------------------
# strategies: arrays


@st.composite
def array_setups(draw, min_ndim=0, max_ndim=3, min_len=0):
    """(shape, chunks, dtype, shard_factors, seed)."""
    ndim = draw(st.integers(min_ndim, max_ndim))
    shape = tuple(draw(st.integers(min_len, MAX_DIM)) for _ in range(ndim))
    chunks = tuple(draw(st.integers(1, max(n, 1))) for n in shape)
    dtype = draw(st.sampled_from(DTYPES))
    shard_factors = tuple(draw(st.integers(1, 3)) for _ in range(ndim))
    seed = draw(st.integers(0, 2**32 - 1))
    return shape, chunks, dtype, shard_factors, seed


def populated_array(layout, setup):
    """An array holding random data, plus the NumPy copy of that data."""
    shape, chunks, dtype, shard_factors, seed = setup
    rng = np.random.default_rng(seed)
    z, store = make_array(layout, shape, chunks, dtype, shard_factors)
    data = random_values(rng, shape, dtype)
    z[...] = data
    return z, store, data, rng


# ---------------------------------------------------------------------------------------------
# strategies: selections


def bound_values(n):
    """Slice bounds: None, in range, negative, and out of range."""
    return st.one_of(st.none(), st.integers(-n - 3, n + 3))


@st.composite
def slices(draw, n):
    start = draw(bound_values(n))
    stop = draw(bound_values(n))
    step = draw(st.one_of(st.none(), st.integers(-(n + 2), n + 2).filter(lambda s: s != 0)))
    return slice(start, stop, step)


def ints_in(n):
    assert n > 0
    return st.integers(-n, n - 1)


def any_int(n):
    """An in-bounds int, as a Python int or a NumPy integer."""
    return st.one_of(ints_in(n), ints_in(n).map(np.int64), ints_in(n).map(np.int16))


def basic_item(n):
    if n == 0:
        return slices(n)
    return st.one_of(any_int(n), slices(n))


@st.composite
def basic_selections(draw, shape):
    """Tuple of ints/slices, maybe shortened, maybe with an Ellipsis, maybe not a tuple."""
    items = [draw(basic_item(n)) for n in shape]
    form = draw(st.sampled_from(["full", "short", "ellipsis"]))
    if form == "short":
        items = items[: draw(st.integers(0, len(items)))]
    elif form == "ellipsis":
        i = draw(st.integers(0, len(items)))
        j = draw(st.integers(i, len(items)))
        items = items[:i] + [Ellipsis] + items[j:]
    if len(items) == 1 and draw(st.booleans()):
        return items[0]
    return tuple(items)


@st.composite
def orthogonal_item(draw, n, unique, arrays_only=False):
    kinds = ["intarray", "boolmask"]
    if not arrays_only:
        kinds += ["slice"] + (["int"] if n > 0 else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "slice":
        return draw(slices(n))
    if kind == "int":
        return draw(any_int(n))
    if kind == "boolmask":
        mask = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
        return mask.tolist() if n and draw(st.booleans()) else mask
    # int array
    if n == 0:
        return np.array([], dtype=draw(st.sampled_from(["i8", "i4", "u1"])))
    if unique:
        perm = draw(st.permutations(range(n)))
        k = draw(st.integers(0, n))
        vals = [p - n if draw(st.booleans()) else p for p in perm[:k]]
    else:
        vals = draw(st.lists(ints_in(n), min_size=0, max_size=n + 3))
    dt = draw(st.sampled_from(["i8", "i4", "i2", "list"]))
    return list(vals) if dt == "list" else np.array(vals, dtype=dt)


@st.composite
def orthogonal_selections(draw, shape, unique=False):
    items = [draw(orthogonal_item(n, unique)) for n in shape]
    form = draw(st.sampled_from(["full", "short", "ellipsis"]))
    if form == "short":
        items = items[: draw(st.integers(0, len(items)))]
    elif form == "ellipsis":
        i = draw(st.integers(0, len(items)))
        j = draw(st.integers(i, len(items)))
        items = items[:i] + [Ellipsis] + items[j:]
    if len(items) == 1 and draw(st.booleans()):
        return items[0]
    return tuple(items)


def as_index_array(item, n):
    """One orthogonal selection item as (1-D index array, keeps_dim)."""
    if isinstance(item, (int, np.integer)):
        return np.array([item], dtype=np.intp), False
    if isinstance(item, slice):
        return np.arange(*item.indices(n), dtype=np.intp), True
    arr = np.asarray(item)
    if arr.dtype == bool:
        return np.flatnonzero(arr), True
    return arr.astype(np.intp), True


def _ortho_parts(selection, shape):
    sel = selection if isinstance(selection, tuple) else (selection,)
    if any(s is Ellipsis for s in sel):
        i = next(k for k, s in enumerate(sel) if s is Ellipsis)
        sel = sel[:i] + (slice(None),) * (len(shape) - len(sel) + 1) + sel[i + 1 :]
    sel = tuple(sel) + (slice(None),) * (len(shape) - len(sel))
    return [as_index_array(s, n) for s, n in zip(sel, shape)]


def numpy_orthogonal_get(a, selection):
    parts = _ortho_parts(selection, a.shape)
    if not parts:
        return a[()]
    res = a[np.ix_(*[p for p, _ in parts])]
    res = res.reshape(tuple(len(p) for p, keep in parts if keep))
    if all(not keep for _, keep in parts):
        return res[()]  # a scalar, as numpy gives for all-int indexing
    return res


def numpy_orthogonal_set(a, selection, value):
    parts = _ortho_parts(selection, a.shape)
    if not parts:
        a[()] = value
        return
    out_shape = tuple(len(p) for p, keep in parts if keep)
    v = np.broadcast_to(np.asarray(value, dtype=a.dtype), out_shape)
    a[np.ix_(*[p for p, _ in parts])] = v.reshape(tuple(len(p) for p, _ in parts))


@st.composite
def point_shapes(draw):
    # () means 0-d index arrays: a single point
    return tuple(draw(st.lists(st.integers(0, 4), min_size=0, max_size=2)))


@st.composite
def coordinate_selections(draw, shape, unique=False):
    """One int array per dimension, broadcast together (for set: unique points)."""
    pshape = draw(point_shapes())
    size = math.prod(shape)
    if size == 0:
        return tuple(np.zeros((0,), dtype=np.intp) for _ in shape)
    dt = draw(st.sampled_from(["i8", "i4"]))
    if unique:
        npoints = math.prod(pshape)
        if npoints > size:
            pshape = (size,)
            npoints = size
        lin = np.array(draw(st.permutations(range(size)))[:npoints], dtype=np.intp)
        coords = []
        for c, n in zip(np.unravel_index(lin, shape), shape):
            if draw(st.booleans()):  # negative coordinates address the same points
                c = np.where(np.arange(c.size) % 2 == 0, c - n, c)
            coords.append(c.reshape(pshape).astype(dt))
        return tuple(coords)
    coords = []
    for n in shape:
        # a shape that broadcasts to pshape: some dims set to 1, some leading dims dropped
        bshape = [1 if draw(st.booleans()) else s for s in pshape]
        bshape = tuple(bshape[draw(st.integers(0, len(bshape))) :])
        k = math.prod(bshape)
        vals = draw(st.lists(ints_in(n), min_size=k, max_size=k))
        coords.append(np.array(vals, dtype=dt).reshape(bshape))
    return tuple(coords)


@st.composite
def block_selections(draw, shape, chunks):
    items = []
    for n, c in zip(shape, chunks):
        nb = -(-n // c)
        if nb > 0 and draw(st.booleans()):
            items.append(draw(st.integers(-nb, nb - 1)))
        else:
            start = draw(st.one_of(st.none(), st.integers(-nb - 2, nb + 2)))
            stop = draw(st.one_of(st.none(), st.integers(-nb - 2, nb + 2)))
            step = draw(st.sampled_from([None, 1]))
            items.append(slice(start, stop, step))
    if draw(st.booleans()):
        items = items[: draw(st.integers(0, len(items)))]
    if len(items) == 1 and draw(st.booleans()):
        return items[0]
    return tuple(items)


def numpy_block_index(selection, shape, chunks):
    """The per-dimension element index arrays a block selection covers."""
    sel = selection if isinstance(selection, tuple) else (selection,)
    sel = tuple(sel) + (slice(None),) * (len(shape) - len(sel))
    out = []
    for s, n, c in zip(sel, shape, chunks):
        nb = -(-n // c)
        blocks = [np.arange(n)[k * c : (k + 1) * c] for k in range(nb)]
        chosen = [blocks[s]] if isinstance(s, int) else blocks[s]
        out.append(np.concatenate(chosen).astype(np.intp) if chosen else np.zeros(0, np.intp))
    return out


def broadcastable_value(draw, rng, sel_shape, dtype):
    """A value for a write: a scalar, the selection's shape, or a shape that broadcasts to it."""
    kind = draw(st.sampled_from(["scalar", "python scalar", "full", "broadcast"]))
    if kind == "scalar":
        return random_scalar(rng, dtype)
    if kind == "python scalar":
        return random_scalar(rng, dtype).item()
    if kind == "full":
        return random_values(rng, sel_shape, dtype)
    vshape = [1 if draw(st.booleans()) else s for s in sel_shape]
    vshape = vshape[draw(st.integers(0, len(vshape))) :]
    return random_values(rng, tuple(vshape), dtype)


layouts = pytest.mark.parametrize("layout", LAYOUTS)


# ---------------------------------------------------------------------------------------------
# basic selection


@layouts
@PROPERTY_SETTINGS
@given(data=st.data(), setup=array_setups())
def test_basic_get(layout, data, setup):
    z, _, a, _ = populated_array(layout, setup)
    assert_same(z[...], a)
    sel = data.draw(basic_selections(a.shape), label="selection")
    expected = a[sel]
    assert_same(z[sel], expected)
    assert_same(z.get_basic_selection(sel), expected)


@layouts
@PROPERTY_SETTINGS
@given(data=st.data(), setup=array_setups())
def test_basic_set(layout, data, setup):
    z, _, a, rng = populated_array(layout, setup)
    sel = data.draw(basic_selections(a.shape), label="selection")
    sel_shape = np.shape(a[sel])
    value = broadcastable_value(data.draw, rng, sel_shape, a.dtype)
    a[sel] = value
    if data.draw(st.booleans(), label="use setitem"):
        z[sel] = value
    else:
        z.set_basic_selection(sel, value)
    assert_same(z[...], a)


# ---------------------------------------------------------------------------------------------
# orthogonal selection


@layouts
@PROPERTY_SETTINGS
@given(data=st.data(), setup=array_setups())
def test_orthogonal_get(layout, data, setup):
    z, _, a, _ = populated_array(layout, setup)
    sel = data.draw(orthogonal_selections(a.shape), label="selection")
    expected = numpy_orthogonal_get(a, sel)
    assert_same(z.oindex[sel], expected, strict_scalar=False)
    assert_same(z.get_orthogonal_selection(sel), expected, strict_scalar=False)


@layouts
@PROPERTY_SETTINGS
@given(data=st.data(), setup=array_setups())
def test_orthogonal_set(layout, data, setup):
    z, _, a, rng = populated_array(layout, setup)
    sel = data.draw(orthogonal_selections(a.shape, unique=True), label="selection")
    sel_shape = np.shape(numpy_orthogonal_get(a, sel))
    value = broadcastable_value(data.draw, rng, sel_shape, a.dtype)
    numpy_orthogonal_set(a, sel, value)
    if data.draw(st.booleans(), label="use oindex"):
        z.oindex[sel] = value
    else:
        z.set_orthogonal_selection(sel, value)
    assert_same(z[...], a)


@layouts
@PROPERTY_SETTINGS
@given(data=st.data(), setup=array_setups(min_ndim=1))
def test_single_index_array_via_getitem(layout, data, setup):
    """``z[sel]`` with one 1-D index array among ints and slices follows NumPy.

    When ints and the array are not adjacent NumPy moves the indexed dimension to the front;
    zarrkit documents that it refuses that case (IndexError) rather than guess.
    """
    z, _, a, rng = populated_array(layout, setup)
    dim = data.draw(st.integers(0, a.ndim - 1), label="array dim")
    items = [data.draw(basic_item(n)) for n in a.shape]
    items[dim] = data.draw(
        orthogonal_item(a.shape[dim], unique=True, arrays_only=True), label="index array"
    )
    sel = tuple(items)
    advanced = [k for k, s in enumerate(sel) if k == dim or not isinstance(s, slice)]
    if advanced != list(range(advanced[0], advanced[-1] + 1)):
        with pytest.raises(IndexError):
            z[sel]
        return
    expected = a[sel]
    assert_same(z[sel], expected)
    value = broadcastable_value(data.draw, rng, expected.shape, a.dtype)
    a[sel] = value
    z[sel] = value
    assert_same(z[...], a)


# ---------------------------------------------------------------------------------------------
# coordinate selection


@layouts
@PROPERTY_SETTINGS
@given(data=st.data(), setup=array_setups(min_ndim=1))
def test_coordinate_get(layout, data, setup):
    z, _, a, _ = populated_array(layout, setup)
    sel = data.draw(coordinate_selections(a.shape), label="selection")
    expected = a[sel]
    assert_same(z.vindex[sel], expected, strict_scalar=False)
    assert_same(z.get_coordinate_selection(sel), expected, strict_scalar=False)


@layouts
@PROPERTY_SETTINGS
@given(data=st.data(), setup=array_setups(min_ndim=1))
def test_coordinate_set(layout, data, setup):
    z, _, a, rng = populated_array(layout, setup)
    sel = data.draw(coordinate_selections(a.shape, unique=True), label="selection")
    sel_shape = a[sel].shape
    value = broadcastable_value(data.draw, rng, sel_shape, a.dtype)
    a[sel] = value
    if data.draw(st.booleans(), label="use vindex"):
        z.vindex[sel] = value
    else:
        z.set_coordinate_selection(sel, value)
    assert_same(z[...], a)


@layouts
def test_coordinate_zero_d_points(layout):
    """A single point (ints or 0-d index arrays) gives NumPy's 0-d result (regression test)."""
    z, _, a = _filled(layout)
    assert_same(z.vindex[1, 2], a[1, 2], strict_scalar=False)
    assert_same(z.vindex[np.array(1), np.array(-1)], a[1, -1], strict_scalar=False)
    assert_same(
        z.get_coordinate_selection((np.array(6), np.array(0))), a[6, 0], strict_scalar=False
    )
    z.vindex[1, 2] = -7
    a[1, 2] = -7
    assert_same(z[...], a)
    z1, _ = make_array(layout, (4,), (2,), "i4", (2,))
    z1[...] = np.arange(4, dtype="i4")
    assert_same(z1.vindex[np.array(3)], np.int32(3), strict_scalar=False)


# ---------------------------------------------------------------------------------------------
# mask selection


@layouts
@PROPERTY_SETTINGS
@given(data=st.data(), setup=array_setups(min_ndim=1))
def test_mask_get(layout, data, setup):
    z, _, a, rng = populated_array(layout, setup)
    density = data.draw(st.sampled_from([0.0, 0.1, 0.5, 1.0]), label="density")
    mask = rng.random(a.shape) < density
    expected = a[mask]
    assert_same(z.vindex[mask], expected)
    assert_same(z.get_mask_selection(mask), expected)
    assert_same(z[mask], expected)


@layouts
@PROPERTY_SETTINGS
@given(data=st.data(), setup=array_setups(min_ndim=1))
def test_mask_set(layout, data, setup):
    z, _, a, rng = populated_array(layout, setup)
    density = data.draw(st.sampled_from([0.0, 0.1, 0.5, 1.0]), label="density")
    mask = rng.random(a.shape) < density
    value = broadcastable_value(data.draw, rng, a[mask].shape, a.dtype)
    a[mask] = value
    how = data.draw(st.sampled_from(["vindex", "method", "setitem"]), label="how")
    if how == "vindex":
        z.vindex[mask] = value
    elif how == "method":
        z.set_mask_selection(mask, value)
    else:
        z[mask] = value
    assert_same(z[...], a)


# ---------------------------------------------------------------------------------------------
# block selection


@layouts
@PROPERTY_SETTINGS
@given(data=st.data(), setup=array_setups())
def test_block_get(layout, data, setup):
    z, _, a, _ = populated_array(layout, setup)
    sel = data.draw(block_selections(a.shape, z.chunks), label="selection")
    idx = numpy_block_index(sel, a.shape, z.chunks)
    expected = a[np.ix_(*idx)] if idx else a[...]
    assert_same(z.blocks[sel], expected, strict_scalar=False)
    assert_same(z.get_block_selection(sel), expected, strict_scalar=False)


@layouts
@PROPERTY_SETTINGS
@given(data=st.data(), setup=array_setups())
def test_block_set(layout, data, setup):
    z, _, a, rng = populated_array(layout, setup)
    sel = data.draw(block_selections(a.shape, z.chunks), label="selection")
    idx = numpy_block_index(sel, a.shape, z.chunks)
    sel_shape = tuple(len(i) for i in idx)
    value = broadcastable_value(data.draw, rng, sel_shape, a.dtype)
    if idx:
        a[np.ix_(*idx)] = value
    else:
        a[...] = value
    if data.draw(st.booleans(), label="use blocks"):
        z.blocks[sel] = value
    else:
        z.set_block_selection(sel, value)
    assert_same(z[...], a)


# ---------------------------------------------------------------------------------------------
# fill value of never-written chunks


@layouts
@PROPERTY_SETTINGS
@given(data=st.data(), setup=array_setups())
def test_fill_value_for_unwritten_chunks(layout, data, setup):
    shape, chunks, dtype, shard_factors, seed = setup
    rng = np.random.default_rng(seed)
    fill = random_scalar(rng, dtype)
    if np.dtype(dtype).kind == "f" and np.isnan(fill):
        fill = np.dtype(dtype).type(1.5)
    z, _ = make_array(layout, shape, chunks, dtype, shard_factors, fill_value=fill)
    a = np.full(shape, fill, dtype=dtype)
    assert_same(z[...], a)  # nothing written yet: all fill
    sel = data.draw(basic_selections(shape), label="write selection")
    value = random_values(rng, np.shape(a[sel]), dtype)
    a[sel] = value
    z[sel] = value
    assert_same(z[...], a)
    read_sel = data.draw(orthogonal_selections(shape), label="read selection")
    assert_same(z.oindex[read_sel], numpy_orthogonal_get(a, read_sel), strict_scalar=False)


@layouts
@PROPERTY_SETTINGS
@given(data=st.data(), setup=array_setups(), nwrites=st.integers(1, 4))
def test_sequence_of_writes(layout, data, setup, nwrites):
    """Several writes of mixed kinds on one array (starting empty, with a fill value); some
    write the fill value back, which may delete chunks.  Every read matches NumPy."""
    shape, chunks, dtype, shard_factors, seed = setup
    rng = np.random.default_rng(seed)
    fill = random_scalar(rng, dtype)
    if np.dtype(dtype).kind == "f" and np.isnan(fill):
        fill = np.dtype(dtype).type(-2.5)
    z, _ = make_array(layout, shape, chunks, dtype, shard_factors, fill_value=fill)
    a = np.full(shape, fill, dtype=dtype)
    kinds = ["basic", "orthogonal", "block"] + (["coordinate", "mask"] if shape else [])
    for _ in range(nwrites):
        kind = data.draw(st.sampled_from(kinds), label="kind")
        if kind == "basic":
            sel = data.draw(basic_selections(shape), label="selection")
            sel_shape = np.shape(a[sel])
        elif kind == "orthogonal":
            sel = data.draw(orthogonal_selections(shape, unique=True), label="selection")
            sel_shape = np.shape(numpy_orthogonal_get(a, sel))
        elif kind == "block":
            sel = data.draw(block_selections(shape, chunks), label="selection")
            idx = numpy_block_index(sel, shape, chunks)
            sel_shape = tuple(len(i) for i in idx)
        elif kind == "coordinate":
            sel = data.draw(coordinate_selections(shape, unique=True), label="selection")
            sel_shape = a[sel].shape
        else:
            sel = rng.random(shape) < data.draw(st.sampled_from([0.2, 0.8, 1.0]), label="density")
            sel_shape = a[sel].shape
        if data.draw(st.booleans(), label="write the fill value"):
            value = fill
        else:
            value = broadcastable_value(data.draw, rng, sel_shape, dtype)
        if kind == "basic":
            a[sel] = value
            z[sel] = value
        elif kind == "orthogonal":
            numpy_orthogonal_set(a, sel, value)
            z.oindex[sel] = value
        elif kind == "block":
            a[np.ix_(*idx) if idx else ...] = value
            z.blocks[sel] = value
        else:
            a[sel] = value
            z.vindex[sel] = value
        assert_same(z[...], a)
    assert 0 <= z.nchunks_initialized <= z.nchunks


@layouts
@settings(max_examples=20, deadline=None)
@given(setup=array_setups(min_ndim=1, min_len=1))
def test_nan_fill_value(layout, setup):
    shape, chunks, _, shard_factors, _ = setup
    z, _ = make_array(layout, shape, chunks, "f8", shard_factors, fill_value=np.nan)
    a = np.full(shape, np.nan)
    assert_same(z[...], a)
    z[(0,) * len(shape)] = 7.0
    a[(0,) * len(shape)] = 7.0
    assert_same(z[...], a)


# ---------------------------------------------------------------------------------------------
# deterministic edge cases


def _filled(layout, shape=(7, 5), chunks=(3, 2), dtype="i4"):
    z, store = make_array(layout, shape, chunks, dtype, (2,) * len(shape))
    a = np.arange(math.prod(shape), dtype=dtype).reshape(shape)
    z[...] = a
    return z, store, a


@layouts
@pytest.mark.parametrize(
    "op",
    [
        lambda z: z[7],
        lambda z: z[-8],
        lambda z: z[0, 5],
        lambda z: z[0, -6],
        lambda z: z.get_basic_selection((7, 0)),
        lambda z: z.oindex[[0, 7], :],
        lambda z: z.oindex[:, np.array([-6])],
        lambda z: z.get_orthogonal_selection((1, 5)),
        lambda z: z.vindex[[0, 7], [0, 0]],
        lambda z: z.vindex[[0, 0], [0, -6]],
        lambda z: z.get_coordinate_selection(([0], [5])),
        lambda z: z.blocks[3],
        lambda z: z.blocks[0, -4],
        lambda z: z.get_block_selection((0, 3)),
    ],
)
def test_out_of_bounds_get_raises(layout, op):
    z, _, _ = _filled(layout)
    with pytest.raises(IndexError) as info:
        op(z)
    assert isinstance(info.value, BoundsCheckError)


@layouts
@pytest.mark.parametrize(
    "op",
    [
        lambda z: z.__setitem__(7, 1),
        lambda z: z.__setitem__((0, -6), 1),
        lambda z: z.set_basic_selection((0, 5), 1),
        lambda z: z.oindex.__setitem__(([0, 7], slice(None)), 1),
        lambda z: z.vindex.__setitem__(([0, 7], [0, 0]), 1),
        lambda z: z.blocks.__setitem__((3, 0), 1),
    ],
)
def test_out_of_bounds_set_raises_and_writes_nothing(layout, op):
    z, store, a = _filled(layout)
    before = dict(store)
    with pytest.raises(BoundsCheckError):
        op(z)
    assert dict(store) == before
    assert_same(z[...], a)


@layouts
@pytest.mark.parametrize(
    "op",
    [
        lambda z: z[0, 0, 0],
        lambda z: z[:, :, :],
        lambda z: z[..., 0, 0, 0],
        lambda z: z.get_basic_selection((0, 0, 0)),
        lambda z: z.oindex[[0], [0], [0]],
        lambda z: z.vindex[[0], [0], [0]],
        lambda z: z.blocks[0, 0, 0],
        lambda z: z.__setitem__((0, 0, 0), 1),
        lambda z: z.oindex.__setitem__(([0], [0], [0]), 1),
    ],
)
def test_too_many_indices_raises(layout, op):
    z, store, _ = _filled(layout)
    before = dict(store)
    with pytest.raises(IndexError):
        op(z)
    assert dict(store) == before


@layouts
@pytest.mark.parametrize(
    "op",
    [
        lambda z: z.__setitem__(slice(None), np.ones((7, 4))),
        lambda z: z.__setitem__((slice(0, 4), slice(None)), np.ones((3, 5))),
        lambda z: z.set_basic_selection(0, np.ones(4)),
        lambda z: z.oindex.__setitem__(([0, 1, 2], [0, 1]), np.ones((2, 3))),
        lambda z: z.set_orthogonal_selection((np.array([0, 6]), slice(None)), np.ones(3)),
        lambda z: z.vindex.__setitem__(([0, 1, 2], [0, 1, 2]), np.ones(2)),
        lambda z: z.set_mask_selection(np.ones((7, 5), dtype=bool), np.ones(34)),
        lambda z: z.blocks.__setitem__(0, np.ones((2, 5))),
        lambda z: z.__setitem__((slice(None), 0), np.ones((7, 2))),
    ],
)
def test_wrong_value_shape_raises_and_writes_nothing(layout, op):
    z, store, a = _filled(layout)
    before = dict(store)
    with pytest.raises(ValueError):
        op(z)
    assert dict(store) == before
    assert_same(z[...], a)


@layouts
@pytest.mark.parametrize(
    "op, error",
    [
        (lambda z: z[1.0], IndexError),
        (lambda z: z[0, 1.5], IndexError),
        (lambda z: z[..., ...], IndexError),
        (lambda z: z[None], IndexError),
        (lambda z: z["a"], (IndexError, KeyError, ValueError)),
        (lambda z: z.oindex[np.array([True, False])], IndexError),
        (lambda z: z.oindex[:, np.array([0.0, 1.0])], IndexError),
        (lambda z: z.vindex[np.ones((7, 4), dtype=bool)], IndexError),
        (lambda z: z.get_mask_selection(np.ones((7, 5), dtype="i4")), IndexError),
        (lambda z: z.vindex[[0, 1], [0, 1, 2]], IndexError),
        (lambda z: z.vindex[[0, 1]], IndexError),
        (lambda z: z.blocks[::2], IndexError),
        (lambda z: z.blocks[[0, 1]], IndexError),
        (lambda z: z.get_basic_selection([0, 1]), IndexError),
        (lambda z: z[::0], ValueError),
        (lambda z: z.oindex[:, ::0], ValueError),
    ],
)
def test_invalid_selections_raise(layout, op, error):
    z, store, _ = _filled(layout)
    before = dict(store)
    with pytest.raises(error):
        op(z)
    assert dict(store) == before


@layouts
def test_index_into_empty_dimension_raises(layout):
    z, _ = make_array(layout, (0, 3), (1, 2), "i4", (2, 2))
    with pytest.raises(BoundsCheckError):
        z[0]
    with pytest.raises(BoundsCheckError):
        z.oindex[[0], :]
    with pytest.raises(BoundsCheckError):
        z[-1, 0] = 1
    assert_same(z[...], np.zeros((0, 3), dtype="i4"))
    assert_same(z[5:, 1], np.zeros((0,), dtype="i4"))


@layouts
def test_scalar_broadcast_on_every_kind(layout):
    z, _, a = _filled(layout)
    z[1:6:2, ::-2] = -1
    a[1:6:2, ::-2] = -1
    z.oindex[[6, 0], [True, False, True, False, True]] = -2
    a[np.ix_([6, 0], [0, 2, 4])] = -2
    z.vindex[[1, 2, -1], [4, 0, 3]] = -3
    a[[1, 2, -1], [4, 0, 3]] = -3
    mask = (a % 3) == 0
    z.vindex[mask] = -4
    a[mask] = -4
    z.blocks[1, -1] = -5
    a[3:6, 4:5] = -5
    assert_same(z[...], a)


@layouts
def test_zero_dim_array(layout):
    z, _ = make_array(layout, (), (), "f8", ())
    assert_same(z[()], np.float64(0))
    assert_same(z[...], np.zeros(()))
    z[...] = 2.5
    assert_same(z[()], np.float64(2.5))
    z[()] = 3.5
    assert_same(z.get_basic_selection(), np.array(3.5))
    assert_same(z.oindex[()], np.float64(3.5), strict_scalar=False)
    assert_same(z.blocks[...], np.array(3.5))
