"""zarr-python 3's ``AsyncArray`` and ``AsyncGroup``: the synchronous nodes, awaited.

Asynchrony is an adapter at the edge, never a second engine.  An :class:`AsyncArray` holds an
:class:`~zarrkit.core.array.Array` (an :class:`AsyncGroup` a :class:`~zarrkit.core.group.Group`);
each coroutine runs the synchronous call in a worker thread of the running event loop
(:func:`asyncio.to_thread`), so the loop goes on while the engine reads, decodes and writes, and
the engine knows nothing of ``asyncio``.  Results are the synchronous call's, with arrays and
groups wrapped; errors are the synchronous call's exceptions, unchanged.

Properties read what the node already holds (its metadata, its shape...); what reads the store
(``nchunks_initialized``, ``info_complete``, members) is a coroutine, as in zarr-python 3.

Many coroutines may run at once on one array (``asyncio.gather``): reads are independent, and
writes to different chunks are too.  Writes sharing a chunk need the array's synchronizer
(``synchronizer=zarrkit.ThreadSynchronizer()``), as with threads.

Examples
--------
>>> import asyncio, numpy as np, zarrkit
>>> from zarrkit.api.async_nodes import AsyncArray
>>> async def main():
...     arr = AsyncArray(zarrkit.zeros((4, 4), chunks=(2, 2), dtype='i4'))
...     await arr.setitem((slice(0, 2), slice(None)), np.arange(8).reshape(2, 4))
...     return await arr.getitem((1, slice(None)))
>>> asyncio.run(main())
array([4, 5, 6, 7], dtype=int32)
"""

from __future__ import annotations

import operator
from collections.abc import AsyncIterator, Callable
from typing import Any, ClassVar, TypeVar, overload

import numpy as np

from ..core.array import Array
from ..core.group import Group
from ..core.indexing import IntSelection, KeepingSelection, NDArrayOrScalar
from ..core.info import InfoReporter
from ..errors import ContainsArrayError
from ..metadata.consolidated import GroupMetadata
from ..metadata.zdtypes import ZDType
from ..storage.store_path import StorePath
from .async_run import run_in_thread, sync
from .gathered import gathered_read
from .hierarchy import create_group
from .opening import open_array

__all__ = [
    "AsyncArray", "AsyncGroup", "AsyncOIndex", "AsyncVIndex", "collect_aiterator", "run", "run_array", "run_group",
    "run_node", "sync", "unwrap", "wrap",
]

R = TypeVar("R")


async def _collect_aiterator(data: AsyncIterator[R]) -> tuple[R, ...]:
    """Every item of an asynchronous iterator, as a tuple."""
    return tuple([item async for item in data])


def collect_aiterator(data: AsyncIterator[R]) -> tuple[R, ...]:
    """Every item of an asynchronous iterator (``AsyncGroup.members()``...), read from
    synchronous code with :func:`sync`."""
    return sync(_collect_aiterator(data))


def wrap(node: Any) -> Any:
    """``node`` as zarr-python 3's asynchronous API gives it: an :class:`Array` as an
    :class:`AsyncArray`, a :class:`Group` as an :class:`AsyncGroup`, anything else unchanged."""
    if isinstance(node, Array):
        return AsyncArray(node)
    if isinstance(node, Group):
        return AsyncGroup(node)
    return node


async def run(fn: Callable[..., R], /, *args: Any, **kwargs: Any) -> R:
    """:func:`~zarrkit.api.async_run.run_in_thread` (its parameters, its result, its way of
    stopping when cancelled), with :class:`AsyncArray` and :class:`AsyncGroup` arguments given
    to ``fn`` as the synchronous nodes they wrap."""
    return await run_in_thread(fn, *(unwrap(a) for a in args), **{k: unwrap(v) for k, v in kwargs.items()})


def unwrap(value: Any) -> Any:
    """The synchronous node an :class:`AsyncArray` or :class:`AsyncGroup` wraps; anything else
    unchanged."""
    if isinstance(value, AsyncArray):
        return value._array
    if isinstance(value, AsyncGroup):
        return value._group
    return value


async def run_node(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> AsyncArray | AsyncGroup:
    """:func:`run` of a function giving an array or a group, given back by :func:`wrap`."""
    node = wrap(await run(fn, *args, **kwargs))
    if not isinstance(node, AsyncArray | AsyncGroup):
        raise TypeError(f"{fn.__name__} gave {type(node).__name__}, not an array or a group")
    return node


async def run_array(fn: Callable[..., Array], /, *args: Any, **kwargs: Any) -> AsyncArray:
    """:func:`run` of a function giving an array, as an :class:`AsyncArray`."""
    return AsyncArray(await run(fn, *args, **kwargs))


async def run_group(fn: Callable[..., Group], /, *args: Any, **kwargs: Any) -> AsyncGroup:
    """:func:`run` of a function giving a group, as an :class:`AsyncGroup`."""
    return AsyncGroup(await run(fn, *args, **kwargs))


class AsyncArray:
    """An :class:`~zarrkit.core.array.Array` whose reads and writes are awaited
    (zarr-python 3's ``zarr.AsyncArray``).

    Parameters
    ----------
    array : Array
        The synchronous array: each coroutine runs its method in a worker thread.

    Examples
    --------
    >>> import asyncio, zarrkit
    >>> arr = AsyncArray(zarrkit.full((6,), 3, chunks=(2,), dtype='u1'))
    >>> asyncio.run(arr.getitem(slice(1, 4)))
    array([3, 3, 3], dtype=uint8)
    >>> arr.shape, arr.chunks, arr.dtype
    ((6,), (2,), dtype('uint8'))
    """

    __slots__ = ("_array",)

    def __init__(self, array: Array) -> None:
        if not isinstance(array, Array):
            raise TypeError(f"AsyncArray wraps a zarrkit Array, got {type(array).__name__}")
        self._array = array

    @classmethod
    async def open(cls, store: Any, zarr_format: int | None = 3, *, config: Any = None) -> AsyncArray:
        """Open the existing array of ``store``.

        Parameters
        ----------
        store : str, MutableMapping or store
            Where the array is.
        zarr_format : {2, 3, None}, optional
            The format to look for (``None``: either).
        config : dict or ArrayConfig, optional
            Run-time settings of the opened array (``write_empty_chunks``, ``order``,
            ``read_missing_chunks``).

        Returns
        -------
        AsyncArray

        Raises
        ------
        ArrayNotFoundError
            No array of that format is there.
        """
        array = await run(open_array, store, mode="r+", zarr_format=zarr_format)
        return cls(array if config is None else array.with_config(config))

    @classmethod
    def from_dict(cls, store_path: Any, data: dict[str, Any]) -> AsyncArray:
        """The array ``data`` describes at ``store_path``, nothing read or written
        (:meth:`Array.from_dict <zarrkit.core.array.Array.from_dict>`)."""
        return cls(Array.from_dict(store_path, data))

    # -- what the array holds ----------------------------------------------------------------
    @property
    def metadata(self) -> Any:
        """The array's metadata (shape, data type, codecs...)."""
        return self._array.metadata

    @property
    def config(self) -> Any:
        """Run-time settings (``order``, ``write_empty_chunks``, ``read_missing_chunks``)."""
        return self._array.config

    @property
    def store(self) -> Any:
        """The store the array is in."""
        return self._array.store

    @property
    def shape(self) -> tuple[int, ...]:
        return self._array.shape

    @property
    def ndim(self) -> int:
        return self._array.ndim

    @property
    def size(self) -> int:
        return self._array.size

    @property
    def chunks(self) -> tuple[int, ...]:
        return self._array.chunks

    @property
    def shards(self) -> tuple[int, ...] | None:
        return self._array.shards

    @property
    def read_chunk_sizes(self) -> tuple[tuple[int, ...], ...]:
        return self._array.read_chunk_sizes

    @property
    def write_chunk_sizes(self) -> tuple[tuple[int, ...], ...]:
        return self._array.write_chunk_sizes

    @property
    def dtype(self) -> np.dtype[Any]:
        return self._array.dtype

    @property
    def _zdtype(self) -> ZDType[Any, Any]:
        return self._array._zdtype

    @property
    def order(self) -> str:
        return self._array.order

    @property
    def filters(self) -> tuple[Any, ...]:
        """The filters as the metadata has them, a tuple (zarr-python 3's; the synchronous
        array's ``filters`` is zarr-python 2's list, or None)."""
        return tuple(self._array.metadata.filters or ())

    @property
    def serializer(self) -> Any:
        return self._array.serializer

    @property
    def compressor(self) -> Any:
        return self._array.compressor

    @property
    def compressors(self) -> tuple[Any, ...]:
        return self._array.compressors

    @property
    def attrs(self) -> dict[str, Any]:
        """The attributes, as a dictionary (zarr-python 3 gives a ``dict`` here; change them
        with :meth:`update_attributes`)."""
        return dict(self._array.attrs)

    @property
    def read_only(self) -> bool:
        return self._array.read_only

    @property
    def path(self) -> str:
        return self._array.path

    @property
    def store_path(self) -> StorePath:
        """The store and the array's path in it (a :class:`~zarrkit.storage.StorePath`)."""
        return self._array.store_path

    @property
    def name(self) -> str | None:
        return self._array.name

    @property
    def basename(self) -> str | None:
        return self._array.basename

    @property
    def cdata_shape(self) -> tuple[int, ...]:
        return self._array.cdata_shape

    @property
    def nchunks(self) -> int:
        return self._array.nchunks

    @property
    def nbytes(self) -> int:
        return self._array.nbytes

    @property
    def info(self) -> InfoReporter:
        """What the metadata says of the array (:meth:`info_complete` adds what is stored)."""
        return self._array.info

    def with_config(self, config: Any) -> AsyncArray:
        """This array with other run-time settings (``order``, ``write_empty_chunks``)."""
        return AsyncArray(self._array.with_config(config))

    # -- what reads the store ----------------------------------------------------------------
    async def nchunks_initialized(self) -> int:
        """How many chunks are stored."""
        return await run(operator.attrgetter("nchunks_initialized"), self._array)

    async def nshards_initialized(self) -> int:
        """How many stored objects there are: shards of a sharded array, chunks of any other."""
        return await run(operator.attrgetter("nshards_initialized"), self._array)

    #: zarr-python 3's private names of the two counts
    _nchunks_initialized = nchunks_initialized
    _nshards_initialized = nshards_initialized

    async def nbytes_stored(self) -> int:
        """How many bytes the array's keys take in the store."""
        return await run(operator.attrgetter("nbytes_stored"), self._array)

    async def info_complete(self) -> InfoReporter:
        """:attr:`info` with what is stored (chunks initialized, bytes stored)."""
        return await run(self._array.info_complete)

    # -- selections ----------------------------------------------------------------------------
    @overload
    async def getitem(self, selection: IntSelection, *, prototype: Any = None) -> NDArrayOrScalar: ...  # type: ignore[overload-overlap]
    @overload
    async def getitem(self, selection: KeepingSelection, *, prototype: Any = None) -> np.ndarray[Any, Any]: ...
    @overload
    async def getitem(self, selection: Any, *, prototype: Any = None) -> NDArrayOrScalar: ...

    async def getitem(self, selection: Any, *, prototype: Any = None) -> NDArrayOrScalar:
        """Read a basic selection (integers, slices, ``...``): ``await arr.getitem((0, slice(2)))``.

        Reads of one array that coroutines ask for in the same turn of the loop
        (``asyncio.gather``) are read as one (:mod:`zarrkit.api.gathered`).  ``prototype``
        (zarr-python's buffer choice) is accepted; zarrkit returns NumPy arrays.
        """
        return await gathered_read(self._array, selection)

    async def get_many(self, selections: Any) -> list[NDArrayOrScalar]:
        """Read several basic selections at once (:meth:`Array.get_many
        <zarrkit.core.selection.SelectionMethods.get_many>`)."""
        return await run(self._array.get_many, selections)

    async def setitem(self, selection: Any, value: Any, prototype: Any = None) -> None:
        """Write ``value`` into a basic selection."""
        await run(self._array.set_basic_selection, selection, value)

    async def get_orthogonal_selection(self, selection: Any, *, out: Any = None, fields: Any = None,
                                       prototype: Any = None) -> NDArrayOrScalar:
        """Read an orthogonal (outer) selection, one index per dimension."""
        return await run(self._array.get_orthogonal_selection, selection, out=out, fields=fields)

    async def get_coordinate_selection(self, selection: Any, *, out: Any = None, fields: Any = None,
                                       prototype: Any = None) -> NDArrayOrScalar:
        """Read the points of integer coordinate arrays."""
        return await run(self._array.get_coordinate_selection, selection, out=out, fields=fields)

    async def get_mask_selection(self, mask: Any, *, out: Any = None, fields: Any = None,
                                 prototype: Any = None) -> NDArrayOrScalar:
        """Read the elements where a Boolean mask of the array's shape is true."""
        return await run(self._array.get_mask_selection, mask, out=out, fields=fields)

    @property
    def oindex(self) -> AsyncOIndex:
        """Orthogonal selections: ``await arr.oindex.getitem(([0, 2], slice(None)))``."""
        return AsyncOIndex(self)

    @property
    def vindex(self) -> AsyncVIndex:
        """Coordinate and mask selections: ``await arr.vindex.getitem(([0, 2], [1, 3]))``."""
        return AsyncVIndex(self)

    @property
    def _chunk_grid(self) -> Any:
        """The grid of the stored objects (shards, or chunks)."""
        return self._array._chunk_grid

    def _iter_chunk_regions(self, *, origin: Any = None, selection_shape: Any = None) -> Any:
        """The region (a slice per dimension) each chunk covers, in C order of the chunks."""
        return self._array._iter_chunk_regions(origin=origin, selection_shape=selection_shape)

    def _iter_shard_regions(self, *, origin: Any = None, selection_shape: Any = None) -> Any:
        """The region each shard (each chunk of an array without shards) covers."""
        return self._array._iter_shard_regions(origin=origin, selection_shape=selection_shape)

    # -- changes -------------------------------------------------------------------------------
    async def resize(self, new_shape: Any, delete_outside_chunks: bool = True) -> None:
        """Change the shape; with ``delete_outside_chunks`` (the default) the chunks wholly
        outside a shrunk shape are deleted, without it they are kept."""
        await run(self._array.resize, new_shape, delete_outside_chunks=delete_outside_chunks)

    async def append(self, data: Any, axis: int = 0) -> tuple[int, ...]:
        """Append ``data`` along ``axis``; returns the new shape."""
        return await run(self._array.append, data, axis=axis)

    async def update_attributes(self, new_attributes: dict[str, Any]) -> AsyncArray:
        """Add or replace attributes; returns this array."""
        await run(self._array.update_attributes, new_attributes)
        return self

    def __repr__(self) -> str:
        return _async_repr("Array", self._array)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AsyncArray) and self._array == other._array

    __hash__: ClassVar[None] = None  # type: ignore[assignment]


class AsyncOIndex:
    """Orthogonal selections of an :class:`AsyncArray` (``arr.oindex``)."""

    __slots__ = ("array",)

    def __init__(self, array: AsyncArray) -> None:
        self.array: AsyncArray = array

    async def getitem(self, selection: Any) -> NDArrayOrScalar:
        """``array.oindex[selection]`` of the synchronous array, awaited."""
        return await run(operator.getitem, self.array._array.oindex, selection)


class AsyncVIndex:
    """Coordinate and mask selections of an :class:`AsyncArray` (``arr.vindex``)."""

    __slots__ = ("array",)

    def __init__(self, array: AsyncArray) -> None:
        self.array: AsyncArray = array

    async def getitem(self, selection: Any) -> NDArrayOrScalar:
        """``array.vindex[selection]`` of the synchronous array, awaited."""
        return await run(operator.getitem, self.array._array.vindex, selection)


class AsyncGroup:
    """A :class:`~zarrkit.core.group.Group` whose members are awaited (zarr-python 3's
    ``zarr.AsyncGroup``).

    Parameters
    ----------
    group : Group
        The synchronous group: each coroutine runs its method in a worker thread.

    Examples
    --------
    >>> import asyncio, zarrkit
    >>> async def main():
    ...     root = await AsyncGroup.from_store({}, attributes={'title': 'demo'})
    ...     await root.create_array('x', shape=(4,), dtype='f8')
    ...     await root.create_group('sub')
    ...     return sorted([name async for name in root.keys()]), root.attrs
    >>> asyncio.run(main())
    (['sub', 'x'], {'title': 'demo'})
    """

    __slots__ = ("_group",)

    def __init__(self, group: Group) -> None:
        if not isinstance(group, Group):
            raise TypeError(f"AsyncGroup wraps a zarrkit Group, got {type(group).__name__}")
        self._group = group

    @classmethod
    async def from_store(cls, store: Any, *, attributes: dict[str, Any] | None = None, overwrite: bool = False,
                         zarr_format: int = 3) -> AsyncGroup:
        """Create a group at the root of ``store``.

        Raises
        ------
        ContainsGroupError, ContainsArrayError
            A node is there and ``overwrite`` is False.
        """
        return await run_group(create_group, store, attributes=attributes, overwrite=overwrite,
                              zarr_format=zarr_format)

    @classmethod
    async def open(cls, store: Any, zarr_format: int | None = 3, use_consolidated: bool | None = None) -> AsyncGroup:
        """Open the existing group of ``store`` (through its consolidated metadata with
        ``use_consolidated=True``).

        Raises
        ------
        GroupNotFoundError
            No group of that format is there.
        """
        return await run_group(Group.open, store, zarr_format=zarr_format, use_consolidated=use_consolidated)

    @classmethod
    def from_dict(cls, store_path: Any, data: dict[str, Any]) -> AsyncGroup:
        """The group ``data`` describes at ``store_path`` (zarr-python 3's: a group's metadata
        document as a dict, ``zarr_format`` and ``attributes``).  Nothing is read or written:
        the document is not stored (:meth:`from_store` stores one).

        Raises
        ------
        ContainsArrayError
            ``data`` describes an array.
        NodeTypeValidationError
            Another ``node_type`` than ``'group'``.
        """
        if data.get("node_type") == "array":
            raise ContainsArrayError(f"from_dict: the metadata given at {store_path} describes an array, not a group")
        meta = GroupMetadata.from_dict(data)
        return cls(Group._from_metadata(store_path, None, meta.zarr_format, attributes=meta.attributes))

    # -- what the group holds ----------------------------------------------------------------
    @property
    def metadata(self) -> Any:
        """The group's metadata (format, attributes, consolidated metadata)."""
        return self._group.metadata

    @property
    def store(self) -> Any:
        return self._group.store

    @property
    def store_path(self) -> StorePath:
        """The store and the group's path in it (a :class:`~zarrkit.storage.StorePath`)."""
        return self._group.store_path

    @property
    def path(self) -> str:
        return self._group.path

    @property
    def name(self) -> str:
        return self._group.name

    @property
    def basename(self) -> str:
        return self._group.basename

    @property
    def attrs(self) -> dict[str, Any]:
        """The attributes, as a dictionary (change them with :meth:`update_attributes`)."""
        return dict(self._group.attrs)

    @property
    def read_only(self) -> bool:
        return self._group.read_only

    @property
    def synchronizer(self) -> Any:
        return self._group.synchronizer

    @property
    def info(self) -> InfoReporter:
        """What the metadata says of the group (:meth:`info_complete` counts its members)."""
        return self._group.info

    async def info_complete(self) -> InfoReporter:
        """:attr:`info` with the members counted."""
        return await run(self._group.info_complete)

    # -- members -------------------------------------------------------------------------------
    async def getitem(self, key: str) -> AsyncArray | AsyncGroup:
        """The member at ``key`` (a name or a path below this group).

        Raises
        ------
        KeyError
            Nothing is there (:class:`~zarrkit.errors.NodeNotFoundError`).
        """
        return await run_node(operator.getitem, self._group, key)

    async def get(self, key: str, default: Any = None) -> Any:
        """The member at ``key``, or ``default``."""
        try:
            return await self.getitem(key)
        except KeyError:
            return default

    async def get_array(self, path: str) -> AsyncArray:
        """The array at ``path``; raises if it is absent or a group."""
        return await run_array(self._group.get_array, path)

    async def get_group(self, path: str) -> AsyncGroup:
        """The group at ``path``; raises if it is absent or an array."""
        return await run_group(self._group.get_group, path)

    async def setitem(self, key: str, value: Any) -> None:
        """Store ``value`` (array-like) as the array ``key``."""
        await run(operator.setitem, self._group, key, value)

    async def delitem(self, key: str) -> None:
        """Delete the member ``key`` and everything below it."""
        await run(operator.delitem, self._group, key)

    async def contains(self, member: str) -> bool:
        """Whether a member is at ``member``."""
        return await run(operator.contains, self._group, member)

    async def nmembers(self, max_depth: int | None = 0) -> int:
        """How many members, to ``max_depth`` levels below the children (``None``: all)."""
        return await run(self._group.nmembers, max_depth)

    async def members(self, max_depth: int | None = 0, *,
                      use_consolidated_for_children: bool = True) -> AsyncIterator[tuple[str, Any]]:
        """``(path, member)`` of the members, to ``max_depth`` levels below the children."""
        for name, node in await run(self._group.members, max_depth):
            yield name, wrap(node)

    async def keys(self) -> AsyncIterator[str]:
        """The children's names."""
        for name in await run(_listed, self._group.keys):
            yield name

    async def groups(self) -> AsyncIterator[tuple[str, AsyncGroup]]:
        """``(name, group)`` of the child groups."""
        for name, node in await run(_listed, self._group.groups):
            yield name, wrap(node)

    async def group_keys(self) -> AsyncIterator[str]:
        for name in await run(_listed, self._group.group_keys):
            yield name

    async def group_values(self) -> AsyncIterator[AsyncGroup]:
        for node in await run(_listed, self._group.group_values):
            yield wrap(node)

    async def arrays(self) -> AsyncIterator[tuple[str, AsyncArray]]:
        """``(name, array)`` of the child arrays."""
        for name, node in await run(_listed, self._group.arrays):
            yield name, wrap(node)

    async def array_keys(self) -> AsyncIterator[str]:
        for name in await run(_listed, self._group.array_keys):
            yield name

    async def array_values(self) -> AsyncIterator[AsyncArray]:
        for node in await run(_listed, self._group.array_values):
            yield wrap(node)

    async def tree(self, expand: bool | None = None, level: int | None = None, *, max_nodes: int | None = None,
                   plain: bool = False) -> Any:
        """A printable tree of the hierarchy below this group (:meth:`Group.tree`)."""
        return await run(self._group.tree, expand=bool(expand), level=level, max_nodes=max_nodes, plain=plain)

    async def create_hierarchy(self, nodes: dict[str, Any], *, overwrite: bool = False
                               ) -> AsyncIterator[tuple[str, AsyncArray | AsyncGroup]]:
        """Create the groups of ``nodes`` below this group (:meth:`Group.create_hierarchy`)."""
        for path, node in await run(_listed, lambda: self._group.create_hierarchy(nodes, overwrite=overwrite)):
            yield path, wrap(node)

    # -- creating members ----------------------------------------------------------------------
    async def create_group(self, name: str, *, overwrite: bool = False,
                           attributes: dict[str, Any] | None = None) -> AsyncGroup:
        """Create the sub-group ``name``."""
        return await run_group(self._group.create_group, name, overwrite=overwrite, attributes=attributes)

    async def require_group(self, name: str, overwrite: bool = False) -> AsyncGroup:
        """The sub-group ``name``, created if missing."""
        return await run_group(self._group.require_group, name, overwrite=overwrite)

    async def require_groups(self, *names: str) -> tuple[AsyncGroup, ...]:
        return tuple(wrap(g) for g in await run(self._group.require_groups, *names))

    async def create_array(self, name: str, **kwargs: Any) -> AsyncArray:
        """Create the array ``name``: the keywords of :meth:`Group.create_array
        <zarrkit.core.group.Group.create_array>` (``shape``, ``dtype``, ``chunks``, ``data``...)."""
        return await run_array(self._group.create_array, name, **kwargs)

    async def require_array(self, name: str, *, shape: Any, dtype: Any = None, exact: bool = False,
                            **kwargs: Any) -> AsyncArray:
        """The array ``name``, created if missing; an existing one must match ``shape`` and
        ``dtype``."""
        return await run_array(self._group.require_array, name, shape=shape, dtype=dtype, exact=exact, **kwargs)

    async def empty(self, *, name: str, shape: Any, **kwargs: Any) -> AsyncArray:
        return await run_array(self._group.empty, name, shape=shape, **kwargs)

    async def zeros(self, *, name: str, shape: Any, **kwargs: Any) -> AsyncArray:
        return await run_array(self._group.zeros, name, shape=shape, **kwargs)

    async def ones(self, *, name: str, shape: Any, **kwargs: Any) -> AsyncArray:
        return await run_array(self._group.ones, name, shape=shape, **kwargs)

    async def full(self, *, name: str, shape: Any, fill_value: Any, **kwargs: Any) -> AsyncArray:
        return await run_array(self._group.full, name, fill_value, shape=shape, **kwargs)

    async def empty_like(self, *, name: str, data: Any, **kwargs: Any) -> AsyncArray:
        return await run_array(self._group.empty_like, name, data, **kwargs)

    async def zeros_like(self, *, name: str, data: Any, **kwargs: Any) -> AsyncArray:
        return await run_array(self._group.zeros_like, name, data, **kwargs)

    async def ones_like(self, *, name: str, data: Any, **kwargs: Any) -> AsyncArray:
        return await run_array(self._group.ones_like, name, data, **kwargs)

    async def full_like(self, *, name: str, data: Any, **kwargs: Any) -> AsyncArray:
        return await run_array(self._group.full_like, name, data, **kwargs)

    # -- changes -------------------------------------------------------------------------------
    async def update_attributes(self, new_attributes: dict[str, Any]) -> AsyncGroup:
        """Add or replace attributes; returns this group."""
        await run(self._group.update_attributes, new_attributes)
        return self

    async def move(self, source: str, dest: str) -> None:
        """Move the member ``source`` to ``dest``."""
        await run(self._group.move, source, dest)

    def __repr__(self) -> str:
        return _async_repr("Group", self._group)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AsyncGroup) and self._group == other._group

    __hash__: ClassVar[None] = None  # type: ignore[assignment]


def _async_repr(kind: str, node: Any) -> str:
    """``<AsyncArray memory://... shape=(4,) dtype=int32>`` of ``<Array memory://... ...>`` (and of
    zarr-python 2's ``<zarrkit.Array (4,) int32>``)."""
    text = repr(node)
    prefix = f"<{kind} "
    return f"<Async{kind} " + (text[len(prefix):] if text.startswith(prefix) else text.partition(" ")[2])


def _listed(method: Callable[[], Any]) -> list[Any]:
    """What ``method()`` iterates, read in full (in the worker thread)."""
    return list(method())
