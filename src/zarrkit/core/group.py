"""The ``Group`` class: a node holding arrays and other groups (h5py-like API)."""

from __future__ import annotations

import contextlib
import keyword
import warnings
from collections.abc import Callable, ItemsView, Iterator, KeysView, Mapping, ValuesView
from typing import Any, Self

from ..errors import (
    ContainsArrayError,
    ContainsGroupError,
    GroupNotFoundError,
    InvalidPathError,
    NodeNotFoundError,
    ReadOnlyError,
)
from ..metadata import io
from ..metadata.normalize import normalize_path
from ..storage.base import Store, describe_location, describe_store, is_node_name, join_path
from ..storage.coerce import coerce_store, user_store
from .array import Array
from .attributes import Attributes
from .group_create import MemberCreationMethods
from .group_zarr3 import GroupMetadata, Zarr3GroupMethods  # noqa: F401  (zarr-python 3 imports it from here)
from .info import InfoReporter, describe_group, group_items, group_report, group_repr
from .initialize import require_parent_groups
from .pool import run_tasks, threads_for
from .tree import TreeView, members_html
from .walk import list_levels

__all__ = ["Group"]

# The lock a group's synchronizer gives for changes to the hierarchy (creating, requiring,
# moving and deleting members): one lock for the whole store, so that two processes requiring
# the same group serialise on it.
HIERARCHY_LOCK = "zarrkit-hierarchy"

#: how many members a group's HTML view (what Jupyter shows) lists
HTML_MEMBERS = 50

# A group's own metadata documents, listed beside its members but never members themselves.
_METADATA_NAMES = frozenset({".zgroup", ".zattrs", ".zarray", ".zmetadata", "zarr.json"})


class Group(Mapping[str, "Array | Group"], MemberCreationMethods, Zarr3GroupMethods):
    """A group of arrays and groups in a Zarr store.

    A group is a read-only :class:`~collections.abc.Mapping` of member names to arrays and
    groups (``keys()``, ``values()``, ``items()``, ``get()``), as in zarr-python 2;
    ``g[name] = data`` and ``del g[name]`` create and delete members.

    Names are paths relative to the group (``'a/b'``), except that a name starting with ``/``
    is a path from the root of the store, as in zarr-python 2: ``sub.create_group('/x')``
    creates ``x`` at the root and ``g['/']`` is the root group.

    Parameters
    ----------
    store : MutableMapping or str
        Group store, already initialized (see :func:`zarrkit.group`).
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

    def __init__(
        self,
        store: Any,
        path: str | None = None,
        read_only: bool = False,
        chunk_store: Any = None,
        cache_attrs: bool = True,
        synchronizer: Any = None,
        zarr_version: int | None = None,
        *,
        zarr_format: int | None = None,
        meta_array: Any = None,
    ):
        self._store: Store = coerce_store(store)
        self._store_arg = user_store(store, self._store)
        self._chunk_store_arg = chunk_store
        self._path = normalize_path(path)
        self._read_only = bool(read_only) or self._store.read_only
        self._cache_attrs = cache_attrs
        self._synchronizer = synchronizer
        wanted = zarr_format if zarr_format is not None else zarr_version
        try:
            self._zarr_format = io.check_group(self._store, self._path)
        except GroupNotFoundError:
            if io.node_kind(self._store, self._path) == "array":
                raise ContainsArrayError(
                    f"{describe_location(self._store_arg, self._path)} holds an array, not a group", self._path
                ) from None
            raise GroupNotFoundError(f"no group found at {describe_location(self._store_arg, self._path)}", self._path) from None
        if wanted is not None and wanted != self._zarr_format:
            raise GroupNotFoundError(
                f"no Zarr v{wanted} group found at {describe_location(self._store_arg, self._path)} "
                f"(there is a v{self._zarr_format} group)",
                self._path,
            )
        self._attrs = Attributes(
            self._store,
            io.attributes_key(self._path, self._zarr_format),
            read_only=self._read_only,
            cache=cache_attrs,
            synchronizer=synchronizer,
        )

    # -- properties --------------------------------------------------------------------------
    @property
    def store(self) -> Any:
        """The store holding the group (as given by the user)."""
        return self._store_arg

    @property
    def chunk_store(self) -> Any:
        """Separate storage for array chunks, if any."""
        return self.store if self._chunk_store_arg is None else self._chunk_store_arg

    @property
    def path(self) -> str:
        """Path of the group within the store ('' for the root)."""
        return self._path

    @property
    def name(self) -> str:
        """Group name following h5py convention ('/' for the root)."""
        return "/" + self._path

    @property
    def basename(self) -> str:
        """The last segment of the path ('' for the root)."""
        return self._path.split("/")[-1] if self._path else ""

    @property
    def read_only(self) -> bool:
        """True if the group (and arrays obtained through it) must not be modified."""
        return self._read_only

    @property
    def synchronizer(self) -> Any:
        """The synchronizer of the group and its arrays (None: none)."""
        return self._synchronizer

    @property
    def attrs(self) -> Attributes:
        """User-defined attributes."""
        return self._attrs

    @property
    def zarr_format(self) -> int:
        """The Zarr format of the group: 2 or 3."""
        return self._zarr_format

    #: zarr-python 2's private name of :attr:`zarr_format`, which code written for it reads.
    _version = zarr_format

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

    def _member_names(self, path: str | None = None) -> list[tuple[str, str]]:
        """``(name, kind)`` of every member of this group (or of the group at ``path`` in the
        same store), sorted: one listing of the group and one batched read of the candidates'
        metadata.  A listed name no node can have (empty, ``.``, ``..``, with a ``/``) is left
        out with a warning naming it."""
        path = self._path if path is None else path
        prefix = f"{path}/" if path else ""
        names = self._listed_names(path)
        kinds = io.node_kinds(self._store, [prefix + n for n in names])
        return [(n, kinds[prefix + n]) for n in names if kinds[prefix + n] is not None]  # type: ignore[misc]

    def _listed_names(self, path: str) -> list[str]:
        """The names listed in the group at ``path`` that a node could have, sorted (one
        listing); a listed name no node can have is left out with a warning naming it."""
        prefix = f"{path}/" if path else ""
        names = []
        for n in self._store.list_dir(prefix):
            if n in _METADATA_NAMES:
                continue
            if not is_node_name(n):
                warnings.warn(f"{describe_store(self._store_arg)}: skipping {prefix + n!r}, which no node can be named",
                              stacklevel=4)
                continue
            names.append(n)
        return sorted(names)

    def _walk(self, max_depth: int | None = None) -> Iterator[tuple[str, str, str]]:
        """``(name relative to this group, kind, path)`` of every descendant, depth first (a
        group before its members, each group's members sorted); the members of groups
        ``max_depth`` levels below are not listed (0: this group's members only).  Iterative,
        so a hierarchy of any depth is walked without recursion.  On a high-latency store
        the groups are listed ahead, a level at a time (:func:`list_levels`)."""
        members_of: Callable[[str], list[tuple[str, str]]] = self._member_names
        if getattr(self._store, "high_latency", False):
            members_of = list_levels(members_of, self._path, max_depth, threads_for(self._store)).__getitem__
        stack = [iter(members_of(self._path))]
        bases = [""]
        while stack:
            item = next(stack[-1], None)
            if item is None:
                stack.pop()
                bases.pop()
                continue
            name, kind = item
            rel = bases[-1] + name
            path = join_path(self._path, rel)
            yield rel, kind, path
            if kind == "group" and (max_depth is None or len(stack) <= max_depth):
                stack.append(iter(members_of(path)))
                bases.append(rel + "/")

    def _open_member(self, path: str, kind: str) -> Array | Group:
        if kind == "array":
            return Array(
                self._store_arg,
                path=path,
                read_only=self._read_only,
                chunk_store=self._chunk_store_arg,
                synchronizer=self._synchronizer,
                cache_attrs=self._cache_attrs,
            )
        return Group(
            self._store_arg,
            path=path,
            read_only=self._read_only,
            chunk_store=self._chunk_store_arg,
            cache_attrs=self._cache_attrs,
            synchronizer=self._synchronizer,
        )

    def _not_found(self, item: Any, path: str) -> NodeNotFoundError:
        return NodeNotFoundError(
            f"no array or group {item!r} in group {self.name!r} of {describe_store(self._store_arg)}", path
        )

    def __len__(self) -> int:
        """Number of members."""
        return len(self._member_names())

    def __iter__(self) -> Iterator[str]:
        """Member names, sorted."""
        return iter([name for name, _ in self._member_names()])

    def __contains__(self, item: object) -> bool:
        """Whether ``item`` (a name, a relative path, or a path from the root of the store
        when it starts with ``/``) is an array or group."""
        try:
            path = self._item_path(item)
        except ValueError:
            return False
        return io.node_kind(self._store, path) is not None

    def __getitem__(self, item: str) -> Array | Group:
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
                coerce_store(self._chunk_store_arg).delete_prefix(path + "/")

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

    def __getattr__(self, item: str) -> Array | Group:
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

    def group_keys(self) -> Iterator[str]:
        """Names of member groups, sorted."""
        return (name for name, kind in self._member_names() if kind == "group")

    def groups(self) -> Iterator[tuple[str, Group]]:
        """``(name, group)`` pairs of member groups."""
        for name, kind in self._member_names():
            if kind == "group":
                yield name, self._open_member(join_path(self._path, name), kind)  # type: ignore[misc]

    def _array_members(self, recurse: bool) -> Iterator[tuple[str, str]]:
        for rel, kind, path in self._walk(None if recurse else 0):
            if kind == "array":
                yield rel.rpartition("/")[2], path

    def array_keys(self, recurse: bool = False) -> Iterator[str]:
        """Names of member arrays, sorted.

        With ``recurse``, the arrays of the groups below follow (depth first, each group's
        names sorted); as in zarr-python 2 they are given by name, not by path (``arrays()``
        gives each array, whose ``path`` says where it is).

        Parameters
        ----------
        recurse : bool, optional
            Also the arrays of the groups below.

        Returns
        -------
        iterator of str

        Examples
        --------
        >>> import zarrkit
        >>> g = zarrkit.group()
        >>> _ = g.zeros('a', shape=3); _ = g.create_group('sub').zeros('b', shape=3)
        >>> list(g.array_keys()), list(g.array_keys(recurse=True))
        (['a'], ['a', 'b'])
        """
        return (name for name, _ in self._array_members(recurse))

    def arrays(self, recurse: bool = False) -> Iterator[tuple[str, Array]]:
        """``(name, array)`` pairs of member arrays.

        Parameters
        ----------
        recurse : bool, optional
            Also the arrays of the groups below, by name as :meth:`array_keys` gives them.

        Returns
        -------
        iterator of (str, Array)
        """
        for name, path in self._array_members(recurse):
            yield name, self._open_member(path, "array")  # type: ignore[misc]

    def members(self, max_depth: int | None = 0) -> list[tuple[str, Array | Group]]:
        """``(name, member)`` pairs of the members, in name order (zarr-python 3's method).

        Parameters
        ----------
        max_depth : int or None, optional
            0: direct members; more (or None: all) the members of member groups too, that
            many levels down, named by their path from this group.

        Returns
        -------
        list of (str, Array or Group)

        Examples
        --------
        >>> import zarrkit
        >>> g = zarrkit.group()
        >>> _ = g.create_group('a').zeros('b', shape=2)
        >>> [name for name, _ in g.members(max_depth=None)]
        ['a', 'a/b']
        """
        with io.reuse_documents(self._store):  # members opened with the listing's documents
            found = list(self._walk(max_depth))
            nodes = run_tasks(lambda m: self._open_member(m[2], m[1]), found, threads_for(self._store) or 1)
        return [(rel, node) for (rel, _, _), node in zip(found, nodes)]

    # -- walking ----------------------------------------------------------------------------
    def visitvalues(self, func: Callable[[Any], Any]) -> Any:
        """Call ``func(member)`` on every descendant, depth first; stop at a non-None result.

        Parameters
        ----------
        func : callable
            Called with each array and group below this one.

        Returns
        -------
        object
            The first result that is not None (None if there is none).
        """
        for _, kind, path in self._walk():
            result = func(self._open_member(path, kind))
            if result is not None:
                return result
        return None

    def visit(self, func: Callable[[str], Any]) -> Any:
        """Call ``func(relative_path)`` on every descendant, depth first; stop at a non-None
        result (``visitkeys`` is the same method).

        Parameters
        ----------
        func : callable
            Called with the path of each array and group below this one, relative to it.

        Returns
        -------
        object
            The first result that is not None (None if there is none).

        Examples
        --------
        >>> import zarrkit
        >>> g = zarrkit.group()
        >>> _ = g.create_group('a').create_group('b')
        >>> g.visit(print)
        a
        a/b
        """
        base = len(self._path) + 1 if self._path else 0
        return self.visitvalues(lambda obj: func(obj.path[base:]))

    visitkeys = visit

    def visititems(self, func: Callable[[str, Any], Any]) -> Any:
        """Call ``func(relative_path, member)`` on every descendant, depth first; stop at a
        non-None result.

        Parameters
        ----------
        func : callable
            Called with the relative path and the object of each array and group below.

        Returns
        -------
        object
            The first result that is not None (None if there is none).
        """
        base = len(self._path) + 1 if self._path else 0
        return self.visitvalues(lambda obj: func(obj.path[base:], obj))

    def tree(self, expand: bool = False, level: int | None = None) -> TreeView:
        """A text tree of the hierarchy below this group: ``str()`` (and ``print``) give it
        with box-drawing characters, ``bytes()`` in plain ASCII.

        A v3 group's tree is drawn as zarr-python 3 draws it; in Jupyter it shows as
        collapsible nested lists.

        Parameters
        ----------
        expand : bool, optional
            Accepted for zarr-python 2's HTML widget; no effect on the text.
        level : int, optional
            How many levels below this group to show (all by default).

        Returns
        -------
        TreeView

        Examples
        --------
        >>> import zarrkit
        >>> g = zarrkit.group()
        >>> _ = g.create_group('foo').zeros('baz', shape=(3,))
        >>> _ = g.create_group('quux')
        >>> print(g.tree(), end="")
        /
        ├── foo
        │   └── baz (3,) float64
        └── quux
        >>> print(bytes(g.tree()).decode(), end="")
        /
        +-- foo
        |   +-- baz (3,) float64
        +-- quux

        A v2 group draws it as zarr-python 2 did (branches one space in, no final newline).
        """
        return TreeView(self, level, zarr3=self._zarr_format == 3)

    # -- creating members ----------------------------------------------------------------
    def _check_writable(self) -> None:
        if self._read_only:
            raise ReadOnlyError(f"group {self.name!r} is read-only")

    def _hierarchy_lock(self) -> contextlib.AbstractContextManager[Any]:
        return contextlib.nullcontext() if self._synchronizer is None else self._synchronizer[HIERARCHY_LOCK]

    def _check_not_above(self, path: str, name: Any) -> None:
        # A member name that designates this group or one above it (``''``, ``'/'``) would
        # replace or delete the group itself.
        if path == self._path or not path or self._path.startswith(path + "/"):
            raise ContainsGroupError(
                f"{name!r} designates {'the root group' if not path else f'the group {path!r}'}, "
                f"not a member of group {self.name!r}",
                path,
            )

    def _check_free(self, path: str, name: Any) -> None:
        self._check_not_above(path, name)
        kind = io.node_kind(self._store, path)
        if kind == "array":
            raise ContainsArrayError(f"an array already exists at {describe_location(self._store_arg, path)}", path)
        if kind == "group":
            raise ContainsGroupError(f"a group already exists at {describe_location(self._store_arg, path)}", path)

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
                stores.append(coerce_store(self._chunk_store_arg))
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

    def _member_page(self, limit: int) -> tuple[list[tuple[str, str]], int]:
        """``(name, kind)`` of the first ``limit`` names listed in the group that are nodes,
        and how many listed names come after them (not looked at, so not checked to be
        nodes): one listing of the group and one batched read of ``limit`` names' metadata."""
        names = self._listed_names(self._path)
        prefix = f"{self._path}/" if self._path else ""
        first = names[:limit]
        kinds = io.node_kinds(self._store, [prefix + n for n in first])
        shown = [(n, kinds[prefix + n]) for n in first if kinds[prefix + n] is not None]
        return shown, len(names) - len(first)  # type: ignore[return-value]

    # IPython asks for these rich displays: a bounded view for HTML, None (the text repr) for
    # the others (and a group has no attribute of these names to look up among its members)
    def _repr_html_(self) -> str:
        """What Jupyter shows: the group's first :data:`HTML_MEMBERS` members (arrays with
        their shape and data type), one level deep, and how many more there are.  It costs
        one listing of the group and a read of the metadata of the members shown, however big
        the hierarchy; :meth:`tree` draws all of it."""
        with io.reuse_documents(self._store):
            shown, more = self._member_page(HTML_MEMBERS)
            # an array's shape and data type cost its metadata (read once on a v3 store); a
            # group is shown by name, without opening it
            nodes = [(name, self._open_member(join_path(self._path, name), kind) if kind == "array" else None)
                     for name, kind in shown]
        return members_html(self.basename or "/", nodes, more)

    def _repr_markdown_(self) -> None:
        return None

    def _repr_svg_(self) -> None:
        return None

    def _repr_png_(self) -> None:
        return None

    def _repr_jpeg_(self) -> None:
        return None

    def _repr_latex_(self) -> None:
        return None

    def _repr_json_(self) -> None:
        return None

    def _repr_javascript_(self) -> None:
        return None

    def _repr_pdf_(self) -> None:
        return None

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> None:
        return None

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Group)
            and self._store == other._store
            and self._path == other._path
            and self._read_only == other._read_only
        )

    __hash__ = None  # type: ignore[assignment]

    def __getstate__(self) -> dict[str, Any]:
        return {
            "store": self._store_arg,
            "path": self._path,
            "read_only": self._read_only,
            "chunk_store": self._chunk_store_arg,
            "cache_attrs": self._cache_attrs,
            "synchronizer": self._synchronizer,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        type(self).__init__(self, **state)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self._store.close()


class _MembersValuesView(ValuesView["Array | Group"]):
    # one listing for the whole iteration (the default view looks every member up twice)
    _mapping: Group

    def __iter__(self) -> Iterator[Array | Group]:
        g = self._mapping
        for name, kind in g._member_names():
            yield g._open_member(join_path(g.path, name), kind)


class _MembersItemsView(ItemsView[str, "Array | Group"]):
    _mapping: Group

    def __iter__(self) -> Iterator[tuple[str, Array | Group]]:
        g = self._mapping
        for name, kind in g._member_names():
            yield name, g._open_member(join_path(g.path, name), kind)


# Public home of the class (zarr-python 2's ``zarr.hierarchy.Group``); pickles name it there.
Group.__module__ = "zarrkit.hierarchy"
