#!/usr/bin/env python
"""Measure how much zarr-3 code runs unchanged: zarr-python 3.4.2's tests of its public
synchronous API, run with zarr-python and with ``zarr`` resolving to zarrkit by name aliases only.

Usage::

    python tools/zarr3_suite.py [--src DIR] [--top N] [--junit OUT.xml] [--reference REF.xml]
                                [--timeout S] [--failing OUT.txt] [-- PYTEST ARGS]

What it does, in a temporary directory (nothing of zarr-python enters this repository):

1. ``pip download --no-binary :all: zarr==3.4.2`` (the sdist ships the tests) and unpack it;
   zarr-python's tests use pytest-asyncio (its async fixtures, ``asyncio_mode = "auto"``), which is
   installed into the same temporary directory (``pip install --target``);
2. run the test modules of the public synchronous API (:data:`TESTS`: api, array, group, indexing,
   attributes, resize, tree, v2, errors, consolidated metadata and the codec tests of bytes,
   blosc, zstd, gzip, crc32c, transpose, vlen, sharding, numcodecs, cast_value, scale_offset)
   twice, with zarr-python's own pytest configuration: once with the zarr-python installed
   here, once with a package named ``zarr`` first on ``sys.path`` that resolves every
   ``zarr.<module>.<name>`` to ``zarrkit.<module>.<name>`` (:data:`SHIM`); a name zarrkit lacks
   becomes a placeholder that raises ``NotImplementedError`` when called (a warning or exception
   class zarrkit lacks is one that zarrkit never emits), so only the tests that
   use it fail;
3. print passed / failed per module for both, how many of the tests that pass with zarr-python
   pass with zarrkit, and the most common first failure of those that do not -- over all of
   them, and over those that use only zarr-python's public names (:func:`internal_tests`).

**What is internal.**  A test uses zarr-python's internals when its own code -- the test
function's body and decorators (its ``parametrize`` values), and the module-level helper
functions it calls, followed from call to call; not type annotations, not fixtures -- names

* something imported from a module of zarr-python that is not public (``zarr.core.*``,
  ``zarr.storage._*``, any ``_``-prefixed module), unless the same object is one of the names
  of a public module (:data:`PUBLIC_MODULES`: ``zarr.core.buffer.default_buffer_prototype`` is
  ``zarr.buffer``'s, so it is public; ``zarr.core.sync.sync`` is nobody's);
* a module path through such a module (``zarr.core.group.GroupMetadata``);
* a ``_``-prefixed attribute (``arr._async_array``, ``store._store``) or a ``_``-prefixed name
  imported from zarr;
* a string that is such a path (``mock.patch("zarr.codecs.sharding._ShardIndex...")``).

This is decided from zarr-python's test sources and zarr-python itself, before anything runs
on zarrkit, so it does not depend on what zarrkit does.

``--failing OUT.txt`` writes the tests that pass with zarr-python, use only its public names and
fail under zarrkit, one a line with its first failure. ``--junit OUT.xml`` keeps zarrkit's JUnit report as ``OUT.xml`` and zarr-python's as
``OUT.zarr-python.xml``; ``--reference REF.xml`` reuses such a zarr-python report instead of
running zarr-python again (its results do not change with zarrkit's sources). Failures are
reported with ``--tb=line`` (pytest's usual tracebacks parse the test file's source for each
frame, which costs most of a run of large test files); ``-- --tb=short`` gives full ones.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from collections.abc import Iterator
from pathlib import Path
from typing import Any

VERSION = "3.4.2"
PYTEST_ASYNCIO = "pytest-asyncio==1.4.0"  # the version zarr-python 3.4.2 tests with
TESTS = ["tests/test_api.py", "tests/test_array.py", "tests/test_group.py",
         "tests/test_indexing.py", "tests/test_attributes.py", "tests/test_resize.py",
         "tests/test_tree.py", "tests/test_v2.py", "tests/test_errors.py",
         "tests/test_metadata/test_consolidated.py",
         *(f"tests/test_codecs/test_{name}.py" for name in (
             "bytes", "blosc", "zstd", "gzip", "crc32c", "transpose", "vlen", "sharding",
             "numcodecs", "cast_value", "scale_offset"))]

SHIM = r'''
"""zarr-python 3's names resolved to zarrkit's (built by tools/zarr3_suite.py).

``zarr.<module>.<name>`` is ``zarrkit.<module>.<name>``: a module of the package, or of its
compatibility table (``zarrkit.dtype``, ``zarrkit.experimental``...). A module or name zarrkit
lacks is a placeholder: a module whose names are placeholders, a class whose construction or
call raises ``NotImplementedError``.
"""
import importlib as _importlib
import importlib.abc as _iabc
import importlib.util as _iutil
import sys as _sys
import types as _types

import zarrkit as _zarrkit

__version__ = _zarrkit.compat.ZARR3_API_VERSION  # the zarr-python API zarrkit follows


class _PlaceholderType(type):
    def __getattr__(cls, name):
        raise AttributeError(f"zarrkit has no {cls.__module__}.{cls.__qualname__}.{name}")

    def __getitem__(cls, item):  # annotations such as Placeholder[int]
        return cls


def _placeholder(module, name):
    namespace = {"__module__": module, "__qualname__": name}
    if name.endswith("Warning"):  # warning filters and pytest.warns need the class to be one
        return _PlaceholderType(name, (UserWarning,), namespace)
    if name.endswith(("Error", "Exception")):  # pytest.raises(...): zarrkit never raises it
        return _PlaceholderType(name, (Exception,), namespace)

    def __init__(self, *args, **kwargs):
        raise NotImplementedError(f"zarrkit has no {module}.{name}")
    return _PlaceholderType(name, (), {**namespace, "__init__": __init__})


def _real(name):
    """The zarrkit module named like ``zarr...`` ``name``, or None."""
    real = "zarrkit" + name[len("zarr"):]
    try:
        if real in _sys.modules or _iutil.find_spec(real) is not None:
            return _importlib.import_module(real)
    except (ImportError, AttributeError, ValueError):
        pass
    return None


def _table_key(name):
    return name[len("zarr."):] if name.startswith("zarr.") else None


def _sources(name):
    """Where the names of zarr-python's module ``name`` live: zarrkit's module of that name,
    then the modules ``zarrkit.compat.ZARR3_PATHS`` lists for it; for a module zarrkit has
    neither of, its nearest package below the top level (``zarrkit.codecs`` for
    ``zarr.codecs.crc32c_``: zarr-python's public names are re-exported there)."""
    found = []
    direct = _real(name)
    if direct is not None:
        found.append(direct)
    for module in getattr(_zarrkit.compat, "ZARR3_PATHS", {}).get(_table_key(name), ()):
        found.append(_importlib.import_module(f"zarrkit.{module}"))
    if not found:
        parts = name.split(".")
        for n in range(len(parts) - 1, 1, -1):
            module = _real(".".join(parts[:n]))
            if module is not None:
                found.append(module)
                break
    return found


def _is_module(name):
    return _real(name) is not None \
        or _table_key(name) in getattr(_zarrkit.compat, "ZARR3_PATHS", {})


def _lookup(module_name, sources, name):
    if name.startswith("__"):
        if name == "__all__":  # a module's public names: those of the module it stands for
            for target in sources:
                if hasattr(target, "__all__"):
                    return list(target.__all__)
        raise AttributeError(name)
    child = f"{module_name}.{name}"
    for target in sources:
        if hasattr(target, name):
            value = getattr(target, name)
            if isinstance(value, _types.ModuleType) and _is_module(child):
                return _importlib.import_module(child)
            return value
    if _is_module(child):
        return _importlib.import_module(child)
    return _placeholder(module_name, name)


class _Alias(_types.ModuleType):
    def __getattr__(self, name):
        value = _lookup(self.__name__, self.__dict__.get("_zarrkit_sources", ()), name)
        if not isinstance(value, _types.ModuleType):
            setattr(self, name, value)  # one placeholder per name
        return value


class _Finder(_iabc.MetaPathFinder, _iabc.Loader):
    def find_spec(self, name, path, target=None):
        if not name.startswith("zarr."):
            return None
        if not _is_module(name):
            # ``zarr.storage.MemoryStore`` is a class, not a module: importing it must fail (as
            # ``pkgutil.resolve_name``, which ``mock.patch`` uses, expects) rather than replace
            # the class by a module of placeholders
            parent, _, child = name.rpartition(".")
            module = _sys.modules.get(parent)
            sources = module.__dict__.get("_zarrkit_sources", ()) if module is not None else _sources(parent)
            for source in sources:
                if hasattr(source, child) and not isinstance(getattr(source, child), _types.ModuleType):
                    return None
        return _iutil.spec_from_loader(name, self, is_package=True)

    def create_module(self, spec):
        module = _Alias(spec.name)
        module.__path__ = []
        module._zarrkit_sources = _sources(spec.name)
        return module

    def exec_module(self, module):
        pass


_sys.meta_path.insert(0, _Finder())


def __getattr__(name):
    value = _lookup(__name__, [_zarrkit], name)
    if not isinstance(value, _types.ModuleType):
        globals()[name] = value
    return value
'''


#: zarr-python 3's public modules: the objects named there are public wherever imported from
PUBLIC_MODULES = ("zarr", "zarr.abc.buffer", "zarr.abc.codec", "zarr.abc.numcodec", "zarr.abc.store",
                  "zarr.api.asynchronous", "zarr.api.synchronous", "zarr.buffer", "zarr.buffer.cpu",
                  "zarr.codecs", "zarr.codecs.numcodecs", "zarr.dtype", "zarr.errors", "zarr.registry",
                  "zarr.storage", "zarr.experimental", "zarr.testing", "zarr.testing.store",
                  "zarr.testing.utils", "zarr.testing.buffer", "zarr.types")


_PATH = re.compile(r"^zarr(\.\w+)+$")


def _private_module(module: str) -> bool:
    parts = module.split(".")
    return parts[0] == "zarr" and (
        (len(parts) > 1 and parts[1] == "core") or any(p.startswith("_") for p in parts[1:]))


def _public_objects() -> set[int] | None:
    """The ids of the objects zarr-python's public modules name (None when the zarr-python
    installed here is not the one measured: then every name of a private module is internal)."""
    import importlib

    try:
        import zarr
    except ImportError:
        return None
    if zarr.__version__ != VERSION:
        return None
    found: set[int] = set()
    for name in PUBLIC_MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        for attr in getattr(module, "__all__", None) or [a for a in dir(module) if not a.startswith("_")]:
            if hasattr(module, attr):
                found.add(id(getattr(module, attr)))
    return found


def _is_public(module: str, name: str, public: set[int] | None) -> bool:
    if name.startswith("_"):
        return False
    if not _private_module(module):
        return True
    if public is None:
        return False
    import importlib

    try:
        return id(getattr(importlib.import_module(module), name)) in public
    except (ImportError, AttributeError):
        return False


def _code_nodes(node: Any) -> Iterator[Any]:
    """The nodes of ``node`` that run: annotations left out."""
    import ast

    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        for field_name, value in ast.iter_fields(n):
            if field_name in ("annotation", "returns"):
                continue
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, ast.AST):
                    stack.append(child)


def internal_tests(root: Path, tests: list[str]) -> set[tuple[str, str]]:
    """``(classname, test function)`` of the tests of ``tests`` (under ``root``) that use
    zarr-python's internals (see the module's docstring), as JUnit names them."""
    import ast

    public = _public_objects()
    found: set[tuple[str, str]] = set()
    for test in tests:
        tree = ast.parse((root / test).read_text())
        module = test.removesuffix(".py").replace("/", ".")
        internal_names: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "zarr":
                for alias in node.names:
                    if not _is_public(node.module, alias.name, public):
                        internal_names.add(alias.asname or alias.name)
        helpers = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        memo: dict[str, bool] = {}

        def uses_internals(fn: Any, seen: frozenset[str] = frozenset()) -> bool:
            for n in _code_nodes(fn) if not isinstance(fn, list) else (x for f in fn for x in _code_nodes(f)):
                if isinstance(n, ast.Name) and n.id in internal_names:
                    return True
                if isinstance(n, ast.Attribute):
                    if n.attr.startswith("_") and not n.attr.startswith("__"):
                        return True
                    chain = ast.unparse(n)
                    if chain.startswith("zarr.") and _private_module(chain):
                        return True
                if isinstance(n, ast.Constant) and isinstance(n.value, str) and _PATH.match(n.value) \
                        and (_private_module(n.value) or "._" in n.value):
                    return True  # mock.patch("zarr.core...")
                if isinstance(n, ast.Name) and n.id in helpers and n.id not in seen:
                    if n.id not in memo:
                        memo[n.id] = uses_internals(helpers[n.id], seen | {n.id})
                    if memo[n.id]:
                        return True
            return False

        def visit(body: list[Any], classname: str) -> None:
            for node in body:
                if isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
                    visit(node.body, f"{classname}.{node.name}")
                elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
                    if uses_internals([*node.decorator_list, *node.body, node.args]):
                        found.add((classname, node.name))

        visit(tree.body, module)
    return found


def pip(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", *args, "-q", "--no-deps"], check=True,
                   stderr=subprocess.DEVNULL)


def unpack_sdist(name: str, version: str, work: Path) -> Path:
    """The unpacked source distribution of ``name==version``."""
    dist = work / "sdist"
    pip("download", "--no-binary", ":all:", f"{name}=={version}", "-d", str(dist))
    sdist = next(dist.glob(f"{name}-*.tar.gz"))
    with tarfile.open(sdist) as tf:
        tf.extractall(work, filter="data")
    return work / f"{name}-{version}"


def build_shim(work: Path) -> Path:
    """A directory holding the package ``zarr`` that resolves to zarrkit."""
    shim = work / "shim"
    (shim / "zarr").mkdir(parents=True)
    (shim / "zarr" / "__init__.py").write_text(SHIM)
    return shim


def install_plugins(work: Path, *requirements: str) -> Path:
    plugins = work / "plugins"
    if requirements:
        pip("install", "--target", str(plugins), *requirements)
    return plugins


def run_pytest(library: str, root: Path, tests: list[str], junit: Path, *, src: str,
               shim: Path, plugins: Path, timeout: float, plugin_names: list[str],
               args: list[str], env_extra: dict[str, str] | None = None) -> float:
    """Runs ``tests`` from ``root`` with ``zarr`` being zarr-python or zarrkit; seconds taken."""
    path = [str(plugins)]
    if library == "zarrkit":
        path = [str(shim), os.path.abspath(src), *path]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path), PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",
               **(env_extra or {}))
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
           "-p", "xdist.plugin", "-n", "2", "-p", "pytest_timeout", f"--timeout={timeout:g}",
           "-p", "_hypothesis_pytestplugin", "--continue-on-collection-errors", "--tb=line"]
    for name in plugin_names:
        cmd += ["-p", name]
    cmd += [*tests, f"--junitxml={junit}", *args]
    started = time.perf_counter()
    subprocess.run(cmd, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=False)  # failing tests are what is measured
    return time.perf_counter() - started


# -- the report ------------------------------------------------------------------------------

ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
#: a class in a parametrized test's id, named by its module (zarr-python's or zarrkit's): the
#: same test under both libraries has one key when the class is named alone
CLASS_PATH = re.compile(r"<class '(?:[\w]+\.)*(\w+)'>")


def _class_name(match: re.Match[str]) -> str:
    return f"<class {match.group(1)}>"
TMP = re.compile(r"/tmp/[^\s'\")]+")
ERROR_LINE = re.compile(r"^[\w.]+: ")
WRAPPED = re.compile(r'^failed on (?:setup|teardown|call) with "(.*)"$', re.DOTALL)


def message(failure: ET.Element) -> str:
    """The first line of a failure's message, with what varies between runs replaced."""
    msg = failure.get("message") or ""
    m = WRAPPED.match(msg)
    if m:
        msg = m.group(1)
    if msg in ("collection failure", ""):  # the error is among the "E   " lines: "Name: ..."
        lines = [line[1:].strip() for line in (failure.text or "").splitlines()
                 if line.startswith("E ")]
        named = [line for line in lines if ERROR_LINE.match(line)]
        msg = named[-1] if named else lines[0] if lines else msg
    msg = msg.strip().split("\n")[0]
    msg = TMP.sub("<tmp>", ADDRESS.sub("0x…", msg))
    return msg[:160]


@dataclass
class Report:
    """One run's results: test id -> error message (None: passed); skipped tests are left out."""

    results: dict[str, str | None] = field(default_factory=dict)
    broken_modules: dict[str, str] = field(default_factory=dict)  # module -> collection error
    skipped: dict[str, str] = field(default_factory=dict)  # test id -> reason

    @classmethod
    def read(cls, junit: Path) -> Report:
        report = cls()
        if not junit.exists():
            return report
        for case in ET.parse(junit).getroot().iter("testcase"):
            classname, name = case.get("classname") or "", case.get("name") or ""
            failure = case.find("failure")
            if failure is None:
                failure = case.find("error")
            if classname == "pytest" and name == "internal":  # the run itself broke
                report.broken_modules["pytest"] = message(failure) if failure is not None else "?"
                continue
            if not classname:  # a module that does not import
                report.broken_modules[name] = message(failure) if failure is not None else "?"
                continue
            key = f"{classname}::{CLASS_PATH.sub(_class_name, ADDRESS.sub('0x…', name))}"
            skipped = case.find("skipped")
            if skipped is not None:
                report.skipped[key] = (skipped.get("message") or "")[:120]
                continue
            if failure is not None:
                report.results[key] = message(failure)
            elif key not in report.results:  # a passed call, not a teardown error after it
                report.results[key] = None
        return report

    def passed(self) -> set[str]:
        return {k for k, v in self.results.items() if v is None}

    def why_not(self, key: str) -> str:
        """Why test ``key`` did not pass in this run."""
        if key in self.results:
            return self.results[key] or "passed"
        if key in self.skipped:
            return f"skipped: {self.skipped[key]}"
        classname = key.split("::")[0]
        for module, msg in self.broken_modules.items():
            if classname == module or classname.startswith(module + "."):
                return f"{module} does not import: {msg}"
        return "not run (skipped or deselected)"


def module_of(key: str, modules: list[str]) -> str:
    classname = key.split("::")[0]
    return max((m for m in modules if classname == m or classname.startswith(m + ".")),
               key=len, default=classname)


def is_internal(key: str, internal: set[tuple[str, str]]) -> bool:
    classname, _, name = key.partition("::")
    return (classname, name.split("[", 1)[0]) in internal


def summarize(reference: Report, measured: Report, modules: list[str], top: int,
              label: str = "zarrkit", internal: set[tuple[str, str]] | None = None,
              failing: str | None = None) -> None:
    ref_passed, got_passed = reference.passed(), measured.passed()
    if internal is not None:
        public = {k for k in ref_passed if not is_internal(k, internal)}
        both_public = public & got_passed
        if failing:
            with open(failing, "w") as out:
                out.writelines(f"{key}\t{measured.why_not(key)}\n" for key in sorted(public - got_passed))
        print(f"{label} passes {len(both_public)} of the {len(public)} tests that pass with zarr-python "
              f"and use only its public names ({len(ref_passed) - len(public)} use its internals): "
              f"{len(both_public) / max(len(public), 1):.1%}")
        summarize(reference, measured, modules, top, label)
        counts_public: collections.Counter[str] = collections.Counter()
        for key in sorted(public - got_passed):
            counts_public[measured.why_not(key)] += 1
        print(f"\nfirst failures under {label} of the tests that pass with zarr-python and use only "
              f"its public names:")
        for msg, n in counts_public.most_common(top):
            print(f"{n:>5}  {msg}")
        return
    both = ref_passed & got_passed
    rows: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0, 0, 0, 0])
    for report, col in ((reference, 0), (measured, 2)):
        for key, result in report.results.items():
            row = rows[module_of(key, modules)]
            row[col + (result is not None)] += 1
    for key in both:
        rows[module_of(key, modules)][4] += 1
    print(f"{'module':<44}{'zarr-python pass/fail':>22}{label + ' pass/fail':>20}{'of ref':>8}")
    for module in sorted(rows):
        rp, rf, gp, gf, b = rows[module]
        broken = " (does not import)" if module in measured.broken_modules else ""
        print(f"{module:<44}{f'{rp} / {rf}':>22}{f'{gp} / {gf}':>20}{b:>8}{broken}")
    for report, other, name in ((reference, measured, "zarr-python"),
                                (measured, reference, label)):
        p = len(report.passed())
        f = len(report.results) - p
        # run by the other library, not by this one: modules that do not import, skips
        absent = len(set(other.results) - set(report.results))
        broken = {m: msg for m, msg in report.broken_modules.items() if m != "pytest"}
        print(f"{name}: passed {p}, failed {f}"
              + (f"; {absent} more not run" if absent else "")
              + (f" ({len(broken)} modules do not import)" if broken else ""))
        if "pytest" in report.broken_modules:
            print(f"  pytest stopped with an internal error: {report.broken_modules['pytest']}")
    print(f"{label} passes {len(both)} of the {len(ref_passed)} tests that pass with zarr-python: "
          f"{len(both) / max(len(ref_passed), 1):.1%}")
    counts: collections.Counter[str] = collections.Counter()
    example: dict[str, str] = {}
    for key in sorted(ref_passed - got_passed):
        msg = measured.why_not(key)
        counts[msg] += 1
        example.setdefault(msg, key)
    if counts:
        print(f"\nfirst failures under {label} of the tests that pass with zarr-python:")
    for msg, n in counts.most_common(top):
        print(f"{n:>5}  {msg}\n       e.g. {example[msg]}")


#: the rows of the differences table (docs/guide/compatibility.md): each remaining failure of a
#: test that passes with zarr-python falls in the first row whose pattern matches the test's id
#: followed by its first failure message
DIFFERENCES = [
    ("store methods are synchronous",
     r"await' expression|coroutine|async for|__aiter__|[Uu]nraisable|CountingDict\.get|dict\.get\(\) takes"),
    ("zarr-python internals", (
        r"zarrkit has no zarr\.|_PlaceholderType|has no attribute '(_\w+|encode_chunk_key|all_chunk_coords|"
        r"to_buffer_dict|chunk_grid|compute_encoded_size|from_sizes|update_attributes_async)'|"
        r"typing\.Any cannot|get_chunk_slice|AsyncGroup\.__init__\(\) got|ArrayMetadataV3\.__init__\(\) got|"
        r"supports_sync|SupportsSyncCodec|test_consistent_signatures|test_api_exports|"
        r"test_create_array_method_signature|_tunable_attrs|test_min_version_matches|chunk_shape == \(4,\)")),
    ("error messages", (r"Regex pattern did not match\.|^\S+ assert '.*' == '|AssertionError: assert '.*' == |"
                       r"assert \"\('|== \"Invalid|assert 'store' ==")),
    ("warnings", r"DID NOT WARN|did not match any of the \d+ warnings|FutureWarning|UserWarning: ZipStore"),
    ("accepted where zarr-python refuses", r"DID NOT RAISE"),
    ("modes and read-only", r"ReadOnlyError|mode must be|read-only|mode_r|with_mode"),
    ("not run under zarrkit", r"not run"),
]


def differences(reference: Report, measured: Report, rows: list[tuple[str, str]]) -> None:
    """How many of the tests that pass with zarr-python and fail with zarrkit fall in each row
    of the differences table, and the failures that fall in none."""
    counts: collections.Counter[str] = collections.Counter()
    unclassified: collections.Counter[str] = collections.Counter()
    got = measured.passed()
    for key in sorted(reference.passed() - got):
        text = f"{key} {measured.why_not(key)}"
        for title, pattern in rows:
            if re.search(pattern, text):
                counts[title] += 1
                break
        else:
            unclassified[measured.why_not(key)] += 1
    print("\nrows of the differences table:")
    for title, _ in rows:
        print(f"{counts[title]:>5}  {title}")
    print(f"{sum(unclassified.values()):>5}  behaviour differences (each below)")
    for msg, n in unclassified.most_common():
        print(f"{n:>9}  {msg}")


def junit_paths(out: str | None, work: Path) -> tuple[Path, Path]:
    """(zarrkit's report, zarr-python's report)."""
    if not out:
        return work / "zarrkit.xml", work / "zarr-python.xml"
    path = Path(out).resolve()
    return path, path.with_suffix(".zarr-python" + (path.suffix or ".xml"))


def common_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--src", default=str(Path(__file__).resolve().parents[1] / "src"),
                    help="the zarrkit sources to measure (default: this checkout's src/)")
    ap.add_argument("--top", type=int, default=30, help="failure messages to list")
    ap.add_argument("--junit", help="keep zarrkit's JUnit report here (zarr-python's beside it)")
    ap.add_argument("--reference", help="zarr-python's JUnit report of an earlier run, reused")
    ap.add_argument("--timeout", type=float, default=60, help="seconds allowed per test")
    ap.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")


def measure(args: argparse.Namespace, package: str, version: str, tests: list[str],
            pytest_args: list[str], label: str,
            internal: list[set[tuple[str, str]]] | None = None) -> tuple[Report, Report, list[str]]:
    """Run ``tests`` of ``package==version``'s source distribution with zarr-python (unless
    ``args.reference`` gives its report) and with zarrkit as ``zarr``; the two reports, and the
    test modules' names."""
    with tempfile.TemporaryDirectory(prefix=f"{package}-suite-") as tmp:
        work = Path(tmp)
        root = unpack_sdist(package, version, work)
        if internal is not None:
            internal.append(internal_tests(root, tests))
        shim = build_shim(work)
        plugins = install_plugins(work, PYTEST_ASYNCIO)
        junit, ref_junit = junit_paths(args.junit, work)
        runs = [("zarrkit", junit)]
        if args.reference:
            ref_junit = Path(args.reference).resolve()
        else:
            runs.insert(0, ("zarr", ref_junit))
        for library, out in runs:
            seconds = run_pytest(library, root, tests, out, src=args.src, shim=shim,
                                 plugins=plugins, timeout=args.timeout,
                                 plugin_names=["pytest_asyncio.plugin"], args=pytest_args)
            print(f"{label}with {'zarr-python' if library == 'zarr' else library}: {seconds:.0f} s",
                  file=sys.stderr, flush=True)
        modules = [t.removesuffix(".py").replace("/", ".") for t in tests]
        return Report.read(ref_junit), Report.read(junit), modules


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    common_arguments(ap)
    ap.add_argument("--failing", help="write the tests that pass with zarr-python, use only its "
                    "public names and fail with zarrkit here, one a line with their first failure")
    args = ap.parse_args()
    internal: list[set[tuple[str, str]]] = []
    reference, measured, modules = measure(args, "zarr", VERSION, TESTS, args.pytest_args, "", internal)
    summarize(reference, measured, modules, args.top, internal=internal[0], failing=args.failing)
    differences(reference, measured, DIFFERENCES)

if __name__ == "__main__":
    main()
