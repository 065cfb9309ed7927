"""Markers for tests that need hardware zarrkit does not use (zarr-python 3's
``zarr.testing.utils``): zarrkit reads and writes NumPy arrays only, so a test marked
:func:`gpu_test` runs only where CuPy is installed."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any, TypeVar

import pytest

__all__ = ["gpu_test", "has_cupy"]

F = TypeVar("F", bound=Callable[..., Any])


def has_cupy() -> bool:
    """Whether CuPy can be imported.

    Returns
    -------
    bool
    """
    return importlib.util.find_spec("cupy") is not None


def gpu_test(func: F) -> F:
    """Mark a test as a GPU test (``pytest.mark.gpu``), skipped where CuPy is missing.

    Parameters
    ----------
    func : callable
        The test.

    Returns
    -------
    callable
        The marked test.
    """
    marked = pytest.mark.skipif(not has_cupy(), reason="needs CuPy (a GPU array library)")(func)
    return pytest.mark.gpu(marked)
