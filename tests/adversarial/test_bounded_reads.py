"""A stored object is read only as far as its codecs could have written it: a chunk larger than
the largest encoding of its chain (or than ``max_chunk_bytes``) is refused from its size -- a
file's size, a ranged read of one byte more, an object's ``Content-Length`` -- before it is read
whole, with a ChunkDecodeError naming it, on every store; a shard index entry claiming more
than its inner chunk's codecs write, or bytes beyond the shard, is refused before anything is
allocated or read; and a small zstd frame that does not declare its decoded size cannot
inflate beyond the chunk.  Peak memory is measured in a child process (see
``tests/robustness/_memory_probe.py``)."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import numcodecs
import pytest

import zarrkit
from zarrkit.errors import ChunkDecodeError
from zarrkit.storage import CountingStore, DirectoryStore, LRUStoreCache, MemoryStore, ReadOnlyStore
from zarrkit.storage.mapping import MappingStore

PROBE_DIR = Path(__file__).resolve().parent.parent / "robustness"
HUGE = 2**30  # a sparse file: nothing of it is on disk or in memory until it is read
PEAK_LIMIT = 64 * 2**20


# -- get_upto, store by store --------------------------------------------------------------------
def _stores(tmp_path):
    yield "memory", MemoryStore()
    yield "mapping", MappingStore({})
    yield "directory", DirectoryStore(tmp_path / "d")
    yield "read-only directory", ReadOnlyStore(DirectoryStore(tmp_path / "d"))
    yield "counting directory", CountingStore(DirectoryStore(tmp_path / "d"))
    yield "cached directory", LRUStoreCache(DirectoryStore(tmp_path / "d"), max_size=2**20)
    from zarrkit.storage.cache import CacheStore

    yield "cache store", CacheStore(DirectoryStore(tmp_path / "d"), cache_store=MemoryStore())
    from zarrkit.storage.fsspec import FsspecStore

    yield "fsspec memory", FsspecStore(f"memory://bounded-{os.getpid()}-{tmp_path.name}")
    yield "fsspec file", FsspecStore("file://" + str(tmp_path / "d"))
    import obstore  # the test extra installs it

    from zarrkit.storage.obstore import ObjectStore

    yield "obstore memory", ObjectStore(obstore.store.MemoryStore())
    yield "obstore file", ObjectStore(obstore.store.LocalStore(str(tmp_path / "d")))
    import zarr

    yield "zarr-python memory", zarrkit.storage.coerce_store(zarr.storage.MemoryStore())


def test_every_store_refuses_a_value_larger_than_the_limit(tmp_path):
    (tmp_path / "d").mkdir()
    seen = []
    for name, store in _stores(tmp_path):
        writable = getattr(store, "inner", store)
        writable["a/big"] = b"x" * 101
        writable["a/fits"] = b"y" * 100
        for get in [store.get_upto, getattr(store, "get_transient_upto", store.get_upto)]:
            with pytest.raises(ChunkDecodeError, match=r"chunk 'a/big'.*more than the 100") as info:
                get("a/big", 100)
            assert info.value.key == "a/big", name
            assert bytes(get("a/fits", 100)) == b"y" * 100, name
            assert get("a/missing", 100) is None, name
        # many at once: the same values, and the same refusal, naming the key at fault
        got = store.get_many_upto(["a/fits", "a/missing", "a/fits"], 100)
        assert [None if v is None else bytes(v) for v in got] == [b"y" * 100, None, b"y" * 100], name
        with pytest.raises(ChunkDecodeError, match=r"chunk 'a/big'.*more than the 100") as info:
            store.get_many_upto(["a/fits", "a/big", "a/fits"], 100)
        assert info.value.key == "a/big", name
        seen.append(name)
    assert len(seen) >= 10


def test_a_directory_refuses_from_the_size_above_one_read():
    # limits above what one read of limit + 1 bytes allocates ask the file's size first
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        store = DirectoryStore(d)
        store["k"] = b"z" * 100
        os.truncate(os.path.join(d, "k"), HUGE)
        with pytest.raises(ChunkDecodeError, match=f"holds {HUGE} bytes, more than the {2**24}"):
            store.get_upto("k", 2**24)


def test_a_mapping_value_that_is_no_bytes_is_measured_before_it_is_copied():
    big = bytearray(2**20)  # copied into bytes whole before this check existed
    store = MappingStore({"c/0": big})
    with pytest.raises(ChunkDecodeError, match=f"holds {2**20} bytes"):
        store.get_upto("c/0", 1000)


# -- whole reads in a child process: the peak memory of a hostile object -------------------------
CHILD = r"""
import json, os, sys
sys.path.insert(0, sys.argv[2])
from _memory_probe import reset_peak, resident
import numcodecs, numpy as np
import zarrkit


def strip_size(frame):
    # the same zstd frame, its decoded size not declared (as streaming compressors write it)
    fhd = frame[4]
    fcs, single = fhd >> 6, (fhd >> 5) & 1
    size = (1 if single else 0, 2, 4, 8)[fcs]
    start = 5 + (0 if single else 1)
    window = bytes([23 << 3]) if single else frame[5:6]
    return frame[:4] + bytes([fhd & 0b100]) + window + frame[start + size:]


def array(case):
    kind, path = case["store"], case.get("path")
    if kind == "bomb":
        store = zarrkit.MemoryStore()
        fmt = case["format"]
        opts = {"compressor": numcodecs.Zstd(1)} if fmt == 2 else {"compressors": [numcodecs.Zstd(1)]}
        if case.get("filter"):
            opts["filters"] = [numcodecs.Delta(dtype="<f8")]
        z = zarrkit.create(shape=(2048,), chunks=(1024,), dtype="<f8", store=store, zarr_format=fmt, **opts)
        z[:] = 1.5
        store["1" if fmt == 2 else "c/1"] = strip_size(bytes(numcodecs.Zstd(1).encode(bytes(256 * 2**20))))
        return z
    if kind == "fsspec":
        from zarrkit.storage.fsspec import FsspecStore
        return zarrkit.open_array(FsspecStore("file://" + path), mode="r")
    if kind == "obstore":
        from obstore.store import LocalStore
        from zarrkit.storage.obstore import ObjectStore
        return zarrkit.open_array(ObjectStore(LocalStore(path)), mode="r")
    if kind == "zarr-python":
        import zarr
        return zarrkit.open_array(zarr.storage.LocalStore(path), mode="r")
    if kind == "consolidated":
        return zarrkit.open_consolidated(path, mode="r")["a"]
    return zarrkit.open_array(zarrkit.DirectoryStore(path), mode="r+")


for case in json.loads(sys.argv[1]):
    z = array(case)
    before = resident()[0]
    reset_peak()
    error = message = None
    try:
        if case.get("op") == "write":
            z[0] = 5
        else:
            z[:]
    except Exception as exc:
        error, message = type(exc).__name__, str(exc)
    print(json.dumps({"name": case["name"], "error": error, "message": message,
                      "peak": resident()[1] - before}), flush=True)
"""


def _hostile_directory(path: Path, key: str, **create) -> str:
    """An array whose stored object ``key`` becomes a sparse file of :data:`HUGE` bytes."""
    z = zarrkit.create(store=DirectoryStore(path), dtype="<f8", **create)
    z[:] = 1.0
    os.truncate(path / key, HUGE)
    return str(path)


@pytest.fixture(scope="module")
def hostile_reads(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    raw = _hostile_directory(root / "raw", "c/1", shape=(4,), chunks=(2,), zarr_format=3, compressors=None)
    zlib3 = _hostile_directory(root / "zlib3", "c/1", shape=(4,), chunks=(2,), zarr_format=3,
                               compressors=[numcodecs.Zlib(1)])
    zlib2 = _hostile_directory(root / "zlib2", "1", shape=(4,), chunks=(2,), zarr_format=2,
                               compressor=numcodecs.Zlib(1))
    bz2 = _hostile_directory(root / "bz2", "1", shape=(4,), chunks=(2,), zarr_format=2,
                             compressor=numcodecs.BZ2(1))
    # chunks of 64 KiB decode into the result from a buffer the store reuses
    large = _hostile_directory(root / "large", "c/1", shape=(2 * 8192,), chunks=(8192,), zarr_format=3,
                               compressors=[numcodecs.Zstd(1)])
    write = _hostile_directory(root / "write", "c/0", shape=(4,), chunks=(2,), zarr_format=3, compressors=None)
    group = zarrkit.open_group(str(root / "group"), mode="w", zarr_format=2)
    group.create_dataset("a", shape=(4,), chunks=(2,), dtype="<f8", compressor=numcodecs.Zlib(1))[:] = 1.0
    zarrkit.consolidate_metadata(str(root / "group"))
    os.truncate(root / "group" / "a" / "1", HUGE)
    cases = [
        {"name": "directory, no compressor", "store": "directory", "path": raw, "key": "c/1"},
        {"name": "directory, zlib (v3)", "store": "directory", "path": zlib3, "key": "c/1"},
        {"name": "directory, zlib (v2)", "store": "directory", "path": zlib2, "key": "1"},
        {"name": "directory, bz2 (v2)", "store": "directory", "path": bz2, "key": "1"},
        {"name": "directory, large zstd chunks", "store": "directory", "path": large, "key": "c/1"},
        {"name": "directory, a partial write", "store": "directory", "path": write, "key": "c/0", "op": "write"},
        {"name": "consolidated", "store": "consolidated", "path": str(root / "group"), "key": "a/1"},
        {"name": "fsspec", "store": "fsspec", "path": raw, "key": "c/1"},
        {"name": "zarr-python LocalStore", "store": "zarr-python", "path": raw, "key": "c/1"},
        {"name": "zarr-python LocalStore, large chunks", "store": "zarr-python", "path": large, "key": "c/1"},
        {"name": "zstd frame without its size (v3)", "store": "bomb", "format": 3, "key": "c/1"},
        {"name": "zstd frame without its size (v2)", "store": "bomb", "format": 2, "key": "1"},
        {"name": "zstd frame without its size, behind a filter", "store": "bomb", "format": 3, "filter": True,
         "key": "c/1"},
    ]
    cases += [
        {"name": "obstore", "store": "obstore", "path": raw, "key": "c/1"},
        {"name": "obstore, large chunks", "store": "obstore", "path": large, "key": "c/1"},
    ]
    proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps(cases), str(PROBE_DIR)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = {r["name"]: r for r in map(json.loads, proc.stdout.splitlines())}
    assert len(results) == len(cases)
    return {c["name"]: (c, results[c["name"]]) for c in cases}


CASE_NAMES = [
    "directory, no compressor", "directory, zlib (v3)", "directory, zlib (v2)", "directory, bz2 (v2)",
    "directory, large zstd chunks", "directory, a partial write", "consolidated", "fsspec",
    "zarr-python LocalStore", "zarr-python LocalStore, large chunks", "obstore", "obstore, large chunks",
    "zstd frame without its size (v3)", "zstd frame without its size (v2)",
    "zstd frame without its size, behind a filter",
]


@pytest.mark.parametrize("name", CASE_NAMES)
def test_a_hostile_object_is_refused_before_it_is_read_whole(hostile_reads, name):
    case, result = hostile_reads[name]
    assert result["error"] == "ChunkDecodeError", result
    assert result["message"].startswith(f"chunk '{case['key']}'"), result
    assert result["peak"] < PEAK_LIMIT, result  # the object claims 1 GiB (a bomb 256 MiB)


# -- shard indexes ------------------------------------------------------------------------------
def _shard(entries: list[tuple[int, int]], chunk: bytes = b"\0" * 64) -> bytes:
    index = b"".join(struct.pack("<QQ", o, n) for o, n in entries)
    return chunk + bytes(numcodecs.CRC32C().encode(index))


def _sharded_stores(tmp_path):
    yield MemoryStore()
    yield DirectoryStore(tmp_path / "s")
    from zarrkit.storage.fsspec import FsspecStore

    yield FsspecStore(f"memory://shards-{os.getpid()}-{tmp_path.name}")


@pytest.mark.parametrize("offset,nbytes,why", [
    (0, 2**33, "claims 8589934592 bytes, more than the 64"),
    (0, 2**40, "claims 1099511627776 bytes, more than the 64"),
    (2**64 - 10, 8, "beyond the shard's end"),
    (2**63, 64, "beyond the shard's end"),
    (40, 64, "beyond the shard's end"),
])
def test_a_hostile_shard_index_entry_is_refused_before_anything_is_read(tmp_path, offset, nbytes, why):
    empty = (2**64 - 1, 2**64 - 1)
    for store in _sharded_stores(tmp_path):
        z = zarrkit.create_array(store, shape=(16,), chunks=(8,), shards=(16,), dtype="<f8", compressors=None)
        z[:] = 1.0
        store["c/0"] = _shard([empty, (offset, nbytes)])
        r = zarrkit.open_array(store, mode="r")
        for selection in (slice(None), slice(8, None), 9):
            with pytest.raises(ChunkDecodeError) as info:
                r[selection]
            message = str(info.value)
            assert info.value.key == "c/0" and "inner chunk (1,)" in message and why in message, message
