"""What the commands share: locating stores and nodes, exit codes, formatting."""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import json
import os
import re
import sys
import zipfile
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import unquote, urlparse

from ..codecs.registry import codec_config
from ..core.array import Array
from ..core.group import Group
from ..core.info import human_readable_size
from ..core.printable import printable
from ..errors import ChunkDecodeError, MetadataError, NodeNotFoundError, StorageOptionsError
from ..metadata import io
from ..metadata.consolidated import load_consolidated
from ..metadata.normalize import normalize_path
from ..metadata.walk import iter_nodes
from ..storage.base import Store, join_path
from ..storage.coerce import open_store
from ..storage.local import DirectoryStore
from ..storage.zip import ZipStore

#: The key a copy in progress keeps in the destination (below the destination node) until it
#: completes.
COPY_MARKER = ".zarrkit-copy-in-progress"
#: Suffix of the file a copy to a zip file writes into, renamed when the copy is complete.
PARTIAL_SUFFIX = ".partial"

_META_NAMES = ("zarr.json", ".zgroup", ".zarray")

#: The exit codes (``zarrkit --help`` lists them): success; ``verify`` found damage; a usage
#: error (bad arguments, a command refused); a copy stopped by its testing hook; not found; a
#: data error (a document or chunk that cannot be read or decoded); any other failure.
EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_STOPPED = 3
EXIT_NOT_FOUND = 4
EXIT_DATA = 5
EXIT_ERROR = 6
EXIT_INTERRUPTED = 130


class CLIError(Exception):
    """An error reported as one line ``zarrkit: error: ...``; a usage error (exit code 2)
    unless it says otherwise."""

    exit_code = EXIT_USAGE


class NotFoundError(CLIError):
    """No such file, store, array or group (exit code 4)."""

    exit_code = EXIT_NOT_FOUND


def exit_code_of(exc: BaseException) -> int:
    """The exit code of a failure that is not a :class:`CLIError`: not found (4) for a missing
    node or file, a data error (5) for what the store holds that cannot be read or decoded,
    a usage error (2) for bad storage options, else 6."""
    if isinstance(exc, CLIError):
        return exc.exit_code
    if isinstance(exc, (NodeNotFoundError, FileNotFoundError)):
        return EXIT_NOT_FOUND
    if isinstance(exc, (MetadataError, ChunkDecodeError, zipfile.BadZipFile, UnicodeDecodeError)):
        return EXIT_DATA
    if isinstance(exc, StorageOptionsError):
        return EXIT_USAGE
    return EXIT_ERROR


class CopyStopped(Exception):
    """A copy stopped on purpose (``ZARRKIT_CP_FAIL_AFTER``)."""


def say(text: object = "", file: Any = None) -> None:
    """Print a piece of the command's output (a line, or a report of several): every control
    character of what it holds escaped (:func:`~zarrkit.core.printable.printable`), only its
    own line breaks kept.  The one way the commands print; a value from the store that could
    hold a line break (a name, a key) is passed through :func:`shown` as it is put in."""
    print(printable(str(text), keep="\n"), file=file)


def shown(text: object) -> str:
    """A value from the store (a name, a key, a message quoting one) as the output shows it:
    every control character escaped, line breaks too."""
    return printable(str(text))


def plural(n: int, noun: str, nouns: str | None = None) -> str:
    """A count and its noun, agreeing: ``"1 chunk"``, ``"2 chunks"``, ``"0 chunks"``."""
    return f"{n} {noun if n == 1 else nouns or noun + 's'}"


def size_text(nbytes: int) -> str:
    """``"0 bytes"``, ``"1 byte"``, ``"512 bytes"``, then ``"1.5K"``, ``"2.0M"``... as ``info`` does."""
    return plural(nbytes, "byte") if nbytes < 1024 else human_readable_size(nbytes)


def int_at_least(minimum: int) -> Callable[[str], int]:
    """An argparse ``type`` taking integers from ``minimum`` up; anything else is refused by
    the parser, naming the option (``argument --level: expected an integer >= 0, got -1``)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected an integer >= {minimum}, got {value}")
        return value

    parse.__name__ = f"integer >= {minimum}"
    return parse


_INVALID_CHOICE = re.compile(r"invalid choice: '([^']*)' \(choose from (.*)\)$")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise CLIError(f"{message}{_did_you_mean(message)} (see '{self.prog} --help')")


class _CommandParser(_Parser):
    """The parser of one command: an argument it does not know is refused by it, pointing at
    its own help (``see 'zarrkit info --help'``), not left to the top-level parser."""

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:  # type: ignore[override]
        namespace, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return namespace, extras


def _did_you_mean(message: str) -> str:
    """``", did you mean 'verify'?"`` for argparse's message about a mistyped choice."""
    found = _INVALID_CHOICE.search(message)
    if found is None:
        return ""
    choices = [c.strip().strip("'\"") for c in found.group(2).split(",")]
    close = difflib.get_close_matches(found.group(1), choices, n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


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


def locate(arg: str, node_path: str | None = None, option: str = "--path") -> Location:
    """Resolve a ``PATH`` argument (plus an optional ``--path``) to a :class:`Location`.

    The node is named either by ``arg`` going on below the store root or by ``node_path``
    (the option ``option``), not by both: a ``PATH`` that names a node inside its store and a
    ``--path`` as well are refused (a usage error), as they could mean two different nodes.

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
    loc = _locate(arg)
    if extra:
        if loc.path:
            raise CLIError(
                f"{arg} names the node {loc.path!r} of the store {loc.root} already, and {option} "
                f"{node_path} another: give the node in the path or with {option}, not both"
            )
        loc.path = extra
    return loc


def _locate(arg: str) -> Location:
    """:func:`locate` of ``arg`` alone."""
    if "://" in arg and not arg.startswith("file://"):
        return Location(arg, arg.rstrip("/"), "", "url", True)
    local = arg
    if arg.startswith("file://"):
        local = unquote(urlparse(arg).path)
    p = os.path.abspath(local)
    cur = p
    rest: list[str] = []
    while not os.path.exists(cur):
        parent = os.path.dirname(cur)
        if parent == cur:
            break
        rest.insert(0, os.path.basename(cur))
        cur = parent
    if os.path.isfile(cur):
        if not (cur.endswith(".zip") or zipfile.is_zipfile(cur)):
            raise NotFoundError(f"{arg}: not a Zarr store (a file that is not a zip file)")
        return Location(arg, cur, "/".join(rest), "zip", not rest)
    if rest:
        # a path that does not exist yet: a new zip file, a node below an existing store, or
        # a new directory store
        for i, part in enumerate(rest):
            if part.endswith(".zip"):
                root = os.path.join(cur, *rest[: i + 1])
                return Location(arg, root, "/".join(rest[i + 1 :]), "zip", False)
        if _has_meta(cur):
            root, inner = _walk_up(cur)
            return Location(arg, root, join_path(inner, *rest), "dir", False)
        return Location(arg, p, "", "dir", False)
    if _has_meta(p):
        root, inner = _walk_up(p)
        return Location(arg, root, inner, "dir", True)
    return Location(arg, p, "", "dir", True)


#: the ``--storage-options`` of the running command (set by :func:`zarrkit.cli.main`)
storage_options: dict[str, Any] = {}


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
    if loc.kind == "url":
        return open_store(loc.root, read_only=not write, storage_options=storage_options or None)
    if not write and not os.path.exists(loc.root):
        raise NotFoundError(f"{loc.arg}: no such file or directory")
    if loc.kind == "zip":
        return ZipStore(loc.root, mode="a" if write else "r")
    return DirectoryStore(loc.root, read_only=not write)


def _node_kind(store: Store, path: str, loc: Location) -> str:
    kind = io.node_kind(store, path)
    if kind is None:
        if loc.kind != "url" and not os.path.exists(loc.root):
            raise NotFoundError(f"{loc.arg}: no such file or directory")
        # what was looked for: the node path inside the store, and the store
        where = f"{path!r} in the store {loc.root}" if path else f"the root of the store {loc.root}"
        raise NotFoundError(f"no Zarr array or group at {where}")
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
            say(
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
        say(
            f"zarrkit: note: {loc.arg} holds an interrupted 'zarrkit cp' (incomplete data); "
            "run the same cp command again to finish it",
            file=sys.stderr,
        )


def _walk(store: Store, path: str) -> Iterator[tuple[str, str]]:
    """``(path, kind)`` of the node at ``path`` and of every node below it, parents first
    (an explicit stack: no depth of hierarchy makes the walk recurse)."""
    for node_path, kind, _, _ in iter_nodes(store, path):
        yield node_path, kind


# -- formatting helpers ------------------------------------------------------------------------------
def _codec_json(codec: Any) -> Any:
    if hasattr(codec, "get_config"):
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
    return shown(node.name or "/")


def _is_consolidated(store: Store, path: str) -> bool:
    try:
        return load_consolidated(store, path) is not None
    except MetadataError:
        return False
