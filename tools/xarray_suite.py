#!/usr/bin/env python
"""Measure how much of xarray's Zarr backend runs on zarrkit: xarray's own Zarr tests, run with
zarr-python and with ``zarr`` resolving to zarrkit by name aliases only.

Usage::

    python tools/xarray_suite.py [--src DIR] [--select EXPR] [--top N] [--junit OUT.xml]
                                 [--reference REF.xml] [--timeout S] [-- PYTEST ARGS]

What it does, in a temporary directory (nothing of xarray enters this repository):

1. ``pip download --no-binary :all: xarray==<the version installed here>`` (the sdist ships the
   tests with xarray's pytest configuration, whose warning filters they rely on) and unpack it;
   its tests of asynchronous loading need pytest-asyncio, installed into the same temporary
   directory (``pip install --target``);
2. run the Zarr tests of ``xarray/tests/test_backends.py`` and ``test_backends_datatree.py``
   (``-k zarr``: the ``Zarr*`` classes and the tests named or parametrized after zarr; change it
   with ``--select``) twice: once with the zarr-python installed here, once with the package
   ``zarr`` of ``tools/zarr3_suite.py`` first on ``sys.path``, which resolves every
   ``zarr.<module>.<name>`` to ``zarrkit.<module>.<name>`` (a name zarrkit lacks becomes a
   placeholder that raises ``NotImplementedError`` when called);
3. print passed / failed for both, how many of the tests that pass with zarr-python pass with
   zarrkit, and the most common first failure of those that do not.

``--junit OUT.xml`` keeps zarrkit's JUnit report as ``OUT.xml`` and zarr-python's as
``OUT.zarr-python.xml``; ``--reference REF.xml`` reuses such a zarr-python report instead of
running zarr-python again.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

from zarr3_suite import (
    PYTEST_ASYNCIO,
    Report,
    build_shim,
    common_arguments,
    install_plugins,
    junit_paths,
    run_pytest,
    summarize,
    unpack_sdist,
)

TESTS = ["xarray/tests/test_backends.py", "xarray/tests/test_backends_datatree.py"]
SELECT = "zarr"  # pytest's -k is case-insensitive: Zarr* classes, zarr in names and parameters


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    common_arguments(ap)
    ap.add_argument("--select", default=SELECT, help=f"pytest -k expression (default {SELECT!r})")
    args = ap.parse_args()
    xarray_version = version("xarray")
    with tempfile.TemporaryDirectory(prefix="xarray-suite-") as tmp:
        work = Path(tmp)
        root = unpack_sdist("xarray", xarray_version, work)
        shim = build_shim(work)
        plugins = install_plugins(work, PYTEST_ASYNCIO)
        junit, ref_junit = junit_paths(args.junit, work)
        runs = [("zarrkit", junit)]
        if args.reference:
            ref_junit = Path(args.reference).resolve()
        else:
            runs.insert(0, ("zarr", ref_junit))
        for library, out in runs:
            seconds = run_pytest(library, root, TESTS, out, src=args.src, shim=shim,
                                 plugins=plugins, timeout=args.timeout,
                                 plugin_names=["pytest_asyncio.plugin"],
                                 args=["-k", args.select, *args.pytest_args])
            print(f"xarray {xarray_version} with "
                  f"{'zarr-python' if library == 'zarr' else library}: {seconds:.0f} s",
                  file=sys.stderr, flush=True)
        modules = [t.removesuffix(".py").replace("/", ".") for t in TESTS]
        summarize(Report.read(ref_junit), Report.read(junit), modules, args.top)


if __name__ == "__main__":
    main()
