"""Chunk grids: where the chunks of an array begin and end, asked one dimension at a time.

Indexing never computes chunk boundaries itself: it asks the grid's dimensions
(:class:`RegularDim`, :class:`RectilinearDim`) which chunk holds an index, where a chunk starts
and where its part inside the array stops.

A rectilinear dimension (the ``rectilinear`` grid of the zarr-extensions registry) is kept as
runs of equal edge lengths, never expanded: ``[[1, 10**12]]`` costs one run, not a trillion
entries.  The runs are two numpy arrays (:class:`Runs`), not Python tuples: a document listing
millions of different edges costs a few bytes per edge, a small multiple of the document
(tuples cost about 100 bytes an edge).

Examples
--------
>>> from zarrkit.metadata.grid import RegularGrid
>>> g = RegularGrid((10, 7), (4, 3))
>>> g.grid_shape
(3, 3)
>>> d = g.dims[0]
>>> d.index(9), d.start(2), d.stop(2), d.length(2)
(2, 8, 10, 4)
>>> r = RectilinearGrid((30, 23), ([(10, 3)], [(5, 2), (13, 1)]))
>>> r.grid_shape, r.chunk_shape((1, 2))
((3, 3), (10, 13))
>>> r.dims[1].index(12), r.dims[1].start(2)
(2, 10)
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

__all__ = [
    "RegularDim", "RectilinearDim", "ChunkGrid", "RegularGrid", "RectilinearGrid", "Runs", "runs_total",
    "as_runs", "longest_edges", "merge_run",
]

#: runs up to this many are looked up in Python lists (faster for one index than numpy);
#: more, in numpy arrays (8 bytes a run, not 36 or more)
LIST_RUNS = 4096


class Runs(Sequence[tuple[int, int]]):
    """The edge lengths of one rectilinear dimension: ``(length, count)`` runs, adjacent runs
    of equal lengths merged, kept as two numpy arrays (``lengths``, ``counts``).  A sequence of
    ``(length, count)`` pairs of Python ints, equal to any sequence of the same pairs."""

    __slots__ = ("counts", "lengths")

    lengths: np.ndarray
    counts: np.ndarray

    def __init__(self, pairs: Iterable[Sequence[int]] = ()):
        pairs = list(pairs)
        lengths = np.array([int(p[0]) for p in pairs], dtype=np.int64)
        counts = np.array([int(p[1]) for p in pairs], dtype=np.int64)
        self._set(lengths, counts)

    @classmethod
    def from_arrays(cls, lengths: Any, counts: Any) -> Runs:
        """Runs of ``lengths[i]`` repeated ``counts[i]`` times (int64 arrays; positive values
        whose sums fit in int64 are the caller's to check)."""
        runs = cls.__new__(cls)
        runs._set(np.asarray(lengths, dtype=np.int64), np.asarray(counts, dtype=np.int64))
        return runs

    def _set(self, lengths: np.ndarray, counts: np.ndarray) -> None:
        if len(lengths) > 1:
            changes = lengths[1:] != lengths[:-1]
            if np.count_nonzero(changes) + 1 < len(lengths):  # adjacent runs of one length: merged
                starts = np.concatenate(([0], np.flatnonzero(changes) + 1))
                lengths, counts = lengths[starts], np.add.reduceat(counts, starts)
            del changes
        self.lengths = lengths
        self.counts = counts
        self.lengths.flags.writeable = self.counts.flags.writeable = False

    def __len__(self) -> int:
        return len(self.lengths)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return Runs.from_arrays(self.lengths[i], self.counts[i])
        return int(self.lengths[i]), int(self.counts[i])

    def __iter__(self) -> Iterator[tuple[int, int]]:
        return zip(self.lengths.tolist(), self.counts.tolist())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Runs):
            if not isinstance(other, Sequence) or isinstance(other, str):
                return NotImplemented
            try:
                other = Runs(other)
            except (TypeError, ValueError, IndexError, OverflowError):
                return False
        return bool(np.array_equal(self.lengths, other.lengths) and np.array_equal(self.counts, other.counts))

    def __hash__(self) -> int:
        if len(self) <= LIST_RUNS:  # as the tuple of the same pairs
            return hash(tuple(self))
        return hash((self.lengths.tobytes(), self.counts.tobytes()))

    def __repr__(self) -> str:
        if len(self) > 8:
            return f"Runs({list(self[:4])} ... {len(self)} runs)"
        return f"Runs({list(self)})"

    def __reduce__(self) -> Any:
        return Runs.from_arrays, (self.lengths, self.counts)

    @property
    def total(self) -> int:
        """The sum of the edge lengths."""
        if len(self) <= LIST_RUNS:
            return sum(a * b for a, b in self)
        return int(np.dot(self.lengths, self.counts))


def as_runs(runs: Sequence[tuple[int, int]]) -> Runs:
    """``runs`` as :class:`Runs` (itself when it is one)."""
    return runs if isinstance(runs, Runs) else Runs(runs)


def runs_total(runs: Sequence[tuple[int, int]]) -> int:
    """The sum of the edge lengths of ``runs``."""
    if isinstance(runs, Runs):
        return runs.total
    return sum(length * count for length, count in runs)


def merge_run(runs: list[tuple[int, int]], length: int, count: int) -> tuple[int, int]:
    """The run to append for ``count`` edges of ``length``: the last run of ``runs`` (removed)
    extended when it has the same length."""
    if runs and runs[-1][0] == length:
        count += runs.pop()[1]
    return length, count


def longest_edges(chunk_shapes: Sequence[int | Runs]) -> tuple[int, ...]:
    """The longest edge along each dimension of a rectilinear grid's ``chunk_shapes``."""
    return tuple(
        e if isinstance(e, int)
        else (int(e.lengths.max()) if len(e) else 1) if isinstance(e, Runs)
        else max((n for n, _ in e), default=1)
        for e in chunk_shapes
    )


class RegularDim:
    """One dimension of a regular grid: chunks of ``chunk`` elements over ``size``; the last
    chunk may stick out of the array (its decoded length is still ``chunk``)."""

    __slots__ = ("chunk", "n", "size")

    def __init__(self, size: int, chunk: int):
        self.size: int = int(size)
        self.chunk: int = int(chunk)
        #: the number of chunks along the dimension
        self.n: int = -(-self.size // self.chunk)

    def index(self, i: int) -> int:
        """The chunk holding index ``i`` (``0 <= i < size``)."""
        return i // self.chunk

    def indices(self, arr: np.ndarray) -> np.ndarray:
        """:meth:`index` of every element of an integer array."""
        return arr // self.chunk

    def start(self, c: int) -> int:
        """The first index of chunk ``c``."""
        return c * self.chunk

    def stop(self, c: int) -> int:
        """One past the last index of chunk ``c`` inside the array."""
        return min((c + 1) * self.chunk, self.size)

    def length(self, c: int) -> int:
        """The length of chunk ``c`` as stored (edge chunks included)."""
        return self.chunk

    @property
    def max_length(self) -> int:
        """The longest chunk."""
        return self.chunk

    def __repr__(self) -> str:
        return f"RegularDim(size={self.size}, chunk={self.chunk})"


class RectilinearDim:
    """One dimension of a rectilinear grid: chunks of the lengths given by ``runs`` (pairs
    ``(length, count)``) over ``size``.  Their sum may exceed ``size``; chunks that begin at or
    after ``size`` are not part of the array."""

    __slots__ = ("_arrays", "_first", "_lengths", "_offset", "n", "runs", "size", "total")

    def __init__(self, size: int, runs: Sequence[tuple[int, int]]):
        self.size: int = int(size)
        self.runs = runs = as_runs(runs)
        lengths, counts = runs.lengths, runs.counts
        first: Any
        offset: Any
        if len(runs) <= LIST_RUNS:  # exact Python ints, and bisect on lists
            first, offset = [0], [0]  # the first chunk and first index of each run
            for length, count in runs:
                first.append(first[-1] + count)
                offset.append(offset[-1] + length * count)
            self._lengths: Any = lengths.tolist()
            self._arrays = (
                np.asarray(offset[:-1], dtype=np.int64), lengths, np.asarray(first[:-1], dtype=np.int64)
            )
        else:  # int64 (the parser refuses edges summing past it); no first chunks when one a run
            ones = bool((counts == 1).all())
            offset = np.zeros(len(runs) + 1, dtype=np.int64)
            np.cumsum(lengths if ones else lengths * counts, out=offset[1:])
            first = None
            if not ones:
                first = np.zeros(len(runs) + 1, dtype=np.int64)
                np.cumsum(counts, out=first[1:])
            self._lengths = lengths
            self._arrays = (offset[:-1], lengths, np.arange(len(runs)) if first is None else first[:-1])
        #: the sum of the edge lengths (at least ``size``)
        self.total: int = int(offset[-1])
        self._first = first
        self._offset = offset
        #: the number of chunks along the dimension that hold part of the array
        self.n: int = self.index(self.size - 1) + 1 if self.size else 0

    @staticmethod
    def _find(seq: Any, x: int) -> int:
        """The index of the last entry of sorted ``seq`` at most ``x``."""
        if isinstance(seq, list):
            return bisect.bisect_right(seq, x) - 1
        return int(np.searchsorted(seq, x, side="right")) - 1

    def index(self, i: int) -> int:
        r = self._find(self._offset, i)
        return int(self._first_of(r) + (i - self._offset[r]) // self._lengths[r])

    def indices(self, arr: np.ndarray) -> np.ndarray:
        offsets, lengths, first = self._arrays
        r = np.searchsorted(offsets, arr, side="right") - 1
        return (first[r] + (arr - offsets[r]) // lengths[r]).astype(np.intp, copy=False)

    def _first_of(self, r: int) -> int:
        return r if self._first is None else int(self._first[r])

    def _run(self, c: int) -> int:
        return c if self._first is None else self._find(self._first, c)

    def start(self, c: int) -> int:
        r = self._run(c)
        return int(self._offset[r] + (c - self._first_of(r)) * self._lengths[r])

    def stop(self, c: int) -> int:
        return min(self.start(c) + self.length(c), self.size)

    def length(self, c: int) -> int:
        return int(self._lengths[self._run(c)])

    @property
    def max_length(self) -> int:
        """The longest chunk holding part of the array (the first chunk when there is none;
        1 when the dimension has no chunks at all: a length 0 with an empty edge list, which
        the rectilinear grid's spec allows -- the edges sum to 0, covering the length)."""
        if not len(self.runs):
            return 1
        n = max(self.n, 1)
        return int(self.runs.lengths[: self._run(n - 1) + 1].max())

    def __repr__(self) -> str:
        return f"RectilinearDim(size={self.size}, runs={list(self.runs) if len(self.runs) <= 8 else self.runs})"


class ChunkGrid:
    """A chunk grid: one object per dimension answering where chunks are."""

    dims: tuple[RegularDim | RectilinearDim, ...]
    #: whether every chunk has the same stored shape
    regular: bool = True

    @property
    def ndim(self) -> int:
        return len(self.dims)

    @property
    def grid_shape(self) -> tuple[int, ...]:
        """The number of chunks along each dimension."""
        return tuple(d.n for d in self.dims)

    def chunk_shape(self, coords: Sequence[int]) -> tuple[int, ...]:
        """The stored shape of the chunk at grid ``coords``."""
        return tuple(d.length(c) for d, c in zip(self.dims, coords))

    def is_edge(self, coords: Sequence[int]) -> bool:
        """Whether the chunk at ``coords`` sticks out of the array."""
        return any(d.start(c) + d.length(c) > d.size for d, c in zip(self.dims, coords))

    @property
    def max_chunk_shape(self) -> tuple[int, ...]:
        """The largest edge along each dimension (of the chunks holding part of the array)."""
        return tuple(d.max_length for d in self.dims)

    # -- zarr-python 3's ChunkGrid (``zarr.experimental.ChunkGrid``) --------------------------
    @staticmethod
    def from_sizes(array_shape: Sequence[int] | int, chunk_sizes: Sequence[int | Sequence[int]]) -> ChunkGrid:
        """The grid of an array of ``array_shape`` whose chunks have, along each dimension, one
        edge length (an int: a regular dimension) or the edge length of each chunk in turn (a
        sequence: a rectilinear one, however equal its edges).

        Raises
        ------
        ValueError
            ``chunk_sizes`` of another number of dimensions than ``array_shape``.
        """
        shape = (int(array_shape),) if isinstance(array_shape, (int, np.integer)) else tuple(int(n) for n in array_shape)
        if len(shape) != len(chunk_sizes):
            raise ValueError(f"chunk_sizes: expected {len(shape)} dimensions (the array shape's), got {len(chunk_sizes)}")
        if all(isinstance(c, (int, np.integer)) for c in chunk_sizes):
            return RegularGrid(shape, [int(c) for c in chunk_sizes])  # type: ignore[arg-type]
        edges: list[int | Runs] = []
        for c in chunk_sizes:
            if isinstance(c, (int, np.integer)):
                edges.append(int(c))
                continue
            runs: list[tuple[int, int]] = []
            for length in c:
                runs.append(merge_run(runs, int(length), 1))
            edges.append(Runs(runs))
        return RectilinearGrid(shape, edges)

    @staticmethod
    def from_metadata(metadata: Any) -> ChunkGrid:
        """The grid of the objects an array's ``metadata`` stores: its chunks, or its shards."""
        return metadata.storage_grid  # type: ignore[no-any-return]

    @property
    def is_regular(self) -> bool:
        """Whether every chunk has the same stored shape (zarr-python 3's name of :attr:`regular`)."""
        return self.regular

    @property
    def chunk_sizes(self) -> tuple[tuple[int, ...], ...]:
        """Along each dimension, the length of each chunk's part inside the array."""
        return tuple(tuple(d.stop(c) - d.start(c) for c in range(d.n)) for d in self.dims)

    def get_nchunks(self) -> int:
        """How many chunks the grid has."""
        return math.prod(self.grid_shape)

    def all_chunk_coords(self, *, origin: Sequence[int] | None = None,
                         selection_shape: Sequence[int] | None = None) -> Iterator[tuple[int, ...]]:
        """The coordinates of the chunks from ``origin`` (default: the first chunk),
        ``selection_shape`` chunks along each dimension (default: to the end), in C order;
        made one at a time.

        Raises
        ------
        IndexError
            A selection reaching past the grid.
        """
        grid = self.grid_shape
        first = tuple(origin) if origin is not None else (0,) * len(grid)
        counts = tuple(selection_shape) if selection_shape is not None else tuple(g - o for o, g in zip(first, grid))
        for axis, (o, n, g) in enumerate(zip(first, counts, grid)):
            if o + n > g:
                raise IndexError(f"chunks {o} to {o + n} of axis {axis}: expected at most {g} chunks, got more")
        return _c_order([range(o, o + n) for o, n in zip(first, counts)])

    def iter_chunk_regions(self, *, origin: Sequence[int] | None = None,
                           selection_shape: Sequence[int] | None = None) -> Iterator[tuple[slice, ...]]:
        """The region of the array each chunk of :meth:`all_chunk_coords` holds, as slices."""
        for coords in self.all_chunk_coords(origin=origin, selection_shape=selection_shape):
            yield tuple(slice(d.start(c), d.stop(c), 1) for d, c in zip(self.dims, coords))


def _c_order(ranges: list[range]) -> Iterator[tuple[int, ...]]:
    """The points of the box ``ranges`` spans, in C order, one at a time (not as
    ``itertools.product``, which holds every range's values: 2**40 chunks along an axis)."""
    if any(not r for r in ranges):
        return
    point = [r.start for r in ranges]
    while True:
        yield tuple(point)
        for axis in reversed(range(len(ranges))):
            point[axis] += 1
            if point[axis] < ranges[axis].stop:
                break
            point[axis] = ranges[axis].start
        else:
            return


class RegularGrid(ChunkGrid):
    """The ``regular`` grid: every chunk has the shape ``chunks``."""

    def __init__(self, shape: Sequence[int], chunks: Sequence[int]):
        self.shape: tuple[int, ...] = tuple(int(s) for s in shape)
        self.chunks: tuple[int, ...] = tuple(int(c) for c in chunks)
        self.dims: tuple[RegularDim | RectilinearDim, ...] = tuple(RegularDim(s, c) for s, c in zip(self.shape, self.chunks))

    def __repr__(self) -> str:
        return f"RegularGrid(shape={self.shape}, chunks={self.chunks})"


class RectilinearGrid(ChunkGrid):
    """The ``rectilinear`` grid: per dimension, either one edge length repeated (an int) or
    runs of edge lengths."""

    regular = False

    def __init__(self, shape: Sequence[int], chunk_shapes: Sequence[int | Runs]):
        self.shape: tuple[int, ...] = tuple(int(s) for s in shape)
        self.chunk_shapes: tuple[int | Runs, ...] = tuple(chunk_shapes)
        self.dims: tuple[RegularDim | RectilinearDim, ...] = tuple(
            RegularDim(s, e) if isinstance(e, int) else RectilinearDim(s, e)
            for s, e in zip(self.shape, self.chunk_shapes)
        )

    def __repr__(self) -> str:
        return f"RectilinearGrid(shape={self.shape}, chunk_shapes={self.chunk_shapes})"
