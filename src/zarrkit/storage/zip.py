"""A store inside a single Zip file."""

from __future__ import annotations

import os
import threading
import time
import warnings
import zipfile
from collections.abc import Iterator
from typing import Any

from ..errors import ReadOnlyError, StoreError
from .base import ByteRange, Store, validate_key

__all__ = ["ZipStore"]


class ZipStore(Store):
    """Keys as members of a Zip file.

    Zip members cannot be changed in place: data should be written once, in whole chunks.
    Writing a key again appends a newer member (reads see the newest, with a warning, as
    zarr-python 2 did); deleting is not supported.  Call :meth:`close` after writing, or the
    zip file's central directory is not written.

    Parameters
    ----------
    path : str or os.PathLike
        The zip file.
    compression : int, default ``zipfile.ZIP_STORED``
        Compression of the zip members (chunks are usually compressed already).
    allowZip64 : bool, default True
        Allow files over 4 GiB.
    mode : {'a', 'r', 'w', 'x'}, default 'a'
        As :class:`zipfile.ZipFile`; ``'r'`` gives a read-only store.

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
        mode: str = "a",
    ) -> None:
        if mode not in ("a", "r", "w", "x"):
            raise ValueError(f"ZipStore mode must be 'a', 'r', 'w' or 'x', got {mode!r}")
        self.path = os.path.abspath(os.fspath(path))
        self.compression = compression
        self.allowZip64 = allowZip64
        self.mode = mode
        self.read_only = mode == "r"
        self._lock = threading.RLock()
        try:
            self._zf = zipfile.ZipFile(self.path, mode=mode, compression=compression, allowZip64=allowZip64)
        except FileNotFoundError:
            raise FileNotFoundError(f"zip file {self.path!r} does not exist") from None
        except zipfile.BadZipFile as exc:
            raise StoreError(f"{self.path!r} is not a valid zip file: {exc}") from None
        self._closed = False

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
            with self._zf.open(info) as f:
                if byte_range is None:
                    return f.read()
                size = info.file_size
                if byte_range.offset < 0:
                    f.seek(max(size + byte_range.offset, 0))
                    return f.read()
                f.seek(min(byte_range.offset, size))
                return f.read() if byte_range.length is None else f.read(byte_range.length)

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
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # zipfile's own duplicate warning
                self._zf.writestr(info, bytes(value))

    def _delete(self, key: str) -> None:
        with self._lock:
            if key in self._zf.NameToInfo:
                raise StoreError(f"ZipStore {self.path!r} cannot delete key {key!r}")

    def delete_prefix(self, prefix: str) -> None:
        self._check_writable()
        if any(True for _ in self.list_prefix(prefix)):
            raise StoreError(f"ZipStore {self.path!r} cannot delete keys (prefix {prefix!r})")

    def list_prefix(self, prefix: str) -> Iterator[str]:
        with self._lock:
            self._check_open()
            names = list(dict.fromkeys(n for n in self._zf.namelist() if not n.endswith("/")))
        return iter(names) if not prefix else (n for n in names if n.startswith(prefix))

    def getsize(self, key: str) -> int:
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

    def flush(self) -> None:
        """Write the central directory now, keeping the store open for more writes."""
        with self._lock:
            self._check_open()
            if self.mode != "r":
                self._zf.close()
                self._zf = zipfile.ZipFile(
                    self.path, mode="a", compression=self.compression, allowZip64=self.allowZip64
                )

    def close(self) -> None:
        """Close the zip file (writing its central directory)."""
        with self._lock:
            if not self._closed:
                self._zf.close()
                self._closed = True

    def __len__(self) -> int:
        return sum(1 for _ in self.list_prefix(""))

    def __repr__(self) -> str:
        return f"ZipStore({self.path!r}, mode={self.mode!r})"

    def __getstate__(self):
        raise TypeError("ZipStore cannot be pickled; pickle the path and reopen it")
