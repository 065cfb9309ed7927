"""Runs the special-file scenarios of test_small_chunk_rows_attack.py in one process and prints
one JSON line per scenario as it ends: a scenario blocked on a named pipe or a device is
reported as hung (an alarm), and the others still report.

Usage: python _rows_attack_worker.py WORKDIR
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import socket
import stat
import sys
import traceback

import numpy as np

import zarrkit
import zarrkit.core.read as read_mod
from zarrkit.codecs import ZstdCodec
from zarrkit.storage import DirectoryStore

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _special_files_worker import _release  # (a sibling script's helper)

#: a scenario still blocked after this many seconds is reported as hung (a finished one takes
#: milliseconds)
HANG_SECONDS = 10
SHAPE, CHUNKS = (8, 12), (2, 3)  # 4 rows of 4 chunks
#: character devices whose reads come back short (a few bytes, not empty, not endless)
SHORT_READ_DEVICES = {"kmsg": (1, 11), "cpu_dma_latency": (10, 259)}
#: character devices whose reads fail with an error of their own
ERROR_DEVICES = {"tun": (10, 200), "kvm": (10, 232), "autofs": (10, 235)}


class Hung(Exception):
    pass


def _alarm(signum, frame):
    raise Hung(f"still blocked after {HANG_SECONDS} s")


def _outcome(fn):
    signal.alarm(HANG_SECONDS)
    try:
        return {"result": fn()}
    except Hung as exc:
        return {"hung": str(exc)}
    except Exception as exc:  # noqa: BLE001 - reported
        return {"error": type(exc).__name__, "message": str(exc), "key": getattr(exc, "key", None)}
    finally:
        signal.alarm(0)


def _array(d):
    z = zarrkit.create_array(DirectoryStore(d), name="g/a", shape=SHAPE, chunks=CHUNKS, dtype="f8",
                             compressors=ZstdCodec(level=1), zarr_format=3, fill_value=-1.0)
    z[...] = np.arange(np.prod(SHAPE), dtype="f8").reshape(SHAPE)
    return z


def _read(d, threads, store=None):
    saved = read_mod.ROW_OUTPUT_FACTOR
    read_mod.ROW_OUTPUT_FACTOR = 0
    try:
        with zarrkit.config.set(threads=threads):
            store = DirectoryStore(d) if store is None else store
            return zarrkit.open_array(store, path="g/a", mode="r")[...].tolist()
    finally:
        read_mod.ROW_OUTPUT_FACTOR = saved


def _replace(d, key, make):
    path = os.path.join(d, *key.split("/"))
    os.remove(path)
    make(path)


def _device(major, minor):
    def make(path):
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(major, minor))
    return make


def _raw_read(path, n):
    """What the system gives a plain read of ``path`` (the scenario's precondition)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    try:
        return {"bytes": len(os.pread(fd, n, 0))}
    except OSError as exc:
        return {"errno": exc.errno}
    finally:
        os.close(fd)


def scenario_fifo_in_row(d, threads):
    _array(d)
    _replace(d, "g/a/c/1/2", os.mkfifo)
    return _read(d, threads)


def scenario_fifo_swapped_in_after_a_read(d):
    # the same store object: its directories are known, the file is opened by the fast loop
    _array(d)
    store = DirectoryStore(d)
    _read(d, 2, store)
    _replace(d, "g/a/c/1/2", os.mkfifo)
    inside = os.path.join(d, "g/a/c/0/0")
    os.remove(inside)
    os.mkfifo(inside + ".pipe")
    os.symlink(inside + ".pipe", inside)  # a link inside the root, to a pipe
    return _read(d, 2, store)


def scenario_fifo_with_a_writer_in_row(d):
    _array(d)
    _replace(d, "g/a/c/2/1", os.mkfifo)
    held = os.open(os.path.join(d, "g/a/c/2/1"), os.O_RDWR)  # a writer holding it open
    try:
        os.write(held, b"\x28\xb5\x2f\xfd" + bytes(60))
        return _read(d, 2)
    finally:
        os.close(held)


def scenario_socket_in_row(d):
    _array(d)
    path = os.path.join(d, "g/a/c/3/0")
    os.remove(path)
    s = socket.socket(socket.AF_UNIX)
    try:
        s.bind(path)
        return _read(d, 2)
    finally:
        s.close()


def scenario_fifo_as_key_directory(d):
    # the directory of a row's chunks is a named pipe: nothing is opened through it
    _array(d)
    row = os.path.join(d, "g/a/c/2")
    for name in os.listdir(row):
        os.remove(os.path.join(row, name))
    os.rmdir(row)
    os.mkfifo(row)
    return _read(d, 2)


def scenario_zero_and_null_in_row(d):
    _array(d)
    _replace(d, "g/a/c/0/3", _device(1, 5))
    _replace(d, "g/a/c/3/3", _device(1, 3))
    return _read(d, 1)


def scenario_fifo_in_batch(d):
    store = DirectoryStore(d)
    store.update({"c/0/0": b"a", "c/0/2": b"b"})
    os.mkfifo(os.path.join(d, "c/0/1"))
    return [None if v is None else bytes(v).decode() for v in store.get_many_upto(["c/0/0", "c/0/1", "c/0/2"], 64)]


def scenario_short_read_device(d, name):
    major, minor = SHORT_READ_DEVICES[name]
    probe = os.path.join(d, "probe")
    _device(major, minor)(probe)
    pre = _raw_read(probe, 4096)
    store = DirectoryStore(d)
    store["c/0/0"] = b"value"
    _device(major, minor)(os.path.join(d, "c/0/1"))
    batch = _outcome(lambda: [None if v is None else len(v) for v in
                              DirectoryStore(d).get_many_upto(["c/0/0", "c/0/1"], 4096)])
    one = _outcome(lambda: None if (v := DirectoryStore(d).get_upto("c/0/1", 4096)) is None else len(v))
    os.makedirs(os.path.join(d, "arr"))
    _array(os.path.join(d, "arr"))
    _replace(os.path.join(d, "arr"), "g/a/c/1/2", _device(major, minor))
    array = _outcome(lambda: _read(os.path.join(d, "arr"), 2))
    # an uncompressed array whose chunks hold as many bytes as the device gives
    size = pre.get("bytes", 0)
    raw = os.path.join(d, "raw")
    if size:
        z = zarrkit.create_array(DirectoryStore(raw), name="r", shape=(2, size), chunks=(1, size), dtype="u1",
                                 compressors=None, zarr_format=3, fill_value=0)
        z[...] = 7
        _replace(raw, "r/c/1/0", _device(major, minor))
    raw_array = _outcome(lambda: zarrkit.open_array(DirectoryStore(raw), path="r", mode="r")[...].tolist())
    return {"pre": pre, "batch": batch, "one": one, "array": array, "raw_array": raw_array}


def scenario_error_device(d, name):
    major, minor = ERROR_DEVICES[name]
    probe = os.path.join(d, "probe")
    _device(major, minor)(probe)
    try:
        pre = _raw_read(probe, 4096)
    except OSError as exc:
        pre = {"open_errno": exc.errno}
    store = DirectoryStore(d)
    store["c/0/0"] = b"value"
    _device(major, minor)(os.path.join(d, "c/0/1"))
    batch = _outcome(lambda: [None if v is None else len(v) for v in
                              DirectoryStore(d).get_many_upto(["c/0/0", "c/0/1"], 4096)])
    return {"pre": pre, "batch": batch}


def scenario_device_made_after_a_read(d):
    """A chunk replaced by a device after a store listed its directory: a store opened
    afterwards refuses it (the store that listed the directory before does not look again:
    see the threat model)."""
    major, minor = SHORT_READ_DEVICES["kmsg"]
    probe = os.path.join(d, "probe")
    _device(major, minor)(probe)
    pre = _raw_read(probe, 4096)
    os.makedirs(os.path.join(d, "arr"))
    _array(os.path.join(d, "arr"))
    store = DirectoryStore(os.path.join(d, "arr"))
    first = _read(os.path.join(d, "arr"), 2, store)  # every directory listed: only regular files
    _replace(os.path.join(d, "arr"), "g/a/c/1/2", _device(major, minor))
    later = _outcome(lambda: _read(os.path.join(d, "arr"), 2))
    # a store pickled after its listings (as dask sends one to its workers) lists again
    unpickled = _outcome(lambda: _read(os.path.join(d, "arr"), 2, pickle.loads(pickle.dumps(store))))
    return {"pre": pre, "first": first, "array": later, "unpickled": unpickled}


SCENARIOS = {
    "fifo_in_row_1": lambda d: scenario_fifo_in_row(d, 1),
    "fifo_in_row_2": lambda d: scenario_fifo_in_row(d, 2),
    "fifo_in_row_4": lambda d: scenario_fifo_in_row(d, 4),
    "fifo_swapped_in_after_a_read": scenario_fifo_swapped_in_after_a_read,
    "fifo_with_a_writer_in_row": scenario_fifo_with_a_writer_in_row,
    "socket_in_row": scenario_socket_in_row,
    "fifo_as_key_directory": scenario_fifo_as_key_directory,
    "zero_and_null_in_row": scenario_zero_and_null_in_row,
    "fifo_in_batch": scenario_fifo_in_batch,
    **{f"short_read_{n}": (lambda d, n=n: scenario_short_read_device(d, n)) for n in SHORT_READ_DEVICES},
    **{f"error_device_{n}": (lambda d, n=n: scenario_error_device(d, n)) for n in ERROR_DEVICES},
    "device_made_after_a_read": scenario_device_made_after_a_read,
}


def main() -> None:
    work = sys.argv[1]
    signal.signal(signal.SIGALRM, _alarm)
    for name, fn in SCENARIOS.items():
        d = os.path.join(work, name)
        os.makedirs(d)
        try:
            outcome = _outcome(lambda fn=fn, d=d: fn(d))
        except BaseException:  # noqa: BLE001
            outcome = {"crash": traceback.format_exc()}
        if "hung" in outcome:
            _release(d)
        print(json.dumps({"scenario": name, **outcome}, default=repr), flush=True)
    os._exit(0)  # pool threads still blocked by a scenario would keep the interpreter alive


if __name__ == "__main__":
    main()
