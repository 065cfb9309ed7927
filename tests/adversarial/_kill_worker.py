"""Mutating operations SIGKILLed at every point where they change a store.

``python _kill_worker.py JSON`` is the *driver*: for ``kill_at`` = 0, 1, 2, ... (or
``max_points`` of them spread evenly) it copies the pristine store, forks a writer, and the
writer SIGKILLs itself just before the ``kill_at``-th change it makes (0: never; it reports how
many changes the whole run makes).  The writer runs
the scenario's operations one after the other and acknowledges each on a pipe once it has
returned (and, for a DBM store, once the store is flushed, as DBMStore documents).  The driver
prints one JSON line per run: ``{"kill_at", "path", "acks", "killed", "changes"}``; the test
checks the stores it leaves.

A *change* is counted where it reaches the file system or the database library, without
wrapping or patching anything of zarrkit's:

* file-based stores (directories, DBM): every audited file-system event that modifies
  something under the store's folder -- opening a file for writing, a rename, a removal, a
  new directory (:func:`sys.addaudithook`; the hook runs *before* the call does anything);
* SQLite and LMDB: every call into the database library that may write -- ``execute``/
  ``commit`` of a connection, ``begin``/``put``/``delete`` of an LMDB transaction
  (:mod:`sys.monitoring` ``CALL`` events, Python 3.12+).

The driver itself never opens a store or starts a thread (forking a process with threads is
unsafe): the stores are prepared, and checked, by the test process.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import zarrkit

STORE_KINDS = ["dir", "dir-nonatomic", "sqlite", "lmdb", "dbm"]
#: stores documented to leave torn values when a writer dies mid-write
TORN_VALUES = {"dir-nonatomic"}
COPY_MARKER = ".zarrkit-copy-in-progress"


# =============================================================================================
# stores


def store_location(kind: str, folder: Path) -> Path:
    """Where a store of ``kind`` lives inside ``folder`` (each store has a folder of its own,
    so copying the folder copies the store, whatever files it is made of)."""
    return folder / {"dir": "data.zarr", "dir-nonatomic": "data.zarr", "sqlite": "data.sqlite",
                     "lmdb": "data.lmdb", "dbm": "data.dbm"}[kind]


def open_store(kind: str, folder: Path, read_only: bool = False) -> Any:
    path = store_location(kind, folder)
    if kind == "dir":
        return zarrkit.DirectoryStore(path, read_only=read_only)
    if kind == "dir-nonatomic":
        return zarrkit.DirectoryStore(path, read_only=read_only, atomic=False)
    if kind == "sqlite":
        from zarrkit.storage import SQLiteStore

        return SQLiteStore(path, read_only=read_only)
    if kind == "lmdb":
        from zarrkit.storage import LMDBStore

        return LMDBStore(path, read_only=read_only, map_size=2**26)
    import dbm.dumb

    from zarrkit.storage.dbm import DBMStore

    return DBMStore(path, flag="r" if read_only else "c", open=dbm.dumb.open)


def close_store(store: Any) -> None:
    close = getattr(store, "close", None)
    if close is not None:
        close()


def contents(store: Any) -> dict[str, bytes]:
    """Every key and value of a store."""
    return {k: bytes(store.get(k)) for k in sorted(store.list_prefix(""))}


# =============================================================================================
# scenarios: a store set up, then operations run one after the other


@dataclasses.dataclass
class Scenario:
    name: str
    setup: Callable[[Any], None]
    ops: list[tuple[str, Callable[[Any], None]]]
    view: Callable[[Any], dict[str, Any]]
    #: regions written as one value (chunks, shards) of the arrays in a view, when the views of
    #: consecutive states may be mixed region by region (an operation writing several values)
    regions: Callable[[], dict[str, list[tuple[slice, ...]]]] | None = None
    #: a view that is neither state but says so (``zarrkit cp``'s unfinished destination)
    unfinished: Callable[[dict[str, Any]], bool] | None = None


def _array_view(store: Any, path: str = "") -> dict[str, Any]:
    z = zarrkit.open_array(store, mode="r", path=path or None)
    return {f"{path}:shape": list(z.shape), f"{path}:data": z[...], f"{path}:attrs": z.attrs.asdict()}


def _resize_scenario(layout: str) -> Scenario:
    def setup(store: Any) -> None:
        shape, chunks = (12, 10), (4, 5)
        data = np.arange(120, dtype="<i4").reshape(shape) + 1
        if layout == "v2":
            z = zarrkit.create(shape=shape, chunks=chunks, dtype="<i4", zarr_format=2, store=store,
                               compressor=zarrkit.Zlib(level=1), fill_value=0)
        elif layout == "v3":
            z = zarrkit.create_array(store, shape=shape, chunks=chunks, dtype="int32", fill_value=0)
        else:
            z = zarrkit.create_array(store, shape=shape, chunks=chunks, shards=(8, 10), dtype="int32",
                                     fill_value=0)
        z[...] = data

    def arr(store: Any) -> zarrkit.Array:
        return zarrkit.open_array(store, mode="r+")

    ops = [
        ("resize (6, 10)", lambda s: arr(s).resize(6, 10)),  # shrink inside a chunk (and shard)
        ("resize (9, 7)", lambda s: arr(s).resize(9, 7)),  # grow rows, shrink columns
        ("append 5 rows", lambda s: arr(s).append(np.full((5, 7), -1, dtype="i4"))),
        ("append 3 columns", lambda s: arr(s).append(np.full((14, 3), -2, dtype="i4"), axis=1)),
    ]
    return Scenario(f"resize-append-{layout}", setup, ops, _array_view)


def _attrs_scenario(fmt: int) -> Scenario:
    def setup(store: Any) -> None:
        g = zarrkit.group(store, zarr_format=fmt)
        g.attrs["title"] = "initial"
        a = g.zeros("a", shape=(6,), chunks=(3,), dtype="i2")
        a[...] = np.arange(6)

    def a(store: Any) -> Any:
        return zarrkit.open_array(store, mode="r+", path="a")

    def delete_x(store: Any) -> None:
        del a(store).attrs["x"]

    ops = [
        ("a.attrs['x'] = 1", lambda s: a(s).attrs.__setitem__("x", 1)),
        ("a.attrs.update(...)", lambda s: a(s).attrs.update({"y": [1, 2.5, None], "z": "é"})),
        ("root.attrs.put(...)", lambda s: zarrkit.open_group(s, mode="r+").attrs.put({"title": "new", "n": 3})),
        ("del a.attrs['x']", delete_x),
        ("a.attrs.put(big)", lambda s: a(s).attrs.put({"big": "x" * 5000})),
    ]

    def view(store: Any) -> dict[str, Any]:
        return {**_array_view(store, "a"), "root:attrs": zarrkit.open_group(store, mode="r").attrs.asdict()}

    return Scenario(f"attrs-v{fmt}", setup, ops, view)


def _hierarchy(store: Any, consolidated: bool) -> dict[str, Any]:
    g = zarrkit.open_consolidated(store, mode="r") if consolidated else zarrkit.open_group(store, mode="r")
    out: dict[str, Any] = {"/": g.attrs.asdict()}
    for name, node in sorted(g.members(max_depth=None)):
        out[name] = node.attrs.asdict()
        if isinstance(node, zarrkit.Array):
            out[name + ":data"] = node[...]
    return out


def _consolidate_scenario(fmt: int) -> Scenario:
    def setup(store: Any) -> None:
        g = zarrkit.group(store, zarr_format=fmt)
        g.zeros("a", shape=(4,), chunks=(2,), dtype="u1")[...] = 1
        g.create_group("sub").full("b", shape=(3,), chunks=(3,), fill_value=2, dtype="i8")
        zarrkit.consolidate_metadata(store)

    def new_array(store: Any) -> None:
        zarrkit.open_group(store, mode="r+").full("sub/c", shape=(2,), chunks=(2,), fill_value=5, dtype="i4")

    ops = [
        ("root.attrs['round'] = 1", lambda s: zarrkit.open_group(s, mode="r+").attrs.__setitem__("round", 1)),
        ("consolidate_metadata", lambda s: zarrkit.consolidate_metadata(s)),
        ("create sub/c", new_array),
        ("consolidate_metadata again", lambda s: zarrkit.consolidate_metadata(s)),
    ]

    def view(store: Any) -> dict[str, Any]:
        return {"plain": _hierarchy(store, False), "consolidated": _hierarchy(store, True)}

    return Scenario(f"consolidate-v{fmt}", setup, ops, view)


PARTIAL_SHAPE, PARTIAL_SHARDS = (16, 12), (8, 8)


def _partial_shards_scenario() -> Scenario:
    def setup(store: Any) -> None:
        z = zarrkit.create_array(store, shape=PARTIAL_SHAPE, chunks=(4, 4), shards=PARTIAL_SHARDS,
                                 dtype="int16", fill_value=0)
        z[...] = 7

    def write(region: tuple[slice, ...], value: int) -> Callable[[Any], None]:
        def op(store: Any) -> None:
            zarrkit.open_array(store, mode="r+")[region] = value
        return op

    ops = [  # each touches parts of several shards, and parts of their inner chunks
        ("z[3:13, 2:11] = 1", write((slice(3, 13), slice(2, 11)), 1)),
        ("z[0:5, 6:12] = 2", write((slice(0, 5), slice(6, 12)), 2)),
        ("z[9:16, 0:3] = 3", write((slice(9, 16), slice(0, 3)), 3)),
        ("z[5:7, 5:7] = 4", write((slice(5, 7), slice(5, 7)), 4)),
    ]

    def regions() -> dict[str, list[tuple[slice, ...]]]:
        return {":data": [(slice(i, i + 8), slice(j, j + 8)) for i in (0, 8) for j in (0, 8)]}

    return Scenario("partial-shards", setup, ops, _array_view, regions)


def copy_source(path: Path) -> None:
    """The hierarchy ``zarrkit cp`` copies: 2 arrays, 9 chunks, attributes, consolidated."""
    g = zarrkit.open_group(str(path), mode="w", zarr_format=2)
    g.attrs["title"] = "src"
    g.array("a", np.arange(24, dtype="<i4").reshape(6, 4), chunks=(3, 2), compressor=zarrkit.Zlib(level=1))
    g.create_group("grp").array("b", np.linspace(0, 1, 9), chunks=(3,)).attrs["units"] = "m"
    zarrkit.consolidate_metadata(str(path))


def _cp_scenario() -> Scenario:
    def setup(store: Any) -> None:
        pass  # the destination does not exist yet

    def cp(store: Any) -> None:
        from zarrkit.cli import main

        src = Path(store.path).parent.parent / "src.zarr"
        code = main(["cp", str(src), store.path, "--zarr-format", "3", "--no-progress", "-q"])
        if code != 0:
            raise RuntimeError(f"zarrkit cp exited with {code}")

    def view(store: Any) -> dict[str, Any]:
        if not list(store.list_prefix("")):
            return {"absent": True}
        if store.get(COPY_MARKER) is not None:
            return {"unfinished": True}
        return {"plain": _hierarchy(store, False), "consolidated": _hierarchy(store, True)}

    return Scenario("cp", setup, [("zarrkit cp", cp)], view, unfinished=lambda v: v == {"unfinished": True})


def _create_scenario(fmt: int) -> Scenario:
    """Nodes created with their attributes: a reader sees a node with them, or no node."""

    def setup(store: Any) -> None:
        zarrkit.group(store, zarr_format=fmt)

    def create_array(store: Any) -> None:
        zarrkit.create(shape=(4,), chunks=(2,), dtype="i4", store=store, path="x", zarr_format=fmt,
                       mode="w-", attributes={"units": "K"}, fill_value=3)

    def create_group(store: Any) -> None:
        zarrkit.open_group(store, mode="r+").create_group("g", attributes={"kind": "sub"})

    def view(store: Any) -> dict[str, Any]:
        return _hierarchy(store, False)

    return Scenario(f"create-v{fmt}", setup, [("create x with attributes", create_array),
                                              ("create group g with attributes", create_group)], view)


SCENARIOS = {s.name: s for s in [
    _resize_scenario("v2"), _resize_scenario("v3"), _resize_scenario("v3-sharded"),
    _attrs_scenario(2), _attrs_scenario(3), _consolidate_scenario(2), _consolidate_scenario(3),
    _partial_shards_scenario(), _create_scenario(2), _create_scenario(3), _cp_scenario(),
]}


# =============================================================================================
# the kill trigger

_FS_EVENTS = {"os.rename", "os.remove", "os.rmdir", "os.mkdir", "os.truncate", "os.link", "os.symlink",
              "os.chmod", "shutil.rmtree", "shutil.move", "shutil.copyfile"}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_DB_CALLS = {
    "sqlite": {"Connection.execute", "Connection.executemany", "Connection.executescript",
               "Connection.commit", "Cursor.execute", "Cursor.executemany"},
    "lmdb": {"Environment.begin", "Transaction.put", "Transaction.delete", "Transaction.replace",
             "Transaction.pop", "Transaction.commit", "Cursor.put", "Cursor.putmulti", "Cursor.delete",
             "Cursor.replace", "Cursor.pop"},
}


class Trigger:
    """Counts the changes of one store; SIGKILLs the process before change ``kill_at``."""

    def __init__(self, kind: str, root: Path, kill_at: int):
        self.kind = kind
        self.root = str(root)
        self.kill_at = kill_at
        self.changes = 0
        self.armed = False
        if kind in _DB_CALLS:
            mon = sys.monitoring
            mon.use_tool_id(mon.DEBUGGER_ID, "kill-points")
            mon.register_callback(mon.DEBUGGER_ID, mon.events.CALL, self._call)
            mon.set_events(mon.DEBUGGER_ID, mon.events.CALL)
        else:
            sys.addaudithook(self._audit)

    def change(self) -> None:
        if not self.armed:
            return
        self.changes += 1
        if self.changes == self.kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

    def _ours(self, path: Any, dir_fd: Any = None) -> bool:
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if isinstance(path, os.PathLike):
            path = os.fspath(path)
        if not isinstance(path, str):
            return False
        if not os.path.isabs(path):
            return dir_fd is not None  # a name in a directory opened by fd: removals in a tree
        return path.startswith(self.root)

    def _audit(self, event: str, args: tuple) -> None:
        if not self.armed:
            return
        if event == "open":
            path, mode, flags = (tuple(args) + (None, None, None))[:3]
            writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and flags & _WRITE_FLAGS)
            if writes and self._ours(path):
                self.change()
        elif event in _FS_EVENTS and args and self._ours(args[0], args[-1] if len(args) > 1 else None):
            self.change()

    def _call(self, code: Any, offset: int, callable_: Any, arg0: Any) -> Any:
        if self.armed and getattr(callable_, "__qualname__", None) in _DB_CALLS[self.kind]:
            self.change()
        return None


# =============================================================================================
# the writer and the driver


def run_writer(kind: str, scenario: Scenario, folder: Path, kill_at: int, acks: int) -> None:
    """In a forked child: run the operations, acknowledging each on fd ``acks``."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # what the operations print (zarrkit cp) does not mix with the driver's
    trigger = Trigger(kind, folder, kill_at)
    try:
        for i, (_label, op) in enumerate(scenario.ops):
            store = open_store(kind, folder)
            trigger.armed = True
            op(store)
            flush = getattr(store, "flush", None)
            if kind == "dbm" and flush is not None:
                flush()  # DBMStore keeps changes in memory until flushed: that is its ack
            trigger.armed = False
            close_store(store)
            os.write(acks, f"ack {i}\n".encode())
        os.write(acks, f"done {trigger.changes}\n".encode())
    except BaseException as exc:  # noqa: BLE001 - reported to the driver
        os.write(acks, f"error {type(exc).__name__}: {exc}\n".encode()[:2000])
        os._exit(1)
    os._exit(0)


def drive(args: dict[str, Any]) -> None:
    kind, scenario = args["kind"], SCENARIOS[args["scenario"]]
    root = Path(args["root"])
    pristine = root / "pristine"
    todo, total = [0], None
    while todo:
        kill_at = todo.pop(0)
        folder = root / f"k{kill_at}"
        if folder.exists():
            shutil.rmtree(folder)
        shutil.copytree(pristine, folder, symlinks=True)
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_end)
            run_writer(kind, scenario, folder, kill_at, write_end)
        os.close(write_end)
        with os.fdopen(read_end, "rb") as f:
            lines = f.read().decode(errors="replace").splitlines()
        _, status = os.waitpid(pid, 0)
        killed = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
        errors = [ln for ln in lines if ln.startswith("error")]
        done = [int(ln.split()[1]) for ln in lines if ln.startswith("done")]
        if kill_at == 0:
            if errors or not done:
                print(json.dumps({"kill_at": 0, "error": errors or lines}), flush=True)
                return
            total = done[0]
            todo = kill_points(total, args.get("max_points"))
        print(json.dumps({
            "kill_at": kill_at, "path": str(folder), "acks": sum(ln.startswith("ack") for ln in lines),
            "killed": killed, "changes": done[0] if done else None, "error": errors,
        }), flush=True)


def kill_points(total: int, most: int | None) -> list[int]:
    """Every point 1..total, or ``most`` of them spread evenly (the first and the last among
    them)."""
    if most is None or total <= most:
        return list(range(1, total + 1))
    step = (total - 1) / (most - 1)
    return sorted({1 + round(i * step) for i in range(most)})


if __name__ == "__main__":
    drive(json.loads(sys.argv[1]))
