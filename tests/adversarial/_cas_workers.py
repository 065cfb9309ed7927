"""Worker processes of the concurrent-writer tests: each opens the array itself (as another
machine would), with no synchronizer, and runs two threads of writes."""

from __future__ import annotations

import sys
import threading

import numpy as np

import zarrkit


def pieces(path: str, wid: int, nproc: int, piece: int) -> None:
    """Thread ``t`` of worker ``wid`` writes every piece ``i`` with ``i % (2 * nproc) ==
    2 * wid + t``: disjoint, unaligned pieces of one array, each written once."""
    z = zarrkit.open_array(path, mode="r+")
    n = z.shape[0] // piece

    def run(t: int) -> None:
        for i in range(2 * wid + t, n, 2 * nproc):
            z[i * piece : (i + 1) * piece] = np.arange(i * piece, (i + 1) * piece) + 1

    threads = [threading.Thread(target=run, args=(t,)) for t in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()


def appends(path: str, wid: int, rounds: int) -> None:
    """Two threads each append ``rounds`` rows tagged with their writer and set an attribute
    per row."""
    z = zarrkit.open_array(path, mode="r+")

    def run(t: int) -> None:
        for k in range(rounds):
            tag = wid * 1000 + t * 100 + k
            z.append(np.array([tag]))
            z.attrs[f"w{tag}"] = k

    threads = [threading.Thread(target=run, args=(t,)) for t in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()


def creations(path: str, wid: int, names: int) -> None:
    """Create arrays ``n0``... with ``overwrite=False`` filled with this writer's number;
    print the names this writer was told it created."""
    root = zarrkit.open_group(path, mode="a")
    made = []
    for n in range(names):
        try:
            root.create_array(f"n{n}", data=np.full(8, wid, "i4"), chunks=(4,), overwrite=False)
        except zarrkit.errors.ContainsArrayError:
            continue
        made.append(n)
    print(" ".join(map(str, made)))


if __name__ == "__main__":
    kind, path, wid, *rest = sys.argv[1:]
    if kind == "pieces":
        pieces(path, int(wid), int(rest[0]), int(rest[1]))
    elif kind == "creations":
        creations(path, int(wid), int(rest[0]))
    else:
        appends(path, int(wid), int(rest[0]))
