"""Test helpers for zarrkit and for stores written for it.

:mod:`zarrkit.testing.store_suite` holds the store conformance suite (:class:`StoreSuite`) and
the public-API round trips (:class:`PublicAPISuite`); both need pytest, which is imported only
when one of them is used.
"""

from __future__ import annotations

from typing import Any

__all__ = ["INVALID_KEYS", "NESTED_KEYS", "PublicAPISuite", "StoreSuite"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import store_suite

        return getattr(store_suite, name)
    raise AttributeError(f"module 'zarrkit.testing' has no attribute {name!r}")
