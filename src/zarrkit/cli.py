"""The ``zarrkit`` command line: inspect, copy, convert and check Zarr stores.

Run ``zarrkit --help`` (or ``python -m zarrkit --help``) for the list of commands::

    zarrkit info data.zarr/group/array          # the info table (--json: machine-readable)
    zarrkit tree data.zarr                       # the hierarchy as a tree
    zarrkit ls data.zarr/group                   # the members of a group
    zarrkit cp data.zarr out.zip --zarr-format 3 --chunks 100,100 --compressor zstd
    zarrkit convert data.zarr --to 3             # metadata only, in place
    zarrkit verify data.zarr                     # decode every stored chunk
    zarrkit consolidate data.zarr
    zarrkit rm data.zarr/group/array --yes

``PATH`` is a directory store, a ``*.zip`` file or a URL; a node inside the store can be named
by going on with the path (``data.zarr/group/array``: the store root is found by walking up
the directories holding ``zarr.json``/``.zgroup``/``.zarray``) or with ``--path``.

``cp`` streams one destination chunk (or shard) at a time, so memory stays bounded whatever
the size of the arrays, and it is resumable: the destination carries a marker
(``.zarrkit-copy-in-progress``; for a zip file, the copy is written to ``<name>.zip.partial``
and renamed at the end) until the copy is complete, and running the same command again after
an interruption skips the chunks already written.  A destination holding an interrupted copy
never looks complete: ``zarrkit verify`` reports it and ``cp`` refuses to overwrite anything
else without ``--overwrite``.

Exit codes: 0 success; 1 ``verify`` found corrupt chunks (or an incomplete copy); 2 an error
(one line ``zarrkit: error: ...`` on stderr); 3 a copy stopped by ``ZARRKIT_CP_FAIL_AFTER``;
130 interrupted.

Testing hooks of ``cp``: ``ZARRKIT_CP_FAIL_AFTER=N`` stops the copy (exit 3) after writing N
chunks; ``ZARRKIT_CP_THROTTLE=SECONDS`` waits that long after each chunk written.  Both make
the copy sequential.

Examples
--------
>>> import os, tempfile, zarrkit
>>> from zarrkit.cli import main
>>> d = tempfile.mkdtemp()
>>> z = zarrkit.zeros((4, 4), chunks=(2, 2), store=os.path.join(d, 'a.zarr'), zarr_format=2)
>>> main(['ls', os.path.join(d, 'a.zarr')])
/  array  (4, 4) float64  chunks (2, 2)
0
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime
import json
import math
import os
import shutil
import signal
import sys
import time
import warnings
import zipfile
from collections.abc import Iterator
from typing import Any

import numpy as np

from . import __version__
from .core.array import Array
from .core.group import Group
from .core.info import human_readable_size
from .metadata.normalize import normalize_path
from .errors import MetadataError, ZarrkitError
from .metadata import io
from .storage.base import Store, join_path

__all__ = ["main", "build_parser", "locate", "Location", "COPY_MARKER"]

#: The key a copy in progress keeps in the destination (below the destination node) until it
#: completes.
COPY_MARKER = ".zarrkit-copy-in-progress"
#: Suffix of the file a copy to a zip file writes into, renamed when the copy is complete.
PARTIAL_SUFFIX = ".partial"

_META_NAMES = ("zarr.json", ".zgroup", ".zarray")

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_ERROR = 2
EXIT_STOPPED = 3
EXIT_INTERRUPTED = 130


class CLIError(Exception):
    """An error reported as one line ``zarrkit: error: ...`` with exit code 2."""


class CopyStopped(Exception):
    """A copy stopped on purpose (``ZARRKIT_CP_FAIL_AFTER``)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise CLIError(f"{message} (see '{self.prog} --help')")


# -- locating stores and nodes ----------------------------------------------------------------------
@dataclasses.dataclass
class Location:
    """Where a ``PATH`` argument points: a store (``root``, of ``kind`` ``'dir'``, ``'zip'``
    or ``'url'``) and a node ``path`` inside it."""

    arg: str
    root: str
    path: str
    kind: str
    exists: bool


def _has_meta(d: str) -> bool:
    return any(os.path.isfile(os.path.join(d, n)) for n in _META_NAMES)


def _walk_up(d: str) -> tuple[str, str]:
    """The topmost directory of the chain of Zarr nodes above ``d`` and ``d``'s path in it."""
    root = d
    while True:
        parent = os.path.dirname(root)
        if parent == root or not _has_meta(parent):
            break
        root = parent
    rel = os.path.relpath(d, root)
    return root, "" if rel == "." else rel.replace(os.sep, "/")


def locate(arg: str, node_path: str | None = None) -> Location:
    """Resolve a ``PATH`` argument (plus an optional ``--path``) to a :class:`Location`.

    Examples
    --------
    >>> import os, tempfile, zarrkit
    >>> from zarrkit.cli import locate
    >>> d = tempfile.mkdtemp()
    >>> g = zarrkit.open_group(os.path.join(d, 'x.zarr'), mode='w')
    >>> _ = g.zeros('a/b', shape=(3,))
    >>> loc = locate(os.path.join(d, 'x.zarr', 'a', 'b'))
    >>> os.path.basename(loc.root), loc.path, loc.kind
    ('x.zarr', 'a/b', 'dir')
    """
    extra = normalize_path(node_path)
    if "://" in arg and not arg.startswith("file://"):
        return Location(arg, arg.rstrip("/"), extra, "url", True)
    local = arg
    if arg.startswith("file://"):
        from urllib.parse import unquote, urlparse

        local = unquote(urlparse(arg).path)
    p = os.path.abspath(local)
    cur, rest = p, []
    while not os.path.exists(cur):
        parent = os.path.dirname(cur)
        if parent == cur:
            break
        rest.insert(0, os.path.basename(cur))
        cur = parent
    if os.path.isfile(cur):
        if not (cur.endswith(".zip") or zipfile.is_zipfile(cur)):
            raise CLIError(f"{arg}: not a Zarr store (a file that is not a zip file)")
        return Location(arg, cur, join_path("/".join(rest), extra), "zip", not rest)
    if rest:
        # a path that does not exist yet: a new zip file, a node below an existing store, or
        # a new directory store
        for i, part in enumerate(rest):
            if part.endswith(".zip"):
                root = os.path.join(cur, *rest[: i + 1])
                return Location(arg, root, join_path("/".join(rest[i + 1 :]), extra), "zip", False)
        if _has_meta(cur):
            root, inner = _walk_up(cur)
            return Location(arg, root, join_path(inner, "/".join(rest), extra), "dir", False)
        return Location(arg, p, extra, "dir", False)
    if _has_meta(p):
        root, inner = _walk_up(p)
        return Location(arg, root, join_path(inner, extra), "dir", True)
    return Location(arg, p, extra, "dir", True)


#: fsspec options for URL stores (``--storage-options``), set by :func:`main`
_storage_options: dict[str, Any] = {}


def _parse_storage_options(text: str | None) -> dict[str, Any]:
    if text is None:
        text = os.environ.get("ZARRKIT_STORAGE_OPTIONS")
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise CLIError(f"--storage-options: not valid JSON ({exc})") from None
    if not isinstance(value, dict):
        raise CLIError(f"--storage-options: expected a JSON object, got {text!r}")
    return value


def _open_store(loc: Location, write: bool = False) -> Store:
    from .storage.coerce import coerce_store
    from .storage.local import DirectoryStore
    from .storage.zip import ZipStore

    if loc.kind == "url":
        return coerce_store(loc.root, read_only=not write, storage_options=_storage_options or None)
    if not write and not os.path.exists(loc.root):
        raise CLIError(f"{loc.arg}: no such file or directory")
    if loc.kind == "zip":
        return ZipStore(loc.root, mode="a" if write else "r")
    return DirectoryStore(loc.root, read_only=not write)


def _node_kind(store: Store, path: str, loc: Location) -> str:
    kind = io.node_kind(store, path)
    if kind is None:
        where = loc.arg if not path or path == loc.path else f"{loc.arg} (path {path!r})"
        if loc.kind != "url" and not os.path.exists(loc.root):
            raise CLIError(f"{loc.arg}: no such file or directory")
        raise CLIError(f"no Zarr array or group at {where}")
    return kind


def _open_node(store: Store, loc: Location) -> Array | Group:
    kind = _node_kind(store, loc.path, loc)
    if kind == "array":
        return Array(store, path=loc.path, read_only=True)
    return Group(store, path=loc.path, read_only=True)


def _note_stale_consolidated(store: Store, loc: Location) -> None:
    """After changing nodes below a group with consolidated metadata, say it is stale."""
    parts = loc.path.split("/") if loc.path else []
    for i in range(len(parts)):
        above = join_path(*parts[:i])
        if _is_consolidated(store, above):
            print(
                f"zarrkit: note: the consolidated metadata of group {above or '/'} is now stale; "
                "run 'zarrkit consolidate' on it",
                file=sys.stderr,
            )
            return


def _interrupted_copy(store: Store, loc: Location) -> bool:
    """Whether the node (or a group above it) holds an interrupted ``zarrkit cp``."""
    if loc.kind == "zip" and loc.root.endswith(PARTIAL_SUFFIX):
        return True
    parts = loc.path.split("/") if loc.path else []
    return any(store.exists(join_path(*parts[:i], COPY_MARKER)) for i in range(len(parts) + 1))


def _note_interrupted(store: Store, loc: Location) -> None:
    if _interrupted_copy(store, loc):
        print(
            f"zarrkit: note: {loc.arg} holds an interrupted 'zarrkit cp' (incomplete data); "
            "run the same cp command again to finish it",
            file=sys.stderr,
        )


def _walk(store: Store, path: str) -> Iterator[tuple[str, str]]:
    """``(path, kind)`` of the node at ``path`` and of every node below it."""
    kind = io.node_kind(store, path)
    if kind is None:
        return
    yield path, kind
    if kind == "group":
        prefix = f"{path}/" if path else ""
        for name in store.list_dir(prefix):
            yield from _walk(store, prefix + name)


# -- formatting helpers ------------------------------------------------------------------------------
def _codec_json(codec: Any) -> Any:
    if hasattr(codec, "get_config"):
        from .codecs.registry import codec_config

        return codec_config(codec)
    if hasattr(codec, "to_json"):
        return codec.to_json()
    return repr(codec)


def _metadata_doc(arr: Array) -> dict[str, Any]:
    meta = arr.metadata
    raw = meta.to_bytes(arr.attrs.asdict()) if meta.zarr_format == 3 else meta.to_bytes()
    doc = json.loads(raw)
    doc.pop("attributes", None)
    return doc


def _table(items: list[tuple[str, str]]) -> str:
    width = max(len(k) for k, _ in items)
    return "\n".join(f"{k:<{width}} : {v}" for k, v in items)


def _display_name(node: Array | Group) -> str:
    return node.name or "/"


def _is_consolidated(store: Store, path: str) -> bool:
    from .metadata.consolidated import load_consolidated

    try:
        return load_consolidated(store, path) is not None
    except MetadataError:
        return False


# -- info ------------------------------------------------------------------------------------------
def _array_info(arr: Array, loc: Location) -> dict[str, Any]:
    meta = arr.metadata
    info: dict[str, Any] = {
        "node_type": "array",
        "name": _display_name(arr),
        "path": arr.path,
        "store": loc.root,
        "store_type": type(arr._store).__name__,
        "zarr_format": arr.zarr_format,
        "shape": list(arr.shape),
        "dtype": str(arr.dtype),
        "chunks": list(arr.chunks),
        "shards": list(arr.shards) if arr.shards else None,
        "order": arr.order,
        "fill_value": _metadata_doc(arr).get("fill_value"),
        "filters": [_codec_json(f) for f in (meta.filters or ())],
        "compressors": [_codec_json(c) for c in meta.compressors],
        "dimension_names": list(meta.dimension_names) if meta.dimension_names is not None else None,
        "nbytes": arr.nbytes,
        "nbytes_stored": arr.nbytes_stored,
        "nchunks": arr.nchunks,
        "nchunks_initialized": arr.nchunks_initialized,
        "attributes": arr.attrs.asdict(),
        "metadata": _metadata_doc(arr),
    }
    if arr.shards:
        info["nshards"] = arr.nshards
        info["nshards_initialized"] = arr.nshards_initialized
    return info


def _group_info(grp: Group, loc: Location) -> dict[str, Any]:
    store = grp._store
    members = []
    for name, obj in grp.members():
        m: dict[str, Any] = {"name": name, "node_type": "array" if isinstance(obj, Array) else "group"}
        if isinstance(obj, Array):
            m.update(shape=list(obj.shape), dtype=str(obj.dtype), chunks=list(obj.chunks))
        members.append(m)
    n_arrays = n_groups = 0
    nbytes = stored = 0
    for path, kind in _walk(store, grp.path):
        if path == grp.path:
            continue
        if kind == "array":
            n_arrays += 1
            a = Array(store, path=path, read_only=True)
            nbytes += a.nbytes
            stored += a.nbytes_stored
        else:
            n_groups += 1
    return {
        "node_type": "group",
        "name": _display_name(grp),
        "path": grp.path,
        "store": loc.root,
        "store_type": type(store).__name__,
        "zarr_format": grp.zarr_format,
        "attributes": grp.attrs.asdict(),
        "members": members,
        "consolidated": _is_consolidated(store, grp.path),
        "n_arrays": n_arrays,
        "n_groups": n_groups,
        "nbytes": nbytes,
        "nbytes_stored": stored,
    }


def cmd_info(args: argparse.Namespace) -> int:
    loc = locate(args.path_arg, args.path)
    with contextlib.closing(_open_store(loc)) as store:
        node = _open_node(store, loc)
        _note_interrupted(store, loc)
        if isinstance(node, Array):
            if args.json:
                print(json.dumps(_array_info(node, loc), indent=2, sort_keys=False, allow_nan=True))
                return EXIT_OK
            items = node.info_items()
            extra = [("Store path", loc.root), ("Fill value", str(node.fill_value))]
            if node.metadata.dimension_names is not None:
                extra.append(("Dimension names", str(tuple(node.metadata.dimension_names))))
            extra.append(("Attributes", str(len(node.attrs.asdict()))))
            at = next(i for i, (k, _) in enumerate(items) if k == "Store type") + 1
            print(_table(items[:at] + extra + items[at:]))
            return EXIT_OK
        info = _group_info(node, loc)
        if args.json:
            print(json.dumps(info, indent=2, allow_nan=True))
            return EXIT_OK
        arrays = [m["name"] for m in info["members"] if m["node_type"] == "array"]
        groups = [m["name"] for m in info["members"] if m["node_type"] == "group"]
        items = [
            ("Name", info["name"]),
            ("Type", "zarrkit.hierarchy.Group"),
            ("Zarr format", str(info["zarr_format"])),
            ("Read-only", "True"),
            ("Store type", info["store_type"]),
            ("Store path", loc.root),
            ("Arrays", f"{len(arrays)}" + (f" ({', '.join(arrays)})" if arrays else "")),
            ("Groups", f"{len(groups)}" + (f" ({', '.join(groups)})" if groups else "")),
            ("Attributes", str(len(info["attributes"]))),
            ("Consolidated", str(info["consolidated"])),
            ("Arrays below", str(info["n_arrays"])),
            ("Groups below", str(info["n_groups"])),
            ("No. bytes", f"{info['nbytes']} ({human_readable_size(info['nbytes'])})"),
            ("No. bytes stored", f"{info['nbytes_stored']} ({human_readable_size(info['nbytes_stored'])})"),
        ]
        print(_table(items))
    return EXIT_OK


# -- tree / ls -------------------------------------------------------------------------------------
def cmd_tree(args: argparse.Namespace) -> int:
    loc = locate(args.path_arg, args.path)
    with contextlib.closing(_open_store(loc)) as store:
        node = _open_node(store, loc)
        _note_interrupted(store, loc)
        if isinstance(node, Array):
            print(f"{_display_name(node)} {node.shape} {node.dtype}")
        else:
            print(node.tree(level=args.level))
    return EXIT_OK


def cmd_ls(args: argparse.Namespace) -> int:
    loc = locate(args.path_arg, args.path)
    with contextlib.closing(_open_store(loc)) as store:
        node = _open_node(store, loc)
        _note_interrupted(store, loc)
        entries: list[dict[str, Any]] = []
        if isinstance(node, Array):
            entries.append({"name": _display_name(node), "node_type": "array", "shape": list(node.shape),
                            "dtype": str(node.dtype), "chunks": list(node.chunks)})
        else:
            for name, obj in node.members():
                if isinstance(obj, Array):
                    entries.append({"name": name, "node_type": "array", "shape": list(obj.shape),
                                    "dtype": str(obj.dtype), "chunks": list(obj.chunks)})
                else:
                    entries.append({"name": name, "node_type": "group", "members": len(obj)})
        if args.json:
            print(json.dumps(entries, indent=2))
            return EXIT_OK
        rows = []
        for e in entries:
            if e["node_type"] == "array":
                rows.append((e["name"], "array", f"{tuple(e['shape'])} {e['dtype']}  chunks {tuple(e['chunks'])}"))
            else:
                rows.append((e["name"] + "/", "group", f"{e['members']} members"))
        width = max((len(r[0]) for r in rows), default=0)
        for name, kind, desc in rows:
            print(f"{name:<{width}}  {kind}  {desc}")
    return EXIT_OK


# -- convert / consolidate / rm --------------------------------------------------------------------
def cmd_convert(args: argparse.Namespace) -> int:
    from .convert import convert

    loc = locate(args.path_arg, args.path)
    with contextlib.closing(_open_store(loc, write=True)) as store:
        _node_kind(store, loc.path, loc)
        nodes = list(_walk(store, loc.path))
        todo = [p for p, _ in nodes if io.node_info(store, p)[1] != args.to]
        if not todo:
            print(f"{loc.arg} is already in Zarr v{args.to}")
            return EXIT_OK
        parts = loc.path.split("/") if loc.path else []
        groups = [p for p, kind in nodes if kind == "group"] + ["/".join(parts[:i]) for i in range(len(parts))]
        consolidated = [p for p in groups if _is_consolidated(store, p)]
        # convert() rewrites consolidated metadata in the new format (and refuses a subtree
        # below a consolidated group of the other format)
        convert(store, zarr_format=args.to, path=loc.path)
        msg = f"converted {len(todo)} node{'s' if len(todo) != 1 else ''} of {loc.arg} to Zarr v{args.to}"
        if consolidated:
            msg += " (metadata consolidated again)"
        print(msg)
    return EXIT_OK


def cmd_consolidate(args: argparse.Namespace) -> int:
    from .metadata.consolidated import consolidate

    loc = locate(args.path_arg, args.path)
    with contextlib.closing(_open_store(loc, write=True)) as store:
        kind = _node_kind(store, loc.path, loc)
        if kind != "group":
            raise CLIError(f"{loc.arg} is an array; consolidate a group")
        n = sum(1 for _ in _walk(store, loc.path))
        consolidate(store, loc.path)
        fmt = io.node_info(store, loc.path)[1]
        where = join_path(loc.path, "zarr.json" if fmt == 3 else ".zmetadata")
        print(f"consolidated the metadata of {n} node{'s' if n != 1 else ''} into {where}")
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
            answer = input(f"remove the {what}? [y/N] ").strip().lower()
            if answer not in ("y", "yes"):
                print("nothing removed")
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
        print(f"removed the {what}")
        _note_stale_consolidated(store, loc)
    return EXIT_OK


# -- verify ----------------------------------------------------------------------------------------
def _verify_array(store: Store, path: str, max_missing: int | None) -> tuple[int, int, int, int, list[str]]:
    """``(stored objects, decoded chunks, corrupt, missing, report lines)`` of one array."""
    from .core.pool import run_tasks, threads_for

    arr = Array(store, path=path, read_only=True)
    meta = arr.metadata
    stored = sorted(arr.iter_stored())
    prefix = f"{path}/" if path else ""

    def check(item: tuple[tuple[int, ...], str]) -> tuple[str, int, str | None]:
        key = item[1]
        try:
            n = arr.check_stored(key)
            return key, n, (None if n else "disappeared while verifying")
        except Exception as exc:  # noqa: BLE001 - anything that fails to decode is corrupt
            cause = exc.__cause__ or exc
            reason = f"{type(cause).__name__}: {cause}" if cause is not exc else str(exc)
            return key, 0, reason.replace("\n", " ")

    results = run_tasks(check, stored, threads_for(store))
    lines = []
    corrupt = decoded = 0
    for key, n, reason in results:
        decoded += n
        if reason is not None:
            corrupt += 1
            lines.append(f"corrupt: {key}: {reason}")
    grid = tuple(-(-s // c) for s, c in zip(meta.shape, meta.grid_chunks))
    stored_set = {coords for coords, _ in stored}
    missing = 0
    for coords in np.ndindex(*grid) if grid else [()]:
        if tuple(coords) not in stored_set:
            missing += 1
            if max_missing is None or missing <= max_missing:
                lines.append(f"missing: {prefix}{meta.chunk_key(tuple(coords))}")
    if max_missing is not None and missing > max_missing:
        lines.append(f"missing: ... and {missing - max_missing} more in {path or '/'} (--all lists them)")
    return len(stored), decoded, corrupt, missing, lines


def cmd_verify(args: argparse.Namespace) -> int:
    loc = locate(args.path_arg, args.path)
    with contextlib.closing(_open_store(loc)) as store:
        incomplete = _interrupted_copy(store, loc)
        try:
            _node_kind(store, loc.path, loc)
        except MetadataError as exc:
            print(f"corrupt: {exc}")
            print("1 corrupt metadata document")
            return EXIT_FAILED
        n_arrays = n_objects = n_chunks = n_corrupt = n_missing = 0
        pending = [loc.path]
        while pending:
            path = pending.pop(0)
            try:
                kind = io.node_kind(store, path)
                if kind == "array":
                    io.load_array_metadata(store, path)
                elif kind == "group":
                    io.check_group(store, path)
            except MetadataError as exc:
                n_corrupt += 1
                print(f"corrupt: {str(exc).splitlines()[0]}")
                continue
            if kind == "group":
                prefix = f"{path}/" if path else ""
                pending.extend(prefix + name for name in store.list_dir(prefix))
            elif kind == "array":
                n_arrays += 1
                objects, chunks, corrupt, missing, lines = _verify_array(
                    store, path, None if args.all else args.max_missing
                )
                n_objects += objects
                n_chunks += chunks
                n_corrupt += corrupt
                n_missing += missing
                for line in lines:
                    print(line)
        if incomplete:
            print(f"incomplete: {loc.arg} holds an interrupted 'zarrkit cp'; run the same cp command again to finish it")
        print(
            f"verified {n_arrays} array{'s' if n_arrays != 1 else ''}: {n_chunks} chunks decoded "
            f"in {n_objects} stored objects, {n_corrupt} corrupt, {n_missing} missing"
        )
    return EXIT_FAILED if n_corrupt or incomplete else EXIT_OK


# -- cp --------------------------------------------------------------------------------------------
def _parse_shape(text: str, option: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in text.replace(" ", "").split(",") if v != "")
    except ValueError:
        raise CLIError(f"{option} expects comma-separated integers like 10,10, got {text!r}") from None
    if not values or any(v <= 0 for v in values):
        raise CLIError(f"{option} expects positive integers like 10,10, got {text!r}")
    return values


def _compressor(name: str) -> Any:
    import numcodecs

    return {
        "zstd": lambda: numcodecs.Zstd(level=3),
        "blosc": lambda: numcodecs.Blosc(cname="zstd", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE),
        "gzip": lambda: numcodecs.GZip(level=5),
        "lz4": lambda: numcodecs.LZ4(),
        "none": lambda: None,
    }[name]()


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    ov: dict[str, Any] = {}
    if args.chunks is not None:
        ov["chunks"] = _parse_shape(args.chunks, "--chunks")
    if args.shards is not None:
        ov["shards"] = None if args.shards.lower() == "none" else _parse_shape(args.shards, "--shards")
    if args.compressor is not None:
        ov["compressor"] = _compressor(args.compressor)
    if args.dtype is not None:
        try:
            ov["dtype"] = np.dtype(args.dtype)
        except TypeError:
            raise CLIError(f"--dtype: {args.dtype!r} is not a data type") from None
    return ov


@dataclasses.dataclass
class _Node:
    rel: str  # path relative to the copied node
    kind: str
    zarr_format: int  # of the copy
    src: Any
    attrs: dict[str, Any]
    create: dict[str, Any] | None = None  # creation arguments of an array
    docs: dict[str, Any] | None = None  # the metadata documents the copy must have


def _node_docs(store: Store, path: str, zarr_format: int) -> dict[str, Any]:
    names = ("zarr.json",) if zarr_format == 3 else (".zarray", ".zattrs", ".zgroup")
    docs = {}
    for name in names:
        doc = io.read_json(store, join_path(path, name))
        if doc is not None:
            if isinstance(doc, dict):
                doc.pop("consolidated_metadata", None)
            docs[name] = doc
    return docs


def _plan_copy(store: Store, path: str, args: argparse.Namespace) -> list[_Node]:
    from .api import create
    from .convenience import creation_kwargs
    from .storage.memory import MemoryStore

    ov = _overrides(args)
    plan: list[_Node] = []
    base = len(path) + 1 if path else 0
    for node_path, kind in _walk(store, path):
        rel = node_path[base:] if node_path != path else ""
        fmt_src = io.node_info(store, node_path)[1]
        fmt = args.zarr_format or fmt_src
        attrs = io.read_attributes(store, node_path, fmt_src)
        if kind == "group":
            plan.append(_Node(rel, kind, fmt, None, attrs))
            continue
        src = Array(store, path=node_path, read_only=True)
        name = src.name or "/"
        node_ov = dict(ov)
        if "chunks" in node_ov and len(node_ov["chunks"]) != src.ndim:
            raise CLIError(f"--chunks {args.chunks} has {len(node_ov['chunks'])} values but array {name} has {src.ndim} dimensions")
        if node_ov.get("shards") is not None:
            if fmt != 3:
                raise CLIError("--shards needs Zarr v3 (add --zarr-format 3)")
            if len(node_ov["shards"]) != src.ndim:
                raise CLIError(f"--shards {args.shards} has {len(node_ov['shards'])} values but array {name} has {src.ndim} dimensions")
        try:
            kw = creation_kwargs(src, fmt, node_ov)
        except (ZarrkitError, ValueError, TypeError) as exc:
            raise CLIError(f"array {name}: {exc}") from None
        attrs = dict(attrs)
        dims = attrs.get("_ARRAY_DIMENSIONS")
        if fmt == 3 and fmt_src == 2 and isinstance(dims, list) and len(dims) == src.ndim and all(isinstance(d, str) for d in dims):
            kw["dimension_names"] = attrs.pop("_ARRAY_DIMENSIONS")
        elif fmt == 2 and fmt_src == 3:
            names = src.metadata.dimension_names
            if names is not None and all(n is not None for n in names):
                attrs.setdefault("_ARRAY_DIMENSIONS", list(names))
        # build the target metadata in memory: validates everything before DST is touched and
        # gives the documents an interrupted copy is compared with
        mem = MemoryStore()
        try:
            create(store=mem, zarr_format=fmt, attributes=attrs, **kw)
        except (ZarrkitError, ValueError, TypeError) as exc:
            raise CLIError(f"array {name}: {exc}") from None
        plan.append(_Node(rel, kind, fmt, src, attrs, kw, _node_docs(mem, "", fmt)))
    return plan


def _matches(store: Store, dpath: str, plan: list[_Node]) -> bool:
    """Whether the nodes an interrupted copy left at ``dpath`` are those ``plan`` makes (nodes
    it did not get to are fine)."""
    for node in plan:
        path = join_path(dpath, node.rel)
        try:
            kind = io.node_kind(store, path)
        except MetadataError:
            return False
        if kind is None:
            continue
        if kind != node.kind:
            return False
        if kind == "array" and _node_docs(store, path, node.zarr_format) != node.docs:
            return False
        if kind == "group" and io.node_info(store, path)[1] != node.zarr_format:
            return False
    return True


def _same_fill(src: Array, dst: Array) -> bool:
    """Whether a missing source chunk reads as what a missing destination chunk reads as."""
    from .core.chunks import filled, is_all_fill

    try:
        a = filled((1,), src.dtype, src.fill_value)
        if dst.dtype != src.dtype:
            if src.dtype.kind == "O" or dst.dtype.kind == "O":
                return False
            with np.errstate(all="ignore"):
                a = a.astype(dst.dtype)
        fill = dst.fill_value
        if fill is None:
            return dst.dtype.kind != "O" and is_all_fill(a, np.zeros((), dst.dtype)[()])
        return is_all_fill(a, fill)
    except Exception:  # when in doubt, copy
        return False


class _Progress:
    def __init__(self, total: int, enabled: bool, unit: str = "chunk"):
        self.bar = None
        if enabled:
            try:
                from tqdm import tqdm
            except ImportError:
                tqdm = None
            if tqdm is not None:
                self.bar = tqdm(total=total, unit=unit, file=sys.stderr, dynamic_ncols=True, leave=False)

    def describe(self, text: str) -> None:
        if self.bar is not None:
            self.bar.set_description(text, refresh=False)

    def update(self, n: int = 1) -> None:
        if self.bar is not None:
            self.bar.update(n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _env_number(name: str, kind: type) -> Any:
    value = os.environ.get(name)
    if value in (None, ""):
        return None
    try:
        return kind(value)
    except ValueError:
        raise CLIError(f"environment variable {name} must be a number, got {value!r}") from None


def cmd_cp(args: argparse.Namespace) -> int:
    from .api import create, require_parent_groups
    from .convenience import iter_blocks, stream_copy
    from .metadata.consolidated import consolidate
    from .storage.zip import ZipStore

    fail_after = _env_number("ZARRKIT_CP_FAIL_AFTER", int)
    throttle = _env_number("ZARRKIT_CP_THROTTLE", float)
    threads = 1 if (fail_after is not None or throttle) else None

    src_loc = locate(args.src, args.path)
    dst_loc = locate(args.dst, args.dest_path)
    start = time.monotonic()
    with contextlib.ExitStack() as stack:
        src_store = stack.enter_context(contextlib.closing(_open_store(src_loc)))
        src_kind = _node_kind(src_store, src_loc.path, src_loc)
        if src_loc.kind == dst_loc.kind and os.path.abspath(src_loc.root) == os.path.abspath(dst_loc.root):
            a, b = src_loc.path, dst_loc.path
            if a == b or not a or b.startswith(a + "/") or a.startswith(b + "/") or not b:
                raise CLIError("the source and the destination overlap")
        plan = _plan_copy(src_store, src_loc.path, args)

        # -- the destination: a fresh copy, or the continuation of an interrupted one (same
        #    command: the metadata the copy would write equals what the interrupted one wrote)
        resume = False
        final_zip = None
        dpath = dst_loc.path
        prefix = f"{dpath}/" if dpath else ""
        marker = join_path(dpath, COPY_MARKER)
        if dst_loc.kind == "zip":
            if os.path.exists(dst_loc.root):
                if dst_loc.path:
                    raise CLIError(f"{dst_loc.root} exists: copy into a new zip file")
                if not args.overwrite:
                    raise CLIError(f"{args.dst} already exists (use --overwrite to replace it)")
            final_zip = dst_loc.root
            partial = final_zip + PARTIAL_SUFFIX
            if os.path.exists(partial) and not zipfile.is_zipfile(partial):
                print(f"zarrkit: discarding {partial} (an unreadable partial copy); starting over", file=sys.stderr)
                os.remove(partial)
            if os.path.exists(partial):
                with contextlib.closing(ZipStore(partial, mode="r")) as old:
                    resume = _matches(old, dpath, plan)
                if not resume:
                    if not args.overwrite:
                        raise CLIError(
                            f"{partial} holds an interrupted copy with other settings than this command; "
                            "use --overwrite to start over"
                        )
                    os.remove(partial)
            dst_store: Store = ZipStore(partial, mode="a")
            stack.callback(dst_store.close)
        else:
            dst_store = _open_store(dst_loc, write=True)
            stack.enter_context(contextlib.closing(dst_store))
            occupied = io.node_kind(dst_store, dpath) is not None or any(True for _ in dst_store.list_prefix(prefix))
            if occupied:
                interrupted = dst_store.exists(marker)
                if interrupted and _matches(dst_store, dpath, plan):
                    resume = True
                elif args.overwrite:
                    dst_store.delete_prefix(prefix)
                elif interrupted:
                    raise CLIError(
                        f"{args.dst} holds an interrupted copy with other settings than this command; "
                        "use --overwrite to start over"
                    )
                else:
                    raise CLIError(f"{args.dst} already exists (use --overwrite to replace it)")
            if not resume:
                info = {"source": args.src, "started": datetime.datetime.now().isoformat(timespec="seconds"),
                        "zarrkit": __version__}
                dst_store.set(marker, json.dumps(info).encode())
        if dpath:
            require_parent_groups(dst_store, dpath, plan[0].zarr_format)

        # -- metadata: create what is missing (an interrupted copy may not have got to it)
        arrays: list[tuple[_Node, Array]] = []
        for node in plan:
            path = join_path(dpath, node.rel)
            if io.node_kind(dst_store, path) is None:
                if node.kind == "group":
                    io.write_group_metadata(dst_store, path, node.zarr_format, node.attrs)
                else:
                    create(store=dst_store, path=path or None, zarr_format=node.zarr_format,
                           attributes=node.attrs, **node.create)
            if node.kind == "array":
                arrays.append((node, Array(dst_store, path=path or None, write_empty_chunks=True)))

        # -- data, one destination chunk (shard) at a time
        sharded = [bool(d.shards) for _, d in arrays]
        unit = "shards" if sharded and all(sharded) else "chunks/shards" if any(sharded) else "chunks"
        total = sum(math.prod(-(-s // c) for s, c in zip(d.shape, d.metadata.grid_chunks)) for _, d in arrays)
        show = not args.quiet and (args.progress or (args.progress is None and sys.stderr.isatty()))
        progress = _Progress(total, bool(show), unit.split("/")[0][:-1])
        stack.callback(progress.close)
        counts = {"written": 0, "present": 0, "empty": 0, "bytes": 0}

        def on_written(coords: Any, region: Any, nbytes: int) -> None:
            counts["written"] += 1
            counts["bytes"] += nbytes
            progress.update()
            if throttle:
                time.sleep(throttle)
            if fail_after is not None and counts["written"] >= fail_after:
                raise CopyStopped(
                    f"copy stopped after {counts['written']} {unit} (ZARRKIT_CP_FAIL_AFTER={fail_after}); "
                    "run the same command again to resume"
                )

        for node, dst in arrays:
            src = node.src
            progress.describe(src.name or "/")
            dmeta = dst.metadata
            present = {c for c, _ in dst.iter_stored()} if resume else set()
            src_grid = tuple(src.metadata.grid_chunks)
            src_stored = {c for c, _ in src.iter_stored()} if _same_fill(src, dst) else None

            def units(dmeta: Any = dmeta, present: set = present, src_grid: tuple = src_grid,
                      src_stored: set | None = src_stored) -> Iterator[Any]:
                for coords, region in iter_blocks(tuple(dmeta.shape), tuple(dmeta.grid_chunks)):
                    if present and coords in present:
                        counts["present"] += 1
                        progress.update()
                        continue
                    if src_stored is not None:
                        ranges = [range(r.start // g, (r.stop - 1) // g + 1) for r, g in zip(region, src_grid)]
                        if not any(tuple(c) in src_stored for c in _product(ranges)):
                            counts["empty"] += 1
                            progress.update()
                            continue
                    yield coords, region

            stream_copy(src, dst, units=units(), threads=threads, on_written=on_written,
                        window_bytes=args.buffer * 2**20)

        # -- finish: consolidated metadata, then remove the marker (or rename the zip) last
        if src_kind == "group" and _is_consolidated(src_store, src_loc.path):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # a zip file keeps the older root document too
                consolidate(dst_store, dpath)
        progress.close()
        if final_zip is None:
            dst_store.delete(marker)
        else:
            dst_store.close()
            os.replace(final_zip + PARTIAL_SUFFIX, final_zip)
    n_arrays = len(arrays)
    n_groups = sum(1 for n in plan if n.kind == "group")
    elapsed = time.monotonic() - start
    print(
        f"{'resumed' if resume else 'copied'} {args.src} -> {args.dst}: {n_arrays} array{'s' if n_arrays != 1 else ''}, "
        f"{n_groups} group{'s' if n_groups != 1 else ''}; {counts['written']} {unit} written, "
        f"{counts['present']} already present, {counts['empty']} empty; "
        f"{human_readable_size(counts['bytes'])} in {elapsed:.1f}s"
    )
    return EXIT_OK


def _product(ranges: list[range]) -> Iterator[tuple[int, ...]]:
    import itertools

    return itertools.product(*ranges)


# -- the parser ------------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="zarrkit",
        description="Inspect, copy, convert and check Zarr v2/v3 stores (directories, .zip files, URLs).",
        epilog="PATH may name a node inside a store: data.zarr/group/array (or use --path).",
    )
    parser.add_argument("--version", action="version", version=f"zarrkit {__version__}")
    parser.add_argument(
        "--storage-options", default=None, metavar="JSON",
        help="fsspec options for URL stores, as a JSON object, e.g. "
             "'{\"anon\": true}' or '{\"client_kwargs\": {\"endpoint_url\": \"http://...\"}}' "
             "(default: $ZARRKIT_STORAGE_OPTIONS)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    def add(name: str, help: str, func: Any) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help, description=help)
        p.set_defaults(func=func)
        return p

    def path_args(p: argparse.ArgumentParser) -> None:
        p.add_argument("path_arg", metavar="PATH", help="store (directory, .zip, URL), optionally /node/path")
        p.add_argument("--path", default=None, help="node path inside the store")

    p = add("info", "show the info table of an array, or a summary of a group", cmd_info)
    path_args(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")

    p = add("tree", "print the hierarchy as a tree", cmd_tree)
    path_args(p)
    p.add_argument("--level", type=int, default=None, help="depth to show")

    p = add("ls", "list the members of a group", cmd_ls)
    path_args(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")

    p = add("cp", "copy an array or a hierarchy to another store, chunk by chunk (resumable)", cmd_cp)
    p.add_argument("src", metavar="SRC", help="source store, optionally /node/path")
    p.add_argument("dst", metavar="DST", help="destination (directory, .zip, URL), optionally /node/path")
    p.add_argument("--path", default=None, help="node path inside the source store")
    p.add_argument("--dest-path", default=None, help="node path inside the destination store")
    p.add_argument("--zarr-format", type=int, choices=(2, 3), default=None, help="format of the copy (default: the source's)")
    p.add_argument("--chunks", default=None, help="chunk shape of the copy, e.g. 100,100")
    p.add_argument("--shards", default=None, help="shard shape of the copy (v3), e.g. 1000,1000, or 'none'")
    p.add_argument("--compressor", choices=("zstd", "blosc", "gzip", "lz4", "none"), default=None,
                   help="compressor of the copy (default: the source's)")
    p.add_argument("--dtype", default=None, help="data type of the copy (values are cast)")
    p.add_argument("--overwrite", action="store_true", help="replace whatever is at DST")
    p.add_argument("--buffer", type=int, default=64, metavar="MIB",
                   help="memory for chunks in flight, in MiB (default 64; at least one chunk)")
    bar = p.add_mutually_exclusive_group()
    bar.add_argument("--progress", dest="progress", action="store_true", default=None,
                     help="show a progress bar (default: when stderr is a terminal)")
    bar.add_argument("--no-progress", dest="progress", action="store_false")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")

    p = add("convert", "convert a hierarchy between Zarr v2 and v3 in place (metadata only)", cmd_convert)
    path_args(p)
    p.add_argument("--to", type=int, choices=(2, 3), required=True, help="target format")

    p = add("verify", "decode every stored chunk; report missing and corrupt ones (exit 1 if corrupt)", cmd_verify)
    path_args(p)
    p.add_argument("--max-missing", type=int, default=20, help="missing chunks listed per array (default 20)")
    p.add_argument("--all", action="store_true", help="list every missing chunk")

    p = add("consolidate", "consolidate the metadata of a hierarchy", cmd_consolidate)
    path_args(p)

    p = add("rm", "remove an array or group (and everything below it)", cmd_rm)
    path_args(p)
    p.add_argument("-y", "--yes", action="store_true", help="do not ask for confirmation")
    return parser


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, OSError) and not isinstance(exc, ZarrkitError) and exc.strerror:
        text = f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror
    else:
        text = str(exc)
        if isinstance(exc, KeyError) and not isinstance(exc, ZarrkitError) and exc.args:
            text = f"key not found: {exc.args[0]}"
    text = " ".join(text.split())
    return text or type(exc).__name__


def _error(message: str) -> None:
    print(f"zarrkit: error: {message}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); returns the exit code."""
    parser = build_parser()
    previous = None
    if hasattr(signal, "SIGTERM"):
        with contextlib.suppress(ValueError):  # not in the main thread
            previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        args = parser.parse_args(argv)
        global _storage_options
        _storage_options = _parse_storage_options(args.storage_options)
        return args.func(args)
    except CLIError as exc:
        _error(_one_line(exc))
        return EXIT_ERROR
    except CopyStopped as exc:
        _error(_one_line(exc))
        return EXIT_STOPPED
    except KeyboardInterrupt:
        print("zarrkit: interrupted (an interrupted cp resumes when run again)", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        with contextlib.suppress(OSError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except Exception as exc:  # one line, no traceback, for every failure
        if os.environ.get("ZARRKIT_DEBUG"):
            raise
        known = isinstance(exc, (ZarrkitError, OSError, ValueError, TypeError, KeyError))
        _error(_one_line(exc) if known else f"{type(exc).__name__}: {_one_line(exc)} (set ZARRKIT_DEBUG=1 for a traceback)")
        return EXIT_ERROR
    finally:
        if previous is not None:
            with contextlib.suppress(ValueError):
                signal.signal(signal.SIGTERM, previous)


def _terminate(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
