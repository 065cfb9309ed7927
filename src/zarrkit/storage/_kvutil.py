"""Small helpers shared by the key/value database stores (SQLite, DBM, LMDB, Redis)."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["children_of", "glob_escape", "prefix_upper_bound"]

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
