"""Runs each scenario of test_special_files.py in one process and prints one JSON line per
scenario as it ends, so that a scenario blocked on a special file (the failure these tests
guard against) neither hides the others' results nor hangs the test run.

Usage: python _special_files_worker.py WORKDIR
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import socket
import stat
import sys
import traceback

import numpy as np

import zarrkit
from zarrkit.cli import main as cli_main
from zarrkit.storage import ByteRange

#: a scenario still blocked after this many seconds is reported as hung; generous, since a
#: finished scenario takes milliseconds
HANG_SECONDS = 15


class Hung(Exception):
    pass


def _alarm(signum, frame):
    raise Hung(f"still blocked after {HANG_SECONDS} s")


def _array(path, *, zarr_format=2, shape=(4,), chunks=(2,), **kw):
    z = zarrkit.open_array(path, mode="w", shape=shape, chunks=chunks, dtype="i4",
                           zarr_format=zarr_format, **kw)
    z[...] = 1
    return z


def _release(directory):
    """Open the writing end of every named pipe below ``directory`` and close it: a thread
    blocked opening one for reading then returns, and the next scenario has the pool."""
    for d, _, names in os.walk(directory):
        for n in names:
            p = os.path.join(d, n)
            if stat.S_ISFIFO(os.lstat(p).st_mode):
                try:
                    os.close(os.open(p, os.O_WRONLY | os.O_NONBLOCK))
                except OSError:  # nobody waits on it
                    pass


def _fifo_at(path):
    os.remove(path)
    os.mkfifo(path)


def _outcome(fn):
    try:
        return {"result": fn()}
    except Hung as exc:
        return {"hung": str(exc)}
    except Exception as exc:  # noqa: BLE001 - the scenario's outcome is what is reported
        return {"error": type(exc).__name__, "message": str(exc),
                "zarrkit": type(exc).__module__.startswith("zarrkit")}


def _guarded(fn, d):
    """:func:`_outcome` of ``fn`` with its own hang alarm; pipes below ``d`` are released
    after a hang."""
    signal.alarm(HANG_SECONDS)
    try:
        outcome = _outcome(fn)
    finally:
        signal.alarm(0)
    if "hung" in outcome:
        _release(d)
    return outcome


def chunk_small(d):
    _array(f"{d}/a")
    _fifo_at(f"{d}/a/0")
    return zarrkit.open_array(f"{d}/a", mode="r")[:].tolist()


def chunk_large(d):
    # decoded chunks of 64 KiB and more are read through the per-thread buffer
    _array(f"{d}/a", shape=(65536,), chunks=(32768,))
    _fifo_at(f"{d}/a/1")
    return int(zarrkit.open_array(f"{d}/a", mode="r")[:].sum())


def shard(d):
    z = zarrkit.create_array(f"{d}/a", shape=(8,), chunks=(2,), shards=(4,), dtype="i4")
    z[...] = 1
    _fifo_at(f"{d}/a/c/1")
    return zarrkit.open_array(f"{d}/a", mode="r")[:].tolist()


def byte_ranges(d):
    store = zarrkit.DirectoryStore(d)
    os.mkfifo(f"{d}/k")
    results = []
    for get in (lambda: store.get("k", ByteRange(0, 4)), lambda: store.get("k", ByteRange(-4)),
                lambda: store.get_transient("k", ByteRange(2, 4)), lambda: store.get_upto("k", 10),
                lambda: store.get("k"), lambda: store.get_many_upto(["k"], 10)):
        results.append(_guarded(get, d))
    return results


def metadata_v2(d):
    _array(f"{d}/a")
    _fifo_at(f"{d}/a/.zarray")
    return repr(zarrkit.open_array(f"{d}/a", mode="r"))


def metadata_v3(d):
    _array(f"{d}/a", zarr_format=3)
    _fifo_at(f"{d}/a/zarr.json")
    return repr(zarrkit.open(f"{d}/a", mode="r"))


def link_to_fifo(d):
    store = zarrkit.DirectoryStore(d)
    store["k"] = b"x"
    os.mkfifo(f"{d}/pipe")
    os.remove(f"{d}/k")
    os.symlink(f"{d}/pipe", f"{d}/k")  # a link that stays inside the store
    return store.get("k")


def unix_socket(d):
    store = zarrkit.DirectoryStore(d)
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(f"{d}/k")
    try:
        return store.get("k")
    finally:
        sock.close()


def listings(d):
    store = zarrkit.DirectoryStore(d)
    store.update({"a/v": b"1", "a/sub/w": b"2", "b": b"3"})
    os.mkfifo(f"{d}/a/pipe")
    os.mkfifo(f"{d}/pipe")
    os.symlink(f"{d}/a/pipe", f"{d}/a/link_to_pipe")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(f"{d}/a/sock")
    try:
        return {
            "list_prefix": sorted(store.list_prefix("")),
            "list_dir": store.list_dir("a"),
            "listdir": store.listdir("") + store.listdir("a"),
            "keys": sorted(store.keys()),
            "len": len(store),
            "contains": ["a/pipe" in store, "a/sock" in store, "a/link_to_pipe" in store],
            "getsize": store.getsize("a/pipe"),
        }
    finally:
        sock.close()


def tree(d):
    g = zarrkit.open_group(f"{d}/g", mode="w", zarr_format=2)
    g.create_group("sub")
    g.zeros("a", shape=(2,))
    _fifo_at(f"{d}/g/sub/.zgroup")
    return str(zarrkit.open_group(f"{d}/g", mode="r").tree())


def cli(d):
    g = zarrkit.open_group(f"{d}/g", mode="w", zarr_format=2)
    g.zeros("a", shape=(4,), chunks=(2,))[:] = 1
    g.create_group("sub")
    _fifo_at(f"{d}/g/sub/.zgroup")
    _fifo_at(f"{d}/g/a/0")
    runs = {}
    for command in (["ls", f"{d}/g"], ["tree", f"{d}/g"], ["verify", f"{d}/g"],
                    ["info", f"{d}/g/a"], ["verify", f"{d}/g/a"]):
        runs[command[0] + " " + os.path.relpath(command[1], d)] = _guarded(lambda c=command: _cli(c), d)
        _release(d)  # the command line reports any error, a hang's too: the next one starts free
    return runs


def _cli(command):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli_main(command)
    return [code, out.getvalue(), err.getvalue()]


def cp_to_zip(d):
    zarrkit.open_group(f"{d}/src", mode="w", zarr_format=2).zeros("a", shape=(4,), chunks=(2,))[:] = 3
    os.mkfifo(f"{d}/dst.zip.partial")  # where an interrupted copy into dst.zip would be
    code, _, err = _cli(["cp", "--no-progress", f"{d}/src", f"{d}/dst.zip"])
    copied = zarrkit.open_array(zarrkit.ZipStore(f"{d}/dst.zip", mode="r"), path="a", mode="r")[:]
    return [code, err, copied.tolist()]


def write_in_place(d):
    store = zarrkit.DirectoryStore(d, atomic=False)
    os.mkfifo(f"{d}/k")  # nobody reads it: an open to write would wait for a reader
    store["k"] = b"value"
    return [stat.S_ISREG(os.lstat(f"{d}/k").st_mode), bytes(store["k"]).decode()]


def devices(d):
    # device nodes need root, as the test suite runs (CI included)
    os.mknod(f"{d}/null", stat.S_IFCHR | 0o666, os.makedev(1, 3))
    os.mknod(f"{d}/zero", stat.S_IFCHR | 0o666, os.makedev(1, 5))
    store = zarrkit.DirectoryStore(d)
    _array(f"{d}/a")
    os.remove(f"{d}/a/0")
    os.mknod(f"{d}/a/0", stat.S_IFCHR | 0o666, os.makedev(1, 5))
    return {
        "get null": _guarded(lambda: store.get("null"), d),
        "get_upto null": _guarded(lambda: store.get_upto("null", 100), d),
        "get zero": _guarded(lambda: store.get("zero"), d),
        "get_upto zero": _guarded(lambda: store.get_upto("zero", 100), d),
        "get_many_upto null": _guarded(lambda: store.get_many_upto(["a/1", "null"], 100), d),
        "get_many_upto zero": _guarded(lambda: store.get_many_upto(["zero", "a/1"], 100), d),
        "range zero": _guarded(lambda: store.get("zero", ByteRange(-4)), d),
        "read array": _guarded(lambda: zarrkit.open_array(f"{d}/a", mode="r")[:].tolist(), d),
        "listed": sorted(store.list_prefix("")),
    }


SCENARIOS = [chunk_small, chunk_large, shard, byte_ranges, metadata_v2, metadata_v3,
             link_to_fifo, unix_socket, listings, tree, cli, cp_to_zip, write_in_place, devices]


def main() -> None:
    work = sys.argv[1]
    signal.signal(signal.SIGALRM, _alarm)
    np.seterr(all="ignore")
    for fn in SCENARIOS:
        d = os.path.join(work, fn.__name__)
        os.makedirs(d)
        try:
            outcome = _guarded(lambda fn=fn, d=d: fn(d), d)
        except BaseException:  # noqa: BLE001
            outcome = {"crash": traceback.format_exc()}
        print(json.dumps({"scenario": fn.__name__, **outcome}, default=repr), flush=True)
    # threads of the pool still blocked by a scenario would keep the interpreter from exiting
    os._exit(0)


if __name__ == "__main__":
    main()
