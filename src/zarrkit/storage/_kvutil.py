"""Small helpers shared by the key/value database stores (SQLite, DBM, LMDB, Redis)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from typing import Any

from ..errors import VersionConflictError
from .base import ABSENT

__all__ = ["children_of", "content_version", "glob_escape", "new_token", "prefix_upper_bound",
           "token_version", "version_conflict"]

_MAX_CODE_POINT = 0x10FFFF


def prefix_upper_bound(prefix: str) -> str | None:
    """The smallest string greater than every string starting with ``prefix``.

    Keys compare by code point (which is also the byte order of their UTF-8 encoding), so every
    key ``k`` with ``k.startswith(prefix)`` satisfies ``prefix <= k < prefix_upper_bound(prefix)``.
    Returns ``None`` when there is no such bound (``''``, or a prefix of only U+10FFFF).

    >>> prefix_upper_bound('foo/')
    'foo0'
    >>> prefix_upper_bound('') is None
    True
    """
    chars = list(prefix)
    while chars:
        cp = ord(chars.pop()) + 1
        if 0xD800 <= cp <= 0xDFFF:  # surrogates are not encodable: skip them
            cp = 0xE000
        if cp <= _MAX_CODE_POINT:
            return "".join(chars) + chr(cp)
    return None


def glob_escape(text: str) -> str:
    """Escape the glob characters of Redis ``MATCH`` patterns (``*``, ``?``, ``[``, ``]``, ``\\``).

    >>> glob_escape('a*b[1]?')
    'a\\\\*b\\\\[1\\\\]\\\\?'
    """
    out = []
    for ch in text:
        if ch in "\\*?[]^":
            out.append("\\")
        out.append(ch)
    return "".join(out)


def children_of(keys: Iterable[str], prefix: str) -> list[str]:
    """Sorted immediate child names below ``prefix`` (``''`` or ``/``-terminated) of ``keys``.

    >>> children_of(['a/b', 'a/c/d', 'e'], 'a/')
    ['b', 'c']
    """
    n = len(prefix)
    return sorted({k[n:].split("/", 1)[0] for k in keys if k.startswith(prefix) and len(k) > n})


def content_version(value: Any) -> tuple[int, bytes]:
    """The version of a value told by its content: its length and BLAKE2b-128 digest.

    The database stores have no version of their own that every writer keeps (zarr-python 2
    and other tools write the same rows and keys plainly), so a version names the bytes: any
    write of other bytes, by anyone, makes another version, and a conditional write compares
    the digest of the value found inside its transaction with this one.  Writing the same
    bytes again keeps the version, which is what a read-merge-write needs (the merge is
    against the same bytes).

    >>> content_version(b"abc") == content_version(bytearray(b"abc"))
    True
    >>> content_version(b"abc") == content_version(b"abd")
    False
    """
    return len(value), hashlib.blake2b(value, digest_size=16).digest()


def new_token() -> bytes:
    """The write token of one write (8 random bytes): see :func:`token_version`."""
    return os.urandom(8)


def token_version(token: bytes | None, value: Any) -> tuple[bytes | None, int, bytes]:
    """The version of ``value`` stored with write ``token`` (None: written without one).

    A database store keeps, beside each value, the token of the write that stored it (a new
    one every write, equal bytes included), and a version is the token with the value's
    content (:func:`content_version`).  The token makes a value written again, after other
    writes, a new version: a write conditioned on the version read before cannot land on it,
    as it could if versions were contents alone (a value changed and changed back would look
    unchanged).  The content catches what writers that keep no tokens (zarr-python 2 and
    other tools writing the same rows) change.

    >>> token_version(b"t1", b"abc") == token_version(b"t1", b"abc")
    True
    >>> token_version(b"t1", b"abc") == token_version(b"t2", b"abc")
    False
    """
    return (token, *content_version(value))


def version_conflict(key: str, current: Any, version: Any) -> VersionConflictError:
    """The :class:`~zarrkit.errors.VersionConflictError` of a conditional write of ``key``
    that found ``current`` (None: no value) where it expected ``version``."""
    if version is ABSENT:
        return VersionConflictError("expected no value, got one written by another writer", key)
    if current is None:
        return VersionConflictError(
            "expected the value read, got none (deleted by another writer)", key
        )
    return VersionConflictError(
        "expected the value read, got another one (replaced by another writer)", key
    )
