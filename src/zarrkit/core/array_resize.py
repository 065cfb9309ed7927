"""Changing an array's shape: :meth:`~zarrkit.core.array.Array.resize` and
:meth:`~zarrkit.core.array.Array.append`, written in an order that a writer killed at any
point leaves consistent (see ``_resize_locked``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import ReadOnlyError, ShapeMismatchError
from ..metadata import io
from ..metadata.normalize import normalize_shape
from ..metadata.v2 import ArrayMetadataV2
from ..metadata.v3 import ArrayMetadataV3
from .chunks import ChunkContext
from .indexing import make_indexer
from .stored import current_documents, iter_stored
from .write import write_selection

__all__ = ["ResizeMethods"]


class ResizeMethods:
    """Resizing and appending to an array."""

    # what the array class provides
    _meta: ArrayMetadataV2 | ArrayMetadataV3
    _ctx: Any
    _path: str
    _store: Any
    _chunk_store: Any
    _is_view: bool
    _cache_metadata: bool
    _write_empty_chunks: bool
    _synchronizer: Any
    _lock: Callable[[str], Any]
    _set_meta: Callable[[Any], None]
    _write_metadata: Callable[..., None]
    _check_writable: Callable[[], None]

    def resize(self, *args: Any) -> None:
        """Change the shape; chunks wholly outside a shrunk shape are deleted.

        Parameters
        ----------
        *args : int or tuple of ints
            The new shape: one int per dimension, or one tuple.

        Raises
        ------
        ShapeMismatchError
            The new shape has another number of dimensions.
        ReadOnlyError
            The array is read-only, or a view.

        Examples
        --------
        >>> import zarrkit
        >>> z = zarrkit.zeros((10, 10), chunks=(5, 5))
        >>> z.resize(20, 10)
        >>> z.shape
        (20, 10)
        """
        self._check_resizable()
        new_shape = normalize_shape(args[0] if len(args) == 1 else args)
        if len(new_shape) != len(self._meta.shape):
            raise ShapeMismatchError(
                f"new shape {new_shape} must have {len(self._meta.shape)} dimensions like {self._meta.shape}"
            )
        with self._metadata_lock():
            self._resize_locked(self._current_document(), new_shape)

    def _metadata_lock(self) -> Any:
        """The synchronizer's lock on this array's metadata document (a no-op without one)."""
        return self._lock(io.meta_key(self._path, self._meta.metadata_key))

    def _current_document(self) -> tuple[Any, dict[str, Any] | None]:
        """The array's metadata as stored now (and a v3 document's attributes, which share
        it), with one read, also kept as this array's metadata.

        A shape change is computed from this, never from what the array was opened with: a
        handle opened before another writer appended, or through a consolidated snapshot,
        would otherwise write its rows over the other writer's and delete the other writer's
        chunks as leftovers of an interrupted resize.
        """
        meta, attributes = io.read_array_document(current_documents(self._store), self._path,
                                                  self._meta.zarr_format)
        self._set_meta(meta)
        return meta, attributes

    def _resize_locked(self, current: tuple[Any, dict[str, Any] | None], new_shape: tuple[int, ...],
                       appended: Any = None) -> None:
        """Write the metadata of ``new_shape`` in an order a writer killed at any point leaves
        consistent: stored objects outside the current grid (left by an interrupted resize,
        invisible until the array grows over them) deleted first, ``appended`` (``(region,
        data)``) written out of sight, the new metadata, then a shrunk grid's objects deleted.

        ``current`` is what :meth:`_current_document` read under the same lock: no stored
        object inside its shape is deleted, only those outside it or outside ``new_shape``."""
        old, attributes = current
        new = old.evolve(shape=new_shape)
        old_grid, new_grid = old.storage_grid.grid_shape, new.storage_grid.grid_shape
        leftovers, shrunk = [], []
        for c, key in iter_stored(self._ctx, old, within=False):
            if any(i >= m for i, m in zip(c, old_grid)):
                leftovers.append(key)
            elif any(i >= m for i, m in zip(c, new_grid)):
                shrunk.append(key)
        # a transactional store (Icechunk) has no crash window, but refuses to write, and
        # ignores deleting, objects outside the shape its metadata has: there the shrunk grid's
        # objects go first, then the new metadata, then the appended rows
        transactional = self._chunk_store.transactional
        for key in leftovers + shrunk if transactional else leftovers:
            self._chunk_store.delete(key)
        if transactional:
            self._write_metadata(new, attributes)
        if appended is not None:
            region, data = appended
            ctx = ChunkContext.build(self._chunk_store, self._path, new)
            write_selection(ctx, make_indexer(region, new.shape, ctx.grid, "basic"), data,
                            write_empty_chunks=self._write_empty_chunks, synchronizer=self._synchronizer)
        if not transactional:
            self._write_metadata(new, attributes)
            for key in shrunk:
                self._chunk_store.delete(key)

    def _check_resizable(self) -> None:
        if self._is_view:
            raise ReadOnlyError("not permitted for views")
        self._check_writable()

    def append(self, data: Any, axis: int = 0) -> tuple[int, ...]:
        """Append ``data`` along ``axis``; all other dimensions must match.

        The rows are written before the shape that shows them: an append is all or nothing,
        and concurrent appends (with a synchronizer) never claim the same rows.

        Parameters
        ----------
        data : array-like
            The values, with the array's number of dimensions.
        axis : int, optional
            The dimension to grow.

        Returns
        -------
        tuple of ints
            The new shape.

        Raises
        ------
        ShapeMismatchError
            The other dimensions of ``data`` differ from the array's.
        ValueError
            ``axis`` is out of range.

        Examples
        --------
        >>> import numpy as np, zarrkit
        >>> z = zarrkit.array(np.arange(6).reshape(2, 3), chunks=(1, 3))
        >>> z.append(np.arange(3).reshape(1, 3))
        (3, 3)
        """
        self._check_resizable()
        data = np.asanyarray(data)
        # the whole append holds the metadata lock: concurrent appends never claim the same rows
        with self._metadata_lock():
            current = self._current_document()
            shape = current[0].shape
            if not -len(shape) <= axis < len(shape):
                raise ValueError(f"axis {axis} is out of range for a {len(shape)}-d array")
            axis = axis % len(shape)
            if data.ndim != len(shape) or any(
                d != s for i, (d, s) in enumerate(zip(data.shape, shape)) if i != axis
            ):
                raise ShapeMismatchError(
                    f"shape of data to append {data.shape} is not compatible with the array's "
                    f"shape {shape}; all dimensions must match except dimension {axis}"
                )
            new_shape = tuple(s + data.shape[axis] if i == axis else s for i, s in enumerate(shape))
            region = tuple(
                slice(shape[axis], new_shape[axis]) if i == axis else slice(None)
                for i in range(len(shape))
            )
            # the rows are written before the shape that shows them: an append is all or nothing
            self._resize_locked(current, new_shape, appended=(region, data))
        return new_shape
