"""One atomic writer for every local path: DirectoryStore and FsspecStore over local files write
through the same temporary files, so a writer of either killed mid-write leaves a temporary
file that the orphan clean-up removes as soon as its process is gone."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from zarrkit.storage import DirectoryStore
from zarrkit.storage.fileio import HOST, TEMP_MARKER, temp_name, temp_owner

SRC = Path(__file__).resolve().parents[2] / "src"

#: a writer that dies in the middle of writing its value's bytes (after the temporary file
#: is made, before the rename)
_KILLED_WRITER = textwrap.dedent(
    """
    import os, sys
    import zarrkit.storage.fileio as fileio

    def dying(fd, parts):
        os.write(fd, bytes(parts[0][:3]))
        os._exit(9)

    fileio.write_all = dying
    if sys.argv[1] == "fsspec":
        from zarrkit.storage.fsspec import FsspecStore
        store = FsspecStore("file://" + sys.argv[2])
    else:
        from zarrkit.storage import DirectoryStore
        store = DirectoryStore(sys.argv[2])
    store["a/b/c"] = b"new value"
    """
)


def _kill_a_writer(kind: str, root: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", _KILLED_WRITER, kind, str(root)], check=False, env=env,
                          timeout=120)
    assert proc.returncode == 9


def _temps(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob(f"{TEMP_MARKER}*"))


def test_temporary_names_carry_the_writer():
    name = temp_name()
    assert name.startswith(TEMP_MARKER)
    assert temp_owner(name) == (HOST, str(os.getpid()))
    assert temp_name() != name


@pytest.mark.parametrize("kind", ["fsspec", "directory"])
def test_the_orphan_of_a_killed_local_writer_is_removed_at_once(tmp_path, kind):
    if kind == "fsspec":
        pytest.importorskip("fsspec")
    root = tmp_path / "d"
    DirectoryStore(root)["a/b/old"] = b"old"
    _kill_a_writer(kind, root)
    (orphan,) = _temps(root)
    assert orphan.parent == root / "a" / "b" and orphan.read_bytes() == b"new"
    host, pid = temp_owner(orphan.name)
    assert host == HOST and pid.isdigit() and int(pid) != os.getpid()
    # the writer's process is gone: no waiting for the age limit of other hosts' files
    assert sorted(DirectoryStore(root, read_only=True).list_prefix("")) == ["a/b/old"]
    assert DirectoryStore(root).remove_orphaned_temp_files() == 1
    assert _temps(root) == []
    assert DirectoryStore(root)["a/b/old"] == b"old"


def test_fsspec_local_writes_leave_no_temporary_file(tmp_path):
    pytest.importorskip("fsspec")
    from zarrkit.storage.fsspec import FsspecStore

    store = FsspecStore("file://" + str(tmp_path / "d"))
    store["x/y"] = b"1"
    store["x/y"] = memoryview(b"22")
    store["z"] = b""
    assert store["x/y"] == b"22" and store["z"] == b""
    assert _temps(tmp_path) == []
