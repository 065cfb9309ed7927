"""Creating arrays: the creation functions of the classic Zarr API (``create``, ``zeros``,
``array``, the ``*_like`` functions...) and zarr-python 3's ``create_array``.

They normalise arguments, write metadata through ``metadata/`` (see :mod:`.initialize`) and hand
back an :class:`~zarrkit.core.array.Array`.  Every argument is validated before anything is
deleted or written, so a bad call leaves the store as it was.  Groups create their members with
them; :mod:`zarrkit.api` exports them.
"""

from __future__ import annotations

import os
from typing import Any

import numcodecs
import numpy as np

from ..codecs.v3_builtin import ZstdCodec
from ..config import config
from ..config import config as _settings  # the name create_array's config= argument shadows
from ..metadata.build import chunk_key_encoding_arg, dtype_arg
from ..metadata.codec_args import to_v2_codec
from ..metadata.normalize import ZARR3_CHUNK_BASE, guess_chunks, normalize_shape
from ..storage.coerce import coerce_store
from .array import Array
from .initialize import (
    _check_zarr_format,
    _pop_h5py_fillvalue,
    _pop_h5py_kwargs,
    _pop_v3_options,
    _reject_unknown,
    check_codec_arguments,
    init_array,
    legacy_format,
)


class _AsSource:
    """The type of :data:`AS_SOURCE`."""

    def __repr__(self) -> str:
        return "AS_SOURCE"


#: the default of a ``*_like`` function's parameters (and :func:`zarrkit.open_like`'s): not
#: given, so the value of the source array is taken
AS_SOURCE: Any = _AsSource()

__all__ = [
    "create",
    "empty",
    "zeros",
    "ones",
    "full",
    "array",
    "create_array",
]


def create(
    shape: Any,
    chunks: Any = True,
    dtype: Any = None,
    compressor: Any = "default",
    fill_value: Any = 0,
    order: str = "C",
    store: Any = None,
    synchronizer: Any = None,
    overwrite: bool = False,
    path: str | None = None,
    chunk_store: Any = None,
    filters: Any = None,
    cache_metadata: bool = True,
    cache_attrs: bool = True,
    read_only: bool = False,
    object_codec: Any = None,
    dimension_separator: str | None = None,
    write_empty_chunks: bool | None = None,
    zarr_format: int | None = None,
    storage_options: dict[str, Any] | None = None,
    *,
    attributes: dict[str, Any] | None = None,
    mode: str | None = None,
    shards: Any = None,
    dimension_names: Any = None,
    codecs: Any = None,
    chunk_key_encoding: Any = None,
    serializer: Any = None,
    compressors: Any = "auto",
    **kwargs: Any,
) -> Array:
    """Create an array.

    Parameters
    ----------
    shape : int or tuple of ints
        Array shape.
    chunks : int or tuple of ints, optional
        Chunk shape; guessed from shape and dtype if not given. ``None`` or ``-1`` in a tuple
        means the whole dimension.
    dtype : str or dtype, optional
        NumPy dtype (default float64); ``str``/``bytes`` make variable-length string arrays.
    compressor : Codec, optional
        Primary compressor (default ``Blosc(cname='lz4', clevel=5, shuffle=1)``; None for none).
    fill_value : object
        Value of uninitialized portions of the array.
    order : {'C', 'F'}, optional
        Memory layout within each chunk.
    store : MutableMapping or str
        Store or path to a directory (default: a new in-memory dict).
    synchronizer : object, optional
        Array synchronizer.
    overwrite : bool, optional
        If True, delete everything at ``path`` first.
    path : str, optional
        Path of the array within the store.
    chunk_store : MutableMapping, optional
        Separate storage for chunks.
    filters : sequence of Codecs, optional
        Filters applied to chunk data before compression.
    cache_metadata, cache_attrs : bool, optional
        Cache metadata / attributes in the returned object.
    read_only : bool, optional
        If True, the returned array refuses writes.
    object_codec : Codec, optional
        Codec for object arrays (e.g. ``numcodecs.VLenUTF8()``).
    dimension_separator : {'.', '/'}, optional
        Separator in chunk keys (default '.', or the store's, e.g. '/' for NestedDirectoryStore).
    write_empty_chunks : bool, optional
        If False, chunks that are all fill value are not stored.
    zarr_format : int, optional
        Zarr format of the new array (default: ``zarrkit.config.zarr_format``, 3).
    storage_options : dict, optional
        Options of the remote file system when ``store`` is a URL (``s3://...``).
    attributes : dict, optional
        Attributes of the new array.
    mode : {'w', 'w-', 'x', 'a'}, optional
        zarr-python 3's spelling: ``'w'`` is ``overwrite=True``.
    shards : tuple of ints, optional
        Shard shape (v3 only): chunks stored ``shards/chunks`` at a time in one object.
    dimension_names : sequence of str, optional
        Names of the dimensions (v3 only).
    codecs : list, optional
        The whole v3 codec chain, as in ``zarr.json`` (v3 only).
    chunk_key_encoding : dict or str, optional
        The v3 chunk key encoding (``{'name': 'v2', 'separator': '.'}``, ...).
    serializer : codec, optional
        The v3 array-to-bytes codec (default: ``bytes``, or ``vlen-utf8`` for strings).
    compressors : codec or list of codecs, optional
        The v3 bytes-to-bytes codecs, instead of ``compressor`` (None: no compression;
        ``'auto'``, the default: as ``compressor`` says).
    **kwargs
        zarr-python 2's and h5py's keywords, forwarded to the same translation as
        :func:`zarrkit.storage.init_array`: ``zarr_version`` (``zarr_format``), ``compression``
        and ``compression_opts`` (``compressor``), ``fillvalue`` (``fill_value``),
        ``storage_transformers`` (must be empty), ``meta_array`` and ``partial_decompress``
        (ignored); h5py options with no Zarr meaning (``shuffle``, ``fletcher32``,
        ``maxshape``...) are ignored with a warning. Any other keyword is a ``TypeError``.

    Returns
    -------
    Array
        The new array.

    Raises
    ------
    ContainsArrayError, ContainsGroupError
        A node is already at ``path`` and ``overwrite`` is False.
    TypeError
        An unknown keyword argument.
    ValueError
        An invalid shape, chunk shape, data type, fill value or codec.

    Examples
    --------
    >>> import zarrkit
    >>> z = zarrkit.create((10000, 10000), chunks=(1000, 1000))
    >>> z.shape, z.chunks, z.dtype
    ((10000, 10000), (1000, 1000), dtype('float64'))
    """
    zarr_format = _check_zarr_format(legacy_format(kwargs, zarr_format, "create"))
    compressor = _pop_h5py_kwargs(compressor, kwargs)
    check_codec_arguments(
        compressor=compressor, filters=filters, object_codec=object_codec, serializer=serializer, codecs=codecs,
        **({} if isinstance(compressors, str) and compressors == "auto" else {"compressors": compressors}),
    )
    fill_value = _pop_h5py_fillvalue(fill_value, kwargs, 0)
    # zarr-python 3's creation functions take a mode
    if mode not in (None, "w", "w-", "x", "a"):
        raise ValueError(f"mode must be 'w', 'w-', 'x' or 'a' to create an array, got {mode!r}")
    overwrite = overwrite or mode == "w"
    v3_options = _pop_v3_options({
        "shards": shards, "dimension_names": dimension_names, "codecs": codecs,
        "chunk_key_encoding": chunk_key_encoding, "serializer": serializer,
        **({} if isinstance(compressors, str) and compressors == "auto" else {"compressors": compressors}),
    })
    _reject_unknown(kwargs, "create")
    if store is None:
        store = {}
    store = _open_store(store, storage_options, read_only=False)
    init_array(
        store,
        shape=shape,
        chunks=chunks,
        dtype=dtype,
        compressor=compressor,
        fill_value=fill_value,
        order=order,
        overwrite=overwrite,
        path=path,
        chunk_store=chunk_store,
        filters=filters,
        object_codec=object_codec,
        dimension_separator=dimension_separator,
        zarr_format=zarr_format,
        attributes=attributes,
        v3_options=v3_options,
    )
    return Array(
        store,
        path=path,
        read_only=read_only,
        chunk_store=chunk_store,
        synchronizer=synchronizer,
        cache_metadata=cache_metadata,
        cache_attrs=cache_attrs,
        write_empty_chunks=config.write_empty_chunks if write_empty_chunks is None else write_empty_chunks,
    )


def _given(args: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments of a forwarding call, from the caller's ``locals()``: the
    parameters given (not :data:`AS_SOURCE`), with its ``**kwargs`` merged in."""
    extra = args.pop("kwargs", {})
    return {**{k: v for k, v in args.items() if v is not AS_SOURCE}, **extra}


def _fixed_fill(fn: str, value: Any, given: Any) -> None:
    """``zeros``/``ones`` fill with their own value: another ``fill_value`` is refused rather
    than silently ignored."""
    try:
        same = bool(given == value) and not isinstance(given, (str, bytes))
    except Exception:  # noqa: BLE001 - arrays and other odd values are simply not the same
        same = False
    if not same:
        raise TypeError(f"{fn}() fills with {value!r}; got fill_value={given!r} (use full() or create())")


# The functions below forward their arguments to create(); each spells them out (same names,
# same defaults) so that help() and editors show them.
def empty(
    shape: Any, chunks: Any = True, dtype: Any = None, *, compressor: Any = "default", fill_value: Any = None,
    order: str = "C", store: Any = None, synchronizer: Any = None, overwrite: bool = False,
    path: str | None = None, chunk_store: Any = None, filters: Any = None, cache_metadata: bool = True,
    cache_attrs: bool = True, read_only: bool = False, object_codec: Any = None,
    dimension_separator: str | None = None, write_empty_chunks: bool | None = None,
    zarr_format: int | None = None, storage_options: dict[str, Any] | None = None,
    attributes: dict[str, Any] | None = None, mode: str | None = None, shards: Any = None,
    dimension_names: Any = None, codecs: Any = None, chunk_key_encoding: Any = None, serializer: Any = None,
    compressors: Any = "auto", **kwargs: Any,
) -> Array:
    """Create an array whose uninitialized contents are undefined (no fill value).

    Parameters
    ----------
    shape : int or tuple of ints
        Array shape.
    chunks : int or tuple of ints, optional
        Chunk shape (guessed by default).
    dtype : str or dtype, optional
        Data type (default float64).
    fill_value : object, optional
        None by default: chunks never written read as whatever is in memory (zeros here).
    compressor : Codec, optional
        Primary compressor, as in :func:`create` (None: no compression).
    order : {'C', 'F'}, optional
        Memory layout within each chunk.
    store, synchronizer, path, chunk_store, filters, object_codec, dimension_separator, write_empty_chunks, zarr_format, storage_options, attributes, mode, shards, dimension_names, codecs, chunk_key_encoding, serializer : optional
        As in :func:`create`.
    overwrite, read_only : bool, optional
        As in :func:`create`.
    cache_metadata, cache_attrs : bool, optional
        As in :func:`create`.
    compressors : codec or list of codecs, optional
        The v3 compressors, instead of ``compressor``, as in :func:`create`.
    **kwargs
        zarr-python 2's and h5py's keywords, forwarded to :func:`create`.

    Returns
    -------
    Array
        The new array.

    Raises
    ------
    ContainsArrayError, ContainsGroupError
        A node is already at ``path`` and ``overwrite`` is False.

    Examples
    --------
    >>> import zarrkit
    >>> z = zarrkit.empty((100,), chunks=10, dtype='i4', zarr_format=2)
    >>> z.fill_value is None
    True
    """
    return create(**_given(locals()))


def zeros(
    shape: Any, chunks: Any = True, dtype: Any = None, *, compressor: Any = "default", fill_value: Any = 0,
    order: str = "C", store: Any = None, synchronizer: Any = None, overwrite: bool = False,
    path: str | None = None, chunk_store: Any = None, filters: Any = None, cache_metadata: bool = True,
    cache_attrs: bool = True, read_only: bool = False, object_codec: Any = None,
    dimension_separator: str | None = None, write_empty_chunks: bool | None = None,
    zarr_format: int | None = None, storage_options: dict[str, Any] | None = None,
    attributes: dict[str, Any] | None = None, mode: str | None = None, shards: Any = None,
    dimension_names: Any = None, codecs: Any = None, chunk_key_encoding: Any = None, serializer: Any = None,
    compressors: Any = "auto", **kwargs: Any,
) -> Array:
    """Create an array filled with zeros.

    Parameters
    ----------
    shape : int or tuple of ints
        Array shape.
    chunks : int or tuple of ints, optional
        Chunk shape (guessed by default).
    dtype : str or dtype, optional
        Data type (default float64).
    fill_value : 0, optional
        Always 0 (another value is a ``TypeError``: use :func:`full`).
    compressor : Codec, optional
        Primary compressor, as in :func:`create` (None: no compression).
    order : {'C', 'F'}, optional
        Memory layout within each chunk.
    store, synchronizer, path, chunk_store, filters, object_codec, dimension_separator, write_empty_chunks, zarr_format, storage_options, attributes, mode, shards, dimension_names, codecs, chunk_key_encoding, serializer : optional
        As in :func:`create`.
    overwrite, read_only : bool, optional
        As in :func:`create`.
    cache_metadata, cache_attrs : bool, optional
        As in :func:`create`.
    compressors : codec or list of codecs, optional
        The v3 compressors, instead of ``compressor``, as in :func:`create`.
    **kwargs
        zarr-python 2's and h5py's keywords, forwarded to :func:`create`.

    Returns
    -------
    Array
        The new array.

    Raises
    ------
    TypeError
        A ``fill_value`` other than 0.
    ContainsArrayError, ContainsGroupError
        A node is already at ``path`` and ``overwrite`` is False.

    Examples
    --------
    >>> import zarrkit
    >>> z = zarrkit.zeros((10000, 10000), chunks=(1000, 1000))
    >>> z[:2, :2]
    array([[0., 0.],
           [0., 0.]])
    """
    _fixed_fill("zeros", 0, fill_value)
    return create(**_given(locals()))


def ones(
    shape: Any, chunks: Any = True, dtype: Any = None, *, compressor: Any = "default", fill_value: Any = 1,
    order: str = "C", store: Any = None, synchronizer: Any = None, overwrite: bool = False,
    path: str | None = None, chunk_store: Any = None, filters: Any = None, cache_metadata: bool = True,
    cache_attrs: bool = True, read_only: bool = False, object_codec: Any = None,
    dimension_separator: str | None = None, write_empty_chunks: bool | None = None,
    zarr_format: int | None = None, storage_options: dict[str, Any] | None = None,
    attributes: dict[str, Any] | None = None, mode: str | None = None, shards: Any = None,
    dimension_names: Any = None, codecs: Any = None, chunk_key_encoding: Any = None, serializer: Any = None,
    compressors: Any = "auto", **kwargs: Any,
) -> Array:
    """Create an array filled with ones.

    Parameters
    ----------
    shape : int or tuple of ints
        Array shape.
    chunks : int or tuple of ints, optional
        Chunk shape (guessed by default).
    dtype : str or dtype, optional
        Data type (default float64).
    fill_value : 1, optional
        Always 1 (another value is a ``TypeError``: use :func:`full`).
    compressor : Codec, optional
        Primary compressor, as in :func:`create` (None: no compression).
    order : {'C', 'F'}, optional
        Memory layout within each chunk.
    store, synchronizer, path, chunk_store, filters, object_codec, dimension_separator, write_empty_chunks, zarr_format, storage_options, attributes, mode, shards, dimension_names, codecs, chunk_key_encoding, serializer : optional
        As in :func:`create`.
    overwrite, read_only : bool, optional
        As in :func:`create`.
    cache_metadata, cache_attrs : bool, optional
        As in :func:`create`.
    compressors : codec or list of codecs, optional
        The v3 compressors, instead of ``compressor``, as in :func:`create`.
    **kwargs
        zarr-python 2's and h5py's keywords, forwarded to :func:`create`.

    Returns
    -------
    Array
        The new array.

    Raises
    ------
    TypeError
        A ``fill_value`` other than 1.
    ContainsArrayError, ContainsGroupError
        A node is already at ``path`` and ``overwrite`` is False.

    Examples
    --------
    >>> import zarrkit
    >>> z = zarrkit.ones((4, 4), chunks=(2, 2))
    >>> float(z[0, 0])
    1.0
    """
    _fixed_fill("ones", 1, fill_value)
    return create(**_given(locals()))


def full(
    shape: Any, fill_value: Any, chunks: Any = True, dtype: Any = None, *, compressor: Any = "default",
    order: str = "C", store: Any = None, synchronizer: Any = None, overwrite: bool = False,
    path: str | None = None, chunk_store: Any = None, filters: Any = None, cache_metadata: bool = True,
    cache_attrs: bool = True, read_only: bool = False, object_codec: Any = None,
    dimension_separator: str | None = None, write_empty_chunks: bool | None = None,
    zarr_format: int | None = None, storage_options: dict[str, Any] | None = None,
    attributes: dict[str, Any] | None = None, mode: str | None = None, shards: Any = None,
    dimension_names: Any = None, codecs: Any = None, chunk_key_encoding: Any = None, serializer: Any = None,
    compressors: Any = "auto", **kwargs: Any,
) -> Array:
    """Create an array filled with ``fill_value``.

    Parameters
    ----------
    shape : int or tuple of ints
        Array shape.
    fill_value : object
        The value of every element not written (checked against ``dtype`` as by :func:`create`).
    chunks : int or tuple of ints, optional
        Chunk shape (guessed by default).
    dtype : str or dtype, optional
        Data type (default float64).
    compressor : Codec, optional
        Primary compressor, as in :func:`create` (None: no compression).
    order : {'C', 'F'}, optional
        Memory layout within each chunk.
    store, synchronizer, path, chunk_store, filters, object_codec, dimension_separator, write_empty_chunks, zarr_format, storage_options, attributes, mode, shards, dimension_names, codecs, chunk_key_encoding, serializer : optional
        As in :func:`create`.
    overwrite, read_only : bool, optional
        As in :func:`create`.
    cache_metadata, cache_attrs : bool, optional
        As in :func:`create`.
    compressors : codec or list of codecs, optional
        The v3 compressors, instead of ``compressor``, as in :func:`create`.
    **kwargs
        zarr-python 2's and h5py's keywords, forwarded to :func:`create`.

    Returns
    -------
    Array
        The new array.

    Raises
    ------
    ValueError
        A ``fill_value`` the data type cannot hold.

    Examples
    --------
    >>> import zarrkit
    >>> z = zarrkit.full((4, 4), fill_value=42, chunks=(2, 2))
    >>> float(z[3, 3])
    42.0
    """
    return create(**_given(locals()))


def _source_info(data: Any) -> dict[str, Any]:
    info: dict[str, Any] = {}
    if isinstance(data, Array):
        meta = data.metadata
        info.update(
            chunks=meta.chunks,
            dtype=meta.dtype,
            compressor=meta.compressor,
            fill_value=meta.fill_value,
            order=meta.layout_order,
        )
        filters = list(meta.filters or ())
        if meta.zarr_format == 3 and meta.layout_order == "F":
            filters.pop(0)  # the transpose codec: order='F' writes it again
        if meta.dtype.kind == "O" and filters:
            info["object_codec"] = filters.pop(0)
        info["filters"] = filters or None
    else:
        chunks = getattr(data, "chunks", None)
        chunklen = getattr(data, "chunklen", None)  # bcolz-style arrays chunk the first dimension
        shape = getattr(data, "shape", None)
        if isinstance(chunks, tuple) and all(isinstance(c, (int, np.integer)) for c in chunks):
            info["chunks"] = chunks
        elif isinstance(chunklen, (int, np.integer)) and shape:
            info["chunks"] = (int(chunklen), *shape[1:])
        for attr in ("dtype", "compressor", "fill_value", "order", "filters"):
            if hasattr(data, attr):
                info[attr] = getattr(data, attr)
    return info


def array(
    data: Any, *, chunks: Any = None, dtype: Any = None, compressor: Any = "default", fill_value: Any = 0,
    order: str = "C", store: Any = None, synchronizer: Any = None, overwrite: bool = False,
    path: str | None = None, chunk_store: Any = None, filters: Any = None, cache_metadata: bool = True,
    cache_attrs: bool = True, read_only: bool = False, object_codec: Any = None,
    dimension_separator: str | None = None, write_empty_chunks: bool | None = None,
    zarr_format: int | None = None, storage_options: dict[str, Any] | None = None,
    attributes: dict[str, Any] | None = None, mode: str | None = None, shards: Any = None,
    dimension_names: Any = None, codecs: Any = None, chunk_key_encoding: Any = None, serializer: Any = None,
    compressors: Any = "auto", **kwargs: Any,
) -> Array:
    """Create an array filled with ``data`` (a NumPy array, array-like or zarrkit Array).

    Parameters
    ----------
    data : array-like
        The values; its shape is the array's.
    chunks : int or tuple of ints, optional
        Chunk shape (default: ``data``'s chunks if it has them, else guessed).
    dtype : str or dtype, optional
        Data type (default: ``data``'s).
    object_codec : Codec, optional
        For object data: guessed from the values (strings, bytes) when not given.
    read_only : bool, optional
        If True, the returned array refuses writes (the data is written first).
    compressor : Codec, optional
        Primary compressor, as in :func:`create` (None: no compression).
    fill_value : optional
        As in :func:`create`.
    order : {'C', 'F'}, optional
        Memory layout within each chunk.
    store, synchronizer, path, chunk_store, filters, dimension_separator, write_empty_chunks, zarr_format, storage_options, attributes, mode, shards, dimension_names, codecs, chunk_key_encoding, serializer : optional
        As in :func:`create`.
    overwrite : optional
        As in :func:`create`.
    cache_metadata, cache_attrs : bool, optional
        As in :func:`create`.
    compressors : codec or list of codecs, optional
        The v3 compressors, instead of ``compressor``, as in :func:`create`.
    **kwargs
        zarr-python 2's and h5py's keywords, forwarded to :func:`create`.

    Returns
    -------
    Array
        The new array, holding ``data``.

    Examples
    --------
    >>> import numpy as np, zarrkit
    >>> z = zarrkit.array(np.arange(100).reshape(10, 10), chunks=(5, 5))
    >>> int(z[9, 9])
    99
    """
    kwargs = _given(locals())
    data = kwargs.pop("data")
    if not hasattr(data, "shape") or not hasattr(data, "dtype"):
        data = np.asanyarray(data)
    if kwargs.get("dtype") is None:
        kwargs["dtype"] = data.dtype
    if kwargs.get("chunks") is None:
        kwargs["chunks"] = _source_info(data).get("chunks", True)
    if np.dtype(kwargs["dtype"]).kind == "O" and kwargs.get("object_codec") is None:
        kwargs["object_codec"] = _guess_object_codec(data)
    # read_only=True: the data is written first, then the returned array refuses writes
    read_only = kwargs.pop("read_only", False)
    z = create(shape=data.shape, **kwargs)
    z[...] = data
    if read_only:
        z.read_only = True
    return z


def _guess_object_codec(data: Any) -> Any:
    flat = np.asarray(data, dtype=object).reshape(-1)
    if flat.size and all(isinstance(v, str) for v in flat):
        return numcodecs.VLenUTF8()
    if flat.size and all(isinstance(v, bytes) for v in flat):
        return numcodecs.VLenBytes()
    return None


def _open_store(store: Any, storage_options: dict[str, Any] | None, read_only: bool) -> Any:
    """A path or URL becomes its store here (read-only for mode 'r'); mappings and stores
    pass through unchanged (a node shows the user's own mapping as its store)."""
    if isinstance(store, (str, os.PathLike)) or storage_options is not None:
        return coerce_store(store, read_only=read_only, storage_options=storage_options)
    return store


def create_array(
    store: Any = None,
    *,
    name: str | None = None,
    shape: Any,
    dtype: Any = "float64",
    chunks: Any = "auto",
    shards: Any = None,
    filters: Any = None,
    compressors: Any = "auto",
    serializer: Any = "auto",
    fill_value: Any = None,
    order: str | None = None,
    zarr_format: int | None = None,
    attributes: dict[str, Any] | None = None,
    chunk_key_encoding: Any = None,
    dimension_names: Any = None,
    codecs: Any = None,
    overwrite: bool = False,
    synchronizer: Any = None,
    write_empty_chunks: bool | None = None,
    storage_options: dict[str, Any] | None = None,
    config: dict[str, Any] | None = None,
) -> Array:
    """Create an array with zarr-python 3's spelling of the arguments.

    Parameters
    ----------
    store : store, str or MutableMapping
        Where to create the array (default: a new in-memory store).
    name : str, optional
        Path of the array in the store.
    shape : optional
        Shape, data type and (inner) chunk shape (``'auto'`` guesses one).
    dtype : optional
        Shape, data type and (inner) chunk shape (``'auto'`` guesses one).
    chunks : optional
        Shape, data type and (inner) chunk shape (``'auto'`` guesses one).
    shards : tuple of ints, optional
        Shard shape (v3): chunks are stored ``shards/chunks`` at a time in one object.
    filters : optional
        The array→array, bytes→bytes and array→bytes codecs, as zarrkit codecs, numcodecs
        codecs or JSON descriptions. ``compressors='auto'`` is the default compressor.
    compressors, serializer : optional
        The array→array, bytes→bytes and array→bytes codecs, as zarrkit codecs, numcodecs
        codecs or JSON descriptions. ``compressors='auto'`` is the default compressor.
    codecs : list, optional
        The whole v3 codec chain exactly as in ``zarr.json`` (instead of filters, serializer,
        compressors and shards).
    fill_value, order, attributes, chunk_key_encoding, dimension_names, zarr_format : optional
        As in the metadata; ``zarr_format`` defaults to ``zarrkit.config.zarr_format``.
    overwrite : bool
        Replace whatever is at ``name``.
    synchronizer : object, optional
        Array synchronizer.
    write_empty_chunks : bool, optional
        Store chunks that hold only the fill value (default: ``config``'s, else False).
    storage_options : dict, optional
        Options of the remote file system when ``store`` is a URL.
    config : dict, optional
        zarr-python 3's per-array settings: ``order`` (when ``order=`` is not given;
        default ``zarrkit.config.order``) and ``write_empty_chunks``.

    Examples
    --------
    >>> import zarrkit
    >>> z = zarrkit.create_array({}, shape=(100, 100), chunks=(10, 10), shards=(50, 50),
    ...                          dtype='i4', zarr_format=3)
    >>> z.chunks, z.shards
    ((10, 10), (50, 50))
    """
    zarr_format = _check_zarr_format(zarr_format)
    check_codec_arguments(compressors=compressors, filters=filters, serializer=serializer, codecs=codecs)
    array_config = dict(config or {})
    unknown = set(array_config) - {"order", "write_empty_chunks"}
    if unknown:
        raise TypeError(f"config: unknown array setting(s) {sorted(unknown)}; expected 'order', 'write_empty_chunks'")
    if order is None:
        order = array_config.get("order") or _settings.order
    if write_empty_chunks is None:
        # zarr-python 3 leaves chunks that hold only the fill value unwritten by default
        write_empty_chunks = array_config.get("write_empty_chunks", False)
    if codecs is not None and (filters is not None or shards is not None or compressors != "auto" or serializer != "auto"):
        raise TypeError("give either codecs= or filters=/serializer=/compressors=/shards=, not both")
    v3_options: dict[str, Any] = {}
    compressor: Any = "default" if compressors == "auto" else compressors
    if zarr_format == 3:
        v3_options = {
            "shards": shards, "codecs": codecs, "chunk_key_encoding": chunk_key_encoding,
            "dimension_names": dimension_names,
            "serializer": "auto" if serializer in ("auto", None) else serializer,
        }
        v3_options = {k: v for k, v in v3_options.items() if v is not None}
    else:
        if shards is not None or codecs is not None or dimension_names is not None or serializer not in ("auto", None):
            raise TypeError("shards, codecs, serializer and dimension_names need zarr_format=3")
        if isinstance(compressor, (list, tuple)):
            if len(compressor) > 1:
                raise ValueError(f"compressors: a zarr_format=2 array takes at most one, got {len(compressor)}")
            compressor = compressor[0] if compressor else None
        if compressor is not None and not (isinstance(compressor, str) and compressor == "default"):
            compressor = to_v2_codec(compressor, "compressors")  # errors name the argument given
    if isinstance(chunks, str) and chunks == "auto":  # zarr-python 3's guess (larger chunks than 2's)
        try:
            itemsize = np.dtype(dtype_arg(dtype)).itemsize
        except TypeError:
            itemsize = 0  # a string dtype ('str'), or one refused with its reason later
        chunks = guess_chunks(normalize_shape(shape), itemsize, ZARR3_CHUNK_BASE) if itemsize else True
    if compressors == "auto" and zarr_format == 3 and codecs is None:
        compressor = [ZstdCodec(level=0, checksum=False)]  # zarr-python 3's default
    kwargs: dict[str, Any] = {}
    if zarr_format == 2 and chunk_key_encoding is not None:
        kwargs["dimension_separator"] = chunk_key_encoding_arg(chunk_key_encoding).separator
    return create(
        shape,
        chunks=chunks,
        dtype=dtype,
        compressor=compressor,
        fill_value=fill_value,
        order=order,
        store=store,
        path=name,
        filters=filters,
        overwrite=overwrite,
        synchronizer=synchronizer,
        write_empty_chunks=write_empty_chunks,
        zarr_format=zarr_format,
        attributes=attributes,
        storage_options=storage_options,
        **v3_options,
        **kwargs,
    )
