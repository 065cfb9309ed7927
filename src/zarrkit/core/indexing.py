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
import numbers
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple, SupportsInt

import numpy as np

from ..errors import BoundsCheckError, SelectionError
from ..metadata.grid import ChunkGrid, RegularGrid

__all__ = [
    "ChunkProjection",
    "make_indexer",
    "classify_selection",
    "pop_fields",
    "BasicIndexer",
    "OrthogonalIndexer",
    "CoordinateIndexer",
]


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
        raise BoundsCheckError(f"index {i} is out of bounds for axis {dim} with size {dim_len}")
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
            raise SelectionError(
                f"too many indices for array: array is {ndim}-dimensional, "
                f"but {len(selection) - 1} were indexed"
            )
        selection = selection[:i] + (slice(None),) * fill + selection[i + 1 :]
    if len(selection) > ndim:
        raise SelectionError(
            f"too many indices for array: array is {ndim}-dimensional, "
            f"but {len(selection)} were indexed"
        )
    return tuple(selection) + (slice(None),) * (ndim - len(selection))


def _check_item(s: Any, dim: int) -> None:
    if s is None:
        raise SelectionError("None (numpy.newaxis) is not supported in zarrkit selections")
    if isinstance(s, (float, np.floating)):
        raise SelectionError(
            f"only integers, slices, Ellipsis and integer or boolean arrays are valid indices; "
            f"got float {s!r} for axis {dim}"
        )
    if isinstance(s, (str, bytes)):
        raise SelectionError(f"invalid index {s!r} for axis {dim}")


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
            if arr.ndim != 1 or arr.shape[0] != dim_len:
                raise SelectionError(
                    f"boolean index along axis {dim} has shape {arr.shape}; expected ({dim_len},)"
                )
            arr = np.flatnonzero(arr)
        else:
            arr = _integer_indices(
                arr,
                f"arrays used as indices must be of integer or boolean type (axis {dim}, got {arr.dtype})",
            )
        if arr.ndim != 1:
            raise SelectionError(
                f"orthogonal selection takes 1-D index arrays; axis {dim} got shape {arr.shape}"
            )
        arr = arr.astype(np.intp, copy=True)
        outside = _wrap_indices(arr, dim_len)
        if outside is not None:
            bad = np.asarray(a)[outside][0]
            raise BoundsCheckError(
                f"index {bad} is out of bounds for axis {dim} with size {dim_len}"
            )
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

    def __len__(self) -> int:
        return sum(1 for _ in self)


BasicIndexer = OrthogonalIndexer = _ProductIndexer


class CoordinateIndexer:
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
        lin = np.ravel_multi_index(cix, cdata)
        if self._n < 2 or np.all(lin[1:] >= lin[:-1]):
            order = np.arange(self._n)
        else:
            order = np.argsort(lin, kind="stable")
        slin = lin[order]
        bounds = np.flatnonzero(np.diff(slin)) + 1
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


# ---------------------------------------------------------------------------------------------
# building indexers


def _basic_dims(selection: Any, shape: tuple[int, ...], grid: ChunkGrid, allow_arrays: bool) -> list[Any]:
    sel = _expand_ellipsis(selection, len(shape))
    dims: list[_IntDim | _SliceDim | _ArrayDim] = []
    for dim, (s, n, c) in enumerate(zip(sel, shape, grid.dims)):
        _check_item(s, dim)
        if _is_int(s):
            dims.append(_IntDim(s, n, c, dim))
        elif isinstance(s, slice):
            dims.append(_SliceDim(s, n, c, dim))
        elif allow_arrays and _is_array_like(s):
            dims.append(_ArrayDim(s, n, c, dim))
        elif isinstance(s, np.ndarray) and s.ndim == 0 and s.dtype.kind in "iu":
            dims.append(_IntDim(int(s), n, c, dim))
        elif _is_array_like(s):
            raise SelectionError(
                f"basic selection takes ints, slices and Ellipsis; axis {dim} got "
                f"{type(s).__name__} (use oindex or vindex for array selections)"
            )
        else:
            raise SelectionError(
                f"invalid index for axis {dim}: {s!r} ({type(s).__name__}); expected an int, "
                "a slice, Ellipsis or an array"
            )
    return dims


def _coordinate(selection: Any, shape: tuple[int, ...], grid: ChunkGrid) -> CoordinateIndexer:
    if not isinstance(selection, tuple):
        selection = (selection,)
    if len(selection) != len(shape):
        raise SelectionError(
            f"coordinate selection needs one index array per dimension: array is "
            f"{len(shape)}-dimensional, got {len(selection)}"
        )
    arrays = []
    for dim, s in enumerate(selection):
        _check_item(s, dim)
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
    out = []
    for dim, (a, n) in enumerate(zip(broadcast, shape)):
        a = a.astype(np.intp, copy=True)
        outside = _wrap_indices(a, n)
        if outside is not None:
            bad = a[outside].reshape(-1)[0]
            raise BoundsCheckError(f"index {bad} is out of bounds for axis {dim} with size {n}")
        out.append(a)
    return CoordinateIndexer(out, grid)


def _mask(selection: Any, shape: tuple[int, ...], grid: ChunkGrid) -> CoordinateIndexer:
    if isinstance(selection, tuple):
        if len(selection) != 1:
            raise SelectionError("mask selection takes a single boolean array")
        selection = selection[0]
    m = np.asarray(selection)
    if m.dtype != bool:
        raise SelectionError(f"mask selection takes a boolean array, got dtype {m.dtype}")
    if m.shape != tuple(shape):
        raise SelectionError(f"mask has shape {m.shape}, expected the array's shape {tuple(shape)}")
    coords = [np.asarray(c, dtype=np.intp) for c in np.nonzero(m)]
    return CoordinateIndexer(coords, grid, out_shape=(int(m.sum()),))


def _block(selection: Any, shape: tuple[int, ...], grid: ChunkGrid) -> _ProductIndexer:
    sel = _expand_ellipsis(selection, len(shape))
    basic = []
    for dim, (s, d) in enumerate(zip(sel, grid.dims)):
        nblocks = d.n
        if _is_int(s):
            b = _wrap_index(int(s), nblocks)
            if b is None:
                raise BoundsCheckError(
                    f"block index {s} is out of bounds for axis {dim} with {nblocks} blocks"
                )
            basic.append(slice(d.start(b), d.stop(b)))
        elif isinstance(s, slice):
            if s.step not in (None, 1):
                raise SelectionError(f"block selection slices must have step 1 (axis {dim})")
            b0, b1, _ = s.indices(nblocks)
            basic.append(slice(d.start(b0), d.stop(b1 - 1)) if b1 > b0 else slice(0, 0))
        else:
            raise SelectionError(
                f"block selection takes ints and slices; axis {dim} got {type(s).__name__}"
            )
    return _ProductIndexer(_basic_dims(tuple(basic), shape, grid, False), orthogonal=False)


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
    shape = tuple(shape)
    if not isinstance(grid, ChunkGrid):
        grid = RegularGrid(shape, grid)
    if kind == "basic":
        return _ProductIndexer(_basic_dims(selection, shape, grid, False), orthogonal=False)
    if kind == "orthogonal":
        return _ProductIndexer(_basic_dims(selection, shape, grid, True), orthogonal=True)
    if kind == "coordinate":
        return _coordinate(selection, shape, grid)
    if kind == "mask":
        return _mask(selection, shape, grid)
    if kind == "block":
        return _block(selection, shape, grid)
    raise ValueError(f"unknown selection kind {kind!r}")


def classify_selection(selection: Any, ndim: int) -> str:
    """Which kind of selection ``array[selection]`` means under NumPy's rules.

    Ints, slices and Ellipsis are *basic*; a single boolean array of the array's shape is a
    *mask*; one index array among ints and slices is *orthogonal*; index arrays for every
    dimension are *coordinate* (points).
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
    if (all(_is_array_like(s) or _is_int(s) for s in sel) and len(sel) == ndim
            and all(np.asarray(sel[i]).dtype != bool for i in arrays)):
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
        if isinstance(sel, np.ndarray) and sel.dtype == bool:
            return "mask"
        return "coordinate"

    def __getitem__(self, selection: Any) -> Any:
        fields, selection = pop_fields(selection)
        return self.array._get(selection, self._kind(selection), fields=fields)

    def __setitem__(self, selection: Any, value: Any) -> None:
        fields, selection = pop_fields(selection)
        self.array._set(selection, value, self._kind(selection), fields=fields)


class _OIndex:
    def __init__(self, array: Any):
        self.array = array

    def __getitem__(self, selection: Any) -> Any:
        fields, selection = pop_fields(selection)
        return self.array._get(selection, "orthogonal", fields=fields)

    def __setitem__(self, selection: Any, value: Any) -> None:
        fields, selection = pop_fields(selection)
        self.array._set(selection, value, "orthogonal", fields=fields)


class _BlockIndex:
    def __init__(self, array: Any):
        self.array = array

    def __getitem__(self, selection: Any) -> Any:
        return self.array._get(selection, "block")

    def __setitem__(self, selection: Any, value: Any) -> None:
        self.array._set(selection, value, "block")
