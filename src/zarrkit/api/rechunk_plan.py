"""Planning a rechunk in bounded memory: which blocks are read and written, and whether the
data goes through an intermediate array.

The plan follows the algorithm of rechunker (Abernathey et al.): the target's write units
(chunks, or shards) are grouped into *write blocks* as large as the memory allows, the
source's chunks into *read blocks* no longer than the write blocks along each axis, and when
no block can be aligned to both the source's chunks and the target's write units within the
memory, the data goes through an intermediate array whose chunks fit both.

Every block a stage writes covers whole chunks of the array it writes (the last ones cut by
the shape), so no two blocks write into one chunk: blocks need no lock, a block written twice
(after an interruption) writes the same bytes, and no chunk is read back to be merged.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Iterator, Sequence
from typing import Any

__all__ = ["RechunkPlan", "Stage", "count_blocks", "iter_block_regions", "parse_memory", "plan_rechunk"]

_UNITS = {
    "": 1, "b": 1,
    "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9, "t": 10**12, "tb": 10**12,
    "ki": 2**10, "kib": 2**10, "mi": 2**20, "mib": 2**20, "gi": 2**30, "gib": 2**30, "ti": 2**40, "tib": 2**40,
}


def parse_memory(value: Any, name: str = "max_mem") -> int:
    """A number of bytes from an int or a string such as ``"256MiB"``, ``"1.5GB"``, ``"64 MB"``.

    >>> parse_memory("256MiB"), parse_memory("1GB"), parse_memory(1000)
    (268435456, 1000000000, 1000)
    """
    if isinstance(value, bool):
        raise TypeError(f"{name}: expected a number of bytes or a size like '256MiB', got {value!r}")
    if isinstance(value, (int, float)):
        n = int(value)
    elif isinstance(value, str):
        found = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([A-Za-z]*)\s*", value)
        unit = found.group(2).lower() if found else None
        if found is None or unit not in _UNITS:
            raise ValueError(f"{name}: expected a size like '256MiB' or '1GB', got {value!r}")
        n = int(float(found.group(1)) * _UNITS[unit])
    else:
        raise TypeError(f"{name}: expected a number of bytes or a size like '256MiB', got {value!r}")
    if n <= 0:
        raise ValueError(f"{name}: expected a positive size, got {value!r}")
    return n


@dataclasses.dataclass(frozen=True)
class Stage:
    """One pass over an array: ``block``-shaped regions read from one array and written to
    another, ``block`` a multiple of the chunks (write units) it writes.  Within a block,
    ``threads`` tasks read ``read_piece``-shaped pieces into the block's buffer, then
    ``write_threads`` tasks write ``write_piece``-shaped ones (multiples of the chunks): a
    task holds no more than a piece's encoded bytes and its buffers, whatever the size of the
    block, so each phase runs as many tasks as its own pieces leave room for."""

    read_chunks: tuple[int, ...]
    write_chunks: tuple[int, ...]
    block: tuple[int, ...]
    read_piece: tuple[int, ...] = ()
    write_piece: tuple[int, ...] = ()
    threads: int = 1
    #: what one reading task holds at most: a piece, its encoded bytes (and a converted copy)
    task_bytes: int = 0
    #: the writing tasks (0: as many as the reading ones) and what one holds at most
    write_threads: int = 0
    write_task_bytes: int = 0

    @property
    def writers(self) -> int:
        return self.write_threads or self.threads

    @property
    def tasks_bytes(self) -> int:
        """What the tasks of the phase holding most hold at once."""
        return max(self.threads * self.task_bytes, self.writers * (self.write_task_bytes or self.task_bytes))

    def to_json(self) -> dict[str, Any]:
        return {"read_chunks": list(self.read_chunks), "write_chunks": list(self.write_chunks),
                "block": list(self.block)}


@dataclasses.dataclass(frozen=True)
class RechunkPlan:
    """The stages of the rechunk of one array: one (source to target) or two (source to an
    intermediate array of chunks ``intermediate``, then to the target)."""

    shape: tuple[int, ...]
    itemsize: int
    stages: tuple[Stage, ...]
    intermediate: tuple[int, ...] | None

    def to_json(self) -> dict[str, Any]:
        return {"shape": list(self.shape), "stages": [s.to_json() for s in self.stages],
                "intermediate": None if self.intermediate is None else list(self.intermediate)}

    @property
    def block_bytes(self) -> int:
        """The largest block a stage holds, in bytes."""
        return max(_nbytes(s.block, self.shape, self.itemsize) for s in self.stages)

    @property
    def threads(self) -> int:
        return max(max(s.threads, s.writers) for s in self.stages)

    def peak_bytes(self) -> int:
        """The most the plan holds at once: a block and the tasks' buffers of its stage."""
        return max(_nbytes(s.block, self.shape, self.itemsize) + s.tasks_bytes for s in self.stages)


def _nbytes(block: Sequence[int], shape: Sequence[int], itemsize: int) -> int:
    return math.prod(min(b, s) for b, s in zip(block, shape)) * itemsize


def _grow(
    shape: Sequence[int], unit: Sequence[int], itemsize: int, budget: int, caps: Sequence[int]
) -> tuple[int, ...]:
    """``unit`` grown along each axis by a whole multiple (the last axis first, as the
    elements of a C-order array lie), up to ``caps`` per axis and ``budget`` bytes in all;
    a block reaching the end of an axis spans it whole."""
    block = [min(u, max(s, 1)) for u, s in zip(unit, shape)]
    for ax in reversed(range(len(block))):
        others = _nbytes(block[:ax] + block[ax + 1:], list(shape[:ax]) + list(shape[ax + 1:]), itemsize)
        longest = budget // max(others, 1)
        cap = min(max(caps[ax], unit[ax]), max(shape[ax], 1))
        if longest >= cap:
            # the whole of the cap: a multiple of the unit that reaches it, cut by the shape
            mult = math.ceil(cap / unit[ax]) if cap >= shape[ax] else cap // unit[ax]
        else:
            mult = longest // unit[ax]
        block[ax] = max(1, mult) * unit[ax]
    return tuple(block)


def _fits(block: Sequence[int], shape: Sequence[int], itemsize: int, budget: int) -> bool:
    return _nbytes(block, shape, itemsize) <= budget


def _common_chunk(read: int, write: int, length: int) -> int:
    """The intermediate chunk length on one axis: as long as possible while dividing the read
    block (so that the first stage writes whole chunks) and no longer than the write block."""
    if read >= length:  # one block spans the axis: chunks of any length are written whole
        return max(1, min(write, length))
    if read <= write:
        return read
    best = 1
    for d in range(1, math.isqrt(read) + 1):
        if read % d == 0:
            for c in (d, read // d):
                if c <= write and (c > best or (c == best and write % c == 0)):
                    best = c
    return best


#: the size of the pieces a block is read and written in when chunks are smaller (a task per
#: piece: fewer calls for small chunks, little memory held per task)
PIECE_BYTES = 4 * 2**20


def _smallest_factor(n: int) -> int:
    for p in range(2, math.isqrt(n) + 1):
        if n % p == 0:
            return p
    return n


def _no_larger(chunks: tuple[int, ...], shape: Sequence[int], itemsize: int, limit: int) -> tuple[int, ...]:
    """``chunks`` divided along their longest axes until a chunk is no larger than ``limit``
    bytes (the tasks' buffers are sized for the source's and the target's chunks); each length
    is divided by one of its factors, so it still divides the read blocks."""
    out = list(chunks)
    while _nbytes(out, shape, itemsize) > limit:
        ax = max((a for a in range(len(out)) if out[a] > 1), key=lambda a: out[a], default=None)
        if ax is None:
            break
        out[ax] //= _smallest_factor(out[ax])
    return tuple(out)


def plan_rechunk(
    shape: Sequence[int],
    itemsize: int,
    source_chunks: Sequence[int],
    target_unit: Sequence[int],
    max_mem: int,
    threads: int = 1,
    cast: bool = False,
    name: str = "/",
) -> RechunkPlan:
    """Plan the rechunk of an array of ``shape`` from ``source_chunks`` to the write unit
    ``target_unit`` (the target's shards, else its chunks) within ``max_mem`` bytes.

    The memory holds one block and, for each of ``threads`` tasks, the piece it reads or
    writes (at least one chunk, :data:`PIECE_BYTES` when chunks are smaller) with its encoded
    bytes, and a converted copy of it for a ``cast`` (dtype change).  Fewer threads are used
    when their buffers would take more than half of the memory.  Raises ``ValueError`` naming
    ``max_mem`` when not even one chunk fits.
    """
    shape = tuple(int(s) for s in shape)
    src = tuple(min(int(c), max(s, 1)) for c, s in zip(source_chunks, shape))
    dst = tuple(min(int(c), max(s, 1)) for c, s in zip(target_unit, shape))
    ndim = len(shape)
    threads_given = threads
    largest_chunk = max(_nbytes(src, shape, itemsize), _nbytes(dst, shape, itemsize))
    piece = max(largest_chunk, min(PIECE_BYTES, max_mem // 32))
    per_thread = (3 if cast else 2) * piece
    threads = max(1, min(threads, (max_mem // 2) // max(per_thread, 1)))
    budget = max_mem - threads * per_thread
    if budget < largest_chunk:
        need = largest_chunk + (3 if cast else 2) * largest_chunk
        raise ValueError(
            f"max_mem: expected at least {need} bytes to rechunk array {name} (a block of one "
            f"{'source chunk' if _nbytes(src, shape, itemsize) >= _nbytes(dst, shape, itemsize) else 'target chunk or shard'} "
            f"of {largest_chunk} bytes and the buffers of one task), got {max_mem}"
        )

    def stage(read_chunks: tuple[int, ...], write_chunks: tuple[int, ...], block: tuple[int, ...]) -> Stage:
        # the pieces of this stage: its own chunks decide them (and how many tasks fit)
        cut = tuple(min(b, max(n, 1)) for b, n in zip(block, shape))
        # (reads and writes each by their own chunks: a write of many small chunks holds them
        # all encoded, and a copy of its piece, until they are stored)
        small = min(PIECE_BYTES, max_mem // 32)
        read_bytes = max(_nbytes(read_chunks, shape, itemsize), small)
        write_bytes = max(_nbytes(write_chunks, shape, itemsize), small)
        # a task holds its piece's encoded bytes (and a converted copy), and the engine keeps
        # a decoded chunk's scratch buffer per thread: more threads only when all that fits,
        # reads and writes each by their own pieces (one phase runs after the other)
        read_task = (4 if cast else 3) * read_bytes
        write_task = (4 if cast else 3) * write_bytes
        free = max_mem - _nbytes(cut, shape, itemsize)
        return Stage(
            read_chunks, write_chunks, block,
            read_piece=_grow(cut, read_chunks, itemsize, read_bytes, cut),
            write_piece=_grow(cut, write_chunks, itemsize, write_bytes, cut),
            threads=max(1, min(threads_wanted, free // max(read_task, 1))),
            task_bytes=read_task,
            write_threads=max(1, min(threads_wanted, free // max(write_task, 1))),
            write_task_bytes=write_task,
        )

    threads_wanted = max(1, threads_given)
    if ndim == 0:
        return RechunkPlan(shape, itemsize, (Stage((), (), (), (), (), 1, itemsize * 3, 1, itemsize * 3),), None)
    # one stage when a block aligned to both grids fits: every source chunk is read once and
    # every target unit written once
    aligned = tuple(math.lcm(a, b) for a, b in zip(src, dst))
    if _fits(aligned, shape, itemsize, budget):
        block = _grow(shape, aligned, itemsize, budget, shape)
        return RechunkPlan(shape, itemsize, (stage(src, dst, block),), None)
    write = _grow(shape, dst, itemsize, budget, shape)
    # read blocks grow along the axes where the write blocks are longer than the source
    # chunks, up to the write blocks' length (longer reads would only be cut again)
    caps = tuple(max(s, w) for s, w in zip(src, write))
    read = _grow(shape, src, itemsize, budget, caps)
    inter = _no_larger(tuple(_common_chunk(r, w, n) for r, w, n in zip(read, write, shape)),
                       shape, itemsize, largest_chunk)
    stages = (stage(src, inter, read), stage(inter, dst, write))
    return RechunkPlan(shape, itemsize, stages, inter)


def iter_block_regions(shape: Sequence[int], block: Sequence[int]) -> Iterator[tuple[slice, ...]]:
    """The ``block``-shaped regions tiling ``shape``, in C order (the last ones cut)."""
    counts = [math.ceil(s / b) if s else 0 for s, b in zip(shape, block)]
    total = math.prod(counts)
    for i in range(total):
        region = []
        rest = i
        for ax in reversed(range(len(shape))):
            rest, c = divmod(rest, counts[ax])
            region.append(slice(c * block[ax], min((c + 1) * block[ax], shape[ax])))
        yield tuple(reversed(region))


def count_blocks(shape: Sequence[int], block: Sequence[int]) -> int:
    """How many blocks :func:`iter_block_regions` yields."""
    return math.prod(math.ceil(s / b) if s else 0 for s, b in zip(shape, block))
