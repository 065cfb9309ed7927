"""Writers the crash tests kill (run as ``python _crash_ops_worker.py MODE JSON``).

Modes
-----
resize      shrink, grow and append an array through a store that SIGKILLs this process just
            before its ``kill_at``-th change (set or delete); ``kill_at`` 0 never kills and
            prints how many changes the whole sequence makes
partial     write overlapping regions that are not aligned with the shards, forever, printing
            the number of each region written once its write has returned
"""

from __future__ import annotations

import json
import os
import signal
import sys

import numpy as np

import zarrkit
from zarrkit.storage import DirectoryStore
from zarrkit.storage.base import Store


class KillingStore(Store):
    """Passes everything to ``inner``; counts the changes (``set``/``delete``) and SIGKILLs its
    own process before making change number ``limit + 1`` (never when ``limit`` is None)."""

    def __init__(self, inner: Store, limit: int | None = None):
        self.inner = inner
        self.limit = limit
        self.changes = 0

    def _change(self) -> None:
        if self.limit is not None and self.changes >= self.limit:
            os.kill(os.getpid(), signal.SIGKILL)
        self.changes += 1

    def _get(self, key, byte_range):
        return self.inner.get(key, byte_range)

    def _set(self, key, value):
        self._change()
        self.inner.set(key, value)

    def _delete(self, key):
        self._change()
        self.inner.delete(key)

    def list_prefix(self, prefix):
        return self.inner.list_prefix(prefix)

    def list_dir(self, prefix=""):
        return self.inner.list_dir(prefix)


def resize_steps(shape: list[int]) -> list[tuple[str, object]]:
    """The sequence: shrink to a chunk boundary, grow back, append rows of -1."""
    rows, cols = shape
    return [("resize", (rows // 2, cols)), ("resize", (rows, cols)),
            ("append", np.full((rows // 2, cols), -1.0))]


def run_steps(z: zarrkit.Array, steps: list[tuple[str, object]]) -> None:
    for op, arg in steps:
        if op == "resize":
            z.resize(*arg)
        else:
            z.append(arg)


def run_resize(args: dict) -> None:
    kill_at = args["kill_at"]
    store = KillingStore(DirectoryStore(args["path"]), kill_at - 1 if kill_at else None)
    z = zarrkit.open_array(store, mode="r+")
    run_steps(z, resize_steps(list(z.shape)))
    print(store.changes, flush=True)


def partial_regions(shape: list[int]) -> list[tuple[slice, slice]]:
    """Regions crossing shard and chunk boundaries, none aligned with them."""
    rows, cols = shape
    return [(slice(3, rows - 5), slice(7, 19)), (slice(1, 17), slice(2, cols - 3)),
            (slice(9, rows), slice(0, 11)), (slice(0, 5), slice(13, cols))]


def run_partial(args: dict) -> None:
    z = zarrkit.open_array(args["path"], mode="r+")
    regions = partial_regions(list(z.shape))
    print("ready", flush=True)
    n = 0
    while True:
        n += 1
        z[regions[n % len(regions)]] = n
        print(n, flush=True)


MODES = {"resize": run_resize, "partial": run_partial}

if __name__ == "__main__":
    MODES[sys.argv[1]](json.loads(sys.argv[2]))
