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
from importlib.metadata import version

from zarr3_suite import common_arguments, measure, summarize

TESTS = ["xarray/tests/test_backends.py", "xarray/tests/test_backends_datatree.py"]
SELECT = "zarr"  # pytest's -k is case-insensitive: Zarr* classes, zarr in names and parameters


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    common_arguments(ap)
    ap.add_argument("--select", default=SELECT, help=f"pytest -k expression (default {SELECT!r})")
    args = ap.parse_args()
    xarray_version = version("xarray")
    reference, measured, modules = measure(args, "xarray", xarray_version, TESTS,
                                           ["-k", args.select, *args.pytest_args],
                                           f"xarray {xarray_version} ")
    summarize(reference, measured, modules, args.top)

if __name__ == "__main__":
    main()
