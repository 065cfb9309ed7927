"""``python _kill_driver.py JSON``: one operation of :mod:`_kill_ops`, SIGKILLed before each
change it makes to the store, once per change.

For ``kill_at`` = 0 (never: the uninterrupted run, which reports how many changes it makes),
then each kill point, the driver forks a writer that copies the pristine store to a place of
its own (``<root>/k<n>`` or the S3 prefix ``<prefix>/k<n>``), opens it, and runs the
operation with a trigger armed that SIGKILLs it just before its ``kill_at``-th change.  It
prints one JSON line per run: ``{"kill_at", "where", "killed", "changes", "error"}``.

Changes are counted where they leave the process, as tests/adversarial/_kill_worker.py
counts them -- each file-system event that modifies the directory store, each SQLite or LMDB
call that may write -- and, on object storage, each call of obstore that writes (``put``,
``delete``, ``copy``, ``rename``: one request each), each S3 request of s3fs that writes,
and on Redis each command sent (reads included: the server's scripts write).  The driver opens no store and starts no
thread before it forks (the writers do).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]
from _kill_ops import OPS
from _kill_worker import Trigger, kill_points
from _stores import close_store, open_store


#: where each remote kind's requests leave the process
REMOTE = {"obstore-s3", "fsspec-s3", "redis"}
_S3_WRITES = {"put_object", "delete_object", "delete_objects", "copy_object", "upload_part",
              "create_multipart_upload", "complete_multipart_upload"}


class RequestTrigger(Trigger):
    """:class:`Trigger` counting the requests of a remote store that may write: the calls of
    obstore that write an object, the S3 requests of s3fs that write, Redis commands."""

    def __init__(self, kind: str, kill_at: int):
        self.kill_at, self.changes, self.armed = kill_at, 0, False
        if kind == "obstore-s3":
            import obstore

            writes = {id(getattr(obstore, n)) for n in ("put", "put_async", "delete", "delete_async",
                                                        "copy", "copy_async", "rename", "rename_async")}
            self.writes = lambda callable_, arg0: id(callable_) in writes  # (some are unhashable)
        elif kind == "fsspec-s3":
            self.writes = lambda callable_, arg0: (
                getattr(callable_, "__qualname__", None) == "S3FileSystem._call_s3" and arg0 in _S3_WRITES)
        else:
            self.writes = lambda callable_, arg0: (
                getattr(callable_, "__qualname__", None) == "AbstractConnection.send_packed_command")
        mon = sys.monitoring
        mon.use_tool_id(mon.DEBUGGER_ID, "kill-points")
        mon.register_callback(mon.DEBUGGER_ID, mon.events.CALL, self._request)
        mon.set_events(mon.DEBUGGER_ID, mon.events.CALL)

    def _request(self, code: Any, offset: int, callable_: Any, arg0: Any) -> Any:
        if self.armed and self.writes(callable_, arg0):
            self.change()
        return None


def place(args: dict, kill_at: int) -> dict[str, Any]:
    """The spec of the store of run ``kill_at`` (``pristine`` for the one to copy)."""
    kind = args["kind"]
    name = "pristine" if kill_at < 0 else f"k{kill_at}"
    if kind in ("obstore-s3", "fsspec-s3"):
        return {"kind": kind, "endpoint": args["endpoint"], "prefix": f"{args['prefix']}/{name}"}
    if kind == "redis":
        return {"kind": kind, "url": args["url"], "prefix": f"{args['prefix']}/{name}"}
    file = {"directory": "data.zarr", "sqlite": "data.sqlite", "lmdb": "data.lmdb"}[kind]
    return {"kind": kind, "path": str(Path(args["root"]) / name / file)}


def writer(args: dict, kill_at: int, acks: int) -> None:
    kind, op = args["kind"], OPS[args["op"]]
    spec = place(args, kill_at)
    try:
        if kind in REMOTE:
            src, dst = open_store(place(args, -1)), open_store(spec)
            for key in src.list_prefix(""):
                dst.set(key, src.get(key))
            close_store(src)
            close_store(dst)
            trigger: Trigger = RequestTrigger(kind, kill_at)
        else:
            folder = Path(spec["path"]).parent
            shutil.copytree(Path(args["root"]) / "pristine", folder, symlinks=True)
            trigger = Trigger({"directory": "dir"}.get(kind, kind), folder, kill_at)
        store = open_store(spec)
        trigger.armed = True
        op.op(store)
        trigger.armed = False
        close_store(store)
        os.write(acks, f"done {trigger.changes}\n".encode())
    except BaseException as exc:  # noqa: BLE001 - reported to the driver
        os.write(acks, f"error {type(exc).__name__}: {exc}\n".encode()[:2000])
        os._exit(1)
    os._exit(0)


def drive(args: dict) -> None:
    todo = [0]
    while todo:
        kill_at = todo.pop(0)
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_end)
            writer(args, kill_at, write_end)
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
            todo = kill_points(done[0], args.get("max_points"))
        print(json.dumps({"kill_at": kill_at, "where": place(args, kill_at), "killed": killed,
                          "changes": done[0] if done else None, "error": errors}), flush=True)


if __name__ == "__main__":
    drive(json.loads(sys.argv[1]))
