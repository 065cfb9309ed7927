"""A reusable conformance suite for zarrkit stores.

Subclass :class:`StoreSuite` in a test module (the subclass name must start with ``Test`` so
pytest collects it) and implement :meth:`StoreSuite.make_store`::

    from zarrkit.testing.store_suite import StoreSuite

    class TestMyStore(StoreSuite):
        def make_store(self, tmp_path):
            return MyStore(tmp_path / "data")

        def make_read_only_store(self, tmp_path, source):
            return MyStore(source.path, read_only=True)

Every ``test_*`` method checks one part of the contract of :class:`zarrkit.storage.base.Store`:
values round-trip as ``bytes``, missing keys give ``None`` (``KeyError`` through the mapping
interface), byte ranges, batch reads, deletion, listing, key validation, read-only enforcement,
thread safety of writes, pickling and a zarrkit array round trip in both Zarr formats.

:class:`PublicAPISuite` is a second, independent mixin: arrays (both formats, sharded), groups,
attributes and consolidated metadata written and read back through zarrkit's public API.  Apply
both to a store that can be written::

    from zarrkit.testing import PublicAPISuite, StoreSuite

    class TestMyStore(StoreSuite, PublicAPISuite):
        def make_store(self, tmp_path):
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
* ``xfail_tests`` (default empty): ``{test method name: reason}`` for known bugs of the store
  under test; each such test (every parametrization of it) is marked
  ``pytest.mark.xfail(strict=True, reason=...)``, so it is still run and the entry must be
  removed once the bug is fixed.
"""

from __future__ import annotations

import pickle
import threading
from typing import Any, ClassVar

import numpy as np
import pytest

import zarrkit
from zarrkit.errors import InvalidPathError, ReadOnlyError, StoreError
from zarrkit.storage.base import ByteRange, Store
from zarrkit.storage.wrappers import CountingStore

__all__ = ["INVALID_KEYS", "NESTED_KEYS", "PublicAPISuite", "StoreSuite"]

#: Keys every store must reject with :class:`~zarrkit.errors.InvalidPathError`.
INVALID_KEYS = [
    "",
    "/a",
    "/",
    "a/",
    "a//b",
    "..",
    "../a",
    "a/../b",
    "a/..",
    ".",
    "./a",
    "a/./b",
    "a/.",
    "a\\b",
    "\\a",
    "a\x00b",
]

#: Keys with nested ``/`` paths every store must accept.
NESTED_KEYS = [
    "a",
    "a.b",
    ".zarray",
    "foo/bar",
    "foo/baz/qux",
    "foo/baz/.zattrs",
    "deep/er/and/deeper/still/0.0",
    "c/0/0/1",
    "unicode-\u00fcn\u00ef/\u00e7\u00f8d\u00e9",
    "with space/and-dash_under",
]


def _payload(seed: int, size: int) -> bytes:
    """Deterministic, non-repeating bytes (so truncations and mixes are detectable)."""
    return np.random.default_rng(seed).integers(0, 256, size, dtype=np.uint8).tobytes()


class StoreSuite:
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
    def make_store(self, tmp_path) -> Store:
        """Return a new, empty, writable store (``tmp_path``: a fresh per-test directory)."""
        raise NotImplementedError(f"{type(self).__name__} must implement make_store(tmp_path)")

    def make_read_only_store(self, tmp_path, source: Store) -> Store | None:
        """Return a read-only store over the data of ``source``, or ``None`` to skip."""
        return None

    # -- fixtures ---------------------------------------------------------------------------------
    @pytest.fixture(autouse=True)
    def _known_failures(self, request):
        reason = self.xfail_tests.get(getattr(request.node, "originalname", request.node.name))
        if reason:
            request.applymarker(pytest.mark.xfail(strict=True, reason=reason))

    @pytest.fixture
    def store(self, tmp_path):
        s = self.make_store(tmp_path)
        try:
            yield s
        finally:
            s.close()

    @pytest.fixture
    def filled(self, store):
        """The store with a few nested keys written."""
        for i, key in enumerate(NESTED_KEYS):
            store.set(key, _payload(i, 10 + i))
        return store

    def _read_only(self, tmp_path, source: Store) -> Store:
        ro = self.make_read_only_store(tmp_path, source)
        if ro is None:
            pytest.skip(f"{type(self).__name__} provides no make_read_only_store")
        return ro

    # -- set / get --------------------------------------------------------------------------------
    def test_new_store_is_empty(self, store):
        assert len(store) == 0
        assert list(store) == []
        assert list(store.list_prefix("")) == []
        assert store.list_dir("") == []

    @pytest.mark.parametrize(
        "kind", ["bytes", "bytearray", "memoryview", "empty", "large"]
    )
    def test_set_get_roundtrip_bytes_like(self, store, kind):
        raw = _payload(1, 1000)
        value: Any = {
            "bytes": raw,
            "bytearray": bytearray(raw),
            "memoryview": memoryview(raw),
            "empty": b"",
            "large": _payload(2, 3_000_000),
        }[kind]
        expected = bytes(value)
        store.set("k", value)
        got = store.get("k")
        assert type(got) is bytes
        assert got == expected
        assert store["k"] == expected
        assert store.exists("k")
        assert "k" in store

    @pytest.mark.parametrize(
        "make",
        [
            pytest.param(lambda: np.arange(100, dtype="i4"), id="1d-i4"),
            pytest.param(lambda: np.arange(60, dtype="f8").reshape(3, 4, 5), id="3d-f8"),
            pytest.param(lambda: np.asfortranarray(np.arange(12, dtype="u2").reshape(3, 4)),
                         id="fortran"),
            pytest.param(lambda: np.arange(40, dtype="i8")[::3], id="strided"),
            pytest.param(lambda: np.arange(30, dtype="u1").reshape(5, 6)[:, 1:4], id="2d-view"),
            pytest.param(lambda: np.zeros(0, dtype="i4"), id="empty"),
        ],
    )
    def test_set_get_roundtrip_numpy(self, store, make):
        arr = make()
        store.set("arr", arr)
        got = store.get("arr")
        assert type(got) is bytes
        assert got == arr.tobytes(order="C")
        back = np.frombuffer(got, dtype=arr.dtype).reshape(arr.shape)
        np.testing.assert_array_equal(back, arr)

    def test_setitem_getitem(self, store):
        store["x/y"] = b"value"
        assert store["x/y"] == b"value"
        store["x/z"] = bytearray(b"other")
        assert store["x/z"] == b"other"

    def test_stored_value_is_a_copy(self, store):
        buf = bytearray(b"abcdef")
        store.set("k", buf)
        buf[:] = b"XXXXXX"
        assert store.get("k") == b"abcdef"
        arr = np.arange(4, dtype="i4")
        store.set("a", arr)
        arr[:] = -1
        assert store.get("a") == np.arange(4, dtype="i4").tobytes()

    def test_set_parts_stores_the_concatenation(self, store):
        parts: list[Any] = [
            _payload(3, 1000), b"", bytearray(b"xyz"), memoryview(_payload(4, 5000)),
            np.arange(7, dtype="<i4"),
        ]
        store.set_parts("p/k", parts)
        assert store.get("p/k") == b"".join(bytes(memoryview(p).cast("B")) for p in parts)
        many = [bytes([i % 256]) * (i % 7) for i in range(3000)]  # more than one gathered write
        store.set_parts("many", many)
        assert store.get("many") == b"".join(many)
        store.set_parts("p/k", [b"new"])
        assert store.get("p/k") == b"new"
        store.set_parts("empty", [])
        assert store.get("empty") == b""
        with pytest.raises(TypeError):
            store.set_parts("bad", [b"a", "not bytes"])
        assert store.get("bad") is None

    def test_get_transient_reads_the_value(self, store):
        store.set("t/a", _payload(5, 3000))
        store.set("t/b", b"short")
        assert bytes(store.get_transient("t/a")) == _payload(5, 3000)
        assert bytes(store.get_transient("t/b")) == b"short"
        assert store.get_transient("t/missing") is None
        assert bytes(store.get_transient("t/a", ByteRange(10, 20))) == _payload(5, 3000)[10:30]
        assert bytes(store.get_transient("t/a", ByteRange(-7))) == _payload(5, 3000)[-7:]
        assert store.get("t/a") == _payload(5, 3000)

    def test_set_rejects_non_bytes(self, store):
        for bad in ("a string", 12, 1.5, None, object(), [1, 2]):
            with pytest.raises(TypeError):
                store.set("k", bad)
        assert store.get("k") is None

    def test_overwrite_replaces(self, store):
        store.set("k", b"a much longer first value")
        store.set("k", b"short")
        assert store.get("k") == b"short"
        store["k"] = b""
        assert store.get("k") == b""
        store["k"] = b"third"
        assert store["k"] == b"third"
        assert store.getsize("k") == 5
        assert sorted(store) == ["k"]
        assert len(store) == 1

    # -- missing keys -----------------------------------------------------------------------------
    def test_get_missing_is_none(self, store):
        assert store.get("missing") is None
        assert store.get("missing/nested/key") is None
        assert store.get("missing", ByteRange(0, 4)) is None
        assert store.get("missing", ByteRange(-4)) is None
        assert not store.exists("missing")
        assert "missing" not in store

    def test_getitem_missing_raises_keyerror(self, store):
        with pytest.raises(KeyError):
            store["missing"]
        with pytest.raises(KeyError):
            store["missing/nested"]

    def test_empty_value_is_present(self, store):
        store.set("empty", b"")
        assert store.get("empty") == b""
        assert store.exists("empty")
        assert "empty" in store
        assert store["empty"] == b""
        assert store.getsize("empty") == 0
        assert list(store) == ["empty"]

    def test_prefix_of_a_key_is_not_a_key(self, store):
        store.set("dir/sub/key", b"1")
        for k in ("dir", "dir/sub"):
            assert store.get(k) is None
            assert not store.exists(k)
            assert k not in store
            with pytest.raises(KeyError):
                store[k]
        # the size of a "directory" is that of the values directly in it (zarr-python 2's)
        assert store.getsize("dir") == 0
        assert store.getsize("dir/sub") == 1
        store.set("dir/v", b"123")
        assert store.getsize("dir") == 3
        assert store.getsize() == 0  # nothing stored at the root itself

    def test_key_below_a_value_is_missing(self, store):
        store.set("leaf", b"1")
        assert store.get("leaf/child") is None
        assert not store.exists("leaf/child")
        assert "leaf/child" not in store
        assert store.getsize("leaf/child") == 0

    def test_keys_no_store_can_hold_are_not_in_it(self, store):
        store.set("c/0", b"1")
        for k in ("c/", "", "../c/0", "c//0", "/c/0"):
            assert k not in store  # not an error: such a key is simply not there

    def test_contains_non_str(self, store):
        store.set("1", b"x")
        assert 1 not in store
        assert None not in store
        assert b"1" not in store

    # -- byte ranges ------------------------------------------------------------------------------
    @pytest.mark.parametrize(
        "rng, expected",
        [
            (ByteRange(0, 10), slice(0, 10)),
            (ByteRange(5, 3), slice(5, 8)),
            (ByteRange(0), slice(0, None)),
            (ByteRange(42), slice(42, None)),
            (ByteRange(99), slice(99, None)),
            (ByteRange(100), slice(100, None)),
            (ByteRange(10, 0), slice(10, 10)),
            (ByteRange(95, 20), slice(95, 100)),
            (ByteRange(100, 5), slice(100, 100)),
            (ByteRange(250, 5), slice(250, 250)),
            (ByteRange(250), slice(250, None)),
            (ByteRange(-1), slice(-1, None)),
            (ByteRange(-16), slice(-16, None)),
            (ByteRange(-100), slice(0, None)),
            (ByteRange(-1000), slice(0, None)),
        ],
        ids=repr,
    )
    def test_byte_range(self, store, rng, expected):
        value = _payload(7, 100)
        store.set("nested/k", value)
        got = store.get("nested/k", rng)
        assert type(got) is bytes
        assert got == value[expected]

    def test_byte_range_of_empty_value(self, store):
        store.set("e", b"")
        for rng in (ByteRange(0), ByteRange(0, 5), ByteRange(3), ByteRange(-4)):
            assert store.get("e", rng) == b""

    def test_byte_range_none_is_whole_value(self, store):
        store.set("k", b"0123456789")
        assert store.get("k", None) == b"0123456789"

    def test_byte_range_validation(self):
        with pytest.raises(ValueError):
            ByteRange(0, -1)
        with pytest.raises(ValueError):
            ByteRange(-4, 2)

    # -- get_many ---------------------------------------------------------------------------------
    def test_get_many(self, filled):
        keys = [NESTED_KEYS[0], "missing", NESTED_KEYS[3], "also/missing", NESTED_KEYS[-1]]
        got = filled.get_many(keys)
        assert set(got) == set(keys)
        assert got["missing"] is None and got["also/missing"] is None
        for k in (NESTED_KEYS[0], NESTED_KEYS[3], NESTED_KEYS[-1]):
            assert type(got[k]) is bytes
            assert got[k] == filled.get(k)

    def test_get_many_generator_and_empty(self, filled):
        assert filled.get_many([]) == {}
        got = filled.get_many(k for k in NESTED_KEYS[:3])
        assert got == {k: filled.get(k) for k in NESTED_KEYS[:3]}

    # -- delete -----------------------------------------------------------------------------------
    def test_delete(self, store):
        store.set("a/b", b"1")
        store.set("a/c", b"2")
        store.delete("a/b")
        assert store.get("a/b") is None
        assert not store.exists("a/b")
        assert store.get("a/c") == b"2"
        assert sorted(store) == ["a/c"]

    def test_delete_missing_is_not_an_error(self, store):
        store.delete("missing")
        store.delete("missing/nested/key")
        store.set("leaf", b"1")
        store.delete("leaf/child")
        store.set("d/x", b"1")
        store.delete("d")  # a "directory", not a key
        assert store.get("leaf") == b"1"
        assert store.get("d/x") == b"1"

    def test_delitem(self, store):
        store["k"] = b"v"
        del store["k"]
        assert "k" not in store
        with pytest.raises(KeyError):
            del store["k"]
        with pytest.raises(KeyError):
            del store["missing/nested"]

    def test_mutable_mapping_helpers(self, store):
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

    def test_deletes_match_the_declared_capability(self, store):
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
    def test_iteration_and_len(self, filled):
        assert sorted(filled) == sorted(NESTED_KEYS)
        assert sorted(filled.keys()) == sorted(NESTED_KEYS)
        assert len(filled) == len(NESTED_KEYS)
        assert sorted(filled.list_prefix("")) == sorted(NESTED_KEYS)

    def test_list_prefix(self, filled):
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

    def test_list_dir(self, filled):
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

    def test_listdir_zarr2_spelling(self, filled):
        assert filled.listdir() == filled.list_dir("")
        assert filled.listdir("foo") == ["bar", "baz"]
        assert filled.listdir("foo/") == ["bar", "baz"]
        assert filled.listdir("/foo/baz/") == [".zattrs", "qux"]

    def test_list_dir_is_sorted(self, store):
        names = ["b", "a", "C", "10", "2", "_x", ".z", "a.b"]
        for name in names:
            store.set(f"p/{name}", b"1")
        store.set("p/dir/x", b"1")
        assert store.list_dir("p/") == sorted(names + ["dir"])

    def test_list_dir_forgets_deleted_children(self, store):
        store.set("a/b/c", b"1")
        store.set("x", b"1")
        store.delete("a/b/c")
        assert store.list_dir("") == ["x"]
        assert store.list_dir("a/") == []
        assert sorted(store) == ["x"]

    def test_listing_does_not_escape_root(self, store):
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

    def test_delete_prefix_does_not_escape_root(self, store, tmp_path):
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
    def test_delete_prefix(self, filled):
        filled.delete_prefix("foo/")
        assert sorted(filled.list_prefix("foo/")) == []
        assert "foo" not in filled.list_dir("")
        assert sorted(filled) == sorted(k for k in NESTED_KEYS if not k.startswith("foo/"))

    def test_delete_prefix_without_slash_is_a_string_prefix(self, store):
        for k in ("ab/c", "abc", "abd/e", "b"):
            store.set(k, b"1")
        store.delete_prefix("ab")
        assert sorted(store) == ["b"]

    def test_delete_prefix_missing_and_everything(self, filled):
        filled.delete_prefix("missing/")
        assert len(filled) == len(NESTED_KEYS)
        filled.delete_prefix("")
        assert len(filled) == 0
        assert filled.list_dir("") == []
        filled.set("again/k", b"1")  # still usable
        assert filled.get("again/k") == b"1"

    def test_rmdir(self, store):
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
    def test_getsize(self, store):
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
    def test_nested_keys_roundtrip(self, filled):
        for i, key in enumerate(NESTED_KEYS):
            assert filled.get(key) == _payload(i, 10 + i), key
            assert filled.exists(key)
            assert filled.getsize(key) == 10 + i

    # -- invalid keys -----------------------------------------------------------------------------
    @pytest.mark.parametrize("key", INVALID_KEYS, ids=repr)
    def test_invalid_key_set(self, store, key):
        with pytest.raises(InvalidPathError):
            store.set(key, b"x")
        with pytest.raises(InvalidPathError):
            store[key] = b"x"
        assert len(store) == 0

    @pytest.mark.parametrize("key", INVALID_KEYS, ids=repr)
    def test_invalid_key_get(self, store, key):
        store.set("a/b", b"1")
        with pytest.raises(InvalidPathError):
            store.get(key)
        with pytest.raises(InvalidPathError):
            store.get(key, ByteRange(0, 1))
        with pytest.raises(InvalidPathError):
            store[key]

    @pytest.mark.parametrize("key", ["../a", "/a", "a\\b", ""], ids=repr)
    def test_invalid_key_delete(self, store, key):
        with pytest.raises(InvalidPathError):
            store.delete(key)
        with pytest.raises(InvalidPathError):
            del store[key]

    @pytest.mark.parametrize("key", ["../a", "/a", "a\\b", "a//b"], ids=repr)
    def test_invalid_key_get_many(self, store, key):
        store.set("a/b", b"1")
        with pytest.raises(InvalidPathError):
            store.get_many(["a/b", key])

    def test_invalid_key_error_is_a_value_error(self, store):
        with pytest.raises(ValueError):
            store.set("../escape", b"x")
        with pytest.raises(InvalidPathError):
            store.set(1, b"x")  # type: ignore[arg-type]

    def test_invalid_key_does_not_escape(self, store, tmp_path):
        before = sorted(p.name for p in tmp_path.parent.iterdir())
        for key in ("../escape", "../../escape", "/tmp/escape"):
            with pytest.raises(InvalidPathError):
                store.set(key, b"x")
        assert sorted(p.name for p in tmp_path.parent.iterdir()) == before
        assert not (tmp_path / "escape").exists()

    # -- read-only --------------------------------------------------------------------------------
    def _fill_source(self, store):
        store.set("k", b"value")
        store.set("d/x", b"x")
        store.set("d/sub/y", b"yy")
        return {"k": b"value", "d/x": b"x", "d/sub/y": b"yy"}

    def test_read_only_reads(self, store, tmp_path):
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
    def test_read_only_refuses_writes(self, store, tmp_path, op):
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

    def test_read_only_array(self, store, tmp_path):
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
    def _run_threads(self, target, n):
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

    def test_concurrent_writes_distinct_keys(self, store):
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

    def test_concurrent_writes_same_key(self, store):
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

    def test_concurrent_readers_and_listers_see_complete_values(self, store):
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
    def test_pickle(self, store):
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
    def test_array_roundtrip(self, store, zarr_format):
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
    def test_array_in_subpath(self, store, zarr_format):
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
    def make_store(self, tmp_path) -> Store:
        """Return a new, empty, writable store (``tmp_path``: a fresh per-test directory)."""
        raise NotImplementedError(f"{type(self).__name__} must implement make_store(tmp_path)")

    def reopen_store(self, tmp_path, store: Store, mode: str) -> Store:
        """Return a store over the data of ``store`` for reading (``'r'``) or updating (``'r+'``)."""
        return store

    # -- fixtures and helpers ---------------------------------------------------------------------
    @pytest.fixture
    def api_store(self, tmp_path):
        """A new store made by ``make_store``; it and every reopened store are closed after."""
        s = self.make_store(tmp_path)
        self._api_stores = [s]
        try:
            yield s
        finally:
            for opened in reversed(self._api_stores):
                opened.close()

    def _reopen(self, tmp_path, store: Store, mode: str) -> Store:
        s = self.reopen_store(tmp_path, store, mode)
        if s is not store:
            self._api_stores.append(s)
        if mode == "r+":
            assert not s.read_only, f"reopen_store(..., mode='r+') gave a read-only store {s!r}"
        return s

    # -- tests ------------------------------------------------------------------------------------
    @pytest.mark.parametrize("zarr_format", [2, 3])
    def test_api_array_roundtrip(self, api_store, tmp_path, zarr_format):
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

    def test_api_sharded_v3(self, api_store, tmp_path):
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
    def test_api_group_attrs_consolidated(self, api_store, tmp_path, zarr_format):
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
