"""Public-API round trips through a store: arrays of both formats, sharded arrays, groups,
attributes and consolidated metadata."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import zarrkit
from zarrkit.storage.base import Store
from zarrkit.storage.wrappers import CountingStore

__all__ = ["PublicAPISuite"]


class PublicAPISuite:
    """Round trips of zarrkit arrays, sharded arrays, groups and consolidated metadata.

    A mixin of tests, independent of :class:`StoreSuite` (a test class usually applies both):
    each test creates arrays or groups in a new store through zarrkit's public API
    (``create``, ``create_array``, ``group``, ``consolidate_metadata``), reopens the store and
    checks that what is read back -- data, shapes, attributes, hierarchy -- is what was written.
    The stores need to be writable; they need not support deletes (the tests delete nothing)
    and each chunk key is written once, except where a test updates part of an array.

    Hooks a subclass implements or may override:

    * ``make_store(tmp_path)`` (required, as for :class:`StoreSuite`): a new, empty, writable
      store.
    * ``reopen_store(tmp_path, store, mode)`` (optional): a store over the data written to
      ``store`` so far (``store`` is the store most recently returned by ``make_store`` or
      ``reopen_store``).  ``mode='r'``: it is only read (it may be read-only); ``mode='r+'``:
      it is written too.  The default returns ``store`` itself; override it to check that the
      data outlives the store object (a new store object on the same path or URL) or when the
      data is readable only after closing (a zip file: close, then reopen).  The stores are
      closed at the end of each test.

    Examples
    --------
    >>> from zarrkit.storage import ZipStore
    >>> from zarrkit.testing import PublicAPISuite
    >>> class TestZip(PublicAPISuite):
    ...     def make_store(self, tmp_path):
    ...         return ZipStore(tmp_path / "data.zip", mode="w")
    ...
    ...     def reopen_store(self, tmp_path, store, mode):
    ...         store.close()
    ...         return ZipStore(store.path, mode="r" if mode == "r" else "a")
    """

    # -- hooks ------------------------------------------------------------------------------------
    def make_store(self, tmp_path: Path) -> Store:
        """Return a new, empty, writable store (``tmp_path``: a fresh per-test directory)."""
        raise NotImplementedError(f"{type(self).__name__} must implement make_store(tmp_path)")

    def reopen_store(self, tmp_path: Path, store: Store, mode: str) -> Store:
        """Return a store over the data of ``store`` for reading (``'r'``) or updating (``'r+'``)."""
        return store

    # -- fixtures and helpers ---------------------------------------------------------------------
    @pytest.fixture
    def api_store(self, tmp_path: Path) -> Iterator[Store]:
        """A new store made by ``make_store``; it and every reopened store are closed after."""
        s = self.make_store(tmp_path)
        self._api_stores = [s]
        try:
            yield s
        finally:
            for opened in reversed(self._api_stores):
                opened.close()

    def _reopen(self, tmp_path: Path, store: Store, mode: str) -> Store:
        s = self.reopen_store(tmp_path, store, mode)
        if s is not store:
            self._api_stores.append(s)
        if mode == "r+":
            assert not s.read_only, f"reopen_store(..., mode='r+') gave a read-only store {s!r}"
        return s

    # -- tests ------------------------------------------------------------------------------------
    @pytest.mark.parametrize("zarr_format", [2, 3])
    def test_api_array_roundtrip(self, api_store: Store, tmp_path: Path, zarr_format: int) -> None:
        store = api_store
        data = np.arange(30 * 25, dtype="f8").reshape(30, 25) / 7
        z = zarrkit.create(shape=data.shape, chunks=(8, 10), dtype="f8", fill_value=-1.5,
                           store=store, zarr_format=zarr_format, path="arr")
        z[:20] = data[:20]  # the last row of chunks is never written: it reads as the fill value
        z.attrs["units"] = "m"
        expected = np.full(data.shape, -1.5)
        expected[:20] = data[:20]
        assert ("arr/.zarray" if zarr_format == 2 else "arr/zarr.json") in store
        assert not any(k.startswith(("arr/3.", "arr/c/3/")) for k in store), sorted(store)

        rs = self._reopen(tmp_path, store, "r")
        back = zarrkit.open_array(rs, mode="r", path="arr")
        assert back.shape == (30, 25) and back.chunks == (8, 10)
        assert back.dtype == np.dtype("f8") and back.fill_value == -1.5
        np.testing.assert_array_equal(back[:], expected)
        np.testing.assert_array_equal(back[5:23, 3:19], expected[5:23, 3:19])
        np.testing.assert_array_equal(back[-3:, -1], np.full(3, -1.5))
        assert back.attrs["units"] == "m"
        assert back.nchunks_initialized == 3 * 3

    def test_api_sharded_v3(self, api_store: Store, tmp_path: Path) -> None:
        store = api_store
        data = np.arange(1600, dtype="i4").reshape(40, 40) - 800
        z = zarrkit.create_array(store, shape=(40, 40), chunks=(10, 10), shards=(20, 20),
                                 dtype="i4")
        z[:] = data
        chunk_keys = sorted(k for k in store if k != "zarr.json")
        assert chunk_keys == [f"c/{i}/{j}" for i in range(2) for j in range(2)]  # 4 shards

        rs = self._reopen(tmp_path, store, "r")
        back = zarrkit.open_array(rs, mode="r")
        assert back.shape == (40, 40) and back.chunks == (10, 10) and back.shards == (20, 20)
        np.testing.assert_array_equal(back[:], data)
        # one inner chunk: a store with partial reads is asked for byte ranges of its shard
        # (index and chunk), fewer bytes than the shard holds
        counting = CountingStore(rs)
        part = zarrkit.open_array(counting, mode="r")
        counting.reset()
        np.testing.assert_array_equal(part[12:17, 31:39], data[12:17, 31:39])
        shard_reads = [r for k, r in counting.keys_read if k == "c/0/1"]
        assert shard_reads, counting.keys_read
        assert {k for k, _ in counting.keys_read} <= {"c/0/1", "zarr.json"}, counting.keys_read
        if rs.supports_partial_reads:
            assert all(r is not None for r in shard_reads), shard_reads
            assert counting.bytes_read < rs.getsize("c/0/1")

        # an update of part of one shard, through a store opened for writing
        ws = self._reopen(tmp_path, rs, "r+")
        zarrkit.open_array(ws, mode="r+")[0:10, 0:10] = 1
        data[0:10, 0:10] = 1
        rs2 = self._reopen(tmp_path, ws, "r")
        np.testing.assert_array_equal(zarrkit.open_array(rs2, mode="r")[:], data)

    @pytest.mark.parametrize("zarr_format", [2, 3])
    def test_api_group_attrs_consolidated(self, api_store: Store, tmp_path: Path, zarr_format: int) -> None:
        store = api_store
        root = zarrkit.group(store, zarr_format=zarr_format)
        root.attrs.update({"title": "api", "version": 3})
        sub = root.create_group("sub")
        sub.attrs["nested"] = [1, 2, 3]
        a = sub.zeros("a", shape=(12, 12), chunks=(5, 5), dtype="u2")
        a[:] = np.arange(144, dtype="u2").reshape(12, 12)
        b = root.zeros("b", shape=(7,), chunks=(3,), dtype="i8")
        b[:] = np.arange(7)
        zarrkit.consolidate_metadata(store)

        rs = self._reopen(tmp_path, store, "r")
        g = zarrkit.open_consolidated(rs)
        assert dict(g.attrs) == {"title": "api", "version": 3}
        assert g["sub"].attrs["nested"] == [1, 2, 3]
        np.testing.assert_array_equal(g["sub/a"][:], np.arange(144, dtype="u2").reshape(12, 12))
        np.testing.assert_array_equal(g["b"][:], np.arange(7))
        assert sorted(g.group_keys()) == ["sub"]
        assert sorted(g.array_keys()) == ["b"]
        # and without the consolidated metadata
        g2 = zarrkit.open_group(rs, mode="r")
        assert g2.attrs["title"] == "api"
        assert sorted(g2.group_keys()) == ["sub"] and sorted(g2["sub"].array_keys()) == ["a"]
        np.testing.assert_array_equal(g2["sub"]["a"][3, :], np.arange(36, 48, dtype="u2"))
