"""Text trees of a hierarchy (``Group.tree()``, ``zarrkit.tree``)."""

from __future__ import annotations

import html
import sys
from collections.abc import Iterator
from typing import Any

from ..metadata.walk import walk
from .array import Array
from .printable import printable

__all__ = ["TreeView", "members_html"]


class TreeView:
    """A printable tree of a hierarchy: ``str()`` draws it with box-drawing characters,
    ``bytes()`` with ASCII ones (``+--``, ``|``).

    Drawn as zarr-python 2 did (branches one space in, the root by its last segment) or, with
    ``zarr3``, as zarr-python 3 does (branches flush left, the root by its full name, a final
    newline, names in bold on a terminal unless ``plain``); Jupyter shows either as
    collapsible lists.

    Parameters
    ----------
    group : Group
        The root of the tree.
    level : int, optional
        How many levels below the root to show (all by default).
    zarr3 : bool, optional
        Draw as zarr-python 3 does.
    plain : bool, optional
        Never style the names (with ``zarr3``; zarr-python 2's trees are always plain).
    max_nodes : int, optional
        Draw at most this many nodes below the root, with a note saying the tree is truncated
        (all by default).
    """

    def __init__(self, group: Any, level: int | None = None, zarr3: bool = False, *, plain: bool = True,
                 max_nodes: int | None = None):
        if max_nodes is not None and (isinstance(max_nodes, bool) or not isinstance(max_nodes, int) or max_nodes < 0):
            raise ValueError(f"max_nodes must be an integer >= 0 or None, got {max_nodes!r}")
        self.group = group
        self.level = level
        #: zarr-python 3's drawing (branches flush left, a newline at the end) instead of 2's
        self.zarr3 = zarr3
        self.max_nodes = max_nodes
        # ANSI bold for the names, as zarr-python 3 draws them on a terminal
        self._bold = ("\x1b[1m", "\x1b[0m") if zarr3 and not plain and sys.stdout.isatty() else ("", "")
        self._truncated = False

    # what differs between kinds of hierarchy (zarrkit groups here; h5py groups elsewhere)
    def _root_name(self) -> str:
        if self.zarr3:
            return str(self.group.name)
        return self.group.basename or "/"

    def _members(self, g: Any) -> list[tuple[str, Any]]:
        members: list[tuple[str, Any]] = g.members()
        return members

    def _is_array(self, obj: Any) -> bool:
        return isinstance(obj, Array)

    def _walk(self) -> Iterator[tuple[int, str, Any, bool, bool]]:
        """``(depth, name, node, last among its siblings, its members follow)`` for every
        member shown, depth first (:func:`~zarrkit.metadata.walk.walk`, which keeps its own
        stack: a hierarchy may be thousands of levels deep); at most :attr:`max_nodes`."""
        self._truncated = False
        if self.level is not None and self.level <= 0:
            return
        nodes: dict[str, tuple[Any, int]] = {"": (self.group, -1)}  # by path: node, depth

        def members_of(path: str) -> list[tuple[str, str, Any, bool, int]]:
            group, depth = nodes[path]
            members = self._members(group)
            return [(name, "array" if self._is_array(obj) else "group", obj, i == len(members) - 1, depth + 1)
                    for i, (name, obj) in enumerate(members)]

        max_depth = None if self.level is None else self.level - 1
        for count, (_, path, (name, kind, obj, last, depth)) in enumerate(walk(members_of, "", max_depth)):
            if count == self.max_nodes:
                self._truncated = True
                return
            nodes[path] = (obj, depth)  # before the walk lists its members
            yield depth, name, obj, last, kind == "group" and (max_depth is None or depth < max_depth)

    def _label(self, name: str, obj: Any, bold: tuple[str, str] = ("", "")) -> str:
        name = f"{bold[0]}{name}{bold[1]}"
        return f"{name} {obj.shape} {obj.dtype}" if self._is_array(obj) else name

    def lines(self) -> list[str]:
        """The lines of the drawing (without the note of a truncated tree)."""
        bold = self._bold
        # names are a stranger's text: their control characters escaped, a line break in one
        # cannot forge a line of the drawing
        out = [f"{bold[0]}{printable(self._root_name())}{bold[1]}"]
        indents: list[str] = []  # what each open group's members are indented by
        for depth, name, obj, last, expand in self._walk():
            del indents[depth:]
            branch = ("└── " if last else "├── ") if self.zarr3 else (" └── " if last else " ├── ")
            out.append(f"{''.join(indents)}{branch}{self._label(printable(name), obj, bold)}")
            if expand:
                indents.append(("    " if last else "│   ") if self.zarr3 else ("    " if last else " │  "))
        return out

    def _note(self) -> str:
        return (f"Truncated at max_nodes={self.max_nodes}: the nodes after the first "
                f"{self.max_nodes} are not shown\n") if self._truncated else ""

    def _repr_html_(self) -> str:
        """What Jupyter shows: the tree as nested collapsible lists (after the note of a
        truncated tree)."""
        out = ['<div class="zarrkit-tree"><details open><summary>', html.escape(self._root_name()),
               "</summary><ul>"]
        open_groups = 0
        for depth, name, obj, _, expand in self._walk():
            out.append("</ul></details></li>" * (open_groups - depth))
            open_groups = depth
            label = html.escape(self._label(name, obj))
            if expand:
                out.append(f"<li><details><summary>{label}</summary><ul>")
                open_groups += 1
            else:
                out.append(f"<li>{label}</li>")
        out.append("</ul></details></li>" * open_groups)
        out.append("</ul></details></div>")
        note = self._note()  # known once the walk is done
        return (f"<p>{html.escape(note)}</p>" if note else "") + "".join(out)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None, **kwargs: Any) -> dict[str, str]:
        """The text and HTML forms, for Jupyter (``include`` and ``exclude`` are ignored)."""
        return {"text/plain": str(self), "text/html": self._repr_html_()}

    def __str__(self) -> str:
        text = "\n".join(self.lines()) + ("\n" if self.zarr3 else "")
        return self._note() + text

    __repr__ = __str__

    def __bytes__(self) -> bytes:
        return str(self).translate(_ASCII_TREE).encode("utf-8")


def members_html(root: str, members: list[tuple[str, Any]], more: int) -> str:
    """A group's members one level deep as an HTML list (what Jupyter shows for a group):
    arrays (given opened) with their shape and data type, groups (given as None) by name,
    then "…and K more" when ``more`` names were listed after them."""
    items = []
    for name, obj in members:
        label = f"{name} {obj.shape} {obj.dtype}" if isinstance(obj, Array) else name
        items.append(f"<li>{html.escape(label)}</li>")
    if more:
        items.append(f"<li>\u2026and {more} more</li>")
    return (f'<div class="zarrkit-tree"><details open><summary>{html.escape(root)}</summary>'
            f'<ul>{"".join(items)}</ul></details></div>')


_ASCII_TREE = str.maketrans({"├": "+", "└": "+", "│": "|", "─": "-"})
