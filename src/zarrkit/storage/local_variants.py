"""Variants of :class:`~zarrkit.storage.local.DirectoryStore`: nested chunk keys
(``NestedDirectoryStore``) and a temporary directory (``TempStore``)."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from typing import Any

from .local import DirectoryStore

__all__ = ["NestedDirectoryStore", "TempStore"]


class NestedDirectoryStore(DirectoryStore):
    """A :class:`DirectoryStore` whose new arrays use ``/`` between chunk indices.

    Chunk ``(1, 2)`` is then stored at ``1/2`` (a directory per leading index), which keeps
    directories small for arrays with many chunks.

    Parameters
    ----------
    path : str or os.PathLike
        Root directory; created on first write if missing.
    normalize_keys : bool, default False
        zarr-python 2's option: keys are lower-cased before use.
    dimension_separator : '/', optional
        Always ``'/'`` (another value is an error).
    read_only : bool, default False
        Refuse every write.
    fsync : bool, default False
        Flush each value and its directory entry to the device before a write returns.

    Examples
    --------
    >>> import zarrkit, tempfile
    >>> store = zarrkit.NestedDirectoryStore(tempfile.mkdtemp())
    >>> z = zarrkit.zeros((4, 4), chunks=(2, 2), store=store, zarr_format=2)
    >>> z[:] = 1
    >>> '1/1' in store
    True
    """

    dimension_separator: str | None = "/"

    def __init__(
        self, path: Any, normalize_keys: bool = False, dimension_separator: str | None = "/",
        read_only: bool = False, fsync: bool = False,
    ) -> None:
        if dimension_separator not in (None, "/"):
            raise ValueError(
                f"NestedDirectoryStore only supports '/' as dimension_separator, got {dimension_separator!r}"
            )
        super().__init__(path, normalize_keys=normalize_keys, dimension_separator="/",
                         read_only=read_only, fsync=fsync)


class TempStore(DirectoryStore):
    """A :class:`DirectoryStore` in a new temporary directory, removed on ``close()`` or exit.

    Parameters
    ----------
    suffix, prefix, dir : str, optional
        As :func:`tempfile.mkdtemp` takes them (``prefix`` defaults to ``'zarrkit'``).
    normalize_keys : bool, default False
        zarr-python 2's option: keys are lower-cased before use.
    dimension_separator : {'.', '/'}, optional
        Separator used by arrays *created* in this store when none is given.

    Examples
    --------
    >>> import zarrkit
    >>> store = zarrkit.TempStore()
    >>> z = zarrkit.ones(3, store=store)
    >>> store.close()
    """

    def __init__(
        self, suffix: str = "", prefix: str = "zarrkit", dir: str | None = None,
        normalize_keys: bool = False, dimension_separator: str | None = None,
    ) -> None:
        path = tempfile.mkdtemp(suffix=suffix, prefix=prefix, dir=dir)
        super().__init__(path, normalize_keys=normalize_keys, dimension_separator=dimension_separator)
        atexit.register(shutil.rmtree, path, True)

    def close(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)
