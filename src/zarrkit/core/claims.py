"""The rows an append writes before the shape that shows them, on a store with conditional
writes and no synchronizer: a :class:`Claim` (resizes racing other writers use one too).

Appends race for rows.  Each writes its rows out of sight (beyond the shape it read), then
writes the new shape on the condition that the metadata document is still the one it read;
of appends that read one shape, one wins.  A loser must not leave its rows in the winner's:

* each chunk (or shard) it merges its rows into is written through :meth:`Claim.write`: the
  value is read, then the document checked (still the one read?), then the merged value
  written on the condition of the version read, then the document checked again;
* a check before the write that fails stops the append before it writes
  (:class:`RowsClaimed`); one after the write that fails means the write may have landed
  after the winner wrote its rows again, so it is put back at once -- the value as read, where
  the version written is still there -- and the append stops;
* the winner writes its rows again once they are shown (see :mod:`~zarrkit.core.resize`);
  a resize that grows clears what it grew over once shown
  (:func:`~zarrkit.core.shard_trim.clear_grown`).

Why no row is lost: a loser's write that a check after it let through landed before the
winner's shape was written, so before the winner wrote its rows again: mended then.  One that
the check caught was merged into a value read before the winner's shape (the check before it
came after that read); where nobody wrote the value since, putting it back as read undoes
exactly it.  Where somebody did, the loser leaves the value alone: either the winner merged
its rows over the loser's (the loser wrote first: the rows hold the winner's values, equal
values included), or the winner wrote its rows again once shown (so the loser's write
landed before that, and was mended by it), or a third writer merged into it.  A loser's
write cannot land after the winner wrote its rows again: it is conditioned on a version
read before, and that write made a new one.

A value that was absent before the write is deleted again only where the store's
conditional delete is atomic; elsewhere (obstore) the elements written are put back to the
fill value by a write conditioned on the version written, so that another append's rows merged
into it meanwhile stay (equal to the loser's or not).

On stores whose versions are contents (S3's ETags; a database opened read-only without its
write tokens) writing the same bytes again keeps the version, so the winner's second write
does not stop a loser's, and a value changed and changed back (a loser's rows cleared by a
resize racing it) takes a write conditioned on the value before; there a value another
writer merged into since gets the elements the loser wrote that still hold its values put
back (:func:`restore_elements`).  What is left there: appends of equal values racing within
a request of each other, and losers whose put-backs interleave with a resize racing them,
can lose rows.  A synchronizer avoids the race altogether.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import VersionConflictError
from ..storage.base import ABSENT, Store
from ..storage.cancel import not_cancellable
from ..storage.optimistic import KEEP, update

__all__ = ["Claim", "RowsClaimed"]


class RowsClaimed(Exception):
    """The rows an append is writing were claimed by another writer meanwhile (raised through
    a chunk's read-modify-write, which must not retry it, to the append's, which does)."""


class Claim:
    """What a shape change racing other writers writes out of sight: see the module's text.

    Parameters
    ----------
    store : Store
        The store holding the metadata document.
    key : str
        The metadata document's key.
    version : hashable
        The version of the document the operation read.
    """

    def __init__(self, store: Store, key: str, version: Any):
        self.store = store
        self.key = key
        self.version = version

    def check(self) -> None:
        """Raise :class:`RowsClaimed` when the metadata document is no longer the one read."""
        if self.store.get_versioned(self.key)[1] != self.version:
            raise RowsClaimed(self.key)

    def write(self, store: Store, key: str, change: Any, restore: Any = None, **kwargs: Any) -> Any:
        """``update(store, key, change)`` checked against the claim before the value is
        merged (after it is read) and after it is written; a write the second check catches
        is put back (see :meth:`written`; ``restore``: see there) before :class:`RowsClaimed`
        is raised."""
        seen: list[Any] = [None]
        versions: list[Any] = []

        def checked(raw: Any) -> Any:
            self.check()
            seen[0] = None if raw is None else bytes(raw)
            return change(raw)

        new = update(store, key, checked, written=versions, **kwargs)
        if versions:
            self.written(store, key, seen[0], versions[-1], restore)
        return new

    def written(self, store: Store, key: str, before: Any, version: Any, restore: Any = None) -> None:
        """The check after a write of ``key`` (``version`` stored where ``before``, None for
        none, was read): when it fails, the write is put back before :class:`RowsClaimed` --
        the value as read while the version written is still there, else (another writer
        merged into it since) on a store whose versions are contents, ``restore(current,
        before)``, when given: the elements this operation wrote that still hold its values
        get those of ``before`` (elsewhere the value is left alone: see the module's text)."""
        try:
            self.check()
        except RowsClaimed:
            with not_cancellable():
                self._put_back(store, key, before, version, restore)
            raise

    def delete(self, store: Store, key: str) -> None:
        """Delete ``key`` of ``store`` through :meth:`write`."""
        self.write(store, key, lambda raw: None)

    @staticmethod
    def _put_back(store: Store, key: str, before: Any, version: Any, restore: Any) -> None:
        current, now = store.get_versioned(key)
        unwritten = now == version  # nobody wrote it since: as read (None: deleted)
        try:
            if unwritten and before is not None:
                store.set_if(key, before, version)
                return
            # a value that was absent is deleted again where the store deletes atomically: a
            # delete that checks the version and then deletes would take with it a write
            # landing between the two (another append's rows, merged into this value); there
            # the elements this write left get the fill value back, written on the condition
            # of the version written (one merged in since, equal values included, stays)
            if unwritten and (store.atomic_deletes or restore is None):
                if version is not ABSENT:
                    store.delete_if(key, version)
                return
            if unwritten and current is not None:
                value = restore(current, before)
                if value is not KEEP:
                    store.set_if(key, value, version)
                return
        except VersionConflictError:
            pass
        if restore is None or not store.versions_are_contents:
            return
        update(store, key, lambda current: KEEP if current is None else restore(current, before))


def restore_elements(decode: Any, encode: Any, fill: Any, selection: Any, ours: Any) -> Any:
    """A ``restore`` for :meth:`Claim.written` of a chunk whose ``selection`` an operation
    wrote with the values ``ours()`` (the values of that selection it wrote): its elements
    that still hold them get the values they had before."""

    def restore(raw: Any, before: Any) -> Any:
        current = np.array(decode(raw), copy=True)
        ours_now = ours()
        previous = (fill() if before is None else decode(before))[selection]
        here = np.array(current[selection], copy=True)
        mask = (here == ours_now) & (previous != ours_now)
        if not np.any(mask):
            return KEEP
        here[mask] = previous[mask]
        current[selection] = here
        return encode(current)

    return restore
