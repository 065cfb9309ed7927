"""Codec settings once given as enum members, now as strings.

zarr-python 3 took its codec settings as ``enum.Enum`` members (``BloscShuffle.shuffle``,
``Endian.little``, ``ShardingCodecIndexLocation.end``) and now takes the strings themselves.
The old names remain, as classes whose members are the strings (reading one warns), and a
codec given an ``Enum`` member anyway takes its value, with a warning.

Examples
--------
>>> import warnings
>>> class Order(metaclass=LegacyStrEnum):
...     _members = {"first": "first"}
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore")
...     Order.first
'first'
"""

from __future__ import annotations

import enum
from typing import Any

from .._warnings import warn

__all__ = ["LegacyStrEnum", "legacy_enum_value"]


class LegacyStrEnum(type):
    """Metaclass of a deprecated settings class: reading a member named in the class's
    ``_members`` gives its string and emits a ``DeprecationWarning`` naming the member;
    any other name raises ``AttributeError``."""

    _members: dict[str, str]

    def __getattr__(cls, name: str) -> str:
        members: dict[str, str] = type.__getattribute__(cls, "_members")
        if name in members:
            warn(
                f"{cls.__name__}.{name} is deprecated; pass the string {members[name]!r} instead.",
                DeprecationWarning,
            )
            return members[name]
        raise AttributeError(f"type object {cls.__name__!r} has no attribute {name!r}")


def legacy_enum_value(value: Any, argument: str, codec: str) -> Any:
    """``value.value`` with a ``DeprecationWarning`` when ``value`` is an ``Enum`` member (a
    setting given the old way to ``codec``'s ``argument``); ``value`` itself otherwise."""
    if isinstance(value, enum.Enum):
        warn(
            f"Passing an enum to {codec}(..., {argument}=...) is deprecated; pass the string "
            f"{value.value!r} instead.",
            DeprecationWarning,
        )
        return value.value
    return value
