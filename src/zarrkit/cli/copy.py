"""The ``cp`` command: a resumable, streaming copy of arrays and groups between stores."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime
import hashlib
import itertools
import json
import math
import os
import sys
import time
import warnings
import zipfile
from collections.abc import Iterator
from typing import Any

import numpy as np

from .. import __version__
from ..api.creation import create
from ..api.streaming import creation_kwargs, iter_blocks, stream_copy
from ..core.array import Array
from ..core.chunks import filled, is_all_fill
from ..errors import MetadataError, ZarrkitError
from ..metadata import io
from ..metadata.consolidated import consolidate
from ..metadata.io import require_parent_groups
from ..storage.base import Store, join_path
from ..storage.memory import MemoryStore
from ..storage.places import Place, place_of, places_overlap
from ..storage.zip import ZipStore
from .common import (
    COPY_MARKER,
    EXIT_OK,
    PARTIAL_SUFFIX,
    CLIError,
    CopyStopped,
    Location,
    _is_consolidated,
    _node_kind,
    _open_store,
    _walk,
    locate,
    plural,
    say,
    shown,
    size_text,
)
from .options import array_names, check_matched, check_rules, layout
from .progress import ByteProgress, wanted


# -- cp --------------------------------------------------------------------------------------------
def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The creation arguments every array of the copy gets (``--chunks`` and ``--shards``
    are per array: :func:`~zarrkit.cli.options.layout`)."""
    ov: dict[str, Any] = {}
    if args.compressor is not None:
        ov["compressor"] = args.compressor.codec
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
    ov = _overrides(args)
    check_rules(args.chunks, "--chunks")
    check_rules(args.shards, "--shards")
    ranks: dict[int, str] = {}  # the ranks of the arrays copied, and an array of each
    called: set[str] = set()  # what NAME= rules may call the arrays copied
    plan: list[_Node] = []
    base = len(path) + 1 if path else 0
    for node_path, kind in _walk(store, path):
        rel = node_path[base:] if node_path != path else ""
        fmt_src = io.node_info(store, node_path)[1]
        assert fmt_src is not None  # the walk yields nodes that are there
        fmt = args.zarr_format or fmt_src
        attrs = io.read_attributes(store, node_path, fmt_src)
        if kind == "group":
            plan.append(_Node(rel, kind, fmt, None, attrs))
            continue
        src = Array(store, path=node_path, read_only=True)
        name = src.name or "/"
        ranks.setdefault(src.ndim, name)
        known = array_names(rel, src)
        called.update(known)
        node_ov = {**ov, **layout(args.chunks, args.shards, src, fmt, known, ov.get("dtype"))}
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
    check_matched((("--chunks", args.chunks), ("--shards", args.shards)), ranks, called)
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


# -- what the source was when the copy began ------------------------------------------------------
#: the file beside a partial zip file that holds what its source was (a zip file has no marker)
SOURCES_SUFFIX = ".sources.json"


def _token(store: Store, key: str) -> str:
    """A short digest of the version of the value at ``key``: the store's version token (a
    file's inode, size and time), else its size."""
    token = store.version_token(key)
    if token is None:
        token = ("size", store.getsize(key))
    return hashlib.sha256(repr(token).encode()).hexdigest()[:16]


def _source_state(plan: list[_Node]) -> dict[str, Any]:
    """What each source array of ``plan`` is now, by its path in the copy: a digest of its
    metadata documents, and the version of each stored object (chunk or shard) by grid
    coordinates."""
    state: dict[str, Any] = {}
    for node in plan:
        if node.kind != "array":
            continue
        src = node.src
        store, path = src.store, src.path
        docs = hashlib.sha256()
        for name in ("zarr.json", ".zarray", ".zattrs"):
            docs.update(name.encode() + b"\0" + (store.get(join_path(path, name)) or b"-") + b"\0")
        chunks = {",".join(map(str, coords)): _token(store, key) for coords, key in src.iter_stored()}
        state[node.rel or "."] = {"metadata": docs.hexdigest(), "chunks": chunks}
    return state


def _changed_chunks(recorded: dict[str, Any] | None, now: dict[str, Any]) -> dict[str, set[tuple[int, ...]] | None]:
    """By array: the source objects changed since ``recorded`` (rewritten, added, removed),
    or None for an array to copy again whole (its metadata changed, or nothing was recorded)."""
    changed: dict[str, set[tuple[int, ...]] | None] = {}
    for rel, state in now.items():
        before = (recorded or {}).get(rel)
        if not isinstance(before, dict) or before.get("metadata") != state["metadata"] \
                or not isinstance(before.get("chunks"), dict):
            changed[rel] = None
            continue
        old, new = before["chunks"], state["chunks"]
        keys = {k for k in old.keys() | new.keys() if old.get(k) != new.get(k)}
        changed[rel] = {tuple(int(c) for c in k.split(",")) if k else () for k in keys}
    return changed


def _same_fill(src: Array, dst: Array) -> bool:
    """Whether a missing source chunk reads as what a missing destination chunk reads as."""
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
    except Exception:  # noqa: BLE001 (when in doubt, copy)
        return False


def _env_number(name: str, kind: type) -> Any:
    value = os.environ.get(name)
    if value in (None, ""):
        return None
    try:
        return kind(value)
    except ValueError:
        raise CLIError(f"environment variable {name} must be a number, got {value!r}") from None


def _open_zip_destination(
    args: argparse.Namespace, dst_loc: Location, plan: list[_Node],
) -> tuple[Store, bool, dict[str, Any] | None]:
    """The partial zip file a copy writes into, whether it continues an interrupted copy, and
    what the source was when that copy began (beside the partial file; None: not known)."""
    if os.path.exists(dst_loc.root):
        if dst_loc.path:
            raise CLIError(f"{dst_loc.root} exists: copy into a new zip file")
        if not args.overwrite:
            raise CLIError(f"{args.dst} already exists (use --overwrite to replace it)")
    partial = dst_loc.root + PARTIAL_SUFFIX
    resume = False
    # is_zipfile opens the file: a named pipe there would block it forever
    if os.path.lexists(partial) and not (os.path.isfile(partial) and zipfile.is_zipfile(partial)):
        say(f"zarrkit: discarding {partial} (an unreadable partial copy); starting over", file=sys.stderr)
        os.remove(partial)
    if os.path.exists(partial):
        with contextlib.closing(ZipStore(partial, mode="r")) as old:
            resume = _matches(old, dst_loc.path, plan)
        if not resume:
            if not args.overwrite:
                raise CLIError(
                    f"{partial} holds an interrupted copy with other settings than this command; "
                    "use --overwrite to start over"
                )
            os.remove(partial)
    sources = partial + SOURCES_SUFFIX
    recorded = None
    if resume:
        with contextlib.suppress(OSError, ValueError, AttributeError), open(sources, "rb") as f:
            recorded = json.loads(f.read()).get("sources")
    else:
        # what the source is, before anything is copied (replaced atomically)
        with open(sources + ".tmp", "w") as f:
            json.dump({"source": args.src, "sources": _source_state(plan)}, f)
        os.replace(sources + ".tmp", sources)
    return ZipStore(partial, mode="a"), resume, recorded


def _prepare_destination(
    args: argparse.Namespace, dst_store: Store, dpath: str, plan: list[_Node],
) -> tuple[bool, dict[str, Any] | None]:
    """Make ``dst_store`` ready for the copy (a fresh copy leaves its marker, which records
    what the source is; an occupied destination is refused, replaced with ``--overwrite`` or,
    holding an interrupted copy of the same command, continued); returns whether the copy
    resumes, and what the source was when the interrupted copy began (None: not known)."""
    prefix = f"{dpath}/" if dpath else ""
    marker = join_path(dpath, COPY_MARKER)
    resume = False
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
    if resume:
        try:
            recorded = json.loads(dst_store.get(marker) or b"{}").get("sources")
        except (ValueError, AttributeError):
            recorded = None
        return True, recorded
    info = {"source": args.src, "started": datetime.datetime.now().isoformat(timespec="seconds"),
            "zarrkit": __version__, "sources": _source_state(plan)}
    dst_store.set(marker, json.dumps(info).encode())
    return False, None


def _create_nodes(dst_store: Store, dpath: str, plan: list[_Node]) -> list[tuple[_Node, Array]]:
    """Create the nodes still missing (an interrupted copy may not have got to them); returns
    the destination arrays with their plan."""
    if dpath:
        require_parent_groups(dst_store, dpath, plan[0].zarr_format)
    arrays: list[tuple[_Node, Array]] = []
    for node in plan:
        path = join_path(dpath, node.rel)
        if io.node_kind(dst_store, path) is None:
            if node.kind == "group":
                io.write_group_metadata(dst_store, path, node.zarr_format, node.attrs)
            else:
                create(store=dst_store, path=path or None, zarr_format=node.zarr_format,
                       attributes=node.attrs, **(node.create or {}))
        if node.kind == "array":
            arrays.append((node, Array(dst_store, path=path or None, write_empty_chunks=True)))
    return arrays


class _CopyRun:
    """The data part of one ``cp``: destination chunks (shards) streamed one at a time, counted
    and shown as they go; the testing hooks stop or slow it."""

    def __init__(self, args: argparse.Namespace, arrays: list[tuple[_Node, Array]], resume: bool,
                 changed: dict[str, set[tuple[int, ...]] | None] | None = None):
        self.fail_after = _env_number("ZARRKIT_CP_FAIL_AFTER", int)
        self.throttle = _env_number("ZARRKIT_CP_THROTTLE", float)
        self.threads = 1 if (self.fail_after is not None or self.throttle) else None
        self.args = args
        self.window = args.max_mem if args.buffer is None else args.buffer * 2**20
        self.arrays = arrays
        self.resume = resume
        #: by array: the source objects changed since the interrupted copy began (None: all)
        self.changed = changed or {}
        sharded = [bool(d.shards) for _, d in arrays]
        self.unit = "shards" if sharded and all(sharded) else "chunks/shards" if any(sharded) else "chunks"
        # the bar counts the bytes of the arrays (as read, before compression) over the whole
        # copy; its label is the copy's source, what it works on follows the counts
        total = sum(d.nbytes for _, d in arrays)
        source = os.path.basename(str(args.src).rstrip("/\\")) or str(args.src)
        self.progress = ByteProgress(total, wanted(args), desc=shown(source))
        self.itemsize = 1
        self.counts = {"written": 0, "present": 0, "empty": 0, "bytes": 0}

    def label(self, node: _Node) -> str:
        """What the bar shows after the counts while ``node`` is copied: its path below the
        copied node (nothing for the copied array itself: the bar's label names it already)."""
        return shown(node.rel)

    def counted(self, n: int) -> str:
        """``n`` with the unit copied: ``"1 chunk"``, ``"2 shards"``, ``"3 chunks/shards"``."""
        return plural(n, self.unit.replace("chunks", "chunk").replace("shards", "shard"), self.unit)

    def region_bytes(self, region: Any) -> int:
        return math.prod(r.stop - r.start for r in region) * self.itemsize

    def on_written(self, coords: Any, region: Any, nbytes: int) -> None:
        self.counts["written"] += 1
        self.counts["bytes"] += nbytes
        self.progress.update(self.region_bytes(region))
        if self.throttle:
            time.sleep(self.throttle)
        if self.fail_after is not None and self.counts["written"] >= self.fail_after:
            raise CopyStopped(
                f"copy stopped after {self.counted(self.counts['written'])} "
                f"(ZARRKIT_CP_FAIL_AFTER={self.fail_after}); run the same command again to resume"
            )

    def units(self, node: _Node, src: Array, dst: Array) -> Iterator[Any]:
        """The destination's chunks (shards) still to write: not those already written by an
        interrupted copy (unless made of source objects changed since), nor those whose source
        chunks are all missing (fill value)."""
        present = {c for c, _ in dst.iter_stored()} if self.resume else set()
        changed = self.changed.get(node.rel or ".", set()) if self.resume else set()
        src_dims = src.metadata.storage_grid.dims
        src_stored = {c for c, _ in src.iter_stored()} if _same_fill(src, dst) else None
        for coords, region in iter_blocks(tuple(dst.metadata.shape), dst.metadata.storage_grid):
            ranges = [range(d.index(r.start), d.index(r.stop - 1) + 1) for r, d in zip(region, src_dims)]
            if present and coords in present:
                if changed is None or (changed and any(tuple(c) in changed for c in _product(ranges))):
                    # copied from a version of the source that is gone: copied again (even
                    # when the source objects are missing now: the fill value is written)
                    yield coords, region
                    continue
                self.counts["present"] += 1
                self.progress.skip(self.region_bytes(region))
                continue
            if src_stored is not None and not any(tuple(c) in src_stored for c in _product(ranges)):
                self.counts["empty"] += 1
                self.progress.skip(self.region_bytes(region))
                continue
            yield coords, region

    def run(self) -> None:
        for node, dst in self.arrays:
            self.progress.show(self.label(node))
            self.itemsize = dst.dtype.itemsize
            stream_copy(node.src, dst, units=self.units(node, node.src, dst), threads=self.threads,
                        on_written=self.on_written, window_bytes=self.window)


def cmd_cp(args: argparse.Namespace) -> int:
    if args.buffer is not None:
        say(f"zarrkit: warning: --buffer is deprecated: use --max-mem {args.buffer}MiB", file=sys.stderr)
    src_loc = locate(args.src, args.path)
    dst_loc = locate(args.dst, args.dest_path, "--dest-path")
    start = time.monotonic()
    with contextlib.ExitStack() as stack:
        src_store = stack.enter_context(contextlib.closing(_open_store(src_loc)))
        src_kind = _node_kind(src_store, src_loc.path, src_loc)
        _check_apart(src_loc, dst_loc)
        plan = _plan_copy(src_store, src_loc.path, args)
        # the destination: a fresh copy, or the continuation of an interrupted one (same
        # command: the metadata the copy would write equals what the interrupted one wrote)
        dpath = dst_loc.path
        if dst_loc.kind == "zip":
            dst_store, resume, recorded = _open_zip_destination(args, dst_loc, plan)
            stack.callback(dst_store.close)
        else:
            dst_store = stack.enter_context(contextlib.closing(_open_store(dst_loc, write=True)))
            resume, recorded = _prepare_destination(args, dst_store, dpath, plan)
        # a resume compares the source with what it was when the copy began: what changed
        # since is copied again (the record stays the first run's until the copy completes)
        changed = _changed_chunks(recorded, _source_state(plan)) if resume else None
        arrays = _create_nodes(dst_store, dpath, plan)
        run = _CopyRun(args, arrays, resume, changed)
        stack.callback(run.progress.close)
        run.run()
        # finish: consolidated metadata, then remove the marker (or rename the zip) last
        if src_kind == "group" and _is_consolidated(src_store, src_loc.path):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # a zip file keeps the older root document too
                consolidate(dst_store, dpath)
        run.progress.close()
        if dst_loc.kind != "zip":
            dst_store.delete(join_path(dpath, COPY_MARKER))
        else:
            dst_store.close()
            os.replace(dst_loc.root + PARTIAL_SUFFIX, dst_loc.root)
            with contextlib.suppress(FileNotFoundError):
                os.remove(dst_loc.root + PARTIAL_SUFFIX + SOURCES_SUFFIX)
    n_arrays = len(arrays)
    n_groups = sum(1 for n in plan if n.kind == "group")
    counts = run.counts
    say(
        f"{'resumed' if resume else 'copied'} {args.src} -> {args.dst}: {n_arrays} array{'s' if n_arrays != 1 else ''}, "
        f"{n_groups} group{'s' if n_groups != 1 else ''}; {run.counted(counts['written'])} written, "
        f"{counts['present']} already present, {counts['empty']} empty; "
        f"{size_text(counts['bytes'])} in {time.monotonic() - start:.1f}s"
    )
    return EXIT_OK


def _check_apart(src: Location, dst: Location) -> None:
    """Refuse a copy whose source and destination overlap where they really are (one is the
    other or lies below it, symbolic links followed), before anything is deleted or written:
    replacing the destination would delete the source, and copying into it would copy the copy."""
    src_place, dst_place = _place(src), _place(dst)
    if places_overlap(src_place, dst_place):
        raise CLIError(
            f"the source and the destination overlap: expected places apart, got {src.arg} "
            f"(at {src_place}) and {dst.arg} (at {dst_place})"
        )


def _place(loc: Location) -> Place:
    # the holders the stores' location() names (a zip file's, a directory's, a URL's)
    holder = {"dir": "file", "zip": "zip"}.get(loc.kind, loc.kind)
    return place_of((holder, loc.root), loc.path)


def _product(ranges: list[range]) -> Iterator[tuple[int, ...]]:
    return itertools.product(*ranges)
