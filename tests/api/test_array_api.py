"""Behaviour of Array and the creation/open functions beyond what the tutorial shows."""

import pickle

import numcodecs
import numpy as np
import pytest

import zarrkit
from zarrkit.errors import (
    ArrayNotFoundError,
    ChunkDecodeError,
    ContainsArrayError,
    ContainsGroupError,
    MetadataError,
    NodeNotFoundError,
    ReadOnlyError,
    ShapeMismatchError,
)


def test_default_store_and_compressor():
    z = zarrkit.zeros((10, 10), chunks=(5, 5), dtype="i4")
    assert isinstance(z.store, dict)
    assert isinstance(z.compressor, numcodecs.Blosc)
    assert z.compressor.get_config()["cname"] == "lz4"
    assert sorted(z.store) == [".zarray", ".zattrs"]
    assert z.nchunks == 4 and z.nchunks_initialized == 0


def test_chunk_guess_matches_seed():
    assert zarrkit.zeros((10000, 10000), dtype="i4").chunks == (313, 313)
    assert zarrkit.zeros((10000, 10000), chunks=(100, None), dtype="i4").chunks == (100, 10000)
    assert zarrkit.zeros((10000, 10000), chunks=(None, -1), dtype="i4").chunks == (10000, 10000)


def test_write_read_and_missing_chunks_are_fill():
    z = zarrkit.full((7, 9), fill_value=-1, chunks=(3, 4), dtype="i2")
    z[1:4, 2:7] = 5
    expected = np.full((7, 9), -1, dtype="i2")
    expected[1:4, 2:7] = 5
    np.testing.assert_array_equal(z[:], expected)
    assert z.nchunks_initialized == 4


def test_order_f_round_trip_and_layout():
    a = np.arange(24, dtype="<i4").reshape(4, 6)
    z = zarrkit.array(a, chunks=(4, 6), order="F", compressor=None)
    np.testing.assert_array_equal(z[:], a)
    raw = z.store["0.0"]
    assert bytes(raw) == np.asfortranarray(a).tobytes(order="F")


def test_scalar_results_and_zero_d():
    z = zarrkit.array(np.arange(10), chunks=3)
    assert isinstance(z[5], np.integer) and z[5] == 5
    z0 = zarrkit.array(np.float32(3.5))
    assert z0.shape == () and z0[()] == np.float32(3.5)
    assert z0[...].shape == ()
    z0[...] = 1.5
    assert z0[()] == 1.5


def test_value_shape_mismatch_writes_nothing():
    z = zarrkit.zeros((10,), chunks=5)
    with pytest.raises(ShapeMismatchError):
        z[:] = np.arange(3)
    assert z.nchunks_initialized == 0


def test_read_only_modes(tmp_path):
    path = str(tmp_path / "a.zarr")
    zarrkit.open_array(path, mode="w", shape=(4,), chunks=2)[:] = 1
    r = zarrkit.open_array(path, mode="r")
    with pytest.raises(ReadOnlyError):
        r[:] = 2
    with pytest.raises(PermissionError):
        r.attrs["x"] = 1
    with pytest.raises(ReadOnlyError):
        r.resize(10)
    np.testing.assert_array_equal(zarrkit.open_array(path, mode="r+")[:], [1, 1, 1, 1])


def test_open_modes(tmp_path):
    path = str(tmp_path / "b.zarr")
    with pytest.raises(ArrayNotFoundError):
        zarrkit.open_array(path, mode="r")
    with pytest.raises(FileNotFoundError):
        zarrkit.open_array(path, mode="r+")
    z = zarrkit.open_array(path, mode="w-", shape=(4,), chunks=2)
    z[:] = 3
    with pytest.raises(ContainsArrayError):
        zarrkit.open_array(path, mode="w-", shape=(4,))
    assert zarrkit.open_array(path, mode="a")[0] == 3
    z2 = zarrkit.open_array(path, mode="w", shape=(2,), chunks=2)
    assert z2[0] == 0 and z2.shape == (2,)
    zarrkit.open_group(str(tmp_path / "g"), mode="w")
    with pytest.raises(ContainsGroupError):
        zarrkit.open_array(str(tmp_path / "g"), mode="a", shape=(3,))
    with pytest.raises(ValueError, match="mode"):
        zarrkit.open_array(path, mode="q")


def test_open_detects_node(tmp_path):
    zarrkit.open_array(str(tmp_path / "a"), mode="w", shape=(3,))
    zarrkit.open_group(str(tmp_path / "g"), mode="w")
    assert isinstance(zarrkit.open(str(tmp_path / "a"), mode="r"), zarrkit.Array)
    assert isinstance(zarrkit.open(str(tmp_path / "g"), mode="r"), zarrkit.Group)
    with pytest.raises(NodeNotFoundError):
        zarrkit.open(str(tmp_path / "nothing"), mode="r")


def test_bad_creation_arguments_leave_store_untouched(tmp_path):
    path = str(tmp_path / "c.zarr")
    z = zarrkit.open_array(path, mode="w", shape=(4,), chunks=2)
    z[:] = 7
    with pytest.raises(ValueError):
        zarrkit.open_array(path, mode="w", shape=(4,), chunks=(0,))
    with pytest.raises(TypeError):
        zarrkit.open_array(path, mode="w", shape=(4,), dtype="not-a-dtype")
    with pytest.raises(ValueError):
        zarrkit.open_array(path, mode="w", shape=(4,), dtype="u1", fill_value=300)
    np.testing.assert_array_equal(zarrkit.open_array(path, mode="r")[:], [7, 7, 7, 7])


def test_corrupt_chunk_names_key():
    z = zarrkit.zeros((10,), chunks=5, dtype="i4")
    z[:] = 1
    z.store["1"] = b"garbage"
    with pytest.raises(ChunkDecodeError) as info:
        z[:]
    assert info.value.key == "1"
    np.testing.assert_array_equal(z[:5], 1)


def test_malformed_metadata_names_file():
    store = {}
    zarrkit.zeros((4,), store=store)
    store[".zarray"] = b"{not json"
    with pytest.raises(MetadataError, match=r"\.zarray"):
        zarrkit.Array(store)


def test_resize_deletes_outside_chunks_and_append():
    z = zarrkit.zeros((10, 10), chunks=(5, 5), dtype="i4")
    z[:] = 1
    z.resize(5, 10)
    assert z.nchunks_initialized == 2
    assert sorted(k for k in z.store if not k.startswith(".")) == ["0.0", "0.1"]
    z.resize((10, 10))
    assert z[9, 9] == 0
    new = z.append(np.full((3, 10), 2, dtype="i4"))
    assert new == (13, 10) and z[12, 0] == 2
    with pytest.raises(ShapeMismatchError):
        z.append(np.zeros((3, 9)))


def test_views_and_astype():
    a = zarrkit.array(np.arange(10000, dtype="u2"), chunks=1000)
    v = a.view(dtype="u1", shape=20000, chunks=2000)
    np.testing.assert_array_equal(v[:], a[:].view("u1"))
    with pytest.raises(PermissionError, match="not permitted for views"):
        v.resize(5)
    f = zarrkit.array(np.linspace(0, 10, 11), chunks=4)
    i = f.astype("i4")
    np.testing.assert_array_equal(i[:], np.arange(11, dtype="i4"))
    with pytest.raises(ReadOnlyError):
        i[:] = 0


def test_write_empty_chunks_false_deletes_fill_chunks():
    z = zarrkit.zeros((10,), chunks=5, write_empty_chunks=False)
    z[:] = 1
    assert z.nchunks_initialized == 2
    z[:5] = 0
    assert z.nchunks_initialized == 1
    np.testing.assert_array_equal(z[:], [0] * 5 + [1] * 5)
    n = zarrkit.full((4,), fill_value=np.nan, chunks=2, write_empty_chunks=False)
    n[:] = np.nan
    assert n.nchunks_initialized == 0


def test_object_arrays():
    z = zarrkit.empty(5, dtype=object, object_codec=numcodecs.VLenUTF8(), chunks=2)
    z[:] = ["a", "bb", "", "dddd", "é"]
    assert list(z[:]) == ["a", "bb", "", "dddd", "é"]
    s = zarrkit.array(["x", "yy"], dtype=str)
    assert list(s[:]) == ["x", "yy"]
    with pytest.raises(ValueError, match="object_codec"):
        zarrkit.zeros(3, dtype=object)


def test_structured_fields():
    dt = np.dtype([("a", "<i4"), ("b", "<f8")])
    data = np.array([(1, 1.5), (2, 2.5), (3, 3.5)], dtype=dt)
    z = zarrkit.array(data, chunks=2)
    np.testing.assert_array_equal(z["a"], [1, 2, 3])
    z["b"] = 0.0
    np.testing.assert_array_equal(z[:]["a"], [1, 2, 3])
    np.testing.assert_array_equal(z[:]["b"], [0, 0, 0])


def test_pickle_and_digest(tmp_path):
    z = zarrkit.open_array(str(tmp_path / "p"), mode="w", shape=(6,), chunks=3, dtype="i8")
    z[:] = np.arange(6)
    z2 = pickle.loads(pickle.dumps(z))
    np.testing.assert_array_equal(z2[:], np.arange(6))
    assert z2.hexdigest() == z.hexdigest()
    m = zarrkit.array(np.arange(6), chunks=3)
    m2 = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(m2[:], np.arange(6))
    z[0] = 10
    assert z2.hexdigest() == z.hexdigest()
    assert m.hexdigest() != z.hexdigest()


def test_iteration_and_len():
    z = zarrkit.array(np.arange(12).reshape(6, 2), chunks=(4, 2))
    assert len(z) == 6
    rows = list(z)
    np.testing.assert_array_equal(np.stack(rows), np.arange(12).reshape(6, 2))
    assert [int(x[0]) for x in z.islice(2, 4)] == [4, 6]
    np.testing.assert_array_equal(np.asarray(z), np.arange(12).reshape(6, 2))


def test_h5py_compression_kwargs():
    g = zarrkit.group()
    z = g.create_dataset("x", shape=(10,), compression="gzip", compression_opts=1)
    assert isinstance(z.compressor, numcodecs.Zlib) and z.compressor.level == 1
    z = g.create_dataset("y", shape=(10,), compression=None)
    assert z.compressor is None
    with pytest.raises(TypeError, match="bogus"):
        zarrkit.zeros(3, bogus=1)


def test_nested_directory_store_uses_slash_keys(tmp_path):
    store = zarrkit.NestedDirectoryStore(str(tmp_path / "n"))
    z = zarrkit.zeros((4, 4), chunks=(2, 2), store=store)
    z[:] = 1
    assert (tmp_path / "n" / "1" / "1").is_file()
    assert zarrkit.Array(store).metadata.dimension_separator == "/"


def test_repr_is_zarr_python_2s():
    # zarr-python 2.2+'s repr, which reads nothing; the stored sizes are in ``info``
    z = zarrkit.zeros((10000, 10000), chunks=(1000, 1000), dtype="i4", zarr_format=2)
    assert repr(z) == "<zarrkit.Array (10000, 10000) int32>"
    assert "Chunks initialized : 0/100" in str(z.info)


def test_config_threads_give_identical_results():
    a = np.random.default_rng(0).random((50, 60))
    with zarrkit.config.set(threads=1):
        z1 = zarrkit.array(a, chunks=(7, 9))
        r1 = z1[3:47:2, ::-3]
    with zarrkit.config.set(threads=4):
        z4 = zarrkit.array(a, chunks=(7, 9))
        r4 = z4[3:47:2, ::-3]
    np.testing.assert_array_equal(r1, r4)
    assert {k: bytes(v) for k, v in z1.store.items()} == {k: bytes(v) for k, v in z4.store.items()}
