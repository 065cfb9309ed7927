"""Listing a hierarchy's groups ahead of a walk, a level at a time (high-latency stores)."""

from __future__ import annotations

from collections.abc import Callable

from ..storage.base import join_path
from .pool import run_tasks

__all__ = ["list_levels"]


def list_levels(
    list_members: Callable[[str], list[tuple[str, str]]],
    path: str,
    max_depth: int | None,
    threads: int | None,
) -> dict[str, list[tuple[str, str]]]:
    """``{group path: [(name, kind), ...]}`` for the group at ``path`` and every group below
    it that a walk to ``max_depth`` lists (0: that group only; None: all).

    The groups of one level are listed together on ``threads`` workers: on object storage a
    walk then waits for a round of requests per level of the hierarchy, not per group.
    """
    listing: dict[str, list[tuple[str, str]]] = {}
    level, depth = [path], 0
    while level:
        for p, members in zip(level, run_tasks(list_members, level, threads)):
            listing[p] = members
        depth += 1
        if max_depth is not None and depth > max_depth:
            break
        level = [join_path(p, name) for p in level for name, kind in listing[p] if kind == "group"]
    return listing
