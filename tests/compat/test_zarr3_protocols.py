"""zarr-python 3's extension points on zarrkit: its store protocol on every zarrkit store, a
store and codecs written for zarr-python 3 by another package (found through its ``zarr.codecs``
entry points), its buffers, and ``zarr.codecs.numcodecs`` arrays shared with zarr-python."""

from __future__ import annotations

import asyncio
import importlib.metadata
import sys
from pathlib import Path

import numpy as np
import pytest

import zarrkit
from zarrkit.abc.store import OffsetByteRequest, RangeByteRequest, SuffixByteRequest
from zarrkit.buffer import cpu, default_buffer_prototype, gpu
from zarrkit.errors import ReadOnlyError
from zarrkit.storage import DirectoryStore, MemoryStore, ZipStore

PLUGIN = Path(__file__).parent / "zarr3_plugin"
PROTO = default_buffer_prototype()


@pytest.fixture
def plugin(monkeypatch):
    """The demo package, installed: its directory (with its .dist-info) on sys.path."""
    monkeypatch.syspath_prepend(str(PLUGIN))
    import zarr3_plugin_demo

    yield zarr3_plugin_demo
    sys.modules.pop("zarr3_plugin_demo", None)


@pytest.mark.parametrize("kind", ["memory", "local", "zip"])
def test_every_store_answers_zarr3_calls_and_keeps_its_synchronous_ones(kind, tmp_path):
    store = {"memory": MemoryStore, "local": lambda: DirectoryStore(tmp_path / "d"),
             "zip": lambda: ZipStore(tmp_path / "z.zip", mode="w")}[kind]()

    async def zarr3_code():
        await store.set("g/a", PROTO.buffer.from_bytes(b"0123456789"))
        await store.set_if_not_exists("g/a", PROTO.buffer.from_bytes(b"no"))
        await store.set_if_not_exists("g/b/c", PROTO.buffer.from_bytes(b"xy"))
        whole = await store.get("g/a", PROTO)
        parts = [await store.get("g/a", PROTO, r) for r in
                 (RangeByteRequest(2, 5), OffsetByteRequest(7), SuffixByteRequest(3))]
        partial = await store.get_partial_values(PROTO, [("g/a", RangeByteRequest(0, 1)), ("nope", None)])
        missing = await store.get("nope", prototype=PROTO)
        listed = sorted([k async for k in store.list_prefix("g/")])
        children = [k async for k in store.list_dir("g")]
        everything = sorted([k async for k in store.list()])
        return whole, parts, partial, missing, listed, children, everything

    whole, parts, partial, missing, listed, children, everything = asyncio.run(zarr3_code())
    assert whole.to_bytes() == b"0123456789" and isinstance(whole, cpu.Buffer)
    assert [p.to_bytes() for p in parts] == [b"234", b"789", b"789"]
    assert partial[0].to_bytes() == b"0" and partial[1] is None and missing is None
    assert listed == everything == ["g/a", "g/b/c"] and children == ["a", "b"]
    # the same store, called as zarrkit and zarr-python 2 code call it: synchronous
    assert store.get("g/a") == b"0123456789" and store["g/b/c"] == b"xy"
    assert sorted(store.list_prefix("g/")) == listed and store.list_dir("g/") == ["a", "b"]
    assert store.set("k", b"v") is None and store.get("k") == b"v"
    if kind != "zip":
        asyncio.run(_await(store.delete("k")))
        store.delete("g/a")  # not awaited: done all the same
        assert not store.exists("k") and not store.exists("g/a")


async def _await(call):
    return await call


def test_a_zarr3_call_on_a_read_only_store_is_refused_when_awaited():
    store = MemoryStore().with_read_only(True)
    with pytest.raises(ReadOnlyError):
        asyncio.run(_await(store.set("k", PROTO.buffer.from_bytes(b"v"))))


def test_a_store_written_for_zarr3_is_taken_wherever_a_store_is(plugin):
    store = plugin.DictDemoStore()
    z = zarrkit.create_array(store, name="a", shape=(6,), chunks=(3,), dtype="i4", fill_value=0)
    z[:] = np.arange(6)
    group = zarrkit.open_group(store, mode="r+")
    group.attrs["title"] = "demo"
    assert "a/c/0" in store.data and "a/c/1" in store.data and "set" in store.calls
    assert list(zarrkit.open_array(store, path="a", mode="r")[:]) == list(range(6))
    assert zarrkit.open_group(store, mode="r").attrs["title"] == "demo"
    assert sorted(zarrkit.open_group(store, mode="r").array_keys()) == ["a"]
    assert type(zarrkit.open_array(store, path="a", mode="r").store).__name__ == "ZarrStoreAdapter"
    with pytest.raises(ReadOnlyError):
        zarrkit.open_array(plugin.DictDemoStore(store.data, read_only=True), path="a")[0] = 5


def test_codecs_of_another_package_write_and_read_through_the_chain(plugin, tmp_path):
    names = {e.name for e in importlib.metadata.entry_points(group="zarr.codecs")}
    assert {"xor_demo", "add_demo"} <= names
    path = tmp_path / "x.zarr"
    z = zarrkit.create_array(str(path), shape=(4,), chunks=(4,), dtype="u1", fill_value=0,
                             filters=[plugin.AddDemo(amount=2)], compressors=[plugin.XorDemo(key=7)])
    z[:] = np.array([1, 2, 3, 4], dtype="u1")
    raw = (path / "c" / "0").read_bytes()
    assert raw == bytes([(v + 2) ^ 7 for v in (1, 2, 3, 4)]) + bytes([7])
    # read back from the metadata alone: the names are found through the entry points
    again = zarrkit.open_array(str(path), mode="r")
    assert list(again[:]) == [1, 2, 3, 4]
    assert [c.to_dict()["name"] for c in again.filters] == ["add_demo"]
    assert again.compressors[0] == plugin.XorDemo(key=7)
    with pytest.raises(ValueError, match="integer"):  # its zarr-3 validate() is asked
        zarrkit.create_array(zarrkit.MemoryStore(), shape=(2,), dtype="f4", filters=[plugin.AddDemo()])


def test_zarr_python_and_zarrkit_share_numcodecs_codec_arrays(tmp_path):
    zarr = pytest.importorskip("zarr")
    import zarr.codecs.numcodecs as zn

    from zarrkit.codecs import numcodecs as kn

    data = np.arange(40, dtype="i4").reshape(4, 10) * 3
    theirs = zarr.create_array(str(tmp_path / "t.zarr"), shape=data.shape, chunks=(2, 5), dtype="i4",
                               filters=[zn.Delta(dtype="i4")], compressors=[zn.Zlib(level=3)])
    theirs[:] = data
    read = zarrkit.open_array(str(tmp_path / "t.zarr"), mode="r")
    assert np.array_equal(read[:], data)
    ours = zarrkit.create_array(str(tmp_path / "o.zarr"), shape=data.shape, chunks=(2, 5), dtype="i4",
                                filters=[kn.Delta(dtype="i4")], compressors=[kn.Zlib(level=3)])
    ours[:] = data
    for key in ("c/0/0", "c/1/1"):  # bit for bit
        assert (tmp_path / "o.zarr" / key).read_bytes() == (tmp_path / "t.zarr" / key).read_bytes()
    assert np.array_equal(zarr.open_array(str(tmp_path / "o.zarr"), mode="r")[:], data)


def test_buffers_are_zarr_buffer_and_gpu_ones_say_what_they_need():
    assert zarrkit.buffer.default_buffer_prototype().buffer is cpu.Buffer
    assert cpu.numpy_buffer_prototype() == PROTO
    assert cpu.as_numpy_array_wrapper(lambda b: b[::-1].copy(), cpu.Buffer.from_bytes(b"abc"), PROTO).to_bytes() == b"cba"
    if not gpu.available:
        with pytest.raises(ImportError, match="cupy"):
            gpu.Buffer.from_bytes(b"x")


def test_built_in_codecs_run_on_zarr3_buffers_without_an_event_loop(plugin):
    from zarrkit.dtype import parse_dtype

    from zarrkit.abc.codec import ArraySpec, SupportsSyncCodec
    from zarrkit.codecs import (
        BloscCodec,
        BytesCodec,
        Crc32cCodec,
        GzipCodec,
        TransposeCodec,
        VLenUTF8Codec,
        ZstdCodec,
    )

    data = np.arange(12, dtype=">i4").reshape(3, 4)
    spec = ArraySpec(data.shape, parse_dtype(data.dtype, zarr_format=3), 0)
    nd = default_buffer_prototype().nd_buffer.from_ndarray_like(data)
    transpose, serializer = TransposeCodec(order=(1, 0)), BytesCodec(endian="big")
    moved = transpose._encode_sync(nd, spec)
    assert moved.as_numpy_array().shape == (4, 3)
    raw = serializer._encode_sync(moved, ArraySpec((4, 3), spec.dtype, 0))
    assert raw.to_bytes() == data.T.tobytes()  # big-endian, as the array is
    for compressor in (ZstdCodec(level=1), BloscCodec(), GzipCodec(), Crc32cCodec()):
        assert isinstance(compressor, SupportsSyncCodec)
        encoded = compressor._encode_sync(raw, spec)
        assert encoded.to_bytes() != raw.to_bytes()
        assert compressor._decode_sync(encoded, spec).to_bytes() == raw.to_bytes()
    back = transpose._decode_sync(serializer._decode_sync(raw, ArraySpec((4, 3), spec.dtype, 0)), spec)
    assert np.array_equal(back.as_numpy_array(), data)
    words = np.array(["a", "zarr", ""], dtype=object)
    text = ArraySpec((3,), parse_dtype(str, zarr_format=3), "")
    vlen = VLenUTF8Codec()
    assert list(vlen._decode_sync(vlen._encode_sync(nd.from_ndarray_like(words), text), text).as_numpy_array()) == list(words)
    # a codec of another package is one only when it defines both methods
    assert isinstance(plugin.AddDemo(amount=1), SupportsSyncCodec)
    assert not isinstance(plugin.XorDemo(key=1), SupportsSyncCodec)
