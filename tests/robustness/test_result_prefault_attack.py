"""Large read results (128 MiB and more) are backed with pages before the read: under hostile
inputs, crowds of threads, nested reads, fork, signals and tight memory, the result must still
be what numpy gives, errors must stay typed, and memory the process may not take must not be
taken up front."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import zarrkit
from zarrkit.codecs import buffers
from zarrkit.errors import ChunkDecodeError
from zarrkit.storage import MemoryStore
from zarrkit.storage.pool import is_busy

MiB = 1 << 20
linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux memory accounting")


def _rss() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def _array(shape, chunks, dtype, store=None, **kw):
    return zarrkit.create_array(
        MemoryStore() if store is None else store, shape=shape, chunks=chunks, dtype=dtype, zarr_format=3, **kw
    )


def _same(got: np.ndarray, expected: np.ndarray) -> None:
    np.testing.assert_array_equal(got, expected)
    assert got.dtype.newbyteorder("=") == expected.dtype.newbyteorder("=")
    assert got.shape == expected.shape


# -- results are what numpy gives -----------------------------------------------------------


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("dtype", ["<u2", ">u2", ">f8"])
def test_large_results_in_either_order_match_numpy(order, dtype):
    # byte counts that straddle 2 MiB boundaries, >= buffers.PREFAULT_MIN_BYTES
    shape = (1031, 1031, 67) if np.dtype(dtype).itemsize <= 2 else (259, 1031, 67)
    data = (np.arange(np.prod(shape), dtype=np.int64) % 251).astype(dtype).reshape(shape)
    z = _array(shape, (256, 256, 32), dtype, config={"order": order})  # (v3: the order reads return)
    z[...] = data
    got = z[...]
    assert got.nbytes >= buffers.PREFAULT_MIN_BYTES
    assert got.flags.c_contiguous if order == "C" else got.flags.f_contiguous
    _same(got, data)
    _same(z[1:, ::1, 3:], data[1:, :, 3:])
    _same(z[::2, 5:, :], data[::2, 5:, :])
    _same(z.oindex[:, :, [0, 5, 7, 32]], data[:, :, [0, 5, 7, 32]])


def test_unwritten_and_partly_written_results_hold_the_fill_value():
    z = _array((2048, 4096), (1000, 1000), "<f8")  # no fill value: zeros
    _same(z[...], np.zeros((2048, 4096), "<f8"))
    z = _array((2048, 4096), (1000, 1000), "<f8", fill_value=np.nan)
    assert np.isnan(z[...]).all()
    z = _array((2048, 4096), (1000, 1000), "<i8", fill_value=-3)
    z[100:200, 5:4000] = 9
    expected = np.full((2048, 4096), -3, "<i8")
    expected[100:200, 5:4000] = 9
    _same(z[...], expected)


def test_structured_results_and_field_reads_match_numpy():
    dt = np.dtype([("a", "<i4"), ("b", ">f8"), ("c", "u1")])
    data = np.zeros((1_500_000,), dt)
    data["a"] = np.arange(data.size)
    data["b"] = np.arange(data.size) * 0.5
    data["c"] = 7
    z = _array(data.shape, (100_000,), dt)
    z[...] = data
    got = z[...]
    assert got.nbytes >= 16 * MiB
    for name in dt.names:
        np.testing.assert_array_equal(got[name], data[name])
    np.testing.assert_array_equal(z["b"], data["b"])


def test_zero_size_results():
    for shape, chunks in [((0, 4096), (10, 1000)), ((1 << 23, 0), (4096, 1))]:
        got = _array(shape, chunks, "<f8")[...]
        assert got.shape == shape and got.dtype == np.dtype("<f8")


def test_reads_into_a_given_out_and_of_coordinates_and_masks():
    rng = np.random.default_rng(1)
    data = rng.integers(0, 2**32, size=(2048, 4096), dtype="<u4")
    z = _array(data.shape, (512, 512), "<u4")
    z[...] = data
    out = np.full(data.shape, 5, "<u4")
    assert z.get_basic_selection(..., out=out) is out
    _same(out, data)
    i0 = rng.integers(0, 2048, size=1_000_000)
    i1 = rng.integers(0, 4096, size=1_000_000)
    _same(z.vindex[i0, i1], data[i0, i1])
    mask = rng.random(data.shape) < 0.7
    _same(z.vindex[mask], data[mask])
    _same(z.oindex[np.arange(2047, -1, -1), :], data[::-1])


# -- crowds, nesting, fork, signals ----------------------------------------------------------


@pytest.mark.parametrize("threads", [1, 4])
def test_a_crowd_of_threads_reads_large_results_from_shared_and_separate_arrays(tmp_path, threads):
    rng = np.random.default_rng(2)
    arrays = []
    for i, store in enumerate([MemoryStore(), MemoryStore(), str(tmp_path / "d")]):
        data = rng.integers(0, 2**31, size=(4096, 8192), dtype="<i4")  # 128 MiB: backed first
        z = _array(data.shape, (256, 1024), "<i4", store=store, config={"order": "F"} if i == 1 else None)
        z[...] = data
        arrays.append((z, data))

    def job(k: int) -> bool:
        z, data = arrays[k % 3]
        return all(
            np.array_equal(z[...], data) if j % 2 else np.array_equal(z[3:, 5:], data[3:, 5:]) for j in range(2)
        )

    with zarrkit.config.set(threads=threads), ThreadPoolExecutor(12) as ex:
        futures = [ex.submit(job, k) for k in range(12)]
        assert [f.result(timeout=60) for f in futures] == [True] * 12


class _NestingStore(MemoryStore):
    """Reads another large array inside every chunk fetch, once on the fetching thread and once
    on a thread of its own that the fetch joins (as a task scheduler nested in a read)."""

    inner = None
    inner_data = None

    def get_upto(self, key, limit):
        if key.startswith("c/"):
            assert np.array_equal(self.inner[...], self.inner_data)
            box: list[bool] = []
            t = threading.Thread(target=lambda: box.append(np.array_equal(self.inner[::2], self.inner_data[::2])))
            t.start()
            t.join(30)
            assert box == [True]
        return super().get_upto(key, limit)


@pytest.mark.parametrize("threads", [1, 4])
def test_large_reads_nested_inside_a_read_finish_and_match(threads):
    rng = np.random.default_rng(3)
    inner_data = rng.integers(0, 2**31, size=(1024, 4096), dtype="<i4")
    inner = _array(inner_data.shape, (256, 1024), "<i4")
    inner[...] = inner_data
    store = _NestingStore()
    store.inner, store.inner_data = inner, inner_data
    data = rng.integers(0, 2**31, size=(2048, 2048), dtype="<i4")
    with zarrkit.config.set(threads=threads):
        z = _array(data.shape, (1024, 1024), "<i4", store=store)
        z[...] = data
        result: list[bool] = []
        t = threading.Thread(target=lambda: result.append(np.array_equal(z[...], data)))
        t.start()
        t.join(60)
        assert not t.is_alive(), "nested read hangs"
        assert result == [True]


@linux
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_a_forked_child_reads_large_results_even_while_the_parent_reads():
    rng = np.random.default_rng(4)
    data = rng.integers(0, 2**31, size=(1024, 4096), dtype="<i4")
    z = _array(data.shape, (256, 1024), "<i4")
    z[...] = data
    assert np.array_equal(z[...], data)  # the pool's threads exist
    stop = threading.Event()

    def reader() -> None:
        while not stop.is_set():
            z[...]

    bg = threading.Thread(target=reader)
    bg.start()
    try:
        for i in range(4):
            time.sleep(0.02 * i)
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child
                try:
                    ok = np.array_equal(z[...], data) and np.array_equal(z[::3, 7:], data[::3, 7:])
                    os._exit(0 if ok else 3)
                except BaseException:  # noqa: BLE001 - any failure of the child is its exit status
                    os._exit(4)
            deadline = time.monotonic() + 20
            while True:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    assert os.waitstatus_to_exitcode(status) == 0
                    break
                if time.monotonic() > deadline:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                    pytest.fail("a read in a forked child hangs")
                time.sleep(0.01)
    finally:
        stop.set()
        bg.join()


class _Interrupted(Exception):
    pass


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="interval timers")
def test_exceptions_raised_at_random_points_of_large_reads_leave_reads_working():
    rng = np.random.default_rng(5)
    data = rng.integers(0, 2**31, size=(1024, 4096), dtype="<i4")
    z = _array(data.shape, (256, 1024), "<i4")
    z[...] = data

    def interrupt(*_):
        raise _Interrupted

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        end = time.monotonic() + 0.6
        while time.monotonic() < end:
            signal.setitimer(signal.ITIMER_REAL, float(rng.uniform(0.0005, 0.02)))
            try:
                got = z[...]
                signal.setitimer(signal.ITIMER_REAL, 0)
                assert np.array_equal(got, data)
            except (_Interrupted, ChunkDecodeError):
                pass
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            assert not is_busy()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert np.array_equal(z[...], data)


# -- errors and memory ---------------------------------------------------------------------


def test_a_large_read_whose_first_chunk_is_corrupt_raises_the_typed_error():
    store = MemoryStore()
    z = _array((8192, 8192), (1024, 1024), "<u4", store=store, fill_value=0)
    z[:1024, :1024] = 1
    store.set("c/0/0", b"\x00not a chunk" * 50)
    for threads in (1, 4):
        with zarrkit.config.set(threads=threads), pytest.raises(ChunkDecodeError):
            z[...]


class _FirstFetchProbe(MemoryStore):
    """Notes the process's resident memory when the first chunk is fetched, whichever way
    and by whichever thread."""

    rss_at_first_chunk = None
    _noting = threading.Lock()

    def _note(self, key):
        if key.startswith("c/"):
            with self._noting:
                if self.rss_at_first_chunk is None:
                    self.rss_at_first_chunk = _rss()

    def get_upto(self, key, limit):
        self._note(key)
        return super().get_upto(key, limit)

    def get_transient(self, key, byte_range=None):
        self._note(key)
        return super().get_transient(key, byte_range)

    def get_many(self, keys):
        keys = list(keys)
        for key in keys[:1]:
            self._note(key)
        return super().get_many(keys)


class _FarFirstFetchProbe(_FirstFetchProbe):
    high_latency = True


@linux
@pytest.mark.parametrize("store_type", [_FirstFetchProbe, _FarFirstFetchProbe])
def test_only_results_of_nearby_stores_are_backed_before_the_first_fetch(store_type):
    store = store_type()
    z = _array((8192, 8192), (2048, 2048), "<u4", store=store, fill_value=0)
    z[:2048, :2048] = 1
    store.rss_at_first_chunk = None
    before = _rss()
    got = z[...]
    grown = store.rss_at_first_chunk - before
    assert int(got.sum()) == 2048 * 2048
    if store_type.high_latency:
        assert grown < 32 * MiB, f"{grown / MiB:.0f} MiB backed before a far store's first fetch"
    else:
        assert grown >= 0.9 * got.nbytes


_PROBE = """
import json, sys
import numpy as np, zarrkit
from zarrkit.storage import MemoryStore

def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024

class Probe(MemoryStore):
    first = None
    def get_upto(self, key, limit):
        if self.first is None and key.startswith("c/"):
            self.first = rss()
        return super().get_upto(key, limit)

rows = int(sys.argv[1])
store = Probe()
z = zarrkit.create_array(store, shape=(rows, 8192), chunks=(2048, 2048), dtype="<u4", zarr_format=3, fill_value=0)
z[:2048, :2048] = 1
store.first = None
before = rss()
got = z[...]
print(json.dumps({"grown": store.first - before, "nbytes": got.nbytes, "sum": int(got.sum())}))
"""


def _with_available_memory(tmp_path: Path, available_kib: int, rows: int) -> dict:
    """Run the probe with /proc/meminfo claiming ``available_kib`` KiB available (a private
    mount namespace: needs root and unshare(1))."""
    if not sys.platform.startswith("linux") or os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("needs root and unshare(1) to show a process other available memory")
    with open("/proc/meminfo") as f:
        lines = [f"MemAvailable:   {available_kib} kB\n" if ln.startswith("MemAvailable:") else ln for ln in f]
    fake = tmp_path / "meminfo"
    fake.write_text("".join(lines))
    script = tmp_path / "probe.py"
    script.write_text(_PROBE)
    cmd = (
        f"mount --bind {fake} /proc/meminfo && grep -q 'MemAvailable: *{available_kib} kB' /proc/meminfo "
        f"|| exit 77; exec {sys.executable} {script} {rows}"
    )
    run = subprocess.run(
        ["unshare", "-m", "--propagation", "private", "sh", "-c", cmd], capture_output=True, text=True, timeout=60,
        check=False,
    )
    if run.returncode == 77 or "unshare failed" in run.stderr or "Operation not permitted" in run.stderr:
        pytest.skip(f"cannot fake /proc/meminfo here: {run.stderr.strip()[:200]}")
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_a_result_larger_than_available_memory_is_not_backed_up_front(tmp_path):
    out = _with_available_memory(tmp_path, 200 * 1024, rows=8192)  # a 256 MiB result, 200 MiB free
    assert out["sum"] == 2048 * 2048
    assert out["grown"] < 64 * MiB, f"{out['grown'] / MiB:.0f} MiB of {out['nbytes'] / MiB:.0f} backed up front"


def test_a_result_just_under_available_memory_is_not_backed_up_front(tmp_path):
    # a 192 MiB result with 200 MiB free: backing it first leaves the read itself (its
    # chunks, its decoding buffers) and everything else on the machine 8 MiB
    out = _with_available_memory(tmp_path, 200 * 1024, rows=6144)
    assert out["sum"] == 2048 * 2048
    assert out["grown"] < 0.5 * out["nbytes"], (
        f"{out['grown'] / MiB:.0f} MiB of a {out['nbytes'] / MiB:.0f} MiB result backed up front "
        "with 200 MiB available"
    )


_CORRUPT_FIRST = """
import numpy as np, zarrkit
from zarrkit.codecs import buffers
from zarrkit.errors import ChunkDecodeError
from zarrkit.storage import MemoryStore
store = MemoryStore()
z = zarrkit.create_array(store, shape=(16384, 8192), chunks=(1024, 1024), dtype="<u4", zarr_format=3, fill_value=0)
z[:1024, :1024] = 1
store.set("c/0/0", b"\\x00not a chunk" * 50)
try:
    z[...]
except ChunkDecodeError:
    print("typed error")
"""


def _memory_cgroup(limit: int) -> tuple[Path, Path]:
    """A new memory cgroup of ``limit`` bytes (v2, else v1): its directory and its procs file."""
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        pytest.skip("needs root to make a memory cgroup")
    name = f"zarrkit-test-{uuid.uuid4().hex[:8]}"
    v2 = Path("/sys/fs/cgroup")
    controllers = v2 / "cgroup.controllers"
    try:
        if controllers.exists() and "memory" in controllers.read_text().split():
            (v2 / "cgroup.subtree_control").write_text("+memory")
            d = v2 / name
            d.mkdir()
            (d / "memory.max").write_text(str(limit))
            (d / "memory.swap.max").exists() and (d / "memory.swap.max").write_text("0")
            return d, d / "cgroup.procs"
        v1 = Path("/sys/fs/cgroup/memory")
        if (v1 / "memory.limit_in_bytes").exists():
            d = v1 / name
            d.mkdir()
            (d / "memory.limit_in_bytes").write_text(str(limit))
            return d, d / "cgroup.procs"
    except OSError as exc:
        pytest.skip(f"cannot make a memory cgroup: {exc}")
    pytest.skip("no memory cgroup controller")


@linux
def test_a_corrupt_read_in_a_memory_limited_container_raises_instead_of_being_killed(tmp_path):
    """A container's memory limit is not MemAvailable: a 512 MiB result in a 256 MiB cgroup
    whose first chunk is corrupt must raise ChunkDecodeError, as it does when its pages are
    left to the read, not be killed by the OOM killer while its pages are backed up front."""
    d, procs = _memory_cgroup(256 * MiB)
    script = tmp_path / "corrupt.py"
    script.write_text(_CORRUPT_FIRST)
    try:
        run = subprocess.run(
            ["sh", "-c", f'echo $$ > {procs} && exec {sys.executable} {script}'],
            capture_output=True, text=True, timeout=60, check=False,
        )
    finally:
        for _ in range(50):
            try:
                d.rmdir()
                break
            except OSError:
                time.sleep(0.1)
    assert run.returncode == 0 and "typed error" in run.stdout, (
        f"exit {run.returncode} ({'killed by SIGKILL: the OOM killer' if run.returncode == -9 else run.stderr[-300:]})"
    )
