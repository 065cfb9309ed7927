"""What the layer contracts cannot see.  The layers (base (errors, config) ← storage ← codecs ←
metadata ← core ← api ← edges) and the absence of cycles are import-linter's contracts, in
pyproject.toml, checked by ``make test``.  Here: no import of the package's own modules hides
inside a function, no module changes another when imported, the engine names no particular
codec or store, and no module or function outgrows its budget."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import zarrkit

SRC = Path(zarrkit.__file__).parent
#: imports inside a function that are allowed, with the reason
LAZY = {
    # the conformance suites need pytest, which only tests install
    ("zarrkit.testing", "zarrkit.testing.store_suite"),
}


def _modules() -> dict[str, Path]:
    mods = {}
    for path in SRC.rglob("*.py"):
        parts = ("zarrkit", *path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = path
    return mods


MODULES = _modules()


def _target(module: str, node: ast.ImportFrom, name: str) -> str:
    if node.level:
        package = module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]
        for _ in range(node.level - 1):
            package = package.rpartition(".")[0]
        base = f"{package}.{node.module}" if node.module else package
    else:
        base = node.module or ""
    full = f"{base}.{name}"
    return full if full in MODULES else base


def imports() -> list[tuple[str, str, bool, int]]:
    """``(importer, imported, inside a function, line)`` for every import of a zarrkit module."""
    found = []
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(), str(path))
        in_function = {
            id(node)
            for fn in ast.walk(tree) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
            for node in ast.walk(fn) if isinstance(node, (ast.Import, ast.ImportFrom))
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                targets = [_target(module, node, a.name) for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            for target in targets:
                if not target.startswith("zarrkit"):
                    continue
                while target not in MODULES and "." in target:
                    target = target.rpartition(".")[0]
                if target != module:
                    found.append((module, target, id(node) in in_function, node.lineno))
    return found


IMPORTS = imports()


def test_the_graph_is_seen():
    # a check that found nothing would pass whatever the tree: it must see the known imports
    assert len(MODULES) > 50
    assert ("zarrkit.core.read", "zarrkit.core.chunks", False) in {(a, b, f) for a, b, f, _ in IMPORTS}


def test_no_import_hides_inside_a_function():
    # the layers themselves are import-linter's contracts (pyproject.toml, run by `make test`);
    # it sees an import inside a function as any other, so one placed there to dodge a layer
    # would pass unseen by a reader: none is allowed but the listed ones
    hidden = [
        f"{a} imports {b} inside a function (line {line})"
        for a, b, inside, line in IMPORTS if inside and (a, b) not in LAZY
    ]
    assert hidden == []


def _imported_names(tree: ast.Module) -> set[str]:
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def _changes_at_import(module: str, source: str) -> list[str]:
    """What the top-level statements of ``source`` change in other modules: setattr/delattr calls
    and assignments to an attribute of an imported module or class."""
    tree = ast.parse(source)
    imported = _imported_names(tree)
    changes = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for sub in ast.walk(node):
            if (isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name)
                    and sub.func.id in ("setattr", "delattr")):
                changes.append(f"{module}:{sub.lineno} calls {sub.func.id}")
            targets = sub.targets if isinstance(sub, ast.Assign) else (
                [sub.target] if isinstance(sub, (ast.AugAssign, ast.AnnAssign)) else [])
            for t in targets:
                while isinstance(t, ast.Attribute):
                    if isinstance(t.value, ast.Name) and t.value.id in imported:
                        changes.append(f"{module}:{t.lineno} assigns to {t.value.id}.{t.attr}")
                    t = t.value
    return changes


def test_no_module_changes_another_at_import():
    # importing a module must not alter another (what no import graph shows)
    changes = [c for m, p in MODULES.items() for c in _changes_at_import(m, p.read_text())]
    assert changes == []


@pytest.mark.parametrize("source", [
    "from .storage.base import Store\nStore._metadata_class = object\n",
    "from . import storage\nfor n in ('a',):\n    setattr(storage, n, len)\n",
    "import zarrkit.storage\nzarrkit.storage.listdir = len\n",
])
def test_a_change_at_import_is_seen(source):
    assert _changes_at_import("m", source) != []


@pytest.mark.parametrize("module", ["zarrkit.core.read", "zarrkit.core.write", "zarrkit.core.chunks"])
def test_the_engine_names_no_particular_codec_or_store(module):
    # core/ asks the codec chain and the store contract; it never imports a codec or a store
    named = {b for a, b, _, _ in IMPORTS if a == module}
    assert not {b for b in named if b.startswith("zarrkit.codecs.") and b not in (
        "zarrkit.codecs.chain", "zarrkit.codecs.buffers", "zarrkit.codecs.sharding")}
    # (the store contract, and its one read-modify-write loop)
    assert not {b for b in named if b.startswith("zarrkit.storage.")
                and b not in ("zarrkit.storage.base", "zarrkit.storage.optimistic")}


#: the limits of DESIGN: no module above ~800 lines, at most three functions over 80 lines of
#: code (docstrings, which document, are not counted)
MAX_MODULE_LINES = 800
MAX_FUNCTION_LINES = 80
MAX_LONG_FUNCTIONS = 3


def _code_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    lines = node.end_lineno - node.lineno + 1
    first = node.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        lines -= first.end_lineno - first.lineno + 1
    return lines


def test_no_module_is_over_the_size_limit():
    sizes = {m: p.read_text().count("\n") for m, p in MODULES.items()}
    assert max(sizes.values()) > 200  # the count sees real modules
    assert {m: n for m, n in sizes.items() if n > MAX_MODULE_LINES} == {}


def test_at_most_three_long_functions():
    long = []
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = _code_lines(node)
                if n > MAX_FUNCTION_LINES:
                    long.append(f"{module}.{node.name}: {n} lines")
    assert len(long) <= MAX_LONG_FUNCTIONS, long
