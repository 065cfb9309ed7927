"""The ``rechunk`` command: :func:`zarrkit.rechunk` from the command line.

::

    zarrkit rechunk data.zarr out.zarr --chunks 2048,16,16 --max-mem 256MiB
    zarrkit rechunk data.zarr out.zarr --chunks temp=100,100 --chunks wind=auto --zarr-format 3

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
from .common import (
    EXIT_ERROR,
    EXIT_FAILED,
    EXIT_OK,
    CLIError,
    _node_kind,
    _open_store,
    exit_code_of,
    locate,
    plural,
    say,
    size_text,
)
from .options import COMPRESSOR_HELP, compressor
from .progress import add_progress_options, wanted

__all__ = ["add_rechunk_command", "cmd_rechunk"]


def add_rechunk_command(add: Callable[[str, str, Any], argparse.ArgumentParser]) -> None:
    """Register ``rechunk`` with the command line's ``add(name, help, func)``."""
    p = add("rechunk", "copy arrays with new chunks in bounded memory (resumable)", cmd_rechunk)
    p.add_argument("src", metavar="SRC", help="source store, optionally /node/path")
    p.add_argument("dst", metavar="DST", help="target store (directory or URL), optionally /node/path")
    p.add_argument("--path", default=None, help="node path inside the source store")
    p.add_argument("--dest-path", default=None, help="node path inside the target store")
    p.add_argument("--chunks", action="append", default=None, metavar="SHAPE",
                   help="chunk shape of the copy, e.g. 100,100 (--chunks=-1,100: -1 spans the dimension) or 'auto'; "
                        "NAME=SHAPE for one array of a group (repeatable)")
    p.add_argument("--shards", action="append", default=None, metavar="SHAPE",
                   help="shard shape of the copy (v3), given as --chunks is")
    p.add_argument("--zarr-format", type=int, choices=(2, 3), default=None,
                   help="format of the copy (default: the source's)")
    p.add_argument("--max-mem", default="256MiB", metavar="SIZE",
                   help="memory for the data in flight, e.g. 256MiB or 2GB (default 256MiB)")
    p.add_argument("--temp-store", default=None, metavar="PATH",
                   help="where the intermediate arrays live (default: DST.rechunk-tmp beside DST)")
    p.add_argument("--compressor", type=compressor, default=None, metavar="NAME[:LEVEL]", help=COMPRESSOR_HELP)
    p.add_argument("--dtype", default=None, help="data type of the copy (values are cast)")
    p.add_argument("--overwrite", action="store_true", help="replace whatever is at DST")
    p.add_argument("--verify", action="store_true", help="compare the copy with the source at the end")
    add_progress_options(p)


def _shape_option(values: list[str] | None, option: str) -> Any:
    """A shape, ``"auto"``, or a dict of them by array name, from the repeated option."""
    if not values:
        return None
    named: dict[str, Any] = {}
    plain: Any = None
    for text in values:
        name, sep, shape = text.rpartition("=")
        value: Any = "auto" if shape.strip().lower() == "auto" else _parse_dims(shape, option)
        if sep:
            named[name.strip("/")] = value
        elif plain is None:
            plain = value
        else:
            raise CLIError(f"{option} is given twice without a NAME=: {values!r}")
    if named and plain is not None:
        raise CLIError(f"{option}: expected either one SHAPE or NAME=SHAPE options, got {values!r}")
    return named or plain


def _parse_dims(text: str, option: str) -> tuple[int, ...]:
    """``"100,100"`` -> ``(100, 100)``; -1 spans the dimension."""
    parts = [p.strip() for p in text.split(",")]
    if parts and all(p == "-1" or p.isdigit() for p in parts):
        values = tuple(int(p) for p in parts)
        if all(v == -1 or v > 0 for v in values):
            return values
    raise CLIError(f"{option}: expected a shape of positive integers (or -1) separated by commas, "
                   f"such as 100,100, or 'auto', got {text!r}")


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
    chunks = _shape_option(args.chunks, "--chunks")
    shards = _shape_option(args.shards, "--shards")
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
