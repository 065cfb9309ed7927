"""Rechunking: copy an array into a new one with other chunks, within a memory budget.

Data written one time step at a time (chunks of 1 x lat x lon) is slow to read as time
series at one place: every series touches every chunk.  ``zarrkit.rechunk`` copies it into
chunks that hold whole series of small tiles, reading and writing at most ``max_mem`` at once.

``--small`` (or ``ZARRKIT_EXAMPLES_SMALL=1``) uses a small array.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

import numpy as np

import zarrkit as zarr

SMALL = "--small" in sys.argv[1:] or os.environ.get("ZARRKIT_EXAMPLES_SMALL") == "1"
T, Y, X = (48, 32, 64) if SMALL else (720, 256, 512)
TILE = 8 if SMALL else 32


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="zarrkit-rechunk-") as tmp:
        source = zarr.create_array(os.path.join(tmp, "by-time.zarr"), shape=(T, Y, X),
                                   chunks=(1, Y, X), dtype="f4")
        rng = np.random.default_rng(0)
        for t in range(T):                       # as a model writes it: a step at a time
            source[t] = rng.random((Y, X), dtype="f4")
        print(f"source: {source.shape} in chunks {source.chunks} ({source.nchunks} chunks)")

        start = time.perf_counter()
        target = zarr.rechunk(source, os.path.join(tmp, "by-place.zarr"),
                              chunks=(T, TILE, TILE), max_mem="64MiB")
        elapsed = time.perf_counter() - start
        if not isinstance(target, zarr.Array):   # a target given by path, opened here
            target = zarr.open_array(os.path.join(tmp, "by-place.zarr"), mode="r")
        print(f"target: {target.shape} in chunks {target.chunks} ({target.nchunks} chunks), "
              f"rechunked in {elapsed:.2f} s")

        # the same values; a time series at one place now reads one chunk instead of T
        assert target.chunks == (T, TILE, TILE)
        assert np.array_equal(target[:], source[:])
        series = target[:, Y // 2, X // 2]
        assert np.array_equal(series, source[:, Y // 2, X // 2])
        print(f"one time series: {series.shape[0]} values from 1 chunk (it took {T} before)")


if __name__ == "__main__":
    main()
