"""Versions, conditional writes and pinned reads of an :class:`~zarrkit.storage.fsspec.FsspecStore`
on S3 (s3fs).

A value's version is ``(ETag, VersionId)`` (the version id only in a versioned bucket), taken
with the value from one ``GetObject`` response.  Through s3fs's ``call_s3`` (botocore's
operations, with s3fs's session, credentials and error translation):

* :func:`set_if` is one ``PutObject`` with ``IfNoneMatch='*'`` (create) or ``IfMatch=<ETag>``
  (replace): S3 compares and stores in one step, atomic against every other writer on any
  machine.  A failed condition (412, or 409 for a concurrent conditional write) raises
  :class:`~zarrkit.errors.VersionConflictError`.
* **Lost responses**: botocore, s3fs and the store each retry a request whose answer was lost
  (a dropped connection, a time-out, a 5xx), and a retry of a stored conditional write fails
  its condition against itself.  Each write carries a random token in its user metadata
  (``x-amz-meta-zarrkit-write``, the field :mod:`~zarrkit.storage.obstore_versions` uses too);
  after a failed condition or any other failure, a ``HeadObject`` finding this write's token
  means the write is stored, and its version is returned.  What remains: another writer
  replacing our write (conditioned on its version) before the retry is answered leaves no token
  to find, and the write reports a conflict although it was stored; the caller reads again
  and merges again, which the engine's merges survive unchanged.
* :func:`delete_if` compares the version with a ``HeadObject``, then deletes with
  ``IfMatch=<ETag>``: atomic where the service honours ``If-Match`` on ``DeleteObject`` (AWS
  S3 since September 2025, moto).  A service ignoring it deletes unconditionally, and a write
  landing between the ``HEAD`` and the ``DELETE`` is then deleted with the version it replaced.
  A delete whose answer was lost is retried into a missing key and reports a conflict (the
  caller reads again and finds the key gone).
* :class:`PinnedObject` (``FsspecStore.value_version``): the reads of a shard (its index, then
  its inner chunks) are ranged ``GetObject`` calls, every one after the first made
  ``IfMatch`` the ETag the first answered with; a 412 means that version is gone, and the
  shard reader reads the shard again, so no read mixes two versions of a shard.

Services that ignore ``If-None-Match``/``If-Match`` on ``PUT`` (AWS S3 before August and
November 2024 respectively, some S3-compatible servers) would store unconditionally: use the
store there only with a synchronizer, or set ``supports_conditional_writes = False`` on it.
"""

from __future__ import annotations

import asyncio
import re
import secrets
import time
from collections.abc import Sequence
from typing import Any

from ..errors import StoreError, VersionConflictError
from .base import ABSENT, ByteRange, Version, oversized
from .fsspec_errors import _MISSING, _TRANSIENT, classify_error, statuses

#: the store this module serves (fsspec.py, which imports this module: not imported back)
FsspecStore = Any

__all__ = ["PinnedObject", "TAG", "delete_if", "get_versioned", "is_s3", "set_if"]

#: the user-metadata field carrying a conditional write's token (as obstore_versions.TAG)
TAG = "zarrkit-write"

_CONTENT_RANGE = re.compile(r"bytes \d+-\d+/(\d+)")

_GONE = object()  # (a read answered 412 or 404: that version of the object is gone)
_TOO_BIG = object()


def is_s3(fs: Any, protocols: Sequence[str]) -> bool:
    """Whether ``fs`` is s3fs's file system (its ``call_s3`` reaches botocore's operations)."""
    return "s3" in protocols and callable(getattr(fs, "_call_s3", None)) and hasattr(fs, "split_path")


def _status_in(exc: BaseException, wanted: tuple[int, ...]) -> bool:
    return bool(statuses(exc) & set(wanted))


def _is_conflict(exc: BaseException) -> bool:
    return isinstance(exc, FileExistsError) or _status_in(exc, (409, 412))


def _split(store: FsspecStore, key: str) -> tuple[str, str]:
    bucket, name, _ = store.fs.split_path(store._path(key))
    return bucket, name


def _run(store: FsspecStore, fn: Any, *args: Any) -> Any:
    from fsspec.asyn import sync

    return sync(store.fs.loop, fn, *args)


async def _get_object(fs: Any, bucket: str, name: str, limit: int | None, kw: dict[str, Any]) -> Any:
    """``(body, response)`` of one ``GetObject``; ``_GONE`` for a 412 or 404 when ``kw`` has a
    condition; the body is ``_TOO_BIG`` (unread) past ``limit`` bytes."""
    try:
        resp = await fs._call_s3("get_object", Bucket=bucket, Key=name, **kw)
    except Exception as exc:
        if "IfMatch" in kw and (_status_in(exc, (404, 412)) or isinstance(exc, FileNotFoundError)):
            return _GONE
        raise
    try:
        if limit is not None and int(resp.get("ContentLength") or 0) > limit:
            return _TOO_BIG, resp
        return await resp["Body"].read(), resp
    finally:
        resp["Body"].close()


def _version(resp: dict[str, Any]) -> Version:
    return (resp.get("ETag"), resp.get("VersionId"))


def get_versioned(store: FsspecStore, key: str, limit: int | None) -> tuple[bytes | None, Version]:
    """The object at ``key`` and its version, from one ``GetObject`` (``(None, ABSENT)``: none)."""
    bucket, name = _split(store, key)
    got = store._call("read", key, lambda: _run(store, _get_object, store.fs, bucket, name, limit, {}),
                      missing=None)
    if got is None:
        return None, ABSENT
    body, resp = got
    if body is _TOO_BIG:
        raise oversized(key, int(resp["ContentLength"]), limit or 0)
    return bytes(body), _version(resp)


def _current(store: FsspecStore, key: str) -> tuple[Version, str | None]:
    """The version of the object at ``key`` now and its write token (``ABSENT``: none)."""
    bucket, name = _split(store, key)

    def head() -> tuple[Version, str | None]:
        resp = store.fs.call_s3("head_object", Bucket=bucket, Key=name)
        return _version(resp), (resp.get("Metadata") or {}).get(TAG)

    return store._call("head", key, head, missing=(ABSENT, None))  # type: ignore[no-any-return]


def _etag(key: str, version: Version) -> str:
    if not (isinstance(version, tuple) and len(version) == 2 and isinstance(version[0], str)):
        raise VersionConflictError(f"expected a version this store gave, got {version!r}", key)
    return version[0]


def _conflict(key: str, version: Version, now: Version) -> VersionConflictError:
    return VersionConflictError(
        f"expected version {version!r}, found {now!r}: the value was changed by another writer", key
    )


def set_if(store: FsspecStore, key: str, value: bytes | memoryview, version: Version) -> Version:
    """Store ``value`` at ``key`` while its version is ``version`` (see the module)."""
    condition = {"IfNoneMatch": "*"} if version is ABSENT else {"IfMatch": _etag(key, version)}
    bucket, name = _split(store, key)
    data = value if isinstance(value, bytes) else bytes(value)
    token = secrets.token_hex(16)
    attempt = 0
    while True:
        try:
            resp = store.fs.call_s3("put_object", Bucket=bucket, Key=name, Body=data,
                                    Metadata={TAG: token}, **condition)
            break
        except Exception as exc:
            # (IfMatch on a missing key: 404, the key is gone)
            conflict = _is_conflict(exc) or (version is not ABSENT and classify_error(exc) == _MISSING)
            if not conflict and classify_error(exc) == _TRANSIENT and attempt < store.retries:
                time.sleep(store._delay(attempt))  # (a retry of a stored write: found below)
                attempt += 1
                continue
            try:
                now, tag = _current(store, key)
            except StoreError:
                now, tag = ABSENT, None
            if tag == token:  # our write: its answer was lost, a retry failed against it
                store.fs.invalidate_cache(store._path(key))
                return now
            if conflict:
                raise _conflict(key, version, now) from None
            raise StoreError(
                f"conditional write of key {key!r} ({store._url(key)}) failed: {type(exc).__name__}: {exc}"
            ) from exc
    store.fs.invalidate_cache(store._path(key))
    return _version(resp)


def delete_if(store: FsspecStore, key: str, version: Version) -> None:
    """Remove ``key`` while its version is ``version`` (see the module)."""
    now, _ = _current(store, key)
    if now != version:
        raise _conflict(key, version, now)
    if version is ABSENT:
        return
    bucket, name = _split(store, key)
    etag = _etag(key, version)
    try:
        store._call("delete", key, lambda: store.fs.call_s3(
            "delete_object", Bucket=bucket, Key=name, IfMatch=etag))
    except StoreError as exc:
        cause = exc.__cause__
        if cause is not None and (_is_conflict(cause) or _status_in(cause, (404,))):
            raise _conflict(key, version, _current(store, key)[0]) from None
        raise
    finally:
        store.fs.invalidate_cache(store._path(key))


def _range(offset: int, length: int | None) -> str:
    if offset < 0:
        return f"bytes={offset}"
    return f"bytes={offset}-" if length is None else f"bytes={offset}-{offset + length - 1}"


class PinnedObject:
    """One version of an S3 object (see :meth:`FsspecStore.value_version`): the first read
    learns its ETag and size, every later one is made ``IfMatch`` that ETag."""

    token = None  # (an ETag is known only from a request: no index is kept by it)

    def __init__(self, store: FsspecStore, key: str):
        self._store = store
        self._key = key
        self._where = _split(store, key)
        self._etag: str | None = None
        self.size: int | None = None

    async def _read(self, offset: int, length: int | None) -> Any:
        kw: dict[str, Any] = {"Range": _range(offset, length)}
        if self._etag is not None:
            kw["IfMatch"] = self._etag
        got = await _get_object(self._store.fs, *self._where, None, kw)
        if got is _GONE:
            return None
        body, resp = got
        if self._etag is None:
            self._etag = resp.get("ETag")
            m = _CONTENT_RANGE.match(resp.get("ContentRange") or "")
            self.size = int(m.group(1)) if m else int(resp.get("ContentLength") or len(body))
        if length is not None and len(body) > length:  # the server ignored the range
            body = body[offset:offset + length] if offset >= 0 else body
        return bytes(body)

    def _call(self, fn: Any, *args: Any) -> Any:
        store = self._store
        first = self._etag is None
        got = store._call("read", self._key, lambda: _run(store, fn, *args), missing=None,
                          out_of_range=b"")
        if got == b"" and first and self._etag is None and args and args[0] >= 0:
            # a range beyond the end (416) on the first read: as a plain read tells it
            return store.get(self._key, ByteRange(args[0], args[1]))
        return got

    def read(self, offset: int, length: int | None = None, transient: bool = False) -> Any:
        if length == 0:
            return b""
        return self._call(self._read, offset, length)

    async def _read_all(self, ranges: Sequence[ByteRange]) -> list[Any]:
        return list(await asyncio.gather(*(self._read(r.offset, r.length) for r in ranges)))

    def read_ranges(self, ranges: Sequence[ByteRange]) -> list[Any] | None:
        """Each of ``ranges`` of this version, the requests in flight at once (None: gone)."""
        ranges = list(ranges)
        if not ranges:
            return []
        if self._etag is None:  # the first read learns the version the others are made on
            head = self.read(ranges[0].offset, ranges[0].length)
            if head is None:
                return None
            rest = self.read_ranges(ranges[1:]) if len(ranges) > 1 else []
            return None if rest is None else [head, *rest]
        values = self._call(self._read_all, [r for r in ranges if r.length != 0])
        if values is None or any(v is None for v in values):
            return None
        it = iter(values)
        return [b"" if r.length == 0 else next(it) for r in ranges]

    def close(self) -> None:
        pass
