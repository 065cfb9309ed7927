"""An xarray backend reading Zarr stores through zarrkit: ``xr.open_dataset(path, engine="zarrkit")``.

It follows xarray's Zarr encoding convention (``docs.xarray.dev`` "Zarr Encoding Specification")
exactly as xarray's own ``engine="zarr"`` does:

* dimension names come from the ``_ARRAY_DIMENSIONS`` attribute (v2, hidden from the user's
  attributes) or from the ``dimension_names`` metadata (v3);
* variables are returned *raw* (stored dtype, CF attributes untouched) and xarray's standard
  backend path (:class:`xarray.backends.StoreBackendEntrypoint`, i.e.
  :func:`xarray.conventions.decode_cf_variables`) does the CF decoding: times, scale/offset,
  masking;
* v2: the array's ``fill_value`` is the ``_FillValue`` (xarray's historic convention); v3: the
  ``fill_value`` goes to ``encoding["fill_value"]`` and a ``_FillValue`` attribute (base64 for
  floats, as xarray writes it) is decoded;
* data is lazy: every variable wraps the zarrkit array in an :class:`xarray.backends.BackendArray`
  supporting basic and outer indexing (zarrkit's orthogonal selection); nothing but metadata is
  read when opening (xarray itself loads the index coordinates);
* ``encoding["preferred_chunks"]`` holds the Zarr chunks so ``chunks={}`` gives aligned dask
  arrays.
"""

from __future__ import annotations

import base64
import importlib.util
import os
import struct
import sys
from collections.abc import Iterable
from typing import Any, ClassVar

import numpy as np
from xarray.backends.common import AbstractDataStore, BackendArray, BackendEntrypoint
from xarray.backends.store import StoreBackendEntrypoint
from xarray.core import indexing
from xarray.core.variable import Variable

from .. import api
from ..core.array import Array
from ..core.group import Group
from ..core.lazy import LazyView
from ..errors import DimensionNamesError, MetadataError
from ..metadata.consolidated import ConsolidatedStore, load_consolidated
from ..metadata.normalize import normalize_path
from ..storage.base import Store
from ..storage.coerce import open_store
from .append import shapes_before

__all__ = [
    "DIMENSION_KEY",
    "ZarrkitBackendArray",
    "ZarrkitBackendEntrypoint",
    "ZarrkitDataStore",
    "open_zarrkit_group",
]

DIMENSION_KEY = "_ARRAY_DIMENSIONS"


# -- fill values: xarray's convention for the ``_FillValue`` attribute of v3 arrays ------------
def encode_fill_value(value: Any, dtype: np.dtype) -> Any:
    """The JSON form xarray gives a ``_FillValue`` attribute (floats as base64 of a '<d')."""
    dtype = np.dtype(dtype)
    if dtype.kind == "S":
        if not isinstance(value, bytes):
            raise TypeError(f"_FillValue for dtype {dtype} must be bytes, got {type(value).__name__}")
        return base64.standard_b64encode(value).decode()
    if dtype.kind == "b":
        return bool(value)
    if dtype.kind in "iu":
        return int(value)
    if dtype.kind == "f":
        return base64.standard_b64encode(struct.pack("<d", float(value))).decode()
    if dtype.kind == "c":
        return [
            base64.standard_b64encode(struct.pack("<d", float(np.real(value)))).decode(),
            base64.standard_b64encode(struct.pack("<d", float(np.imag(value)))).decode(),
        ]
    if dtype.kind == "U":
        return str(value)
    raise ValueError(f"cannot encode _FillValue {value!r} for dtype {dtype}")


def decode_fill_value(value: Any, dtype: np.dtype) -> Any:
    """Inverse of :func:`encode_fill_value` (what xarray's zarr backend does on read)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "O":
        return value
    if dtype.kind == "S" and isinstance(value, str):
        return base64.standard_b64decode(value)
    if dtype.kind == "f":
        if isinstance(value, (str, bytes)):
            return struct.unpack("<d", base64.standard_b64decode(value))[0]
        return float(value)
    if dtype.kind == "c":
        if isinstance(value, (list, tuple)) and len(value) == 2:
            re, im = (struct.unpack("<d", base64.standard_b64decode(v))[0] for v in value)
            return complex(re, im)
        return complex(value)
    if dtype.kind == "b":
        return bool(value)
    if dtype.kind in "iu":
        return int(value)
    return value


def _is_vlen_utf8(array: Array) -> bool:
    meta = array.metadata
    codecs = list(getattr(meta, "filters", None) or ()) + list(getattr(meta, "codecs", None) or ())
    for codec in codecs:
        name = getattr(codec, "codec_id", None) or getattr(codec, "name", None) or type(codec).__name__
        if isinstance(name, str) and "utf8" in name.lower().replace("-", ""):
            return True
    return False


# -- lazy array ----------------------------------------------------------------------------
def _within(k: Any, n: int) -> Any:
    """Selection ``k`` of one dimension of length ``n`` with its ends and negative indices
    resolved in that length (an array shown shorter than it is)."""
    if isinstance(k, slice):
        return slice(*k.indices(n))
    if isinstance(k, (int, np.integer)):
        if not -n <= k < n:
            raise IndexError(f"index {k} is out of bounds for a dimension of length {n}")
        return k % n
    k = np.asarray(k)
    if k.dtype == bool:
        return np.flatnonzero(k)
    if k.size and (k.min() < -n or k.max() >= n):
        raise IndexError(f"an index of {k} is out of bounds for a dimension of length {n}")
    return np.where(k < 0, k + n, k)


class ZarrkitBackendArray(BackendArray):
    """Lazy view of a zarrkit array: basic and outer indexing go to zarrkit (only the chunks
    a selection touches are read); vectorized indexing is decomposed by xarray."""

    __slots__ = ("_array", "dtype", "shape")

    def __init__(self, array: Array | LazyView, shape: tuple[int, ...] | None = None):
        self._array = array
        # (a shape smaller than the array's: the rows of an append in progress not shown)
        self.shape: tuple[int, ...] = tuple(array.shape) if shape is None else tuple(shape)
        dtype = array.dtype
        if dtype.kind == "O" and _is_vlen_utf8(array):
            from xarray.coding.strings import create_vlen_dtype

            dtype = create_vlen_dtype(str)
        self.dtype = dtype

    def get_array(self) -> Array:
        return self._array

    def _raw_getitem(self, key: tuple) -> np.ndarray:
        if self.shape != tuple(self._array.shape):  # selections resolved in the shape shown
            key = tuple(_within(k, n) for k, n in zip(key, self.shape))
        if all(isinstance(k, (int, np.integer, slice)) for k in key):
            result = self._array.get_basic_selection(key)
        else:
            result = self._array.get_orthogonal_selection(key)
        return np.asarray(result)

    def __getitem__(self, key: indexing.ExplicitIndexer) -> np.ndarray:
        return indexing.explicit_indexing_adapter(
            key, self.shape, indexing.IndexingSupport.OUTER, self._raw_getitem
        )


# -- opening -------------------------------------------------------------------------------
def open_zarrkit_group(
    store: Any,
    group: str | None = None,
    consolidated: bool | None = None,
    mode: str = "r",
    zarr_format: int | None = None,
    storage_options: dict[str, Any] | None = None,
    chunk_store: Any = None,
) -> Group:
    """Open the group at ``group`` of ``store`` (a path, URL, mapping, zarrkit store or Group).

    ``consolidated=True`` requires consolidated metadata at the root of the store, ``None``
    uses it when it is there, ``False`` ignores it.  ``storage_options`` go to the fsspec file
    system of a URL; ``chunk_store`` holds the chunks when they are kept apart from the
    metadata.
    """
    if isinstance(store, Group):
        if storage_options is not None or chunk_store is not None:
            raise ValueError("storage_options and chunk_store cannot be given with an open zarrkit Group")
        sub = (group or "").strip("/")
        node = store[sub] if sub else store
        if not isinstance(node, Group):
            raise TypeError(f"{group!r} is an array, not a group")
        return node
    if isinstance(store, os.PathLike):
        store = os.fspath(store)
    path = normalize_path((group or "").strip("/") or None)
    if mode not in ("r", "r+"):
        raise ValueError(f"mode must be 'r' or 'r+' for reading, got {mode!r}")
    if storage_options is not None:
        store = open_store(store, read_only=(mode == "r"), storage_options=storage_options)
    if consolidated is False:
        return api.open_group(store, mode=mode, path=path, chunk_store=chunk_store)
    s = open_store(store)
    docs = load_consolidated(s, "", zarr_format)
    if docs is None:
        if consolidated:
            raise MetadataError(f"no consolidated metadata found in {store!r} (consolidated=True)")
        return api.open_group(store, mode=mode, path=path, chunk_store=chunk_store)
    root = Group(ConsolidatedStore(s, docs), read_only=(mode == "r"), chunk_store=chunk_store)
    if not path:
        return root
    node = root[path]
    if not isinstance(node, Group):
        raise TypeError(f"{group!r} is an array, not a group")
    return node


def _dims_and_attrs(array: Array) -> tuple[tuple[str | None, ...], dict[str, Any]]:
    """An array's dimension names and its attributes (without ``_ARRAY_DIMENSIONS``).

    A v3 ``dimension_names`` entry of null names its dimension ``None``, as xarray's own zarr
    backend does over zarr-python (xarray takes any hashable name); missing or malformed
    names raise :class:`~zarrkit.errors.DimensionNamesError` naming the array and the
    attribute, never a bare ``KeyError`` or ``TypeError`` from what the store holds.
    """
    attrs = dict(array.attrs.asdict())
    if array.zarr_format == 3:
        names = getattr(array.metadata, "dimension_names", None)
        if names is not None:
            return _checked_dims(array, "dimension_names", names), attrs
        if array.ndim == 0:
            return (), attrs
    if DIMENSION_KEY not in attrs:
        if array.ndim == 0 and array.zarr_format == 3:
            return (), attrs
        raise DimensionNamesError(
            f"Zarr array {array.path!r} is missing the attribute `{DIMENSION_KEY}`"
            + (" and `dimension_names`" if array.zarr_format == 3 else "")
            + ", which is required for xarray to determine variable dimensions."
        )
    dims = _checked_dims(array, f"attribute {DIMENSION_KEY}", attrs.pop(DIMENSION_KEY))
    for k in [k for k in attrs if k.lower().startswith("_nc")]:
        del attrs[k]
    return dims, attrs


def _checked_dims(array: Array, what: str, names: object) -> tuple[str | None, ...]:
    """``names`` as dimension names of ``array``: a list of strings or nulls, one a dimension."""
    if not isinstance(names, list | tuple) or not all(n is None or isinstance(n, str) for n in names):
        raise DimensionNamesError(
            f"array {array.path!r}: {what}: expected a list of strings or nulls, got {names!r}"
        )
    if len(names) != array.ndim:
        raise DimensionNamesError(
            f"array {array.path!r}: {what}: expected {array.ndim} names (one per dimension of "
            f"shape {array.shape}), got {list(names)!r}"
        )
    return tuple(names)


class ZarrkitDataStore(AbstractDataStore):
    """A read-only xarray data store over one zarrkit group."""

    def __init__(self, group: Group, use_zarr_fill_value_as_mask: bool | None = None):
        self.zarr_group = group
        if use_zarr_fill_value_as_mask is None:
            # xarray's defaults: historic v2 data used fill_value as the mask, v3 does not
            use_zarr_fill_value_as_mask = group.zarr_format == 2
        self._use_fill_value_as_mask = use_zarr_fill_value_as_mask
        self._arrays: dict[str, Array] | None = None
        self._before: dict[str, tuple[int, ...]] | None = None

    @property
    def zarr_format(self) -> int:
        return self.zarr_group.zarr_format

    def arrays(self) -> dict[str, Array]:
        if self._arrays is None:
            self._arrays = dict(self.zarr_group.arrays())
        return self._arrays

    def _shape(self, name: str, array: Array) -> tuple[int, ...]:
        """The shape ``array`` shows: while an append is in progress, its shape before it
        (see :mod:`zarrkit.xarray.append`), so that the dataset opens as it was."""
        if self._before is None:
            self._before = shapes_before(self.zarr_group)
        before = self._before.get(name)
        if before is None or len(before) != array.ndim:
            return tuple(array.shape)
        return tuple(min(n, b) for n, b in zip(array.shape, before))

    def open_store_variable(self, name: str, array: Array) -> Variable:
        dims, attrs = _dims_and_attrs(array)
        data = indexing.LazilyIndexedArray(ZarrkitBackendArray(array, self._shape(name, array)))
        chunks = tuple(array.chunks)
        encoding: dict[str, Any] = {
            "chunks": chunks,
            "preferred_chunks": dict(zip(dims, chunks)),
        }
        encoding["shards"] = tuple(array.shards) if array.shards else None
        if self._use_fill_value_as_mask:
            if array.fill_value is not None:
                attrs["_FillValue"] = array.fill_value
        else:
            if array.zarr_format == 3:
                encoding["fill_value"] = array.fill_value
            if "_FillValue" in attrs:
                attrs["_FillValue"] = decode_fill_value(attrs["_FillValue"], array.dtype)
        return Variable(dims, data, attrs, encoding)

    def get_variables(self) -> dict[str, Variable]:
        return {name: self.open_store_variable(name, a) for name, a in self.arrays().items()}

    def get_attrs(self) -> dict[str, Any]:
        return {k: v for k, v in self.zarr_group.attrs.asdict().items() if not k.lower().startswith("_nc")}

    def get_dimensions(self) -> dict[str, int]:
        dims: dict[str, int] = {}
        for name, array in self.arrays().items():
            names, _ = _dims_and_attrs(array)
            for d, n in zip(names, self._shape(name, array)):
                if d in dims and dims[d] != n:
                    raise ValueError(f"found conflicting lengths for dimension {d} ({n} != {dims[d]})")
                dims[d] = n
        return dims

    def get_encoding(self) -> dict[str, Any]:
        return {}

    def close(self) -> None:
        pass


def _iter_groups(group: Group, path: str = "/") -> Iterable[tuple[str, Group]]:
    yield path, group
    for name, child in group.groups():
        yield from _iter_groups(child, path.rstrip("/") + "/" + name)


def _zarr_importable() -> bool:
    if "zarr" in sys.modules:
        return sys.modules["zarr"] is not None
    try:
        return importlib.util.find_spec("zarr") is not None
    except (ImportError, ValueError):
        return False


class ZarrkitBackendEntrypoint(BackendEntrypoint):
    """Open Zarr v2/v3 stores (written by xarray, zarr-python or zarrkit) with zarrkit.

    ``xr.open_dataset(path, engine="zarrkit", group=..., consolidated=None|True|False,
    chunks=None|{}, storage_options=..., chunk_store=..., ...)``,
    ``xr.open_datatree(path, engine="zarrkit")`` and ``xr.open_groups(path, engine="zarrkit")``.
    """

    description = "Open Zarr v2/v3 stores with zarrkit"
    url = "https://zarr.dev"
    supports_groups = True
    open_dataset_parameters: ClassVar[tuple[Any, ...] | None] = (
        "filename_or_obj", "mask_and_scale", "decode_times", "concat_characters",
        "decode_coords", "drop_variables", "use_cftime", "decode_timedelta", "group", "mode",
        "consolidated", "zarr_format", "use_zarr_fill_value_as_mask", "storage_options", "chunk_store",
    )

    def guess_can_open(self, filename_or_obj: Any) -> bool:
        # zarrkit's own objects; paths ending in .zarr belong to engine="zarr" when a module
        # named zarr can be imported (zarr-python, or zarrkit installed as zarr), else to zarrkit
        if isinstance(filename_or_obj, (Store, Group)):
            return True
        if isinstance(filename_or_obj, (str, os.PathLike)):
            path = os.fspath(filename_or_obj)
            return isinstance(path, str) and path.rstrip("/").endswith(".zarr") and not _zarr_importable()
        return False


    def open_dataset(
        self,
        filename_or_obj: Any,
        *,
        mask_and_scale=True,
        decode_times=True,
        concat_characters=True,
        decode_coords=True,
        drop_variables: str | Iterable[str] | None = None,
        use_cftime=None,
        decode_timedelta=None,
        group: str | None = None,
        mode: str = "r",
        consolidated: bool | None = None,
        zarr_format: int | None = None,
        use_zarr_fill_value_as_mask: bool | None = None,
        storage_options: dict[str, Any] | None = None,
        chunk_store: Any = None,
    ):
        g = open_zarrkit_group(filename_or_obj, group=group, consolidated=consolidated, mode=mode,
                               zarr_format=zarr_format, storage_options=storage_options, chunk_store=chunk_store)
        store = ZarrkitDataStore(g, use_zarr_fill_value_as_mask=use_zarr_fill_value_as_mask)
        return StoreBackendEntrypoint().open_dataset(
            store,
            mask_and_scale=mask_and_scale,
            decode_times=decode_times,
            concat_characters=concat_characters,
            decode_coords=decode_coords,
            drop_variables=drop_variables,
            use_cftime=use_cftime,
            decode_timedelta=decode_timedelta,
        )

    def open_groups_as_dict(
        self,
        filename_or_obj: Any,
        *,
        mask_and_scale=True,
        decode_times=True,
        concat_characters=True,
        decode_coords=True,
        drop_variables: str | Iterable[str] | None = None,
        use_cftime=None,
        decode_timedelta=None,
        group: str | None = None,
        mode: str = "r",
        consolidated: bool | None = None,
        zarr_format: int | None = None,
        use_zarr_fill_value_as_mask: bool | None = None,
        storage_options: dict[str, Any] | None = None,
        chunk_store: Any = None,
    ) -> dict[str, Any]:
        """Every group under ``group`` as a Dataset, keyed as xarray's zarr engine keys them:
        absolute paths (``"/"``, ``"/child"``) from the root, else paths relative to ``group``
        (``"."``, ``"child"``)."""
        root = open_zarrkit_group(filename_or_obj, group=group, consolidated=consolidated, mode=mode,
                                  zarr_format=zarr_format, storage_options=storage_options, chunk_store=chunk_store)
        out = {}
        for path, g in _iter_groups(root):
            store = ZarrkitDataStore(g, use_zarr_fill_value_as_mask=use_zarr_fill_value_as_mask)
            out[path if not group else path.strip("/") or "."] = StoreBackendEntrypoint().open_dataset(
                store,
                mask_and_scale=mask_and_scale,
                decode_times=decode_times,
                concat_characters=concat_characters,
                decode_coords=decode_coords,
                drop_variables=drop_variables,
                use_cftime=use_cftime,
                decode_timedelta=decode_timedelta,
            )
        return out

    def open_datatree(self, filename_or_obj: Any, **kwargs: Any):
        groups = self.open_groups_as_dict(filename_or_obj, **kwargs)
        try:
            from xarray.backends.common import datatree_from_dict_with_io_cleanup

            return datatree_from_dict_with_io_cleanup(groups)
        except ImportError:  # pragma: no cover - older xarray
            from xarray import DataTree

            return DataTree.from_dict(groups)
