"""Conditional writes on object storage (a moto S3 server on 127.0.0.1), through obstore
(:class:`~zarrkit.storage.ObjectStore`) and s3fs (:class:`~zarrkit.storage.FsspecStore`):

* several processes, each with several threads, incrementing one counter object with
  ``get_versioned``/``set_if`` retry loops lose no increment (the server answers one request
  at a time, as atomic as S3: see ``moto_s3.Recorder.serial``);
* a conditional PUT whose answer is lost (a proxy closes the connection after the server
  stored it) is retried by the client, fails its condition against itself, and is still
  reported as the success it was;
* a sharded array read through fsspec on S3 while another process rewrites its shard gives
  one version of the shard at every read, never a mix of two.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("obstore")
from moto_s3 import BUCKET
from obstore.store import S3Store

import zarrkit
from zarrkit.errors import VersionConflictError
from zarrkit.storage import FsspecStore, ObjectStore
from zarrkit.storage.base import ABSENT

SRC = str(Path(__file__).resolve().parents[2] / "src")
HERE = str(Path(__file__).resolve().parent)


def _uid() -> str:
    return uuid.uuid4().hex[:12]


def _obstore(endpoint: str, prefix: str) -> ObjectStore:
    return ObjectStore(S3Store(BUCKET, prefix=prefix, endpoint=endpoint, region="us-east-1",
                               access_key_id="testing", secret_access_key="testing",
                               client_options={"allow_http": True}))


def _fsspec(endpoint: str, prefix: str) -> FsspecStore:
    options = {"key": "testing", "secret": "testing", "client_kwargs": {"endpoint_url": endpoint},
               "skip_instance_cache": True}
    return FsspecStore(f"s3://{BUCKET}/{prefix}", storage_options=options)


def _make(kind: str, endpoint: str, prefix: str):
    return (_obstore if kind == "obstore" else _fsspec)(endpoint, prefix)


def _run(script: str, *args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([SRC, HERE])}
    return subprocess.Popen([sys.executable, "-c", script, *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


# -- counters ---------------------------------------------------------------------------------

COUNTER = """
import os, random, sys, threading, time
from test_object_conditional import _make
from zarrkit.errors import VersionConflictError
kind, endpoint, prefix, flags, me, threads, rounds = sys.argv[1:8]
store = _make(kind, endpoint, prefix)
conflicts = []
open(os.path.join(flags, f"ready-{me}"), "w").close()
while not os.path.exists(os.path.join(flags, "go")):
    time.sleep(0.01)

def add():
    for _ in range(int(rounds)):
        tries = 0
        while True:
            value, version = store.get_versioned("n")
            try:
                store.set_if("n", str(int(bytes(value)) + 1).encode(), version)
                break
            except VersionConflictError:
                conflicts.append(1)
                time.sleep(random.uniform(0, 0.01 * 2 ** min(tries, 3)))  # jittered backoff
                tries += 1

workers = [threading.Thread(target=add) for _ in range(int(threads))]
for w in workers: w.start()
for w in workers: w.join()
print(len(conflicts))
"""


@pytest.mark.parametrize("kind", ["obstore", "fsspec"])
def test_processes_and_threads_lose_no_increment(s3, tmp_path, kind):
    processes, threads, rounds = 3, 2, 20
    prefix = _uid()
    store = _make(kind, s3.endpoint, prefix)
    store.set_if("n", b"0", ABSENT)
    procs = [_run(COUNTER, kind, s3.endpoint, prefix, str(tmp_path), str(i), str(threads), str(rounds))
             for i in range(processes)]
    deadline = time.monotonic() + 30
    while len(list(tmp_path.glob("ready-*"))) < processes and time.monotonic() < deadline:
        if any(p.poll() is not None for p in procs):
            break
        time.sleep(0.02)
    (tmp_path / "go").touch()
    outs = [p.communicate(timeout=60) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
    assert int(store.get("n")) == processes * threads * rounds
    assert sum(int(out) for out, _ in outs) > 0  # the writers did meet


# -- lost answers -----------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["obstore", "fsspec"])
def test_a_retry_after_a_lost_answer_is_our_own_write(s3, s3_faulty, kind):
    prefix = _uid()
    store = _make(kind, s3_faulty.endpoint, prefix)
    direct = _make(kind, s3.endpoint, prefix)

    s3_faulty.drop = 1  # the create is stored, its answer lost: the retry finds the object
    created = store.set_if("k", b"one", ABSENT)
    assert len(s3_faulty.dropped) == 1
    value, version = direct.get_versioned("k")
    assert bytes(value) == b"one" and version == created

    s3_faulty.drop = 1  # the same for a replace: the retry finds the ETag changed
    replaced = store.set_if("k", b"two", created)
    assert len(s3_faulty.dropped) == 2
    value, version = direct.get_versioned("k")
    assert bytes(value) == b"two" and version == replaced

    # another writer's change is still a conflict, answer lost or not
    direct.set("k", b"theirs")
    s3_faulty.drop = 1
    with pytest.raises(VersionConflictError):
        store.set_if("k", b"three", replaced)
    assert direct.get("k") == b"theirs"
    with pytest.raises(VersionConflictError):
        store.set_if("k", b"four", ABSENT)
    assert direct.get("k") == b"theirs"


# -- torn shard reads -------------------------------------------------------------------------

SHAPE, INNER = 8 * 1024, 1024  # one shard of 8 inner chunks of 1 KiB

WRITER = """
import os, sys, time
import numpy as np
import zarrkit
from test_object_conditional import _fsspec, version
endpoint, prefix, flags, seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
z = zarrkit.open_array(_fsspec(endpoint, prefix), mode="r+", write_empty_chunks=False)
values = [version(1), version(2)]
open(os.path.join(flags, "started"), "w").close()
k, end = 0, time.monotonic() + seconds
while time.monotonic() < end and not os.path.exists(os.path.join(flags, "stop")):
    z[:] = values[k % 2]
    k += 1
    time.sleep(0.03)
print(k)
"""


def version(k: int) -> np.ndarray:
    """Version 1: every element 1.  Version 2: 2, but the first inner chunk holds the fill
    value (0: not stored), so every other chunk sits one chunk earlier in the shard: an index
    of one version read with the bytes of the other shows as mixed values or an error."""
    a = np.full(SHAPE, k, dtype="u1")
    if k == 2:
        a[:INNER] = 0
    return a


def test_sharded_reads_through_fsspec_on_s3_see_one_version(s3, tmp_path):
    prefix = _uid()
    store = _fsspec(s3.endpoint, prefix)
    z = zarrkit.create_array(store, shape=(SHAPE,), chunks=(INNER,), shards=(SHAPE,), dtype="u1",
                             fill_value=0, compressors=None, zarr_format=3)
    z[:] = version(1)
    writer = _run(WRITER, s3.endpoint, prefix, str(tmp_path), "20")
    deadline = time.monotonic() + 20
    while not (tmp_path / "started").exists() and writer.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    one, two = version(1), version(2)
    reader = zarrkit.open_array(_fsspec(s3.endpoint, prefix), mode="r")
    seen = {1: 0, 2: 0}
    mixed, errors = 0, []
    try:
        for _ in range(200):
            try:
                a = reader[:]
            except Exception as exc:  # noqa: BLE001 - a torn read can fail to decode
                errors.append(f"{type(exc).__name__}: {exc}")
                continue
            if np.array_equal(a, one):
                seen[1] += 1
            elif np.array_equal(a, two):
                seen[2] += 1
            else:
                mixed += 1
    finally:
        (tmp_path / "stop").touch()
        out, err = writer.communicate(timeout=30)
    assert writer.returncode == 0, err
    assert int(out) > 20, "the writer barely ran"
    assert (mixed, errors) == (0, [])
    assert seen[1] and seen[2]  # the reads did see both versions
