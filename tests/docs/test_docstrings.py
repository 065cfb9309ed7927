"""The examples in zarrkit's docstrings run and show what they say."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import numpy as np
import pytest

import zarrkit

MODULES = sorted(
    m.name for m in pkgutil.walk_packages(zarrkit.__path__, prefix="zarrkit.")
    if not m.name.startswith("zarrkit.testing")
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name, tmp_path, monkeypatch):
    if name == "zarrkit.core.lazy":  # lazy views are an extra that needs Python 3.12
        pytest.importorskip("zarr_indexing")
    monkeypatch.chdir(tmp_path)
    module = importlib.import_module(name)
    opts = np.get_printoptions()
    try:
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
                                 report=True, verbose=False)
    finally:
        np.set_printoptions(**opts)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
