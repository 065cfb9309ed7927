#!/usr/bin/env python
"""Measure how much of zarr-python 3's user guide runs unchanged on zarrkit, block by block.

Usage::

    python tools/zarr3_guide.py [--src DIR] [--page NAME ...] [--timeout S] [--verbose]

What it does, in a temporary directory (nothing of zarr-python enters this repository):

1. ``pip download --no-binary :all: zarr==3.4.2`` (the sdist ships the documentation) and
   unpack its user guide, ``docs/user-guide/*.md``;
2. collect each page's Python blocks that the guide itself runs: fences marked ``exec="true"``
   (run at build, their standard output shown under them) or ``test="true"`` (run by
   zarr-python's tests only). Blocks of one ``session`` share a namespace; sessions run in page
   order. The guide shows results as printed standard output, not as the repr of a trailing
   expression, so standard output is what is compared;
3. run every page twice, each run in its own subprocess (with a timeout) and its own fresh
   working directory: once with zarr-python, once with ``zarr`` and every ``zarr.*`` module
   resolved to ``zarrkit`` and ``zarrkit.*``, a package of zarrkit or a module of its
   compatibility table (``zarrkit.dtype``, ``zarrkit.experimental``...: ``zarrkit.compat``), by a
   meta-path finder installed before the first block. NumPy's global random generator is seeded
   identically in both runs;
4. normalise what legitimately differs (memory addresses, the working and temporary directories,
   timings, the library's name) and compare each block's output.

Blocks are excluded, and listed, when they use what zarrkit leaves out by design: the
asynchronous API (``asyncio``, ``await``, ``Async*`` classes, ``zarr.api.asynchronous``), GPU
buffers (cupy, ``enable_gpu``), and zarr-python's codec-pipeline classes and their
``codec_pipeline.*`` settings; also the blocks that raise under zarr-python itself. Excluded
blocks still run (later blocks may depend on them); they are only left out of the counts.

A comparable block is *identical* when neither run raised and the normalised outputs are equal;
otherwise it *raises* (under zarrkit) or *differs* (the first differing line is shown;
``--verbose`` shows whole differences).
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path

VERSION = "3.4.2"

# what zarrkit leaves out by design; a block using any of it is run but not counted
EXCLUSIONS = [
    ("asynchronous API", re.compile(
        r"\basyncio\b|\bawait\b|\basync\s+(def|with|for)\b|\bAsync[A-Z]\w*"
        r"|api\.asynchronous|\w_async\(")),
    ("GPU buffers", re.compile(r"\bcupy\b|enable_gpu|\bgpu\b", re.IGNORECASE)),
    ("codec-pipeline classes", re.compile(r"CodecPipeline|codec_pipeline")),
]

RUNNER = r'''
"""Runs one page's blocks (tools/zarr3_guide.py): argv = blocks.json results.jsonl zarr|zarrkit."""
import contextlib
import importlib
import importlib.abc
import importlib.util
import io
import json
import sys
import traceback

blocks_file, results_file, library = sys.argv[1:4]

if library == "zarrkit":
    import zarrkit

    class _ZarrIsZarrkit(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        """``zarr`` and ``zarr.x.y`` are the modules ``zarrkit`` and ``zarrkit.x.y`` (files of the
        package, or modules of the compatibility table, which importing zarrkit registers)."""

        def find_spec(self, name, path, target=None):
            if not name.startswith("zarr."):
                return None
            real = "zarrkit" + name[len("zarr"):]
            if importlib.util.find_spec(real) is None:
                return None
            return importlib.util.spec_from_loader(name, self, is_package=True)

        def create_module(self, spec):
            module = importlib.import_module("zarrkit" + spec.name[len("zarr"):])
            self._specs = getattr(self, "_specs", {})
            self._specs[spec.name] = module.__spec__
            return module

        def exec_module(self, module):
            module.__spec__ = self._specs.pop(module.__spec__.name)  # the import set the alias's

    sys.meta_path.insert(0, _ZarrIsZarrkit())
    sys.modules["zarr"] = zarrkit

import numpy as np

np.random.seed(0)
namespaces = {}
with open(blocks_file) as f:
    blocks = json.load(f)
with open(results_file, "w") as out:
    for block in blocks:
        ns = namespaces.setdefault(block["session"], {"__name__": "__main__"})
        buf = io.StringIO()
        error = None
        with contextlib.redirect_stdout(buf):
            try:
                exec(compile(block["source"], f"<{block['id']}>", "exec"), ns)
            except BaseException as e:  # noqa: BLE001 - a block's failure is a result
                if isinstance(e, KeyboardInterrupt):
                    raise
                error = "".join(traceback.format_exception_only(type(e), e)).strip()
        out.write(json.dumps({"id": block["id"], "stdout": buf.getvalue(), "error": error}) + "\n")
        out.flush()
'''


@dataclass
class Block:
    page: str
    index: int
    line: int
    session: str
    source: str
    excluded: str | None = None
    results: dict[str, dict] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.page}#{self.index} (line {self.line})"


FENCE = re.compile(r'^(\s*)```python\b(.*)$')
ATTR = re.compile(r'(\w+)="([^"]*)"')


def parse_page(path: Path) -> list[Block]:
    """The blocks the guide runs (exec="true" or test="true"), in page order."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, settings = m.group(1), dict(ATTR.findall(m.group(2)))
        start = i
        body = []
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i].removeprefix(indent))
            i += 1
        i += 1
        if settings.get("exec") != "true" and settings.get("test") != "true":
            continue
        block = Block(path.name, len(blocks) + 1, start + 1, settings.get("session", "_default"),
                      textwrap.dedent("\n".join(body)) + "\n")
        markers = settings.get("markers", "").split()
        for reason, pattern in EXCLUSIONS:
            if pattern.search(block.source) or (reason == "GPU buffers" and "gpu" in markers):
                block.excluded = reason
                break
        else:
            if markers:
                block.excluded = f"needs test infrastructure ({' '.join(markers)})"
        blocks.append(block)
    return blocks


def download(work: Path) -> Path:
    """zarr-python's user guide pages, from its sdist."""
    dist = work / "sdist"
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                    "--no-binary", ":all:", f"zarr=={VERSION}", "-d", str(dist)],
                   check=True, stderr=subprocess.DEVNULL)
    sdist = next(dist.glob("zarr-*.tar.gz"))
    guide = work / "user-guide"
    guide.mkdir()
    with tarfile.open(sdist) as tf:
        for member in tf.getmembers():
            parts = Path(member.name).parts
            if member.isfile() and parts[1:3] == ("docs", "user-guide") and len(parts) == 4 \
                    and member.name.endswith(".md"):
                (guide / parts[3]).write_bytes(tf.extractfile(member).read())
    return guide


def run_page(blocks: list[Block], library: str, work: Path, src: str, timeout: float) -> None:
    """Runs a page's blocks under one library, in a subprocess in a fresh working directory."""
    run_dir = work / f"{blocks[0].page}-{library}"
    cwd = run_dir / "cwd"
    tmp = run_dir / "tmp"
    cwd.mkdir(parents=True)
    tmp.mkdir()
    (run_dir / "blocks.json").write_text(json.dumps(
        [{"id": b.id, "session": b.session, "source": b.source} for b in blocks]))
    results = run_dir / "results.jsonl"
    env = dict(os.environ, TMPDIR=str(tmp), PYTHONHASHSEED="0", PYTHONWARNINGS="ignore")
    if library == "zarrkit":
        env["PYTHONPATH"] = src
    else:
        env.pop("PYTHONPATH", None)
    failure = None
    try:
        proc = subprocess.run(
            [sys.executable, str(work / "runner.py"), str(run_dir / "blocks.json"), str(results),
             library], check=False, cwd=cwd, env=env, timeout=timeout,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if proc.returncode:
            failure = f"the page's process ended with code {proc.returncode}: " + \
                (proc.stderr.strip().splitlines() or [""])[-1]
    except subprocess.TimeoutExpired:
        failure = f"the page did not finish within {timeout:.0f} s"
    done = {}
    if results.exists():
        for line in results.read_text().splitlines():
            record = json.loads(line)
            done[record["id"]] = record
    for block in blocks:
        record = done.get(block.id) or {"stdout": "", "error": failure or "not run"}
        names = [(str(cwd), "<cwd>"), (str(tmp), "<tmp>")]
        if library == "zarrkit":
            names.append(("zarrkit", "zarr"))
        record["stdout"] = normalise(record["stdout"], names)
        block.results[library] = record


ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")
MEMORY_STORE = re.compile(r"memory://\d+")  # an unnamed memory store is named by its dict's id()
SECONDS = re.compile(r"\b\d+\.\d+(?:e-?\d+)?(?=\s*(?:s|ms|seconds)\b)")
TIMED = re.compile(r"(?i)\b(took|speedup|elapsed|time)\b")
FLOAT = re.compile(r"\b\d+\.\d+(?:e-?\d+)?")


def normalise(text: str, names: list[tuple[str, str]]) -> str:
    for old, new in names:
        text = text.replace(os.path.realpath(old), new).replace(old, new)
    text = ADDRESS.sub("0x…", text)
    text = MEMORY_STORE.sub("memory://<id>", text)
    text = SECONDS.sub("<t>", text)
    lines = [FLOAT.sub("<t>", line) if TIMED.search(line) else line for line in text.split("\n")]
    return "\n".join(lines)


def classify(block: Block) -> tuple[str, str]:
    """(category, first line of the difference) of one block."""
    ref, got = block.results["zarr"], block.results["zarrkit"]
    if block.excluded:
        return "excluded", block.excluded
    if ref["error"]:
        return "raises-ref", ref["error"].splitlines()[0]
    if got["error"]:
        return "raises", got["error"].splitlines()[0]
    if ref["stdout"] == got["stdout"]:
        return "identical", ""
    expected, output = ref["stdout"].splitlines(), got["stdout"].splitlines()
    n = max(len(expected), len(output))
    for a, b in zip(expected + [""] * n, output + [""] * n):
        if a != b:
            # from a little before the first differing character
            first = next(i for i, (x, y) in enumerate(zip(a + "\0", b + "\1")) if x != y)
            start = max(0, first - 40)
            cut = "…" if start else ""
            a, b = cut + a[start:start + 90], cut + b[start:start + 90]
            return "differs", f"expected {a!r}, got {b!r}"
    return "differs", "in whitespace only"


COLUMNS = {"run": "run", "excluded": "excl", "raises-ref": "ref err", "comparable": "compared",
           "identical": "same", "raises": "raises", "differs": "differs"}


def row(name: str, counts: dict[str, int | str]) -> str:
    cells = (f"{counts[key]:>{len(title) + 2}}" for key, title in COLUMNS.items())
    return f"{name:<26}" + "".join(cells)


def report(pages: dict[str, list[Block]], verbose: bool) -> None:
    totals = dict.fromkeys(COLUMNS, 0)
    details: list[str] = []
    excluded: list[str] = []
    print(row("page", COLUMNS))
    for page, blocks in pages.items():
        counts = dict.fromkeys(COLUMNS, 0)
        for block in blocks:
            category, first = classify(block)
            counts["run"] += 1
            counts[category] += 1
            if category == "excluded":
                excluded.append(f"  {block.id}: {first}")
            elif category == "raises-ref":
                excluded.append(f"  {block.id}: raises under zarr-python: {first}")
            else:
                counts["comparable"] += 1
                if category != "identical":
                    details.append(f"  {block.id} [{category}] {first}")
                    if verbose:
                        details.append(textwrap.indent(diff(block), "      "))
        for key in totals:
            totals[key] += counts[key]
        print(row(page, counts))
    print(row("total", totals))
    print(f"\nidentical: {totals['identical']} / {totals['comparable']} comparable blocks "
          f"({totals['identical'] / max(totals['comparable'], 1):.1%})")
    if excluded:
        print("\nexcluded blocks:")
        print("\n".join(excluded))
    if details:
        print("\nblocks that raise or differ under zarrkit:")
        print("\n".join(details))


def diff(block: Block) -> str:
    ref, got = block.results["zarr"], block.results["zarrkit"]
    if got["error"]:
        return "zarrkit raised: " + got["error"]
    return "\n".join(difflib.unified_diff(ref["stdout"].splitlines(), got["stdout"].splitlines(),
                                          "zarr-python", "zarrkit", lineterm="", n=1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", default=str(Path(__file__).resolve().parents[1] / "src"),
                    help="the zarrkit sources to measure (default: this checkout's src/)")
    ap.add_argument("--page", action="append", help="only these pages (e.g. arrays or arrays.md)")
    ap.add_argument("--timeout", type=float, default=600,
                    help="seconds allowed per page and library")
    ap.add_argument("--verbose", action="store_true", help="show every difference in full")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="zarr3-guide-") as tmp:
        work = Path(tmp)
        guide = download(work)
        (work / "runner.py").write_text(RUNNER)
        wanted = {p if p.endswith(".md") else p + ".md" for p in args.page or []}
        pages: dict[str, list[Block]] = {}
        for path in sorted(guide.glob("*.md")):
            if wanted and path.name not in wanted:
                continue
            blocks = parse_page(path)
            if not blocks:
                continue
            for library in ("zarr", "zarrkit"):
                started = time.perf_counter()
                run_page(blocks, library, work, os.path.abspath(args.src), args.timeout)
                elapsed = time.perf_counter() - started
                print(f"{path.name} with {library}: {elapsed:.0f} s", file=sys.stderr)
            pages[path.name] = blocks
        report(pages, args.verbose)


if __name__ == "__main__":
    main()
