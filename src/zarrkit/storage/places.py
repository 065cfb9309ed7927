"""Where a node's values really are, to tell whether two nodes share them.

:meth:`Store.location() <zarrkit.storage.base.Store.location>` names what holds a store's
values and the prefix the store shows of them.  For values held in the file system (a
directory, or a zip file, whose members continue its path) that is not yet a place to compare:
a store opened lower down the same directory, or through a symbolic link (to the store, or to
a directory inside it), reaches the same files by another name.  A :class:`Place` is the
resolved one: for files, the real path of the node (links followed, as far as it exists);
otherwise the holder and the node's full key.
"""

from __future__ import annotations

import os
from collections.abc import Hashable
from dataclasses import dataclass

from .base import Store
from .keys import join_path

__all__ = ["Place", "node_place", "place_of", "places_overlap"]

#: holders whose identity is a path of the file system (see the stores' ``location``)
_FILE_HOLDERS = ("file", "zip")


@dataclass(frozen=True)
class Place:
    """A node's values: ``holder`` (``'file system'`` for files) and the node's ``key`` in it
    (for files the real path, with ``/`` separators)."""

    holder: Hashable
    key: str

    def __str__(self) -> str:
        if self.holder == _FILE_SYSTEM:
            return self.key or "/"
        return f"{self.key!r} of {self.holder!r}" if self.key else f"the root of {self.holder!r}"


_FILE_SYSTEM = "file system"


def node_place(store: Store, path: str) -> Place:
    """The :class:`Place` of the node at ``path`` of ``store``."""
    holder, prefix = store.location()
    return place_of(holder, join_path(prefix, path) if prefix else path)


def place_of(holder: Hashable, key: str) -> Place:
    """The :class:`Place` of ``key`` of the values ``holder`` (a store's ``location()``
    holder) holds."""
    if isinstance(holder, tuple) and len(holder) == 2 and holder[0] in _FILE_HOLDERS \
            and isinstance(holder[1], str):
        root = holder[1]
        parts = [p for p in key.split("/") if p]
        if holder[0] == "file":
            # links inside the directory too: the real path of the node itself
            real = os.path.realpath(os.path.join(root, *parts))
        else:
            # a zip file's members are no files: they continue the zip file's real path
            real = os.path.join(os.path.realpath(root), *parts)
        return Place(_FILE_SYSTEM, real.replace(os.sep, "/").rstrip("/"))
    return Place(holder, key.strip("/"))


def places_overlap(a: Place, b: Place) -> bool:
    """Whether ``a`` and ``b`` share values: the same holder, and one key is the other or
    lies below it (the root lies above everything)."""
    if a.holder != b.holder:
        return False
    return not a.key or not b.key or a.key == b.key or a.key.startswith(b.key + "/") \
        or b.key.startswith(a.key + "/")
