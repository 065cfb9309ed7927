"""Metadata declaring huge counts (chunks per shard, chunks per array, bytes per chunk) costs
nothing until data proves them: opening, reading from what is missing and counting what is
stored take constant memory and time, and declarations beyond ``max_chunk_bytes`` are refused
at open with a MetadataError naming the document.  Memory is measured in a child process."""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_bombs import run_probe

import zarrkit
from zarrkit.errors import MetadataError

MIB = 2**20
SMALL = 64 * MIB  # what any of these operations may take at most


def v3_doc(shape, chunks, codecs=None, dtype="uint8"):
    return {
        "zarr_format": 3, "node_type": "array", "shape": shape, "data_type": dtype,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 7,
        "codecs": codecs or [{"name": "bytes"}],
    }


def sharded_doc(inner_per_shard_log2):
    n = 2**inner_per_shard_log2
    return v3_doc([n], [n], [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [1], "codecs": [{"name": "bytes"}], "index_codecs": INDEX_CODECS}}])


INDEX_CODECS = [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]
#: shards of two inner chunks, each itself a shard of 2^30 one-byte chunks (a 16 GiB index)
NESTED = v3_doc([2**31], [2**31], [{"name": "sharding_indexed", "configuration": {
    "chunk_shape": [2**30], "index_codecs": INDEX_CODECS, "codecs": [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [1], "codecs": [{"name": "bytes"}], "index_codecs": INDEX_CODECS}}]}}])


def v2_doc(shape, chunks, dtype="<f8"):
    return {"zarr_format": 2, "shape": shape, "chunks": chunks, "dtype": dtype, "compressor": None,
            "filters": None, "fill_value": 3.0, "order": "C"}


HUGE_GRID = [2**62, 2**62]
CHEAP = {
    "2^26 inner chunks per shard": sharded_doc(26),
    "2^30 inner chunks per shard, cap raised": sharded_doc(30),
    "2^124 chunks, v2": v2_doc(HUGE_GRID, [1, 1]),
    "2^124 chunks, v3": v3_doc(HUGE_GRID, [1, 1]),
    "2^40 rectilinear chunks": {
        **v3_doc([2**40], [1]),
        "chunk_grid": {"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": [[[1, 2**40]]]}},
    },
    "an 8 GiB chunk, cap raised": v2_doc([2**40], [2**30]),
}
RAISED = {"max_chunk_bytes": 2**40}
CHEAP_CASES = [
    {"doc": doc, "op": op, **({"config": RAISED} if "raised" in name else {}), "name": f"{name}: {op}"}
    for name, doc in CHEAP.items()
    for op in ("open", "read", "info")
]


@pytest.fixture(scope="module")
def cheap_results():
    return dict(zip((c["name"] for c in CHEAP_CASES), run_probe(CHEAP_CASES, timeout=300)))


@pytest.mark.parametrize("case", CHEAP_CASES, ids=[c["name"] for c in CHEAP_CASES])
def test_declared_counts_cost_nothing_until_data_proves_them(case, cheap_results):
    result = cheap_results[case["name"]]
    assert result["error"] is None, result
    assert result["peak"] < SMALL, result
    assert result["seconds"] < 5, result


REFUSED = {
    "2^30 inner chunks per shard (a 16 GiB index)": (sharded_doc(30), "a shard's index declares"),
    "an 8 GiB chunk": (v2_doc([2**40], [2**30]), "a chunk declares 8589934592 bytes"),
    "an inner shard with a 16 GiB index": (NESTED, "an inner shard's index declares"),
}
REFUSED_CASES = [
    {"doc": doc, "op": op, "name": f"{name}: {op}", "expect": expect}
    for name, (doc, expect) in REFUSED.items()
    for op in ("open", "read")
]


@pytest.fixture(scope="module")
def refused_results():
    return dict(zip((c["name"] for c in REFUSED_CASES), run_probe(REFUSED_CASES, timeout=300)))


@pytest.mark.parametrize("case", REFUSED_CASES, ids=[c["name"] for c in REFUSED_CASES])
def test_declarations_beyond_the_cap_are_refused_at_open(case, refused_results):
    result = refused_results[case["name"]]
    assert result["error"] == "MetadataError", result
    assert result["message"].startswith(f"{result['key']}: {case['expect']}"), result
    assert "max_chunk_bytes" in result["message"]
    assert result["peak"] < SMALL and result["seconds"] < 5, result


def test_counts_of_a_huge_grid_are_exact():
    store = {".zarray": json.dumps(v2_doc(HUGE_GRID, [1, 1])).encode()}
    z = zarrkit.open_array(store, mode="r")
    assert z.nchunks == 2**124 and z.size == 2**124 and z.nbytes == 2**127
    assert z.nchunks_initialized == 0
    assert z[2**61 : 2**61 + 3, 4].tolist() == [3.0] * 3


def test_the_cap_is_a_setting(tmp_path):
    with zarrkit.config.set(max_chunk_bytes=1000):
        with pytest.raises(ValueError, match="a chunk declares 8000 bytes, more than max_chunk_bytes"):
            zarrkit.create(shape=(10_000,), chunks=(1000,), dtype="f8", store=str(tmp_path / "a"), zarr_format=2)
        assert not (tmp_path / "a" / ".zarray").exists()  # refused before anything is written
        z = zarrkit.create(shape=(10_000,), chunks=(125,), dtype="f8", store=str(tmp_path / "b"), zarr_format=2)
        z[:] = np.arange(10_000)
    z = zarrkit.create(shape=(10_000,), chunks=(1000,), dtype="f8", store=str(tmp_path / "a"), zarr_format=2)
    z[:] = np.arange(10_000)
    with zarrkit.config.set(max_chunk_bytes=1000), \
            pytest.raises(MetadataError, match=r"\.zarray: a chunk declares 8000 bytes"):
        zarrkit.open_array(str(tmp_path / "a"), mode="r")
    assert zarrkit.open_array(str(tmp_path / "a"), mode="r")[-1] == 9999
    for bad in (-1, 1.5, True, "big"):
        with pytest.raises(ValueError, match="max_chunk_bytes"):
            zarrkit.config.set(max_chunk_bytes=bad)


def test_index_codecs_must_give_a_fixed_size():
    store = {"zarr.json": json.dumps(v3_doc([8], [4], [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [2], "codecs": [{"name": "bytes"}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip"}]}}])).encode()}
    with pytest.raises(MetadataError, match="zarr.json: sharding_indexed: index_codecs must encode the index to a fixed size"):
        zarrkit.open_array(store, mode="r")
