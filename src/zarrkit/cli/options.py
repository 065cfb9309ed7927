"""The values of ``cp``'s layout and codec options: ``--chunks``/``--shards`` rules (a shape
per rank, ``auto``, a target size, ``none``) and ``--compressor NAME[:...]`` with a level."""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import math
import re
from collections.abc import Sequence
from typing import Any

import numcodecs

from .common import CLIError, plural

#: The shard size ``--shards auto`` aims at.
AUTO_SHARD_BYTES = 64 * 2**20

_UNITS = {"": 1, "b": 1, "k": 2**10, "kib": 2**10, "kb": 10**3, "m": 2**20, "mib": 2**20,
          "mb": 10**6, "g": 2**30, "gib": 2**30, "gb": 10**9, "t": 2**40, "tib": 2**40, "tb": 10**12}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")


@dataclasses.dataclass(frozen=True)
class LayoutRule:
    """One value of ``--chunks`` or ``--shards``: an explicit ``shape`` (for arrays of its
    rank), or ``kind`` ``'auto'`` / ``'size'`` (``nbytes`` per shard) / ``'none'``."""

    text: str
    kind: str  # 'shape', 'auto', 'size', 'none'
    shape: tuple[int, ...] = ()
    nbytes: int = 0


def parse_size(text: str) -> int | None:
    """``'64MiB'`` -> 67108864; ``'1.5G'``, ``'100MB'``, ``'4096'`` (bytes); None if not a size.
    ``K``/``M``/``G``/``T`` and ``KiB``... are powers of 1024, ``KB``/``MB``... of 1000."""
    found = _SIZE.match(text)
    if found is None or found.group(2).lower() not in _UNITS:
        return None
    return int(float(found.group(1)) * _UNITS[found.group(2).lower()])


def layout_rule(option: str, *, shards: bool) -> Any:
    """The argparse ``type`` of ``--chunks`` (``shards=False``) or ``--shards``."""

    def parse(text: str) -> LayoutRule:
        word = text.strip().lower()
        if shards and word == "none":
            return LayoutRule(text, "none")
        if shards and word == "auto":
            return LayoutRule(text, "auto", nbytes=AUTO_SHARD_BYTES)
        if shards and not re.fullmatch(r"[\d,\s]*", word):  # a bare number is a 1-D shape
            size = parse_size(word)
            if size is not None:
                if size <= 0:
                    raise argparse.ArgumentTypeError(f"expected a positive size, got {text!r}")
                return LayoutRule(text, "size", nbytes=size)
        try:
            values = tuple(int(v) for v in text.replace(" ", "").split(",") if v != "")
        except ValueError:
            forms = "a shape like 100,100, 'auto', a size like 64MiB, or 'none'" if shards else "a shape like 100,100"
            raise argparse.ArgumentTypeError(f"expected {forms}, got {text!r}") from None
        if not values or any(v <= 0 for v in values):
            raise argparse.ArgumentTypeError(f"expected positive integers like 100,100, got {text!r}")
        return LayoutRule(text, "shape", shape=values)

    parse.__name__ = "shard rule" if shards else "chunk shape"
    return parse


def check_rules(rules: Sequence[LayoutRule] | None, option: str) -> None:
    """At most one shape per rank and one non-shape rule (``auto``, a size, ``none``)."""
    ranks: dict[int, str] = {}
    other = None
    for rule in rules or ():
        if rule.kind == "shape":
            if len(rule.shape) in ranks:
                raise CLIError(f"{option} {ranks[len(rule.shape)]} and {option} {rule.text} are both for "
                               f"arrays of {plural(len(rule.shape), 'dimension')}: give one")
            ranks[len(rule.shape)] = rule.text
        elif other is not None:
            raise CLIError(f"{option} {other} and {option} {rule.text}: give one of auto, a size or none")
        else:
            other = rule.text


def rule_for(rules: Sequence[LayoutRule] | None, ndim: int) -> LayoutRule | None:
    """The rule an array of ``ndim`` dimensions follows: the shape of its rank, else the
    non-shape rule, else None (the array keeps its source's layout)."""
    fallback = None
    for rule in rules or ():
        if rule.kind == "shape" and len(rule.shape) == ndim:
            return rule
        if rule.kind != "shape":
            fallback = rule
    return fallback


def unmatched_shapes(rules: Sequence[LayoutRule] | None, ranks: set[int]) -> list[LayoutRule]:
    """The explicit shapes no array of the copy has the rank of."""
    return [r for r in rules or () if r.kind == "shape" and len(r.shape) not in ranks]


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
