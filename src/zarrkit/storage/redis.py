"""A store in a Redis server (the optional ``redis`` package: ``pip install 'zarrkit[redis]'``)."""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from ..config import config
from ..errors import StoreError
from ._kvutil import glob_escape, new_token, version_conflict
from .base import (
    ABSENT,
    ByteRange,
    Store,
    Version,
    ensure_bytes_like,
    oversized,
    validate_key,
    validate_prefix,
)
from .extras import missing_extra
from .memory import HeldValue

__all__ = ["RedisStore"]

#: Keys per MGET / DEL command and the COUNT hint of SCAN.
_BATCH = 1000

#: How long the server remembers that a conditional write was made (milliseconds): longer than
#: the client's resending of a command whose answer was lost may take (redis-py's default:
#: 10 retries, backoff capped at 10 s, 5 s socket timeouts).
TAG_TTL_MS = 300_000
#: The Redis key prefix of those memories (one key per conditional write, ``<prefix><token>``,
#: outside every store's namespace; each expires after :data:`TAG_TTL_MS`).
TAG_PREFIX = b"zarrkit-conditional-write:"

#: The Redis key prefix of the hashes of write tokens (see
#: :func:`~zarrkit.storage._kvutil.token_version`): ``<prefix><first part>``, outside every
#: store's namespace, a field per key holding the token of the write that stored it (the
#: first ``:``-separated part of the Redis key names the hash, the rest is the field: stores
#: of nested prefixes, ``p`` and ``p:a``, keep one token per Redis key).
TOKENS_PREFIX = b"zarrkit-versions:"

#: The conditional write, run by the server as one atomic step.  KEYS = the value's key, the
#: write's tag, the tokens' hash; ARGV = expected length ('' for none), expected SHA-1 (hex),
#: '1' to store ARGV[4] (else delete), the tag's lifetime (ms), the key's field in the hash,
#: its expected token ('' for none), the new token.  Returns 1 when done (or done already:
#: the tag is there, this is the command sent again after its answer was lost), 0 when no
#: value was there, 2 when another one was (a conflict: nothing written).
_CONDITIONAL = """
if redis.call('EXISTS', KEYS[2]) == 1 then return 1 end
local cur = redis.call('GET', KEYS[1])
if ARGV[1] == '' then
  if cur then return 2 end
else
  if not cur then return 0 end
  if string.len(cur) ~= tonumber(ARGV[1]) or redis.sha1hex(cur) ~= ARGV[2] then return 2 end
  if (redis.call('HGET', KEYS[3], ARGV[6]) or '') ~= ARGV[7] then return 2 end
end
if ARGV[3] == '1' then
  redis.call('SET', KEYS[1], ARGV[4])
  redis.call('HSET', KEYS[3], ARGV[6], ARGV[8])
elseif cur then
  redis.call('DEL', KEYS[1])
  redis.call('HDEL', KEYS[3], ARGV[6])
end
redis.call('SET', KEYS[2], '1', 'PX', ARGV[5])
return 1
"""


#: A read of at most ARGV[1] bytes ('': any size) and of its token (KEYS[2], the tokens' hash;
#: ARGV[2], the key's field): {} when missing, {size} when larger, else {size, value, token}.
_LIMITED_READ = """
local n = redis.call('STRLEN', KEYS[1])
if ARGV[1] ~= '' and n > tonumber(ARGV[1]) then return {n} end
local v = redis.call('GET', KEYS[1])
if not v then return {} end
return {n, v, redis.call('HGET', KEYS[2], ARGV[2]) or ''}
"""


#: The first read of a held version (see RedisStore.value_version).  KEYS = the value's key;
#: ARGV = GETRANGE's start and end, the largest size read whole.  Returns {} when missing,
#: {size, the range} or {size, the whole value, 1}.
_FIRST_READ = """
local n = redis.call('STRLEN', KEYS[1])
if n == 0 and redis.call('EXISTS', KEYS[1]) == 0 then return {} end
if n <= tonumber(ARGV[3]) then return {n, redis.call('GET', KEYS[1]), 1} end
return {n, redis.call('GETRANGE', KEYS[1], ARGV[1], ARGV[2])}
"""

#: The check of a later read of a held version, run with its GETRANGEs in one MULTI/EXEC.
#: KEYS = the value's key; ARGV = its size, then for each earlier read its GETRANGE start, end
#: and the SHA-1 (hex) of its bytes.  Returns 1 when the value is still the one read, else 0.
_UNCHANGED = """
if redis.call('STRLEN', KEYS[1]) ~= tonumber(ARGV[1]) then return 0 end
for b = 2, #ARGV, 3 do
  if redis.sha1hex(redis.call('GETRANGE', KEYS[1], ARGV[b], ARGV[b + 1])) ~= ARGV[b + 2] then
    return 0
  end
end
return 1
"""

#: A held value this small is read whole by its first read (one round trip, then none): less
#: than a round trip costs on any network where ranges matter.
WHOLE_READ_BYTES = 256 * 1024


def _version(value: Any) -> tuple[int, str]:
    """A value's version: its length and SHA-1 (the digest the server's scripts can compute)."""
    return len(value), hashlib.sha1(value).hexdigest()


def _import_redis() -> Any:
    try:
        import redis
    except ImportError as exc:
        raise missing_extra("RedisStore", "redis", "redis") from exc
    return redis


class RedisStore(Store):
    """Keys and values as strings in a Redis database, namespaced under ``prefix``.

    The store's key ``k`` is the Redis key ``'{prefix}:{k}'`` (as in zarr-python 2's
    ``RedisStore``), so several stores share a database.  Partial reads use ``GETRANGE`` (only
    the requested bytes travel), batch reads ``MGET``, sizes ``STRLEN`` and listings ``SCAN``
    with a ``MATCH`` pattern (glob characters of the prefix are escaped).  The client (a
    connection pool) is safe to share between threads.  Nothing is sent until the first
    operation.

    **Versions and conditional writes.**  Every write of this store also stores a new random
    token for its key, in the same transaction, in a hash outside every store's namespace
    (``zarrkit-versions:<prefix>``, or for a prefix ``p:q`` the fields ``q:<key>`` of
    ``zarrkit-versions:p``); a value's version is its token with its content, its
    length and SHA-1 digest (see :func:`~zarrkit.storage._kvutil.token_version`).  A value
    written again, equal bytes included, is a new version; a client writing the key plainly
    (zarr-python, ``redis-cli``, another program) makes another one by writing other bytes.
    :meth:`set_if` and :meth:`delete_if` are one Lua script (``EVALSHA``, one round
    trip) that the server runs atomically: it reads the value, compares length and digest,
    and writes or deletes, with no other command of any client -- on any machine -- in
    between.  Each conditional write carries a random tag, which the script remembers for
    five minutes (a key ``zarrkit-conditional-write:<tag>`` outside every store's namespace,
    expiring by itself): when the answer is lost (the connection breaks after the server ran
    the script) and the client sends the command again, the script finds its tag and answers
    success, not a conflict with its own write.

    Parameters
    ----------
    prefix : str, default 'zarr'
        Namespace of this store's keys in the database (not ``zarrkit-versions`` or
        ``zarrkit-conditional-write``, nor below them: those hold every store's write tokens
        and tags).
    url : str, optional
        ``redis://[[user]:password@]host:port/db`` (or ``rediss://``, ``unix://``); without
        it ``redis_kwargs`` (``host``, ``port``, ``db``, ...) say where the server is.
    read_only : bool, default False
        Refuse every write (keyword only).
    **redis_kwargs
        Passed to :class:`redis.Redis` (or :meth:`redis.Redis.from_url`).

    Raises
    ------
    ImportError
        The ``redis`` package is not installed (``pip install 'zarrkit[redis]'``).
    zarrkit.errors.StoreError
        The server cannot be reached or a command fails; the message names the server and
        the key.

    Examples
    --------
    With a Redis server listening on localhost:

    >>> import zarrkit
    >>> from zarrkit.storage.redis import RedisStore
    >>> store = RedisStore(prefix='example', url='redis://localhost:6379/0')
    >>> store
    RedisStore(prefix='example', url='redis://localhost:6379/0')
    >>> z = zarrkit.zeros((4, 4), chunks=(2, 2), dtype='i4', store=store)  # doctest: +SKIP
    >>> z[:] = 1  # doctest: +SKIP
    >>> sorted(store)  # doctest: +SKIP
    ['c/0/0', 'c/0/1', 'c/1/0', 'c/1/1', 'zarr.json']
    >>> store.close()
    """

    supports_partial_reads = True
    #: every operation is a network round trip: keep many in flight
    high_latency = True

    def __init__(
        self,
        prefix: str = "zarr",
        url: str | None = None,
        *,
        read_only: bool = False,
        **redis_kwargs: Any,
    ) -> None:
        redis = _import_redis()
        if not isinstance(prefix, str):
            raise TypeError(f"RedisStore prefix must be a str, got {type(prefix).__name__}")
        for reserved in (TOKENS_PREFIX, TAG_PREFIX):
            if (prefix + ":").encode("utf-8").startswith(reserved):
                # its keys would be the write tokens or tags of stores: listed, cleared, overwritten
                raise ValueError(
                    f"RedisStore prefix {prefix!r} is reserved: the keys {reserved.decode()}* "
                    "hold the write tokens (or the conditional writes' tags) of every store"
                )
        if redis_kwargs.get("decode_responses"):
            raise ValueError("RedisStore needs decode_responses=False (values are bytes)")
        self._redis = redis
        self.prefix = prefix
        self.url = url
        self.read_only: bool = bool(read_only)
        self.redis_kwargs: dict[str, Any] = dict(redis_kwargs)
        self._closed = False
        self._lock = threading.Lock()
        try:
            if url is not None:
                self.client = redis.Redis.from_url(url, **redis_kwargs)
            else:
                self.client = redis.Redis(**redis_kwargs)
        except (ValueError, redis.RedisError) as exc:
            raise StoreError(f"cannot create a Redis client for {self._where()}: {exc}") from None
        self._head = prefix + ":"
        self._raw_head = self._head.encode("utf-8")
        # the tokens' hash is named by the Redis key's first ':'-separated part, and a field
        # is the rest: the stores of nested prefixes ('p', 'p:a') reach a Redis key by the
        # same field, so a write through either renews the token the other reads
        root, nested, below = prefix.partition(":")
        self._tokens = TOKENS_PREFIX + root.encode("utf-8")
        self._field_head = (below + ":").encode("utf-8") if nested else b""
        # (the scripts are sent on first use)
        self._script = self.client.register_script(_CONDITIONAL)
        self._limited = self.client.register_script(_LIMITED_READ)
        self._first_read = self.client.register_script(_FIRST_READ)
        #: keys whose held version was replaced before a read of it (see value_version)
        self._lost: set[str] = set()

    # -- helpers ------------------------------------------------------------------------------
    def _where(self) -> str:
        if self.url is not None:
            return self.url
        kw = self.redis_kwargs
        if kw.get("unix_socket_path"):
            return f"unix://{kw['unix_socket_path']}"
        return f"redis://{kw.get('host', 'localhost')}:{kw.get('port', 6379)}/{kw.get('db', 0)}"

    def _key(self, key: str) -> bytes:
        return self._raw_head + key.encode("utf-8")

    def _field(self, key: str) -> bytes:
        """The field of ``key``'s token in the tokens' hash."""
        return self._field_head + key.encode("utf-8")

    @contextmanager
    def _op(self, what: str) -> Iterator[Any]:
        if self._closed:
            raise StoreError(f"RedisStore(prefix={self.prefix!r}) at {self._where()} is closed")
        try:
            yield self.client
        except self._redis.RedisError as exc:
            raise StoreError(
                f"Redis {what} (prefix {self.prefix!r}) at {self._where()} failed: "
                f"{type(exc).__name__}: {exc}"
            ) from None

    # -- contract -----------------------------------------------------------------------------
    def _get(self, key: str, byte_range: ByteRange | None) -> bytes | None:
        rkey = self._key(key)
        with self._op(f"read of {key!r}") as client:
            if byte_range is None:
                value = client.get(rkey)
                return None if value is None else bytes(value)
            if byte_range.length == 0:
                return b"" if client.exists(rkey) else None
            if byte_range.offset < 0 or byte_range.length is None:
                start, end = byte_range.offset, -1
            else:
                start, end = byte_range.offset, byte_range.offset + byte_range.length - 1
            # GETRANGE cannot tell a missing key from an empty one: EXISTS in the same MULTI
            pipe = client.pipeline(transaction=True)
            pipe.exists(rkey)
            pipe.getrange(rkey, start, end)
            exists, value = pipe.execute()
        if not exists:
            return None
        return bytes(value)  # GETRANGE clamps out-of-range offsets (b'' past the end)

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes | None]:
        """Return ``{key: value or None}`` with one ``MGET`` per 1000 keys.

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
        out: dict[str, bytes | None] = dict.fromkeys(keys)
        unique = list(out)
        with self._op(f"read of {len(unique)} keys") as client:
            for i in range(0, len(unique), _BATCH):
                batch = unique[i:i + _BATCH]
                for k, v in zip(batch, client.mget([self._key(k) for k in batch])):
                    out[k] = None if v is None else bytes(v)
        return out

    @staticmethod
    def _new_token() -> bytes:
        return new_token().hex().encode()

    def _set(self, key: str, value: bytes | memoryview) -> None:
        with self._op(f"write of {key!r}") as client:
            pipe = client.pipeline(transaction=True)
            pipe.set(self._key(key), bytes(value))
            pipe.hset(self._tokens, self._field(key), self._new_token())
            pipe.execute()

    def set_many(self, items: Mapping[str, Any]) -> None:
        """Store several values with one ``MSET`` (atomic: all or none are written).

        Parameters
        ----------
        items : mapping of str to bytes-like
            The values by key.
        """
        self._check_writable()
        mapping = {self._key(validate_key(k)): bytes(ensure_bytes_like(v, k))
                   for k, v in items.items()}
        if mapping:
            n = len(self._raw_head)
            with self._op(f"write of {len(mapping)} keys") as client:
                pipe = client.pipeline(transaction=True)
                pipe.mset(mapping)
                pipe.hset(self._tokens, mapping={self._field_head + k[n:]: self._new_token() for k in mapping})
                pipe.execute()

    def _delete(self, key: str) -> None:
        with self._op(f"delete of {key!r}") as client:
            pipe = client.pipeline(transaction=True)
            pipe.delete(self._key(key))
            pipe.hdel(self._tokens, self._field(key))
            pipe.execute()

    # -- versions and conditional writes (see the class's text) ------------------------------
    supports_conditional_writes = True

    def _whole(self, key: str, limit: int | None) -> tuple[bytes | None, bytes]:
        """The value at ``key`` and its token (b'': none), read whole by one script (one
        version of it: the server runs each command, and each script, alone), refused unsent
        when larger than ``limit``; None when missing."""
        with self._op(f"read of {key!r}") as client:
            # the size first, in the same script: an oversized value is not sent
            found = self._limited(keys=[self._key(key), self._tokens],
                                  args=["" if limit is None else limit, self._field(key)], client=client)
        if not found:
            return None, b""
        if len(found) == 1:
            raise oversized(key, int(found[0]), limit or 0)
        return bytes(found[1]), bytes(found[2])

    def _get_versioned(self, key: str, limit: int | None) -> tuple[bytes | None, Version]:
        value, token = self._whole(key, limit)
        return (None, ABSENT) if value is None else (value, (token, *_version(value)))

    def value_version(self, key: str) -> _HeldRanges | HeldValue | None:
        """The value at ``key`` as it is now, held for reading several of its ranges (a
        shard's index, then its inner chunks) from that one version, whatever is written
        there meanwhile; None when it is missing.

        The first read (a shard's index) is one script that also gives the value's size, and
        reads the whole value when it holds at most :data:`WHOLE_READ_BYTES` (later reads
        then take no round trip).  Each later read is one script that reads its ranges only
        when the size and the bytes of every earlier read (their SHA-1, computed by the
        server) are still those read: the server runs a script alone, so everything read is
        the value as it is at that moment, one version.  When they changed, the read answers
        None (that version is gone, and the shard is read again); the next
        ``value_version`` of the key then reads it whole, by one script, which no writer can
        come between.  Only the bytes asked for travel, and a shard's index and its chunks
        take two round trips, one each.

        Parameters
        ----------
        key : str
            The key.

        Returns
        -------
        object
            With ``size`` (known after the first read), ``read(offset, length=None)`` (None:
            missing, or its version gone), ``read_ranges(ranges)`` and ``close()``; its
            ``token`` is None (nothing tells cheaply that the value changed).
        """
        key = self._checked(key)
        if key in self._lost:  # a version of it was lost to a writer just now: read it whole
            self._lost.discard(key)
            value, _ = self._whole(key, config.max_chunk_bytes)
            return None if value is None else HeldValue(value)
        return _HeldRanges(self, key)

    def _conditional(self, key: str, version: Version, value: bytes | None) -> bytes:
        """The conditional write (see :data:`_CONDITIONAL`); the new token."""
        if version is ABSENT:
            token, size, digest = b"", "", ""
        elif isinstance(version, tuple) and len(version) == 3:
            token, size, digest = version[0], str(version[1]), str(version[2])
        else:  # not a version of this store: no value has it
            token, size, digest = b"", "-1", ""
        tag = TAG_PREFIX + os.urandom(16).hex().encode()
        new = self._new_token()
        with self._op(f"conditional write of {key!r}") as client:
            # (the client sends the same command, tag included, again when its answer is lost)
            done = self._script(
                keys=[self._key(key), tag, self._tokens],
                args=[size, digest, "0" if value is None else "1",
                      b"" if value is None else value, TAG_TTL_MS, self._field(key), token, new],
                client=client,
            )
        if done != 1:
            raise version_conflict(key, None if done == 0 else b"", version)
        return new

    def _set_if(self, key: str, value: bytes | memoryview, version: Version) -> Version:
        new = bytes(value)
        return (self._conditional(key, version, new), *_version(new))

    def _delete_if(self, key: str, version: Version) -> None:
        self._conditional(key, version, None)

    def exists(self, key: str) -> bool:
        validate_key(key)
        with self._op(f"lookup of {key!r}") as client:
            return bool(client.exists(self._key(key)))

    def getsize(self, key: str) -> int:  # type: ignore[override]  # Store wraps it to take None too
        """Size in bytes of the value at ``key`` (0 if missing), by ``STRLEN``.

        Parameters
        ----------
        key : str
            The key (one holding no value: the total of the values directly below it).

        Returns
        -------
        int
        """
        validate_key(key)
        with self._op(f"size of {key!r}") as client:
            return int(client.strlen(self._key(key)))

    def _scan(self, prefix: str) -> list[bytes]:
        pattern = glob_escape(self._head + prefix) + "*"
        with self._op(f"listing of prefix {prefix!r}") as client:
            # SCAN may return a key twice: deduplicate
            return sorted(set(client.scan_iter(match=pattern, count=_BATCH)))

    def list_prefix(self, prefix: str) -> Iterator[str]:
        validate_prefix(prefix)
        n = len(self._raw_head)
        return iter([k[n:].decode("utf-8") for k in self._scan(prefix)])

    def delete_prefix(self, prefix: str) -> None:
        self._check_writable()
        validate_prefix(prefix)
        keys = self._scan(prefix)
        with self._op(f"delete of prefix {prefix!r}") as client:
            n = len(self._raw_head)
            for i in range(0, len(keys), _BATCH):
                batch = keys[i:i + _BATCH]
                pipe = client.pipeline(transaction=True)
                pipe.delete(*batch)
                pipe.hdel(self._tokens, *(self._field_head + k[n:] for k in batch))
                pipe.execute()

    def clear(self) -> None:
        """Remove every key of this store (keys of other prefixes stay)."""
        self.delete_prefix("")

    def __len__(self) -> int:
        return len(self._scan(""))

    def close(self) -> None:
        """Close the client's connections (closing twice is fine)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        try:
            self.client.close()
        except self._redis.RedisError:
            pass

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is type(self)
            and other.prefix == self.prefix
            and other._where() == self._where()
        )

    def __hash__(self) -> int:
        return object.__hash__(self)

    def __repr__(self) -> str:
        mode = ", read_only=True" if self.read_only else ""
        return f"{type(self).__name__}(prefix={self.prefix!r}, url={self._where()!r}{mode})"

    # -- pickling: where the server is, reconnected -------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        return {
            "prefix": self.prefix, "url": self.url, "read_only": self.read_only,
            "redis_kwargs": self.redis_kwargs,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        type(self).__init__(self, state["prefix"], state["url"], read_only=state["read_only"],
                                  **state["redis_kwargs"])


def _getrange(offset: int, length: int | None) -> tuple[int, int]:
    """GETRANGE's start and end (inclusive; negative: from the end) of a range."""
    if length == 0:
        return 1, 0  # (start after end: no bytes)
    if offset < 0 or length is None:
        return offset, -1
    return offset, offset + length - 1


class _HeldRanges:
    """One version of a Redis value (see :meth:`RedisStore.value_version`): the first read
    learns its size, each later one is made only while the bytes read before are unchanged."""

    __slots__ = ("_checks", "_key", "_store", "_whole", "size")
    token = None  # no index of it is kept: nothing tells cheaply that the key changed since

    def __init__(self, store: RedisStore, key: str):
        self._store = store
        self._key = key
        self.size: int | None = None
        self._whole: HeldValue | None = None
        #: what was read: (GETRANGE start, end, the bytes or their SHA-1)
        self._checks: list[list[Any]] = []

    def read(self, offset: int, length: int | None = None, transient: bool = False) -> Any:
        """``length`` bytes from ``offset`` (a suffix for a negative offset, to the end for
        no length); None when the value is missing, or no longer this version."""
        if self._whole is not None:
            return self._whole.read(offset, length)
        if self.size is not None:
            got = self._later([(offset, length)])
            return None if got is None else got[0]
        start, end = _getrange(offset, length)
        store = self._store
        with store._op(f"read of {self._key!r}") as client:
            found = store._first_read(keys=[store._key(self._key)], args=[start, end, min(WHOLE_READ_BYTES, config.max_chunk_bytes)],
                                      client=client)
        if not found:
            return None
        self.size = int(found[0])
        if len(found) == 3:
            self._whole = HeldValue(bytes(found[1]))
            return self._whole.read(offset, length)
        value = bytes(found[1])
        self._checks.append([start, end, value])
        return value

    def read_ranges(self, ranges: Sequence[ByteRange]) -> list[Any] | None:
        """Each of ``ranges`` (None: the value is missing, or no longer this version)."""
        if self._whole is None and self.size is not None:
            return self._later([(r.offset, r.length) for r in ranges])
        values = [self.read(r.offset, r.length) for r in ranges]
        return None if any(v is None for v in values) else values

    def _later(self, ranges: list[tuple[int, int | None]]) -> list[bytes] | None:
        spans = [_getrange(offset, length) for offset, length in ranges]
        args: list[Any] = [self.size]
        for check in self._checks:
            if not isinstance(check[2], str):  # (hashed when first needed)
                check[2] = hashlib.sha1(check[2]).hexdigest()
            args.extend(check)
        store = self._store
        rkey = store._key(self._key)
        with store._op(f"read of {self._key!r}") as client:
            # one transaction: the server runs the check and the reads with nothing between
            # (GETRANGE replies straight from the value, where a script would copy it twice)
            # (EVAL, not a registered script: a pipeline of one asks the server whether it has
            # each script it holds, a round trip per read; the server keeps the compiled body)
            pipe = client.pipeline(transaction=True)
            pipe.eval(_UNCHANGED, 1, rkey, *args)
            for start, end in spans:
                pipe.getrange(rkey, start, end)
            found = pipe.execute()
        if int(found[0]) != 1:  # replaced: this version is gone
            if len(store._lost) >= 1024:
                store._lost.clear()
            store._lost.add(self._key)
            return None
        values = [bytes(v) for v in found[1:]]
        self._checks.extend([start, end, v] for (start, end), v in zip(spans, values))
        return values

    def close(self) -> None:
        self._checks = []
        self._whole = None
