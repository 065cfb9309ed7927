"""Selections of an array: ``z[...]``, ``z.oindex[...]``, ``z.vindex[...]``, ``z.blocks[...]``
and zarr-python 2's ``get_``/``set_`` ``basic``, ``orthogonal``, ``coordinate``, ``mask`` and
``block`` selection methods.

Each makes an indexer (:mod:`.indexing`) and reads (:mod:`.read`) or writes (:mod:`.write`) the
chunks it touches: :func:`get_selection` and :func:`set_selection` are the two paths.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Protocol

import numpy as np

from ..metadata.v2 import ArrayMetadataV2
from ..metadata.v3 import ArrayMetadataV3
from .chunks import ChunkContext
from .indexing import (
    NDArrayOrScalar,
    StackedIndexer,
    _BlockIndex,
    _is_scalar_selection,
    _OIndex,
    _VIndex,
    make_indexer,
)
from .indexing_tools import grid_regions
from .read import read_selection
from .write import write_selection

__all__ = ["SelectionMethods", "Selectable", "get_selection", "get_selections", "set_selection"]


class Selectable(Protocol):
    """What reading and writing a selection needs of an array."""

    _meta: ArrayMetadataV2 | ArrayMetadataV3
    _runtime_order: str | None
    _write_empty_chunks: bool
    _synchronizer: Any

    @property
    def _ctx(self) -> ChunkContext: ...

    def _refresh_metadata(self) -> None: ...

    def _check_writable(self) -> None: ...


def get_selection(array: Selectable, selection: Any, kind: str, out: Any = None, fields: Any = None) -> NDArrayOrScalar:
    """Read the ``kind`` selection (``'basic'``, ``'orthogonal'``, ``'coordinate'``,
    ``'mask'``, ``'block'``) of ``array``."""
    array._refresh_metadata()
    meta = array._meta
    indexer = make_indexer(selection, meta.shape, array._ctx.grid, kind)
    given = out
    if out is not None and not isinstance(out, np.ndarray) and hasattr(out, "as_numpy_array"):
        # zarr-python 3's NDBuffer: its NumPy array is filled, the buffer given back
        out = out.as_numpy_array()
    result = read_selection(array._ctx, indexer, out=out, fields=fields)
    if given is not out:
        return given
    if array._runtime_order == "F" and out is None and result.ndim > 1:
        result = np.asfortranarray(result)
    if out is None and result.shape == () and (
        kind in ("orthogonal", "coordinate", "mask")
        or (kind == "basic" and _is_scalar_selection(selection, meta.shape))
    ):
        return result[()]  # a single item is a scalar, as zarr-python 2 returns it
    return result


def get_selections(array: Selectable, selections: Sequence[Any]) -> list[NDArrayOrScalar]:
    """Read the basic selections ``selections`` of ``array`` together (see
    :meth:`SelectionMethods.get_many`): every selection is checked before anything is read,
    then those of one shape are read as one (:class:`~zarrkit.core.indexing.StackedIndexer`)."""
    if isinstance(selections, (str, bytes)) or not isinstance(selections, Sequence):
        raise TypeError(f"selections must be a sequence of selections, got {type(selections).__name__}")
    array._refresh_metadata()
    meta = array._meta
    grid = array._ctx.grid
    indexers = []
    for k, selection in enumerate(selections):
        try:
            indexers.append(make_indexer(selection, meta.shape, grid, "basic"))
        except Exception as e:
            e.add_note(f"(selections[{k}] of get_many: {selection!r})")
            raise
    by_shape: dict[tuple[int, ...], list[int]] = {}
    for k, ix in enumerate(indexers):
        by_shape.setdefault(tuple(ix.shape), []).append(k)
    results: list[Any] = [None] * len(indexers)
    fortran = array._runtime_order == "F"
    for shape, ks in by_shape.items():
        stacked = read_selection(array._ctx, StackedIndexer([indexers[k] for k in ks]))
        for j, k in enumerate(ks):
            if shape == ():  # an item: a scalar where z[...] gives one, else a 0-d array
                results[k] = stacked[j] if _is_scalar_selection(selections[k], meta.shape) else stacked[j, ...]
                continue
            part = stacked[j]
            results[k] = np.asfortranarray(part) if fortran and part.ndim > 1 else part
    return results


def set_selection(array: Selectable, selection: Any, value: Any, kind: str, fields: Any = None) -> None:
    """Write ``value`` to the ``kind`` selection of ``array``."""
    array._check_writable()
    array._refresh_metadata()
    indexer = make_indexer(selection, array._meta.shape, array._ctx.grid, kind)
    write_selection(
        array._ctx,
        indexer,
        value,
        fields=fields,
        write_empty_chunks=array._write_empty_chunks,
        synchronizer=array._synchronizer,
    )


class SelectionMethods:
    """The selection methods of :class:`~zarrkit.core.array.Array`."""

    def islice(self: Selectable, start: int | None = None, end: int | None = None) -> Iterator[Any]:
        """Yield items along the first dimension, reading one chunk-row at a time.

        Parameters
        ----------
        start : int, optional
            First index (default 0).
        end : int, optional
            Index after the last (default: the length; larger values stop there).

        Yields
        ------
        ndarray or scalar
            ``z[i]`` for each ``i`` from ``start`` to ``end``.

        Raises
        ------
        ValueError
            ``start`` or ``end`` is not a non-negative int.

        Examples
        --------
        >>> import numpy as np, zarrkit
        >>> z = zarrkit.array(np.arange(10), chunks=3)
        >>> [int(v) for v in z.islice(2, 5)]
        [2, 3, 4]
        """
        if not self._meta.shape:
            raise TypeError("iteration over a 0-d array")
        n = self._meta.shape[0]
        start = 0 if start is None else start
        end = n if end is None else min(end, n)
        if not (isinstance(start, int) and isinstance(end, int)) or start < 0 or end < 0:
            raise ValueError(f"islice start and end must be non-negative ints, got {start!r}, {end!r}")
        dim = self._meta.grid.dims[0]
        block = None
        block_start = -1
        for i in range(start, end):
            c = dim.index(i)
            c0 = dim.start(c)
            if c0 != block_start:
                block_start = c0
                block = SelectionMethods._get(self, slice(c0, min(dim.stop(c), end)), "basic")
            yield block[i - c0]  # type: ignore[index]

    def __iter__(self: Selectable) -> Iterator[Any]:
        # (an item is an array, or a scalar for a 1-d array: Any, as NumPy's own iteration is)
        return SelectionMethods.islice(self)

    def get_many(self: Selectable, selections: Sequence[Any]) -> list[NDArrayOrScalar]:
        """Read several basic selections at once: ``z.get_many([sel1, sel2, ...])`` is
        ``[z[sel1], z[sel2], ...]`` read as one plan.

        Many small reads -- the tiles of a tile server, the samples of a data loader, the
        inner chunks of a shard -- each cost a plan, a store request and their Python when read
        one by one, and threads reading them convoy on the interpreter lock.  Read together,
        the chunks they touch are fetched together (the inner chunks of one shard with one
        request for its index and one for their bytes) and decoded in batches on the thread
        pool, releasing the interpreter lock.  ``asyncio.gather`` over
        :meth:`AsyncArray.getitem <zarrkit.api.AsyncArray.getitem>` calls of one array reads
        through this too.

        Parameters
        ----------
        selections : sequence of selections
            Each one a basic selection (ints, slices, ``...``), as ``z[...]`` takes.

        Returns
        -------
        list
            The result of each selection, in order: an array (those of one shape are views of
            one block of memory, which stays alive while any of them does), or a scalar where
            a selection indexes every dimension with an int.

        Raises
        ------
        IndexError, TypeError
            A selection out of bounds or not basic (the error's note names which one), before
            anything is read.

        Examples
        --------
        >>> import numpy as np, zarrkit
        >>> z = zarrkit.array(np.arange(100).reshape(10, 10), chunks=(5, 5))
        >>> [r.tolist() for r in z.get_many([(0, slice(0, 3)), (9, slice(7, 10))])]
        [[0, 1, 2], [97, 98, 99]]
        >>> int(z.get_many([(2, 3)])[0])
        23
        """
        return get_selections(self, selections)

    def _get(self: Selectable, selection: Any, kind: str, out: Any = None, fields: Any = None) -> NDArrayOrScalar:
        return get_selection(self, selection, kind, out=out, fields=fields)

    def _set(self: Selectable, selection: Any, value: Any, kind: str, fields: Any = None) -> None:
        set_selection(self, selection, value, kind, fields=fields)

    @property
    def _chunk_grid(self: Selectable) -> Any:
        """The grid of the stored objects (shards of a sharded array, chunks of any other), as
        zarr-python 3's ``Array._chunk_grid``."""
        self._refresh_metadata()
        return self._meta.storage_grid

    def _iter_chunk_regions(self: Selectable, origin: Sequence[int] | None = None,
                            selection_shape: Sequence[int] | None = None) -> Iterator[tuple[slice, ...]]:
        """The region of the array (a slice per dimension) each chunk covers, in C order of the
        chunks: ``selection_shape`` chunks from the chunk ``origin`` (all by default).  A
        sharded array's chunks are the inner chunks of its shards."""
        self._refresh_metadata()
        return grid_regions(self._ctx.grid, origin=origin, selection_shape=selection_shape)

    def _iter_shard_regions(self: Selectable, origin: Sequence[int] | None = None,
                            selection_shape: Sequence[int] | None = None) -> Iterator[tuple[slice, ...]]:
        """As :meth:`_iter_chunk_regions`, over the stored objects: the shards of a sharded
        array, the chunks of any other."""
        self._refresh_metadata()
        return grid_regions(self._meta.storage_grid, origin=origin, selection_shape=selection_shape)

    @property
    def vindex(self) -> _VIndex:
        """Coordinate (point) and mask selection: ``z.vindex[[0, 2], [1, 3]]``."""
        return _VIndex(self)

    @property
    def oindex(self) -> _OIndex:
        """Orthogonal (outer) selection: ``z.oindex[[0, 2], :]``."""
        return _OIndex(self)

    @property
    def blocks(self) -> _BlockIndex:
        """Selection by chunk (block) indices: ``z.blocks[1, 0]``."""
        return _BlockIndex(self)

    def get_basic_selection(self: Selectable, selection: Any = Ellipsis, out: Any = None, fields: Any = None) -> NDArrayOrScalar:
        """Retrieve data using ints, slices (any step) and Ellipsis (what ``z[...]`` does).

        Parameters
        ----------
        selection : int, slice, Ellipsis or tuple of them, optional
            One item per dimension (fewer: the rest are whole); the whole array by default.
        out : ndarray, optional
            Where to write the result (its shape must be the selection's).
        fields : str or list of str, optional
            Fields of a structured data type to read.

        Returns
        -------
        ndarray or scalar
            The selected data (a scalar when every dimension is indexed by an int).

        Raises
        ------
        IndexError
            An index out of bounds or of another kind.

        Examples
        --------
        >>> import numpy as np, zarrkit
        >>> z = zarrkit.array(np.arange(12).reshape(3, 4), chunks=(2, 2))
        >>> z.get_basic_selection((slice(0, 3, 2), -1))
        array([ 3, 11])
        """
        return get_selection(self, selection, "basic", out=out, fields=fields)

    def set_basic_selection(self: Selectable, selection: Any, value: Any, fields: Any = None) -> None:
        """Modify data using ints, slices (any step) and Ellipsis (what ``z[...] = v`` does).

        Parameters
        ----------
        selection : int, slice, Ellipsis or tuple of them
            One item per dimension (fewer: the rest are whole).
        value : scalar or array-like
            The values, broadcast to the selection's shape.
        fields : str or list of str, optional
            Fields of a structured data type to write.

        Raises
        ------
        ReadOnlyError
            The array is read-only.

        Examples
        --------
        >>> import zarrkit
        >>> z = zarrkit.zeros((2, 4), chunks=2, dtype='i4')
        >>> z.set_basic_selection((1, slice(None, None, 2)), 7)
        >>> z[1].tolist()
        [7, 0, 7, 0]
        """
        set_selection(self, selection, value, "basic", fields=fields)

    def get_orthogonal_selection(self: Selectable, selection: Any, out: Any = None, fields: Any = None) -> NDArrayOrScalar:
        """Retrieve data selecting each dimension independently (``z.oindex[...]``).

        Parameters
        ----------
        selection : tuple
            Per dimension an int, a slice, an integer array or a boolean mask.
        out : ndarray, optional
            Where to write the result.
        fields : str or list of str, optional
            Fields of a structured data type to read.

        Returns
        -------
        ndarray
            The outer product of the selections.

        Examples
        --------
        >>> import numpy as np, zarrkit
        >>> z = zarrkit.array(np.arange(12).reshape(3, 4), chunks=(2, 2))
        >>> z.get_orthogonal_selection(([0, 2], [1, 3]))
        array([[ 1,  3],
               [ 9, 11]])
        """
        return get_selection(self, selection, "orthogonal", out=out, fields=fields)

    def set_orthogonal_selection(self: Selectable, selection: Any, value: Any, fields: Any = None) -> None:
        """Modify data selecting each dimension independently (``z.oindex[...] = v``).

        Parameters
        ----------
        selection : tuple
            Per dimension an int, a slice, an integer array or a boolean mask.
        value : scalar or array-like
            The values, broadcast to the selection's shape.
        fields : str or list of str, optional
            Fields of a structured data type to write.

        Examples
        --------
        >>> import zarrkit
        >>> z = zarrkit.zeros((3, 3), chunks=2, dtype='i4')
        >>> z.set_orthogonal_selection(([0, 2], [0, 2]), 1)
        >>> int(z[:].sum())
        4
        """
        set_selection(self, selection, value, "orthogonal", fields=fields)

    def get_coordinate_selection(self: Selectable, selection: Any, out: Any = None, fields: Any = None) -> NDArrayOrScalar:
        """Retrieve points given by their coordinates (``z.vindex[...]`` with integer arrays).

        Parameters
        ----------
        selection : tuple of integer arrays
            One array of coordinates per dimension (broadcast together).
        out : ndarray, optional
            Where to write the result.
        fields : str or list of str, optional
            Fields of a structured data type to read.

        Returns
        -------
        ndarray
            The points, in the shape of the coordinate arrays.

        Examples
        --------
        >>> import numpy as np, zarrkit
        >>> z = zarrkit.array(np.arange(12).reshape(3, 4), chunks=(2, 2))
        >>> z.get_coordinate_selection(([0, 2], [1, 3]))
        array([ 1, 11])
        """
        return get_selection(self, selection, "coordinate", out=out, fields=fields)

    def set_coordinate_selection(self: Selectable, selection: Any, value: Any, fields: Any = None) -> None:
        """Modify points given by their coordinates (``z.vindex[...] = v``).

        Parameters
        ----------
        selection : tuple of integer arrays
            One array of coordinates per dimension.
        value : scalar or array-like
            The values, one per point (or broadcast).
        fields : str or list of str, optional
            Fields of a structured data type to write.

        Examples
        --------
        >>> import zarrkit
        >>> z = zarrkit.zeros((3, 3), chunks=2, dtype='i4')
        >>> z.set_coordinate_selection(([0, 2], [0, 2]), [5, 6])
        >>> int(z[0, 0]), int(z[2, 2]), int(z[0, 2])
        (5, 6, 0)
        """
        set_selection(self, selection, value, "coordinate", fields=fields)

    def get_mask_selection(self: Selectable, selection: Any, out: Any = None, fields: Any = None) -> NDArrayOrScalar:
        """Retrieve the items where a boolean array of the array's shape is True.

        Parameters
        ----------
        selection : ndarray of bool
            A mask of the array's shape.
        out : ndarray, optional
            Where to write the result.
        fields : str or list of str, optional
            Fields of a structured data type to read.

        Returns
        -------
        ndarray
            The selected items, in C order.

        Examples
        --------
        >>> import numpy as np, zarrkit
        >>> z = zarrkit.array(np.arange(6).reshape(2, 3), chunks=2)
        >>> z.get_mask_selection(np.arange(6).reshape(2, 3) % 2 == 1)
        array([1, 3, 5])
        """
        return get_selection(self, selection, "mask", out=out, fields=fields)

    def set_mask_selection(self: Selectable, selection: Any, value: Any, fields: Any = None) -> None:
        """Modify the items where a boolean array of the array's shape is True.

        Parameters
        ----------
        selection : ndarray of bool
            A mask of the array's shape.
        value : scalar or array-like
            The values, one per True item (or broadcast).
        fields : str or list of str, optional
            Fields of a structured data type to write.

        Examples
        --------
        >>> import numpy as np, zarrkit
        >>> z = zarrkit.zeros(4, chunks=2, dtype='i4')
        >>> z.set_mask_selection(np.array([True, False, False, True]), 9)
        >>> z[:].tolist()
        [9, 0, 0, 9]
        """
        set_selection(self, selection, value, "mask", fields=fields)

    def get_block_selection(self: Selectable, selection: Any, out: Any = None, fields: Any = None) -> NDArrayOrScalar:
        """Retrieve whole chunks by their grid indices (``z.blocks[...]``).

        Parameters
        ----------
        selection : int, slice or tuple of them
            Chunk indices per dimension (ints or step-1 slices).
        out : ndarray, optional
            Where to write the result.
        fields : str or list of str, optional
            Fields of a structured data type to read.

        Returns
        -------
        ndarray
            The data of the chunks selected.

        Examples
        --------
        >>> import numpy as np, zarrkit
        >>> z = zarrkit.array(np.arange(10), chunks=4)
        >>> z.get_block_selection(2)
        array([8, 9])
        """
        return get_selection(self, selection, "block", out=out, fields=fields)

    def set_block_selection(self: Selectable, selection: Any, value: Any, fields: Any = None) -> None:
        """Modify whole chunks by their grid indices (``z.blocks[...] = v``).

        Parameters
        ----------
        selection : int, slice or tuple of them
            Chunk indices per dimension (ints or step-1 slices).
        value : scalar or array-like
            The values, broadcast to the chunks' shape.
        fields : str or list of str, optional
            Fields of a structured data type to write.

        Examples
        --------
        >>> import zarrkit
        >>> z = zarrkit.zeros(6, chunks=2, dtype='i4')
        >>> z.set_block_selection(1, 3)
        >>> z[:].tolist()
        [0, 0, 3, 3, 0, 0]
        """
        set_selection(self, selection, value, "block", fields=fields)
