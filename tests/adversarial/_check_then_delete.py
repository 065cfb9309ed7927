"""A store whose conditional delete is a version check and then a delete (as obstore's is), with
the window between the two opened on purpose: the attack tests of the put-back and of shape
changes on such stores share it."""

from __future__ import annotations

from zarrkit.errors import VersionConflictError
from zarrkit.storage import MemoryStore, SQLiteStore, WrapperStore


class CheckThenDelete(WrapperStore):
    """Passes everything through; ``delete_if`` of ``key`` checks the version, runs ``window``
    (once), then deletes, as a store without conditional deletes does (``atomic``: deletes
    as the inner store does, the control).  ``after_set`` runs (once) after the first
    conditional write of ``key``, and then :meth:`after_set_ran`."""

    _passes_versions = True

    def __init__(self, inner, key, atomic):
        super().__init__(inner)
        self.key = key
        self.atomic = atomic
        self.after_set = None
        self.window = None
        self.deletes_of_key = 0

    @property
    def atomic_deletes(self):
        return self.atomic

    def after_set_ran(self):
        """Called once ``after_set`` has run (subclasses arm what follows it)."""

    def _set_if(self, key, value, version):
        written = self.inner.set_if(key, value, version)
        if key == self.key and self.after_set is not None:
            run, self.after_set = self.after_set, None
            run()
            self.after_set_ran()
        return written

    def _delete_if(self, key, version):
        if key == self.key:
            self.deletes_of_key += 1
        if self.atomic:
            return self.inner.delete_if(key, version)
        now = self.inner.get_versioned(key)[1]
        if now != version:
            raise VersionConflictError(f"expected version {version!r}, found {now!r}", key)
        if key == self.key and self.window is not None:
            run, self.window = self.window, None
            run()
        self.inner.delete(key)


def inner_store(kind, tmp_path):
    """The store under the window: versions as objects (memory) or as contents (SQLite)."""
    return MemoryStore() if kind == "memory" else SQLiteStore(str(tmp_path / "s.sqlite"))
