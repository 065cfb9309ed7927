"""The README, a page a newcomer reads in two minutes: its two set-up commands come first, its
example runs and prints what it says, its links lead to pages that exist, and its benchmark
figures are those of the committed run.  The details it leaves to the guide are run there
(``test_guide.py``)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

from test_guide import RESULTS_AS_IS, check_benchmark_rows, check_output, markdown_table, parse_text

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def text() -> str:
    return README.read_text(encoding="utf-8")


def test_readme_first_commands_are_demo_and_test():
    block = re.search(r"```sh\n(.*?)```", text(), flags=re.DOTALL).group(1)
    commands = [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]
    assert commands[:2] == ["make demo", "make test"]
    assert "make test" in (README.parent / ".ci" / "run").read_text()


def test_readme_says_what_make_test_costs_and_does():
    """How long the suite takes, the quicker target, and the system package it may install
    (the Makefile's recipe is what the README describes)."""
    prose = " ".join(text().split())
    assert "`make test` takes about 13 minutes on 2 cores, and longer on a busy machine" in prose
    assert "`make test-quick`" in prose and "takes about 8 minutes on 2 cores" in prose
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^test-quick:", makefile, flags=re.MULTILINE)
    assert "apt-get install -y -qq redis-server" in makefile and "sudo -n apt-get" in makefile
    assert "installs it with the system's package manager (`apt-get`, directly or through `sudo -n`)" in prose


def test_readme_is_short():
    assert len(text().splitlines()) <= 145


def test_readme_says_how_to_install_from_a_clone():
    """The editable installs, with extras that pyproject.toml defines."""
    blocks = re.findall(r"```sh\n(.*?)```", text(), flags=re.DOTALL)
    commands = [line.split("#")[0].strip() for b in blocks for line in b.splitlines()]
    assert "pip install -e ." in commands and "pip install -e '.[all]'" in commands
    pyproject = (ROOT / "pyproject.toml").read_text()
    for extra in re.findall(r"'\.\[(\w+)\]'", text()):
        assert re.search(rf"^{extra} = \[", pyproject, flags=re.MULTILINE), extra


def test_readme_example_runs_and_prints_what_it_shows(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    blocks = [b for b in parse_text(text(), str(README)) if b.lang == "python"]
    assert len(blocks) == 1
    (example,) = blocks
    assert len([line for line in example.code.splitlines() if line.strip()]) <= 10
    assert example.expected is not None, "the example's output is shown after it"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile("\n" * (example.line - 1) + example.code, str(README), "exec"), {})
    check_output(f"{README}:{example.line}", example.expected, out.getvalue())


def test_readme_links_lead_to_existing_pages():
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text())
    local = [link for link in links if "://" not in link]
    assert len(local) >= 15
    for link in local:
        assert (ROOT / link).exists(), link
    # the README leads into the user guide rather than repeating it
    assert len({link for link in local if link.startswith("docs/guide/")}) >= 12


#: the workload of benchmarks/RESULTS-as-is.md each row of the README's table describes in words
README_WORKLOADS = ["W1", "W2", "W3", "W4", "W4", "W5", "W5", "ZB", "ZB", "ZB", "W7"]


def test_readme_benchmark_figures_are_the_committed_runs():
    rows = markdown_table(text(), "| workload |")
    assert len(rows) >= 6
    check_benchmark_rows(rows, str(README), README_WORKLOADS, RESULTS_AS_IS)
    # each row says what it measures in words, not by the results' workload numbers
    assert not any(re.search(r"\bW\d\b", row[0]) for row in rows)
