"""The tree keeps its layers: base (errors, config) ← storage ← codecs ← metadata ← core ← api ←
edges (cli, xarray, dask, testing).  No module imports from a layer above its own, imports form
no cycle, and no import of the package's own modules hides inside a function."""

from __future__ import annotations

import ast
import collections
from pathlib import Path

import pytest

import zarrkit

SRC = Path(zarrkit.__file__).parent
BASE = ("zarrkit.errors", "zarrkit.config", "zarrkit._threads")
LAYERS = {"storage": 1, "codecs": 2, "metadata": 3, "core": 4}
EDGES = ("cli", "xarray", "dask", "testing", "__main__")
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


def layer(module: str) -> int:
    """0 base, 1 storage, 2 codecs, 3 metadata, 4 core, 5 api, 6 edges."""
    if module in BASE:
        return 0
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in LAYERS:
        return LAYERS[parts[1]]
    if len(parts) > 1 and parts[1] in EDGES:
        return 6
    return 5


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
    assert layer("zarrkit.storage.local") < layer("zarrkit.codecs.chain") < layer("zarrkit.metadata.v3")
    assert layer("zarrkit.metadata.v3") < layer("zarrkit.core.array") < layer("zarrkit.api") < layer("zarrkit.cli")


def test_no_module_imports_from_a_layer_above_its_own():
    upward = [
        f"{a} (layer {layer(a)}) imports {b} (layer {layer(b)}) at line {line}"
        for a, b, _, line in IMPORTS if layer(b) > layer(a)
    ]
    assert upward == []


def test_no_import_hides_inside_a_function():
    hidden = [
        f"{a} imports {b} inside a function (line {line})"
        for a, b, inside, line in IMPORTS if inside and (a, b) not in LAZY
    ]
    assert hidden == []


def test_imports_form_no_cycle():
    graph = collections.defaultdict(set)
    for a, b, _, _ in IMPORTS:
        graph[a].add(b)
    # Tarjan's strongly connected components
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in list(MODULES):
        if v not in index:
            visit(v)
    assert cycles == []


@pytest.mark.parametrize("module", ["zarrkit.core.read", "zarrkit.core.write", "zarrkit.core.chunks"])
def test_the_engine_names_no_particular_codec_or_store(module):
    # core/ asks the codec chain and the store contract; it never imports a codec or a store
    named = {b for a, b, _, _ in IMPORTS if a == module}
    assert not {b for b in named if b.startswith("zarrkit.codecs.") and b not in (
        "zarrkit.codecs.chain", "zarrkit.codecs.buffers", "zarrkit.codecs.shard_store")}
    assert not {b for b in named if b.startswith("zarrkit.storage.") and b != "zarrkit.storage.base"}


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
