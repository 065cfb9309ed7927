"""Warnings that point at the user's line, not at the zarrkit line that noticed the problem.

Every warning of the package goes through :func:`warn`: the warning is attributed to the first
frame outside the package (what ``skip_file_prefixes`` does on Python 3.12, computed here as a
stack level on 3.11), so ``-W error``, filters by module and the printed location all name the
code that called zarrkit.  Work that runs on the pool's threads has no user frame on its own
stack: :func:`user_call` records the calling frame in a context variable that the pool copies
into its threads, and a warning raised there is attributed to that call.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import warnings
from collections.abc import Iterator
from contextvars import ContextVar
from types import FrameType

__all__ = ["user_call", "warn"]

#: the directory of the package, with a trailing separator (its frames are skipped)
PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep

#: ``warnings.warn`` skips the package's frames itself (Python 3.12 and later)
HAS_SKIP_FILE_PREFIXES = sys.version_info >= (3, 12)

#: the thread that entered zarrkit and its frame there, for warnings raised on pool threads
_entry: ContextVar[tuple[int, FrameType] | None] = ContextVar("zarrkit_entry", default=None)


def _inside(frame: FrameType) -> bool:
    return frame.f_code.co_filename.startswith(PACKAGE_DIR)


@contextlib.contextmanager
def user_call() -> Iterator[None]:
    """Within this block, a warning raised on another thread (the pool's, which runs its tasks
    in a copy of this context) is attributed to the first frame outside zarrkit above the
    frame that opens the block."""
    if _entry.get() is not None:  # an outer entry already recorded the user's call
        yield
        return
    token = _entry.set((threading.get_ident(), sys._getframe(2)))  # 0: here, 1: contextlib's __enter__
    try:
        yield
    finally:
        _entry.reset(token)


def _outside(frame: FrameType | None) -> FrameType | None:
    while frame is not None and _inside(frame):
        frame = frame.f_back
    return frame


def warn(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn(message, category)``, attributed to the first caller outside zarrkit."""
    entry = _entry.get()
    if entry is not None and entry[0] != threading.get_ident():
        site = _outside(entry[1])
        if site is not None:
            module_globals = site.f_globals
            registry = module_globals.setdefault("__warningregistry__", {})
            warnings.warn_explicit(
                message, category, site.f_code.co_filename, site.f_lineno,
                module=module_globals.get("__name__"), registry=registry,
            )
            return
    if HAS_SKIP_FILE_PREFIXES:
        warnings.warn(message, category, stacklevel=2, skip_file_prefixes=(PACKAGE_DIR,))
        return
    level, frame = 2, sys._getframe(1)  # stacklevel 2: the caller of this function
    while frame is not None and _inside(frame):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)
