"""Whether a file's pages are in the page cache, asked with ``mincore`` on a mapping of it:
unlike a read (even a ``preadv2(RWF_NOWAIT)`` one, which starts the kernel's read-ahead when it
finds nothing), asking reads nothing into the cache."""

from __future__ import annotations

import ctypes
import mmap
import os

import numpy as np

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_ubyte)]
_PAGE = mmap.PAGESIZE


def resident_pages(path) -> tuple[int, int]:
    """(pages of ``path`` in the page cache, pages of ``path``)."""
    size = os.path.getsize(path)
    pages = -(-size // _PAGE)
    with open(path, "rb") as f, mmap.mmap(f.fileno(), size, prot=mmap.PROT_READ) as m:
        address = _address(m)
        vec = (ctypes.c_ubyte * pages)()
        if _libc.mincore(address, size, vec) != 0:
            raise OSError(ctypes.get_errno(), "mincore")
        return sum(v & 1 for v in vec), pages


def _address(m: mmap.mmap) -> int:
    """The address of a read-only mapping (numpy exports its buffer without touching it)."""
    return int(np.frombuffer(m, dtype=np.uint8).__array_interface__["data"][0])


def cached(path) -> bool:
    """Whether every page of ``path`` is in the page cache."""
    have, pages = resident_pages(path)
    return have == pages


def uncached(path) -> bool:
    """Whether no page of ``path`` is in the page cache."""
    return resident_pages(path)[0] == 0
