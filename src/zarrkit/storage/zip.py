"""A store inside a single Zip file."""

from __future__ import annotations

import os
import struct
import threading
import time
import warnings
import zipfile
import zlib
from collections.abc import Iterator
from typing import Any, Literal

from ..errors import NodeExistsError, ReadOnlyError, StoreError, StoreOperationNotSupported
from .base import ByteRange, Store, validate_key, validate_prefix
from .keys import is_valid_key

__all__ = ["ZipStore"]

#: What reading a damaged member raises inside :mod:`zipfile` (bad CRC or header, truncated or
#: corrupt deflate data, an unsupported compression method or encryption).
_MEMBER_ERRORS = (
    zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, struct.error
)
#: What opening a damaged zip file raises inside :mod:`zipfile`.
_ARCHIVE_ERRORS = (zipfile.BadZipFile, EOFError, struct.error)


def _unfinished(path: str) -> str:
    """A note for a file that is not a readable zip file but starts as one."""
    try:
        with open(path, "rb") as f:
            head = f.read(4)
    except OSError:
        return ""
    if head != b"PK\x03\x04":
        return ""
    return (
        " (it starts with a zip member but has no valid central directory, as a zip file "
        "whose writer was killed, or did not close or flush it, has)"
    )


class ZipStore(Store):
    """Keys as members of a Zip file.

    A zip file is written front to back: members are appended and the central directory (the
    list of members) is written by :meth:`close` (or :meth:`flush`).  A member cannot be
    changed or removed in place, so:

    * **Write each key once** (whole arrays, whole shards: copying into a zip file does this).
      Writing a key again *appends* a newer member, with a ``UserWarning``: reads, listings
      and :meth:`getsize` see the newest member (zarr-python reads the newest too), and the
      file keeps the bytes of the older one.  Rewriting metadata now and then (attributes) is
      harmless; rewriting chunks over and over makes the file grow.
    * **Deleting is not supported** (``supports_deletes`` is ``False``): deleting a key that is
      stored -- ``delete``, ``del store[key]``, ``pop``, ``clear``, ``delete_prefix`` or
      ``rmdir`` over stored keys -- raises :class:`~zarrkit.errors.StoreError` naming the key
      and the zip file, and leaves the file unchanged.  Deleting a missing key is not an error,
      as in every store.  To remove data, copy what should remain into a new zip file.

    Other errors name the zip file too: a file that is not a zip archive (or a truncated one)
    raises :class:`~zarrkit.errors.StoreError`, both on opening and -- for mode ``'a'`` --
    instead of appending a second archive to the file; a damaged member raises
    :class:`~zarrkit.errors.StoreError` naming the key when it is read; writes in mode ``'r'``
    raise :class:`~zarrkit.errors.ReadOnlyError`; any use after :meth:`close` raises
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
        ``FileExistsError``) if it exists; ``'a'``: add members to an existing zip file, or
        create it.
    dimension_separator : {'.', '/'}, optional
        Separator used by arrays *created* in this store when none is given.
    read_only : bool, optional
        zarr-python 3's spelling: True is ``mode='r'``.

    Notes
    -----
    Call :meth:`close` after writing (or use the store as a context manager), or the central
    directory is not written and the file cannot be read.  A store open in mode ``'r'`` can be
    pickled (the copy reopens the file); a writable one cannot.

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
    supports_deletes = False

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
        self.path = os.path.abspath(os.fsdecode(path)) if isinstance(path, (str, bytes, os.PathLike)) else str(path)
        self._given = os.fsdecode(path) if isinstance(path, (str, bytes, os.PathLike)) else str(path)
        self.compression = compression
        self.allowZip64 = allowZip64
        self.mode = mode
        self.read_only = mode == "r"
        self._lock = threading.RLock()
        self._closed = True  # until the file is open
        self._zf = self._open(mode)
        self._closed = False

    def _open(self, mode: Literal["a", "r", "w", "x"]) -> zipfile.ZipFile:
        if self._file is not None:
            return zipfile.ZipFile(self._file, mode="r")
        path = self.path
        if mode == "a" and os.path.isfile(path) and os.path.getsize(path) > 0:
            # zipfile would append a new archive after whatever the file holds (a truncated
            # zip file's members would be lost to readers): the file must read as a whole zip
            # file first (an end record alone is not enough: a killed writer may leave a stale
            # one in the last bytes, before a central directory that is gone)
            try:
                zipfile.ZipFile(path, mode="r").close()
            except _ARCHIVE_ERRORS as exc:
                raise StoreError(
                    f"{path!r} is not a zip file ({exc}){_unfinished(path) or ''}; mode='a' adds "
                    "only to a zip file"
                ) from None
        try:
            return zipfile.ZipFile(
                path, mode=mode, compression=self.compression, allowZip64=self.allowZip64
            )
        except FileNotFoundError:
            if mode == "r":
                raise FileNotFoundError(f"zip file {path!r} does not exist") from None
            raise FileNotFoundError(
                f"cannot create zip file {path!r}: its directory does not exist"
            ) from None
        except FileExistsError:
            raise NodeExistsError(
                f"zip file {path!r} already exists; mode='x' only creates a new file "
                "(mode='a' adds to it, mode='w' replaces it)",
                path=path,
            ) from None
        except _ARCHIVE_ERRORS as exc:
            raise StoreError(
                f"{path!r} is not a valid zip file: {exc}{_unfinished(path)}"
            ) from None
        except (NotImplementedError, RuntimeError, ValueError) as exc:
            # e.g. an unsupported compression method
            raise StoreError(f"cannot open zip file {path!r}: {exc}") from None

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(f"ZipStore {self.path!r} is closed")

    def _get(self, key: str, byte_range: ByteRange | None) -> bytes | None:
        with self._lock:
            self._check_open()
            try:
                info = self._zf.getinfo(key)
            except KeyError:
                return None
            size = info.file_size
            if byte_range is None:
                start, stop = 0, size
            elif byte_range.offset < 0:
                start, stop = max(size + byte_range.offset, 0), size
            else:
                start = min(byte_range.offset, size)
                stop = size if byte_range.length is None else min(start + byte_range.length, size)
            if byte_range is not None and start >= stop:
                # nothing to read (and zipfile's seek to the end of a stored member, then a
                # read, fails when the member ends the file, as before close or flush)
                return b""
            try:
                with self._zf.open(info) as f:
                    if byte_range is None:
                        return f.read()
                    if start:
                        f.seek(start)
                    value = f.read(stop - start)
            except _MEMBER_ERRORS as exc:
                raise StoreError(
                    f"ZipStore {self.path!r}: cannot read member {key!r}: {exc}"
                ) from exc
            if len(value) != stop - start:
                raise StoreError(
                    f"ZipStore {self.path!r}: member {key!r} is truncated: expected "
                    f"{stop - start} bytes from offset {start}, got {len(value)}"
                )
            return value

    def _set(self, key: str, value: bytes | memoryview) -> None:
        with self._lock:
            self._check_open()
            if key in self._zf.NameToInfo:
                warnings.warn(
                    f"ZipStore {self.path!r}: key {key!r} is written again; the zip file keeps "
                    "both copies and reads return the newest",
                    UserWarning,
                    stacklevel=4,
                )
            info = zipfile.ZipInfo(filename=key, date_time=time.localtime(time.time())[:6])
            info.compress_type = self.compression
            info.external_attr = 0o644 << 16
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)  # zipfile's own duplicate warning
                    self._zf.writestr(info, bytes(value))
            except zipfile.LargeZipFile as exc:
                raise StoreError(
                    f"ZipStore {self.path!r}: writing key {key!r} needs the ZIP64 extensions, "
                    f"which allowZip64=False forbids ({exc})"
                ) from exc

    @property
    def zf(self) -> zipfile.ZipFile:
        """The open :class:`zipfile.ZipFile` (zarr-python 2's attribute)."""
        return self._zf

    def _refuse_delete(self, keys: list[str]) -> None:
        shown = ", ".join(repr(k) for k in keys[:3]) + (", ..." if len(keys) > 3 else "")
        raise StoreOperationNotSupported(
            f"ZipStore {self.path!r} cannot delete key{'s' if len(keys) > 1 else ''} {shown}: "
            "a zip file's members cannot be removed in place (copy what should remain into a "
            "new zip file)"
        )

    def _delete(self, key: str) -> None:
        with self._lock:
            self._check_open()
            if key in self._zf.NameToInfo:
                self._refuse_delete([key])

    def delete_prefix(self, prefix: str) -> None:
        self._check_writable()
        validate_prefix(prefix)
        keys = list(self.list_prefix(prefix))
        if keys:
            self._refuse_delete(keys)

    def list_prefix(self, prefix: str) -> Iterator[str]:
        # members no key can name ('/x', './x', '../x', 'a//b') are not listed: a zip file
        # written elsewhere may hold them, and they must not hide (or loop over) the others
        with self._lock:
            self._check_open()
            names = list(dict.fromkeys(n for n in self._zf.namelist() if not n.endswith("/") and is_valid_key(n)))
        return iter(names) if not prefix else (n for n in names if n.startswith(prefix))

    def getsize(self, key: str) -> int:  # type: ignore[override]  # Store wraps it to take None too
        validate_key(key)
        with self._lock:
            self._check_open()
            try:
                return self._zf.getinfo(key).file_size
            except KeyError:
                return 0

    def exists(self, key: str) -> bool:
        validate_key(key)
        with self._lock:
            self._check_open()
            return key in self._zf.NameToInfo

    def _check_writable(self) -> None:
        if self.read_only:
            raise ReadOnlyError(f"ZipStore {self.path!r} is open read-only (mode='r')")

    def _close_zipfile(self) -> None:
        try:
            self._zf.close()
        except zipfile.LargeZipFile as exc:
            self._closed = True  # zipfile has closed the file, without a central directory
            raise StoreError(
                f"ZipStore {self.path!r}: the central directory needs the ZIP64 extensions, "
                f"which allowZip64=False forbids ({exc}); the file is incomplete"
            ) from exc

    def flush(self) -> None:
        """Write the central directory now, keeping the store open for more writes."""
        with self._lock:
            self._check_open()
            if self.mode != "r":
                self._close_zipfile()
                self._zf = zipfile.ZipFile(
                    self.path, mode="a", compression=self.compression, allowZip64=self.allowZip64
                )

    def clear(self) -> None:
        """Remove every key: the zip file is started anew, empty (members cannot be removed one
        by one, but all of them can)."""
        self._check_writable()
        with self._lock:
            self._check_open()
            self._close_zipfile()
            self._zf = zipfile.ZipFile(
                self.path, mode="w", compression=self.compression, allowZip64=self.allowZip64
            )

    def close(self) -> None:
        """Close the zip file (writing its central directory); closing again does nothing."""
        with self._lock:
            if not self._closed:
                try:
                    self._close_zipfile()
                finally:
                    self._closed = True

    def __len__(self) -> int:
        return sum(1 for _ in self.list_prefix(""))

    def __repr__(self) -> str:
        return f"ZipStore({self.path!r}, mode={self.mode!r})"

    def __str__(self) -> str:
        """The store as zarr-python 3 names it in reprs: ``zip://<path as given>``."""
        return f"zip://{getattr(self, '_given', self.path)}"

    def __getstate__(self):
        if self.mode != "r":
            raise TypeError(
                f"a ZipStore open for writing (mode={self.mode!r}) cannot be pickled: close it "
                "and pickle ZipStore(path, mode='r'), or pickle the path"
            )
        return {"path": self.path, "compression": self.compression,
                "allowZip64": self.allowZip64, "dimension_separator": self.dimension_separator}

    def __setstate__(self, state) -> None:
        type(self).__init__(self, state["path"], compression=state["compression"],
                                  allowZip64=state["allowZip64"], mode="r",
                                  dimension_separator=state.get("dimension_separator"))
