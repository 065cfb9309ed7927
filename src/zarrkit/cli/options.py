"""The values of the layout, memory and codec options ``cp`` and ``rechunk`` share:
``--chunks``/``--shards`` rules (a shape per rank or ``NAME=``, ``auto``, a target size,
``none``), ``--max-mem SIZE`` and ``--compressor NAME[:...]`` with a level."""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import math
import re
from collections.abc import Sequence
from typing import Any

import numcodecs
import numpy as np

from ..api.rechunk_plan import parse_memory
from ..core.array import Array
from ..metadata.normalize import normalize_chunks
from .common import CLIError, plural

#: The shard size ``--shards auto`` aims at.
AUTO_SHARD_BYTES = 64 * 2**20



@dataclasses.dataclass(frozen=True)
class LayoutRule:
    """One value of ``--chunks`` or ``--shards``: an explicit ``shape`` (for arrays of its
    rank; -1 spans a dimension), or ``kind`` ``'auto'`` / ``'size'`` (``nbytes`` per shard) /
    ``'none'``; for the one array ``name`` (its path in the hierarchy) when given as
    ``NAME=RULE``."""

    text: str
    kind: str  # 'shape', 'auto', 'size', 'none'
    shape: tuple[int, ...] = ()
    nbytes: int = 0
    name: str | None = None


def parse_size(text: str) -> int | None:
    """``'64MiB'`` -> 67108864; ``'1.5GB'``, ``'100M'``, ``'4096'`` (bytes); None if not a
    positive size.  Read as :func:`zarrkit.rechunk` reads ``max_mem`` (``KiB``/``MiB``... are
    powers of 1024; ``KB``/``MB``... and ``K``/``M``... of 1000, as in dask)."""
    try:
        return parse_memory(text)
    except (TypeError, ValueError):
        return None


def memory_size(text: str) -> int:
    """The argparse ``type`` of ``--max-mem``: a size such as ``256MiB`` or ``2GB``, read as
    :func:`zarrkit.rechunk` reads its ``max_mem``."""
    try:
        return parse_memory(text)
    except (TypeError, ValueError):
        raise argparse.ArgumentTypeError(f"expected a positive size like 256MiB or 2GB, got {text!r}") from None


memory_size.__name__ = "size"


def layout_rule(option: str, *, shards: bool) -> Any:
    """The argparse ``type`` of ``--chunks`` (``shards=False``) or ``--shards``: a shape,
    ``auto`` (and for shards a target size or ``none``), optionally as ``NAME=RULE``."""

    def parse(text: str) -> LayoutRule:
        name, sep, value = text.rpartition("=")
        rule = _rule(value, text)
        if sep:
            name = name.strip().strip("/")
            if not name:
                raise argparse.ArgumentTypeError(f"expected NAME=RULE with the path of an array, got {text!r}")
            rule = dataclasses.replace(rule, name=name)
        return rule

    def _rule(value: str, text: str) -> LayoutRule:
        word = value.strip().lower()
        if shards and word == "none":
            return LayoutRule(text, "none")
        if word == "auto":
            return LayoutRule(text, "auto", nbytes=AUTO_SHARD_BYTES if shards else 0)
        if shards and not re.fullmatch(r"[-\d,\s]*", word):  # a bare number is a 1-D shape
            size = parse_size(word)
            if size is not None:
                if size <= 0:
                    raise argparse.ArgumentTypeError(f"expected a positive size, got {text!r}")
                return LayoutRule(text, "size", nbytes=size)
        try:
            values = tuple(int(v) for v in value.replace(" ", "").split(",") if v != "")
        except ValueError:
            forms = ("a shape like 100,100, 'auto', a size like 64MiB, or 'none'" if shards
                     else "a shape like 100,100 or 'auto'")
            raise argparse.ArgumentTypeError(f"expected {forms}, got {text!r}") from None
        if not values or any(v <= 0 and v != -1 for v in values):
            raise argparse.ArgumentTypeError(
                f"expected positive integers (or -1: the whole dimension) like 100,100, got {text!r}")
        return LayoutRule(text, "shape", shape=values)

    parse.__name__ = "shard rule" if shards else "chunk shape"
    return parse


CHUNKS_HELP = ("chunk shape of the arrays of that rank, e.g. 100,100 (-1: the whole dimension), or 'auto' "
               "(a guessed shape); NAME=SHAPE for one array of a group (repeat for other ranks or "
               "arrays; the others keep their chunks)")
SHARDS_HELP = ("shards of the copy (v3): a shape for the arrays of its rank (e.g. 256,256,256), "
               "'auto' (shards of about 64 MiB made of each array's chunks), a target size per "
               "shard (e.g. 16MiB), or 'none'; NAME=RULE for one array of a group; repeat to give "
               "a shape per rank plus one of the others for the remaining arrays (default: arrays "
               "of other ranks keep the source's sharding)")


def add_layout_options(p: argparse.ArgumentParser) -> None:
    """``--chunks`` and ``--shards``, as ``cp`` and ``rechunk`` share them."""
    p.add_argument("--chunks", action="append", type=layout_rule("--chunks", shards=False), default=None,
                   metavar="SHAPE", help=CHUNKS_HELP)
    p.add_argument("--shards", action="append", type=layout_rule("--shards", shards=True), default=None,
                   metavar="RULE", help=SHARDS_HELP)


def check_rules(rules: Sequence[LayoutRule] | None, option: str) -> None:
    """At most one shape per rank, one rule per array name and one non-shape rule (``auto``,
    a size, ``none``) for the others."""
    ranks: dict[int, str] = {}
    names: dict[str, str] = {}
    other = None
    for rule in rules or ():
        if rule.name is not None:
            if rule.name in names:
                raise CLIError(f"{option} {names[rule.name]} and {option} {rule.text} are both for "
                               f"array {rule.name}: give one")
            names[rule.name] = rule.text
        elif rule.kind == "shape":
            if len(rule.shape) in ranks:
                raise CLIError(f"{option} {ranks[len(rule.shape)]} and {option} {rule.text} are both for "
                               f"arrays of {plural(len(rule.shape), 'dimension')}: give one")
            ranks[len(rule.shape)] = rule.text
        elif other is not None:
            raise CLIError(f"{option} {other} and {option} {rule.text}: give one of auto, a size or none")
        else:
            other = rule.text


def rule_for(rules: Sequence[LayoutRule] | None, ndim: int, names: Sequence[str] = ()) -> LayoutRule | None:
    """The rule an array of ``ndim`` dimensions known by ``names`` (its path in the copied
    hierarchy; a lone array also by its own name) follows: the rule of its name, else the
    shape of its rank, else the non-shape rule, else None (the array keeps its source's
    layout)."""
    for rule in rules or ():
        if rule.name is not None and rule.name in names:
            return rule
    fallback = None
    for rule in rules or ():
        if rule.name is not None:
            continue
        if rule.kind == "shape" and len(rule.shape) == ndim:
            return rule
        if rule.kind != "shape":
            fallback = rule
    return fallback


def array_names(rel: str, src: Array) -> tuple[str, ...]:
    """What a ``NAME=`` rule may call an array: its path below the copied node, or for the
    copied node itself (``rel`` empty) its own name."""
    return (rel,) if rel else ("", src.basename or "")


def check_matched(options: Sequence[tuple[str, Sequence[LayoutRule] | None]], ranks: dict[int, str],
                  names: set[str]) -> None:
    """Refuse an explicit shape no array of the copy has the rank of, or a ``NAME=`` no array
    of the copy is called (a typo, most likely): ``ranks`` maps the ranks of the arrays to an
    array of each, ``names`` holds what the arrays may be called."""
    for option, rules in options:
        for rule in rules or ():
            if rule.name is not None:
                if rule.name not in names:
                    raise CLIError(f"{option} {rule.text}: no array {rule.name} in the copy")
                continue
            if rule.kind != "shape" or len(rule.shape) in ranks:
                continue
            if len(ranks) == 1:
                (ndim, name), = ranks.items()
                raise CLIError(f"{option} {rule.text} has {plural(len(rule.shape), 'value')} "
                               f"but array {name} has {plural(ndim, 'dimension')}")
            have = ", ".join(str(n) for n in sorted(ranks)) or "none"
            raise CLIError(f"{option} {rule.text} has {plural(len(rule.shape), 'value')} but no array "
                           f"of the copy has {plural(len(rule.shape), 'dimension')} (their ranks: {have})")


def layout(chunk_rules: Sequence[LayoutRule] | None, shard_rules: Sequence[LayoutRule] | None,
           src: Array, fmt: int, names: Sequence[str], dtype: Any = None) -> dict[str, Any]:
    """The chunks and shards the rules of ``--chunks`` and ``--shards`` give the array ``src``
    copied in format ``fmt`` (as ``dtype``): ``{"chunks": shape}`` and ``{"shards": shape or
    None}`` (None: unsharded), each left out where the array keeps its source's layout."""
    out: dict[str, Any] = {}
    itemsize = max(1, np.dtype(src.dtype if dtype is None else dtype).itemsize)
    shape = tuple(src.shape)
    chunk_rule = rule_for(chunk_rules, src.ndim, names)
    if chunk_rule is not None:
        _check_rank(chunk_rule, "--chunks", src)
        out["chunks"] = normalize_chunks("auto" if chunk_rule.kind == "auto" else chunk_rule.shape, shape, itemsize)
    shard_rule = rule_for(shard_rules, src.ndim, names)
    if shard_rule is None:
        return out
    if shard_rule.kind == "none":
        out["shards"] = None
        return out
    if fmt != 3:
        raise CLIError("--shards needs Zarr v3 (add --zarr-format 3)")
    if shard_rule.kind == "shape":
        _check_rank(shard_rule, "--shards", src)
        out["shards"] = normalize_chunks(shard_rule.shape, shape, 1)
        return out
    chunks = out.get("chunks") or src.metadata.chunks
    if not all(isinstance(c, int) for c in chunks):  # a rectilinear grid: left unsharded
        return out
    target = shard_rule.nbytes or AUTO_SHARD_BYTES
    out["shards"] = auto_shards(shape, chunks, itemsize, target)
    if out["shards"] is None and not src.shards:
        del out["shards"]  # chunks already as big as a shard would be: no sharding added
    return out


def _check_rank(rule: LayoutRule, option: str, src: Array) -> None:
    if rule.kind == "shape" and len(rule.shape) != src.ndim:
        raise CLIError(f"{option} {rule.text} has {plural(len(rule.shape), 'value')} "
                       f"but array {src.name or '/'} has {plural(src.ndim, 'dimension')}")


def auto_shards(shape: Sequence[int], chunks: Sequence[int], itemsize: int, target: int) -> tuple[int, ...] | None:
    """A shard shape made of whole ``chunks`` holding at most ``target`` bytes (and about that
    many, where the array is big enough): the chunks per shard doubled along the dimension
    with the most shards left, never beyond what covers the array.  None when a shard would
    hold one chunk (the chunks reach the target already, or the array is one chunk)."""
    grid = [max(1, math.ceil(s / c)) for s, c in zip(shape, chunks)]
    factors = [1] * len(grid)
    chunk_bytes = math.prod(chunks) * max(1, itemsize)
    open_dims = [i for i, n in enumerate(grid) if n > 1]
    while open_dims:
        # the dimension with the most shards left; the last one first on a tie (C order)
        i = max(open_dims, key=lambda d: (grid[d] / factors[d], d))
        grown = min(factors[i] * 2, grid[i])
        if chunk_bytes * math.prod(factors) // factors[i] * grown > target:
            open_dims.remove(i)
            continue
        factors[i] = grown
        if grown == grid[i]:
            open_dims.remove(i)
    if math.prod(factors) == 1:
        return None
    return tuple(c * f for c, f in zip(chunks, factors))


# -- --compressor --------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Compressor:
    """A ``--compressor`` value: the text given and the codec it makes (None: ``none``)."""

    text: str
    codec: Any


_LEVELS = {"zstd": (-131072, 22, 3), "gzip": (0, 9, 5), "blosc": (0, 9, 5), "lz4": (1, 65537, 1)}
COMPRESSOR_HELP = ("compressor of the copy: zstd[:LEVEL] (-131072..22, default 3), gzip[:LEVEL] (0..9, "
                   "default 5), blosc[:CNAME][:LEVEL] (CNAME one of blosclz, lz4, lz4hc, zlib, zstd; "
                   "default zstd:5; byte shuffle), lz4[:ACCELERATION] (default 1), or none "
                   "(default: the source's)")


def compressor(text: str) -> Compressor:
    """The argparse ``type`` of ``--compressor``: ``zstd:5``, ``blosc:lz4:5``, ``gzip``..."""
    parts = [p.strip() for p in text.strip().lower().split(":")]
    name, rest = parts[0], parts[1:]
    if name == "none" and not rest:
        return Compressor(text, None)
    if name not in _LEVELS:
        close = difflib.get_close_matches(name, [*_LEVELS, "none"], n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise argparse.ArgumentTypeError(
            f"invalid choice: {name!r}: expected one of zstd, blosc, gzip, lz4, none "
            f"(optionally :LEVEL){hint}")
    cname = "zstd"
    if name == "blosc" and rest and not _is_int(rest[0]):
        cname = rest.pop(0)
        if cname not in numcodecs.blosc.list_compressors():
            raise argparse.ArgumentTypeError(
                f"blosc: expected a compressor among {', '.join(numcodecs.blosc.list_compressors())}, got {cname!r}")
    low, high, level = _LEVELS[name]
    if len(rest) > 1 or (rest and not _is_int(rest[0])):
        raise argparse.ArgumentTypeError(f"{name}: expected {name}:LEVEL with an integer level, got {text!r}")
    if rest:
        level = int(rest[0])
        if not low <= level <= high:
            raise argparse.ArgumentTypeError(f"{name}: expected a level in {low}..{high}, got {level}")
    codec: Any
    if name == "zstd":
        codec = numcodecs.Zstd(level=level)
    elif name == "gzip":
        codec = numcodecs.GZip(level=level)
    elif name == "lz4":
        codec = numcodecs.LZ4(acceleration=level)
    else:
        codec = numcodecs.Blosc(cname=cname, clevel=level, shuffle=numcodecs.Blosc.SHUFFLE)
    return Compressor(text, codec)


compressor.__name__ = "compressor"


def _is_int(text: str) -> bool:
    return bool(re.fullmatch(r"-?\d+", text))
