"""Writing xarray Datasets to Zarr with zarrkit: :func:`to_zarr`.

The layout is xarray's own (what ``Dataset.to_zarr`` writes with zarr-python): CF encoding by
xarray (:func:`xarray.conventions.encode_dataset_coordinates`,
:func:`xarray.conventions.encode_cf_variable`), dimension names in the ``_ARRAY_DIMENSIONS``
attribute (v2) or the ``dimension_names`` metadata (v3), ``_FillValue`` as the v2 array's
``fill_value`` and, for v3, as a base64 attribute next to the array's own ``fill_value``, and
consolidated metadata at the root.  So ``xr.open_zarr`` reads what this writes, and the
``zarrkit`` engine reads what xarray writes.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from .. import api
from .._warnings import warn
from ..api.creation import create_array
from ..core.array import Array
from ..core.group import Group
from ..core.staged import OutOfSight, write_out_of_sight
from ..dask import align_blocks
from ..errors import ContainsGroupError, GroupNotFoundError, ZarrUserWarning
from ..metadata import io
from ..metadata.consolidated import consolidate
from ..metadata.normalize import normalize_path
from ..storage.base import join_path
from ..storage.coerce import open_store
from ..storage.memory import MemoryStore
from .append import Growth, recover, rows_digest
from .backend import DIMENSION_KEY, ZarrkitDataStore, encode_fill_value

__all__ = ["finish_writes", "to_zarr", "write_dataset"]

_MODES = ("w", "w-", "a", "a-", "r+")
_SAFE_TO_DROP = {"source", "original_shape", "preferred_chunks"}
_VALID_ENCODINGS = {
    "chunks",
    "shards",
    "compressors",
    "compressor",
    "filters",
    "serializer",
    "write_empty_chunks",
    "chunk_key_encoding",
    "cache_metadata",
    "dimension_separator",
}


# -- CF encoding (xarray's, as its zarr backend applies it) ---------------------------------
def _encode_variable(var: Any, name: Hashable, zarr_format: int) -> Any:
    from xarray import coding, conventions

    coders = getattr(conventions, "ZARR_CODERS", None)
    if coders is not None and "coders" in inspect.signature(conventions.encode_cf_variable).parameters:
        var = conventions.encode_cf_variable(var, name=name, coders=coders)
    else:  # pragma: no cover - older xarray
        var = conventions.encode_cf_variable(var, name=name)
    ensure_not_object: Any = getattr(conventions, "ensure_dtype_not_object", None)
    if ensure_not_object is None:
        from xarray.backends.common import ensure_dtype_not_object as ensure_not_object
    var = ensure_not_object(var, name=name)
    if zarr_format == 3 and var.dtype.kind == "T":
        return var
    var = coding.strings.EncodedStringCoder(allows_unicode=True).encode(var, name=name)
    return coding.strings.ensure_fixed_length_bytes(var)


def _check_attributes(ds: Any) -> None:
    """Every attribute of ``ds`` and of its variables can be stored: one that cannot raises
    ``TypeError`` naming the variable and the attribute before anything is written."""
    for where, attrs in [("the dataset", ds.attrs), *((f"variable {n!r}", v.attrs) for n, v in ds.variables.items())]:
        io.storable_attributes({k: _encode_attr(a) for k, a in attrs.items()}, where)


def _encode_attr(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


# -- zarr encoding: chunks, compressors ------------------------------------------------------
def _determine_chunks(enc_chunks: Any, var_chunks: Any, ndim: int, name: Hashable) -> tuple[int, ...] | None:
    if not var_chunks and not enc_chunks:
        return None
    if var_chunks and not enc_chunks:
        if any(len(set(c[:-1])) > 1 for c in var_chunks):
            raise ValueError(
                "Zarr requires uniform chunk sizes except for final chunk. Variable named "
                f"{name!r} has incompatible dask chunks: {var_chunks!r}. Consider rechunking using `chunk()`."
            )
        if any(c[0] < c[-1] for c in var_chunks if c):
            raise ValueError(
                f"Final chunk of Zarr array must be the same size or smaller than the first. Variable "
                f"named {name!r} has incompatible Dask chunks {var_chunks!r}."
            )
        return tuple(max(c[0], 1) if c else 1 for c in var_chunks)
    if isinstance(enc_chunks, (int, np.integer)):
        enc = (int(enc_chunks),) * ndim
    else:
        enc = tuple(enc_chunks)
    if len(enc) != ndim:
        return _determine_chunks(None, var_chunks, ndim, name)
    if not all(isinstance(c, (int, np.integer)) for c in enc):
        raise TypeError(
            f"zarr chunk sizes specified in `encoding['chunks']` must be an int or a tuple of ints, "
            f"got {enc!r} for variable {name!r}"
        )
    return tuple(int(c) for c in enc)


def _extract_encoding(var: Any, raise_on_invalid: bool, name: Hashable, zarr_format: int) -> dict[str, Any]:
    encoding = dict(var.encoding)
    valid = set(_VALID_ENCODINGS)
    if zarr_format == 3:
        valid.add("fill_value")
    for k in _SAFE_TO_DROP:
        encoding.pop(k, None)
    invalid = [k for k in encoding if k not in valid]
    if raise_on_invalid and invalid:
        hint = " Use `_FillValue` to set the Zarr array `fill_value`" if "fill_value" in invalid else ""
        raise ValueError(f"unexpected encoding parameters for zarr backend:  {invalid!r}.{hint}")
    for k in invalid:
        del encoding[k]
    encoding["chunks"] = _determine_chunks(encoding.get("chunks"), var.chunks, var.ndim, name)
    shards = encoding.get("shards")
    if isinstance(shards, (int, np.integer)):
        encoding["shards"] = (int(shards),) * var.ndim
    return encoding


# -- helpers -----------------------------------------------------------------------------------
def _validate_region(ds: Any, region: Any) -> dict[str, slice]:
    if not isinstance(region, Mapping):
        raise TypeError(f"``region`` must be a dict, got {type(region)}")
    for k, v in region.items():
        if k not in ds.dims:
            raise ValueError(
                f"all keys in ``region`` are not in Dataset dimensions, got {list(region)} and {list(ds.dims)}"
            )
        if not isinstance(v, slice):
            raise TypeError(f"all values in ``region`` must be slice objects, got region={dict(region)}")
        if v.step not in (1, None):
            raise ValueError(f"step on all slices in ``region`` must be 1 or None, got region={dict(region)}")
    return dict(region)


def _auto_region(ds: Any, grp: Group, region: Any) -> dict[str, slice]:
    """Resolve ``region='auto'`` (or ``{dim: 'auto'}``) from the stored index coordinates."""
    from xarray import conventions

    region = dict.fromkeys(ds.dims, "auto") if region == "auto" else dict(region)
    reader = ZarrkitDataStore(grp)
    arrays = reader.arrays()
    for dim, val in list(region.items()):
        if val != "auto":
            continue
        if dim not in ds.variables:
            region[dim] = slice(0, ds.sizes[dim])
            continue
        if dim not in arrays:
            raise KeyError(f"region='auto' needs the coordinate {dim!r} in the store")
        stored = conventions.decode_cf_variable(dim, reader.open_store_variable(dim, arrays[dim]))
        idx = pd.Index(np.asarray(stored.values)).get_indexer(ds[dim].values)
        if (idx == -1).any():
            raise KeyError(
                f"Not all values of coordinate {dim!r} in the new array were found in the original "
                "store. Writing to a zarr region slice requires that no dimensions or metadata are "
                "changed by the write."
            )
        if (np.diff(idx) != 1).any():
            raise ValueError(
                f"The auto-detected region of coordinate {dim!r} for writing new data to the "
                "original store had non-contiguous indices."
            )
        region[dim] = slice(int(idx[0]), int(idx[-1]) + 1)
    return region


def _validate_append_dtype(name: Hashable, existing: Any, new: Any) -> None:
    if (
        np.issubdtype(new.dtype, np.number)
        or np.issubdtype(new.dtype, np.datetime64)
        or np.issubdtype(new.dtype, np.bool_)
        or new.dtype == object
        or (new.dtype.kind in ("S", "U") and existing.dtype == object)
    ):
        return
    if new.dtype != existing.dtype:
        raise ValueError(
            f"Mismatched dtypes for variable {name} between Zarr store on disk and dataset to "
            f"append. Store has dtype {existing.dtype} but dataset to append has dtype {new.dtype}."
        )


def _check_existing_dims(name: Hashable, new: Any, existing: Any, region: dict[str, slice], append_dim: Any) -> Any:
    if new.dims != existing.dims:
        if set(new.dims) == set(existing.dims):
            new = new.transpose(*existing.dims)
        else:
            raise ValueError(
                f"variable {name!r} already exists with different dimension names {existing.dims} != "
                f"{new.dims}, but changing variable dimensions is not supported by to_zarr()."
            )
    existing_sizes = {}
    for dim, size in existing.sizes.items():
        if dim in region:
            start, stop, _ = region[dim].indices(size)
            size = stop - start
        if dim != append_dim:
            existing_sizes[dim] = size
    new_sizes = {d: s for d, s in new.sizes.items() if d != append_dim}
    if existing_sizes != new_sizes:
        raise ValueError(
            f"variable {name!r} already exists with different dimension sizes: {existing_sizes} != "
            f"{new_sizes}. to_zarr() only supports changing dimension sizes when explicitly "
            f"appending, but append_dim={append_dim!r}. If you are attempting to write to a subset "
            "of the existing store without changing dimension sizes, consider using the region "
            "argument in to_zarr()."
        )
    return new


def _is_dask(data: Any) -> bool:
    try:
        from dask.array import Array as DaskArray
    except ImportError:  # pragma: no cover
        return False
    return isinstance(data, DaskArray)


def _open_target_group(
    store: Any, path: str, mode: str, zarr_format: int | None, chunk_store: Any = None, synchronizer: Any = None
) -> Group:
    s = open_store(store)
    nodes = {"chunk_store": chunk_store, "synchronizer": synchronizer}
    if zarr_format is None:
        # new nodes follow the format of the hierarchy they join
        for p in ([path, ""] if path else [""]):
            kind, fmt, _ = io.node_info(s, p)
            if kind is not None and not (mode == "w" and p == path):
                zarr_format = fmt
                break
    kind = io.node_kind(s, path)
    if mode == "w":
        return api.open_group(store, mode="w", path=path or None, zarr_format=zarr_format, **nodes)
    if mode == "w-":
        if kind is not None:
            raise ContainsGroupError(f"a node already exists at {path or '/'!r} (mode='w-'); use mode='w' or 'a'", path=path)
        return api.open_group(store, mode="w-", path=path or None, zarr_format=zarr_format, **nodes)
    if mode == "r+":
        if kind != "group":
            raise GroupNotFoundError(f"no group at {path or '/'!r} to write to with mode='r+'", path=path)
        return api.open_group(store, mode="r+", path=path or None, **nodes)
    return api.open_group(store, mode="a", path=path or None, zarr_format=zarr_format, **nodes)


# -- the writer ------------------------------------------------------------------------------
def to_zarr(
    ds: Any,
    store: Any = None,
    mode: str | None = None,
    group: str | None = None,
    append_dim: Hashable | None = None,
    region: Mapping[str, slice] | None = None,
    encoding: Mapping[Any, Mapping[str, Any]] | None = None,
    consolidated: bool | None = True,
    zarr_format: int | None = None,
    *,
    safe_chunks: bool = True,
    align_chunks: bool = False,
    storage_options: dict[str, Any] | None = None,
    chunk_store: Any = None,
    synchronizer: Any = None,
    write_empty_chunks: bool | None = None,
    compute: bool = True,
) -> Any:
    """Write ``ds`` (an :class:`xarray.Dataset` or named DataArray) to a Zarr group with zarrkit.

    Parameters
    ----------
    ds : xarray.Dataset
        What to write; numpy- or dask-backed (dask blocks are written in parallel, lock-free).
    store : str, os.PathLike, MutableMapping or zarrkit store
        Where (default: a new in-memory store, returned in the group's ``.store``).
    mode : {'w-', 'w', 'a', 'a-', 'r+'}, optional
        ``'w-'`` create, fail if the group exists (the default); ``'w'`` overwrite the group;
        ``'a'`` add or replace variables, or append along ``append_dim`` (the default when
        ``append_dim`` is given); ``'a-'`` like ``'a'`` but when appending leave variables
        without ``append_dim`` alone; ``'r+'`` only write existing variables (the default
        with ``region``).
    group : str, optional
        Path of the group in the store.
    append_dim : str, optional
        Dimension to append ``ds`` along: arrays with it are resized and the new data written
        after the existing data.  Values are CF-encoded exactly as the stored ones (same time
        units, scale factors, fill values).
    region : dict of slices, optional
        Write ``ds`` into this part of existing variables (``{'time': slice(10, 20)}``);
        variables without any of these dimensions must be dropped first, index variables are
        not written.
    encoding : dict, optional
        Per-variable encoding: CF keys (``dtype``, ``scale_factor``, ``add_offset``,
        ``_FillValue``, ``units``, ``calendar``) and Zarr keys (``chunks``, ``shards``,
        ``compressors``, ``filters``, ``fill_value`` (v3), ``write_empty_chunks``).
    consolidated : bool, optional
        Consolidate the store's metadata at its root afterwards (default True; ``None`` too).
    zarr_format : int (2 or 3), optional
        Format of a new hierarchy (default: that of an existing one, else zarrkit's default).
    safe_chunks : bool
        Never let two dask tasks write one Zarr chunk (one shard of a sharded array): dask
        blocks that do not cover whole chunks are regrouped along the Zarr grid before writing
        (see :func:`zarrkit.dask.store`); a partial chunk at the edge of ``region`` is
        completed by the one task that owns it.  ``False`` writes the dask blocks as they are:
        on a store with conditional writes (``supports_conditional_writes``) that loses
        nothing either, each partial chunk being merged into the chunk as stored, only slower;
        on a store without them it is right only with a ``synchronizer`` or a single-threaded
        scheduler.  Separate jobs writing neighbouring regions share the chunks between them:
        safe on a store with conditional writes, else only with a shared ``synchronizer``.
    align_chunks : bool
        xarray's option: rechunk the dask arrays to whole Zarr chunks (shards) before writing,
        keeping the original blocks as far as possible.  With ``safe_chunks=True`` zarrkit
        does this whenever it is needed, so it only changes anything with
        ``safe_chunks=False``.
    storage_options : dict, optional
        Options of the fsspec file system when ``store`` is a URL (``s3://``, ``file://``, ...).
    chunk_store : MutableMapping or zarrkit store, optional
        A separate store for the chunks (metadata stays in ``store``); read it back with
        ``open_dataset(..., chunk_store=...)``.
    synchronizer : zarrkit.ThreadSynchronizer or zarrkit.ProcessSynchronizer, optional
        Serializes writes to one chunk; the arrays written (and returned) carry it.
    compute : bool
        With ``False`` and dask data, metadata (and numpy-backed variables) are written now
        and the dask object of :func:`dask.array.store` is returned: ``.compute()`` it to
        write the dask-backed data.

    Returns
    -------
    zarrkit.Group
        The written group (the pending dask store when ``compute=False`` and there is dask
        data).
    """
    grp, pending = write_dataset(
        ds, store, mode, group, append_dim, region, encoding, zarr_format, safe_chunks=safe_chunks,
        align_chunks=align_chunks, storage_options=storage_options, chunk_store=chunk_store,
        synchronizer=synchronizer, write_empty_chunks=write_empty_chunks,
    )
    return finish_writes(grp, pending, consolidated, compute)


def write_dataset(
    ds: Any, store: Any, mode: str | None, group: str | None, append_dim: Any, region: Any,
    encoding: Mapping[Any, Mapping[str, Any]] | None, zarr_format: int | None, *, safe_chunks: bool = True,
    align_chunks: bool = False, storage_options: dict[str, Any] | None = None, chunk_store: Any = None,
    synchronizer: Any = None, write_empty_chunks: bool | None = None,
) -> tuple[Group, list[tuple[Any, Array, tuple[slice, ...]]]]:
    """The metadata and numpy-backed data of :func:`to_zarr`: returns the group written and
    the ``(dask array, target, region)`` writes still to do (see :func:`finish_writes`)."""
    import xarray as xr

    if isinstance(ds, xr.DataArray):
        ds = ds.to_dataset(name=ds.name if ds.name is not None else "__xarray_dataarray_variable__")
    if not isinstance(ds, xr.Dataset):
        raise TypeError(f"to_zarr writes an xarray Dataset or DataArray, got {type(ds).__name__}")
    mode = _check_arguments(ds, mode, append_dim, region, zarr_format)
    _check_attributes(ds)
    store = _writable_store(store, storage_options)
    gpath = normalize_path((group or "").strip("/") or None)
    grp = _open_target_group(store, gpath, mode, zarr_format, chunk_store, synchronizer)
    fmt = grp.zarr_format
    if zarr_format is not None and zarr_format != fmt:
        raise ValueError(f"zarr_format={zarr_format} given but the group at {gpath or '/'!r} is v{fmt}")
    write_region: dict[str, slice] = {}
    if region is not None:
        ds, write_region = _prepare_region(ds, grp, region)
        if synchronizer is None and not grp.store.supports_conditional_writes:
            # separate jobs writing neighbouring regions share the chunks at their edges
            warn(
                f"{type(grp.store).__name__} cannot condition a write on a value's version: "
                "region writes running at the same time as others that share a chunk with them "
                "can lose data there; pass a synchronizer shared by every writer, or use a store "
                "with conditional writes", ZarrUserWarning)
    growth: Growth | None = None
    digest = ""
    if append_dim is not None:
        # an append left unfinished by a writer that died is finished (or undone) first
        digest = rows_digest({str(k): v.data if _is_dask(v.data) else v.values
                              for k, v in ds.variables.items() if append_dim in v.dims})
        growth = recover(grp, append_dim, digest)
    existing: dict[str, Array] = {} if mode == "w" else dict(grp.arrays())
    var_encoding: dict[Any, dict[str, Any]] = {k: dict(v) for k, v in (encoding or {}).items()}
    encoded, attrs, check_encoding = _encode_dataset(ds, grp, existing, var_encoding, mode, fmt, write_region, append_dim)
    if mode not in ("r", "r+"):
        grp.attrs.put(attrs)
    if mode == "a-" and append_dim is not None:
        encoded = {k: v for k, v in encoded.items() if k not in existing or append_dim in v.dims}
    if growth is not None:  # the same append run again: its rows are written, its shapes grown
        encoded = {k: v for k, v in encoded.items() if str(k) not in growth.arrays}
    elif append_dim is not None:
        growth = _plan_growth(grp, encoded, existing, append_dim, digest)
    target = _Target(grp, mode, existing, write_region, append_dim, write_empty_chunks, safe_chunks or align_chunks,
                     growth)
    pending: list[Any] = [
        p for vn, v in encoded.items()
        if (p := target.write(str(vn), v, raise_on_invalid=vn in check_encoding)) is not None
    ]
    if growth is not None:
        pending.append(growth)
    return grp, pending


def _plan_growth(grp: Group, encoded: dict[Any, Any], existing: dict[str, Array], append_dim: Any,
                 digest: str) -> Growth | None:
    """The shape changes of an append, recorded before its first row is written (see
    :mod:`zarrkit.xarray.append`); None when no existing array grows."""
    arrays = {}
    for name, v in encoded.items():
        arr = existing.get(str(name))
        if arr is None or append_dim not in v.dims:
            continue
        axis = v.dims.index(append_dim)
        old = tuple(arr.shape)
        arrays[str(name)] = (arr, old, old[:axis] + (old[axis] + v.shape[axis],) + old[axis + 1:])
    if not arrays:
        return None
    growth = Growth(grp, append_dim, arrays, digest)
    growth.begin()
    return growth


def finish_writes(grp: Group, pending: list[Any], consolidated: bool | None, compute: bool) -> Any:
    """Store the dask-backed data of ``pending`` in one :func:`dask.array.store`, grow the
    shapes of the appends in it (:class:`~zarrkit.xarray.append.Growth`: their rows are
    written first, out of sight), consolidate the metadata of ``grp``'s store (unless
    ``consolidated=False``) and end the appends; returns ``grp``, or the pending dask object
    when ``compute=False`` and there is dask data (stored after the shapes grew, then)."""
    growths = [p for p in pending if isinstance(p, Growth)]
    writes = [p for p in pending if not isinstance(p, Growth)]
    delayed = None
    if writes:
        import dask.array as da

        sources, targets, regions = zip(*writes)
        delayed = da.store(list(sources), list(targets), regions=list(regions), lock=False, compute=compute)
    for growth in growths:
        growth.commit()
    if consolidated or consolidated is None:
        # the engine's consolidation: the dataset's layout is this writer's choice, so the
        # warning a user's own consolidation of a v3 hierarchy gets does not apply
        consolidate(open_store(grp.store), "")
    for growth in growths:
        growth.finish()
    if delayed is not None and not compute:
        return delayed
    return grp


def _writable_store(store: Any, storage_options: dict[str, Any] | None) -> Any:
    """The store to write to: a new in-memory one for ``None``, a URL opened with
    ``storage_options``, a mapping used as it is."""
    if store is None:
        if storage_options:
            raise ValueError("storage_options need a URL store, got store=None")
        return MemoryStore()
    if isinstance(store, os.PathLike):
        store = os.fspath(store)
    if storage_options is not None:
        return open_store(store, storage_options=storage_options)
    return store if isinstance(store, Mapping) else open_store(store)


def _check_arguments(ds: Any, mode: str | None, append_dim: Any, region: Any, zarr_format: Any) -> str:
    """The mode to write with, once the arguments are known to go together."""
    if mode is None:
        mode = "a" if append_dim is not None else "r+" if region is not None else "w-"
    if mode not in _MODES:
        raise ValueError(f"mode must be one of {list(_MODES)}, got {mode!r}")
    if append_dim is not None and region is not None:
        raise ValueError("cannot use both append_dim and region in to_zarr()")
    if append_dim is not None and mode not in ("a", "a-"):
        raise ValueError(f"append_dim was set along with mode={mode!r}, either set mode='a' or don't set it")
    if region is not None and mode not in ("a", "r+"):
        raise ValueError(f"region requires mode 'r+' or 'a', got mode={mode!r}")
    if zarr_format not in (None, 2, 3):
        raise ValueError(f"zarr_format must be 2 or 3, got {zarr_format!r}")
    for name in ds.variables:
        if not isinstance(name, str) or not name or "/" in name:
            raise ValueError(f"variable names must be non-empty strings without '/', got {name!r}")
    return mode


def _prepare_region(ds: Any, grp: Group, region: Any) -> tuple[Any, dict[str, slice]]:
    """The dataset to write into ``region`` (index variables dropped) and the region checked."""
    if region == "auto" or (isinstance(region, Mapping) and "auto" in region.values()):
        region = _auto_region(ds, grp, region)
    write_region = _validate_region(ds, region)
    non_matching = [k for k, v in ds.variables.items() if not set(write_region).intersection(v.dims)]
    if write_region and non_matching:
        raise ValueError(
            "when setting `region` explicitly in to_zarr(), all variables in the dataset to "
            "write must have at least one dimension in common with the region's dimensions "
            f"{list(write_region)}, but that is not the case for some variables here. To drop "
            f"these variables from this dataset before exporting to zarr, write: "
            f".drop_vars({non_matching!r})"
        )
    return ds.drop_vars(list(ds.indexes)), write_region


def _encode_dataset(
    ds: Any, grp: Group, existing: dict[str, Array], encoding: dict[Any, dict[str, Any]], mode: str,
    fmt: int, write_region: dict[str, slice], append_dim: Any,
) -> tuple[dict[Any, Any], dict[str, Any], set[Any]]:
    """The CF-encoded variables to write (into existing arrays: encoded exactly as the stored
    ones), the group's attributes, and the variables whose encoding the user gave."""
    from xarray import conventions

    reader = ZarrkitDataStore(grp)
    if encoding and mode in ("a", "a-", "r+"):
        for name in encoding:
            if name in existing:
                raise ValueError(f"variable {name!r} already exists, but encoding was provided")
    variables, attributes = conventions.encode_dataset_coordinates(ds)
    for name, enc in encoding.items():
        if name not in variables:
            raise ValueError(f"encoding given for {name!r}, which is not a variable of the dataset")
        variables[name].encoding = enc
    existing_names = [n for n in variables if n in existing]
    new_names = [n for n in variables if n not in existing]
    if mode == "r+" and new_names:
        raise ValueError(
            f"dataset contains non-pre-existing variables {new_names!r}, which is not allowed in "
            "to_zarr() with mode='r+'. To allow writing new variables, set mode='a'."
        )
    if append_dim is not None and append_dim not in existing:
        dims = reader.get_dimensions()
        if append_dim not in dims:
            raise ValueError(f"append_dim={append_dim!r} does not match any existing dataset dimensions {dims}")
    encoded = {n: _encode_variable(variables[n], n, fmt) for n in new_names}
    if existing_names:
        stored: Mapping[Any, Any] = {n: reader.open_store_variable(n, existing[n]) for n in existing_names}
        stored, _, _ = conventions.decode_cf_variables(stored, {})
        for n in existing_names:
            _validate_append_dtype(n, stored[n], variables[n])
            v = variables[n].copy(deep=False)
            v.encoding = dict(stored[n].encoding)
            v = _encode_variable(v, n, fmt)
            encoded[n] = _check_existing_dims(n, v, stored[n], write_region, append_dim)
    attrs = {k: _encode_attr(v) for k, v in attributes.items()}
    return encoded, attrs, set(encoding)


class _Target:
    """Where the encoded variables of one ``to_zarr`` go: existing arrays (resized when
    appending) or new ones."""

    def __init__(
        self, grp: Group, mode: str, existing: dict[str, Array], write_region: dict[str, slice],
        append_dim: Any, write_empty_chunks: Any, align: bool, growth: Growth | None = None,
    ):
        self.grp, self.fmt, self.mode = grp, grp.zarr_format, mode
        self.existing = existing
        self.write_region = write_region
        self.append_dim = append_dim
        self.write_empty_chunks = write_empty_chunks
        self.align = align
        self.growth = growth

    def _fill_and_encoding(self, v: Any, name: Any, raise_on_invalid: bool) -> tuple[Any, dict[str, Any], Any]:
        """The variable's fill value, attributes and Zarr encoding, in this format's way."""
        vattrs = dict(v.attrs)
        venc = dict(v.encoding)
        if self.fmt == 2:
            fill_value = vattrs.pop("_FillValue", None)
        else:
            fill_value = venc.pop("fill_value", None)
            if fill_value is None and v.dtype.kind == "f":
                fill_value = np.nan  # xarray's default for floats (not Zarr's zero)
            if "_FillValue" in vattrs:
                fv = vattrs.pop("_FillValue")
                if fv is not None:
                    vattrs["_FillValue"] = encode_fill_value(fv, v.dtype)
        if venc.get("_FillValue") is not None:
            raise ValueError("Zarr does not support _FillValue in encoding.")
        venc.pop("_FillValue", None)
        v.encoding = venc
        zenc = _extract_encoding(v, raise_on_invalid=raise_on_invalid, name=name, zarr_format=self.fmt)
        return fill_value, vattrs, zenc

    def write(self, name: str, v: Any, raise_on_invalid: bool) -> tuple[Any, Array, tuple[slice, ...]] | None:
        """Write one variable: numpy data at once; dask data is returned as ``(source,
        target, region)`` for one ``dask.array.store`` of them all."""
        fill_value, vattrs, zenc = self._fill_and_encoding(v, name, raise_on_invalid)
        dims = v.dims
        var_region = {d: self.write_region.get(d, slice(None)) for d in dims}
        shape = None  # the shape the array is written as: an append's, out of sight
        if self.mode != "w" and name in self.existing:
            arr = self.existing[name]
            if self.append_dim is not None and self.append_dim in dims:
                axis = dims.index(self.append_dim)
                old = arr.shape
                var_region[self.append_dim] = slice(old[axis], old[axis] + v.shape[axis])
                shape = old[:axis] + (old[axis] + v.shape[axis],) + old[axis + 1 :]
                if self.growth is None or name not in self.growth.arrays:
                    arr.resize(shape)
                    shape = None
        else:
            arr = _create_array(self.grp, name, v, dims, vattrs, fill_value, zenc, self.mode,
                                self.write_empty_chunks)
        sel = tuple(var_region[d] for d in dims)
        data = v.data
        region = _resolve(sel, arr.shape if shape is None else shape)
        if not _is_dask(data):
            if shape is None:
                arr[region or Ellipsis] = np.asarray(v.values)
            else:
                write_out_of_sight(arr, shape, region, np.asarray(v.values))
            return None
        if self.align:
            # needed for correctness on a store without conditional writes; on one with them
            # kept because it is faster (each chunk stored once, whole: see zarrkit.dask.store)
            try:
                data = align_blocks(data, arr, region)
            except ValueError as e:
                raise ValueError(f"variable {name!r}: {e}") from None
        return data, (arr if shape is None else OutOfSight(arr, shape)), region


def _resolve(sel: tuple[slice, ...], shape: tuple[int, ...]) -> tuple[slice, ...]:
    return tuple(slice(*s.indices(n)) for s, n in zip(sel, shape))


def _create_array(
    grp: Group,
    name: str,
    v: Any,
    dims: tuple[Hashable, ...],
    vattrs: dict[str, Any],
    fill_value: Any,
    zenc: dict[str, Any],
    mode: str,
    write_empty_chunks: bool | None,
) -> Array:
    """A new array ``name`` in ``grp`` for the encoded variable ``v`` (with the group's chunk
    store and synchronizer)."""
    from xarray import coding

    fmt = grp.zarr_format
    dtype = v.dtype
    if coding.strings.check_vlen_dtype(dtype) is str:
        dtype = str
    attrs = {k: _encode_attr(a) for k, a in vattrs.items()}
    kwargs: dict[str, Any] = {}
    if fmt == 2:
        attrs[DIMENSION_KEY] = [str(d) for d in dims]
    else:
        kwargs["dimension_names"] = [None if d is None else str(d) for d in dims]
        if zenc.get("shards") is not None:
            kwargs["shards"] = tuple(zenc["shards"])
        if zenc.get("serializer") is not None:
            kwargs["serializer"] = zenc["serializer"]
    if "compressors" in zenc:
        kwargs["compressors"] = zenc["compressors"]
    elif "compressor" in zenc:
        c = zenc["compressor"]
        kwargs["compressors"] = None if c is None else [c]
    if zenc.get("filters") is not None:
        kwargs["filters"] = zenc["filters"]
    if zenc.get("chunk_key_encoding") is not None:
        kwargs["chunk_key_encoding"] = zenc["chunk_key_encoding"]
    elif fmt == 2 and zenc.get("dimension_separator") is not None:
        kwargs["chunk_key_encoding"] = {"name": "v2", "configuration": {"separator": zenc["dimension_separator"]}}
    wec = zenc.get("write_empty_chunks", write_empty_chunks)
    if fill_value is not None and not isinstance(fill_value, (str, bytes)):
        fill_value = np.asarray(fill_value).item() if np.ndim(fill_value) == 0 else fill_value
    chunks = zenc.get("chunks")
    arr = create_array(
        grp.store,
        name=join_path(grp.path, name),
        shape=v.shape,
        dtype=dtype,
        chunks="auto" if chunks is None else chunks,
        fill_value=fill_value,
        zarr_format=fmt,
        attributes=attrs,
        overwrite=(mode == "w"),
        write_empty_chunks=wec,
        **kwargs,
    )
    if grp.chunk_store is grp.store and grp.synchronizer is None:
        return arr
    return Array(grp.store, path=arr.path, chunk_store=grp.chunk_store, synchronizer=grp.synchronizer,
                 write_empty_chunks=arr._write_empty_chunks)
