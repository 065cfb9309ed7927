"""Decompression bombs: a small stored chunk that inflates far beyond the chunk's size fails
with a ChunkDecodeError naming it, without the reader allocating what it claims: for every
compressor, v2 and v3, behind a filter, inside a shard and in object arrays (whose chunks are
bounded by ``max_chunk_bytes``), peak memory measured in a child process."""

from __future__ import annotations

import bz2
import json
import lzma
import subprocess
import sys
import tracemalloc
import zlib
from pathlib import Path

import numcodecs
import pytest

import zarrkit
from zarrkit.errors import ChunkDecodeError

INFLATED = 64 * 2**20  # what each bomb decompresses to
CHUNK = 65536  # elements of a chunk: its stored size may exceed each bomb's


def bomb(kind: str) -> bytes:
    if kind in ("zlib", "gzip"):
        c = zlib.compressobj(9, zlib.DEFLATED, 15 if kind == "zlib" else 31)
    elif kind == "bz2":
        c = bz2.BZ2Compressor(9)
    else:
        c = lzma.LZMACompressor()
    block = bytes(2**20)
    return b"".join([*(c.compress(block) for _ in range(INFLATED // len(block))), c.flush()])


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("kind,codec", [
    ("zlib", numcodecs.Zlib(1)), ("gzip", numcodecs.GZip(1)), ("bz2", numcodecs.BZ2(1)), ("lzma", numcodecs.LZMA()),
])
def test_bombs_fail_before_inflating(kind, codec, zarr_format):
    store = {}
    options = {"compressor": codec} if zarr_format == 2 else {"compressors": [codec]}
    # chunks of 256 KiB: the bomb (smaller) is not refused by its stored size, but inflating
    z = zarrkit.create(shape=(2 * CHUNK,), chunks=(CHUNK,), dtype="f4", store=store, zarr_format=zarr_format, **options)
    z[:] = 1.5
    key = "1" if zarr_format == 2 else "c/1"
    store[key] = bomb(kind)
    tracemalloc.start()
    try:
        with pytest.raises(ChunkDecodeError, match=f"chunk '{key}'.*inflates to more than the chunk's {4 * CHUNK} bytes"):
            z[CHUNK:]  # the bomb alone (an LZMA decoder's window takes 8 MiB of its own)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20  # a fraction of the 64 MiB claimed
    assert z[:4].tolist() == [1.5] * 4  # the other chunk still reads


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_a_cut_stream_is_an_error(zarr_format):
    store = {}
    options = {"compressor": numcodecs.Zlib(1)} if zarr_format == 2 else {"compressors": [numcodecs.Zlib(1)]}
    z = zarrkit.create(shape=(1000,), chunks=(1000,), dtype="f8", store=store, zarr_format=zarr_format, **options)
    z[:] = 2.0
    key = "0" if zarr_format == 2 else "c/0"
    store[key] = store[key][:-6]
    with pytest.raises(ChunkDecodeError, match=key):
        z[:]


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_a_bomb_behind_a_filter_is_bounded_too(zarr_format):
    store = {}
    filters = [numcodecs.Delta(dtype="<i4")]
    z = zarrkit.create(shape=(2 * CHUNK,), chunks=(CHUNK,), dtype="<i4", store=store, zarr_format=zarr_format,
                       filters=filters, compressor=numcodecs.Zlib(1))
    z[:] = 3
    key = "1" if zarr_format == 2 else "c/1"
    store[key] = bomb("zlib")
    tracemalloc.start()
    try:
        with pytest.raises(ChunkDecodeError, match="inflates to more than"):
            z[:]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_a_zstd_frame_declaring_more_than_the_chunk_is_refused(zarr_format):
    store = {}
    filters = [numcodecs.Delta(dtype="<i4")]  # not decoded into the output: the limited path
    z = zarrkit.create(shape=(2 * CHUNK,), chunks=(CHUNK,), dtype="<i4", store=store, zarr_format=zarr_format,
                       filters=filters, compressor=numcodecs.Zstd(1))
    z[:] = 3
    key = "1" if zarr_format == 2 else "c/1"
    store[key] = numcodecs.Zstd(1).encode(bytes(INFLATED))
    tracemalloc.start()
    try:
        with pytest.raises(ChunkDecodeError, match=f"chunk '{key}'.*declares {INFLATED} bytes"):
            z[:]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20


# -- every codec, format and layout, measured in a child process ----------------------------------
PROBE = Path(__file__).with_name("_memory_probe.py")
BOMB_SIZE = 128 * 2**20
OBJECT_CAP = 16 * 2**20  # max_chunk_bytes for the object arrays, whose chunks have no fixed size
CODECS = [
    {"id": "zlib", "level": 1}, {"id": "gzip", "level": 1}, {"id": "bz2", "level": 1}, {"id": "lzma"},
    {"id": "zstd", "level": 1}, {"id": "lz4"},
    {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1},
    {"id": "blosc", "cname": "zstd", "clevel": 1, "shuffle": 0},
    {"id": "blosc", "cname": "zlib", "clevel": 1, "shuffle": 2},
    {"id": "blosc", "cname": "blosclz", "clevel": 5, "shuffle": 1},
]
BOMB_CASES = [
    {"fmt": fmt, "layout": layout, "codec": codec, "inflate": BOMB_SIZE,
     **({"config": {"max_chunk_bytes": OBJECT_CAP}} if layout == "object" else {})}
    for codec in CODECS
    for fmt in (2, 3)
    for layout in ("plain", "filter", "object", "sharded")
    if not (layout == "sharded" and fmt == 2)
]


def _case_id(case: dict) -> str:
    codec = case["codec"]
    return f"{codec['id']}{'-' + codec['cname'] if 'cname' in codec else ''}-v{case['fmt']}-{case['layout']}"


def run_probe(cases: list[dict], timeout: float) -> list[dict]:
    """Run ``cases`` in a fresh interpreter (see ``_memory_probe.py``); one result per case."""
    proc = subprocess.run([sys.executable, str(PROBE), json.dumps(cases)], capture_output=True,
                          text=True, timeout=timeout, cwd=PROBE.parent, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(results) == len(cases)
    return results


@pytest.fixture(scope="module")
def bomb_results():
    return dict(zip(map(_case_id, BOMB_CASES), run_probe(BOMB_CASES, timeout=300)))


@pytest.mark.parametrize("case", BOMB_CASES, ids=_case_id)
def test_every_bomb_is_refused_within_twice_the_chunk_plus_64_mib(case, bomb_results):
    result = bomb_results[_case_id(case)]
    declared = OBJECT_CAP if case["layout"] == "object" else 4096
    assert result["error"] == "ChunkDecodeError", result
    assert result["message"].startswith(f"chunk '{result['key']}") and " in MemoryStore(" in result["message"]
    assert result["peak"] <= 2 * declared + 64 * 2**20, result
    assert result["seconds"] < 10, result
