"""Building validated array metadata from the arguments of the creation functions.

The v2 and v3 builders take the same zarr-2 style arguments (``compressor``, ``filters``,
``order``, ``dimension_separator``, ...); the v3 one also takes the v3-native ones (``shards``,
``compressors``, ``serializer``, ``codecs``, ``chunk_key_encoding``, ``dimension_names``).
Nothing here writes to a store.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Any

import numcodecs
import numpy as np

from .._warnings import warn
from ..codecs import BytesCodec, TransposeCodec, VLenBytesCodec, VLenUTF8Codec
from ..codecs.base import (
    ArrayArrayCodec,
    ArrayBytesCodec,
    BytesBytesCodec,
    ChunkSpec,
    V3Codec,
    check_codecs_available,
)
from ..codecs.sharding import ShardingCodec, shards_argument, with_write_settings
from ..codecs.v2 import OBJECT_CODEC_IDS, check_codecs_allowed
from ..codecs.zstd import ZstdCodec
from ..errors import MetadataError, UnsupportedCodecError, UnsupportedDtypeError
from ..storage.extras import install_hint
from .codec_args import to_v2_codec, to_v2_codecs, to_v3_codec, to_v3_codecs
from .dtypes import BYTES_DTYPE, ML_DTYPES, is_bytes_dtype, normalize_fill_value, string_dtype
from .grid import longest_edges
from .normalize import (
    ZARR3_CHUNK_BASE,
    normalize_chunks,
    normalize_order,
    normalize_shape,
    rectilinear_chunks,
)
from .spec import (
    ArraySpec,
    chunk_key_encoding_arg,
    default_compressor,
    dtype_arg,
    v2_compressor_arg,
    v2_separator_arg,
    v3_only_arguments_error,
    zarr3_spec,
)
from .v2 import ArrayMetadataV2
from .v3 import ZARR_JSON, ArrayMetadataV3

__all__ = [
    "build_metadata", "build_array_metadata", "build_array_metadata_v3", "chunk_encoding_v2", "chunk_encoding_v3",
]

#: what ``dtype`` may be, said in errors
_DTYPE_FORMS = (
    "a NumPy data type or its name ('float32', '<i4', 'M8[ns]'...), str, bytes or a zarrkit.dtype "
    "data type"
)


def _dtype_error(dtype: Any, exc: Exception) -> Exception:
    """The error for a ``dtype=`` NumPy does not understand: the install hint for a data type
    of the ml_dtypes package (NumPy knows its names once the package is imported), else what
    is expected."""
    if isinstance(dtype, str) and dtype in ML_DTYPES:
        return UnsupportedDtypeError(
            f"dtype {dtype!r} needs the ml_dtypes package ({install_hint('ml')})", "dtype"
        )
    return TypeError(f"dtype: expected {_DTYPE_FORMS}, got {dtype!r} ({exc})")


#: zarr-python 2's string dtypes naming an object codec: ``'str'``, ``'bytes'``, ``'array:i4'``
_OBJECT_DTYPE_CODECS = {"str": "vlen-utf8", "bytes": "vlen-bytes", "array": "vlen-array"}
#: codecs that turn objects into bytes: one of them first in ``filters`` is the object codec
_OBJECT_CODEC_IDS = OBJECT_CODEC_IDS


def _normalize_dtype(dtype: Any, object_codec: Any, filters: Any = None) -> tuple[np.dtype, Any]:
    """Resolve ``dtype=``; ``str``/``bytes`` mean variable-length strings (object arrays),
    ``'array:<dtype>'`` ragged arrays of numbers (``VLenArray``), as in zarr-python 2."""
    if object_codec is not None:
        object_codec = to_v2_codec(object_codec, "object_codec")
    dtype = dtype_arg(dtype)
    if dtype is None:
        _unneeded(object_codec)
        return np.dtype("f8"), None
    if dtype is str or dtype == "string":  # zarr-python 3 and the v3 data type names
        dtype = "str"
    elif dtype is bytes or dtype == "variable_length_bytes":
        dtype = "bytes"
    if isinstance(dtype, str) and dtype.split(":", 1)[0] in _OBJECT_DTYPE_CODECS:
        key, *args = dtype.split(":", 1)
        if key == "array" and not args and object_codec is None:
            raise TypeError("dtype 'array' needs the element dtype, e.g. 'array:i4'")
        if object_codec is None:
            object_codec = numcodecs.get_codec({"id": _OBJECT_DTYPE_CODECS[key]}) if not args else (
                numcodecs.VLenArray(args[0]) if key == "array" else None
            )
            if object_codec is None:
                raise TypeError(f"dtype {dtype!r} is not understood")
        return (BYTES_DTYPE if key == "bytes" else np.dtype(object)), object_codec
    try:
        dt = np.dtype(dtype)
    except TypeError as exc:
        raise _dtype_error(dtype, exc) from None
    if dt.kind in "mM" and np.datetime_data(dt)[0] == "generic":
        raise ValueError(f"dtype {dtype!r} has no unit; give one, e.g. 'M8[ns]' or 'm8[s]'")
    if dt.kind in "SU" and dt.itemsize == 0:
        raise ValueError(f"dtype {dtype!r} has no length; give e.g. 'S10' or use dtype=str")
    if not dt.hasobject:
        _unneeded(object_codec)
        return dt, None
    if dt.kind != "O":
        raise UnsupportedDtypeError(
            f"dtype {dt}: structured dtypes with object fields are not supported; store the "
            "object field as its own object array"
        )
    if object_codec is None:
        first = _first_codec_id(filters)
        if first not in _OBJECT_CODEC_IDS:
            raise ValueError(
                "an object array needs an object_codec, e.g. numcodecs.VLenUTF8() for strings, "
                "numcodecs.VLenBytes() or numcodecs.JSON()"
            )
        warn(
            f"the object codec of an object array is given as object_codec=, not as the first "
            f"of filters ({first!r} taken as the object codec)",
            FutureWarning,
        )
    return dt, object_codec


def _unneeded(object_codec: Any) -> None:
    if object_codec is not None:
        warn(
            f"object_codec {object_codec!r} is only needed for object arrays: ignored",
            UserWarning,
        )


def _first_codec_id(filters: Any) -> Any:
    if not filters or isinstance(filters, (str, dict)) or not isinstance(filters, (list, tuple)):
        return getattr(filters, "codec_id", None)
    first = filters[0]
    return first.get("id") if isinstance(first, dict) else getattr(first, "codec_id", None)


def _expand_subarray(shape: tuple[int, ...], dt: np.dtype) -> tuple[tuple[int, ...], np.dtype]:
    """A subarray dtype such as ``('<f4', (2, 2))`` adds its dimensions to the array's shape, as
    ``np.zeros(10, dtype=('<f4', (2, 2)))`` does: the array is ``(10, 2, 2)`` of ``<f4``."""
    if dt.subdtype is None:
        return shape, dt
    return shape + dt.shape, dt.base


def _none_if_empty(compressor: Any) -> Any:
    # zarr-python 2 took compressor=[] (no codecs) and compressor='none' to mean no compressor
    if isinstance(compressor, (list, tuple)) and not compressor:
        return None
    if isinstance(compressor, str) and compressor == "none":
        return None
    return compressor


def build_metadata(spec: ArraySpec, key: str = ZARR_JSON) -> ArrayMetadataV2 | ArrayMetadataV3:
    """The metadata object of a new array described by ``spec`` (nothing is written).

    Parameters
    ----------
    spec : ArraySpec
        The array's description.
    key : str
        The key its document will have, named by the errors of a zarr-format-3 description.

    Returns
    -------
    ArrayMetadataV2 or ArrayMetadataV3

    Raises
    ------
    TypeError
        zarr-python 3's arguments (``shards``, ``codecs``...) for a ``zarr_format=2`` array.
    ValueError
        An invalid shape, chunk shape, data type, fill value or codec.
    """
    options = spec.zarr3_options()
    if spec.zarr_format == 3:
        if spec.dimension_separator not in (None, "/") and "chunk_key_encoding" not in options:
            options["chunk_key_encoding"] = {
                "name": "default", "configuration": {"separator": spec.dimension_separator},
            }
        meta = build_array_metadata_v3(
            spec.shape, spec.chunks, spec.dtype, options.pop("compressors", spec.compressor), spec.fill_value,
            spec.order, spec.filters, object_codec=spec.object_codec, **options,
        )
        # in the form its document gives (codecs completed for the data type, strings in the
        # configured dtype): the object opening the array would make, nothing read
        made = ArrayMetadataV3.from_json(meta.to_json(), key)
        codecs = with_write_settings(meta.codecs, made.codecs)  # what no document holds
        return made if codecs == made.codecs else dataclasses.replace(made, codecs=codecs)
    # zarr-python 3 takes compressors= (one codec) and a 'v2' chunk_key_encoding for v2 arrays
    compressor = spec.compressor
    if "compressors" in options:
        given = options.pop("compressors")
        if not (isinstance(compressor, str) and compressor == "default"):
            raise TypeError("give compressor= or compressors=, not both")
        compressor = v2_compressor_arg(given)
    separator = v2_separator_arg(options.pop("chunk_key_encoding", None), spec.dimension_separator)
    if options:
        raise v3_only_arguments_error("create", dict(sorted(options.items())))
    return build_array_metadata(
        spec.shape, spec.chunks, spec.dtype, compressor, spec.fill_value, spec.order, spec.filters,
        spec.object_codec, separator,
    )


def build_array_metadata(
    shape: Any,
    chunks: Any = True,
    dtype: Any = None,
    compressor: Any = "default",
    fill_value: Any = 0,
    order: str = "C",
    filters: Any = None,
    object_codec: Any = None,
    dimension_separator: str | None = None,
) -> ArrayMetadataV2:
    """Validate creation arguments into a metadata object (nothing is written)."""
    dt, object_codec = _normalize_dtype(dtype, object_codec, filters)
    shape, dt = _expand_subarray(normalize_shape(shape), dt)
    if rectilinear_chunks(chunks, shape) is not None:
        raise ValueError(f"chunks {chunks!r}: Zarr v2 has only regular chunk grids; rectilinear chunks need zarr_format=3")
    chunks = normalize_chunks(chunks, shape, dt.itemsize)
    order = normalize_order(order)
    compressor = _none_if_empty(compressor)
    if isinstance(compressor, str) and compressor == "default":
        compressor = default_compressor()
    # v3 codec objects and JSON forms are turned into numcodecs codecs here, so that a codec
    # with no v2 equivalent is refused before anything is written
    if compressor is not None:
        compressor = to_v2_codec(compressor, "compressor")
    filters = to_v2_codecs(filters or None, "filters")
    if object_codec is not None and (
        not filters or getattr(filters[0], "codec_id", None) != getattr(object_codec, "codec_id", None)
    ):
        filters.insert(0, object_codec)
    if dt.kind == "O" and filters and filters[0].codec_id == "vlen-bytes":
        dt = BYTES_DTYPE
    fill = normalize_fill_value(fill_value, dt)
    if dt.kind == "O" and isinstance(fill, int) and fill == 0:
        # the creation functions' default of 0 means "empty" for strings and bytes, as
        # zarr-python 3 writes it; other object codecs get no fill value
        codec_id = filters[0].codec_id if filters else None
        fill = "" if codec_id == "vlen-utf8" else b"" if codec_id == "vlen-bytes" else None
    if dimension_separator is None:
        dimension_separator = "."
    if dimension_separator not in (".", "/"):
        raise ValueError(f"dimension_separator must be '.' or '/', got {dimension_separator!r}")
    # typed, before the metadata is built (whose other errors are ValueErrors here)
    check_codecs_allowed(filters, "filters")
    if compressor is not None:
        check_codecs_allowed([compressor], "compressor")
    try:
        return ArrayMetadataV2(
            shape=shape,
            chunks=chunks,
            dtype=dt,
            compressor=compressor,
            fill_value=fill,
            order=order,
            filters=tuple(filters) if filters else None,
            dimension_separator=dimension_separator,
        )
    except MetadataError as exc:
        raise ValueError(str(exc)) from None


def build_array_metadata_v3(
    shape: Any,
    chunks: Any = True,
    dtype: Any = None,
    compressors: Any = "default",
    fill_value: Any = 0,
    order: str = "C",
    filters: Any = None,
    serializer: Any = "auto",
    shards: Any = None,
    codecs: Any = None,
    chunk_key_encoding: Any = None,
    dimension_names: Any = None,
    object_codec: Any = None,
) -> ArrayMetadataV3:
    """Validate v3 creation arguments into a metadata object (nothing is written).

    ``codecs`` gives the whole chain exactly as in ``zarr.json`` (then ``filters``,
    ``serializer``, ``compressors``, ``shards`` and ``order`` must not be given).
    """
    dt, object_codec = _normalize_dtype(dtype, object_codec)
    shape, dt = _expand_subarray(normalize_shape(shape), dt)
    if object_codec is not None and object_codec.codec_id not in ("vlen-utf8", "vlen-bytes"):
        raise UnsupportedCodecError(
            f"object_codec: {object_codec!r} has no Zarr v3 form (v3 has data types for strings "
            "and bytes, not for arbitrary Python objects); create the array with zarr_format=2",
            "object_codec",
        )
    edges = rectilinear_chunks(chunks, shape)
    if edges is not None and shards is not None:
        raise ValueError(
            "chunks: a sharded array has regular inner chunks; give the rectilinear edge lengths "
            "as shards= (each a multiple of the chunk length)"
        )
    grid: Any
    if codecs is not None:
        chain = to_v3_codecs(codecs, "codecs")
        grid = () if edges is not None else normalize_chunks(chunks, shape, dt.itemsize, ZARR3_CHUNK_BASE)
    else:
        inner = longest_edges(edges) if edges is not None else normalize_chunks(chunks, shape, dt.itemsize,
                                                                                ZARR3_CHUNK_BASE)
        chain = _v3_chain(shape, inner, dt, order, filters, serializer, compressors, object_codec)
        grid = inner
        if shards is not None:
            shards, index_location = shards_argument(shards)
            edges = rectilinear_chunks(shards, shape, "shards")
            grid = longest_edges(edges) if edges is not None else normalize_shape(shards, "shards")
            _check_shards(edges, grid, inner, shape)
            chain = [ShardingCodec(inner, chain, index_location=index_location)]
    # a codec whose package is missing would fail at the first write, after the metadata
    check_codecs_available(chain)
    if dt.kind == "O" and isinstance(_last_serializer(chain), VLenBytesCodec):
        dt = BYTES_DTYPE
    elif dt.kind == "O" and isinstance(_last_serializer(chain), VLenUTF8Codec):
        dt = string_dtype()  # what the array reads back as: StringDType unless configured
    # v3 has no "no fill value": an unset one becomes the type's zero (NaT for times), as
    # zarr-python 3 does.
    # The creation functions' default of 0 means the same for variable-length strings and
    # bytes, whose zero is the empty value ("" is what zarr-python 3 writes for dtype=str
    # without a fill value); a string fill value ("0" included) is kept as given.
    vlen = dt.kind == "T" or isinstance(_last_serializer(chain), (VLenUTF8Codec, VLenBytesCodec))
    if vlen and _is_int_zero(fill_value):
        fill_value = None
    fill = normalize_fill_value(fill_value, dt)
    if fill is None:
        if dt.kind in "OT":
            is_bytes = isinstance(chain[-1], VLenBytesCodec) or (
                object_codec is not None and object_codec.codec_id == "vlen-bytes"
            )
            fill = b"" if is_bytes else ""
        elif dt.kind in "mM":  # times not written read as "no time", as zarr-python 3 gives them
            fill = np.array("NaT", dtype=dt)[()]
        else:
            fill = np.zeros((), dtype=dt)[()]
    cke = chunk_key_encoding_arg(chunk_key_encoding)
    if dimension_names is not None:
        dimension_names = tuple(dimension_names)
    try:
        return ArrayMetadataV3(shape, grid, dt, fill, tuple(chain), cke, dimension_names, chunk_shapes=edges)
    except MetadataError as exc:
        raise ValueError(str(exc)) from None


def _check_shards(edges: Any, grid: tuple[int, ...], inner: tuple[int, ...], shape: tuple[int, ...]) -> None:
    """Shards hold whole inner chunks: every shard edge is a multiple of the chunk length."""
    if len(grid) != len(shape):
        raise ValueError(f"shards {grid} must have as many dimensions as shape {shape}")
    for dim, c in enumerate(inner):
        lengths = [grid[dim]] if edges is None or isinstance(edges[dim], int) else [n for n, _ in edges[dim]]
        bad = [n for n in lengths if n % c]
        if bad:
            raise ValueError(
                f"shards: every shard length must be a multiple of the chunk length {c} along "
                f"dimension {dim}, got {bad[0]} (shards={grid if edges is None else edges}, chunks={inner}). "
                f"Chunk edge length {bad[0]} in dimension {dim} is not divisible by the shard's inner chunk size {c}."
            )


def _v3_chain(
    shape: tuple[int, ...], inner: tuple[int, ...], dt: np.dtype, order: str, filters: Any,
    serializer: Any, compressors: Any, object_codec: Any,
) -> list[Any]:
    """The codec chain of a v3 array (of its inner chunks, when sharded) from the zarr-2 and
    zarr-3 style arguments: filters, an order, a serializer and compressors."""
    compressors = _none_if_empty(compressors)
    if isinstance(compressors, str) and compressors == "default":
        # zarr-python 3's default for every v3 array, whichever function makes it
        # (config.default_compressor is zarr-python 2's, for v2 arrays)
        compressors = [ZstdCodec(level=0, checksum=False)]
    bb = to_v3_codecs(compressors, "compressors", BytesBytesCodec)
    for given in filters if isinstance(filters, (list, tuple)) else [filters]:
        # (zarr-2 style byte filters are numcodecs codecs: a v3 codec object of another kind
        # among the filters is a mistake, refused as zarr-python 3 refuses it)
        if isinstance(given, (BytesBytesCodec, ArrayBytesCodec)) and not isinstance(given, numcodecs.abc.Codec):
            raise UnsupportedCodecError(
                f"filters: {given.name!r} is not a filter (an array→array codec); "
                f"{'compressors' if isinstance(given, BytesBytesCodec) else 'serializer'}= takes it",
                "filters",
            )
    aa = to_v3_codecs(filters, "filters")
    # zarr-2 style filters may end with byte filters (a checksum such as adler32): they
    # run after the array filters and before the compressors, as they did in v2
    n_aa = 0
    while n_aa < len(aa) and isinstance(aa[n_aa], ArrayArrayCodec):
        n_aa += 1
    aa, bb_filters = aa[:n_aa], aa[n_aa:]
    for c in bb_filters:
        if not isinstance(c, BytesBytesCodec):
            raise UnsupportedCodecError(
                f"filters: {c.name!r} is not a filter (array→array codecs first, then "
                "bytes→bytes ones)",
                "filters",
            )
    bb = bb_filters + bb
    # order='F' is the transpose of the reverse permutation, even of one dimension (a
    # no-op there, but it records the order, as v2's field does)
    if normalize_order(order) == "F" and len(shape) >= 1:
        aa.insert(0, TransposeCodec.reversing(len(shape)))
    ab: V3Codec
    if serializer in ("auto", None):
        encoded = _dtype_after(aa, ChunkSpec(inner, dt))
        if encoded.kind not in "OT":
            ab = BytesCodec(_endian_of(encoded) if encoded.itemsize > 1 or encoded.names else None)
        elif dt.kind in "OT":
            is_bytes = is_bytes_dtype(dt) or (
                object_codec is not None and object_codec.codec_id == "vlen-bytes"
            )
            ab = VLenBytesCodec() if is_bytes else VLenUTF8Codec()
        else:
            ab = BytesCodec(_endian_of(dt) if dt.itemsize > 1 or dt.names else None)
    else:
        ab = to_v3_codec(serializer, "serializer")
        if not isinstance(ab, ArrayBytesCodec):
            raise TypeError(f"serializer: {ab.name!r} is not an array→bytes codec")
    return [*aa, ab, *bb]


def _endian_of(dt: np.dtype) -> str:
    """The bytes codec's endianness for ``dt``: big for a big-endian dtype ('>i4'), else little
    (as zarr-python 3 chooses it)."""
    order = dt.byteorder
    if dt.fields:  # a structured dtype: its first field with a byte order
        order = next((f[0].byteorder for f in dt.fields.values() if f[0].byteorder in "<>"), "=")
    if order == "=":
        order = "<" if sys.byteorder == "little" else ">"
    return "big" if order == ">" else "little"


def _dtype_after(filters: list, spec: Any) -> np.dtype:
    """The dtype the serializer sees: filters such as ``categorize`` turn objects into ints."""
    for f in filters:
        spec = f.resolve(spec)
    return spec.dtype


def _is_int_zero(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)) and value == 0


def _last_serializer(chain: list) -> Any:
    """The array→bytes codec of a chain, looking inside a sharding codec."""
    for c in chain:
        if isinstance(c, ShardingCodec):
            return _last_serializer(list(c.codecs))
        if isinstance(c, ArrayBytesCodec):
            return c
    return None


def chunk_encoding_v3(
    *, compressors: Any = "auto", filters: Any = "auto", serializer: Any = "auto", dtype: Any = "float64",
) -> tuple[tuple[Any, ...], Any, tuple[Any, ...]]:
    """The filters, serializer and compressors a v3 array of ``dtype`` gets from these
    arguments of :func:`zarrkit.create_array` (``'auto'``: the defaults).

    Returns
    -------
    tuple
        ``(filters, serializer, compressors)``, the codec objects of the array's metadata.

    Examples
    --------
    >>> chunk_encoding_v3(dtype='i2')
    ((), BytesCodec(endian='little'), (ZstdCodec(level=0, checksum=False),))
    """
    spec = zarr3_spec((1,), dtype=dtype, chunks=(1,), filters=filters, compressors=compressors,
                      serializer=serializer, zarr_format=3)
    meta = build_metadata(spec)
    assert isinstance(meta, ArrayMetadataV3)
    return tuple(meta.filters or ()), meta.serializer, tuple(meta.compressors)


def chunk_encoding_v2(*, filters: Any = "auto", compressor: Any = "auto", dtype: Any = "float64") -> tuple[Any, Any]:
    """The filters and compressor a v2 array of ``dtype`` gets from ``filters=`` and
    ``compressors=`` of :func:`zarrkit.create_array` (``'auto'``: the defaults).

    Returns
    -------
    tuple
        ``(filters, compressor)`` as the array's metadata has them (None: none).
    """
    spec = zarr3_spec((1,), dtype=dtype, chunks=(1,), filters=filters, compressors=compressor, zarr_format=2)
    meta = build_metadata(spec)
    assert isinstance(meta, ArrayMetadataV2)
    return meta.filters, meta.compressor

