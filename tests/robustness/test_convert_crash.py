"""``convert`` and ``consolidate_metadata`` killed with SIGKILL at every write or delete.

A forked child runs the operation on a DirectoryStore through :class:`KillingStore`, which
SIGKILLs the process when it is about to make its (N+1)-th change, for every N from 0 to the
number of changes the whole operation makes.  After each kill:

* the hierarchy reads correctly: zarrkit (which prefers ``zarr.json``), zarrkit through the
  consolidated metadata when the hierarchy was consolidated, and zarr-python (which takes a
  group's format for its members) all read every array equal to the NumPy original;
* ``zarrkit verify`` exits 1 naming the node when one holds both formats' documents;
* running the same ``zarrkit convert`` command again exits 0 and leaves exactly the keys and
  bytes an uninterrupted conversion leaves (consolidated metadata included).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from _crash_ops_worker import KillingStore

import zarrkit
from zarrkit.cli import main
from zarrkit.errors import ZarrkitError

zarr = pytest.importorskip("zarr")

pytestmark = [
    pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork"),
    # the forked child only touches files and exits at once: no lock of another thread is used
    pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning"),
]

A = np.arange(8 * 6, dtype="<i4").reshape(8, 6)
B = np.linspace(0, 1, 7 * 5).reshape(7, 5)
C = np.arange(10, dtype="u2")
ARRAYS = {"a": A, "grp/b": B, "grp/sub/c": C}


def build(path: Path, zarr_format: int, consolidated: bool) -> None:
    """/a (C order), /grp/b (F order, zlib), /grp/sub/c ('/' chunk keys), attributes on every
    node; v3 made by converting v2 (the 'v2' chunk key encoding, convertible back);
    consolidated: /grp and the root both."""
    store = zarrkit.DirectoryStore(path)
    root = zarrkit.group(store, zarr_format=2)
    root.attrs["title"] = "root"
    root.array("a", A, chunks=(3, 4))
    grp = root.create_group("grp")
    grp.attrs["level"] = 1
    b = grp.create_dataset("b", shape=B.shape, chunks=(2, 3), dtype=B.dtype, order="F",
                           compressor=zarrkit.Zlib(level=1), fill_value=-1.0)
    b[:] = B
    b.attrs["units"] = "m"
    sub = grp.create_group("sub")
    c = sub.create_dataset("c", shape=C.shape, chunks=(3,), dtype=C.dtype, dimension_separator="/")
    c[:] = C
    if zarr_format == 3:
        zarrkit.convert(store, zarr_format=3)
    if consolidated:
        zarrkit.consolidate_metadata(store, path="grp")
        zarrkit.consolidate_metadata(store)


def snapshot(path: Path) -> dict[str, bytes]:
    store = zarrkit.DirectoryStore(path, read_only=True)
    return {k: store[k] for k in store.list_prefix("")}


def run_killed(op, path: Path, limit: int | None) -> int:
    """Run ``op(store)`` in a forked child over ``KillingStore(DirectoryStore(path), limit)``;
    returns how many changes it made (from the child's exit status when it finished)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 1
        try:
            os.close(r)
            store = KillingStore(zarrkit.DirectoryStore(path), limit)
            op(store)
            os.write(w, str(store.changes).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    with os.fdopen(r) as f:
        out = f.read()
    _, status = os.waitpid(pid, 0)
    if limit is not None and os.WIFSIGNALED(status):
        assert os.WTERMSIG(status) == signal.SIGKILL
        return limit
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    return int(out)


def check_readable(path: Path, consolidated: bool) -> None:
    """Every array reads as the original: with zarrkit, through the consolidated metadata,
    and with zarr-python (whatever format each finds)."""
    root = zarrkit.open_group(str(path), mode="r")
    assert root.attrs["title"] == "root"
    for name, data in ARRAYS.items():
        np.testing.assert_array_equal(root[name][...], data)
        np.testing.assert_array_equal(zarrkit.open_array(str(path / name), mode="r")[...], data)
    if consolidated:
        croot = zarrkit.open_consolidated(str(path))
        for name, data in ARRAYS.items():
            np.testing.assert_array_equal(croot[name][...], data)
        np.testing.assert_array_equal(zarrkit.open_consolidated(str(path), path="grp")["b"][...], B)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "both zarr.json and .zarray exist": a known state here
        zroot = zarr.open_group(str(path), mode="r")
        for name, data in ARRAYS.items():
            np.testing.assert_array_equal(zroot[name][...], data)
        if consolidated:
            zc = zarr.open_consolidated(str(path), zarr_format=zroot.metadata.zarr_format)
            for name, data in ARRAYS.items():
                np.testing.assert_array_equal(zc[name][...], data)


def cli(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main([str(a) for a in args])
    return code, out.getvalue()


def mixed_nodes(path: Path) -> set[str]:
    """The nodes holding both formats' node documents (and what verify must name)."""
    found = set()
    for d in [path, *[p for p in path.rglob("*") if p.is_dir()]]:
        names = {p.name for p in d.iterdir() if p.is_file()}
        if "zarr.json" in names and names & {".zarray", ".zgroup", ".zattrs", ".zmetadata"}:
            rel = d.relative_to(path).as_posix()
            found.add("/" if rel == "." else rel)
    return found


@pytest.mark.slow
@pytest.mark.parametrize("consolidated", [False, True], ids=["plain", "consolidated"])
@pytest.mark.parametrize(("src", "dst"), [(2, 3), (3, 2)], ids=["v2-to-v3", "v3-to-v2"])
def test_convert_killed_at_every_change_then_rerun(tmp_path, src, dst, consolidated):
    original = tmp_path / "original.zarr"
    build(original, src, consolidated)
    reference = tmp_path / "reference.zarr"
    shutil.copytree(original, reference)
    total = run_killed(lambda s: zarrkit.convert(s, zarr_format=dst), reference, None)
    expected = snapshot(reference)
    # the uninterrupted conversion: the new format only, consolidated as before
    names = {k.rsplit("/", 1)[-1] for k in expected}
    assert not names & ({".zarray", ".zgroup", ".zattrs", ".zmetadata"} if dst == 3 else {"zarr.json"})
    assert (".zmetadata" in expected or "consolidated_metadata" in json.loads(expected.get("zarr.json", b"{}"))) is consolidated
    assert total >= 10
    saw_mixed = 0
    for limit in range(total):
        work = tmp_path / f"kill-{limit}.zarr"
        shutil.copytree(original, work)
        assert run_killed(lambda s: zarrkit.convert(s, zarr_format=dst), work, limit) == limit
        check_readable(work, consolidated)
        mixed = mixed_nodes(work)
        code, out = cli("verify", work)
        if mixed:
            saw_mixed += 1
            assert code == 1, out
            for node in mixed:
                assert f"half-converted: node {node} " in out
        else:
            assert "half-converted" not in out
        code, out = cli("convert", work, "--to", str(dst))
        assert code == 0, out
        assert snapshot(work) == expected, f"killed after {limit} of {total} changes"
        assert cli("verify", work)[0] == 0
        check_readable(work, consolidated)
        shutil.rmtree(work)
    assert saw_mixed > 0
    # and once more: nothing left to do, nothing written
    code, out = cli("convert", reference, "--to", str(dst))
    assert code == 0 and "already in Zarr" in out
    assert snapshot(reference) == expected


@pytest.mark.slow
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_consolidate_killed_keeps_old_or_new_document(tmp_path, zarr_format):
    path = tmp_path / "c.zarr"
    build(path, zarr_format, consolidated=True)
    key = ".zmetadata" if zarr_format == 2 else "zarr.json"
    old = (path / key).read_bytes()
    zarrkit.open_group(str(path / "grp"), mode="r+").attrs["level"] = 2  # the new document differs
    for limit in (0, None):
        n = run_killed(lambda s: zarrkit.consolidate_metadata(s), path, limit)
        doc = (path / key).read_bytes()
        assert doc == old if limit == 0 else doc != old
        assert n == (0 if limit == 0 else 1)  # one write: the document, whole
        croot = zarrkit.open_consolidated(str(path))
        assert croot["grp"].attrs["level"] == (1 if limit == 0 else 2)
        np.testing.assert_array_equal(croot["grp/b"][...], B)


def _converter(path: Path, rounds: int, stop: threading.Event) -> None:
    """Convert back and forth, slowly (a pause before every change) so readers see every state."""

    class Slow(KillingStore):
        def _change(self) -> None:
            time.sleep(0.002)

    store = Slow(zarrkit.DirectoryStore(path))
    try:
        for i in range(rounds):
            zarrkit.convert(store, zarr_format=3 if i % 2 == 0 else 2)
    finally:
        stop.set()


@pytest.mark.slow
def test_readers_during_conversions_see_either_format(tmp_path):
    path = tmp_path / "r.zarr"
    build(path, 2, consolidated=True)
    stop = threading.Event()
    writer = threading.Thread(target=_converter, args=(path, 12, stop))
    reads = typed = 0
    formats = set()
    writer.start()
    try:
        while not stop.is_set():
            try:
                root = zarrkit.open_group(str(path), mode="r")
                for name, data in ARRAYS.items():
                    np.testing.assert_array_equal(root[name][...], data)
                croot = zarrkit.open_consolidated(str(path))
                formats.add(croot.zarr_format)
                for name, data in ARRAYS.items():
                    np.testing.assert_array_equal(croot[name][...], data)
                reads += 1
            except ZarrkitError:
                typed += 1  # a node whose document went between two reads: typed, never a crash
    finally:
        writer.join()
    assert reads > 10 and formats == {2, 3}
    assert typed <= reads
    check_readable(path, consolidated=True)
