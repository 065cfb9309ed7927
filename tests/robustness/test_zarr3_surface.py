"""Hostile input to zarr-python 3's spellings: metadata built with ``from_dict``, data types,
consolidated metadata, settings, store paths and modes, grids and shard orders.  Each fails
with a clear typed error naming what is wrong, writes nothing when refused, and stays within
bounded memory; the memory bombs run in a child process with an address-space limit."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import numpy as np
import pytest

import zarrkit
from zarrkit.errors import (
    ContainsArrayError,
    InvalidPathError,
    MetadataError,
    UnsupportedDtypeError,
)
from zarrkit.metadata.consolidated import ConsolidatedMetadata, GroupMetadata
from zarrkit.metadata.v2 import ArrayV2Metadata
from zarrkit.metadata.v3 import ArrayV3Metadata


def v3_doc(**changes):
    doc = {
        "zarr_format": 3, "node_type": "array", "shape": [10], "data_type": "float32",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [5]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
    }
    doc.update(changes)
    return doc


def v2_doc(**changes):
    doc = {"zarr_format": 2, "shape": [10], "chunks": [5], "dtype": "<f8", "compressor": None,
           "fill_value": 0, "order": "C", "filters": None}
    doc.update(changes)
    return doc


def nested(depth):
    root = current = {}
    for _ in range(depth):
        current["a"] = {}
        current = current["a"]
    return root


def run_limited(script: str, limit: int = 1 << 30, timeout: float = 60) -> str:
    """Run ``script`` in a fresh interpreter whose address space is capped at ``limit`` bytes
    (beyond what the interpreter and NumPy need); its standard output."""
    prelude = f"import resource\nresource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))\n"
    done = subprocess.run([sys.executable, "-c", prelude + script], check=False, capture_output=True, text=True,
                          timeout=timeout)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


# -- metadata from_dict ---------------------------------------------------------------------------


@pytest.mark.parametrize("cls,doc,key", [(ArrayV3Metadata, v3_doc, "zarr.json"), (ArrayV2Metadata, v2_doc, ".zarray")])
def test_from_dict_with_deeply_nested_attributes_is_a_metadata_error(cls, doc, key):
    # was RecursionError (the tuples-to-lists walk recursed once per level)
    with pytest.raises(MetadataError, match=f"{key}.*nested too deeply"):
        cls.from_dict(doc(attributes=nested(100_000)))
    looped = {}
    looped["self"] = looped  # a container holding itself: no JSON has it
    with pytest.raises(MetadataError, match="nested too deeply"):
        cls.from_dict(doc(attributes=looped))
    # what a document may hold still reads
    assert cls.from_dict(doc(attributes=nested(1_200))).attributes["a"]["a"] == nested(1_198)


@pytest.mark.parametrize("cls", [ArrayV3Metadata, ArrayV2Metadata])
def test_from_dict_of_no_dict_names_what_it_expected(cls):
    with pytest.raises(TypeError, match="from_dict: expected a dict.*got list"):
        cls.from_dict([1])


# -- data types -----------------------------------------------------------------------------------


@pytest.mark.parametrize("data_type", [
    {"name": "fixed_length_utf32", "configuration": {"length_bytes": 2**62}},
    {"name": "null_terminated_bytes", "configuration": {"length_bytes": 2**63}},
    {"name": "raw_bytes", "configuration": {"length_bytes": 2**63}},
    "r" + str(2**70),
    "r" + "9" * 5000,
])
def test_a_data_type_too_large_for_numpy_is_a_typed_error(data_type):
    # was a bare TypeError ("data type 'U1152921504606846976' not understood"), or the int
    # parser's ValueError for a 5000-digit size
    store = {"zarr.json": json.dumps(v3_doc(data_type=data_type, fill_value="")).encode()}
    with pytest.raises(UnsupportedDtypeError, match="zarr.json: data_type"):
        zarrkit.open_array(store, mode="r")
    with pytest.raises(UnsupportedDtypeError, match="zarr.json: data_type"):
        ArrayV3Metadata.from_dict(v3_doc(data_type=data_type, fill_value=""))


def test_parse_dtype_of_json_it_cannot_read_says_so():
    from zarrkit.metadata.zdtypes import parse_dtype

    # was NumPy's "entry not a 2- or 3- tuple": the JSON was handed to numpy.dtype
    with pytest.raises(ValueError, match="No Zarr data type found that matches"):
        parse_dtype({"name": "fixed_length_utf32", "configuration": {"length_bytes": -4}}, zarr_format=3)


# -- consolidated metadata --------------------------------------------------------------------------


@pytest.mark.parametrize("member", ["/abs", "..", "a/../b", ".", "", "a//b", "a/", "a\\b", "a\x00b"])
def test_consolidated_from_dict_refuses_member_names_that_are_no_path(member):
    # '/abs' was a KeyError; the others were taken, naming nodes no store can hold
    data = {"kind": "inline", "must_understand": False, "metadata": {member: v3_doc(attributes={})}}
    with pytest.raises(MetadataError, match="consolidated metadata: member"):
        ConsolidatedMetadata.from_dict(data)


@pytest.mark.parametrize("data", [None, [1], "x"])
def test_consolidated_from_dict_of_no_object_is_a_type_error(data):
    with pytest.raises(TypeError, match="consolidated metadata: expected an object"):
        ConsolidatedMetadata.from_dict(data)


def test_consolidated_metadata_nested_in_members_is_bounded():
    # each member group holding consolidated metadata of its own: RecursionError at 400 levels
    root = current = {"zarr_format": 3, "node_type": "group"}
    for _ in range(400):
        member = {"zarr_format": 3, "node_type": "group"}
        current["consolidated_metadata"] = {"kind": "inline", "must_understand": False, "metadata": {"a": member}}
        current = member
    with pytest.raises(MetadataError, match="nested too deeply"):
        GroupMetadata.from_dict(root)


# -- settings ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["threads", "io_threads", "threading.max_workers", "async.concurrency"])
def test_a_thread_count_no_process_can_start_is_refused(key):
    # threads=10**9 was taken: the next write of many chunks failed part-way with
    # "RuntimeError: can't start new thread"
    with pytest.raises(ValueError, match="must be an int from 1 to 1024"):
        zarrkit.config.set({key: 10**9})
    assert zarrkit.config.threads <= 1024 and zarrkit.config.io_threads <= 1024


@pytest.mark.parametrize("value", ["no", "false", 0, None])
def test_write_empty_chunks_must_be_a_bool(value):
    # 'no' was taken, and (being truthy) meant yes
    with pytest.raises(ValueError, match="write_empty_chunks must be True or False"):
        zarrkit.config.set({"array.write_empty_chunks": value})


# -- resize -------------------------------------------------------------------------------------------


def test_delete_outside_chunks_must_be_a_bool():
    # 'no' was taken as true: the chunks outside the new shape were deleted
    store = {}
    z = zarrkit.create_array(store, shape=(8,), chunks=(2,), dtype="i4")
    z[:] = np.arange(8)
    before = dict(store)
    with pytest.raises(TypeError, match="delete_outside_chunks must be True or False"):
        z.resize(3, delete_outside_chunks="no")
    assert store == before
    z.resize(3, delete_outside_chunks=False)
    z.resize(8, delete_outside_chunks=False)
    assert z[:].tolist() == list(range(8))  # kept chunks show again, as asked


# -- stores and paths -----------------------------------------------------------------------------------


def test_local_store_open_with_an_unknown_mode_makes_nothing(tmp_path):
    # the directory was made, and the mode ignored
    from zarrkit.storage import DirectoryStore

    root = tmp_path / "new"
    with pytest.raises(ValueError, match="mode must be one of"):
        asyncio.run(DirectoryStore.open(str(root), mode="bogus"))
    assert not root.exists()


def test_normalize_path_of_bytes_that_are_no_text_is_an_invalid_path():
    from zarrkit.storage.store_path import normalize_path

    # was UnicodeDecodeError
    with pytest.raises(InvalidPathError, match="not UTF-8"):
        normalize_path(b"\xff")


# -- creation ---------------------------------------------------------------------------------------------


def test_blosc_block_size_out_of_range_is_refused_before_anything_is_written():
    from zarrkit.codecs.blosc import BloscCodec

    # 2**40 was taken, the array created, and every write failed with OverflowError
    for blocksize in (-1, 2**40):
        with pytest.raises(MetadataError, match="blosc: blocksize must be an int in 0.."):
            BloscCodec(blocksize=blocksize)
    store = {}
    with pytest.raises(MetadataError, match="blocksize"):
        zarrkit.create_array(store, shape=(8,), chunks=(4,), dtype="f8",
                             compressors=[{"name": "blosc", "configuration": {"blocksize": 2**40}}])
    assert store == {}


def test_create_hierarchy_refused_writes_nothing():
    # the group 'ok' was written before the array at 'x' was found in the way
    store = {}
    g = zarrkit.create_group(store)
    g.create_array("x", shape=(4,), chunks=(2,), dtype="i4")[:] = 5
    before = dict(store)
    for nodes in ({"ok": GroupMetadata(), "x": GroupMetadata()}, {"ok": GroupMetadata(), "x/y": GroupMetadata()}):
        with pytest.raises(ContainsArrayError):
            list(g.create_hierarchy(nodes))
        with pytest.raises(ContainsArrayError):
            list(zarrkit.create_hierarchy(store=store, nodes=nodes))
        assert store == before


@pytest.mark.xfail(strict=True, reason="create_array(data=..., overwrite=True) removes the old node before "
                   "reading the data: a source that fails to read leaves neither node")
def test_create_array_over_a_node_keeps_it_when_the_data_cannot_be_read():
    source_store = {}
    source = zarrkit.create_array(source_store, shape=(4,), chunks=(2,), dtype="i4",
                                  compressors=[{"name": "gzip", "configuration": {"level": 1}}])
    source[:] = 7
    source_store["c/1"] = b"not gzip"  # a damaged chunk of the source
    store = {}
    old = zarrkit.create_array(store, name="a", shape=(4,), chunks=(2,), dtype="i4")
    old[:] = [1, 2, 3, 4]
    before = dict(store)
    with pytest.raises(zarrkit.errors.ChunkDecodeError, match="c/1"):
        zarrkit.create_array(store, name="a", data=source, overwrite=True)
    assert store == before


# -- grids and shard orders: memory bounded ---------------------------------------------------------------


def test_morton_order_of_a_huge_grid_is_refused_not_a_memory_bomb():
    # listed every coordinate of 2**40 cells first: MemoryError under the limit, the
    # machine's memory without it
    out = run_limited(
        "from zarrkit.codecs.sharding import morton_order_coords, colexicographic_order_coords\n"
        "for f in (morton_order_coords, colexicographic_order_coords):\n"
        "    try:\n        f((2**20, 2**20))\n    except ValueError as e:\n        print('refused', 'cells' in str(e))\n"
        "print(morton_order_coords((2, 2)))\n"
    )
    assert out.splitlines() == ["refused True", "refused True", "((0, 0), (1, 0), (0, 1), (1, 1))"]


@pytest.mark.parametrize("shape", [(-1, 2), (2.5,), "ab"])
def test_morton_order_of_no_shape_names_it(shape):
    from zarrkit.codecs.sharding import morton_order_coords

    # (-1, 2) was an empty order, (2.5,) truncated, 'ab' int()'s ValueError
    with pytest.raises(ValueError, match="shape must be a sequence of non-negative ints"):
        morton_order_coords(shape)


def test_iter_grid_of_a_huge_grid_starts_at_once():
    # itertools.product copied each range into a tuple before the first cell
    out = run_limited(
        "import itertools\n"
        "from zarrkit.core.indexing_tools import iter_grid, iter_regions\n"
        "print(list(itertools.islice(iter_grid((2**40, 2**40)), 2)))\n"
        "print(next(iter_regions((2**50,), (1,))))\n"
    )
    assert out.splitlines() == ["[(0, 0), (0, 1)]", "(slice(0, 1, 1),)"]
