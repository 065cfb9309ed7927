"""Hostile use of writes that cover whole shards.

A write covering every inner chunk of a shard encodes the shard in one task (its values gathered
into chunk order, each inner chunk encoded into a reused per-thread buffer, the shard stored with
one ``set_parts``); a write of one shard with several threads still encodes inner chunk by inner
chunk.  Whatever the data type, number of dimensions, codec chain, selection or layout of the
value, both must read back as numpy has it and store the same bytes; other implementations must
read the shards; threads must never mix two writes inside a shard; failures must name the inner
chunk and leave the old shard; the buffers kept afterwards must stay small.  The zstd codec now
compresses with the ``zstandard`` package: its frames must decode everywhere, at every level
zarrkit accepts.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import textwrap
import threading
import tracemalloc

import numcodecs
import numpy as np
import pytest

import zarrkit
from zarrkit.codecs import (
    BloscCodec,
    BytesCodec,
    Crc32cCodec,
    ShardingCodec,
    TransposeCodec,
    ZstdCodec,
    register_codec,
)
from zarrkit.codecs.base import BytesBytesCodec
from zarrkit.codecs.sharding.codec import KEEP_BUFFER_BYTES
from zarrkit.errors import ChunkEncodeError, ReadOnlyError
from zarrkit.storage import LocalStore, ReadOnlyStore, Store

# -- helpers ------------------------------------------------------------------------------------

def _raw(store) -> dict[str, bytes]:
    return {k: bytes(store.get(k)) for k in sorted(store.list_prefix("")) if not k.endswith("zarr.json")}


def _shard_regions(shape, shards):
    return [tuple(slice(i * s, (i + 1) * s) for i, s in zip(idx, shards))
            for idx in itertools.product(*(range(-(-n // s)) for n, s in zip(shape, shards)))]


def _random(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype) if not isinstance(dtype, type) else None
    n = int(np.prod(shape))
    if dtype is str:
        return np.array(["é" * int(i) + "x" * int(j) for i, j in rng.integers(0, 4, (n, 2))], dtype=object).reshape(shape)
    if dt.names:
        out = np.zeros(n, dt)
        for f in dt.names:
            out[f] = _random((n,), dt[f], seed + 1)
        return out.reshape(shape)
    if dt.kind == "b":
        return (rng.integers(0, 3, n) == 0).reshape(shape)
    if dt.kind in "iu":
        return rng.integers(0, 7, n).astype(dt).reshape(shape)
    if dt.kind == "f":
        return np.round(rng.standard_normal(n), 1).astype(dt).reshape(shape)
    if dt.kind == "c":
        return (rng.integers(-3, 4, n) + 1j * rng.integers(-3, 4, n)).astype(dt).reshape(shape)
    if dt.kind == "S":
        return np.array([f"b{i}".encode() for i in rng.integers(0, 999, n)], dtype=dt).reshape(shape)
    if dt.kind == "U":
        return np.array([f"u{i}" for i in rng.integers(0, 99, n)], dtype=dt).reshape(shape)
    if dt.kind in "mM":
        return rng.integers(0, 10**6, n).astype(dt).reshape(shape)
    raise ValueError(dtype)


def _equal(got, want) -> bool:
    if want.dtype.kind == "O":
        return got.tolist() == want.tolist()
    if want.dtype.kind in "fc":
        return np.array_equal(got, want, equal_nan=True)
    return np.array_equal(got, want)


def _whole_and_apart(make, values, shards):
    """Stores written with the whole value at once (shards encoded whole) and one shard at a time
    with two threads (inner chunks encoded one by one)."""
    together, apart = zarrkit.MemoryStore(), zarrkit.MemoryStore()
    a = make(together)
    a[...] = values
    b = make(apart)
    with zarrkit.config.set({"threads": 2}):
        for region in _shard_regions(values.shape, shards):
            b[region] = values[region]
    return a, together, apart


# -- numpy results and the bytes of the other path ----------------------------------------------

DTYPES = ["bool", "i1", "u1", "i2", ">u2", "u4", "i8", "u8", "f2", "f4", ">f8", "c8", "c16", "S5", "U3",
          [("a", "<i2"), ("b", ">f8"), ("c", "S3")], "M8[s]", "m8[ms]", str]


@pytest.mark.parametrize("write_empty_chunks", [True, False])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d))
def test_every_dtype_reads_back_and_stores_the_bytes_of_the_per_chunk_path(dtype, write_empty_chunks):
    shape, shards, chunks = (16, 24), (8, 12), (4, 6)
    values = _random(shape, dtype)
    fill = np.zeros((), np.dtype(dtype) if dtype is not str else object)[()] if dtype is not str else ""
    values[:4, :6] = fill  # an inner chunk of the fill value

    def make(store):
        return zarrkit.create_array(store, shape=shape, chunks=chunks, shards=shards, dtype=dtype, fill_value=fill,
                                    config={"write_empty_chunks": write_empty_chunks})

    a, together, apart = _whole_and_apart(make, values, shards)
    assert _equal(a[...], values)
    assert _raw(together) == _raw(apart)
    assert len(_raw(together)) == 4


@pytest.mark.parametrize("ndim", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("edge", [False, True])
def test_any_number_of_dimensions_with_and_without_edge_shards(ndim, edge):
    shards, chunks = (4,) * ndim, (2,) * ndim
    shape = tuple(8 + (3 if edge and d % 2 == 0 else 0) for d in range(ndim))
    values = _random(shape, "<i4", seed=ndim)

    def make(store):
        return zarrkit.create_array(store, shape=shape, chunks=chunks, shards=shards, dtype="<i4", fill_value=-1)

    a, together, apart = _whole_and_apart(make, values, shards)
    np.testing.assert_array_equal(a[...], values)
    assert _raw(together) == _raw(apart)


CHAINS = {
    "one inner chunk": [ShardingCodec((12, 12), [BytesCodec(), ZstdCodec()])],
    "inner transpose, index first": [ShardingCodec((4, 6), [TransposeCodec((1, 0)), BytesCodec("big"), ZstdCodec()],
                                                   index_location="start")],
    "lexicographic": [ShardingCodec((2, 3), [BytesCodec(), Crc32cCodec()], subchunk_write_order="lexicographic")],
    "colexicographic": [ShardingCodec((2, 3), [BytesCodec(), BloscCodec()], subchunk_write_order="colexicographic")],
    "unordered": [ShardingCodec((2, 6), [BytesCodec(), ZstdCodec(level=-3, checksum=True)],
                                subchunk_write_order="unordered")],
    "nested": [ShardingCodec((4, 6), [ShardingCodec((2, 3), [BytesCodec(), ZstdCodec(level=5, checksum=True)],
                                                    index_location="start")])],
    "nested, transposed": [ShardingCodec((4, 6), [TransposeCodec((1, 0)),
                                                  ShardingCodec((2, 2), [BytesCodec("big"), BloscCodec()])])],
    "transpose before sharding": [TransposeCodec((1, 0)), ShardingCodec((4, 6), [BytesCodec(), ZstdCodec()])],
    "checksum after sharding": [ShardingCodec((4, 6), [BytesCodec(), ZstdCodec()]), Crc32cCodec()],
    "no compressor": [ShardingCodec((4, 6), [BytesCodec()])],
}


@pytest.mark.parametrize("dtype", ["<u2", ">f8", "c8"])
@pytest.mark.parametrize("chain", list(CHAINS))
def test_codec_chains_read_back_and_store_the_bytes_of_the_per_chunk_path(chain, dtype):
    shape, shards = (24, 24), (12, 12)
    values = _random(shape, dtype, seed=3)
    values[:4, :6] = 0

    def make(store):
        return zarrkit.create(shape, chunks=shards, dtype=dtype, codecs=CHAINS[chain], store=store, zarr_format=3,
                              fill_value=0, compressor=None)

    a, together, apart = _whole_and_apart(make, values, shards)
    assert _equal(a[...], values)
    assert _raw(together) == _raw(apart)
    a[:12, 12:] = 7  # one whole shard again, with a scalar
    values[:12, 12:] = 7
    assert _equal(a[...], values)


def _sources():
    base = np.arange(64 * 96, dtype="<f8").reshape(64, 96) * 0.5
    return {
        "contiguous": base[:16, :24].copy(),
        "transposed": base[:24, :16].T,
        "reversed": base[:16, :24][::-1, ::-1],
        "strided": base[::3, ::2][:16, :24],
        "fortran": np.asfortranarray(base[:16, :24]),
        "broadcast row": np.broadcast_to(base[0, :24], (16, 24)),
        "broadcast column": np.broadcast_to(base[:16, :1], (16, 24)),
        "python scalar": 2.5,
        "0-d array": np.array(-1.25),
        "0-d float32": np.float32(3.0),
        "integers": np.arange(16 * 24).reshape(16, 24),
        "nested list": base[:16, :24].tolist(),
    }


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("source", list(_sources()))
def test_values_of_any_layout(source, order):
    value = _sources()[source]
    # 'F': stored transposed (the transpose codec zarr-2's order='F' converts to), read in F order
    layout = {} if order == "C" else {"filters": [zarrkit.codecs.TransposeCodec((1, 0))], "config": {"order": "F"}}
    a = zarrkit.create_array(zarrkit.MemoryStore(), shape=(16, 24), chunks=(4, 6), shards=(8, 12), dtype="<f8",
                             fill_value=0, **layout)
    a[...] = value
    want = np.zeros((16, 24))
    want[...] = value
    np.testing.assert_array_equal(a[...], want)


SELECTIONS = {
    "shifted": (slice(4, 20), slice(6, 42)),
    "reversed": (slice(None, None, -1), slice(None, None, -1)),
    "reversed part": (slice(23, 7, -1), slice(None)),
    "step 2": (slice(None, None, 2), slice(None)),
    "mask": (np.ones(32, bool), slice(0, 24)),
    "int index": (5, slice(None)),
}


@pytest.mark.parametrize("name", list(SELECTIONS))
def test_selections_over_whole_shards(name):
    sel = SELECTIONS[name]
    a = zarrkit.create_array(zarrkit.MemoryStore(), shape=(32, 48), chunks=(4, 6), shards=(8, 12), dtype="<i4",
                             fill_value=0)
    want = np.zeros((32, 48), "<i4")
    value = np.arange(want[sel].size, dtype="<i4").reshape(want[sel].shape) + 1
    a[sel] = value
    want[sel] = value
    np.testing.assert_array_equal(a[...], want)


@pytest.mark.parametrize("perm", ["identity", "reversed inside a chunk", "chunks swapped", "shards swapped"])
def test_orthogonal_indices_that_cover_shards(perm):
    idx = np.arange(16)
    if perm == "reversed inside a chunk":
        idx[8:12] = idx[8:12][::-1]
    elif perm == "chunks swapped":
        idx[8:16] = np.r_[12:16, 8:12]
    elif perm == "shards swapped":
        idx = np.r_[8:16, 0:8]
    a = zarrkit.create_array(zarrkit.MemoryStore(), shape=(16, 24), chunks=(4, 6), shards=(8, 12), dtype="<i4",
                             fill_value=0)
    value = np.arange(16 * 24, dtype="<i4").reshape(16, 24)
    a.oindex[idx, np.arange(24)] = value
    want = np.zeros((16, 24), "<i4")
    want[np.ix_(idx, np.arange(24))] = value
    np.testing.assert_array_equal(a[...], want)
    a.vindex[idx, np.full(16, 3)] = -np.arange(16, dtype="<i4")
    want[idx, 3] = -np.arange(16)
    np.testing.assert_array_equal(a[...], want)


def test_random_selections_match_numpy():
    rng = np.random.default_rng(2024)

    def one_dim(n, c):
        kind = rng.integers(0, 6)
        if kind == 0:
            return slice(None)
        if kind == 1:
            lo = int(rng.integers(0, 3)) * c
            return slice(lo, max(lo, n - int(rng.integers(0, 2)) * c))
        if kind == 2:
            return slice(None, None, -1)
        if kind == 3:
            s = int(rng.integers(0, n))
            return slice(s, int(rng.integers(s, n + 1)), int(rng.choice([1, 2, -1, 3])))
        if kind == 4:
            idx = np.arange(n)
            if rng.random() < 0.5 and n >= c:
                m = int(rng.integers(0, n // c))
                idx[m * c:(m + 1) * c] = idx[m * c:(m + 1) * c][::-1]
            return idx
        return rng.random(n) < 0.9

    for _ in range(150):
        ndim = int(rng.integers(1, 4))
        cs = tuple(int(x) for x in rng.integers(1, 4, ndim))
        sh = tuple(c * int(p) for c, p in zip(cs, rng.integers(1, 3, ndim)))
        shape = tuple(s * int(rng.integers(1, 3)) + int(rng.integers(0, s + 1)) * int(rng.random() < 0.3) for s in sh)
        dtype = str(rng.choice(["u1", "<i4", "<f8", ">u2", "c8"]))
        a = zarrkit.create_array(zarrkit.MemoryStore(), shape=shape, chunks=cs, shards=sh, dtype=dtype, fill_value=0,
                                 config={"write_empty_chunks": bool(rng.random() < 0.5)})
        want = rng.integers(0, 3, shape).astype(dtype)
        a[...] = want
        sel = tuple(one_dim(n, c) for n, c in zip(shape, cs))
        picks = tuple(np.arange(n)[s] for n, s in zip(shape, sel))
        target = want[np.ix_(*picks)]
        value = np.asarray(rng.integers(0, 3), dtype) if rng.random() < 0.3 else rng.integers(0, 3, target.shape).astype(dtype)
        with zarrkit.config.set({"threads": int(rng.choice([1, 2]))}):
            if any(isinstance(s, np.ndarray) for s in sel):
                a.oindex[picks] = value
                want[np.ix_(*picks)] = value
            else:
                a[sel] = value
                want[sel] = value
        np.testing.assert_array_equal(a[...], want, err_msg=f"{shape} {cs} {sh} {dtype} {sel}")


# -- write_empty_chunks=False ----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["<f2", "<f4", ">f8", "c16"])
@pytest.mark.parametrize("fill, value, stored", [
    (0.0, -0.0, True), (-0.0, 0.0, True), (-0.0, -0.0, False), (np.nan, np.nan, False), (0.0, 0.0, False),
    (None, 0.0, False),
])
def test_fill_valued_shards_are_deleted_and_signed_zeros_kept(dtype, fill, value, stored):
    store = zarrkit.MemoryStore()
    a = zarrkit.create_array(store, shape=(8, 24), chunks=(2, 3), shards=(4, 6), dtype=dtype, fill_value=fill,
                             config={"write_empty_chunks": False})
    a[...] = 1
    assert len(_raw(store)) == 8
    for v in (value, np.full((8, 24), value, dtype)):  # a broadcast scalar, then a whole array
        a[...] = 1
        a[...] = v
        assert len(_raw(store)) == (8 if stored else 0)
        got = a[...]
        assert _equal(got, np.full((8, 24), value, dtype))
        assert np.array_equal(np.signbit(got.real), np.signbit(np.full((8, 24), value, dtype).real))


def test_only_the_fill_valued_inner_chunks_and_shards_go():
    store = zarrkit.MemoryStore()
    a = zarrkit.create_array(store, shape=(16, 24), chunks=(4, 6), shards=(8, 12), dtype="<i4", fill_value=5,
                             config={"write_empty_chunks": False})
    a[...] = np.arange(16 * 24, dtype="<i4").reshape(16, 24) + 100
    before = _raw(store)
    value = np.full((16, 24), 5, "<i4")
    value[9, 13] = 0  # one inner chunk of one shard holds something
    value[:8, :12] = 7  # a whole shard of another value
    a[...] = value
    after = _raw(store)
    assert sorted(after) == ["c/0/0", "c/1/1"]
    assert a.nchunks_initialized == 4 + 1
    np.testing.assert_array_equal(a[...], value)
    assert before["c/0/0"] != after["c/0/0"]


def test_object_fill_value_none_over_whole_shards():
    store = zarrkit.MemoryStore()
    a = zarrkit.create_array(store, shape=(8, 12), chunks=(2, 3), shards=(4, 6), dtype=str,
                             config={"write_empty_chunks": False})
    value = np.full((8, 12), "", dtype=object)
    value[5, 7] = "kept"
    a[...] = value
    assert sorted(_raw(store)) == ["c/1/1"]
    assert a[...].tolist() == value.tolist()


# -- other implementations --------------------------------------------------------------------------

INTEROP = {
    "zstd levels and checksum": (">f8", [ShardingCodec((4, 6, 3), [BytesCodec("big"), ZstdCodec(level=22, checksum=True)])]),
    "negative level, index first": ("<u2", [ShardingCodec((4, 6, 3), [BytesCodec(), ZstdCodec(level=-7)],
                                                          index_location="start", subchunk_write_order="lexicographic")]),
    "inner transpose": ("<i4", [ShardingCodec((4, 6, 3), [TransposeCodec((2, 1, 0)), BytesCodec(), ZstdCodec(level=0)],
                                              subchunk_write_order="colexicographic")]),
    "nested": ("c8", [ShardingCodec((4, 6, 6), [ShardingCodec((2, 3, 3), [BytesCodec(), ZstdCodec(checksum=True)])])]),
    "bool": ("bool", [ShardingCodec((4, 6, 3), [BytesCodec(), ZstdCodec(level=1)])]),
}


@pytest.mark.parametrize("name", list(INTEROP))
def test_zarr_python_and_tensorstore_read_whole_shard_writes(tmp_path, name):
    zarr_python = pytest.importorskip("zarr")
    ts = pytest.importorskip("tensorstore")
    dtype, codecs = INTEROP[name]
    shape = (16, 24, 12)
    values = _random(shape, dtype, seed=11)
    values[:4, :6] = 0
    path = str(tmp_path / "a")
    a = zarrkit.create(shape, chunks=(8, 12, 6), dtype=dtype, codecs=codecs, store=LocalStore(path), zarr_format=3,
                       compressor=None, fill_value=0)
    a[...] = values
    assert _equal(zarr_python.open_array(path, mode="r")[...], values)
    t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": path}}).result()
    assert _equal(t.read().result(), values)


def test_shards_of_zarr_python_and_tensorstore_arrays_overwritten_whole(tmp_path):
    zarr_python = pytest.importorskip("zarr")
    ts = pytest.importorskip("tensorstore")
    shape = (16, 24)
    values = _random(shape, "<f4", seed=5)
    zp = str(tmp_path / "zp")
    z = zarr_python.create_array(zp, shape=shape, chunks=(4, 6), shards=(8, 12), dtype="<f4",
                                 compressors=[zarr_python.codecs.ZstdCodec(level=3, checksum=True)], fill_value=0)
    z[...] = values
    tp = str(tmp_path / "ts")
    t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": tp}, "create": True,
                 "metadata": {"shape": list(shape), "data_type": "float32", "chunk_grid": {
                     "name": "regular", "configuration": {"chunk_shape": [8, 12]}},
                     "codecs": [{"name": "sharding_indexed", "configuration": {
                         "chunk_shape": [4, 6], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                                           {"name": "zstd", "configuration": {"level": 5}}]}}]}}).result()
    t.write(values).result()
    for path in (zp, tp):
        a = zarrkit.open_array(LocalStore(path), mode="r+")
        assert _equal(a[...], values)
        a[8:16, :] = values[8:16, :] * 2 + 1  # two whole shards
        a[:8, :12] = 4.5  # one whole shard, a scalar (one thread)
        want = values.copy()
        want[8:16] = values[8:16] * 2 + 1
        want[:8, :12] = 4.5
        assert _equal(zarr_python.open_array(path, mode="r")[...], want)
        reread = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": path}}).result()
        assert _equal(reread.read().result(), want)


# -- threads ----------------------------------------------------------------------------------------

def _writer_value(writer: int, iteration: int, shape) -> np.ndarray:
    """A value unique to a writer and its iteration in every element: a mix is visible."""
    return (np.arange(int(np.prod(shape)), dtype="<i8").reshape(shape) % 1000) + 1000 * (100 * writer + iteration)


@pytest.mark.parametrize("kind", ["memory", "directory"])
@pytest.mark.parametrize("synchronized", [False, True])
def test_threads_writing_the_same_whole_shards_leave_one_writers_shard(tmp_path, kind, synchronized):
    shape, shards, chunks = (32, 48), (8, 12), (4, 6)
    store = zarrkit.MemoryStore() if kind == "memory" else LocalStore(str(tmp_path / "a"))
    zarrkit.create_array(store, shape=shape, chunks=chunks, shards=shards, dtype="<i8", compressors=[BloscCodec()])
    a = zarrkit.open_array(store, mode="r+", synchronizer=zarrkit.sync.ThreadSynchronizer() if synchronized else None)
    errors = []

    def writer(w: int) -> None:
        try:
            rng = np.random.default_rng(w)
            for it in range(12):
                i, j = int(rng.integers(0, 3)), int(rng.integers(0, 3))
                region = (slice(i * 8, i * 8 + 16), slice(j * 12, j * 12 + 24))  # four whole shards
                a[region] = _writer_value(w, it, (16, 24))
        except Exception as exc:  # noqa: BLE001 (reported below)
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(6)]
    with zarrkit.config.set({"threads": 2}):
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors
    got = a[...]
    for region in _shard_regions(shape, shards):
        shard = got[region]
        if not shard.any():
            continue
        tags = np.unique(shard // 1000)
        assert tags.size == 1, (region, tags)  # one write's values in the whole shard
        offsets = shard % 1000
        # and its elements where that write put them (the value's own pattern, shifted)
        assert np.array_equal(np.diff(offsets, axis=1) % 1000, np.ones_like(offsets[:, 1:]))


def test_a_synchronizer_keeps_partial_writes_and_whole_shard_writes_apart():
    shape, shards, chunks = (32, 48), (8, 12), (4, 6)
    store = zarrkit.MemoryStore()
    zarrkit.create_array(store, shape=shape, chunks=chunks, shards=shards, dtype="<i4")
    a = zarrkit.open_array(store, mode="r+", synchronizer=zarrkit.sync.ThreadSynchronizer())
    done = threading.Event()
    marks: list[tuple[int, int]] = []
    lock = threading.Lock()

    def whole() -> None:
        for k in range(1, 40):
            a[...] = np.full(shape, k, "<i4") + np.zeros(shape, "<i4")
        done.set()

    def partial(seed: int) -> None:
        rng = np.random.default_rng(seed)
        while not done.is_set():
            i, j = int(rng.integers(0, 32)), int(rng.integers(0, 48))
            a[i, j] = -1
        i, j = int(rng.integers(0, 32)), int(rng.integers(0, 48))
        a[i, j] = -1  # one write after the last whole one, at least
        with lock:
            marks.append((i, j))

    threads = [threading.Thread(target=whole)] + [threading.Thread(target=partial, args=(s,)) for s in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    got = a[...]
    assert set(np.unique(got).tolist()) <= {-1, 39}  # no partial write brought back an older shard
    for i, j in marks:
        assert got[i, j] == -1


class _CopyingStore(Store):
    """A store of its own: ``set_parts`` copies the parts it is given, each on its own, and notes
    the thread that gave them."""

    def __init__(self) -> None:
        super().__init__()
        self.values: dict[str, bytes] = {}
        self.lock = threading.Lock()
        self.threads: set[int] = set()

    def _get(self, key, byte_range=None):
        value = self.values.get(key)
        return value if value is None or byte_range is None else byte_range.slice(value)

    def _set(self, key, value):
        with self.lock:
            self.values[key] = bytes(value)

    def set_parts(self, key, parts):
        self._check_writable()
        copied = [bytes(memoryview(p).cast("B")) for p in parts]
        with self.lock:
            self.threads.add(threading.get_ident())
            self.values[key] = b"".join(copied)

    def _delete(self, key):
        with self.lock:
            self.values.pop(key, None)

    def list_prefix(self, prefix):
        with self.lock:
            return [k for k in list(self.values) if k.startswith(prefix)]


@pytest.mark.parametrize("compressors", [None, "blosc", "zstd"])
def test_a_store_of_its_own_gets_whole_shards_from_reused_buffers_intact(compressors):
    comp = {None: None, "blosc": [BloscCodec()], "zstd": [ZstdCodec(level=2)]}[compressors]
    store = _CopyingStore()
    shape = (64, 96)
    a = zarrkit.create_array(store, shape=shape, chunks=(4, 6), shards=(8, 12), dtype="<i4", compressors=comp)
    values = np.random.default_rng(1).integers(0, 1 << 30, shape).astype("<i4")
    with zarrkit.config.set({"threads": 2}):
        a[...] = values
        for k in range(3):  # again, shard by shard pairs: the same threads and buffers
            a[8 * k:8 * k + 16, :] = values[8 * k:8 * k + 16, :] + k
            values[8 * k:8 * k + 16, :] += k
    np.testing.assert_array_equal(a[...], values)
    apart = zarrkit.MemoryStore()
    other = zarrkit.create_array(apart, shape=shape, chunks=(4, 6), shards=(8, 12), dtype="<i4", compressors=comp)
    with zarrkit.config.set({"threads": 2}):
        for region in _shard_regions(shape, (8, 12)):
            other[region] = values[region]
    assert {k: v for k, v in store.values.items() if not k.endswith("zarr.json")} == _raw(apart)


# -- failures ---------------------------------------------------------------------------------------

class _Picky(BytesBytesCodec):
    """Stores bytes as they are, and refuses any holding the bytes EE EE."""

    name = "test.whole-shard-attack-picky"

    def encode(self, data):
        raw = bytes(memoryview(data).cast("B"))
        if b"\xee\xee" in raw:
            raise RuntimeError("refused an EE EE")
        return raw

    def decode(self, data):
        return bytes(data)


register_codec(_Picky.name, _Picky)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("encoding, shard_key", [
    (None, "c/3/1/0"), ({"name": "v2", "separator": "."}, "3.1.0"), ({"name": "default", "separator": "."}, "c.3.1.0"),
])
def test_an_encode_failure_names_the_inner_chunk_and_keeps_the_old_shard(threads, encoding, shard_key):
    store = zarrkit.MemoryStore()
    kw = {} if encoding is None else {"chunk_key_encoding": encoding}
    shape = (16, 12, 3)
    a = zarrkit.create_array(store, shape=shape, chunks=(2, 3, 3), shards=(4, 6, 3), dtype="<u2",
                             compressors=[_Picky()], **kw)
    old = np.arange(np.prod(shape), dtype="<u2").reshape(shape)
    a[...] = old
    before = _raw(store)
    value = np.ones(shape, "<u2")
    value[13, 7, 1] = 0xEEEE  # inner chunk (6, 2, 0) of the array, in shard (3, 1, 0)
    with zarrkit.config.set({"threads": threads}):
        for sel in (Ellipsis, (slice(8, 16), slice(None))):
            with pytest.raises(ChunkEncodeError) as info:
                a[sel] = value[sel]
            assert info.value.key == f"{shard_key}@6.2.0"
            assert _raw(store)[shard_key] == before[shard_key]
    np.testing.assert_array_equal(a[12:16, 6:12], old[12:16, 6:12])
    # a broadcast scalar the codec refuses: named after the shard's first inner chunk
    with pytest.raises(ChunkEncodeError, match="@"):
        a[...] = 0xEEEE
    assert _raw(store)[shard_key] == before[shard_key]


@pytest.mark.parametrize("how", ["read-only wrapper", "mode r", "read_only flag"])
def test_a_read_only_array_refuses_whole_shard_writes_before_writing_anything(how):
    store = zarrkit.MemoryStore()
    a = zarrkit.create_array(store, shape=(16, 24), chunks=(4, 6), shards=(8, 12), dtype="<i4")
    a[...] = 7
    before = {k: bytes(store[k]) for k in store.list_prefix("")}
    if how == "read-only wrapper":
        ro = zarrkit.open_array(ReadOnlyStore(store))
    elif how == "mode r":
        ro = zarrkit.open_array(store, mode="r")
    else:
        ro = zarrkit.open_array(store.with_read_only(True))
    for value in (np.arange(16 * 24, dtype="<i4").reshape(16, 24), 3, 0):
        with pytest.raises(ReadOnlyError):
            ro[...] = value
        with zarrkit.config.set({"threads": 1}), pytest.raises(ReadOnlyError):
            ro[:8, :12] = value if np.ndim(value) == 0 else value[:8, :12]
    assert {k: bytes(store[k]) for k in store.list_prefix("")} == before


# -- memory -----------------------------------------------------------------------------------------

def _retained_after(write) -> int:
    """Bytes still allocated (Python and numpy) after ``write()``, beyond what it stored."""
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        stored = write()
        return tracemalloc.get_traced_memory()[0] - start - stored
    finally:
        tracemalloc.stop()


def test_a_huge_shard_written_whole_leaves_small_buffers_behind():
    shape = (4096, 16384)  # one 256 MiB shard of uint32, 64 inner chunks of 4 MiB
    values = np.ones(shape, dtype="<u4")
    values[::7, ::3] = 9
    store = zarrkit.MemoryStore()
    a = zarrkit.create_array(store, shape=shape, chunks=(1024, 1024), shards=shape, dtype="<u4", compressors=None)

    def write():
        with zarrkit.config.set({"threads": 1}):
            a[...] = values
        return sum(len(store.get(k)) for k in store.list_prefix("c/"))

    retained = _retained_after(write)
    assert retained < 24 * 2**20, retained / 2**20


_NESTED_MEMORY = textwrap.dedent("""
    import tracemalloc, numpy as np, zarrkit
    from zarrkit.codecs import BytesCodec, ShardingCodec

    shape = (2016, 8192)  # 63 MiB of float32
    values = np.ones(shape, dtype="<f4")
    store = zarrkit.MemoryStore()
    a = zarrkit.create(shape, chunks=shape, dtype="<f4", store=store, zarr_format=3, compressor=None,
                       fill_value=0, codecs=[ShardingCodec(shape, [ShardingCodec(shape, [BytesCodec()])])])
    tracemalloc.start()
    start = tracemalloc.get_traced_memory()[0]
    with zarrkit.config.set({"threads": 1}):
        a[...] = values
    stored = sum(len(store.get(k)) for k in store.list_prefix("c/"))
    print(tracemalloc.get_traced_memory()[0] - start - stored)
    tracemalloc.stop()
    assert np.array_equal(a[:3, :3], np.ones((3, 3)))
""")


def test_a_nested_shard_under_the_keep_limit_does_not_leave_hundreds_of_mib_per_thread():
    # an outer shard of one inner chunk, itself a shard of one 63 MiB inner chunk: every buffer
    # is under KEEP_BUFFER_BYTES and kept for the thread's next shard (the outer's gathering
    # buffer, and the nested shard's gathering and output buffers), in a subprocess so that
    # this one keeps none of them
    out = subprocess.run([sys.executable, "-c", _NESTED_MEMORY], check=False, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    retained = int(out.stdout.strip().splitlines()[-1])
    # at most one shard's worth of buffers (a gathering block and an output buffer) stays
    assert retained <= 2 * KEEP_BUFFER_BYTES, f"{retained / 2**20:.0f} MiB kept by one thread"


# -- zstd -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("level", [0, 1, 3, -1, -5, -131072, 19, 22])
@pytest.mark.parametrize("checksum", [False, True])
def test_zstd_frames_decode_with_numcodecs_at_every_level(level, checksum):
    codec = ZstdCodec(level=level, checksum=checksum)
    rng = np.random.default_rng(level & 0xFFFF)
    for n in (1, 3, 7, 255, 4097, 131073):
        data = rng.integers(0, 5, n).astype("u1")
        frame = codec.encode(data)
        assert bytes(numcodecs.Zstd().decode(frame)) == data.tobytes()
        assert bytes(codec.decode(frame)) == data.tobytes()
        assert frame[:4] == b"\x28\xb5\x2f\xfd"
        assert bool(frame[4] & 0x04) == checksum  # the frame header's checksum flag
    for dtype in ("<f2", ">u2", "c16", "bool", "<i8"):
        arr = _random((3, 5, 7), dtype)
        assert bytes(numcodecs.Zstd().decode(codec.encode(arr))) == arr.tobytes()


@pytest.mark.parametrize("dtype", ["<u2", ">f4", "c8", "bool"])
def test_zstd_arrays_of_odd_and_empty_shapes(tmp_path, dtype):
    zarr_python = pytest.importorskip("zarr")
    for i, (shape, chunks, shards) in enumerate([((0, 5), (2, 5), (4, 5)), ((13, 7), (3, 7), (6, 7)),
                                                ((1,), (1,), (1,)), ((5, 3), (1, 1), (5, 3))]):
        path = str(tmp_path / f"a{i}")
        a = zarrkit.create_array(LocalStore(path), shape=shape, chunks=chunks, shards=shards, dtype=dtype,
                                 compressors=[ZstdCodec(level=-2, checksum=True)])
        values = _random(shape, dtype, seed=i)
        a[...] = values
        assert _equal(a[...], values)
        assert _equal(zarr_python.open_array(path, mode="r")[...], values)
        if 0 in shape:
            assert _raw(LocalStore(path)) == {}


@pytest.mark.parametrize("level", [23, 30, 100])
def test_zstd_levels_above_22_that_zarrkit_accepts_still_write(level):
    # the codec takes any int, and numcodecs' Zstd clamps the level (as zstd's own parameter
    # setting does); an array made with one must take writes
    assert bytes(numcodecs.Zstd().decode(numcodecs.Zstd(level=level).encode(b"abc" * 100))) == b"abc" * 100
    values = np.arange(96, dtype="<i4").reshape(8, 12)
    for shards in (None, (4, 6)):
        a = zarrkit.create_array(zarrkit.MemoryStore(), shape=(8, 12), chunks=(2, 3), shards=shards, dtype="<i4",
                                 compressors=numcodecs.Zstd(level=level))
        a[...] = values
        np.testing.assert_array_equal(a[...], values)


def test_zstd_encode_refuses_object_arrays_rather_than_compressing_pointers():
    values = np.array(["some", "text"], dtype=object)
    with pytest.raises((TypeError, ValueError)):
        numcodecs.Zstd().encode(values)
    with pytest.raises((TypeError, ValueError)):
        ZstdCodec().encode(values)


_ZSTD_MEMORY = textwrap.dedent("""
    import gc, numpy as np, zarrkit
    from zarrkit.codecs import ZstdCodec

    def rss():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096

    values = np.zeros((1024, 2048), "<u2")  # one 4 MiB chunk, compressed fast at any level
    values[::7, ::5] = 3
    arrays = [zarrkit.create_array(zarrkit.MemoryStore(), shape=values.shape, chunks=values.shape, dtype="<u2",
                                   compressors=ZstdCodec(level=level, checksum=checksum))
              for level in (19, 20, 21, 22) for checksum in (False, True)]
    gc.collect()
    start = rss()
    with zarrkit.config.set({"threads": 1}):
        for a in arrays:
            a[...] = values
    for a in arrays:
        assert np.array_equal(a[...], values)
    gc.collect()
    print(rss() - start)
""")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc")
def test_zstd_compression_contexts_do_not_pile_up_per_level_on_a_thread():
    # writing arrays of eight (level, checksum) settings on one thread: a context per setting,
    # each keeping its largest workspace, held for as long as the thread lives
    out = subprocess.run([sys.executable, "-c", _ZSTD_MEMORY], check=False, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    grown = int(out.stdout.strip().splitlines()[-1])
    assert grown < 200 * 2**20, f"{grown / 2**20:.0f} MiB kept after writing eight 4 MiB chunks"
