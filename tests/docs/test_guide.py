"""The code blocks of the documentation run and print what the pages say they print.

Conventions of the pages under ``docs/`` (the API reference and the changelog excepted):

* a ```` ```python ```` block is code: a page's blocks run in order, in one namespace, in a new
  empty working directory;
* a ```` ```text ```` block right after a ``python`` block (blank lines between are allowed)
  is the standard output of that block, compared with doctest's rules (``...`` matches
  anything, runs of whitespace compare equal);
* a ```` ```console ```` block holds ``$ zarrkit ...`` command lines, each followed by its
  output: each command runs (in-process, in the same working directory, in its place among the
  ``python`` blocks), must exit with 0 and print what follows it;
* other blocks (``sh``, ``json``, ...) are shown, not run.
"""

from __future__ import annotations

import contextlib
import doctest
import io
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SKIPPED = ("api/", "changelog.md", "benchmarks")  # generated or included text, no examples
#: pages whose examples need an optional package (an extra that not every Python takes)
NEEDS = {"guide/views.md": "zarr_indexing"}

FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,})(?P<lang>[\w-]*)[^\n`]*$")
CHECKER = doctest.OutputChecker()
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


@dataclass
class Block:
    lang: str
    code: str
    line: int  # 1-based line of the first line of code
    expected: str | None = None


def pages() -> list[Path]:
    found = sorted(DOCS.rglob("*.md"))
    return [p for p in found if not p.relative_to(DOCS).as_posix().startswith(SKIPPED)]


def parse(path: Path) -> list[Block]:
    """The fenced blocks of a page, each ``text`` block attached to the code block before it."""
    return parse_text(path.read_text(encoding="utf-8"), str(path))


def parse_text(text: str, path: str = "<text>") -> list[Block]:
    lines = text.splitlines()
    blocks: list[Block] = []
    previous_end = -10
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, lang = len(m.group("indent")), m.group("fence"), m.group("lang")
        body: list[str] = []
        j = i + 1
        while j < len(lines) and lines[j].strip() != fence:
            body.append(lines[j][indent:])
            j += 1
        if j == len(lines):
            raise AssertionError(f"{path}:{i + 1}: unclosed code block")
        code = "\n".join(body) + "\n"
        between = lines[previous_end + 1:i] if previous_end >= 0 else ["x"]
        follows = blocks and not any(line.strip() for line in between)
        if lang == "text" and follows and blocks[-1].lang == "python":
            blocks[-1].expected = code
        else:
            blocks.append(Block(lang, code, i + 2))
        previous_end = j
        i = j + 1
    return blocks


def check_output(where: str, expected: str, got: str) -> None:
    if not CHECKER.check_output(expected, got, FLAGS):
        example = doctest.Example("", expected)
        diff = CHECKER.output_difference(example, got, FLAGS)
        raise AssertionError(f"{where}: printed output differs from the page\n{diff}")


def run_console(path: Path, block: Block) -> None:
    from zarrkit.cli import main

    commands: list[tuple[int, str, list[str]]] = []
    for k, line in enumerate(block.code.splitlines()):
        if line.startswith("$ "):
            commands.append((block.line + k, line[2:], []))
        elif commands:
            commands[-1][2].append(line)
        elif line.strip():
            raise AssertionError(f"{path}:{block.line + k}: output before any command")
    for lineno, command, output in commands:
        argv = shlex.split(command, comments=True)
        assert argv[0] == "zarrkit", f"{path}:{lineno}: only zarrkit commands run, got {argv[0]!r}"
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = main(argv[1:])
        assert code == 0, f"{path}:{lineno}: `{command}` exited with {code}"
        expected = "\n".join(output).strip("\n")
        check_output(f"{path}:{lineno}", expected + "\n" if expected else "", out.getvalue())


def run_page(path: Path) -> int:
    """Runs the page's blocks; returns how many ran."""
    namespace: dict = {"__name__": "__docs__"}
    ran = 0
    for block in parse(path):
        if block.lang == "console":
            run_console(path, block)
            ran += 1
            continue
        if block.lang != "python":
            continue
        source = "\n" * (block.line - 1) + block.code
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(source, str(path), "exec"), namespace)
        if block.expected is not None:
            check_output(f"{path}:{block.line}", block.expected, out.getvalue())
        ran += 1
    return ran


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    options = np.get_printoptions()
    import zarrkit

    default_compressor = zarrkit.storage.default_compressor if hasattr(
        zarrkit.storage, "default_compressor") else None
    yield tmp_path
    np.set_printoptions(**options)
    if default_compressor is not None:
        zarrkit.storage.default_compressor = default_compressor


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("page", pages(), ids=lambda p: p.relative_to(DOCS).as_posix())
def test_page_examples(page, scratch):
    needed = NEEDS.get(page.relative_to(DOCS).as_posix())
    if needed is not None:
        pytest.importorskip(needed)
    ran = run_page(page)
    assert ran > 0, f"{page} has no example that runs"


def test_every_python_block_is_collected():
    """A block the fence parser missed would go untested: count fences the plain way too."""
    for page in pages():
        text = page.read_text(encoding="utf-8")
        plain = len(re.findall(r"^ *```python\s*$", text, flags=re.MULTILINE))
        parsed = sum(b.lang == "python" for b in parse(page))
        assert parsed == plain, page


def test_guide_pages_exist():
    names = {p.relative_to(DOCS).as_posix() for p in pages()}
    assert {"index.md", "getting-started.md"} <= names
    assert len([n for n in names if n.startswith("guide/")]) >= 10


def test_cli_reference_is_current(monkeypatch):
    """The --help texts quoted at the end of the command-line page are what the parser prints."""
    from zarrkit.cli import build_parser

    monkeypatch.setenv("COLUMNS", "96")
    text = (DOCS / "guide" / "cli.md").read_text(encoding="utf-8")
    reference = text.split("## Reference", 1)[1]
    quoted = next(b for b in parse_text(reference) if b.lang == "text").code
    parser = build_parser()
    for command in [[]] + [[c] for c in
                           ("info", "tree", "ls", "cp", "convert", "verify", "consolidate", "rm",
                            "rechunk", "completion")]:
        out = io.StringIO()
        with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
            parser.parse_args(command + ["--help"])
        assert out.getvalue().strip() in quoted, f"`zarrkit {' '.join(command)} --help` changed"


# -- benchmark figures quoted in the pages ---------------------------------------------------------
RESULTS = ROOT / "benchmarks" / "RESULTS.md"
RESULTS_AS_IS = ROOT / "benchmarks" / "RESULTS-as-is.md"


def markdown_table(text: str, header: str) -> list[list[str]]:
    """The cells of the body rows of the first table whose header line starts with ``header``."""
    table = text.split("\n" + header, 1)[1].split("\n\n", 1)[0]
    return [[c.strip() for c in line.strip().strip("|").split("|")] for line in table.splitlines()[2:]]


def _seconds(cell: str) -> float:
    value, unit = re.search(r"([\d.]+) (m?s)\b", cell).groups()
    return float(value) / (1000 if unit == "ms" else 1)


def _columns(table: str) -> tuple[dict[str, list[str]], int, int]:
    """A results table's rows by library, and the columns of the (warm) time and its ratio:
    ``| library | time | MiB/s | ratio zarrkit/peer | ...`` or, for the ZB rows, ``| library |
    cold | warm | MiB/s | ratio zarrkit/peer, cold | warm | ...``."""
    lines = table.splitlines()
    header = [c.strip() for c in lines[0].strip().strip("|").split("|")]
    rows = {}
    for line in lines[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        rows.setdefault(cells[0], cells)
    if "warm" in header:
        return rows, header.index("warm"), header.index("ratio zarrkit/peer, cold") + 1
    return rows, header.index("time"), header.index("ratio zarrkit/peer")


def _agrees(table: str, zk: str, peer: str, ratio: str, to_zarr_python: str) -> bool:
    rows, t, r = _columns(table)
    zp = rows["zarr-python"]
    if rows["zarrkit"][t] == zk:  # zarrkit's own row: the ratios are the results'
        return (any(c[t] == peer and c[r] == ratio for c in rows.values())
                and zp[r] == to_zarr_python)
    if not any(name.startswith("zarrkit, ") and c[t] == zk for name, c in rows.items()):
        return False
    return (any(c[t] == peer for c in rows.values())
            and abs(float(ratio) - _seconds(zk) / _seconds(peer)) <= 0.01
            and abs(float(to_zarr_python) - _seconds(zk) / _seconds(zp[t])) <= 0.01)


def check_benchmark_rows(rows: list[list[str]], where: str, workloads: list[str] | None = None,
                         results: Path = RESULTS) -> None:
    """Rows ``workload | zarrkit time | other library's time (who) | ratio | ratio to
    zarr-python``, the workload named W1...W7 in its cell or, row by row, in ``workloads``:
    both times are in a results table of that workload (of ``results``; for ZB rows, the warm
    times), and each ratio is the one the results give (computed there from unrounded times),
    or, for a zarrkit variant the results do not compare, the quotient of the times shown."""
    text = results.read_text(encoding="utf-8")
    tables = re.findall(r"^### (W\d|ZB8?) .*?\n\n(.*?)(?:\n\n|\Z)", text, flags=re.DOTALL | re.MULTILINE)
    if workloads is not None:
        assert len(workloads) == len(rows), f"{where}: {len(rows)} benchmark rows"
    for k, (workload, ours, theirs, ratio, to_zarr_python) in enumerate(rows):
        name = workloads[k] if workloads is not None else re.search(r"\b(W\d)\b", workload).group(1)
        zk, peer = re.search(r"[\d.]+ m?s", ours).group(0), re.search(r"[\d.]+ m?s", theirs).group(0)
        assert any(_agrees(t, zk, peer, ratio, to_zarr_python) for w, t in tables if w == name), (
            f"{where}: row {workload!r} does not give the figures of {results.name}")


def test_performance_page_figures_are_the_committed_runs():
    page = (DOCS / "guide" / "performance.md").read_text(encoding="utf-8")
    rows = markdown_table(page, "| workload |")
    assert len(rows) >= 12
    check_benchmark_rows(rows, "docs/guide/performance.md")
