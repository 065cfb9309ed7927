"""Lazy views of an array: selections composed without reading, read or written once.

``array.lazy`` is a :class:`LazyView` of the whole array.  Indexing a view (``[...]``,
``.oindex``, ``.vindex``, ``.blocks``, ``.T``, ``.transpose``, ``.astype``) gives another
view and reads nothing: the selections are composed into one index transform of
`zarr-indexing <https://zarr-indexing.readthedocs.io/>`_ (TensorStore's model: each cell of
the view names the cell of the array it shows).  ``view.read()`` and ``np.asarray(view)``
materialise it, ``view.write(value)`` and ``view[sel] = value`` write through it.

A read or a write turns the composed transform into *one* selection of the array and runs it
through the chunk engine once (:mod:`.read`, :mod:`.write`), so only the chunks the view
touches are fetched, a shard is read or rebuilt once, and chunks decode straight into the
result:

* a transform whose every array dimension depends on at most one view dimension (slices of
  any step, integers, ``oindex`` arrays, transposes) is an *orthogonal* selection; the engine
  decodes into the result seen through a transposed view of it, so no copy follows;
* any other (``vindex`` points, masks, arrays composed with each other) is a *coordinate*
  selection: the array coordinates of every cell of the view, computed from the transform.

zarr-indexing needs Python >= 3.12 and NumPy >= 2: it is the ``zarrkit[views]`` extra, and
``array.lazy`` without it raises an ImportError that says so.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Iterator
from typing import Any, Literal, Protocol

import numpy as np

from ..errors import BoundsCheckError, SelectionError, ShapeMismatchError
from .indexing import classify_selection
from .write import prepare_value

try:
    from zarr_indexing import ArrayMap, ConstantMap, DimensionMap, IndexDomain, IndexTransform
    from zarr_indexing.boundary import normalize_positional_selection, split_scalar_axes
except ImportError as exc:  # Python 3.11, or NumPy 1: the optional extra is not installed
    _MISSING: ImportError | None = exc
else:
    _MISSING = None

__all__ = ["LazyView", "lazy_view", "VIEWS_EXTRA"]

#: the selection dialects of zarr-indexing's transforms
Mode = Literal["basic", "orthogonal", "vectorized"]

#: what to install for lazy views
VIEWS_EXTRA = "zarrkit[views]"


class ViewSource(Protocol):
    """What a view needs of the array it shows: its shape, dtype, chunk boundaries and the
    orthogonal and coordinate selections of the chunk engine."""

    @property
    def shape(self) -> tuple[int, ...]: ...

    @property
    def dtype(self) -> np.dtype: ...

    @property
    def read_chunk_sizes(self) -> tuple[tuple[int, ...], ...]: ...

    def get_orthogonal_selection(self, selection: Any, out: Any = None, fields: Any = None) -> Any: ...

    def set_orthogonal_selection(self, selection: Any, value: Any, fields: Any = None) -> None: ...

    def get_coordinate_selection(self, selection: Any, out: Any = None, fields: Any = None) -> Any: ...

    def set_coordinate_selection(self, selection: Any, value: Any, fields: Any = None) -> None: ...


def lazy_view(array: ViewSource) -> LazyView:
    """A lazy view of the whole of ``array``.

    Raises
    ------
    ImportError
        When zarr-indexing (the ``zarrkit[views]`` extra) is not installed.
    """
    if _MISSING is not None:
        raise ImportError(
            f"lazy views need the zarr-indexing package (Python >= 3.12, NumPy >= 2): "
            f"pip install '{VIEWS_EXTRA}' ({_MISSING})"
        ) from _MISSING
    return LazyView(array, IndexTransform.from_shape(tuple(array.shape)), np.dtype(array.dtype))


class LazyView:
    """A lazy, composable view of a zarrkit array (``array.lazy``).

    Indexing a view gives another view and reads nothing; positions are NumPy's (``0`` is the
    first element of the view, ``-1`` the last), whatever the view was cut from.
    ``view[sel]`` reads ints, slices (any step, negative too) and ``Ellipsis`` as basic
    selections and index arrays as the array's ``[]`` does (one array: orthogonal; an array
    per dimension: points; a Boolean array of the view's shape: a mask); ``.oindex``,
    ``.vindex`` and ``.blocks`` say which explicitly.  In ``.oindex`` and ``.vindex``
    integers are applied first, dropping their dimensions (zarr-indexing's rule).

    Nothing is read until :meth:`read`, ``np.asarray(view)`` or a consumer that converts it
    (dask, xarray); :meth:`write` and ``view[sel] = value`` store through the view.

    Examples
    --------
    >>> import numpy as np, zarrkit
    >>> z = zarrkit.array(np.arange(20).reshape(4, 5), chunks=(2, 2))
    >>> v = z.lazy[::-1, 1:].oindex[[2, 0], :]
    >>> v.shape
    (2, 4)
    >>> v.read()
    array([[ 6,  7,  8,  9],
           [16, 17, 18, 19]])
    """

    __slots__ = ("_array", "_dtype", "_transform")

    def __init__(self, array: ViewSource, transform: IndexTransform, dtype: np.dtype):
        self._array = array
        self._transform = transform
        self._dtype = dtype

    def _derive(self, transform: IndexTransform, dtype: np.dtype | None = None) -> LazyView:
        return LazyView(self._array, transform, self._dtype if dtype is None else dtype)

    # -- what a view is -----------------------------------------------------------------
    @property
    def array(self) -> ViewSource:
        """The array the view shows."""
        return self._array

    @property
    def transform(self) -> IndexTransform:
        """The zarr-indexing transform from the view's coordinates to the array's."""
        return self._transform

    @property
    def shape(self) -> tuple[int, ...]:
        """The view's shape."""
        return tuple(self._transform.domain.shape)

    @property
    def dtype(self) -> np.dtype:
        """The data type the view reads as (the array's unless :meth:`astype` changed it)."""
        return self._dtype

    @property
    def ndim(self) -> int:
        """The number of dimensions of the view."""
        return self._transform.input_rank

    @property
    def size(self) -> int:
        """The number of elements of the view."""
        return math.prod(self.shape)

    @property
    def chunks(self) -> tuple[tuple[int, ...], ...] | None:
        """The sizes of the view's blocks along each dimension (see :attr:`blocks`), as dask
        spells chunks: a dask array made from the view follows the array's chunks.  None for a
        view of points or of a mask."""
        edges = _block_edges(self)
        if edges is None:
            return None
        return tuple(tuple(b - a for a, b in itertools.pairwise(e)) or (0,) for e in edges)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-dimensional view")
        return self.shape[0]

    def __iter__(self) -> Iterator[LazyView]:
        for i in range(len(self)):
            yield self[i]

    def __repr__(self) -> str:
        return f"<LazyView shape={self.shape} dtype={self._dtype} of {self._array!r}>"

    def __dask_tokenize__(self) -> Any:
        # the same array object and the same composed selection name the same data
        return (type(self).__name__, id(self._array), hash(self._transform), self._dtype.str)

    # -- composing ----------------------------------------------------------------------
    def _select(self, selection: Any, mode: Mode) -> LazyView:
        try:
            return self._derive(_compose(self._transform, selection, mode))
        except SelectionError:
            raise
        except IndexError as err:  # zarr-indexing's, as zarrkit's typed errors (still IndexErrors)
            kind = BoundsCheckError if "out of bounds" in str(err) or "outside" in str(err) else SelectionError
            raise kind(f"{err} (a view of shape {self.shape})") from None

    def __getitem__(self, selection: Any) -> LazyView:
        """Another view: ``selection`` composed with this one (nothing is read)."""
        kind = classify_selection(selection, self.ndim)
        if kind == "basic":
            return self._select(selection, "basic")
        if kind == "orthogonal":
            return self._select(selection, "orthogonal")
        return self._select(selection, "vectorized")

    def __setitem__(self, selection: Any, value: Any) -> None:
        self[selection].write(value)

    @property
    def oindex(self) -> _Accessor:
        """Orthogonal (outer) selection of the view: ``view.oindex[[2, 0], :]``."""
        return _Accessor(self, "orthogonal")

    @property
    def vindex(self) -> _Accessor:
        """Point and mask selection of the view: ``view.vindex[[0, 2], [1, 3]]``."""
        return _Accessor(self, "vectorized")

    @property
    def blocks(self) -> _Blocks:
        """Selection by block: the array's chunks as the view sees them (see :class:`_Blocks`)."""
        return _Blocks(self)

    def transpose(self, *axes: int) -> LazyView:
        """The view with its dimensions permuted (reversed when no axes are given)."""
        n = self.ndim
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        order = tuple(range(n))[::-1] if not axes else tuple(int(a) % n if n else int(a) for a in axes)
        if sorted(order) != list(range(n)):
            raise ValueError(f"axes must be a permutation of range({n}), got {axes}")
        domain = self._transform.domain
        permuted = IndexDomain(
            inclusive_min=tuple(domain.inclusive_min[a] for a in order),
            exclusive_max=tuple(domain.exclusive_max[a] for a in order),
        )
        # view dimension k of the result is dimension order[k] of this view
        where = {a: k for k, a in enumerate(order)}
        step = IndexTransform(
            domain=permuted, output=tuple(DimensionMap(input_dimension=where[j]) for j in range(n))
        )
        return self._derive(step.compose(self._transform))

    @property
    def T(self) -> LazyView:
        """The view with its dimensions reversed."""
        return self.transpose()

    def astype(self, dtype: Any) -> LazyView:
        """The view read as ``dtype`` (values cast as NumPy's ``astype`` casts them); a write
        casts its values to ``dtype``, then to the array's data type."""
        return self._derive(self._transform, np.dtype(dtype))

    # -- reading and writing ------------------------------------------------------------
    def read(self, out: np.ndarray | None = None) -> np.ndarray:
        """The view's values, read from the chunks it touches.

        Parameters
        ----------
        out : ndarray, optional
            Where to put them (the view's shape and data type).
        """
        shape = self.shape
        if out is not None:
            if not isinstance(out, np.ndarray):
                raise TypeError(f"out must be a numpy array, got {type(out).__name__}")
            if out.shape != shape or out.dtype != self._dtype:
                raise ShapeMismatchError(
                    f"out has shape {out.shape} and dtype {out.dtype}, expected {shape} and {self._dtype}"
                )
        stored = np.dtype(self._array.dtype)
        target = out if out is not None and stored == self._dtype else np.empty(shape, dtype=stored)
        if target.size:
            _read_into(self._array, self._transform, target)
        if target is out:
            return out
        if stored == self._dtype:
            return target
        if out is None:
            return target.astype(self._dtype)
        out[...] = target
        return out

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        if copy is False:
            raise ValueError("a lazy view cannot be converted to an array without reading it (copy=False)")
        result = self.read()
        return result if dtype is None else result.astype(dtype, copy=False)

    def write(self, value: Any) -> None:
        """Store ``value`` (broadcast to the view's shape) in the cells of the array the view
        shows, through the chunk engine: one store write per chunk or shard touched.  Where
        the view shows one cell of the array more than once, that cell gets one of the
        values written to it."""
        shape = self.shape
        # cast and broadcast as the array's own writes do, refused before anything is stored
        values, _ = prepare_value(value, shape, self._dtype)
        if values.size == 0:
            return
        stored = np.dtype(self._array.dtype)
        if stored != self._dtype:
            values, _ = prepare_value(values, shape, stored)
        _write_from(self._array, self._transform, values)

    # -- what array consumers call ------------------------------------------------------
    def get_basic_selection(self, selection: Any = Ellipsis, out: Any = None, fields: Any = None) -> Any:
        """``self[selection]`` read (xarray's lazy indexing adapter calls this)."""
        if fields is not None:
            raise TypeError("a lazy view reads whole elements: fields are not supported")
        return self._select(selection, "basic").read(out)

    def get_orthogonal_selection(self, selection: Any, out: Any = None, fields: Any = None) -> Any:
        """``self.oindex[selection]`` read."""
        if fields is not None:
            raise TypeError("a lazy view reads whole elements: fields are not supported")
        return self._select(selection, "orthogonal").read(out)


class _Accessor:
    """``view.oindex`` / ``view.vindex``: a selection of one kind."""

    __slots__ = ("_mode", "_view")

    def __init__(self, view: LazyView, mode: Mode):
        self._view = view
        self._mode = mode

    def __getitem__(self, selection: Any) -> LazyView:
        return self._view._select(selection, self._mode)

    def __setitem__(self, selection: Any, value: Any) -> None:
        self._view._select(selection, self._mode).write(value)


class _Blocks:
    """``view.blocks[...]``: a view's blocks are the array's chunks (the inner chunks of a
    sharded array) as the view sees them: along each dimension, the runs of positions whose
    cells lie in one chunk of the array, in the view's order.  Views whose dimensions each
    follow one dimension of the array (slices of any step, ints, orthogonal arrays,
    transposes) have blocks; points and masks do not.  Ints and slices of blocks (step 1)
    select them."""

    __slots__ = ("_view",)

    def __init__(self, view: LazyView):
        self._view = view

    def __getitem__(self, selection: Any) -> LazyView:
        edges = _block_edges(self._view)
        if edges is None:
            raise SelectionError(
                "blocks of a view need each of its dimensions to follow one dimension of the array; "
                "a view of points or of a mask has none"
            )
        sel = selection if isinstance(selection, tuple) else (selection,)
        if any(s is Ellipsis for s in sel):
            i = sel.index(Ellipsis)
            sel = sel[:i] + (slice(None),) * (len(edges) - len(sel) + 1) + sel[i + 1:]
        if len(sel) > len(edges):
            raise SelectionError(f"too many indices for a view of {len(edges)} dimensions: {selection!r}")
        basic: list[Any] = []
        for d, s in enumerate(sel):
            nblocks = len(edges[d]) - 1
            if isinstance(s, slice):
                start, stop, step = s.indices(nblocks)
                if step != 1:
                    raise SelectionError(f"block slices take step 1, got {s.step} (dimension {d})")
                stop = max(stop, start)
                basic.append(slice(edges[d][start], edges[d][stop]))
            else:
                try:
                    k = operator.index(s)
                except TypeError:
                    raise SelectionError(
                        f"blocks are selected with ints and slices, got {type(s).__name__} (dimension {d})"
                    ) from None
                if not -nblocks <= k < nblocks:
                    raise SelectionError(f"block {k} is out of range for dimension {d} of {nblocks} blocks")
                k %= nblocks
                basic.append(slice(edges[d][k], edges[d][k + 1]))
        return self._view._select(tuple(basic), "basic")

    def __setitem__(self, selection: Any, value: Any) -> None:
        self[selection].write(value)


def _block_edges(view: LazyView) -> list[list[int]] | None:
    """Where the view's blocks start and end along each of its dimensions (None for a view
    with no blocks: see :class:`_Blocks`)."""
    plan = _orthogonal_plan(view.transform)
    if plan is None:
        return None
    selection, axes, _ = plan
    shape = view.shape
    edges = [[0, n] if n else [0] for n in shape]  # a new axis: one block
    sizes = view.array.read_chunk_sizes
    along = iter(axes)
    for j, s in enumerate(selection):
        if isinstance(s, int):
            continue
        d = next(along)
        if isinstance(s, slice):
            coords = np.arange(s.start, -1 if s.stop is None else s.stop, s.step)
        else:
            coords = np.asarray(s)
        chunk = np.searchsorted(np.cumsum(sizes[j]), coords, side="right")
        cuts = np.flatnonzero(np.diff(chunk)) + 1
        edges[d] = [0, *cuts.tolist(), shape[d]] if shape[d] else [0]
    return edges


def _compose(transform: IndexTransform, selection: Any, mode: Mode) -> IndexTransform:
    """``transform`` followed by a NumPy-style (positional) ``selection`` of ``mode``."""
    if mode != "basic":
        # integers first: the orthogonal and vectorized transforms would keep their axes
        scalars, selection = split_scalar_axes(selection, transform.domain, mode)
        if scalars is not None:
            transform = transform[scalars]
    literal = normalize_positional_selection(selection, transform.domain, mode)
    if mode == "basic":
        return transform[literal]
    return transform.select(literal, mode)


# -- from a transform to one selection of the array -------------------------------------
def _orthogonal_plan(transform: IndexTransform) -> tuple[tuple[Any, ...], list[int], tuple[int, ...]] | None:
    """The orthogonal selection of the array a transform stands for, the view dimension each
    of its non-integer items runs along, and the view dimensions none does (of length 1);
    None when the transform is not orthogonal."""
    if transform.index_array_structure == "general":
        return None
    domain = transform.domain
    selection: list[Any] = []
    axes: list[int] = []
    for m in transform.output:
        if isinstance(m, ConstantMap):
            selection.append(int(m.offset))
        elif isinstance(m, DimensionMap):
            if m.stride == 0:
                return None
            d = m.input_dimension
            lo, hi = domain.inclusive_min[d], domain.exclusive_max[d]
            start = m.offset + m.stride * lo
            last = m.offset + m.stride * (hi - 1)
            stop: int | None = last + (1 if m.stride > 0 else -1)
            if stop is not None and stop < 0:
                stop = None
            selection.append(slice(start, stop, m.stride))
            axes.append(d)
        elif isinstance(m, ArrayMap):
            d_or_none = m.dependent_axis
            if d_or_none is None:
                return None
            selection.append(m.offset + m.stride * m.index_array.reshape(-1))
            axes.append(d_or_none)
        else:
            return None
    if len(set(axes)) != len(axes):
        return None  # two array dimensions along one view dimension (a diagonal)
    free = tuple(d for d in range(domain.ndim) if d not in axes)
    if any(domain.shape[d] != 1 for d in free):
        return None
    return tuple(selection), axes, free


def _engine_order(view_like: np.ndarray, axes: list[int], free: tuple[int, ...]) -> np.ndarray:
    """``view_like`` (in the view's order of dimensions) seen in the order of the array's
    selected dimensions: a view of it, never a copy."""
    squeezed = np.squeeze(view_like, axis=free) if free else view_like
    kept = sorted(axes)
    return squeezed.transpose([kept.index(d) for d in axes])


def _coordinates(transform: IndexTransform) -> tuple[np.ndarray, ...]:
    """The array coordinates of every cell of the view, one array (of the view's shape) per
    dimension of the array."""
    domain = transform.domain
    shape = tuple(domain.shape)
    coords: list[np.ndarray] = []
    c: np.ndarray
    for m in transform.output:
        if isinstance(m, ConstantMap):
            c = np.full(shape, m.offset, dtype=np.intp)
        elif isinstance(m, DimensionMap):
            d = m.input_dimension
            along = np.arange(domain.inclusive_min[d], domain.exclusive_max[d], dtype=np.intp)
            c = m.offset + m.stride * along.reshape([-1 if k == d else 1 for k in range(len(shape))])
        else:
            c = m.offset + m.stride * m.index_array
        coords.append(np.ascontiguousarray(np.broadcast_to(c, shape)))
    return tuple(coords)


def _read_into(array: ViewSource, transform: IndexTransform, out: np.ndarray) -> None:
    plan = _orthogonal_plan(transform)
    if plan is not None:
        selection, axes, free = plan
        array.get_orthogonal_selection(selection, out=_engine_order(out, axes, free))
        return
    array.get_coordinate_selection(_coordinates(transform), out=out)


def _write_from(array: ViewSource, transform: IndexTransform, values: np.ndarray) -> None:
    plan = _orthogonal_plan(transform)
    if plan is not None:
        selection, axes, free = plan
        array.set_orthogonal_selection(selection, _engine_order(values, axes, free))
        return
    array.set_coordinate_selection(_coordinates(transform), values)
