"""How a group creates its members: sub-groups (``create_group``, ``require_group``...) and
arrays with zarr-python 2's methods (``create``, ``zeros``, ``array``, ``zeros_like``...,
h5py's ``create_dataset`` and ``require_dataset``), each the creation function of the same
name: its arguments go the one creation path (:mod:`.creation`) with the group's stores, below
the group, under its hierarchy lock; the group's format, synchronizer and chunk store are the
defaults."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Self, cast

import numpy as np

from ..errors import ArrayNotGroupError, ContainsGroupError, GroupNotArrayError
from ..metadata import io
from ..metadata.normalize import normalize_shape
from ..metadata.spec import with_array_config
from ..storage.base import describe_location
from ..storage.coerce import NodeStores
from .array import Array
from .creation import classic_request, create_array_node, write_group_node
from .creation_like import EMPTY_FILL, data_args, fixed_fill, like_args

__all__ = ["MemberCreationMethods"]


class MemberCreationMethods:
    """The member-creating methods of :class:`~zarrkit.core.group.Group`."""

    # what the group class provides
    _stores: NodeStores
    _store: Any
    _store_arg: Any
    _chunk_store_arg: Any
    _zarr_format: int
    _synchronizer: Any
    _cache_attrs: bool
    _path: str
    _item_path: Callable[[Any], str]
    _check_not_above: Callable[[str, Any], None]
    _check_free: Callable[[str, Any], None]
    _open_member: Callable[[str, str], Any]
    _check_writable: Callable[[], None]
    _hierarchy_lock: Callable[[], Any]

    def _create_group_nosync(self, name: Any, overwrite: bool, attributes: dict[str, Any] | None = None) -> Any:
        path = self._item_path(name)
        if overwrite:
            self._check_not_above(path, name)
        else:
            self._check_free(path, name)
        write_group_node(self._stores, path, self._zarr_format, attributes, overwrite)
        return self._open_member(path, "group")

    def create_group(self, name: str, overwrite: bool = False, attributes: dict[str, Any] | None = None) -> Self:
        """Create a sub-group (and any missing intermediate groups).

        Parameters
        ----------
        name : str
            Name (or path below this group; ``'/x'`` from the root) of the new group.
        overwrite : bool, optional
            Replace whatever is at ``name``.
        attributes : dict, optional
            Attributes of the new group.

        Returns
        -------
        Group
            The new group.

        Raises
        ------
        ContainsGroupError, ContainsArrayError
            A node is at ``name`` (both are ``ValueError``) and ``overwrite`` is False.

        Examples
        --------
        >>> import zarrkit
        >>> g = zarrkit.group()
        >>> g.create_group('a/b', attributes={'x': 1}).path
        'a/b'
        """
        self._check_writable()
        with self._hierarchy_lock():
            # the attributes go into the group's first document: a group never appears without them
            return self._create_group_nosync(name, overwrite, attributes)

    def require_group(self, name: str, overwrite: bool = False) -> Self:
        """Obtain a sub-group, creating it if it doesn't exist.

        The check and the creation are one step under the synchronizer's hierarchy lock, so
        processes requiring the same group all get it.

        Parameters
        ----------
        name : str
            Name (or path below this group) of the group.
        overwrite : bool, optional
            Replace whatever is at ``name`` with a new, empty group.

        Returns
        -------
        Group

        Raises
        ------
        ArrayNotGroupError
            An array is at ``name`` and ``overwrite`` is False (a ``ContainsArrayError`` and
            a ``TypeError``).

        Examples
        --------
        >>> import zarrkit
        >>> g = zarrkit.group()
        >>> g.require_group('a') == g.require_group('a')
        True
        """
        self._check_writable()
        with self._hierarchy_lock():
            path = self._item_path(name)
            kind = io.node_kind(self._store, path)
            if kind == "group" and not overwrite:
                return self._open_member(path, "group")
            if kind == "array" and not overwrite:
                raise ArrayNotGroupError(
                    f"Incompatible object: {describe_location(self._store_arg, path)} holds an array, "
                    "not a group", path=path)
            try:
                return self._create_group_nosync(name, overwrite)
            except ContainsGroupError:
                # created meanwhile by another process (no synchronizer to order us): it is
                # what was required
                if overwrite or io.node_kind(self._store, path) != "group":
                    raise
                return self._open_member(path, "group")

    def create_groups(self, *names: str, **kwargs: Any) -> tuple[Any, ...]:
        """Create several sub-groups at once.

        Parameters
        ----------
        *names : str
            Names of the new groups.
        **kwargs
            Forwarded to :meth:`create_group` for each (``overwrite``, ``attributes``).

        Returns
        -------
        tuple of Group
        """
        return tuple(self.create_group(n, **kwargs) for n in names)

    def require_groups(self, *names: str) -> tuple[Any, ...]:
        """Require several sub-groups at once (:meth:`require_group` for each).

        Parameters
        ----------
        *names : str
            Names of the groups.

        Returns
        -------
        tuple of Group
        """
        return tuple(self.require_group(n) for n in names)

    def _member_format(self, zarr_format: Any) -> int:
        """The format of an array made below this group: the group's (given or not); another is
        refused, as zarr-python 3 does -- a hierarchy of mixed formats is read by neither
        format's readers whole."""
        if zarr_format is not None and zarr_format != self._zarr_format:
            raise ValueError(
                f"cannot create a zarr_format={zarr_format} array in a zarr_format={self._zarr_format} "
                f"group ({describe_location(self._store_arg, self._path)}): the members of a group are "
                "of its format")
        return self._zarr_format

    def _array_kwargs(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        kwargs["zarr_format"] = self._member_format(kwargs.get("zarr_format"))
        kwargs.setdefault("synchronizer", self._synchronizer)
        kwargs.setdefault("cache_attrs", self._cache_attrs)
        return kwargs

    def _member_stores(self, chunk_store: Any) -> NodeStores:
        # the group's stores, unless the member's chunks are to go elsewhere
        if chunk_store is None:
            return self._stores
        return NodeStores.of(self._store_arg, chunk_store)

    def _create_nosync(self, name: Any, kwargs: dict[str, Any], data: Any = None, fn: str = "create") -> Array:
        kwargs.pop("data", None)  # data=None, as h5py code may pass it
        path = self._item_path(name)
        self._check_not_above(path, name)
        stores = self._member_stores(kwargs.pop("chunk_store", None))
        request = classic_request(**with_array_config(self._array_kwargs(kwargs)), fn=fn)
        return create_array_node(
            stores, path, request.spec, overwrite=request.overwrite, options=request.options,
            data=data,
        )

    def _create(self, name: Any, kwargs: dict[str, Any], data: Any = None, fn: str = "create") -> Array:
        self._check_writable()
        with self._hierarchy_lock():
            return self._create_nosync(name, kwargs, data, fn)

    def _create_of_data(self, name: Any, data: Any, kwargs: dict[str, Any], fn: str = "array") -> Array:
        data, kwargs = data_args(data, kwargs)
        return self._create(name, kwargs, data, fn)

    def create_dataset(self, name: str, **kwargs: Any) -> Array:
        """Create an array (h5py's spelling): with ``data=``, filled with it.

        Parameters
        ----------
        name : str
            Name (or path below this group) of the new array.
        **kwargs
            Forwarded to :func:`zarrkit.create` (``shape``, ``dtype``, ``chunks``,
            ``compressor`` or h5py's ``compression``/``compression_opts``, ...), or with
            ``data=`` to :func:`zarrkit.array`.

        Returns
        -------
        Array
            The new array.

        Examples
        --------
        >>> import zarrkit
        >>> g = zarrkit.group()
        >>> g.create_dataset('x', data=[1, 2, 3], chunks=2)[:].tolist()
        [1, 2, 3]
        """
        data = kwargs.pop("data", None)
        if data is not None:
            return self._create_of_data(name, data, kwargs, fn="create_dataset")
        return self._create(name, kwargs, fn="create_dataset")

    def require_dataset(self, name: str, shape: Any, dtype: Any = None, exact: bool = False, **kwargs: Any) -> Array:
        """Obtain an array, creating it if it doesn't exist.

        Parameters
        ----------
        name : str
            Name (or path below this group) of the array.
        shape : int or tuple of ints
            The shape an existing array must have, or the new one's.
        dtype : str or dtype, optional
            The data type of the new array; an existing one's must be it (``exact``) or be
            castable from it.
        exact : bool, optional
            Require the existing array's data type to be ``dtype`` exactly.
        **kwargs
            Forwarded to :func:`zarrkit.create` when the array is created.

        Returns
        -------
        Array
            The existing or new array.

        Raises
        ------
        TypeError
            An existing array's shape or data type differs.
        GroupNotArrayError
            A group is at ``name`` (a ``ContainsGroupError`` and a ``TypeError``).

        Examples
        --------
        >>> import zarrkit
        >>> g = zarrkit.group()
        >>> a = g.require_dataset('x', shape=(4,), dtype='i4')
        >>> g.require_dataset('x', shape=(4,), dtype='i2') == a  # i2 casts to i4
        True
        """
        self._check_writable()
        with self._hierarchy_lock():
            path = self._item_path(name)
            kind = io.node_kind(self._store, path)
            if kind is None:
                return self._create_nosync(name, {"shape": shape, "dtype": dtype, **kwargs})
        return self._required_array(path, kind, shape, dtype, exact, casts_to_existing=True)

    def _required_array(self, path: str, kind: str | None, shape: Any, dtype: Any, exact: bool, *,
                        casts_to_existing: bool) -> Array:
        """The existing array at ``path`` (of node kind ``kind``) if it has ``shape`` and
        ``dtype``: exactly, or a data type that casts safely -- from ``dtype`` to the array's
        (``casts_to_existing``: zarr-python 2's ``require_dataset``) or from the array's to
        ``dtype`` (zarr-python 3's ``require_array``)."""
        if kind == "group":
            raise GroupNotArrayError(
                f"Incompatible object: {describe_location(self._store_arg, path)} holds a group, "
                "not an array", path=path)
        a = cast(Array, self._open_member(path, "array"))
        shape = normalize_shape(shape)
        if a.shape != shape:
            raise TypeError(f"Incompatible shape: the existing array's is {a.shape}, {shape} was required")
        if dtype is not None:
            dtype = np.dtype(dtype)
            if exact and dtype != a.dtype:
                raise TypeError(f"Incompatible dtype: the existing array's is {a.dtype}, exactly {dtype} "
                                "was required")
            source, target = (dtype, a.dtype) if casts_to_existing else (a.dtype, dtype)
            if not exact and not np.can_cast(source, target):
                raise TypeError(f"Incompatible dtype: the existing array's is {a.dtype}, {dtype} was "
                                f"required, and {source} does not cast safely to {target}")
        return a

    def create(self, name: str, **kwargs: Any) -> Array:
        """Create an array below this group.

        Parameters
        ----------
        name : str
            Name (or path below this group) of the new array.
        **kwargs
            Forwarded to :func:`zarrkit.create` (``shape``, ``chunks``, ``dtype``...).

        Returns
        -------
        Array
            The new array.
        """
        data = kwargs.pop("data", None)
        if data is not None:
            return self._create_of_data(name, data, kwargs, fn="create")
        return self._create(name, kwargs, fn="create")

    def empty(self, name: str, **kwargs: Any) -> Array:
        """Create an array with no fill value below this group.

        Parameters
        ----------
        name : str
            Name (or path below this group) of the new array.
        **kwargs
            Forwarded to :func:`zarrkit.empty` (``shape``, ``chunks``, ``dtype``...).

        Returns
        -------
        Array
            The new array.
        """
        return self._create(name, {"fill_value": None, **kwargs}, fn="empty")

    def zeros(self, name: str, **kwargs: Any) -> Array:
        """Create an array of zeros below this group.

        Parameters
        ----------
        name : str
            Name (or path below this group) of the new array.
        **kwargs
            Forwarded to :func:`zarrkit.zeros` (``shape``, ``chunks``, ``dtype``...).

        Returns
        -------
        Array
            The new array.

        Examples
        --------
        >>> import zarrkit
        >>> g = zarrkit.group()
        >>> g.zeros('a/b', shape=(2, 3), chunks=(1, 3)).path
        'a/b'
        """
        fixed_fill("zeros", 0, kwargs.get("fill_value", 0))
        return self._create(name, kwargs, fn="zeros")

    def ones(self, name: str, **kwargs: Any) -> Array:
        """Create an array of ones below this group.

        Parameters
        ----------
        name : str
            Name (or path below this group) of the new array.
        **kwargs
            Forwarded to :func:`zarrkit.ones` (``shape``, ``chunks``, ``dtype``...).

        Returns
        -------
        Array
            The new array.
        """
        fixed_fill("ones", 1, kwargs.setdefault("fill_value", 1))
        return self._create(name, kwargs, fn="ones")

    def full(self, name: str, fill_value: Any, **kwargs: Any) -> Array:
        """Create an array filled with ``fill_value`` below this group.

        Parameters
        ----------
        name : str
            Name (or path below this group) of the new array.
        fill_value : object
            The value of every element not written.
        **kwargs
            Forwarded to :func:`zarrkit.full` (``shape``, ``chunks``, ``dtype``...).

        Returns
        -------
        Array
            The new array.
        """
        return self._create(name, {**kwargs, "fill_value": fill_value}, fn="full")

    def array(self, name: str, data: Any, **kwargs: Any) -> Array:
        """Create an array holding ``data`` below this group.

        Parameters
        ----------
        name : str
            Name (or path below this group) of the new array.
        data : array-like
            The values.
        **kwargs
            Forwarded to :func:`zarrkit.array` (``chunks``, ``dtype``...).

        Returns
        -------
        Array
            The new array.

        Examples
        --------
        >>> import zarrkit
        >>> g = zarrkit.group()
        >>> g.array('x', [[1, 2], [3, 4]])[1].tolist()
        [3, 4]
        """
        return self._create_of_data(name, data, kwargs, fn="array")

    def empty_like(self, name: str, data: Any, **kwargs: Any) -> Array:
        """Create an empty array like ``data`` below this group.

        Parameters
        ----------
        name : str
            Name (or path below this group) of the new array.
        data : array-like
            The array whose shape, chunks, data type and codecs the new one takes.
        **kwargs
            Forwarded to :func:`zarrkit.empty_like`.

        Returns
        -------
        Array
            The new array.
        """
        return self._create(name, like_args("empty_like", data, kwargs, fill_value=EMPTY_FILL), fn="empty_like")

    def zeros_like(self, name: str, data: Any, **kwargs: Any) -> Array:
        """Create an array of zeros like ``data`` below this group.

        Parameters
        ----------
        name : str
            Name (or path below this group) of the new array.
        data : array-like
            The array whose shape, chunks, data type and codecs the new one takes.
        **kwargs
            Forwarded to :func:`zarrkit.zeros_like`.

        Returns
        -------
        Array
            The new array.
        """
        return self._create(name, like_args("zeros_like", data, kwargs, fill_value=0), fn="zeros_like")

    def ones_like(self, name: str, data: Any, **kwargs: Any) -> Array:
        """Create an array of ones like ``data`` below this group.

        Parameters
        ----------
        name : str
            Name (or path below this group) of the new array.
        data : array-like
            The array whose shape, chunks, data type and codecs the new one takes.
        **kwargs
            Forwarded to :func:`zarrkit.ones_like`.

        Returns
        -------
        Array
            The new array.
        """
        return self._create(name, like_args("ones_like", data, kwargs, fill_value=1), fn="ones_like")

    def full_like(self, name: str, data: Any, **kwargs: Any) -> Array:
        """Create a filled array like ``data`` below this group.

        Parameters
        ----------
        name : str
            Name (or path below this group) of the new array.
        data : array-like
            The array whose shape, chunks, data type, codecs and fill value the new one takes.
        **kwargs
            Forwarded to :func:`zarrkit.full_like` (``fill_value``...).

        Returns
        -------
        Array
            The new array.
        """
        return self._create(name, like_args("full_like", data, kwargs), fn="full_like")
