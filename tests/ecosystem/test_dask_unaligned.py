"""Dask blocks that do not fit the chunks or shards of the array they are stored into.

:func:`zarrkit.dask.store` (and :func:`zarrkit.xarray.to_zarr`) regroup such blocks along the
array's storage grid, so each stored chunk — each shard of a sharded array — is written by
exactly one task, without any lock.  Checked against NumPy after every write:

* 20 rounds on the threaded scheduler and 20 on a ``distributed`` LocalCluster of two worker
  processes, each round a fresh random block layout written into a random region of a
  pre-filled sharded array (regular and rectilinear shards): no element lost;
* each write unit the region touches is stored exactly once (counted on the store);
* random block layouts, grids (v2 and v3 chunks, shards, rectilinear chunks and shards) and
  regions (hypothesis) on the threaded scheduler.
"""

from __future__ import annotations

import math
import os
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

da = pytest.importorskip("dask.array")

import zarrkit
import zarrkit.dask as zd
from zarrkit.storage import CountingStore, DirectoryStore

ROUNDS = 20
SHAPE = (61, 47)


def random_blocks(rng: np.random.Generator, n: int) -> tuple[int, ...]:
    """Random dask block sizes summing to ``n`` (1 to about n/3 each)."""
    sizes, left = [], n
    while left:
        s = int(rng.integers(1, max(2, n // 3) + 1))
        sizes.append(min(s, left))
        left -= sizes[-1]
    return tuple(sizes) or (0,)


def random_region(rng: np.random.Generator, shape: tuple[int, ...]) -> tuple[slice, ...]:
    out = []
    for n in shape:
        a, b = sorted(int(v) for v in rng.integers(0, n + 1, size=2))
        out.append(slice(a, max(b, a + 1)) if a < n else slice(n - 1, n))
    return tuple(out)


def random_edges(rng: np.random.Generator, n: int, unit: int) -> list[int]:
    """Rectilinear shard edges (multiples of the inner chunk ``unit``) covering ``n``."""
    edges: list[int] = []
    while sum(edges) < n:
        edges.append(unit * int(rng.integers(1, 5)))
    return edges


def make_round_array(store, rng: np.random.Generator, rnd: int):
    """A sharded array, pre-filled: regular shards on even rounds, rectilinear ones on odd."""
    inner = (int(rng.integers(2, 6)), int(rng.integers(2, 6)))
    if rnd % 2 == 0:
        shards = tuple(c * int(rng.integers(1, 4)) for c in inner)
    else:
        shards = [random_edges(rng, n, c) for n, c in zip(SHAPE, inner)]
    z = zarrkit.create_array(store, name=f"r{rnd}", shape=SHAPE, chunks=inner, shards=shards, dtype="i8",
                             fill_value=-1, zarr_format=3, write_empty_chunks=True, overwrite=True)
    before = np.arange(math.prod(SHAPE), dtype="i8").reshape(SHAPE)
    z[...] = before
    return z, before


def units_touched(z, region: tuple[slice, ...]) -> int:
    """How many stored objects (shards) ``region`` overlaps."""
    count = 1
    for r, d in zip(region, z.metadata.storage_grid.dims):
        count *= d.index(r.stop - 1) - d.index(r.start) + 1
    return count


class LoggingDirectoryStore(DirectoryStore):
    """A directory store that appends the key of every write, with the writing process's id,
    to a log file (one ``O_APPEND`` line per write, so worker processes can share it)."""

    def __init__(self, path: str, log: str):
        super().__init__(path)
        self.log = log

    def set(self, key, value):  # set_parts and set_many come here too in a subclass
        super().set(key, value)
        with open(self.log, "a") as f:
            f.write(f"{os.getpid()} {key}\n")

    def writes(self) -> list[tuple[int, str]]:
        with open(self.log) as f:
            lines = [line.split() for line in f.read().splitlines()]
        open(self.log, "w").close()
        return [(int(pid), key) for pid, key in lines]


def write_rounds(store, seed: int, **compute_kwargs) -> tuple[int, int]:
    """ROUNDS random unaligned writes into ``store``; returns (lost updates, rounds whose
    blocks cut the storage grid).  On a :class:`CountingStore` or a
    :class:`LoggingDirectoryStore`, also checks that every shard the region touches is stored
    exactly once (no two tasks wrote the same one)."""
    rng = np.random.default_rng(seed)
    lost = unaligned = 0
    for rnd in range(ROUNDS):
        z, expected = make_round_array(store, rng, rnd)
        region = random_region(rng, SHAPE)
        shape = tuple(r.stop - r.start for r in region)
        new = rng.integers(10**6, 10**7, size=shape)
        x = da.from_array(new, chunks=tuple(random_blocks(rng, n) for n in shape))
        unaligned += bool(zd.check_aligned(x.chunks, z, region))
        if isinstance(store, CountingStore):
            store.reset()
        if isinstance(store, LoggingDirectoryStore):
            store.writes()
        zd.store(x, z, region=region, **compute_kwargs)
        if isinstance(store, CountingStore):
            assert store.counts["set"] == units_touched(z, region), (rnd, x.chunks, z.shards, region)
        if isinstance(store, LoggingDirectoryStore):
            keys = [key for pid, key in store.writes() if pid != os.getpid()]
            assert len(keys) == len(set(keys)) == units_touched(z, region), (rnd, x.chunks, z.shards, region)
        expected[region] = new
        lost += int((zarrkit.open_array(store, path=f"r{rnd}", mode="r")[...] != expected).sum())
    return lost, unaligned


def test_rounds_threads_each_shard_written_once():
    lost, unaligned = write_rounds(CountingStore(zarrkit.MemoryStore()), seed=7, scheduler="threads")
    assert lost == 0
    assert unaligned >= ROUNDS // 2  # the rounds really did cut shards


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        processes=True, n_workers=2, threads_per_worker=2, dashboard_address=":0",
        worker_dashboard_address=None,
    ) as cluster, distributed.Client(cluster) as c:
        yield c


def test_rounds_distributed_processes(client, tmp_path):
    """Two worker processes (two threads each) write unaligned blocks into shared shards of a
    directory store: each shard the region touches is written once, by a worker, and no
    update is lost in any round."""
    pids = set(client.run(lambda: __import__("os").getpid()).values())
    assert len(pids) == 2
    t0 = time.perf_counter()
    store = LoggingDirectoryStore(str(tmp_path / "rounds.zarr"), str(tmp_path / "writes.log"))
    lost, unaligned = write_rounds(store, seed=11)
    elapsed = time.perf_counter() - t0
    print(f"{ROUNDS} rounds on 2 worker processes: {lost} lost updates, {unaligned} unaligned layouts, "
          f"{elapsed:.1f}s")
    assert lost == 0
    assert unaligned >= ROUNDS // 2  # the rounds really did cut shards


def test_to_zarr_unaligned_distributed(client, tmp_path):
    """xarray datasets with blocks cutting the shards, written by the workers, whole and
    into an unaligned region; read back by xarray + zarr-python."""
    xr = pytest.importorskip("xarray")
    import zarrkit.xarray as zx

    rng = np.random.default_rng(3)
    values = rng.random(SHAPE)
    ds = xr.Dataset({"v": (("y", "x"), values)}).chunk({"y": 7, "x": 9})
    path = str(tmp_path / "ds.zarr")
    zx.to_zarr(ds, path, zarr_format=3, encoding={"v": {"chunks": (5, 5), "shards": (10, 15)}})
    patch = rng.random((30, 20))
    zx.to_zarr(xr.Dataset({"v": (("y", "x"), patch)}).chunk({"y": 4, "x": 6}), path,
               region={"y": slice(13, 43), "x": slice(8, 28)})
    expected = values.copy()
    expected[13:43, 8:28] = patch
    back = xr.open_zarr(path)
    np.testing.assert_array_equal(back.v.values, expected)


# -- random layouts on the threaded scheduler -------------------------------------------------
@st.composite
def setups(draw):
    ndim = draw(st.integers(1, 2))
    shape = tuple(draw(st.integers(1, 30)) for _ in range(ndim))
    inner = tuple(draw(st.integers(1, 6)) for _ in range(ndim))
    kind = draw(st.sampled_from(["v2-chunks", "chunks", "shards", "rectilinear", "rectilinear-shards"]))
    shards = tuple(c * draw(st.integers(1, 4)) for c in inner)
    grid = []
    for n, c in zip(shape, inner):
        unit = c if kind == "rectilinear-shards" else 1
        edges = []
        while sum(edges) < n:
            edges.append(unit * draw(st.integers(1, 6)))
        grid.append(edges)
    region = []
    for n in shape:
        a = draw(st.integers(0, n - 1))
        region.append(slice(a, draw(st.integers(a + 1, n))))
    blocks = []
    for r in region:
        left, sizes = r.stop - r.start, []
        while left:
            sizes.append(draw(st.integers(1, left)))
            left -= sizes[-1]
        blocks.append(tuple(sizes))
    return shape, inner, kind, grid, shards, tuple(region), tuple(blocks), draw(st.integers(0, 2**32 - 1))


@settings(max_examples=60, deadline=None)
@given(setups())
def test_random_layouts_threads(setup):
    shape, inner, kind, grid, shards, region, blocks, seed = setup
    store = CountingStore(zarrkit.MemoryStore())
    kwargs = {"chunks": inner}
    if kind == "shards":
        kwargs["shards"] = shards
    elif kind == "rectilinear":
        kwargs["chunks"] = grid
    elif kind == "rectilinear-shards":
        kwargs["shards"] = grid
    z = zarrkit.create_array(store, shape=shape, dtype="i4", fill_value=-1, zarr_format=2 if kind == "v2-chunks" else 3,
                             write_empty_chunks=True, **kwargs)
    rng = np.random.default_rng(seed)
    expected = rng.integers(0, 1000, size=shape, dtype="i4")
    z[...] = expected
    new = rng.integers(1000, 2000, size=tuple(sum(b) for b in blocks), dtype="i4")
    x = da.from_array(new, chunks=blocks)
    aligned = zd.align_blocks(x, z, region)
    assert not zd.check_aligned(aligned.chunks, z, region)
    store.reset()
    zd.store(x, z, region=region, scheduler="threads")
    assert store.counts["set"] == units_touched(z, region)
    expected[region] = new
    np.testing.assert_array_equal(z[...], expected)
