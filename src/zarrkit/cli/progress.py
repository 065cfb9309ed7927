"""The progress bar of the long commands (``cp``, ``verify``, ``rm``): bytes and bytes per
second over the whole hierarchy, labelled with what the command works on."""

from __future__ import annotations

import argparse
import sys
import threading
from typing import Any

from tqdm import tqdm


def add_progress_options(p: argparse.ArgumentParser) -> None:
    """``--progress`` and ``-q``/``--quiet`` (``--no-progress`` is the same as ``-q``)."""
    bar = p.add_mutually_exclusive_group()
    bar.add_argument("--progress", dest="progress", action="store_true", default=None,
                     help="show a progress bar in bytes (default: when stderr is a terminal)")
    bar.add_argument("-q", "--quiet", "--no-progress", dest="progress", action="store_false",
                     help="no progress bar (the summary line stays)")


def wanted(args: argparse.Namespace) -> bool:
    """Whether the command shows its bar: asked for, or by default when stderr is a terminal."""
    progress = getattr(args, "progress", None)
    return bool(progress) or (progress is None and sys.stderr.isatty())


#: tqdm's settings of a bar in bytes: binary units (the rate in kiB/s, MiB/s, GiB/s; the
#: counts in powers of 1024), as the summary lines give sizes (``15.3M``: 15.3 MiB)
BYTE_UNITS: dict[str, Any] = {"unit": "iB", "unit_scale": True, "unit_divisor": 1024}


class ByteProgress:
    """A bar over ``total`` bytes (:data:`BYTE_UNITS`: counts in powers of 1024, the rate in MiB/s) with
    one fixed label; :meth:`show` puts what is being worked on after the counts.  Bytes not
    processed by this run (already copied, missing chunks) advance it through :meth:`skip`,
    outside the rate.  Safe to update from several threads."""

    def __init__(self, total: int, enabled: bool, desc: str, file: Any = None):
        self._lock = threading.Lock()
        self.bar = None
        if enabled:
            self.bar = tqdm(total=total, **BYTE_UNITS, desc=desc, file=file or sys.stderr,
                            dynamic_ncols=True, leave=False)

    def show(self, text: str) -> None:
        if self.bar is not None:
            with self._lock:
                self.bar.set_postfix_str(text, refresh=False)

    def update(self, nbytes: int) -> None:
        if self.bar is not None and nbytes:
            with self._lock:
                self.bar.update(nbytes)

    def skip(self, nbytes: int) -> None:
        """Advance by ``nbytes`` this run did not process: tqdm's ``initial``, so that its rate
        (and time left) is that of the bytes processed."""
        if self.bar is not None and nbytes:
            with self._lock:
                self.bar.n += nbytes
                self.bar.last_print_n += nbytes  # not a step of the smoothed rate either
                self.bar.initial += nbytes

    def close(self) -> None:
        """Draw the last state (the counts may have moved since the last frame), then clear."""
        if self.bar is not None:
            with self._lock:
                if not self.bar.disable:
                    self.bar.refresh()
                self.bar.close()
