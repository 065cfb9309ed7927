"""A large read result is backed with pages before the read (in parallel, one system call per
step), with huge pages declined once they come dear; the result is what numpy would give."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import zarrkit
from zarrkit.codecs import buffers
from zarrkit.storage import MemoryStore

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="madvise(2) advice of Linux")
MiB = 1 << 20


def _rss_kib() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def _vma_flags(address: int) -> list[str]:
    """The VmFlags of the mapping holding ``address`` (/proc/self/smaps)."""
    inside = False
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()[0]
            if "-" in head and not head.endswith(":"):
                lo, hi = (int(x, 16) for x in head.split("-"))
                inside = lo <= address < hi
            elif inside and head == "VmFlags:":
                return line.split()[1:]
    raise AssertionError(f"no mapping holds {address:#x}")


@pytest.mark.parametrize("zeroed", [False, True])
@pytest.mark.parametrize("order", ["C", "F"])
def test_new_array_is_the_array_numpy_gives(order, zeroed):
    for shape in [(3, 4), (64, 1024, 1024)]:  # below and above PREFAULT_MIN_BYTES
        a = buffers.new_array(shape, np.dtype("<u2"), order, zeroed=zeroed)
        assert a.shape == shape and a.dtype == np.dtype("<u2")
        assert a.flags.c_contiguous if order == "C" else a.flags.f_contiguous
        assert a.flags.writeable and a.flags.owndata
        if zeroed:
            assert not a.any()
        a[...] = 7
        assert (a == 7).all()


def test_object_results_are_left_to_numpy():
    a = buffers.new_array((3 * MiB,), np.dtype(object))
    assert a.dtype == object and all(v is None for v in a[:10])


@linux
def test_a_large_result_is_backed_before_it_is_written():
    n = 256 * MiB
    before = _rss_kib()
    a = buffers.new_array((n // 2,), np.dtype("<u2"))
    grown = (_rss_kib() - before) * 1024
    assert grown >= 0.9 * n, f"only {grown / MiB:.0f} MiB of a {n // MiB} MiB result backed"
    del a
    before = _rss_kib()
    small = buffers.new_array((MiB // 2,), np.dtype("<u2"))  # below the threshold: lazily
    assert (_rss_kib() - before) * 1024 < MiB
    del small


@linux
def test_a_result_for_a_read_over_the_network_is_left_to_its_faults():
    n = 128 * MiB
    before = _rss_kib()
    a = buffers.new_array((n,), np.dtype("u1"), prefault=False)
    assert (_rss_kib() - before) * 1024 < 8 * MiB
    del a


@linux
def test_huge_pages_are_declined_once_they_come_dear(monkeypatch):
    monkeypatch.setattr(buffers, "HUGE_PAGE_DEAR_SECONDS", 0.0)  # every step counts as dear
    a = buffers.new_array((64 * MiB,), np.dtype("<u2"))
    start = a.ctypes.data
    step = buffers.PREFAULT_STEP_BYTES
    # the first step of each task is timed with numpy's advice; what comes after is declined
    late = start + buffers.PREFAULT_TASK_BYTES + 2 * step
    assert "nh" in _vma_flags(late)
    a[...] = 3
    assert int(a[-1]) == 3 and int(a[(late - start) // 2]) == 3


@linux
def test_reads_of_large_results_match_numpy_with_cheap_and_dear_pages(monkeypatch):
    data = (np.arange(48 * 256 * 256, dtype="<u4") * 2654435761 % 65521).reshape(48, 256, 256)
    z = zarrkit.create_array(MemoryStore(), shape=data.shape, chunks=(16, 64, 64), dtype="<u4")
    z[...] = data
    np.testing.assert_array_equal(z[...], data)
    monkeypatch.setattr(buffers, "HUGE_PAGE_DEAR_SECONDS", 0.0)
    np.testing.assert_array_equal(z[...], data)
    np.testing.assert_array_equal(z[5:45, 3:250, ::3], data[5:45, 3:250, ::3])
