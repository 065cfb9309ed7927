"""The ``zarrkit`` command line: inspect, copy, convert and check Zarr stores.

Run ``zarrkit --help`` (or ``python -m zarrkit --help``) for the list of commands::

    zarrkit info data.zarr/group/array          # the info table (--json: machine-readable)
    zarrkit tree data.zarr                       # the hierarchy as a tree
    zarrkit ls data.zarr/group                   # the members of a group
    zarrkit cp data.zarr out.zip --zarr-format 3 --chunks 100,100 --shards auto --compressor zstd:5
    zarrkit convert data.zarr --zarr-format 3    # metadata only, in place
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

Exit codes: see :data:`EPILOG` (``zarrkit --help`` prints them): 0 success, 1 ``verify`` found
damage, 2 a usage error, 3 a copy stopped by ``ZARRKIT_CP_FAIL_AFTER``, 4 not found, 5 a data
error, 6 any other failure, 130 interrupted; every error is one line ``zarrkit: error: ...``.

Testing hooks of ``cp``: ``ZARRKIT_CP_FAIL_AFTER=N`` stops the copy (exit 3) after writing N
chunks; ``ZARRKIT_CP_THROTTLE=SECONDS`` waits that long after each chunk written.  Both make
the copy sequential.

Examples
--------
>>> import os, tempfile, zarrkit
>>> from zarrkit.cli import main
>>> d = tempfile.mkdtemp()
>>> z = zarrkit.zeros((4, 4), chunks=(2, 2), store=os.path.join(d, 'a.zarr'), zarr_format=2)
>>> main(['ls', os.path.join(d, 'a.zarr')])  # nothing written: its metadata alone is stored
/  array  (4, 4) float64  chunks (2, 2)  ... bytes stored
0
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import warnings
from typing import Any, TextIO

from .. import __version__
from ..errors import ZarrkitError
from ..storage.extras import missing_extra
from .common import (
    COPY_MARKER,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_STOPPED,
    CLIError,
    CopyStopped,
    Location,
    _CommandParser,
    _parse_storage_options,
    _Parser,
    exit_code_of,
    int_at_least,
    locate,
    say,
    storage_options,
)
from .copy import cmd_cp
from .edit import cmd_consolidate, cmd_convert, cmd_rm
from .inspect import cmd_info, cmd_ls, cmd_tree, cmd_verify
from .options import COMPRESSOR_HELP, add_layout_options, compressor, memory_size
from .progress import add_progress_options
from .rechunk import add_rechunk_command

__all__ = ["main", "build_parser", "locate", "Location", "COPY_MARKER"]


# -- the parser ------------------------------------------------------------------------------------
EPILOG = """\
PATH may name a node inside a store: data.zarr/group/array, or the store and --path group/array
(one or the other, not both).

exit codes:
  0  success (also: zarrkit with no arguments, which prints this help)
  1  verify found damage: a corrupt chunk or metadata document, an unfinished cp, a
     half-converted node
  2  usage error: bad arguments, or a command refused (a destination that exists, rm without --yes)
  3  cp stopped by ZARRKIT_CP_FAIL_AFTER (a testing hook; run the command again to resume)
  4  not found: no such file, store, array or group
  5  data error: a metadata document or chunk that cannot be read or decoded
  6  any other failure (input/output, permissions, a missing optional dependency)
  130 interrupted"""


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="zarrkit",
        description="Inspect, copy, convert and check Zarr v2/v3 stores (directories, .zip files, URLs).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"zarrkit {__version__}")
    parser.add_argument(
        "--storage-options", default=None, metavar="JSON",
        help="fsspec options for URL stores, as a JSON object, e.g. "
             "'{\"anon\": true}' or '{\"client_kwargs\": {\"endpoint_url\": \"http://...\"}}' "
             "(default: $ZARRKIT_STORAGE_OPTIONS)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_CommandParser)

    def add(name: str, help: str, func: Any) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help, description=help)
        p.set_defaults(func=func)
        return p

    def path_args(p: argparse.ArgumentParser, node: str = "node path inside the store") -> None:
        p.add_argument("path_arg", metavar="PATH", help="store (directory, .zip, URL), optionally /node/path"
                       ).complete = FILE_COMPLETION  # type: ignore[attr-defined]
        p.add_argument("--path", default=None, help=f"{node} (when PATH is the store itself)")

    def zarr_format(p: argparse.ArgumentParser, help: str, alias: bool = False) -> None:
        p.add_argument("--zarr-format", type=int, choices=(2, 3), default=None, help=help)
        if alias:
            # the old name, for scripts written before the option was named as cp's is
            p.add_argument("--to", dest="zarr_format", type=int, choices=(2, 3), help=argparse.SUPPRESS)

    p = add("info", "show the info table of an array, or a summary of a group", cmd_info)
    path_args(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")

    p = add("tree", "print the hierarchy as a tree", cmd_tree)
    path_args(p)
    p.add_argument("--level", type=int_at_least(0), default=None,
                   help="levels below the node to show (0: the node alone; default: all)")

    p = add("ls", "list the members of a group, with their stored sizes", cmd_ls)
    path_args(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")

    p = add("cp", "copy an array or a hierarchy to another store, chunk by chunk (resumable)", cmd_cp)
    p.add_argument("src", metavar="SRC", help="source store, optionally /node/path"
                   ).complete = FILE_COMPLETION  # type: ignore[attr-defined]
    p.add_argument("dst", metavar="DST", help="destination (directory, .zip, URL), optionally /node/path"
                   ).complete = FILE_COMPLETION  # type: ignore[attr-defined]
    p.add_argument("--path", default=None, help="node path inside the source store (when SRC is the store)")
    p.add_argument("--dest-path", default=None,
                   help="node path inside the destination store (when DST is the store)")
    zarr_format(p, "format of the copy (default: the source's)")
    add_layout_options(p)
    p.add_argument("--compressor", type=compressor, default=None, metavar="NAME[:LEVEL]", help=COMPRESSOR_HELP)
    p.add_argument("--dtype", default=None, help="data type of the copy (values are cast)")
    p.add_argument("--overwrite", action="store_true", help="replace whatever is at DST")
    p.add_argument("--max-mem", type=memory_size, default="64MiB", metavar="SIZE",
                   help="memory for the chunks in flight, e.g. 64MiB or 1GB (default 64MiB; at least one chunk)")
    # deprecated: the memory in MiB, from before the option was named as rechunk's is
    p.add_argument("--buffer", type=int_at_least(1), default=None, metavar="MIB", help=argparse.SUPPRESS)
    add_progress_options(p)

    p = add("convert", "convert a hierarchy between Zarr v2 and v3 in place (metadata only)", cmd_convert)
    path_args(p)
    zarr_format(p, "the format to convert to (required)", alias=True)

    p = add("verify", "decode every stored chunk; report missing and corrupt ones (exit 1 if corrupt)", cmd_verify)
    path_args(p)
    p.add_argument("--max-missing", type=int_at_least(0), default=20, metavar="N",
                   help="missing chunks listed per array (default 20)")
    p.add_argument("--all", action="store_true", help="list every missing chunk")
    add_progress_options(p)

    p = add("consolidate", "consolidate the metadata of a hierarchy", cmd_consolidate)
    path_args(p)

    p = add("rm", "remove an array or group (and everything below it)", cmd_rm)
    path_args(p)
    p.add_argument("-y", "--yes", action="store_true", help="do not ask for confirmation")
    add_progress_options(p)

    add_rechunk_command(add)

    p = add("completion", "print a shell completion script (needs shtab: pip install 'zarrkit[cli]')",
            lambda args: cmd_completion(args, parser))
    p.add_argument("shell", choices=("bash", "zsh", "tcsh"),
                   help="the shell; e.g. zarrkit completion bash > ~/.local/share/bash-completion/completions/zarrkit")
    return parser


#: what shtab completes a store argument with: files and directories
FILE_COMPLETION = {"bash": "_shtab_compgen_files", "zsh": "_files", "tcsh": "f"}


def cmd_completion(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """``zarrkit completion SHELL``: the completion script shtab generates from the parser."""
    try:
        import shtab
    except ImportError:
        raise missing_extra("zarrkit completion", "shtab", "cli") from None
    say(shtab.complete(parser, shell=args.shell).rstrip("\n"))
    return EXIT_OK


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
    say(f"zarrkit: error: {message}", file=sys.stderr)


def _warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
             file: TextIO | None = None, line: str | None = None) -> None:
    """``warnings.showwarning`` while a command runs: the command's own voice, one line, not
    Python's ``path/to/module.py:60: UserWarning: ...`` with the source line below it."""
    text = " ".join(str(message).split()) or category.__name__
    say(f"zarrkit: warning: {text}", file=sys.stderr if file is None else file)


def main(argv: list[str] | None = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); returns the exit code."""
    parser = build_parser()
    previous = None
    if hasattr(signal, "SIGTERM"):
        with contextlib.suppress(ValueError):  # not in the main thread
            previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        # every warning raised while the command runs (from any thread of its pool) is shown
        # as one line in the command's voice; which warnings show is still up to the filters
        with warnings.catch_warnings():
            warnings.showwarning = _warning
            return _run(parser, argv)
    finally:
        if previous is not None:
            with contextlib.suppress(ValueError):
                signal.signal(signal.SIGTERM, previous)


def _run(parser: argparse.ArgumentParser, argv: list[str] | None) -> int:
    try:
        args = parser.parse_args(argv)
        if args.command is None:  # no command: the help, which is what was asked for
            parser.print_help()
            return EXIT_OK
        # the options every store opened by this command gets
        storage_options.clear()
        storage_options.update(_parse_storage_options(args.storage_options))
        return int(args.func(args))
    except CLIError as exc:
        _error(_one_line(exc))
        return exc.exit_code
    except CopyStopped as exc:
        _error(_one_line(exc))
        return EXIT_STOPPED
    except KeyboardInterrupt:
        say("zarrkit: interrupted (an interrupted cp resumes when run again)", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        with contextlib.suppress(OSError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except Exception as exc:  # one line, no traceback, for every failure
        if os.environ.get("ZARRKIT_DEBUG"):
            raise
        known = isinstance(exc, (ZarrkitError, OSError, ValueError, TypeError, KeyError, ImportError))
        _error(_one_line(exc) if known else f"{type(exc).__name__}: {_one_line(exc)} (set ZARRKIT_DEBUG=1 for a traceback)")
        return exit_code_of(exc)


def _terminate(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
