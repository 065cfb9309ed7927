"""Local directories bridged through another library's store (obstore's ``LocalStore``,
zarr-python's ``LocalStore``) confined to their root as
:class:`~zarrkit.storage.local.DirectoryStore` confines its own: a symbolic link inside the root is followed while it leads inside it, one
leading out is refused (:class:`~zarrkit.errors.InvalidPathError` naming the key), and values
are read from regular files only.

Those libraries open the paths themselves, following every link, so each key is checked here
before they are given it: its directory resolved (remembered once it resolves inside, as
``DirectoryStore`` remembers it), the key itself looked at (one ``lstat``).  What they open
between the check and their open is theirs: a directory swapped for a link in that window is
not seen (``DirectoryStore`` opens through descriptors to close it).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable
from typing import Any

from ..errors import InvalidPathError
from .local_tree import file_kind

__all__ = ["LocalConfinement", "confinement_of"]

#: key directories remembered as resolving inside, at most (then forgotten, and resolved again)
_REMEMBERED = 10_000


def _no_check(key: str, op: str = "read") -> None:
    return None


class LocalConfinement:
    """The keys of the directory ``root`` (named ``where`` in messages) kept inside it."""

    def __init__(self, root: str, where: str):
        self.root: str = os.path.abspath(root)
        self.real_root: str = os.path.realpath(self.root)
        real = self.real_root
        self._inside_prefix = real if real.endswith(os.sep) else real + os.sep
        self.where = where
        self._dirs: set[str] = {""}

    def _inside(self, path: str) -> bool:
        real = os.path.realpath(path)
        return real == self.real_root or real.startswith(self._inside_prefix)

    def _path(self, key: str) -> str:
        return os.path.join(self.root, *key.split("/")) if key else self.root

    def check_dir(self, key: str) -> None:
        """Refuse ``key`` when the directory it is in resolves outside the root."""
        head = key.rpartition("/")[0]
        if head in self._dirs:
            return
        directory = self._path(head)
        if not self._inside(directory):
            raise InvalidPathError(
                f"key {key!r} of {self.where}: expected a path inside the store, got one leading "
                "through a symbolic link outside it"
            )
        if os.path.isdir(directory):  # (one not made yet may be made a link: checked again)
            if len(self._dirs) >= _REMEMBERED:
                self._dirs = {""}
            self._dirs.add(head)

    def __call__(self, key: str, op: str = "read") -> None:
        """Refuse ``key`` for ``op`` (``"read"``, ``"write"``, ``"delete"``) when it leads
        outside the root: through its directory, or as a link itself (a delete removes the
        link, not what it leads to, and is allowed); a read refuses a special file too."""
        self.check_dir(key)
        path = self._path(key)
        try:
            mode = os.lstat(path).st_mode
        except (FileNotFoundError, NotADirectoryError):
            return
        if stat.S_ISLNK(mode):
            if op == "delete":
                return
            if not self._inside(path):
                raise InvalidPathError(
                    f"key {key!r} of {self.where}: expected a file inside the store, got a "
                    "symbolic link to a file outside it"
                )
            try:
                mode = os.stat(path).st_mode
            except OSError:  # a link to nothing
                return
        if op in ("read", "list") and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            raise InvalidPathError(
                f"key {key!r} of {self.where}: expected a regular file, got {file_kind(mode)} "
                "(a store keeps values in regular files only)"
            )

    def visible(self, keys: Iterable[str], prefix: str = "") -> list[str]:
        """``keys`` (from a listing; names in the directory ``prefix``, ending in a slash)
        without those leading outside the root, and without special files."""
        kept = []
        for key in keys:
            try:
                self(prefix + key.rstrip("/"), "list")
            except InvalidPathError:
                continue
            kept.append(key)
        return kept


def confinement_of(root: Any, where: str) -> Callable[..., None]:
    """The check of keys of a local directory ``root`` (a :class:`LocalConfinement`), or a
    check that checks nothing when ``root`` is None (not a local directory)."""
    if root is None or str(root) == "":
        return _no_check
    return LocalConfinement(str(root), where)
