"""Text trees of a hierarchy (``Group.tree()``, ``zarrkit.tree``)."""

from __future__ import annotations

from typing import Any

from .array import Array

__all__ = ["TreeView"]


class TreeView:
    """A printable tree of a hierarchy: ``str()`` draws it with box-drawing characters,
    ``bytes()`` with ASCII ones (``+--``, ``|``)."""

    def __init__(self, group: Any, level: int | None = None, zarr3: bool = False):
        self.group = group
        self.level = level
        #: zarr-python 3's drawing (branches flush left, a newline at the end) instead of 2's
        self.zarr3 = zarr3

    # what differs between kinds of hierarchy (zarrkit groups here; h5py groups elsewhere)
    def _root_name(self) -> str:
        return self.group.basename or "/"

    def _members(self, g: Any) -> list[tuple[str, Any]]:
        return g.members()

    def _is_array(self, obj: Any) -> bool:
        return isinstance(obj, Array)

    def lines(self) -> list[str]:
        out = [self._root_name()]
        # depth first without recursion (a hierarchy may be thousands of levels deep): a stack
        # of (members, next position, indent) per open group
        stack: list[tuple[list[tuple[str, Any]], int, str]] = []
        if self.level is None or self.level > 0:
            stack.append((self._members(self.group), 0, ""))
        while stack:
            members, i, indent = stack.pop()
            if i == len(members):
                continue
            stack.append((members, i + 1, indent))
            name, obj = members[i]
            last = i == len(members) - 1
            branch = ("└── " if last else "├── ") if self.zarr3 else (" └── " if last else " ├── ")
            if self._is_array(obj):
                out.append(f"{indent}{branch}{name} {obj.shape} {obj.dtype}")
                continue
            out.append(f"{indent}{branch}{name}")
            if self.level is None or len(stack) < self.level:
                below = ("    " if last else "│   ") if self.zarr3 else ("    " if last else " │  ")
                stack.append((self._members(obj), 0, indent + below))
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines()) + ("\n" if self.zarr3 else "")

    __repr__ = __str__

    def __bytes__(self) -> bytes:
        return str(self).translate(_ASCII_TREE).encode("utf-8")


_ASCII_TREE = str.maketrans({"├": "+", "└": "+", "│": "|", "─": "-"})
