"""Changes to a zip file SIGKILLed at every point where they write.

``python _zip_kill_worker.py JSON`` is the *driver*: it runs the scenario once unharmed in a
forked writer, which reports every change it makes (with what made it), then forks a writer
per kill point ``k`` = 1, 2, ... (each change) on a fresh copy of ``pristine/``, which SIGKILLs itself
just before its ``k``-th change.  It prints one JSON line per run: ``{"kill_at", "path", "acks",
"killed", "label", "error"}`` (the unharmed run first, with ``"changes"`` and ``"labels"``).

A *change* is counted where bytes or names reach the file system under the folder, without
wrapping or patching anything of zarrkit's:

* every audited file-system event there (:func:`sys.addaudithook`; the hook runs before the
  call does anything): a file opened for writing, a rename, a removal, a change of mode;
* every write into a file there made by :mod:`zipfile` or :mod:`zarrkit.storage.zip`: a
  buffered ``write``/``flush`` or an ``os.write``/``os.copy_file_range`` (:mod:`sys.monitoring`
  ``CALL`` events of those modules' code, Python 3.12+), and every ``os.fsync`` there (the
  steps of a close around the rename).  zipfile writes a member's local
  header, its data and each central directory entry with calls of their own, so each member
  written and each step of the central directory is a point of its own.

The driver never opens a store or starts a thread (forking a process with threads is unsafe):
the pristine folder is prepared, and every folder checked, by the test process.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import zarrkit
import zarrkit.storage.zip as zarrkit_zip
from zarrkit.storage import ZipStore

ZIP_NAME = "data.zip"
A = np.arange(6 * 8, dtype="<i4").reshape(6, 8)
B = np.linspace(0, 1, 10)
#: chunks of 16 KiB, stored raw: larger than a file buffer, so each reaches the file as written
C = np.arange(3 * 4096, dtype="<u4") * 3
D = np.full((5,), -1.5)


def build(folder: Path) -> None:
    """The zip file every scenario starts from: a v2 group with /a (2 chunks, attributes) and
    /g/b (v2, zlib), written with mode 'w' and closed."""
    folder.mkdir(parents=True, exist_ok=True)
    with ZipStore(folder / ZIP_NAME, mode="w") as store:
        root = zarrkit.group(store, zarr_format=2)
        root.attrs["title"] = "pristine"
        a = root.create_dataset("a", shape=A.shape, chunks=(3, 8), dtype=A.dtype)
        a[...] = A
        a.attrs["units"] = "m"
        b = root.create_group("g").create_dataset("b", shape=B.shape, chunks=(5,), dtype=B.dtype,
                                                  compressor=zarrkit.Zlib(level=1))
        b[...] = B


# =============================================================================================
# scenarios: steps run one after the other, each ending where its changes become visible


def _store(ctx: dict, path: Path) -> ZipStore:
    if "store" not in ctx:
        ctx["store"] = ZipStore(path, mode="a")
    return ctx["store"]


def _close(ctx: dict) -> None:
    ctx.pop("store").close()


def _append(ctx: dict, path: Path) -> None:
    store = _store(ctx, path)
    root = zarrkit.open_group(store, mode="r+")
    c = root.create_dataset("c", shape=C.shape, chunks=(4096,), dtype=C.dtype, compressor=None)
    c[...] = C
    root["a"].attrs["units"] = "km"  # the document is written again
    _close(ctx)


def _shrink_and_delete(ctx: dict, path: Path) -> None:
    store = _store(ctx, path)
    zarrkit.open_array(store, path="a", mode="r+").resize(3, 4)  # a chunk deleted
    del zarrkit.open_group(store, mode="r+")["g"]
    _close(ctx)


def _flush_first(ctx: dict, path: Path) -> None:
    store = _store(ctx, path)
    zarrkit.open_group(store, mode="r+").array("c", D, chunks=(5,))
    store.flush()


def _then_close(ctx: dict, path: Path) -> None:
    store = _store(ctx, path)
    zarrkit.open_group(store, mode="r+").array("d", D, chunks=(2,))
    _close(ctx)


def _convert(to: int) -> Callable[[dict, Path], None]:
    def step(ctx: dict, path: Path) -> None:
        from zarrkit.cli import main

        code = main(["convert", str(path), "--to", str(to)])
        if code != 0:
            raise RuntimeError(f"zarrkit convert exited with {code}")
    return step


SCENARIOS: dict[str, list[tuple[str, Callable[[dict, Path], None]]]] = {
    "append": [("add /c, rewrite /a's attributes, close", _append)],
    "delete": [("shrink /a, del root['g'], close", _shrink_and_delete)],
    "flush": [("add /c, flush", _flush_first), ("add /d, close", _then_close)],
    "convert": [("zarrkit convert --to 3", _convert(3)), ("zarrkit convert --to 2", _convert(2))],
}


def run_steps(name: str, path: Path, start: int = 0, stop: int | None = None) -> None:
    """Run steps ``start:stop`` of a scenario (the test process uses this to build the states)."""
    ctx: dict = {}
    try:
        for _label, step in SCENARIOS[name][start:stop]:
            step(ctx, path)
    finally:
        if "store" in ctx:
            ctx["store"].close()


# =============================================================================================
# the kill trigger

_FS_EVENTS = {"os.rename", "os.remove", "os.unlink", "os.truncate", "os.chmod", "os.link",
              "shutil.copyfile", "shutil.move"}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_FILE_CALLS = {"BufferedRandom.write", "BufferedWriter.write", "FileIO.write",
               "BufferedRandom.flush", "BufferedWriter.flush", "BufferedRandom.truncate"}
_FD_CALLS = {os.write, os.pwrite, os.ftruncate, os.fsync} | ({os.copy_file_range} if hasattr(os, "copy_file_range") else set())


def _code_objects(*modules: Any) -> list[Any]:
    """The code of every function and method the modules define."""
    codes = []

    def add(obj: Any) -> None:
        for f in (obj, getattr(obj, "__func__", None), getattr(obj, "fget", None), getattr(obj, "fset", None)):
            code = getattr(f, "__code__", None)
            if code is not None:
                codes.append(code)

    for module in modules:
        for value in vars(module).values():
            if getattr(value, "__module__", None) != module.__name__:
                continue
            add(value)
            if isinstance(value, type):
                for member in vars(value).values():
                    add(member)
    return codes


class Trigger:
    """Counts the changes under ``root``; SIGKILLs the process before change ``kill_at``."""

    def __init__(self, root: Path, kill_at: int):
        self.root = str(root)
        self.kill_at = kill_at
        self.labels: list[str] = []
        self.armed = False
        sys.addaudithook(self._audit)
        mon = sys.monitoring
        mon.use_tool_id(mon.DEBUGGER_ID, "zip-kill-points")
        mon.register_callback(mon.DEBUGGER_ID, mon.events.CALL, self._call)
        for code in _code_objects(zipfile, zarrkit_zip):
            mon.set_local_events(mon.DEBUGGER_ID, code, mon.events.CALL)

    def change(self, label: str) -> None:
        self.labels.append(label)
        if len(self.labels) == self.kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

    def _ours_fd(self, fd: Any) -> bool:
        try:
            return isinstance(fd, int) and os.readlink(f"/proc/self/fd/{fd}").startswith(self.root)
        except OSError:
            return False

    def _audit(self, event: str, args: tuple) -> None:
        if not self.armed:
            return
        if event == "open":
            path, mode, flags = (tuple(args) + (None, None, None))[:3]
            writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and flags & _WRITE_FLAGS)
            if writes and isinstance(path, (str, bytes, os.PathLike)) and os.fsdecode(path).startswith(self.root):
                self.change(f"open {os.path.basename(os.fsdecode(path))}")
        elif event in _FS_EVENTS and args and isinstance(args[0], (str, bytes, os.PathLike)):
            path = os.fsdecode(args[0])
            if path.startswith(self.root):
                self.change(f"{event} {os.path.basename(path)}")

    def _call(self, code: Any, offset: int, callable_: Any, arg0: Any) -> Any:
        if not self.armed:
            return None
        name = getattr(callable_, "__qualname__", None)
        if name in _FILE_CALLS:
            # a method called on an object comes as the class's function with the object first
            owner = getattr(callable_, "__self__", arg0)
            try:
                fd = owner.fileno()
            except (AttributeError, OSError, ValueError):
                return None
            if self._ours_fd(fd):
                self.change(f"{name} in {code.co_qualname}")
        elif callable_ in _FD_CALLS and (callable_ is getattr(os, "copy_file_range", None) or self._ours_fd(arg0)):
            self.change(f"{callable_.__name__} in {code.co_qualname}")
        return None


# =============================================================================================
# the writer and the driver


def run_writer(name: str, folder: Path, kill_at: int, out: int) -> None:
    """In a forked child: run the scenario's steps, acknowledging each on fd ``out``."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # what a command prints does not mix with the driver's lines
    trigger = Trigger(folder, kill_at)
    ctx: dict = {}
    try:
        for i, (_label, step) in enumerate(SCENARIOS[name]):
            trigger.armed = True
            step(ctx, folder / ZIP_NAME)
            trigger.armed = False
            os.write(out, f"ack {i}\n".encode())
        os.write(out, (json.dumps({"labels": trigger.labels}) + "\n").encode())
    except BaseException as exc:  # noqa: BLE001 - reported to the driver
        os.write(out, f"error {type(exc).__name__}: {exc}\n".encode()[:2000])
        os._exit(1)
    os._exit(0)


def run_once(name: str, root: Path, kill_at: int) -> dict[str, Any]:
    folder = root / f"k{kill_at}"
    if folder.exists():
        shutil.rmtree(folder)
    shutil.copytree(root / "pristine", folder)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        run_writer(name, folder, kill_at, write_end)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as f:
        lines = f.read().decode(errors="replace").splitlines()
    _, status = os.waitpid(pid, 0)
    run: dict[str, Any] = {
        "kill_at": kill_at, "path": str(folder), "acks": sum(ln.startswith("ack") for ln in lines),
        "killed": os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL,
        "error": [ln for ln in lines if ln.startswith("error")],
    }
    for ln in lines:
        if ln.startswith("{"):
            run["labels"] = json.loads(ln)["labels"]
    return run


def drive(args: dict[str, Any]) -> None:
    name, root = args["scenario"], Path(args["root"])
    first = run_once(name, root, 0)
    labels = first.get("labels", [])
    print(json.dumps({**first, "changes": len(labels)}), flush=True)
    if first["error"] or not labels:
        return
    for kill_at in range(1, len(labels) + 1):
        run = run_once(name, root, kill_at)
        run["label"] = labels[kill_at - 1]
        print(json.dumps(run), flush=True)


if __name__ == "__main__":
    drive(json.loads(sys.argv[1]))
