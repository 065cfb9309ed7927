"""Stores on the local file system."""

from __future__ import annotations

import errno
import itertools
import os
import shutil
import socket
import stat
import threading
import time
from collections.abc import Iterator
from typing import Any

from ..errors import InvalidPathError, StoreError
from . import fileio
from .base import ByteRange, Store, ensure_bytes_like, validate_key, validate_prefix

__all__ = ["DirectoryStore"]

_O_BINARY = getattr(os, "O_BINARY", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_READ_FLAGS = os.O_RDONLY | _O_BINARY | _O_NOFOLLOW
_POSIX = os.sep == "/"  # keys are native relative paths
_ELOOP = getattr(errno, "ELOOP", None)
_counter = itertools.count()


_HOST = socket.gethostname().replace("-", "_") or "host"


#: this process's id, renewed in a forked child (os.getpid is a system call per write)
_PID = [os.getpid()]
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=lambda: _PID.__setitem__(0, os.getpid()))


def _unique() -> str:
    """A temp-file name no other writer (host, process, thread) uses at the same time."""
    return f"{_HOST}-{_PID[0]}-{threading.get_ident()}-{next(_counter)}"


#: Values are written to a temporary file beside their destination, then renamed into place.
#: Temporary names start with this marker: listings never show them, and the ones left by
#: writers that died are removed when found.
TEMP_MARKER = ".__zarrkit_partial__"

#: Values written together (``set_many``) into a key directory that does not exist yet, at
#: least this many, are written into a temporary directory renamed into place at once.
NEW_DIRECTORY_MIN_VALUES = 8

#: Temporary files of other hosts older than this are considered abandoned.
ORPHAN_AGE = 24 * 3600


def _safe_listdir(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


def _plain_dir(path: str) -> bool:
    """Whether ``path`` is a directory itself, not a symbolic link to one."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


class DirectoryStore(Store):
    """A store where every key is a file below ``path`` (``/`` in a key is a sub-directory).

    Writes are atomic: a value is written to a temporary file beside it and renamed over the
    key, so a concurrent reader sees the old value or the new one, never half of either, and a
    writer killed mid-write leaves the old value.  Temporary files are never listed; those of
    dead writers are removed when found (opening the store for writing, listings) or by
    :meth:`remove_orphaned_temp_files`.  Partial reads (``byte_range``) read only the requested
    bytes.

    The store is confined to its directory: a symbolic link below it that resolves inside the
    root is followed, one that leads outside is not part of the store — listings leave it out
    and reading or writing through it raises :class:`~zarrkit.errors.InvalidPathError`.

    Parameters
    ----------
    path : str or os.PathLike
        Root directory; created on first write if missing.
    dimension_separator : {'.', '/'}, optional
        Separator used by arrays *created* in this store when none is given.
    read_only : bool, default False
        Refuse every write.
    fsync : bool, default False
        Flush each value and its directory entry to the device before a write returns
        (durability across power loss, at a cost in speed).
    normalize_keys : bool, default False
        zarr-python 2's option: keys are lower-cased before use.
    root : str or os.PathLike, optional
        zarr-python 3's ``LocalStore`` spelling of ``path``.
    atomic : bool, default True
        Write each value to a temporary file renamed over the key (see above).  With
        ``atomic=False`` a value is written into the key's file in place (truncated, then
        written): one rename less per value, as other libraries write chunks, but a writer
        killed (or a machine losing power) in the middle of a write leaves a torn value -- a
        chunk cut short or mixing old and new bytes, which reads as a decoding error or, for
        uncompressed chunks, as wrong data -- and a reader racing a writer may see such a
        value too.  Fine for arrays written once by one writer and rewritten from scratch
        after a failure; keep the default where values are updated in place or read while
        written.

    Examples
    --------
    >>> import os, tempfile, zarrkit
    >>> d = tempfile.mkdtemp()
    >>> store = zarrkit.DirectoryStore(d)
    >>> z = zarrkit.zeros((4, 4), chunks=(2, 2), store=store, zarr_format=2)
    >>> z[:] = 1
    >>> store.list_dir('')[:3]
    ['.zarray', '.zattrs', '0.0']
    >>> os.path.getsize(os.path.join(d, '0.0')) == store.getsize('0.0')
    True
    """

    dimension_separator: str | None = None
    #: files made in the same directories from two threads contend in the file system's inode
    #: allocation (kernel locks): 16384 tiny chunks written by one thread took 0.45-0.57 s, run
    #: after run; encoded on one and stored on another, 0.41-0.86 s and now and then 3-4 s
    concurrent_small_writes = False

    def __init__(
        self,
        path: Any = None,
        normalize_keys: bool = False,
        dimension_separator: str | None = None,
        read_only: bool = False,
        fsync: bool = False,
        *,
        root: Any = None,
        atomic: bool = True,
    ) -> None:
        if root is not None:  # zarr-python 3's LocalStore(root=...)
            if path is not None:
                raise TypeError("give the directory as path or as root, not both")
            path = root
        if path is None:
            raise TypeError("DirectoryStore needs the directory (path, or root=)")
        if isinstance(normalize_keys, str):  # DirectoryStore(path, '/') before normalize_keys
            normalize_keys, dimension_separator = False, normalize_keys
        self.path = os.path.abspath(os.fspath(path))
        self._given = os.fspath(path)  # as given (for :meth:`__str__`)
        if os.path.exists(self.path) and not os.path.isdir(self.path):
            raise StoreError(f"DirectoryStore path {self.path!r} exists and is not a directory")
        if self._check_dimension_separator(dimension_separator) is not None:
            self.dimension_separator = dimension_separator
        self.normalize_keys = bool(normalize_keys)
        self.read_only = read_only
        self.fsync = fsync
        self.atomic = bool(atomic)
        self._dirs: set[str] = set()  # directories known to exist (saves a stat per write)
        self._real_root = os.path.realpath(self.path)
        self._root_sep = self.path if self.path.endswith(os.sep) else self.path + os.sep
        self._confined: set[str] = {""}  # key directories known to resolve inside the root
        if not read_only:
            self._remove_orphans(self.path, _safe_listdir(self.path))

    def remove_orphaned_temp_files(self, prefix: str = "") -> int:
        """Remove temporary files left by writers that died below ``prefix``; returns how many.

        A temporary file is orphaned when its writer process no longer runs on this host, or
        when it comes from another host and is older than :data:`ORPHAN_AGE` seconds.  Opening
        a store for writing cleans its root directory, and listings clean the directories they
        visit; this walks everything below ``prefix``.

        Parameters
        ----------
        prefix : str, optional
            Only below this directory (``''``: the whole store).
        """
        self._check_writable()
        validate_prefix(prefix)
        root = self._file(prefix.strip("/")) if prefix.strip("/") else self.path
        removed = 0
        for dirpath, dirnames, filenames in os.walk(root):
            temps = [d for d in dirnames if d.startswith(TEMP_MARKER)]
            dirnames[:] = [d for d in dirnames if not d.startswith(TEMP_MARKER)]
            removed += self._remove_orphans(dirpath, filenames + temps)
        return removed

    def _remove_orphans(self, directory: str, names: list[str]) -> int:
        if self.read_only:
            return 0
        removed = 0
        now = time.time()
        for name in names:
            if not name.startswith(TEMP_MARKER):
                continue
            host, _, rest = name[len(TEMP_MARKER):].partition("-")
            pid = rest.partition("-")[0]
            fn = os.path.join(directory, name)
            if host == _HOST and pid.isdigit():
                if _pid_alive(int(pid)):
                    continue
            else:
                try:
                    if now - os.stat(fn).st_mtime < ORPHAN_AGE:
                        continue
                except OSError:
                    continue
            try:
                if os.path.isdir(fn) and not os.path.islink(fn):  # a directory of new values
                    shutil.rmtree(fn)
                else:
                    os.remove(fn)
                removed += 1
            except OSError:
                pass
        return removed

    # -- helpers ------------------------------------------------------------------------------
    def _file(self, key: str) -> str:
        if _POSIX:
            return self._root_sep + key
        return os.path.join(self.path, *key.split("/"))

    def _inside(self, path: str) -> bool:
        real = os.path.realpath(path)
        root = self._real_root
        return real == root or real.startswith(root if root.endswith(os.sep) else root + os.sep)

    def _check_dir(self, key: str) -> None:
        """Refuse ``key`` when its directory resolves outside the root (a symlinked parent).

        Key directories that exist and resolve inside are remembered, so the hot path costs a
        set lookup; one that does not exist yet is checked again next time."""
        head = key.rpartition("/")[0]
        if head in self._confined:
            return
        directory = self._file(head)
        # a real directory (not a link) in a directory known to resolve inside is inside: one
        # lstat, not a resolution of the whole path (opening a hierarchy checks every node's)
        plain = head.rpartition("/")[0] in self._confined and _plain_dir(directory)
        if not plain and not self._inside(directory):
            raise InvalidPathError(
                f"key {key!r} of {self.path!r} leads through a symbolic link outside the store"
            )
        if plain or os.path.isdir(directory):
            if len(self._confined) > 100_000:
                self._confined = {""}
            self._confined.add(head)

    def _open(self, key: str, fn: str) -> int | None:
        """A read-only descriptor of ``fn`` (None when it is missing or a directory), refusing
        symbolic links that lead outside the root."""
        self._check_dir(key)
        try:
            return os.open(fn, _READ_FLAGS)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except (IsADirectoryError, PermissionError):
            if os.path.isdir(fn):
                return None
            raise
        except OSError as exc:
            if exc.errno != _ELOOP:
                raise
        # the key itself is a symbolic link: followed only when it stays inside the root
        if not self._inside(fn):
            raise InvalidPathError(
                f"key {key!r} of {self.path!r} is a symbolic link to a file outside the store"
            )
        try:
            return os.open(fn, os.O_RDONLY | _O_BINARY)
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None

    # -- contract -----------------------------------------------------------------------------
    def get_transient(
        self, key: str, byte_range: ByteRange | None = None
    ) -> bytes | memoryview | None:
        """The value at ``key`` read into this thread's reusable buffer (see
        :meth:`Store.get_transient`): reading chunk after chunk allocates no memory.

        Parameters
        ----------
        key : str
            The key.
        byte_range : ByteRange, optional
            Only these bytes of the value.

        Returns
        -------
        bytes, memoryview or None
        """
        if type(self)._get is not DirectoryStore._get:  # a subclass reads its own way
            return self.get(key, byte_range)
        return self._read(self._checked(key), byte_range, True)

    def _get(self, key: str, byte_range: ByteRange | None) -> bytes | None:
        return self._read(key, byte_range, False)  # type: ignore[return-value]

    def get_upto(self, key: str, limit: int) -> bytes | None:
        """The whole value at ``key`` expected to hold at most ``limit`` bytes: one read of
        ``limit + 1`` bytes, no size query (small chunks read one after the other).

        Parameters
        ----------
        key : str
            The key.
        limit : int
            The size the value is expected not to exceed (a larger one is still read whole).

        Returns
        -------
        bytes or None
        """
        if type(self)._get is not DirectoryStore._get or self.normalize_keys:
            return self.get(key)  # a subclass reads its own way, or the key changes
        validate_key(key)
        fn = self._root_sep + key if _POSIX else self._file(key)
        if key.rpartition("/")[0] not in self._confined:
            self._check_dir(key)
        try:
            fd = os.open(fn, _READ_FLAGS)
        except OSError:
            opened = self._open(key, fn)
            if opened is None:
                return None
            fd = opened
        try:
            data = os.pread(fd, limit + 1, 0)
        except IsADirectoryError:
            return None
        finally:
            os.close(fd)
        return data if len(data) <= limit else self._get(key, None)

    def _read(
        self, key: str, byte_range: ByteRange | None, transient: bool
    ) -> bytes | memoryview | None:
        fn = self._root_sep + key if _POSIX else self._file(key)
        if key.rpartition("/")[0] not in self._confined:
            self._check_dir(key)
        try:
            fd = os.open(fn, _READ_FLAGS)
        except OSError:  # missing, a directory, a symbolic link...: sorted out by _open
            opened = self._open(key, fn)
            if opened is None:
                return None
            fd = opened
        try:
            if byte_range is not None and byte_range.offset >= 0 and byte_range.length is not None:
                # a range from a known offset (an inner chunk of a shard): no size needed, a
                # read past the end comes back short
                offset, length = byte_range.offset, byte_range.length
                if transient and 0 < length <= fileio.TRANSIENT_MAX_BYTES and fileio.HAS_PREADV:
                    return fileio.read_range_into(fd, offset, length)
                return fileio.read_range(fd, offset, length)
            # files are replaced whole, never changed in place: the size read here holds
            # (lseek is a cheaper way to ask than fstat, which builds a whole stat result)
            size = os.lseek(fd, 0, os.SEEK_END)
            if size >= 1 << 62:  # some file systems answer so for a directory
                if stat.S_ISDIR(os.fstat(fd).st_mode):
                    return None
                size = os.fstat(fd).st_size
            if byte_range is None:
                # the hot path (whole chunks): plain system calls, no buffered file object
                offset, length = 0, size
            elif byte_range.offset < 0:
                offset = max(size + byte_range.offset, 0)
                length = size - offset
            else:
                offset = min(byte_range.offset, size)
                length = size - offset
                if byte_range.length is not None:
                    length = min(length, byte_range.length)
            if transient and 0 < length <= fileio.TRANSIENT_MAX_BYTES and fileio.HAS_PREADV:
                return fileio.read_range_into(fd, offset, length)
            return fileio.read_range(fd, offset, length)
        except IsADirectoryError:
            return None
        finally:
            os.close(fd)

    def set_parts(self, key: str, parts: Any) -> None:
        """Write the concatenation of ``parts`` at ``key`` with gathered writes (no joined copy).

        Parameters
        ----------
        key : str
            The key.
        parts : sequence of bytes-like
            The pieces of the value, in order.
        """
        if type(self).set is not Store.set:  # a subclass adds to set(): let it see the value
            super().set_parts(key, parts)
            return
        self._check_writable()
        key = self._checked(key)
        self._write(key, [memoryview(ensure_bytes_like(p, key)) for p in parts])

    def set_many(self, items: Any) -> None:
        """Write several values, each as :meth:`set` does (one file each, atomically); values
        for a key directory that does not exist yet appear together (see
        :meth:`_write_new_directory`).

        Parameters
        ----------
        items : mapping of str to bytes-like
            The values by key.
        """
        if type(self).set is not Store.set:  # a subclass adds to set(): let it see the values
            super().set_many(items)
            return
        self._check_writable()
        tmp_name = TEMP_MARKER + _unique() + "-"  # this call's temporary names: + a number
        pending = [(self._checked(key), value) for key, value in items.items()]
        i = 0
        while i < len(pending):
            # the values whose keys share a directory (consecutive keys, as chunks are written)
            head = pending[i][0].rpartition("/")[0]
            j = i + 1
            while j < len(pending) and pending[j][0].rpartition("/")[0] == head:
                j += 1
            group = pending[i:j]
            if not (len(group) >= NEW_DIRECTORY_MIN_VALUES and head
                    and self._write_new_directory(head, group, f"{tmp_name}{i}")):
                for n, (key, value) in enumerate(group, i):
                    self._write(key, [memoryview(ensure_bytes_like(value, key))], f"{tmp_name}{n}")
            i = j

    def _write_new_directory(self, head: str, group: list[tuple[str, Any]], tmp_name: str) -> bool:
        """Write the values of ``group`` (keys all in the key directory ``head``) as the files of
        a new directory: written into a temporary directory beside it, which is then renamed
        into place -- one rename for all of them, atomic as the rename of each file would be.
        Returns False, having written nothing, when the directory exists already (or this
        platform or ``fsync`` asks for one file at a time)."""
        if not _POSIX or self.fsync or not self.atomic:
            return False
        directory = self._file(head)
        if directory in self._dirs or os.path.lexists(directory):
            return False
        self._check_dir(group[0][0])
        parent = directory.rpartition(os.sep)[0]
        if parent not in self._dirs:
            self._make_dir(parent, group[0][0])
        tmp = parent + os.sep + tmp_name
        try:
            os.mkdir(tmp)
        except FileNotFoundError:  # a concurrent delete removed the (then empty) parent
            self._dirs.discard(parent)
            return False  # one file at a time, which makes the directories again
        try:
            for key, value in group:
                fd = os.open(tmp + os.sep + key.rpartition("/")[2],
                             os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
                try:
                    fileio.write_all(fd, [memoryview(ensure_bytes_like(value, key))])
                finally:
                    os.close(fd)
            if os.path.lexists(directory):  # made meanwhile (rename would replace an empty one)
                self._move_values(tmp, directory, group)
            else:
                try:
                    os.rename(tmp, directory)
                except OSError:  # made meanwhile, and not empty
                    self._move_values(tmp, directory, group)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        self._dirs.add(directory)
        return True

    def _move_values(self, tmp: str, directory: str, group: list[tuple[str, Any]]) -> None:
        """Rename the files of the temporary directory ``tmp`` into ``directory`` one by one."""
        for key, _ in group:
            name = key.rpartition("/")[2]
            os.replace(tmp + os.sep + name, directory + os.sep + name)
        os.rmdir(tmp)

    def _set(self, key: str, value: bytes | memoryview) -> None:
        self._write(key, [memoryview(value)])

    def _write(self, key: str, parts: list[memoryview], tmp_name: str | None = None) -> None:
        fn = self._file(key)
        directory = fn.rpartition(os.sep)[0] if _POSIX else os.path.dirname(fn)
        self._check_dir(key)
        if not self.atomic:
            self._write_in_place(key, fn, directory, parts)
            return
        for attempt in range(3):
            if attempt or directory not in self._dirs:
                self._make_dir(directory, key)
            tmp = directory + os.sep + (tmp_name or TEMP_MARKER + _unique())
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
                    fileio.write_all(fd, parts)
                    if self.fsync:
                        os.fsync(fd)
                finally:
                    os.close(fd)
                os.replace(tmp, fn)
                if self.fsync:
                    fileio.fsync_dir(directory)
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

    def _write_in_place(self, key: str, fn: str, directory: str, parts: list[memoryview]) -> None:
        """Write the value of ``key`` into its file directly (``atomic=False``)."""
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _O_BINARY | _O_NOFOLLOW
        for attempt in range(3):
            if attempt or directory not in self._dirs:
                self._make_dir(directory, key)
            try:
                fd = os.open(fn, flags, 0o666)
            except FileNotFoundError:  # a concurrent delete removed the (then empty) directory
                self._dirs.discard(directory)
                if attempt == 2:
                    raise
                continue
            except (IsADirectoryError, PermissionError):
                if os.path.isdir(fn):
                    raise StoreError(f"cannot write key {key!r} in {self.path!r}: it is a directory") from None
                raise
            except OSError as exc:
                if exc.errno != _ELOOP:
                    raise
                os.remove(fn)  # the key is a symbolic link: replaced by a file, as a rename does
                continue
            try:
                fileio.write_all(fd, parts)
                if self.fsync:
                    os.fsync(fd)
            finally:
                os.close(fd)
            if self.fsync:
                fileio.fsync_dir(directory)
            return
        raise StoreError(f"cannot write key {key!r} in {self.path!r}: its file keeps changing")

    def _make_dir(self, directory: str, key: str) -> None:
        """Make ``directory`` (and its parents) for writing ``key``, and remember it."""
        try:
            os.makedirs(directory, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise StoreError(
                f"cannot write key {key!r} in {self.path!r}: a parent of it is a file"
            ) from None
        self._dirs.add(directory)

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
        self._check_dir(key)
        try:
            os.remove(fn)
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return
        self._prune_dirs(os.path.dirname(fn))

    def exists(self, key: str) -> bool:
        key = self._checked(key)
        fn = self._file(key)
        if not os.path.isfile(fn):
            return False
        try:
            self._check_dir(key)
        except InvalidPathError:
            return False
        return not os.path.islink(fn) or self._inside(fn)

    def version_token(self, key: str) -> Any:
        """The file's device, inode, size and modification time (None when it is missing): an
        atomic write makes a new file, one in place changes the size or the time.

        Parameters
        ----------
        key : str
            The value's key.

        Returns
        -------
        tuple or None
        """
        try:
            st = os.stat(self._file(self._checked(key)))
        except (OSError, InvalidPathError):
            return None
        return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)

    def getsize(self, key: str) -> int:  # type: ignore[override]  # Store wraps it to take None too
        key = self._checked(key)
        if not self.exists(key):
            return 0
        try:
            return os.stat(self._file(key)).st_size
        except (FileNotFoundError, NotADirectoryError):
            return 0

    def list_prefix(self, prefix: str) -> Iterator[str]:
        validate_prefix(prefix)
        return self._list_prefix(prefix)

    def _list_prefix(self, prefix: str) -> Iterator[str]:
        # start the walk at the deepest directory the prefix names
        head, _, _ = prefix.rpartition("/")
        root = self._file(head) if head else self.path
        if not os.path.isdir(root) or not self._inside(root):
            return
        base = len(self.path) + 1
        stack = [root]
        while stack:
            dirpath = stack.pop()
            rel = dirpath[base:].replace(os.sep, "/") if dirpath != self.path else ""
            names, subdirs, orphans = self._scan(dirpath)
            for name in names:
                key = f"{rel}/{name}" if rel else name
                if key.startswith(prefix):
                    yield key
            # symbolic links to directories are not walked (os.walk's default)
            stack.extend(os.path.join(dirpath, d) for d in sorted(subdirs, reverse=True))
            if orphans:
                self._remove_orphans(dirpath, orphans)

    def _scan(self, directory: str) -> tuple[list[str], list[str], list[str]]:
        """(sorted file names that are keys, real sub-directory names, temporary file names)
        of ``directory``; symbolic links that lead outside the root are left out."""
        files: list[str] = []
        subdirs: list[str] = []
        temps: list[str] = []
        try:
            entries = list(os.scandir(directory))
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            return files, subdirs, temps
        for e in entries:
            if e.name.startswith(TEMP_MARKER):
                temps.append(e.name)
                continue
            try:
                if e.is_symlink():
                    if not self._inside(e.path):
                        continue
                    if e.is_file():
                        files.append(e.name)
                elif e.is_dir(follow_symlinks=False):
                    subdirs.append(e.name)
                else:
                    files.append(e.name)
            except OSError:
                continue
        files.sort()
        return files, subdirs, temps

    def list_dir(self, prefix: str = "") -> list[str]:
        validate_prefix(prefix)
        prefix = prefix.strip("/")
        root = self._file(prefix) if prefix else self.path
        if prefix and not self._inside(root):
            return []
        try:
            entries = list(os.scandir(root))
        except (FileNotFoundError, NotADirectoryError):
            return []
        keys = []
        temps = []
        for e in entries:
            if e.name.startswith(TEMP_MARKER):
                temps.append(e.name)
            elif not e.is_symlink() or self._inside(e.path):
                keys.append(e.name)
        if temps:
            self._remove_orphans(root, temps)
        return sorted(keys)

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
        return type(other) is type(self) and other.path == self.path

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.path!r})"

    def __str__(self) -> str:
        """The store as zarr-python 3 names it in reprs: ``file://<root as given>``."""
        given = getattr(self, "_given", self.path)
        return "file://" + (given.decode() if isinstance(given, bytes) else given).replace(os.sep, "/")

    def __getstate__(self):
        return self.__dict__.copy()

    def __setstate__(self, state) -> None:
        self.__dict__.update(state)
