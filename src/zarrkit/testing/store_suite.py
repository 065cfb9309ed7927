"""A reusable conformance suite for zarrkit stores.

Subclass :class:`StoreSuite` in a test module (the subclass name must start with ``Test`` so
pytest collects it) and implement :meth:`StoreSuite.make_store`::

    from zarrkit.testing.store_suite import StoreSuite

    class TestMyStore(StoreSuite):
        def make_store(self, tmp_path: Path):
            return MyStore(tmp_path / "data")

        def make_read_only_store(self, tmp_path: Path, source: Store):
            return MyStore(source.path, read_only=True)

Every ``test_*`` method checks one part of the contract of :class:`zarrkit.storage.base.Store`:
values round-trip as ``bytes``, missing keys give ``None`` (``KeyError`` through the mapping
interface), byte ranges, batch reads, deletion, listing, key validation, read-only enforcement,
thread safety of writes, versions and conditional writes, pickling and a zarrkit array round trip in both Zarr formats.

:class:`PublicAPISuite` is a second, independent mixin: arrays (both formats, sharded), groups,
attributes and consolidated metadata written and read back through zarrkit's public API.  Apply
both to a store that can be written::

    from zarrkit.testing import PublicAPISuite, StoreSuite

    class TestMyStore(StoreSuite, PublicAPISuite):
        def make_store(self, tmp_path: Path):
            return MyStore(tmp_path / "data")

Hooks and switches a subclass may set:

* ``make_store(tmp_path)`` (required): a new, empty, writable store.  ``tmp_path`` is a fresh
  per-test directory (a :class:`pathlib.Path`) the store may use.
* ``make_read_only_store(tmp_path, source)`` (optional): a read-only store that sees the data of
  ``source`` (a store returned by ``make_store`` and already filled by the test).  Return
  ``None`` (the default) to skip the read-only tests.
* ``deletes`` (default ``True``): whether the store can delete stored keys; it must equal the
  store's ``supports_deletes`` flag.  For a store that cannot (a zip file, ``deletes = False``)
  the tests that delete stored keys are not collected, and
  ``test_deletes_match_the_declared_capability`` checks instead that such deletes raise
  :class:`~zarrkit.errors.StoreError` naming the key and change nothing.
* ``picklable`` (default ``True``): the store pickles and the copy reads the same data; ``False``
  means pickling must raise ``TypeError``.
* ``concurrent_writers`` (default ``8``): threads used by the concurrency tests.
* ``conditional`` (default None): True or False asserts the store's
  ``supports_conditional_writes``; the version tests check conditional writes where the store
  declares them, and a typed refusal where it does not.
* ``xfail_tests`` (default empty): ``{test method name: reason}`` for known bugs of the store
  under test; each such test (every parametrization of it) is marked
  ``pytest.mark.xfail(strict=True, reason=...)``, so it is still run and the entry must be
  removed once the bug is fixed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from zarrkit.storage.base import Store

from .suite_access import AccessTests
from .suite_api import PublicAPISuite
from .suite_common import INVALID_KEYS, NESTED_KEYS, _payload
from .suite_keys import KeyTests
from .suite_values import ValueTests
from .suite_versions import VersionTests

__all__ = ["INVALID_KEYS", "NESTED_KEYS", "PublicAPISuite", "StoreSuite"]


class StoreSuite(ValueTests, KeyTests, AccessTests, VersionTests):
    """Conformance tests of the store contract; subclass it and implement :meth:`make_store`."""

    #: whether ``pickle.loads(pickle.dumps(store))`` gives a store reading the same data
    picklable: bool = True
    #: number of threads used by the concurrency tests
    concurrent_writers: int = 8
    #: known bugs: ``{test method name: reason}``, run as ``xfail(strict=True)``
    xfail_tests: ClassVar[dict[str, str]] = {}
    #: whether the store can delete stored keys (its ``supports_deletes`` flag)
    deletes: ClassVar[bool] = True
    #: the tests that delete stored keys (not collected when ``deletes`` is False)
    DELETE_TESTS: ClassVar[tuple[str, ...]] = (
        "test_delete", "test_delitem", "test_mutable_mapping_helpers",
        "test_list_dir_forgets_deleted_children", "test_delete_prefix",
        "test_delete_prefix_without_slash_is_a_string_prefix",
        "test_delete_prefix_missing_and_everything", "test_rmdir",
    )

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not cls.deletes:
            for name in cls.DELETE_TESTS:
                setattr(cls, name, None)
        for name in cls.xfail_tests:
            if not (name.startswith("test_") and callable(getattr(cls, name, None))):
                raise TypeError(f"{cls.__name__}.xfail_tests names no test method: {name!r}")

    # -- hooks ------------------------------------------------------------------------------------
    def make_store(self, tmp_path: Path) -> Store:
        """Return a new, empty, writable store (``tmp_path``: a fresh per-test directory)."""
        raise NotImplementedError(f"{type(self).__name__} must implement make_store(tmp_path)")

    def make_read_only_store(self, tmp_path: Path, source: Store) -> Store | None:
        """Return a read-only store over the data of ``source``, or ``None`` to skip."""
        return None

    # -- fixtures ---------------------------------------------------------------------------------
    @pytest.fixture(autouse=True)
    def _known_failures(self, request: pytest.FixtureRequest) -> None:
        reason = self.xfail_tests.get(getattr(request.node, "originalname", request.node.name))
        if reason:
            request.applymarker(pytest.mark.xfail(strict=True, reason=reason))

    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[Store]:
        s = self.make_store(tmp_path)
        try:
            yield s
        finally:
            s.close()

    @pytest.fixture
    def filled(self, store: Store) -> Store:
        """The store with a few nested keys written."""
        for i, key in enumerate(NESTED_KEYS):
            store.set(key, _payload(i, 10 + i))
        return store

    def _read_only(self, tmp_path: Path, source: Store) -> Store:
        ro = self.make_read_only_store(tmp_path, source)
        if ro is None:
            pytest.skip(f"{type(self).__name__} provides no make_read_only_store")
        return ro
