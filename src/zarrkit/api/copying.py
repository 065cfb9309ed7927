"""Copying between stores and hierarchies: ``copy_store`` (raw keys), ``copy`` and ``copy_all``
(arrays and groups, to and from h5py files too), with zarr-python 2's ``log=``, ``dry_run``
and ``if_exists`` arguments."""

from __future__ import annotations

import functools
import json
import math
import os
import re
from collections.abc import Callable
from typing import Any, Self, cast

import numpy as np

from ..config import config
from ..core.array import Array
from ..core.creation import check_no_overlap
from ..core.group import Group
from ..errors import CopyError, ZarrkitError
from ..metadata import io
from ..metadata.dtypes import is_bytes_dtype
from ..metadata.normalize import normalize_path
from ..storage.base import Store
from .streaming import _is_h5py, _open_store, creation_kwargs, stream_copy

__all__ = ["CopyError", "copy", "copy_all", "copy_store"]


# -- logging (zarr-python 2's ``log=`` argument) ---------------------------------------------------
class _LogWriter:
    def __init__(self, log: Any):
        self.log_func: Callable[..., Any] | None = None
        self.log_file: Any = None
        self.needs_closing = False
        if log is None:
            pass
        elif callable(log):
            self.log_func = log
        elif isinstance(log, (str, os.PathLike)):
            self.log_file = open(log, mode="w")  # noqa: SIM115 - closed in __exit__
            self.needs_closing = True
        elif hasattr(log, "write"):
            self.log_file = log
        else:
            raise TypeError(f"log must be a callable function, file path or file-like object, found {log!r}")

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *args: object) -> None:
        if self.log_file is not None and self.needs_closing:
            self.log_file.close()

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        if self.log_file is not None:
            print(*args, file=self.log_file, **kwargs)
            if hasattr(self.log_file, "flush"):
                self.log_file.flush()
        elif self.log_func is not None:
            self.log_func(*args, **kwargs)


def _log_copy_summary(log: _LogWriter, dry_run: bool, n_copied: int, n_skipped: int, n_bytes_copied: int) -> None:
    message = "dry run: " if dry_run else "all done: "
    message += f"{n_copied:,} copied, {n_skipped:,} skipped"
    if not dry_run:
        message += f", {n_bytes_copied:,} bytes copied"
    log(message)


def _buffer_size(v: Any) -> int:
    return memoryview(v).nbytes


# -- copy_store ------------------------------------------------------------------------------------
def copy_store(
    source: Any,
    dest: Any,
    source_path: str = "",
    dest_path: str = "",
    excludes: Any = None,
    includes: Any = None,
    flags: int = 0,
    if_exists: str = "raise",
    dry_run: bool = False,
    log: Any = None,
) -> tuple[int, int, int]:
    """Copy the keys of one store to another, value by value, without decoding anything.

    The fastest way to copy a hierarchy between stores when nothing is to change (chunks,
    compression and format stay as they are).

    Parameters
    ----------
    source, dest : Store or MutableMapping
        Where to copy from and to (paths are opened as stores and closed again).
    source_path, dest_path : str, optional
        Copy only the keys below ``source_path``, to below ``dest_path``.
    excludes, includes : str or list of str, optional
        Regular expressions: keys matching one of ``excludes`` are skipped unless they also
        match one of ``includes``.
    flags : int, optional
        Regular expression flags (``re.IGNORECASE``, ...).
    if_exists : {'raise', 'replace', 'skip'}, optional
        What to do with a key that already exists in ``dest``.
    dry_run : bool, optional
        Only log and count what would be copied.
    log : callable, file path or file-like object, optional
        Where to write one line per key.

    Returns
    -------
    n_copied : int
        Number of keys copied.
    n_skipped : int
        Number of keys skipped.
    n_bytes_copied : int
        Number of bytes copied.

    Examples
    --------
    >>> import zarrkit
    >>> from zarrkit import copy_store
    >>> source = {}
    >>> g = zarrkit.group(source, zarr_format=2)
    >>> _ = g.array('foo/bar', [1.0, 2.0, 3.0, 4.0], chunks=2)
    >>> dest = {}
    >>> copy_store(source, dest, log=print)
    copy .zattrs
    copy .zgroup
    copy foo/.zattrs
    copy foo/.zgroup
    copy foo/bar/.zarray
    copy foo/bar/.zattrs
    copy foo/bar/0
    copy foo/bar/1
    all done: 8 copied, 0 skipped, ... bytes copied
    (8, 0, ...)
    >>> zarrkit.open_array(dest, path='foo/bar', mode='r')[:]
    array([1., 2., 3., 4.])
    """
    source_path = normalize_path(source_path)
    dest_path = normalize_path(dest_path)
    if source_path:
        source_path += "/"
    if dest_path:
        dest_path += "/"
    excludes = [] if excludes is None else [excludes] if isinstance(excludes, str) else list(excludes)
    includes = [] if includes is None else [includes] if isinstance(includes, str) else list(includes)
    exclude_res = [re.compile(e, flags) for e in excludes]
    include_res = [re.compile(i, flags) for i in includes]
    valid = ["raise", "replace", "skip"]
    if if_exists not in valid:
        raise ValueError(f"if_exists must be one of {valid!r}; found {if_exists!r}")

    src, close_src = (_open_store(source, "r") if isinstance(source, (str, os.PathLike)) else (source, False))
    dst, close_dst = (_open_store(dest, "a") if isinstance(dest, (str, os.PathLike)) else (dest, False))
    n_copied = n_skipped = n_bytes_copied = 0
    try:
        with _LogWriter(log) as logger:
            if isinstance(src, Store):
                keys = sorted(src.list_prefix(source_path))
            else:
                keys = sorted(k for k in src if k.startswith(source_path))
            for source_key in keys:
                if any(p.search(source_key) for p in exclude_res) and not any(
                    p.search(source_key) for p in include_res
                ):
                    continue
                dest_key = dest_path + source_key[len(source_path):]
                descr = source_key if dest_key == source_key else f"{source_key} -> {dest_key}"
                do_copy = True
                if if_exists != "replace":
                    exists = dst.exists(dest_key) if isinstance(dst, Store) else dest_key in dst
                    if exists:
                        if if_exists == "raise":
                            raise CopyError(f"key {dest_key!r} exists in destination")
                        do_copy = False
                if do_copy:
                    logger(f"copy {descr}")
                    if not dry_run:
                        data = src[source_key]
                        n_bytes_copied += _buffer_size(data)
                        dst[dest_key] = data
                    n_copied += 1
                else:
                    logger(f"skip {descr}")
                    n_skipped += 1
            _log_copy_summary(logger, dry_run, n_copied, n_skipped, n_bytes_copied)
    finally:
        if close_src:
            src.close()
        if close_dst:
            dst.close()
    return n_copied, n_skipped, n_bytes_copied


# -- copy / copy_all -------------------------------------------------------------------------------
def _check_dest_is_group(dest: Any) -> None:
    if not hasattr(dest, "create_dataset"):
        raise ValueError(f"dest must be a group, got {dest!r}")


def _members(group: Any) -> list[str]:
    return list(group.keys()) if hasattr(group, "keys") else list(group)


def _json_value(v: Any) -> Any:
    """Attribute values as JSON can hold them (h5py gives NumPy scalars and arrays, bytes,
    ``h5py.Empty``)."""
    if isinstance(v, np.ndarray):
        v = v.tolist()
    elif isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, bytes):
        return v.decode("utf-8", errors="replace")
    if isinstance(v, (list, tuple)):
        return [_json_value(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _json_value(x) for k, x in v.items()}
    if isinstance(v, complex):
        return [v.real, v.imag]
    if type(v).__name__ == "Empty" and _is_h5py(v):
        return None
    return v


def _set_h5py_attrs(obj: Any, attrs: dict[str, Any]) -> None:
    """Write JSON attributes to an HDF5 object; what HDF5 cannot hold (objects, null, mixed
    lists) is written as its JSON text."""
    for k, v in attrs.items():
        try:
            obj.attrs[k] = v
        except (TypeError, ValueError):
            obj.attrs[k] = json.dumps(v)


def _attrs_dict(obj: Any) -> dict[str, Any]:
    attrs = obj.attrs
    if hasattr(attrs, "asdict"):
        # obj is any array or group (zarrkit's, h5py's): attributes with asdict are zarrkit's
        return cast(dict[str, Any], attrs.asdict())
    return {str(k): _json_value(v) for k, v in attrs.items()}


def copy(
    source: Any,
    dest: Any,
    name: str | None = None,
    shallow: bool = False,
    without_attrs: bool = False,
    log: Any = None,
    if_exists: str = "raise",
    dry_run: bool = False,
    **create_kws: Any,
) -> tuple[int, int, int]:
    """Copy the ``source`` array or group into the ``dest`` group.

    Parameters
    ----------
    source : Array or Group (zarrkit or h5py)
        What to copy.
    dest : Group (zarrkit or h5py)
        The group to copy into.
    name : str, optional
        Name of the copy in ``dest`` (default: the source's name).
    shallow : bool, optional
        Copy only the immediate children of a source group.
    without_attrs : bool, optional
        Do not copy attributes.
    log : callable, file path or file-like object, optional
        Where to write one line per object.
    if_exists : {'raise', 'replace', 'skip', 'skip_initialized'}, optional
        What to do with an object that exists in ``dest``: raise :class:`CopyError`, replace
        it, skip it, or (arrays) skip it only if all its chunks are initialized.
    dry_run : bool, optional
        Only log and count what would be copied.
    **create_kws
        Passed to ``create_dataset`` in the destination (``chunks``, ``compressor``, ...);
        by default the source's chunks, codecs, order and fill value are kept.

    Returns
    -------
    n_copied : int
        Number of objects (arrays and groups) copied.
    n_skipped : int
        Number of objects skipped.
    n_bytes_copied : int
        Number of bytes of array data copied (uncompressed).

    Notes
    -----
    Data are copied one destination chunk (shard) at a time: memory use is bounded by a few
    chunks, whatever the size of the array.

    Sources and destinations may be h5py groups and datasets (``h5py.File`` included), as in
    zarr-python 2.  From HDF5, the chunks and fill value are kept, the compressor is zarrkit's
    default, and variable-length strings become ``str`` (UTF-8) or ``bytes`` (ASCII) arrays.
    To HDF5, datasets are gzip-compressed at level 1 with the source's chunks, ``str`` and
    ``bytes`` arrays become variable-length strings (HDF5 refuses NUL bytes in them), and
    attribute values HDF5 cannot hold (mappings, nulls) are written as their JSON text.  What
    HDF5 cannot store (other object arrays, ``datetime64``) raises :class:`CopyError` and
    leaves no dataset behind.

    Examples
    --------
    >>> import numpy as np, zarrkit
    >>> from zarrkit import copy
    >>> source = zarrkit.group(zarr_format=2)
    >>> foo = source.create_group('foo')
    >>> _ = foo.array('bar', np.arange(100), chunks=10)
    >>> dest = zarrkit.group(zarr_format=3)
    >>> copy(source['foo'], dest, log=print)
    copy /foo
    copy /foo/bar (100,) int64
    all done: 2 copied, 0 skipped, 800 bytes copied
    (2, 0, 800)
    >>> dest['foo/bar'][-3:]
    array([97, 98, 99])
    >>> copy(source['foo'], dest, if_exists='skip')
    (1, 1, 0)
    """
    _check_dest_is_group(dest)
    with _LogWriter(log) as logger:
        n_copied, n_skipped, n_bytes_copied = _copy(
            logger, source, dest, name=name, root=True, shallow=shallow, without_attrs=without_attrs,
            if_exists=if_exists, dry_run=dry_run, **create_kws,
        )
        _log_copy_summary(logger, dry_run, n_copied, n_skipped, n_bytes_copied)
    return n_copied, n_skipped, n_bytes_copied


def _h5py_string_kind(dtype: np.dtype) -> str | None:
    """``'str'`` (UTF-8) or ``'bytes'`` (ASCII) for h5py's variable-length strings, else None."""
    import h5py

    info = h5py.check_string_dtype(dtype)
    if info is None or info.length is not None:
        return None
    return "str" if info.encoding == "utf-8" else "bytes"


def _vlen_kind(src: Any) -> str | None:
    """``'str'`` or ``'bytes'`` for zarrkit's variable-length string and bytes arrays."""
    if not isinstance(src, Array) or src.dtype.kind != "O":
        return None
    if is_bytes_dtype(src.dtype):
        return "bytes"
    meta = src.metadata
    codec = meta.serializer if meta.zarr_format == 3 else (meta.filters or (None,))[0]
    cid = getattr(codec, "codec_id", None) or getattr(codec, "name", None)
    return "str" if cid == "vlen-utf8" else "bytes" if cid == "vlen-bytes" else None


def _create_like(source: Any, dest: Any, name: str, create_kws: dict[str, Any], attrs: dict[str, Any] | None) -> Any:
    """Create the array ``name`` in ``dest`` like ``source`` (zarrkit destinations get the
    attributes in the same metadata write)."""
    source_h5py = _is_h5py(source)
    dest_h5py = _is_h5py(dest)
    kws = dict(create_kws)
    if attrs and isinstance(dest, Group):
        kws.setdefault("attributes", attrs)
    if source_h5py and dest_h5py:
        # h5py -> h5py: the source's storage options by default
        kws.setdefault("chunks", source.chunks)
        kws.setdefault("compression", source.compression)
        kws.setdefault("compression_opts", source.compression_opts)
        kws.setdefault("shuffle", source.shuffle)
        kws.setdefault("fletcher32", source.fletcher32)
        kws.setdefault("fillvalue", source.fillvalue)
        return dest.create_dataset(name, shape=source.shape, dtype=kws.pop("dtype", source.dtype), **kws)
    if source_h5py:
        # h5py -> zarrkit: the source's chunks and fill value, zarrkit's default compressor;
        # HDF5 variable-length strings become str (UTF-8) or bytes (ASCII) arrays
        kws.setdefault("chunks", source.chunks or True)
        dtype = kws.pop("dtype", None)
        kind = _h5py_string_kind(source.dtype)
        if kind is not None:
            kws.setdefault("fill_value", "" if kind == "str" else b"")
            dtype = dtype or (str if kind == "str" else bytes)
        elif source.dtype.kind == "O" and dtype is None:
            raise CopyError(
                f"the HDF5 data type of {source.name} ({source.dtype!r}) has no Zarr equivalent; "
                "give dtype= to convert it"
            )
        else:
            kws.setdefault("fill_value", source.fillvalue)
            dtype = dtype or source.dtype
        return dest.create_dataset(name, shape=source.shape, dtype=dtype, **kws)
    if dest_h5py:
        # zarrkit -> h5py: HDF5's gzip at level 1 unless told otherwise (zarr-python 2's choice)
        import h5py

        scalar = source.shape == ()
        kws.setdefault("chunks", None if scalar else source.chunks)
        if not scalar:
            kws.setdefault("compression", "gzip")
            kws.setdefault("compression_opts", 1)
            kws.setdefault("shuffle", False)
        dtype = kws.pop("dtype", None)
        kind = _vlen_kind(source)
        if dtype is None:
            if kind is not None:
                dtype = h5py.string_dtype("utf-8" if kind == "str" else "ascii")
            elif source.dtype.kind == "O":
                raise CopyError(
                    f"the object array {source.name} has no HDF5 equivalent (only variable-length "
                    "strings and bytes have one)"
                )
            else:
                dtype = source.dtype
        if kind is None and source.dtype.kind != "O":
            kws.setdefault("fillvalue", source.fill_value)
        try:
            return dest.create_dataset(name, shape=source.shape, dtype=dtype, **kws)
        except (TypeError, ValueError) as exc:
            raise CopyError(f"cannot create an HDF5 dataset like {source.name} in {dest.name}: {exc}") from exc
    zarr_format = kws.pop("zarr_format", getattr(dest, "zarr_format", None) or config.zarr_format)
    kw = creation_kwargs(source, zarr_format, kws)
    return dest.create_dataset(name, zarr_format=zarr_format, **kw)


def _copy(
    log: _LogWriter,
    source: Any,
    dest: Any,
    name: str | None,
    root: bool,
    shallow: bool,
    without_attrs: bool,
    if_exists: str,
    dry_run: bool,
    **create_kws: Any,
) -> tuple[int, int, int]:
    # N.B. in a dry run ``dest`` may be None (a group that would have been created)
    dest_h5py = _is_h5py(dest)
    valid = ["raise", "replace", "skip", "skip_initialized"]
    if if_exists not in valid:
        raise ValueError(f"if_exists must be one of {valid!r}; found {if_exists!r}")
    if dest_h5py and if_exists == "skip_initialized":
        raise ValueError(f"{if_exists!r} can only be used when copying to zarr")
    if name is None:
        name = (source.name or "").split("/")[-1]
        if not name:
            raise TypeError(
                "source has no name, please provide the `name` parameter to indicate a name to copy to"
            )
    opts = (shallow, without_attrs, if_exists, dry_run, create_kws)
    return _copy_tree(log, [(lambda: source, dest, name, root)], opts)


def _copy_members(
    log: _LogWriter, source: Any, dest: Any, shallow: bool, without_attrs: bool, if_exists: str,
    dry_run: bool, create_kws: dict[str, Any],
) -> tuple[int, int, int]:
    """Copy every member of the group ``source`` into ``dest``; the totals of :func:`_copy`."""
    opts = (shallow, without_attrs, if_exists, dry_run, create_kws)
    return _copy_tree(log, _member_items(source, dest), opts)


def _member_items(source: Any, dest: Any) -> list[tuple[Callable[[], Any], Any, str, bool]]:
    # members are opened when their turn comes, not all at once
    return [(functools.partial(source.__getitem__, k), dest, k, False) for k in _members(source)]


def _copy_tree(
    log: _LogWriter, items: list[tuple[Callable[[], Any], Any, str, bool]], opts: tuple[Any, ...]
) -> tuple[int, int, int]:
    """Copy ``items`` (``(open source, dest group, name, is the copy's root)``) and every group
    member below them, parents before members, in member order.  The walk keeps its own stack:
    a hierarchy of any depth is copied without recursion."""
    shallow, without_attrs, if_exists, dry_run, create_kws = opts
    n_copied = n_skipped = n_bytes_copied = 0
    stack = list(reversed(items))
    while stack:
        get_source, dest, name, root = stack.pop()
        source = get_source()
        if hasattr(source, "shape"):
            c, s, b = _copy_array(log, source, dest, name, without_attrs, if_exists, dry_run, create_kws)
        elif not (root or not shallow):
            continue
        else:
            grp, c, s = _copy_group(log, source, dest, name, without_attrs, if_exists, dry_run)
            b = 0
            if c:
                stack.extend(reversed(_member_items(source, grp)))
        n_copied += c
        n_skipped += s
        n_bytes_copied += b
    return n_copied, n_skipped, n_bytes_copied


def _copy_group(
    log: _LogWriter, source: Any, dest: Any, name: str, without_attrs: bool, if_exists: str, dry_run: bool,
) -> tuple[Any, int, int]:
    """Create the copy of the group ``source`` (not its members); ``(the copy, copied,
    skipped)`` (in a dry run the copy is the existing group or None)."""
    dest_name = getattr(dest, "name", None) if dest is not None else None
    exists_array = dest is not None and name in dest and hasattr(dest[name], "shape")
    if exists_array:
        if if_exists == "raise":
            raise CopyError(f"an array {name!r} already exists in destination {dest_name!r}")
        if if_exists == "skip":
            log(f"skip {source.name}")
            return None, 0, 1
    log(f"copy {source.name}")
    grp: Any
    if not dry_run:
        if exists_array:
            _check_apart(source, dest, name)
            del dest[name]
        attrs = {} if without_attrs else _attrs_dict(source)
        if isinstance(dest, Group) and name not in dest:
            # the group and its attributes in one metadata write; its parent is ``dest``, so
            # there are no parents to look for (which, at every level of a deep hierarchy,
            # would cost the depth in reads)
            io.write_group_metadata(dest._store, dest._item_path(name), dest.zarr_format, attrs or None)
            grp = dest[name]
        else:
            grp = dest.require_group(name)
            if attrs and _is_h5py(dest):
                _set_h5py_attrs(grp, attrs)
            elif attrs:
                grp.attrs.update(attrs)
    else:
        grp = dest[name] if dest is not None and name in dest else None
    return grp, 1, 0


def _check_apart(source: Any, dest: Any, name: str) -> None:
    """Refuse to replace ``dest[name]`` with a copy of ``source`` when they overlap (deleting
    it would delete the source)."""
    if isinstance(source, (Array, Group)) and isinstance(dest, Group):
        check_no_overlap(source._store, source._path, dest._store, dest._item_path(name))


def _copy_array(
    log: _LogWriter, source: Any, dest: Any, name: str, without_attrs: bool, if_exists: str,
    dry_run: bool, create_kws: dict[str, Any],
) -> tuple[int, int, int]:
    """Copy one array (see :func:`_copy`); ``(copied, skipped, bytes copied)``."""
    dest_h5py = _is_h5py(dest)
    dest_name = getattr(dest, "name", None) if dest is not None else None
    exists = dest is not None and name in dest
    if exists:
        if if_exists == "raise":
            raise CopyError(f"an object {name!r} already exists in destination {dest_name!r}")
        skip = if_exists == "skip"
        if if_exists == "skip_initialized":
            ds = dest[name]
            skip = hasattr(ds, "nchunks_initialized") and ds.nchunks_initialized == ds.nchunks
        if skip:
            log(f"skip {source.name} {source.shape} {source.dtype}")
            return 0, 1, 0
    log(f"copy {source.name} {source.shape} {source.dtype}")
    if dry_run:
        return 1, 0, 0
    if exists:
        _check_apart(source, dest, name)
        del dest[name]
    attrs = {} if without_attrs else _attrs_dict(source)
    if dest_h5py:
        attrs.pop("filters", None)
    ds = _create_like(source, dest, name, create_kws, attrs)
    data = source
    if _is_h5py(source) and not dest_h5py and _h5py_string_kind(source.dtype) == "str":
        data = source.asstr()  # str, not the UTF-8 bytes h5py reads by default
    if _is_h5py(source) or dest_h5py:
        try:
            stream_copy(data, ds)
        except (TypeError, ValueError) as exc:
            if isinstance(exc, ZarrkitError):
                raise
            del dest[name]  # no half-copied dataset left behind
            raise CopyError(f"cannot copy {source.name} to {ds.name}: {exc}") from exc
    else:
        stream_copy(data, ds)
    if attrs and dest_h5py:
        _set_h5py_attrs(ds, attrs)
    elif attrs and not isinstance(dest, Group):
        ds.attrs.update(attrs)
    return 1, 0, math.prod(ds.shape) * np.dtype(ds.dtype).itemsize


def copy_all(
    source: Any,
    dest: Any,
    shallow: bool = False,
    without_attrs: bool = False,
    log: Any = None,
    if_exists: str = "raise",
    dry_run: bool = False,
    **create_kws: Any,
) -> tuple[int, int, int]:
    """Copy every member of the ``source`` group into the ``dest`` group (and the source
    group's attributes onto ``dest``).

    Parameters
    ----------
    source : Group (zarrkit or h5py)
        The group whose members are copied.
    dest : Group (zarrkit or h5py)
        The group to copy into.
    shallow, without_attrs, dry_run : optional
        As in :func:`copy`.
    log : optional
        As in :func:`copy`.
    if_exists : optional
        As in :func:`copy`.
    **create_kws
        Passed to ``create_dataset`` in the destination, as in :func:`copy`.

    Returns
    -------
    n_copied : int
        Number of objects (arrays and groups) copied.
    n_skipped : int
        Number of objects skipped.
    n_bytes_copied : int
        Number of bytes of array data copied (uncompressed).

    Raises
    ------
    CopyError
        An object exists in ``dest`` and ``if_exists='raise'``.

    Examples
    --------
    >>> import numpy as np, zarrkit
    >>> from zarrkit import copy_all
    >>> source = zarrkit.group(zarr_format=2)
    >>> source.attrs['title'] = 'demo'
    >>> _ = source.array('a', np.arange(10), chunks=5)
    >>> _ = source.create_group('g').zeros('b', shape=(4, 4), chunks=(2, 2))
    >>> dest = zarrkit.group(zarr_format=3)
    >>> copy_all(source, dest)
    (3, 0, 208)
    >>> sorted(dest), dest.attrs['title']
    (['a', 'g'], 'demo')
    >>> copy_all(source, dest, if_exists='skip', dry_run=True, log=print)
    skip /a (10,) int64
    copy /g
    skip /g/b (4, 4) float64
    dry run: 1 copied, 2 skipped
    (1, 2, 0)
    """
    _check_dest_is_group(dest)
    with _LogWriter(log) as logger:
        n_copied, n_skipped, n_bytes_copied = _copy_members(
            logger, source, dest, shallow, without_attrs, if_exists, dry_run, create_kws
        )
        if not dry_run and not without_attrs:
            attrs = _attrs_dict(source)
            if attrs and _is_h5py(dest):
                _set_h5py_attrs(dest, attrs)
            elif attrs:
                dest.attrs.update(attrs)
        _log_copy_summary(logger, dry_run, n_copied, n_skipped, n_bytes_copied)
    return n_copied, n_skipped, n_bytes_copied
