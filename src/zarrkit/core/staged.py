"""Values written where a later shape will show them: rows beyond an array's shape, out of
sight until the shape grows over them (what :meth:`~zarrkit.core.array.Array.append` does
for one array, split so that several arrays' rows are all written before any shape changes:
an xarray append to a dataset)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ShapeMismatchError
from ..metadata.normalize import normalize_shape
from .chunks import ChunkContext
from .indexing import make_indexer
from .write import write_selection

__all__ = ["OutOfSight", "write_out_of_sight"]


def write_out_of_sight(array: Any, new_shape: tuple[int, ...], region: tuple[slice, ...], value: Any) -> None:
    """Write ``value`` into ``region`` of ``array`` as if its shape were ``new_shape``
    (which must hold the current shape), leaving its metadata alone: readers see nothing of
    it until the array is resized to ``new_shape`` (with ``delete_outside_chunks=False``: a
    resize that deletes removes what lies outside the shape it starts from)."""
    array._check_writable()
    # (refused beyond the lengths the metadata parser reads: the shape could never be shown)
    new_shape = normalize_shape(new_shape, "new_shape")
    array._refresh_metadata()
    meta = array._meta
    if len(new_shape) != len(meta.shape) or any(n < s for n, s in zip(new_shape, meta.shape)):
        raise ShapeMismatchError(
            f"array {array._path!r}: expected a shape holding its shape {meta.shape}, got {new_shape}"
        )
    grown = meta.evolve(shape=tuple(new_shape))
    ctx = ChunkContext.build(array._chunk_store, array._path, grown)
    write_selection(ctx, make_indexer(region, grown.shape, ctx.grid, "basic"), value,
                    write_empty_chunks=array._write_empty_chunks, synchronizer=array._synchronizer)


class OutOfSight:
    """A target of :func:`dask.array.store` writing into an array out of sight (see
    :func:`write_out_of_sight`) as if its shape were ``shape``."""

    def __init__(self, array: Any, shape: tuple[int, ...]):
        self.array = array
        self.shape: tuple[int, ...] = tuple(shape)
        self.dtype: np.dtype[Any] = array.dtype
        self.ndim: int = len(self.shape)

    def __setitem__(self, region: Any, value: Any) -> None:
        region = region if isinstance(region, tuple) else (region,)
        write_out_of_sight(self.array, self.shape, region, value)
