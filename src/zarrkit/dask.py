"""Dask integration: zarrkit arrays as dask arrays and dask arrays stored into zarrkit.

* :func:`to_dask` — a dask array whose blocks are the Zarr chunks (``da.from_array(z,
  chunks=z.chunks)`` works too: a zarrkit array is array-like, and each block is the ndarray
  zarrkit returns, with no extra copy);
* :func:`store` — ``dask.array.store`` into a zarrkit array, lock-free when every dask block
  covers whole chunks (whole shards of a sharded array), refused otherwise unless the array
  has a synchronizer;
* :func:`from_dask` — create a zarrkit array shaped like a dask array and store it.

Arrays pickle (by store and path), so all of this works with ``dask.distributed`` as long as
the store is shared (a ``DirectoryStore`` on a common file system, not a ``MemoryStore``).

Importing this module also teaches dask to tokenize zarrkit arrays by store identity, path
and metadata instead of pickling them (which would copy a whole in-memory store).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .core.array import Array
from .core.creation import create_array
from .core.info import tokenize_array

__all__ = ["check_aligned", "from_dask", "store", "to_dask", "tokenize_array"]


def _register_tokenizer() -> None:
    try:
        from dask.base import normalize_token
    except ImportError:  # pragma: no cover
        return
    if not hasattr(Array, "__dask_tokenize__"):
        normalize_token.register(Array)(tokenize_array)


_register_tokenizer()


def _grid(array: Array) -> tuple[Any, ...]:
    """The unit of storage: shards of a sharded array, else chunks (per dimension, the edge
    lengths on a rectilinear grid)."""
    return tuple(array.shards) if array.shards else tuple(array.chunks)


def check_aligned(
    dask_chunks: tuple[tuple[int, ...], ...],
    array: Array,
    region: tuple[slice, ...] | None = None,
) -> list[str]:
    """Where dask blocks would share a stored chunk (or shard) of ``array``.

    Returns human-readable problems (empty when every boundary between two dask blocks lies on
    the storage grid, so concurrent block writes never touch the same stored object).
    """
    dims = array.metadata.storage_grid.dims  # the unit of storage: shards, else chunks
    shape = array.shape
    if region is None:
        starts = (0,) * len(shape)
    else:
        starts = tuple(r.indices(n)[0] for r, n in zip(region, shape))
    problems = []
    for dim, (sizes, d, start) in enumerate(zip(dask_chunks, dims, starts)):
        pos = start
        for size in sizes[:-1]:
            pos += size
            c = d.index(pos) if pos < d.size else None
            if c is not None and d.start(c) != pos:
                problems.append(
                    f"dimension {dim}: a dask block boundary at {pos} is inside stored chunk "
                    f"{c} (chunk size {d.length(c)})"
                )
                break
    return problems


def to_dask(arr: Array, chunks: Any = None, name: str | None = None, **kwargs: Any):
    """A dask array reading ``arr``; by default one block per Zarr chunk.

    ``chunks`` may be any dask chunk specification; multiples of the Zarr chunks read each
    chunk once.  Extra keyword arguments go to :func:`dask.array.from_array`.

    Examples
    --------
    >>> import zarrkit, zarrkit.dask
    >>> z = zarrkit.ones((4, 4), chunks=(2, 2))
    >>> x = zarrkit.dask.to_dask(z)
    >>> x.chunks
    ((2, 2), (2, 2))
    >>> float(x.sum().compute())
    16.0
    """
    import dask.array as da
    from dask.base import tokenize

    if chunks is None:
        chunks = tuple(arr.chunks)
    if name is None:
        name = "zarrkit-" + tokenize(tokenize_array(arr), chunks)
    kwargs.setdefault("lock", False)
    kwargs.setdefault("asarray", False)  # zarrkit returns ndarrays: no conversion, no copy
    kwargs.setdefault("fancy", False)
    kwargs.setdefault("meta", np.empty((0,) * arr.ndim, dtype=arr.dtype))
    return da.from_array(arr, chunks=chunks, name=name, **kwargs)


def store(
    x: Any,
    arr: Array,
    lock: Any = None,
    region: tuple[slice, ...] | None = None,
    compute: bool = True,
    **kwargs: Any,
):
    """Store the dask array ``x`` into the zarrkit array ``arr`` (in ``region`` if given).

    When every boundary between dask blocks lies on a chunk boundary (a shard boundary for a
    sharded array), the blocks are written in parallel without any lock.  Otherwise two blocks
    would read-modify-write the same stored object concurrently, so this raises
    :class:`ValueError` — unless ``arr`` has a synchronizer (``ThreadSynchronizer`` for
    threads, ``ProcessSynchronizer`` for processes), which serializes those writes per chunk.
    ``lock`` is passed to :func:`dask.array.store` (default: no lock).

    Examples
    --------
    >>> import dask.array as da, zarrkit, zarrkit.dask
    >>> z = zarrkit.zeros((4, 4), chunks=(2, 2))
    >>> zarrkit.dask.store(da.ones((4, 4), chunks=2), z)
    >>> float(z[:].sum())
    16.0
    """
    import dask.array as da

    x = da.asarray(x)
    if region is None:
        if tuple(x.shape) != tuple(arr.shape):
            raise ValueError(f"cannot store a dask array of shape {x.shape} into a zarrkit array of shape {arr.shape}")
    else:
        region = tuple(region) + (slice(None),) * (arr.ndim - len(region))
        want = tuple(len(range(*r.indices(n))) for r, n in zip(region, arr.shape))
        if tuple(x.shape) != want:
            raise ValueError(f"region {region} has shape {want}, the dask array {x.shape}")
    problems = check_aligned(x.chunks, arr, region)
    if problems and arr.synchronizer is None:
        unit = "shards" if arr.shards else "chunks"
        raise ValueError(
            f"dask chunks {x.chunks} are not aligned with the zarrkit array's {unit} "
            f"{_grid(arr)}: {'; '.join(problems)}.  Concurrent writes to a shared chunk would "
            f"lose data.  Rechunk the dask array (x.rechunk({_grid(arr)})) or give the array a "
            "synchronizer (zarrkit.ThreadSynchronizer / zarrkit.ProcessSynchronizer)."
        )
    return da.store(
        x,
        arr,
        lock=False if lock is None else lock,
        regions=region,
        compute=compute,
        **kwargs,
    )


_store = store


def from_dask(x: Any, store: Any = None, path: str | None = None, **create_kwargs: Any) -> Array:
    """Create a zarrkit array in ``store`` at ``path`` shaped like the dask array ``x`` and
    store ``x`` into it.

    Without ``chunks=`` the Zarr chunks are the dask blocks (the first block along each
    dimension; irregular dask chunks are rechunked to that).  Other keyword arguments go to
    :func:`zarrkit.create_array` (``dtype``, ``compressors``, ``fill_value``, ``shards``,
    ``zarr_format``, ``overwrite``, ...).

    Examples
    --------
    >>> import dask.array as da, zarrkit.dask
    >>> z = zarrkit.dask.from_dask(da.arange(10, chunks=5), {})
    >>> z.chunks, int(z[:].sum())
    ((5,), 45)
    """
    import dask.array as da

    x = da.asarray(x)
    chunks = create_kwargs.pop("chunks", None)
    if chunks is None:
        chunks = tuple(max(c[0], 1) if c else 1 for c in x.chunks)
    if "name" in create_kwargs and path is None:
        path = create_kwargs.pop("name")
    create_kwargs.setdefault("dtype", x.dtype)
    arr = create_array({} if store is None else store, name=path, shape=x.shape, chunks=chunks, **create_kwargs)
    grid = _grid(arr)
    if check_aligned(x.chunks, arr):
        x = x.rechunk(grid)
    _store(x, arr)
    return arr
