"""Walking a hierarchy: :func:`walk` visits every node below a group, given how to list a
group's members; :func:`iter_nodes` is that walk over a store, reading each node's metadata.

Groups (``Group.members``, ``visit``, ``tree``...), consolidation, conversion and the command
line all walk with :func:`walk`: one order, one depth limit, one guard against listings that
would make a walk loop.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from ..storage.base import Store, is_node_name, join_path
from . import io, v2, v3

__all__ = ["iter_nodes", "walk"]

#: a member as a listing gives it: a tuple beginning ``(name, kind)``
#: names a listing holds beside the members: the group's own documents, never a node
_DOCUMENT_NAMES = frozenset((v2.ARRAY_KEY, v2.GROUP_KEY, v2.ATTRS_KEY, ".zmetadata", v3.ZARR_JSON))

M = TypeVar("M", bound=tuple[Any, ...])


def walk(
    members_of: Callable[[str], Iterable[M]], path: str, max_depth: int | None = None
) -> Iterator[tuple[str, str, M]]:
    """``(path relative to path, path, member)`` of every node below the group at ``path``,
    depth first: a group before its members, each group's members in the order
    ``members_of`` lists them.

    Parameters
    ----------
    members_of : callable
        The members of the group at a path, as tuples beginning ``(name, kind)`` (kind
        ``'array'`` or ``'group'``; what follows is passed on).  Called when the walk reaches
        the group, and the listing is consumed lazily.
    path : str
        The group to walk below.
    max_depth : int, optional
        The members of groups ``max_depth`` levels below are not listed (0: the members of
        the group at ``path`` only; None: all).

    Yields
    ------
    (str, str, tuple)

    Notes
    -----
    The walk keeps its own stack, so a hierarchy of any depth is walked without recursion; a
    name listed twice in one group is visited once, so no listing can make the walk loop.
    """
    stack = [_once(members_of(path))]
    bases = [""]
    while stack:
        member = next(stack[-1], None)
        if member is None:
            stack.pop()
            bases.pop()
            continue
        name, kind = member[0], member[1]
        rel = bases[-1] + name
        node_path = join_path(path, rel)
        yield rel, node_path, member
        if kind == "group" and (max_depth is None or len(stack) <= max_depth):
            stack.append(_once(members_of(node_path)))
            bases.append(rel + "/")


def _once(members: Iterable[M]) -> Iterator[M]:
    seen: set[str] = set()
    for member in members:
        if member[0] not in seen:
            seen.add(member[0])
            yield member


def iter_nodes(store: Store, path: str) -> Iterator[tuple[str, str, int | None, Any]]:
    """Yield ``(path, kind, zarr_format, v3 document)`` for the node at ``path`` and every node
    below it, parents before children, members in the order the store lists them (sorted).

    Member names that cannot extend a key (``''``, ``'.'``, ``'..'``, names holding ``'/'``,
    as a store with unusual listings might return) are skipped.
    """
    kind, fmt, doc = io.node_info(store, path)
    if kind is None:
        return
    yield path, kind, fmt, doc
    if kind != "group":
        return

    def members_of(group: str) -> Iterator[tuple[str, str, int | None, Any]]:
        prefix = f"{group}/" if group else ""
        for name in store.list_dir(prefix):
            if is_node_name(name) and name not in _DOCUMENT_NAMES:
                node_kind, node_fmt, node_doc = io.node_info(store, prefix + name)
                if node_kind is not None:
                    yield name, node_kind, node_fmt, node_doc

    for _, node_path, (_, node_kind, node_fmt, node_doc) in walk(members_of, path):
        yield node_path, node_kind, node_fmt, node_doc
