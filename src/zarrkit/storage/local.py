"""Stores on the local file system."""

from __future__ import annotations

import errno
import os
import pathlib
import stat
from collections.abc import Hashable, Iterable, Iterator, Sequence
from typing import Any, Self

from ..errors import InvalidPathError, StoreError
from . import fileio, local_tree, local_versions
from .base import (
    ByteRange,
    Store,
    ensure_bytes_like,
    is_valid_key,
    oversized,
    validate_key,
    validate_prefix,
)
from .fileio import HOST as _HOST  # noqa: F401  (the host field of this process's temporary names)
from .fileio import TEMP_MARKER, temp_name  # noqa: F401  (TEMP_MARKER: documented here)
from .keys import are_valid_keys
from .local_tree import ELOOP, OPEN_SAFE, ORPHAN_AGE, plain_dir  # noqa: F401  (ORPHAN_AGE: documented here)
from .local_tree import READ_FLAGS as _READ_FLAGS

__all__ = ["DirectoryStore"]

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_DIR_FLAGS = os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW
_POSIX = os.sep == "/"  # keys are native relative paths
#: :meth:`DirectoryStore.get_upto` reads up to this limit in one read of ``limit + 1`` bytes
#: (allocated before the read); above it, the file's size is asked first
UPTO_READ_MAX = 1 << 20

#: Values written together (``set_many``) into a key directory that does not exist yet, at
#: least this many, are written into a temporary directory renamed into place at once.
NEW_DIRECTORY_MIN_VALUES = 8



def _safe_listdir(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []












class DirectoryStore(local_versions.VersionedFiles, Store):
    """A store where every key is a file below ``path`` (``/`` in a key is a sub-directory).

    Writes are atomic: a value is written to a temporary file beside it and renamed over the
    key, so a concurrent reader sees the old value or the new one, never half of either, and a
    writer killed mid-write leaves the old value.  Temporary files are never listed; those of
    dead writers are removed when found (opening the store for writing, listings) or by
    :meth:`remove_orphaned_temp_files`.  Partial reads (``byte_range``) read only the requested
    bytes.

    The store is confined to its directory: a symbolic link below it that resolves inside the
    root is followed, one that leads outside is not part of the store — listings leave it out
    and reading, writing or deleting through it raises
    :class:`~zarrkit.errors.InvalidPathError`.  Removing a directory of keys
    (:meth:`delete_prefix`, ``rmdir``, ``clear``) never recurses through a link: a link where
    the removed directory is, or anywhere below it, is itself removed, whether it leads inside
    the root or out, and what it leads to stays.  Values are kept in regular files only: named
    pipes, sockets and devices are left out of listings and never read or written through (a
    read of one raises :class:`~zarrkit.errors.InvalidPathError`; a write replaces it).

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
        self.path: str = os.path.abspath(os.fspath(path))
        self._given = os.fspath(path)  # as given (for :meth:`__str__`)
        if os.path.exists(self.path) and not os.path.isdir(self.path):
            raise StoreError(f"DirectoryStore path {self.path!r} exists and is not a directory")
        if self._check_dimension_separator(dimension_separator) is not None:
            self.dimension_separator = dimension_separator
        self.normalize_keys: bool = bool(normalize_keys)
        self.read_only = read_only
        self.fsync = fsync
        self.atomic: bool = bool(atomic)
        self._dirs: set[str] = set()  # directories known to exist (saves a stat per write)
        self._real_root = os.path.realpath(self.path)
        self._root_sep: str = self.path if self.path.endswith(os.sep) else self.path + os.sep
        self._confined: set[str] = {""}  # key directories known to resolve inside the root
        # ... those of them listed once, each to whether it held nothing but regular files,
        # directories and links then; and those that did
        self._listed: dict[str, bool] = {}
        self._plain: set[str] = set()
        if not read_only:
            self._remove_orphans(self.path, _safe_listdir(self.path))

    @classmethod
    async def open(cls, *args: Any, mode: str | None = None, **kwargs: Any) -> Self:
        """Make the store and its directory (zarr-python 3's ``await LocalStore.open(root)``).

        Parameters
        ----------
        *args, **kwargs
            The arguments of :class:`DirectoryStore` (``root``, ``read_only``...).
        mode : {'r', 'r+', 'a', 'w', 'w-'}, optional
            ``'r'`` and ``'r+'``: the directory must exist (it is not made); other modes, or
            none, make it unless the store is read-only.

        Returns
        -------
        DirectoryStore

        Raises
        ------
        FileNotFoundError
            The directory does not exist and is not to be made.
        ValueError
            An unknown ``mode`` (nothing is made).
        """
        if mode is not None and mode not in ("r", "r+", "a", "w", "w-"):
            raise ValueError(f"mode must be one of 'r', 'r+', 'a', 'w', 'w-', got {mode!r}")
        store = cls(*args, **kwargs)
        store._make_root(create=not store.read_only and mode not in ("r", "r+"))
        return store

    def _on_open(self) -> None:
        self._make_root(create=not self.read_only)

    def _make_root(self, create: bool) -> None:
        if create:
            os.makedirs(self.path, exist_ok=True)
        elif not os.path.isdir(self.path):
            raise FileNotFoundError(f"{self.path} does not exist")

    @property
    def root(self) -> pathlib.Path:
        """The directory, as zarr-python 3's ``LocalStore.root``."""
        return pathlib.Path(self.path)

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
        return local_tree.remove_orphans_below(self, prefix)

    def _remove_orphans(self, directory: str, names: list[str]) -> int:
        return 0 if self.read_only else local_tree.remove_orphans(directory, names)

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
        plain = head.rpartition("/")[0] in self._confined and plain_dir(directory)
        if not plain and not self._inside(directory):
            raise InvalidPathError(
                f"key {key!r} of {self.path!r} leads through a symbolic link outside the store"
            )
        if plain or os.path.isdir(directory):
            if len(self._confined) > 100_000:
                self._confined, self._listed, self._plain = {""}, {}, set()
            self._confined.add(head)

    def _lists_plain(self, head: str) -> bool:
        """Whether the key directory ``head`` (known to be inside the root) listed nothing but
        regular files, directories and links the first time it was asked (a file's kind is
        then not asked again for each value read from it; see ``local_tree``)."""
        plain = self._listed.get(head)
        if plain is None:
            plain = local_tree.lists_plain_files(self._file(head))
            if plain is None:  # (missing: asked again next time)
                return False
            self._listed[head] = plain
        if plain and head in self._confined:
            self._plain.add(head)
        return plain

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

    def get_transient_upto(self, key: str, limit: int) -> bytes | memoryview | None:
        """:meth:`get_transient` of a whole value that may hold at most ``limit`` bytes: a
        larger file is refused from its size (see :meth:`Store.get_upto`), unread.

        Parameters
        ----------
        key : str
            The key.
        limit : int
            The most bytes the value may hold.

        Returns
        -------
        bytes, memoryview or None
        """
        if type(self)._get is not DirectoryStore._get:  # a subclass reads its own way
            return super().get_upto(key, limit)
        return self._read(self._checked(key), None, True, limit)

    def _get(self, key: str, byte_range: ByteRange | None) -> bytes | None:
        return self._read(key, byte_range, False)  # type: ignore[return-value]

    def get_upto(self, key: str, limit: int) -> bytes | memoryview | None:
        """The whole value at ``key``, which may hold at most ``limit`` bytes: one read of
        ``limit + 1`` bytes, no size query (small chunks read one after the other); a larger
        file is refused (:class:`~zarrkit.errors.ChunkDecodeError`) from that read, or for a
        large ``limit`` from the file's size, before it is read whole.

        Parameters
        ----------
        key : str
            The key.
        limit : int
            The most bytes the value may hold.

        Returns
        -------
        bytes or None
        """
        if type(self)._get is not DirectoryStore._get:  # a subclass reads its own way
            return super().get_upto(key, limit)
        if limit > UPTO_READ_MAX or self.normalize_keys:  # (a read of limit + 1 bytes allocates them first)
            return self._read(self._checked(key), None, False, limit)
        validate_key(key)
        fn = self._root_sep + key if _POSIX else self._file(key)
        head = key.rpartition("/")[0]
        known = head in self._plain  # inside the root, and listed no special file
        if not known:
            if head not in self._confined:
                self._check_dir(key)
            known = self._lists_plain(head)
        try:
            fd = os.open(fn, _READ_FLAGS)
        except OSError:
            opened = local_tree.open_value_fd(self, key, fn)  # (which asks the file's kind)
            if opened is None:
                return None
            fd, known = opened, True
        try:
            # a device may read as a value: its kind is asked unless its directory listed
            # none (a named pipe does not read at all, and an empty or endless read is asked)
            if not known and local_tree.no_value_at(self, key, fd):
                return None
            data = os.pread(fd, limit + 1, 0)
            if (not data or len(data) > limit) and local_tree.no_value_at(self, key, fd):
                return None
        except IsADirectoryError:
            return None
        except OSError as exc:
            if exc.errno == errno.ESPIPE and local_tree.no_value_at(self, key, fd):
                return None
            raise
        finally:
            os.close(fd)
        if len(data) > limit:
            raise oversized(key, None, limit)
        return data

    def get_many_upto(self, keys: Sequence[str], limit: int) -> list[bytes | memoryview | None]:
        """:meth:`get_upto` of each of ``keys``, in a loop that does for each what a small
        chunk needs (its key checked, its file opened, read and closed) and hands anything
        else to :meth:`get_upto`: a file missing, not a regular file, empty or too large, a
        key whose directory is not yet known to be inside the root and to list no special file.

        Parameters
        ----------
        keys : sequence of str
            The keys.
        limit : int
            The most bytes each value may hold.

        Returns
        -------
        list
            Each value, or None where it is missing.
        """
        if (
            type(self)._get is not DirectoryStore._get or type(self).get_upto is not DirectoryStore.get_upto
            or limit > UPTO_READ_MAX or self.normalize_keys or not _POSIX
        ):
            return super().get_many_upto(keys, limit)
        root, plain, careful = self._root_sep, self._plain, self.get_upto
        open_, pread, close, flags, size = os.open, os.pread, os.close, _READ_FLAGS, limit + 1
        values: list[bytes | memoryview | None] = []
        append = values.append
        checked = are_valid_keys(keys)
        for key in keys:
            if not (checked or is_valid_key(key)) or key.rpartition("/")[0] not in plain:
                append(careful(key, limit))
                continue
            try:
                fd = open_(root + key, flags)
            except OSError:
                append(careful(key, limit))
                continue
            try:
                data = pread(fd, size, 0)
            except OSError:
                data = b""
            finally:
                close(fd)
            append(data if 0 < len(data) <= limit else careful(key, limit))
        return values

    def prefetch(self, keys: Iterable[str]) -> bool:  # (documented by Store.prefetch)
        return local_tree.prefetch(self, keys)

    def _open_value(self, key: str) -> int | None:
        """A read-only descriptor of the file of the (valid) ``key``, confined to the root;
        None when missing.  (``get_upto`` has the same steps inline: it serves tiny chunks.)"""
        fn = self._root_sep + key if _POSIX else self._file(key)
        if key.rpartition("/")[0] not in self._confined:
            self._check_dir(key)
        try:
            return os.open(fn, _READ_FLAGS)
        except OSError:  # missing, a directory, a symbolic link...: sorted out by _open
            return local_tree.open_value_fd(self, key, fn)

    def _read(
        self, key: str, byte_range: ByteRange | None, transient: bool, limit: int | None = None
    ) -> bytes | memoryview | None:
        fd = self._open_value(key)
        if fd is None:
            return None
        try:
            if byte_range is not None and byte_range.offset >= 0 and byte_range.length is not None:
                # a range from a known offset (an inner chunk of a shard): no size needed, a
                # read past the end comes back short
                offset, length = byte_range.offset, byte_range.length
                if transient and 0 < length <= fileio.TRANSIENT_MAX_BYTES and fileio.HAS_PREADV:
                    return fileio.read_range_into(fd, offset, length)
                return fileio.read_range(fd, offset, length)
            # files are replaced whole, never changed in place: the size read here holds, and
            # the same call tells a regular file from a directory, a named pipe or a device
            # (small chunks, where an fstat would show, are read by get_upto)
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                if stat.S_ISDIR(st.st_mode):
                    return None
                raise local_tree.not_regular(self, key, st.st_mode)
            size = st.st_size
            if byte_range is None:
                if limit is not None and size > limit:
                    raise oversized(key, size, limit)
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
        except OSError as exc:  # a range of a named pipe (no size was asked)
            if exc.errno == errno.ESPIPE and local_tree.no_value_at(self, key, fd):
                return None
            raise
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
        tmp_name = temp_name() + "-"  # this call's temporary names: + a number
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
        return local_tree.write_new_directory(self, head, group, tmp_name)

    def _set(self, key: str, value: bytes | memoryview) -> None:
        self._write(key, [memoryview(value)])

    def _write(self, key: str, parts: list[memoryview], tmp_name: str | None = None) -> None:
        fn = self._file(key)
        directory = fn.rpartition(os.sep)[0] if _POSIX else os.path.dirname(fn)
        self._check_dir(key)
        if not self.atomic:
            self._write_in_place(key, fn, directory, parts)
            return

        def make_dir(attempt: int) -> None:
            if attempt or directory not in self._dirs:
                self._make_dir(directory, key)

        try:
            fileio.write_atomic(fn, directory, parts, make_dir, fsync=self.fsync, tmp_name=tmp_name)
        except BaseException as exc:
            self._dirs.discard(directory)  # it may be gone: made again by the next write
            self._prune_dirs(directory)
            if isinstance(exc, (IsADirectoryError, PermissionError)) and os.path.isdir(fn):
                raise StoreError(
                    f"cannot write key {key!r} in {self.path!r}: it is a directory"
                ) from None
            raise

    def _write_in_place(self, key: str, fn: str, directory: str, parts: list[memoryview]) -> None:
        """Write the value of ``key`` into its file directly (``atomic=False``)."""
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | OPEN_SAFE
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
                # a symbolic link (ELOOP), a named pipe nobody reads or a socket (ENXIO): replaced
                # by a file, as a rename does
                if exc.errno != ELOOP and not local_tree.special_file(fn):
                    raise
                os.remove(fn)
                continue
            if not stat.S_ISREG(os.fstat(fd).st_mode):  # a pipe someone reads, a device
                os.close(fd)
                os.remove(fn)
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
        """Remove empty directories from ``directory`` up to (not including) the root.

        Callers have confined ``directory`` (:meth:`_check_dir`); rmdir does not follow a
        link in the last place, so a link on the way up ends the pruning."""
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
        # confined as writes are (a link as the key itself is removed, not followed)
        self._check_dir(key)
        head = key.rpartition("/")[0]
        if head:
            # _check_dir trusts a directory once seen inside; a deletion also checks that it is
            # still the directory seen (one stat), so one swapped for a link to the outside
            # since is refused.  One file by path, for speed: a swap between this check and
            # the removal below remains possible; removing directories of keys (delete_prefix)
            # holds descriptors and leaves no such window.
            directory = fn.rpartition(os.sep)[0]
            try:
                st = os.stat(directory)
            except (FileNotFoundError, NotADirectoryError):
                return
            ids = self.__dict__.setdefault("_dir_ids", {})
            if ids.get(head) != (st.st_dev, st.st_ino):
                if not self._inside(directory):
                    self._confined.discard(head)
                    self._plain.discard(head)
                    raise InvalidPathError(
                        f"key {key!r} of {self.path!r} leads through a symbolic link outside the store"
                    )
                if len(ids) > 100_000:
                    ids.clear()
                ids[head] = (st.st_dev, st.st_ino)
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

    def value_version(self, key: str) -> fileio.OpenFile | None:
        """The file of ``key`` held open (None when there is none), for reading several
        ranges of one version of it (a shard's index, then its chunks) while writers replace
        it: a file renamed over it, or its removal, leaves the open one readable.

        Parameters
        ----------
        key : str
            The value's key.

        Returns
        -------
        OpenFile or None
            Close it after use.
        """
        key = self._checked(key)
        fd = self._open_value(key)
        if fd is None:
            return None
        try:
            st = os.fstat(fd)
        except BaseException:
            os.close(fd)
            raise
        if stat.S_ISREG(st.st_mode):
            return fileio.OpenFile(fd, st)
        os.close(fd)
        if stat.S_ISDIR(st.st_mode):
            return None
        raise local_tree.not_regular(self, key, st.st_mode)

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
        return local_tree.walk_keys(self, prefix)


    def list_dir(self, prefix: str = "") -> list[str]:
        validate_prefix(prefix)
        return local_tree.list_directory(self, prefix)

    def delete_prefix(self, prefix: str) -> None:
        """Remove every key starting with ``prefix``; a prefix ending in ``/`` removes that
        directory of keys at once.

        Confined as writes are: a prefix whose directory leads through a symbolic link out of
        the root raises :class:`~zarrkit.errors.InvalidPathError`, having removed nothing.  The
        removal never recurses through a link: a link where the directory is, or below it, is
        removed itself (what it leads to stays).

        Parameters
        ----------
        prefix : str
            The start of the keys removed (``''``: all).
        """
        self._check_writable()
        validate_prefix(prefix)
        self._dirs.clear()
        if prefix == "":
            self._remove_tree("", None, prefix)
            return
        if prefix.endswith("/"):
            validate_key(prefix[:-1])
            head, _, name = prefix[:-1].rpartition("/")
            self._remove_tree(head, name, prefix)
            return
        self._check_dir(prefix)  # listings leave a link out silently; a removal refuses it
        super().delete_prefix(prefix)

    def _remove_tree(self, head: str, name: str | None, prefix: str) -> None:
        local_tree.remove_tree(self, head, name, prefix)



    def clear(self) -> None:
        """Remove every key (the root directory itself stays)."""
        self.delete_prefix("")

    def __len__(self) -> int:
        return sum(1 for _ in self.list_prefix(""))

    def location(self) -> tuple[Hashable, str]:
        """The directory holding the values."""
        return ("file", os.path.realpath(self.path)), ""

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.path == self.path

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.path!r})"

    def __str__(self) -> str:
        """The store as zarr-python 3 names it in reprs: ``file://<root as given>``."""
        given = getattr(self, "_given", self.path)
        return "file://" + (given.decode() if isinstance(given, bytes) else given).replace(os.sep, "/")

    def __getstate__(self) -> dict[str, Any]:
        # (what was listed here is listed again where the store is unpickled)
        return {**self.__dict__, "_listed": {}, "_plain": set()}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update({"_listed": {}, "_plain": set(), **state})
