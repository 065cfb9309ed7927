"""The ``rechunk`` command: :func:`zarrkit.rechunk` from the command line.

::

    zarrkit rechunk data.zarr out.zarr --chunks 2048,16,16 --max-mem 256MiB
    zarrkit rechunk data.zarr out.zarr --chunks temp=100,100 --chunks wind=auto --zarr-format 3
    zarrkit rechunk data.zarr out.zarr --chunks 100,100 --shards auto --zarr-format 3

``--chunks`` and ``--shards`` take what ``cp``'s take, resolved array by array as ``cp``
resolves them (:func:`zarrkit.cli.options.layout`).

Running the same command again after an interruption finishes the rechunk.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ..api.rechunking import RechunkEvent, RechunkVerifyError, rechunk
from ..core.array import Array
from ..metadata import io
from ..storage.base import Store
from .common import (
    EXIT_ERROR,
    EXIT_FAILED,
    EXIT_OK,
    CLIError,
    _node_kind,
    _open_store,
    _walk,
    exit_code_of,
    locate,
    plural,
    say,
    size_text,
)
from .options import (
    COMPRESSOR_HELP,
    add_layout_options,
    array_names,
    check_matched,
    check_rules,
    compressor,
    layout,
    memory_size,
)
from .progress import add_progress_options, wanted

__all__ = ["add_rechunk_command", "cmd_rechunk"]


def add_rechunk_command(add: Callable[[str, str, Any], argparse.ArgumentParser]) -> None:
    """Register ``rechunk`` with the command line's ``add(name, help, func)``."""
    p = add("rechunk", "copy arrays with new chunks in bounded memory (resumable)", cmd_rechunk)
    p.add_argument("src", metavar="SRC", help="source store, optionally /node/path")
    p.add_argument("dst", metavar="DST", help="target store (directory or URL), optionally /node/path")
    p.add_argument("--path", default=None, help="node path inside the source store")
    p.add_argument("--dest-path", default=None, help="node path inside the target store")
    add_layout_options(p)
    p.add_argument("--zarr-format", type=int, choices=(2, 3), default=None,
                   help="format of the copy (default: the source's)")
    p.add_argument("--max-mem", type=memory_size, default="256MiB", metavar="SIZE",
                   help="memory for the data in flight, e.g. 256MiB or 2GB (default 256MiB)")
    p.add_argument("--temp-store", default=None, metavar="PATH",
                   help="where the intermediate arrays live (default: DST.rechunk-tmp beside DST)")
    p.add_argument("--compressor", type=compressor, default=None, metavar="NAME[:LEVEL]", help=COMPRESSOR_HELP)
    p.add_argument("--dtype", default=None, help="data type of the copy (values are cast)")
    p.add_argument("--overwrite", action="store_true", help="replace whatever is at DST")
    p.add_argument("--verify", action="store_true", help="compare the copy with the source at the end")
    add_progress_options(p)


def _layouts(args: argparse.Namespace, store: Store, path: str, dtype: Any) -> tuple[Any, Any]:
    """The ``chunks`` and ``shards`` of :func:`zarrkit.rechunk`, by array path: what the rules
    of ``--chunks`` and ``--shards`` give each array, resolved as ``cp`` resolves them (None:
    every array keeps its source's)."""
    check_rules(args.chunks, "--chunks")
    check_rules(args.shards, "--shards")
    chunks: dict[str, Any] = {}
    shards: dict[str, Any] = {}
    ranks: dict[int, str] = {}
    names: set[str] = set()
    base = len(path) + 1 if path else 0
    for node_path, kind in _walk(store, path):
        if kind != "array":
            continue
        rel = node_path[base:] if node_path != path else ""
        src = Array(store, path=node_path or None, read_only=True)
        ranks.setdefault(src.ndim, src.name or "/")
        known = array_names(rel, src)
        names.update(known)
        fmt = args.zarr_format or io.node_info(store, node_path)[1] or src.zarr_format
        got = layout(args.chunks, args.shards, src, fmt, known, dtype)
        if "shards" in got and got["shards"] is None:
            # unsharded: new chunks (the source's inner chunks if none are given) and no shards
            chunks[rel] = got.get("chunks", tuple(src.chunks))
            continue
        if "chunks" in got:
            chunks[rel] = got["chunks"]
        if "shards" in got:
            shards[rel] = got["shards"]
    check_matched((("--chunks", args.chunks), ("--shards", args.shards)), ranks, names)
    return chunks or None, shards or None


def cmd_rechunk(args: argparse.Namespace) -> int:
    src_loc = locate(args.src, args.path)
    dst_loc = locate(args.dst, args.dest_path)
    if dst_loc.kind == "zip":
        raise CLIError(f"{args.dst}: rechunk writes to a directory or URL store, not to a zip file "
                       "(rechunk to a directory, then 'zarrkit cp' it to the zip file)")
    kwargs: dict[str, Any] = {}
    if args.compressor is not None:
        kwargs["compressor"] = "none" if args.compressor.codec is None else args.compressor.codec
    if args.dtype is not None:
        try:
            kwargs["dtype"] = np.dtype(args.dtype)
        except TypeError:
            raise CLIError(f"--dtype: {args.dtype!r} is not a data type") from None
    show = wanted(args)
    counts = {"blocks": 0, "bytes": 0}
    arrays: set[str] = set()

    def counted(event: RechunkEvent) -> None:
        arrays.add(event.array)
        counts["blocks"] += 1
        counts["bytes"] += event.nbytes

    start = time.monotonic()
    with contextlib.ExitStack() as stack:
        src_store = stack.enter_context(contextlib.closing(_open_store(src_loc)))
        _node_kind(src_store, src_loc.path, src_loc)
        chunks, shards = _layouts(args, src_store, src_loc.path, kwargs.get("dtype"))
        dst_store = stack.enter_context(contextlib.closing(_open_store(dst_loc, write=True)))
        temp = None
        if args.temp_store is not None:
            temp = stack.enter_context(contextlib.closing(_open_store(locate(args.temp_store), write=True)))
        try:
            rechunk(
                src_store, dst_store, chunks, shards=shards, max_mem=args.max_mem, zarr_format=args.zarr_format,
                source_path=src_loc.path, target_path=dst_loc.path, temp_store=temp, overwrite=args.overwrite,
                progress=show, callback=counted, verify=args.verify, **kwargs,
            )
        except RechunkVerifyError as exc:
            say(f"zarrkit: {exc}", file=sys.stderr)
            return EXIT_FAILED
        except (ValueError, TypeError) as exc:
            if exit_code_of(exc) != EXIT_ERROR:  # (a data error: the stored values)
                raise
            raise CLIError(str(exc)) from None  # an argument refused before anything is written
    say(
        f"rechunked {args.src} -> {args.dst}: "
        f"{plural(counts['blocks'], 'block')} written ({size_text(counts['bytes'])}) "
        f"in {time.monotonic() - start:.1f}s{'; verified' if args.verify else ''}"
    )
    return EXIT_OK
