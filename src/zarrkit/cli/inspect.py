"""The commands that look: ``info``, ``tree``, ``ls`` and ``verify``."""

from __future__ import annotations

import argparse
import collections
import contextlib
import itertools
import json
import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..api.conversion import mixed_documents
from ..core.array import Array
from ..core.group import Group
from ..core.info import (
    bytes_text,
)
from ..core.pool import run_tasks, threads_for
from ..core.tree import TreeView
from ..errors import MetadataError, ZarrkitError
from ..metadata import io
from ..storage.base import Store, is_node_name
from .common import (
    EXIT_FAILED,
    EXIT_OK,
    Location,
    _codec_json,
    _display_name,
    _interrupted_copy,
    _is_consolidated,
    _metadata_doc,
    _node_kind,
    _note_interrupted,
    _open_node,
    _open_store,
    _table,
    _walk,
    locate,
    plural,
    say,
    shown,
    size_text,
)
from .progress import ByteProgress, wanted

# -- info ------------------------------------------------------------------------------------------

def chunks_json(arr: Any) -> list[Any]:
    """An array's chunk shape for reports; a rectilinear grid's edges in their stored
    (run-length) form, whose size the metadata bounds."""
    meta = getattr(arr, "metadata", None)
    if meta is not None and getattr(meta, "chunk_shapes", None) is not None and not arr.shards:
        return meta.chunk_grid_json()["configuration"]["chunk_shapes"]
    return list(arr.chunks)

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
        "chunks": chunks_json(arr),
        "shards": list(arr.shards) if arr.shards else None,
        "order": arr.order,
        "fill_value": _metadata_doc(arr).get("fill_value"),
        "filters": [_codec_json(f) for f in (meta.filters or ())],
        "compressors": [_codec_json(c) for c in meta.compressors],
        "dimension_names": (None if getattr(meta, "dimension_names", None) is None
                            else list(meta.dimension_names)),
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
            m.update(shape=list(obj.shape), dtype=str(obj.dtype), chunks=chunks_json(obj))
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


def _codec_text(config: Any) -> str:
    """A codec as the ``info`` table shows it, the same way in both formats:
    ``zstd(level=3, checksum=False)`` from a v2 ``{"id": ...}`` or a v3 ``{"name": ...}``."""
    if not isinstance(config, dict):
        return str(config)
    config = dict(config)
    name = config.pop("id", None) or config.pop("name", "?")
    params = config.pop("configuration", None)
    params = {**config, **params} if isinstance(params, dict) else config
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in params.items())})"


def _codecs_text(configs: list[Any]) -> str:
    return ", ".join(_codec_text(c) for c in configs) or "none"


def _shape_text(shape: Any) -> str:
    """A shape; a rectilinear grid's edges (run-length, as stored) as ``variable [...]``."""
    return str(tuple(shape)) if all(isinstance(n, int) for n in shape) else f"variable {shape}"


def array_info_text(info: dict[str, Any], fill_value: Any) -> str:
    """An array's ``info`` table (``info`` is :func:`_array_info`'s, ``fill_value`` the
    array's): one layout whatever the format, unlike ``Array.info``, which mirrors the
    zarr-python of the array's format."""
    items = [
        ("Name", "/" + info["path"]),
        ("Type", "array"),
        ("Zarr format", str(info["zarr_format"])),
        ("Data type", info["dtype"]),
        ("Shape", _shape_text(info["shape"])),
        ("Chunk shape", _shape_text(info["chunks"])),
    ]
    if info["shards"]:
        items.append(("Shard shape", _shape_text(info["shards"])))
    fill = fill_value.item() if isinstance(fill_value, np.generic) else fill_value
    items += [("Order", str(info["order"])), ("Fill value", str(fill))]
    if info["dimension_names"] is not None:
        items.append(("Dimension names", str(tuple(info["dimension_names"]))))
    items += [
        ("Filters", _codecs_text(info["filters"])),
        ("Compressors", _codecs_text(info["compressors"])),
        ("Store type", info["store_type"]),
        ("Store path", info["store"]),
        ("Attributes", str(len(info["attributes"]))),
        ("No. bytes", bytes_text(info["nbytes"])),
        ("No. bytes stored", bytes_text(info["nbytes_stored"])),
    ]
    if info["nbytes_stored"]:
        items.append(("Storage ratio", f"{info['nbytes'] / info['nbytes_stored']:.1f}"))
    items.append(("Chunks initialized", f"{info['nchunks_initialized']}/{info['nchunks']}"))
    if info["shards"]:
        items.append(("Shards initialized", f"{info['nshards_initialized']}/{info['nshards']}"))
    return _table(_shown_items(items))


def group_info_text(info: dict[str, Any]) -> str:
    """A group's ``info`` table (``info`` is :func:`_group_info`'s), in the layout of
    :func:`array_info_text`, with what the whole hierarchy below holds."""
    arrays = [m["name"] for m in info["members"] if m["node_type"] == "array"]
    groups = [m["name"] for m in info["members"] if m["node_type"] == "group"]
    items = [
        ("Name", "/" + info["path"]),
        ("Type", "group"),
        ("Zarr format", str(info["zarr_format"])),
        ("Store type", info["store_type"]),
        ("Store path", info["store"]),
        ("Attributes", str(len(info["attributes"]))),
        ("Consolidated", str(info["consolidated"])),
        ("Arrays", ", ".join(arrays) or "none"),
        ("Groups", ", ".join(groups) or "none"),
        ("Arrays below", str(info["n_arrays"])),
        ("Groups below", str(info["n_groups"])),
        ("No. bytes", bytes_text(info["nbytes"])),
        ("No. bytes stored", bytes_text(info["nbytes_stored"])),
    ]
    return _table(_shown_items(items))


def _shown_items(items: list[tuple[str, str]]) -> list[tuple[str, str]]:
    # names, paths, fill values and codecs come from the store: one line each, escaped
    return [(k, shown(v)) for k, v in items]


@contextlib.contextmanager
def _opened(args: argparse.Namespace) -> Iterator[tuple[Location, Any]]:
    """The location and node the command names, its store open (and closed after); a note on
    stderr where a copy into it was interrupted."""
    loc = locate(args.path_arg, args.path)
    with contextlib.closing(_open_store(loc)) as store:
        node = _open_node(store, loc)
        _note_interrupted(store, loc)
        yield loc, node


def cmd_info(args: argparse.Namespace) -> int:
    with _opened(args) as (loc, node):
        if isinstance(node, Array):
            if args.json:
                say(json.dumps(_array_info(node, loc), indent=2, sort_keys=False, allow_nan=True))
            else:
                say(array_info_text(_array_info(node, loc), node.fill_value))
            return EXIT_OK
        info = _group_info(node, loc)
        if args.json:
            say(json.dumps(info, indent=2, allow_nan=True))
        else:
            say(group_info_text(info))
    return EXIT_OK


# -- tree / ls -------------------------------------------------------------------------------------
def cmd_tree(args: argparse.Namespace) -> int:
    with _opened(args) as (_, node):
        if isinstance(node, Array):
            say(f"{_display_name(node)} {node.shape} {node.dtype}")
        else:
            # ``--level`` counts the levels shown whatever the format (0: the node alone);
            # the drawing ends with a line break of its own: no blank line after the tree
            view = TreeView(node, args.level, zarr3=node.zarr_format == 3)
            say(str(view).rstrip("\n"))
    return EXIT_OK


def _array_entry(name: str, arr: Array) -> dict[str, Any]:
    return {"name": name, "node_type": "array", "shape": list(arr.shape), "dtype": str(arr.dtype),
            "chunks": chunks_json(arr), "shards": list(arr.shards) if arr.shards else None,
            "nbytes": arr.nbytes, "nbytes_stored": arr.nbytes_stored}


def cmd_ls(args: argparse.Namespace) -> int:
    with _opened(args) as (_, node):
        entries: list[dict[str, Any]] = []
        if isinstance(node, Array):
            entries.append(_array_entry(_display_name(node), node))
        else:
            for name, obj in node.members():
                if isinstance(obj, Array):
                    entries.append(_array_entry(name, obj))
                else:
                    entries.append({"name": name, "node_type": "group", "members": len(obj)})
        if args.json:
            say(json.dumps(entries, indent=2))
            return EXIT_OK
        rows = []
        for e in entries:
            if e["node_type"] == "array":
                shards = f"  shards {tuple(e['shards'])}" if e["shards"] else ""
                desc = (f"{tuple(e['shape'])} {e['dtype']}  chunks {tuple(e['chunks'])}{shards}  "
                        f"{size_text(e['nbytes_stored'])} stored")
                rows.append((shown(e["name"]), "array", desc))
            else:
                rows.append((shown(e["name"]) + "/", "group", plural(e["members"], "member")))
        width = max((len(r[0]) for r in rows), default=0)
        for name, kind, desc in rows:
            say(f"{name:<{width}}  {kind}  {desc}")
    return EXIT_OK


def _say_above(progress: ByteProgress, line: str) -> None:
    """A line of the report while the bar runs (above it, which stays at the bottom)."""
    if progress.bar is None:
        say(line)
    else:
        with progress.bar.external_write_mode():
            say(line)


# -- verify ----------------------------------------------------------------------------------------
def _grid_coords(grid: tuple[int, ...]) -> Any:
    """Every coordinate of ``grid`` in C order, one at a time (``itertools.product`` would
    first make a tuple of each dimension's range, which a huge grid cannot hold)."""
    if any(n == 0 for n in grid):
        return
    coords = [0] * len(grid)
    while True:
        yield tuple(coords)
        i = len(grid) - 1
        while i >= 0:
            coords[i] += 1
            if coords[i] < grid[i]:
                break
            coords[i] = 0
            i -= 1
        if i < 0:
            return


def _reason(exc: BaseException) -> str:
    """Why a stored object is corrupt, never empty: the cause of the error (its type and
    message), else the error's message, else the type names of both."""
    cause = exc.__cause__
    text = " ".join(str(exc).split())
    if cause is not None and cause is not exc:
        cause_text = " ".join(str(cause).split())
        if cause_text:
            return f"{type(cause).__name__}: {cause_text}"
        return f"{text} ({type(cause).__name__})" if text else f"{type(exc).__name__} ({type(cause).__name__})"
    if not text:
        return type(exc).__name__
    return text if isinstance(exc, ZarrkitError) else f"{type(exc).__name__}: {text}"


def _verify_array(store: Store, path: str, max_missing: int | None,
                  progress: ByteProgress | None = None) -> tuple[int, int, int, int, list[str]]:
    """``(stored objects, decoded chunks, corrupt, missing, report lines)`` of one array; the
    bar advances by the bytes of the chunks decoded, then of the rest (missing, corrupt)."""
    if progress is None:
        progress = ByteProgress(0, False, desc="")
    arr = Array(store, path=path, read_only=True)
    chunk_bytes = arr.nbytes / max(1, arr.nchunks)
    meta = arr.metadata
    stored = sorted(arr.iter_stored())
    prefix = f"{path}/" if path else ""

    def check(item: tuple[tuple[int, ...], str]) -> tuple[str, int, str | None]:
        key = item[1]
        try:
            n = arr.check_stored(key)
            progress.update(round(n * chunk_bytes))
            return key, n, (None if n else "disappeared while verifying")
        except Exception as exc:  # noqa: BLE001 - anything that fails to decode is corrupt
            return key, 0, _reason(exc)

    results = run_tasks(check, stored, threads_for(store))
    lines = []
    corrupt = decoded = 0
    for key, n, reason in results:
        decoded += n
        if reason is not None:
            corrupt += 1
            lines.append(f"corrupt: {shown(key)}: {shown(reason)}")
    progress.skip(max(0, arr.nbytes - round(decoded * chunk_bytes)))
    grid = meta.storage_grid.grid_shape
    stored_set = {coords for coords, _ in stored}
    # counted, not enumerated: the grid may hold more chunks than could ever be listed; only
    # those reported are looked for (at most the stored ones plus max_missing coordinates)
    missing = math.prod(grid) - len(stored_set)
    n_listed = missing if max_missing is None else min(missing, max_missing)
    if n_listed:
        absent = (c for c in _grid_coords(grid) if c not in stored_set)
        for coords in itertools.islice(absent, n_listed):
            lines.append(f"missing: {shown(prefix + meta.chunk_key(coords))}")
    if max_missing is not None and missing > max_missing:
        lines.append(f"missing: ... and {missing - max_missing} more in {shown(path or '/')} (--all lists them)")
    return len(stored), decoded, corrupt, missing, lines


def _total_bytes(store: Store, path: str) -> int:
    """The bytes of the arrays at and below ``path`` (what the bar of ``verify`` counts);
    those whose metadata does not read count nothing."""
    total = 0
    with contextlib.suppress(ZarrkitError, ValueError, OSError):
        for node_path, kind in _walk(store, path):
            if kind == "array":
                with contextlib.suppress(ZarrkitError, ValueError, OSError):
                    total += Array(store, path=node_path, read_only=True).nbytes
    return total


def cmd_verify(args: argparse.Namespace) -> int:
    loc = locate(args.path_arg, args.path)
    with contextlib.closing(_open_store(loc)) as store, contextlib.ExitStack() as stack:
        incomplete = _interrupted_copy(store, loc)
        try:
            _node_kind(store, loc.path, loc)
        except MetadataError as exc:
            say(f"corrupt: {shown(exc)}")
            say("1 corrupt metadata document")
            return EXIT_FAILED
        progress = ByteProgress(_total_bytes(store, loc.path) if wanted(args) else 0, wanted(args),
                                desc=f"verify {shown(loc.arg)}")
        stack.callback(progress.close)
        n_arrays = n_objects = n_chunks = n_corrupt = n_missing = n_mixed = 0
        pending = collections.deque([loc.path])
        seen: set[str] = set()
        while pending:
            path = pending.popleft()
            if path in seen:
                continue
            seen.add(path)
            mixed = mixed_documents(store, path)
            if mixed is not None:
                n_mixed += 1
                names, agree = mixed
                _say_above(progress,
                    f"half-converted: node {shown(path or '/')} holds both Zarr v3 (zarr.json) and Zarr v2 "
                    f"({', '.join(names)}) metadata{'' if agree else ', which disagree'}; readers use "
                    "zarr.json; run 'zarrkit convert' with --zarr-format 3 or 2 again to finish"
                )
            try:
                kind = io.node_kind(store, path)
                if kind == "array":
                    io.load_array_metadata(store, path)
                elif kind == "group":
                    io.check_group(store, path)
            except MetadataError as exc:
                n_corrupt += 1
                _say_above(progress, f"corrupt: {shown(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)}")
                continue
            if kind == "group":
                prefix = f"{path}/" if path else ""
                names = [n for n in store.list_dir(prefix) if is_node_name(n)]
                pending.extend(prefix + name for name in names)
            elif kind == "array":
                n_arrays += 1
                progress.show(shown(path or "/"))
                objects, chunks, corrupt, missing, lines = _verify_array(
                    store, path, None if args.all else args.max_missing, progress
                )
                n_objects += objects
                n_chunks += chunks
                n_corrupt += corrupt
                n_missing += missing
                for line in lines:
                    _say_above(progress, line)
        progress.close()
        if incomplete:
            say(f"incomplete: {loc.arg} holds an interrupted 'zarrkit cp'; run the same cp command again to finish it")
        say(
            f"verified {plural(n_arrays, 'array')}: {plural(n_chunks, 'chunk')} decoded "
            f"in {plural(n_objects, 'stored object')}, {n_corrupt} corrupt, {n_missing} missing"
        )
        if n_mixed:
            say(plural(n_mixed, "half-converted node"))
    return EXIT_FAILED if n_corrupt or incomplete or n_mixed else EXIT_OK
