"""Store conformance: versions and conditional writes (``get_versioned``, ``set_if``,
``delete_if``), or, for a store without them, a clear refusal."""

from __future__ import annotations

import threading

import pytest

from zarrkit.errors import ConditionalWritesUnsupportedError, VersionConflictError
from zarrkit.storage.base import ABSENT, Store

__all__ = ["VersionTests"]


class VersionTests:
    """A store with ``supports_conditional_writes`` conditions every write on a version, and
    a conflict writes nothing; one without refuses the calls with a typed error."""

    #: whether the store under test must have conditional writes (None: whatever it declares)
    conditional: bool | None = None

    @pytest.fixture
    def cas_store(self, store: Store) -> Store:
        if self.conditional is not None:
            assert store.supports_conditional_writes is self.conditional
        if not store.supports_conditional_writes:
            with pytest.raises(ConditionalWritesUnsupportedError):
                store.get_versioned("k")
            with pytest.raises(ConditionalWritesUnsupportedError):
                store.set_if("k", b"v", ABSENT)
            assert store.get("k") is None
            return None
        return store

    def test_versioned_read_of_a_missing_key(self, cas_store: Store) -> None:
        if cas_store is None:
            return
        assert cas_store.get_versioned("a/k") == (None, ABSENT)

    def test_create_only_where_there_is_none(self, cas_store: Store) -> None:
        if cas_store is None:
            return
        version = cas_store.set_if("a/k", b"first", ABSENT)
        with pytest.raises(VersionConflictError) as info:
            cas_store.set_if("a/k", b"second", ABSENT)
        assert info.value.key == "a/k"
        value, now = cas_store.get_versioned("a/k")
        assert bytes(value) == b"first" and now == version

    def test_replace_only_the_version_read(self, cas_store: Store) -> None:
        if cas_store is None:
            return
        first = cas_store.set_if("k", b"1", ABSENT)
        second = cas_store.set_if("k", b"22", first)
        assert second != first
        with pytest.raises(VersionConflictError):
            cas_store.set_if("k", b"333", first)  # a stale version
        assert cas_store.get("k") == b"22"
        cas_store.set("k", b"4444")  # a plain write makes another version
        with pytest.raises(VersionConflictError):
            cas_store.set_if("k", b"55555", second)
        assert cas_store.get("k") == b"4444"
        cas_store.delete("k")
        with pytest.raises(VersionConflictError):
            cas_store.set_if("k", b"6", second)  # gone meanwhile
        assert cas_store.get("k") is None

    def test_delete_only_the_version_read(self, cas_store: Store) -> None:
        if cas_store is None:
            return
        first = cas_store.set_if("d/k", b"1", ABSENT)
        cas_store.set("d/k", b"2")
        with pytest.raises(VersionConflictError):
            cas_store.delete_if("d/k", first)
        assert cas_store.get("d/k") == b"2"
        _, now = cas_store.get_versioned("d/k")
        cas_store.delete_if("d/k", now)
        assert cas_store.get("d/k") is None
        cas_store.delete_if("d/k", ABSENT)  # none, as asked
        with pytest.raises(VersionConflictError):
            cas_store.delete_if("d/k", now)

    def test_versioned_read_refuses_an_oversized_value(self, cas_store: Store) -> None:
        if cas_store is None:
            return
        cas_store.set("big", b"x" * 100)
        with pytest.raises(Exception, match="100|more than"):
            cas_store.get_versioned("big", limit=10)

    def test_concurrent_increments_are_never_lost(self, cas_store: Store) -> None:
        # the read-modify-write every partial chunk write is: threads each add one, retrying
        # on a conflict; the count comes out exact
        if cas_store is None:
            return
        threads, rounds = 4, 15
        cas_store.set_if("n", b"0", ABSENT)

        def add() -> None:
            for _ in range(rounds):
                while True:
                    value, version = cas_store.get_versioned("n")
                    try:
                        cas_store.set_if("n", str(int(bytes(value)) + 1).encode(), version)
                        break
                    except VersionConflictError:
                        continue

        workers = [threading.Thread(target=add) for _ in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        assert int(cas_store.get("n")) == threads * rounds

    def test_read_only_refuses_conditional_writes(self, cas_store: Store) -> None:
        if cas_store is None:
            return
        cas_store.set("k", b"1")
        _, version = cas_store.get_versioned("k")
        ro = cas_store.with_read_only(True)
        with pytest.raises(PermissionError):
            ro.set_if("k", b"2", version)
        with pytest.raises(PermissionError):
            ro.delete_if("k", version)
        assert cas_store.get("k") == b"1"
