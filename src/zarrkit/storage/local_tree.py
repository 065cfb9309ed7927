"""The directory-tree side of :class:`~zarrkit.storage.local.DirectoryStore`: listing,
creating and removing directories of keys without following a symbolic link out of the store
or opening anything but regular files and directories (removal descriptor-based where the
platform allows; a value's file opened only when it is one), and cleaning up the temporary
files of writers that died.  The reading and writing of single values stays in
:mod:`zarrkit.storage.local`."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import time
from collections.abc import Iterable, Iterator
from typing import Any

from ..errors import InvalidPathError
from . import fileio
from .base import ensure_bytes_like
from .fileio import HOST, TEMP_MARKER, temp_owner
from .keys import is_valid_key

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_DIR_FLAGS = os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW
#: a named pipe opened without O_NONBLOCK waits for the other end forever, and a terminal
#: opened without O_NOCTTY may become this process's controlling terminal: values are only
#: read from regular files, but which kind of file a name holds is known once it is open
_O_SPECIAL_SAFE = getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
#: the flags every open of a value's file takes, and how it is opened for reading
OPEN_SAFE = getattr(os, "O_BINARY", 0) | _O_NOFOLLOW | _O_SPECIAL_SAFE
READ_FLAGS = os.O_RDONLY | OPEN_SAFE
ELOOP = getattr(errno, "ELOOP", None)
#: deletions hold a descriptor of each directory on the way and remove names relative to it, so
#: a directory swapped for a symbolic link meanwhile is not followed (not on every platform)
_FD_REMOVAL = bool(
    _O_DIRECTORY and _O_NOFOLLOW and shutil.rmtree.avoids_symlink_attacks
    and {os.open, os.stat, os.unlink, os.rmdir} <= os.supports_dir_fd
    and os.listdir in os.supports_fd
)
#: Temporary files of other hosts older than this are considered abandoned.
ORPHAN_AGE = 24 * 3600


def plain_dir(path: str) -> bool:
    """Whether ``path`` is a directory itself, not a symbolic link to one."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def remove_entry(dir_fd: int, name: str, everything: bool) -> bool:
    """Remove ``name`` of the directory ``dir_fd``, never following a symbolic link: a
    directory with what is below it, a link itself.  A file or a link to one is removed only
    when ``everything`` (it is a value, not a directory of them).  Returns whether something
    was removed."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    if stat.S_ISDIR(st.st_mode):
        # descriptor-based: a directory below swapped for a link is unlinked, not followed
        shutil.rmtree(name, dir_fd=dir_fd)
        return True
    if not everything:
        if not stat.S_ISLNK(st.st_mode):
            return False
        try:
            if not stat.S_ISDIR(os.stat(name, dir_fd=dir_fd).st_mode):
                return False
        except OSError:  # dangling
            return False
    try:
        os.unlink(name, dir_fd=dir_fd)
    except FileNotFoundError:
        return False
    return True


def remove_orphans(directory: str, names: list[str]) -> int:
    """Remove the temporary files and directories among ``names`` of ``directory`` whose
    writers died (or, from another host, older than :data:`ORPHAN_AGE`); how many."""
    removed = 0
    now = time.time()
    for name in names:
        if not name.startswith(TEMP_MARKER):
            continue
        host, pid = temp_owner(name)
        fn = os.path.join(directory, name)
        if host == HOST and pid.isdigit():
            if pid_alive(int(pid)):
                continue
        else:
            try:
                if now - os.stat(fn).st_mtime < ORPHAN_AGE:
                    continue
            except OSError:
                continue
        try:
            if plain_dir(fn):  # a directory of new values (rmtree refuses a link)
                shutil.rmtree(fn)
            else:
                os.remove(fn)
            removed += 1
        except OSError:
            pass
    return removed


def remove_tree(store: Any, head: str, name: str | None, prefix: str) -> None:
    """Remove the directory ``name`` of the key directory ``head`` (``None``: everything in
    ``head``), and the directories that leaves empty, for :meth:`DirectoryStore.delete_prefix`."""
    if not _FD_REMOVAL:
        remove_tree_by_path(store, head, name, prefix)
        return
    opened = open_dirs(store, head, prefix)
    if opened is None:
        return
    fds, parts = opened
    try:
        if name is None:
            for entry in os.listdir(fds[-1]):
                remove_entry(fds[-1], entry, everything=True)
            return
        if not remove_entry(fds[-1], name, everything=False):
            return
        if os.sep.join(parts) != head.replace("/", os.sep):
            return  # reached through a link: what is left empty is another key directory
        for i in range(len(parts), 0, -1):  # the parents it leaves empty
            try:
                os.rmdir(parts[i - 1], dir_fd=fds[i - 1])
            except OSError:  # not empty, or gone
                break
    finally:
        for fd in fds:
            os.close(fd)


def open_dirs(store: Any, head: str, what: str) -> tuple[list[int], list[str]] | None:
    """Descriptors of the root and of each directory down to the key directory ``head``,
    and the names of those directories; None when ``head`` is missing or not a directory.

    Links inside the root on the way are resolved first, as writes follow them (one that
    leads out raises :class:`InvalidPathError` naming ``what``); then each directory is
    opened in the one above it without following a link, so a directory swapped for a
    link meanwhile is refused, not followed."""
    real_root = store._real_root
    parts: list[str] = []
    if head:
        real = os.path.realpath(store._file(head))
        inside = real_root if real_root.endswith(os.sep) else real_root + os.sep
        if real.startswith(inside):
            parts = real[len(inside):].split(os.sep)
        elif real != real_root:
            raise InvalidPathError(
                f"prefix {what!r} of {store.path!r} leads through a symbolic link outside the store"
            )
    try:
        fds = [os.open(real_root, os.O_RDONLY | _O_DIRECTORY)]
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:
        for part in parts:
            try:
                fds.append(os.open(part, _DIR_FLAGS, dir_fd=fds[-1]))
            except OSError as exc:
                if exc.errno not in (errno.ENOENT, errno.ENOTDIR, ELOOP):
                    raise
                try:
                    mode = os.stat(part, dir_fd=fds[-1], follow_symlinks=False).st_mode
                except OSError:
                    mode = 0
                if stat.S_ISLNK(mode):
                    raise InvalidPathError(
                        f"prefix {what!r} of {store.path!r}: the directory {part!r} on its way "
                        "became a symbolic link while it was being removed"
                    ) from None
                for fd in fds:
                    os.close(fd)
                return None
    except BaseException:
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        raise
    return fds, parts


def remove_tree_by_path(store: Any, head: str, name: str | None, prefix: str) -> None:
    """:func:`remove_tree` where directories cannot be opened without following links:
    the same checks, by path (a link swapped in between them and the removal can still
    be followed there)."""
    directory = store._file(head) if head else store.path
    if head and not store._inside(directory):
        raise InvalidPathError(
            f"prefix {prefix!r} of {store.path!r} leads through a symbolic link outside the store"
        )
    if not os.path.isdir(directory):
        return
    for entry in os.listdir(directory) if name is None else [name]:
        p = os.path.join(directory, entry)
        if plain_dir(p):
            shutil.rmtree(p)  # refuses a link, and follows none below
        elif os.path.islink(p) or getattr(os.path, "isjunction", lambda _: False)(p):
            if name is not None and not os.path.isdir(p):
                continue  # a link to a value is the value at the prefix's key, not below it
            try:
                os.unlink(p)
            except OSError:  # a link to a directory on Windows
                os.rmdir(p)
        elif name is None and os.path.lexists(p):
            os.remove(p)
        else:
            continue
        if name is not None:
            store._prune_dirs(directory)


def open_value_fd(store: Any, key: str, fn: str) -> int | None:
    """A read-only descriptor of the regular file ``fn`` (None when it is missing or a
    directory), refusing symbolic links that lead outside the root and special files.

    The hot paths open ``fn`` themselves and call this when that fails; it is rare, so
    the descriptor's kind is checked here, where they only check it when a read fails or
    comes back empty or too long."""
    store._check_dir(key)
    try:
        fd = os.open(fn, READ_FLAGS)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        if exc.errno != ELOOP:
            # a directory (some systems refuse to open one), a socket (no file to open),
            # or an error of its own
            try:
                mode = os.lstat(fn).st_mode
            except OSError:
                raise exc from None
            if stat.S_ISDIR(mode):
                return None
            if not stat.S_ISREG(mode) and not stat.S_ISLNK(mode):
                raise not_regular(store, key, mode) from None
            raise
        # the key itself is a symbolic link: followed only when it stays inside the root
        if not store._inside(fn):
            raise InvalidPathError(
                f"key {key!r} of {store.path!r} is a symbolic link to a file outside the store"
            ) from None
        try:
            fd = os.open(fn, READ_FLAGS & ~_O_NOFOLLOW)
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None
        except OSError:
            mode = os.stat(fn).st_mode
            if not stat.S_ISREG(mode):
                raise not_regular(store, key, mode) from None
            raise
    mode = os.fstat(fd).st_mode
    if stat.S_ISREG(mode):
        return fd
    os.close(fd)
    if stat.S_ISDIR(mode):
        return None
    raise not_regular(store, key, mode)

def not_regular(store: Any, key: str, mode: int) -> InvalidPathError:
    return InvalidPathError(
        f"key {key!r} of {store.path!r} is {file_kind(mode)}, not a regular file: "
        "a store keeps values in regular files only"
    )

def no_value_at(store: Any, key: str, fd: int) -> bool:
    """Whether the open ``fd`` of ``key`` is a directory (no value there): False for a
    regular file, raises for any other kind of file."""
    mode = os.fstat(fd).st_mode
    if stat.S_ISREG(mode):
        return False
    if stat.S_ISDIR(mode):
        return True
    raise not_regular(store, key, mode)


def prefetch(store: Any, keys: Iterable[str]) -> bool:
    """``DirectoryStore.prefetch``: each regular file of ``keys`` not yet in the page cache
    read into it in the background (:func:`~zarrkit.storage.fileio.read_ahead`).  Keys that
    are not valid, lead outside the root, or name no regular file are passed over; nothing
    is raised, and nothing is read into the process.  Returns whether any file is being
    read ahead.

    Parameters
    ----------
    store : DirectoryStore
        The store.
    keys : iterable of str
        The keys whose values are about to be read.

    Returns
    -------
    bool
    """
    fetching = False
    if not fileio.CAN_READ_AHEAD or store.normalize_keys:
        return fetching
    for key in keys:
        if not isinstance(key, str) or not is_valid_key(key):
            continue
        try:
            store._check_dir(key)
            fd = os.open(store._file(key), READ_FLAGS)
        except (OSError, ValueError, InvalidPathError):  # (ValueError: a key no file name can hold)
            continue
        try:
            fetching = fileio.read_ahead(fd) or fetching
        except OSError:
            pass
        finally:
            os.close(fd)
    return fetching


#: directories with more entries than this are not listed for their kinds (see
#: lists_plain_files): each value read from them has its kind asked instead
LIST_KINDS_MOST = 1 << 16
#: what listings found, by directory path: the identity, times, size and link count of the
#: directory listed (asked of the open directory itself, so they are those of the one listed,
#: wherever the path leads meanwhile), and the answer.  A file's kind never changes and a new
#: name in a directory changes its times, so a directory whose stamp is unchanged holds the
#: kinds it held: a store opened again asks one stat, not a listing (with 128 files, 2 µs
#: against 60).  At most KINDS_SEEN_MOST are kept, of paths up to KINDS_SEEN_PATH_MOST
#: characters (a few MiB); then they are forgotten.
_kinds_seen: dict[str, tuple[tuple[int, ...], bool]] = {}
KINDS_SEEN_MOST = 10_000
KINDS_SEEN_PATH_MOST = 512
#: a listing is remembered only when the directory last changed this long before it: a file
#: system's times may advance in coarse steps, so a change in the same step as the one before
#: the listing could leave its times as they were
SETTLED_NS = 2_000_000_000


def _stamp(st: os.stat_result) -> tuple[int, ...]:
    return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_nlink)


def lists_plain_files(directory: str) -> bool | None:
    """Whether ``directory`` lists nothing but regular files, directories and symbolic links
    (the kinds the listing gives, no call per entry where the file system gives them): where
    it does, reading values from it needs no question of each file's kind, since opening a
    file refuses links.  False with more than LIST_KINDS_MOST entries; None when it cannot be
    listed.  A directory unchanged since an earlier listing in this process (see
    ``_kinds_seen``) is not listed again."""
    try:
        seen = _kinds_seen.get(directory)
        if seen is not None and seen[0] == _stamp(os.stat(directory)):
            return seen[1]
        if not _SCANDIR_FD:
            return _lists_plain(directory)
        fd = os.open(directory, os.O_RDONLY | _O_DIRECTORY)
        try:
            st = os.fstat(fd)
            plain = _lists_plain(fd)
        finally:
            os.close(fd)
    except OSError:
        return None
    if plain is not None and len(directory) <= KINDS_SEEN_PATH_MOST and (
        time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) > SETTLED_NS
    ):
        if len(_kinds_seen) >= KINDS_SEEN_MOST:
            _kinds_seen.clear()
        _kinds_seen[directory] = (_stamp(st), plain)
    return plain


_SCANDIR_FD = os.scandir in os.supports_fd
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


def _lists_plain(directory: str | int) -> bool | None:
    """:func:`lists_plain_files` of the directory at a path or open as a descriptor, unremembered."""
    try:
        with os.scandir(directory) as entries:
            for n, entry in enumerate(entries):
                if n >= LIST_KINDS_MOST or not (
                    entry.is_file(follow_symlinks=False) or entry.is_dir(follow_symlinks=False)
                    or entry.is_symlink()
                ):
                    return False
    except OSError:
        return None
    return True


def file_kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    return "a special file"


def special_file(path: str) -> bool:
    """Whether ``path`` is a named pipe, a socket or a device (not a link, file or directory)."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode))


def scan(store: Any, directory: str) -> tuple[list[str], list[str], list[str], list[str]]:
    """(sorted file names that are keys, real sub-directory names, names of links to
    directories inside the root, temporary file names) of ``directory``; symbolic links that
    lead outside the root, and named pipes, sockets and devices (no value is kept in one) are
    left out."""
    files: list[str] = []
    subdirs: list[str] = []
    linked: list[str] = []
    temps: list[str] = []
    try:
        entries = list(os.scandir(directory))
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return files, subdirs, linked, temps
    for e in entries:
        if e.name.startswith(TEMP_MARKER):
            temps.append(e.name)
            continue
        try:
            if e.is_symlink():
                if not store._inside(e.path):
                    continue
                if e.is_file():
                    files.append(e.name)
                elif e.is_dir():
                    linked.append(e.name)
            elif e.is_dir(follow_symlinks=False):
                subdirs.append(e.name)
            elif e.is_file(follow_symlinks=False):  # the entry's type: no system call
                files.append(e.name)
        except OSError:
            continue
    files.sort()
    return files, subdirs, linked, temps


def walk_keys(store: Any, prefix: str) -> Iterator[str]:
    """The keys below ``prefix``, depth first, sorted per directory; temporary files of dead
    writers met on the way are removed."""
    # start the walk at the deepest directory the prefix names
    head, _, _ = prefix.rpartition("/")
    root = store._file(head) if head else store.path
    if not os.path.isdir(root) or not store._inside(root):
        return
    base = len(store.path) + 1
    stack = [root]
    while stack:
        dirpath = stack.pop()
        rel = dirpath[base:].replace(os.sep, "/") if dirpath != store.path else ""
        names, subdirs, _, orphans = scan(store, dirpath)
        for name in names:
            key = f"{rel}/{name}" if rel else name
            if key.startswith(prefix):
                yield key
        # symbolic links to directories are not walked (os.walk's default)
        stack.extend(os.path.join(dirpath, d) for d in sorted(subdirs, reverse=True))
        if orphans:
            store._remove_orphans(dirpath, orphans)


def list_directory(store: Any, prefix: str) -> list[str]:
    """The names of values and directories in the directory ``prefix``."""
    prefix = prefix.strip("/")
    root = store._file(prefix) if prefix else store.path
    if prefix and not store._inside(root):
        return []
    files, subdirs, linked, temps = scan(store, root)
    if temps:
        store._remove_orphans(root, temps)
    return sorted(files + subdirs + linked)


def remove_orphans_below(store: Any, prefix: str) -> int:
    """Remove the temporary files of dead writers below ``prefix`` (``''``: all); how many."""
    root = store._file(prefix.strip("/")) if prefix.strip("/") else store.path
    if root != store.path and not store._inside(root):
        raise InvalidPathError(
            f"prefix {prefix!r} of {store.path!r} leads through a symbolic link outside the store"
        )
    removed = 0
    for dirpath, dirnames, filenames in os.walk(root):
        temps = [d for d in dirnames if d.startswith(TEMP_MARKER)]
        dirnames[:] = [d for d in dirnames if not d.startswith(TEMP_MARKER)]
        removed += store._remove_orphans(dirpath, filenames + temps)
    return removed


def write_new_directory(store: Any, head: str, group: list[tuple[str, Any]], tmp_name: str) -> bool:
    """Write the values of ``group`` (keys all in the key directory ``head``) as the files of
    a new directory: written into a temporary directory beside it, which is then renamed
    into place -- one rename for all of them, atomic as the rename of each file would be.
    Returns False, having written nothing, when the directory exists already (or this
    platform or ``fsync`` asks for one file at a time)."""
    if os.sep != "/" or store.fsync or not store.atomic:
        return False
    directory = store._file(head)
    if directory in store._dirs or os.path.lexists(directory):
        return False
    store._check_dir(group[0][0])
    parent = directory.rpartition(os.sep)[0]
    if parent not in store._dirs:
        store._make_dir(parent, group[0][0])
    tmp = parent + os.sep + tmp_name
    try:
        os.mkdir(tmp)
    except FileNotFoundError:  # a concurrent delete removed the (then empty) parent
        store._dirs.discard(parent)
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
            move_values(tmp, directory, group)
        else:
            try:
                os.rename(tmp, directory)
            except OSError:  # made meanwhile, and not empty
                move_values(tmp, directory, group)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    store._dirs.add(directory)
    return True


def move_values(tmp: str, directory: str, group: list[tuple[str, Any]]) -> None:
    """Rename the files of the temporary directory ``tmp`` into ``directory`` one by one."""
    for key, _ in group:
        name = key.rpartition("/")[2]
        os.replace(tmp + os.sep + name, directory + os.sep + name)
    os.rmdir(tmp)
