"""The commands that change metadata or remove nodes: ``convert``, ``consolidate``, ``rm``."""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys

from ..api.conversion import convert, leftover_documents
from ..metadata import io
from ..metadata.consolidated import consolidate
from ..storage.base import join_path
from .common import (
    EXIT_OK,
    CLIError,
    _is_consolidated,
    _node_kind,
    _note_stale_consolidated,
    _open_store,
    _walk,
    locate,
    say,
    shown,
)


# -- convert / consolidate / rm --------------------------------------------------------------------
def cmd_convert(args: argparse.Namespace) -> int:
    loc = locate(args.path_arg, args.path)
    with contextlib.closing(_open_store(loc, write=True)) as store:
        _node_kind(store, loc.path, loc)
        # what is left of the old format (all of it, or what an interrupted conversion left)
        todo = leftover_documents(store, args.to, loc.path)
        if not todo:
            say(f"{loc.arg} is already in Zarr v{args.to}")
            return EXIT_OK
        resumed = any(io.node_info(store, p)[1] == args.to for p in todo)
        # convert() rewrites consolidated metadata in the new format (and refuses a subtree
        # below a consolidated group of the other format)
        convert(store, zarr_format=args.to, path=loc.path)
        parts = loc.path.split("/") if loc.path else []
        groups = [p for p, kind in _walk(store, loc.path) if kind == "group"]
        groups += ["/".join(parts[:i]) for i in range(len(parts))]
        consolidated = any(_is_consolidated(store, p) for p in groups)
        n = len(todo)
        msg = f"{'finished converting' if resumed else 'converted'} {n} node{'s' if n != 1 else ''} of {loc.arg} to Zarr v{args.to}"
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


def cmd_rm(args: argparse.Namespace) -> int:
    loc = locate(args.path_arg, args.path)
    with contextlib.ExitStack() as stack:
        store = stack.enter_context(contextlib.closing(_open_store(loc, write=loc.kind != "zip" or bool(loc.path))))
        kind = _node_kind(store, loc.path, loc)
        what = f"{kind} {loc.path or '/'} of {loc.root}"
        if not args.yes:
            if not sys.stdin.isatty():
                raise CLIError(f"refusing to remove the {what} without --yes")
            answer = input(shown(f"remove the {what}? [y/N] ")).strip().lower()
            if answer not in ("y", "yes"):
                say("nothing removed")
                return EXIT_OK
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
        say(f"removed the {what}")
        _note_stale_consolidated(store, loc)
    return EXIT_OK
