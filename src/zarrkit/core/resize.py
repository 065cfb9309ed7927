"""Changing an array's shape: :meth:`~zarrkit.core.array.Array.resize` and
:meth:`~zarrkit.core.array.Array.append`, written in an order that a writer killed at any
point leaves consistent (see :func:`resize_locked`)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Protocol

import numpy as np

from ..errors import ReadOnlyError, ShapeMismatchError, VersionConflictError
from ..metadata.io import meta_key
from ..metadata.normalize import normalize_shape
from ..metadata.v2 import ArrayMetadataV2
from ..metadata.v3 import ArrayMetadataV3
from ..storage.base import Store
from ..storage.optimistic import until_written
from .chunks import ChunkContext
from .claims import Claim, RowsClaimed
from .indexing import make_indexer
from .indexing_tools import lazy_product
from .read import read_selection
from .shard_trim import clear_grown, clear_inner_outside, clear_stored
from .stored import current_documents, iter_stored
from .write import write_selection

__all__ = ["ResizeMethods", "Resizable", "chunk_coords_outside", "resize_locked"]

#: an array's metadata document as stored now: the metadata and a v3 document's attributes
Document = tuple[Any, "dict[str, Any] | None"]


class Resizable(Protocol):
    """What changing an array's shape needs of it."""

    _meta: ArrayMetadataV2 | ArrayMetadataV3
    _path: str
    _chunk_store: Store
    _store: Store
    _is_view: bool
    _write_empty_chunks: bool
    _synchronizer: Any

    @property
    def _ctx(self) -> ChunkContext: ...

    def _check_writable(self) -> None: ...

    def _metadata_lock(self) -> Any: ...

    def _current_document(self) -> Document: ...

    def _write_metadata(self, meta: Any, attributes: dict[str, Any] | None = None) -> None: ...

    def _read_document(self) -> tuple[Any, dict[str, Any] | None, Any]: ...

    def _write_document(self, meta: Any, attributes: dict[str, Any] | None, version: Any) -> Any: ...


class ResizeMethods:
    """Resizing and appending to an array (methods of :class:`~zarrkit.core.array.Array`)."""

    def resize(self: Resizable, *args: Any, delete_outside_chunks: bool = True) -> None:
        """Change the shape; chunks wholly outside a shrunk shape are deleted.

        Parameters
        ----------
        *args : int or tuple of ints
            The new shape: one int per dimension, or one tuple.
        delete_outside_chunks : bool, default True
            Delete the stored chunks (or shards) wholly outside the new shape.  False keeps
            them: only the metadata changes (a later resize or append that deletes, deletes
            those outside the shape it starts from: growing over them shows the fill value).

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
        check_resizable(self)
        if not isinstance(delete_outside_chunks, (bool, np.bool_)):
            raise TypeError(f"delete_outside_chunks must be True or False, got {delete_outside_chunks!r}")
        new_shape = normalize_shape(args[0] if len(args) == 1 else args)
        if len(new_shape) != len(self._meta.shape):
            raise ShapeMismatchError(
                f"new shape {new_shape} must have the same number of dimensions as the array's shape "
                f"{self._meta.shape} ({len(self._meta.shape)})"
            )
        def attempt() -> None:
            meta, attributes, version = self._read_document()
            claimed(self, meta, version, lambda claim: resize_locked(
                self, (meta, attributes), new_shape, delete=delete_outside_chunks, version=version, claim=claim))

        with self._metadata_lock():
            until_written(attempt, self._path, "the array's metadata")

    def append(self: Resizable, data: Any, axis: int = 0) -> tuple[int, ...]:
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
        check_resizable(self)
        data = np.asanyarray(data)

        def attempt() -> tuple[int, ...]:
            meta, attributes, version = self._read_document()
            shape = meta.shape
            if not -len(shape) <= axis < len(shape):
                raise ValueError(f"axis {axis} is out of range for a {len(shape)}-d array")
            dim = axis % len(shape)
            if data.ndim != len(shape) or any(
                d != s for i, (d, s) in enumerate(zip(data.shape, shape)) if i != dim
            ):
                raise ShapeMismatchError(
                    f"shape of data to append {data.shape} is not compatible with the array's "
                    f"shape {shape}; all dimensions must match except dimension {dim}"
                )
            new_shape = tuple(s + data.shape[dim] if i == dim else s for i, s in enumerate(shape))
            new_shape = normalize_shape(new_shape, "appended shape")  # (lengths the parser reads)
            region = tuple(
                slice(shape[dim], new_shape[dim]) if i == dim else slice(None) for i in range(len(shape))
            )
            # the rows are written before the shape that shows them: an append is all or nothing.
            # Racing other appends (a store with versions, no synchronizer), they are claimed
            # while written, and put back when another append wins them (see core/claims)
            claim = claimed(self, meta, version, lambda claim: resize_locked(
                self, (meta, attributes), new_shape, appended=(region, data), version=version, claim=claim))
            if claim is not None:
                _confirm_rows(self, region, data)
            return new_shape

        # the whole append holds the metadata lock (with a synchronizer), and its new shape is
        # written on the condition that the document is still the one read (where the store
        # can): concurrent appends never claim the same rows
        with self._metadata_lock():
            return until_written(attempt, self._path, "the array's metadata")


def claimed(array: Resizable, meta: Any, version: Any, change: Any) -> Claim | None:
    """``change(claim)``: a shape change of ``array``, whose document was read at ``version``,
    with a :class:`~zarrkit.core.claims.Claim` of what it writes out of sight when it races
    other writers (a store with versions, no synchronizer; else None); a lost claim is raised
    as the conflict it is.  Returns the claim."""
    claim = None
    if version is not None and array._synchronizer is None:
        claim = Claim(current_documents(array._store), meta_key(array._path, meta.metadata_key), version)
    try:
        change(claim)
    except RowsClaimed as exc:
        raise VersionConflictError("another writer changed the array's shape", str(exc)) from None
    return claim


def _confirm_rows(array: Resizable, region: Any, data: Any) -> None:
    """Mend the rows an append has just shown: an appender that lost the race for these rows
    may have written its own into them, out of sight, after this one wrote them and before
    its shape lost (it then appends again, after these).  Where versions change with every
    write the rows are written again, each chunk as a new version, which also stops such a
    write still on its way (conditioned on the version before); where versions are contents
    that would not stop it (see :mod:`~zarrkit.core.claims`): the rows are read back and
    written again where they differ."""
    ctx = ChunkContext.build(array._chunk_store, array._path, array._meta)
    indexer = make_indexer(region, array._meta.shape, ctx.grid, "basic")
    if not ctx.store.versions_are_contents:
        write_selection(ctx, indexer, data, write_empty_chunks=array._write_empty_chunks, conditional=True)
        return
    got = read_selection(ctx, indexer)
    expected = np.broadcast_to(np.asarray(data, dtype=got.dtype), got.shape)
    same = got == expected
    if array._meta.dtype.kind in "fc":
        same |= np.isnan(got) & np.isnan(expected)
    if not np.all(same):
        write_selection(ctx, indexer, data, write_empty_chunks=array._write_empty_chunks)


def resize_locked(array: Resizable, current: Document, new_shape: tuple[int, ...], appended: Any = None,
                  delete: bool = True, version: Any = None, claim: Claim | None = None) -> None:
    """Write the metadata of ``new_shape`` in an order a writer killed at any point leaves
    consistent: stored objects outside the current grid (left by an interrupted resize,
    invisible until the array grows over them) deleted first, ``appended`` (``(region,
    data)``) written out of sight, the new metadata, then a shrunk grid's objects deleted.
    With ``delete`` False no stored object is deleted (zarr-python 3's
    ``delete_outside_chunks=False``).

    ``current`` is the document as stored now, read under the same lock: no stored object
    inside its shape is deleted, only those outside it or outside ``new_shape``.  With a
    ``version`` (of the document read, on a store with versions) the new metadata is written
    on the condition that the document is still that version: VersionConflictError, with
    nothing deleted inside the shape, when another writer changed it.  An append with a
    ``claim`` (racing other appends: see :mod:`~zarrkit.core.claims`) writes its rows through
    it, and leaves the objects outside the grid alone: they may be the rows another append is
    writing out of sight."""
    old, attributes = current
    new = old.evolve(shape=new_shape)
    old_grid, new_grid = old.storage_grid.grid_shape, new.storage_grid.grid_shape
    leftovers: list[str] = []
    shrunk: list[str] = []
    shrunk_at: list[tuple[int, ...]] = []  # (their grid coordinates)
    kept: list[tuple[int, ...]] | None = None  # the stored objects inside the old grid, listed
    store, sync = array._chunk_store, array._synchronizer
    # a transactional store (Icechunk) has no crash window, but refuses to write, and
    # ignores deleting, objects outside the shape its metadata has: there the shrunk grid's
    # objects go first, then the new metadata, then the appended rows
    transactional = store.transactional
    # racing other writers where a conditional delete is a version check and then a delete
    # (obstore), an append's rows landing between the two would go with it: nothing is
    # deleted then -- the objects left outside the grid are kept (what the resize grows over
    # is cleared: see clear_grown), those the shrunk shape leaves out get the fill value
    stores_fill = claim is not None and not transactional and not store.atomic_deletes
    if claim is not None and appended is not None:
        pass  # (see above: an append deletes nothing before the shape is written)
    elif delete and array._chunk_store.supports_listing:
        kept = []
        for c, key in iter_stored(array._ctx, old, within=False):
            if any(i >= m for i, m in zip(c, old_grid)):
                if stores_fill:
                    kept.append(c)
                else:
                    leftovers.append(key)
            elif any(i >= m for i, m in zip(c, new_grid)):
                shrunk.append(key)
                shrunk_at.append(c)
            else:
                kept.append(c)
    elif delete:  # a store that cannot list: every key the shrunk grid leaves out (leftovers unseen)
        prefix = array._ctx.prefix
        shrunk_at = list(chunk_coords_outside(old_grid, new_grid))
        shrunk = [prefix + old.chunk_key(c) for c in shrunk_at]
    for key in leftovers + shrunk if transactional else leftovers:
        _delete(store, key, claim)
    # what a resize grows over reads the fill value: the elements a shrink left in the objects
    # it kept (a straddling chunk, a shard's inner chunks) are cleared before it is shown
    grows = any(n > o for n, o in zip(new_shape, old.shape))
    if delete and grows and appended is None:
        clear_grown(store, array._path, old, new, sync, claim, kept)
    if transactional:
        array._write_document(new, attributes, version)
    if appended is not None:
        region, data = appended
        ctx = ChunkContext.build(store, array._path, new)
        write_selection(ctx, make_indexer(region, new.shape, ctx.grid, "basic"), data,
                        write_empty_chunks=array._write_empty_chunks, synchronizer=sync, claim=claim)
    written = None if transactional else array._write_document(new, attributes, version)
    if claim is not None and delete and appended is None and grows:
        # racing other writers: what this resize grew over is confirmed to read the fill value
        # (an append that lost the race to it may have left rows there: see clear_grown)
        clear_grown(store, array._path, old, new, sync)
    shrinks = delete and any(n < o for n, o in zip(new_shape, old.shape))
    if transactional or not (shrunk or shrinks):
        return
    # what the shrunk shape leaves out, deleted once it is shown; racing other writers, each
    # object only while the document is still the one written (an append after this one may
    # be writing its rows there: it is left to it)
    after = None if claim is None else Claim(claim.store, claim.key, written)
    try:
        if stores_fill:
            clear_stored(store, array._path, old, shrunk_at, sync, after)
        else:
            for key in shrunk:
                _delete(store, key, after)
        if shrinks:
            clear_inner_outside(store, array._path, new, sync, after)
    except RowsClaimed:
        return


def _delete(store: Store, key: str, claim: Claim | None) -> None:
    """Delete ``key``: through ``claim`` when there is one (see :meth:`Claim.delete`)."""
    if claim is None:
        store.delete(key)
    else:
        claim.delete(store, key)


def chunk_coords_outside(old_grid: Sequence[int], new_grid: Sequence[int]) -> Iterator[tuple[int, ...]]:
    """The coordinates of a grid of shape ``old_grid`` outside one of shape ``new_grid``, each
    once, made one at a time (a grid of :math:`2^{80}` cells costs nothing until walked).

    Examples
    --------
    >>> list(chunk_coords_outside((2, 2), (1, 2)))
    [(1, 0), (1, 1)]
    """
    old, new = tuple(old_grid), tuple(new_grid)
    for axis in range(len(old)):
        # the coordinates whose first dimension outside ``new_grid`` is ``axis``
        ranges = [range(min(o, n)) for o, n in zip(old[:axis], new[:axis])]
        ranges.append(range(new[axis], old[axis]))
        ranges.extend(range(o) for o in old[axis + 1:])
        yield from _product(ranges)


def _product(ranges: Sequence[range]) -> Iterator[tuple[int, ...]]:
    """``itertools.product`` of ``ranges`` without materialising them (it would)."""
    return lazy_product(ranges)


#: zarr-python 3's private name of :func:`chunk_coords_outside`
_iter_chunk_coords_to_delete = chunk_coords_outside


def check_resizable(array: Resizable) -> None:
    if array._is_view:
        raise ReadOnlyError("not permitted for views")
    array._check_writable()
