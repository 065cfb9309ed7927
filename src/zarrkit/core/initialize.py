"""Writing new nodes' metadata: ``init_array``/``init_group`` (zarr-python 2's
``zarr.storage`` functions) and the checks every creation function shares.

The keyword arguments zarr-python 2 and h5py code passes (``zarr_version``, ``compression``,
``fillvalue``, ...) are translated here, so :mod:`zarrkit.api` deals in one vocabulary.  Every
argument is validated before anything is deleted or written.
"""

from __future__ import annotations

import warnings
from typing import Any

from ..config import config
from ..errors import ContainsArrayError, ContainsGroupError
from ..metadata import io
from ..metadata.build import build_array_metadata, build_array_metadata_v3, h5py_compressor
from ..metadata.codec_args import check_codec_argument
from ..metadata.normalize import normalize_path
from ..metadata.v2 import ArrayMetadataV2
from ..metadata.v3 import ArrayMetadataV3
from ..storage.base import Store, describe_location
from ..storage.coerce import coerce_store

__all__ = ["init_array", "init_group", "require_parent_groups", "legacy_format", "check_codec_arguments"]

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


def _check_zarr_format(zarr_format: Any) -> int:
    zarr_format = config.zarr_format if zarr_format is None else zarr_format
    if zarr_format not in (2, 3):
        raise ValueError(f"zarr_format must be 2 or 3, got {zarr_format!r}")
    return int(zarr_format)


def require_parent_groups(
    store: Store, path: str, zarr_format: int = 2, overwrite: bool = False,
    chunk_store: Store | None = None,
) -> None:
    """Create the groups above ``path`` that don't exist (the v2 spec requires them; for v3
    they make the hierarchy discoverable, as zarr-python writes it).  An array above ``path``
    is an error, unless ``overwrite``: it is then removed and replaced by a group, as
    zarr-python 2 does."""
    parts = path.split("/")[:-1] if path else []
    for i in range(len(parts) + 1):
        parent = "/".join(parts[:i])
        if parent == path:
            break
        kind = io.node_kind(store, parent)
        if kind == "array":
            if not overwrite:
                raise ContainsArrayError(f"cannot create a node below the array at {parent!r}", parent)
            _clear_path(store, chunk_store, parent)
            kind = None
        if kind is None:
            io.write_group_metadata(store, parent, zarr_format)


def _clear_path(store: Store, chunk_store: Store | None, path: str) -> None:
    prefix = f"{path}/" if path else ""
    store.delete_prefix(prefix)
    if chunk_store is not None and chunk_store is not store:
        chunk_store.delete_prefix(prefix)


def _check_free(store: Store, path: str, overwrite: bool) -> None:
    if overwrite:
        return
    kind = io.node_kind(store, path)
    if kind == "array":
        raise ContainsArrayError(f"an array already exists at {describe_location(store, path)}", path)
    if kind == "group":
        raise ContainsGroupError(f"a group already exists at {describe_location(store, path)}", path)


def init_array(
    store: Any,
    shape: Any,
    chunks: Any = True,
    dtype: Any = None,
    compressor: Any = "default",
    fill_value: Any = None,
    order: str = "C",
    overwrite: bool = False,
    path: str | None = None,
    chunk_store: Any = None,
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
    zarr_format = _check_zarr_format(legacy_format(kwargs, zarr_format, "init_array") or 2)
    _reject_unknown(kwargs, "init_array")
    check_codec_arguments(compressor=compressor, filters=filters, object_codec=object_codec, **{
        k: v for k, v in (v3_options or {}).items() if k in ("compressors", "serializer", "codecs")
    })
    s = coerce_store(store)
    cs = None if chunk_store is None else coerce_store(chunk_store)
    path = normalize_path(path)
    if zarr_format == 3:
        opts = dict(v3_options or {})
        if dimension_separator not in (None, "/") and "chunk_key_encoding" not in opts:
            opts["chunk_key_encoding"] = {"name": "default", "configuration": {"separator": dimension_separator}}
        meta: ArrayMetadataV2 | ArrayMetadataV3 = build_array_metadata_v3(
            shape, chunks, dtype, opts.pop("compressors", compressor), fill_value, order, filters,
            object_codec=object_codec, **opts,
        )
    else:
        if v3_options:
            raise TypeError(f"{sorted(v3_options)} are only for zarr_format=3")
        meta = build_array_metadata(
            shape, chunks, dtype, compressor, fill_value, order, filters, object_codec,
            dimension_separator, s,
        )
    _check_free(s, path, overwrite)
    require_parent_groups(s, path, zarr_format, overwrite, cs)
    if overwrite:
        _clear_path(s, cs, path)
    io.write_array_metadata(s, path, meta, attributes=attributes or {})


def init_group(
    store: Any,
    overwrite: bool = False,
    path: str | None = None,
    chunk_store: Any = None,
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
    zarr_format = _check_zarr_format(legacy_format(kwargs, zarr_format, "init_group") or 2)
    _reject_unknown(kwargs, "init_group")
    s = coerce_store(store)
    cs = None if chunk_store is None else coerce_store(chunk_store)
    path = normalize_path(path)
    _check_free(s, path, overwrite)  # a group already there is in the way too, as in zarr 2
    require_parent_groups(s, path, zarr_format, overwrite, cs)
    if overwrite:
        _clear_path(s, cs, path)
    io.write_group_metadata(s, path, zarr_format, attributes)


def _pop_h5py_kwargs(compressor: Any, kwargs: dict[str, Any]) -> Any:
    """h5py's ``compression=``/``compression_opts=``; an explicit ``compressor=`` wins, with a
    warning that they are ignored (as zarr-python 2 does)."""
    if "compression" in kwargs or "compression_opts" in kwargs:
        compression = kwargs.pop("compression", "default")
        opts = kwargs.pop("compression_opts", None)
        if not (isinstance(compressor, str) and compressor == "default"):
            warnings.warn(
                f"compressor={compressor!r} is given: compression={compression!r} and "
                f"compression_opts={opts!r} are ignored",
                UserWarning,
                stacklevel=3,
            )
            return compressor
        return h5py_compressor(compression, opts)
    return compressor


def _pop_h5py_fillvalue(fill_value: Any, kwargs: dict[str, Any], default: Any) -> Any:
    """h5py's ``fillvalue=`` spelling of ``fill_value=`` (zarr-python 2 takes both)."""
    if "fillvalue" not in kwargs:
        return fill_value
    value = kwargs.pop("fillvalue")
    if fill_value is not default and fill_value != value:
        raise ValueError(f"fillvalue={value!r} contradicts fill_value={fill_value!r}")
    return value


_V3_OPTIONS = ("shards", "dimension_names", "codecs", "chunk_key_encoding", "serializer", "compressors")


def _pop_v3_options(kwargs: dict[str, Any]) -> dict[str, Any]:
    options = {k: kwargs.pop(k) for k in _V3_OPTIONS if k in kwargs}
    return {k: v for k, v in options.items() if v is not None or k == "compressors"}


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


def _reject_unknown(kwargs: dict[str, Any], fn: str) -> None:
    kwargs.pop("storage_options", None)
    for key in sorted(_H5PY_IGNORED & kwargs.keys()):
        kwargs.pop(key)
        warnings.warn(
            f"{fn}(): ignoring keyword argument {key!r} (an h5py option with no Zarr equivalent)",
            UserWarning,
            stacklevel=3,
        )
    if kwargs:
        raise TypeError(f"{fn}() got unexpected keyword argument(s) {sorted(kwargs)}")
