"""Reads of many tiny chunks (read a batch at a time on the calling thread, threads of the
process taking turns a batch at a time) under attack: every selection matches numpy; a read
that fails inside its turn (damaged, oversized or unreadable chunk) lets the other threads'
reads go on; reads from pool threads, event loops and dask's threads finish; readers racing
writers (threads, and processes) see each chunk old or new, never torn; and a process forked
while one of its threads reads tiny chunks reads them too."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
import warnings

import numcodecs
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numcodecs.abc import Codec

import zarrkit
import zarrkit.api.asynchronous as zasync
from zarrkit.errors import ChunkDecodeError, InvalidPathError
from zarrkit.storage import DirectoryStore, MemoryStore

SHAPE, CHUNKS = (96, 80), (4, 4)  # 24 x 20 chunks of 16 bytes (uint8): tiny
BLOSC = numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1)


def values(shape=SHAPE, dtype="u1"):
    i = np.arange(shape[0])[:, None]
    j = np.arange(shape[1])[None, :]
    return ((i * 7 + j) % 251).astype(dtype)


def tiny_array(store, compressor=BLOSC, **kwargs):
    kwargs.setdefault("zarr_format", 2)
    kwargs.setdefault("dtype", "u1")
    return zarrkit.create(shape=SHAPE, chunks=CHUNKS, store=store, compressor=compressor, **kwargs)


def finishes(fn, seconds=10.0):
    """Run ``fn`` on a thread; fail (rather than hang) when it has not returned in ``seconds``."""
    box: dict = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            box["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), "read hung"
    if "error" in box:
        raise box["error"]
    return box.get("value")


# -- correctness ---------------------------------------------------------------------------

def _index(n):
    return st.one_of(
        st.integers(-n, n - 1),
        st.builds(slice, st.none() | st.integers(-n - 2, n + 2), st.none() | st.integers(-n - 2, n + 2),
                  st.none() | st.sampled_from([1, 2, 3, 5, -1, -2, -7])),
    )


@pytest.fixture(scope="module")
def arrays(tmp_path_factory):
    """Tiny-chunk arrays of each kind, with some chunks never written, and their values."""
    made = []
    root = tmp_path_factory.mktemp("tiny")
    kinds = [
        dict(zarr_format=2, compressor=BLOSC, order="C", dtype="u1", fill_value=3),
        dict(zarr_format=2, compressor=numcodecs.GZip(level=1), order="F", dtype="<i2", fill_value=-1,
             dimension_separator="/"),
        dict(zarr_format=2, compressor=None, dtype="f8", fill_value=np.nan),
        dict(zarr_format=3, compressor=None, dtype="f4", fill_value=np.nan),
        dict(zarr_format=3, codecs=[{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip"}],
             dtype="u2", fill_value=7, chunk_key_encoding={"name": "v2", "separator": "/"}),
        dict(zarr_format=2, compressor=BLOSC, dtype=[("a", "u1"), ("b", "<f4")], fill_value=None),
    ]
    for n, kind in enumerate(kinds):
        kind = dict(kind)
        dtype = np.dtype(kind.pop("dtype"))
        if "codecs" in kind:
            kind.pop("compressor", None)
        z = zarrkit.create(shape=SHAPE, chunks=(4, 3), dtype=dtype, store=DirectoryStore(root / str(n)), **kind)
        data = np.zeros(SHAPE, dtype)
        if dtype.names:
            data["a"] = values()
            data["b"] = values() / 4
        else:
            data[...] = values(dtype=dtype)
        # chunks of every fifth row of chunks never written (but of the structured array): they
        # read as the fill value
        written = [i for i in range(SHAPE[0] // 4) if i % 5 or dtype.names]
        for i in written:
            z[i * 4 : i * 4 + 4] = data[i * 4 : i * 4 + 4]
        expected = np.full(SHAPE, kind["fill_value"], dtype) if not dtype.names else data.copy()
        for i in written:
            expected[i * 4 : i * 4 + 4] = data[i * 4 : i * 4 + 4]
        made.append((root / str(n), expected))
    return made


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(which=st.integers(0, 5), sel=st.tuples(_index(SHAPE[0]), _index(SHAPE[1])), threads=st.sampled_from([1, 2]))
def test_basic_selections_match_numpy(arrays, which, sel, threads):
    path, data = arrays[which]
    z = zarrkit.open_array(DirectoryStore(path), mode="r")
    with zarrkit.config.set(threads=threads):
        got = z[sel]
    np.testing.assert_array_equal(got, data[sel])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(which=st.integers(0, 5), seed=st.integers(0, 2**32 - 1), kind=st.sampled_from(["orth", "coord", "mask"]))
def test_fancy_selections_match_numpy(arrays, which, seed, kind):
    path, data = arrays[which]
    z = zarrkit.open_array(DirectoryStore(path), mode="r")
    rng = np.random.default_rng(seed)
    if kind == "orth":
        rows = rng.integers(0, SHAPE[0], rng.integers(1, 70))
        cols = np.sort(rng.choice(SHAPE[1], rng.integers(1, SHAPE[1]), replace=False))[:: rng.choice([1, -1])]
        np.testing.assert_array_equal(z.oindex[rows, cols], data[np.ix_(rows, cols)])
    elif kind == "coord":
        n = rng.integers(1, 2000)
        rows, cols = rng.integers(0, SHAPE[0], n), rng.integers(0, SHAPE[1], n)
        np.testing.assert_array_equal(z.vindex[rows, cols], data[rows, cols])
    else:
        mask = rng.random(SHAPE) < rng.random()
        np.testing.assert_array_equal(z.vindex[mask], data[mask])


@pytest.mark.parametrize("order", ["C", "F"])
def test_out_and_a_partial_last_chunk(tmp_path, order):
    shape = (99, 83)  # last chunks partial both ways
    z = zarrkit.create(shape=shape, chunks=(4, 4), dtype="<u2", store=DirectoryStore(tmp_path), zarr_format=2,
                       compressor=BLOSC, order=order, fill_value=9)
    data = values(shape, "<u2")
    z[...] = data
    out = np.full(shape, 1, dtype="<u2", order=order)
    z.get_basic_selection(Ellipsis, out=out)
    np.testing.assert_array_equal(out, data)
    part = np.empty((90, 70), dtype="<u2", order="F" if order == "C" else "C")
    z.get_basic_selection(np.s_[9:, 13:], out=part)
    np.testing.assert_array_equal(part, data[9:, 13:])


def test_object_strings_in_v3_with_slash_keys(tmp_path):
    data = np.array([f"{i % 13}" * (i % 5) for i in range(SHAPE[0] * SHAPE[1])], dtype=object).reshape(SHAPE)
    z = zarrkit.create(shape=SHAPE, chunks=(4, 4), dtype=str, store=DirectoryStore(tmp_path), zarr_format=3)
    z[...] = data
    z = zarrkit.open_array(DirectoryStore(tmp_path), mode="r")
    got = z[::-3, 5::2]
    assert got.tolist() == data[::-3, 5::2].tolist()


# -- failing inside a turn -----------------------------------------------------------------

def _damage(path, how):
    target = os.path.join(path, "11.7")
    if how == "header":
        with open(target, "r+b") as f:
            f.seek(4)
            f.write(b"\xff\xff\x00\x00")
    elif how == "oversized":
        with open(target, "ab") as f:
            f.write(b"\0" * (1 << 20))
    elif how == "directory":
        os.remove(target)
        os.mkdir(target)
    elif how == "symlink":
        os.remove(target)
        outside = os.path.join(os.path.dirname(path), "outside")
        with open(outside, "wb") as f, open(os.path.join(path, "11.8"), "rb") as g:
            f.write(g.read())
        os.symlink(outside, target)


@pytest.mark.parametrize("how", ["header", "oversized", "directory", "symlink"])
def test_a_read_failing_in_its_turn_lets_other_threads_read(tmp_path, how):
    bad_path, good_path = tmp_path / "bad", tmp_path / "good"
    tiny_array(DirectoryStore(bad_path))[...] = values()
    tiny_array(DirectoryStore(good_path))[...] = values()
    _damage(str(bad_path), how)
    bad = zarrkit.open_array(DirectoryStore(bad_path), mode="r")
    good = zarrkit.open_array(DirectoryStore(good_path), mode="r")
    expected = values()
    expected[44:48, 28:32] = 0  # a directory: a chunk not stored
    for _ in range(3):
        if how == "directory":
            np.testing.assert_array_equal(bad[...], expected)
            continue
        with pytest.raises(InvalidPathError if how == "symlink" else ChunkDecodeError, match=r"11\.7"):
            bad[...]
    # the lock is not left held: another thread reads tiny chunks, and so does this one
    np.testing.assert_array_equal(finishes(lambda: good[...]), values())
    np.testing.assert_array_equal(good[...], values())


def test_a_base_exception_inside_a_turn_releases_it():
    class Stop(BaseException):
        pass

    class Interrupting(Codec):
        codec_id = "tiny-attack-interrupting"

        def encode(self, buf):
            return bytes(np.ascontiguousarray(buf).view("u1"))

        def decode(self, buf, out=None):
            raise Stop()

    numcodecs.register_codec(Interrupting)
    store = MemoryStore()
    z = tiny_array(store, compressor=Interrupting())
    for i in range(SHAPE[0] // 4):
        for j in range(SHAPE[1] // 4):
            store[f"{i}.{j}"] = bytes(16)
    with pytest.raises(BaseException) as info:
        z[...]
    assert isinstance(info.value, Stop) or isinstance(info.value.__cause__, Stop)
    other = tiny_array(MemoryStore())
    other[...] = values()
    np.testing.assert_array_equal(finishes(lambda: other[...]), values())


_LOOKING = """
import sys, threading, time
import numcodecs, numpy as np
from numcodecs.abc import Codec
import zarrkit
from zarrkit.storage import MemoryStore

SHAPE, CHUNKS = (96, 80), (4, 4)


class Looking(Codec):
    # a codec whose decoding waits for a read of tiny chunks on another thread
    codec_id = "tiny-attack-looking"
    other = None

    def encode(self, buf):
        return bytes(np.ascontiguousarray(buf).view("u1"))

    def decode(self, buf, out=None):
        t = threading.Thread(target=lambda: type(self).other[...], daemon=True)
        t.start()
        t.join(5)
        if t.is_alive():
            raise RuntimeError("a read on another thread did not finish")
        data = np.frombuffer(bytes(buf), "u1")
        if out is None:
            return data
        np.asarray(out).reshape(-1).view("u1")[:] = data
        return out


numcodecs.register_codec(Looking)
Looking.other = zarrkit.create(shape=SHAPE, chunks=CHUNKS, dtype="u1", store=MemoryStore(), zarr_format=2,
                               compressor=None)
Looking.other[...] = 5
z = zarrkit.create(shape=SHAPE, chunks=CHUNKS, dtype="u1", store=MemoryStore(), zarr_format=2,
                   compressor=Looking())
data = (np.arange(SHAPE[0] * SHAPE[1]) % 251).astype("u1").reshape(SHAPE)
z[...] = data
t0 = time.perf_counter()
assert (z[...] == data).all()
first = time.perf_counter() - t0
t0 = time.perf_counter()
assert (z[...] == data).all()
print(f"{first:.3f} {time.perf_counter() - t0:.3f}")
"""


def test_a_codec_waiting_for_another_threads_tiny_read_does_not_wait_for_ever():
    # the thread holding the turn decodes with a codec that waits for a read of tiny chunks on
    # another thread: that read waits a moment for its turn, then goes without, and the
    # process takes no turns from then on (in a process of its own: the turns are the process's)
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _LOOKING], check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    first, again = map(float, done.stdout.split())
    assert first < 30 and again < 30


# -- crowds of threads ---------------------------------------------------------------------

def test_reads_from_pool_threads_event_loops_and_dask(tmp_path):
    z = tiny_array(DirectoryStore(tmp_path))
    data = values()
    z[...] = data
    selections = [np.s_[i : i + 40, :] for i in range(0, 56, 7)] + [Ellipsis, np.s_[::-1, ::3]]
    with zarrkit.config.set(threads=4):
        got = finishes(lambda: z.get_many(selections))
    for sel, g in zip(selections, got):
        np.testing.assert_array_equal(g, data[sel])

    async def gathered():
        a = await zasync.open_array(store=DirectoryStore(tmp_path), mode="r")
        return await asyncio.gather(*(a.getitem(sel) for sel in selections))

    for sel, g in zip(selections, finishes(lambda: asyncio.run(gathered()))):
        np.testing.assert_array_equal(g, data[sel])

    da = pytest.importorskip("dask.array")
    lazy = da.from_array(z, chunks=(8, 16))  # dask's blocks of many tiny chunks
    got = finishes(lambda: (lazy[::2] + lazy[1::2]).compute(scheduler="threads", num_workers=4))
    np.testing.assert_array_equal(got, data[::2] + data[1::2])


@pytest.mark.parametrize("store_kind", ["directory", "memory"])
def test_readers_racing_a_writer_see_whole_chunks(tmp_path, store_kind):
    store = DirectoryStore(tmp_path) if store_kind == "directory" else MemoryStore()
    z = tiny_array(store)
    z[...] = 0
    stop = threading.Event()
    problems: list[str] = []

    def write():
        k = 0
        while not stop.is_set():
            k = (k + 1) % 200
            z[...] = k  # every chunk rewritten, each with one value

    def read():
        r = zarrkit.open_array(store, mode="r")
        for _ in range(30):
            got = r[...]
            blocks = got.reshape(24, 4, 20, 4).transpose(0, 2, 1, 3).reshape(480, 16)
            torn = (blocks != blocks[:, :1]).any(axis=1)
            if torn.any():
                problems.append(f"torn chunks: {np.flatnonzero(torn)[:5]}")

    writer = threading.Thread(target=write, daemon=True)
    readers = [threading.Thread(target=read, daemon=True) for _ in range(3)]
    writer.start()
    for t in readers:
        t.start()
    for t in readers:
        t.join(15)
    stop.set()
    writer.join(15)
    assert not any(t.is_alive() for t in readers + [writer]), "hung"
    assert problems == []


fork_only = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")


def _forked(child, seconds=5):
    """Run ``child`` in a forked process killed after ``seconds``; its exit status (0: passed)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # forking a process with threads
        pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            signal.alarm(seconds)
            code = 0 if child() else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return status


@fork_only
def test_a_process_forked_while_a_thread_reads_tiny_chunks_reads_them():
    z = tiny_array(MemoryStore())
    data = values()
    z[...] = data
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            z[...]

    t = threading.Thread(target=spin, daemon=True)
    t.start()
    try:
        statuses = [_forked(lambda: bool((z[...] == data).all())) for _ in range(6)]
    finally:
        stop.set()
        t.join(10)
    assert statuses == [0] * 6  # not killed by the alarm, waiting for the parent's thread


@fork_only
def test_processes_writing_while_this_one_reads_tiny_chunks(tmp_path):
    z = tiny_array(DirectoryStore(tmp_path))
    z[...] = 0

    def write(base):
        def child():
            # up to 20 whole-array writes, for about 3 s: on a busy machine each of the 480
            # chunk files (a new file and a rename) can take a millisecond; the alarm below
            # catches a child that hangs, not one that is slow
            w = zarrkit.open_array(DirectoryStore(tmp_path), mode="r+")
            deadline = time.monotonic() + 3.0
            for k in range(20):
                w[...] = base + k
                if time.monotonic() > deadline:
                    break
            return True
        return child

    stop = threading.Event()
    problems: list[str] = []

    def read():
        r = zarrkit.open_array(DirectoryStore(tmp_path), mode="r")
        while not stop.is_set():
            got = r[...]
            blocks = got.reshape(24, 4, 20, 4).transpose(0, 2, 1, 3).reshape(480, 16)
            if (blocks != blocks[:, :1]).any():
                problems.append("torn")

    readers = [threading.Thread(target=read, daemon=True) for _ in range(2)]
    for t in readers:
        t.start()
    results: list[int] = []
    forkers = [threading.Thread(target=lambda b=b: results.append(_forked(write(b), 60))) for b in (0, 100)]
    for t in forkers:
        t.start()
    for t in forkers:
        t.join(90)
    stop.set()
    for t in readers:
        t.join(10)
    assert results == [0, 0] and problems == []
