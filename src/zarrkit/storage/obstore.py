"""A store on `obstore <https://developmentseed.org/obstore>`_: S3, GCS, Azure, HTTP, local
files and memory through the Rust ``object_store`` crate, with no Python HTTP stack in between.

:class:`ObjectStore` wraps an obstore store (``obstore.store.S3Store``, ``GCSStore``,
``AzureStore``, ``HTTPStore``, ``LocalStore``, ``MemoryStore`` or one from
``obstore.store.from_url``) and uses obstore's synchronous functions, which release the
interpreter lock while they wait, so the engine's ``config.io_threads`` threads keep that many
requests in flight.  ``pip install 'zarrkit[obstore]'`` installs it.

How the store contract maps onto obstore:

* ``get(key, byte_range)``: ``obstore.get`` (whole objects, suffix ranges as a ``{'suffix': n}``
  range, ranges to the end as ``{'offset': n}``) or ``obstore.get_range``; a range starting at
  or beyond the end of an object reads as ``b''`` (a ``HEAD`` tells it from a missing object).
* :meth:`ObjectStore.get_ranges`: several ranges of one object in one ``obstore.get_ranges``
  call (coalesced and fetched concurrently by obstore): the shard reader reads the inner chunks
  of a shard this way.
* ``get_many(keys)``: whole objects on ``config.io_threads`` threads at once (measured on a
  local S3 server: as fast as, or faster than, the same gets on obstore's asynchronous API driven
  from one event loop, without a loop thread to manage).
* ``set``: ``obstore.put``, atomic per object (a reader never sees part of an object);
  ``delete``: ``obstore.delete`` (bulk deletes for :meth:`ObjectStore.delete_prefix`).
* ``list_prefix``: ``obstore.list``; ``list_dir``: ``obstore.list_with_delimiter`` (one
  request per 1000 children on S3, instead of a listing of everything below).
* ``getsize``: ``obstore.head``.
* versions and conditional writes (``get_versioned``, ``set_if``, ``delete_if``): the ETag
  (and version id or generation) of one ``GET``; ``obstore.put`` with ``mode="create"`` or
  ``mode={"e_tag": ..., "version": ...}``, each write tagged so that a retry after a lost
  answer is known as our own (:mod:`~zarrkit.storage.obstore_versions`).  S3, GCS, Azure and
  ``MemoryStore`` have them; ``LocalStore`` (no conditional replace in obstore) and
  ``HTTPStore`` do not.

Errors: a missing object (obstore's ``FileNotFoundError``, HTTP 404, a missing bucket) reads as
``None``, so arrays show their fill value there, as with every other store.  Everything else,
403 and 401 (``PermissionDeniedError``, ``UnauthenticatedError``), time-outs and server errors
included, raises :class:`~zarrkit.errors.StoreError` naming the store's URL and the key, with
obstore's error chained.  Transient failures (HTTP 5xx, connection errors, time-outs of
read-only requests) are retried by obstore itself with exponential back-off, as its
``RetryConfig`` says (10 retries within 3 minutes unless the obstore store was made with
another ``retry_config``; :meth:`ObjectStore.from_url` takes one in ``storage_options``):
zarrkit adds no retry loop of its own.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

from ..config import config
from ..errors import ChunkDecodeError, StorageOptionsError, StoreError, StoreOperationNotSupported
from . import obstore_versions
from .base import ByteRange, Store, Version, oversized, validate_key, validate_prefix
from .extras import missing_extra
from .local_confine import confinement_of
from .obstore_options import obstore_kwargs, obstore_url
from .obstore_versions import is_missing as _is_missing
from .obstore_versions import status_of as _status
from .pool import run_tasks

T = TypeVar("T")
R = TypeVar("R")

__all__ = ["ObjectStore"]

#: obstore store classes whose requests are cheap (no network): not ``high_latency``
_LOCAL_CLASSES = ("LocalStore", "MemoryStore")



def _import_obstore() -> Any:
    try:
        import obstore
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise missing_extra("ObjectStore", "obstore", "obstore") from exc
    return obstore


def _requests(send: Callable[[T], R], items: Sequence[T]) -> list[R]:
    """``send`` of each item, ``config.io_threads`` requests in flight on the one thread pool
    (inline when called from a task already running on it).  Every request is sent; the error
    of the first failed item, in order, is raised."""

    def attempt(item: T) -> tuple[R | None, Exception | None]:
        try:
            return send(item), None
        except Exception as exc:  # noqa: BLE001 - raised below, in the items' order
            return None, exc

    done = run_tasks(attempt, items, config.io_threads)
    for _, exc in done:
        if exc is not None:
            raise exc
    return [value for value, _ in done]  # type: ignore[misc]  # no error: every value was sent


def _url_of(store: Any) -> str:
    """The URL an obstore store is rooted at (for messages and ``repr``)."""
    name = type(store).__name__
    prefix = str(getattr(store, "prefix", None) or "").strip("/")
    try:
        cfg = dict(getattr(store, "config", None) or {})
    except BaseException:  # noqa: BLE001 - some obstore versions panic on odd config keys
        cfg = {}
    if name == "HTTPStore":
        return str(store.url)
    if name == "LocalStore":
        return f"file://{getattr(store, 'prefix', '') or '/'}"
    if name == "MemoryStore":
        return f"memory://{id(store):x}"
    if name == "S3Store":
        root = cfg.get("bucket") or cfg.get("aws_bucket") or "?"
        return f"s3://{root}/{prefix}".rstrip("/")
    if name == "GCSStore":
        root = cfg.get("bucket") or cfg.get("google_bucket") or "?"
        return f"gs://{root}/{prefix}".rstrip("/")
    if name == "AzureStore":
        root = cfg.get("container_name") or cfg.get("azure_container_name") or "?"
        account = cfg.get("account_name") or cfg.get("azure_storage_account_name")
        host = f"{root}@{account}.blob.core.windows.net" if account else root
        return f"az://{host}/{prefix}".rstrip("/")
    return repr(store)


class ObjectStore(Store):
    """A zarrkit store on an obstore store.

    Parameters
    ----------
    store : obstore store
        ``obstore.store.S3Store(...)``, ``GCSStore``, ``AzureStore``, ``HTTPStore``,
        ``LocalStore``, ``MemoryStore`` or ``obstore.store.from_url(...)``; its prefix is the
        root of the zarrkit store.
    read_only : bool, default False
        Refuse every write.  Stores on ``http(s)://`` (``HTTPStore``) are always read-only,
        and cannot be listed (obstore lists web servers through WebDAV only, and retries the
        501 a plain server answers): listing raises
        :class:`~zarrkit.errors.StoreOperationNotSupported` at once.
    coalesce : int, default 256 KiB
        Ranges of one object at most this many bytes apart are fetched with one request by
        :meth:`get_ranges`.

    Notes
    -----
    The store is ``high_latency`` (the engine keeps ``config.io_threads`` requests in flight)
    unless it is a ``LocalStore`` or a ``MemoryStore``.  It pickles when the obstore store
    does (every store but ``MemoryStore``).  Object stores have no directories: ``list_dir``
    shows a "directory" while a key below it exists.

    Examples
    --------
    >>> import numpy as np, zarrkit
    >>> from obstore.store import MemoryStore
    >>> from zarrkit.storage.obstore import ObjectStore
    >>> store = ObjectStore(MemoryStore())
    >>> z = zarrkit.zeros((4, 4), chunks=(2, 2), dtype='i4', store=store, zarr_format=2)
    >>> z[:] = np.arange(16).reshape(4, 4)
    >>> store.list_dir('')[:3]
    ['.zarray', '.zattrs', '0.0']
    >>> store.get('.zarray', zarrkit.storage.ByteRange(0, 1)), store.get('missing')
    (b'{', None)
    """

    def __init__(self, store: Any, read_only: bool = False, coalesce: int = 256 * 1024) -> None:
        self._obs = _import_obstore()
        if not hasattr(store, "get_ranges") or not hasattr(store, "list_with_delimiter"):
            raise TypeError(f"ObjectStore needs an obstore store, got {type(store).__name__}")
        self.store = store
        kind = type(store).__name__
        # a web server: read-only, and not listed (obstore would need WebDAV for that)
        self.supports_writes = self.supports_listing = kind != "HTTPStore"
        self.read_only: bool = bool(read_only) or not self.supports_writes
        self.high_latency: bool = kind not in _LOCAL_CLASSES
        # a MemoryStore keeps the buffer it is given: values it stores are copied first
        self._keeps_buffers = kind == "MemoryStore"
        # local files: directories left empty by deletes are removed (object stores have none)
        self._root_dir = str(store.prefix) if kind == "LocalStore" and store.prefix else None
        self.coalesce: int = int(coalesce)
        self.url: str = _url_of(store)
        # local files: keys leading out through a symbolic link refused, as DirectoryStore does
        self._confined = confinement_of(self._root_dir, repr(self))
        #: puts conditioned on an ETag or generation, with user metadata (see
        #: :mod:`~zarrkit.storage.obstore_versions`): not local files, nor web servers
        self.supports_conditional_writes: bool = kind in obstore_versions.CONDITIONAL_CLASSES
        #: S3's ETags are contents (an object version, in a versioned bucket, is not: the
        #: flag is the cautious answer); GCS generations and Azure ETags change on every write
        self.versions_are_contents: bool = kind == "S3Store"
        #: object_store has no conditional delete: a HEAD, then a DELETE (see obstore_versions)
        self.atomic_deletes: bool = False

    @classmethod
    def from_url(
        cls,
        url: str,
        storage_options: dict[str, Any] | None = None,
        read_only: bool = False,
    ) -> ObjectStore:
        """A store for ``url`` (``s3://``, ``gs://``, ``az://``/``abfs://``, ``http(s)://``,
        ``file://``, ``memory://``).

        ``storage_options`` are obstore's configuration keys (``region``, ``endpoint``,
        ``client_options``, ``retry_config``, ...) or fsspec's spelling of them (``key``,
        ``secret``, ``anon``, ``endpoint_url``, ``client_kwargs``, see
        :func:`zarrkit.storage.obstore_options.obstore_kwargs`); options obstore has no
        equivalent for raise :class:`~zarrkit.errors.StorageOptionsError`.

        Examples
        --------
        >>> from zarrkit.storage.obstore import ObjectStore
        >>> ObjectStore.from_url('s3://bucket/data.zarr', {'anon': True, 'region': 'eu-west-1'})
        ObjectStore('s3://bucket/data.zarr')
        """
        obs = _import_obstore()
        kwargs = obstore_kwargs(url, storage_options or {})
        try:
            store = obs.store.from_url(obstore_url(url), **kwargs)
        except Exception as exc:
            first = str(exc).split("\n", 1)[0]
            if type(exc).__name__ == "UnknownConfigurationKeyError":
                raise StorageOptionsError(
                    f"storage options for {url!r}: {first} (use fsspec's options with "
                    "zarrkit.config.set(remote='fsspec'))"
                ) from exc
            raise StoreError(f"cannot open {url!r} with obstore: {first}") from exc
        return cls(store, read_only=read_only)

    # -- errors -------------------------------------------------------------------------------
    def _error(self, op: str, key: str, exc: BaseException) -> StoreError:
        kind = type(exc).__name__
        if kind in ("PermissionDeniedError", "UnauthenticatedError") or _status(exc) in (401, 403):
            why = "permission denied"
        else:
            why = "failed"
        first = str(exc).split("\n", 1)[0]
        return StoreError(f"{op} of key {key!r} in {self!r} {why}: {kind}: {first}")

    # -- reads --------------------------------------------------------------------------------
    def _whole(self, key: str, limit: int | None = None) -> Any:
        """The object at ``key`` as obstore's ``Bytes`` (a buffer), or None when missing; one
        larger than ``limit`` bytes is refused from its size (the response's headers), its
        body unread."""
        self._confined(key)
        try:
            result = self._obs.get(self.store, key)
            if limit is not None and result.meta["size"] > limit:
                raise oversized(key, result.meta["size"], limit)
            return result.bytes()
        except ChunkDecodeError:
            raise
        except Exception as exc:
            if _is_missing(exc):
                return None
            raise self._error("read", key, exc) from exc

    def get_upto(self, key: str, limit: int) -> bytes | None:
        """The object at ``key`` (see :meth:`Store.get_upto`): one larger than ``limit``
        bytes is refused from its size, its body unread.

        Parameters
        ----------
        key : str
            The object's key (valid: not checked again).
        limit : int
            The most bytes it may hold.

        Returns
        -------
        bytes or None
        """
        value = self._whole(key, limit)
        return None if value is None else bytes(value)

    def get_transient_upto(self, key: str, limit: int) -> memoryview | None:
        """:meth:`get_upto` as a view of the buffer obstore read the object into (no copy).

        Parameters
        ----------
        key : str
            The object's key (valid: not checked again).
        limit : int
            The most bytes it may hold.

        Returns
        -------
        memoryview or None
        """
        value = self._whole(key, limit)
        return None if value is None else memoryview(value)

    def value_version(self, key: str) -> _PinnedObject:
        """The object at ``key`` as the first read of it finds it, for reading several of
        its ranges (a shard's index, then its chunks): later reads ask for its ETag
        (``If-Match``), and read as None once another version replaced it.

        Parameters
        ----------
        key : str
            The object's key.

        Returns
        -------
        object
            With ``read(offset, length=None)`` (None: missing, or replaced), ``read_ranges``
            and ``close()``.
        """
        self._confined(validate_key(key))
        return _PinnedObject(self, key)

    def get_transient(self, key: str, byte_range: ByteRange | None = None) -> bytes | memoryview | None:
        """A whole object as a view of the buffer obstore read it into (no copy).

        Parameters
        ----------
        key : str
            The object's key.
        byte_range : ByteRange, optional
            Only these bytes (then a copy, as :meth:`get` returns).

        Returns
        -------
        bytes or memoryview or None
            None when no object is stored at ``key``.
        """
        if byte_range is not None:
            return self.get(key, byte_range)
        value = self._whole(self._checked(key))
        return None if value is None else memoryview(value)

    def _get(self, key: str, byte_range: ByteRange | None) -> bytes | None:
        obs = self._obs
        if byte_range is None:
            value = self._whole(key)
            return None if value is None else bytes(value)
        self._confined(key)
        offset, length = byte_range.offset, byte_range.length
        if length == 0:
            return b"" if self._size(key) is not None else None
        try:
            if offset < 0:
                return bytes(obs.get(self.store, key, options={"range": {"suffix": -offset}}).bytes())
            if length is None:
                return bytes(obs.get(self.store, key, options={"range": {"offset": offset}}).bytes())
            return bytes(obs.get_range(self.store, key, start=offset, length=length))
        except Exception as exc:
            if _is_missing(exc):
                return None
            size = self._size(key)  # a range beyond the end, or a real failure?
            if size is None:
                return None
            if offset >= size or size == 0:  # (S3 answers 200 for an empty one)
                return b""
            raise self._error("read", key, exc) from exc

    def _size(self, key: str) -> int | None:
        """The size of the object at ``key`` (None: missing), from a ``HEAD`` request."""
        self._confined(key)
        try:
            return int(self._obs.head(self.store, key)["size"])
        except Exception as exc:
            if _is_missing(exc):
                return None
            raise self._error("head", key, exc) from exc

    def get_ranges(self, key: str, ranges: Sequence[ByteRange]) -> list[bytes | None] | None:
        """The bytes of each of ``ranges`` (offsets and lengths, no suffixes) of the object at
        ``key``, fetched in one ``obstore.get_ranges`` call: ranges closer than ``coalesce``
        bytes share a request, and the requests run concurrently.  None when the object is
        missing; a range reaching past the end is cut short there.

        Parameters
        ----------
        key : str
            The object's key.
        ranges : sequence of ByteRange
            The ranges to read.

        Returns
        -------
        list of bytes, or None

        Examples
        --------
        >>> from obstore.store import MemoryStore
        >>> from zarrkit.storage import ByteRange
        >>> from zarrkit.storage.obstore import ObjectStore
        >>> store = ObjectStore(MemoryStore())
        >>> store['v'] = b'0123456789'
        >>> store.get_ranges('v', [ByteRange(1, 2), ByteRange(7, 3)])
        [b'12', b'789']
        """
        self._confined(validate_key(key))
        if any(r.offset < 0 or r.length is None for r in ranges):
            raise ValueError("get_ranges takes ranges with an offset >= 0 and a length")
        if not ranges:
            return [] if self._size(key) is not None else None
        wanted = [(r.offset, r.length) for r in ranges if r.length]
        try:
            got = self._obs.get_ranges(
                self.store, key, starts=[o for o, _ in wanted], lengths=[n for _, n in wanted],
                coalesce=self.coalesce,
            ) if wanted else []
        except Exception as exc:  # noqa: BLE001 - missing, or a range past the end?
            if _is_missing(exc):
                return None
            return [self.get(key, r) or b"" for r in ranges] if self._size(key) is not None else None
        it = iter(got)
        return [bytes(next(it)) if r.length else b"" for r in ranges]

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes | None]:
        """Read several whole objects at once, ``config.io_threads`` requests in flight.

        Parameters
        ----------
        keys : iterable of str
            The objects' keys.

        Returns
        -------
        dict
            Each key's bytes, or None where no object is stored.

        Examples
        --------
        >>> from obstore.store import MemoryStore
        >>> from zarrkit.storage.obstore import ObjectStore
        >>> store = ObjectStore(MemoryStore())
        >>> store['a'] = b'1'; store['b/c'] = b'2'
        >>> store.get_many(['a', 'b/c', 'nope'])
        {'a': b'1', 'b/c': b'2', 'nope': None}
        """
        keys = [validate_key(k) for k in keys]
        if len(keys) <= 1 or not self.high_latency:
            return {k: self._get(k, None) for k in keys}
        values = _requests(lambda k: self._get(k, None), keys)
        return dict(zip(keys, values))

    def exists(self, key: str) -> bool:
        """Whether an object is stored at ``key`` (a ``HEAD`` request, not a download).

        Parameters
        ----------
        key : str
            The object's key.

        Returns
        -------
        bool
        """
        validate_key(key)
        return self._size(key) is not None

    def getsize(self, key: str) -> int:  # type: ignore[override]  # Store wraps it to take None too
        """Size in bytes of the object at ``key`` (0 if missing), from a ``HEAD`` request.

        Parameters
        ----------
        key : str
            The object's key.

        Returns
        -------
        int
        """
        validate_key(key)
        return self._size(key) or 0

    # -- listing ------------------------------------------------------------------------------
    def _check_listing(self, prefix: str) -> None:
        if not self.supports_listing:
            raise StoreOperationNotSupported(
                f"cannot list {prefix or '/'!r} in {self!r}: obstore lists web servers only "
                "through WebDAV, which plain web servers do not speak; open the data with "
                "consolidated metadata, or with zarrkit.config.set(remote='fsspec') (fsspec "
                "reads the server's HTML index pages)"
            )

    def _list(self, head: str) -> list[dict[str, Any]]:
        self._check_listing(head)
        try:
            found = list(self._obs.list(self.store, head or None).collect())
        except Exception as exc:
            if _is_missing(exc):
                return []
            raise self._error("list", head or "/", exc) from exc
        if self._root_dir is None:
            return found
        kept = set(self._confined.visible(m["path"] for m in found))  # type: ignore[attr-defined]
        return [m for m in found if m["path"] in kept]

    def list_prefix(self, prefix: str) -> Iterator[str]:
        validate_prefix(prefix)
        # obstore's prefixes match whole path segments: list the deepest directory, then filter
        head = prefix.rpartition("/")[0]
        return iter(sorted(m["path"] for m in self._list(head) if m["path"].startswith(prefix)))

    def list_prefix_sizes(self, prefix: str) -> Iterator[tuple[str, int]]:
        validate_prefix(prefix)
        head = prefix.rpartition("/")[0]
        found = ((m["path"], int(m["size"])) for m in self._list(head))
        return iter(sorted(item for item in found if item[0].startswith(prefix)))

    def list_dir(self, prefix: str = "") -> list[str]:
        validate_prefix(prefix)
        p = prefix.strip("/")
        self._check_listing(p)
        try:
            result = self._obs.list_with_delimiter(self.store, p or None)
        except Exception as exc:
            if _is_missing(exc):
                return []
            raise self._error("list", prefix or "/", exc) from exc
        paths = [m["path"] for m in result["objects"]] + list(result["common_prefixes"])
        if self._root_dir is not None:
            paths = self._confined.visible(paths)  # type: ignore[attr-defined]
        return sorted({path.rstrip("/").rpartition("/")[2] for path in paths if path})

    # -- writes -------------------------------------------------------------------------------
    def _set(self, key: str, value: bytes | memoryview) -> None:
        if self._keeps_buffers and not isinstance(value, bytes):
            value = bytes(value)
        self._confined(key, "write")
        try:
            self._obs.put(self.store, key, value)
        except Exception as exc:
            raise self._error("write", key, exc) from exc

    def _delete(self, key: str) -> None:
        self._confined(key, "delete")
        try:
            self._obs.delete(self.store, key)
        except Exception as exc:
            if not _is_missing(exc):
                raise self._error("delete", key, exc) from exc
        self._prune([key])

    def delete_prefix(self, prefix: str) -> None:
        """Remove every key starting with ``prefix`` (bulk deletes where the service has them).

        Parameters
        ----------
        prefix : str
            The keys' common beginning (``''``: everything).
        """
        self._check_writable()
        keys = list(self.list_prefix(prefix))
        if not keys:
            return
        try:
            self._obs.delete(self.store, keys)
        except Exception:  # noqa: BLE001 - e.g. a key deleted meanwhile: one by one
            for key in keys:
                self._delete(key)
        self._prune(keys)

    def _prune(self, keys: list[str]) -> None:
        """Remove the directories below the root that deletes of ``keys`` left empty."""
        if self._root_dir is None:
            return
        dirs = {key.rpartition("/")[0] for key in keys} - {""}
        for d in sorted(dirs, key=lambda d: -d.count("/")):
            while d:
                try:
                    os.rmdir(os.path.join(self._root_dir, d))
                except OSError:  # not empty, or gone
                    break
                d = d.rpartition("/")[0]

    def clear(self) -> None:
        """Remove every key below the root."""
        self.delete_prefix("")

    # -- versions (see obstore_versions) ------------------------------------------------------
    def _get_versioned(self, key: str, limit: int | None) -> tuple[Any, Version]:
        return obstore_versions.get_versioned(self, key, limit)

    def _set_if(self, key: str, value: bytes | memoryview, version: Version) -> Version:
        return obstore_versions.set_if(self, key, value, version)

    def _delete_if(self, key: str, version: Version) -> None:
        obstore_versions.delete_if(self, key, version)

    # -- misc ---------------------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.store == self.store

    def __hash__(self) -> int:
        return object.__hash__(self)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.pop("_obs", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._obs = _import_obstore()

    def __repr__(self) -> str:
        ro = ", read_only=True" if self.read_only and self.supports_writes else ""
        return f"{type(self).__name__}({self.url!r}{ro})"

    def __str__(self) -> str:
        """The store as zarr-python 3 names it in reprs: ``object_store://<obstore store>``."""
        return f"object_store://{self.store}"


class _PinnedObject:
    """One version of an object (see :meth:`ObjectStore.value_version`): the first read
    learns its ETag and size, later ones are made ``If-Match`` that ETag."""

    token = None  # (an ETag is known only from a request: no index is kept by it)

    def __init__(self, store: ObjectStore, key: str):
        self._store = store
        self._key = key
        self._etag: str | None = None
        self.size: int | None = None

    def read(self, offset: int, length: int | None = None, transient: bool = False) -> Any:
        store, key = self._store, self._key
        if length == 0:
            return b""
        if offset < 0:
            options: dict[str, Any] = {"range": {"suffix": -offset}}
        else:
            options = {"range": {"offset": offset} if length is None else (offset, offset + length)}
        if self._etag is not None:
            options["if_match"] = self._etag
        try:
            result = store._obs.get(store.store, key, options=options)
            if self.size is None:
                self.size = int(result.meta["size"])
                self._etag = result.meta.get("e_tag")
            value = result.bytes()
        except Exception as exc:
            if _is_missing(exc) or type(exc).__name__ == "PreconditionError" or _status(exc) == 412:
                return None
            if self.size is None and offset >= 0:  # a range beyond the end of the object?
                return store.get(key, ByteRange(offset, length))
            raise store._error("read", key, exc) from exc
        return memoryview(value) if transient else bytes(value)

    def read_ranges(self, ranges: Sequence[ByteRange]) -> list[Any] | None:
        """Each of ``ranges``, the requests in flight at once (None: the object is gone)."""
        if self._etag is None:  # (a store without ETags: as get_ranges reads them)
            return self._store.get_ranges(self._key, ranges)
        if len(ranges) == 1:
            return [self.read(ranges[0].offset, ranges[0].length)]
        values = _requests(lambda r: self.read(r.offset, r.length), ranges)
        return None if any(v is None for v in values) else values

    def close(self) -> None:
        pass
