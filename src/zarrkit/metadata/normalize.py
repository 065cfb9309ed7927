"""Normalising user arguments (shapes, chunks, paths, dtypes) into canonical forms."""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from .._warnings import warn
from ..errors import InvalidPathError
from .common import MAX_DIM_LENGTH, MAX_NDIM
from .grid import merge_run, runs_total

__all__ = [
    "normalize_shape", "normalize_chunks", "rectilinear_chunks", "guess_chunks", "normalize_path", "normalize_order",
    "ceildiv", "parse_shapelike",
]

# Chunk-shape guessing follows the HDF5/PyTables heuristic zarr-python 2 used, so that arrays
# created without ``chunks=`` get the same chunk shapes as there (the tutorial's (10000, 10000) i4
# guesses (313, 313)).
_CHUNK_BASE = 64 * 1024
_CHUNK_MIN = 128 * 1024
_CHUNK_MAX = 64 * 1024 * 1024


#: what ``shape`` (and ``shards``) may be, said in errors
_SHAPE_FORMS = "an int or a tuple of ints"
#: what ``chunks`` may be, said in errors
_CHUNKS_FORMS = "an int, a tuple of ints (None or -1: the whole dimension), True or False (guess or no chunking)"


def _as_index(value: Any, argument: str, whole: Any = None, forms: str = _SHAPE_FORMS) -> int:
    """An int from a length given as an int (or a whole float, as zarr-python 2 took it);
    anything else is a TypeError naming ``argument`` and quoting the ``whole`` value given."""
    try:
        return operator.index(value)
    except TypeError:
        pass
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        # zarr-python 2 took whole floats (1.0) with a warning; other floats are errors
        warn(f"{argument}: {value!r} is a float, taken as {int(value)}", UserWarning)
        return int(value)
    shown = value if whole is None else whole
    raise TypeError(f"{argument}: expected {forms}, got {shown!r}") from None


def normalize_shape(shape: Any, argument: str = "shape") -> tuple[int, ...]:
    """``10`` → ``(10,)``; checks every length is a non-negative integer."""
    if shape is None:
        raise TypeError(f"{argument} is required: expected {_SHAPE_FORMS}")
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, (bool, np.bool_)):
        shape = (shape,)
    # a string is a sequence of characters, not of lengths: "10" is not (1, 0)
    if isinstance(shape, (str, bytes, bool, np.bool_)) or not hasattr(shape, "__iter__"):
        raise TypeError(f"{argument}: expected {_SHAPE_FORMS}, got {shape!r}")
    items = tuple(shape)
    if any(isinstance(s, (bool, np.bool_)) for s in items):
        raise TypeError(f"{argument}: expected {_SHAPE_FORMS}, got {shape!r}")
    # the metadata parsers' limits (metadata/common.py): a shape beyond them would be written,
    # and the array would no longer open
    if len(items) > MAX_NDIM:
        raise ValueError(f"{argument}: expected at most {MAX_NDIM} dimensions, got {len(items)}")
    dims = tuple(_as_index(s, argument, shape) for s in items)
    if any(d < 0 for d in dims):
        raise ValueError(f"{argument}: lengths must not be negative, got {dims}")
    if any(d > MAX_DIM_LENGTH for d in dims):
        raise ValueError(f"{argument}: expected lengths of at most {MAX_DIM_LENGTH} (2**63 - 1), "
                         f"got {dims}")
    return dims


#: the step zarr-python 3's chunk guess takes (``create_array``'s ``chunks='auto'``)
ZARR3_CHUNK_BASE = 256 * 1024


def guess_chunks(shape: tuple[int, ...], typesize: int, base: int = _CHUNK_BASE) -> tuple[int, ...]:
    """Guess a chunk shape of roughly 128 KiB–64 MiB by halving dimensions in turn (the
    target grows by ``base`` bytes per doubling of the array's size: zarr-python 2 took
    64 KiB, zarr-python 3 takes :data:`ZARR3_CHUNK_BASE`)."""
    ndims = len(shape)
    if ndims == 0:
        return ()
    chunks = np.maximum(np.array(shape, dtype="=f8"), 1)
    dset_size = float(np.prod(chunks)) * typesize
    target = base * (2 ** np.log10(dset_size / (1024.0 * 1024)))
    target = min(max(target, _CHUNK_MIN), _CHUNK_MAX)
    idx = 0
    while True:
        chunk_bytes = float(np.prod(chunks)) * typesize
        if (
            chunk_bytes < target or abs(chunk_bytes - target) / target < 0.5
        ) and chunk_bytes < _CHUNK_MAX:
            break
        if np.prod(chunks) == 1:
            break
        chunks[idx % ndims] = math.ceil(chunks[idx % ndims] / 2.0)
        idx += 1
    return tuple(int(x) for x in chunks)


def normalize_chunks(chunks: Any, shape: tuple[int, ...], typesize: int, base: int = _CHUNK_BASE) -> tuple[int, ...]:
    """Resolve ``chunks=``: None/True guess (``base``: as :func:`guess_chunks`); an int
    applies to every dimension; ``None`` or ``-1`` in a tuple means the whole dimension."""
    if chunks is None or chunks is True or (isinstance(chunks, str) and chunks == "auto"):
        return guess_chunks(shape, typesize, base)
    if chunks is False:
        return tuple(max(s, 1) for s in shape)
    if isinstance(chunks, (int, np.integer)) and not isinstance(chunks, (bool, np.bool_)):
        chunks = (int(chunks),) * len(shape)
        if chunks and chunks[0] == -1:
            chunks = tuple(shape)
    given = chunks
    if isinstance(chunks, (str, bytes)) or not hasattr(chunks, "__iter__"):
        raise TypeError(f"chunks: expected {_CHUNKS_FORMS}, got {given!r}")
    chunks = tuple(chunks)
    if len(chunks) > len(shape):
        raise ValueError(f"chunks: {given!r} has more dimensions than shape {shape}")
    if len(chunks) < len(shape):  # zarr-python 2: missing trailing dims span the whole dim
        chunks = chunks + tuple(shape[len(chunks):])
    out = []
    for c, s in zip(chunks, shape):
        if c is None or (not isinstance(c, (bool, np.bool_)) and c == -1):
            out.append(max(s, 1))
            continue
        if isinstance(c, (bool, np.bool_)):
            raise TypeError(f"chunks: expected {_CHUNKS_FORMS}, got {given!r}")
        c = _as_index(c, "chunks", given, _CHUNKS_FORMS)
        if c < 1:
            raise ValueError(f"chunks: lengths must be positive (or -1/None for a whole dimension), got {given!r}")
        out.append(c)
    return tuple(out)


def _is_sequence(value: Any) -> bool:
    return isinstance(value, (list, tuple, np.ndarray))


def rectilinear_chunks(
    chunks: Any, shape: tuple[int, ...], argument: str = "chunks"
) -> tuple[int | tuple[tuple[int, int], ...], ...] | None:
    """The edges of a rectilinear grid when ``chunks`` gives a list of edge lengths for some
    dimension (``[[10, 20, 7], [5, 5, 13]]``, or dask's tuple of tuples); None otherwise.

    Per dimension the result is an int (a regular dimension, stored as that int) or runs
    ``((length, count), ...)``.  The edge lengths of a dimension must cover its length.
    """
    if not _is_sequence(chunks) or not any(_is_sequence(c) for c in chunks):
        return None
    if len(chunks) != len(shape):
        raise ValueError(f"{argument}: {len(chunks)} entries for an array of {len(shape)} dimension(s) (shape {shape})")
    out: list[Any] = []
    for dim, (entry, size) in enumerate(zip(chunks, shape)):
        if not _is_sequence(entry):
            n = max(size, 1) if entry is None or entry == -1 else _as_index(entry, argument)
            if n < 1:
                raise ValueError(f"{argument}[{dim}]: chunk lengths must be positive, got {entry!r}")
            out.append(n)
            continue
        runs: list[tuple[int, int]] = []
        for edge in entry:
            if _is_sequence(edge) or isinstance(edge, bool):
                raise TypeError(f"{argument}[{dim}]: edge lengths must be integers, got {edge!r}")
            n = _as_index(edge, argument)
            if n < 1:
                raise ValueError(f"{argument}[{dim}]: edge lengths must be positive, got {list(entry)}")
            runs.append(merge_run(runs, n, 1))
        total = runs_total(tuple(runs))
        if total < size or not runs:
            raise ValueError(
                f"{argument}[{dim}]: the edge lengths {list(entry)} sum to {total}, less than the "
                f"array's length {size} along dimension {dim}"
                if runs else f"{argument}[{dim}]: no edge lengths given"
            )
        out.append(tuple(runs))
    return tuple(out)


def normalize_path(path: Any) -> str:
    """Normalise a logical node path as the v2 spec requires.

    Backslashes become ``/``, leading/trailing slashes are stripped and runs of slashes collapse;
    a ``.`` or ``..`` segment is an error.
    """
    if path is None:
        return ""
    if not isinstance(path, str):
        raise TypeError(f"path must be a str, got {type(path).__name__}")
    p = path.replace("\\", "/").strip("/")
    while "//" in p:
        p = p.replace("//", "/")
    # substring tests, linear in the path with a small constant (deep hierarchies have long paths)
    if p and ("/./" in f"/{p}/" or "/../" in f"/{p}/"):
        raise InvalidPathError(f"path {path!r} contains a '.' or '..' segment")
    if "\x00" in p:
        raise InvalidPathError(f"path {path!r} contains a NUL character")
    return p


def normalize_order(order: Any) -> str:
    if not isinstance(order, str) or order.upper() not in ("C", "F"):
        raise ValueError(f"order must be 'C' or 'F', got {order!r}")
    return order.upper()


def ceildiv(a: int, b: int) -> int:
    """``a / b`` rounded up: how many chunks of length ``b`` cover ``a`` elements (0 for none).

    Examples
    --------
    >>> ceildiv(10, 3), ceildiv(0, 0)
    (4, 0)
    """
    if a == 0:
        return 0
    return -(-a // b)


#: zarr-python 3's name (``zarr.core.common.parse_shapelike``) of :func:`normalize_shape`
parse_shapelike = normalize_shape
