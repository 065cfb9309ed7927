"""Run-time configuration: thread counts, defaults for new arrays.

``zarrkit.config`` is the process-wide :class:`Config`.  Override settings for a block of code
with ``with zarrkit.config.set(threads=1): ...``.

Examples
--------
>>> import zarrkit
>>> with zarrkit.config.set(threads=1):
...     zarrkit.config.threads
1
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field, fields

__all__ = ["Config", "config"]


def _default_threads() -> int:
    return max(os.cpu_count() or 1, 1)


@dataclass
class Config:
    """Process-wide settings.

    Attributes
    ----------
    threads : int
        Worker threads for chunk encoding/decoding (CPU work).
    io_threads : int
        Requests kept in flight for stores with high latency (remote stores).
    parallel_min_chunk_bytes : int
        Chunks smaller than this (uncompressed) on low-latency stores are read, and encoded
        for writing, on one thread: for tiny chunks the per-chunk Python work dominates, and
        threads taking turns at the interpreter lock are slower than one thread (measured:
        4096^2 uint8 in 32^2 chunks reads in about 0.8x the time with one thread as with
        two).  Their writes are stored a batch at a time by the other threads while the
        calling thread encodes the next batch (by the calling thread too for stores whose
        writes contend, such as a local directory).  0 always uses ``threads`` for every
        chunk.
    zarr_format : int
        Format of new arrays and groups when a creation function is not told.
    write_empty_chunks : bool
        Default of ``write_empty_chunks`` for new arrays (True, as zarr-python 2).
    """

    threads: int = field(default_factory=_default_threads)
    io_threads: int = 32
    parallel_min_chunk_bytes: int = 16 * 1024
    zarr_format: int = 3
    write_empty_chunks: bool = True
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @contextlib.contextmanager
    def set(self, **changes: object) -> Iterator[Config]:
        """Temporarily change settings; restores the previous values on exit."""
        names = {f.name for f in fields(self) if not f.name.startswith("_")}
        unknown = set(changes) - names
        if unknown:
            raise TypeError(f"unknown config setting(s) {sorted(unknown)}; expected one of {sorted(names)}")
        self._validate(changes)
        with self._lock:
            previous = {k: getattr(self, k) for k in changes}
            for k, v in changes.items():
                setattr(self, k, v)
        try:
            yield self
        finally:
            with self._lock:
                for k, v in previous.items():
                    setattr(self, k, v)

    def update(self, **changes: object) -> None:
        """Change settings permanently."""
        names = {f.name for f in fields(self) if not f.name.startswith("_")}
        unknown = set(changes) - names
        if unknown:
            raise TypeError(f"unknown config setting(s) {sorted(unknown)}; expected one of {sorted(names)}")
        self._validate(changes)
        for k, v in changes.items():
            setattr(self, k, v)

    @staticmethod
    def _validate(changes: dict[str, object]) -> None:
        for name in ("threads", "io_threads"):
            if name in changes:
                v = changes[name]
                if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                    raise ValueError(f"config {name} must be an int >= 1, got {v!r}")
        v = changes.get("parallel_min_chunk_bytes", 0)
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise ValueError(f"config parallel_min_chunk_bytes must be an int >= 0, got {v!r}")
        if "zarr_format" in changes and changes["zarr_format"] not in (2, 3):
            raise ValueError(f"config zarr_format must be 2 or 3, got {changes['zarr_format']!r}")


config = Config()
