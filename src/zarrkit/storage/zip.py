"""A store inside a single Zip file."""

from __future__ import annotations

import contextlib
import lzma
import os
import stat
import struct
import tempfile
import threading
import time
import warnings
import zipfile
import zlib
from collections.abc import Callable, Hashable, Iterator
from typing import Any, Literal, cast

from .._warnings import warn
from ..errors import NodeExistsError, ReadOnlyError, StoreError
from . import cancel
from .base import ByteRange, Store, oversized, validate_key, validate_prefix
from .keys import is_valid_key
from .zip_members import LOCAL_HEADER, PIECE, read_member

try:
    import fcntl
except ImportError:  # Windows: orphaned temporary files are left alone (they are harmless)
    fcntl = None  # type: ignore[assignment]

__all__ = ["ZipStore"]

#: What opening a damaged zip file raises inside :mod:`zipfile`.
_ARCHIVE_ERRORS = (zipfile.BadZipFile, EOFError, struct.error, OverflowError, MemoryError)
#: Names of the new archive an append writes beside the zip file: ``.<name>`` + this + random.
#: A leading dot and no ``.zip`` ending: nothing takes one for a zip file to open.
APPEND_MARKER = ".zarrkit-append-"
_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA)
_HAS_PREAD = hasattr(os, "pread")


def _unfinished(path: str) -> str:
    """A note for a file that is not a readable zip file but starts as one."""
    try:
        with _open_regular(path, "file") as f:
            head = f.read(4)
    except OSError:  # (StoreError included: not a regular file)
        return ""
    if head != b"PK\x03\x04":
        return ""
    return (
        " (it starts with a zip member but has no valid central directory, as a zip file "
        "whose writer was killed, or did not close or flush it, has)"
    )


def _open_regular(path: str, what: str) -> Any:
    """``path`` opened for reading, refused unless it is a regular file (a FIFO would block
    the open, a device would never end): ``O_NONBLOCK`` lets the check come first."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        _check_regular(path, os.fstat(fd).st_mode, what)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _check_regular(path: str, mode: int, what: str) -> None:
    if not stat.S_ISREG(mode):
        kind = "a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "a special file"
        raise StoreError(f"{what} {path!r} is {kind}, not a regular file: it cannot be a zip file")


def _orphan_prefix(target: str) -> tuple[str, str]:
    directory, name = os.path.split(target)
    return directory or ".", "." + name + APPEND_MARKER


def remove_orphaned_appends(path: Any) -> int:
    """Remove the new archives that appends to the zip file at ``path`` left when their
    writer died before closing; returns how many.  A writer holds a lock on its file while it
    lives, so only dead writers' files are removed (where ``fcntl`` is missing: none).

    Parameters
    ----------
    path : str or os.PathLike
        The zip file.
    """
    if fcntl is None:
        return 0
    directory, prefix = _orphan_prefix(os.path.realpath(os.fsdecode(path)))
    try:
        names = [n for n in os.listdir(directory) if n.startswith(prefix)]
    except OSError:
        return 0
    removed = 0
    for name in names:
        fn = os.path.join(directory, name)
        try:
            f = _open_regular(fn, "file")
        except (OSError, StoreError):
            continue
        with f:
            try:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # its writer is alive
            with contextlib.suppress(OSError):
                os.remove(fn)
                removed += 1
    return removed


class ZipStore(Store):
    """Keys as members of a Zip file.

    A zip file is a list of members followed by a central directory (the list of members).
    Modes ``'w'`` and ``'x'`` write a new file front to back and the central directory at
    :meth:`close` (or :meth:`flush`); a writer killed before that leaves a file that is
    refused with a :class:`~zarrkit.errors.StoreError` naming it.  Mode ``'a'`` changes a zip
    file without ever making it unreadable: the first change writes a **new archive beside
    it** (``.<name>.zarrkit-append-*`` in the same directory: the members of the old one
    copied byte for byte, not recompressed, then the new ones), which :meth:`close` (or
    :meth:`flush`) completes and renames over the zip file.  Killed at any moment, an append
    leaves the old zip file, bit for bit, or the new one, complete; the new archive a killed
    append leaves is never opened as the zip file, and is removed the next time the zip file
    is opened for writing.  One writer at a time: the last to close wins.

    * **Rewriting and deleting** drop the older member from the central directory, so every
      name is listed once (duplicate names make a zip file ambiguous).  Its bytes stay in the
      file, unlisted: rewriting metadata now and then is harmless, rewriting chunks over and
      over makes the file grow (a ``UserWarning`` says so); copying the data into a new zip
      file drops them.
    * Reading a member never inflates more than the size its header declares: a member that
      inflates further, or ends short, is a :class:`~zarrkit.errors.StoreError` naming it, as
      are a damaged or encrypted member and one compressed with an unsupported method.

    Other errors name the zip file too: a file that is not a zip archive (or a truncated one),
    or not a regular file, raises :class:`~zarrkit.errors.StoreError`, both on opening and
    -- for mode ``'a'`` -- instead of adding a second archive to the file; writes in mode
    ``'r'`` raise :class:`~zarrkit.errors.ReadOnlyError`; any use after :meth:`close` raises
    :class:`~zarrkit.errors.StoreError`.

    Byte-range reads (``byte_range``, used by sharded arrays) read only the requested bytes of
    a stored (uncompressed) member; in a compressed member they decompress up to the range.

    Parameters
    ----------
    path : str or os.PathLike
        The zip file.
    compression : int, default ``zipfile.ZIP_STORED``
        Compression of new members (``zipfile.ZIP_DEFLATED``, ...); chunks are usually
        compressed already.
    allowZip64 : bool, default True
        Allow the ZIP64 extensions (files over 4 GiB, more than 65535 members); ``False``
        makes a write or :meth:`close` that would need them raise
        :class:`~zarrkit.errors.StoreError`.
    mode : {'a', 'r', 'w', 'x'}, default 'a'
        ``'r'``: read an existing file (a read-only store); ``'w'``: a new file, replacing any
        existing one; ``'x'``: a new file, :class:`~zarrkit.errors.NodeExistsError` (a
        ``FileExistsError``) if it exists; ``'a'``: change an existing zip file, or create it.
    dimension_separator : {'.', '/'}, optional
        Separator used by arrays *created* in this store when none is given.
    read_only : bool, optional
        zarr-python 3's spelling: True is ``mode='r'``.

    Notes
    -----
    Call :meth:`close` after writing (or use the store as a context manager): until then the
    changes are not in the zip file (a store dropped open is closed when collected, as
    zipfile closes a ZipFile).  In mode ``'a'`` the first change copies the zip file (in the
    kernel, sharing blocks where the file system can): changes to a large zip file are best
    made together.  Opening reads the whole central directory, in time and memory in
    proportion to its size (about 10 µs and 600 bytes per member; what it declares is not
    trusted).  A store open in mode ``'r'`` can be pickled (the copy reopens the file); a
    writable one cannot.

    Examples
    --------
    >>> import os, tempfile, zarrkit
    >>> path = os.path.join(tempfile.mkdtemp(), 'example.zip')
    >>> store = zarrkit.ZipStore(path, mode='w')
    >>> z = zarrkit.zeros((100, 100), chunks=(10, 10), dtype='i4', store=store, zarr_format=2)
    >>> z[:] = 42
    >>> store.close()
    >>> with zarrkit.ZipStore(path, mode='r') as store:
    ...     int(zarrkit.open_array(store)[5, 5])
    42
    """

    supports_partial_reads = True

    def __init__(
        self,
        path: Any,
        compression: int = zipfile.ZIP_STORED,
        allowZip64: bool = True,
        mode: Literal["a", "r", "w", "x"] = "a",
        dimension_separator: str | None = None,
        *,
        read_only: bool | None = None,
    ) -> None:
        if read_only:  # zarr-python 3's spelling of mode='r'
            mode = "r"
        if self._check_dimension_separator(dimension_separator) is not None:
            self.dimension_separator = dimension_separator
        if mode not in ("a", "r", "w", "x"):
            raise ValueError(f"ZipStore mode must be 'a', 'r', 'w' or 'x', got {mode!r}")
        #: an open binary file holding the zip file (read only), instead of a path
        self._file = path if hasattr(path, "read") and hasattr(path, "seek") else None
        if self._file is not None:
            if mode not in ("a", "r"):
                raise ValueError(f"a ZipStore over an open file is read-only; mode {mode!r} needs a path")
            mode = "r"
            path = getattr(self._file, "name", "<file>")
        self.path: str = os.path.abspath(os.fsdecode(path)) if isinstance(path, (str, bytes, os.PathLike)) else str(path)
        self._given = os.fsdecode(path) if isinstance(path, (str, bytes, os.PathLike)) else str(path)
        self.compression = compression
        self.allowZip64 = allowZip64
        self.mode = mode
        self.read_only: bool = mode == "r"
        self._lock = threading.RLock()
        self._closed = True  # until the file is open
        #: the zip file as this store opened it for reading (modes 'r' and 'a'), or None
        self._fh: Any = None
        self._size = 0  # its size
        #: mode 'a' once changed: the new archive's path and file (``self._zf`` writes it)
        self._temp: tuple[str, Any] | None = None
        #: mode 'a': the zip file the new archive replaces (symbolic links followed)
        self._target = os.path.realpath(self.path) if self._file is None else self.path
        self._zf: zipfile.ZipFile | None = self._open_archive(mode)
        self._closed = False

    # -- opening --------------------------------------------------------------------------------
    def _open_archive(self, mode: str) -> zipfile.ZipFile | None:
        if self._file is not None:
            return self._read_archive(self._file, "not a valid zip file")
        path = self.path
        if mode == "r":
            try:
                self._fh = _open_regular(path, "zip file")
            except FileNotFoundError:
                raise FileNotFoundError(f"zip file {path!r} does not exist") from None
            return self._read_archive(self._fh, "not a valid zip file")
        if mode == "a":
            return self._open_append()
        if mode == "w" and os.path.exists(path):
            _check_regular(path, os.stat(path).st_mode, "zip file")  # replaced only if a file
        remove_orphaned_appends(path)
        try:
            # 'r' and 'a' returned above: mode is 'w' or 'x' here
            return zipfile.ZipFile(path, mode=cast(Literal["w", "x"], mode), compression=self.compression,
                                   allowZip64=self.allowZip64)
        except FileNotFoundError:
            raise FileNotFoundError(f"cannot create zip file {path!r}: its directory does not exist") from None
        except FileExistsError:
            raise NodeExistsError(
                f"zip file {path!r} already exists; mode='x' only creates a new file "
                "(mode='a' adds to it, mode='w' replaces it)",
                path=path,
            ) from None
        except (NotImplementedError, RuntimeError, ValueError) as exc:
            raise StoreError(f"cannot open zip file {path!r}: {exc}") from None  # a bad compression

    def _open_append(self) -> zipfile.ZipFile | None:
        """Mode 'a': the existing zip file open for reading (None: there is none yet, or an
        empty file); nothing is written before the first change."""
        if self.compression not in _METHODS:  # refused now, not at the first write
            raise StoreError(
                f"cannot open zip file {self.path!r}: compression method {self.compression!r} "
                "is not supported"
            )
        target = self._target
        if not os.path.isdir(os.path.dirname(target) or "."):
            raise FileNotFoundError(f"cannot create zip file {self.path!r}: its directory does not exist")
        if not os.path.lexists(target):
            remove_orphaned_appends(target)
            return None
        try:
            self._fh = _open_regular(target, "zip file")
        except FileNotFoundError:  # a dangling symbolic link
            raise FileNotFoundError(f"cannot create zip file {self.path!r}: it is a broken link") from None
        if not os.access(target, os.W_OK):
            self._fh.close()
            raise ReadOnlyError(f"zip file {self.path!r} is not writable; open it with mode='r'")
        remove_orphaned_appends(target)
        if os.fstat(self._fh.fileno()).st_size == 0:
            return None
        # a file that is not a whole zip file is refused (appending would hide its members
        # from readers; an end record alone is not enough: a killed writer may leave a stale
        # one in the last bytes, before a central directory that is gone)
        return self._read_archive(self._fh, "not a zip file", "; mode='a' adds only to a zip file")

    def _read_archive(self, f: Any, what: str, hint: str = "") -> zipfile.ZipFile:
        try:
            f.seek(0, os.SEEK_END)
            self._size = f.tell()
            f.seek(0)
            return zipfile.ZipFile(f, mode="r")
        except _ARCHIVE_ERRORS as exc:
            self._release()
            raise StoreError(f"{self.path!r} is {what} ({exc}){_unfinished(self.path)}{hint}") from None
        except (NotImplementedError, RuntimeError, ValueError, OSError) as exc:
            self._release()
            raise StoreError(f"cannot read zip file {self.path!r}: {exc}") from None

    def _release(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    @property
    def _is_open(self) -> bool:
        """Whether the zip file is open (zarr-python 3's flag): from construction to :meth:`close`."""
        return not self._closed

    @_is_open.setter
    def _is_open(self, value: bool) -> None:
        if value and self._closed:
            self._reopen()

    def _reopen(self) -> None:
        """Open the zip file again after :meth:`close` (zarr-python 3 reopens a closed store
        on use): in mode ``'a'`` when it was written (``'w'``, ``'x'``), so that what was
        written stays; in its own mode otherwise."""
        with self._lock:
            if not self._closed:
                return
            if self.mode in ("w", "x"):
                self.mode = "a"
            self._fh, self._temp, self._size = None, None, 0
            self._zf = self._open_archive(self.mode)
            self._closed = False

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(f"ZipStore {self.path!r} is closed")

    # -- reading --------------------------------------------------------------------------------
    def _reader(self) -> tuple[Callable[[int, int], bytes], int]:
        """``(pread(n, offset), size)`` of the archive being read now (the caller holds the
        lock, except in mode 'r', whose file never changes)."""
        if self._file is not None or (self._temp is None and self._fh is not None):
            f, size = (self._file or self._fh), self._size
        else:
            f = self._zf.fp  # type: ignore[union-attr]  # being written: flushed to be read back
            assert f is not None  # (an archive being written keeps its file open)
            f.flush()
            size = os.fstat(f.fileno()).st_size
        if self._file is None and _HAS_PREAD:
            fd = f.fileno()
            return (lambda n, offset: os.pread(fd, n, offset)), size
        lock = self._lock

        def read_at(n: int, offset: int) -> bytes:
            with lock:
                f.seek(offset)
                data: bytes = f.read(n)
                return data

        return read_at, size

    def _info(self, key: str) -> zipfile.ZipInfo | None:
        zf = self._zf
        return None if zf is None else zf.NameToInfo.get(key)

    def _get(self, key: str, byte_range: ByteRange | None) -> bytes | None:
        return self._locked_read(key, byte_range, None)

    def get_upto(self, key: str, limit: int) -> bytes | None:
        """The whole member at ``key``, which may hold at most ``limit`` bytes (a chunk): one
        whose header declares more is refused before anything is read, with
        :class:`~zarrkit.errors.ChunkDecodeError` naming it; one that inflates past what its
        header declares is a :class:`~zarrkit.errors.StoreError` (see :class:`ZipStore`).

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
        return self._locked_read(key.lower() if self.normalize_keys else key, None, limit)

    def _locked_read(self, key: str, byte_range: ByteRange | None, limit: int | None) -> bytes | None:
        if self.read_only:  # nothing changes the file: members are read in parallel
            self._check_open()
            return self._read(key, byte_range, limit)
        with self._lock:
            self._check_open()
            return self._read(key, byte_range, limit)

    def _read(self, key: str, byte_range: ByteRange | None, limit: int | None) -> bytes | None:
        info = self._info(key)
        if info is None:
            return None
        size = info.file_size
        if limit is not None and size > limit:
            raise oversized(key, size, limit)
        if byte_range is None:
            start, stop = 0, size
        elif byte_range.offset < 0:
            start, stop = max(size + byte_range.offset, 0), size
        else:
            start = min(byte_range.offset, size)
            stop = size if byte_range.length is None else min(start + byte_range.length, size)
        if byte_range is not None and start >= stop:
            return b""
        try:
            pread, archive_size = self._reader()
            return read_member(pread, archive_size, info, start, stop, lambda reason: StoreError(
                f"ZipStore {self.path!r}: cannot read member {key!r}: {reason}"))
        except (OSError, ValueError, EOFError, zlib.error, lzma.LZMAError, struct.error) as exc:
            if isinstance(exc, StoreError):
                raise
            if self._closed:
                raise StoreError(f"ZipStore {self.path!r} is closed") from None
            raise StoreError(f"ZipStore {self.path!r}: cannot read member {key!r}: {exc}") from exc

    # -- writing --------------------------------------------------------------------------------
    def _writer(self) -> zipfile.ZipFile:
        """The ZipFile new members go into: in mode 'a', the new archive, begun (members of the
        old one copied into it) at the first change."""
        if self.mode != "a" or self._temp is not None:
            return self._zf  # type: ignore[return-value]
        return self._begin(copy=True)

    def _begin(self, copy: bool) -> zipfile.ZipFile:
        fd, tmp = self._new_archive_file()
        f = os.fdopen(fd, "w+b")
        try:
            base = self._zf if copy else None
            end = 0
            if base is not None and self._fh is not None:
                end = self._copy_members(base, self._fh.fileno(), fd)
            os.lseek(fd, end, os.SEEK_SET)
            zf = zipfile.ZipFile(f, mode="w", compression=self.compression, allowZip64=self.allowZip64)
            if base is not None:
                zf.comment = base.comment
                for info in base.filelist:
                    if base.NameToInfo.get(info.filename) is info:  # the newest of a name
                        zf.filelist.append(info)
                        zf.NameToInfo[info.filename] = info
        except BaseException:
            f.close()
            with contextlib.suppress(OSError):
                os.remove(tmp)
            raise
        if self._temp is not None:
            self._discard()
        self._temp = (tmp, f)
        self._zf = zf
        return zf

    def _new_archive_file(self) -> tuple[int, str]:
        """A new, empty, locked file beside the zip file: ``(fd, path)``."""
        directory, prefix = _orphan_prefix(self._target)
        for _ in range(3):
            try:
                fd, tmp = tempfile.mkstemp(prefix=prefix, dir=directory)
            except OSError as exc:
                raise StoreError(
                    f"ZipStore {self.path!r}: cannot write the new archive beside it in "
                    f"{directory!r} ({exc}); the zip file is unchanged"
                ) from None
            if fcntl is None:
                return fd, tmp
            # held until the archive is renamed or removed, so that no other writer takes a
            # live file for an orphan; one that did so before the lock was taken removed it
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                if os.stat(tmp).st_ino == os.fstat(fd).st_ino:
                    return fd, tmp
            except FileNotFoundError:
                pass
            os.close(fd)
        raise StoreError(f"ZipStore {self.path!r}: the new archive beside it keeps disappearing")

    def _copy_members(self, base: zipfile.ZipFile, src: int, dst: int) -> int:
        """Copy the old archive up to its central directory (every member, byte for byte) into
        ``dst``; returns where the copy ends.  A member lying past that point (an unusual
        layout) has the whole file copied."""
        end = min(base.start_dir, self._size)
        for info in base.filelist:
            reach = LOCAL_HEADER.size + len(info.orig_filename.encode()) + len(info.extra)
            if info.header_offset + reach + info.compress_size > end:
                end = self._size
                break
        done = 0
        fast = hasattr(os, "copy_file_range")
        while done < end:
            n = 0
            if fast:
                try:  # in the kernel, and shared blocks where the file system can
                    n = os.copy_file_range(src, dst, end - done, done, done)
                except OSError:
                    fast = False
            if not fast:
                os.lseek(src, done, os.SEEK_SET)
                os.lseek(dst, done, os.SEEK_SET)
                data = os.read(src, min(PIECE * 8, end - done))
                n = os.write(dst, data) if data else 0
            if n <= 0:
                raise StoreError(f"ZipStore {self.path!r}: the zip file ended while being copied")
            done += n
        return end

    def _set(self, key: str, value: bytes | memoryview) -> None:
        with self._lock:
            self._check_open()
            zf = self._writer()
            if key in zf.NameToInfo:
                warn(
                    f"ZipStore {self.path!r}: key {key!r} is written again; the older member "
                    "is no longer listed, but its bytes stay in the file",
                    UserWarning,
                )
            info = zipfile.ZipInfo(filename=key, date_time=time.localtime(time.time())[:6])
            info.compress_type = self.compression
            info.external_attr = 0o644 << 16
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)  # zipfile's own duplicate warning
                    zf.writestr(info, bytes(value))
            except zipfile.LargeZipFile as exc:
                raise StoreError(
                    f"ZipStore {self.path!r}: writing key {key!r} needs the ZIP64 extensions, "
                    f"which allowZip64=False forbids ({exc})"
                ) from exc

    @property
    def zf(self) -> zipfile.ZipFile:
        """The open :class:`zipfile.ZipFile` (zarr-python 2's attribute)."""
        with self._lock:
            self._check_open()
            return self._zf if self._zf is not None else self._writer()

    def _delete(self, key: str) -> None:
        with self._lock:
            self._check_open()
            if self._info(key) is not None:
                del self._writer().NameToInfo[key]

    def delete_prefix(self, prefix: str) -> None:
        self._check_writable()
        validate_prefix(prefix)
        with self._lock:
            self._check_open()
            keys = list(self.list_prefix(prefix))
            if keys:
                names = self._writer().NameToInfo
                for key in keys:
                    del names[key]

    def list_prefix(self, prefix: str) -> Iterator[str]:
        # members no key can name ('/x', './x', '../x', 'a//b') are not listed: a zip file
        # written elsewhere may hold them, and they must not hide (or loop over) the others
        with self._lock:
            self._check_open()
            zf = self._zf
            names = [] if zf is None else [n for n in zf.NameToInfo if not n.endswith("/") and is_valid_key(n)]
        return iter(names) if not prefix else (n for n in names if n.startswith(prefix))

    def getsize(self, key: str) -> int:  # type: ignore[override]  # Store wraps it to take None too
        validate_key(key)
        with self._lock:
            self._check_open()
            info = self._info(key)
            return 0 if info is None else info.file_size

    def exists(self, key: str) -> bool:
        validate_key(key)
        with self._lock:
            self._check_open()
            return self._info(key) is not None

    def _check_writable(self) -> None:
        if self.read_only:
            raise ReadOnlyError(f"ZipStore {self.path!r} is open read-only (mode='r')")
        cancel.check()

    # -- finishing ------------------------------------------------------------------------------
    def _finish_zipfile(self, zf: zipfile.ZipFile, incomplete: str) -> None:
        """Write ``zf``'s central directory: each name once, deleted ones left out."""
        names = zf.NameToInfo
        zf.filelist = [i for i in zf.filelist if names.get(i.filename) is i]
        try:
            zf.close()
        except zipfile.LargeZipFile as exc:
            raise StoreError(
                f"ZipStore {self.path!r}: the central directory needs the ZIP64 extensions, "
                f"which allowZip64=False forbids ({exc}); {incomplete}"
            ) from exc

    def _commit(self) -> None:
        """Mode 'a': complete the new archive and rename it over the zip file (the moment the
        changes appear, all together)."""
        if self._temp is None:
            return
        tmp, f = self._temp
        try:
            self._finish_zipfile(self._zf, "the zip file is unchanged")  # type: ignore[arg-type]
            f.flush()
            os.fsync(f.fileno())
            if self._fh is not None:  # the zip file's permissions carry over
                os.chmod(tmp, stat.S_IMODE(os.fstat(self._fh.fileno()).st_mode))
            else:  # a new file's, as open() gives them (mkstemp's are private)
                umask = os.umask(0)
                os.umask(umask)
                os.chmod(tmp, 0o666 & ~umask)
            os.replace(tmp, self._target)
        except BaseException:
            self._discard()
            raise
        self._temp = None
        f.close()  # (and so the lock)
        with contextlib.suppress(OSError):  # the rename, durable
            dfd = os.open(os.path.dirname(self._target) or ".", os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)

    def _discard(self) -> None:
        """Drop the new archive of mode 'a' (the zip file stays as it was)."""
        if self._temp is None:
            return
        tmp, f = self._temp
        self._temp = None
        if self._zf is not None and self._zf.fp is f:
            self._zf.fp = None  # a dropped archive gets no central directory, now or when collected
        with contextlib.suppress(OSError):
            os.remove(tmp)
        f.close()

    def flush(self) -> None:
        """Write the changes into the zip file now, keeping the store open for more writes
        (in mode 'a', each flush copies the members into a new archive once more)."""
        with self._lock:
            self._check_open()
            if self.mode == "a":
                if self._temp is not None:
                    self._commit()
                    self._release()
                    self._zf = self._open_append()
            elif self.mode != "r":
                self._finish_zipfile(self._zf, "the file is incomplete")  # type: ignore[arg-type]
                self._zf = zipfile.ZipFile(
                    self.path, mode="a", compression=self.compression, allowZip64=self.allowZip64
                )

    def clear(self) -> None:
        """Remove every key: the zip file is started anew, empty."""
        self._check_writable()
        with self._lock:
            self._check_open()
            if self.mode == "a":
                self._begin(copy=False)
                return
            self._finish_zipfile(self._zf, "the file is incomplete")  # type: ignore[arg-type]
            self._zf = zipfile.ZipFile(
                self.path, mode="w", compression=self.compression, allowZip64=self.allowZip64
            )

    def close(self) -> None:
        """Close the zip file, writing the changes into it; closing again does nothing."""
        with self._lock:
            if self._closed:
                return
            try:
                if self.mode == "a":
                    self._commit()
                elif self.mode != "r":
                    self._finish_zipfile(self._zf, "the file is incomplete")  # type: ignore[arg-type]
            finally:
                self._closed = True
                self._discard()
                if self.mode in ("r", "a") and self._zf is not None and self._zf.mode == "r":
                    self._zf.close()
                self._release()

    def __del__(self) -> None:
        # a store dropped open keeps what was written, as zipfile does for a ZipFile (arrays
        # opened by a path ending in .zip are rarely closed by hand)
        if not getattr(self, "_closed", True):
            with contextlib.suppress(Exception):
                self.close()

    def __len__(self) -> int:
        return sum(1 for _ in self.list_prefix(""))

    def with_read_only(self, read_only: bool = False) -> ZipStore:
        """Not available for zip files (as in zarr-python 3): the archive's mode is fixed when it
        is opened; open ``ZipStore(path, mode=...)`` instead.

        Parameters
        ----------
        read_only : bool, default False
            The setting asked for.

        Raises
        ------
        NotImplementedError
            Always.
        """
        raise NotImplementedError(f"with_read_only is not implemented for {type(self).__name__}")

    def location(self) -> tuple[Hashable, str]:
        """The zip file holding the values."""
        return ("zip", os.path.realpath(self.path)), ""

    def __eq__(self, other: object) -> bool:
        # zarr-python 3: the same zip file
        return type(other) is type(self) and other.path == self.path

    def __hash__(self) -> int:
        return object.__hash__(self)  # identity, as for every store

    def __repr__(self) -> str:
        return f"ZipStore({self.path!r}, mode={self.mode!r})"

    def __str__(self) -> str:
        """The store as zarr-python 3 names it in reprs: ``zip://<path as given>``."""
        return f"zip://{getattr(self, '_given', self.path)}"

    def __getstate__(self) -> dict[str, Any]:
        if self.mode != "r":
            raise TypeError(
                f"a ZipStore open for writing (mode={self.mode!r}) cannot be pickled: close it "
                "and pickle ZipStore(path, mode='r'), or pickle the path"
            )
        return {"path": self.path, "compression": self.compression,
                "allowZip64": self.allowZip64, "dimension_separator": self.dimension_separator}

    def __setstate__(self, state: dict[str, Any]) -> None:
        type(self).__init__(self, state["path"], compression=state["compression"],
                                  allowZip64=state["allowZip64"], mode="r",
                                  dimension_separator=state.get("dimension_separator"))
