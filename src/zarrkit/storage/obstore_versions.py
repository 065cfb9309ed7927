"""Versions and conditional writes of an :class:`~zarrkit.storage.obstore.ObjectStore`.

A value's version is ``(e_tag, version)`` as obstore's ``ObjectMeta`` and ``PutResult`` give
them: the ETag (S3, Azure, obstore's ``MemoryStore``) and the object version where the service
has one (an S3 version id in a versioned bucket, a GCS generation).  A versioned read takes the
value and its version from one ``GET`` response.

A conditional write is one ``obstore.put`` with ``mode="create"`` (``If-None-Match: *``) or
``mode={"e_tag": ..., "version": ...}`` (``If-Match``, or GCS's generation match): the service
compares and stores in one step, atomic against every other writer on any machine.  obstore
answers a failed condition with ``AlreadyExistsError`` or ``PreconditionError``, raised here as
:class:`~zarrkit.errors.VersionConflictError`.

**Lost responses.**  obstore retries a request whose answer does not arrive (a time-out, a
dropped connection, a 5xx); when the first attempt was stored, the retry fails its condition
against our own write.  Each conditional write therefore carries a random token in the
object's user metadata (``x-amz-meta-zarrkit-write`` on S3); after a failed condition -- or a
write failing for any other reason -- the object's metadata is read (a ``HEAD``), and an
object carrying this write's token is this write: its version is returned as a success.  What
remains: when another writer replaced our write (conditioned on its version) before the retry
was answered, the token is gone and the write reports a conflict, though it was stored and is
the base of the newer value; the caller reads again and merges again, which the engine's
merges (writing a region, setting attributes) survive unchanged.

**Deletes.**  obstore has no conditional delete: :func:`delete_if` compares the version with a
``HEAD`` and then deletes.  A write landing between the two (one round trip) is deleted with
the version it replaced; every other case holds (a changed or missing value is not deleted).
The store says so (``atomic_deletes`` is False), and where another writer's data would go with
such a delete -- an append that lost its race taking back the chunk it created -- the engine
writes the fill value conditionally instead.

Which stores have it: S3 (the default ``conditional_put="etag"``; AWS S3 and the S3-compatible
services honouring ``If-Match``/``If-None-Match`` on ``PUT``), GCS and Azure (object_store
implements ``PutMode::Update`` on generations and ETags there; not tested here) and obstore's
``MemoryStore``.  Not ``LocalStore``: object_store's local files implement create-only puts but
neither ``PutMode::Update`` nor user metadata.  Not ``HTTPStore`` (read-only).
"""

from __future__ import annotations

import re
import secrets
from typing import Any

from ..errors import ChunkDecodeError, VersionConflictError
from .base import ABSENT, Version, oversized

#: the store this module serves (obstore.py, which imports this module: not imported back)
ObjectStore = Any

__all__ = ["CONDITIONAL_CLASSES", "TAG", "delete_if", "get_versioned", "is_missing", "set_if", "status_of"]

#: obstore store classes whose puts take ``mode="create"`` and ``UpdateVersion`` and user metadata
CONDITIONAL_CLASSES = ("S3Store", "GCSStore", "AzureStore", "MemoryStore")

#: the user-metadata field carrying a conditional write's token
TAG = "zarrkit-write"

_CONFLICTS = ("AlreadyExistsError", "PreconditionError")

_STATUS = re.compile(r"status(?: code)?:? (\d{3})\b")

#: what local files answer for a key below a file, or naming a directory: no such object
_NOT_A_FILE = ("(os error 20)", "(os error 21)")


def status_of(exc: BaseException) -> int | None:
    """The HTTP status an obstore error reports in its message, if any."""
    m = _STATUS.search(str(exc))
    return int(m.group(1)) if m else None


def is_missing(exc: BaseException) -> bool:
    """Whether an obstore error says there is no such object."""
    if isinstance(exc, (FileNotFoundError, NotADirectoryError, IsADirectoryError)):
        return True
    return status_of(exc) == 404 or any(m in str(exc) for m in _NOT_A_FILE)


def _is_conflict(exc: BaseException) -> bool:
    return type(exc).__name__ in _CONFLICTS or status_of(exc) in (409, 412)


def _version_of(meta: Any) -> Version:
    return (meta.get("e_tag"), meta.get("version"))


def get_versioned(store: ObjectStore, key: str, limit: int | None) -> tuple[Any, Version]:
    """The object at ``key`` and its version, from one ``GET`` (``(None, ABSENT)``: none)."""
    try:
        result = store._obs.get(store.store, key)
        meta = result.meta
        if limit is not None and meta["size"] > limit:
            raise oversized(key, meta["size"], limit)
        value = result.bytes()
    except ChunkDecodeError:
        raise
    except Exception as exc:
        if is_missing(exc):
            return None, ABSENT
        raise store._error("read", key, exc) from exc
    return memoryview(value), _version_of(meta)


def _current(store: ObjectStore, key: str) -> tuple[Version, str | None]:
    """The version of the object at ``key`` now and its write token (``ABSENT``: none), from
    a ``HEAD`` (a ``GET`` with ``head``: obstore's ``head`` has no user metadata)."""
    try:
        result = store._obs.get(store.store, key, options={"head": True})
    except Exception as exc:
        if is_missing(exc):
            return ABSENT, None
        raise store._error("head", key, exc) from exc
    return _version_of(result.meta), result.attributes.get(TAG)


def _mode(key: str, version: Version) -> Any:
    if version is ABSENT:
        return "create"
    if not (isinstance(version, tuple) and len(version) == 2):
        raise VersionConflictError(f"expected a version this store gave, got {version!r}", key)
    e_tag, object_version = version
    mode = {name: v for name, v in (("e_tag", e_tag), ("version", object_version)) if v is not None}
    if not mode:  # (a service that gives neither: nothing to condition on)
        raise VersionConflictError("the stored object has no ETag or version to condition on", key)
    return mode


def set_if(store: ObjectStore, key: str, value: Any, version: Version) -> Version:
    """Store ``value`` at ``key`` while its version is ``version`` (see the module)."""
    mode = _mode(key, version)
    token = secrets.token_hex(16)
    if store._keeps_buffers and not isinstance(value, bytes):
        value = bytes(value)
    try:
        result = store._obs.put(store.store, key, value, mode=mode, attributes={TAG: token})
    except Exception as exc:
        try:
            now, tag = _current(store, key)
        except Exception:  # noqa: BLE001 - the write's own failure says more
            now, tag = ABSENT, None
        if tag == token:  # our write, answered after its answer was lost
            return now
        if _is_conflict(exc) or (version is not ABSENT and is_missing(exc)):  # (404: gone)
            raise VersionConflictError(
                f"expected version {version!r}, found {now!r}: the value was changed by another writer", key
            ) from None
        raise store._error("conditional write", key, exc) from exc
    return (result.get("e_tag"), result.get("version"))


def delete_if(store: ObjectStore, key: str, version: Version) -> None:
    """Remove ``key`` while its version is ``version`` (a ``HEAD``, then a ``DELETE``: see the
    module for the window between them)."""
    now, _ = _current(store, key)
    if now != version:
        raise VersionConflictError(
            f"expected version {version!r}, found {now!r}: the value was changed by another writer", key
        )
    if version is not ABSENT:
        store._delete(key)
