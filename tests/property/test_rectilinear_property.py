"""Property tests on rectilinear chunk grids: every selection kind reads and writes exactly what
NumPy does, on random edge lengths (overflowing the array by up to several chunks) and on
rectilinear grids of shards over regular inner chunks."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_selection_property import (
    DTYPES,
    MAX_DIM,
    PROPERTY_SETTINGS,
    assert_same,
    basic_selections,
    broadcastable_value,
    coordinate_selections,
    numpy_orthogonal_get,
    numpy_orthogonal_set,
    orthogonal_selections,
    random_values,
)

import zarrkit as zarr

LAYOUTS = ["rectilinear", "rectilinear-sharded"]
layouts = pytest.mark.parametrize("layout", LAYOUTS)


@st.composite
def edge_lists(draw, n, unit=1):
    """Edge lengths (multiples of ``unit``) covering ``n``, maybe overflowing it."""
    edges = []
    total = 0
    while total < n or not edges:
        e = unit * draw(st.integers(1, max(1, -(-max(n, 1) // unit))))
        edges.append(e)
        total += e
    extra = draw(st.integers(0, 2))
    edges += [unit * draw(st.integers(1, 3)) for _ in range(extra)]
    return edges


@st.composite
def rectilinear_setups(draw, min_ndim=1, max_ndim=3):
    """(layout-independent) shape, per-dimension edges or int, inner chunks, dtype, seed."""
    ndim = draw(st.integers(min_ndim, max_ndim))
    shape = tuple(draw(st.integers(0, MAX_DIM)) for _ in range(ndim))
    inner = tuple(draw(st.integers(1, 3)) for _ in range(ndim))
    dtype = draw(st.sampled_from(DTYPES))
    seed = draw(st.integers(0, 2**32 - 1))
    return shape, inner, dtype, seed, draw(st.data())


def make(layout, setup):
    shape, inner, dtype, seed, data = setup
    rng = np.random.default_rng(seed)
    store = zarr.MemoryStore()
    if layout == "rectilinear":
        # some dimensions stay regular (an int); at least one is a list of edges
        grid = [data.draw(edge_lists(n)) for n in shape]
        for dim in range(len(shape)):
            if dim and data.draw(st.booleans()):
                grid[dim] = data.draw(st.integers(1, max(shape[dim], 1)))
        z = zarr.create_array(store, shape=shape, chunks=grid, dtype=dtype, zarr_format=3)
        edges = [e if isinstance(e, list) else None for e in grid]
    else:
        grid = [data.draw(edge_lists(n, c)) for n, c in zip(shape, inner)]
        z = zarr.create_array(store, shape=shape, chunks=inner, shards=grid, dtype=dtype, zarr_format=3)
        assert z.chunks == inner
        edges = [None] * len(shape)
    assert z.metadata.chunk_grid_json()["name"] == "rectilinear"
    a = random_values(rng, shape, dtype)
    z[...] = a
    return z, a, rng, [e if e is not None else int(g) for e, g in zip(edges, grid)] if layout == "rectilinear" else inner


def block_bounds(spec, n):
    """The ``[start, stop)`` of each block (chunk inside the array) along a dimension."""
    if isinstance(spec, int):
        starts = list(range(0, n, spec))
        return [(s, min(s + spec, n)) for s in starts]
    out, pos = [], 0
    for e in spec:
        if pos >= n:
            break
        out.append((pos, min(pos + e, n)))
        pos += e
    return out


@layouts
@PROPERTY_SETTINGS
@given(data=st.data(), setup=rectilinear_setups())
def test_basic_get_and_set(layout, data, setup):
    z, a, rng, _ = make(layout, setup)
    assert_same(z[...], a)
    sel = data.draw(basic_selections(a.shape), label="selection")
    assert_same(z[sel], a[sel])
    value = broadcastable_value(data.draw, rng, np.shape(a[sel]), a.dtype)
    a[sel] = value
    z[sel] = value
    assert_same(z[...], a)


@layouts
@PROPERTY_SETTINGS
@given(data=st.data(), setup=rectilinear_setups())
def test_orthogonal_get_and_set(layout, data, setup):
    z, a, rng, _ = make(layout, setup)
    sel = data.draw(orthogonal_selections(a.shape), label="selection")
    assert_same(z.oindex[sel], numpy_orthogonal_get(a, sel), strict_scalar=False)
    sel = data.draw(orthogonal_selections(a.shape, unique=True), label="set selection")
    value = broadcastable_value(data.draw, rng, np.shape(numpy_orthogonal_get(a, sel)), a.dtype)
    numpy_orthogonal_set(a, sel, value)
    z.oindex[sel] = value
    assert_same(z[...], a)


@layouts
@PROPERTY_SETTINGS
@given(data=st.data(), setup=rectilinear_setups())
def test_coordinate_get_and_set(layout, data, setup):
    z, a, rng, _ = make(layout, setup)
    sel = data.draw(coordinate_selections(a.shape), label="selection")
    assert_same(z.vindex[sel], a[sel], strict_scalar=False)
    sel = data.draw(coordinate_selections(a.shape, unique=True), label="set selection")
    value = broadcastable_value(data.draw, rng, a[sel].shape, a.dtype)
    a[sel] = value
    z.vindex[sel] = value
    assert_same(z[...], a)


@layouts
@PROPERTY_SETTINGS
@given(data=st.data(), setup=rectilinear_setups())
def test_mask_get_and_set(layout, data, setup):
    z, a, rng, _ = make(layout, setup)
    mask = rng.random(a.shape) < data.draw(st.sampled_from([0.0, 0.2, 1.0]), label="density")
    assert_same(z.vindex[mask], a[mask])
    value = random_values(rng, (int(mask.sum()),), a.dtype)
    a[mask] = value
    z.set_mask_selection(mask, value)
    assert_same(z[...], a)


@layouts
@PROPERTY_SETTINGS
@given(data=st.data(), setup=rectilinear_setups())
def test_block_get_and_set(layout, data, setup):
    """``blocks[i, j]`` is the part of chunk (i, j) inside the array (inner chunks when
    sharded)."""
    z, a, rng, grid = make(layout, setup)
    bounds = [block_bounds(g, n) for g, n in zip(grid, a.shape)]
    assert z.cdata_shape == tuple(len(b) for b in bounds)
    sel, region = [], []
    for b in bounds:
        if b and data.draw(st.booleans()):
            i = data.draw(st.integers(-len(b), len(b) - 1))
            sel.append(i)
            region.append(slice(*b[i]))
        else:
            i0 = data.draw(st.integers(0, len(b)))
            i1 = data.draw(st.integers(i0, len(b)))
            sel.append(slice(i0, i1))
            region.append(slice(b[i0][0], b[i1 - 1][1]) if i1 > i0 else slice(0, 0))
    sel, region = tuple(sel), tuple(region)
    assert_same(z.blocks[sel], a[region], strict_scalar=False)
    value = random_values(rng, a[region].shape, a.dtype)
    a[region] = value
    z.blocks[sel] = value
    assert_same(z[...], a)


@PROPERTY_SETTINGS
@given(data=st.data(), setup=rectilinear_setups(max_ndim=2))
def test_resize_keeps_the_data_inside(data, setup):
    z, a, _, _ = make("rectilinear", setup)
    new = tuple(data.draw(st.integers(0, MAX_DIM + 6)) for _ in a.shape)
    z.resize(new)
    common = tuple(slice(0, min(n, m)) for n, m in zip(a.shape, new))
    assert z.shape == new
    assert_same(z[common], a[common])
    expected = np.zeros(new, a.dtype)
    expected[common] = a[common]
    z[...] = expected
    assert_same(z[...], expected)
