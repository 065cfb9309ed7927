"""The commands that change metadata or remove nodes: ``convert``, ``consolidate``, ``rm``."""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys

from ..api.conversion import convert, leftover_documents
from ..errors import MetadataError
from ..metadata import io
from ..metadata.consolidated import consolidate
from ..storage.base import Store, join_path
from .common import (
    EXIT_OK,
    CLIError,
    Location,
    _is_consolidated,
    _node_kind,
    _note_stale_consolidated,
    _open_store,
    _walk,
    locate,
    plural,
    say,
    shown,
    size_text,
)
from .progress import ByteProgress, wanted


# -- convert / consolidate / rm --------------------------------------------------------------------
def cmd_convert(args: argparse.Namespace) -> int:
    if args.zarr_format is None:
        raise CLIError("the following arguments are required: --zarr-format (see 'zarrkit convert --help')")
    loc = locate(args.path_arg, args.path)
    with contextlib.closing(_open_store(loc, write=True)) as store:
        _node_kind(store, loc.path, loc)
        # what is left of the old format (all of it, or what an interrupted conversion left)
        todo = leftover_documents(store, args.zarr_format, loc.path)
        if not todo:
            say(f"{loc.arg} is already in Zarr v{args.zarr_format}")
            return EXIT_OK
        resumed = any(io.node_info(store, p)[1] == args.zarr_format for p in todo)
        # every document read first: one that does not is a data error (exit 5), while what
        # convert() refuses after that is a hierarchy the other format cannot describe (or a
        # subtree below a consolidated group of the other format): a command refused (exit 2)
        for path, kind in _walk(store, loc.path):
            if kind == "array":
                io.load_array_metadata(store, path)
        try:
            # convert() rewrites consolidated metadata in the new format
            convert(store, zarr_format=args.zarr_format, path=loc.path)
        except MetadataError as exc:
            raise CLIError(f"{exc}") from None
        parts = loc.path.split("/") if loc.path else []
        groups = [p for p, kind in _walk(store, loc.path) if kind == "group"]
        groups += ["/".join(parts[:i]) for i in range(len(parts))]
        consolidated = any(_is_consolidated(store, p) for p in groups)
        n = len(todo)
        msg = f"{'finished converting' if resumed else 'converted'} {n} node{'s' if n != 1 else ''} of {loc.arg} to Zarr v{args.zarr_format}"
        if consolidated:
            msg += " (metadata consolidated again)"
        say(msg)
    return EXIT_OK


def cmd_consolidate(args: argparse.Namespace) -> int:
    loc = locate(args.path_arg, args.path)
    with contextlib.closing(_open_store(loc, write=True)) as store:
        kind = _node_kind(store, loc.path, loc)
        if kind != "group":
            raise CLIError(f"{loc.arg} is an array; consolidate a group")
        n = sum(1 for _ in _walk(store, loc.path))
        consolidate(store, loc.path)
        fmt = io.node_info(store, loc.path)[1]
        where = join_path(loc.path, "zarr.json" if fmt == 3 else ".zmetadata")
        say(f"consolidated the metadata of {n} node{'s' if n != 1 else ''} into {where}")
    return EXIT_OK


def _removal(store: Store, loc: Location, kind: str) -> tuple[str, list[tuple[str, int]]]:
    """What removing the node takes with it, as the prompt and the report say it (``"the
    group grp of data.zarr: 3 arrays, 1 group, 1.2M stored"``), and the keys with their sizes."""
    prefix = f"{loc.path}/" if loc.path else ""
    keys = list(store.list_prefix_sizes(prefix))
    n_arrays = n_groups = 0
    for path, node in _walk(store, loc.path):
        if path != loc.path:
            n_arrays += node == "array"
            n_groups += node == "group"
    held = [] if kind == "array" else [plural(n_arrays, "array"), plural(n_groups, "group")]
    held.append(f"{size_text(sum(n for _, n in keys))} stored")
    return f"{kind} {loc.path or '/'} of {loc.root} ({', '.join(held)})", keys


def _remove_keys(store: Store, keys: list[tuple[str, int]], progress: ByteProgress) -> None:
    """Remove ``keys`` one by one, the chunks first and the metadata documents last (a removal
    stopped half-way leaves the node, which the same command removes then), advancing the bar."""
    keys = sorted(keys, key=lambda kv: kv[0].rsplit("/", 1)[-1] in _META_DOCS)
    for key, size in keys:
        store.delete(key)
        progress.update(size)


_META_DOCS = frozenset({"zarr.json", ".zarray", ".zgroup", ".zattrs", ".zmetadata"})


def cmd_rm(args: argparse.Namespace) -> int:
    loc = locate(args.path_arg, args.path)
    with contextlib.ExitStack() as stack:
        store = stack.enter_context(contextlib.closing(_open_store(loc, write=loc.kind != "zip" or bool(loc.path))))
        kind = _node_kind(store, loc.path, loc)
        what, keys = _removal(store, loc, kind)
        if not args.yes:
            if not sys.stdin.isatty():
                raise CLIError(f"refusing to remove the {what} without --yes")
            answer = input(shown(f"remove the {what}? [y/N] ")).strip().lower()
            if answer not in ("y", "yes"):
                say("nothing removed")
                return EXIT_OK
        progress = ByteProgress(sum(n for _, n in keys), wanted(args), desc=f"rm {shown(loc.arg)}")
        stack.callback(progress.close)
        if loc.kind == "dir":  # local files: one at a time, shown on the bar
            _remove_keys(store, keys, progress)
        if not loc.path:
            if loc.kind == "zip":
                stack.close()
                os.remove(loc.root)
            elif loc.kind == "dir":
                stack.close()
                shutil.rmtree(loc.root)
            else:
                store.delete_prefix("")
        else:
            store.delete_prefix(loc.path + "/")
        progress.close()
        say(f"removed the {what}")
        _note_stale_consolidated(store, loc)
    return EXIT_OK
