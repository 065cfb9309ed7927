"""Rectilinear chunk grids, both directions with zarr-python 3.4 (which enables them behind
``array.rectilinear_chunks``): the same documents, the same chunk bytes, the same data, and the
same metadata after resize and append."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import zarrkit
from zarrkit.api.conversion import v3_to_v2_metadata
from zarrkit.cli import main as cli_main
from zarrkit.errors import MetadataError

zarr = pytest.importorskip("zarr")


@pytest.fixture(autouse=True)
def rectilinear_enabled():
    with zarr.config.set({"array.rectilinear_chunks": True}):
        yield


def doc(path):
    with open(os.path.join(path, "zarr.json")) as f:
        return json.load(f)


def chunk_files(path):
    """Every stored chunk (or shard) of an array directory: relative path → bytes."""
    out = {}
    for root, _, files in os.walk(path):
        for name in files:
            if name != "zarr.json":
                full = os.path.join(root, name)
                with open(full, "rb") as f:
                    out[os.path.relpath(full, path)] = f.read()
    return out


def data(shape, dtype="i4"):
    return (np.arange(int(np.prod(shape))) * 7 - 100).astype(dtype).reshape(shape)


# (shape, chunks) as both libraries take them: explicit edges, runs zarr-python compresses, an
# int (regular) dimension beside edge lists, 1-d and 3-d
GRIDS = [
    ((30, 23), [[10, 10, 10], [5, 5, 13]]),
    ((30, 23), [[10, 20], [23]]),
    ((6, 6), [4, [1, 2, 3]]),
    ((17,), [[1, 1, 1, 2, 2, 10]]),
    ((7, 9, 4), [[3, 4], [2, 2, 2, 3], [1, 3]]),
]


@pytest.mark.parametrize("shape,chunks", GRIDS)
@pytest.mark.parametrize("compressors", [None, [{"name": "zstd", "configuration": {"level": 3, "checksum": True}}]])
def test_zarrkit_writes_what_zarr_python_writes(tmp_path, shape, chunks, compressors):
    """The same creation call gives the same zarr.json and the same chunk bytes."""
    x = data(shape)
    kw = {"compressors": compressors}
    ours = zarrkit.create_array(str(tmp_path / "ours.zarr"), shape=shape, chunks=chunks, dtype="i4", **kw)
    ours[...] = x
    theirs = zarr.create_array(str(tmp_path / "theirs.zarr"), shape=shape, chunks=chunks, dtype="i4", **kw)
    theirs[...] = x
    assert doc(tmp_path / "ours.zarr") == doc(tmp_path / "theirs.zarr")
    assert chunk_files(tmp_path / "ours.zarr") == chunk_files(tmp_path / "theirs.zarr")
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "ours.zarr"))[...], x)
    np.testing.assert_array_equal(zarrkit.open_array(str(tmp_path / "theirs.zarr"))[...], x)


@pytest.mark.parametrize("shape,chunks", GRIDS)
def test_selections_of_zarr_python_data(tmp_path, shape, chunks):
    x = data(shape, "f8")
    zarr.create_array(str(tmp_path / "a.zarr"), shape=shape, chunks=chunks, dtype="f8")[...] = x
    z = zarrkit.open_array(str(tmp_path / "a.zarr"), mode="r")
    sel = tuple(slice(1, None, 2) for _ in shape)
    np.testing.assert_array_equal(z[sel], x[sel])
    idx = tuple(np.array([0, n - 1, n // 2]) for n in shape)
    np.testing.assert_array_equal(z.vindex[idx], x[idx])
    np.testing.assert_array_equal(z.oindex[idx], x[np.ix_(*idx)])
    assert z.cdata_shape == zarr.open_array(str(tmp_path / "a.zarr")).cdata_shape
    assert z.nchunks == zarr.open_array(str(tmp_path / "a.zarr")).nchunks


def test_chunks_are_the_edge_lengths_inside_the_array(tmp_path):
    """``chunks`` gives each dimension's chunk lengths as zarr-python's ``read_chunk_sizes``
    does (and dask takes them): the parts inside the array."""
    z = zarrkit.create_array(str(tmp_path / "a.zarr"), shape=(6, 6), chunks=[4, [1, 2, 3]], dtype="i4")
    theirs = zarr.open_array(str(tmp_path / "a.zarr"))
    assert z.chunks == theirs.read_chunk_sizes == ((4, 2), (1, 2, 3))
    for block in range(3):
        np.testing.assert_array_equal(z.blocks[:, block], np.zeros((6, block + 1), "i4"))


def test_edges_past_the_array_from_other_writers(tmp_path):
    """The spec allows the edges to overflow the array by several chunks: ``[4, 4, 4]`` over
    6 elements has two chunks in the array (zarr-python itself refuses to create it)."""
    path = tmp_path / "a.zarr"
    zarrkit.create_array(str(path), shape=(6, 5), chunks=(4, 5), dtype="i4", compressors=None)
    d = doc(path)
    d["chunk_grid"] = {"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": [[4, 4, 4], 5]}}
    (path / "zarr.json").write_text(json.dumps(d))
    z = zarrkit.open_array(str(path), mode="r+")
    assert z.cdata_shape == (2, 1)
    z[...] = data((6, 5))
    np.testing.assert_array_equal(zarr.open_array(str(path))[...], data((6, 5)))
    assert sorted(chunk_files(path)) == [os.path.join("c", "0", "0"), os.path.join("c", "1", "0")]


@pytest.mark.parametrize("ops", [
    [("resize", (40, 23))],
    [("resize", (30, 25))],
    [("resize", (15, 23)), ("resize", (25, 23))],
    [("append", 0, 4), ("append", 1, 3), ("append", 1, 3)],
])
def test_resize_and_append_as_zarr_python(tmp_path, ops):
    x = data((30, 23))
    arrays = []
    for lib, name in ((zarrkit, "ours"), (zarr, "theirs")):
        a = lib.create_array(str(tmp_path / f"{name}.zarr"), shape=(30, 23), chunks=[[10, 10, 10], [5, 5, 13]],
                             dtype="i4", fill_value=-1)
        a[...] = x
        for op in ops:
            if op[0] == "resize":
                a.resize(op[1])
            else:
                _, axis, n = op
                shape = list(a.shape)
                shape[axis] = n
                a.append(np.full(shape, 9, "i4"), axis=axis)
        arrays.append(a)
    assert doc(tmp_path / "ours.zarr")["chunk_grid"] == doc(tmp_path / "theirs.zarr")["chunk_grid"]
    assert doc(tmp_path / "ours.zarr")["shape"] == doc(tmp_path / "theirs.zarr")["shape"]
    ours, theirs = arrays
    np.testing.assert_array_equal(zarrkit.open_array(str(tmp_path / "theirs.zarr"))[...], theirs[...])
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "ours.zarr"))[...], ours[...])


def test_shrink_deletes_chunks_wholly_outside(tmp_path):
    a = zarrkit.create_array(str(tmp_path / "a.zarr"), shape=(30, 23), chunks=[[10, 10, 10], [5, 5, 13]], dtype="i4")
    a[...] = 1
    a.resize(12, 7)
    assert sorted(k for k in chunk_files(tmp_path / "a.zarr")) == sorted(
        os.path.join("c", str(i), str(j)) for i in range(2) for j in range(2)
    )
    # the grid keeps its edges: growing again within them declares no new chunk; what the
    # kept chunks held outside the shrunk shape reads the fill value (zarr-python shows it)
    a.resize(30, 23)
    assert doc(tmp_path / "a.zarr")["chunk_grid"]["configuration"]["chunk_shapes"] == [[[10, 3]], [[5, 2], 13]]
    assert int((a[...] == 1).sum()) == 12 * 7 and (a[:12, :7] == 1).all()


@pytest.mark.parametrize("shards", [[[10, 10, 10], [10, 10, 5]], [[10, 20], 25], [[20, 10], [5, 20]], (10, 15)])
def test_sharded_rectilinear_both_ways(tmp_path, shards):
    """A rectilinear grid of shards over regular inner chunks (and a regular one): the same
    documents and shards (inner chunks in Morton order) as zarr-python writes, read back both
    ways, partial writes included."""
    x = data((30, 25))
    # zstd: gzip headers carry the time of writing, which may differ by a second
    kw = {"chunks": (5, 5), "shards": shards, "dtype": "i4", "compressors": [{"name": "zstd", "configuration": {"level": 1, "checksum": False}}]}
    ours = zarrkit.create_array(str(tmp_path / "ours.zarr"), shape=(30, 25), **kw)
    theirs = zarr.create_array(str(tmp_path / "theirs.zarr"), shape=(30, 25), **kw)
    for a in (ours, theirs):
        a[...] = x
    assert doc(tmp_path / "ours.zarr") == doc(tmp_path / "theirs.zarr")
    assert chunk_files(tmp_path / "ours.zarr") == chunk_files(tmp_path / "theirs.zarr")
    # a partial write rewrites shards (the order of the chunks inside may differ)
    for a in (ours, theirs):
        a[3:17, 2:23:3] = -5
    x[3:17, 2:23:3] = -5
    np.testing.assert_array_equal(zarrkit.open_array(str(tmp_path / "theirs.zarr"))[...], x)
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "ours.zarr"))[...], x)
    assert ours.chunks == (5, 5)
    assert ours.nshards == len(chunk_files(tmp_path / "ours.zarr"))
    assert ours.nchunks_initialized == 30


def test_sharded_resize_grows_by_whole_inner_chunks(tmp_path):
    a = zarrkit.create_array(str(tmp_path / "a.zarr"), shape=(30, 25), chunks=(5, 5),
                             shards=[[10, 10, 10], [10, 10, 5]], dtype="i4")
    a[...] = 3
    a.resize(30, 38)  # 13 more columns: one more shard of 15 (whole inner chunks)
    assert doc(tmp_path / "a.zarr")["chunk_grid"]["configuration"]["chunk_shapes"] == [[[10, 3]], [[10, 2], 5, 15]]
    a[:, 25:] = 4
    expected = np.full((30, 38), 3, "i4")
    expected[:, 25:] = 4
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "a.zarr"))[...], expected)


def test_consolidated_metadata_and_groups(tmp_path):
    root = zarr.open_group(str(tmp_path / "g.zarr"), mode="w")
    root.create_array("r", shape=(12, 7), chunks=[[2, 10], [3, 4]], dtype="u2")[...] = data((12, 7), "u2")
    zarr.consolidate_metadata(str(tmp_path / "g.zarr"))
    g = zarrkit.open_consolidated(str(tmp_path / "g.zarr"))
    np.testing.assert_array_equal(g["r"][...], data((12, 7), "u2"))
    assert g["r"].chunks == ((2, 10), (3, 4))
    zarrkit.consolidate_metadata(str(tmp_path / "g.zarr"))
    theirs = zarr.open_consolidated(str(tmp_path / "g.zarr"))
    np.testing.assert_array_equal(theirs["r"][...], data((12, 7), "u2"))


def test_info_tree_and_command_line(tmp_path, capsys):
    g = zarrkit.open_group(str(tmp_path / "g.zarr"), mode="w", zarr_format=3)
    a = g.create_array("r", shape=(12, 7), chunks=[[2, 10], [3, 4]], dtype="u2")
    a[...] = data((12, 7), "u2")
    assert "Chunk shape        : <variable>" in str(a.info)  # as zarr-python shows a rectilinear grid
    assert a.write_chunk_sizes == ((2, 10), (3, 4))
    assert "r" in str(g.tree())
    capsys.readouterr()
    assert cli_main(["info", str(tmp_path / "g.zarr"), "--path", "r", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["chunks"] == [[2, 10], [3, 4]]
    assert cli_main(["verify", str(tmp_path / "g.zarr")]) == 0
    assert cli_main(["cp", str(tmp_path / "g.zarr"), str(tmp_path / "copy.zarr")]) == 0
    copy = zarr.open_array(str(tmp_path / "copy.zarr"), path="r")
    np.testing.assert_array_equal(copy[...], data((12, 7), "u2"))
    assert doc(tmp_path / "copy.zarr" / "r")["chunk_grid"] == doc(tmp_path / "g.zarr" / "r")["chunk_grid"]
    # a missing chunk is reported by its key on the rectilinear grid
    os.remove(tmp_path / "g.zarr" / "r" / "c" / "1" / "1")
    capsys.readouterr()
    cli_main(["verify", str(tmp_path / "g.zarr")])
    assert "missing: r/c/1/1" in capsys.readouterr().out


# -- bad input: typed errors naming the key or argument, nothing written ---------------------


@pytest.mark.parametrize("chunk_shapes,message", [
    ([[10, 10], [5, 5, 13]], "sum to 20, less than the array's length 30"),
    ([[[10, 3]], [5, 5, 12]], "sum to 22, less than the array's length 23"),
    ([[10, 0, 20], 5], "positive integers"),
    ([[[10, 3, 1]], 5], "[length, count] pairs"),
    ([[10, 10, 10]], "one per dimension"),
    ([[10, 10, 10], "5"], "positive integer or a list"),
    ([[10, 10, 10.5], 5], "positive integers"),
])
def test_bad_grid_documents(tmp_path, chunk_shapes, message):
    path = tmp_path / "a.zarr"
    zarrkit.create_array(str(path), shape=(30, 23), chunks=(10, 5), dtype="i4")
    d = doc(path)
    d["chunk_grid"] = {"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": chunk_shapes}}
    (path / "zarr.json").write_text(json.dumps(d))
    with pytest.raises(MetadataError) as info:
        zarrkit.open_array(str(path), mode="r")
    assert message in str(info.value)
    assert "zarr.json" in str(info.value)


def test_unknown_grid_and_kind(tmp_path):
    path = tmp_path / "a.zarr"
    zarrkit.create_array(str(path), shape=(4,), chunks=(2,), dtype="i4")
    d = doc(path)
    for grid in ({"name": "irregular", "configuration": {}},
                 {"name": "rectilinear", "configuration": {"kind": "file", "chunk_shapes": [[2, 2]]}}):
        d["chunk_grid"] = grid
        (path / "zarr.json").write_text(json.dumps(d))
        with pytest.raises(MetadataError, match="chunk_grid"):
            zarrkit.open_array(str(path))


@pytest.mark.parametrize("kwargs,error,message", [
    ({"chunks": [[10, 10], [5, 5, 13]]}, ValueError, "chunks[0]: the edge lengths [10, 10] sum to 20"),
    ({"chunks": [[10, 10, 10], [5, 0, 18]]}, ValueError, "chunks[1]: edge lengths must be positive"),
    ({"chunks": [[10, 10, 10], [5, [5, 2]]]}, TypeError, "chunks[1]: edge lengths must be integers"),
    ({"chunks": [[10, 10, 10]]}, ValueError, "1 entries for an array of 2 dimension(s)"),
    ({"chunks": (5, 5), "shards": [[10, 10, 10], [10, 13]]}, ValueError, "multiple of the chunk length 5"),
    ({"chunks": [[10, 20], 23], "shards": [[10, 20], 23]}, ValueError, "regular inner chunks"),
    ({"chunks": [[10, 10, 10], 5], "zarr_format": 2}, ValueError, "rectilinear chunks need zarr_format=3"),
])
def test_bad_creation_arguments_write_nothing(tmp_path, kwargs, error, message):
    path = tmp_path / "a.zarr"
    with pytest.raises(error) as info:
        zarrkit.create_array(str(path), shape=(30, 23), dtype="i4", **kwargs)
    assert message in str(info.value)
    assert not path.exists() or not any(path.iterdir())


def test_rectilinear_arrays_have_no_v2_form(tmp_path):
    path = tmp_path / "a.zarr"
    zarrkit.create_array(str(path), shape=(30, 23), chunks=[[10, 20], 23], dtype="i4",
                         chunk_key_encoding={"name": "v2", "configuration": {"separator": "."}})
    before = doc(path)
    with pytest.raises(MetadataError, match="rectilinear"):
        v3_to_v2_metadata(zarrkit.open_array(str(path)).metadata)
    assert doc(path) == before


def test_huge_declared_grids_cost_nothing_until_read(tmp_path, capsys):
    """A document may declare 2**40 chunks in a few bytes: opening, reporting and reading one
    element stay cheap (the edges are kept as runs, never expanded)."""
    path = tmp_path / "a.zarr"
    zarrkit.create_array(str(path), shape=(4,), chunks=(2,), dtype="u1")
    d = doc(path)
    d["shape"] = [2**40]
    d["chunk_grid"] = {"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": [[[1, 2**40 - 3], 3]]}}
    (path / "zarr.json").write_text(json.dumps(d))
    z = zarrkit.open_array(str(path), mode="r+")
    assert z.cdata_shape == (2**40 - 2,) and z.nchunks == 2**40 - 2
    assert "<variable>" in str(z.info) and z.shape == (2**40,)
    z[2**40 - 1] = 7
    assert z[2**40 - 2 : 2**40].tolist() == [0, 7]
    assert sorted(chunk_files(path)) == [os.path.join("c", str(2**40 - 3))]
    assert cli_main(["info", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["chunks"] == [[[1, 2**40 - 3], 3]]
