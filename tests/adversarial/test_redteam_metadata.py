"""Red-team attacks on metadata a stranger wrote: rectilinear grids (metadata/grid.py Runs,
metadata/v3.py parse_chunk_shapes)."""

from __future__ import annotations

import json

import pytest

import zarrkit
from zarrkit.errors import MetadataError


def _rectilinear(shape, chunk_shapes):
    return {"zarr_format": 3, "node_type": "array", "shape": shape, "data_type": "uint8",
            "chunk_grid": {"name": "rectilinear",
                           "configuration": {"kind": "inline", "chunk_shapes": chunk_shapes}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": [{"name": "bytes"}]}


@pytest.mark.xfail(strict=True, reason="an empty edge list for a 0-length dimension reaches "
                   "RectilinearDim.max_length: numpy's 'zero-size array to reduction operation "
                   "maximum' (a bare ValueError naming no key) instead of MetadataError or an array")
def test_an_empty_edge_list_is_read_or_refused_by_name():
    store = zarrkit.MemoryStore()
    store["zarr.json"] = json.dumps(_rectilinear([0], [[]])).encode()
    try:
        z = zarrkit.open_array(store, mode="r")
    except MetadataError as exc:
        assert "zarr.json" in str(exc)
    else:
        assert z.shape == (0,) and z[:].size == 0


@pytest.mark.parametrize("chunk_shapes", [
    [[[4, 0]]], [[[-1, 4]]], [[[1.0, 4]]], [[[True, 4]]], [[[[1, 2], 2]]], [[[1, 2, 3]]],
    ["4"], [None], [0], [{"a": 1}], [[1, "x"]], [[]],
])
def test_malformed_edge_lists_are_refused_by_name(chunk_shapes):
    # held: each is a MetadataError naming zarr.json (the empty list only for a non-empty shape)
    store = zarrkit.MemoryStore()
    store["zarr.json"] = json.dumps(_rectilinear([4], chunk_shapes)).encode()
    with pytest.raises(MetadataError, match="zarr.json"):
        zarrkit.open_array(store, mode="r")


@pytest.mark.xfail(strict=True, reason="resize accepts a length beyond int64 and writes a document "
                   "the reader refuses ('shape: expected non-negative integers'): the array no "
                   "longer opens")
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_a_resize_never_writes_a_shape_that_cannot_be_read(zarr_format):
    store = zarrkit.MemoryStore()
    z = zarrkit.create_array(store, shape=(5,), chunks=(5,), dtype="f8", fill_value=0,
                             zarr_format=zarr_format)
    try:
        z.resize((2**63,))
    except (ValueError, OverflowError):
        pass  # refused: fine
    zarrkit.open_array(store, mode="r")  # whatever happened, the array still opens


def test_a_resize_to_the_largest_int64_length_reopens():
    store = zarrkit.MemoryStore()
    z = zarrkit.create_array(store, shape=(5,), chunks=(5,), dtype="f8", fill_value=0)
    z.resize((2**63 - 1,))
    assert zarrkit.open_array(store, mode="r").shape == (2**63 - 1,)
