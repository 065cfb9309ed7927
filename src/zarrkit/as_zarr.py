"""``python -m zarrkit.as_zarr script.py [args]`` or ``python -m zarrkit.as_zarr -m module [args]``:
run a program, unchanged, with ``import zarr`` giving zarrkit (:func:`zarrkit.install_as_zarr`).
"""

from __future__ import annotations

import os
import runpy
import sys
from collections.abc import Sequence

from .drop_in import install_as_zarr

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m zarrkit.as_zarr script.py [args]`` or ``python -m zarrkit.as_zarr -m module
    [args]``: run a program with zarrkit installed as ``zarr``, as ``python script.py`` or
    ``python -m module`` would (``sys.argv`` is the program's).

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments after ``-m zarrkit.as_zarr`` (default ``sys.argv[1:]``).

    Raises
    ------
    SystemExit
        With a usage message when no program is given.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help") or (args[0] == "-m" and len(args) < 2):
        raise SystemExit("usage: python -m zarrkit.as_zarr (script.py | -m module) [args...]\n"
                         "runs the program with 'import zarr' giving zarrkit")
    install_as_zarr()
    if args[0] == "-m":
        sys.argv = [args[1], *args[2:]]
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = args
        sys.path[0] = os.path.dirname(os.path.abspath(args[0]))  # as python script.py sets it
        runpy.run_path(args[0], run_name="__main__")


if __name__ == "__main__":
    main()
