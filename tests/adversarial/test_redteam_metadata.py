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
