"""Blosc settings, backed by numcodecs: the module zarr-python 2 code knows as ``zarr.blosc``
(``zarrkit.blosc`` is this module, under that name, through :mod:`zarrkit.compat`).

Inside zarrkit's worker threads Blosc runs in its single-threaded "contextual" mode, so many
chunks are (de)compressed at once without oversubscribing the CPU.

Examples
--------
>>> from zarrkit import blosc
>>> 'lz4' in blosc.list_compressors()
True
"""

from __future__ import annotations

import sys
import types
from typing import cast

from numcodecs import blosc as _blosc

__all__ = ["list_compressors", "get_nthreads", "set_nthreads", "use_threads"]  # noqa: F822 (a property of the module class, below)


def list_compressors() -> list[str]:
    """Names of the compression libraries built into Blosc."""
    return list(_blosc.list_compressors())


def get_nthreads() -> int:
    """Number of threads Blosc uses internally (outside contextual mode)."""
    return cast(int, _blosc.get_nthreads())  # numcodecs is untyped


def set_nthreads(nthreads: int) -> int:
    """Set Blosc's internal thread count; returns the previous value."""
    if not isinstance(nthreads, int) or nthreads < 1:
        raise ValueError(f"nthreads must be an int >= 1, got {nthreads!r}")
    return cast(int, _blosc.set_nthreads(nthreads))  # numcodecs is untyped


class _BloscModule(types.ModuleType):
    # ``blosc.use_threads = ...`` must reach numcodecs: None = automatic (contextual mode
    # inside worker threads), True = always Blosc's own threads, False = never.
    @property
    def use_threads(self) -> bool | None:
        return cast("bool | None", _blosc.use_threads)  # numcodecs is untyped

    @use_threads.setter
    def use_threads(self, value: bool | None) -> None:
        if value not in (None, True, False):
            raise ValueError(f"use_threads must be None, True or False, got {value!r}")
        _blosc.use_threads = value


sys.modules[__name__].__class__ = _BloscModule
