"""Store keys: what a key may be, byte ranges of values, and how stores and places are named
in messages."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import InvalidPathError

__all__ = [
    "ByteRange", "normalize_key", "validate_key", "validate_prefix", "join_path",
    "describe_store", "describe_location", "is_node_name", "is_valid_key",
]


@dataclass(frozen=True, slots=True)
class ByteRange:
    """A request for part of a value.

    ``ByteRange(offset, length)`` asks for ``length`` bytes from ``offset`` (``length=None``: to
    the end).  A negative ``offset`` with ``length=None`` asks for the last ``-offset`` bytes
    (a suffix request, as used to read a shard index).
    """

    offset: int
    length: int | None = None

    def __post_init__(self) -> None:
        if self.length is not None and self.length < 0:
            raise ValueError(f"ByteRange length must be >= 0, got {self.length}")
        if self.offset < 0 and self.length is not None:
            raise ValueError("a suffix ByteRange (negative offset) takes no length")

    def slice(self, value: bytes | memoryview) -> bytes:
        """Apply this range to a whole value (used by stores without native range reads)."""
        n = len(value)
        if self.offset < 0:
            start = max(n + self.offset, 0)
            return bytes(value[start:])
        start = min(self.offset, n)
        stop = n if self.length is None else min(start + self.length, n)
        return bytes(value[start:stop])


def validate_key(key: str) -> str:
    """Check that ``key`` is a relative ``/``-separated key that stays inside the store.

    Raises :class:`~zarrkit.errors.InvalidPathError` for empty keys, absolute keys, ``\\``,
    ``.`` or ``..`` segments and NUL characters.
    """
    if not isinstance(key, str):
        raise InvalidPathError(f"store keys must be str, got {type(key).__name__}: {key!r}")
    if _is_clean(key):  # the common case
        return key
    if not key:
        raise InvalidPathError("store key must not be empty")
    if "\x00" in key:
        raise InvalidPathError(f"store key {key!r} contains a NUL character")
    if key.startswith("/") or "\\" in key or (len(key) > 1 and key[1] == ":"):
        raise InvalidPathError(f"store key {key!r} must be relative and use '/' separators")
    raise InvalidPathError(
        f"store key {key!r} has an empty, '.' or '..' segment; keys may not escape the store root"
    )


def _is_clean(key: str) -> bool:
    """No empty, ``.`` or ``..`` segment (the empty key too), no backslash or NUL anywhere, no
    leading ``/`` or drive letter (``C:``): substring tests, linear in the key with a small
    constant (keys of deep hierarchies are long)."""
    return not (
        "//" in key or "/./" in key or "/../" in key or "\\" in key or "\x00" in key
        or key.startswith(("/", "./", "../")) or key.endswith(("/", "/.", "/.."))
        or key in ("", ".", "..") or key[1:2] == ":"
    )


def is_node_name(name: object) -> bool:
    """Whether a listed ``name`` can be one segment of a key (a node's name in its group):
    what walks of a hierarchy follow, so that no listing can make them loop or escape."""
    return isinstance(name, str) and "/" not in name and _is_clean(name)


def is_valid_key(key: object) -> bool:
    """Whether ``key`` is a key a store can hold (a ``str`` with no empty, ``.`` or ``..``
    segment, no backslash, NUL or drive letter)."""
    return isinstance(key, str) and _is_clean(key)


def are_valid_keys(keys: Sequence[str]) -> bool:
    """Whether every one of ``keys`` is valid (:func:`is_valid_key`), with one test of them
    joined by ``/``: an empty, ``.`` or ``..`` key, or one starting or ending with ``/``,
    ``./``, ``../``, ``/.`` or ``/..``, puts ``//``, ``/./`` or ``/../`` between its
    neighbours (or starts or ends the whole); what a key holds inside stays inside.  Only a
    drive letter is not seen so: where the joined keys hold a ``:``, False (test them one by
    one)."""
    if not keys:
        return True
    try:
        joined = "/".join(keys)
    except TypeError:  # a key that is not a str
        return False
    return ":" not in joined and _is_clean(joined)


def validate_prefix(prefix: str) -> str:
    """Check a listing/deletion prefix: ``''`` or a key, optionally ending with ``/``."""
    if not isinstance(prefix, str):
        raise InvalidPathError(f"store prefixes must be str, got {type(prefix).__name__}: {prefix!r}")
    body = prefix.removesuffix("/")
    if body:
        validate_key(body)
    return prefix


def normalize_key(key: str) -> str:
    """Alias of :func:`validate_key` kept for readability at call sites."""
    return validate_key(key)


def describe_store(store: object) -> str:
    """A store's name for messages: its class and where it is (URL or path) when it has one.

    >>> describe_store({})
    'dict'
    """
    if isinstance(store, (str, os.PathLike)):
        return repr(os.fspath(store))
    named = getattr(store, "store_description", None)  # a store naming itself (an adapter)
    if isinstance(named, str) and named:
        return named
    for attr in ("url", "path"):
        where = getattr(store, attr, None)
        if isinstance(where, (str, os.PathLike)) and os.fspath(where):
            return f"{type(store).__name__}({os.fspath(where)!r})"
    return type(store).__name__


def describe_location(store: object, path: str) -> str:
    """``"path 'a/b' of DirectoryStore('/data/x.zarr')"``, or ``"the root of ..."``."""
    return f"path {path!r} of {describe_store(store)}" if path else f"the root of {describe_store(store)}"


def join_path(*parts: str) -> str:
    """Join logical path parts with ``/``, skipping empty ones."""
    return "/".join(p.strip("/") for p in parts if p and p.strip("/"))
