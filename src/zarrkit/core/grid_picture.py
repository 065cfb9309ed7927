"""What Jupyter shows for an array and a group: a header naming the node (its path and its
store), and for an array a small SVG picture of its chunk grid (and shard grid), beside the
table of :attr:`~zarrkit.core.array.Array.info`.

The picture is drawn from the metadata already held: showing it costs no store request.  A 1-d
array is a bar, a 2-d array a rectangle, an array of three dimensions or more a box of its last
three (the leading lengths written beside it); a grid line is drawn at every chunk boundary,
a thicker one at every shard boundary, at most :data:`MAX_LINES` of each per dimension (past
that, evenly spaced boundaries stand for all of them).
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any

from ..metadata.consolidated import ConsolidatedStore
from ..storage.keys import describe_store

__all__ = ["MAX_LINES", "array_html", "array_picture", "grid_svg", "node_header"]

#: the most grid lines of one kind drawn along one dimension
MAX_LINES = 24
#: the longest side of the picture, in pixels
SIDE = 160
_STYLE = 'font-family="sans-serif" font-size="11" fill="#333"'


def node_header(kind: str, path: str, store: object) -> str:
    """``zarrkit.Array /a/b in DirectoryStore('/data/x.zarr')`` as an HTML line (a node read
    through consolidated metadata is in the store the metadata was read from)."""
    if isinstance(store, ConsolidatedStore):
        store = store.store
    return (f'<div class="zarrkit-node"><b>zarrkit.{kind}</b> <code>/{html.escape(path)}</code> '
            f"in {html.escape(describe_store(store))}</div>")


class _Lengths:
    """Chunk lengths along a dimension, with a grid dimension's ``n``, ``size`` and ``start``."""

    def __init__(self, lengths: Sequence[int]):
        self.n, self.size = len(lengths), sum(lengths)
        self._starts = [0]
        for n in lengths:
            self._starts.append(self._starts[-1] + n)

    def start(self, c: int) -> int:
        return self._starts[c]


def _dim(d: Any) -> Any:
    return d if hasattr(d, "start") else _Lengths(d)


def _boundaries(dim: Any, pixels: float) -> list[float]:
    """The inner chunk boundaries of a grid dimension scaled to ``pixels``: at most MAX_LINES,
    evenly spaced ones where there are more (so a grid of 2**40 chunks costs 24 look-ups)."""
    if dim.size == 0 or dim.n < 2:
        return []
    step = math.ceil((dim.n - 1) / MAX_LINES)
    return [dim.start(c) / dim.size * pixels for c in range(step, dim.n, step)]


def _sides(shape: Sequence[int]) -> list[float]:
    """Pixel lengths of the drawn dimensions: the longest SIDE, none under 12 (so that a
    long thin array still shows its chunks), in proportion otherwise."""
    longest = max(max(shape), 1)
    return [max(12.0, SIDE * n / longest) for n in shape]


def _line(x1: float, y1: float, x2: float, y2: float, width: float) -> str:
    colour = "#222" if width > 1 else "#8a8a8a"
    return (f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
            f'stroke="{colour}" stroke-width="{width}"/>')


def _text(x: float, y: float, text: str, anchor: str = "middle", rotate: bool = False) -> str:
    turn = f' transform="rotate(-90 {x:.1f} {y:.1f})"' if rotate else ""
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" {_STYLE}{turn}>{text}</text>'


def grid_svg(shape: Sequence[int], chunk_dims: Sequence[Any], shard_dims: Sequence[Any] | None = None) -> str:
    """An SVG picture of a grid over ``shape``: thin lines between the chunks, thick ones
    between the shards (None: not sharded); each dimension given as a grid's dimension object
    (``n``, ``size``, ``start(c)``) or as the list of its chunk lengths.  Empty for a 0-d array."""
    if not shape:
        return ""
    leading, shape = list(shape[:-3]), list(shape[-3:])
    chunks = [_dim(c) for c in chunk_dims[-3:]]
    shards = [_dim(s) for s in shard_dims[-3:]] if shard_dims is not None else None
    bar = len(shape) == 1
    if bar:  # a bar: its length across
        shape, chunks = [1, *shape], [_Lengths([1]), *chunks]
        shards = [_Lengths([1]), *shards] if shards is not None else None
    sides = _sides(shape)
    if len(shape) == 2:
        depth, (h, w) = 0.0, sides
        if bar:
            h = 24.0
    else:
        d, h, w = sides
        depth = d * 0.5
    ox, oy = (40.0 if depth else 10.0), 10.0 + depth  # the front face's top left corner (room for a label)
    parts = []
    grids: list[tuple[list[Any], float]] = [(chunks, 0.6)]
    if shards is not None:
        grids.append((shards, 2.0))
    for lengths, width in grids:
        *front_depth, rows, cols = lengths
        for x in _boundaries(cols, w):  # front, and on to the top face
            parts.append(_line(ox + x, oy, ox + x, oy + h, width))
            if depth:
                parts.append(_line(ox + x, oy, ox + x + depth, oy - depth, width))
        for y in _boundaries(rows, h):  # front, and on to the side face
            parts.append(_line(ox, oy + y, ox + w, oy + y, width))
            if depth:
                parts.append(_line(ox + w, oy + y, ox + w + depth, oy + y - depth, width))
        if depth:
            for t in _boundaries(front_depth[0], depth):  # across the top and the side
                parts.append(_line(ox + t, oy - t, ox + w + t, oy - t, width))
                parts.append(_line(ox + w + t, oy - t, ox + w + t, oy + h - t, width))
    outline = [(f'<rect x="{ox:.1f}" y="{oy:.1f}" width="{w:.1f}" height="{h:.1f}" fill="#ecb172" '
                'fill-opacity="0.8" stroke="#222" stroke-width="1.5"/>')]
    if depth:
        top = f"{ox:.1f},{oy:.1f} {ox + w:.1f},{oy:.1f} {ox + w + depth:.1f},{oy - depth:.1f} {ox + depth:.1f},{oy - depth:.1f}"
        side = (f"{ox + w:.1f},{oy:.1f} {ox + w + depth:.1f},{oy - depth:.1f} "
                f"{ox + w + depth:.1f},{oy + h - depth:.1f} {ox + w:.1f},{oy + h:.1f}")
        outline += [f'<polygon points="{p}" fill="#ecb172" fill-opacity="0.6" stroke="#222" stroke-width="1.5"/>'
                    for p in (top, side)]
    labels = [_text(ox + w / 2, oy + h + 16, str(shape[-1]))]
    if not bar:
        labels.append(_text(ox + w + depth + 14, oy + h / 2 - depth / 2, str(shape[-2]), rotate=True))
    if depth:
        labels.append(_text(ox + depth / 2 - 5, oy - depth / 2 - 3, str(shape[0]), anchor="end"))
    if leading:
        labels.append(_text(ox, oy + h + 32, "leading dimensions " + " \u00d7 ".join(map(str, leading)), "start"))
    width, height = max(ox + w + depth + 40, 160 * bool(leading)), oy + h + 26 + 16 * bool(leading)
    return (f'<svg class="zarrkit-grid" width="{width:.0f}" height="{height:.0f}" '
            f'xmlns="http://www.w3.org/2000/svg">{"".join(outline + parts + labels)}</svg>')


def array_picture(array: Any) -> str:
    """The grid picture of ``array`` from the metadata it holds (no store request), with a
    caption giving the chunk and shard counts."""
    meta = array._meta
    sharded = getattr(meta, "shards", None) is not None
    chunk_dims = meta.grid.dims
    shard_dims = meta.storage_grid.dims if sharded else None
    svg = grid_svg(meta.shape, chunk_dims, shard_dims)
    if not svg:
        return ""
    n_chunks = math.prod(d.n for d in chunk_dims)
    caption = f"{n_chunks} chunk{'s' * (n_chunks != 1)}"
    if shard_dims is not None:
        n_shards = math.prod(d.n for d in shard_dims)
        caption += f" in {n_shards} shard{'s' * (n_shards != 1)} (thick lines)"
    return f'<figure class="zarrkit-grid">{svg}<figcaption>{caption}</figcaption></figure>'


def array_html(array: Any, info_table: str) -> str:
    """An array's HTML view: its header, its grid picture and its ``info_table`` side by side."""
    picture = array_picture(array)
    body = (f'<div style="display: flex; gap: 1.5em; align-items: flex-start">{picture}{info_table}</div>'
            if picture else info_table)
    return node_header("Array", array._path, array._store_arg) + body
