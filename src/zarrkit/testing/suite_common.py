"""What the store suites share: the keys they use and deterministic payloads."""

from __future__ import annotations

import numpy as np

__all__ = ["INVALID_KEYS", "NESTED_KEYS"]


#: Keys every store must reject with :class:`~zarrkit.errors.InvalidPathError`.
INVALID_KEYS = [
    "",
    "/a",
    "/",
    "a/",
    "a//b",
    "..",
    "../a",
    "a/../b",
    "a/..",
    ".",
    "./a",
    "a/./b",
    "a/.",
    "a\\b",
    "\\a",
    "a\x00b",
]

#: Keys with nested ``/`` paths every store must accept.
NESTED_KEYS = [
    "a",
    "a.b",
    ".zarray",
    "foo/bar",
    "foo/baz/qux",
    "foo/baz/.zattrs",
    "deep/er/and/deeper/still/0.0",
    "c/0/0/1",
    "unicode-\u00fcn\u00ef/\u00e7\u00f8d\u00e9",
    "with space/and-dash_under",
]


def _payload(seed: int, size: int) -> bytes:
    """Deterministic, non-repeating bytes (so truncations and mixes are detectable)."""
    return np.random.default_rng(seed).integers(0, 256, size, dtype=np.uint8).tobytes()
