"""Buffers: new result arrays, per-thread scratch buffers, fill-value chunks, and the byte span
of a selection inside a chunk."""

from __future__ import annotations

import ctypes
import errno
import functools
import math
import mmap
import os
import sys
import threading
import time
from typing import Any, Literal

import numpy as np

from ..config import config
from ..storage.pool import is_worker, run_tasks
from .blosc import forget as forget_address
from .blosc import remember as remember_address

__all__ = ["new_array", "scratch", "filled", "is_all_fill", "is_view", "selection_span", "held_at", "copy_runs", "copy_by_runs", "runs_pay", "place"]

#: runs along the last axis up to this many bytes are copied as single items (see copy_runs):
#: 64-byte runs took 16 µs per 32^3 uint16 chunk instead of 27; from 128 bytes on the gain
#: was within noise, and uncompressed 64^3 uint16 chunks read up to 10% slower
RUN_COPY_MAX_BYTES = 64
#: ... when there are at least this many of them: viewing both as runs costs about 2 µs,
#: more than it saves on fewer (a 32^3 uint16 chunk's 1,024 runs: 4.7 µs against 6.5; an 8^3
#: float32 part's 64: 3.9 µs against 0.8, and 16^3 uint16's 256: 3.0 against 1.6)
RUN_COPY_MIN_RUNS = 1024

_scratch = threading.local()

#: results of at least this many bytes are backed with pages before a read (see new_array);
#: below, where pages come cheap, a read's own faults in its threads' copies cost less than
#: backing the pages first (32 MiB: 1 ms more on 2 threads)
PREFAULT_MIN_BYTES = 128 << 20
#: the most of a result one task backs, and the step in which it times huge pages
PREFAULT_TASK_BYTES = 64 << 20
PREFAULT_STEP_BYTES = 16 << 20
#: a huge page (2 MiB) that takes longer than this to back costs more than the 512 small
#: pages it replaces: measured, 4 ms where a virtual machine's host must back memory it took
#: back, 0.2 to 0.6 ms otherwise (two threads at once); 512 small pages backed in one call,
#: 0.4 to 0.8 ms either way, and more TLB misses in the read that follows
HUGE_PAGE_DEAR_SECONDS = 2e-3
_HUGE = 2 << 20
#: madvise(2) advice (Linux): back a range as if written to (5.14), decline huge pages
_POPULATE_WRITE = 23
_NO_HUGE_PAGES = getattr(mmap, "MADV_NOHUGEPAGE", 15)


def _madvise() -> Any:
    """libc's madvise(2) on Linux, else None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = ctypes.CDLL(None, use_errno=True).madvise
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    fn.restype = ctypes.c_int
    return fn


def _read_number(path: str) -> int | None:
    try:
        with open(path, "rb") as f:
            text = f.read().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None  # ("max": no limit)


@functools.lru_cache(maxsize=1)
def _cgroup_limits() -> list[tuple[int, str]]:
    """The memory limits of this process's cgroups and their ancestors (v1 and v2), each with
    the file of its usage (limits looked up once)."""
    found: list[tuple[int, str]] = []
    try:
        with open("/proc/self/cgroup") as f:
            lines = f.read().splitlines()
    except OSError:
        return found
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controllers == "":
            v2 = os.path.exists("/sys/fs/cgroup/cgroup.controllers")
            root, names = ("/sys/fs/cgroup" if v2 else "/sys/fs/cgroup/unified"), ("memory.max", "memory.current")
        elif "memory" in controllers.split(","):
            root, names = "/sys/fs/cgroup/memory", ("memory.limit_in_bytes", "memory.usage_in_bytes")
        else:
            continue
        directory = root + path.rstrip("/")
        while directory.startswith(root):
            limit = _read_number(f"{directory}/{names[0]}")
            if limit is not None and limit < 1 << 60:  # (v1 says "none" with a huge number)
                found.append((limit, f"{directory}/{names[1]}"))
            if directory == root:
                break
            directory = os.path.dirname(directory)
    return found


def _free_bytes() -> int:
    """The memory this process can take without swapping or meeting a limit of its cgroups:
    ``MemAvailable``, or less where a cgroup (or an ancestor) leaves less; 0 when unknown."""
    free = 0
    try:
        with open("/proc/meminfo", "rb") as f:
            for line in f:
                if line.startswith(b"MemAvailable:"):
                    free = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        return 0
    for limit, usage in _cgroup_limits():
        free = min(free, max(limit - (_read_number(usage) or 0), 0))
    return free


#: libc's madvise, while populating ranges works (None once the kernel refused it)
_madvise_fn = [_madvise()]


def new_array(
    shape: tuple[int, ...], dtype: np.dtype, order: Literal["C", "F"] = "C", zeroed: bool = False, prefault: bool = True
) -> np.ndarray:
    """A new result array, its memory backed with pages up front, in parallel.

    A read writes every byte of its result; each page of it the read touches first costs a
    page fault on the thread that touches it, in the middle of its copies.  Backed here in one
    system call per step instead (``MADV_POPULATE_WRITE``), the same pages cost a fraction of
    that.  numpy asks for huge pages for large arrays; where the machine hands out memory it
    has not backed yet (a virtual machine whose host took freed memory back), a huge page
    costs several times what its 512 small pages do.  Each step is timed, and once huge pages
    came dear the rest of the result declines them.  Not with ``prefault=False``: a read
    waiting on the network faults its pages in while it waits.
    """
    a = (np.zeros if zeroed else np.empty)(shape, dtype=dtype, order=order)
    madvise = _madvise_fn[0]
    if not prefault or madvise is None or a.nbytes < PREFAULT_MIN_BYTES or dtype.hasobject:
        return a
    if 2 * a.nbytes > _free_bytes():
        # a result taking more than half the memory left (the machine's, or its cgroup's) is
        # left to the read: one that fails before it wrote much has not taken it all
        return a
    start = a.ctypes.data
    first = -(-start // _HUGE) * _HUGE
    end = (start + a.nbytes) // _HUGE * _HUGE
    dear = [False]

    def back(lo: int, hi: int) -> bool:
        """Back [lo, hi) a step at a time; False when the kernel refused."""
        while lo < hi:
            if dear[0]:
                madvise(lo, hi - lo, _NO_HUGE_PAGES)
                madvise(lo, hi - lo, _POPULATE_WRITE)
                return True
            step = min(lo + PREFAULT_STEP_BYTES, hi)
            t0 = time.perf_counter()
            if madvise(lo, step - lo, _POPULATE_WRITE) != 0:
                if ctypes.get_errno() == errno.EINVAL:  # a kernel before 5.14
                    _madvise_fn[0] = None
                return False  # (out of memory: the read's own faults say so)
            if time.perf_counter() - t0 > HUGE_PAGE_DEAR_SECONDS * (step - lo) / _HUGE:
                dear[0] = True
            lo = step
        return True

    # the first step on this thread, the rest in tasks of up to PREFAULT_TASK_BYTES, at least
    # one per thread
    head = min(first + PREFAULT_STEP_BYTES, end)
    if not back(first, head):
        return a
    task = min(PREFAULT_TASK_BYTES, max(_HUGE, -(-(end - head) // (config.threads * _HUGE)) * _HUGE))
    run_tasks(lambda lo: back(lo, min(lo + task, end)), range(head, end, task))
    return a


def scratch(
    shape: tuple[int, ...], dtype: np.dtype, order: Literal["C", "F"] = "C", before_allocating: Any = None, *args: Any
) -> np.ndarray:
    """A per-thread reusable buffer for one decoded chunk.

    Decoding a chunk that is not contiguous in the output into a fresh array would map and
    fault in new pages for every chunk; a worker reuses one buffer per chunk layout instead.
    The buffer is only valid until the same thread asks for it again.  ``before_allocating(*args)``
    is called before a new buffer is allocated (a check that may raise).
    """
    bufs = getattr(_scratch, "bufs", None)
    if bufs is None:
        bufs = _scratch.bufs = {}
    key = (shape, dtype, order)
    buf = bufs.get(key)
    if buf is None:
        if before_allocating is not None:
            before_allocating(*args)
        if len(bufs) >= 4:
            for old in bufs.values():
                forget_address(old)
            bufs.clear()
        buf = bufs[key] = np.empty(shape, dtype=dtype, order=order)
        if is_worker() or threading.current_thread() is threading.main_thread():
            # pool threads live as long as the pool, the main thread as long as the process:
            # their buffers may be noted (another thread's would outlive it in the notes)
            remember_address(buf)
    return buf


def runs_pay(shape: tuple[int, ...], itemsize: int) -> bool:
    """Whether :func:`copy_runs` copies an array of ``shape`` (of items of ``itemsize``
    bytes, held contiguously along the last axis) by runs: enough short ones.  Small chunks
    fail the first tests, so callers copying many of them ask once, not per chunk."""
    return (
        len(shape) >= 2 and 0 < shape[-1] * itemsize <= RUN_COPY_MAX_BYTES
        and math.prod(shape) >= RUN_COPY_MIN_RUNS * shape[-1]
    )


def copy_runs(dst: np.ndarray, src: np.ndarray) -> None:
    """``dst[...] = src`` for arrays of one shape and data type: when both hold their last
    axis contiguously in short runs (a chunk's rows placed in a larger array), each run is
    copied as one item of that many bytes.  numpy's copy loop pays a step per innermost run;
    for the 64-byte rows of a 32^3 uint16 chunk into a large array that step took 40% of the
    copy, whose time a chunk-bound read spends mostly there."""
    if runs_pay(src.shape, src.itemsize):
        copy_by_runs(dst, src)
    else:
        dst[...] = src


def copy_by_runs(dst: np.ndarray, src: np.ndarray) -> None:
    """:func:`copy_runs` where ``runs_pay`` already holds for ``src``."""
    shape = src.shape
    if (
        dst.shape == shape and src.dtype == dst.dtype and not src.dtype.hasobject
        and src.strides[-1] == src.itemsize and dst.strides[-1] == dst.itemsize
    ):
        run = np.dtype((np.void, shape[-1] * src.itemsize))
        dst.view(run)[...] = src.view(run)
        return
    dst[...] = src


def place(out: np.ndarray, selection: Any, part: Any) -> None:
    """``out[selection] = part``, by runs (see :func:`copy_runs`) where :func:`runs_pay`
    holds for ``part`` and the selection is basic slices and ints of an array with dimensions
    (its result a view of ``out``); plainly otherwise."""
    if (
        type(part) is np.ndarray and runs_pay(part.shape, part.itemsize)
        and type(selection) is tuple and all(type(s) is slice or type(s) is int for s in selection)
    ):
        copy_by_runs(out[selection], part)
    else:
        out[selection] = part


def held_at(data: Any) -> tuple[int, int]:
    """Where the bytes of ``data`` are: the id of the object holding them (a view's base, or
    ``data`` itself) and their address.  Two values whose holder is the same, the second
    starting where the first ends, are stored one after the other (the inner chunks of a
    shard read in one request)."""
    holder = data.obj if type(data) is memoryview else data
    return id(holder), np.frombuffer(data, dtype=np.uint8).__array_interface__["data"][0]


def filled(shape: tuple[int, ...], dtype: np.dtype, fill_value: Any, order: Literal["C", "F"] = "C") -> np.ndarray:
    """A new writable array holding the fill value (zeros when there is none)."""
    if fill_value is None:
        if dtype.kind == "O":
            return np.empty(shape, dtype=dtype, order=order)
        return np.zeros(shape, dtype=dtype, order=order)
    if dtype.kind == "O":
        out = np.empty(shape, dtype=dtype, order=order)
        out.fill(fill_value)
        return out
    return np.full(shape, fill_value, dtype=dtype, order=order)


def is_all_fill(chunk: np.ndarray, fill_value: Any) -> bool:
    """Whether every element of ``chunk`` equals the fill value (NaN equals NaN; a zero equals
    a zero fill value only with the same sign)."""
    if fill_value is None:
        if chunk.dtype.kind == "O":
            return all(v is None for v in chunk.flat)
        fill_value = np.zeros((), dtype=chunk.dtype)[()]
    if chunk.dtype.kind in "fc":
        fv = np.asarray(fill_value, dtype=chunk.dtype)
        if chunk.size and fv.ndim == 0 and not np.isnan(fv):
            # most chunks of real data differ from the fill value at once: look at two
            # elements before comparing all of them
            first, last = chunk.flat[0], chunk.flat[-1]
            if first != fv or last != fv:
                return False
        if np.isnan(fv).any():
            same = (chunk == fv) | (np.isnan(chunk) & np.isnan(fv))
            return bool(np.all(same))
        if not np.all(chunk == fv):
            return False
        if fv.ndim == 0 and fv == 0:  # -0.0 == 0.0, yet it is another value: the sign is stored
            parts = ((chunk.real, fv.real), (chunk.imag, fv.imag)) if chunk.dtype.kind == "c" else ((chunk, fv),)
            return all(bool(np.all(np.signbit(c) == np.signbit(f))) for c, f in parts)
        return True
    if chunk.dtype.kind == "V" or chunk.dtype.names:
        fv = np.asarray(fill_value, dtype=chunk.dtype)
        return np.ascontiguousarray(chunk).tobytes() == fv.tobytes() * chunk.size
    try:
        if chunk.dtype.kind in "biu" and chunk.size and (chunk.flat[0] != fill_value or chunk.flat[-1] != fill_value):
            return False  # as for floats: real data usually differs at once
        return bool(np.all(chunk == fill_value))
    except (TypeError, ValueError):
        return False


def is_view(target: np.ndarray, out: np.ndarray) -> bool:
    """Whether ``target`` (``out[selection]``) is a view of ``out``, not a fancy-index copy."""
    base = target.base
    return base is not None and (base is out or (out.base is not None and base is out.base))


def selection_span(selection: tuple[Any, ...], strides: tuple[int, ...], itemsize: int) -> Any:
    """``(lo, hi)``: the bytes of a C- or F-contiguous buffer (``strides``) that ``selection``
    (ints, positive-step slices and integer arrays, one per dimension, as chunk selections are)
    reads lie in ``buf[lo:hi]``; None for anything else or an empty selection."""
    lo = hi = 0
    if len(selection) != len(strides):
        return None
    for s, stride in zip(selection, strides):
        if isinstance(s, slice):
            start, step = s.start or 0, s.step or 1
            if s.stop is None or step < 0 or s.stop <= start:
                return None
            first, last = start, start + (s.stop - 1 - start) // step * step
        elif isinstance(s, np.ndarray):
            if s.size == 0 or s.dtype.kind not in "iu":
                return None
            first, last = int(s.min()), int(s.max())
        elif isinstance(s, (int, np.integer)):
            first = last = int(s)
        else:
            return None
        lo += first * stride
        hi += last * stride
    return lo, hi + itemsize
