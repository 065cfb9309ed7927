"""Virtual datasets read with zarrkit: an HDF5 file (h5py) described by kerchunk references
(``kerchunk.hdf.SingleHdf5ToZarr``) opened as ``reference://`` with storage options, and by a
VirtualiZarr ``ManifestStore`` (its HDF5 parser, an obstore registry) opened through the
zarr-python store adapter; both read back the values h5py reads, bit for bit."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

h5py = pytest.importorskip("h5py")
kerchunk_hdf = pytest.importorskip("kerchunk.hdf")
obstore = pytest.importorskip("obstore")
pytest.importorskip("virtualizarr")

from obspec_utils.registry import ObjectStoreRegistry
from virtualizarr.parsers import HDFParser

import zarrkit
from zarrkit.errors import ReadOnlyError, StoreOperationNotSupported
from zarrkit.storage import FsspecStore
from zarrkit.storage.zarr_store import ZarrStoreAdapter

#: the datasets of the file: name -> (values, h5py.create_dataset options)
_RNG = np.random.default_rng(7)
DATASETS = {
    "gzip_i4": (_RNG.integers(-500, 500, (10, 12)).astype("<i4"),
                {"chunks": (4, 5), "compression": "gzip"}),
    "gzip_f4_3d": (_RNG.random((6, 7, 8)).astype("<f4"),
                   {"chunks": (3, 3, 3), "compression": "gzip", "compression_opts": 6}),
    "contiguous_f8": (_RNG.standard_normal(50), {}),
    "chunked_u2": (np.arange(30, dtype="<u2") * 3, {"chunks": (7,)}),
    "shuffled_big_endian_i8": (np.arange(-10, 10, dtype=">i8") ** 3,
                               {"chunks": (6,), "shuffle": True, "compression": "gzip"}),
    "group/contiguous_u1": (np.arange(24, dtype="u1").reshape(4, 6), {}),
}


@pytest.fixture(scope="module")
def h5_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("virtual") / "data.h5"
    with h5py.File(path, "w") as f:
        f.attrs["title"] = "virtual"
        for name, (values, options) in DATASETS.items():
            f.create_dataset(name, data=values, **options)
        f["gzip_i4"].attrs["units"] = "m"
    return path


def _check_against_h5py(group, path):
    with h5py.File(path, "r") as f:
        for name in DATASETS:
            want = f[name][...]
            got = group[name][...]
            assert got.shape == want.shape, name
            # the same values; the same bytes once in the file's byte order (v3 arrays read
            # big-endian data into native order)
            np.testing.assert_array_equal(got, want, err_msg=name)
            assert got.astype(want.dtype).tobytes() == want.tobytes(), name
            # a selection across chunk boundaries
            sel = tuple(slice(1, max(n - 1, 2)) for n in want.shape)
            np.testing.assert_array_equal(group[name][sel], want[sel], err_msg=name)


def test_kerchunk_references_open_as_reference_url(h5_file):
    refs = kerchunk_hdf.SingleHdf5ToZarr(str(h5_file), inline_threshold=0).translate()
    assert "gzip_i4/0.0" in refs["refs"]  # chunks point into the file, none are copied
    g = zarrkit.open_group(
        "reference://", mode="r",
        storage_options={"fo": refs, "remote_protocol": "file"},
    )
    assert isinstance(g.store, FsspecStore)
    assert sorted(g.keys()) == sorted({n.split("/")[0] for n in DATASETS})
    assert g["gzip_i4"].attrs["units"] == "m"
    _check_against_h5py(g, h5_file)
    with pytest.raises(ReadOnlyError):
        g["gzip_i4"][0, 0] = 1


def _manifest_store(path):
    registry = ObjectStoreRegistry({"file:///": obstore.store.LocalStore("/")})
    return HDFParser()(f"file://{path}", registry)


def test_virtualizarr_manifest_store_through_the_adapter(h5_file):
    g = zarrkit.open_group(_manifest_store(h5_file), mode="r")
    assert isinstance(g.store, ZarrStoreAdapter)
    assert repr(g.store) == "ZarrStoreAdapter(ManifestStore)"
    assert g.attrs["title"] == "virtual"
    assert g["gzip_i4"].attrs["units"] == "m"
    assert sorted(g["group"].keys()) == ["contiguous_u1"]
    _check_against_h5py(g, h5_file)
    # the array pickles with its store (the obstore registry), as for dask workers
    clone = pickle.loads(pickle.dumps(g["gzip_f4_3d"]))
    np.testing.assert_array_equal(clone[...], DATASETS["gzip_f4_3d"][0])


def test_manifest_store_refuses_writes_and_names_what_it_cannot_do(h5_file):
    g = zarrkit.open_group(_manifest_store(h5_file), mode="r")
    with pytest.raises(ReadOnlyError, match=r"ZarrStoreAdapter\(ManifestStore\) is read-only"):
        g.store.set("gzip_i4/c/0/0", b"x")
    with pytest.raises(ReadOnlyError):
        zarrkit.open_array(g.store, path="gzip_i4", mode="a")[0, 0] = 1
    # VirtualiZarr's store lists groups only: counting an array's chunks needs a listing
    with pytest.raises(StoreOperationNotSupported, match=r"listing of prefix 'gzip_i4/'"):
        _ = g["gzip_i4"].nchunks_initialized
    # it has no exists(): a read answers, and keys it refuses (a node's name) hold nothing
    assert "gzip_i4/zarr.json" in g.store and "gzip_i4/c/0/0" in g.store
    assert "gzip_i4" not in g.store and "group" not in g.store and "gzip_i4/c/9/9" not in g.store
    np.testing.assert_array_equal(g["gzip_i4"][...], DATASETS["gzip_i4"][0])
