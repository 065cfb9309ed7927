"""Attacks on the reads of small zstd chunk files a row at a time (``Row``, ``chunk_rows``) and
on the batch read of a directory store (``DirectoryStore.get_many_upto``).

What must hold, whatever the array, the selection and the files on disk: a read equals numpy
on the same data; nothing outside the store root is read (links leading out are refused with
InvalidPathError naming the key; named pipes, sockets and devices are refused and never
block); a value larger than what the codecs write is refused with ChunkDecodeError naming
the key, as is a corrupt chunk anywhere in a row; wrappers that count or cache keys see every
chunk; memory stays bounded.  Rows are asked for on small outputs too by setting the public
``ROW_OUTPUT_FACTOR`` to 0 (restored afterwards).  Special files are tried in a subprocess
(``_rows_attack_worker.py``) with a timeout, so that a read blocked on one fails instead of
hanging the run.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import tracemalloc

import numpy as np
import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrkit
import zarrkit.core.read as read_mod
from zarrkit.codecs import BytesCodec, ZstdCodec
from zarrkit.codecs.chain import max_stored_size
from zarrkit.errors import ChunkDecodeError, InvalidPathError, ShapeMismatchError
from zarrkit.storage import (
    CountingStore,
    DirectoryStore,
    LatencyStore,
    LoggingStore,
    LRUStoreCache,
    MemoryStore,
    ReadOnlyStore,
    WrapperStore,
)
from zarrkit.storage.cache import CacheStore
from zarrkit.storage.keys import are_valid_keys, is_valid_key

WORKER = os.path.join(os.path.dirname(__file__), "_rows_attack_worker.py")
SHAPE, CHUNKS = (8, 12), (2, 3)  # 4 rows of 4 chunks of 48 bytes
DATA = np.arange(np.prod(SHAPE), dtype="f8").reshape(SHAPE)
ROW_KEYS = [[f"g/a/c/{i}/{j}" for j in range(4)] for i in range(4)]


@contextlib.contextmanager
def rows_everywhere():
    """Rows for outputs of any size (by default only outputs many times a row use them)."""
    saved = read_mod.ROW_OUTPUT_FACTOR
    read_mod.ROW_OUTPUT_FACTOR = 0
    try:
        yield
    finally:
        read_mod.ROW_OUTPUT_FACTOR = saved


class BatchSpy(WrapperStore):
    """Forwards everything; records the keys of each ``get_many_upto`` (the batch reads)."""

    def __init__(self, inner):
        super().__init__(inner)
        self.batches: list[list[str]] = []

    def get_many_upto(self, keys, limit):
        self.batches.append(list(keys))
        return super().get_many_upto(keys, limit)


def make_array(root, data=DATA, chunks=CHUNKS, **kw):
    """A v3 array ``g/a`` of small zstd chunks below ``root``, holding ``data``."""
    kw.setdefault("compressors", ZstdCodec(level=1))
    kw.setdefault("fill_value", -1.0)
    z = zarrkit.create_array(DirectoryStore(root), name="g/a", shape=data.shape, chunks=chunks,
                             dtype=data.dtype, zarr_format=3, **kw)
    z[...] = data
    return z


def read(store, selection=Ellipsis, threads=2, path="g/a"):
    with zarrkit.config.set(threads=threads), rows_everywhere():
        return zarrkit.open_array(store, path=path, mode="r")[selection]


def chunk_file(root, key):
    return os.path.join(str(root), *key.split("/"))


def dirty_heap(nbytes):
    """Leave freed memory of about ``nbytes`` holding a pattern, so that a result allocated
    next (no longer backed up front, nor zeroed) shows any element a read forgot to write."""
    for n in (nbytes, nbytes // 2, 4096, 256):
        block = np.full(max(n, 8), 0x5A, dtype=np.uint8)
        del block


# -- values: every read equals numpy -------------------------------------------------------------
def _make_any(path, layout, shape, chunks, dtype, fill):
    if layout.startswith("v2"):
        return zarrkit.create(shape=shape, chunks=chunks, dtype=dtype, store=DirectoryStore(path), zarr_format=2,
                              compressor=zarrkit.Zstd(level=1), fill_value=fill, path="grp/in:ner",
                              dimension_separator="/" if layout == "v2-nested" else ".",
                              order="F" if layout == "v2-F" else "C")
    extra = {"serializer": BytesCodec(endian="big")} if layout == "v3-big-endian" else {}
    encoding = {"name": "v2", "separator": "."} if layout == "v3-v2-keys" else None
    return zarrkit.create_array(DirectoryStore(path), name="grp/in:ner", shape=shape, chunks=chunks, dtype=dtype,
                                compressors=ZstdCodec(level=1), zarr_format=3, fill_value=fill,
                                chunk_key_encoding=encoding, **extra)


def _dim_selection(n):
    bounds = st.one_of(st.none(), st.integers(-n - 2, n + 2))
    steps = st.sampled_from([None, 1, 1, 2, -1, -1, -3])
    return st.one_of(st.just(slice(None)), st.builds(slice, bounds, bounds, steps), st.integers(-n, n - 1))


@st.composite
def _cases(draw):
    ndim = draw(st.integers(2, 4))
    chunks = tuple(draw(st.integers(1, 4)) for _ in range(ndim))
    shape = tuple(draw(st.integers(1, 3 * c + 2)) for c in chunks)
    layout = draw(st.sampled_from(["v2", "v2-nested", "v2-F", "v3", "v3-big-endian", "v3-v2-keys"]))
    dtypes = ["<f8", "<i2", ">i4", "bool", "u1"]
    if layout.startswith("v2"):
        dtypes += ["c8", "M8[s]", "structured"]
    dtype = draw(st.sampled_from(dtypes))
    fill = draw(st.sampled_from([None, 1])) if layout.startswith("v2") else 1
    if dtype in ("structured", "M8[s]"):
        fill = None
    selection = tuple(draw(_dim_selection(n)) for n in shape)
    if draw(st.booleans()):  # an Ellipsis standing for the leading dimensions
        selection = (Ellipsis, *selection[draw(st.integers(0, ndim)):])
    grid = [-(-n // c) for n, c in zip(shape, chunks)]
    every = list(itertools.product(*[range(g) for g in grid]))
    written = draw(st.lists(st.sampled_from(every), unique=True)) if draw(st.booleans()) else every
    threads = draw(st.sampled_from([1, 2, 4]))
    out = draw(st.sampled_from([None, None, "C", "F", "strided"]))
    return shape, chunks, layout, dtype, fill, selection, written, threads, out


@settings(max_examples=70, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_cases())
def test_any_read_of_any_layout_matches_numpy(case):
    shape, chunks, layout, dtype, fill, selection, written, threads, out_kind = case
    if dtype == "structured":
        dtype = [("a", "<i4"), ("b", "u1")]
    with tempfile.TemporaryDirectory() as d:
        z = _make_any(d, layout, shape, chunks, dtype, fill)
        dt = z.dtype
        expected = np.zeros(shape, dtype=dt)
        if fill is not None:
            expected[...] = np.array(fill).astype(dt)
        raw = np.random.default_rng(len(written)).integers(0, 256, size=int(np.prod(shape)) * dt.itemsize,
                                                            dtype=np.uint8)
        if dt.kind == "b":
            values = (raw[: expected.size] % 2 == 1).reshape(shape)
        elif dt.kind in "Mc":
            values = raw[: expected.size].reshape(shape).astype(dt)
        else:
            values = raw.view(dt).reshape(shape)
        for coords in written:  # the chunks not written stay missing
            region = tuple(slice(c * k, (c + 1) * k) for c, k in zip(coords, chunks))
            z[region] = expected[region] = values[region]
        want = expected[selection]
        with zarrkit.config.set(threads=threads), rows_everywhere():
            again = zarrkit.open_array(DirectoryStore(d), path="grp/in:ner", mode="r")
            if out_kind is None or np.ndim(want) == 0:
                dirty_heap(np.asarray(want).nbytes)
                got = again[selection]
            else:
                if out_kind == "strided":
                    base = np.zeros((*want.shape, 2), dtype=dt)
                    out = base[..., 1]
                else:
                    out = np.zeros(want.shape, dtype=dt, order=out_kind)
                got = again.get_basic_selection(selection, out=out)
                assert got is out
                if out_kind == "strided":
                    beside = base[..., 0]  # nothing written beside the view
                    assert np.array_equal(beside, np.zeros_like(beside))
            whole = again[...]
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(whole, expected)


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_a_large_read_at_the_default_row_factor_matches_numpy(tmp_path, threads):
    # 2 KiB chunks, rows of 32: the output (1 MiB) is large enough for rows without the knob
    data = np.random.default_rng(5).standard_normal((256, 512))
    make_array(tmp_path, data, chunks=(16, 16))
    spy = BatchSpy(DirectoryStore(tmp_path))
    with zarrkit.config.set(threads=threads):
        again = zarrkit.open_array(spy, path="g/a", mode="r")
        dirty_heap(data.nbytes)
        np.testing.assert_array_equal(again[...], data)
        np.testing.assert_array_equal(again[::-1, 16:480], data[::-1, 16:480])
        np.testing.assert_array_equal(again[3:250:2, :], data[3:250:2, :])
    assert spy.batches, "small chunks are read in batches"


def test_a_batch_names_every_chunk_once_in_row_order(tmp_path):
    make_array(tmp_path)
    spy = BatchSpy(DirectoryStore(tmp_path))
    # a part of the last dimension (its first two chunks), the rows reversed
    got = read(spy, (slice(None, None, -1), slice(0, 6)), threads=1)
    np.testing.assert_array_equal(got, DATA[::-1, :6])
    keys = [k for batch in spy.batches for k in batch]
    assert sorted(keys) == sorted(f"g/a/c/{i}/{j}" for i in range(4) for j in range(2))
    assert len(keys) == len(set(keys))


@pytest.mark.parametrize("selection", [
    (slice(None), slice(0, 9)),  # whole chunks, part of the last dimension
    (slice(None), slice(3, 12)),  # the last dimension from its second chunk
    (slice(1, 7), Ellipsis),  # partial chunks in the leading dimension: not rows there
    (Ellipsis, slice(None, None, -1)),  # the last dimension reversed
    (Ellipsis, slice(None, None, 2)),
    (3, slice(None)),  # an integer drops a dimension
    (slice(None), 5),
    (slice(None, None, -2), slice(None)),
    (slice(6, 100), slice(-12, None)),
])
@pytest.mark.parametrize("threads", [1, 4])
def test_selections_around_rows_match_numpy(tmp_path, selection, threads):
    make_array(tmp_path)
    np.testing.assert_array_equal(read(DirectoryStore(tmp_path), selection, threads), DATA[selection])


def test_orthogonal_and_block_selections_match_numpy(tmp_path):
    z = make_array(tmp_path)
    with rows_everywhere():
        np.testing.assert_array_equal(z.oindex[2:8, :], DATA[2:8, :])
        np.testing.assert_array_equal(z.oindex[[0, 5], :], DATA[[0, 5], :])
        np.testing.assert_array_equal(z.blocks[1:3], DATA[2:6])
        np.testing.assert_array_equal(z.get_orthogonal_selection((slice(None), slice(None))), DATA)


def test_an_edge_row_and_an_edge_column_match_numpy(tmp_path):
    # chunks stick out of the array in both dimensions: the last chunk of each row is partial
    data = np.arange(11 * 13, dtype="<i4").reshape(11, 13)
    make_array(tmp_path, data, chunks=(3, 4), fill_value=7)
    for sel in [Ellipsis, (slice(None, None, -1), Ellipsis), (slice(9, 11), slice(None))]:
        np.testing.assert_array_equal(read(DirectoryStore(tmp_path), sel), data[sel])


def test_missing_chunks_and_no_fill_value(tmp_path):
    z = zarrkit.create(shape=SHAPE, chunks=CHUNKS, dtype="<i8", store=DirectoryStore(tmp_path), zarr_format=2,
                       compressor=zarrkit.Zstd(level=1), fill_value=None, path="g/a")
    expected = np.zeros(SHAPE, dtype="<i8")
    for i, j in [(0, 0), (1, 3), (3, 1)]:
        region = (slice(2 * i, 2 * i + 2), slice(3 * j, 3 * j + 3))
        z[region] = expected[region] = 100 + 10 * i + j
    for threads in (1, 2):
        np.testing.assert_array_equal(read(DirectoryStore(tmp_path), threads=threads), expected)


def test_very_many_tiny_chunks(tmp_path):
    data = (np.arange(48 * 64) % 251).astype("u1").reshape(48, 64)
    make_array(tmp_path, data, chunks=(1, 1), fill_value=0)
    for threads in (1, 2):
        np.testing.assert_array_equal(read(DirectoryStore(tmp_path), threads=threads), data)
    np.testing.assert_array_equal(read(DirectoryStore(tmp_path), (slice(None, None, -1), slice(5, 60))),
                                  data[::-1, 5:60])


def _other_stores(tmp_path):
    from zarrkit.storage import (
        DBMStore,
        FsspecStore,
        LMDBStore,
        NestedDirectoryStore,
        SQLiteStore,
        ZipStore,
    )

    yield "memory", MemoryStore()
    yield "mapping", {}
    yield "zip", ZipStore(str(tmp_path / "a.zip"), mode="w")
    yield "sqlite", SQLiteStore(str(tmp_path / "a.sqlite"))
    yield "dbm", DBMStore(str(tmp_path / "a.dbm"))
    yield "lmdb", LMDBStore(str(tmp_path / "a.lmdb"))
    yield "fsspec file", FsspecStore("file://" + str(tmp_path / "fs"))
    yield "nested directory", NestedDirectoryStore(str(tmp_path / "nested"))
    yield "normalized directory", DirectoryStore(str(tmp_path / "norm"), normalize_keys=True)


def test_other_stores_read_rows_as_numpy(tmp_path):
    seen = []
    for name, store in _other_stores(tmp_path):
        z = zarrkit.create_array(store, name="G/a", shape=SHAPE, chunks=CHUNKS, dtype="f8",
                                 compressors=ZstdCodec(level=1), fill_value=-1.0)
        z[...] = DATA
        z[2:4, 6:9] = -1.0  # only the fill value: the chunk is removed, missing in a row
        assert "G/a/c/1/2" not in store and "G/a/c/1/3" in store, name
        expected = DATA.copy()
        expected[2:4, 6:9] = -1.0
        with rows_everywhere(), zarrkit.config.set(threads=2):
            for sel in [Ellipsis, (slice(None, None, -1), slice(3, None))]:
                np.testing.assert_array_equal(z[sel], expected[sel], err_msg=name)
        seen.append(name)
    assert len(seen) == 9


def test_concurrent_reads_from_several_threads(tmp_path):
    import threading

    data = np.random.default_rng(1).standard_normal((64, 96))
    make_array(tmp_path, data, chunks=(4, 6))
    z = zarrkit.open_array(DirectoryStore(tmp_path), path="g/a", mode="r")
    selections = [Ellipsis, (slice(None, None, -1), slice(None)), (slice(8, 60), slice(12, 96)),
                  (slice(None, None, 3), slice(None))]
    errors = []

    def work(sel):
        try:
            for _ in range(5):
                np.testing.assert_array_equal(z[sel], data[sel])
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    with rows_everywhere(), zarrkit.config.set(threads=2):
        threads = [threading.Thread(target=work, args=(sel,)) for sel in selections]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors, errors


def test_fields_of_a_structured_array(tmp_path):
    dt = np.dtype([("a", "<i4"), ("b", "<f4")])
    data = np.zeros(SHAPE, dtype=dt)
    data["a"] = np.arange(96).reshape(SHAPE)
    data["b"] = -np.arange(96).reshape(SHAPE) / 2
    z = zarrkit.create(shape=SHAPE, chunks=CHUNKS, dtype=dt, store=DirectoryStore(tmp_path), zarr_format=2,
                       compressor=zarrkit.Zstd(level=1), fill_value=None)
    z[...] = data
    with rows_everywhere():
        np.testing.assert_array_equal(z[...], data)
        np.testing.assert_array_equal(z.get_basic_selection(Ellipsis, fields="b"), data["b"])
        out = np.zeros(SHAPE, dtype="<i4")
        z.get_basic_selection((slice(None), slice(None)), out=out, fields="a")
        np.testing.assert_array_equal(out, data["a"])


# -- out= ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("layout", ["C", "F", "strided", "reversed"])
def test_out_arguments_receive_the_values(tmp_path, layout):
    z = make_array(tmp_path)
    base = np.full((8, 24), 99.0)
    out = {"C": np.zeros(SHAPE), "F": np.zeros(SHAPE, order="F"), "strided": base[:, ::2],
           "reversed": base[::-1, :12]}[layout]
    with rows_everywhere(), zarrkit.config.set(threads=2):
        assert z.get_basic_selection(Ellipsis, out=out) is out
    np.testing.assert_array_equal(out, DATA)
    if layout == "strided":
        assert (base[:, 1::2] == 99).all()
    if layout == "reversed":
        assert (base[:, 12:] == 99).all()


def test_wrong_outs_are_refused(tmp_path):
    z = make_array(tmp_path)
    with rows_everywhere():
        with pytest.raises(ShapeMismatchError, match="dtype"):
            z.get_basic_selection(Ellipsis, out=np.zeros(SHAPE, dtype="f4"))
        with pytest.raises(ShapeMismatchError, match="shape"):
            z.get_basic_selection(Ellipsis, out=np.zeros((8, 13)))
        frozen = np.zeros(SHAPE)
        frozen.flags.writeable = False
        with pytest.raises(ValueError, match="read-only"):
            z.get_basic_selection(Ellipsis, out=frozen)
        assert not frozen.any()


# -- corrupt, empty and oversized chunks in a row --------------------------------------------------
def _frame(values, **kw):
    return zstandard.ZstdCompressor(level=1, **kw).compress(np.ascontiguousarray(values).tobytes())


def _corrupt(kind, original):
    good = bytes(original)
    if kind == "garbage":
        return bytes(range(len(good)))
    if kind == "empty":
        return b""
    if kind == "flipped":  # one byte of the compressed block changed
        b = bytearray(good)
        b[len(b) // 2] ^= 0xFF
        return bytes(b)
    if kind == "truncated":
        return good[:-3]
    if kind == "half a chunk":  # a valid frame, of half the chunk's size
        return _frame(np.zeros(3))
    if kind == "two chunks":  # a valid frame of this chunk, then one of the next
        return good + good
    if kind == "bad checksum":
        b = bytearray(_frame(np.arange(6.0), write_checksum=True))
        b[-1] ^= 0xFF
        return bytes(b)
    if kind == "oversized":
        return b"\x28\xb5\x2f\xfd" + bytes(4096)
    raise AssertionError(kind)


KINDS = ["garbage", "empty", "flipped", "truncated", "half a chunk", "two chunks", "bad checksum", "oversized"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("where", "neighbour_missing"), [("g/a/c/0/0", False), ("g/a/c/1/2", False),
                                                          ("g/a/c/3/3", False), ("g/a/c/2/1", True)])
@pytest.mark.parametrize("threads", [1, 2])
def test_a_bad_chunk_in_a_row_raises_naming_it(tmp_path, kind, where, neighbour_missing, threads):
    make_array(tmp_path)
    path = chunk_file(tmp_path, where)
    with open(path, "rb") as f:
        original = f.read()
    with open(path, "wb") as f:
        f.write(_corrupt(kind, original))
    if neighbour_missing:  # a missing chunk in the same batch: decoded chunk by chunk
        os.remove(chunk_file(tmp_path, "g/a/c/2/2"))
    if kind == "flipped":
        # a flipped byte may still decode (no checksum): then the row holds what the chunk
        # decodes to on its own, its neighbours their own values
        alone = np.empty((2, 3))
        try:
            ZstdCodec(level=1).decode_into(_corrupt(kind, original), alone)
            decodes = True
        except Exception:  # noqa: BLE001 - it does not: the read must name it, below
            decodes = False
        if decodes:
            i, j = (int(c) for c in where.split("/")[-2:])
            expected = DATA.copy()
            expected[2 * i : 2 * i + 2, 3 * j : 3 * j + 3] = alone
            if neighbour_missing:
                expected[4:6, 6:9] = -1.0
            np.testing.assert_array_equal(read(DirectoryStore(tmp_path), threads=threads), expected)
            return
    with pytest.raises(ChunkDecodeError) as info:
        read(DirectoryStore(tmp_path), threads=threads)
    assert info.value.key == where
    assert repr(where) in str(info.value)
    if kind == "oversized":
        assert "more than" in str(info.value)


def test_the_limit_is_exact(tmp_path):
    z = make_array(tmp_path)
    limit = max_stored_size(z.metadata.codec)
    key = "g/a/c/1/1"
    with open(chunk_file(tmp_path, key), "wb") as f:
        f.write(bytes(limit + 1))
    with pytest.raises(ChunkDecodeError, match="more than") as info:
        read(DirectoryStore(tmp_path))
    assert info.value.key == key
    with open(chunk_file(tmp_path, key), "wb") as f:
        f.write(bytes(limit))  # fits: read, and fails to decode
    with pytest.raises(ChunkDecodeError) as info:
        read(DirectoryStore(tmp_path))
    assert info.value.key == key and "more than" not in str(info.value)


def test_frames_without_their_size_decode_and_bombs_do_not(tmp_path):
    make_array(tmp_path)
    streaming = zstandard.ZstdCompressor(level=1, write_content_size=False)
    with open(chunk_file(tmp_path, "g/a/c/2/2"), "wb") as f:
        f.write(streaming.compress(DATA[4:6, 6:9].tobytes()))
    np.testing.assert_array_equal(read(DirectoryStore(tmp_path)), DATA)
    with open(chunk_file(tmp_path, "g/a/c/2/3"), "wb") as f:
        f.write(streaming.compress(bytes(64 * 2**20)))  # inflates to 64 MiB
    tracemalloc.start()
    try:
        with pytest.raises(ChunkDecodeError) as info:
            read(DirectoryStore(tmp_path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert info.value.key == "g/a/c/2/3"
    assert peak < 8 * 2**20


def test_a_huge_sparse_chunk_is_refused_unread(tmp_path):
    make_array(tmp_path)
    key = "g/a/c/2/1"
    os.truncate(chunk_file(tmp_path, key), 2**30)
    tracemalloc.start()
    try:
        with pytest.raises(ChunkDecodeError, match="more than") as info:
            read(DirectoryStore(tmp_path), threads=2)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert info.value.key == key
    assert peak < 8 * 2**20


def test_memory_per_tiny_chunk_stays_small(tmp_path):
    # one-byte chunks: a batch (by decoded bytes) holds every chunk of the array
    data = (np.arange(64 * 128) % 7).astype("u1").reshape(64, 128)
    make_array(tmp_path, data, chunks=(1, 1), fill_value=0)
    store = DirectoryStore(tmp_path)
    read(store, (slice(0, 1), slice(None)))  # the directories known, the pool started
    tracemalloc.start()
    try:
        got = read(store, threads=2)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(got, data)
    assert peak < 1024 * data.size, f"{peak / data.size:.0f} bytes per chunk"


# -- links, and directories swapped for links ------------------------------------------------------
@pytest.fixture
def outside(tmp_path):
    """A directory outside the store holding valid chunk files (other values): a read that
    followed a link there would decode them without complaint."""
    other = tmp_path / "other"
    make_array(other, DATA + 1000)
    out = tmp_path / "outside"
    shutil.copytree(other / "g" / "a" / "c" / "1", out)
    return out


def test_a_chunk_linked_outside_in_the_middle_of_a_row_is_refused(tmp_path, outside):
    root = tmp_path / "store"
    make_array(root)
    key = "g/a/c/1/2"
    os.remove(chunk_file(root, key))
    os.symlink(outside / "2", chunk_file(root, key))
    for threads in (1, 2):
        with pytest.raises(InvalidPathError, match=repr(key)):
            read(DirectoryStore(root), threads=threads)


def test_a_chunk_swapped_for_a_link_outside_after_a_read_is_refused_by_the_same_store(tmp_path, outside):
    # its directory is known to the store: the file is opened by the fast loop, which must not
    # follow the link
    root = tmp_path / "store"
    make_array(root)
    store = DirectoryStore(root)
    np.testing.assert_array_equal(read(store), DATA)
    key = "g/a/c/1/1"
    os.remove(chunk_file(root, key))
    os.symlink(outside / "1", chunk_file(root, key))
    with pytest.raises(InvalidPathError, match=repr(key)):
        read(store)
    with pytest.raises(InvalidPathError, match=repr(key)):
        store.get_many_upto(["g/a/c/1/0", key], 1000)


def test_a_chunk_linked_inside_is_followed(tmp_path):
    make_array(tmp_path)
    os.remove(chunk_file(tmp_path, "g/a/c/1/2"))
    os.symlink(chunk_file(tmp_path, "g/a/c/3/0"), chunk_file(tmp_path, "g/a/c/1/2"))
    expected = DATA.copy()
    expected[2:4, 6:9] = DATA[6:8, 0:3]
    np.testing.assert_array_equal(read(DirectoryStore(tmp_path)), expected)


def test_an_array_directory_linked_inside_is_followed(tmp_path):
    make_array(tmp_path)
    os.symlink(tmp_path / "g" / "a", tmp_path / "g" / "alias", target_is_directory=True)
    np.testing.assert_array_equal(read(DirectoryStore(tmp_path), path="g/alias"), DATA)


def _swap_for_link(root, head, target):
    shutil.rmtree(chunk_file(root, head))
    os.symlink(target, chunk_file(root, head), target_is_directory=True)


def test_a_key_directory_linked_outside_is_refused(tmp_path, outside):
    root = tmp_path / "store"
    make_array(root)
    _swap_for_link(root, "g/a/c/1", outside)
    with pytest.raises(InvalidPathError, match="'g/a/c/1/"):
        read(DirectoryStore(root))
    with pytest.raises(InvalidPathError, match="'g/a/c/1/0'"):
        DirectoryStore(root).get_many_upto(["g/a/c/0/0", "g/a/c/1/0"], 1000)


def test_a_directory_swapped_after_a_read_is_refused_by_a_new_store(tmp_path, outside):
    root = tmp_path / "store"
    make_array(root)
    np.testing.assert_array_equal(read(DirectoryStore(root)), DATA)  # every directory seen inside
    _swap_for_link(root, "g/a/c/1", outside)
    with pytest.raises(InvalidPathError, match="'g/a/c/1/"):
        read(DirectoryStore(root))
    with pytest.raises(InvalidPathError, match="'g/a/c/1/"):
        read(str(root))


def test_a_directory_missing_at_the_first_read_then_linked_outside_is_refused(tmp_path, outside):
    root = tmp_path / "store"
    make_array(root)
    shutil.rmtree(chunk_file(root, "g/a/c/1"))
    store = DirectoryStore(root)
    expected = DATA.copy()
    expected[2:4] = -1.0
    np.testing.assert_array_equal(read(store), expected)  # the row is missing: fill value
    os.symlink(outside, chunk_file(root, "g/a/c/1"), target_is_directory=True)
    with pytest.raises(InvalidPathError, match="'g/a/c/1/"):
        read(store)  # the same store: the directory was not known yet, so it is checked now


@pytest.mark.xfail(strict=True, reason=(
    "documented limitation (docs/guide/threat-model.md, 'A directory swapped while a store is "
    "open'): a store object does not check again a key directory it has already checked, so a "
    "batch read through it follows the link outside"))
def test_a_directory_swapped_after_a_read_is_refused_by_the_same_store(tmp_path, outside):
    root = tmp_path / "store"
    make_array(root)
    store = DirectoryStore(root)
    np.testing.assert_array_equal(read(store), DATA)
    _swap_for_link(root, "g/a/c/1", outside)
    with pytest.raises(InvalidPathError):
        read(store)


# -- wrappers see every key ------------------------------------------------------------------------
ALL_KEYS = sorted(k for row in ROW_KEYS for k in row)


def _seen_by_counting(store):
    return sorted(k for k, _ in store.keys_read if k.startswith("g/a/c/"))


def test_counting_and_logging_stores_see_every_chunk(tmp_path):
    make_array(tmp_path)
    counting = CountingStore(DirectoryStore(tmp_path))
    read(counting, threads=2)
    assert _seen_by_counting(counting) == ALL_KEYS
    records: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append(record.getMessage())

    logged = LoggingStore(DirectoryStore(tmp_path), log_level="DEBUG", log_handler=Keep())
    read(logged, threads=2)
    assert _seen_by_counting(logged) == ALL_KEYS
    for key in ALL_KEYS:
        assert any(key in r for r in records), key


@pytest.mark.filterwarnings("ignore:Consolidated metadata")
@pytest.mark.parametrize("outer", ["read-only", "latency", "consolidated"])
def test_wrapped_counting_stores_see_every_chunk(tmp_path, outer):
    make_array(tmp_path)
    counting = CountingStore(DirectoryStore(tmp_path))
    if outer == "read-only":
        np.testing.assert_array_equal(read(ReadOnlyStore(counting)), DATA)
    elif outer == "latency":
        np.testing.assert_array_equal(read(LatencyStore(counting, seconds=0)), DATA)
    else:
        zarrkit.consolidate_metadata(DirectoryStore(tmp_path))
        with rows_everywhere():
            group = zarrkit.open_consolidated(counting, mode="r")
            np.testing.assert_array_equal(group["g/a"][...], DATA)
    assert _seen_by_counting(counting) == ALL_KEYS


def test_caches_see_and_keep_every_chunk(tmp_path):
    make_array(tmp_path)
    lru = LRUStoreCache(DirectoryStore(tmp_path), max_size=2**20)
    np.testing.assert_array_equal(read(lru), DATA)
    assert lru.misses >= len(ALL_KEYS)
    misses, hits = lru.misses, lru.hits
    shutil.rmtree(tmp_path / "g" / "a" / "c")  # the second read comes from the cache alone
    np.testing.assert_array_equal(read(lru), DATA)
    assert lru.misses == misses and lru.hits - hits >= len(ALL_KEYS)

    make_array(tmp_path, overwrite=True)
    cached = CacheStore(DirectoryStore(tmp_path), cache_store=MemoryStore())
    np.testing.assert_array_equal(read(cached), DATA)
    assert set(ALL_KEYS) <= set(cached.cache.list_prefix("g/a/c/"))


def test_a_cache_refuses_a_cached_value_beyond_the_limit(tmp_path):
    make_array(tmp_path)
    lru = LRUStoreCache(DirectoryStore(tmp_path), max_size=2**20)
    lru["g/a/c/2/2"] = bytes(4096)  # cached as written
    with pytest.raises(ChunkDecodeError, match="more than") as info:
        read(lru)
    assert info.value.key == "g/a/c/2/2"


def test_a_directory_store_subclass_reading_its_own_way_sees_every_chunk(tmp_path):
    make_array(tmp_path)

    class Seeing(DirectoryStore):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.seen: list[str] = []

        def get_upto(self, key, limit):
            self.seen.append(key)
            return super().get_upto(key, limit)

    store = Seeing(tmp_path)
    np.testing.assert_array_equal(read(store, threads=1), DATA)
    assert sorted(k for k in store.seen if k.startswith("g/a/c/")) == ALL_KEYS


# -- the batch read of a directory store -----------------------------------------------------------
def test_keys_checked_together_agree_with_each_key_exhaustively():
    alphabet = "a/.:"
    keys = ["".join(p) for n in range(4) for p in itertools.product(alphabet, repeat=n)]
    for batch in itertools.chain(([k] for k in keys), itertools.product(keys, repeat=2)):
        each = all(is_valid_key(k) for k in batch)
        if are_valid_keys(list(batch)):
            assert each, batch
    small = ["", ".", "..", "a", "/", "a/", "/a", "a/.", "./a", "a/..", "../a"]
    for batch in itertools.product(small, repeat=3):
        assert are_valid_keys(list(batch)) == all(is_valid_key(k) for k in batch), batch


@pytest.mark.parametrize("bad", ["../escape", "c/../../escape", "c//0", "/abs", "c/0/", "a:b/x", "c\\0",
                                 "c/\x00", b"c/0", None, "."])
@pytest.mark.parametrize("at", [0, 1, 2])
def test_a_batch_with_an_invalid_key_raises_naming_it(tmp_path, bad, at):
    (tmp_path / "secret").write_bytes(b"secret")
    store = DirectoryStore(tmp_path / "store")
    store.update({"c/0/0": b"a", "c/0/1": b"b"})
    keys = ["c/0/0", "c/0/1"]
    keys.insert(at, bad)
    with pytest.raises(InvalidPathError) as info:
        store.get_many_upto(keys, 100)
    assert repr(bad) in str(info.value)


ODD = ["sp ace/0", "ü/ñ", "ab:c/0", "x/C:0", "%2F/#", "..a/.b", "a..", "-/~", "c/0.0", "tab\t/0", "line\n/0"]


def test_odd_but_valid_keys_read_as_each_read_does(tmp_path):
    store = DirectoryStore(tmp_path)
    for i, key in enumerate(ODD):
        store[key] = f"value {i}".encode()
    keys = [*ODD, "nowhere/0", ODD[0] + "x"]
    one_by_one = [store.get_upto(k, 100) for k in keys]
    assert one_by_one[: len(ODD)] == [f"value {i}".encode() for i in range(len(ODD))]
    assert DirectoryStore(tmp_path).get_many_upto(keys, 100) == one_by_one
    assert store.get_many_upto(list(reversed(keys)), 100) == list(reversed(one_by_one))


def test_a_batch_of_empty_and_too_large_values(tmp_path):
    store = DirectoryStore(tmp_path)
    store.update({"c/0": b"x" * 10, "c/1": b"y" * 11})
    (tmp_path / "c" / "2").write_bytes(b"")
    assert DirectoryStore(tmp_path).get_many_upto(["c/0", "c/2"], 10) == [b"x" * 10, b""]
    with pytest.raises(ChunkDecodeError, match="more than") as info:
        store.get_many_upto(["c/0", "c/1", "c/2"], 10)
    assert info.value.key == "c/1"


# -- special files, in a subprocess ----------------------------------------------------------------
@pytest.fixture(scope="module")
def special(tmp_path_factory):
    work = tmp_path_factory.mktemp("special")
    try:
        proc = subprocess.run([sys.executable, WORKER, str(work)], capture_output=True, text=True, timeout=120,
                              check=False)
        stdout, stderr, finished = proc.stdout, proc.stderr, True
    except subprocess.TimeoutExpired as exc:
        stdout = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        stderr, finished = "", False
    results = {}
    for line in stdout.splitlines():
        r = json.loads(line)
        results[r.pop("scenario")] = r
    return results, finished, stderr


def _outcome(special, scenario):
    results, finished, stderr = special
    assert scenario in results, (f"{scenario!r} did not finish (worker {'ended' if finished else 'timed out'}; "
                                 f"finished: {sorted(results)}); {stderr[-2000:]}")
    r = results[scenario]
    assert "hung" not in r, f"{scenario}: {r['hung']}"
    assert "crash" not in r, r["crash"]
    return r


def _assert_refused(r, key, kind):
    assert r.get("error") == "InvalidPathError", r
    assert f"key {key!r}" in r["message"] and kind in r["message"], r["message"]


@pytest.mark.parametrize(("scenario", "key", "kind"), [
    ("fifo_in_row_1", "g/a/c/1/2", "a named pipe"),
    ("fifo_in_row_2", "g/a/c/1/2", "a named pipe"),
    ("fifo_in_row_4", "g/a/c/1/2", "a named pipe"),
    ("fifo_with_a_writer_in_row", "g/a/c/2/1", "a named pipe"),
    ("fifo_swapped_in_after_a_read", "g/a/c/0/0", "a named pipe"),  # the first in the batch
    ("socket_in_row", "g/a/c/3/0", "a socket"),
    ("zero_and_null_in_row", "g/a/c/0/3", "a character device"),
    ("fifo_in_batch", "c/0/1", "a named pipe"),
])
def test_special_files_in_a_row_are_refused_without_blocking(special, scenario, key, kind):
    _assert_refused(_outcome(special, scenario), key, kind)


def test_a_named_pipe_where_a_key_directory_should_be_reads_as_missing(special):
    got = np.array(_outcome(special, "fifo_as_key_directory")["result"])
    expected = DATA.copy()
    expected[4:6] = -1.0
    np.testing.assert_array_equal(got, expected)


def _device_outcome(special, scenario, precondition):
    r = _outcome(special, scenario)
    if r.get("error") == "PermissionError" and os.geteuid() != 0:  # no device nodes without root
        pytest.skip(f"{scenario}: {r['error']}: {r['message']}")
    assert "error" not in r, r  # anything else that fails the scenario fails the test
    r = r["result"]
    if not precondition(r["pre"]):
        pytest.skip(f"{scenario}: the device does not behave so here: {r['pre']}")
    return r


@pytest.mark.parametrize("device", ["kmsg", "cpu_dma_latency"])
def test_a_device_with_short_reads_is_refused(special, device):
    r = _device_outcome(special, f"short_read_{device}", lambda pre: pre.get("bytes", 0) > 0)
    _assert_refused(r["batch"], "c/0/1", "a character device")
    _assert_refused(r["one"], "c/0/1", "a character device")
    _assert_refused(r["array"], "g/a/c/1/2", "a character device")


@pytest.mark.parametrize("device", ["kmsg", "cpu_dma_latency"])
def test_a_device_never_reads_as_values(special, device):
    r = _device_outcome(special, f"short_read_{device}", lambda pre: pre.get("bytes", 0) > 0)
    _assert_refused(r["raw_array"], "r/c/1/0", "a character device")


@pytest.mark.parametrize("device", ["tun", "kvm", "autofs"])
def test_a_device_whose_reads_fail_is_refused_naming_the_key(special, device):
    # its read fails, or already its open (autofs without its daemon: ENODEV)
    r = _device_outcome(special, f"error_device_{device}", lambda pre: "errno" in pre or "open_errno" in pre)
    _assert_refused(r["batch"], "c/0/1", "a character device")


def test_a_device_made_after_a_store_listed_its_directory_is_refused_by_a_new_store(special):
    r = _device_outcome(special, "device_made_after_a_read", lambda pre: pre.get("bytes", 0) > 0)
    assert np.array_equal(np.array(r["first"]), DATA)
    _assert_refused(r["array"], "g/a/c/1/2", "a character device")
    _assert_refused(r["unpickled"], "g/a/c/1/2", "a character device")
