"""A store on any file system `fsspec <https://filesystem-spec.readthedocs.io>`_ knows.

:class:`FsspecStore` (alias :data:`FSStore`, its zarr-2 name) puts zarrkit data on object
storage (``s3://``, ``gs://``, ``az://``), web servers (``http(s)://``, read-only), fsspec's
in-process ``memory://`` file system, local files (``file://``) and anything else with an fsspec
implementation.  fsspec itself is needed only when a store is made; the protocol packages are
optional extras (``pip install 'zarrkit[remote]'`` installs fsspec, s3fs, aiohttp and requests).

How the store contract maps onto fsspec:

* ``get(key, byte_range)`` reads with ``fs.cat_file(path, start, end)``, so only the requested
  bytes travel (a suffix range, as used for shard indexes, becomes a ``bytes=-N`` request where
  the file system supports negative starts, else the size is asked first).  A missing object
  (``FileNotFoundError``, HTTP 404) reads as ``None``.
* ``get_many(keys)`` fetches every key in one ``fs.cat([...], on_error="return")`` call, which
  asynchronous file systems (s3fs, gcsfs, adlfs, HTTP) run concurrently.
* ``set`` writes whole objects with ``fs.pipe_file``: an object store never shows half an
  object.  On local files the value goes to a temporary file that is renamed over the key.
* ``list_prefix`` / ``list_dir`` use ``fs.find`` / ``fs.ls`` (a missing directory lists empty).
* Versions and conditional writes, on S3 (s3fs) only: the ETag (and version id) of one
  ``GetObject``; ``PutObject`` with ``IfNoneMatch``/``IfMatch``, tagged so that a retry after a
  lost answer is known as our own; shard reads pinned to one ETag
  (:mod:`~zarrkit.storage.fsspec_s3`).  Other file systems declare no conditional writes.
* Transient failures (HTTP 5xx and 429, connection reset or aborted, time-outs) are retried
  ``retries`` times with exponential back-off; then :class:`~zarrkit.errors.StoreError` is
  raised, naming the key and its URL.  Missing objects and permission errors are not retried.
"""

from __future__ import annotations

import os
import posixpath
import random
import re
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, cast
from urllib.parse import unquote

from ..config import config
from ..errors import StorageOptionsError, StoreError
from . import fileio, fsspec_s3
from .base import ByteRange, Store, Version, oversized, validate_key, validate_prefix
from .extras import FSSPEC_PROTOCOL_EXTRAS, install_hint, missing_extra
from .fileio import TEMP_MARKER  # DirectoryStore's: each hides the other's files in flight
from .fsspec_errors import _MISSING, _RANGE, _TRANSIENT, classify_error

__all__ = ["FSStore", "FsspecStore", "classify_error"]

_MAGIC = re.compile(r"[*?\[]")

def _import_fsspec() -> Any:
    try:
        import fsspec
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise missing_extra("FsspecStore", "fsspec", "remote") from exc
    return fsspec


def _pool_options(url: str, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` for a file system made from ``url``, with an S3 connection pool as large
    as the requests the engine keeps in flight (``config.io_threads``): botocore's default
    pool holds 10 connections, which would make the other requests wait for one."""
    if not url.startswith(("s3://", "s3a://")) or "::" in url:
        return options
    config_kwargs = dict(options.get("config_kwargs") or {})
    if "max_pool_connections" in config_kwargs:
        return options
    config_kwargs["max_pool_connections"] = max(config.threads, config.io_threads)
    return {**options, "config_kwargs": config_kwargs}


class FsspecStore(Store):
    """A store on an fsspec file system: S3, GCS, Azure, HTTP, ``memory://``, local files...

    Parameters
    ----------
    url_or_fs : str, fsspec.FSMap or fsspec.AbstractFileSystem
        A URL such as ``'s3://bucket/data.zarr'`` or ``'memory://tmp/x.zarr'`` (chained URLs
        like ``'simplecache::s3://...'`` work too), a mapper from ``fsspec.get_mapper(...)``,
        or a file system instance (then ``path`` is the root inside it).
    path : str, optional
        A path below ``url_or_fs`` that becomes the store's root.
    storage_options : dict, optional
        Keyword arguments of the file system (``{'anon': True}``, ``{'client_kwargs': ...}``);
        only with a URL.
    read_only : bool, default False
        Refuse every write.  ``http(s)://`` stores are always read-only.
    retries : int, default 3
        How many times a request failing for a transient reason (HTTP 5xx/429, connection
        reset/aborted, time-out) is repeated before :class:`~zarrkit.errors.StoreError`.
    retry_delay : float, default 0.1
        Seconds before the first retry; doubled for each further one (with jitter).
    max_retry_delay : float, default 5.0
        Upper bound of the delay between two attempts.
    dimension_separator : {'.', '/'}, optional
        Chunk key separator of zarr-2 arrays *created* in this store when none is given.
    mode : {'r', 'r+', 'a', 'w', 'w-'}, optional
        zarr-2 ``FSStore`` spelling: ``'r'`` means ``read_only=True``.
    fs : fsspec.AbstractFileSystem, optional
        zarr-2 ``FSStore`` spelling: a file system, with ``url_or_fs`` the root path in it.
    **kwargs
        Further storage options (zarr-2 ``FSStore(url, anon=True)`` style), passed to the
        file system with ``storage_options``.

    Notes
    -----
    Stores on anything but local files and ``memory://`` are ``high_latency``: the chunk engine
    keeps ``zarrkit.config.io_threads`` requests in flight on them.  An S3 file system made
    from a URL gets a connection pool of that size (botocore's default is 10 connections)
    unless ``storage_options`` set ``config_kwargs={'max_pool_connections': ...}``.

    The store holds no open files or connections of its own (fsspec caches file system
    instances and their sessions), so ``close()`` does nothing and the store pickles when its
    file system does.  Listings are read fresh (fsspec's listing caches are invalidated first).
    Keys are ``'/'``-separated paths below the root; on object stores "directories" are just
    key prefixes, so ``list_dir`` shows a directory only while a key below it exists.

    Examples
    --------
    >>> import numpy as np, zarrkit
    >>> from zarrkit.storage.fsspec import FsspecStore
    >>> store = FsspecStore('memory://doc-example/fsspec.zarr')
    >>> z = zarrkit.zeros((4, 4), chunks=(2, 2), dtype='i4', store=store, zarr_format=2)
    >>> z[:] = np.arange(16).reshape(4, 4)
    >>> store.list_dir('')[:3]
    ['.zarray', '.zattrs', '0.0']
    >>> store.url
    'memory:///doc-example/fsspec.zarr'
    >>> zarrkit.open_array(FsspecStore.from_url('memory://doc-example/fsspec.zarr'),
    ...                    mode='r')[3]
    array([12, 13, 14, 15], dtype=int32)
    >>> store.get('.zarray', zarrkit.storage.ByteRange(0, 1))
    b'{'
    >>> store.get('missing') is None
    True
    >>> store.delete_prefix('')
    """

    def __init__(
        self,
        url_or_fs: Any = None,
        path: str | None = None,
        storage_options: dict[str, Any] | None = None,
        read_only: bool = False,
        retries: int = 3,
        retry_delay: float = 0.1,
        max_retry_delay: float = 5.0,
        dimension_separator: str | None = None,
        mode: str | None = None,
        fs: Any = None,
        **kwargs: Any,
    ) -> None:
        fsspec = _import_fsspec()
        # zarr-python 2's FSStore keywords (the rest are the file system's storage options)
        normalize_keys = bool(kwargs.pop("normalize_keys", False))
        key_separator = kwargs.pop("key_separator", None)
        if key_separator is not None:
            if dimension_separator is not None and dimension_separator != key_separator:
                raise ValueError(
                    f"key_separator={key_separator!r} contradicts dimension_separator={dimension_separator!r}"
                )
            dimension_separator = key_separator
        self.exceptions: tuple[Any, ...] = tuple(kwargs.pop("exceptions", (KeyError, PermissionError, OSError)))
        self.missing_exceptions = kwargs.pop("missing_exceptions", None)
        check = bool(kwargs.pop("check", False))
        create = bool(kwargs.pop("create", False))
        options = dict(storage_options or {})
        options.update(kwargs)
        fs_, root = self._file_system(fsspec, url_or_fs, path, options, fs)
        if retries < 0:
            raise ValueError(f"retries must be >= 0, got {retries!r}")
        if dimension_separator is not None and dimension_separator not in (".", "/"):
            raise ValueError(f"dimension_separator must be '.' or '/', got {dimension_separator!r}")
        if mode is not None and mode not in ("r", "r+", "a", "w", "w-"):
            raise ValueError(f"mode must be one of 'r', 'r+', 'a', 'w', 'w-', got {mode!r}")

        self.fs = fs_
        protocols = fs_.protocol if isinstance(fs_.protocol, (tuple, list)) else (fs_.protocol,)
        self.protocols: tuple[Any, ...] = tuple(protocols)
        self._is_http = bool({"http", "https"} & set(protocols))
        self._is_local = bool({"file", "local"} & set(protocols))
        self._has_dirs = self._is_local or "memory" in protocols  # real (pseudo) directories
        root = fs_._strip_protocol(root) if root else root
        if isinstance(root, str) and len(root) > 1:
            root = root.rstrip("/")
        self.root: str = root or ""
        self.dimension_separator = dimension_separator
        self.normalize_keys = normalize_keys
        self.mode = mode or ("r" if read_only else "w")
        self.read_only: bool = bool(read_only or mode == "r" or self._is_http)
        self.supports_writes: bool = not self._is_http
        # object stores and web servers: keep config.io_threads requests in flight
        self.high_latency: bool = not self._has_dirs
        #: S3 through s3fs: conditional PUTs, versions and pinned reads (see fsspec_s3); no
        #: other file system of fsspec can compare and write atomically
        self._s3 = fsspec_s3.is_s3(fs_, protocols)
        self.supports_conditional_writes: bool = self._s3
        self.versions_are_contents: bool = self._s3  # (ETags)
        self.retries: int = int(retries)
        self.retry_delay: float = float(retry_delay)
        self.max_retry_delay: float = float(max_retry_delay)
        # s3fs reads whole objects after a HEAD (for parallel ranged GETs) unless told not to
        self._whole_kw: dict[str, Any] = (
            {"max_concurrency": 1} if hasattr(fs_, "max_concurrency") and "s3" in protocols else {}
        )
        try:
            self.url = fs_.unstrip_protocol(self.root or getattr(fs_, "root_marker", ""))
        except Exception:  # noqa: BLE001 - only used in messages
            self.url = f"{protocols[0]}://{self.root}"
        # the form paths below the root take in listings (each file system normalizes its own)
        self._prefix = self._path("x")[:-1]
        if create and not self.read_only and self._has_dirs:
            self.fs.makedirs(self.root, exist_ok=True)
        if check and self._has_dirs and not self.fs.isdir(self.root):
            raise StoreError(f"FsspecStore {self.url!r}: the root directory does not exist (check=True)")

    def _file_system(self, fsspec: Any, url_or_fs: Any, path: str | None, options: dict[str, Any], fs: Any) -> tuple[Any, str]:
        """The file system and root path a URL, an fsspec mapper or file system (with ``path``
        inside it; zarr-python 2's ``fs=``) name."""
        from fsspec.mapping import FSMap
        from fsspec.spec import AbstractFileSystem

        if fs is not None:  # zarr-2: FSStore(root_path, fs=fs)
            if not isinstance(fs, AbstractFileSystem):
                raise TypeError(f"fs must be an fsspec file system, got {type(fs).__name__}")
            if url_or_fs is not None and not isinstance(url_or_fs, (str, os.PathLike)):
                raise TypeError("with fs=, the first argument is a path inside that file system")
            if path is None and url_or_fs is not None:
                path, url_or_fs = os.fspath(url_or_fs), fs
            else:
                url_or_fs = fs
        if isinstance(url_or_fs, FSMap):
            self._check_no_options(options, "an fsspec mapper (FSMap)")
            fs_, root = url_or_fs.fs, url_or_fs.root
            if path:
                root = f"{root.rstrip('/')}/{path.strip('/')}"
        elif isinstance(url_or_fs, AbstractFileSystem):
            self._check_no_options(options, "a file system instance")
            fs_, root = url_or_fs, (path or "")
        elif isinstance(url_or_fs, (str, os.PathLike)):
            url = os.fspath(url_or_fs)
            if path:
                url = f"{url.rstrip('/')}/{path.strip('/')}"
            try:
                fs_, root = fsspec.core.url_to_fs(url, **_pool_options(url, options))
            except ImportError as exc:  # the protocol's implementation is not installed
                protocol = url.split("://", 1)[0].lower() if "://" in url else "file"
                extra, package = FSSPEC_PROTOCOL_EXTRAS.get(protocol, ("remote", None))
                if package is None:
                    raise ImportError(f"{url!r}: {exc} (zarrkit's URL stores: {install_hint('remote')})") from exc
                raise missing_extra(f"the URL {url!r}", package, extra) from exc
            except TypeError as exc:
                raise StorageOptionsError(f"storage options {sorted(options)} for {url!r}: {exc}") from None
        else:
            raise TypeError(
                "FsspecStore needs a URL, an fsspec FSMap or an fsspec file system, "
                f"not {type(url_or_fs).__name__}"
            )
        return fs_, root

    @property
    def path(self) -> str:
        """The root inside the file system (zarr-python 2's ``FSStore.path``)."""
        return self.root

    @property
    def key_separator(self) -> str:
        """zarr-python 2's name of the chunk-key separator (``'.'`` when none was given)."""
        return self.dimension_separator or "."

    @property
    def map(self) -> Any:
        """An fsspec mapper over the same root (zarr-python 2's ``FSStore.map``)."""
        return self.fs.get_mapper(self.root)

    @staticmethod
    def _check_no_options(options: dict[str, Any], what: str) -> None:
        if options:
            raise StorageOptionsError(
                f"storage options {sorted(options)} cannot be applied to {what} (they configure "
                "a new file system: pass them with a URL instead)"
            )

    @classmethod
    def from_url(
        cls,
        url: str,
        storage_options: dict[str, Any] | None = None,
        read_only: bool = False,
        **kwargs: Any,
    ) -> FsspecStore:
        """Make a store for ``url`` (``s3://``, ``gs://``, ``az://``, ``http(s)://``, ``memory://``...).

        Examples
        --------
        >>> from zarrkit.storage.fsspec import FsspecStore
        >>> store = FsspecStore.from_url('memory://doc-from-url', read_only=True)
        >>> store.read_only, store.url
        (True, 'memory:///doc-from-url')
        """
        return cls(url, storage_options=storage_options, read_only=read_only, **kwargs)

    # -- paths --------------------------------------------------------------------------------
    def _path(self, key: str) -> str:
        root = self.root
        if not root:
            return cast(str, self.fs._strip_protocol(key))  # fsspec is untyped
        if root.endswith("/"):  # the file system's root, "/"
            return root + key
        return f"{root}/{key}"

    def _key_of(self, path: str) -> str | None:
        """The key of a path a listing returned, or None when it is not below the root."""
        path = path.rstrip("/")
        prefix = self._prefix
        if self._is_http:
            path, prefix = unquote(path), unquote(prefix)
        if not path.startswith(prefix):
            return None
        key = path[len(prefix):]
        if not key or any(seg.startswith(TEMP_MARKER) for seg in key.split("/")):
            return None
        return key

    def _url(self, key: str) -> str:
        return f"{self.url.rstrip('/')}/{key}"

    # -- retries ------------------------------------------------------------------------------
    def _delay(self, attempt: int) -> float:
        delay: float = min(self.retry_delay * (2**attempt), self.max_retry_delay) * random.uniform(0.5, 1.0)
        return delay

    def _call(self, op: str, key: str, fn: Callable[[], Any], *, missing: Any = StoreError,
              out_of_range: Any = StoreError) -> Any:
        """Run ``fn``, retrying transient failures.

        A missing object returns ``missing`` (raises if it is ``StoreError``); an HTTP 416
        returns ``out_of_range``; anything else that is not transient raises StoreError.
        """
        attempt = 0
        while True:
            try:
                return fn()
            except Exception as exc:
                kind = classify_error(exc)
                if kind == _MISSING and missing is not StoreError:
                    return missing
                if kind == _RANGE and out_of_range is not StoreError:
                    return out_of_range
                if kind != _TRANSIENT:
                    raise StoreError(
                        f"{op} of key {key!r} ({self._url(key)}) failed: "
                        f"{type(exc).__name__}: {exc}"
                    ) from exc
                if attempt >= self.retries:
                    raise StoreError(
                        f"{op} of key {key!r} ({self._url(key)}) failed after {attempt + 1} "
                        f"attempts: {type(exc).__name__}: {exc}"
                    ) from exc
                time.sleep(self._delay(attempt))
                attempt += 1

    # -- reads --------------------------------------------------------------------------------
    def _get(self, key: str, byte_range: ByteRange | None) -> bytes | None:
        path = self._path(key)
        fs = self.fs
        if byte_range is None:
            value = self._call("read", key, lambda: fs.cat_file(path, **self._whole_kw),
                               missing=None)
            return None if value is None else bytes(value)
        offset, length = byte_range.offset, byte_range.length
        if length == 0:
            return b"" if self._exists(key) else None
        if offset < 0:
            value = self._call("read", key, lambda: self._suffix(path, offset), missing=None,
                               out_of_range=b"")
            return None if value is None else bytes(value)
        end = None if length is None else offset + length
        value = self._call("read", key, lambda: fs.cat_file(path, start=offset, end=end),
                           missing=None, out_of_range=b"")
        if value is None:
            return None
        if length is not None and len(value) > length:  # the server ignored the Range header
            return byte_range.slice(value)
        return bytes(value)

    def get_upto(self, key: str, limit: int) -> bytes | memoryview | None:  # one read of limit + 1 bytes
        if type(self)._get is not FsspecStore._get:
            return super().get_upto(key, limit)
        path = self._path(key)
        value = self._call("read", key, lambda: self.fs.cat_file(path, start=0, end=limit + 1),
                           missing=None, out_of_range=b"")
        if value is None or len(value) <= limit:
            return None if value is None else bytes(value)
        raise oversized(key, len(value) if len(value) > limit + 1 else None, limit)  # (>: no ranges)

    def _suffix(self, path: str, offset: int) -> bytes:
        try:
            return cast(bytes, self.fs.cat_file(path, start=offset))  # fsspec is untyped
        except (ValueError, NotImplementedError, TypeError):
            # no negative starts here: ask the size, then read the tail
            size = self.fs.size(path)
            start = max(size + offset, 0)
            return b"" if start >= size else self.fs.cat_file(path, start=start, end=size)

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes | None]:
        """Read several keys at once: one ``fs.cat`` call, concurrent on async file systems.

        Missing keys map to ``None``; keys that failed for a transient reason are fetched again
        (only those) up to ``retries`` times.

        Examples
        --------
        >>> from zarrkit.storage.fsspec import FsspecStore
        >>> store = FsspecStore('memory://doc-get-many')
        >>> store['a'] = b'1'; store['b/c'] = b'2'
        >>> store.get_many(['a', 'b/c', 'nope'])
        {'a': b'1', 'b/c': b'2', 'nope': None}
        >>> store.delete_prefix('')

        Parameters
        ----------
        keys : iterable of str
            The keys.

        Returns
        -------
        dict
            ``{key: value or None}``.
        """
        keys = [validate_key(k) for k in keys]
        if not keys:
            return {}
        out: dict[str, bytes | None] = {}
        by_path: dict[str, str] = {}
        for k in keys:
            p = self._path(k)
            if _MAGIC.search(p):  # fs.cat would treat it as a glob pattern
                out[k] = self._get(k, None)
            else:
                by_path[p] = k
        pending = list(by_path)
        attempt = 0
        while pending:
            try:
                results = self.fs.cat(pending, on_error="return", **self._whole_kw)
            except Exception as exc:  # noqa: BLE001 - the whole batch failed
                results = dict.fromkeys(pending, exc)
            if not isinstance(results, dict):  # a single path came back as bytes
                results = {pending[0]: results}
            normalized = {self.fs._strip_protocol(p): v for p, v in results.items()}
            retry: list[str] = []
            last_exc: BaseException | None = None
            for p in pending:
                key = by_path[p]
                value = results[p] if p in results else normalized.get(
                    self.fs._strip_protocol(p), KeyError(p))
                if isinstance(value, KeyError):  # not in the answer: read it alone
                    out[key] = self._get(key, None)
                    continue
                if not isinstance(value, BaseException):
                    out[key] = bytes(value)
                    continue
                kind = classify_error(value)
                if kind == _MISSING:
                    out[key] = None
                elif kind == _RANGE:
                    out[key] = b""
                elif kind == _TRANSIENT and attempt < self.retries:
                    retry.append(p)
                    last_exc = value
                else:
                    tries = f" after {attempt + 1} attempts" if kind == _TRANSIENT else ""
                    raise StoreError(
                        f"read of key {key!r} ({self._url(key)}) failed{tries}: "
                        f"{type(value).__name__}: {value}"
                    ) from value
            pending = retry
            if pending:
                del last_exc
                time.sleep(self._delay(attempt))
                attempt += 1
        return {k: out[k] for k in keys}

    def _exists(self, key: str) -> bool:
        path = self._path(key)

        def info() -> bool:
            self.fs.invalidate_cache(path)
            return cast(bool, self.fs.info(path).get("type") == "file")  # fsspec is untyped

        return bool(self._call("exists", key, info, missing=False))

    def exists(self, key: str) -> bool:
        """Whether an object is stored at ``key`` (a metadata request, not a download).

        Parameters
        ----------
        key : str
            The key.

        Returns
        -------
        bool
        """
        validate_key(key)
        return self._exists(key)

    def getsize(self, key: str) -> int:  # type: ignore[override]  # Store wraps it to take None too
        """Size in bytes of the object at ``key`` (0 if missing), from its metadata.

        Parameters
        ----------
        key : str
            The key (one holding no value: the total of the values directly below it).

        Returns
        -------
        int
        """
        validate_key(key)
        path = self._path(key)

        def size() -> int:
            self.fs.invalidate_cache(path)
            info = self.fs.info(path)
            if info.get("type") != "file":
                return 0
            n = info.get("size")
            return int(n) if n is not None else len(self.fs.cat_file(path))

        return int(self._call("getsize", key, size, missing=0))

    @property
    def value_version(self) -> Callable[[str], fsspec_s3.PinnedObject]:
        """On S3: the object at a key as the first read of it finds it, for reading several
        of its ranges (a shard's index, then its chunks): later reads ask for its ETag
        (``IfMatch``) and read as None once another version replaced it.  Other file systems
        have no such attribute (their ranged reads cannot be pinned to one version)."""
        if not self._s3:
            raise AttributeError("value_version: only S3 reads can be pinned to one version")
        return lambda key: fsspec_s3.PinnedObject(self, validate_key(key))

    # -- versions (S3: see fsspec_s3) ---------------------------------------------------------
    def _get_versioned(self, key: str, limit: int | None) -> tuple[bytes | None, Version]:
        return fsspec_s3.get_versioned(self, key, limit)

    def _set_if(self, key: str, value: bytes | memoryview, version: Version) -> Version:
        return fsspec_s3.set_if(self, key, value, version)

    def _delete_if(self, key: str, version: Version) -> None:
        fsspec_s3.delete_if(self, key, version)

    # -- listing ------------------------------------------------------------------------------
    def _find(self, prefix: str) -> dict[str, int | None]:
        """The keys below ``prefix`` with their sizes where the listing gives them (None where
        it does not): one listing of the directory ``prefix`` is in."""
        validate_prefix(prefix)
        head = prefix.rpartition("/")[0]
        path = self._path(head) if head else (self.root or getattr(self.fs, "root_marker", ""))

        def find() -> Any:
            self.fs.invalidate_cache(path)
            return self.fs.find(path, withdirs=False, detail=True)  # fsspec is untyped

        found = self._call("list", prefix or "/", find, missing={})
        if not isinstance(found, dict):  # a file system that lists no details
            found = dict.fromkeys(found)
        keys: dict[str, int | None] = {}
        for p, entry in found.items():
            key = self._key_of(p)
            if key is not None and key.startswith(prefix):
                size = entry.get("size") if isinstance(entry, dict) else None
                keys[key] = size if isinstance(size, int) and size >= 0 else None
        return keys

    def list_prefix(self, prefix: str) -> Iterator[str]:
        return iter(sorted(self._find(prefix)))

    def list_prefix_sizes(self, prefix: str) -> Iterator[tuple[str, int]]:
        """Yield ``(key, size in bytes)`` for every key that starts with ``prefix``, from one
        listing with sizes (object storage lists sizes with the keys): not a request per key.

        Parameters
        ----------
        prefix : str
            The start of the keys (``''``: every key).

        Yields
        ------
        tuple of (str, int)
        """
        found = sorted(self._find(prefix).items())
        return ((key, self.getsize(key) if size is None else size) for key, size in found)

    def list_dir(self, prefix: str = "") -> list[str]:
        validate_prefix(prefix)
        p = prefix.strip("/")
        path = self._path(p) if p else (self.root or getattr(self.fs, "root_marker", ""))
        base = f"{p}/" if p else ""

        def ls() -> list[Any]:
            self.fs.invalidate_cache(path)
            return cast(list[Any], self.fs.ls(path, detail=True))  # fsspec is untyped

        entries = self._call("list", prefix or "/", ls, missing=[])
        names = set()
        for e in entries:
            name = e["name"] if isinstance(e, dict) else e
            key = self._key_of(name)
            if key is None or not key.startswith(base):
                continue
            child = key[len(base):]
            if child and "/" not in child:
                names.add(child)
        return sorted(names)

    # -- writes -------------------------------------------------------------------------------
    def _set(self, key: str, value: bytes | memoryview) -> None:
        path = self._path(key)
        if self._is_local:
            self._set_local(key, path, value)
            return
        data = value if isinstance(value, bytes) else bytes(value)

        def pipe() -> None:
            self.fs.pipe_file(path, data)

        self._call("write", key, pipe)

    def _set_local(self, key: str, path: str, value: bytes | memoryview) -> None:
        directory = posixpath.dirname(path)

        def make_dir(attempt: int) -> None:
            try:
                os.makedirs(directory, exist_ok=True)
            except (FileExistsError, NotADirectoryError):
                raise StoreError(
                    f"cannot write key {key!r} ({self._url(key)}): a parent of it is a file"
                ) from None

        try:
            fileio.write_atomic(path, directory, [memoryview(value)], make_dir)
        except StoreError:
            raise
        except BaseException as exc:
            self._prune([path])  # directories made for this write
            if isinstance(exc, (IsADirectoryError, PermissionError)) and os.path.isdir(path):
                raise StoreError(
                    f"cannot write key {key!r} ({self._url(key)}): it is a directory"
                ) from None
            raise

    def _delete(self, key: str) -> None:
        path = self._path(key)

        def rm() -> None:
            try:
                self.fs.rm_file(path)
            except PermissionError:
                if self.fs.isdir(path):  # Windows reports directories this way
                    return
                raise

        self._call("delete", key, rm, missing=None)
        self._prune([path])

    def delete_prefix(self, prefix: str) -> None:
        """Remove every key starting with ``prefix`` (object stores: in batched requests).

        Parameters
        ----------
        prefix : str
            The start of the keys removed (``''``: all).
        """
        self._check_writable()
        validate_prefix(prefix)
        keys = list(self.list_prefix(prefix))
        if not keys:
            return
        paths = [self._path(k) for k in keys]
        if any(_MAGIC.search(p) for p in paths) or len(paths) == 1:
            for k in keys:
                self._delete(k)
            return
        try:
            self._call("delete", prefix or "/", lambda: self.fs.rm(paths))
        except StoreError:
            for k in keys:  # e.g. a key deleted concurrently: go one by one, missing is fine
                self._delete(k)
            return
        self._prune(paths)

    def _prune(self, paths: list[str]) -> None:
        """Remove directories left empty by deletes (file systems with real directories)."""
        if not self._has_dirs:
            return
        dirs = {posixpath.dirname(p) for p in paths}
        for d in sorted(dirs, key=lambda d: -d.count("/")):
            # only directories strictly below the root; dirname('/') is '/', so stop there too
            while d.startswith(self._prefix) and d != self._prefix:
                try:
                    self.fs.rmdir(d)
                except FileNotFoundError:
                    pass
                except OSError:  # not empty
                    break
                parent = posixpath.dirname(d)
                if parent == d:
                    break
                d = parent

    def clear(self) -> None:
        """Remove every key (the root itself stays)."""
        self.delete_prefix("")

    # -- misc ---------------------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        return (
            type(other) is type(self)
            and other.fs == self.fs
            and other.root == self.root
        )

    def __hash__(self) -> int:
        return object.__hash__(self)

    def with_read_only(self, read_only: bool = False) -> FsspecStore:
        """A new store over the same file system and path, with its own ``read_only`` setting
        (see :meth:`Store.with_read_only`).

        Parameters
        ----------
        read_only : bool, default False
            Whether the new store refuses writes.

        Returns
        -------
        FsspecStore
        """
        new = super().with_read_only(read_only)
        new.mode = "r" if read_only else "w"  # type: ignore[attr-defined]
        return new  # type: ignore[return-value]

    def __repr__(self) -> str:
        ro = ", read_only=True" if self.read_only else ""
        return f"{type(self).__name__}({self.url!r}{ro})"

    def __str__(self) -> str:
        """The store as zarr-python 3 shows it: the file system's class (a synchronous one
        behind its asynchronous wrapper) and the root."""
        fs_name = type(self.fs).__name__ if getattr(self.fs, "async_impl", False) else "AsyncFileSystemWrapper"
        return f"<FsspecStore({fs_name}, {self.root})>"


#: zarr-2's name of :class:`FsspecStore`.
FSStore = FsspecStore
