"""The rows an append writes before the shape that shows them, on a store with conditional
writes and no synchronizer: a :class:`Claim`.

Appends race for rows.  Each writes its rows out of sight (beyond the shape it read), then
writes the new shape on the condition that the metadata document is still the one it read;
of appends that read one shape, one wins.  A loser must not leave its rows in the winner's:

* before each chunk (or shard) it merges its rows into -- after reading it, so that what it
  merges into predates any other append's win -- it checks that the document is still the
  one it read (:meth:`Claim.check`: one small read), and stops at once when it is not
  (:class:`RowsClaimed`);
* every value it wrote is recorded with what it replaced (:meth:`Claim.record`), and a loser
  -- stopped by a check, or by the conditional write of the shape -- puts back what it
  replaced (:meth:`Claim.undo`): the value as it was, where nobody wrote it since, else the
  elements of its rows that still hold its values;
* the winner reads its rows back once they are shown and writes them again where they differ
  (see :func:`zarrkit.core.resize`).

Every write here is itself the read-modify-write of :func:`~zarrkit.storage.optimistic.update`.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from ..storage.base import Store
from ..storage.cancel import not_cancellable
from ..storage.optimistic import KEEP, update

__all__ = ["Claim", "RowsClaimed"]


class RowsClaimed(Exception):
    """The rows an append is writing were claimed by another writer meanwhile (raised through
    a chunk's read-modify-write, which must not retry it, to the append's, which does)."""


class Claim:
    """An append's rows, while it has not shown them: see the module's text.

    Parameters
    ----------
    store : Store
        The store holding the metadata document.
    key : str
        The metadata document's key.
    version : hashable
        The version of the document the append read.
    """

    def __init__(self, store: Store, key: str, version: Any):
        self.store = store
        self.key = key
        self.version = version
        self._written: list[tuple[Store, str, Any, Any, Any]] = []
        self._lock = threading.Lock()

    def check(self) -> None:
        """Raise :class:`RowsClaimed` when the metadata document is no longer the one read."""
        if self.store.get_versioned(self.key)[1] != self.version:
            raise RowsClaimed(self.key)

    def record(self, store: Store, key: str, before: Any, written: Any, restore: Any = None) -> None:
        """Remember that ``written`` (bytes, None: deleted) replaced ``before`` at ``key`` of
        ``store``; ``restore(current, before, written)``, when given, gives the value that
        puts back the elements of the append's rows in ``current`` that still hold its values
        (KEEP: none to put back)."""
        with self._lock:
            self._written.append((store, key, None if before is None else bytes(before), written, restore))

    def delete(self, store: Store, key: str) -> None:
        """Delete ``key`` of ``store`` while the document is the one read (checked after the
        value is read, the delete conditioned on that value's version), recorded."""
        seen: list[Any] = [None]

        def change(raw: Any) -> None:
            self.check()
            seen[0] = raw

        update(store, key, change)
        if seen[0] is not None:
            self.record(store, key, seen[0], None)

    def undo(self) -> None:
        """Put back what the recorded writes replaced, the last first (also when the
        operation was cancelled: this is how it stops)."""
        with not_cancellable():
            self._undo()

    def _undo(self) -> None:
        for store, key, before, written, restore in reversed(self._written):
            def change(raw: Any, before: Any = before, written: Any = written, restore: Any = restore) -> Any:
                if (raw is None and written is None) or (
                    raw is not None and written is not None and bytes(raw) == written
                ):
                    return before  # nobody wrote it since: as it was (None: deleted)
                if restore is None or raw is None or written is None:
                    return KEEP
                return restore(raw, before, written)

            update(store, key, change)
        self._written.clear()


def restore_elements(decode: Any, encode: Any, fill: Any, selection: Any) -> Any:
    """A ``restore`` for :meth:`Claim.record` of a chunk whose ``selection`` the append wrote:
    its elements that still hold the append's values get the values they had before."""

    def restore(raw: Any, before: Any, written: Any) -> Any:
        current = np.array(decode(raw), copy=True)
        ours = decode(written)[selection]
        previous = (fill() if before is None else decode(before))[selection]
        here = np.array(current[selection], copy=True)
        mask = (here == ours) & (previous != ours)
        if not np.any(mask):
            return KEEP
        here[mask] = previous[mask]
        current[selection] = here
        return encode(current)

    return restore
