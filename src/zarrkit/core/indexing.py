"""Selections → chunk projections.

An *indexer* turns a user selection into the output shape and an iterator of
:class:`ChunkProjection` — for each chunk the selection touches: the chunk's grid coordinates,
what to take from (or put into) the decoded chunk, where that goes in the output, and whether
the selection covers the chunk completely (a complete chunk is written without reading the old
one, and read by decoding straight into the output).

Selection kinds (as in zarr-python):

* ``basic``: ints, slices with any non-zero step, ``Ellipsis``;
* ``orthogonal``: each dimension independently (ints, slices, int arrays, bool masks);
* ``coordinate``: one int array per dimension, broadcast together (points);
* ``mask``: one bool array of the array's shape;
* ``block``: ints and step-1 slices over chunk (block) indices.
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Callable, Iterator, Sequence
from types import EllipsisType
from typing import Any, NamedTuple, SupportsIndex, SupportsInt, TypeAlias

import numpy as np

from ..errors import BoundsCheckError, SelectionError
from ..metadata.grid import ChunkGrid, RegularGrid

__all__ = [
    "NDArrayOrScalar",
    "IntSelection",
    "KeepingSelection",
    "ChunkProjection",
    "make_indexer",
    "classify_selection",
    "pop_fields",
    "BasicIndexer",
    "BlockIndexer",
    "OrthogonalIndexer",
    "CoordinateIndexer",
    "MaskIndexer",
    "StackedIndexer",
]

#: what reading a selection gives: an array, or a scalar where every dimension is indexed by an int
NDArrayOrScalar: TypeAlias = np.ndarray[Any, Any] | np.generic
#: a selection of ints only: a scalar where it indexes every dimension, else an array
IntSelection: TypeAlias = SupportsIndex | tuple[SupportsIndex, ...]
#: a selection that keeps a dimension (a slice, ``...``, a list or array of indices, a field
#: name, or a tuple with any of them): what it reads is always an array
KeepingSelection: TypeAlias = (
    slice | EllipsisType | str | list[Any] | np.ndarray[Any, Any]
    | tuple[SupportsIndex | slice | EllipsisType | list[Any] | np.ndarray[Any, Any], ...]
)


class ChunkProjection(NamedTuple):
    """How one chunk takes part in a selection."""

    chunk_coords: tuple[int, ...]
    chunk_selection: tuple[Any, ...]
    out_selection: Any
    is_complete_chunk: bool


# ---------------------------------------------------------------------------------------------
# helpers


def _is_int(x: Any) -> bool:
    return isinstance(x, (numbers.Integral, np.integer)) and not isinstance(x, (bool, np.bool_))


def _is_array_like(x: Any) -> bool:
    if isinstance(x, np.ndarray):
        return x.ndim > 0
    return isinstance(x, (list, tuple)) or (
        hasattr(x, "__array__") and not isinstance(x, (str, bytes)) and np.ndim(x) > 0
    )


def _wrap_index(i: int, n: int) -> int | None:
    """``i`` counted from the end when negative, as NumPy counts; None outside ``range(n)``."""
    j = i + n if i < 0 else i
    return j if 0 <= j < n else None


def _integer_indices(a: np.ndarray, refusal: str) -> np.ndarray:
    """``a`` as an index array: an empty one of any type as ``intp``; otherwise integers, or a
    :class:`SelectionError` saying ``refusal``."""
    if a.size == 0:
        return a.astype(np.intp)
    if a.dtype.kind not in "iu":
        raise SelectionError(refusal)
    return a


def _out_of_bounds(n: int, index: Any, dim: int) -> BoundsCheckError:
    """The error of ``index`` outside an axis of length ``n`` (worded as zarr-python words it)."""
    return BoundsCheckError(f"index out of bounds for dimension with length {n}: index {index} on axis {dim}")


def _intp_indices(a: np.ndarray, n: int, dim: int) -> np.ndarray:
    """Integer indices ``a`` along an axis of length ``n`` as a fresh ``intp`` array, negative ones
    counted from the end.  Raises :class:`BoundsCheckError` for an index outside the axis: an
    unsigned index too large for ``intp`` is refused before narrowing could make it negative."""
    if a.dtype.kind == "u" and a.size and int(a.max()) >= n:
        raise _out_of_bounds(n, int(a.max()), dim)
    arr = a.astype(np.intp, copy=True)
    outside = _wrap_indices(arr, n)
    if outside is not None:
        raise _out_of_bounds(n, a[outside].reshape(-1)[0], dim)
    return arr


def _wrap_indices(arr: np.ndarray, n: int) -> np.ndarray | None:
    """Count ``arr``'s negative indices from the end, in place; the mask of those still outside
    ``range(n)``, or None when all are inside."""
    neg = arr < 0
    if neg.any():
        arr[neg] += n
    if arr.size and (arr.min() < 0 or arr.max() >= n):
        return (arr < 0) | (arr >= n)
    return None


def _normalize_int(i: SupportsInt, dim_len: int, dim: int) -> int:
    i = int(i)
    j = _wrap_index(i, dim_len)
    if j is None:
        raise _out_of_bounds(dim_len, i, dim)
    return j


def _expand_ellipsis(selection: Any, ndim: int) -> tuple[Any, ...]:
    if not isinstance(selection, tuple):
        selection = (selection,)
    n_ellipsis = sum(1 for s in selection if s is Ellipsis)
    if n_ellipsis > 1:
        raise SelectionError("a selection can only have a single Ellipsis ('...')")
    if n_ellipsis == 1:
        i = next(k for k, s in enumerate(selection) if s is Ellipsis)
        fill = ndim - (len(selection) - 1)
        if fill < 0:
            raise _too_many(ndim, len(selection) - 1)
        selection = selection[:i] + (slice(None),) * fill + selection[i + 1 :]
    if len(selection) > ndim:
        raise _too_many(ndim, len(selection))
    return tuple(selection) + (slice(None),) * (ndim - len(selection))


def _too_many(ndim: int, given: int) -> SelectionError:
    return SelectionError(f"too many indices for array; expected {ndim}, got {given}")

#: what each kind of selection takes per dimension, for its errors
_TAKES = {
    "basic": "integer or slice",
    "orthogonal": "integer, slice, integer array or Boolean array",
    "coordinate": "integer or integer array",
}


def _unsupported(s: Any, dim: int, kind: str) -> SelectionError:
    """The error of an item ``s`` a ``kind`` selection does not take (as zarr-python words it,
    with the axis); ``None`` (``numpy.newaxis``) is one: zarrkit adds no axes."""
    return SelectionError(f"unsupported selection item for {kind} indexing; expected {_TAKES[kind]}, "
                          f"got {type(s)!r} (axis {dim})")


def _check_item(s: Any, dim: int, kind: str) -> None:
    if s is None or isinstance(s, (float, np.floating, str, bytes)):
        raise _unsupported(s, dim, kind)


# ---------------------------------------------------------------------------------------------
# per-dimension indexers: each yields (chunk index, chunk selection, out selection, complete)


class _IntDim:
    def __init__(self, i: Any, dim_len: int, grid: Any, dim: int):
        self.i = _normalize_int(i, dim_len, dim)
        self.grid = grid
        self.nitems = 1
        self.drop = True

    def __iter__(self) -> Iterator[tuple[int, Any, Any, bool]]:
        g = self.grid
        c = g.index(self.i)
        c0 = g.start(c)
        yield c, self.i - c0, None, g.stop(c) - c0 == 1


class _SliceDim:
    def __init__(self, s: slice, dim_len: int, grid: Any, dim: int):
        step = 1 if s.step is None else int(s.step)
        if step == 0:
            raise ValueError(f"slice step cannot be zero (axis {dim})")
        start, stop, step = s.indices(dim_len)
        n = len(range(start, stop, step))
        self.nitems = n
        self.drop = False
        self.grid = grid
        self.reverse = step < 0
        if n == 0:
            self.first = self.last = 0
            self.step = abs(step)
        elif step > 0:
            self.first, self.step = start, step
            self.last = start + (n - 1) * step
        else:
            # the same items in ascending order; the output is filled back to front
            self.first = start + (n - 1) * step
            self.last = start
            self.step = -step

    def __iter__(self) -> Iterator[tuple[int, Any, Any, bool]]:
        if self.nitems == 0:
            return
        g, step, first, last = self.grid, self.step, self.first, self.last
        n = self.nitems
        for c in range(g.index(first), g.index(last) + 1):
            c0 = g.start(c)
            c1 = g.stop(c)
            # first selected index inside [c0, c1)
            lo = max(first, c0)
            rem = (lo - first) % step
            if rem:
                lo += step - rem
            if lo >= c1 or lo > last:
                continue
            hi = min(last, c1 - 1)
            k0 = (lo - first) // step  # position among the ascending items
            cnt = (hi - lo) // step + 1
            chunk_sel = slice(lo - c0, lo - c0 + (cnt - 1) * step + 1, step)
            if self.reverse:
                o_hi = n - 1 - k0
                o_lo = o_hi - cnt + 1
                out_sel = slice(o_hi, o_lo - 1 if o_lo > 0 else None, -1)
            else:
                out_sel = slice(k0, k0 + cnt)
            complete = step == 1 and lo == c0 and hi == c1 - 1
            yield c, chunk_sel, out_sel, complete


class _ArrayDim:
    """An integer array (or a boolean mask) along one dimension of an orthogonal selection."""

    def __init__(self, a: Any, dim_len: int, grid: Any, dim: int):
        arr = np.asarray(a)
        if arr.dtype == bool:
            if arr.ndim != 1:
                raise SelectionError(f"Boolean arrays in an orthogonal selection must be 1-dimensional only; "
                                     f"axis {dim} got shape {arr.shape}")
            if arr.shape[0] != dim_len:
                raise SelectionError(f"wrong length for dimension; expected {dim_len}, got {arr.shape[0]} "
                                     f"(Boolean array on axis {dim})")
            arr = np.flatnonzero(arr)
        else:
            arr = _integer_indices(
                arr,
                f"arrays used as indices must be of integer or boolean type (axis {dim}, got {arr.dtype})",
            )
        if arr.ndim != 1:
            raise SelectionError(f"integer arrays in an orthogonal selection must be 1-dimensional only; "
                                 f"axis {dim} got shape {arr.shape}")
        arr = _intp_indices(arr, dim_len, dim)
        self.arr = arr
        self.nitems = arr.size
        self.drop = False
        self.grid = grid

    def __iter__(self) -> Iterator[tuple[int, Any, Any, bool]]:
        arr, g = self.arr, self.grid
        if arr.size == 0:
            return
        cix = g.indices(arr)
        if arr.size < 2 or np.all(cix[1:] >= cix[:-1]):
            order = None
            sorted_c = cix
        else:
            order = np.argsort(cix, kind="stable")
            sorted_c = cix[order]
        bounds = np.flatnonzero(np.diff(sorted_c)) + 1
        starts = np.concatenate(([0], bounds))
        stops = np.concatenate((bounds, [arr.size]))
        for s0, s1 in zip(starts.tolist(), stops.tolist()):
            c = int(sorted_c[s0])
            if order is None:
                pos: Any = slice(s0, s1)
                items = arr[s0:s1]
            else:
                pos = order[s0:s1]
                items = arr[pos]
            c0 = g.start(c)
            chunk_sel = items - c0
            valid = g.stop(c) - c0
            complete = chunk_sel.size == valid and bool(np.all(chunk_sel == np.arange(valid)))
            yield c, chunk_sel, pos, complete


def _ix(sel: tuple[Any, ...]) -> tuple[Any, ...]:
    """Make a tuple of ints, slices and 1-D arrays select orthogonally (``np.ix_`` style)."""
    if not any(isinstance(s, np.ndarray) for s in sel):
        return sel
    n = sum(1 for s in sel if not _is_int(s))
    out = []
    k = 0
    for s in sel:
        if _is_int(s):
            out.append(s)
            continue
        if isinstance(s, slice):
            s = np.arange(s.start, s.stop if s.stop is not None else -1, s.step or 1)
        shape = [1] * n
        shape[k] = s.size
        out.append(np.asarray(s).reshape(shape))
        k += 1
    return tuple(out)


class _ProductIndexer:
    """Cartesian product of per-dimension indexers (basic and orthogonal selections)."""

    def __init__(self, dims: Sequence[Any], orthogonal: bool):
        self.dims = list(dims)
        self.shape = tuple(d.nitems for d in self.dims if not d.drop)
        self.orthogonal = orthogonal

    def __iter__(self) -> Iterator[ChunkProjection]:
        if any(d.nitems == 0 for d in self.dims):
            return
        per_dim = [list(d) for d in self.dims]
        drop = any(d.drop for d in self.dims)
        orthogonal = self.orthogonal
        if not orthogonal and all(len(items) == 1 for items in per_dim):
            # one chunk (a small region, as reads of many of them ask): its projection at once
            only = [items[0] for items in per_dim]
            out_sel = tuple(t[2] for t in only if t[2] is not None) if drop else tuple(t[2] for t in only)
            yield tuple.__new__(ChunkProjection, (tuple(t[0] for t in only), tuple(t[1] for t in only), out_sel,
                                                  all(t[3] for t in only)))
            return
        # one product per field of the per-dimension tuples, advanced in step: the tuples of
        # every projection are built in C (the projections of a large read are many)
        fields = [itertools.product(*[[t[k] for t in items] for items in per_dim]) for k in range(4)]
        make = tuple.__new__
        for coords, chunk_sel, out_sel, comp in zip(*fields):
            if drop:
                out_sel = tuple(o for o in out_sel if o is not None)
            if orthogonal:
                chunk_sel = _ix(chunk_sel)
                out_sel = _ix(out_sel)
            yield make(ChunkProjection, (coords, chunk_sel, out_sel, all(comp)))

    def rows(self) -> tuple[Iterator[tuple[tuple[int, ...], tuple[Any, ...], tuple[Any, ...], bool]], list[Any]] | None:
        """The projections as rows along the last dimension, without making them one by one:
        the leading dimensions' product (chunk coordinates, chunk selections, out selections,
        and whether they are complete), in the order of the projections, and the last
        dimension's ``(chunk index, chunk selection, out selection, complete)``, the same for
        every row.  None when the projections do not factor so: fewer than two dimensions, one
        dropped (an integer), or one selected by an array."""
        dims = self.dims
        if len(dims) < 2 or any(d.drop or isinstance(d, _ArrayDim) for d in dims) or any(d.nitems == 0 for d in dims):
            return None
        per_dim = [list(d) for d in dims[:-1]]
        fields = [itertools.product(*[[t[k] for t in items] for items in per_dim]) for k in range(4)]
        lead = ((coords, chunk_sel, out_sel, all(comp)) for coords, chunk_sel, out_sel, comp in zip(*fields))
        return lead, list(dims[-1])

    def __len__(self) -> int:
        return sum(1 for _ in self)


class _PointIndexer:
    """Points given by one integer array per dimension (broadcast together)."""

    def __init__(self, coords: Sequence[np.ndarray], grid: ChunkGrid, out_shape: Sequence[int] | None = None):
        self.shape = tuple(coords[0].shape) if out_shape is None else tuple(out_shape)
        flat = [c.reshape(-1) for c in coords]
        self._n = flat[0].size if flat else 0
        self._coords = flat
        self._grid = grid

    def __iter__(self) -> Iterator[ChunkProjection]:
        if self._n == 0:
            return
        dims = self._grid.dims
        cdata = tuple(max(1, d.n) for d in dims)
        cix = [d.indices(c) for c, d in zip(self._coords, dims)]
        if len(cdata) == 0:
            yield ChunkProjection((), (), np.zeros(self._n, dtype=np.intp), True)
            return
        order, bounds = _group_points(cix, cdata, self._n)
        starts = np.concatenate(([0], bounds)).tolist()
        stops = np.concatenate((bounds, [self._n])).tolist()
        if self.shape == ():  # a single point given by scalars: a 0-d result
            coords = tuple(int(c[0]) for c in cix)
            chunk_sel: tuple[Any, ...] = tuple(int(c[0]) - d.start(cc) for c, cc, d in zip(self._coords, coords, dims))
            yield ChunkProjection(coords, chunk_sel, (), False)
            return
        multi = len(self.shape) != 1
        for s0, s1 in zip(starts, stops):
            pos = order[s0:s1]
            first = pos[0]
            coords = tuple(int(c[first]) for c in cix)
            chunk_sel = tuple(c[pos] - d.start(cc) for c, cc, d in zip(self._coords, coords, dims))
            out_sel = np.unravel_index(pos, self.shape) if multi else pos
            yield ChunkProjection(coords, chunk_sel, out_sel, False)


def _group_points(cix: list[np.ndarray], cdata: tuple[int, ...], n: int) -> tuple[np.ndarray, np.ndarray]:
    """The order that puts ``n`` points in C order of their chunks (stable: the points of a
    chunk keep theirs), and where each chunk's run of points starts in it (after the first).
    Chunk coordinates are combined into one number when the grid's size fits ``intp``, and
    sorted dimension by dimension otherwise (a grid of :math:`2^{80}` chunks is fine)."""
    if math.prod(cdata) < np.iinfo(np.intp).max:
        lin = np.ravel_multi_index(cix, cdata)
        if n < 2 or np.all(lin[1:] >= lin[:-1]):
            order = np.arange(n)
        else:
            order = np.argsort(lin, kind="stable")
        return order, np.flatnonzero(np.diff(lin[order])) + 1
    order = np.lexsort(cix[::-1])
    change = np.zeros(max(n - 1, 0), dtype=bool)
    for c in cix:
        change |= np.diff(c[order]) != 0
    return order, np.flatnonzero(change) + 1


# ---------------------------------------------------------------------------------------------
# building indexers


def _basic_dims(selection: Any, shape: tuple[int, ...], grid: ChunkGrid, allow_arrays: bool) -> list[Any]:
    sel = _expand_ellipsis(selection, len(shape))
    kind = "orthogonal" if allow_arrays else "basic"
    dims: list[_IntDim | _SliceDim | _ArrayDim] = []
    for dim, (s, n, c) in enumerate(zip(sel, shape, grid.dims)):
        _check_item(s, dim, kind)
        if _is_int(s):
            dims.append(_IntDim(s, n, c, dim))
        elif isinstance(s, slice):
            dims.append(_SliceDim(s, n, c, dim))
        elif allow_arrays and _is_array_like(s):
            dims.append(_ArrayDim(s, n, c, dim))
        elif isinstance(s, np.ndarray) and s.ndim == 0 and s.dtype.kind in "iu":
            dims.append(_IntDim(int(s), n, c, dim))
        else:
            raise _unsupported(s, dim, kind)
    return dims


def _coordinate(selection: Any, shape: tuple[int, ...]) -> list[np.ndarray]:
    """The index arrays of a coordinate selection: broadcast together, checked, as ``intp``."""
    if not isinstance(selection, tuple):
        selection = (selection,)
    if len(selection) != len(shape):
        raise SelectionError(
            f"coordinate selection needs one index array per dimension: array is "
            f"{len(shape)}-dimensional, got {len(selection)}"
        )
    arrays = []
    for dim, s in enumerate(selection):
        if s is Ellipsis or isinstance(s, slice):
            raise _unsupported(s, dim, "coordinate")
        _check_item(s, dim, "coordinate")
        a = np.asarray(s)
        arrays.append(
            _integer_indices(a, f"coordinate selection takes integer arrays; axis {dim} got dtype {a.dtype}")
        )
    try:
        broadcast = np.broadcast_arrays(*arrays)
    except ValueError:
        raise SelectionError(
            "coordinate index arrays could not be broadcast together with shapes "
            + " ".join(str(np.shape(a)) for a in arrays)
        ) from None
    return [_intp_indices(a, n, dim) for dim, (a, n) in enumerate(zip(broadcast, shape))]


def _mask(selection: Any, shape: tuple[int, ...]) -> list[np.ndarray]:
    """The coordinates of the true items of a mask selection, one array per dimension."""
    if isinstance(selection, tuple):
        if len(selection) != 1:
            raise SelectionError("mask selection takes a single boolean array")
        selection = selection[0]
    m = np.asarray(selection)
    if m.dtype != bool:
        raise SelectionError(f"mask selection takes a boolean array, got dtype {m.dtype}")
    if m.shape != tuple(shape):
        raise SelectionError(f"mask has shape {m.shape}, expected the array's shape {tuple(shape)}")
    return [np.asarray(c, dtype=np.intp) for c in np.nonzero(m)]


def _block(selection: Any, shape: tuple[int, ...], grid: ChunkGrid) -> list[Any]:
    """The per-dimension indexers of the elements a block selection covers."""
    sel = _expand_ellipsis(selection, len(shape))
    basic = []
    for dim, (s, d) in enumerate(zip(sel, grid.dims)):
        nblocks = d.n
        if _is_int(s):
            b = _wrap_index(int(s), nblocks)
            if b is None:
                raise BoundsCheckError(
                    f"block index out of bounds for dimension with {nblocks} chunk(s): {s} on axis {dim}"
                )
            basic.append(slice(d.start(b), d.stop(b)))
        elif isinstance(s, slice):
            if s.step not in (None, 1):
                raise SelectionError(f"unsupported selection item for block indexing; expected integer or slice "
                                     f"with step=1, got {s!r} (axis {dim})")
            b0, b1, _ = s.indices(nblocks)  # as NumPy slices: past the last block, no block
            basic.append(slice(d.start(b0), d.stop(b1 - 1)) if b1 > b0 else slice(0, 0))
        else:
            raise SelectionError(f"unsupported selection item for block indexing; expected integer or slice, "
                                 f"got {type(s)!r} (axis {dim})")
    return _basic_dims(tuple(basic), shape, grid, False)


def _shape_grid(shape: Sequence[int], chunk_grid: Any) -> tuple[tuple[int, ...], ChunkGrid]:
    shape = tuple(shape)
    return shape, chunk_grid if isinstance(chunk_grid, ChunkGrid) else RegularGrid(shape, chunk_grid)


class BasicIndexer(_ProductIndexer):
    """A basic selection (ints, slices, ``...``) of an array of ``shape`` on ``chunk_grid`` (a
    :class:`~zarrkit.metadata.grid.ChunkGrid`, or a regular grid's chunk shape); iterating it
    gives a :class:`ChunkProjection` per chunk touched.  ``shape`` is the selection's."""

    def __init__(self, selection: Any, shape: Sequence[int], chunk_grid: Any):
        shape, grid = _shape_grid(shape, chunk_grid)
        super().__init__(_basic_dims(selection, shape, grid, False), orthogonal=False)


class OrthogonalIndexer(_ProductIndexer):
    """An orthogonal selection (ints, slices, integer or Boolean arrays, each dimension on its
    own); as :class:`BasicIndexer`."""

    def __init__(self, selection: Any, shape: Sequence[int], chunk_grid: Any):
        shape, grid = _shape_grid(shape, chunk_grid)
        super().__init__(_basic_dims(selection, shape, grid, True), orthogonal=True)


class BlockIndexer(_ProductIndexer):
    """A selection of whole chunks by their grid indices; as :class:`BasicIndexer`."""

    def __init__(self, selection: Any, shape: Sequence[int], chunk_grid: Any):
        shape, grid = _shape_grid(shape, chunk_grid)
        super().__init__(_block(selection, shape, grid), orthogonal=False)


class CoordinateIndexer(_PointIndexer):
    """The points of one integer array per dimension (broadcast together); as
    :class:`BasicIndexer`."""

    def __init__(self, selection: Any, shape: Sequence[int], chunk_grid: Any):
        shape, grid = _shape_grid(shape, chunk_grid)
        super().__init__(_coordinate(selection, shape), grid)


class MaskIndexer(_PointIndexer):
    """The items where a Boolean array of the array's shape is true, in C order; as
    :class:`BasicIndexer`."""

    def __init__(self, selection: Any, shape: Sequence[int], chunk_grid: Any):
        shape, grid = _shape_grid(shape, chunk_grid)
        coords = _mask(selection, shape)
        super().__init__(coords, grid, out_shape=(coords[0].size if coords else 0,))


class StackedIndexer:
    """Several selections of one shape read as one: the output is their results stacked
    along a new first dimension (``out[k]`` the result of ``indexers[k]``), and the
    projections are theirs, each placed in its own part of that output.  One read of all
    of them plans the chunks together -- the inner chunks of one shard fetched with one
    request and decoded in batches -- instead of a read, its plan and its Python per
    selection (see :meth:`~zarrkit.core.selection.SelectionMethods.get_many`).  A chunk two
    selections touch is read for each."""

    def __init__(self, indexers: Sequence[Any]):
        shapes = {tuple(ix.shape) for ix in indexers}
        if len(shapes) != 1:
            raise ValueError(f"expected selections of one shape, got {sorted(shapes)}")
        self.indexers = list(indexers)
        self.shape = (len(self.indexers), *shapes.pop())

    def __iter__(self) -> Iterator[ChunkProjection]:
        make = tuple.__new__
        for k, ix in enumerate(self.indexers):
            for p in ix:
                yield make(ChunkProjection, (p.chunk_coords, p.chunk_selection, (k, *p.out_selection),
                                             p.is_complete_chunk))


#: the indexer of each kind of selection
_INDEXERS: dict[str, Callable[[Any, Sequence[int], Any], Any]] = {
    "basic": BasicIndexer, "orthogonal": OrthogonalIndexer, "coordinate": CoordinateIndexer, "mask": MaskIndexer,
    "block": BlockIndexer,
}


def make_indexer(selection: Any, shape: Sequence[int], grid: Any, kind: str) -> Any:
    """Build the indexer for ``selection`` of the given ``kind`` on a chunk grid (a
    :class:`~zarrkit.metadata.grid.ChunkGrid`, or the chunk shape of a regular grid).

    Examples
    --------
    >>> from zarrkit.core.indexing import make_indexer
    >>> ix = make_indexer((slice(2, 7),), (10,), (4,), "basic")
    >>> ix.shape
    (5,)
    >>> [(p.chunk_coords, p.chunk_selection) for p in ix]
    [((0,), (slice(2, 4, 1),)), ((1,), (slice(0, 3, 1),))]
    """
    if kind not in _INDEXERS:
        raise ValueError(f"unknown selection kind {kind!r}")
    return _INDEXERS[kind](selection, shape, grid)


def classify_selection(selection: Any, ndim: int) -> str:
    """Which kind of selection ``array[selection]`` means under NumPy's rules.

    Ints, slices and Ellipsis are *basic*; a single boolean array of the array's shape is a
    *mask*; one index array among ints and slices is *orthogonal*; integer index arrays for
    every dimension are *coordinate* (points).  Several 1-D index arrays of which one is
    Boolean are *orthogonal*, as zarr-python 3 reads them.
    """
    sel = selection if isinstance(selection, tuple) else (selection,)
    arrays = [i for i, s in enumerate(sel) if _is_array_like(s)]
    if not arrays:
        return "basic"
    if len(sel) == 1:
        a = np.asarray(sel[0])
        if a.dtype == bool and a.ndim == ndim and ndim > 1:
            return "mask"
        return "orthogonal"
    if len(arrays) == 1:
        # numpy moves the advanced dimensions first when ints and the array are not adjacent
        ints = [i for i, s in enumerate(sel) if _is_int(s)]
        advanced = sorted(ints + arrays)
        if advanced == list(range(advanced[0], advanced[-1] + 1)) and np.asarray(sel[arrays[0]]).ndim == 1:
            return "orthogonal"
    as_arrays = [np.asarray(sel[i]) for i in arrays]
    if len(as_arrays) > 1 and any(a.dtype == bool for a in as_arrays):
        # several index arrays among them a Boolean one: each selects its own dimension, as
        # zarr-python 3 reads them (NumPy would pair their items up as points)
        if all(a.ndim == 1 for a in as_arrays) and all(s is not Ellipsis for s in sel):
            return "orthogonal"
    elif all(_is_array_like(s) or _is_int(s) for s in sel) and len(sel) == ndim:
        return "coordinate"
    raise SelectionError(
        "this combination of index arrays, slices and ints is ambiguous; use "
        "array.oindex[...] for orthogonal (outer) selection or array.vindex[...] for points"
    )


def pop_fields(selection: Any) -> tuple[Any, Any]:
    """Split field names (structured dtypes) from a selection: ``('a', 0:2)`` → ``('a', 0:2)``."""
    if isinstance(selection, str):
        return selection, Ellipsis
    if isinstance(selection, list) and selection and all(isinstance(s, str) for s in selection):
        return list(selection), Ellipsis
    if not isinstance(selection, tuple):
        return None, selection
    fields = [s for s in selection if isinstance(s, str)]
    fields += [
        f for s in selection if isinstance(s, list) and s and all(isinstance(x, str) for x in s)
        for f in s
    ]
    rest: Any = tuple(
        s for s in selection
        if not isinstance(s, str)
        and not (isinstance(s, list) and s and all(isinstance(x, str) for x in s))
    )
    if not fields:
        return None, selection
    if len(rest) == 0:
        rest = Ellipsis
    elif len(rest) == 1:
        rest = rest[0]
    return (fields[0] if len(fields) == 1 else fields), rest


# ---------------------------------------------------------------------------------------------
# the array's selection properties (``z.vindex[...]``, ``z.oindex[...]``, ``z.blocks[...]``)


def _is_scalar_selection(selection: Any, shape: tuple[int, ...]) -> bool:
    """Whether numpy would return a scalar: one integer per dimension and no Ellipsis."""
    if not isinstance(selection, tuple):
        selection = (selection,)
    if len(selection) != len(shape):
        return False
    return all(isinstance(s, (int, np.integer)) and not isinstance(s, bool) for s in selection)


class _VIndex:
    def __init__(self, array: Any):
        self.array = array

    def _kind(self, selection: Any) -> str:
        sel = selection[0] if isinstance(selection, tuple) and len(selection) == 1 else selection
        if not isinstance(sel, tuple) and _is_array_like(sel) and np.asarray(sel).dtype == bool:
            return "mask"
        return "coordinate"

    def __getitem__(self, selection: Any) -> NDArrayOrScalar:
        fields, selection = pop_fields(selection)
        return self.array._get(selection, self._kind(selection), fields=fields)

    def __setitem__(self, selection: Any, value: Any) -> None:
        fields, selection = pop_fields(selection)
        self.array._set(selection, value, self._kind(selection), fields=fields)


class _OIndex:
    def __init__(self, array: Any):
        self.array = array

    def __getitem__(self, selection: Any) -> NDArrayOrScalar:
        fields, selection = pop_fields(selection)
        return self.array._get(selection, "orthogonal", fields=fields)

    def __setitem__(self, selection: Any, value: Any) -> None:
        fields, selection = pop_fields(selection)
        self.array._set(selection, value, "orthogonal", fields=fields)


class _BlockIndex:
    def __init__(self, array: Any):
        self.array = array

    def __getitem__(self, selection: Any) -> NDArrayOrScalar:
        return self.array._get(selection, "block")

    def __setitem__(self, selection: Any, value: Any) -> None:
        self.array._set(selection, value, "block")
