"""Stores on the local file system."""

from __future__ import annotations

import atexit
import itertools
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from typing import Any

from ..errors import StoreError
from .base import ByteRange, Store, validate_key, validate_prefix

__all__ = ["DirectoryStore", "NestedDirectoryStore", "TempStore"]

_O_BINARY = getattr(os, "O_BINARY", 0)
_counter = itertools.count()


def _unique() -> str:
    """A name no other writer (thread or process) uses at the same time."""
    return f"{os.getpid()}-{threading.get_ident()}-{next(_counter)}"


#: Temporary files are written next to their destination and renamed into place; their names
#: start with this marker, and listings never show them.
TEMP_MARKER = ".__zarrkit_partial__"


class DirectoryStore(Store):
    """A store where every key is a file below ``path`` (``/`` in a key is a sub-directory).

    Writes are atomic: a value is written to a temporary file in the destination directory and
    renamed over the key, so a concurrent reader sees the old value or the new one, never half
    of either.  Partial reads (``byte_range``) read only the requested bytes.

    Parameters
    ----------
    path : str or os.PathLike
        Root directory; created on first write if missing.
    dimension_separator : {'.', '/'}, optional
        Separator used by arrays *created* in this store when none is given.
    read_only : bool, default False
        Refuse every write.

    Examples
    --------
    >>> import os, tempfile, zarrkit
    >>> d = tempfile.mkdtemp()
    >>> store = zarrkit.DirectoryStore(d)
    >>> z = zarrkit.zeros((4, 4), chunks=(2, 2), store=store, zarr_format=2)
    >>> z[:] = 1
    >>> sorted(os.listdir(d))[:3]
    ['.zarray', '.zattrs', '0.0']
    """

    dimension_separator: str | None = None

    def __init__(
        self, path: Any, dimension_separator: str | None = None, read_only: bool = False
    ) -> None:
        self.path = os.path.abspath(os.fspath(path))
        if os.path.exists(self.path) and not os.path.isdir(self.path):
            raise StoreError(f"DirectoryStore path {self.path!r} exists and is not a directory")
        if dimension_separator is not None:
            if dimension_separator not in (".", "/"):
                raise ValueError(
                    f"dimension_separator must be '.' or '/', got {dimension_separator!r}"
                )
            self.dimension_separator = dimension_separator
        self.read_only = read_only
        self._dirs: set[str] = set()  # directories known to exist (saves a stat per write)

    # -- helpers ------------------------------------------------------------------------------
    def _file(self, key: str) -> str:
        return os.path.join(self.path, *key.split("/"))

    # -- contract -----------------------------------------------------------------------------
    def _get(self, key: str, byte_range: ByteRange | None) -> bytes | None:
        fn = self._file(key)
        try:
            with open(fn, "rb") as f:
                if byte_range is None:
                    return f.read()
                if byte_range.offset < 0:
                    size = os.fstat(f.fileno()).st_size
                    f.seek(max(size + byte_range.offset, 0))
                    return f.read()
                f.seek(byte_range.offset)
                return f.read() if byte_range.length is None else f.read(byte_range.length)
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return None
        except PermissionError:
            if os.path.isdir(fn):  # Windows reports directories this way
                return None
            raise

    def _set(self, key: str, value: bytes | memoryview) -> None:
        fn = self._file(key)
        directory = os.path.dirname(fn)
        for attempt in range(3):
            if attempt or directory not in self._dirs:
                try:
                    os.makedirs(directory, exist_ok=True)
                except (FileExistsError, NotADirectoryError):
                    raise StoreError(
                        f"cannot write key {key!r} in {self.path!r}: a parent of it is a file"
                    ) from None
                self._dirs.add(directory)
            tmp = os.path.join(directory, f"{TEMP_MARKER}{_unique()}")
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_BINARY, 0o666)
            except FileNotFoundError:
                # a concurrent delete removed the (then empty) directory: make it again
                self._dirs.discard(directory)
                if attempt == 2:
                    raise
                continue
            try:
                try:
                    view = memoryview(value)
                    while view:
                        view = view[os.write(fd, view):]
                finally:
                    os.close(fd)
                os.replace(tmp, fn)
                return
            except BaseException as exc:
                try:
                    os.remove(tmp)
                except OSError:
                    pass
                self._prune_dirs(directory)
                if isinstance(exc, (IsADirectoryError, PermissionError)) and os.path.isdir(fn):
                    raise StoreError(
                        f"cannot write key {key!r} in {self.path!r}: it is a directory"
                    ) from None
                raise

    def _prune_dirs(self, directory: str) -> None:
        """Remove empty directories from ``directory`` up to (not including) the root."""
        root = self.path
        while directory != root and directory.startswith(root + os.sep):
            try:
                os.rmdir(directory)
            except OSError:  # not empty, or gone
                return
            self._dirs.discard(directory)
            directory = os.path.dirname(directory)

    def _delete(self, key: str) -> None:
        fn = self._file(key)
        try:
            os.remove(fn)
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return
        self._prune_dirs(os.path.dirname(fn))

    def exists(self, key: str) -> bool:
        validate_key(key)
        return os.path.isfile(self._file(key))

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str) or not key:
            return False
        return self.exists(key)

    def getsize(self, key: str) -> int:
        validate_key(key)
        try:
            st = os.stat(self._file(key))
        except (FileNotFoundError, NotADirectoryError):
            return 0
        return 0 if os.path.isdir(self._file(key)) else st.st_size

    def list_prefix(self, prefix: str) -> Iterator[str]:
        validate_prefix(prefix)
        return self._list_prefix(prefix)

    def _list_prefix(self, prefix: str) -> Iterator[str]:
        # start the walk at the deepest directory the prefix names
        head, _, _ = prefix.rpartition("/")
        root = self._file(head) if head else self.path
        if not os.path.isdir(root):
            return
        base = len(self.path) + 1
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            rel = dirpath[base:].replace(os.sep, "/") if dirpath != self.path else ""
            for name in sorted(filenames):
                if name.startswith(TEMP_MARKER):
                    continue
                key = f"{rel}/{name}" if rel else name
                if key.startswith(prefix):
                    yield key

    def list_dir(self, prefix: str = "") -> list[str]:
        validate_prefix(prefix)
        prefix = prefix.strip("/")
        root = self._file(prefix) if prefix else self.path
        try:
            names = os.listdir(root)
        except (FileNotFoundError, NotADirectoryError):
            return []
        return sorted(n for n in names if not n.startswith(TEMP_MARKER))

    def delete_prefix(self, prefix: str) -> None:
        self._check_writable()
        validate_prefix(prefix)
        self._dirs.clear()
        if prefix == "":
            if os.path.isdir(self.path):
                for name in os.listdir(self.path):
                    p = os.path.join(self.path, name)
                    shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.remove(p)
            return
        if prefix.endswith("/"):
            validate_key(prefix[:-1])
            d = self._file(prefix[:-1])
            if os.path.isdir(d):
                shutil.rmtree(d)
                self._prune_dirs(os.path.dirname(d))
            return
        super().delete_prefix(prefix)

    def clear(self) -> None:
        """Remove every key (the root directory itself stays)."""
        self.delete_prefix("")

    def __len__(self) -> int:
        return sum(1 for _ in self.list_prefix(""))

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.path == self.path  # type: ignore[attr-defined]

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.path!r})"

    def __getstate__(self):
        return self.__dict__.copy()

    def __setstate__(self, state) -> None:
        self.__dict__.update(state)


class NestedDirectoryStore(DirectoryStore):
    """A :class:`DirectoryStore` whose new arrays use ``/`` between chunk indices.

    Chunk ``(1, 2)`` is then stored at ``1/2`` (a directory per leading index), which keeps
    directories small for arrays with many chunks.

    Examples
    --------
    >>> import zarrkit, tempfile
    >>> store = zarrkit.NestedDirectoryStore(tempfile.mkdtemp())
    >>> z = zarrkit.zeros((4, 4), chunks=(2, 2), store=store, zarr_format=2)
    >>> z[:] = 1
    >>> '1/1' in store
    True
    """

    dimension_separator = "/"

    def __init__(self, path: Any, read_only: bool = False) -> None:
        super().__init__(path, dimension_separator="/", read_only=read_only)


class TempStore(DirectoryStore):
    """A :class:`DirectoryStore` in a new temporary directory, removed on ``close()`` or exit.

    Examples
    --------
    >>> import zarrkit
    >>> store = zarrkit.TempStore()
    >>> z = zarrkit.ones(3, store=store)
    >>> store.close()
    """

    def __init__(
        self, suffix: str = "", prefix: str = "zarrkit", dir: str | None = None,
        dimension_separator: str | None = None,
    ) -> None:
        path = tempfile.mkdtemp(suffix=suffix, prefix=prefix, dir=dir)
        super().__init__(path, dimension_separator=dimension_separator)
        atexit.register(shutil.rmtree, path, True)

    def close(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)
