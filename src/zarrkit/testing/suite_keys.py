"""Store conformance: keys (deleting, listing, sizes, nested and invalid keys)."""

from __future__ import annotations

from pathlib import Path

import pytest

from zarrkit.errors import InvalidPathError, StoreError
from zarrkit.storage.base import ByteRange, Store

from .suite_common import INVALID_KEYS, NESTED_KEYS, _payload

__all__ = ["KeyTests"]


class KeyTests:
    """Deletion, listing, delete_prefix/rmdir, getsize, nested keys and key validation."""

    # -- delete -----------------------------------------------------------------------------------
    def test_delete(self, store: Store) -> None:
        store.set("a/b", b"1")
        store.set("a/c", b"2")
        store.delete("a/b")
        assert store.get("a/b") is None
        assert not store.exists("a/b")
        assert store.get("a/c") == b"2"
        assert sorted(store) == ["a/c"]

    def test_delete_missing_is_not_an_error(self, store: Store) -> None:
        store.delete("missing")
        store.delete("missing/nested/key")
        store.set("leaf", b"1")
        store.delete("leaf/child")
        store.set("d/x", b"1")
        store.delete("d")  # a "directory", not a key
        assert store.get("leaf") == b"1"
        assert store.get("d/x") == b"1"

    def test_delitem(self, store: Store) -> None:
        store["k"] = b"v"
        del store["k"]
        assert "k" not in store
        with pytest.raises(KeyError):
            del store["k"]
        with pytest.raises(KeyError):
            del store["missing/nested"]

    def test_mutable_mapping_helpers(self, store: Store) -> None:
        store.update({"a": b"1", "b/c": b"2"})
        assert store.setdefault("b/c", b"zzz") == b"2"
        assert store.setdefault("d", b"4") == b"4"
        assert dict(store.items()) == {"a": b"1", "b/c": b"2", "d": b"4"}
        assert sorted(store.values()) == [b"1", b"2", b"4"]
        assert store.pop("missing", None) is None
        with pytest.raises(KeyError):
            store.pop("missing")
        assert store.pop("a") == b"1"
        assert store.pop("a", None) is None
        with pytest.raises(KeyError):
            store.pop("a")
        store.clear()
        assert len(store) == 0

    def test_deletes_match_the_declared_capability(self, store: Store) -> None:
        data = {"k": b"1", "d/x": b"2", "d/sub/y": b"3"}
        store.update(data)
        assert store.supports_deletes == self.deletes
        if store.supports_deletes:
            store.delete("k")
            store.delete_prefix("d/sub/")
            assert {k: store.get(k) for k in sorted(store)} == {"d/x": b"2"}
            return
        # a store that cannot delete refuses, naming the key, and keeps everything
        refusals = {
            "delete": (lambda: store.delete("k"), "'k'"),
            "delitem": (lambda: store.__delitem__("d/x"), "'d/x'"),
            "pop": (lambda: store.pop("k"), "'k'"),
            "delete_prefix": (lambda: store.delete_prefix("d/sub/"), "'d/sub/y'"),
            "rmdir": (lambda: store.rmdir("d"), "'d/"),
        }
        for name, (action, named) in refusals.items():
            with pytest.raises(StoreError) as info:
                action()
            assert named in str(info.value), (name, str(info.value))
            assert {k: store.get(k) for k in sorted(store)} == data, name
        # clearing everything may still be possible (a zip file started anew): all or nothing
        try:
            store.clear()
        except StoreError:
            assert {k: store.get(k) for k in sorted(store)} == data
        else:
            assert list(store) == []
            store.update(data)
        # deleting what is not there is not an error, as in every store
        store.delete("missing")
        store.delete("d")  # a "directory", not a key
        store.delete_prefix("missing/")
        store.rmdir("nothing")
        with pytest.raises(KeyError):
            del store["missing"]
        assert {k: store.get(k) for k in sorted(store)} == data
        # and the store is still usable
        store.set("new", b"n")
        assert store.get("new") == b"n"

    # -- listing ----------------------------------------------------------------------------------
    def test_iteration_and_len(self, filled: Store) -> None:
        assert sorted(filled) == sorted(NESTED_KEYS)
        assert sorted(filled.keys()) == sorted(NESTED_KEYS)
        assert len(filled) == len(NESTED_KEYS)
        assert sorted(filled.list_prefix("")) == sorted(NESTED_KEYS)

    def test_list_prefix(self, filled: Store) -> None:
        def lp(prefix):
            return sorted(filled.list_prefix(prefix))

        assert lp("foo/") == ["foo/bar", "foo/baz/.zattrs", "foo/baz/qux"]
        assert lp("foo/baz/") == ["foo/baz/.zattrs", "foo/baz/qux"]
        assert lp("foo/ba") == ["foo/bar", "foo/baz/.zattrs", "foo/baz/qux"]
        assert lp("foo/baz/q") == ["foo/baz/qux"]
        assert lp("a") == ["a", "a.b"]
        assert lp("a.") == ["a.b"]
        assert lp("deep/") == ["deep/er/and/deeper/still/0.0"]
        assert lp("nothing/") == []
        assert lp("foo/bar/") == []
        assert lp("zzz") == []

    def test_list_dir(self, filled: Store) -> None:
        assert filled.list_dir("") == sorted(
            [".zarray", "a", "a.b", "c", "deep", "foo", "unicode-\u00fcn\u00ef", "with space"]
        )
        assert filled.list_dir("foo/") == ["bar", "baz"]
        assert filled.list_dir("foo") == ["bar", "baz"]
        assert filled.list_dir("foo/baz/") == [".zattrs", "qux"]
        assert filled.list_dir("c/0/") == ["0"]
        assert filled.list_dir("deep/er/and/") == ["deeper"]
        assert filled.list_dir("missing/") == []
        assert filled.list_dir("foo/bar/") == []  # a key, not a directory
        assert filled.list_dir("fo/") == []

    def test_listdir_zarr2_spelling(self, filled: Store) -> None:
        assert filled.listdir() == filled.list_dir("")
        assert filled.listdir("foo") == ["bar", "baz"]
        assert filled.listdir("foo/") == ["bar", "baz"]
        assert filled.listdir("/foo/baz/") == [".zattrs", "qux"]

    def test_list_dir_is_sorted(self, store: Store) -> None:
        names = ["b", "a", "C", "10", "2", "_x", ".z", "a.b"]
        for name in names:
            store.set(f"p/{name}", b"1")
        store.set("p/dir/x", b"1")
        assert store.list_dir("p/") == sorted(names + ["dir"])

    def test_list_dir_forgets_deleted_children(self, store: Store) -> None:
        store.set("a/b/c", b"1")
        store.set("x", b"1")
        store.delete("a/b/c")
        assert store.list_dir("") == ["x"]
        assert store.list_dir("a/") == []
        assert sorted(store) == ["x"]

    def test_listing_does_not_escape_root(self, store: Store) -> None:
        store.set("inside/k", b"1")
        for prefix in ("../", "..", "inside/../../", "/"):
            try:
                names = store.list_dir(prefix)
            except InvalidPathError:
                continue
            assert names in ([], ["inside"]), (prefix, names)
        for prefix in ("../", "inside/../../"):
            try:
                keys = list(store.list_prefix(prefix))
            except InvalidPathError:
                continue
            assert keys == [], (prefix, keys)

    def test_delete_prefix_does_not_escape_root(self, store: Store, tmp_path: Path) -> None:
        outside = tmp_path / "outside-secret.txt"
        outside.write_bytes(b"not the store's")
        store.set("inside/k", b"1")
        for prefix in ("../outside", "../../outside", "inside/../../outside", "../", ".."):
            try:
                store.delete_prefix(prefix)
            except InvalidPathError:
                pass
            for p in (prefix.rstrip("/"), prefix.rstrip("/").replace("outside", "")):
                try:
                    store.rmdir(p)
                except InvalidPathError:
                    pass
            assert outside.exists(), f"delete_prefix({prefix!r}) deleted a file outside the store"
        assert outside.read_bytes() == b"not the store's"
        assert store.get("inside/k") == b"1"

    # -- delete_prefix / rmdir --------------------------------------------------------------------
    def test_delete_prefix(self, filled: Store) -> None:
        filled.delete_prefix("foo/")
        assert sorted(filled.list_prefix("foo/")) == []
        assert "foo" not in filled.list_dir("")
        assert sorted(filled) == sorted(k for k in NESTED_KEYS if not k.startswith("foo/"))

    def test_delete_prefix_without_slash_is_a_string_prefix(self, store: Store) -> None:
        for k in ("ab/c", "abc", "abd/e", "b"):
            store.set(k, b"1")
        store.delete_prefix("ab")
        assert sorted(store) == ["b"]

    def test_delete_prefix_missing_and_everything(self, filled: Store) -> None:
        filled.delete_prefix("missing/")
        assert len(filled) == len(NESTED_KEYS)
        filled.delete_prefix("")
        assert len(filled) == 0
        assert filled.list_dir("") == []
        filled.set("again/k", b"1")  # still usable
        assert filled.get("again/k") == b"1"

    def test_rmdir(self, store: Store) -> None:
        for k in ("g/a", "g/sub/b", "gx/c", "g.d", "h"):
            store.set(k, b"1")
        store.rmdir("g")
        assert sorted(store) == ["g.d", "gx/c", "h"]
        store.rmdir("/gx/")
        assert sorted(store) == ["g.d", "h"]
        store.rmdir("missing")
        store.rmdir()
        assert len(store) == 0

    # -- getsize ----------------------------------------------------------------------------------
    def test_getsize(self, store: Store) -> None:
        store.set("k", b"12345")
        store.set("n/e/s/t", b"x" * 1234)
        store.set("e", b"")
        assert store.getsize("k") == 5
        assert store.getsize("n/e/s/t") == 1234
        assert store.getsize("e") == 0
        assert store.getsize("missing") == 0
        store.set("k", b"1")
        assert store.getsize("k") == 1

    # -- nested keys ------------------------------------------------------------------------------
    def test_nested_keys_roundtrip(self, filled: Store) -> None:
        for i, key in enumerate(NESTED_KEYS):
            assert filled.get(key) == _payload(i, 10 + i), key
            assert filled.exists(key)
            assert filled.getsize(key) == 10 + i

    # -- invalid keys -----------------------------------------------------------------------------
    @pytest.mark.parametrize("key", INVALID_KEYS, ids=repr)
    def test_invalid_key_set(self, store: Store, key: str) -> None:
        with pytest.raises(InvalidPathError):
            store.set(key, b"x")
        with pytest.raises(InvalidPathError):
            store[key] = b"x"
        assert len(store) == 0

    @pytest.mark.parametrize("key", INVALID_KEYS, ids=repr)
    def test_invalid_key_get(self, store: Store, key: str) -> None:
        store.set("a/b", b"1")
        with pytest.raises(InvalidPathError):
            store.get(key)
        with pytest.raises(InvalidPathError):
            store.get(key, ByteRange(0, 1))
        with pytest.raises(InvalidPathError):
            store[key]

    @pytest.mark.parametrize("key", ["../a", "/a", "a\\b", ""], ids=repr)
    def test_invalid_key_delete(self, store: Store, key: str) -> None:
        with pytest.raises(InvalidPathError):
            store.delete(key)
        with pytest.raises(InvalidPathError):
            del store[key]

    @pytest.mark.parametrize("key", ["../a", "/a", "a\\b", "a//b"], ids=repr)
    def test_invalid_key_get_many(self, store: Store, key: str) -> None:
        store.set("a/b", b"1")
        with pytest.raises(InvalidPathError):
            store.get_many(["a/b", key])

    def test_invalid_key_error_is_a_value_error(self, store: Store) -> None:
        with pytest.raises(ValueError):
            store.set("../escape", b"x")
        with pytest.raises(InvalidPathError):
            store.set(1, b"x")

    def test_invalid_key_does_not_escape(self, store: Store, tmp_path: Path) -> None:
        before = sorted(p.name for p in tmp_path.parent.iterdir())
        for key in ("../escape", "../../escape", "/tmp/escape"):
            with pytest.raises(InvalidPathError):
                store.set(key, b"x")
        assert sorted(p.name for p in tmp_path.parent.iterdir()) == before
        assert not (tmp_path / "escape").exists()
