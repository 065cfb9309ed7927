"""Plain system-call file I/O for the local stores: whole and ranged reads (into new bytes or
into a per-thread buffer reused from read to read), gathered writes, directory fsync, and the
one atomic write of a value to a local file (a temporary file renamed over it) with the one
temporary-name format that orphan clean-up (:mod:`zarrkit.storage.local_tree`) reads."""

from __future__ import annotations

import itertools
import os
import socket
import stat
import threading
from collections.abc import Callable

from ..errors import StoreError

__all__ = [
    "HAS_PREADV", "HOST", "TEMP_MARKER", "TRANSIENT_MAX_BYTES", "OpenFile", "check_regular_files",
    "fsync_dir", "read_range", "read_range_into", "temp_name", "temp_owner", "write_all", "write_atomic",
]

#: Values are written to a temporary file beside their destination, then renamed into place.
#: Temporary names start with this marker: listings never show them, and the ones left by
#: writers that died are removed when found.
TEMP_MARKER = ".__zarrkit_partial__"
#: this host's name as temporary names carry it (``-`` separates the fields of a name)
HOST = socket.gethostname().replace("-", "_") or "host"
_counter = itertools.count()
#: this process's id, renewed in a forked child (os.getpid is a system call per write)
_PID = [os.getpid()]
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=lambda: _PID.__setitem__(0, os.getpid()))


def temp_name() -> str:
    """A temporary name (marker, host, process, thread, counter) no other writer uses at the
    same time; :func:`temp_owner` reads the writer back from it."""
    return f"{TEMP_MARKER}{HOST}-{_PID[0]}-{threading.get_ident()}-{next(_counter)}"


def temp_owner(name: str) -> tuple[str, str]:
    """The host and process id fields of the temporary name ``name`` (strings, as written)."""
    host, _, rest = name[len(TEMP_MARKER):].partition("-")
    return host, rest.partition("-")[0]


def check_regular_files(what: str, *paths: str) -> None:
    """Refuse (``StoreError`` naming ``what``) when one of ``paths`` exists as a named pipe,
    a socket or a device: a database library opening one would block or read garbage.
    Missing paths, files, directories and links to them pass."""
    for path in paths:
        try:
            mode = os.stat(path).st_mode
        except OSError:
            continue
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            raise StoreError(f"{what}: {path!r} is not a regular file or directory")


def read_range(fd: int, offset: int, length: int) -> bytes:
    """``length`` bytes of ``fd`` from ``offset`` (fewer at the end of the file)."""
    if length <= 0:
        return b""
    data = os.pread(fd, length, offset)
    if len(data) < length:  # a short read (large files, some file systems)
        parts = [data]
        got = len(data)
        while got < length:
            more = os.pread(fd, length - got, offset + got)
            if not more:
                break
            parts.append(more)
            got += len(more)
        data = b"".join(parts)
    return data


HAS_PREADV = hasattr(os, "preadv")  # not on every platform: there, new bytes per value
#: values up to this size are read into a per-thread buffer by ``get_transient``
TRANSIENT_MAX_BYTES = 64 << 20
_transient = threading.local()


def read_range_into(fd: int, offset: int, length: int) -> memoryview:
    """:func:`read_range` into this thread's reusable buffer (grown as needed)."""
    buf = getattr(_transient, "buf", None)
    if buf is None or len(buf) < length:
        grown = min(2 * len(buf), TRANSIENT_MAX_BYTES) if buf is not None else 0
        buf = _transient.buf = bytearray(max(length, grown))
    view = memoryview(buf)[:length]
    got = 0
    while got < length:
        n = os.preadv(fd, [view[got:]], offset + got)
        if n <= 0:  # the file ended early
            return view[:got]
        got += n
    return view


#: the calls :func:`read_ahead` needs (Linux): posix_fadvise, and preadv2's RWF_NOWAIT
CAN_READ_AHEAD = HAS_PREADV and hasattr(os, "posix_fadvise") and hasattr(os, "RWF_NOWAIT")


def read_ahead(fd: int) -> bool:
    """Have the kernel read the regular file of ``fd`` into the page cache in the background
    (``POSIX_FADV_WILLNEED``), unless its last byte is there already: a file read or written
    whole before is cached, and asking then costs more than looking (about 50 µs for a cached
    4 MiB file, against a few for the look).  Nothing for another kind of file, or where the
    platform or file system lacks the calls.  Reads nothing of the value into the process (the
    look is a 1-byte read that does not wait: when it finds nothing the kernel starts reading
    the file's end, and the advice the rest).  Returns whether the file is being read ahead."""
    if not CAN_READ_AHEAD:
        return False
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_size <= 0:
        return False
    try:
        os.preadv(fd, [bytearray(1)], st.st_size - 1, os.RWF_NOWAIT)
        return False  # cached
    except BlockingIOError:  # not cached: read it ahead
        pass
    except OSError:  # the file system cannot say without reading
        return False
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_WILLNEED)
    return True


class OpenFile:
    """A regular file held open for a read of several of its ranges (a shard's index, then
    its chunks): they all come from this version of the file, even when a writer renames a
    new one over it (or removes it) meanwhile.  ``token`` is the device, inode, size and
    modification time, as ``DirectoryStore.version_token`` gives them."""

    __slots__ = ("fd", "size", "token")
    #: reads need no buffer of the whole value: tasks may each read their own range
    holds_open = True

    def __init__(self, fd: int, st: os.stat_result):
        self.fd = fd
        self.size: int = st.st_size
        self.token: tuple[int, int, int, int] = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)

    def read(self, offset: int, length: int | None = None, transient: bool = False) -> bytes | memoryview:
        """``length`` bytes from ``offset`` (a suffix for a negative offset, to the end for
        no length), into this thread's reusable buffer when ``transient``."""
        if offset < 0:
            offset = max(self.size + offset, 0)
        if length is None:
            length = self.size - offset
        if transient and 0 < length <= TRANSIENT_MAX_BYTES and HAS_PREADV:
            return read_range_into(self.fd, offset, length)
        return read_range(self.fd, offset, length)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


#: buffers handed to one writev call (the system's IOV_MAX is at least 1024 on Linux)
_IOV_MAX = 1024
_HAS_WRITEV = hasattr(os, "writev")


def write_all(fd: int, parts: list[memoryview]) -> None:
    """Write every byte of ``parts``, in order, to ``fd``."""
    if len(parts) == 1:  # the usual case: one value, written by one call
        n = os.write(fd, parts[0])
        if n == parts[0].nbytes:
            return
        parts = [parts[0][n:]]
    parts = [p for p in parts if p.nbytes]
    i = 0
    while i < len(parts):
        if i == len(parts) - 1 or not _HAS_WRITEV:
            n = os.write(fd, parts[i])
        else:
            n = os.writev(fd, parts[i : i + _IOV_MAX])
        while i < len(parts) and n >= parts[i].nbytes:  # skip what was written
            n -= parts[i].nbytes
            i += 1
        if n:  # a short write inside a part: the rest of it goes next
            parts[i] = parts[i][n:]


_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)


def write_atomic(
    path: str,
    directory: str,
    parts: list[memoryview],
    make_dir: Callable[[int], None],
    *,
    fsync: bool = False,
    tmp_name: str | None = None,
) -> None:
    """Write the concatenation of ``parts`` to the file ``path`` of ``directory`` atomically:
    into a new temporary file beside it (named by :func:`temp_name` unless ``tmp_name``), then
    renamed over it, so a reader sees the old value or the new one and a writer killed on the
    way leaves the old value and a temporary file that orphan clean-up removes.

    ``make_dir(attempt)`` is called before each of at most three attempts to make sure
    ``directory`` exists (``attempt`` > 0: a concurrent delete removed it since).  With
    ``fsync``, the value and then its directory entry reach the device before this returns.
    On failure the temporary file is removed and the error raised."""
    for attempt in range(3):
        make_dir(attempt)
        tmp = directory + os.sep + (tmp_name or temp_name())
        try:
            fd = os.open(tmp, _CREATE_FLAGS, 0o666)
        except FileNotFoundError:  # a concurrent delete removed the (then empty) directory
            if attempt == 2:
                raise
            continue
        try:
            try:
                write_all(fd, parts)
                if fsync:
                    os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.remove(tmp)
            except OSError:
                pass
            raise
        if fsync:
            fsync_dir(directory)
        return


def fsync_dir(directory: str) -> None:
    try:
        # only ever a directory: a named pipe swapped in would block an open without these
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
