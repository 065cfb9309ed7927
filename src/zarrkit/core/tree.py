"""Text trees of a hierarchy (``Group.tree()``, ``zarrkit.tree``)."""

from __future__ import annotations

import html
from collections.abc import Iterator
from typing import Any

from ..metadata.walk import walk
from .array import Array

__all__ = ["TreeView", "members_html"]


class TreeView:
    """A printable tree of a hierarchy: ``str()`` draws it with box-drawing characters,
    ``bytes()`` with ASCII ones (``+--``, ``|``); Jupyter shows it as collapsible lists."""

    def __init__(self, group: Any, level: int | None = None, zarr3: bool = False):
        self.group = group
        self.level = level
        #: zarr-python 3's drawing (branches flush left, a newline at the end) instead of 2's
        self.zarr3 = zarr3

    # what differs between kinds of hierarchy (zarrkit groups here; h5py groups elsewhere)
    def _root_name(self) -> str:
        return self.group.basename or "/"

    def _members(self, g: Any) -> list[tuple[str, Any]]:
        members: list[tuple[str, Any]] = g.members()
        return members

    def _is_array(self, obj: Any) -> bool:
        return isinstance(obj, Array)

    def _walk(self) -> Iterator[tuple[int, str, Any, bool, bool]]:
        """``(depth, name, node, last among its siblings, its members follow)`` for every
        member shown, depth first (:func:`~zarrkit.metadata.walk.walk`, which keeps its own
        stack: a hierarchy may be thousands of levels deep)."""
        if self.level is not None and self.level <= 0:
            return
        nodes: dict[str, tuple[Any, int]] = {"": (self.group, -1)}  # by path: node, depth

        def members_of(path: str) -> list[tuple[str, str, Any, bool, int]]:
            group, depth = nodes[path]
            members = self._members(group)
            return [(name, "array" if self._is_array(obj) else "group", obj, i == len(members) - 1, depth + 1)
                    for i, (name, obj) in enumerate(members)]

        max_depth = None if self.level is None else self.level - 1
        for _, path, (name, kind, obj, last, depth) in walk(members_of, "", max_depth):
            nodes[path] = (obj, depth)  # before the walk lists its members
            yield depth, name, obj, last, kind == "group" and (max_depth is None or depth < max_depth)

    def _label(self, name: str, obj: Any) -> str:
        return f"{name} {obj.shape} {obj.dtype}" if self._is_array(obj) else name

    def lines(self) -> list[str]:
        out = [self._root_name()]
        indents: list[str] = []  # what each open group's members are indented by
        for depth, name, obj, last, expand in self._walk():
            del indents[depth:]
            branch = ("└── " if last else "├── ") if self.zarr3 else (" └── " if last else " ├── ")
            out.append(f"{''.join(indents)}{branch}{self._label(name, obj)}")
            if expand:
                indents.append(("    " if last else "│   ") if self.zarr3 else ("    " if last else " │  "))
        return out

    def _repr_html_(self) -> str:
        """The tree as nested collapsible lists (what Jupyter shows for ``tree()``)."""
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
        return "".join(out)

    def __str__(self) -> str:
        return "\n".join(self.lines()) + ("\n" if self.zarr3 else "")

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
