"""Versions and conditional writes of a :class:`~zarrkit.storage.local.DirectoryStore`.

A value's version is its file as one ``fstat`` shows it: device, inode, size, modification and
status-change times.  Every write of the store makes a new file renamed over the old one (or,
``atomic=False``, rewrites it in place: its size or times change), so a version names one
write.

A conditional write writes the new value into a temporary file beside the key's, then, holding
an exclusive ``flock`` on the key's directory, compares the key's file with the expected
version and renames the temporary file over it only when they agree.  Every conditional writer
on the machine -- any thread, any process -- takes the same lock (the kernel's: released when
its holder dies, so a killed writer blocks nobody), and holds it for a ``stat`` and a
``rename``.  Before the rename the new file's modification time is set past the replaced one's,
so a version never comes back even where the file system hands out an inode number again.

What this does not cover: plain writes (whole chunks, written without a version) take no lock,
so one landing between the comparison and the rename of a conditional write of the *same* key
is replaced by it; and the lock is the machine's, so processes on several machines sharing one
network file system are not excluded from each other (NFS locks are advisory and not
everywhere).  The consistency page of the guide says so.
"""

from __future__ import annotations

import os
import stat
import time
from typing import Any, Self

from ..errors import StoreError, VersionConflictError
from . import fileio, local_tree
from .base import ABSENT, Version, oversized

#: the store this module serves (local.py, which imports this module: not imported back)
DirectoryStore = Any

try:
    import fcntl
except ImportError:  # not a POSIX system: the store declares no conditional writes
    fcntl = None  # type: ignore[assignment]

#: whether this system can lock a directory (``flock``): conditional writes need it
AVAILABLE = fcntl is not None and os.sep == "/"

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL


def file_version(st: os.stat_result) -> Version:
    """The version of a value whose file ``st`` describes."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _version_at(fn: str) -> Any:
    try:
        st = os.stat(fn)
    except (FileNotFoundError, NotADirectoryError):
        return ABSENT
    if stat.S_ISDIR(st.st_mode):
        return ABSENT
    return file_version(st)


def get_versioned(store: DirectoryStore, key: str, limit: int | None = None) -> tuple[bytes | None, Version]:
    """The value of ``key`` and its version, both from one open file."""
    fd = store._open_value(key)
    if fd is None:
        return None, ABSENT
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            if stat.S_ISDIR(st.st_mode):
                return None, ABSENT
            raise local_tree.not_regular(store, key, st.st_mode)
        if limit is not None and st.st_size > limit:
            raise oversized(key, st.st_size, limit)
        return fileio.read_range(fd, 0, st.st_size), file_version(st)
    finally:
        os.close(fd)


class _DirectoryLock:
    """An exclusive ``flock`` of a directory, for as long as the ``with`` block runs."""

    def __init__(self, directory: str):
        self.fd = os.open(directory, _DIR_FLAGS)

    def __enter__(self) -> Self:
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(self.fd)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)  # (closing the only descriptor of the lock releases it)


def _conflict(key: str, current: Any, version: Any) -> VersionConflictError:
    if version is ABSENT:
        return VersionConflictError("a value was created by another writer", key)
    if current is ABSENT:
        return VersionConflictError("the value was deleted by another writer", key)
    return VersionConflictError("the value was replaced by another writer", key)


def set_if(store: DirectoryStore, key: str, value: bytes | memoryview, version: Version) -> Version:
    """Store ``value`` at ``key`` while its file is ``version`` (see the module's text)."""
    fn = store._file(key)
    directory = os.path.dirname(fn)
    store._check_dir(key)
    view = memoryview(value)
    for attempt in range(3):
        if attempt or directory not in store._dirs:
            store._make_dir(directory, key)
        tmp = directory + os.sep + fileio.temp_name()
        try:
            fd = os.open(tmp, _CREATE_FLAGS, 0o666)
        except FileNotFoundError:  # a concurrent delete removed the (then empty) directory
            store._dirs.discard(directory)
            if attempt == 2:
                raise
            continue
        renamed = False
        try:
            fileio.write_all(fd, [view])
            if store.fsync:
                os.fsync(fd)
            with _DirectoryLock(directory):
                current = _version_at(fn)
                if current != version:
                    raise _conflict(key, current, version)
                if current is ABSENT and os.path.isdir(fn):  # (a directory of keys: no value)
                    raise StoreError(f"cannot write key {key!r} in {store.path!r}: it is a directory")
                if current is not ABSENT:
                    # past the replaced file's time: no version is ever given twice
                    ns = max(time.time_ns(), current[3] + 1)
                    os.utime(fd, ns=(ns, ns))
                os.replace(tmp, fn)
                renamed = True
                new = file_version(os.fstat(fd))
        finally:
            os.close(fd)
            if not renamed:
                try:
                    os.remove(tmp)
                except OSError:
                    pass
        if store.fsync:
            fileio.fsync_dir(directory)
        return new
    raise AssertionError("unreachable")  # pragma: no cover


def delete_if(store: DirectoryStore, key: str, version: Version) -> None:
    """Remove ``key`` while its file is ``version``."""
    fn = store._file(key)
    directory = os.path.dirname(fn)
    store._check_dir(key)
    try:
        lock = _DirectoryLock(directory)
    except (FileNotFoundError, NotADirectoryError):
        if version is not ABSENT:
            raise _conflict(key, ABSENT, version) from None
        return
    with lock:
        current = _version_at(fn)
        if current != version:
            raise _conflict(key, current, version)
        if current is ABSENT:
            return
        os.remove(fn)
    store._prune_dirs(directory)


class VersionedFiles:
    """The versions and conditional writes of a directory store (a base of
    :class:`~zarrkit.storage.local.DirectoryStore`)."""

    supports_conditional_writes: bool = AVAILABLE

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # a subclass reading or writing its own way keeps values where these cannot see them
        names = ("_get", "_set", "_delete", "get", "set")
        if VersionedFiles not in cls.__bases__ and "supports_conditional_writes" not in cls.__dict__ \
                and any(n in cls.__dict__ for n in names):
            cls.supports_conditional_writes = False

    def _get_versioned(self, key: str, limit: int | None) -> tuple[bytes | None, Version]:
        return get_versioned(self, key, limit)  # type: ignore[arg-type]

    def _set_if(self, key: str, value: bytes | memoryview, version: Version) -> Version:
        return set_if(self, key, value, version)  # type: ignore[arg-type]

    def _delete_if(self, key: str, version: Version) -> None:
        delete_if(self, key, version)  # type: ignore[arg-type]
