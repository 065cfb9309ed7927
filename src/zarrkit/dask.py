"""Dask integration: zarrkit arrays as dask arrays and dask arrays stored into zarrkit.

* :func:`to_dask` — a dask array whose blocks are the Zarr chunks (``da.from_array(z,
  chunks=z.chunks)`` works too: a zarrkit array is array-like, and each block is the ndarray
  zarrkit returns, with no extra copy);
* :func:`store` — ``dask.array.store`` into a zarrkit array, lock-free: blocks that do not
  cover whole chunks (whole shards of a sharded array) are first regrouped by
  :func:`align_blocks` so that every stored chunk or shard is written by exactly one task
  (needed on a store without conditional writes; faster on one with them, where
  ``da.store(x, z, lock=False)`` loses nothing either: see :func:`store`);
* :func:`from_dask` — create a zarrkit array shaped like a dask array and store it;
* :func:`from_zarr` and :func:`to_zarr` — ``dask.array.from_zarr`` and ``dask.array.to_zarr``
  with the same arguments, for zarrkit arrays and groups.  dask's own functions recognise
  zarr-python's ``zarr.Array`` only (an ``isinstance`` test) and hand anything else to
  zarr-python as a store, which refuses a zarrkit array (``Unsupported type for store_like:
  'Array'``); given a path or URL they read and write through zarr-python.

Arrays pickle (by store and path), so all of this works with ``dask.distributed`` as long as
the store is shared (a ``DirectoryStore`` on a common file system, not a ``MemoryStore``).

Importing this module also teaches dask to tokenize zarrkit arrays by store identity, path
and metadata instead of pickling them (which would copy a whole in-memory store).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from .api.creation import create_array
from .api.opening import open_array
from .core.array import Array
from .core.group import Group
from .core.info import tokenize_array
from .storage.extras import import_extra

__all__ = ["align_blocks", "aligned_chunks", "check_aligned", "from_dask", "from_zarr", "store", "to_dask",
           "to_zarr", "tokenize_array"]


def _dask_array(what: str) -> Any:
    """``dask.array``, or the error naming the extra that installs dask."""
    return import_extra("dask.array", what, "dask", "dask")


def _register_tokenizer() -> None:
    try:
        from dask.base import normalize_token
    except ImportError:  # pragma: no cover
        return
    if not hasattr(Array, "__dask_tokenize__"):
        normalize_token.register(Array)(tokenize_array)


_register_tokenizer()


def _starts(array: Array, region: tuple[slice, ...] | None) -> tuple[int, ...]:
    if region is None:
        return (0,) * array.ndim
    return tuple(r.indices(n)[0] for r, n in zip(region, array.shape))


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
    problems = []
    for dim, (sizes, d, start) in enumerate(zip(dask_chunks, dims, _starts(array, region))):
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


def _check_known(dask_chunks: tuple[tuple[float, ...], ...]) -> None:
    for dim, sizes in enumerate(dask_chunks):
        if any(math.isnan(s) for s in sizes):  # unknown block sizes
            raise ValueError(
                f"dask chunks {dask_chunks} have unknown sizes along dimension {dim}; call "
                "x.compute_chunk_sizes() first, so the blocks can be grouped by stored chunk"
            )


def aligned_chunks(
    dask_chunks: tuple[tuple[int, ...], ...],
    array: Array,
    region: tuple[slice, ...] | None = None,
) -> tuple[tuple[int, ...], ...]:
    """Dask chunks close to ``dask_chunks`` whose block boundaries all lie on the storage grid
    of ``array`` (shards of a sharded array, else chunks, rectilinear grids included).

    Each boundary between two blocks moves to the nearer end of the stored chunk it cuts (and
    disappears when two meet), so every block covers whole write units — but the partial
    units at the edges of ``region`` — and no unit is shared by two blocks.

    Examples
    --------
    >>> import zarrkit
    >>> z = zarrkit.zeros((20,), chunks=(5,))
    >>> aligned_chunks(((3, 3, 3, 3, 3, 5),), z)
    ((5, 5, 5, 5),)
    >>> aligned_chunks(((7, 6),), z, region=(slice(2, 15),))   # partial units at both ends
    ((8, 5),)
    """
    _check_known(dask_chunks)
    out = []
    for sizes, d, start in zip(dask_chunks, array.metadata.storage_grid.dims, _starts(array, region)):
        stop = start + sum(sizes)
        cuts, pos = [start], start
        for size in sizes[:-1]:
            pos += size
            if start < pos < stop and pos < d.size:
                c = d.index(pos)
                ends = [e for e in (d.start(c), d.stop(c)) if start < e < stop and e > cuts[-1]]
                if ends:
                    cuts.append(min(ends, key=lambda e: abs(e - pos)))
        cuts.append(stop)
        out.append(tuple(b - a for a, b in itertools.pairwise(cuts)) or (0,))
    return tuple(out)


def align_blocks(x: Any, array: Array, region: tuple[slice, ...] | None = None) -> Any:
    """The dask array ``x`` regrouped so that each of its blocks writes whole stored chunks
    (shards) of ``array`` at ``region``: ``x`` itself when it already does, else
    ``x.rechunk(aligned_chunks(...))`` (dask gathers the pieces of a unit into one task)."""
    chunks = aligned_chunks(x.chunks, array, region)
    return x if chunks == tuple(x.chunks) else x.rechunk(chunks)


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
    da = _dask_array("zarrkit.dask.to_dask")
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

    The blocks are written in parallel without any lock, each stored chunk (each shard of a
    sharded array) by exactly one task: dask blocks that do not cover whole chunks are first
    regrouped along the array's grid (:func:`align_blocks`), and a partial chunk at an edge
    of ``region`` is read, completed and rewritten by the one task that owns it.  This holds
    on every dask scheduler, ``dask.distributed`` clusters of processes included (the store
    must then be shared by the workers, e.g. a directory on a common file system).

    On a store with conditional writes (``supports_conditional_writes``: the memory and
    directory stores and S3 through obstore or s3fs among others) a partial chunk is merged
    into the chunk as stored, on the condition that it is still that version, so writers that
    share chunks lose nothing either: blocks as they are (``dask.array.store(x, arr,
    lock=False)``), and separate jobs writing neighbouring regions.  The regrouping is kept
    there because it is faster.
    Blocks of unknown size (``nan`` chunks) raise :class:`ValueError`.
    ``lock`` is passed to :func:`dask.array.store` (default: no lock); other keyword
    arguments too (``return_stored``, ...).

    Examples
    --------
    >>> import dask.array as da, zarrkit, zarrkit.dask
    >>> z = zarrkit.zeros((4, 4), chunks=(2, 2))
    >>> zarrkit.dask.store(da.ones((4, 4), chunks=2), z)
    >>> float(z[:].sum())
    16.0
    >>> zarrkit.dask.store(da.full((3, 4), 2.0, chunks=1), z, region=(slice(1, 4),))  # unaligned
    >>> z[:, 0]
    array([1., 2., 2., 2.])
    """
    da = _dask_array("zarrkit.dask.store")

    x = da.asarray(x)
    _check_known(x.chunks)
    if region is None:
        if tuple(x.shape) != tuple(arr.shape):
            raise ValueError(f"cannot store a dask array of shape {x.shape} into a zarrkit array of shape {arr.shape}")
    else:
        region = tuple(region) + (slice(None),) * (arr.ndim - len(region))
        want = tuple(len(range(*r.indices(n))) for r, n in zip(region, arr.shape))
        if tuple(x.shape) != want:
            raise ValueError(f"region {region} has shape {want}, the dask array {x.shape}")
    # Why regroup on every store.  Without conditional writes it is what keeps the write
    # correct: two tasks writing parts of one chunk (shard) each read, merge and write it
    # plainly, and one loses the other's part.  With them (the store's versions) the blocks
    # as they are lose nothing, and the regrouping stays for speed: every chunk (shard) is
    # then stored once, whole, with no read of what is stored and no conflict to retry,
    # where blocks cutting the grid cost a versioned read and a conditional write per chunk
    # they share, and a retry each time two tasks meet on one.  Measured with
    # benchmarks/distributed_lost_values.py (2 worker processes of 2 threads, 700 x 700
    # float64, 70-row blocks, median of 3; seconds regrouped / as they are, both losing
    # nothing): S3 through obstore 0.41 / 0.79 over (100, 700) chunks and 0.50 / 0.93 over
    # (200, 700) shards, through s3fs 0.69 / 1.07 and 0.65 / 0.91 (whole jobs); a directory,
    # the store alone timed, median of 7: 0.22 / 0.27 and 0.12 / 0.16 (2800 x 1000 with
    # 280-row blocks: 0.47 / 0.55 and 0.36 / 0.64).  Never slower, so kept on every store.
    return da.store(
        align_blocks(x, arr, region),
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
    ``zarr_format``, ``overwrite``, ...).  Blocks that do not fit the chunks (or shards) are
    regrouped as in :func:`store`.

    Examples
    --------
    >>> import dask.array as da, zarrkit.dask
    >>> z = zarrkit.dask.from_dask(da.arange(10, chunks=5), {})
    >>> z.chunks, int(z[:].sum())
    ((5,), 45)
    """
    da = _dask_array("zarrkit.dask.from_dask")

    x = da.asarray(x)
    chunks = create_kwargs.pop("chunks", None)
    if chunks is None:
        chunks = tuple(max(c[0], 1) if c else 1 for c in x.chunks)
    if "name" in create_kwargs and path is None:
        path = create_kwargs.pop("name")
    create_kwargs.setdefault("dtype", x.dtype)
    arr = create_array({} if store is None else store, name=path, shape=x.shape, chunks=chunks, **create_kwargs)
    _store(x, arr)
    return arr


def _member_array(group: Group, component: str | None) -> Array:
    if component is None:
        raise ValueError(f"{group!r} is a group: name the array in it with component=")
    node = group[component]
    if not isinstance(node, Array):
        raise TypeError(f"{component!r} in {group!r} is a group, not an array")
    return node


def from_zarr(
    url: Any,
    component: str | None = None,
    storage_options: dict[str, Any] | None = None,
    chunks: Any = None,
    name: str | None = None,
    inline_array: bool = False,
    **kwargs: Any,
):
    """``dask.array.from_zarr`` for zarrkit: a dask array reading a zarrkit array.

    ``url`` is a zarrkit :class:`~zarrkit.Array`, a :class:`~zarrkit.Group` with the array's
    path in it as ``component``, or anything :func:`zarrkit.open_array` opens (a path, a URL
    with ``storage_options``, a store; opened read-only unless ``mode=`` says otherwise).
    ``chunks`` defaults to the Zarr chunks; ``name`` and ``inline_array`` go to
    :func:`dask.array.from_array`, other keyword arguments to :func:`zarrkit.open_array`.

    Examples
    --------
    >>> import zarrkit, zarrkit.dask
    >>> g = zarrkit.group()
    >>> _ = g.ones("t", shape=(6,), chunks=(2,))
    >>> x = zarrkit.dask.from_zarr(g, component="t")
    >>> x.chunks, float(x.sum().compute())
    (((2, 2, 2),), 6.0)
    """
    _dask_array("zarrkit.dask.from_zarr")  # before anything is opened
    if isinstance(url, Array):
        if component is not None:
            raise ValueError(f"component={component!r} names an array in a group; {url!r} is an array")
        arr = url
    elif isinstance(url, Group):
        arr = _member_array(url, component)
    else:
        kwargs.setdefault("mode", "r")
        arr = open_array(url, path=component, storage_options=storage_options, **kwargs)
    return to_dask(arr, chunks=chunks, name=name, inline_array=inline_array)


def to_zarr(
    arr: Any,
    url: Any,
    component: str | None = None,
    storage_options: dict[str, Any] | None = None,
    region: tuple[slice, ...] | None = None,
    compute: bool = True,
    return_stored: bool = False,
    mode: str = "a",
    **create_kwargs: Any,
):
    """``dask.array.to_zarr`` for zarrkit: store the dask array ``arr`` as a zarrkit array.

    ``url`` is an existing zarrkit :class:`~zarrkit.Array` (written in ``region`` if given, as
    :func:`store` writes), a :class:`~zarrkit.Group` in which a new array ``component`` is
    created, or a path, URL (with ``storage_options``) or store in which one is created (at
    ``component`` if given).  A new array takes the shape and dtype of ``arr`` and, unless
    ``chunks=`` says otherwise, its first block along each dimension as chunk shape; other
    keyword arguments go to :func:`zarrkit.create_array` (``compressors``, ``shards``,
    ``zarr_format``...).  ``mode="w"`` replaces an array already there; the other modes
    refuse to.  ``compute`` and ``return_stored`` are those of
    :func:`dask.array.store`; blocks that cut chunks are regrouped (as :func:`store` does), so
    no lock is needed.

    Examples
    --------
    >>> import dask.array as da, zarrkit, zarrkit.dask
    >>> z = zarrkit.zeros((6,), chunks=(2,))
    >>> zarrkit.dask.to_zarr(da.arange(6, chunks=3), z)
    >>> z[:]
    array([0., 1., 2., 3., 4., 5.])
    """
    da = _dask_array("zarrkit.dask.to_zarr")

    arr = da.asarray(arr)
    if isinstance(url, Array):
        if component is not None:
            raise ValueError(f"component={component!r} names an array in a group; {url!r} is an array")
        target = url
    else:
        if region is not None:
            raise ValueError("region= writes into an existing array: pass that zarrkit Array as url")
        if mode == "r":
            raise ValueError("mode='r' is read-only: to_zarr writes")
        _check_known(arr.chunks)
        create_kwargs.setdefault("shape", arr.shape)
        create_kwargs.setdefault("chunks", tuple(max(c[0], 1) if c else 1 for c in arr.chunks))
        create_kwargs.setdefault("dtype", arr.dtype)
        create_kwargs.setdefault("overwrite", mode == "w")
        if isinstance(url, Group):
            if component is None:
                raise ValueError(f"{url!r} is a group: name the new array in it with component=")
            target = url.create_array(component, **create_kwargs)
        else:
            target = create_array(url, name=component, storage_options=storage_options, **create_kwargs)
    return store(arr, target, region=region, compute=compute, return_stored=return_stored)
