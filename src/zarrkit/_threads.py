"""What the calling thread is doing, shared by the engine (``core.pool``) and the codecs.

``worker``: the thread is one of the engine's long-lived pool threads.  ``busy``: the thread is
running per-chunk tasks (a pool thread, or a caller taking its share of a parallel run), so
nested parallel work runs inline and codecs use no threads of their own.
"""

from __future__ import annotations

import threading

state = threading.local()


def is_worker() -> bool:
    """Whether the calling thread is one of the engine's pool threads."""
    return getattr(state, "worker", False)


def is_busy() -> bool:
    """Whether the calling thread is running per-chunk tasks of a parallel run."""
    return getattr(state, "busy", False)
