"""dask.distributed with zarrkit: a local cluster of 2 worker processes writes one array
through ``zarrkit.dask.to_zarr``, block by block and without locks, then reads it back.

Needs the ``dask`` extra (``pip install 'zarrkit[dask]'``).  ``--small`` (or
``ZARRKIT_EXAMPLES_SMALL=1``) uses a small array.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import dask.array as da
import numpy as np
from dask.distributed import Client, LocalCluster

import zarrkit as zarr
import zarrkit.dask

SMALL = "--small" in sys.argv[1:] or os.environ.get("ZARRKIT_EXAMPLES_SMALL") == "1"
N = 400 if SMALL else 4000


def run(path: Path) -> None:
    # two processes of one thread each; no dashboard (it would need a free port and bokeh)
    no_dashboard: dict[str, Any] = {"dashboard_address": None}
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      **no_dashboard) as cluster, Client(cluster) as client:
        print("workers:", len(client.scheduler_info()["workers"]))

        # dask blocks of N/4 x 3N/8, Zarr chunks of N/4 x N/4: the blocks are regrouped so
        # that no two tasks write one chunk (no lock is needed)
        blocks: Any = (N // 4, 3 * N // 8)
        x = da.random.default_rng(42).random((N, N), chunks=blocks).astype("f4")
        zarrkit.dask.to_zarr(x, str(path), component="field", chunks=(N // 4, N // 4),
                             mode="w")
        z = zarr.open_array(str(path), path="field", mode="r")
        print("stored:", z.shape, z.chunks, z.nchunks_initialized, "chunks")

        # read back: one task per Zarr chunk, computed on the cluster
        y = zarrkit.dask.from_zarr(str(path), component="field")
        print("read back:", y.chunksize, y.npartitions, "tasks")
        # summed in float64: float32 sums of differently shaped blocks differ in the last digits
        sums: Any = client.compute([y.sum(dtype="f8"), x.sum(dtype="f8")], sync=True)
        total, expected = sums
        print(f"sum {float(total):.3f} (written: {float(expected):.3f})")
        assert np.isclose(total, expected, rtol=1e-12)
        assert np.array_equal(z[:], x.compute())


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="zarrkit-dask-") as tmp:
        run(Path(tmp) / "field.zarr")


if __name__ == "__main__":  # the worker processes import this module: keep the work here
    main()
