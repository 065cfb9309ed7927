"""zarrkit on Icechunk repositories (local file system storage in tmp_path), through an
Icechunk session's ``session.store``: groups and arrays (sharded too) written by zarrkit and
committed; a branch, a tag and an older snapshot read back; read-only sessions refuse writes;
conflicting commits fail with Icechunk's own error; zarr-python reads what zarrkit wrote (and
the stored bytes are the same as zarr-python's) and the other way round; fork sessions written
through zarrkit on the processes of a ``distributed.LocalCluster`` and merged."""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest

icechunk = pytest.importorskip("icechunk")
zarr = pytest.importorskip("zarr")

import zarrkit
from zarrkit.errors import ReadOnlyError
from zarrkit.storage import coerce_store
from zarrkit.storage.keys import describe_store
from zarrkit.storage.zarr_store import ZarrStoreAdapter

ZSTD = {"name": "zstd", "configuration": {"level": 3, "checksum": False}}
GZIP = {"name": "gzip", "configuration": {"level": 1}}


@pytest.fixture
def repo(tmp_path):
    return icechunk.Repository.create(icechunk.local_filesystem_storage(str(tmp_path / "repo")))


def _data(shape, dtype="<i4", seed=0):
    return np.random.default_rng(seed).integers(-1000, 1000, shape).astype(dtype)


def _write_first_version(repo):
    """zarrkit writes a group with a plain and a sharded array; returns (snapshot, arrays)."""
    session = repo.writable_session("main")
    root = zarrkit.open_group(session.store, mode="w", zarr_format=3)
    root.attrs["title"] = "first"
    plain = _data((20, 30))
    sharded = _data((40, 24), "<f8", seed=1) / 7
    root.create_array("plain", shape=plain.shape, chunks=(5, 10), dtype=plain.dtype)[:] = plain
    sub = root.create_group("sub")
    sub.create_array(
        "sharded", shape=sharded.shape, chunks=(5, 4), shards=(10, 12), dtype=sharded.dtype,
        compressors=[GZIP],
    )[:] = sharded
    snapshot = session.commit("first version")
    return snapshot, {"plain": plain, "sub/sharded": sharded}


def test_write_commit_and_read_branch_tag_and_older_snapshot(repo):
    first, v1 = _write_first_version(repo)
    repo.create_tag("v1", snapshot_id=first)

    session = repo.writable_session("main")
    root = zarrkit.open_group(session.store, mode="r+")
    root["plain"][2:7, 5:25] = -1
    root["sub/sharded"][13:27, 3:17] = 0.5  # partial shards: read, merged, rewritten
    root.attrs["title"] = "second"
    root.create_array("added", shape=(3,), chunks=(2,), dtype="u1")[:] = [1, 2, 3]
    second = session.commit("second version")
    assert second != first and repo.lookup_branch("main") == second
    v2 = {k: v.copy() for k, v in v1.items()}
    v2["plain"][2:7, 5:25] = -1
    v2["sub/sharded"][13:27, 3:17] = 0.5

    def check(readonly, expected, title, members):
        g = zarrkit.open_group(readonly.store, mode="r")
        assert g.attrs["title"] == title
        assert sorted(g.keys()) == members
        for path, want in expected.items():
            got = g[path][...]
            assert got.dtype == want.dtype
            assert got.tobytes() == want.tobytes()  # bit-exact
        return g

    g = check(repo.readonly_session(branch="main"), v2, "second", ["added", "plain", "sub"])
    np.testing.assert_array_equal(g["added"][:], [1, 2, 3])
    check(repo.readonly_session(tag="v1"), v1, "first", ["plain", "sub"])
    check(repo.readonly_session(snapshot_id=first), v1, "first", ["plain", "sub"])
    # a ranged read of a shard: one inner chunk of the older snapshot
    old = zarrkit.open_array(repo.readonly_session(snapshot_id=first).store, path="sub/sharded")
    np.testing.assert_array_equal(old[11:14, 5:7], v1["sub/sharded"][11:14, 5:7])


def test_read_only_sessions_refuse_writes(repo):
    first, v1 = _write_first_version(repo)
    readonly = repo.readonly_session(branch="main")
    store = coerce_store(readonly.store)
    assert isinstance(store, ZarrStoreAdapter) and store.read_only
    with pytest.raises(ReadOnlyError, match=r"IcechunkStore\(snapshot \w+, read-only\)\) is read-only"):
        store.set("plain/c/0/0", b"x")
    with pytest.raises(ReadOnlyError):
        store.delete("plain/c/0/0")
    a = zarrkit.open_array(readonly.store, path="plain", mode="a")  # the store's flag wins
    with pytest.raises(ReadOnlyError):
        a[0, 0] = 5
    with pytest.raises(ReadOnlyError):
        zarrkit.open_group(readonly.store, mode="a").create_group("new")
    # a committed session is read-only too
    session = repo.writable_session("main")
    z = zarrkit.open_array(session.store, path="plain", mode="r+")
    z[0, 0] = 123
    session.commit("one value")
    with pytest.raises(ReadOnlyError):
        z[0, 0] = 456
    assert repo.lookup_branch("main") != first
    now = zarrkit.open_array(repo.readonly_session(branch="main").store, path="plain")
    assert now[0, 0] == 123
    np.testing.assert_array_equal(now[1:], v1["plain"][1:])


def test_conflicting_commits_fail_with_icechunks_error(repo):
    _write_first_version(repo)
    one, two = repo.writable_session("main"), repo.writable_session("main")
    zarrkit.open_array(one.store, path="plain", mode="r+")[0:5, 0:10] = 1
    zarrkit.open_array(two.store, path="plain", mode="r+")[0:5, 0:10] = 2
    winner = one.commit("first writer")
    with pytest.raises(icechunk.ConflictError):
        two.commit("second writer")
    assert repo.lookup_branch("main") == winner
    got = zarrkit.open_array(repo.readonly_session(branch="main").store, path="plain")
    assert (got[0:5, 0:10] == 1).all()


@pytest.mark.parametrize("dtype", ["<u2", "<i8", "<f4", "|b1"])
def test_zarr_python_and_zarrkit_read_each_other(repo, dtype):
    session = repo.writable_session("main")
    data = _data((20, 30), dtype=dtype, seed=3)
    kwargs = {"shape": data.shape, "chunks": (5, 10), "shards": (10, 10), "dtype": data.dtype,
              "compressors": [ZSTD], "fill_value": 0}  # (gzip headers carry the time of writing)
    zarrkit.create_array(session.store, name="by_zarrkit", **kwargs)[:] = data
    zarr.create_array(session.store, name="by_zarr", **kwargs)[:] = data
    # zarr-python reads zarrkit's array and zarrkit zarr-python's, in the same session
    assert zarr.open_array(session.store, path="by_zarrkit", mode="r")[:].tobytes() == data.tobytes()
    assert zarrkit.open_array(session.store, path="by_zarr", mode="r")[:].tobytes() == data.tobytes()
    # the stored shards are the same bytes
    store = coerce_store(session.store)
    shards = sorted(store.list_prefix("by_zarrkit/c/"))
    assert len(shards) == 6
    for key in shards:
        assert store.get(key) == store.get("by_zarr/" + key.removeprefix("by_zarrkit/")), key
    snapshot = session.commit("both")
    readonly = repo.readonly_session(snapshot_id=snapshot)
    assert zarr.open_array(readonly.store, path="by_zarrkit", mode="r")[:].tobytes() == data.tobytes()
    # zarr-python changes zarrkit's array, zarrkit sees it
    session = repo.writable_session("main")
    zarr.open_array(session.store, path="by_zarrkit", mode="r+")[3:9, 4:22] = data[0, 0]
    data[3:9, 4:22] = data[0, 0]
    session.commit("zarr-python writes")
    got = zarrkit.open_array(repo.readonly_session(branch="main").store, path="by_zarrkit")
    assert got[:].tobytes() == data.tobytes()


def test_adapter_pickles_as_icechunk_allows_and_names_the_session(repo):
    first, v1 = _write_first_version(repo)
    readonly = coerce_store(repo.readonly_session(branch="main").store)
    assert f"IcechunkStore(snapshot {first}, read-only)" in describe_store(readonly)
    clone = pickle.loads(pickle.dumps(readonly))
    assert clone.get("plain/zarr.json") == readonly.get("plain/zarr.json")
    writable = repo.writable_session("main")
    assert describe_store(coerce_store(writable.store)) == (
        "ZarrStoreAdapter(IcechunkStore(branch 'main'))"
    )
    # a writable session pickles only as a fork: Icechunk's own refusal
    with pytest.raises(ValueError, match="Session.fork"):
        pickle.dumps(coerce_store(writable.store))
    z = zarrkit.open_array(writable.fork().store, path="plain", mode="r+")
    back = pickle.loads(pickle.dumps(z))
    np.testing.assert_array_equal(back[:], v1["plain"])


def test_xarray_datasets_written_and_read_through_the_zarrkit_engine(repo):
    xr = pytest.importorskip("xarray")
    import zarrkit.xarray as zx

    ds = xr.Dataset(
        {"t": (("time", "x"), _data((6, 5), "<f4") / 4, {"units": "K"})},
        coords={"time": np.arange(6), "x": np.linspace(0, 1, 5)},
    )
    session = repo.writable_session("main")
    # Icechunk keeps its own index of the hierarchy: no consolidated metadata
    zx.to_zarr(ds, session.store, zarr_format=3, consolidated=False)
    assert b"consolidated_metadata" not in coerce_store(session.store).get("zarr.json")
    snapshot = session.commit("dataset")
    back = xr.open_dataset(repo.readonly_session(snapshot_id=snapshot).store, engine="zarrkit")
    xr.testing.assert_identical(back.load(), ds)
    assert back["t"].attrs["units"] == "K"


def test_shrinking_then_growing_in_one_session_reads_fill_values(repo):
    session = repo.writable_session("main")
    z = zarrkit.create_array(session.store, name="a", shape=(10, 10), chunks=(5, 5), dtype="i4")
    z[:] = 1
    z.resize((5, 5))
    z.resize((10, 10))
    assert z[:].sum() == 25
    z.append(np.full((10, 10), 2, dtype="i4"))
    assert z[:].sum() == 25 + 2 * 100
    z.resize((12, 10))
    z.resize((20, 10))
    # what the shrink kept past row 12 (rows 12-14 of a chunk it kept) reads the fill value
    # when grown over again, as with any store; rows 15-19 went with their chunks
    assert z[:].sum() == 25 + 2 * 20 and not z[12:].any()


def test_shrinking_then_growing_across_commits_reads_fill_values(repo):
    session = repo.writable_session("main")
    z = zarrkit.create_array(session.store, name="a", shape=(10, 10), chunks=(5, 5), dtype="i4")
    z[:] = 1
    z.resize((5, 5))
    session.commit("shrunk")
    session = repo.writable_session("main")
    z = zarrkit.open_array(session.store, path="a", mode="r+")
    assert sorted(z.store.list_prefix("a/c/")) == ["a/c/0/0"]
    z.resize((10, 10))
    assert z[:].sum() == 25


def _write_region(array, region, block):
    """A worker's task: write ``block`` into ``region`` of a zarrkit array over a fork session;
    return the fork (to merge) and the process that wrote."""
    array[region] = block
    return array.store.zarr_store.session, os.getpid()


@pytest.mark.slow
def test_fork_sessions_written_on_dask_workers_are_merged_and_committed(repo):
    dask = pytest.importorskip("dask")
    da = pytest.importorskip("dask.array")
    distributed = pytest.importorskip("distributed")
    from dask.array.core import slices_from_chunks

    session = repo.writable_session("main")
    zarrkit.create_array(session.store, name="grid", shape=(40, 60), chunks=(10, 15),
                         dtype="<f8", compressors=[GZIP])
    session.commit("empty array")

    data = np.arange(40 * 60, dtype="<f8").reshape(40, 60) / 3
    x = da.from_array(data, chunks=(20, 30))  # each block: whole chunks, one task per block
    session = repo.writable_session("main")
    tasks = []
    for block, region in zip(x.to_delayed().ravel(), slices_from_chunks(x.chunks)):
        # a zarrkit array over a fork of the session, pickled to a worker with the fork
        array = zarrkit.open_array(session.fork().store, path="grid", mode="r+")
        tasks.append(dask.delayed(_write_region)(array, region, block))
    with distributed.LocalCluster(
        processes=True, n_workers=2, threads_per_worker=1, dashboard_address=None,
        worker_dashboard_address=None,
    ) as cluster, distributed.Client(cluster):
        results = dask.compute(*tasks)
    forks = [fork for fork, _ in results]
    assert os.getpid() not in {pid for _, pid in results}  # the workers wrote
    assert all(isinstance(f, icechunk.session.ForkSession) for f in forks)
    session.merge(*forks)
    snapshot = session.commit("parallel write")
    got = zarrkit.open_array(repo.readonly_session(snapshot_id=snapshot).store, path="grid")
    assert got[:].tobytes() == data.tobytes()
    assert zarr.open_array(repo.readonly_session(branch="main").store, path="grid")[:].tobytes() == data.tobytes()
