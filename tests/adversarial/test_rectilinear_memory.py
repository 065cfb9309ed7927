"""A rectilinear grid listing millions of chunk edges costs a small multiple of its document:
edges are kept as numpy runs, never a Python tuple an edge (a 24 MB document of 12 million
edges took about 1.9 GB, 96 times itself, and ended in a bare MemoryError).  Absurd grids
(sums past int64, more entries than any array has) raise MetadataError naming the key."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import zarrkit
from zarrkit.errors import MetadataError

CHILD = textwrap.dedent("""
    import sys, tracemalloc
    import numpy as np
    import zarrkit
    n, form = int(sys.argv[1]), sys.argv[2]
    if form == "flat":
        edges, total = "[" + ",".join(["1", "2"] * (n // 2)) + "]", 3 * (n // 2)
    else:
        edges, total = "[" + ",".join(["[1,3]", "[2,3]"] * (n // 2)) + "]", 9 * (n // 2)
    doc = ('{"zarr_format":3,"node_type":"array","shape":[%d],"data_type":"uint8","chunk_grid":'
           '{"name":"rectilinear","configuration":{"kind":"inline","chunk_shapes":[%s]}},'
           '"chunk_key_encoding":{"name":"default"},"fill_value":7,"codecs":[{"name":"bytes"}]}'
           % (total, edges)).encode()
    store = {"a/zarr.json": doc}
    tracemalloc.start()
    a = zarrkit.open_array(store, path="a", mode="r")
    got = a[total - 5:]
    assert a.metadata.storage_grid.dims[0].index(total - 1) == a.metadata.storage_grid.dims[0].n - 1
    peak = tracemalloc.get_traced_memory()[1]
    assert (got == 7).all()
    print(peak / len(doc))
""")


@pytest.mark.parametrize(("form", "bound"), [("flat", 24), ("runs", 36)])
def test_many_edges_cost_a_small_multiple_of_the_document(form, bound):
    proc = subprocess.run([sys.executable, "-c", CHILD, "1000000", form], capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    ratio = float(proc.stdout.split()[-1])
    # the JSON parser's own lists are most of it (about 5x for edges, 26x for [length, count])
    assert ratio < bound, f"opening the grid took {ratio:.0f}x its document"


def _doc(chunk_shapes, shape=(10,)) -> dict:
    return {"a/zarr.json": json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": list(shape), "data_type": "uint8",
        "chunk_grid": {"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": chunk_shapes}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": [{"name": "bytes"}]}).encode()}


@pytest.mark.parametrize("edges", [[[2**53, 2**53]], [[1, 2**53]] * 1025, [10**40], [[1, 10**40]]])
def test_absurd_edges_are_a_typed_error_naming_the_key(edges):
    with pytest.raises(MetadataError, match=r"a/zarr.json: chunk_grid.chunk_shapes\[0\]"):
        zarrkit.open_array(_doc([edges]), path="a", mode="r")


def test_a_big_grid_reads_and_writes_as_a_small_one():
    edges = [1, 2, 3] * 3000 + [[4, 5]]  # more runs than are kept in lists
    total = 6 * 3000 + 20
    a = zarrkit.open_array(_doc([edges], (total,)), path="a", mode="r+")
    small = zarrkit.open_array(_doc([[1, 2, 3, [4, 5]]], (26,)), path="a", mode="r+")
    d, s = a.metadata.storage_grid.dims[0], small.metadata.storage_grid.dims[0]
    assert d.n == 9005 and d.length(9004) == 4 and d.start(9001) == total - 16
    assert [d.index(i) for i in (0, 1, 3, 5, 6, total - 1)] == [0, 1, 2, 2, 3, 9004]
    idx = np.arange(total)
    assert (d.indices(idx) == np.array([d.index(i) for i in idx])).all()
    assert s.max_length == d.max_length == 4
    a[:] = np.arange(total) % 251
    assert (a[:] == np.arange(total) % 251).all()
    assert a.metadata.chunk_grid_json()["configuration"]["chunk_shapes"] == [edges]
