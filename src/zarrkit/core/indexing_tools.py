"""Selections and chunk grids outside an array: zarr-python 3's helpers of
``zarr.core.indexing`` (``replace_ellipsis``, ``oindex``, ``_iter_grid``...), made of the
indexers' own pieces (:mod:`.indexing`).

:func:`grid_regions` is the engine's walk over the chunks of a grid (an array's
``_iter_chunk_regions``); :func:`oindex` and :func:`oindex_set` do to a NumPy array what an
array's ``oindex`` does to the stored one.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, SupportsInt

import numpy as np

from ..errors import SelectionError
from ..metadata.grid import ChunkGrid, RegularGrid
from .indexing import _expand_ellipsis, _is_int, _normalize_int

__all__ = [
    "grid_regions", "iter_grid", "iter_regions", "make_slice_selection", "normalize_integer_selection", "oindex",
    "oindex_set", "replace_ellipsis",
]




def replace_ellipsis(selection: Any, shape: Sequence[int]) -> tuple[Any, ...]:
    """``selection`` as one item per dimension of ``shape``: ``...`` and the dimensions not
    indexed become ``slice(None)``; the items given are kept as they are.

    Raises
    ------
    IndexError
        More items than dimensions, or more than one ``...``.

    Examples
    --------
    >>> replace_ellipsis((0, ...), (4, 5, 6))
    (0, slice(None, None, None), slice(None, None, None))
    """
    return _expand_ellipsis(selection, len(shape))


def normalize_integer_selection(dim_sel: SupportsInt, dim_len: int) -> int:
    """An integer index along an axis of length ``dim_len`` in ``range(dim_len)`` (negative ones
    count from the end).

    Raises
    ------
    IndexError
        The index is outside the axis.

    Examples
    --------
    >>> normalize_integer_selection(-1, 10)
    9
    """
    return _normalize_int(dim_sel, dim_len, 0)


def make_slice_selection(selection: Any) -> list[Any]:
    """``selection`` with integers (and one-element integer arrays) as one-element slices, so
    that indexing with it keeps every dimension.

    Raises
    ------
    IndexError
        An index array of another length than one.

    Examples
    --------
    >>> make_slice_selection((2, slice(None)))
    [slice(2, 3, 1), slice(None, None, None)]
    """
    out: list[Any] = []
    for dim, s in enumerate(selection):
        if isinstance(s, np.ndarray) and s.ndim == 1:
            if s.size != 1:
                raise SelectionError(f"only one-element index arrays become slices; axis {dim} has {s.size}")
            s = s[0]
        out.append(slice(int(s), int(s) + 1, 1) if _is_int(s) else s)
    return out


def _outer(selection: Any, shape: tuple[int, ...]) -> tuple[tuple[Any, ...], tuple[int, ...]]:
    """The ``np.ix_`` indices of an orthogonal ``selection`` of ``shape``, and the dimensions an
    integer item drops."""
    sel = _expand_ellipsis(selection, len(shape))
    drop = tuple(dim for dim, s in enumerate(sel) if _is_int(s))
    axes = []
    for s, n in zip(sel, shape):
        if _is_int(s):
            axes.append(np.array([int(s)], dtype=np.intp))
        elif isinstance(s, slice):
            axes.append(np.arange(*s.indices(n)))
        else:
            a = np.asarray(s)
            axes.append(np.flatnonzero(a) if a.dtype == bool else a)
    return np.ix_(*axes), drop


def oindex(a: np.ndarray, selection: Any) -> np.ndarray:
    """The orthogonal selection of a NumPy array (what ``z.oindex[selection]`` reads from an
    array holding ``a``): each dimension selected on its own.

    Examples
    --------
    >>> oindex(np.arange(12).reshape(3, 4), ([0, 2], [1, 3]))
    array([[ 1,  3],
           [ 9, 11]])
    """
    ix, drop = _outer(selection, a.shape)
    result: np.ndarray = a[ix]
    return result.squeeze(axis=drop) if drop else result


def oindex_set(a: np.ndarray, selection: Any, value: Any) -> None:
    """Write ``value`` to the orthogonal selection of a NumPy array, in place (what
    ``z.oindex[selection] = value`` does to an array holding ``a``).

    Examples
    --------
    >>> a = np.zeros((2, 3), dtype=int)
    >>> oindex_set(a, (1, [0, 2]), [5, 6])
    >>> a.tolist()
    [[0, 0, 0], [5, 0, 6]]
    """
    ix, drop = _outer(selection, a.shape)
    if drop and not np.isscalar(value):
        value = np.expand_dims(np.asanyarray(value), drop)
    a[ix] = value


def iter_grid(grid_shape: Sequence[int], *, origin: Sequence[int] | None = None,
              selection_shape: Sequence[int] | None = None, order: str = "lexicographic") -> Iterator[tuple[int, ...]]:
    """The coordinates of a block of a grid, in C (lexicographic) order: ``selection_shape``
    cells from ``origin`` (by default the whole grid from its first cell).

    Raises
    ------
    ValueError
        ``origin`` or ``selection_shape`` has another length than ``grid_shape``, or ``order``
        is not ``'lexicographic'``.
    IndexError
        The block reaches outside the grid.

    Examples
    --------
    >>> list(iter_grid((2, 3), origin=(1, 1)))
    [(1, 1), (1, 2)]
    """
    if order != "lexicographic":
        raise ValueError(f"order: only 'lexicographic' is supported, got {order!r}")
    first = tuple(origin) if origin is not None else (0,) * len(grid_shape)
    extent = tuple(selection_shape) if selection_shape is not None else tuple(
        g - o for g, o in zip(grid_shape, first))
    if not len(first) == len(extent) == len(grid_shape):
        raise ValueError(f"origin {first} and selection_shape {extent} must have one item per dimension "
                         f"of grid_shape {tuple(grid_shape)}")
    for dim, (o, e, g) in enumerate(zip(first, extent, grid_shape)):
        if o < 0 or e < 0 or o + e > g:
            raise SelectionError(f"a selection of {e} from {o} reaches outside the grid's {g} on axis {dim}")
    return lazy_product([range(o, o + e) for o, e in zip(first, extent)])


def lazy_product(ranges: Sequence[range]) -> Iterator[tuple[int, ...]]:
    """``itertools.product`` of ``ranges`` in C order, made one tuple at a time (the builtin
    first copies each range into a tuple: a grid of :math:`2^{40}` cells would cost terabytes
    before its first cell).

    Examples
    --------
    >>> list(lazy_product([range(2), range(1, 3)]))
    [(0, 1), (0, 2), (1, 1), (1, 2)]
    """
    ranges = list(ranges)
    if not all(ranges):  # an empty range: no cells (``bool``, unlike ``len``, takes any size)
        return
    iters = [iter(r) for r in ranges]
    current = [next(it) for it in iters]
    while True:
        yield tuple(current)
        dim = len(ranges) - 1
        while dim >= 0:  # the last dimension fastest; a finished one starts again
            value = next(iters[dim], None)
            if value is not None:
                current[dim] = value
                break
            iters[dim] = iter(ranges[dim])
            current[dim] = next(iters[dim])
            dim -= 1
        if dim < 0:
            return


def grid_regions(grid: ChunkGrid, *, origin: Sequence[int] | None = None, selection_shape: Sequence[int] | None = None,
                 trim_excess: bool = True) -> Iterator[tuple[slice, ...]]:
    """The region (a slice per dimension) of each chunk of a block of ``grid`` (see
    :func:`iter_grid`); with ``trim_excess`` a chunk sticking out of the array ends with it."""
    dims = grid.dims
    for coords in iter_grid(grid.grid_shape, origin=origin, selection_shape=selection_shape):
        yield tuple(slice(d.start(c), d.stop(c) if trim_excess else d.start(c) + d.length(c), 1)
                    for d, c in zip(dims, coords))


def iter_regions(domain_shape: Sequence[int], region_shape: Sequence[int], *, origin: Sequence[int] | None = None,
                 selection_shape: Sequence[int] | None = None, order: str = "lexicographic",
                 trim_excess: bool = True) -> Iterator[tuple[slice, ...]]:
    """:func:`grid_regions` of the regular grid of ``region_shape`` over ``domain_shape``.

    Examples
    --------
    >>> list(iter_regions((5,), (2,)))
    [(slice(0, 2, 1),), (slice(2, 4, 1),), (slice(4, 5, 1),)]
    """
    if order != "lexicographic":
        raise ValueError(f"order: only 'lexicographic' is supported, got {order!r}")
    return grid_regions(RegularGrid(tuple(domain_shape), tuple(region_shape)), origin=origin,
                        selection_shape=selection_shape, trim_excess=trim_excess)


#: zarr-python 3's private names of :func:`iter_grid` and :func:`iter_regions`
_iter_grid = iter_grid
_iter_regions = iter_regions
