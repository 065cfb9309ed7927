"""Fixtures of the concurrency suite: the servers of tests/stores (the moto S3 server ``s3``,
the ``redis_url`` of a redis-server of the session), a store of each kind (``spec``), and
``run``, which runs a workload on it -- in processes of their own, or, for a store that
cannot be shared across processes, in threads of this one."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
STORES_TESTS = HERE.parent.parent / "stores"
SRC = HERE.parents[2] / "src"
for _p in (str(HERE), str(STORES_TESTS)):
    if _p not in sys.path:
        sys.path.insert(0, _p)

from _stores import IN_PROCESS, KINDS
from _workers import merge_outputs, run_threads
from test_kv_stores import redis_url  # noqa: F401  (the session's redis-server)

_spec = importlib.util.spec_from_file_location("_stores_conftest", STORES_TESTS / "conftest.py")
_stores_conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_stores_conftest)
s3 = _stores_conftest.s3  # the session's moto S3 server (one request at a time, as S3)

#: the suite's shape: 4 processes x 2 threads (8 threads of one process for a memory store)
PROCESSES, THREADS = 4, 2


@pytest.fixture(params=KINDS)
def kind(request) -> str:
    return request.param


@pytest.fixture
def spec(kind, request, tmp_path) -> dict[str, Any]:
    """A new, empty store of ``kind``: its spec (``store`` too, for the in-process kinds)."""
    if kind == "memory":
        import zarrkit

        return {"kind": kind, "store": zarrkit.MemoryStore()}
    if kind == "obstore-memory":
        pytest.importorskip("obstore")
        from obstore.store import MemoryStore

        from zarrkit.storage import ObjectStore

        return {"kind": kind, "store": ObjectStore(MemoryStore())}
    if kind == "directory":
        return {"kind": kind, "path": str(tmp_path / "data.zarr")}
    if kind == "sqlite":
        return {"kind": kind, "path": str(tmp_path / "data.sqlite")}
    if kind == "lmdb":
        pytest.importorskip("lmdb")
        return {"kind": kind, "path": str(tmp_path / "data.lmdb")}
    if kind == "redis":
        pytest.importorskip("redis")
        return {"kind": kind, "url": request.getfixturevalue("redis_url"),
                "prefix": f"conc-{uuid.uuid4().hex[:12]}"}
    pytest.importorskip("obstore" if kind == "obstore-s3" else "s3fs")
    server = request.getfixturevalue("s3")
    return {"kind": kind, "endpoint": server.endpoint, "prefix": f"conc-{uuid.uuid4().hex[:12]}"}


def store_of(spec: dict[str, Any]) -> Any:
    """A store object of ``spec`` for the test process (the in-process store itself)."""
    if spec["kind"] in IN_PROCESS:
        return spec["store"]
    from _stores import open_store

    return open_store(spec)


def run_workload(spec: dict[str, Any], op: str, params: dict, tmp_path: Path,
                 timeout: float = 240) -> dict[str, Any]:
    """Run ``op`` with every writer of the suite on the store of ``spec``; what they did."""
    if spec["kind"] in IN_PROCESS:
        writers = PROCESSES * THREADS
        return run_threads(spec["store"], op, 0, writers, writers, params)
    flags = tmp_path / f"flags-{uuid.uuid4().hex[:8]}"
    flags.mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), str(HERE), str(STORES_TESTS)])}
    wire = {k: v for k, v in spec.items() if k != "store"}
    procs = [
        subprocess.Popen(
            [sys.executable, str(HERE / "_workers.py"), json.dumps({
                "spec": wire, "op": op, "wid": w, "threads": THREADS,
                "writers": PROCESSES * THREADS, "params": params, "flags": str(flags)})],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        for w in range(PROCESSES)
    ]
    try:
        deadline = time.monotonic() + 120
        while len(list(flags.glob("ready-*"))) < PROCESSES:
            if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                break
            time.sleep(0.005)
        (flags / "go").touch()
        outs = [p.communicate(timeout=timeout) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.communicate()
    bad = [(p.returncode, err[-3000:]) for p, (_, err) in zip(procs, outs) if p.returncode != 0]
    assert not bad, f"writer processes failed: {bad}"
    return merge_outputs([json.loads(out.strip().splitlines()[-1]) for out, _ in outs])
