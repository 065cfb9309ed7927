"""Creating arrays: the creation functions of the classic Zarr API (``create``, ``zeros``,
``array``, the ``*_like`` functions...), zarr-python 3's ``create_array``, and zarr-python 2's
``init_array``/``init_group``.

Each is thin: it normalises its arguments into an :class:`~zarrkit.metadata.spec.ArraySpec`,
turns ``store=`` into stores, and hands both to the one creation path,
:func:`zarrkit.core.creation.create_array_node`.

Every entrance, here and in :mod:`.opening`, :mod:`.hierarchy`, the command line and the
xarray integration, turns what the user passes as ``store=`` into stores with
:func:`~zarrkit.storage.coerce.open_stores` (or ``open_store``), once, before the engine.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.array import Array
from ..core.creation import (
    ArrayOptions,
    classic_request,
    create_array_node,
    write_array_node,
    write_group_node,
)
from ..core.creation_like import AS_SOURCE, data_args, fixed_fill, given_args
from ..metadata.build import chunk_encoding_v2, chunk_encoding_v3
from ..metadata.normalize import normalize_path
from ..metadata.spec import (
    ArraySpec,
    ShapeRequiredError,
    array_config_arg,
    check_codec_arguments,
    legacy_format,
    reject_unknown,
    with_array_config,
    zarr3_spec,
    zarr_format_arg,
)
from ..storage.base import StoreLike
from ..storage.coerce import open_stores
from ..storage.store_path import refuse_writing_mode

__all__ = [
    "create", "empty", "zeros", "ones", "full", "array", "create_array", "init_array", "init_group",
    "create_classic", "AS_SOURCE",
]

#: zarr-python 3's private names (``zarr.core.array``) of the codecs an array gets from
#: ``create_array``'s filters/serializer/compressors: its tests and some libraries call them
_parse_chunk_encoding_v3 = chunk_encoding_v3
_parse_chunk_encoding_v2 = chunk_encoding_v2


def create_classic(kwargs: dict[str, Any], data: Any = None) -> Array:
    """Create the array of zarr-python 2's ``create`` arguments, by name (``data``: holding
    it): the body of :func:`create` and of the functions that forward to it."""
    store = kwargs.pop("store", None)
    chunk_store = kwargs.pop("chunk_store", None)
    path = kwargs.pop("path", None)
    storage_options = kwargs.pop("storage_options", None)
    mode = kwargs.get("mode")
    request = classic_request(**with_array_config(kwargs))
    stores = open_stores(store, chunk_store, storage_options=storage_options)
    refuse_writing_mode(stores.store, mode)
    return create_array_node(
        stores, path, request.spec, overwrite=request.overwrite, options=request.options, data=data,
    )


def create(
    shape: Any,
    chunks: Any = True,
    dtype: Any = None,
    compressor: Any = "default",
    fill_value: Any = 0,
    order: str | None = None,
    store: StoreLike = None,
    synchronizer: Any = None,
    overwrite: bool = False,
    path: str | None = None,
    chunk_store: StoreLike = None,
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
        zarr-python 2's spelling of ``compressors`` (one codec), kept for code written for
        it; new code passes ``compressors``.  ``'default'``: Blosc (``cname='lz4', clevel=5,
        shuffle=1``); None: no compression.
    fill_value : object
        Value of uninitialized portions of the array.
    order : {'C', 'F'}, optional
        Memory layout within each chunk, for Zarr v2 (stored in its metadata; default:
        ``config={'order': ...}``'s, else ``zarrkit.config.order``, ``'C'``).  Zarr v3 stores
        none: there it is ignored with a ``RuntimeWarning``, as zarr-python 3 does (the
        order reads return is ``config={'order': 'F'}``).
    store : str, os.PathLike, MutableMapping or store, optional
        A zarrkit store, a path to a directory, a URL (``s3://...``) or a mapping (default:
        a new in-memory store).
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
        The codecs that compress each chunk: the spelling to use, in both formats
        (``numcodecs.Zstd(level=3)``, ``zarrkit.codecs.ZstdCodec(level=3)``...; a v2 array
        takes one).  None: no compression; ``'auto'`` (the default): what ``compressor``
        says, Blosc unless it is given.  Give one of ``compressor`` and ``compressors``.
    **kwargs
        ``data``: values written into the new array (of its shape), as zarr-python 3 takes
        them; ``chunk_shape``: zarr-python 3's other spelling of ``chunks``.  Then
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
    kwargs = given_args(locals())
    return create_classic(kwargs, data=kwargs.pop("data", None))


def empty(
    shape: Any, chunks: Any = True, dtype: Any = None, *, compressor: Any = "default", fill_value: Any = None,
    order: str | None = None, store: StoreLike = None, synchronizer: Any = None, overwrite: bool = False,
    path: str | None = None, chunk_store: StoreLike = None, filters: Any = None, cache_metadata: bool = True,
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
        zarr-python 2's spelling of ``compressors``, as in :func:`create`.
    order : {'C', 'F'}, optional
        Memory layout within each chunk (Zarr v2), as in :func:`create`.
    store, synchronizer, path, chunk_store, filters, object_codec, dimension_separator, write_empty_chunks, zarr_format, storage_options, attributes, mode, shards, dimension_names, codecs, chunk_key_encoding, serializer : optional
        As in :func:`create`.
    overwrite, read_only : bool, optional
        As in :func:`create`.
    cache_metadata, cache_attrs : bool, optional
        As in :func:`create`.
    compressors : codec or list of codecs, optional
        The codecs that compress each chunk (the spelling to use), as in :func:`create`
        (None: no compression).
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
    return create_classic(given_args(locals()))


def zeros(
    shape: Any, chunks: Any = True, dtype: Any = None, *, compressor: Any = "default", fill_value: Any = 0,
    order: str | None = None, store: StoreLike = None, synchronizer: Any = None, overwrite: bool = False,
    path: str | None = None, chunk_store: StoreLike = None, filters: Any = None, cache_metadata: bool = True,
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
        zarr-python 2's spelling of ``compressors``, as in :func:`create`.
    order : {'C', 'F'}, optional
        Memory layout within each chunk (Zarr v2), as in :func:`create`.
    store, synchronizer, path, chunk_store, filters, object_codec, dimension_separator, write_empty_chunks, zarr_format, storage_options, attributes, mode, shards, dimension_names, codecs, chunk_key_encoding, serializer : optional
        As in :func:`create`.
    overwrite, read_only : bool, optional
        As in :func:`create`.
    cache_metadata, cache_attrs : bool, optional
        As in :func:`create`.
    compressors : codec or list of codecs, optional
        The codecs that compress each chunk (the spelling to use), as in :func:`create`
        (None: no compression).
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
    fixed_fill("zeros", 0, fill_value)
    return create_classic(given_args(locals()))


def ones(
    shape: Any, chunks: Any = True, dtype: Any = None, *, compressor: Any = "default", fill_value: Any = 1,
    order: str | None = None, store: StoreLike = None, synchronizer: Any = None, overwrite: bool = False,
    path: str | None = None, chunk_store: StoreLike = None, filters: Any = None, cache_metadata: bool = True,
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
        zarr-python 2's spelling of ``compressors``, as in :func:`create`.
    order : {'C', 'F'}, optional
        Memory layout within each chunk (Zarr v2), as in :func:`create`.
    store, synchronizer, path, chunk_store, filters, object_codec, dimension_separator, write_empty_chunks, zarr_format, storage_options, attributes, mode, shards, dimension_names, codecs, chunk_key_encoding, serializer : optional
        As in :func:`create`.
    overwrite, read_only : bool, optional
        As in :func:`create`.
    cache_metadata, cache_attrs : bool, optional
        As in :func:`create`.
    compressors : codec or list of codecs, optional
        The codecs that compress each chunk (the spelling to use), as in :func:`create`
        (None: no compression).
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
    fixed_fill("ones", 1, fill_value)
    return create_classic(given_args(locals()))


def full(
    shape: Any, fill_value: Any, chunks: Any = True, dtype: Any = None, *, compressor: Any = "default",
    order: str | None = None, store: StoreLike = None, synchronizer: Any = None, overwrite: bool = False,
    path: str | None = None, chunk_store: StoreLike = None, filters: Any = None, cache_metadata: bool = True,
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
        zarr-python 2's spelling of ``compressors``, as in :func:`create`.
    order : {'C', 'F'}, optional
        Memory layout within each chunk (Zarr v2), as in :func:`create`.
    store, synchronizer, path, chunk_store, filters, object_codec, dimension_separator, write_empty_chunks, zarr_format, storage_options, attributes, mode, shards, dimension_names, codecs, chunk_key_encoding, serializer : optional
        As in :func:`create`.
    overwrite, read_only : bool, optional
        As in :func:`create`.
    cache_metadata, cache_attrs : bool, optional
        As in :func:`create`.
    compressors : codec or list of codecs, optional
        The codecs that compress each chunk (the spelling to use), as in :func:`create`
        (None: no compression).
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
    return create_classic(given_args(locals()))


def array(
    data: Any, *, chunks: Any = None, dtype: Any = None, compressor: Any = "default", fill_value: Any = 0,
    order: str | None = None, store: StoreLike = None, synchronizer: Any = None, overwrite: bool = False,
    path: str | None = None, chunk_store: StoreLike = None, filters: Any = None, cache_metadata: bool = True,
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
        zarr-python 2's spelling of ``compressors``, as in :func:`create`.
    fill_value : optional
        As in :func:`create`.
    order : {'C', 'F'}, optional
        Memory layout within each chunk (Zarr v2), as in :func:`create`.
    store, synchronizer, path, chunk_store, filters, dimension_separator, write_empty_chunks, zarr_format, storage_options, attributes, mode, shards, dimension_names, codecs, chunk_key_encoding, serializer : optional
        As in :func:`create`.
    overwrite : optional
        As in :func:`create`.
    cache_metadata, cache_attrs : bool, optional
        As in :func:`create`.
    compressors : codec or list of codecs, optional
        The codecs that compress each chunk (the spelling to use), as in :func:`create`
        (None: no compression).
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
    kwargs = given_args(locals())
    data, kwargs = data_args(kwargs.pop("data"), kwargs)
    return create_classic(kwargs, data=data)


def create_array(
    store: StoreLike = None,
    *,
    name: str | None = None,
    shape: Any = None,
    dtype: Any = None,
    data: Any = None,
    chunks: Any = "auto",
    shards: Any = None,
    filters: Any = "auto",
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
    config: Any = None,
    write_data: bool = True,
) -> Array:
    """Create an array with zarr-python 3's spelling of the arguments.

    Parameters
    ----------
    store : store, str or MutableMapping
        Where to create the array (default: a new in-memory store).
    name : str, optional
        Path of the array in the store.
    shape : int or tuple of ints, optional
        The shape; required unless ``data`` is given (whose shape it then is).
    dtype : optional
        The data type (default: ``data``'s, else float64).
    data : array-like, optional
        Values to create the array of: its shape and data type are the array's (give neither
        ``shape`` nor ``dtype`` then), and they are written unless ``write_data`` is False.
        A zarrkit array is copied one stored object of the new array at a time.
    chunks : optional
        Shape, data type and (inner) chunk shape (``'auto'`` guesses one).
    shards : tuple of ints, optional
        Shard shape (v3): chunks are stored ``shards/chunks`` at a time in one object.
    filters : optional
        The array→array codecs (filters), as zarrkit codecs, numcodecs codecs or JSON
        descriptions; ``'auto'`` (the default): the data type's (none; a v2 string array's
        object codec).
    compressors, serializer : optional
        The bytes→bytes and array→bytes codecs, as zarrkit codecs, numcodecs codecs or JSON
        descriptions; ``'auto'`` (the default): zstd for v3 arrays, Blosc for v2 ones, and
        the data type's serializer.  (zarr-python 2's ``compressor=`` is not taken here:
        ``compressors`` is the one spelling.)
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
        Store chunks that hold only the fill value (default: ``config``'s, else
        ``zarrkit.config.write_empty_chunks_for`` the format: False for v3, True for v2).
    storage_options : dict, optional
        Options of the remote file system when ``store`` is a URL.
    config : dict or ArrayConfig, optional
        zarr-python 3's per-array settings: ``order`` (when ``order=`` is not given;
        default ``zarrkit.config.order``), ``write_empty_chunks`` and ``read_missing_chunks``
        (False: reading a chunk that is not stored raises
        :class:`~zarrkit.errors.ChunkNotFoundError`); the ``sharding_coalesce_*`` hints are
        accepted and left to the engine.
    write_data : bool, optional
        Write ``data``'s values (False: create the array only).

    Returns
    -------
    Array
        The new array.

    Raises
    ------
    ValueError
        Neither ``shape`` nor ``data`` given, or ``data`` given with ``shape`` or ``dtype``.
    TypeError
        An unknown ``config`` setting.
    ContainsArrayError, ContainsGroupError
        A node is already at ``name`` and ``overwrite`` is False.

    Examples
    --------
    >>> import zarrkit
    >>> z = zarrkit.create_array({}, shape=(100, 100), chunks=(10, 10), shards=(50, 50),
    ...                          dtype='i4', zarr_format=3)
    >>> z.chunks, z.shards
    ((10, 10), (50, 50))
    """
    shape, dtype, data = _data_shape_dtype(data, shape, dtype)
    spec = zarr3_spec(
        shape, dtype=dtype, chunks=chunks, shards=shards, filters=filters, compressors=compressors,
        serializer=serializer, fill_value=fill_value, order=order, zarr_format=zarr_format, attributes=attributes,
        chunk_key_encoding=chunk_key_encoding, dimension_names=dimension_names, codecs=codecs, config=config,
    )
    settings = array_config_arg(config)
    if write_empty_chunks is None:  # else the format's default (zarrkit.config.write_empty_chunks_for)
        write_empty_chunks = settings.get("write_empty_chunks")
    stores = open_stores(store, storage_options=storage_options)
    options = ArrayOptions(synchronizer=synchronizer, write_empty_chunks=write_empty_chunks,
                           read_missing_chunks=settings.get("read_missing_chunks"))
    return create_array_node(stores, name, spec, overwrite=overwrite, options=options,
                             data=data if write_data else None)


def _data_shape_dtype(data: Any, shape: Any, dtype: Any) -> tuple[Any, Any, Any]:
    """``create_array``'s shape and data type: given, or ``data``'s (which then needs neither)."""
    if data is None:
        if shape is None:
            raise ShapeRequiredError(
                "shape is required: expected an int or a tuple of ints "
                "(create_array: shape was not specified, and no data= to take it from)"
            )
        return shape, "float64" if dtype is None else dtype, None
    if shape is not None or dtype is not None:
        given = "shape" if shape is not None else "dtype"
        raise ValueError(f"The data parameter was used, but the {given} parameter was also used: "
                         f"create_array takes the {given} of data=; give one of them")
    if not (hasattr(data, "shape") and hasattr(data, "dtype")):
        data = np.asanyarray(data)
    return data.shape, data.dtype, data


def init_array(
    store: StoreLike,
    shape: Any,
    chunks: Any = True,
    dtype: Any = None,
    compressor: Any = "default",
    fill_value: Any = None,
    order: str = "C",
    overwrite: bool = False,
    path: str | None = None,
    chunk_store: StoreLike = None,
    filters: Any = None,
    object_codec: Any = None,
    dimension_separator: str | None = None,
    zarr_format: int | None = None,
    attributes: dict[str, Any] | None = None,
    v3_options: dict[str, Any] | None = None,
    **kwargs: Any,
) -> None:
    """Initialize an array store with the given configuration.

    Writes the array metadata (``.zarray`` and ``.zattrs``, or ``zarr.json`` with
    ``zarr_format=3``) and any missing parent groups.  As zarr-python 2's function of
    the same name, it writes format 2 unless ``zarr_format`` says otherwise, whatever
    ``zarrkit.config.zarr_format`` is.

    Parameters
    ----------
    store : MutableMapping, Store or str
        Where to write the metadata.
    shape : optional
        As in :func:`zarrkit.create` (``fill_value`` defaults to None here).
    chunks : optional
        As in :func:`zarrkit.create` (``fill_value`` defaults to None here).
    dtype, fill_value, path, chunk_store, filters, object_codec, dimension_separator, attributes : optional
        As in :func:`zarrkit.create` (``fill_value`` defaults to None here).
    compressor : optional
        As in :func:`zarrkit.create` (``fill_value`` defaults to None here).
    order : optional
        As in :func:`zarrkit.create` (``fill_value`` defaults to None here).
    overwrite : optional
        As in :func:`zarrkit.create` (``fill_value`` defaults to None here).
    zarr_format : int (2 or 3), optional
        Format of the array (default 2).
    v3_options : dict, optional
        v3 settings: ``shards``, ``codecs``, ``chunk_key_encoding``, ``dimension_names``,
        ``serializer``, ``compressors`` (as :func:`zarrkit.create` takes them).
    **kwargs
        zarr-python 2's keywords (``zarr_version``, ``storage_transformers``,
        ``meta_array``...), forwarded to the same translation as :func:`zarrkit.create`.

    Raises
    ------
    ContainsArrayError, ContainsGroupError
        A node is already at ``path`` and ``overwrite`` is False.

    Examples
    --------
    >>> from zarrkit.storage import init_array
    >>> store = dict()
    >>> init_array(store, shape=(10000, 10000), chunks=(1000, 1000))
    >>> sorted(store.keys())
    ['.zarray', '.zattrs']
    """
    zarr_format = zarr_format_arg(legacy_format(kwargs, zarr_format, "init_array") or 2)
    reject_unknown(kwargs, "init_array")
    zarr3_options = dict(v3_options or {})
    check_codec_arguments(compressor=compressor, filters=filters, object_codec=object_codec, **{
        k: v for k, v in zarr3_options.items() if k in ("compressors", "serializer", "codecs")
    })
    spec = ArraySpec(
        shape, chunks, dtype, zarr_format, fill_value, order, compressor, filters, object_codec,
        dimension_separator, attributes, **zarr3_options,
    )
    stores = open_stores(store, chunk_store)
    write_array_node(stores, normalize_path(path), spec, overwrite)


def init_group(
    store: StoreLike,
    overwrite: bool = False,
    path: str | None = None,
    chunk_store: StoreLike = None,
    zarr_format: int | None = None,
    attributes: dict[str, Any] | None = None,
    **kwargs: Any,
) -> None:
    """Initialize a group store (``.zgroup``, or ``zarr.json`` with ``zarr_format=3``, plus
    missing parents).  Writes format 2 unless ``zarr_format`` says otherwise, as zarr-python 2.

    Parameters
    ----------
    store : MutableMapping, Store or str
        Where to write the metadata.
    overwrite : bool, optional
        Remove whatever is at ``path`` first.
    path : str, optional
        Path of the group within the store.
    chunk_store : MutableMapping, optional
        Separate chunk storage (cleared below ``path`` too with ``overwrite``).
    zarr_format : int (2 or 3), optional
        Format of the group (default 2).
    attributes : dict, optional
        Attributes of the new group.
    **kwargs
        zarr-python 2's keywords (``zarr_version``...), forwarded to the same translation as
        :func:`zarrkit.create`.

    Raises
    ------
    ContainsArrayError, ContainsGroupError
        A node is already at ``path`` and ``overwrite`` is False.

    Examples
    --------
    >>> from zarrkit.storage import init_group
    >>> store = dict()
    >>> init_group(store, path='foo')
    >>> sorted(store)
    ['.zattrs', '.zgroup', 'foo/.zattrs', 'foo/.zgroup']
    """
    zarr_format = zarr_format_arg(legacy_format(kwargs, zarr_format, "init_group") or 2)
    reject_unknown(kwargs, "init_group")
    stores = open_stores(store, chunk_store)
    write_group_node(stores, normalize_path(path), zarr_format, attributes, overwrite)


