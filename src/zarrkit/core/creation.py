"""The one creation path: an :class:`~zarrkit.metadata.spec.ArraySpec` becomes its metadata
object, the store is checked, the metadata written once, and the
:class:`~zarrkit.core.array.Array` is made from that metadata object (not read back).

Every entrance arrives here: :mod:`zarrkit.api.creation`'s functions (``create``, ``zeros``,
``create_array``...), ``open_array`` when it creates, zarr-python 2's ``init_array`` and a
group's member-creating methods.  They normalise their arguments into a spec, and turn what the
user passed as ``store=`` into :class:`~zarrkit.core.node.NodeStores`; the functions here take
stores, never coerce them.  Every argument is validated before anything is deleted or written,
so a bad call leaves the store as it was.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..errors import NodesOverlapError
from ..metadata import io
from ..metadata.build import build_metadata
from ..metadata.normalize import normalize_path
from ..metadata.spec import AUTO, ArraySpec, classic_spec
from ..storage.coerce import NodeStores
from ..storage.places import node_place, places_overlap
from .array import Array
from .write import prepare_value

__all__ = [
    "ArrayOptions", "ArrayRequest", "classic_request", "create_array_node", "fill_array", "open_array_node",
    "write_array_node", "write_group_node",
]


@dataclass(frozen=True)
class ArrayOptions:
    """How the new :class:`~zarrkit.core.array.Array` handle behaves (nothing of it is stored)."""

    read_only: bool = False
    synchronizer: Any = None
    cache_metadata: bool = True
    cache_attrs: bool = True
    #: None: the array's format's default (``config.write_empty_chunks_for``)
    write_empty_chunks: bool | None = None
    #: the memory order reads return (zarr-python 3's ``config={'order': ...}``); None: the
    #: stored layout's
    order: str | None = None
    #: whether a chunk not stored reads as the fill value (False: raises
    #: :class:`~zarrkit.errors.ChunkNotFoundError`); None: ``config.read_missing_chunks``
    read_missing_chunks: bool | None = None


@dataclass(frozen=True)
class ArrayRequest:
    """A creation call's arguments, normalised: what to store, how to treat what is there
    (``overwrite``), and the handle's options."""

    spec: ArraySpec
    options: ArrayOptions
    overwrite: bool = False


def classic_request(
    shape: Any, chunks: Any = True, dtype: Any = None, compressor: Any = "default", fill_value: Any = 0,
    order: str | None = None, synchronizer: Any = None, overwrite: bool = False, filters: Any = None,
    cache_metadata: bool = True, cache_attrs: bool = True, read_only: bool = False, object_codec: Any = None,
    dimension_separator: str | None = None, write_empty_chunks: bool | None = None, zarr_format: int | None = None,
    *, attributes: dict[str, Any] | None = None, mode: str | None = None, shards: Any = None,
    dimension_names: Any = None, codecs: Any = None, chunk_key_encoding: Any = None, serializer: Any = None,
    compressors: Any = AUTO, config_order: str | None = None, read_missing_chunks: bool | None = None,
    fn: str = "create", **kwargs: Any,
) -> ArrayRequest:
    """The :class:`ArrayRequest` of zarr-python 2's ``create`` arguments (all but where the
    array goes: ``store``, ``path``, ``chunk_store``), as :func:`zarrkit.create` and a
    group's ``create``/``zeros``/``create_dataset``... take them."""
    spec = classic_spec(
        shape, chunks, dtype, compressor, fill_value, order, filters, object_codec, dimension_separator,
        zarr_format, attributes=attributes, mode=mode, shards=shards, dimension_names=dimension_names,
        codecs=codecs, chunk_key_encoding=chunk_key_encoding, serializer=serializer, compressors=compressors,
        kwargs=kwargs, config_order=config_order, fn=fn,
    )
    options = ArrayOptions(
        read_only=read_only, synchronizer=synchronizer, cache_metadata=cache_metadata, cache_attrs=cache_attrs,
        write_empty_chunks=write_empty_chunks, read_missing_chunks=read_missing_chunks,
    )
    # zarr-python 3's mode='w' is zarr-python 2's overwrite=True
    return ArrayRequest(spec, options, overwrite=overwrite or mode == "w")


def create_array_node(
    stores: NodeStores, path: Any, spec: ArraySpec, *, overwrite: bool = False,
    options: ArrayOptions = ArrayOptions(), data: Any = None,
) -> Array:
    """Create the array ``spec`` describes at ``path`` and return it (holding ``data``, when
    given; ``options.read_only`` then applies once it is written).

    Raises
    ------
    ContainsArrayError, ContainsGroupError
        A node is already at ``path`` and ``overwrite`` is False.
    NodesOverlapError
        ``overwrite`` with ``data`` an array whose node overlaps ``path`` (a ``ValueError``;
        nothing is written).
    """
    path = normalize_path(path)
    if overwrite and isinstance(data, Array):
        check_no_overlap(data._store, data._path, stores.store, path)
        if data._chunk_store is not data._store or stores.chunk_store is not stores.store:
            # replacing the node deletes its chunks too
            check_no_overlap(data._chunk_store, data._path, stores.chunk_store, path)
    spec, meta, documents = _array_documents(stores, spec, path)
    # the handle is made of the metadata object to write, not of the store's documents
    array = Array._from_metadata(
        stores, path, meta, read_only=options.read_only and data is None, synchronizer=options.synchronizer,
        cache_metadata=options.cache_metadata, cache_attrs=options.cache_attrs,
        write_empty_chunks=options.write_empty_chunks, read_missing_chunks=options.read_missing_chunks,
    )
    if (options.order or spec.read_order) is not None:
        array._runtime_order = options.order or spec.read_order
    if data is not None:
        # converted and checked before the node there is replaced: values the new array
        # cannot hold must not cost the old one
        data = _prepared_data(array, data)
    io.write_new_node(stores.store, path, spec.zarr_format, documents, overwrite, stores.chunk_store)
    if data is not None:
        fill_array(array, data)
        if options.read_only:
            array.read_only = True
    return array


def check_no_overlap(source: Any, source_path: str, dest: Any, dest_path: str) -> None:
    """Refuse to replace the node at ``dest_path`` of ``dest`` with a copy of the one at
    ``source_path`` of ``source`` when they overlap where their values really are (one is the
    other or lies below it; links followed): the source would be deleted before it is read.

    Raises
    ------
    NodesOverlapError
        They overlap (nothing is written).
    """
    source_place, dest_place = node_place(source, source_path), node_place(dest, dest_path)
    if places_overlap(source_place, dest_place):
        raise NodesOverlapError(
            f"cannot overwrite path {dest_path!r} (at {dest_place}) with a copy of the node at "
            f"{source_path!r} (at {source_place}): the paths overlap (expected places apart), so "
            "the source would be deleted before it is copied",
            source=str(source_place), destination=str(dest_place),
        )


def _prepared_data(array: Array, data: Any) -> Any:
    """``data`` as ``array`` stores it, or an error before anything is written: values cast to
    its data type, broadcast to its shape and passed by its codecs.  A zarrkit array stays one
    (it is copied a stored object at a time), but when its values might not cast (text, objects,
    dates) or the codecs check values, every part is converted once first and dropped."""
    ctx = array._ctx
    key = ctx.prefix + ctx.meta.metadata_key
    if not isinstance(data, Array):
        values, scalar = prepare_value(data, array.shape, ctx.dtype)
        if ctx.codec.refuses_values and values.size:
            ctx.codec.check_values(values.reshape(-1)[:1] if scalar else values, key)
        return values
    source, target = np.dtype(data.dtype), ctx.dtype
    may_fail = source != target and (source.kind in _UNCERTAIN_KINDS or target.kind in _UNCERTAIN_KINDS)
    if may_fail or ctx.codec.refuses_values:
        for region in _regions(array):
            part, _ = prepare_value(data[region], tuple(s.stop - s.start for s in region), target)
            if ctx.codec.refuses_values and part.size:
                ctx.codec.check_values(part, key)
    return data


#: data type kinds whose casts to or from another can fail on a value (text, bytes, objects,
#: dates and durations, structures)
_UNCERTAIN_KINDS = frozenset("OUSTVMm")


def _regions(array: Array) -> Iterator[tuple[slice, ...]]:
    """The regions of ``array``'s stored objects (shards, else chunks), in order."""
    step = array.shards or array.chunks
    for corner in itertools.product(*(range(0, n, s) for n, s in zip(array.shape, step))):
        yield tuple(slice(c, min(c + s, n)) for c, s, n in zip(corner, step, array.shape))


def fill_array(array: Array, data: Any) -> None:
    """Write ``data`` (of ``array``'s shape) into ``array``: a zarrkit array one stored object
    (shard, else chunk) of ``array`` at a time, so memory stays bounded; anything else at once.
    """
    if not isinstance(data, Array) or not array.ndim:
        array[...] = data
        return
    for region in _regions(array):
        array[region] = data[region]


def open_array_node(
    stores: NodeStores, path: str, mode: str, make_spec: Callable[[], ArraySpec], options: ArrayOptions,
    zarr_format: int | None = None,
) -> Array:
    """``open_array``: open the array at ``path``, or create the one ``make_spec()`` describes
    (called only then) when ``mode`` says so ('w', 'w-'/'x', or 'a' with nothing there; see
    :func:`zarrkit.metadata.io.open_or_place_array`)."""

    def build() -> tuple[Any, dict[str, bytes], int]:
        spec = _with_separator(make_spec(), getattr(stores.store, "dimension_separator", None))
        meta = build_metadata(spec, io.meta_key(path, io.v3.ZARR_JSON))
        return meta, io.array_documents(path, meta, spec.attributes or {}), spec.zarr_format

    meta = io.open_or_place_array(stores.store, path, mode, build, stores.chunk_store, stores.store_arg)
    if meta is None:
        array = Array(
            stores, path=path, read_only=(mode == "r"), synchronizer=options.synchronizer,
            cache_metadata=options.cache_metadata, cache_attrs=options.cache_attrs,
            write_empty_chunks=options.write_empty_chunks, zarr_format=zarr_format,
        )
        if options.read_missing_chunks is not None:
            array._read_missing_chunks = options.read_missing_chunks
    else:
        array = Array._from_metadata(
            stores, path, meta, read_only=options.read_only, synchronizer=options.synchronizer,
            cache_metadata=options.cache_metadata, cache_attrs=options.cache_attrs,
            write_empty_chunks=options.write_empty_chunks, read_missing_chunks=options.read_missing_chunks,
        )
    if options.order is not None:
        array._runtime_order = options.order
    return array


def _with_separator(spec: ArraySpec, separator: str | None) -> ArraySpec:
    if spec.zarr_format == 2 and spec.dimension_separator is None and separator:
        # a v2 array takes the chunk key separator of a store that has its own
        # (zarr-python 2's NestedDirectoryStore)
        return replace(spec, dimension_separator=separator)
    return spec


def write_array_node(stores: NodeStores, path: str, spec: ArraySpec, overwrite: bool = False) -> Any:
    """Build the metadata of ``spec``, check the place, and write it (the parents too); return
    the metadata object."""
    spec, meta, documents = _array_documents(stores, spec, path)
    io.write_new_node(stores.store, path, spec.zarr_format, documents, overwrite, stores.chunk_store)
    return meta


def _array_documents(stores: NodeStores, spec: ArraySpec, path: str) -> tuple[ArraySpec, Any, dict[str, bytes]]:
    """``spec`` as stored at ``path`` of ``stores``, its metadata object and its documents."""
    spec = _with_separator(spec, getattr(stores.store, "dimension_separator", None))
    meta = build_metadata(spec, io.meta_key(path, io.v3.ZARR_JSON))
    return spec, meta, io.array_documents(path, meta, spec.attributes or {})


def write_group_node(
    stores: NodeStores, path: str, zarr_format: int, attributes: dict[str, Any] | None = None,
    overwrite: bool = False,
) -> None:
    """Write a group's metadata at ``path`` (and the missing parents); a node there is an error
    unless ``overwrite``."""
    documents = io.group_documents(path, zarr_format, attributes)
    # a group already there is in the way too, as in zarr-python 2
    io.write_new_node(stores.store, path, zarr_format, documents, overwrite, stores.chunk_store)
