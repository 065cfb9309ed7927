"""The ``Group`` class: a node holding arrays and other groups (h5py-like API).

Here: opening a group, the mapping of its members (``g[name]``, ``in``, ``del``), changes to
the hierarchy (``move``, zarr-python 3's ``create_array``), its description and identity.
Finding members and walking below the group is :mod:`.navigation`'s; creating members with
zarr-python 2's methods is :mod:`.group_create`'s; what an array shares with a group (stores,
path, attributes) is :class:`~zarrkit.core.node.Node`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import keyword
from collections.abc import ItemsView, Iterator, KeysView, Mapping, ValuesView
from typing import Any, ClassVar, Self, TypeAlias

import numpy as np

from ..errors import (
    ContainsArrayError,
    ContainsGroupError,
    GroupNotFoundError,
    InvalidPathError,
    NodeNotFoundError,
)
from ..metadata import io
from ..metadata.consolidated import (
    GROUP_METADATA_KEYS,
    ConsolidatedMetadata,
    ConsolidatedStore,
    GroupMetadata,
    consolidated_metadata_of,
    load_consolidated,
)
from ..metadata.io import require_parent_groups
from ..metadata.normalize import normalize_path
from ..metadata.spec import array_config_arg, zarr3_spec, zarr_format_arg
from ..storage.base import describe_location, describe_store, join_path
from ..storage.coerce import NodeStores, open_stores
from ..storage.store_path import StorePath
from .array import Array
from .creation import ArrayOptions, create_array_node, write_group_node
from .group_create import MemberCreationMethods
from .info import InfoReporter, describe_group, group_items, group_report, group_repr
from .navigation import NavigationMethods, group_html, member_names
from .node import Node

__all__ = ["GROUP_METADATA_KEYS", "ConsolidatedMetadata", "Group", "GroupMetadata", "Member"]

#: what a lookup by name gives: an :class:`~zarrkit.core.array.Array` or a :class:`Group`,
#: which only the store knows.  Typed ``Any`` so that ``g["x"][:]`` and ``g["sub"]["x"]`` need
#: no narrowing first; ``isinstance`` narrows it, and ``open_array``, ``open_group``,
#: :meth:`Group.arrays` and :meth:`Group.groups` are typed precisely.
Member: TypeAlias = Any

# The lock a group's synchronizer gives for changes to the hierarchy (creating, requiring,
# moving and deleting members): one lock for the whole store, so that two processes requiring
# the same group serialise on it.
HIERARCHY_LOCK = "zarrkit-hierarchy"

#: how many members a group's HTML view (what Jupyter shows) lists
HTML_MEMBERS = 50


class Group(Node, Mapping[str, "Array | Group"], MemberCreationMethods, NavigationMethods):
    """A group of arrays and groups in a Zarr store.

    A group is a read-only :class:`~collections.abc.Mapping` of member names to arrays and
    groups (``keys()``, ``values()``, ``items()``, ``get()``), as in zarr-python 2;
    ``g[name] = data`` and ``del g[name]`` create and delete members.

    Names are paths relative to the group (``'a/b'``), except that a name starting with ``/``
    is a path from the root of the store, as in zarr-python 2: ``sub.create_group('/x')``
    creates ``x`` at the root and ``g['/']`` is the root group.

    Parameters
    ----------
    store : str, os.PathLike, MutableMapping or store
        Where the group already is (see :func:`zarrkit.group`): a zarrkit store, a path to
        a directory, a URL (``s3://...``) or a mapping.
    path : str, optional
        Group path within the store.
    read_only : bool, optional
        True if the group (and arrays obtained through it) must not be modified.
    chunk_store : MutableMapping, optional
        Separate storage for array chunks.
    cache_attrs : bool, optional
        If False, attributes are read again on every access.
    synchronizer : object, optional
        Synchronizer handed to member arrays; changes to the hierarchy (creating, requiring,
        moving, deleting members) also take its ``'zarrkit-hierarchy'`` lock.
    zarr_version, zarr_format : int (2 or 3), optional
        Open only a group of this format (``zarr_version`` is zarr-python 2's spelling).
    meta_array : optional
        zarr-python 2's output buffer type: accepted and ignored.

    Raises
    ------
    GroupNotFoundError
        No group at ``path`` (also a ``ValueError``, as in zarr-python 2).
    ContainsArrayError
        An array is at ``path``.

    Examples
    --------
    >>> import zarrkit
    >>> root = zarrkit.group()
    >>> foo = root.create_group('foo')
    >>> z = foo.zeros('bar', shape=(10, 10), chunks=(5, 5))
    >>> sorted(root['foo'])
    ['bar']
    >>> foo.create_group('/baz').path  # from the root of the store
    'baz'
    """

    _kind: ClassVar[str] = "group"

    @property
    def _async_group(self) -> Any:
        """zarr-python 3's asynchronous twin of this group (a :class:`zarrkit.AsyncGroup` over it)."""
        return self._asynchronous("AsyncGroup")

    async def update_attributes_async(self, new_attributes: dict[str, Any]) -> Group:
        """Replace the attributes and return this group (zarr-python 3's coroutine; where
        :meth:`update_attributes` merges, this replaces them, as zarr-python 3's does).

        Parameters
        ----------
        new_attributes : dict
            All the attributes the group is to have (written at once, in a worker thread).

        Returns
        -------
        Group
            This group.
        """
        await asyncio.to_thread(self._attrs.put, dict(new_attributes))
        return self

    def __init__(
        self, store: Any, path: str | None = None, read_only: bool = False, chunk_store: Any = None,
        cache_attrs: bool = True, synchronizer: Any = None, zarr_version: int | None = None, *,
        zarr_format: int | None = None, meta_array: Any = None,
    ):
        wrapped = getattr(store, "_group", None)
        if isinstance(wrapped, Group) and not isinstance(store, Group):
            # zarr-python 3's Group(async_group): the synchronous group an AsyncGroup wraps
            self._open(wrapped._stores, wrapped._path, wrapped._read_only, wrapped._cache_attrs,
                       wrapped._synchronizer, zarr_format=wrapped._zarr_format)
            return
        self._open(NodeStores.of(store, chunk_store), path, read_only, cache_attrs, synchronizer,
                   wanted=zarr_format if zarr_format is not None else zarr_version)

    @classmethod
    def from_store(cls, store: Any, *, attributes: dict[str, Any] | None = None, zarr_format: int | None = 3,
                   overwrite: bool = False) -> Group:
        """Create a group at the root of ``store`` (zarr-python 3's constructor).

        Parameters
        ----------
        store : str, MutableMapping, store or StorePath
            Where to create it (a ``StorePath``: at its path).
        attributes : dict, optional
            The group's attributes.
        zarr_format : int (2 or 3), optional
            The group's format (None: ``zarrkit.config.zarr_format``).
        overwrite : bool, optional
            Replace whatever is there.

        Returns
        -------
        Group

        Raises
        ------
        ContainsGroupError, ContainsArrayError
            A node is there and ``overwrite`` is False.

        Examples
        --------
        >>> import zarrkit
        >>> g = zarrkit.Group.from_store({}, attributes={'title': 'demo'}, zarr_format=2)
        >>> g.attrs['title'], g.metadata.zarr_format
        ('demo', 2)
        """
        zarr_format = zarr_format_arg(zarr_format)
        if attributes is not None and not isinstance(attributes, Mapping):
            raise TypeError(f"attributes must be a dict, got {type(attributes).__name__}")
        path = ""
        if isinstance(store, StorePath):  # the group at its path (shown by the group's path)
            store, path = store.store, normalize_path(store.path)
        stores = open_stores(store)
        write_group_node(stores, path, zarr_format, None if attributes is None else dict(attributes), overwrite)
        return cls._from_metadata(stores, path, zarr_format)

    @classmethod
    def open(cls, store: Any, zarr_format: int | None = 3, use_consolidated: bool | str | None = None) -> Group:
        """The group at the root of ``store`` (zarr-python 3's constructor; a ``StorePath``:
        the group at its path).

        Parameters
        ----------
        store : str, MutableMapping, store or StorePath
        zarr_format : int (2 or 3), optional
            Open only a group of this format (None: either).
        use_consolidated : bool or str, optional
            Read the hierarchy's metadata from its consolidated metadata: True requires it,
            None uses it when there is some, False ignores it; a string is the key of a v2
            consolidated document.

        Returns
        -------
        Group

        Raises
        ------
        GroupNotFoundError
            No group there (a ``FileNotFoundError``).
        ContainsArrayError
            An array is there.
        """
        path = ""
        if isinstance(store, StorePath):
            store, path = store.store, normalize_path(store.path)
        if zarr_format not in (None, 2, 3):
            raise ValueError(f"zarr_format must be 2, 3 or None, got {zarr_format!r}")
        stores = open_stores(store)
        docs = None
        if use_consolidated is not False:
            if not getattr(stores.store_arg, "supports_consolidated_metadata", True):
                if use_consolidated is None:  # the store keeps its metadata together itself
                    return cls(stores, path=path, zarr_format=zarr_format)
                raise ValueError(f"{describe_store(stores.store_arg)} doesn't support consolidated metadata "
                                 "(use_consolidated=True)")
            docs = load_consolidated(stores.store, path, zarr_format)
            if docs is None and use_consolidated:
                raise GroupNotFoundError(
                    f"Consolidated metadata requested (use_consolidated=True), but none found in store "
                    f"{describe_store(stores.store_arg)} at path {path!r}", path=path)
        if docs is None:
            return cls(stores, path=path, zarr_format=zarr_format)
        return cls(ConsolidatedStore(stores.store, docs), path=path, zarr_format=zarr_format)

    @classmethod
    def _from_metadata(
        cls, store: Any, path: str | None, zarr_format: int, *, read_only: bool = False, chunk_store: Any = None,
        cache_attrs: bool = True, synchronizer: Any = None, attributes: dict[str, Any] | None = None,
    ) -> Group:
        """The group of format ``zarr_format`` at ``path``, whose metadata was just written
        there (or is not stored, and has ``attributes``: ``from_dict``): nothing is read from
        the store (``store`` as for :meth:`Array._from_metadata <zarrkit.core.array.Array._from_metadata>`)."""
        group = cls.__new__(cls)
        group._open(NodeStores.of(store, chunk_store), path, read_only, cache_attrs, synchronizer,
                    zarr_format=zarr_format)
        if attributes is not None:
            group._know_attributes(attributes)
        return group

    def _open(  # __init__'s work; with ``zarr_format`` given, nothing is read from the store
        self, stores: NodeStores, path: str | None, read_only: bool, cache_attrs: bool, synchronizer: Any,
        wanted: int | None = None, zarr_format: int | None = None,
    ) -> None:
        self._init_node(stores, path, read_only, synchronizer, cache_attrs)
        if zarr_format is None:
            zarr_format = self._stored_format(wanted)
        self._attach_attributes(zarr_format)

    def _stored_format(self, wanted: int | None) -> int:
        """The format of the group stored at the path (checked to be ``wanted``)."""
        try:
            zarr_format = io.check_group(self._store, self._path)
        except GroupNotFoundError:
            if io.node_kind(self._store, self._path) == "array":
                raise ContainsArrayError(
                    f"{describe_location(self._store_arg, self._path)} holds an array, not a group", path=self._path
                ) from None
            raise GroupNotFoundError(io.not_found_message("group", self._store_arg, self._path),
                                     path=self._path) from None
        if wanted is not None and wanted != zarr_format:
            raise GroupNotFoundError(
                io.not_found_message(f"Zarr v{wanted} group", self._store_arg, self._path,
                                     f"(the group there is v{zarr_format})"),
                path=self._path,
            )
        return zarr_format

    # -- properties --------------------------------------------------------------------------
    @property
    def name(self) -> str:
        """Group name following h5py convention ('/' for the root)."""
        return "/" + self._path

    @property
    def basename(self) -> str:
        """The last segment of the path ('' for the root)."""
        return self._path.split("/")[-1] if self._path else ""

    @property
    def metadata(self) -> GroupMetadata:
        """The group's metadata (zarr-python 3's :class:`GroupMetadata`): ``zarr_format``,
        ``attributes``, ``node_type``, and for a group opened through consolidated metadata
        the metadata of every node below it (``consolidated_metadata``)."""
        store = self._store
        consolidated = None
        if isinstance(store, ConsolidatedStore):
            docs = {key: store.parsed_document(key) for key in store.docs}
            consolidated = consolidated_metadata_of(docs, self._path, self._zarr_format)
        return GroupMetadata(attributes=self._attrs.asdict(), zarr_format=self._zarr_format,
                             consolidated_metadata=consolidated)

    # -- members -----------------------------------------------------------------------------
    def _item_path(self, item: Any) -> str:
        """The store path a member name or path designates: relative to this group, or to the
        root of the store when it starts with ``/``."""
        if isinstance(item, bytes):
            item = item.decode("utf-8")
        elif not isinstance(item, str):
            item = str(item)
        path = normalize_path(item)
        if item.startswith("/") or not self._path:
            return path
        return join_path(self._path, path)

    def _open_member(self, path: str, kind: str) -> Array | Group:
        if kind == "array":
            return Array(
                self._stores,  # the members share the group's stores
                path=path,
                read_only=self._read_only,
                synchronizer=self._synchronizer,
                cache_attrs=self._cache_attrs,
            )
        return Group(
            self._stores,
            path=path,
            read_only=self._read_only,
            cache_attrs=self._cache_attrs,
            synchronizer=self._synchronizer,
        )

    def _not_found(self, item: Any, path: str) -> NodeNotFoundError:
        return NodeNotFoundError(
            io.not_found_message("array or group", self._store_arg, path), path
        )

    def __len__(self) -> int:
        """Number of members."""
        return len(member_names(self))

    def __iter__(self) -> Iterator[str]:
        """Member names, sorted."""
        return iter([name for name, _ in member_names(self)])

    def __contains__(self, item: object) -> bool:
        """Whether ``item`` (a name, a relative path, or a path from the root of the store
        when it starts with ``/``) is an array or group."""
        try:
            path = self._item_path(item)
        except ValueError:
            return False
        return io.node_kind(self._store, path) is not None

    def __getitem__(self, item: str) -> Member:
        """Obtain a member by name or path ('a/b/c'; '/a/b' from the root of the store).

        Examples
        --------
        >>> import zarrkit
        >>> root = zarrkit.group()
        >>> bar = root.create_group('foo/bar')
        >>> root['foo/bar'] == bar and bar['/'] == root
        True
        """
        path = self._item_path(item)
        kind = io.node_kind(self._store, path)
        if kind is None:
            raise self._not_found(item, path)
        return self._open_member(path, kind)

    def __setitem__(self, item: str, value: Any) -> None:
        """``g['x'] = data`` creates (or replaces) an array holding ``data``."""
        self.array(item, value, overwrite=True)

    def __delitem__(self, item: str) -> None:
        """Delete a member and everything below it."""
        self._check_writable()
        with self._hierarchy_lock():
            path = self._item_path(item)
            self._check_not_above(path, item)
            if io.node_kind(self._store, path) is None:
                raise self._not_found(item, path)
            self._store.delete_prefix(path + "/")
            if self._chunk_store_arg is not None:
                self._chunk_store.delete_prefix(path + "/")

    def keys(self) -> KeysView[str]:
        """A live view of the member names, sorted (what iterating the group gives).

        Examples
        --------
        >>> import zarrkit
        >>> g = zarrkit.group()
        >>> _ = g.create_group('foo'); _ = g.zeros('bar', shape=(3,))
        >>> list(g.keys())
        ['bar', 'foo']
        """
        return KeysView(self)

    def values(self) -> ValuesView[Array | Group]:
        """A live view of the members (arrays and groups), in name order.

        Examples
        --------
        >>> import zarrkit
        >>> g = zarrkit.group()
        >>> _ = g.create_group('foo'); _ = g.zeros('bar', shape=(3,))
        >>> [type(v).__name__ for v in g.values()]
        ['Array', 'Group']
        """
        return _MembersValuesView(self)

    def items(self) -> ItemsView[str, Array | Group]:
        """A live view of ``(name, member)`` pairs, in name order.

        Examples
        --------
        >>> import zarrkit
        >>> g = zarrkit.group()
        >>> _ = g.create_group('foo'); _ = g.zeros('bar', shape=(3,))
        >>> [(k, v.path) for k, v in g.items()]
        [('bar', 'bar'), ('foo', 'foo')]
        """
        return _MembersItemsView(self)

    def __getattr__(self, item: str) -> Member:
        # Dot access to members (g.foo); private and special names are never members (IPython
        # probes such names, and a lookup would cost store requests).
        if item.startswith("_"):
            raise AttributeError(item)
        try:
            return self[item]
        except (KeyError, ValueError):
            raise AttributeError(f"{type(self).__name__!r} has no attribute or member {item!r}") from None

    def __dir__(self) -> list[str]:
        members = {n for n in self if n.isidentifier() and not keyword.iskeyword(n)}
        return sorted(set(super().__dir__()) | members)

    def _ipython_key_completions_(self) -> list[str]:
        """Member names, for tab completion of ``g['...`` in IPython."""
        return sorted(self)

    # -- creating members ----------------------------------------------------------------
    def _read_only_message(self) -> str:
        return f"group {self.name!r} is read-only"

    def _hierarchy_lock(self) -> contextlib.AbstractContextManager[Any]:
        return self._lock(HIERARCHY_LOCK)

    def _check_not_above(self, path: str, name: Any) -> None:
        # A member name that designates this group or one above it (``''``, ``'/'``) would
        # replace or delete the group itself.
        if path == self._path or not path or self._path.startswith(path + "/"):
            raise ContainsGroupError(
                f"{name!r} designates {'the root group' if not path else f'the group {path!r}'}, "
                f"not a member of group {self.name!r}",
                path=path,
            )

    def _check_free(self, path: str, name: Any) -> None:
        self._check_not_above(path, name)
        kind = io.node_kind(self._store, path)
        if kind == "array":
            raise ContainsArrayError(f"an array already exists at {describe_location(self._store_arg, path)}", path=path)
        if kind == "group":
            raise ContainsGroupError(f"a group already exists at {describe_location(self._store_arg, path)}", path=path)

    def create_array(self, name: str, *, shape: Any = None, dtype: Any = None, data: Any = None,
                     overwrite: bool = False, **kwargs: Any) -> Array:
        """Create an array in this group with zarr-python 3's arguments.

        Parameters
        ----------
        name : str
            Name (or path below this group) of the new array.
        shape : tuple of ints, optional
            Shape of the array (or ``data=``'s).
        dtype : str or dtype, optional
            Data type (default: ``data``'s, else float64).
        data : array-like, optional
            Gives the shape, the data type and the contents.
        overwrite : bool, optional
            Replace whatever is at ``name``.
        **kwargs
            Forwarded to :func:`zarrkit.create_array` (``chunks='auto'``, ``shards``,
            ``compressors``, ``serializer``, ``filters``, ``fill_value``, ``attributes``,
            ``dimension_names``...; ``zarr_format`` defaults to the group's).

        Returns
        -------
        Array
            The new array.

        Raises
        ------
        TypeError
            Neither ``shape`` nor ``data``.
        ValueError
            ``shape`` contradicts ``data``.

        Examples
        --------
        >>> import zarrkit
        >>> g = zarrkit.create_group(store={})
        >>> a = g.create_array('a', shape=(4, 4), chunks=(2, 2), dtype='i4')
        >>> a.shape, a.chunks, g.nmembers()
        ((4, 4), (2, 2), 1)
        """
        if data is not None:
            data = data if hasattr(data, "shape") and hasattr(data, "dtype") else np.asanyarray(data)
            if shape is not None and tuple(np.atleast_1d(shape)) != tuple(data.shape):
                raise ValueError(f"shape={shape!r} contradicts data of shape {data.shape}")
            shape = data.shape
            dtype = data.dtype if dtype is None else dtype
        if shape is None:
            raise TypeError("create_array() needs shape= (or data=)")
        self._check_writable()
        with self._hierarchy_lock():
            path = self._item_path(name)
            self._check_not_above(path, name)
            # settings of a handle: the one returned is the group's member, with its settings
            for setting in ("synchronizer", "write_empty_chunks"):
                kwargs.pop(setting, None)
            if kwargs.get("storage_options", True) is None:
                del kwargs["storage_options"]
            spec = zarr3_spec(shape, dtype="float64" if dtype is None else dtype,
                              zarr_format=self._member_format(kwargs.pop("zarr_format", None)), **kwargs)
            # the one creation path: ``data`` is converted before what is at ``path`` is replaced
            settings = array_config_arg(kwargs.get("config"))
            options = ArrayOptions(read_only=self._read_only, synchronizer=self._synchronizer, cache_attrs=self._cache_attrs,
                                   write_empty_chunks=settings.get("write_empty_chunks"),
                                   read_missing_chunks=settings.get("read_missing_chunks"))
            return create_array_node(self._stores, path, spec, overwrite=overwrite, options=options,
                                     data=data)

    def require_array(self, name: str, *, shape: Any, dtype: Any = None, exact: bool = False,
                      **kwargs: Any) -> Array:
        """The array ``name``, created (as :meth:`create_array`) when missing.

        Parameters
        ----------
        name : str
            Name (or path below this group) of the array.
        shape : tuple of ints
            The shape an existing array must have, or the new one's.
        dtype : str or dtype, optional
            The data type: an existing array's must cast safely to it (as zarr-python 3
            checks; :meth:`require_dataset` checks the other way, as zarr-python 2 did).
        exact : bool, optional
            Require an existing array's data type to be ``dtype`` exactly.
        **kwargs
            Forwarded to :meth:`create_array` when the array is created; ``config`` (the
            runtime settings, see :meth:`Array.with_config`) applies to an existing one too.

        Returns
        -------
        Array

        Raises
        ------
        TypeError, ValueError
            An existing array's shape or data type differs; an unknown ``config`` setting
            (TypeError) or one of the wrong type (ValueError).
        GroupNotArrayError
            A group is at ``name`` (a ``TypeError`` too)."""
        array_config_arg(config := kwargs.get("config"))  # checked whether or not the array is there
        if name not in self:
            return self.create_array(name, shape=shape, dtype=dtype, **kwargs)
        self._check_writable()
        path = self._item_path(name)
        array = self._required_array(path, io.node_kind(self._store, path), shape, dtype, exact,
                                     casts_to_existing=False)
        return array if config is None else array.with_config(config)

    def create_hierarchy(self, nodes: Mapping[str, Any], *, overwrite: bool = False) -> Iterator[tuple[str, Array | Group]]:
        """Create the groups of ``nodes`` below this group, and the groups missing above
        them (zarr-python 3's method).

        Parameters
        ----------
        nodes : dict
            Paths below this group mapped to :class:`GroupMetadata`; all of one format.
        overwrite : bool, optional
            Replace nodes already at the paths asked for (an error otherwise).

        Yields
        ------
        tuple of (str, Group)
            ``(path below this group, group)`` of the groups made, parents first.

        Raises
        ------
        TypeError
            A node that is not a ``GroupMetadata``.
        ValueError
            Nodes of both formats.

        Examples
        --------
        >>> import zarrkit
        >>> g = zarrkit.create_group({})
        >>> [path for path, _ in g.create_hierarchy({'a/b': GroupMetadata()})]
        ['a', 'a/b']
        """
        self._check_writable()
        with self._hierarchy_lock():
            made = list(create_group_nodes(self._stores, nodes, overwrite=overwrite, base=self._path))
        for rel, group in made:
            if rel:
                yield rel, group

    def move(self, source: str, dest: str) -> None:
        """Move a member (and everything below it) to another path.

        Both are member names or paths of this group (``'/x'`` is ``x`` at the root of the
        store).  A missing ``source`` raises :class:`~zarrkit.errors.NodeNotFoundError`, an
        existing ``dest`` :class:`~zarrkit.errors.ContainsArrayError` or
        :class:`~zarrkit.errors.ContainsGroupError` (all of them ``ValueError``, as in
        zarr-python 2); groups missing above ``dest`` are created.

        Parameters
        ----------
        source : str
            The member to move.
        dest : str
            Where to.

        Examples
        --------
        >>> import zarrkit
        >>> g = zarrkit.group()
        >>> _ = g.zeros('a', shape=2)
        >>> g.move('a', 'sub/b')
        >>> sorted(g), list(g['sub'])
        (['sub'], ['b'])
        """
        self._check_writable()
        with self._hierarchy_lock():
            src = self._item_path(source)
            dst = self._item_path(dest)
            self._check_not_above(src, source)
            if io.node_kind(self._store, src) is None:
                raise self._not_found(source, src)
            existing = io.node_kind(self._store, dst)
            if existing is not None:
                cls = ContainsGroupError if existing == "group" else ContainsArrayError
                article = "an" if existing == "array" else "a"
                raise cls(f"cannot move {source!r} to {dest!r}: {describe_location(self._store_arg, dst)} holds {article} {existing}", dst)
            if not dst or dst.startswith(src + "/"):
                raise InvalidPathError(f"cannot move {source!r} into itself ({dest!r})")
            require_parent_groups(self._store, dst, self._zarr_format)
            stores = [self._store]
            if self._chunk_store_arg is not None:
                stores.append(self._chunk_store)
            for store in stores:
                keys = list(store.list_prefix(src + "/"))
                for key in keys:
                    value = store.get(key)
                    if value is not None:
                        store.set(dst + key[len(src):], value)
                for key in keys:
                    store.delete(key)

    # -- display and identity ------------------------------------------------------------
    def __repr__(self) -> str:
        # nothing read from the store: zarr-python 3's form for a v3 group, 2's for a v2 one
        return group_repr(self)

    @property
    def info(self) -> InfoReporter:
        """A report on the group: its type and store, as the zarr-python of its format shows
        it (``print(g.info)`` shows a text table; Jupyter renders it as an HTML table).

        A v2 group's report lists its members, as zarr-python 2's does: showing it reads the
        store (a listing of the group and a read of each member's metadata).  A v3 group's
        shows what zarr-python 3's does, which reads nothing; :meth:`info_complete` adds the
        member counts.
        """
        return group_report(self, members=self._zarr_format == 2)

    def info_complete(self) -> InfoReporter:
        """:attr:`info` with the counts of members (zarr-python 3's name).  Showing it reads
        the store: for a v3 group, as in zarr-python 3, the count is of every array and group
        below it (a listing of each group below and a read of each node's metadata); a v2
        group's :attr:`info` has its members already."""
        return group_report(self, members=True)

    def info_items(self) -> list[tuple[str, str]]:
        """zarr-python 2's ``info_items()``: the rows of its ``info`` as ``(name, value)``
        pairs, whatever the group's format.  Reads the store (a listing of the group and a
        read of each member's metadata)."""
        return group_items(describe_group(self, members=True), style=2)

    # IPython asks for these rich displays: a bounded view for HTML, None (the text repr) for
    # the others (and a group has no attribute of these names to look up among its members)
    def _repr_html_(self) -> str:
        """What Jupyter shows, without a request to the store: the group's path and store
        and, for a group opened through consolidated metadata, its first :data:`HTML_MEMBERS`
        members (arrays with their shape and data type), one level deep, and how many more
        there are.  Other groups' members are not listed (a listing reads the store, which on
        object storage costs requests however few members are shown): :meth:`tree` and
        :meth:`members` list them."""
        return group_html(self, HTML_MEMBERS)

    def _no_display(self, include: Any = None, exclude: Any = None) -> None:
        return None

    _repr_markdown_ = _repr_svg_ = _repr_png_ = _repr_jpeg_ = _repr_latex_ = _no_display
    _repr_json_ = _repr_javascript_ = _repr_pdf_ = _repr_mimebundle_ = _no_display

    def __getstate__(self) -> dict[str, Any]:
        return self._node_state()

    def __setstate__(self, state: dict[str, Any]) -> None:
        type(self).__init__(self, **state)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self._store.close()


def create_group_nodes(stores: NodeStores, nodes: Mapping[str, Any], *, overwrite: bool = False,
                       base: str = "") -> Iterator[tuple[str, Group]]:
    """Create the groups of ``nodes`` (paths below ``base`` mapped to :class:`GroupMetadata`)
    and the groups missing above them, parents first; yields ``(path below base, group)`` of
    ``base`` itself (``''``), of each group made to hold the others and of each asked for.

    A node asked for replaces what is there with ``overwrite``, and finds it an error
    otherwise; a parent is written only when missing.  All nodes are checked before anything
    is written.
    """
    specs: dict[str, GroupMetadata] = {}
    for raw, spec in nodes.items():
        if not isinstance(spec, GroupMetadata):
            raise TypeError(f"create_hierarchy: nodes[{raw!r}] must be a GroupMetadata, got {type(spec).__name__}")
        specs[normalize_path(raw)] = spec
    formats = {spec.zarr_format for spec in specs.values()}
    if len(formats) > 1:
        raise ValueError(f"create_hierarchy: the nodes mix Zarr formats {sorted(formats)}")
    zarr_format = formats.pop() if formats else 3
    wanted = set(specs) | {""}
    for path in list(specs):
        parts = path.split("/") if path else []
        wanted.update("/".join(parts[:i]) for i in range(len(parts)))
    ordered = sorted(wanted, key=lambda p: (p.count("/") + bool(p), p))
    if not overwrite:  # every place checked first: a refused node leaves the store as it was
        for rel in ordered:
            path = join_path(base, rel)
            if rel in specs:
                io.check_free(stores.store, path)
            elif io.node_kind(stores.store, path) == "array":
                raise ContainsArrayError(
                    f"cannot create a node below the array at {path!r}: A parent of the nodes "
                    "to create is an array - only groups may have child nodes.", path=path)
    for rel in ordered:
        path = join_path(base, rel)
        spec = specs.get(rel)
        if spec is not None:  # asked for: replaced with overwrite, else a node there is an error
            write_group_node(stores, path, zarr_format, dict(spec.attributes), overwrite)
        elif io.node_kind(stores.store, path) is None:  # a parent: made only when missing
            write_group_node(stores, path, zarr_format)
        yield rel, Group._from_metadata(stores, path, zarr_format) if spec is not None else Group(stores, path=path)


class _MembersValuesView(ValuesView["Array | Group"]):
    # one listing for the whole iteration (the default view looks every member up twice)
    _mapping: Group

    def __iter__(self) -> Iterator[Array | Group]:
        g = self._mapping
        for name, kind in member_names(g):
            yield g._open_member(join_path(g.path, name), kind)


class _MembersItemsView(ItemsView[str, "Array | Group"]):
    _mapping: Group

    def __iter__(self) -> Iterator[tuple[str, Array | Group]]:
        g = self._mapping
        for name, kind in member_names(g):
            yield name, g._open_member(join_path(g.path, name), kind)


# Public home of the class (zarr-python 2's ``zarr.hierarchy.Group``); pickles name it there.
Group.__module__ = "zarrkit.hierarchy"
