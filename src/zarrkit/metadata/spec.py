"""What a new array is to be: :class:`ArraySpec`, the arguments of either API generation in
one vocabulary.

zarr-python 2's ``create(shape, chunks, dtype, compressor, ...)`` with its h5py-style and
legacy keywords, and zarr-python 3's ``create_array(shape=, shards=, compressors=,
serializer=, ...)`` are each normalised once into an :class:`ArraySpec`
(:func:`classic_spec`, :func:`zarr3_spec`); :func:`~zarrkit.metadata.build.build_metadata`
makes the metadata object from it.  Nothing here touches a store.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numcodecs
import numpy as np

from .._warnings import warn
from ..codecs.registry import get_codec
from ..codecs.zstd import ZstdCodec
from ..config import config
from ..config import config as _settings  # the name zarr3_spec's config= argument shadows
from ..errors import MetadataError, ZarrkitError
from .codec_args import check_codec_argument, to_v2_codec
from .normalize import ZARR3_CHUNK_BASE, guess_chunks, normalize_shape
from .v3 import ChunkKeyEncoding
from .zdtypes import VariableLengthBytes, VariableLengthUTF8, ZDType

__all__ = [
    "ArraySpec", "AUTO", "classic_spec", "zarr3_spec", "check_codec_arguments", "legacy_format",
    "zarr_format_arg", "pop_h5py_compression", "pop_h5py_fillvalue", "reject_unknown", "check_create_mode",
    "chunk_key_encoding_arg", "default_compressor", "dtype_arg", "h5py_compressor", "array_config_arg",
    "with_array_config", "resolve_order", "ShapeRequiredError", "FormatArgumentError", "v2_compressor_arg", "v2_separator_arg", "ARRAY_CONFIG_KEYS",
]

class ShapeRequiredError(ZarrkitError, TypeError, ValueError):
    """A creation function was given no shape (nor data to take it from): a ``TypeError`` for
    the missing argument, and a ``ValueError`` as zarr-python 3 raises."""


class FormatArgumentError(ZarrkitError, TypeError, ValueError):
    """An argument the array's Zarr format has no place for (``shards=`` for a
    ``zarr_format=2`` array): a ``TypeError`` for the argument, and a ``ValueError`` as
    zarr-python 3 raises."""


#: ``compressors=``'s "not given": ``compressor`` says (zarr-python 3's ``'auto'``)
AUTO = "auto"

#: the sentences zarr-python 3 ends its refusals of v3-only arguments for a v2 array with,
#: by function: ``create_array``'s, then ``create``'s (''{}'': the value given)
_V2_REFUSALS = {
    "create_array": {
        "shards": "Zarr format 2 arrays can only be created with `shard_shape` set to `None`. "
                  "Got `shard_shape={!r}` instead.",
        "serializer": "Zarr format 2 arrays do not support `serializer`.",
        "dimension_names": "Zarr format 2 arrays do not support dimension names.",
    },
    "create": {
        "codecs": "codecs cannot be used for arrays with zarr_format 2. Use filters and compressor instead.",
    },
}


def v3_only_arguments_error(fn: str, given: dict[str, Any]) -> FormatArgumentError:
    """The error refusing the zarr-format-3 arguments ``given`` (name: value) to ``fn``'s
    ``zarr_format=2`` array: each named with its value, and zarr-python 3's sentence for it."""
    refusals = _V2_REFUSALS.get(fn, {})
    parts = []
    for name, value in given.items():
        sentence = refusals.get(name, f"{name} cannot be used for arrays with zarr_format 2.")
        parts.append(f"{name}={value!r} needs zarr_format=3 ({sentence.format(value)})")
    return FormatArgumentError(f"{fn}(zarr_format=2): " + "; ".join(parts))


@dataclass(frozen=True)
class ArraySpec:
    """A new array's description, whichever API generation's arguments it came from.

    The fields are the creation arguments as :func:`~zarrkit.metadata.build.build_metadata`
    takes them; those of zarr-python 3 alone (``shards`` ... ``compressors``) are ``None``
    (``compressors``: :data:`AUTO`) when not given, and refused for ``zarr_format=2``.
    """

    shape: Any
    chunks: Any = True
    dtype: Any = None
    zarr_format: int = 3
    fill_value: Any = None
    order: str = "C"
    compressor: Any = "default"
    filters: Any = None
    object_codec: Any = None
    dimension_separator: str | None = None
    attributes: dict[str, Any] | None = None
    shards: Any = None
    dimension_names: Any = None
    codecs: Any = None
    chunk_key_encoding: Any = None
    serializer: Any = None
    compressors: Any = AUTO
    #: the order reads of the new handle return where it is not the stored one (a v3 array's
    #: ``config={'order': ...}``: see :func:`resolve_order`); nothing of it is stored
    read_order: str | None = None

    def zarr3_options(self) -> dict[str, Any]:
        """The zarr-python 3 arguments given, by name."""
        options = {
            "shards": self.shards, "dimension_names": self.dimension_names, "codecs": self.codecs,
            "chunk_key_encoding": self.chunk_key_encoding, "serializer": self.serializer,
        }
        given = {k: v for k, v in options.items() if v is not None}
        if not _is_auto(self.compressors):
            given["compressors"] = self.compressors
        return given


def _is_auto(value: Any) -> bool:
    return isinstance(value, str) and value == AUTO


def dtype_arg(dtype: Any) -> Any:
    """A creation function's ``dtype=`` as NumPy (or the string forms of variable-length
    strings and bytes) takes it: a ``zarrkit.dtype`` object becomes its NumPy dtype."""
    if isinstance(dtype, VariableLengthUTF8):
        return "str"
    if isinstance(dtype, VariableLengthBytes):
        return "bytes"
    if isinstance(dtype, ZDType):
        return dtype.to_native_dtype()
    if isinstance(dtype, str) and dtype.lstrip("<>=|").startswith("T"):  # StringDType's code ('T')
        try:
            dtype = np.dtype(dtype)
        except (TypeError, ValueError):
            return dtype
    if isinstance(dtype, np.dtype) and dtype.kind == "T":  # NumPy 2's StringDType
        return "str"
    return dtype


def chunk_key_encoding_arg(value: Any) -> ChunkKeyEncoding:
    """A creation function's ``chunk_key_encoding=``: None (the default encoding), an object,
    its JSON form, or zarr-python 3's ``{"name": ..., "separator": ...}``."""
    if value is None:
        return ChunkKeyEncoding()
    if isinstance(value, ChunkKeyEncoding):
        return value
    if isinstance(value, tuple) and len(value) == 2:  # zarr-python 3's create(): (name, separator)
        value = {"name": value[0], "separator": value[1]}
    if isinstance(value, dict) and "configuration" not in value and set(value) <= {"name", "separator"}:
        value = {"name": value.get("name"), "configuration": {k: v for k, v in value.items() if k == "separator"}}
    return ChunkKeyEncoding.from_json(value, "chunk_key_encoding")


def v2_compressor_arg(compressors: Any) -> Any:
    """``compressors=`` of a ``zarr_format=2`` array as its one compressor: a codec, a list of
    at most one, or None/empty (no compression); ``'auto'`` stays the default compressor."""
    if _is_auto(compressors):
        return "default"
    if isinstance(compressors, (list, tuple)):
        if len(compressors) > 1:
            raise ValueError(f"compressors: a zarr_format=2 array takes at most one, got {len(compressors)}")
        compressors = compressors[0] if compressors else None
    return None if compressors is None else to_v2_codec(compressors, "compressors")


def v2_separator_arg(chunk_key_encoding: Any, dimension_separator: str | None = None) -> str | None:
    """``chunk_key_encoding=`` of a ``zarr_format=2`` array as its dimension separator: only
    the ``'v2'`` encoding is one (``{"name": "v2", "separator": "/"}``)."""
    if chunk_key_encoding is None:
        return dimension_separator
    encoding = chunk_key_encoding_arg(chunk_key_encoding)
    if encoding.name != "v2":
        raise ValueError(
            f"chunk_key_encoding: a zarr_format=2 array's chunk keys are the 'v2' encoding's, got "
            f"{encoding.name!r} (any other chunk_key_encoding cannot be used for arrays with zarr_format 2. "
            "Use dimension_separator instead.)"
        )
    if dimension_separator not in (None, encoding.separator):
        raise ValueError(
            f"chunk_key_encoding separator {encoding.separator!r} contradicts dimension_separator={dimension_separator!r}"
        )
    return str(encoding.separator)


def default_compressor() -> Any:
    """The compressor of new v2 arrays when none is given: ``config.default_compressor`` (which
    zarr-python 2 code sets as ``zarrkit.storage.default_compressor``)."""
    return config.default_compressor


def h5py_compressor(compression: Any, compression_opts: Any) -> Any:
    """Translate h5py's ``compression=``/``compression_opts=`` into a numcodecs compressor.

    ``'gzip'`` is HDF5's deflate filter, i.e. a zlib stream: it maps to ``Zlib``.
    """
    if compression is None or compression == "none":
        return None
    if compression == "default":
        return default_compressor()
    if not isinstance(compression, str):
        return compression
    codec_id = "zlib" if compression == "gzip" else compression
    if isinstance(compression_opts, dict):
        return get_codec({"id": codec_id, **compression_opts}, "compression")
    if compression_opts is None:
        return get_codec({"id": codec_id}, "compression")
    if codec_id in ("zlib", "bz2", "gzip"):
        return get_codec({"id": codec_id, "level": compression_opts}, "compression")
    if codec_id == "blosc" and isinstance(compression_opts, (list, tuple)):
        return numcodecs.Blosc(*compression_opts)
    raise ValueError(
        f"compression_opts {compression_opts!r} is not understood for compression {compression!r}"
    )


#: the words a codec argument may be instead of codecs: its default, and zarr-python 2's "none"
_CODEC_WORDS = {
    "compressor": ("default", "auto", "none"), "compressors": ("default", "auto", "none"),
    "serializer": ("auto",), "filters": (), "codecs": (), "object_codec": (),
}


def check_codec_arguments(**given: Any) -> None:
    """Check, as they enter, that the codec arguments given by name (``compressor=``,
    ``compressors=``, ``filters=``, ``serializer=``, ``codecs=``, ``object_codec=``) are codecs
    in one of their accepted forms, so that a mistake is named as the argument it was given
    as, before anything else.  Which codecs a format knows is checked when the metadata is
    built."""
    for name, value in given.items():
        check_codec_argument(value, name, many=name not in ("compressor", "serializer", "object_codec"),
                             words=_CODEC_WORDS[name])


def zarr_format_arg(zarr_format: Any) -> int:
    """``zarr_format=`` checked, ``zarrkit.config.zarr_format`` when not given."""
    zarr_format = config.zarr_format if zarr_format is None else zarr_format
    if zarr_format not in (2, 3):
        raise MetadataError(f"zarr_format must be 2 or 3, got {zarr_format!r} (Invalid value for 'zarr_format'. "
                            f"Expected 2, 3, or None. Got {str(zarr_format)!r}.)")
    return int(zarr_format)


def check_create_mode(mode: str | None) -> None:
    """zarr-python 3's creation functions take a ``mode``; those that create an array refuse
    the reading ones."""
    if mode not in (None, "w", "w-", "x", "a"):
        reading = " (a read-only mode)" if mode == "r" else ""
        raise ValueError(f"mode must be 'w', 'w-', 'x' or 'a' to create an array, got {mode!r}{reading}")


def pop_h5py_compression(compressor: Any, kwargs: dict[str, Any]) -> Any:
    """h5py's ``compression=``/``compression_opts=``; an explicit ``compressor=`` wins, with a
    warning that they are ignored (as zarr-python 2 does)."""
    if "compression" in kwargs or "compression_opts" in kwargs:
        compression = kwargs.pop("compression", "default")
        opts = kwargs.pop("compression_opts", None)
        if not (isinstance(compressor, str) and compressor == "default"):
            warn(
                f"compressor={compressor!r} is given: compression={compression!r} and "
                f"compression_opts={opts!r} are ignored",
                UserWarning,
            )
            return compressor
        return h5py_compressor(compression, opts)
    return compressor


def pop_h5py_fillvalue(fill_value: Any, kwargs: dict[str, Any], default: Any) -> Any:
    """h5py's ``fillvalue=`` spelling of ``fill_value=`` (zarr-python 2 takes both)."""
    if "fillvalue" not in kwargs:
        return fill_value
    value = kwargs.pop("fillvalue")
    if fill_value is not default and fill_value != value:
        raise ValueError(f"fillvalue={value!r} contradicts fill_value={fill_value!r}")
    return value


def legacy_format(kwargs: dict[str, Any], zarr_format: int | None, fn: str) -> int | None:
    """Take zarr-python 2.18's keywords out of ``kwargs``: ``zarr_version`` names the format,
    ``storage_transformers`` may only be empty (v3 sharding is ``shards=``), ``meta_array`` and
    ``partial_decompress`` choose buffers and read strategies zarrkit picks itself."""
    version = kwargs.pop("zarr_version", None)
    transformers = kwargs.pop("storage_transformers", None)
    if transformers:
        raise ValueError(
            f"{fn}(): storage_transformers are not supported, got {transformers!r}; "
            "for sharding give shards= to create_array"
        )
    kwargs.pop("meta_array", None)
    kwargs.pop("partial_decompress", None)
    if version is None:
        return zarr_format
    if version not in (2, 3):
        raise ValueError(f"{fn}(): zarr_version must be 2 or 3, got {version!r}")
    if zarr_format is not None and zarr_format != version:
        raise ValueError(f"{fn}(): zarr_version={version!r} contradicts zarr_format={zarr_format!r}")
    return int(version)


#: h5py ``create_dataset`` options with no Zarr meaning: ignored with a warning, as zarr-python
#: 2 does, so h5py code runs; any other unknown keyword is an error (a typo is not ignored).
_H5PY_IGNORED = frozenset({
    "shuffle", "fletcher32", "maxshape", "scaleoffset", "track_times", "track_order",
    "external", "allow_unknown_filter", "rdcc_nbytes", "rdcc_w0", "rdcc_nslots",
})


def reject_unknown(kwargs: dict[str, Any], fn: str) -> None:
    """Refuse the keywords left in ``kwargs`` (a ``TypeError``), but for h5py's options with no
    Zarr meaning, ignored with a warning."""
    kwargs.pop("storage_options", None)
    for key in sorted(_H5PY_IGNORED & kwargs.keys()):
        kwargs.pop(key)
        warn(
            f"{fn}(): ignoring keyword argument {key!r} (an h5py option with no Zarr equivalent)",
            UserWarning,
        )
    if len(kwargs) == 1:
        raise TypeError(f"{fn}() got an unexpected keyword argument {next(iter(kwargs))!r}")
    if kwargs:
        raise TypeError(f"{fn}() got unexpected keyword arguments {sorted(kwargs)}")


def classic_spec(
    shape: Any, chunks: Any = True, dtype: Any = None, compressor: Any = "default", fill_value: Any = 0,
    order: str | None = None, filters: Any = None, object_codec: Any = None, dimension_separator: str | None = None,
    zarr_format: int | None = None, *, attributes: dict[str, Any] | None = None, mode: str | None = None,
    shards: Any = None, dimension_names: Any = None, codecs: Any = None, chunk_key_encoding: Any = None,
    serializer: Any = None, compressors: Any = AUTO, kwargs: dict[str, Any] | None = None, fn: str = "create",
    config_order: str | None = None,
) -> ArraySpec:
    """The :class:`ArraySpec` of zarr-python 2's ``create`` arguments (with zarr-python 3's
    keywords it also takes); ``kwargs`` holds the legacy and h5py keywords, taken out or
    refused (a ``TypeError`` names ``fn``)."""
    kwargs = {} if kwargs is None else kwargs
    zarr_format = zarr_format_arg(legacy_format(kwargs, zarr_format, fn))
    if kwargs.get("chunk_shape") is not None:  # zarr-python 3's other spelling of chunks
        chunk_shape = kwargs.pop("chunk_shape")
        if chunks is not True and chunks is not None and chunks != chunk_shape:
            raise ValueError(f"chunk_shape={chunk_shape!r} contradicts chunks={chunks!r}, two names of the "
                             "chunk shape. Only one of chunk_shape or chunks can be provided.")
        chunks = chunk_shape
    kwargs.pop("chunk_shape", None)
    compressor = pop_h5py_compression(compressor, kwargs)
    check_codec_arguments(
        compressor=compressor, filters=filters, object_codec=object_codec, serializer=serializer, codecs=codecs,
        **({} if _is_auto(compressors) else {"compressors": compressors}),
    )
    fill_value = pop_h5py_fillvalue(fill_value, kwargs, 0)
    check_create_mode(mode)
    reject_unknown(kwargs, fn)
    order, read_order = resolve_order(order, config_order, zarr_format)
    return ArraySpec(
        shape=shape, chunks=chunks, dtype=dtype, zarr_format=zarr_format, fill_value=fill_value, order=order,
        read_order=read_order,
        compressor=compressor, filters=filters, object_codec=object_codec, dimension_separator=dimension_separator,
        attributes=attributes, shards=shards, dimension_names=dimension_names, codecs=codecs,
        chunk_key_encoding=chunk_key_encoding, serializer=serializer, compressors=compressors,
    )


#: the settings of zarr-python 3's ``config=`` (``ArrayConfig``'s fields)
ARRAY_CONFIG_KEYS = (
    "order", "write_empty_chunks", "read_missing_chunks", "sharding_coalesce_max_gap_bytes",
    "sharding_coalesce_max_bytes",
)


def array_config_arg(config: Any) -> dict[str, Any]:
    """``config=`` of zarr-python 3's creation and opening functions as a dict of the settings
    that choose something here, ``order``, ``write_empty_chunks`` and ``read_missing_chunks``:
    from a mapping, or an object with those attributes (``zarrkit.core.views.ArrayConfig``).

    ``sharding_coalesce_max_gap_bytes`` and ``sharding_coalesce_max_bytes`` are accepted and
    dropped (how a shard's chunks are fetched together is the engine's choice; what is read
    is the same).

    Raises
    ------
    TypeError
        A key that is no setting (all such keys named), or a ``config`` of another type.
    ValueError
        A setting of the wrong type.
    """
    if config is None:
        return {}
    if isinstance(config, Mapping):
        unknown = sorted(set(config) - set(ARRAY_CONFIG_KEYS))
        if unknown:
            raise TypeError(f"Unknown array config keys: {unknown}. Valid keys are {list(ARRAY_CONFIG_KEYS)}.")
        settings = dict(config)
    elif hasattr(config, "order") and hasattr(config, "write_empty_chunks"):
        settings = {k: getattr(config, k) for k in ARRAY_CONFIG_KEYS if hasattr(config, k)}
    else:
        raise TypeError(f"config: expected a dict or ArrayConfig, got {type(config).__name__}")
    for name in ("write_empty_chunks", "read_missing_chunks"):
        value = settings.get(name)
        if value is not None and not isinstance(value, (bool, np.bool_)):
            raise ValueError(f"config: {name}: Expected instance of bool, got {value!r}")
    for name in ("sharding_coalesce_max_gap_bytes", "sharding_coalesce_max_bytes"):
        value = settings.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0):
            raise ValueError(f"config: {name}: expected a non-negative int, got {value!r}")
    settings.pop("sharding_coalesce_max_gap_bytes", None)
    settings.pop("sharding_coalesce_max_bytes", None)
    order = settings.get("order")
    if order is not None and order not in ("C", "F"):
        raise ValueError(f"config: order must be 'C' or 'F', got {order!r}")
    return settings


def with_array_config(kwargs: dict[str, Any]) -> dict[str, Any]:
    """zarr-python 2 style creation keywords with zarr-python 3's ``config=`` taken out: its
    ``write_empty_chunks`` fills in that keyword when not given, its ``order`` is kept as
    ``config_order`` (see :func:`resolve_order`), its ``read_missing_chunks`` as that keyword."""
    kwargs = dict(kwargs)
    array_config = array_config_arg(kwargs.pop("config", None))
    if "order" in array_config:
        kwargs["config_order"] = array_config["order"]
    if array_config.get("read_missing_chunks") is not None:
        kwargs["read_missing_chunks"] = array_config["read_missing_chunks"]
    if "write_empty_chunks" in array_config and kwargs.get("write_empty_chunks") is None:
        kwargs["write_empty_chunks"] = array_config["write_empty_chunks"]
    return kwargs


def resolve_order(order: str | None, config_order: str | None, zarr_format: int) -> tuple[str, str | None]:
    """The memory order of a new array: the order stored and the order reads return where it
    is not that one (None: the stored one, or for v3 ``zarrkit.config.order``).

    Zarr v2 stores it: ``order`` when given, else ``config={'order': ...}``'s (``config_order``),
    else ``zarrkit.config.order``.  Zarr v3 stores none: its chunks are C-ordered and reads
    return ``config_order`` (else ``zarrkit.config.order``) -- ``order`` is ignored there with
    a ``RuntimeWarning``, as zarr-python 3 does."""
    if zarr_format == 2:
        return order or config_order or _settings.order, None
    if order is not None:
        warn(
            "The `order` keyword argument has no effect for Zarr format 3 arrays: they store no "
            f"order; config={{'order': {order!r}}} makes reads return that order "
            "(zarrkit.config.order sets the default)",
            RuntimeWarning,
        )
    return "C", config_order


def zarr3_chunk_guess(shape: Any, dtype: Any) -> Any:
    """zarr-python 3's guess of a chunk shape (larger chunks than zarr-python 2's), or True
    (the guess of the metadata builder) for a data type of no fixed size."""
    try:
        itemsize = np.dtype(dtype_arg(dtype)).itemsize
    except TypeError:
        itemsize = 0  # a string dtype ('str'), or one refused with its reason later
    return guess_chunks(normalize_shape(shape), itemsize, ZARR3_CHUNK_BASE) if itemsize else True


def zarr3_spec(
    shape: Any, *, dtype: Any = "float64", chunks: Any = "auto", shards: Any = None, filters: Any = None,
    compressors: Any = AUTO, serializer: Any = AUTO, fill_value: Any = None, order: str | None = None,
    zarr_format: int | None = None, attributes: dict[str, Any] | None = None, chunk_key_encoding: Any = None,
    dimension_names: Any = None, codecs: Any = None, config: dict[str, Any] | None = None,
) -> ArraySpec:
    """The :class:`ArraySpec` of zarr-python 3's ``create_array`` arguments; ``config`` is its
    per-array settings (``order`` is taken from it when not given, then from
    ``zarrkit.config.order``)."""
    zarr_format = zarr_format_arg(zarr_format)
    if _is_auto(filters):  # the data type's default filters (none; a v2 string array's object codec)
        filters = None
    check_codec_arguments(compressors=compressors, filters=filters, serializer=serializer, codecs=codecs)
    array_config = array_config_arg(config)
    order, read_order = resolve_order(order, array_config.get("order"), zarr_format)
    if codecs is not None and (filters is not None or shards is not None or not _is_auto(compressors)
                               or not _is_auto(serializer)):
        raise TypeError("give either codecs= or filters=/serializer=/compressors=/shards=, not both")
    compressor: Any = "default" if _is_auto(compressors) else compressors
    dimension_separator = None
    if zarr_format == 2:
        refused = {"shards": shards, "codecs": codecs, "serializer": None if _is_auto(serializer) else serializer,
                   "dimension_names": dimension_names}
        refused = {name: value for name, value in refused.items() if value is not None}
        if refused:
            raise v3_only_arguments_error("create_array", refused)
        compressor = v2_compressor_arg(compressors)  # errors name the argument given
        dimension_separator = v2_separator_arg(chunk_key_encoding)
        chunk_key_encoding, serializer = None, None
    if isinstance(chunks, str) and chunks == "auto":
        chunks = zarr3_chunk_guess(shape, dtype)
    elif isinstance(chunks, (list, tuple)) and len(chunks) != len(normalize_shape(shape)) \
            and not any(isinstance(c, (list, tuple)) for c in chunks):  # (rectilinear: checked with its edges)
        # (zarr-python 2's create took fewer and let the last dimensions whole; create_array does not)
        raise ValueError(f"chunks: {chunks!r} has {len(chunks)} dimension(s), shape {shape!r} has "
                         f"{len(normalize_shape(shape))}")
    if _is_auto(compressors) and zarr_format == 3 and codecs is None:
        compressor = [ZstdCodec(level=0, checksum=False)]  # zarr-python 3's default
    return ArraySpec(
        shape=shape, chunks=chunks, dtype=dtype, zarr_format=zarr_format, fill_value=fill_value, order=order,
        read_order=read_order,
        compressor=compressor, filters=filters, dimension_separator=dimension_separator, attributes=attributes,
        shards=shards, dimension_names=dimension_names, codecs=codecs, chunk_key_encoding=chunk_key_encoding,
        serializer=serializer if zarr_format == 2 or serializer not in (AUTO, None) else AUTO,
    )
