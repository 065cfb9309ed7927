"""Creating arrays like another one: ``empty_like``, ``zeros_like``, ``ones_like`` and
``full_like`` (zarr-python 2's functions) take the shape, chunks, data type and codecs of their
source array, a zarrkit or NumPy array, unless given.  A zarrkit source's Zarr format is kept
too unless ``zarr_format`` is given (its compressor and filters then only when the formats
match), as zarr-python 3 does."""

from __future__ import annotations

from typing import Any

from ..core.array import Array
from ..core.creation_like import AS_SOURCE, EMPTY_FILL, given_args, like_args
from ..storage.base import StoreLike
from .creation import create_classic

__all__ = ["empty_like", "zeros_like", "ones_like", "full_like"]


def empty_like(
    a: Any, *, shape: Any = AS_SOURCE, chunks: Any = AS_SOURCE, dtype: Any = AS_SOURCE, compressor: Any = AS_SOURCE,
    order: Any = AS_SOURCE, store: StoreLike = None, synchronizer: Any = None, overwrite: bool = False,
    path: str | None = None, chunk_store: StoreLike = None, filters: Any = AS_SOURCE, cache_metadata: bool = True,
    cache_attrs: bool = True, read_only: bool = False, object_codec: Any = AS_SOURCE,
    dimension_separator: str | None = None, write_empty_chunks: bool | None = None,
    zarr_format: int | None = None, storage_options: dict[str, Any] | None = None,
    attributes: dict[str, Any] | None = None, mode: str | None = None, shards: Any = None,
    dimension_names: Any = None, codecs: Any = None, chunk_key_encoding: Any = None, serializer: Any = None,
    compressors: Any = "auto", **kwargs: Any,
) -> Array:
    """Create an empty array like ``a``: its shape, chunks, dtype, compressor, order, filters
    and object codec, and the fill value of a v3 array (as zarr-python 3; a v2 array's copy has
    none, as in zarr-python 2), unless given.

    Parameters
    ----------
    a : array-like
        The array to take after (a zarrkit or NumPy array, or any object with a ``shape``).
    shape, chunks, dtype, compressor, order, filters, object_codec : optional
        As in :func:`create`; not given (``AS_SOURCE``): ``a``'s.
    store, synchronizer, path, chunk_store, dimension_separator, write_empty_chunks, zarr_format, storage_options, attributes, mode, shards, dimension_names, codecs, chunk_key_encoding, serializer : optional
        As in :func:`create`.
    overwrite, read_only : bool, optional
        As in :func:`create`.
    cache_metadata, cache_attrs : bool, optional
        As in :func:`create`.
    compressors : codec or list of codecs, optional
        The codecs that compress each chunk (the spelling to use; ``compressor`` is
        zarr-python 2's), as in :func:`create`.
    **kwargs
        zarr-python 2's and h5py's keywords, forwarded to :func:`empty`.

    Returns
    -------
    Array
        The new array.

    Raises
    ------
    TypeError
        ``a`` has no shape and none is given.

    Examples
    --------
    >>> import numpy as np, zarrkit
    >>> z = zarrkit.empty_like(np.zeros((3, 4), dtype='i2'), chunks=2)
    >>> z.shape, z.chunks, z.dtype
    ((3, 4), (2, 2), dtype('int16'))
    """
    kwargs = given_args(locals())
    return create_classic(like_args("empty_like", kwargs.pop("a"), kwargs, fill_value=EMPTY_FILL, keep_format=True))


def zeros_like(
    a: Any, *, shape: Any = AS_SOURCE, chunks: Any = AS_SOURCE, dtype: Any = AS_SOURCE, compressor: Any = AS_SOURCE,
    order: Any = AS_SOURCE, store: StoreLike = None, synchronizer: Any = None, overwrite: bool = False,
    path: str | None = None, chunk_store: StoreLike = None, filters: Any = AS_SOURCE, cache_metadata: bool = True,
    cache_attrs: bool = True, read_only: bool = False, object_codec: Any = AS_SOURCE,
    dimension_separator: str | None = None, write_empty_chunks: bool | None = None,
    zarr_format: int | None = None, storage_options: dict[str, Any] | None = None,
    attributes: dict[str, Any] | None = None, mode: str | None = None, shards: Any = None,
    dimension_names: Any = None, codecs: Any = None, chunk_key_encoding: Any = None, serializer: Any = None,
    compressors: Any = "auto", **kwargs: Any,
) -> Array:
    """Create an array of zeros like ``a``: its shape, chunks, dtype, compressor, order,
    filters and object codec, unless given.

    Parameters
    ----------
    a : array-like
        The array to take after (a zarrkit or NumPy array, or any object with a ``shape``).
    shape, chunks, dtype, compressor, order, filters, object_codec : optional
        As in :func:`create`; not given (``AS_SOURCE``): ``a``'s.
    store, synchronizer, path, chunk_store, dimension_separator, write_empty_chunks, zarr_format, storage_options, attributes, mode, shards, dimension_names, codecs, chunk_key_encoding, serializer : optional
        As in :func:`create`.
    overwrite, read_only : bool, optional
        As in :func:`create`.
    cache_metadata, cache_attrs : bool, optional
        As in :func:`create`.
    compressors : codec or list of codecs, optional
        The codecs that compress each chunk (the spelling to use; ``compressor`` is
        zarr-python 2's), as in :func:`create`.
    **kwargs
        zarr-python 2's and h5py's keywords, forwarded to :func:`zeros`.

    Returns
    -------
    Array
        The new array.

    Raises
    ------
    TypeError
        ``a`` has no shape and none is given.

    Examples
    --------
    >>> import zarrkit
    >>> a = zarrkit.full((6,), fill_value=7, chunks=3, dtype='u1')
    >>> z = zarrkit.zeros_like(a)
    >>> z.chunks, z.dtype, z[:].tolist()
    ((3,), dtype('uint8'), [0, 0, 0, 0, 0, 0])
    """
    kwargs = given_args(locals())
    return create_classic(like_args("zeros_like", kwargs.pop("a"), kwargs, fill_value=0, keep_format=True))


def ones_like(
    a: Any, *, shape: Any = AS_SOURCE, chunks: Any = AS_SOURCE, dtype: Any = AS_SOURCE, compressor: Any = AS_SOURCE,
    order: Any = AS_SOURCE, store: StoreLike = None, synchronizer: Any = None, overwrite: bool = False,
    path: str | None = None, chunk_store: StoreLike = None, filters: Any = AS_SOURCE, cache_metadata: bool = True,
    cache_attrs: bool = True, read_only: bool = False, object_codec: Any = AS_SOURCE,
    dimension_separator: str | None = None, write_empty_chunks: bool | None = None,
    zarr_format: int | None = None, storage_options: dict[str, Any] | None = None,
    attributes: dict[str, Any] | None = None, mode: str | None = None, shards: Any = None,
    dimension_names: Any = None, codecs: Any = None, chunk_key_encoding: Any = None, serializer: Any = None,
    compressors: Any = "auto", **kwargs: Any,
) -> Array:
    """Create an array of ones like ``a``: its shape, chunks, dtype, compressor, order,
    filters and object codec, unless given.

    Parameters
    ----------
    a : array-like
        The array to take after (a zarrkit or NumPy array, or any object with a ``shape``).
    shape, chunks, dtype, compressor, order, filters, object_codec : optional
        As in :func:`create`; not given (``AS_SOURCE``): ``a``'s.
    store, synchronizer, path, chunk_store, dimension_separator, write_empty_chunks, zarr_format, storage_options, attributes, mode, shards, dimension_names, codecs, chunk_key_encoding, serializer : optional
        As in :func:`create`.
    overwrite, read_only : bool, optional
        As in :func:`create`.
    cache_metadata, cache_attrs : bool, optional
        As in :func:`create`.
    compressors : codec or list of codecs, optional
        The codecs that compress each chunk (the spelling to use; ``compressor`` is
        zarr-python 2's), as in :func:`create`.
    **kwargs
        zarr-python 2's and h5py's keywords, forwarded to :func:`ones`.

    Returns
    -------
    Array
        The new array.

    Raises
    ------
    TypeError
        ``a`` has no shape and none is given.

    Examples
    --------
    >>> import numpy as np, zarrkit
    >>> zarrkit.ones_like(np.zeros((2, 2), dtype='i4'))[:]
    array([[1, 1],
           [1, 1]], dtype=int32)
    """
    kwargs = given_args(locals())
    return create_classic(like_args("ones_like", kwargs.pop("a"), kwargs, fill_value=1, keep_format=True))


def full_like(
    a: Any, *, fill_value: Any = AS_SOURCE, shape: Any = AS_SOURCE, chunks: Any = AS_SOURCE, dtype: Any = AS_SOURCE,
    compressor: Any = AS_SOURCE, order: Any = AS_SOURCE, store: StoreLike = None, synchronizer: Any = None,
    overwrite: bool = False, path: str | None = None, chunk_store: StoreLike = None, filters: Any = AS_SOURCE,
    cache_metadata: bool = True, cache_attrs: bool = True, read_only: bool = False, object_codec: Any = AS_SOURCE,
    dimension_separator: str | None = None, write_empty_chunks: bool | None = None,
    zarr_format: int | None = None, storage_options: dict[str, Any] | None = None,
    attributes: dict[str, Any] | None = None, mode: str | None = None, shards: Any = None,
    dimension_names: Any = None, codecs: Any = None, chunk_key_encoding: Any = None, serializer: Any = None,
    compressors: Any = "auto", **kwargs: Any,
) -> Array:
    """Create a filled array like ``a``: its shape, chunks, dtype, compressor, order, filters,
    object codec and fill value, unless given.

    Parameters
    ----------
    a : array-like
        The array to take after (a zarrkit or NumPy array, or any object with a ``shape``).
    fill_value : object, optional
        The value of every element (not given: ``a``'s fill value).
    shape, chunks, dtype, compressor, order, filters, object_codec : optional
        As in :func:`create`; not given (``AS_SOURCE``): ``a``'s.
    store, synchronizer, path, chunk_store, dimension_separator, write_empty_chunks, zarr_format, storage_options, attributes, mode, shards, dimension_names, codecs, chunk_key_encoding, serializer : optional
        As in :func:`create`.
    overwrite, read_only : bool, optional
        As in :func:`create`.
    cache_metadata, cache_attrs : bool, optional
        As in :func:`create`.
    compressors : codec or list of codecs, optional
        The codecs that compress each chunk (the spelling to use; ``compressor`` is
        zarr-python 2's), as in :func:`create`.
    **kwargs
        zarr-python 2's and h5py's keywords, forwarded to :func:`full`.

    Returns
    -------
    Array
        The new array.

    Raises
    ------
    TypeError
        No ``fill_value`` given and none on ``a``; or ``a`` has no shape and none is given.

    Examples
    --------
    >>> import zarrkit
    >>> a = zarrkit.full((4,), fill_value=5, chunks=2, dtype='i4')
    >>> zarrkit.full_like(a)[:].tolist(), zarrkit.full_like(a, fill_value=9)[:].tolist()
    ([5, 5, 5, 5], [9, 9, 9, 9])
    """
    kwargs = given_args(locals())
    return create_classic(like_args("full_like", kwargs.pop("a"), kwargs, keep_format=True))
