"""In Jupyter: a notebook creating an array, a group and a tree, executed on a real kernel (this
Python, with ipykernel) and exported to HTML by nbconvert, shows the array's info table, the
group's members and the hierarchy (``tree()``) as collapsible nested lists."""

from __future__ import annotations

import json
import sys
from html.parser import HTMLParser

import nbformat
import pytest
from nbconvert import HTMLExporter
from nbconvert.preprocessors import ExecutePreprocessor

KERNEL = "zarrkit-test-python"

CELLS = [
    "import numpy as np\nimport zarrkit",
    (
        "root = zarrkit.group()\n"
        "temp = root.create_group('climate').zeros('temperature', shape=(365, 180), chunks=(30, 90), dtype='f4')\n"
        "temp[:] = 1.5\n"
        "_ = root.create_group('empty')"
    ),
    "temp",  # the array: its info table
    "root",  # the group: read from no store, says how to list its members
    "root.tree()",
    "sorted(root._ipython_key_completions_())",
    "import sys\nprint(sys.executable)",
    "import warnings\nwarnings.simplefilter('ignore')\nzarrkit.consolidate_metadata(root.store)",  # its members
]


@pytest.fixture
def kernel(tmp_path, monkeypatch):
    """A kernel spec running this very interpreter, found before any other one."""
    spec = tmp_path / "jupyter" / "kernels" / KERNEL
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": KERNEL, "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    return KERNEL


class Elements(HTMLParser):
    """Tags opened, and the text inside each <summary> and <th>."""

    def __init__(self):
        super().__init__()
        self.tags: list[str] = []
        self.text: dict[str, list[str]] = {"summary": [], "th": [], "li": []}
        self._open: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self._open.append(tag)

    def handle_endtag(self, tag):
        while self._open and self._open.pop() != tag:
            pass

    def handle_data(self, data):
        if self._open and self._open[-1] in self.text and data.strip():
            self.text[self._open[-1]].append(data.strip())


def test_notebook_shows_info_table_and_collapsible_tree(kernel, tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in CELLS]
    ExecutePreprocessor(timeout=120, kernel_name=kernel).preprocess(nb, {"metadata": {"path": str(tmp_path)}})
    outputs = [cell.outputs for cell in nb.cells]
    assert not any(o.get("output_type") == "error" for cell in outputs for o in cell)
    # the kernel ran this interpreter
    assert outputs[6][0]["text"].strip() == sys.executable
    # rich outputs: HTML beside the plain text
    for i in (2, 3, 4, 7):
        data = outputs[i][0]["data"]
        assert "text/html" in data and "text/plain" in data
    assert "class=\"zarrkit-info\"" in outputs[2][0]["data"]["text/html"]
    assert ".tree()" in outputs[3][0]["data"]["text/html"] and "<li>" not in outputs[3][0]["data"]["text/html"]
    assert outputs[5][0]["data"]["text/plain"] == "['climate', 'empty']"

    html, _ = HTMLExporter().from_notebook_node(nb)
    (tmp_path / "notebook.html").write_text(html)
    page = Elements()
    page.feed(html)
    # the info table of the array
    assert {"Type", "Zarr format", "Data type", "Shape", "Chunk shape"} <= set(page.text["th"])
    assert "zarrkit-info" in html and "(365, 180)" in html and "(30, 90)" in html
    # the consolidated group: its members one level deep; tree(): the hierarchy as collapsible
    # nested lists
    assert page.tags.count("details") >= 1 + 3  # the group's /; the tree's /, climate, empty
    assert page.text["summary"].count("/") >= 2
    assert page.text["li"].count("climate") >= 1 and page.text["li"].count("empty") >= 1
    assert page.text["summary"].count("climate") >= 1 and page.text["summary"].count("empty") >= 1
    assert page.text["li"].count("temperature (365, 180) float32") >= 1
