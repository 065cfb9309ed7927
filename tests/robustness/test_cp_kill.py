"""``zarrkit cp`` and ``zarrkit consolidate`` killed with SIGKILL, for real, in subprocesses.

* ``cp`` of a consolidated hierarchy with hundreds of chunks is killed several times once some
  chunks are in the destination (polled), then run again until it completes: the destination
  holds exactly the keys and bytes of an uninterrupted copy (consolidated metadata included,
  no marker left), for a directory and for a zip file.
* ``consolidate`` of a hierarchy of hundreds of nodes is killed at random moments: the
  consolidated document is always whole, the previous one or the new one, and running the
  command again writes the new one.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import zarrkit
from zarrkit.storage.zip import APPEND_MARKER

pytestmark = pytest.mark.slow

SRC = Path(__file__).resolve().parent.parent.parent / "src"
MARKER = ".zarrkit-copy-in-progress"
A = np.arange(120 * 100, dtype="<i4").reshape(120, 100)
B = np.linspace(-1, 1, 90 * 40).reshape(90, 40)


def env() -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if not k.startswith("ZARRKIT_")}
    e["PYTHONPATH"] = os.pathsep.join([str(SRC), e.get("PYTHONPATH", "")])
    return e


def cli(*args: object, extra: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "zarrkit", *map(str, args)], env={**env(), **(extra or {})},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def finish(proc: subprocess.Popen) -> tuple[int, str]:
    out, err = proc.communicate(timeout=300)
    return proc.returncode, out.decode() + err.decode()


def source(path: Path) -> None:
    """/a 120 chunks (v2, zlib), /grp/b 60 chunks, attributes, consolidated."""
    root = zarrkit.open_group(str(path), mode="w", zarr_format=2)
    root.attrs["title"] = "src"
    root.array("a", A, chunks=(10, 10), compressor=zarrkit.Zlib(level=1))
    b = root.create_group("grp").array("b", B, chunks=(9, 8))
    b.attrs["units"] = "m"
    zarrkit.consolidate_metadata(str(path))


def contents(path: Path) -> dict[str, bytes]:
    store = zarrkit.ZipStore(path, mode="r") if path.suffix == ".zip" else zarrkit.DirectoryStore(path, read_only=True)
    try:
        return {k: bytes(store[k]) for k in store.list_prefix("")}
    finally:
        store.close()


def chunk_count(dst: Path) -> int:
    if dst.suffix == ".zip":
        # the partial zip, or the new archive a ZipStore in mode 'a' writes beside it until it
        # renames it over the partial one: it grows as chunks go in
        partial = Path(str(dst) + ".partial")
        growing = [partial, *partial.parent.glob(f".{partial.name}{APPEND_MARKER}*")]
        return max((p.stat().st_size for p in growing if p.exists()), default=0) // 400
    return sum(1 for p in dst.rglob("*") if p.is_file() and not p.name.startswith((".z", "zarr.json", MARKER)))


@pytest.mark.parametrize("dest", ["dst.zarr", "dst.zip"])
def test_cp_killed_repeatedly_then_resumed_equals_uninterrupted(tmp_path, dest):
    src = tmp_path / "src.zarr"
    source(src)
    ref = tmp_path / ("ref" + Path(dest).suffix)
    code, out = finish(cli("cp", src, ref, "--zarr-format", "3"))
    assert code == 0, out
    expected = contents(ref)
    assert "zarr.json" in expected and "consolidated_metadata" in json.loads(expected["zarr.json"])
    dst = tmp_path / dest
    kills = 0
    for threshold in (5, 60, 130):
        proc = cli("cp", src, dst, "--zarr-format", "3", extra={"ZARRKIT_CP_THROTTLE": "0.004"})
        deadline = time.monotonic() + 120
        while chunk_count(dst) < threshold and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        code, out = finish(proc)
        assert code in (-signal.SIGKILL, 0), out
    assert kills >= 2
    if dst.suffix != ".zip":
        assert (dst / MARKER).exists()  # unfinished: it says so
    code, out = finish(cli("cp", src, dst, "--zarr-format", "3"))
    assert code == 0, out
    assert "resumed" in out or dst.suffix == ".zip"  # a zip torn by the kill is started over
    assert contents(dst) == expected  # every key and byte of the uninterrupted copy
    root = zarrkit.open_consolidated(str(dst))
    np.testing.assert_array_equal(root["a"][...], A)
    np.testing.assert_array_equal(root["grp/b"][...], B)
    code, out = finish(cli("verify", dst))
    assert code == 0, out


def test_consolidate_killed_at_random_moments_leaves_a_whole_document(tmp_path):
    path = tmp_path / "many.zarr"
    root = zarrkit.open_group(str(path), mode="w", zarr_format=2)
    for i in range(150):
        root.create_group(f"g{i}").zeros("x", shape=(4,), chunks=(2,))
    rng = random.Random(7)
    code, out = finish(cli("consolidate", path))
    assert code == 0, out
    zmeta = path / ".zmetadata"
    started = time.monotonic()
    code, out = finish(cli("consolidate", path))
    duration = time.monotonic() - started
    seen = {"old": 0, "new": 0}
    for round_ in range(8):
        old = zmeta.read_bytes()
        root.attrs["round"] = round_  # the next document differs from the stored one
        expected = tmp_path / f"expected-{round_}.zarr"
        shutil.copytree(path, expected)
        zarrkit.consolidate_metadata(str(expected))
        new = (expected / ".zmetadata").read_bytes()
        assert new != old
        proc = cli("consolidate", path)
        time.sleep(rng.uniform(0.3, 1.0) * duration)
        proc.send_signal(signal.SIGKILL)
        finish(proc)
        now = zmeta.read_bytes()
        assert now in (old, new)  # whole: the previous document or the new one
        seen["old" if now == old else "new"] += 1
        json.loads(now)
        assert sorted(zarrkit.DirectoryStore(path, read_only=True).list_dir("")) == sorted(
            [".zattrs", ".zgroup", ".zmetadata", *(f"g{i}" for i in range(150))]
        )  # a temporary file the kill left is not a key
        code, out = finish(cli("consolidate", path))
        assert code == 0, out
        assert zmeta.read_bytes() == new
        shutil.rmtree(expected)
    assert seen["old"] + seen["new"] == 8
