"""Attacks on sharded reads by runs of stored inner chunks (``ShardedStore.get_runs``,
``ShardVersion._read``, ``_decode_runs``, ``place_box``, ``_digits``).

Shards are written by zarrkit or zarr-python, then rewritten by hand following the sharding
spec (chunk bytes, then an index of little-endian uint64 ``(offset, nbytes)`` pairs in C order
of the inner grid, with a crc32c of it when the array's ``index_codecs`` say so, at the end or
the start): inner chunks stored in C, Morton, reverse, colexicographic, random and bit-permuted
orders, orders that are Morton for a while and then not, gaps, padding, missing (EMPTY) chunks
in the middle of runs, duplicate and overlapping entries.  Every read -- whole, partial,
stepped, integer-indexed, orthogonal, by points, into non-contiguous ``out`` views, fields of
structured dtypes, F-ordered arrays, rectilinear shard grids, one and two threads, batches of
a few chunks -- must equal numpy on the values written, bit for bit.  Hostile indexes and
damaged shards must raise ChunkDecodeError naming the shard (or the inner chunk), never crash,
hang or read wrong values; a shard replaced (renamed over) while reads run is read whole from
one version.  Batches of a few chunks are asked for by setting the public ``RUN_BYTES`` of
``zarrkit.core.read`` (restored afterwards); zarr-python reads the hand-made shards as the check
that they are what the tests say.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import random
import threading
import time

import numcodecs
import numpy as np
import pytest
import zarr as zarr_python
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrkit
import zarrkit.core.read as read_mod
from zarrkit.codecs import BytesCodec, Crc32cCodec, ShardingCodec, TransposeCodec, ZstdCodec
from zarrkit.errors import ChunkDecodeError

EMPTY = 2**64 - 1
THREADS = (1, 2)

#: what zarr-python (the oracle) raises on a bad shard
ORACLE_ERRORS = (ValueError, RuntimeError, TypeError, IndexError, OverflowError)

# zarr-python, the oracle, warns while it reads the hostile indexes
pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")


# ---------------------------------------------------------------------------------------------
# writing shards by hand


class Files:
    """The files under a directory as a mapping of keys to bytes (read and written directly)."""

    def __init__(self, root):
        self.root = str(root)

    def _path(self, key):
        return os.path.join(self.root, *key.split("/"))

    def __contains__(self, key):
        return os.path.isfile(self._path(key))

    def __getitem__(self, key):
        with open(self._path(key), "rb") as f:
            return f.read()

    def __setitem__(self, key, value):
        with open(self._path(key), "wb") as f:
            f.write(bytes(value))


class Shards:
    """The shards of a sharded array in ``m`` (a mapping of keys to bytes), read and rewritten
    as the spec lays them out."""

    def __init__(self, m):
        self.m = m
        meta = json.loads(bytes(m["zarr.json"]))
        self.shape = tuple(meta["shape"])
        conf = meta["codecs"][0]["configuration"]
        self.inner = tuple(conf["chunk_shape"])
        self.crc = any(c["name"] == "crc32c" for c in conf["index_codecs"])
        self.at_start = conf.get("index_location", "end") == "start"
        grid = meta["chunk_grid"]
        if grid["name"] == "regular":
            self.edges = [[s] for s in grid["configuration"]["chunk_shape"]]
            self.regular = True
        else:
            self.edges = [e if isinstance(e, list) else [e] for e in grid["configuration"]["chunk_shapes"]]
            self.regular = False

    def shard_grid(self, sc):
        """Inner chunks per dimension of the shard at ``sc``."""
        return tuple((e[0] if self.regular else e[s]) // i for e, s, i in zip(self.edges, sc, self.inner))

    def shard_origin(self, sc):
        """Inner-grid coordinates of the first inner chunk of the shard at ``sc``."""
        if self.regular:
            return tuple(s * (e[0] // i) for s, e, i in zip(sc, self.edges, self.inner))
        return tuple(sum(e[:s]) // i for s, e, i in zip(sc, self.edges, self.inner))

    def shards(self):
        """``(key, shard coordinates, inner grid)`` of every stored shard."""
        counts = []
        for e, n in zip(self.edges, self.shape):
            if self.regular:
                counts.append(-(-n // e[0]))
            else:
                total, k = 0, 0
                while total < n:
                    total += e[k]
                    k += 1
                counts.append(k)
        for sc in itertools.product(*map(range, counts)):
            key = "c/" + "/".join(map(str, sc))
            if key in self.m:
                yield key, sc, self.shard_grid(sc)

    def index_nbytes(self, grid):
        return 16 * int(np.prod(grid)) + (4 if self.crc else 0)

    def read(self, key, grid):
        """``{inner coords: stored bytes or None}`` of a shard."""
        raw = bytes(self.m[key])
        n = self.index_nbytes(grid)
        ib = raw[:n] if self.at_start else raw[len(raw) - n :]
        idx = np.frombuffer(ib[: 16 * int(np.prod(grid))], dtype="<u8").reshape(*grid, 2)
        out = {}
        for c in itertools.product(*map(range, grid)):
            off, nb = (int(v) for v in idx[c])
            out[c] = None if off == EMPTY and nb == EMPTY else raw[off : off + nb]
        return out

    def stored_order(self, key, grid):
        """The inner chunks of a shard in the order they are stored."""
        raw = bytes(self.m[key])
        n = self.index_nbytes(grid)
        ib = raw[:n] if self.at_start else raw[len(raw) - n :]
        idx = np.frombuffer(ib[: 16 * int(np.prod(grid))], dtype="<u8").reshape(*grid, 2)
        cells = [c for c in itertools.product(*map(range, grid)) if int(idx[c][0]) != EMPTY]
        return sorted(cells, key=lambda c: int(idx[c][0]))

    def write(self, key, grid, body, entries):
        """Store a shard of ``body`` (its chunk bytes) and ``entries`` (``{coords: (offset in
        body, nbytes)}``, raw pairs taken as they are; the others EMPTY)."""
        n = self.index_nbytes(grid)
        shift = n if self.at_start else 0
        idx = np.full((*grid, 2), EMPTY, dtype="<u8")
        for c, (off, nb) in entries.items():
            idx[c] = (off + shift if off < EMPTY - shift else off, nb)
        ib = idx.tobytes()
        if self.crc:
            ib = bytes(numcodecs.CRC32C().encode(ib))
        self.m[key] = ib + bytes(body) if self.at_start else bytes(body) + ib

    def relayout(self, key, grid, order, *, gaps=(), pad=0, drop=(), dup=None):
        """Rewrite a shard with its stored chunks in ``order`` (coords not stored are skipped),
        7 junk bytes after the k-th chunk written for k in ``gaps``, ``pad`` junk bytes first,
        the chunks in ``drop`` left out (EMPTY) and ``dup`` (``{a: b}``) pointing chunk ``a``'s
        entry at chunk ``b``'s bytes."""
        blobs = self.read(key, grid)
        body = bytearray(b"\xab" * pad)
        entries = {}
        for k, c in enumerate(order):
            if blobs[c] is None or c in drop:
                continue
            entries[c] = (len(body), len(blobs[c]))
            body += blobs[c]
            if k in gaps:
                body += b"\xcd" * 7
        for a, b in (dup or {}).items():
            entries[a] = entries[b]
        self.write(key, grid, bytes(body), entries)
        return entries


def chunk_region(coords, inner, shape):
    return tuple(slice(c * i, min((c + 1) * i, n)) for c, i, n in zip(coords, inner, shape))


# ---------------------------------------------------------------------------------------------
# stored orders


def c_order(grid):
    return list(itertools.product(*map(range, grid)))


def colex_order(grid):
    return sorted(c_order(grid), key=lambda c: c[::-1])


def morton_order(grid):
    """zarr-python's Morton order: bits interleaved, dimension 0 lowest (over the enclosing
    power-of-two box, cells outside it skipped)."""
    bits = [max(0, (g - 1).bit_length()) for g in grid]

    def key(c):
        v = k = 0
        for b in range(max(bits, default=0)):
            for d in range(len(grid)):
                if b < bits[d]:
                    v |= ((c[d] >> b) & 1) << k
                    k += 1
        return v

    return sorted(c_order(grid), key=key)


def bit_order(grid, rng):
    """A random permutation of the bits of the chunks' coordinates (grid sides powers of two):
    the k-th bit of a chunk's stored place is bit ``perm[k]`` of its coordinates."""
    pairs = [(d, b) for d, g in enumerate(grid) for b in range(g.bit_length() - 1)]
    rng.shuffle(pairs)

    def key(c):
        return sum(((c[d] >> b) & 1) << k for k, (d, b) in enumerate(pairs))

    return sorted(c_order(grid), key=key)


def partial_bit_order(grid, rng):
    """Morton within 2^k boxes (the low bit of each dimension), the boxes in a random order
    (not a bit permutation of the high bits)."""
    cells = c_order(grid)
    boxes = sorted({tuple(c_ // 2 for c_ in c) for c in cells})
    rng.shuffle(boxes)
    rank = {b: i for i, b in enumerate(boxes)}
    low = {c: i for i, c in enumerate(morton_order(tuple(min(2, g) for g in grid)))}
    return sorted(cells, key=lambda c: (rank[tuple(c_ // 2 for c_ in c)], low[tuple(c_ % 2 for c_ in c)]))


def morton_then_swapped(grid, at):
    order = morton_order(grid)
    order[at], order[at + 1] = order[at + 1], order[at]
    return order


def make_order(kind, grid, rng):
    if kind == "C":
        return c_order(grid)
    if kind == "morton":
        return morton_order(grid)
    if kind == "reverse":
        return c_order(grid)[::-1]
    if kind == "morton-reverse":
        return morton_order(grid)[::-1]
    if kind == "colex":
        return colex_order(grid)
    if kind == "random":
        order = c_order(grid)
        rng.shuffle(order)
        return order
    if kind == "bits":
        if all(g & (g - 1) == 0 for g in grid):
            return bit_order(grid, rng)
        return morton_order(grid)
    if kind == "partial-bits":
        return partial_bit_order(grid, rng)
    if kind == "morton-then-swap":
        n = int(np.prod(grid))
        return morton_then_swapped(grid, max(0, n - 2)) if n > 1 else c_order(grid)
    if kind == "morton-swap-early":
        n = int(np.prod(grid))
        return morton_then_swapped(grid, min(4, n - 2)) if n > 1 else c_order(grid)
    raise AssertionError(kind)


# ---------------------------------------------------------------------------------------------
# helpers


def values(shape, dtype, seed=0):
    """Distinct-ish values (every chunk differs from every other)."""
    dtype = np.dtype(dtype)
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    if dtype.names:
        out = np.zeros(shape, dtype)
        for name in dtype.names:
            out[name] = values(shape, dtype[name], seed + 1)
        return out
    if dtype.kind == "f":
        v = rng.standard_normal(n).astype(dtype)
        v[:: max(1, n // 5)] = -0.0
        if n > 3:
            v[3] = np.nan
        return v.reshape(shape)
    if dtype.kind == "b":
        return (rng.random(n) < 0.5).reshape(shape)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -(2**31)), min(info.max, 2**31 - 1), n, endpoint=True).astype(dtype).reshape(shape)


def assert_same(got, want):
    """Bit-for-bit equality (shape, dtype and bytes)."""
    want = np.asarray(want)
    assert got.shape == want.shape
    assert got.dtype == want.dtype.newbyteorder("=") or got.dtype == want.dtype
    if got.dtype.names:  # field by field (a multi-field view has bytes of no field)
        assert got.dtype.names == want.dtype.names
        for name in got.dtype.names:
            assert_same(got[name], want[name])
        return
    want = want.astype(got.dtype, copy=False)
    assert np.ascontiguousarray(got).tobytes() == np.ascontiguousarray(want).tobytes()


@contextlib.contextmanager
def batches_of(chunks, chunk_nbytes):
    """Sharded runs decoded in batches of ``chunks`` inner chunks (the public RUN_BYTES)."""
    saved = read_mod.RUN_BYTES
    if chunks is not None:
        read_mod.RUN_BYTES = chunks * chunk_nbytes
    try:
        yield
    finally:
        read_mod.RUN_BYTES = saved


def create(store, shape, inner, shards, dtype, data, *, fill_value=0, order=None, codecs=None, checksum=False):
    """A sharded array holding ``data``; ``order='F'``: inner chunks stored in F order (a
    transpose codec reversing the axes first)."""
    kw = {"codecs": codecs, "chunks": shards} if codecs is not None else {
        "chunks": inner, "shards": shards, "compressors": [ZstdCodec(level=0, checksum=checksum)]}
    if order == "F" and codecs is None:
        kw["filters"] = [TransposeCodec(order=tuple(reversed(range(len(shape)))))]
    a = zarrkit.create_array(store, shape=shape, dtype=dtype, fill_value=fill_value, **kw)
    a[...] = data
    return a


def rewrite_all(sh, data, fill, rng, kind, *, gap_p=0.0, drop_p=0.0, dup_p=0.0, pad=0):
    """Rewrite every shard of ``sh`` with its chunks in ``kind`` order, with random gaps,
    missing chunks and duplicates; returns what a read must give."""
    expect = data.copy()
    for key, sc, grid in sh.shards():
        blobs = sh.read(key, grid)
        present = [c for c in c_order(grid) if blobs[c] is not None]
        order = [c for c in make_order(kind, grid, rng) if c in present]
        gaps = {k for k in range(len(order)) if rng.random() < gap_p}
        drop = {c for c in present if rng.random() < drop_p}
        origin = sh.shard_origin(sc)
        full = [c for c in present if c not in drop and all(
            (o + ci + 1) * i <= n for o, ci, i, n in zip(origin, c, sh.inner, sh.shape))]
        dup = {}
        if len(full) >= 2 and rng.random() < dup_p:
            a, b = rng.sample(full, 2)
            dup[a] = b
        sh.relayout(key, grid, order, gaps=gaps, pad=pad, drop=drop, dup=dup)
        for c in drop:
            g = tuple(o + ci for o, ci in zip(origin, c))
            expect[chunk_region(g, sh.inner, sh.shape)] = fill
        for a, b in dup.items():
            ga = tuple(o + ci for o, ci in zip(origin, a))
            gb = tuple(o + ci for o, ci in zip(origin, b))
            expect[chunk_region(ga, sh.inner, sh.shape)] = data[chunk_region(gb, sh.inner, sh.shape)]
    return expect


# ---------------------------------------------------------------------------------------------
# 1. stored orders

ORDER_KINDS = ["C", "morton", "reverse", "morton-reverse", "colex", "random", "bits", "partial-bits",
               "morton-then-swap", "morton-swap-early"]


@pytest.mark.parametrize("kind", ORDER_KINDS)
def test_stored_orders_read_as_written(tmp_path, kind):
    """A 3-D array in shards of 4x4x4 inner chunks (the last shard along dim 2 half outside the
    array), the chunks of every shard stored in ``kind`` order: whole reads, reads of
    complete-chunk sub-boxes of a shard, unaligned and stepped slices, integer indices, in
    batches of 2, 3, 4, 8 chunks or all, on one and two threads."""
    shape, inner, shards = (16, 12, 24), (2, 3, 4), (8, 12, 16)
    data = values(shape, "u2", 1)
    create(str(tmp_path), shape, inner, shards, "u2", data)
    sh = Shards(Files(tmp_path))
    rng = random.Random(kind)
    for key, _, grid in sh.shards():
        present = [c for c in c_order(grid) if sh.read(key, grid)[c] is not None]
        sh.relayout(key, grid, [c for c in make_order(kind, grid, rng) if c in present])
    arr = zarrkit.open_array(str(tmp_path), mode="r")
    sels = [
        Ellipsis,
        (slice(0, 4), slice(0, 6), slice(0, 8)),  # 2x2x2 chunks of the first shard
        (slice(4, 8), slice(0, 12), slice(0, 16)),  # half a shard along dim 0
        (slice(0, 8), slice(3, 12), slice(8, 16)),
        (slice(0, 16), slice(0, 12), slice(16, 24)),  # the shards half outside the array
        (slice(1, 15), slice(2, 11), slice(3, 23)),
        (slice(None, None, 2), slice(1, None, 3), slice(None)),
        (5, slice(None), slice(None)),
        (slice(None), 7, slice(4, 20)),
        (slice(None), slice(None), 13),
    ]
    nbytes = int(np.prod(inner)) * 2
    for per_batch in (None, 2, 3, 4, 8):
        with batches_of(per_batch, nbytes):
            for threads in THREADS:
                with zarrkit.config.set(threads=threads):
                    for sel in sels:
                        assert_same(arr[sel], data[sel])


@pytest.mark.parametrize("grid", [(4, 2, 8), (2, 2, 2, 2), (8, 4), (16,), (1, 4, 1, 2)])
def test_bit_permuted_orders_of_power_of_two_grids(grid):
    """Every kind of bit permutation (several random ones) of 1-D to 4-D power-of-two shard
    grids, one shard read whole, in halves and quarters."""
    inner = tuple([3, 2, 1, 2][: len(grid)])
    shards = tuple(g * i for g, i in zip(grid, inner))
    shape = shards
    data = values(shape, "i4", 2)
    for seed in range(4):
        store = zarrkit.MemoryStore()
        create(store, shape, inner, shards, "i4", data)
        sh = Shards(store)
        key, _, g = next(sh.shards())
        sh.relayout(key, g, bit_order(g, random.Random(seed)))
        arr = zarrkit.open_array(store, mode="r")
        for threads in THREADS:
            with zarrkit.config.set(threads=threads):
                assert_same(arr[...], data)
                half = tuple(slice(0, s // 2 or 1) for s in shape)
                assert_same(arr[half], data[half])
                other = tuple(slice(s // 2, s) for s in shape)
                assert_same(arr[other], data[other])


# ---------------------------------------------------------------------------------------------
# 2. gaps, padding, missing chunks, duplicate and overlapping entries


def _layout_cases():
    grid = (4, 4)
    m = morton_order(grid)
    return {
        "gap-after-every-chunk": dict(order=m, gaps=set(range(16))),
        "gap-mid-morton-run": dict(order=m, gaps={3, 9}),
        "padding-then-reverse": dict(order=c_order(grid)[::-1], pad=11),
        "empty-mid-run": dict(order=m, drop={m[5], m[6], m[11]}),
        "empty-first-and-last": dict(order=m, drop={m[0], m[-1]}),
        "only-one-stored": dict(order=m, drop=set(m[1:])),
        "duplicate-entry": dict(order=m, dup={(1, 1): (2, 3)}),
        "duplicate-of-missing-neighbour": dict(order=m, drop={(0, 1)}, dup={(0, 1): (0, 0)}),
        "many-duplicates": dict(order=m, dup={c: (3, 3) for c in m if c != (3, 3)}),
    }


LAYOUT_CASES = _layout_cases()


@pytest.mark.parametrize("case", sorted(LAYOUT_CASES))
def test_gaps_empties_duplicates(tmp_path, case):
    shape, inner, shards = (16, 20), (4, 5), (16, 20)
    data = values(shape, "f8", 3)
    fill = 7.5
    create(str(tmp_path), shape, inner, shards, "f8", data, fill_value=fill)
    sh = Shards(Files(tmp_path))
    key, _, grid = next(sh.shards())
    spec = LAYOUT_CASES[case]
    sh.relayout(key, grid, spec["order"], gaps=spec.get("gaps", ()), pad=spec.get("pad", 0),
                drop=spec.get("drop", ()), dup=spec.get("dup"))
    expect = data.copy()
    for c in spec.get("drop", ()):
        expect[chunk_region(c, inner, shape)] = fill
    for a, b in (spec.get("dup") or {}).items():
        expect[chunk_region(a, inner, shape)] = data[chunk_region(b, inner, shape)]
    # the hand-made shard is what zarr-python reads too
    assert_same(zarr_python.open_array(str(tmp_path), mode="r")[...], expect)
    arr = zarrkit.open_array(str(tmp_path), mode="r")
    for per_batch in (None, 3):
        with batches_of(per_batch, 160):
            for threads in THREADS:
                with zarrkit.config.set(threads=threads):
                    for sel in (Ellipsis, (slice(0, 8), slice(0, 10)), (slice(4, 16), slice(5, 20)), (slice(2, 13), 7)):
                        assert_same(arr[sel], expect[sel])


def test_overlapping_entries_interleave_runs(tmp_path):
    """Entries whose ranges overlap so that, sorted by offset, runs are cut in the middle:
    A=(0,a), C=(0,a), B=(a,b), D=(a,b) gives runs [A], [C, B], [D]; a chunk whose range lies
    inside a run of others; chunks stored twice, once in a run and once alone."""
    shape, inner = (8, 8), (2, 2)
    data = values(shape, "u2", 4)
    create(str(tmp_path), shape, inner, (8, 8), "u2", data)
    sh = Shards(Files(tmp_path))
    key, _, grid = next(sh.shards())
    blobs = sh.read(key, grid)
    body = bytearray()
    entries = {}
    placed = {}
    for c in c_order(grid):  # all chunks stored back to back in C order
        placed[c] = (len(body), len(blobs[c]))
        body += blobs[c]
    expect = data.copy()
    for c in c_order(grid):
        entries[c] = placed[c]
    # (0,1) and (1,1) point at the bytes of (0,0) and of (0,1): runs overlap
    entries[(1, 0)] = placed[(0, 0)]
    entries[(1, 1)] = placed[(0, 1)]
    expect[2:4, 0:2] = data[0:2, 0:2]
    expect[2:4, 2:4] = data[0:2, 2:4]
    # (3,3) points inside the run of row 2 (at the bytes of (2,2))
    entries[(3, 3)] = placed[(2, 2)]
    expect[6:8, 6:8] = data[4:6, 4:6]
    # a copy of (2,0)'s bytes appended alone, after a gap, used by (3,0)
    off = len(body) + 3
    body += b"\0\0\0" + blobs[(2, 0)]
    entries[(3, 0)] = (off, len(blobs[(2, 0)]))
    expect[6:8, 0:2] = data[4:6, 0:2]
    sh.write(key, grid, bytes(body), entries)
    assert_same(zarr_python.open_array(str(tmp_path), mode="r")[...], expect)
    arr = zarrkit.open_array(str(tmp_path), mode="r")
    for per_batch in (None, 2, 5):
        with batches_of(per_batch, 8):
            for threads in THREADS:
                with zarrkit.config.set(threads=threads):
                    for sel in (Ellipsis, (slice(2, 8), slice(0, 4)), (slice(1, 8, 2), slice(None))):
                        assert_same(arr[sel], expect[sel])


# ---------------------------------------------------------------------------------------------
# 3. shapes, dimensions, edges, layouts, dtypes and selections

CONFIGS = {
    "1d-grid8-edge": ((37,), (3,), (24,), "u1", None),
    "1d-grid5": ((30,), (2,), (10,), "i8", None),
    "2d-grid3x5-edges": ((20, 23), (3, 2), (9, 10), "f4", None),
    "2d-F-order": ((17, 19), (2, 3), (8, 12), "i2", "F"),
    "3d-edges": ((9, 10, 11), (2, 2, 3), (4, 4, 6), "u2", None),
    "3d-F-order": ((9, 10, 11), (2, 2, 3), (4, 4, 6), "f8", "F"),
    "4d": ((5, 6, 4, 7), (1, 2, 2, 3), (2, 4, 4, 6), "i4", None),
    "2d-structured": ((12, 14), (2, 3), (8, 6), [("a", "<i4"), ("b", "u1"), ("c", "<f8")], None),
    "2d-bool": ((12, 14), (3, 2), (6, 8), "bool", None),
}


def _selections(shape, rng):
    nd = len(shape)
    sels = [Ellipsis]
    for _ in range(3):
        sel = []
        for n in shape:
            lo = rng.randrange(n)
            sel.append(slice(lo, rng.randint(lo + 1, n), rng.choice([1, 1, 2, 3])))
        sels.append(tuple(sel))
    sels.append(tuple(rng.randrange(n) if d == 0 else slice(None) for d, n in enumerate(shape)))
    if nd > 1:
        sels.append(tuple(slice(None) if d == 0 else rng.randrange(n) for d, n in enumerate(shape)))
    sels.append(tuple(slice(None, None, -1) if d == nd - 1 else slice(None) for d in range(nd)))
    return sels


@pytest.mark.parametrize("name", sorted(CONFIGS))
@pytest.mark.parametrize("kind", ["morton", "random", "C"])
def test_shapes_layouts_and_selections(tmp_path, name, kind):
    shape, inner, shards, dtype, order = CONFIGS[name]
    dtype = np.dtype(dtype)
    data = values(shape, dtype, 5)
    fill = np.zeros((), dtype)[()] if dtype.names else np.array(3, dtype)[()]
    create(str(tmp_path), shape, inner, shards, dtype, data, fill_value=fill, order=order)
    rng = random.Random(f"{name}-{kind}")
    expect = rewrite_all(Shards(Files(tmp_path)), data, fill, rng, kind, gap_p=0.1, drop_p=0.1, dup_p=0.5)
    arr = zarrkit.open_array(str(tmp_path), mode="r")
    for threads in THREADS:
        with zarrkit.config.set(threads=threads):
            for sel in _selections(shape, rng):
                assert_same(arr[sel], expect[sel])
            # orthogonal: sorted arrays covering whole chunks, unsorted ones, boolean masks
            idx = tuple(np.arange(n) if d % 2 == 0 else np.array(sorted(rng.sample(range(n), max(1, n // 2))))
                        for d, n in enumerate(shape))
            assert_same(arr.oindex[idx], expect[np.ix_(*idx)])
            shuffled = tuple(np.array(rng.sample(range(n), n)) for n in shape)
            assert_same(arr.oindex[shuffled], expect[np.ix_(*shuffled)])
            masks = tuple(np.array([rng.random() < 0.6 for _ in range(n)]) | (np.arange(n) == 0) for n in shape)
            assert_same(arr.oindex[masks], expect[np.ix_(*[np.flatnonzero(m) for m in masks])])
            # points
            pts = tuple(np.array([rng.randrange(n) for _ in range(9)]) for n in shape)
            assert_same(arr.vindex[pts], expect[pts])
            # into non-contiguous views, of both memory orders and negative strides
            for make_out in (
                lambda: np.zeros(tuple(2 * n + 1 for n in shape), arr.dtype)[tuple(slice(1, None, 2) for _ in shape)],
                lambda: np.zeros(shape, arr.dtype, order="F"),
                lambda: np.zeros(shape, arr.dtype)[tuple(slice(None, None, -1) for _ in shape)],
            ):
                out = make_out()
                got = arr.get_basic_selection(Ellipsis, out=out)
                assert_same(out, expect)
                assert got is None or np.shares_memory(got, out)
            # a block of whole chunks into a view whose last axis is strided
            sub = tuple(slice(0, min(n, 2 * i)) for n, i in zip(shape, inner))
            sub_shape = tuple(s.stop for s in sub)
            out = np.zeros((*sub_shape[:-1], 2 * sub_shape[-1]), arr.dtype)[..., ::2]
            arr.get_basic_selection(sub, out=out)
            assert_same(out, expect[sub])
            if dtype.names:
                assert_same(arr.get_basic_selection(Ellipsis, fields="c"), expect["c"])
                assert_same(arr.get_basic_selection((slice(1, None), slice(0, 6)), fields=["a", "c"]),
                            expect[["a", "c"]][1:, 0:6])


def test_codec_chains_and_index_locations(tmp_path):
    """Inner chains zstd with checksum, big-endian bytes, transposes (reversing and not), a
    checksum after zstd; the index at the start or the end, with and without crc32c; chunks in
    a random order with gaps and padding."""
    shape = (9, 10, 11)
    data = values(shape, "u2", 6)
    chains = [
        [BytesCodec(), ZstdCodec(level=0, checksum=True)],
        [BytesCodec(endian="big"), ZstdCodec(level=3)],
        [TransposeCodec(order=(2, 1, 0)), BytesCodec(), ZstdCodec()],
        [TransposeCodec(order=(1, 0, 2)), BytesCodec(), ZstdCodec()],
        [BytesCodec(), ZstdCodec(), Crc32cCodec()],
    ]
    k = 0
    for chain in chains:
        for loc in ("start", "end"):
            for index_codecs in ([BytesCodec()], [BytesCodec(), Crc32cCodec()]):
                path = str(tmp_path / f"a{k}")
                k += 1
                codec = ShardingCodec(chunk_shape=(2, 2, 3), codecs=chain, index_codecs=index_codecs, index_location=loc)
                create(path, shape, None, (4, 4, 6), "u2", data, codecs=[codec])
                rng = random.Random(k)
                sh = Shards(Files(path))
                for key, _, grid in sh.shards():
                    present = [c for c in c_order(grid) if sh.read(key, grid)[c] is not None]
                    sh.relayout(key, grid, rng.sample(present, len(present)), gaps={0, 3}, pad=2)
                assert_same(zarr_python.open_array(path, mode="r")[...], data)
                arr = zarrkit.open_array(path, mode="r")
                for threads in THREADS:
                    with zarrkit.config.set(threads=threads):
                        assert_same(arr[...], data)
                        assert_same(arr[1:, 0:8, 3:], data[1:, 0:8, 3:])


def test_rectilinear_shards_in_any_order(tmp_path):
    """A rectilinear grid of shards (3, 2 and 1 inner chunks along a dimension) over regular
    inner chunks, each shard's chunks stored in reverse or random order."""
    shape = (30, 25)
    data = values(shape, "i4", 7)
    for k, kind in enumerate(["reverse", "random", "morton-reverse"]):
        path = str(tmp_path / f"r{k}")
        a = zarrkit.create_array(path, shape=shape, chunks=(5, 5), shards=[[15, 10, 5], [10, 15]], dtype="i4",
                                 compressors=[ZstdCodec(level=1)], fill_value=-1)
        a[...] = data
        expect = rewrite_all(Shards(Files(path)), data, -1, random.Random(k), kind, gap_p=0.2, drop_p=0.1, dup_p=0.5)
        with zarr_python.config.set({"array.rectilinear_chunks": True}):
            assert_same(zarr_python.open_array(path, mode="r")[...], expect)
        arr = zarrkit.open_array(path, mode="r")
        for threads in THREADS:
            with zarrkit.config.set(threads=threads):
                for sel in (Ellipsis, (slice(3, 28), slice(4, 24)), (slice(15, 25), slice(10, 25)), (slice(None, None, 3), 12)):
                    assert_same(arr[sel], expect[sel])


def test_zarr_python_writer_with_partial_writes_and_empty_chunks(tmp_path):
    """zarr-python writes shards (Morton order, chunks equal to the fill value not stored),
    then rewrites parts of them; zarrkit reads what numpy holds."""
    path = str(tmp_path / "z")
    rng = np.random.default_rng(8)
    z = zarr_python.create_array(path, shape=(50, 70), chunks=(4, 8), shards=(16, 32), dtype="i4",
                                 compressors=[{"name": "zstd", "configuration": {"level": 1, "checksum": False}}],
                                 fill_value=-1, config={"write_empty_chunks": False})
    x = np.full((50, 70), -1, "i4")
    for _ in range(6):
        r0, c0 = int(rng.integers(0, 40)), int(rng.integers(0, 60))
        r1, c1 = int(rng.integers(r0 + 1, 51)), int(rng.integers(c0 + 1, 71))
        v = rng.integers(0, 1 << 30, size=(r1 - r0, c1 - c0), dtype="i4")
        v[:: 3] = -1
        z[r0:r1, c0:c1] = v
        x[r0:r1, c0:c1] = v
    arr = zarrkit.open_array(path, mode="r")
    for per_batch in (None, 3):
        with batches_of(per_batch, 128):
            for threads in THREADS:
                with zarrkit.config.set(threads=threads):
                    assert_same(arr[...], x)
                    assert_same(arr[5:45, 3:67:2], x[5:45, 3:67:2])
                    assert_same(arr.oindex[[0, 1, 2, 3, 16, 17, 18, 19], :], x[[0, 1, 2, 3, 16, 17, 18, 19]])


def test_many_shards_small_batches_two_threads(tmp_path):
    """Many shards of many chunks, decoded in batches of 3 by two threads, again and again."""
    shape = (128, 128, 32)
    data = values(shape, "u2", 9)
    create(str(tmp_path), shape, (8, 8, 8), (32, 32, 32), "u2", data)
    rng = random.Random(9)
    sh = Shards(Files(tmp_path))
    for i, (key, _, grid) in enumerate(sh.shards()):
        kind = ["morton", "reverse", "random", "bits"][i % 4]
        sh.relayout(key, grid, make_order(kind, grid, rng), gaps={7} if i % 3 == 0 else ())
    arr = zarrkit.open_array(str(tmp_path), mode="r")
    for per_batch in (None, 3, 16):
        with batches_of(per_batch, 1024), zarrkit.config.set(threads=2):
            for _ in range(2):
                assert_same(arr[...], data)
                assert_same(arr[3:125, 8:120, 1:31], data[3:125, 8:120, 1:31])


# ---------------------------------------------------------------------------------------------
# 4. hostile indexes and damaged shards

SHAPE16 = (16, 16)


def _c_body(blobs, grid):
    body = bytearray()
    entries = {}
    for c in c_order(grid):
        entries[c] = (len(body), len(blobs[c]))
        body += blobs[c]
    return body, entries


def _frame(payload, content_size=True):
    return zstandard.ZstdCompressor(write_content_size=content_size).compress(payload)


def _beyond_end(body, e, blobs, ilen):
    e[(1, 1)] = (len(body) + ilen - 20, 100)


def _claims_too_much(body, e, blobs, ilen):
    e[(1, 1)] = (e[(1, 1)][0], len(body) + 1000)


def _huge_nbytes(body, e, blobs, ilen):
    e[(1, 1)] = (e[(1, 1)][0], 2**62)


def _nbytes_all_ones(body, e, blobs, ilen):
    e[(1, 1)] = (e[(1, 1)][0], EMPTY)


def _huge_offset(body, e, blobs, ilen):
    e[(1, 1)] = (2**63, 10)


def _wrapping_offset(body, e, blobs, ilen):
    e[(1, 1)] = (EMPTY - 10, 100)


def _zero_length(body, e, blobs, ilen):
    e[(1, 1)] = (e[(1, 1)][0], 0)


def _into_index(body, e, blobs, ilen):
    e[(1, 1)] = (len(body), 20)


def _short_frame(body, e, blobs, ilen):
    fr = _frame(b"\0" * 16)
    e[(1, 1)] = (len(body), len(fr))
    body += fr


def _long_frame(body, e, blobs, ilen):
    fr = _frame(b"\0" * 64)
    e[(1, 1)] = (len(body), len(fr))
    body += fr


def _two_chunks_in_one_entry(body, e, blobs, ilen):
    e[(1, 1)] = (e[(1, 1)][0], e[(1, 1)][1] + e[(1, 2)][1])


def _trailing_garbage(body, e, blobs, ilen):
    fr = blobs[(1, 1)] + b"\1\2\3\4\5"
    e[(1, 1)] = (len(body), len(fr))
    body += fr


def _garbage_bytes(body, e, blobs, ilen):
    off, n = e[(1, 1)]
    body[off : off + n] = bytes(range(n))


HOSTILE = [_beyond_end, _claims_too_much, _huge_nbytes, _nbytes_all_ones, _huge_offset, _wrapping_offset,
           _zero_length, _into_index, _short_frame, _long_frame, _two_chunks_in_one_entry, _trailing_garbage,
           _garbage_bytes]


def _hostile_shard(path, mutate):
    data = values(SHAPE16, "u2", 10)
    create(path, SHAPE16, (4, 4), SHAPE16, "u2", data)
    sh = Shards(Files(path))
    key, _, grid = next(sh.shards())
    blobs = sh.read(key, grid)
    body, entries = _c_body(blobs, grid)
    mutate(body, entries, blobs, sh.index_nbytes(grid))
    sh.write(key, grid, bytes(body), entries)
    return data


def _assert_refused(arr, sels, key):
    for threads in THREADS:
        with zarrkit.config.set(threads=threads):
            for sel in sels:
                with pytest.raises(ChunkDecodeError) as info:
                    arr[sel]
                assert info.value.key is not None and info.value.key.startswith(key), info.value
                assert key in str(info.value)


@pytest.mark.parametrize("mutate", HOSTILE, ids=lambda f: f.__name__.strip("_"))
def test_hostile_index_entry_is_refused(tmp_path, mutate):
    """An index entry of inner chunk (1, 1) that no writer makes, or bytes there that are not
    one zstd frame of the chunk's size: every read taking that chunk (alone, in a run, in a
    batch) raises ChunkDecodeError naming the shard, on one and two threads."""
    path = str(tmp_path)
    _hostile_shard(path, mutate)
    # zarr-python refuses it too (the shard is bad, not the reader)
    with pytest.raises(ORACLE_ERRORS):
        zarr_python.open_array(path, mode="r")[...]
    arr = zarrkit.open_array(path, mode="r")
    sels = [Ellipsis, (slice(0, 8), slice(0, 8)), (slice(4, 8), slice(4, 8)), (slice(4, 5), slice(4, 5)),
            (slice(4, 12), slice(None, None, 2))]
    for per_batch in (None, 2):
        with batches_of(per_batch, 32):
            _assert_refused(arr, sels, "c/0/0")


def test_half_empty_entry_is_refused(tmp_path):
    """An entry whose offset is 2^64-1 but whose length is not (or the other way round) is
    no writer's: refused, not read as a chunk not stored."""
    path = str(tmp_path)

    def half_empty(body, e, blobs, ilen):
        e[(1, 1)] = (EMPTY, 10)

    _hostile_shard(path, half_empty)
    with pytest.raises(ORACLE_ERRORS):  # zarr-python: only (2**64-1, 2**64-1) is an empty chunk
        zarr_python.open_array(path, mode="r")[...]
    arr = zarrkit.open_array(path, mode="r")
    _assert_refused(arr, [Ellipsis, (slice(4, 8), slice(4, 8))], "c/0/0")


SKIPPABLE = b"\x50\x2a\x4d\x18" + (4).to_bytes(4, "little") + b"abcd"
ZSTD_STREAMS = {
    "no-content-size": lambda b: _frame(b, False),
    "content-checksum": lambda b: zstandard.ZstdCompressor(write_checksum=True).compress(b),
    "two-frames-no-sizes": lambda b: _frame(b[:16], False) + _frame(b[16:], False),
    "skippable-frame-after": lambda b: _frame(b) + SKIPPABLE,
    "level-19": lambda b: zstandard.ZstdCompressor(level=19).compress(b),
}
#: zstd streams that are one frame of the chunk's size preceded or followed by other frames
MULTI_FRAME_STREAMS = {
    "two-frames-with-sizes": lambda b: _frame(b[:16]) + _frame(b[16:]),
    "skippable-frame-first": lambda b: SKIPPABLE + _frame(b),
    "empty-frame-first": lambda b: _frame(b"") + _frame(b),
}


def _streams_shard(path, make, victims):
    """Chunks ``victims`` of a (16, 16) shard of (4, 4) u2 chunks stored as ``make(bytes)``,
    in C order between ordinary frames; returns the values written."""
    data = values(SHAPE16, "u2", 15)
    create(path, SHAPE16, (4, 4), SHAPE16, "u2", data)
    sh = Shards(Files(path))
    key, _, grid = next(sh.shards())
    blobs = sh.read(key, grid)
    body = bytearray()
    entries = {}
    for c in c_order(grid):
        fr = make(data[chunk_region(c, (4, 4), SHAPE16)].tobytes()) if c in victims else blobs[c]
        entries[c] = (len(body), len(fr))
        body += fr
    sh.write(key, grid, bytes(body), entries)
    return data


def _assert_reads(path, data):
    assert_same(zarr_python.open_array(path, mode="r")[...], data)
    arr = zarrkit.open_array(path, mode="r")
    for threads in THREADS:
        with zarrkit.config.set(threads=threads):
            for sel in (Ellipsis, (slice(4, 8), slice(4, 12)), (slice(4, 8), slice(4, 8)), (slice(2, 14), slice(3, 15))):
                assert_same(arr[sel], data[sel])


@pytest.mark.parametrize("stream", sorted(ZSTD_STREAMS))
def test_zstd_streams_other_than_one_sized_frame_in_a_run(tmp_path, stream):
    """Chunks in the middle of a run stored as valid zstd streams that are not exactly one
    frame declaring the chunk's size: decoded on their own, read as written."""
    data = _streams_shard(str(tmp_path), ZSTD_STREAMS[stream], {(1, 1), (1, 2), (3, 3)})
    _assert_reads(str(tmp_path), data)


@pytest.mark.parametrize("stream", sorted(MULTI_FRAME_STREAMS))
def test_multi_frame_zstd_chunks_read(tmp_path, stream):
    """A chunk stored as valid zstd of several frames (a skippable or empty frame first, or
    two frames declaring half the chunk each) reads as zarr-python reads it: the first
    frame's size is not the chunk's."""
    data = _streams_shard(str(tmp_path), MULTI_FRAME_STREAMS[stream], {(1, 1), (1, 2)})
    _assert_reads(str(tmp_path), data)


@pytest.mark.parametrize("victim", [(0, 0), (2, 1), (3, 3)])
def test_corrupt_frame_in_a_run_names_its_chunk(tmp_path, victim):
    """zstd frames with checksums stored back to back (Morton order); one byte of one frame's
    payload flipped: the run's joint decode fails and the error names that inner chunk."""
    path = str(tmp_path)
    data = values(SHAPE16, "u2", 11)
    create(path, SHAPE16, (4, 4), SHAPE16, "u2", data, checksum=True)
    sh = Shards(Files(path))
    key, _, grid = next(sh.shards())
    blobs = sh.read(key, grid)
    order = morton_order(grid)
    body = bytearray()
    entries = {}
    for c in order:
        entries[c] = (len(body), len(blobs[c]))
        body += blobs[c]
    off, n = entries[victim]
    body[off + n - 6] ^= 0x5A  # inside the last block, before the 4-byte checksum
    sh.write(key, grid, bytes(body), entries)
    with pytest.raises(ORACLE_ERRORS):
        zarr_python.open_array(path, mode="r")[...]
    arr = zarrkit.open_array(path, mode="r")
    want = "c/0/0@" + ".".join(map(str, victim))
    for threads in THREADS:
        with zarrkit.config.set(threads=threads):
            with pytest.raises(ChunkDecodeError) as info:
                arr[...]
            assert info.value.key == want, info.value
            # the rows of chunks without it still read
            others = (slice(0, 4 * victim[0]) if victim[0] else slice(4, 16), slice(None))
            assert_same(arr[others], data[others])


@pytest.mark.parametrize("damage", ["truncated-half", "no-index", "empty-file", "index-crc", "start-index-truncated-tail"])
def test_damaged_shard_is_refused(tmp_path, damage):
    path = str(tmp_path)
    data = values(SHAPE16, "u2", 12)
    if damage == "start-index-truncated-tail":
        codec = ShardingCodec(chunk_shape=(4, 4), codecs=[BytesCodec(), ZstdCodec()], index_codecs=[BytesCodec()],
                              index_location="start")
        create(path, SHAPE16, None, SHAPE16, "u2", data, codecs=[codec])
    else:
        create(path, SHAPE16, (4, 4), SHAPE16, "u2", data)
    files = Files(path)
    raw = bytearray(files["c/0/0"])
    if damage in ("truncated-half", "start-index-truncated-tail"):
        raw = raw[: len(raw) // 2]
    elif damage == "no-index":
        raw = raw[: len(raw) - (16 * 16 + 4)]
    elif damage == "empty-file":
        raw = bytearray()
    elif damage == "index-crc":
        raw[-30] ^= 1
    files["c/0/0"] = raw
    arr = zarrkit.open_array(path, mode="r")
    _assert_refused(arr, [Ellipsis, (slice(0, 8), slice(4, 16))], "c/0/0")


# ---------------------------------------------------------------------------------------------
# 5. a shard replaced while it is read


def _two_versions(path):
    """Two versions of every shard (different values, different stored orders and sizes)."""
    shape = (32, 32)
    x = values(shape, "u2", 13)
    y = values(shape, "u2", 14)
    a = create(path, shape, (4, 4), (16, 16), "u2", x)
    files = Files(path)
    sh = Shards(files)
    keys = [k for k, _, _ in sh.shards()]
    versions = {"x": {k: files[k] for k in keys}}
    a[...] = y
    for key, _, grid in sh.shards():
        sh.relayout(key, grid, c_order(grid)[::-1], pad=5, gaps={2, 9})
    versions["y"] = {k: files[k] for k in keys}
    return x, y, keys, versions


def _per_shard_is_one_version(r, x, y):
    for i in range(2):
        for j in range(2):
            s = (slice(16 * i, 16 * i + 16), slice(16 * j, 16 * j + 16))
            assert np.array_equal(r[s], x[s]) or np.array_equal(r[s], y[s]), s


def _read_while(write_step, arr, seconds, read):
    """Run ``write_step`` again and again (its step count passed) on a thread while ``read(arr,
    threads)`` runs with one and two threads for ``seconds``; the number of reads.  The
    writer's errors fail the test."""
    stop = threading.Event()
    errors = []

    def writer():
        k = 0
        try:
            while not stop.is_set():
                write_step(k)
                k += 1
        except Exception as exc:  # noqa: BLE001 (reported below)
            errors.append(exc)

    t = threading.Thread(target=writer)
    t.start()
    reads = 0
    try:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for threads in THREADS:
                with zarrkit.config.set(threads=threads):
                    read(arr, threads)
                    reads += 1
    finally:
        stop.set()
        t.join(10)
    assert not t.is_alive() and not errors
    return reads


def test_shard_renamed_over_while_read(tmp_path):
    """A writer renames new versions over every shard again and again while reads run: each
    shard of every read comes whole from one version."""
    path = str(tmp_path)
    x, y, keys, versions = _two_versions(path)

    def write_step(k):
        for key in keys:
            target = os.path.join(path, *key.split("/"))
            with open(target + ".new", "wb") as f:
                f.write(versions["xy"[k % 2]][key])
            os.replace(target + ".new", target)

    arr = zarrkit.open_array(path, mode="r")
    assert _read_while(write_step, arr, 1.5, lambda a, _: _per_shard_is_one_version(a[...], x, y)) > 10


def test_shard_rewritten_in_place_while_read(tmp_path):
    """A writer truncates and rewrites every shard in place again and again: reads either
    succeed or raise ChunkDecodeError naming a shard or inner chunk -- nothing else, no hang."""
    path = str(tmp_path)
    x, y, keys, versions = _two_versions(path)

    def write_step(k):
        for key in keys:
            with open(os.path.join(path, *key.split("/")), "wb") as f:
                f.write(versions["xy"[k % 2]][key])

    def read(a, _):
        try:
            a[...]
        except ChunkDecodeError as exc:
            assert exc.key is not None and exc.key.startswith("c/"), exc

    assert _read_while(write_step, zarrkit.open_array(path, mode="r"), 1.0, read) > 10
    # once the writer is done, the last version reads whole
    arr = zarrkit.open_array(path, mode="r")
    _per_shard_is_one_version(arr[...], x, y)


def test_zarrkit_writer_replacing_shards_while_read():
    """zarrkit rewrites every shard of an array in a MemoryStore again and again while another
    array object reads it: each shard of every read is one version, whole."""
    store = zarrkit.MemoryStore()
    shape = (32, 32)
    x = values(shape, "u2", 16)
    y = values(shape, "u2", 17)
    w = create(store, shape, (4, 4), (16, 16), "u2", x)

    def write_step(k):
        w[...] = x if k % 2 else y

    arr = zarrkit.open_array(store, mode="r")
    assert _read_while(write_step, arr, 1.0, lambda a, _: _per_shard_is_one_version(a[...], x, y)) > 10


# ---------------------------------------------------------------------------------------------
# 6. property: random arrays, shard grids, stored orders, selections


@st.composite
def setups(draw):
    nd = draw(st.integers(1, 3))
    grid = [draw(st.sampled_from([1, 2, 3, 4, 5])) for _ in range(nd)]
    while int(np.prod(grid)) > 32:
        grid[draw(st.integers(0, nd - 1))] = 1
    inner = tuple(draw(st.integers(1, 4)) for _ in range(nd))
    shards = tuple(g * i for g, i in zip(grid, inner))
    shape = tuple(draw(st.integers(1, 2 * s)) for s in shards)
    sel = []
    for n in shape:
        if draw(st.integers(0, 5)) == 0:
            sel.append(draw(st.integers(0, n - 1)))
        else:
            lo = draw(st.integers(0, n - 1))
            hi = draw(st.integers(lo + 1, n))
            sel.append(slice(lo, hi, draw(st.sampled_from([1, 1, 1, 2, 3]))))
    return {
        "shape": shape, "inner": inner, "shards": shards, "sel": tuple(sel),
        "dtype": draw(st.sampled_from(["u1", "<i2", ">i4", "f8"])),
        "order": draw(st.sampled_from([None, None, "F"])),
        "kind": draw(st.sampled_from(ORDER_KINDS)),
        "gap_p": draw(st.sampled_from([0.0, 0.2])),
        "drop_p": draw(st.sampled_from([0.0, 0.0, 0.2])),
        "dup_p": draw(st.sampled_from([0.0, 0.5])),
        "pad": draw(st.sampled_from([0, 3])),
        "per_batch": draw(st.sampled_from([None, None, 2, 3, 5])),
        "threads": draw(st.sampled_from(THREADS)),
        "seed": draw(st.integers(0, 2**16)),
    }


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(setups())
def test_property_reads_equal_numpy(s):
    store = zarrkit.MemoryStore()
    dtype = np.dtype(s["dtype"])
    data = values(s["shape"], dtype, s["seed"])
    fill = np.array(9, dtype)[()]
    create(store, s["shape"], s["inner"], s["shards"], dtype, data, fill_value=fill, order=s["order"])
    rng = random.Random(s["seed"])
    expect = rewrite_all(Shards(store), data, fill, rng, s["kind"], gap_p=s["gap_p"], drop_p=s["drop_p"],
                         dup_p=s["dup_p"], pad=s["pad"])
    arr = zarrkit.open_array(store, mode="r")
    nbytes = int(np.prod(s["inner"])) * dtype.itemsize
    with batches_of(s["per_batch"], nbytes), zarrkit.config.set(threads=s["threads"]):
        assert_same(arr[...], expect)
        assert_same(arr[s["sel"]], expect[s["sel"]])
        pts = tuple(np.array([rng.randrange(n) for _ in range(6)]) for n in s["shape"])
        assert_same(arr.vindex[pts], expect[pts])


@pytest.mark.parametrize("stream", sorted(MULTI_FRAME_STREAMS))
def test_multi_frame_zstd_chunk_files_read(tmp_path, stream):
    """The same streams as the chunk files of an array without shards, read whole and in
    part, on one and two threads."""
    path = str(tmp_path)
    data = values(SHAPE16, "u2", 16)
    zarrkit.create_array(store=path, shape=SHAPE16, chunks=(4, 4), dtype="u2", fill_value=0,
                         compressors=[zarrkit.codecs.ZstdCodec(level=0)])[...] = data
    for c in ((1, 1), (3, 0)):
        with open(os.path.join(path, "c", *map(str, c)), "wb") as f:
            f.write(MULTI_FRAME_STREAMS[stream](data[chunk_region(c, (4, 4), SHAPE16)].tobytes()))
    _assert_reads(path, data)
