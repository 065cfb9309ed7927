"""Store conformance: how a store is used (read-only, from many threads, pickled, under an array)."""

from __future__ import annotations

import pickle
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import zarrkit
from zarrkit.errors import ReadOnlyError
from zarrkit.storage.base import ByteRange, Store

from .suite_common import _payload

__all__ = ["AccessTests"]


class AccessTests:
    """Read-only enforcement, concurrent writers and readers, pickling, arrays through the store."""

    # -- read-only --------------------------------------------------------------------------------
    def _fill_source(self, store: Store) -> dict[str, bytes]:
        store.set("k", b"value")
        store.set("d/x", b"x")
        store.set("d/sub/y", b"yy")
        return {"k": b"value", "d/x": b"x", "d/sub/y": b"yy"}

    def test_read_only_reads(self, store: Store, tmp_path: Path) -> None:
        data = self._fill_source(store)
        ro = self._read_only(tmp_path, store)
        assert ro.read_only
        for k, v in data.items():
            assert ro.get(k) == v
            assert ro[k] == v
            assert k in ro
            assert ro.exists(k)
            assert ro.getsize(k) == len(v)
        assert ro.get("k", ByteRange(1, 2)) == b"al"
        assert ro.get("k", ByteRange(-3)) == b"lue"
        assert ro.get("missing") is None
        assert ro.get_many(["k", "missing"]) == {"k": b"value", "missing": None}
        assert sorted(ro) == sorted(data)
        assert len(ro) == len(data)
        assert ro.list_dir("") == ["d", "k"]
        assert ro.list_dir("d/") == ["sub", "x"]
        assert sorted(ro.list_prefix("d/")) == ["d/sub/y", "d/x"]

    @pytest.mark.parametrize(
        "op",
        [
            "set", "setitem", "set_new", "delete", "delete_missing", "delitem", "delete_prefix",
            "delete_prefix_all", "rmdir", "rmdir_all", "clear", "update", "pop",
        ],
    )
    def test_read_only_refuses_writes(self, store: Store, tmp_path: Path, op: str) -> None:
        data = self._fill_source(store)
        ro = self._read_only(tmp_path, store)
        action = {
            "set": lambda: ro.set("k", b"new"),
            "setitem": lambda: ro.__setitem__("k", b"new"),
            "set_new": lambda: ro.set("brand/new", b"new"),
            "delete": lambda: ro.delete("k"),
            "delete_missing": lambda: ro.delete("missing"),
            "delitem": lambda: ro.__delitem__("k"),
            "delete_prefix": lambda: ro.delete_prefix("d/"),
            "delete_prefix_all": lambda: ro.delete_prefix(""),
            "rmdir": lambda: ro.rmdir("d"),
            "rmdir_all": lambda: ro.rmdir(),
            "clear": lambda: ro.clear(),
            "update": lambda: ro.update({"k": b"new", "z": b"z"}),
            "pop": lambda: ro.pop("k"),
        }[op]
        with pytest.raises(ReadOnlyError):
            action()
        with pytest.raises(PermissionError):  # ReadOnlyError is a PermissionError
            action()
        # nothing was written, through either store
        for s in (store, ro):
            assert {k: s.get(k) for k in sorted(s)} == data

    def test_read_only_array(self, store: Store, tmp_path: Path) -> None:
        data = np.arange(400, dtype="i4").reshape(20, 20) + 1
        z = zarrkit.create(shape=(20, 20), chunks=(7, 7), dtype="i4", store=store, zarr_format=2,
                           path="arr")
        z[:] = data
        before = {k: store.get(k) for k in sorted(store)}
        ro = self._read_only(tmp_path, store)
        a = zarrkit.open_array(ro, mode="r", path="arr")
        np.testing.assert_array_equal(a[:], data)
        with pytest.raises(PermissionError):
            a[0, 0] = 5
        a2 = zarrkit.open_array(ro, mode="a", path="arr")  # the store's read-only flag wins
        with pytest.raises(PermissionError):
            a2[:] = 5
        with pytest.raises(PermissionError):
            zarrkit.create(shape=(5,), chunks=(2,), dtype="i4", store=ro, path="new",
                           zarr_format=2)
        assert {k: store.get(k) for k in sorted(store)} == before

    # -- concurrency ------------------------------------------------------------------------------
    def _run_threads(self, target: Callable[[int], object], n: int) -> None:
        barrier = threading.Barrier(n)
        errors: list[BaseException] = []

        def run(i):
            try:
                barrier.wait()
                target(i)
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not any(t.is_alive() for t in threads), "threads hung"
        if errors:
            raise errors[0]

    def test_concurrent_writes_distinct_keys(self, store: Store) -> None:
        n = self.concurrent_writers
        values = {f"t{i}/sub/k{j}": _payload(100 * i + j, 20_000 + j) for i in range(n)
                  for j in range(10)}

        def write(i):
            for j in range(10):
                key = f"t{i}/sub/k{j}"
                store.set(key, values[key])

        self._run_threads(write, n)
        assert sorted(store) == sorted(values)
        for k, v in values.items():
            assert store.get(k) == v, k

    def test_concurrent_writes_same_key(self, store: Store) -> None:
        n = self.concurrent_writers
        values = [_payload(i, 200_000) for i in range(n)]
        initial = b"initial" * 1000
        store.set("shared/key", initial)
        allowed = set(values) | {initial}
        seen: list[bytes] = []

        def work(i):
            for _ in range(5):
                store.set("shared/key", values[i])
                got = store.get("shared/key")
                seen.append(got)
                assert got in allowed, "torn read: value is not one that was written"

        self._run_threads(work, n)
        final = store.get("shared/key")
        assert final in set(values)
        assert all(v in allowed for v in seen)
        assert sorted(store) == ["shared/key"]
        assert store.getsize("shared/key") == 200_000

    def test_concurrent_readers_and_listers_see_complete_values(self, store: Store) -> None:
        n = self.concurrent_writers
        values = [_payload(i, 100_000) for i in range(4)]
        store.set("hot", values[0])
        allowed = set(values)

        def work(i):
            if i < n // 2:  # writers
                for r in range(10):
                    store.set("hot", values[(i + r) % len(values)])
                    store.set(f"w{i}/k{r}", b"x")
            else:  # readers and listers
                for _ in range(20):
                    got = store.get("hot")
                    assert got in allowed, "torn read"
                    keys = list(store.list_prefix(""))
                    assert all(k == "hot" or k.startswith("w") for k in keys), keys
                    assert "hot" in store.list_dir("")

        self._run_threads(work, n)
        assert store.get("hot") in allowed

    # -- pickling ---------------------------------------------------------------------------------
    def test_pickle(self, store: Store) -> None:
        if not self.picklable:
            with pytest.raises(TypeError):
                pickle.dumps(store)
            return
        store.set("k", b"v")
        store.set("a/b", b"ab")
        clone = pickle.loads(pickle.dumps(store))
        try:
            assert type(clone) is type(store)
            assert clone.read_only == store.read_only
            assert clone.get("k") == b"v"
            assert clone["a/b"] == b"ab"
            assert sorted(clone) == ["a/b", "k"]
            clone.set("after", b"1")  # the copy is usable (locks etc. restored)
            assert clone.get("after") == b"1"
        finally:
            if clone is not store:
                clone.close()

    # -- a zarrkit array through the store --------------------------------------------------------
    @pytest.mark.parametrize("zarr_format", [2, 3])
    def test_array_roundtrip(self, store: Store, zarr_format: int) -> None:
        data = np.arange(400, dtype="i4").reshape(20, 20) * 3 - 7
        z = zarrkit.create(
            shape=(20, 20), chunks=(7, 7), dtype="i4", store=store, zarr_format=zarr_format
        )
        z[:] = data
        np.testing.assert_array_equal(z[:], data)
        meta = ".zarray" if zarr_format == 2 else "zarr.json"
        assert meta in store
        metadata_keys = {".zarray", ".zattrs", ".zgroup", "zarr.json"}
        chunk_keys = [k for k in store if k not in metadata_keys]
        assert len(chunk_keys) == 9, sorted(store)

        # partial update, then read through a freshly opened array
        z[3:9, 5:16] = -1
        data[3:9, 5:16] = -1
        z2 = zarrkit.open_array(store, mode="r")
        assert z2.shape == (20, 20)
        assert z2.dtype == np.dtype("i4")
        np.testing.assert_array_equal(z2[:], data)
        np.testing.assert_array_equal(z2[2:17, 4:11], data[2:17, 4:11])
        np.testing.assert_array_equal(z2[19, :], data[19, :])

    @pytest.mark.parametrize("zarr_format", [2, 3])
    def test_array_in_subpath(self, store: Store, zarr_format: int) -> None:
        data = np.arange(400, dtype="i4").reshape(20, 20)
        z = zarrkit.create(
            shape=(20, 20), chunks=(7, 7), dtype="i4", store=store, zarr_format=zarr_format,
            path="grp/arr",
        )
        z[:] = data
        root_meta = {".zgroup", ".zattrs", "zarr.json"}  # implicit parent groups
        assert all(k.startswith("grp/") or k in root_meta for k in store), sorted(store)
        np.testing.assert_array_equal(
            zarrkit.open_array(store, mode="r", path="grp/arr")[:], data
        )
        if store.supports_deletes:
            store.rmdir("grp/arr")
            assert list(store.list_prefix("grp/arr/")) == []
