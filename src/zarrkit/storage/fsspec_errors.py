"""How :class:`~zarrkit.storage.fsspec.FsspecStore` sorts a failed request of an fsspec file
system: a missing object, a range beyond the end, a transient failure worth a retry, or a
failure to give up on (:func:`classify_error`)."""

from __future__ import annotations

import errno
from collections.abc import Iterator

__all__ = ["classify_error", "http_status", "statuses"]

# outcomes of a failed request
_MISSING = "missing"  # the object is not there: read as None
_RANGE = "range"  # HTTP 416: the object exists, the range starts beyond its end
_TRANSIENT = "transient"  # retry
_FATAL = "fatal"  # give up at once

#: errno values of OSErrors worth a retry (EREMOTEIO: s3fs's translation of InternalError)
_TRANSIENT_ERRNOS = {
    errno.ECONNRESET, errno.ECONNABORTED, errno.ETIMEDOUT, errno.EPIPE, errno.EAGAIN,
    getattr(errno, "EREMOTEIO", 121), errno.ENETRESET, errno.EHOSTUNREACH, errno.ENETUNREACH,
}

#: exception classes (by name, so their packages need not be imported) of transient failures
_TRANSIENT_NAMES = {
    # aiohttp
    "ClientConnectionError", "ClientOSError", "ServerDisconnectedError", "ClientPayloadError",
    "ServerTimeoutError", "ConnectionTimeoutError", "SocketTimeoutError",
    # botocore / aiobotocore
    "HTTPClientError", "EndpointConnectionError", "ConnectionClosedError", "ReadTimeoutError",
    "ConnectTimeoutError", "ResponseStreamingError", "IncompleteReadError",
    "AioReadTimeoutError",
    # requests / urllib3 / http.client
    "ChunkedEncodingError", "ProtocolError", "IncompleteRead", "RemoteDisconnected",
    "NewConnectionError", "Timeout",
    # fsspec
    "FSTimeoutError",
}


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and the exceptions it was raised from (bounded, cycle-safe)."""
    seen: set[int] = set()
    todo: list[BaseException] = [exc]
    while todo and len(seen) < 16:
        e = todo.pop(0)
        if id(e) in seen:
            continue
        seen.add(id(e))
        yield e
        for nxt in (e.__cause__, e.__context__):
            if nxt is not None:
                todo.append(nxt)


def http_status(exc: BaseException) -> int | None:
    """The HTTP status an exception carries (aiohttp, botocore, requests, urllib), if any."""
    for attr in ("status", "status_code", "code"):
        v = getattr(exc, attr, None)
        if isinstance(v, int) and not isinstance(v, bool) and 100 <= v < 600:
            return v
    resp = getattr(exc, "response", None)
    if isinstance(resp, dict):
        v = (resp.get("ResponseMetadata") or {}).get("HTTPStatusCode")
    else:
        v = getattr(resp, "status_code", None) or getattr(resp, "status", None)
    return v if isinstance(v, int) and 100 <= v < 600 else None


def classify_error(exc: BaseException) -> str:
    """Sort a failure of a request: ``'missing'``, ``'range'``, ``'transient'`` or ``'fatal'``.

    Examples
    --------
    >>> from zarrkit.storage.fsspec import classify_error
    >>> classify_error(FileNotFoundError('k')), classify_error(ConnectionResetError())
    ('missing', 'transient')
    >>> classify_error(PermissionError('403 Forbidden'))
    'fatal'
    """
    if isinstance(exc, (FileNotFoundError, IsADirectoryError, NotADirectoryError)):
        return _MISSING
    for e in _chain(exc):
        status = http_status(e)
        if status is not None:
            if status == 404:
                return _MISSING
            if status == 416:
                return _RANGE
            if status >= 500 or status in (408, 429):
                return _TRANSIENT
            if status >= 400:
                return _FATAL
        if isinstance(e, (ConnectionError, TimeoutError)):
            return _TRANSIENT
        if any(cls.__name__ in _TRANSIENT_NAMES for cls in type(e).__mro__):
            return _TRANSIENT
        if isinstance(e, OSError) and e.errno in _TRANSIENT_ERRNOS:
            return _TRANSIENT
        if "InvalidRange" in str(e) and isinstance(e, OSError):
            return _RANGE
    return _FATAL


def statuses(exc: BaseException) -> set[int]:
    """The HTTP statuses ``exc`` and the exceptions it was raised from carry."""
    return {s for s in (http_status(e) for e in _chain(exc)) if s is not None}
