"""Lost values of lock-free dask writes from a ``dask.distributed`` cluster of worker processes.

Not part of ``make test`` (``tests/ecosystem/test_distributed_writers.py`` asserts zarrkit's
zeros); run it by hand::

    PYTHONPATH=src python benchmarks/distributed_lost_values.py [--rows 700] [--cols 700] \\
        [--repeat 3]

A ``LocalCluster(n_workers=2, threads_per_worker=2, processes=True)`` writes one float64 array
(default 700 x 700 = 490,000 values) whose dask blocks are 70 rows, over Zarr chunks of
(100, cols) and over shards of (200, cols) with inner chunks of (50, cols), so every block
boundary falls inside a chunk (shard), to a directory and to S3 (a moto server on 127.0.0.1
that answers one request at a time, as atomic as S3).  Jobs:

* ``to_zarr``: ``zarrkit.dask.to_zarr(x, url, chunks=...)`` / ``dask.array.to_zarr(x, url,
  chunks=...)`` (zarr-python creates the array and stores the blocks as they are);
* ``da.store``: ``dask.array.store(x, array, lock=False)`` into an array of the library (no
  regrouping by anyone: two tasks meet on every chunk a block boundary cuts);
* ``xarray``: ``zarrkit.xarray.to_zarr(ds, url)`` / ``ds.to_zarr(url, safe_chunks=False)``
  (xarray refuses these blocks with ``safe_chunks=True``);
* ``region jobs``: an existing store written by 10 separate ``to_zarr(region=...)`` calls, one
  70-row region each, started at once from 10 client threads (each its own dask computation);
  zarr-python again with ``safe_chunks=False``.

A value is lost when it does not read back as written (the fill value is NaN).  Each job runs
``--repeat`` times; the table gives the range of lost values and the median seconds.  For
zarrkit, ``da.store`` beside ``to_zarr`` is the same write without regrouping the blocks
along the storage grid (what ``zarrkit.dask.store`` does first): both lose nothing on stores
with conditional writes, and the seconds say which is faster.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
import uuid
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "stores"))  # moto_s3: the tests' S3 server

from moto_s3 import BUCKET, start_server

BLOCK = 70
JOBS = ["to_zarr", "da.store", "xarray", "region jobs"]


def layouts(cols: int) -> dict[str, dict]:
    return {
        "chunks": {"chunks": (100, cols)},
        "shards": {"chunks": (50, cols), "shards": (200, cols)},
    }


def source(shape: tuple[int, int]):
    """The dask array written (blocks of 70 rows) and the NumPy array it equals."""
    import dask.array as da

    x = da.fromfunction(
        lambda i, j: i * shape[1] + j + 1, shape=shape, chunks=(BLOCK, shape[1]), dtype="f8"
    )
    return x, np.arange(1, shape[0] * shape[1] + 1, dtype="f8").reshape(shape)


def dataset(x):
    import xarray as xr

    return xr.Dataset({"v": (("y", "x"), x)})


# -- where: a directory, S3 ---------------------------------------------------------------------
class Target:
    def __init__(self, kind: str, tmp: str, endpoint: str | None):
        self.kind, self.tmp, self.endpoint = kind, tmp, endpoint

    def fresh(self) -> str:
        name = uuid.uuid4().hex[:10]
        return os.path.join(self.tmp, name) if self.kind == "directory" else f"s3://{BUCKET}/{name}"

    @property
    def options(self) -> dict | None:
        if self.kind == "directory":
            return None
        return {
            "key": "testing",
            "secret": "testing",
            "client_kwargs": {"endpoint_url": self.endpoint},
        }

    def zarrkit_store(self, url: str):
        """zarrkit's store of ``url``: a directory, or S3 through obstore (zarrkit's default for
        ``s3://``) or s3fs."""
        from zarrkit.storage import DirectoryStore, FsspecStore, ObjectStore

        if self.kind == "directory":
            return DirectoryStore(url)
        if self.kind == "s3 (obstore)":
            return ObjectStore.from_url(url, self.options)
        return FsspecStore(url, storage_options=self.options)


# -- the jobs ---------------------------------------------------------------------------------
def _region_jobs(write_one, rows: int) -> None:
    """``write_one(start, stop)`` for every 70-row region, from 10 threads started at once."""
    starts = list(range(0, rows, BLOCK))
    barrier = threading.Barrier(len(starts))

    def job(start: int) -> None:
        barrier.wait()
        write_one(start, min(start + BLOCK, rows))

    with ThreadPoolExecutor(len(starts)) as pool:
        list(pool.map(job, starts))


def run_zarrkit(job: str, target: Target, layout: dict, shape) -> np.ndarray:
    import dask.array as da

    import zarrkit
    import zarrkit.dask as zd
    import zarrkit.xarray as zx

    x, _ = source(shape)
    store = target.zarrkit_store(target.fresh())
    enc = dict(layout, fill_value=np.nan, zarr_format=3)
    if job == "to_zarr":
        zd.to_zarr(x, store, **enc)
    elif job == "da.store":
        da.store(x, zarrkit.create_array(store, shape=shape, dtype="f8", **enc), lock=False)
    elif job == "xarray":
        zx.to_zarr(dataset(x), store, zarr_format=3, encoding={"v": dict(layout)})
    else:
        template = dataset(da.full(shape, np.nan, chunks=layout.get("shards", layout["chunks"])))
        zx.to_zarr(template, store, zarr_format=3, encoding={"v": dict(layout)}, compute=False)
        ds = dataset(x)
        _region_jobs(
            lambda a, b: zx.to_zarr(ds.isel(y=slice(a, b)), store, region={"y": slice(a, b)}),
            shape[0],
        )
    if job in ("xarray", "region jobs"):
        return zarrkit.open_array(store, path="v", mode="r")[...]
    return zarrkit.open_array(store, mode="r")[...]


def run_zarr_python(job: str, target: Target, layout: dict, shape) -> np.ndarray:
    import dask.array as da
    import zarr

    x, _ = source(shape)
    url, options = target.fresh(), target.options
    enc = dict(layout, fill_value=np.nan, zarr_format=3)
    if job == "to_zarr":
        da.to_zarr(x, url, storage_options=options, **enc)
    elif job == "da.store":
        z = zarr.create_array(url, storage_options=options, shape=shape, dtype="f8", **enc)
        da.store(x, z, lock=False)
    elif job == "xarray":
        dataset(x).to_zarr(
            url,
            storage_options=options,
            zarr_format=3,
            encoding={"v": dict(layout)},
            safe_chunks=False,
        )
    else:
        template = dataset(da.full(shape, np.nan, chunks=layout.get("shards", layout["chunks"])))
        template.to_zarr(
            url, storage_options=options, zarr_format=3, encoding={"v": dict(layout)}, compute=False
        )
        ds = dataset(x)
        _region_jobs(
            lambda a, b: ds.isel(y=slice(a, b)).to_zarr(
                url, storage_options=options, region={"y": slice(a, b)}, safe_chunks=False
            ),
            shape[0],
        )
    if job in ("xarray", "region jobs"):
        return np.asarray(zarr.open_array(url, path="v", mode="r", storage_options=options)[...])
    return np.asarray(zarr.open_array(url, mode="r", storage_options=options)[...])


RUNNERS = {"zarrkit": run_zarrkit, "zarr-python 3.4": run_zarr_python}


def measure(
    lib: str, job: str, target: Target, layout: dict, shape, repeat: int
) -> tuple[list[int], list[float]]:
    _, expected = source(shape)
    lost, secs = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        back = RUNNERS[lib](job, target, layout, shape)
        secs.append(time.perf_counter() - t0)
        lost.append(int((back != expected).sum()))  # NaN (never written) counts as lost
    return lost, secs


def _span(values: list[int]) -> str:
    lo, hi = min(values), max(values)
    return f"{lo:,}" if lo == hi else f"{lo:,}–{hi:,}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=700)
    parser.add_argument("--cols", type=int, default=700)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--targets",
        default="directory,s3 (obstore),s3 (fsspec)",
        help="comma-separated: directory, s3 (obstore), s3 (fsspec)",
    )
    args = parser.parse_args()
    shape = (args.rows, args.cols)
    warnings.simplefilter("ignore")

    import distributed
    import zarr

    server, endpoint = start_server()
    import s3fs

    s3fs.S3FileSystem(
        key="testing", secret="testing", client_kwargs={"endpoint_url": endpoint}
    ).mkdir(BUCKET)
    tmp = tempfile.mkdtemp(prefix="lost-values-")
    rows = []
    try:
        with (
            distributed.LocalCluster(
                n_workers=2,
                threads_per_worker=2,
                processes=True,
                dashboard_address=None,
                worker_dashboard_address=None,
            ) as cluster,
            distributed.Client(cluster),
        ):
            for kind in args.targets.split(","):
                target = Target(kind.strip(), tmp, endpoint)
                for lname, layout in layouts(args.cols).items():
                    for job in JOBS:
                        for lib in RUNNERS:
                            if lib != "zarrkit" and target.kind == "s3 (obstore)":
                                continue  # zarr-python on S3: its default, s3fs
                            try:
                                lost, secs = measure(lib, job, target, layout, shape, args.repeat)
                                cell = (_span(lost), f"{statistics.median(secs):.2f}")
                            except Exception as e:  # noqa: BLE001 -- a refusal is a result
                                cell = (
                                    f"error: {type(e).__name__}: {str(e).splitlines()[0][:60]}",
                                    "",
                                )
                            row = (target.kind, lname, job, lib, *cell)
                            rows.append(row)
                            print("  ".join(row), file=sys.stderr, flush=True)
    finally:
        server.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    print(
        f"\n{shape[0]} x {shape[1]} float64 = {shape[0] * shape[1]:,} values, "
        f"dask blocks of {BLOCK} rows, "
        f"2 worker processes x 2 threads, {args.repeat} runs each; zarr-python {zarr.__version__}\n"
    )
    print("| target | grid | job | library | lost values | median s |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
