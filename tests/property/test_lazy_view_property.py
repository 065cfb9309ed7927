"""Property tests: any composition of selections on a lazy view reads and writes what NumPy's
same composition does, for Zarr v2, v3 and sharded v3 arrays.

A composition is a random chain of basic selections (ints, slices of any step, new axes), an
index array among slices in ``[]``, orthogonal selections (ints, slices, index arrays with
repeats, masks), point selections (index arrays, masks) and transposes.  The reference applies the same chain to the array of
flat positions ``np.arange(size).reshape(shape)``: its result says which cell of the array each
cell of the view shows, so a read must give ``data.flat[positions]`` and a write must change
exactly those cells.  Written values are a function of the cell written, so a cell a view
shows twice gets the same value either way.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrkit as zarr

pytest.importorskip("zarr_indexing")

LAYOUTS = ["v2", "v3", "v3-sharded"]
SETTINGS = settings(
    max_examples=int(os.environ.get("ZARRKIT_PROPERTY_EXAMPLES", "40")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@st.composite
def arrays(draw):
    layout = draw(st.sampled_from(LAYOUTS))
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 9)) for _ in range(ndim))
    chunks = tuple(draw(st.integers(1, n)) for n in shape)
    store = zarr.MemoryStore()
    if layout == "v3-sharded":
        shards = tuple(c * draw(st.integers(1, 3)) for c in chunks)
        z = zarr.create_array(store, shape=shape, chunks=chunks, shards=shards, dtype="i4", zarr_format=3)
    else:
        z = zarr.create(shape=shape, chunks=chunks, dtype="i4", store=store, zarr_format=int(layout[1]))
    data = np.arange(1, 1 + np.prod(shape), dtype="i4").reshape(shape) * 10
    z[...] = data
    return z, data


def _slices(draw, n):
    step = draw(st.sampled_from([1, 1, 2, 3, -1, -2]))
    start = draw(st.none() | st.integers(-n - 1, n + 1))
    stop = draw(st.none() | st.integers(-n - 1, n + 1))
    return slice(start, stop, step)


def _int(draw, n):
    return draw(st.integers(-n, n - 1))


def _index_array(draw, n):
    return np.array(draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=5)), dtype=np.intp)


@st.composite
def operation(draw, shape):
    """One step of a composition, for a view of ``shape``: (kind, argument)."""
    kinds = ["transpose", "transpose"] if len(shape) > 1 else []
    if any(n > 0 for n in shape):
        kinds += ["basic", "oindex", "vindex", "mask", "getitem"]
    if not kinds:
        return ("basic", (Ellipsis,))
    kind = draw(st.sampled_from(kinds))
    if kind == "transpose":
        return kind, tuple(draw(st.permutations(range(len(shape)))))
    if kind == "basic":
        sel = []
        for n in shape:
            if n > 0 and draw(st.booleans()):
                sel.append(_int(draw, n))
            else:
                sel.append(_slices(draw, n))
        if draw(st.integers(0, 4)) == 0:
            sel.insert(draw(st.integers(0, len(sel))), None)
        return kind, tuple(sel)
    if kind == "oindex":
        sel = []
        for n in shape:
            choice = draw(st.integers(0, 3)) if n > 0 else 1
            if choice == 0:
                sel.append(_int(draw, n))
            elif choice == 1:
                sel.append(_slices(draw, n))
            elif choice == 2:
                sel.append(_index_array(draw, n))
            else:
                sel.append(np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool))
        return kind, tuple(sel)
    if kind == "getitem":  # one index array among slices: orthogonal, as NumPy reads it too
        axis = draw(st.sampled_from([d for d, n in enumerate(shape) if n > 0]))
        return kind, tuple(
            _index_array(draw, n) if d == axis else _slices(draw, n) for d, n in enumerate(shape)
        )
    if kind == "vindex":
        if any(n == 0 for n in shape):
            return ("basic", (Ellipsis,))
        k = draw(st.integers(1, 5))
        return kind, tuple(
            np.array(draw(st.lists(st.integers(-n, n - 1), min_size=k, max_size=k)), dtype=np.intp)
            for n in shape
        )
    size = int(np.prod(shape))
    flat = draw(st.lists(st.booleans(), min_size=size, max_size=size))
    return "mask", np.array(flat, dtype=bool).reshape(shape)


def apply_numpy(positions, kind, arg):
    """The composition step on a NumPy array, with the view's rules (ints of ``oindex`` and
    ``vindex`` applied first)."""
    if kind == "transpose":
        return positions.transpose(arg)
    if kind in ("basic", "getitem"):
        return positions[arg]
    if kind == "mask":
        return positions[arg]
    ints = tuple(s if isinstance(s, int) else slice(None) for s in arg)
    positions = positions[ints]
    rest = [s for s in arg if not isinstance(s, int)]
    if kind == "vindex":
        return positions[tuple(rest)]
    per_dim = []
    for s, n in zip(rest, positions.shape):
        if isinstance(s, slice):
            per_dim.append(np.arange(n)[s])
        elif s.dtype == bool:
            per_dim.append(np.flatnonzero(s))
        else:
            per_dim.append(s)
    return positions[np.ix_(*per_dim)] if per_dim else positions


def apply_view(view, kind, arg):
    if kind == "transpose":
        return view.transpose(*arg)
    if kind in ("basic", "getitem"):
        return view[arg]
    if kind == "oindex":
        return view.oindex[arg]
    return view.vindex[arg]


@st.composite
def compositions(draw):
    z, data = draw(arrays())
    positions = np.arange(data.size).reshape(data.shape)
    view = z.lazy
    for _ in range(draw(st.integers(2, 4))):
        kind, arg = draw(operation(positions.shape))
        positions = apply_numpy(positions, kind, arg)
        view = apply_view(view, kind, arg)
    return z, data, view, positions


@SETTINGS
@given(compositions())
def test_a_composed_view_reads_what_numpy_selects(case):
    _, data, view, positions = case
    assert view.shape == positions.shape
    got = view.read()
    np.testing.assert_array_equal(got, data.reshape(-1)[positions])
    assert got.dtype == data.dtype
    np.testing.assert_array_equal(np.asarray(view.astype("f8")), data.reshape(-1)[positions].astype("f8"))


@SETTINGS
@given(compositions())
def test_a_write_through_a_composed_view_changes_exactly_the_cells_it_shows(case):
    z, data, view, positions = case
    values = (-positions - 1).astype("i4")  # a function of the cell: repeats agree
    view.write(values)
    expected = data.copy().reshape(-1)
    expected[positions] = values
    np.testing.assert_array_equal(z[...], expected.reshape(data.shape))
