"""Attacks on ``DirectoryStore.prefetch`` (the read-ahead of large chunk files): whatever the
keys and whatever sits at them, it raises nothing, never blocks, reads nothing outside the
store (a file outside reached through a link stays out of the page cache), never reads from
a device or a pipe, and reads with read-ahead in play return whole versions of chunks that
another process keeps replacing."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from _page_cache import cached, uncached  # (a sibling helper)

import zarrkit
import zarrkit.core.read as read_mod
from zarrkit.storage import DirectoryStore

pytestmark = pytest.mark.skipif(
    not (sys.platform.startswith("linux") and hasattr(os, "RWF_NOWAIT")),
    reason="read-ahead (posix_fadvise) and page-cache residency (preadv2 RWF_NOWAIT) are Linux calls",
)

SRC = Path(__file__).resolve().parent.parent.parent / "src"


def evicted_file(path, nbytes: int = 1 << 20) -> str:
    """A file of ``nbytes`` written to disk and dropped from the page cache (skips where the
    file system keeps files in memory)."""
    with open(path, "wb") as f:
        f.write(os.urandom(nbytes))
        f.flush()
        os.fsync(f.fileno())
        os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
    if not uncached(path):
        pytest.skip("this file system keeps files in memory: nothing to read ahead")
    return str(path)


def prefetch_within(store, keys, seconds: float = 5.0):
    """``store.prefetch(keys)`` on a thread; fails if it raises or has not returned in time."""
    result: list = []

    def run():
        try:
            result.append(("ok", store.prefetch(keys)))
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            result.append(("raised", exc))

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"prefetch({keys!r}) blocked"
    assert result and result[0][0] == "ok", result
    return result[0][1]


def test_a_linked_directory_leading_outside_is_not_read_ahead(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = evicted_file(outside / "0")
    root = tmp_path / "store"
    (root / "c").mkdir(parents=True)
    os.symlink(outside, root / "c" / "link")
    store = DirectoryStore(str(root))
    assert prefetch_within(store, ["c/link/0"]) is False
    time.sleep(0.3)  # (a read ahead would have landed by now)
    assert uncached(secret)


def test_a_linked_file_and_hostile_keys_are_not_read_ahead(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = evicted_file(outside / "secret")
    root = tmp_path / "store"
    root.mkdir()
    os.symlink(outside / "secret", root / "link")
    store = DirectoryStore(str(root))
    hostile = ["link", "../outside/secret", str(outside / "secret"), "c/../../outside/secret",
               "..\\outside\\secret", "a\x00b", "", "/", "//", ".", "..", "c/./0"]
    assert prefetch_within(store, hostile) is False
    time.sleep(0.3)
    assert uncached(secret)


def test_a_named_pipe_a_directory_and_a_device_are_passed_over(tmp_path):
    root = tmp_path / "store"
    (root / "c" / "dir").mkdir(parents=True)
    os.mkfifo(root / "c" / "fifo")
    kinds = ["c/fifo", "c/dir", "c/missing"]
    try:
        os.mknod(root / "c" / "zero", 0o600 | 0o020000, os.makedev(1, 5))  # like /dev/zero
        kinds.append("c/zero")
    except PermissionError:
        pass  # (the pipe and the directory are still attacked)
    store = DirectoryStore(str(root))
    assert prefetch_within(store, kinds) is False
    assert sorted(os.listdir(root / "c")) == sorted(k.split("/")[1] for k in kinds if k != "c/missing")


def test_a_huge_list_of_missing_keys_returns(tmp_path):
    store = DirectoryStore(str(tmp_path))
    keys = [f"c/{i}/{j}" for i in range(300) for j in range(300)]
    start = time.monotonic()
    assert prefetch_within(store, keys, seconds=30) is False
    assert time.monotonic() - start < 30


def test_a_file_on_disk_is_read_ahead_and_a_cached_one_is_left_alone(tmp_path):
    store = DirectoryStore(str(tmp_path))
    (tmp_path / "c").mkdir()
    evicted_file(tmp_path / "c" / "0")
    assert prefetch_within(store, ["c/0"]) is True
    deadline = time.monotonic() + 10
    while not cached(tmp_path / "c" / "0"):
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert prefetch_within(store, ["c/0"]) is False  # at hand now


WRITER = """
import os, sys, time
import numpy as np
import zarrkit
path, seconds = sys.argv[1], float(sys.argv[2])
z = zarrkit.open_array(zarrkit.DirectoryStore(path), mode="r+")
open(os.path.join(path, "started"), "w").close()
k, end = 2, time.monotonic() + seconds
while time.monotonic() < end and not os.path.exists(os.path.join(path, "stop")):
    z[:] = k
    for f in os.scandir(os.path.join(path, "c")):  # (off the page cache: read ahead from disk)
        fd = os.open(f.path, os.O_RDONLY)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)
    k += 1
print(k - 2)
"""


def test_reads_with_read_ahead_see_whole_chunks_while_another_process_replaces_them(tmp_path):
    path = str(tmp_path / "a.zarr")
    n, chunk = 16 * 131072, 131072  # 16 chunks of 1 MiB
    z = zarrkit.create_array(DirectoryStore(path), shape=(n,), chunks=(chunk,), dtype="f8",
                             compressors=None, fill_value=0)
    z[:] = 1
    assert read_mod.READ_AHEAD_MIN_BYTES <= chunk * 8  # (read-ahead is in play)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]))
    writer = subprocess.Popen([sys.executable, "-c", WRITER, path, "12"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    reads = 0
    try:
        deadline = time.monotonic() + 10
        while not os.path.exists(os.path.join(path, "started")) and writer.poll() is None:
            assert time.monotonic() < deadline, "the writer did not start"
            time.sleep(0.01)
        reader = zarrkit.open_array(DirectoryStore(path), mode="r")
        end = time.monotonic() + 2.0
        while time.monotonic() < end:
            for threads in (1, 2):
                with zarrkit.config.set(threads=threads):
                    a = reader[:]
                reads += 1
                per_chunk = a.reshape(-1, chunk)
                assert (per_chunk == per_chunk[:, :1]).all(), "a chunk mixed two versions"
                assert (per_chunk[:, 0] >= 1).all()
    finally:
        open(os.path.join(path, "stop"), "w").close()
        out, err = writer.communicate(timeout=30)
    assert writer.returncode == 0, err[-2000:]
    assert int(out.strip()) > 3 and reads > 3


def test_a_read_from_disk_reads_every_chunk_right(tmp_path):
    """Large chunks evicted from the page cache (some missing, one a directory), read back with
    read-ahead in play, on one thread and two."""
    data = np.random.default_rng(0).integers(0, 1 << 16, size=(12, 256, 1024), dtype="u2")
    path = tmp_path / "a"
    a = zarrkit.create_array(str(path), shape=data.shape, chunks=(1, 256, 1024), dtype="u2",
                             compressors=None, fill_value=7)
    a[...] = data
    for gone in (3, 8):
        os.remove(path / "c" / str(gone) / "0" / "0")
        data[gone] = 7
    files = [os.path.join(r, f) for r, _, fs in os.walk(path / "c") for f in fs]
    for threads in (1, 2):
        for f in files:
            evicted_file_again(f)
        with zarrkit.config.set(threads=threads):
            np.testing.assert_array_equal(zarrkit.open_array(str(path), mode="r")[...], data)
    os.makedirs(path / "c" / "3" / "0" / "0")  # a directory where a chunk's file would be
    np.testing.assert_array_equal(zarrkit.open_array(str(path), mode="r")[...], data)


def evicted_file_again(path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
