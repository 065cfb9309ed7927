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


def test_an_empty_edge_list_of_a_zero_length_dimension_grows():
    # the spec: the edges must sum to at least the length -- none sum to 0; growing adds one
    store = zarrkit.MemoryStore()
    store["zarr.json"] = json.dumps(_rectilinear([0, 4], [[], [2, 2]])).encode()
    z = zarrkit.open_array(store, mode="r+")
    assert z.shape == (0, 4) and z[:].shape == (0, 4) and z.nchunks == 0
    z.resize((3, 4))
    z[:] = 1
    assert zarrkit.open_array(store, mode="r")[:].tolist() == [[1] * 4] * 3


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("shape", [(2**63,), (1,) * 65])
def test_a_shape_the_reader_refuses_is_refused_at_creation(zarr_format, shape):
    store = zarrkit.MemoryStore()
    with pytest.raises(ValueError, match="shape: expected"):
        zarrkit.create_array(store, shape=shape, chunks=(1,) * len(shape), dtype="u1",
                             zarr_format=zarr_format)
    assert not list(store)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_an_append_beyond_the_readable_length_is_refused_before_writing(zarr_format):
    import numpy as np

    store = zarrkit.MemoryStore()
    z = zarrkit.create_array(store, shape=(2**63 - 1,), chunks=(5,), dtype="f8", fill_value=0,
                             zarr_format=zarr_format)
    before = dict(store)
    with pytest.raises(ValueError, match="appended shape: expected lengths of at most"):
        z.append(np.ones(2))
    assert dict(store) == before
    assert zarrkit.open_array(store, mode="r").shape == (2**63 - 1,)


def test_rows_out_of_sight_beyond_the_readable_length_are_refused():
    import numpy as np

    from zarrkit.core.staged import write_out_of_sight

    store = zarrkit.MemoryStore()
    z = zarrkit.create_array(store, shape=(2**63 - 1,), chunks=(5,), dtype="f8", fill_value=0)
    before = dict(store)
    with pytest.raises(ValueError, match="new_shape: expected lengths of at most"):
        write_out_of_sight(z, (2**63 + 1,), (slice(2**63 - 1, 2**63 + 1),), np.ones(2))
    assert dict(store) == before
