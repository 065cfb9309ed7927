"""Rechunk a time series stored as images into pixel series, in bounded memory.

The array is written with one chunk per group of time steps (fast to append), then rechunked
so that each chunk holds the whole time series of a small tile (fast to read per pixel).

Run with ``python examples/rechunking.py``; ``RECHUNK_EXAMPLE_MIB`` sets the array's size in
MiB (default 64).
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import numpy as np

import zarrkit


def main() -> None:
    mib = float(os.environ.get("RECHUNK_EXAMPLE_MIB", "64"))
    ny, nx = 256, 256
    nt = max(8, int(mib * 2**20 / (ny * nx * 4)))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        images = zarrkit.open_array(root / "images.zarr", mode="w", shape=(nt, ny, nx),
                                    chunks=(8, ny, nx), dtype="f4", zarr_format=3)
        rng = np.random.default_rng(0)
        for t in range(0, nt, 8):
            images[t:t + 8] = rng.standard_normal((min(8, nt - t), ny, nx), dtype="f4")
        images.attrs["units"] = "K"
        print(f"source: shape {images.shape}, chunks {images.chunks}, {images.nbytes / 2**20:.0f} MiB")

        start = time.perf_counter()
        series = zarrkit.rechunk(
            images, root / "series.zarr", chunks=(nt, 16, 16), max_mem="32MiB",
            zarr_format=2, compressor=zarrkit.Zstd(level=3), verify=True,
            progress=True,
        )
        took = time.perf_counter() - start
        print(f"target: shape {series.shape}, chunks {series.chunks}, format {series.zarr_format}, "
              f"attributes {dict(series.attrs)}")
        print(f"rechunked and verified in {took:.1f} s ({images.nbytes / 2**20 / took:.0f} MiB/s)")
        # one pixel's whole time series is now one chunk read
        assert np.array_equal(series[:, 100, 100], images[:, 100, 100])


if __name__ == "__main__":
    main()
