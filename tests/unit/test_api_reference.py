"""The API reference (``docs/api/*.md``, rendered by mkdocstrings from the source) shows only
public things: no private parameter, default, base class or member; pages for every public
module; every public name reachable from the index.

mkdocstrings reads the source without importing it, so signatures are checked here as it
reads them: the parameters and the source text of their defaults.  When the documentation
tools are installed (``pip install -e '.[docs]'``), the site itself is built and read.
"""

from __future__ import annotations

import ast
import html
import importlib
import inspect
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import zarrkit

ROOT = Path(__file__).resolve().parents[2]
API = ROOT / "docs" / "api"
PUBLIC_MODULES = ["zarrkit", "zarrkit.codecs", "zarrkit.storage", "zarrkit.dtype", "zarrkit.xarray", "zarrkit.dask",
                  "zarrkit.errors"]


def _directives() -> dict[str, list[tuple[str, str]]]:
    """``::: identifier`` directives of each API page, with the options text under each."""
    out: dict[str, list[tuple[str, str]]] = {}
    for page in sorted(API.glob("*.md")):
        text = page.read_text(encoding="utf-8")
        found = []
        for m in re.finditer(r"^::: (\S+)\n((?:    .*\n)*)", text, re.MULTILINE):
            found.append((m.group(1), m.group(2)))
        out[page.name] = found
    return out


def _resolve(identifier: str):
    parts = identifier.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise LookupError(identifier)


def _mkdocs_text() -> str:
    return (ROOT / "mkdocs.yml").read_text(encoding="utf-8")


def test_private_members_and_bases_are_hidden():
    options = _mkdocs_text().split("handlers:", 1)[1].split("\n\n", 1)[0]
    assert re.search(r"^ +filters: \[\"!\^_\"\]$", options, re.MULTILINE)
    assert re.search(r"^ +show_bases: false$", options, re.MULTILINE)  # no SelectionMethods, _NumcodecsBytes...


def test_every_api_page_is_in_the_nav_and_the_index():
    nav = _mkdocs_text().split("  - API reference:\n", 1)[1]
    nav = nav[: re.search(r"^  - ", nav, re.MULTILINE).start()]
    in_nav = set(re.findall(r"(api/\w+\.md)", nav))
    pages = {f"api/{p.name}" for p in API.glob("*.md")}
    assert pages == in_nav
    index = (API / "index.md").read_text(encoding="utf-8")
    for page in pages - {"api/index.md"}:
        assert f"]({page.removeprefix('api/')})" in index, page
    for page in ("api/dtype.md", "api/xarray.md", "api/dask.md"):
        assert page in pages


def _documented_callables():
    for page, directives in _directives().items():
        for identifier, options in directives:
            obj = _resolve(identifier)
            if "show_signature: false" in options:
                continue
            if inspect.isclass(obj) and "__init__" in vars(obj):
                yield page, identifier, obj.__init__
            elif inspect.isfunction(obj):
                yield page, identifier, obj
            if inspect.isclass(obj) and "members: false" not in options:
                for name, member in vars(obj).items():
                    if inspect.isfunction(member) and not name.startswith("_"):
                        yield page, f"{identifier}.{name}", member
            if inspect.ismodule(obj):
                for name in getattr(obj, "__all__", []):
                    member = getattr(obj, name)
                    if inspect.isfunction(member):
                        yield page, f"{identifier}.{name}", member


def _signature_as_documented(func) -> tuple[list[str], list[str]]:
    """The parameter names and default expressions of ``func`` as its source spells them."""
    source = textwrap.dedent(inspect.getsource(func))
    node = next(n for n in ast.walk(ast.parse(source)) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))
    args = node.args
    names = [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]]
    defaults = [ast.unparse(d) for d in [*args.defaults, *(d for d in args.kw_defaults if d is not None)]]
    return names, defaults


def test_signatures_show_no_private_parameter_or_default():
    seen = 0
    for page, identifier, func in _documented_callables():
        try:
            names, defaults = _signature_as_documented(func)
        except (OSError, TypeError):  # defined outside zarrkit (numcodecs...)
            continue
        seen += 1
        private = [n for n in names if n.startswith("_")]
        assert not private, f"{page}: {identifier} shows private parameters {private}"
        hidden = [d for d in defaults if re.search(r"(^|[^\w.])_[A-Za-z]", d)]
        assert not hidden, f"{page}: {identifier} shows private defaults {hidden}"
    assert seen > 100


def test_the_array_and_the_config_take_only_public_arguments():
    assert not [p for p in inspect.signature(zarrkit.Array).parameters if p.startswith("_")]
    assert not [p for p in inspect.signature(type(zarrkit.config)).parameters if p.startswith("_")]
    assert "_lock" not in repr(zarrkit.config) and "_no_effect" not in repr(zarrkit.config)


def test_codec_classes_show_their_constructor_not_the_engine_hooks():
    for identifier, options in _directives()["codecs.md"]:
        if identifier.endswith("Codec"):
            assert "members: false" in options, identifier  # encode_transient, declared_size...


def _page_text() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in API.glob("*.md"))


def test_every_public_name_is_reachable_from_the_index():
    text = _page_text()
    documented = {identifier for directives in _directives().values() for identifier, _ in directives}
    missing = []
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            obj = getattr(module, name)
            qualified = f"{module_name}.{name}"
            covered = (
                qualified in documented
                or module_name in documented  # a module page documents its members
                or any(d.endswith(f".{name}") and _resolve(d) is obj for d in documented)
                or re.search(rf"`(zarrkit\.(\w+\.)*)?{re.escape(name)}`", text) is not None
            )
            if not covered:
                missing.append(qualified)
    assert not missing, f"public names on no API page: {missing}"


def test_the_built_reference_shows_no_private_names(tmp_path):
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
                   cwd=ROOT, env=env, check=True, capture_output=True, timeout=600)
    for page in sorted((site / "api").glob("*/index.html")):
        raw = page.read_text(encoding="utf-8")
        signatures = " ".join(
            html.unescape(re.sub(r"<[^>]+>", "", s))
            for s in re.findall(r'<div class="doc-signature[^"]*">(.*?)</div>', raw, re.DOTALL)
        )
        assert not re.search(r"(^|[^\w.])_[A-Za-z]", signatures), (page, re.findall(r"\b_\w+", signatures))
        headings = [h for h in re.findall(r'id="(zarrkit\.[^"]+)"', raw) if re.search(r"\._", h)]
        assert not headings, (page, headings)
        assert "Bases:" not in raw and "encode_transient" not in raw, page
    array = html.unescape(re.sub(r"<[^>]+>", "", (site / "api" / "array" / "index.html").read_text(encoding="utf-8")))
    assert "meta_array=None" in array and "_meta=" not in array and "_is_view=" not in array
    creation = (site / "api" / "creation" / "index.html").read_text(encoding="utf-8")
    assert "_UNSET" not in creation and "AS_SOURCE" in creation
