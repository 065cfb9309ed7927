"""zarr-python 3's buffer types and the calls code written for its asynchronous stores makes."""

from __future__ import annotations

import numpy as np
import pytest

import zarrkit
from zarrkit.api.async_nodes import AsyncArray, sync
from zarrkit.errors import ArrayNotFoundError
from zarrkit.storage import MemoryStore, StorePath
from zarrkit.storage.buffer import Buffer, NDArrayLike, NDBuffer, default_buffer_prototype


def test_buffer_round_trips_bytes_and_shares_array_memory():
    proto = default_buffer_prototype()
    assert proto.buffer is Buffer and proto.nd_buffer is NDBuffer
    buf = proto.buffer.from_bytes(b"abcd")
    assert buf.to_bytes() == b"abcd" and len(buf) == 4
    assert buf[1:3].to_bytes() == b"bc"
    assert (buf + Buffer.from_bytes(b"ef")).to_bytes() == b"abcdef"
    assert Buffer.create_zero_length().to_bytes() == b""
    arr = np.arange(3, dtype="<u2")
    shared = Buffer.from_array_like(arr)
    assert shared.to_bytes() == arr.tobytes()
    arr[0] = 7  # a view, not a copy
    assert shared.to_bytes()[:2] == b"\x07\x00"
    assert Buffer.from_bytes(b"x") == Buffer.from_bytes(b"x") != Buffer.from_bytes(b"y")


def test_store_takes_a_buffer_as_a_value():
    store = MemoryStore()
    store.set("junk", default_buffer_prototype().buffer.from_bytes(b"junk"))
    assert store.get("junk") == b"junk"


def test_nd_buffer_wraps_numpy():
    nd = NDBuffer.create(shape=(2, 3), dtype="f8", fill_value=1.5)
    assert nd.shape == (2, 3) and nd.dtype == np.dtype("f8") and nd.all_equal(1.5)
    nd[0, 0] = 2.0
    assert not nd.all_equal(1.5)
    assert NDBuffer.from_numpy_array(np.zeros(2, ">i4")).byteorder == "big"
    nan = NDBuffer.create(shape=(2,), dtype="f4", fill_value=np.nan)
    assert nan.all_equal(np.nan) and not nan.all_equal(np.nan, equal_nan=False)


def test_arrays_read_are_nd_array_like():
    z = zarrkit.create_array(MemoryStore(), shape=(4,), dtype="i4")
    assert isinstance(z[:], NDArrayLike)
    assert not isinstance(b"bytes", NDArrayLike)


def test_sync_returns_a_finished_call_as_it_is():
    store = MemoryStore()
    assert sync(store.set("k", b"v")) is None  # a synchronous store call, already made
    assert store.get("k") == b"v"
    assert sync(AsyncArray(zarrkit.zeros(3, dtype="i1")).getitem(2)) == 0


def test_array_open_opens_what_is_stored_and_refuses_what_is_not():
    store = MemoryStore()
    zarrkit.create_array(store, name="a", shape=(3,), dtype="i2", fill_value=5)
    a = zarrkit.Array.open(StorePath(store, "a"))
    assert a.shape == (3,) and a[:].tolist() == [5, 5, 5]
    with pytest.raises(ArrayNotFoundError):
        zarrkit.Array.open(StorePath(store, "missing"))

