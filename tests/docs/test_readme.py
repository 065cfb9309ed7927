"""The README's Python examples run, in order, in a scratch directory."""

from __future__ import annotations

import re
from pathlib import Path

import zarrkit

README = Path(__file__).resolve().parents[2] / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.DOTALL)


def test_readme_has_examples():
    assert len(python_blocks()) >= 5


def test_readme_examples_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    for block in python_blocks():
        if block.startswith("# (reaches the network"):
            continue  # tests/stores/test_fsspec_store.py runs these calls against local servers
        exec(compile(block, str(README), "exec"), namespace)
    root = zarrkit.open_consolidated("data/example.zarr")
    assert root["climate/temperature"].attrs["units"] == "K"
    assert zarrkit.open_array("data/images.zarr/stack").metadata.dimension_names == ("t", "y", "x")
    assert zarrkit.open_array("data/big.zarr").shards == (4096, 4096)


def test_readme_first_commands_are_demo_and_test():
    text = README.read_text(encoding="utf-8")
    block = re.search(r"```sh\n(.*?)```", text, flags=re.DOTALL).group(1)
    commands = [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]
    assert commands[:2] == ["make demo", "make test"]
    assert "make test" in (README.parent / ".ci" / "run").read_text()
