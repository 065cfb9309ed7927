#!/usr/bin/env python
"""Measure how much zarr-2 code runs unchanged: zarr-python 2.18.7's public-API tests, run
against zarrkit with name aliases only.

Usage::

    python tools/zarr2_suite.py [--format 2|3] [--src DIR] [--top N] [--junit OUT.xml] [-- PYTEST ARGS]

What it does, in a temporary directory (nothing of zarr-python enters this repository):

1. ``pip download zarr==2.18.7`` (the wheel ships its tests) and unpack it;
2. build a package named ``zarr`` that holds only those tests and an ``__init__`` that re-exports
   zarrkit: every ``zarr.<module>.<name>`` resolves to the zarrkit object of the same name
   (zarrkit, zarrkit.storage, zarrkit.api, zarrkit.errors, the modules of the compatibility table
   ``zarrkit.compat``: zarrkit.hierarchy, zarrkit.meta, ...); a name zarrkit lacks becomes a
   placeholder that raises ``NotImplementedError`` when used, so only the tests that use it fail;
3. run the test modules of the public API (core, creation, hierarchy, indexing, convenience,
   attrs, storage, sync, filters, info, dim_separator), leaving out the stores zarrkit does not
   have (N5, Azure ABS) and zarr 2's experimental v3 API (``zarr_version=3``, ``*V3`` classes);
4. print passed / failed per module and the most common failure messages.

``--format 2`` makes format 2 the default for new arrays (``zarrkit.config``); ``--format 3`` keeps
zarrkit's default (v3).
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

VERSION = "2.18.7"
MODULES = ["core", "creation", "hierarchy", "indexing", "convenience", "attrs", "storage", "sync",
           "filters", "info", "dim_separator"]
EXCLUDE = "not N5 and not n5 and not ABS and not V3 and not Azure"

SHIM = r'''
"""zarr 2 names resolved to zarrkit's (built by tools/zarr2_suite.py)."""
import importlib as _importlib
import importlib.abc as _iabc
import importlib.machinery as _imach
import os as _os
import sys as _sys
import types as _types

import zarrkit
from zarrkit import *  # noqa: F403
from zarrkit import __version__  # noqa: F401

if _os.environ.get("ZARRKIT_SUITE_FORMAT") == "2":
    zarrkit.config.update(zarr_format=2)

# where a name is looked for, in order: the public modules, the modules the compatibility table
# makes (zarrkit.attrs, zarrkit.hierarchy, zarrkit.meta...; its storage row is zarrkit.storage's),
# then the modules zarr 2's tests reach into for helpers
_COMPAT = ["zarrkit." + _key for _key in zarrkit.compat.TABLE if _key != "storage"]
_SOURCES = ["zarrkit", "zarrkit.storage", "zarrkit.api", "zarrkit.errors", "zarrkit.core.array",
            "zarrkit.core.group", "zarrkit.core.attributes", "zarrkit.core.sync",
            "zarrkit.api.convenience", "zarrkit.core.indexing", *_COMPAT, "zarrkit.codecs",
            "zarrkit.metadata.v2", "zarrkit.metadata", "zarrkit.metadata.normalize", "zarrkit.api.copying",
            "zarrkit.api.streaming", "zarrkit.core.creation", "zarrkit.api.creation"]
# switches of zarr 2's experimental v3 API, which is not measured
_FIXED = {"v3_api_available": False, "v3_sharding_available": False}


def _missing(name):
    def __init__(self, *args, **kwargs):
        raise NotImplementedError(f"zarrkit has no {name}")
    return type(name, (), {"__init__": __init__})


class _Alias(_types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if name in _FIXED:
            return _FIXED[name]
        for source in _SOURCES:
            module = _importlib.import_module(source)
            if hasattr(module, name):
                return getattr(module, name)
        return _missing(name)


class _Finder(_iabc.MetaPathFinder, _iabc.Loader):
    def find_spec(self, name, path, target=None):
        if name.startswith("zarr.") and not name.startswith("zarr.tests"):
            return _imach.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        module = _Alias(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module):
        pass


_sys.meta_path.insert(0, _Finder())
for _name in ("core", "storage", "hierarchy", "creation", "convenience", "errors", "attrs", "sync",
              "indexing", "meta", "util", "n5", "context", "types", "codecs"):
    globals()[_name] = _importlib.import_module("zarr." + _name)

# numcodecs wheels no longer ship numcodecs.tests, whose greetings zarr 2's test_core imports
_nt = _types.ModuleType("numcodecs.tests")
_nt.__path__ = []
_ntc = _types.ModuleType("numcodecs.tests.common")
_ntc.greetings = ["Hello world", "Hallo Welt", "Bonjour le monde", "Γειά σου Κόσμε",
                  "Привет мир", "こんにちは世界", "你好世界", "مرحبا بالعالم", "שלום עולם",
                  "नमस्ते दुनिया", "안녕하세요 세계", "Xin chào thế giới"]
_sys.modules["numcodecs.tests"] = _nt
_sys.modules["numcodecs.tests.common"] = _ntc
'''

CONFTEST = '''

def pytest_collection_modifyitems(config, items):
    # zarr 2's experimental v3 API is not measured
    keep = [i for i in items
            if getattr(getattr(i, "callspec", None), "params", {}).get("zarr_version") != 3]
    config.hook.pytest_deselected(items=[i for i in items if i not in keep])
    items[:] = keep
'''


def build(work: Path) -> Path:
    wheels = work / "wheel"
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", f"zarr=={VERSION}",
                    "-d", str(wheels)], check=True)
    wheel = next(wheels.glob("zarr-*.whl"))
    unpacked = work / "unpacked"
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(unpacked)
    pkg = work / "run" / "zarr"
    shutil.copytree(unpacked / "zarr" / "tests", pkg / "tests")
    (pkg / "__init__.py").write_text(SHIM)
    with open(pkg / "tests" / "conftest.py", "a") as f:
        f.write(CONFTEST)
    return pkg.parent


def summarize(junit: Path, top: int) -> tuple[int, int]:
    root = ET.parse(junit).getroot()
    counts: collections.Counter[str] = collections.Counter()
    example: dict[str, str] = {}
    per_module: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    for case in root.iter("testcase"):
        if case.find("skipped") is not None:
            continue
        module = (case.get("classname") or "?.?.?").split(".")[2]
        failure = case.find("failure")
        if failure is None:
            failure = case.find("error")
        per_module[module][failure is not None] += 1
        if failure is not None:
            msg = (failure.get("message") or "").split("\n")[0][:160]
            msg = re.sub(r"0x[0-9a-f]+", "0x…", msg)
            counts[msg] += 1
            example.setdefault(msg, f"{case.get('classname')}::{case.get('name')}")
    passed = sum(p for p, _ in per_module.values())
    failed = sum(f for _, f in per_module.values())
    print(f"passed {passed}, failed {failed}: {passed / max(passed + failed, 1):.1%}")
    for module, (p, f) in sorted(per_module.items()):
        print(f"  {module:<22} {p:>5} / {p + f}")
    for msg, n in counts.most_common(top):
        print(f"{n:>5}  {msg}\n       e.g. {example[msg]}")
    return passed, failed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--format", choices=["2", "3"], default="2")
    ap.add_argument("--src", default=str(Path(__file__).resolve().parents[1] / "src"),
                    help="the zarrkit sources to measure (default: this checkout's src/)")
    ap.add_argument("--top", type=int, default=30, help="failure messages to list")
    ap.add_argument("--junit", help="keep the JUnit XML report here")
    ap.add_argument("pytest_args", nargs="*")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="zarr2-suite-") as tmp:
        run_dir = build(Path(tmp))
        junit = Path(args.junit).resolve() if args.junit else Path(tmp) / "junit.xml"
        tests = [f"zarr/tests/test_{m}.py" for m in MODULES]
        # numcodecs >= 0.17 refuses to unpickle unless told to; zarr 2's tests predate that, and
        # zarr 2.18 itself fails them the same way on today's numcodecs
        env = dict(os.environ, PYTHONPATH=os.path.abspath(args.src),
                   NUMCODECS_ALLOW_UNSAFE_PICKLE_DECODE="1",
                   PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", ZARRKIT_SUITE_FORMAT=args.format)
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "xdist.plugin",
               "-n", "2", *tests, "-k", EXCLUDE, f"--junitxml={junit}", *args.pytest_args]
        try:  # a test that hangs fails alone instead of stopping the run
            import pytest_timeout  # noqa: F401

            cmd += ["-p", "pytest_timeout", "--timeout=300"]
        except ImportError:
            pass
        subprocess.run(cmd, cwd=run_dir, env=env, stdout=subprocess.DEVNULL)
        summarize(junit, args.top)


if __name__ == "__main__":
    main()
