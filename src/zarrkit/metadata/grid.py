"""Chunk grids: where the chunks of an array begin and end, asked one dimension at a time.

Indexing never computes chunk boundaries itself: it asks the grid's dimensions
(:class:`RegularDim`) which chunk holds an index, where a chunk starts and where its part inside
the array stops.

Examples
--------
>>> from zarrkit.metadata.grid import RegularGrid
>>> g = RegularGrid((10, 7), (4, 3))
>>> g.grid_shape
(3, 3)
>>> d = g.dims[0]
>>> d.index(9), d.start(2), d.stop(2), d.length(2)
(2, 8, 10, 4)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["RegularDim", "RegularGrid", "ChunkGrid"]


class RegularDim:
    """One dimension of a regular grid: chunks of ``chunk`` elements over ``size``; the last
    chunk may stick out of the array (its decoded length is still ``chunk``)."""

    __slots__ = ("size", "chunk", "n")

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

    def __repr__(self) -> str:
        return f"RegularDim(size={self.size}, chunk={self.chunk})"


class ChunkGrid:
    """A chunk grid: one object per dimension answering where chunks are."""

    dims: tuple[RegularDim, ...]

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


class RegularGrid(ChunkGrid):
    """The ``regular`` grid: every chunk has the shape ``chunks``."""

    def __init__(self, shape: Sequence[int], chunks: Sequence[int]):
        self.shape = tuple(int(s) for s in shape)
        self.chunks = tuple(int(c) for c in chunks)
        self.dims = tuple(RegularDim(s, c) for s, c in zip(self.shape, self.chunks))

    def __repr__(self) -> str:
        return f"RegularGrid(shape={self.shape}, chunks={self.chunks})"
