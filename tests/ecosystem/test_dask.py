"""zarrkit and dask: reading and writing zarrkit arrays with the local schedulers and with a
``dask.distributed.LocalCluster`` of worker processes (arrays must pickle)."""

from __future__ import annotations

import pickle
import re
from pathlib import Path

import numpy as np
import pytest

da = pytest.importorskip("dask.array")

import zarrkit
import zarrkit.dask as zd
from zarrkit.storage import CountingStore, DirectoryStore

FORMATS = [2, 3]
META_NAMES = {".zarray", ".zgroup", ".zattrs", ".zmetadata", "zarr.json"}


def chunk_gets(store: CountingStore) -> list[str]:
    return [k for k, _ in store.keys_read if k.rsplit("/", 1)[-1] not in META_NAMES]


def data(shape=(40, 30)):
    return np.arange(np.prod(shape), dtype="f8").reshape(shape)


@pytest.mark.parametrize("zarr_format", FORMATS)
@pytest.mark.parametrize("scheduler", ["threads", "sync"])
def test_to_dask_reads_each_chunk_once(zarr_format, scheduler):
    store = CountingStore(zarrkit.MemoryStore())
    z = zarrkit.create_array(store, shape=(40, 30), chunks=(10, 15), dtype="f8", zarr_format=zarr_format)
    z[:] = data()
    store.reset()
    x = zd.to_dask(z)
    assert x.chunks == ((10,) * 4, (15, 15)) and x.dtype == z.dtype
    assert chunk_gets(store) == []  # building the graph reads nothing
    np.testing.assert_array_equal(x.compute(scheduler=scheduler), data())
    assert sorted(chunk_gets(store)) == sorted({k for k in chunk_gets(store)})  # no chunk twice
    assert len(chunk_gets(store)) == 8
    # multiples of the chunks, and a sub-selection
    y = zd.to_dask(z, chunks=(20, 30))
    assert y.chunks == ((20, 20), (30,))
    assert float(y[5:25].sum().compute(scheduler=scheduler)) == float(data()[5:25].sum())


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_from_array_directly(zarr_format):
    z = zarrkit.create_array({}, shape=(40, 30), chunks=(10, 15), dtype="f8", zarr_format=zarr_format)
    z[:] = data()
    x = da.from_array(z, chunks=z.chunks)
    assert x.chunks == ((10,) * 4, (15, 15))
    np.testing.assert_array_equal(x.compute(), data())
    # each block is the ndarray zarrkit returned: dask makes no copy of it
    block = x.blocks[1, 1].compute(scheduler="sync")
    assert isinstance(block, np.ndarray) and block.flags.owndata
    np.testing.assert_array_equal(block, data()[10:20, 15:30])


def test_tokenize_does_not_pickle_data(monkeypatch):
    from dask.base import tokenize

    z = zarrkit.zeros((1000, 1000), chunks=(100, 100), store=zarrkit.MemoryStore())
    z[:] = 1.0
    t1 = tokenize(z)
    assert t1 == tokenize(z)
    from zarrkit.core.array import Array

    def boom(self):
        raise AssertionError("tokenize pickled the array (and its in-memory store)")

    monkeypatch.setattr(Array, "__getstate__", boom)
    assert tokenize(z) == t1
    x = da.from_array(z, chunks=z.chunks)
    assert x.name.startswith("array-")
    other = zarrkit.zeros((1000, 1000), chunks=(100, 100), store=zarrkit.MemoryStore())
    assert tokenize(other) != t1


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_store_aligned_lock_free(zarr_format, tmp_path):
    z = zarrkit.create_array(str(tmp_path / "a.zarr"), shape=(40, 30), chunks=(10, 15), dtype="f8",
                             zarr_format=zarr_format)
    x = da.from_array(data(), chunks=(20, 15))  # multiples of the chunks
    zd.store(x, z)
    np.testing.assert_array_equal(z[:], data())
    # last block may be partial, region offsets must keep alignment
    z2 = zarrkit.create_array({}, shape=(45, 30), chunks=(10, 15), dtype="f8", zarr_format=zarr_format)
    zd.store(da.from_array(data((35, 30)), chunks=(10, 15)), z2, region=(slice(10, 45),))
    np.testing.assert_array_equal(z2[10:], data((35, 30)))
    assert (z2[:10] == 0).all()


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_store_unaligned_regrouped(zarr_format):
    """Blocks cutting chunks are regrouped so each chunk is written by one task; with a
    synchronizer too (it is then not needed)."""
    z = zarrkit.create_array({}, shape=(40, 30), chunks=(10, 15), dtype="f8", zarr_format=zarr_format)
    x = da.from_array(data(), chunks=(7, 15))
    zd.store(x, z)
    np.testing.assert_array_equal(z[:], data())
    zd.store(da.from_array(-data((30, 30)), chunks=(10, 15)), z, region=(slice(5, 35),))
    np.testing.assert_array_equal(z[5:35], -data((30, 30)))
    np.testing.assert_array_equal(z[:5], data()[:5])
    np.testing.assert_array_equal(z[35:], data()[35:])
    zs = zarrkit.create_array({}, shape=(40, 30), chunks=(10, 15), dtype="f8", zarr_format=zarr_format,
                              synchronizer=zarrkit.ThreadSynchronizer())
    zd.store(x, zs)
    np.testing.assert_array_equal(zs[:], data())


def test_store_unknown_block_sizes_refused():
    z = zarrkit.create_array({}, shape=(40,), chunks=(10,), dtype="f8", zarr_format=3)
    x = da.from_array(np.arange(80.0), chunks=7)
    x = x[x % 2 == 0]  # 40 elements, block sizes unknown
    with pytest.raises(ValueError, match="unknown sizes"):
        zd.store(x, z)
    assert z.nchunks_initialized == 0  # nothing written


def test_store_sharded_regrouped_by_shard():
    z = zarrkit.create_array({}, shape=(40, 40), chunks=(10, 10), shards=(20, 20), dtype="f8", zarr_format=3)
    x = da.from_array(data((40, 40)), chunks=(10, 10))  # chunk- but not shard-aligned
    assert zd.align_blocks(x, z).chunks == ((20, 20), (20, 20))
    zd.store(x, z)
    np.testing.assert_array_equal(z[:], data((40, 40)))
    np.testing.assert_array_equal(zd.to_dask(z).compute(), data((40, 40)))


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_from_dask(zarr_format, tmp_path):
    x = da.from_array(data(), chunks=(10, 15))
    z = zd.from_dask(x, str(tmp_path / "b.zarr"), path="grp/arr", zarr_format=zarr_format)
    assert z.chunks == (10, 15) and z.shape == (40, 30) and z.zarr_format == zarr_format
    np.testing.assert_array_equal(zarrkit.open_array(str(tmp_path / "b.zarr"), path="grp/arr", mode="r")[:], data())
    # irregular dask chunks are rechunked to the Zarr chunks; explicit chunks and dtype honoured
    y = da.from_array(data(), chunks=((5, 20, 15), (30,)))
    z2 = zd.from_dask(y, {}, chunks=(8, 10), dtype="f4", zarr_format=zarr_format)
    assert z2.chunks == (8, 10) and z2.dtype == np.dtype("f4")
    np.testing.assert_array_equal(z2[:], data().astype("f4"))


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_arrays_pickle(zarr_format, tmp_path):
    z = zarrkit.create_array(str(tmp_path / "p.zarr"), shape=(10,), chunks=(5,), dtype="i4", zarr_format=zarr_format)
    z[:] = np.arange(10)
    z2 = pickle.loads(pickle.dumps(z))
    assert z2 == z
    z2[:5] = -1
    np.testing.assert_array_equal(z[:5], -1)


def test_distributed_local_cluster(tmp_path):
    """Worker processes read and write zarrkit arrays on a DirectoryStore, and an xarray
    dataset opened with engine='zarrkit', chunks={} computes on the cluster."""
    distributed = pytest.importorskip("distributed")
    xr = pytest.importorskip("xarray")
    import zarrkit.xarray as zx

    path = str(tmp_path / "d.zarr")
    src = zarrkit.create_array(DirectoryStore(path), name="src", shape=(60, 40), chunks=(10, 20),
                               dtype="f8", zarr_format=3)
    src[:] = data((60, 40))
    dst = zarrkit.create_array(DirectoryStore(path), name="dst", shape=(60, 40), chunks=(20, 20),
                               dtype="f8", zarr_format=2)
    ds = xr.Dataset({"v": (("a", "b"), data((60, 40)))})
    zx.to_zarr(ds, str(tmp_path / "x.zarr"), zarr_format=3, encoding={"v": {"chunks": (15, 40)}})

    with distributed.LocalCluster(
        processes=True, n_workers=2, threads_per_worker=1, dashboard_address=None,
        worker_dashboard_address=None,
    ) as cluster, distributed.Client(cluster) as client:
        x = zd.to_dask(src)
        assert float(x.sum().compute()) == float(data((60, 40)).sum())
        # write: aligned blocks, from two processes, no lock
        zd.store(x.rechunk((20, 20)) * 2, dst)
        # the workers really did the reading
        pids = set(client.run(lambda: __import__("os").getpid()).values())
        assert len(pids) == 2
        # xarray + zarrkit engine with dask chunks
        opened = xr.open_dataset(str(tmp_path / "x.zarr"), engine="zarrkit", chunks={})
        assert opened.v.chunks == ((15,) * 4, (40,))
        assert float(opened.v.mean().compute()) == pytest.approx(float(data((60, 40)).mean()))
        # write a dask-backed dataset with zarrkit's writer from the workers
        zx.to_zarr(opened.rename(v="w"), str(tmp_path / "y.zarr"), zarr_format=2)
    np.testing.assert_array_equal(dst[:], data((60, 40)) * 2)
    back = xr.open_zarr(str(tmp_path / "y.zarr"))
    np.testing.assert_array_equal(back.w.values, data((60, 40)))


# -- dask's habits: da.from_zarr / da.to_zarr and their zarrkit one-liners -------------------------
DASK_PAGE = Path(__file__).resolve().parents[2] / "docs" / "guide" / "xarray-dask.md"


def documented_one_liners() -> list[tuple[str, str]]:
    """The table of the dask page: ``(dask's call, zarrkit's call)`` per row."""
    text = DASK_PAGE.read_text(encoding="utf-8")
    return re.findall(r"^\| `(da\.[^`]+)` \| `(zarrkit\.dask\.[^`]+)` \|$", text, flags=re.MULTILINE)


def test_the_dask_page_has_a_zarrkit_one_liner_for_each_dask_call():
    rows = documented_one_liners()
    assert {dask_call.split("(")[0] for dask_call, _ in rows} == {"da.from_zarr", "da.to_zarr"}
    assert len(rows) >= 5
    for dask_call, ours in rows:  # the same call, only the prefix changes
        assert ours == dask_call.replace("da.", "zarrkit.dask.", 1)


@pytest.mark.parametrize("dask_call, ours", documented_one_liners(), ids=lambda s: s)
def test_documented_one_liners_work(tmp_path, monkeypatch, dask_call, ours):
    monkeypatch.chdir(tmp_path)
    values = data((100, 100))
    group = zarrkit.open_group("data.zarr", mode="w")
    group.create_array("t", shape=(100, 100), chunks=(25, 50), dtype="f8")[:] = values
    z = zarrkit.zeros((100, 100), chunks=(25, 50), store="z.zarr")
    z[:] = -values
    x = da.from_array(values, chunks=30)
    result = eval(ours, {"zarrkit": zarrkit, "z": z, "group": group, "x": x})
    if ours.startswith("zarrkit.dask.from_zarr("):
        assert isinstance(result, da.Array) and result.chunksize == (25, 50)
        want = -values if ours.startswith("zarrkit.dask.from_zarr(z") else values
        np.testing.assert_array_equal(result.compute(), want)
        return
    assert result is None  # computed, as dask's to_zarr does by default
    target = z if ", z" in ours else zarrkit.open_array("out.zarr", path="t", mode="r")
    region = re.search(r"region=\(slice\((\d+), (\d+)\),\)", ours)
    if region is None:
        np.testing.assert_array_equal(target[:], values)
    else:
        start, stop = map(int, region.groups())
        np.testing.assert_array_equal(target[start:stop], values[start:stop])
        np.testing.assert_array_equal(target[stop:], -values[stop:])  # untouched


def test_dask_own_functions_refuse_zarrkit_arrays_as_the_page_says():
    """The page tells why its one-liners exist: dask's functions test for zarr-python's Array.
    If dask learns to take zarrkit arrays, this fails and the page needs rewriting."""
    pytest.importorskip("zarr")
    z = zarrkit.zeros((4, 4), chunks=(2, 2))
    text = DASK_PAGE.read_text(encoding="utf-8")
    with pytest.raises(TypeError) as read:
        da.from_zarr(z)
    assert f"TypeError: {read.value}" in text
    with pytest.raises(TypeError, match="store_like"):
        da.to_zarr(da.ones((4, 4), chunks=2), z)


def test_from_zarr_and_to_zarr_arguments():
    g = zarrkit.group()
    g.zeros("sub/a", shape=(4,), chunks=(2,))
    with pytest.raises(ValueError, match="component="):
        zd.from_zarr(g)
    with pytest.raises(TypeError, match="group, not an array"):
        zd.from_zarr(g, component="sub")
    with pytest.raises(ValueError, match="component="):
        zd.from_zarr(g["sub/a"], component="a")
    x = da.arange(4, chunks=2)
    with pytest.raises(ValueError, match="existing array"):
        zd.to_zarr(x, {}, region=(slice(0, 4),))
    with pytest.raises(ValueError, match="read-only"):
        zd.to_zarr(x, {}, mode="r")
    with pytest.raises(zarrkit.errors.ContainsArrayError):
        zd.to_zarr(x, g, component="sub/a")  # mode 'a' does not replace an array
    zd.to_zarr(x + 1, g, component="sub/a", mode="w")
    np.testing.assert_array_equal(g["sub/a"][:], [1, 2, 3, 4])
    stored = zd.to_zarr(x * 3, g["sub/a"], compute=False)
    np.testing.assert_array_equal(g["sub/a"][:], [1, 2, 3, 4])  # nothing written yet
    stored.compute()
    np.testing.assert_array_equal(g["sub/a"][:], [0, 3, 6, 9])
