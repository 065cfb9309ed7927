"""Finding a group's members and the nodes below it: listings, the walk, ``members``,
``arrays``, ``groups``, the ``visit`` family, ``tree`` and zarr-python 3's ``get_array``,
``get_group``, ``array_values``, ``group_values`` and ``nmembers``.

A listing of a group costs one listing of the store and one batched read of the candidates'
metadata; a walk (:func:`zarrkit.metadata.walk.walk`) costs that per group, and on a
high-latency store the groups of one level are listed together (:func:`list_levels`).
"""

from __future__ import annotations

import functools
import numbers
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from .._warnings import warn
from ..errors import ArrayNotFoundError, ContainsArrayError, ContainsGroupError, GroupNotFoundError
from ..metadata import io
from ..metadata.consolidated import ConsolidatedStore
from ..metadata.walk import walk
from ..storage.base import Store, describe_store, is_node_name, join_path
from .grid_picture import node_header
from .pool import run_tasks, threads_for
from .tree import TreeView, members_html

__all__ = ["NavigationMethods", "Navigable", "group_html", "list_levels"]

# A group's own metadata documents, listed beside its members but never members themselves.
_METADATA_NAMES = frozenset({".zgroup", ".zattrs", ".zarray", ".zmetadata", "zarr.json"})


class Navigable(Protocol):
    """What finding the members of a group needs of it."""

    _store: Store
    _store_arg: Any
    _path: str
    _zarr_format: int

    def _open_member(self, path: str, kind: str) -> Any: ...

    def _item_path(self, item: Any) -> str: ...

    def __getitem__(self, item: str) -> Any: ...


# -- listings ------------------------------------------------------------------------------------

def listed_names(group: Navigable, path: str) -> list[str]:
    """The names listed in the group at ``path`` (of ``group``'s store) that a node could
    have, sorted (one listing); a listed name no node can have (empty, ``.``, ``..``, with a
    ``/``) is left out with a warning naming it."""
    prefix = f"{path}/" if path else ""
    names = []
    for n in group._store.list_dir(prefix):
        if n in _METADATA_NAMES:
            continue
        if not is_node_name(n):
            warn(f"{describe_store(group._store_arg)}: skipping {prefix + n!r}, which no node can be named")
            continue
        names.append(n)
    return sorted(names)


def member_names(group: Navigable, path: str | None = None) -> list[tuple[str, str]]:
    """``(name, kind)`` of every member of ``group`` (or of the group at ``path`` in the same
    store), sorted: one listing and one batched read of the candidates' metadata."""
    path = group._path if path is None else path
    prefix = f"{path}/" if path else ""
    names = listed_names(group, path)
    kinds = io.node_kinds(group._store, [prefix + n for n in names])
    return [(n, kind) for n in names if (kind := kinds[prefix + n]) is not None]


def member_page(group: Navigable, limit: int) -> tuple[list[tuple[str, str]], int]:
    """``(name, kind)`` of the first ``limit`` names listed in ``group`` that are nodes, and
    how many listed names come after them (not looked at, so not checked to be nodes): one
    listing of the group and one batched read of ``limit`` names' metadata."""
    names = listed_names(group, group._path)
    prefix = f"{group._path}/" if group._path else ""
    first = names[:limit]
    kinds = io.node_kinds(group._store, [prefix + n for n in first])
    shown = [(n, kind) for n in first if (kind := kinds[prefix + n]) is not None]
    return shown, len(names) - len(first)


def group_html(group: Any, limit: int) -> str:
    """A group's HTML view (see ``Group._repr_html_``), read from no store: its header and,
    when the group was opened through consolidated metadata, its first ``limit`` members."""
    header = node_header("Group", group._path, group._store_arg)
    if not isinstance(group._store, ConsolidatedStore):
        return header + (
            '<div class="zarrkit-tree">members not listed here (that reads the store): '
            "<code>.tree()</code> or <code>.members()</code> lists them</div>"
        )
    with io.reuse_documents(group._store):
        shown, more = member_page(group, limit)
        # an array's shape and data type are in the consolidated document; a group is shown
        # by name, without opening it
        nodes = [(name, group._open_member(join_path(group._path, name), kind) if kind == "array" else None)
                 for name, kind in shown]
    return header + members_html(group.basename or "/", nodes, more)


def list_levels(
    list_members: Callable[[str], list[tuple[str, str]]],
    path: str,
    max_depth: int | None,
    threads: int | None,
) -> dict[str, list[tuple[str, str]]]:
    """``{group path: [(name, kind), ...]}`` for the group at ``path`` and every group below
    it that a walk to ``max_depth`` lists (0: that group only; None: all).

    The groups of one level are listed together on ``threads`` workers: on object storage a
    walk then waits for a round of requests per level of the hierarchy, not per group.
    """
    listing: dict[str, list[tuple[str, str]]] = {}
    level, depth = [path], 0
    while level:
        for p, members in zip(level, run_tasks(list_members, level, threads)):
            listing[p] = members
        depth += 1
        if max_depth is not None and depth > max_depth:
            break
        level = [join_path(p, name) for p in level for name, kind in listing[p] if kind == "group"]
    return listing


def walk_group(group: Navigable, max_depth: int | None = None) -> Iterator[tuple[str, str, str]]:
    """``(name relative to the group, kind, path)`` of every node below ``group``, depth first
    (a group before its members, each group's members sorted); the members of groups
    ``max_depth`` levels below are not listed (0: the group's members only)."""
    members_of: Callable[[str], list[tuple[str, str]]] = functools.partial(member_names, group)
    if getattr(group._store, "high_latency", False):
        members_of = list_levels(members_of, group._path, max_depth, threads_for(group._store)).__getitem__
    for rel, path, (_, kind) in walk(members_of, group._path, max_depth):
        yield rel, kind, path


def _array_members(group: Navigable, recurse: bool) -> Iterator[tuple[str, str]]:
    for rel, kind, path in walk_group(group, None if recurse else 0):
        if kind == "array":
            yield rel.rpartition("/")[2], path


def _visit_values(group: Navigable, func: Callable[[Any], Any]) -> Any:
    for _, kind, path in walk_group(group):
        result = func(group._open_member(path, kind))
        if result is not None:
            return result
    return None


def _check_depth(max_depth: Any) -> None:
    """Refuse a ``max_depth`` of :meth:`~NavigationMethods.members` that is no depth."""
    if max_depth is not None and (isinstance(max_depth, bool) or not isinstance(max_depth, numbers.Integral) or max_depth < 0):
        raise ValueError(f"max_depth: expected None or an int >= 0, got {max_depth!r}")


def _members(group: Navigable, max_depth: int | None) -> list[tuple[str, Any]]:
    _check_depth(max_depth)
    with io.reuse_documents(group._store):  # members opened with the listing's documents
        found = list(walk_group(group, max_depth))
        nodes = run_tasks(lambda m: group._open_member(m[2], m[1]), found, threads_for(group._store) or 1)
    return [(rel, node) for (rel, _, _), node in zip(found, nodes)]


class NavigationMethods:
    """The methods of :class:`~zarrkit.core.group.Group` that find its members."""

    def _member_names(self: Navigable, path: str | None = None) -> list[tuple[str, str]]:
        return member_names(self, path)

    def _walk(self: Navigable, max_depth: int | None = None) -> Iterator[tuple[str, str, str]]:
        return walk_group(self, max_depth)

    def group_keys(self: Navigable) -> Iterator[str]:
        """Names of member groups, sorted."""
        return (name for name, kind in member_names(self) if kind == "group")

    def groups(self: Navigable) -> Iterator[tuple[str, Any]]:
        """``(name, group)`` pairs of member groups."""
        for name, kind in member_names(self):
            if kind == "group":
                yield name, self._open_member(join_path(self._path, name), kind)

    def array_keys(self: Navigable, recurse: bool = False) -> Iterator[str]:
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
        return (name for name, _ in _array_members(self, recurse))

    def arrays(self: Navigable, recurse: bool = False) -> Iterator[tuple[str, Any]]:
        """``(name, array)`` pairs of member arrays.

        Parameters
        ----------
        recurse : bool, optional
            Also the arrays of the groups below, by name as :meth:`array_keys` gives them.

        Returns
        -------
        iterator of (str, Array)
        """
        for name, path in _array_members(self, recurse):
            yield name, self._open_member(path, "array")

    def members(self: Navigable, max_depth: int | None = 0) -> list[tuple[str, Any]]:
        """``(name, member)`` pairs of the members, in name order (zarr-python 3's method).

        Parameters
        ----------
        max_depth : int or None, optional
            0: direct members; more (or None: all) the members of member groups too, that
            many levels down, named by their path from this group.

        Returns
        -------
        list of (str, Array or Group)

        Raises
        ------
        ValueError
            A ``max_depth`` that is neither None nor an int >= 0.

        Examples
        --------
        >>> import zarrkit
        >>> g = zarrkit.group()
        >>> _ = g.create_group('a').zeros('b', shape=2)
        >>> [name for name, _ in g.members(max_depth=None)]
        ['a', 'a/b']
        """
        return _members(self, max_depth)

    def nmembers(self: Navigable, max_depth: int | None = 0) -> int:
        """How many members the group has.

        Parameters
        ----------
        max_depth : int or None, optional
            0: direct members; more: down to that many levels below; None: all descendants.

        Returns
        -------
        int

        Examples
        --------
        >>> import zarrkit
        >>> g = zarrkit.group()
        >>> _ = g.create_group('a').zeros('b', shape=2)
        >>> g.nmembers(), g.nmembers(max_depth=None)
        (1, 2)
        """
        _check_depth(max_depth)
        total = 0
        for _, member in _members(self, 0):
            total += 1
            if not hasattr(member, "dtype") and (max_depth is None or max_depth > 0):
                total += member.nmembers(None if max_depth is None else max_depth - 1)
        return total

    def get_array(self: Navigable, name: str) -> Any:
        """The member array ``name`` (zarr-python 3's method).

        Parameters
        ----------
        name : str
            Name (or path below this group) of the array.

        Returns
        -------
        Array

        Raises
        ------
        ArrayNotFoundError
            Nothing is at ``name`` (also a ``KeyError``).
        ContainsGroupError
            A group is at ``name``.
        """
        return _typed_member(self, name, "array")

    def get_group(self: Navigable, name: str) -> Any:
        """The member group ``name`` (zarr-python 3's method).

        Parameters
        ----------
        name : str
            Name (or path below this group) of the group.

        Returns
        -------
        Group

        Raises
        ------
        GroupNotFoundError
            Nothing is at ``name`` (also a ``KeyError``).
        ContainsArrayError
            An array is at ``name``.
        """
        return _typed_member(self, name, "group")

    def array_values(self: Navigable) -> Iterator[Any]:
        """The member arrays, in name order."""
        return (self._open_member(path, "array") for _, path in _array_members(self, False))

    def group_values(self: Navigable) -> Iterator[Any]:
        """The member groups, in name order."""
        return (self._open_member(join_path(self._path, name), kind)
                for name, kind in member_names(self) if kind == "group")

    # -- walking ----------------------------------------------------------------------------
    def visitvalues(self: Navigable, func: Callable[[Any], Any]) -> Any:
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
        return _visit_values(self, func)

    def visit(self: Navigable, func: Callable[[str], Any]) -> Any:
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
        return _visit_values(self, lambda obj: func(obj.path[base:]))

    visitkeys = visit

    def visititems(self: Navigable, func: Callable[[str, Any], Any]) -> Any:
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
        return _visit_values(self, lambda obj: func(obj.path[base:], obj))

    def tree(self: Navigable, expand: bool | None = False, level: int | None = None, *,
             max_nodes: int | None = None, plain: bool = False) -> TreeView:
        """A text tree of the hierarchy below this group: ``str()`` (and ``print``) give it
        with box-drawing characters, ``bytes()`` in plain ASCII.

        A v3 group's tree is drawn as zarr-python 3 draws it (on a terminal, names in bold
        unless ``plain``), a v2 group's as zarr-python 2 drew it (branches one space in, no
        final newline); in Jupyter either shows as collapsible nested lists.

        Parameters
        ----------
        expand : bool, optional
            zarr-python 2's HTML widget setting: accepted for a v2 group, with no effect on
            the text; a v3 group refuses ``True``, as zarr-python 3 does.
        level : int, optional
            How deep to go (all the way by default), as the group's zarr-python counts it:
            for a v3 group the depth below the group (``0``: its members only), for a v2
            group the number of levels shown (``0``: the group alone, ``1``: its members).
        max_nodes : int, optional
            Draw at most this many nodes below the group, after a note saying the tree is
            truncated (all by default).
        plain : bool, optional
            Never style the names (zarr-python 3's option).

        Returns
        -------
        TreeView

        Raises
        ------
        NotImplementedError
            ``expand=True`` for a v3 group.

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
        >>> print(g.tree(level=0), end="")
        /
        ├── foo
        └── quux
        >>> print(bytes(g.tree()).decode(), end="")
        /
        +-- foo
        |   +-- baz (3,) float64
        +-- quux
        """
        zarr3 = self._zarr_format == 3
        if zarr3 and expand:
            raise NotImplementedError("tree(expand=True): a v3 group's tree has no expanded form")
        if level is not None and (isinstance(level, bool) or not isinstance(level, int) or level < 0):
            raise ValueError(f"level must be an integer >= 0 or None, got {level!r}")
        shown = level + 1 if zarr3 and level is not None else level
        return TreeView(self, shown, zarr3=zarr3, plain=plain, max_nodes=max_nodes)


def _typed_member(group: Navigable, name: str, wanted: str) -> Any:
    """The member ``name`` of ``group``, which must be a ``wanted`` (``'array'``/``'group'``)."""
    path = group._item_path(name)
    kind = io.node_kind(group._store, path)
    where = f"in store {describe_store(group._store_arg)} at path {path!r}"
    if kind is None:
        missing = ArrayNotFoundError if wanted == "array" else GroupNotFoundError
        raise missing(f"No {wanted} found {where}", path=path)
    if kind != wanted:
        raise (ContainsGroupError(f"A group exists {where}.", path=path) if kind == "group"
               else ContainsArrayError(f"An array exists {where}.", path=path))
    return group._open_member(path, kind)
