"""Lock-free dask writes from a ``dask.distributed`` cluster of two worker processes lose nothing.

One 700 x 100 float64 array, dask blocks of 70 rows, over Zarr chunks of (100, 100) and over
shards of (200, 100) with inner chunks of (50, 100): every block boundary but the last falls
inside a chunk (a shard), so two tasks, often in two processes, write parts of one stored
object.  Each partial chunk (shard) is merged into the one as stored, on the condition that
it is still that version (the store's conditional writes), so nothing needs a lock.  Written
to a directory and to S3 (a moto server on 127.0.0.1, reached by the workers; through obstore
and through s3fs), and read back against NumPy:

* ``zarrkit.dask.to_zarr(x, url)`` (which regroups the blocks along the grid first: faster);
* ``dask.array.store(x, array, lock=False)`` (the blocks as they are: the engine alone);
* ``zarrkit.xarray.to_zarr(ds, url)`` of a dataset whose variable has those blocks (regrouped,
  and with ``safe_chunks=False`` as they are);
* 10 ``zarrkit.xarray.to_zarr(ds, url, region=...)`` calls, each its own dask computation of a
  70-row region, all started at once: neighbouring jobs meet on the chunks they share.

``benchmarks/distributed_lost_values.py`` runs the same jobs through zarr-python beside.
"""

from __future__ import annotations

import os
import sys
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")
xr = pytest.importorskip("xarray")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "stores"))  # the tests' moto server
from moto_s3 import BUCKET, start_server

import zarrkit
import zarrkit.dask as zd
import zarrkit.xarray as zx

pytestmark = pytest.mark.slow

SHAPE = (700, 100)
BLOCK = 70
LAYOUTS = {
    "chunks": {"chunks": (100, 100)},
    "shards": {"chunks": (50, 100), "shards": (200, 100)},
}
TARGETS = ["directory", "s3-obstore", "s3-fsspec"]
EXPECTED = np.arange(1, SHAPE[0] * SHAPE[1] + 1, dtype="f8").reshape(SHAPE)


@pytest.fixture(scope="module")
def client():
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=2,
            processes=True,
            dashboard_address=":0",
            worker_dashboard_address=None,
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        pids = set(c.run(os.getpid).values())
        assert len(pids) == 2 and os.getpid() not in pids
        yield c


@pytest.fixture(scope="module")
def s3():
    """The endpoint of a moto S3 server on 127.0.0.1 with the bucket."""
    pytest.importorskip("moto.server")
    s3fs = pytest.importorskip("s3fs")
    server, endpoint = start_server()
    fs = s3fs.S3FileSystem(key="testing", secret="testing", client_kwargs={"endpoint_url": endpoint})
    if not fs.exists(BUCKET):  # (moto's backends are the process's: another server may have made it)
        fs.mkdir(BUCKET)
    yield endpoint
    server.stop()


class Target:
    """A fresh place to write per ``url()``: a directory, or S3 through obstore (zarrkit's
    opener of ``s3://`` URLs) or through s3fs (``config.remote='fsspec'``)."""

    def __init__(self, kind: str, tmp: Path, endpoint: str | None):
        self.kind, self.tmp = kind, tmp
        self.options = (
            None
            if endpoint is None
            else {
                "key": "testing",
                "secret": "testing",
                "client_kwargs": {"endpoint_url": endpoint},
            }
        )
        self.remote = "fsspec" if kind == "s3-fsspec" else "obstore"

    def url(self) -> str:
        name = uuid.uuid4().hex[:10]
        return str(self.tmp / name) if self.kind == "directory" else f"s3://{BUCKET}/{name}"

    def assert_nothing_lost(self, url: str, path: str | None = None) -> None:
        """Every value reads back as written, from the store of the kind meant (one with
        conditional writes)."""
        with zarrkit.config.set(remote=self.remote):
            z = zarrkit.open_array(url, path=path, storage_options=self.options, mode="r")
        back = z[...]
        lost = int((back != EXPECTED).sum())  # a NaN (never written) counts
        assert lost == 0, f"{lost} of {back.size} values lost"
        want = {
            "directory": "DirectoryStore",
            "s3-obstore": "ObjectStore",
            "s3-fsspec": "FsspecStore",
        }
        assert type(z.store).__name__ == want[self.kind] and z.store.supports_conditional_writes, (
            z.store
        )


@pytest.fixture(params=TARGETS)
def target(request, tmp_path):
    if request.param == "s3-obstore":
        pytest.importorskip("obstore")
    endpoint = None if request.param == "directory" else request.getfixturevalue("s3")
    t = Target(request.param, tmp_path, endpoint)
    with zarrkit.config.set(remote=t.remote):
        yield t


def source():
    """The dask array written: blocks of 70 rows, values 1 ... 70,000 (no NaN, the fill)."""
    return da.fromfunction(
        lambda i, j: i * SHAPE[1] + j + 1, shape=SHAPE, chunks=(BLOCK, SHAPE[1]), dtype="f8"
    )


def straddles(x, z) -> bool:
    return bool(zd.check_aligned(x.chunks, z))


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_dask_to_zarr_distributed_loses_nothing(client, target, layout):
    x = source()
    url = target.url()
    zd.to_zarr(
        x, url, storage_options=target.options, fill_value=np.nan, zarr_format=3, **LAYOUTS[layout]
    )
    assert straddles(x, zarrkit.open_array(url, storage_options=target.options, mode="r"))
    target.assert_nothing_lost(url)


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_da_store_lock_false_distributed_loses_nothing(client, target, layout):
    """No regrouping by anyone: the tasks of two neighbouring blocks both write the chunk
    (shard) between them, and the versions alone keep both halves."""
    x = source()
    url = target.url()
    z = zarrkit.create_array(
        url,
        storage_options=target.options,
        shape=SHAPE,
        dtype="f8",
        fill_value=np.nan,
        zarr_format=3,
        **LAYOUTS[layout],
    )
    assert straddles(x, z)
    da.store(x, z, lock=False)
    target.assert_nothing_lost(url)


@pytest.mark.parametrize("safe_chunks", [True, False])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_xarray_to_zarr_distributed_loses_nothing(client, target, layout, safe_chunks):
    """``safe_chunks=False``: the blocks written as they are, the versions alone."""
    url = target.url()
    zx.to_zarr(
        xr.Dataset({"v": (("y", "x"), source())}),
        url,
        storage_options=target.options,
        zarr_format=3,
        encoding={"v": dict(LAYOUTS[layout])},
        safe_chunks=safe_chunks,
    )
    target.assert_nothing_lost(url, "v")
    back = xr.open_zarr(url, storage_options=target.options) if target.kind == "directory" else None
    if back is not None:  # xarray with zarr-python reads it too
        np.testing.assert_array_equal(back.v.values, EXPECTED)


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_xarray_region_jobs_distributed_loses_nothing(client, target, layout):
    """10 separate region writes, one 70-row region each, started together from 10 threads:
    each region's first and last chunk (shard) is shared with a neighbouring job."""
    url = target.url()
    enc = {"v": dict(LAYOUTS[layout])}
    unit = LAYOUTS[layout].get("shards", LAYOUTS[layout]["chunks"])
    template = xr.Dataset({"v": (("y", "x"), da.full(SHAPE, np.nan, chunks=unit))})
    zx.to_zarr(
        template, url, storage_options=target.options, zarr_format=3, encoding=enc, compute=False
    )
    ds = xr.Dataset({"v": (("y", "x"), source())})
    starts = range(0, SHAPE[0], BLOCK)
    barrier = threading.Barrier(len(starts))

    def job(a: int) -> None:
        barrier.wait()
        zx.to_zarr(
            ds.isel(y=slice(a, a + BLOCK)),
            url,
            storage_options=target.options,
            region={"y": slice(a, a + BLOCK)},
        )

    with ThreadPoolExecutor(len(starts)) as pool:
        list(pool.map(job, starts))
    target.assert_nothing_lost(url, "v")
