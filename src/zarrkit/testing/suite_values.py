"""Store conformance: values (set and get, missing keys, byte ranges, get_many)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from zarrkit.storage.base import ByteRange, Store

from .suite_common import NESTED_KEYS, _payload

__all__ = ["ValueTests"]


class ValueTests:
    """Values round-trip as bytes; missing keys read as None; byte ranges and batches."""

    # -- set / get --------------------------------------------------------------------------------
    def test_new_store_is_empty(self, store: Store) -> None:
        assert len(store) == 0
        assert list(store) == []
        assert list(store.list_prefix("")) == []
        assert store.list_dir("") == []

    @pytest.mark.parametrize(
        "kind", ["bytes", "bytearray", "memoryview", "empty", "large"]
    )
    def test_set_get_roundtrip_bytes_like(self, store: Store, kind: str) -> None:
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
    def test_set_get_roundtrip_numpy(self, store: Store, make: Callable[[], Any]) -> None:
        arr = make()
        store.set("arr", arr)
        got = store.get("arr")
        assert type(got) is bytes
        assert got == arr.tobytes(order="C")
        back = np.frombuffer(got, dtype=arr.dtype).reshape(arr.shape)
        np.testing.assert_array_equal(back, arr)

    def test_setitem_getitem(self, store: Store) -> None:
        store["x/y"] = b"value"
        assert store["x/y"] == b"value"
        store["x/z"] = bytearray(b"other")
        assert store["x/z"] == b"other"

    def test_stored_value_is_a_copy(self, store: Store) -> None:
        buf = bytearray(b"abcdef")
        store.set("k", buf)
        buf[:] = b"XXXXXX"
        assert store.get("k") == b"abcdef"
        arr = np.arange(4, dtype="i4")
        store.set("a", arr)
        arr[:] = -1
        assert store.get("a") == np.arange(4, dtype="i4").tobytes()

    def test_set_parts_stores_the_concatenation(self, store: Store) -> None:
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

    def test_get_transient_reads_the_value(self, store: Store) -> None:
        store.set("t/a", _payload(5, 3000))
        store.set("t/b", b"short")
        assert bytes(store.get_transient("t/a")) == _payload(5, 3000)
        assert bytes(store.get_transient("t/b")) == b"short"
        assert store.get_transient("t/missing") is None
        assert bytes(store.get_transient("t/a", ByteRange(10, 20))) == _payload(5, 3000)[10:30]
        assert bytes(store.get_transient("t/a", ByteRange(-7))) == _payload(5, 3000)[-7:]
        assert store.get("t/a") == _payload(5, 3000)

    def test_set_rejects_non_bytes(self, store: Store) -> None:
        for bad in ("a string", 12, 1.5, None, object(), [1, 2]):
            with pytest.raises(TypeError):
                store.set("k", bad)
        assert store.get("k") is None

    def test_overwrite_replaces(self, store: Store) -> None:
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
    def test_get_missing_is_none(self, store: Store) -> None:
        assert store.get("missing") is None
        assert store.get("missing/nested/key") is None
        assert store.get("missing", ByteRange(0, 4)) is None
        assert store.get("missing", ByteRange(-4)) is None
        assert not store.exists("missing")
        assert "missing" not in store

    def test_getitem_missing_raises_keyerror(self, store: Store) -> None:
        with pytest.raises(KeyError):
            store["missing"]
        with pytest.raises(KeyError):
            store["missing/nested"]

    def test_empty_value_is_present(self, store: Store) -> None:
        store.set("empty", b"")
        assert store.get("empty") == b""
        assert store.exists("empty")
        assert "empty" in store
        assert store["empty"] == b""
        assert store.getsize("empty") == 0
        assert list(store) == ["empty"]

    def test_prefix_of_a_key_is_not_a_key(self, store: Store) -> None:
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

    def test_key_below_a_value_is_missing(self, store: Store) -> None:
        store.set("leaf", b"1")
        assert store.get("leaf/child") is None
        assert not store.exists("leaf/child")
        assert "leaf/child" not in store
        assert store.getsize("leaf/child") == 0

    def test_keys_no_store_can_hold_are_not_in_it(self, store: Store) -> None:
        store.set("c/0", b"1")
        for k in ("c/", "", "../c/0", "c//0", "/c/0"):
            assert k not in store  # not an error: such a key is simply not there

    def test_contains_non_str(self, store: Store) -> None:
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
    def test_byte_range(self, store: Store, rng: Any, expected: Any) -> None:
        value = _payload(7, 100)
        store.set("nested/k", value)
        got = store.get("nested/k", rng)
        assert type(got) is bytes
        assert got == value[expected]

    def test_byte_range_of_empty_value(self, store: Store) -> None:
        store.set("e", b"")
        for rng in (ByteRange(0), ByteRange(0, 5), ByteRange(3), ByteRange(-4)):
            assert store.get("e", rng) == b""

    def test_byte_range_none_is_whole_value(self, store: Store) -> None:
        store.set("k", b"0123456789")
        assert store.get("k", None) == b"0123456789"

    def test_byte_range_validation(self) -> None:
        with pytest.raises(ValueError):
            ByteRange(0, -1)
        with pytest.raises(ValueError):
            ByteRange(-4, 2)

    # -- get_many ---------------------------------------------------------------------------------
    def test_get_many(self, filled: Store) -> None:
        keys = [NESTED_KEYS[0], "missing", NESTED_KEYS[3], "also/missing", NESTED_KEYS[-1]]
        got = filled.get_many(keys)
        assert set(got) == set(keys)
        assert got["missing"] is None and got["also/missing"] is None
        for k in (NESTED_KEYS[0], NESTED_KEYS[3], NESTED_KEYS[-1]):
            assert type(got[k]) is bytes
            assert got[k] == filled.get(k)

    def test_get_many_generator_and_empty(self, filled: Store) -> None:
        assert filled.get_many([]) == {}
        got = filled.get_many(k for k in NESTED_KEYS[:3])
        assert got == {k: filled.get(k) for k in NESTED_KEYS[:3]}

    # -- get_many_upto ----------------------------------------------------------------------------
    def test_get_many_upto_is_get_upto_of_each(self, filled: Store) -> None:
        keys = [NESTED_KEYS[0], "missing", NESTED_KEYS[3], NESTED_KEYS[0], "also/missing", NESTED_KEYS[-1]]
        limit = max(len(filled.get(k)) for k in NESTED_KEYS)

        def as_bytes(values):
            return [None if v is None else bytes(v) for v in values]

        assert as_bytes(filled.get_many_upto(keys, limit)) == as_bytes(filled.get_upto(k, limit) for k in keys)
        assert as_bytes(filled.get_many_upto(keys, limit))[1] is None
        assert filled.get_many_upto([], limit) == []

    # -- prefetch ---------------------------------------------------------------------------------
    def test_prefetch_is_only_a_hint(self, filled: Store) -> None:
        before = {k: filled.get(k) for k in filled.list_prefix("")}
        # present, missing, repeated and invalid keys: nothing raised, nothing changed
        filled.prefetch([NESTED_KEYS[0], "missing", NESTED_KEYS[0], "../outside", "/abs", "a//b", ""])
        filled.prefetch([])
        filled.prefetch(iter(NESTED_KEYS))
        assert {k: filled.get(k) for k in filled.list_prefix("")} == before
