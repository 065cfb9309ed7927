"""Chunk grids: where the chunks of an array begin and end, asked one dimension at a time.

Indexing never computes chunk boundaries itself: it asks the grid's dimensions
(:class:`RegularDim`, :class:`RectilinearDim`) which chunk holds an index, where a chunk starts
and where its part inside the array stops.

A rectilinear dimension (the ``rectilinear`` grid of the zarr-extensions registry) is kept as
runs of equal edge lengths, never expanded: ``[[1, 10**12]]`` costs one run, not a trillion
entries.

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
from collections.abc import Sequence

import numpy as np

__all__ = [
    "RegularDim", "RectilinearDim", "ChunkGrid", "RegularGrid", "RectilinearGrid", "Runs", "runs_total",
    "longest_edges", "merge_run",
]

#: the edge lengths of one rectilinear dimension: ``(length, count)`` runs
Runs = tuple[tuple[int, int], ...]


def runs_total(runs: Runs) -> int:
    """The sum of the edge lengths of ``runs``."""
    return sum(length * count for length, count in runs)


def merge_run(runs: list[tuple[int, int]], length: int, count: int) -> tuple[int, int]:
    """The run to append for ``count`` edges of ``length``: the last run of ``runs`` (removed)
    extended when it has the same length."""
    if runs and runs[-1][0] == length:
        count += runs.pop()[1]
    return length, count


def longest_edges(chunk_shapes: Sequence[int | Runs]) -> tuple[int, ...]:
    """The longest edge along each dimension of a rectilinear grid's ``chunk_shapes``."""
    return tuple(e if isinstance(e, int) else max((n for n, _ in e), default=1) for e in chunk_shapes)


class RegularDim:
    """One dimension of a regular grid: chunks of ``chunk`` elements over ``size``; the last
    chunk may stick out of the array (its decoded length is still ``chunk``)."""

    __slots__ = ("chunk", "n", "size")

    def __init__(self, size: int, chunk: int):
        self.size = int(size)
        self.chunk = int(chunk)
        #: the number of chunks along the dimension
        self.n = -(-self.size // self.chunk)

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

    __slots__ = ("_arrays", "_first", "_offset", "n", "runs", "size", "total")

    def __init__(self, size: int, runs: Runs):
        self.size = int(size)
        self.runs = runs
        first, offset = [0], [0]  # the first chunk and first index of each run
        for length, count in runs:
            first.append(first[-1] + count)
            offset.append(offset[-1] + length * count)
        #: the sum of the edge lengths (at least ``size``)
        self.total = offset[-1]
        self._first = first
        self._offset = offset
        #: what :meth:`indices` looks up: run offsets, lengths and first chunks
        self._arrays = (
            np.asarray(offset[:-1], dtype=np.int64),
            np.asarray([length for length, _ in runs], dtype=np.int64),
            np.asarray(first[:-1], dtype=np.int64),
        )
        #: the number of chunks along the dimension that hold part of the array
        self.n = self.index(self.size - 1) + 1 if self.size else 0

    def index(self, i: int) -> int:
        r = bisect.bisect_right(self._offset, i) - 1
        return self._first[r] + (i - self._offset[r]) // self.runs[r][0]

    def indices(self, arr: np.ndarray) -> np.ndarray:
        offsets, lengths, first = self._arrays
        r = np.searchsorted(offsets, arr, side="right") - 1
        return (first[r] + (arr - offsets[r]) // lengths[r]).astype(np.intp, copy=False)

    def _run(self, c: int) -> int:
        return bisect.bisect_right(self._first, c) - 1

    def start(self, c: int) -> int:
        r = self._run(c)
        return self._offset[r] + (c - self._first[r]) * self.runs[r][0]

    def stop(self, c: int) -> int:
        return min(self.start(c) + self.length(c), self.size)

    def length(self, c: int) -> int:
        return self.runs[self._run(c)][0]

    @property
    def max_length(self) -> int:
        """The longest chunk holding part of the array (the first chunk when there is none)."""
        n = max(self.n, 1)
        return max(length for (length, _), first in zip(self.runs, self._first) if first < n)

    def __repr__(self) -> str:
        return f"RectilinearDim(size={self.size}, runs={list(self.runs)})"


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


class RegularGrid(ChunkGrid):
    """The ``regular`` grid: every chunk has the shape ``chunks``."""

    def __init__(self, shape: Sequence[int], chunks: Sequence[int]):
        self.shape = tuple(int(s) for s in shape)
        self.chunks = tuple(int(c) for c in chunks)
        self.dims = tuple(RegularDim(s, c) for s, c in zip(self.shape, self.chunks))

    def __repr__(self) -> str:
        return f"RegularGrid(shape={self.shape}, chunks={self.chunks})"


class RectilinearGrid(ChunkGrid):
    """The ``rectilinear`` grid: per dimension, either one edge length repeated (an int) or
    runs of edge lengths."""

    regular = False

    def __init__(self, shape: Sequence[int], chunk_shapes: Sequence[int | Runs]):
        self.shape = tuple(int(s) for s in shape)
        self.chunk_shapes = tuple(chunk_shapes)
        self.dims = tuple(
            RegularDim(s, e) if isinstance(e, int) else RectilinearDim(s, e)
            for s, e in zip(self.shape, self.chunk_shapes)
        )

    def __repr__(self) -> str:
        return f"RectilinearGrid(shape={self.shape}, chunk_shapes={self.chunk_shapes})"
