"""Several processes write one array at once, without any lock, in regions that cut through
chunks, and no value is lost.

Two writers whose regions share a chunk each read the chunk, change their part and write it
back.  Without care, the second write would undo the first.  zarrkit conditions every such
write on the version of the chunk it read (a compare-and-swap on the store): the write that
finds the chunk changed reads it again and redoes its change.  Directories, SQLite, LMDB,
Redis and S3/GCS/Azure stores support these conditional writes (``supports_conditional_writes``).

``--small`` (or ``ZARRKIT_EXAMPLES_SMALL=1``) uses fewer writers and a smaller array.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import tempfile
import time

import numpy as np

import zarrkit as zarr

SMALL = "--small" in sys.argv[1:] or os.environ.get("ZARRKIT_EXAMPLES_SMALL") == "1"
WRITERS = 3 if SMALL else 6
ROWS_PER_PIECE = 7                  # pieces of 7 rows, chunks of 16: most pieces share chunks
PIECES = 24 if SMALL else 240
COLS = 48


def writer(path: str, w: int) -> int:
    """Writer ``w``: every ``WRITERS``-th piece of rows, each filled with its own number."""
    z = zarr.open_array(path, mode="r+")
    written = 0
    for piece in range(w, PIECES, WRITERS):
        rows = slice(piece * ROWS_PER_PIECE, (piece + 1) * ROWS_PER_PIECE)
        z[rows, 5:COLS - 3] = piece + 1     # cuts the chunks at both ends of each row, too
        written += 1
    return written


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="zarrkit-writers-") as tmp:
        path = os.path.join(tmp, "shared.zarr")
        z = zarr.create_array(path, shape=(PIECES * ROWS_PER_PIECE, COLS), chunks=(16, 16),
                              dtype="i4", fill_value=0)
        print(f"array {z.shape} in chunks {z.chunks}; {WRITERS} processes write "
              f"{PIECES} pieces of {ROWS_PER_PIECE} rows")
        print("conditional writes on this store:", z.store.supports_conditional_writes)

        start = time.perf_counter()
        # "spawn": fresh interpreters, as separate programs (or machines) would be
        with multiprocessing.get_context("spawn").Pool(WRITERS) as pool:
            counts = pool.starmap(writer, [(path, w) for w in range(WRITERS)])
        print(f"pieces written per process: {counts} in {time.perf_counter() - start:.1f} s")

        # what every cell must hold: its piece's number inside the columns written, else 0
        expected = np.zeros(z.shape, dtype="i4")
        for piece in range(PIECES):
            expected[piece * ROWS_PER_PIECE:(piece + 1) * ROWS_PER_PIECE, 5:COLS - 3] = piece + 1
        got = zarr.open_array(path, mode="r")[:]
        lost = int((got != expected).sum())
        print(f"cells lost or wrong: {lost} of {got.size}")
        if lost:
            raise SystemExit("a write was lost")


if __name__ == "__main__":
    main()
