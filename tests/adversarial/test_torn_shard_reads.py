"""Readers see a version of a shard, not a mix: while another process rewrites a sharded array
(each shard replaced atomically: a temporary file renamed over it), a reader gets every shard
as one of its versions -- never an index of one version with chunk bytes of the next (a decode
error, or chunks of two iterations side by side): on a directory (one version of a file held
open for a read of it), through obstore (reads made ``If-Match`` the first one's ETag), and
through fsspec (no version can be held: a read that fails while the shard's index changed is
made again).

Iteration ``k`` of a writer stores ``k`` in every element, except that on odd ``k`` the first
inner chunk of each shard holds the fill value (not stored, so every other chunk moves): a
mixed read shows as a decode error or as two different non-zero values in one shard.
"""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import time
from pathlib import Path

import numcodecs
import numpy as np
import pytest

import zarrkit

SRC = Path(__file__).resolve().parent.parent.parent / "src"
READ_SECONDS = 1.5

WRITER = """
import os, sys, time
import numpy as np
import zarrkit
path, n, shards, inner, seconds = sys.argv[1], *map(int, sys.argv[2:5]), float(sys.argv[5])
z = zarrkit.open_array(zarrkit.DirectoryStore(path), mode="r+")
open(os.path.join(path, "started"), "w").close()
k, end = 2, time.monotonic() + seconds
while time.monotonic() < end and not os.path.exists(os.path.join(path, "stop")):
    z[:] = version(k, n, shards, inner)
    k += 1
print(k - 2)
"""


def version(k: int, n: int, shards: int, inner: int) -> np.ndarray:
    a = np.full(n, float(k))
    if k % 2:
        a.reshape(shards, -1)[:, :inner] = 0  # the fill value: the first inner chunk not stored
    return a


def mixed_shards(a: np.ndarray, shards: int) -> int:
    return sum(len(set(s[s != 0].tolist())) > 1 for s in a.reshape(shards, -1))


def read_while_rewritten(z: zarrkit.Array, shards: int, seconds: float) -> tuple[int, list[str], int]:
    """Read ``z`` whole again and again for ``seconds``: (reads, errors, mixed shards)."""
    reads, errors, mixed = 0, [], 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            a = z[:]
        except zarrkit.errors.ChunkDecodeError as exc:
            errors.append(str(exc))
            continue
        reads += 1
        mixed += mixed_shards(a, shards)
    return reads, errors, mixed


def open_reader(kind: str, path: str) -> zarrkit.Array:
    if kind == "directory":
        return zarrkit.open_array(zarrkit.DirectoryStore(path), mode="r")
    if kind == "fsspec":
        from zarrkit.storage.fsspec import FsspecStore

        return zarrkit.open_array(FsspecStore("file://" + path), mode="r")
    obstore = pytest.importorskip("obstore")
    from zarrkit.storage.obstore import ObjectStore

    return zarrkit.open_array(ObjectStore(obstore.store.LocalStore(path)), mode="r")


@pytest.mark.parametrize("reader_store,shards,per,inner", [
    pytest.param("directory", 16, 16, 8, id="directory-small-inner-chunks-read-together"),
    pytest.param("directory", 4, 16, 8192, id="directory-large-inner-chunks-read-each-on-its-own"),
    pytest.param("obstore", 16, 16, 8, id="obstore-if-match"),
    pytest.param("fsspec", 16, 16, 8, id="fsspec-read-again"),
])
def test_a_reader_sees_whole_versions_of_shards_rewritten_by_another_process(
    tmp_path, reader_store, shards, per, inner
):
    n = shards * per * inner
    path = str(tmp_path / "a.zarr")
    z = zarrkit.create_array(zarrkit.DirectoryStore(path), shape=(n,), chunks=(inner,), shards=(per * inner,),
                             dtype="f8", compressors=[numcodecs.Zstd(1)], fill_value=0)
    z[:] = 1
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]))
    # the writer stores the versions this test checks for
    code = WRITER.replace("import zarrkit\n", "import zarrkit\n" + inspect.getsource(version), 1)
    writer = subprocess.Popen(
        [sys.executable, "-c", code, path, str(n), str(shards), str(inner), str(READ_SECONDS + 10)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        deadline = time.monotonic() + 10
        while not os.path.exists(os.path.join(path, "started")) and writer.poll() is None:
            assert time.monotonic() < deadline, "the writer did not start"
            time.sleep(0.01)
        reader = open_reader(reader_store, path)
        reads, errors, mixed = read_while_rewritten(reader, shards, READ_SECONDS)
    finally:
        open(os.path.join(path, "stop"), "w").close()
        out, err = writer.communicate(timeout=30)
    assert writer.returncode == 0, err[-2000:]
    rewrites = int(out.strip())
    assert rewrites > 10 and reads > 5, (rewrites, reads)  # the race was run
    assert errors == [] and mixed == 0, (len(errors), mixed, reads, errors[:3])
