"""xarray with zarrkit: write a dataset, read it back lazily, append along time, and
overwrite a region of it in place.

Needs the ``xarray`` extra (``pip install 'zarrkit[xarray]'``).  ``--small`` (or
``ZARRKIT_EXAMPLES_SMALL=1``) uses a small grid.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

import zarrkit.xarray

SMALL = "--small" in sys.argv[1:] or os.environ.get("ZARRKIT_EXAMPLES_SMALL") == "1"
NLAT, NLON = (6, 12) if SMALL else (180, 360)


def month(start: str, days: int, seed: int) -> xr.Dataset:
    """A toy daily temperature field of ``days`` days from ``start``."""
    rng = np.random.default_rng(seed)
    t2m = (280 + 5 * rng.standard_normal((days, NLAT, NLON))).astype("f4")
    return xr.Dataset(
        {"t2m": (("time", "lat", "lon"), t2m, {"units": "K"})},
        coords={
            "time": pd.date_range(start, periods=days, freq="D"),
            "lat": np.linspace(-89.5, 89.5, NLAT),
            "lon": np.linspace(0.5, 359.5, NLON),
        },
        attrs={"title": "toy reanalysis"},
    )


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="zarrkit-xarray-") as tmp:
        run(Path(tmp) / "climate.zarr")


def run(path: Path) -> None:
    # 1. write: one chunk per 10 days, the whole grid in a chunk
    january = month("2000-01-01", 31, seed=1)
    encoding = {"t2m": {"chunks": (10, NLAT, NLON)}}
    zarrkit.xarray.to_zarr(january, path, mode="w", encoding=encoding)
    ds = xr.open_dataset(path, engine="zarrkit")
    print("written:", dict(ds.sizes), ds.attrs["title"], ds.t2m.attrs["units"])
    assert np.array_equal(ds.t2m.values, january.t2m.values)

    # 2. append February along time: the arrays grow, the coordinates follow
    february = month("2000-02-01", 29, seed=2)
    zarrkit.xarray.to_zarr(february, path, append_dim="time")
    ds = xr.open_dataset(path, engine="zarrkit")
    print("appended:", ds.sizes["time"], "days,", str(ds.time.values[0])[:10], "to",
          str(ds.time.values[-1])[:10])
    assert ds.sizes["time"] == 60
    assert np.array_equal(ds.t2m.isel(time=slice(31, None)).values, february.t2m.values)

    # 3. region write: replace days 10-19 in place (only the arrays along time are written;
    #    the others are dropped from the piece, as xarray asks)
    fix = (january.isel(time=slice(10, 20)) + 1.5).drop_vars(["lat", "lon"])
    zarrkit.xarray.to_zarr(fix, path, region={"time": slice(10, 20)})
    ds = xr.open_dataset(path, engine="zarrkit")
    delta = ds.t2m.isel(time=slice(10, 20)) - january.t2m.isel(time=slice(10, 20))
    print("region 10:20 raised by", float(delta.mean()), "K; day 9 unchanged:",
          bool((ds.t2m.isel(time=9) == january.t2m.isel(time=9)).all()))
    assert np.allclose(delta, 1.5)

    # 4. lazy reads with dask: one task per Zarr chunk
    try:
        lazy = xr.open_dataset(path, engine="zarrkit", chunks={})
    except ImportError:
        print("(dask is not installed: lazy dask reads skipped)")
    else:
        print("dask chunks along time:", lazy.t2m.chunks[0])
        print("monthly means:", lazy.t2m.resample(time="MS").mean(...).values.round(2))


if __name__ == "__main__":
    main()
