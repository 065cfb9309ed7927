"""Reading a store opened read-only changes nothing on disk, for every file-based store.

Every store type zarrkit keeps in files (DirectoryStore/LocalStore, NestedDirectoryStore,
FsspecStore over the local file system, ZipStore, SQLiteStore, LMDBStore, DBMStore with each
available backend) is filled with a v2 or v3 hierarchy (optionally consolidated) and closed.
Then every file and directory beside and below it gets an old modification time, and the whole
tree is hashed: names, types, sizes, permissions, inode numbers, modification and change times
and the SHA-256 of every file.  After each read-only operation -- ``open``/``open_group``/
``open_array`` in mode ``'r'``, reading every array (whole, partial and by byte ranges),
``info``, ``tree()``, ``open_consolidated``, writes that must be refused, and the command line
``zarrkit verify``/``info``/``ls``/``tree`` run as subprocesses -- the tree must hash the
same: no file created, removed, replaced, touched or rewritten (SQLite's ``-shm``/``-wal``,
LMDB's ``lock.mdb``, temporary files).

The stores' read-only modes are also checked to stay correct when another process or store has
the database open for writing (the read-only store then shares LMDB's lock file and SQLite's
write-ahead log, and sees the writer's committed data).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import os
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import zarrkit
from zarrkit.errors import ReadOnlyError
from zarrkit.storage import (
    DBMStore,
    DirectoryStore,
    FsspecStore,
    LMDBStore,
    NestedDirectoryStore,
    SQLiteStore,
    ZipStore,
)

SRC = Path(__file__).resolve().parent.parent.parent / "src"
OLD_NS = 1_000_000_000 * 10**9  # 2001-09-09: any write moves a modification time off it

DBM_BACKENDS = []
for _name in ("dbm.dumb", "dbm.gnu", "dbm.ndbm", "dbm.sqlite3"):
    try:
        DBM_BACKENDS.append(importlib.import_module(_name))
    except ImportError:
        pass

KINDS = ["directory", "nested", "fsspec-local", "zip", "sqlite", "lmdb"] + [
    f"dbm-{m.__name__.split('.')[1]}" for m in DBM_BACKENDS
]
CLI_KINDS = {"directory", "nested", "zip"}  # what the command line opens
LAYOUTS = ["v2", "v3", "v2-consolidated", "v3-consolidated"]
FSSPEC_OPTIONS = {"auto_mkdir": False}  # non-empty: a file:// URL then goes through fsspec


def expected_arrays(fmt: int) -> dict[str, np.ndarray]:
    b = np.full(13, np.nan)
    b[:9] = np.linspace(0, 1, 9)  # the last chunk is never written: it reads as fill
    out = {
        "a": np.arange(30 * 20, dtype="i4").reshape(30, 20),
        "g/b": b,
    }
    if fmt == 3:
        out["g/s"] = (np.arange(16 * 16, dtype="u2") * 7).reshape(16, 16)
    return out


def populate(store, fmt: int, consolidated: bool) -> None:
    data = expected_arrays(fmt)
    root = zarrkit.group(store, zarr_format=fmt)
    root.attrs["title"] = "untouched"
    a = root.zeros("a", shape=(30, 20), chunks=(8, 8), dtype="i4")
    a[...] = data["a"]
    a.attrs["units"] = "m"
    g = root.create_group("g")
    g.attrs["k"] = 2
    b = g.full("b", shape=(13,), chunks=(4,), dtype="f8", fill_value=np.nan)
    b[:9] = data["g/b"][:9]
    if fmt == 3:  # shards: partial (byte-range) reads of the store
        s = g.create_array("s", shape=(16, 16), chunks=(4, 4), shards=(8, 8), dtype="u2")
        s[...] = data["g/s"]
    if consolidated:
        zarrkit.consolidate_metadata(store)


class Case:
    """One store type holding one layout, in a directory of its own (``container``)."""

    def __init__(self, kind: str, layout: str, tmp: Path):
        self.kind = kind
        self.fmt = int(layout[1])
        self.consolidated = layout.endswith("consolidated")
        self.container = tmp / "container"
        self.container.mkdir()
        name = {"zip": "data.zip", "sqlite": "data.sqlite", "lmdb": "data.lmdb"}
        self.path = self.container / name.get(kind, "data.zarr" if "dbm" not in kind else "data.db")
        self.dbm = None
        if kind.startswith("dbm-"):
            self.dbm = next(m for m in DBM_BACKENDS if m.__name__.endswith(kind[4:]))
        if kind == "zip":  # each key written once (a rewrite would append a second member)
            memory = zarrkit.MemoryStore()
            populate(memory, self.fmt, self.consolidated)
            with contextlib.closing(self._writable()) as store:
                for key in sorted(memory):
                    store[key] = memory[key]
        else:
            with contextlib.closing(self._writable()) as store:
                populate(store, self.fmt, self.consolidated)

    @property
    def url(self) -> str:
        return "file://" + str(self.path)

    def _writable(self):
        k = self.kind
        if k == "directory":
            return DirectoryStore(self.path)
        if k == "nested":
            return NestedDirectoryStore(self.path)
        if k == "fsspec-local":
            return FsspecStore.from_url(self.url, storage_options=FSSPEC_OPTIONS)
        if k == "zip":
            return ZipStore(self.path, mode="w")
        if k == "sqlite":
            return SQLiteStore(self.path)
        if k == "lmdb":
            return LMDBStore(self.path, map_size=2**26)
        return DBMStore(self.path, flag="c", open=self.dbm.open)

    def read_only(self):
        """A store object opened read-only."""
        k = self.kind
        if k == "directory":
            return zarrkit.storage.LocalStore(self.path, read_only=True)
        if k == "nested":
            return NestedDirectoryStore(self.path, read_only=True)
        if k == "fsspec-local":
            return FsspecStore.from_url(self.url, storage_options=FSSPEC_OPTIONS, read_only=True)
        if k == "zip":
            return ZipStore(self.path, mode="r")
        if k == "sqlite":
            return SQLiteStore(self.path, read_only=True)
        if k == "lmdb":
            return LMDBStore(self.path, read_only=True)
        return DBMStore(self.path, flag="r", open=self.dbm.open)

    @contextlib.contextmanager
    def target(self):
        """What ``zarrkit.open(..., mode='r')`` is given (a path or URL where one works), and
        the keyword arguments that go with it."""
        if self.kind in ("directory", "zip"):
            yield str(self.path), {}
        elif self.kind == "fsspec-local":
            yield self.url, {"storage_options": FSSPEC_OPTIONS}
        else:
            with contextlib.closing(self.read_only()) as store:
                yield store, {}

    # -- the on-disk state --------------------------------------------------------------------
    def age(self) -> None:
        """Give every file and directory an old modification time (a write moves it)."""
        for dirpath, dirnames, filenames in os.walk(self.container):
            for name in dirnames + filenames:
                os.utime(os.path.join(dirpath, name), ns=(OLD_NS, OLD_NS), follow_symlinks=False)
        os.utime(self.container, ns=(OLD_NS, OLD_NS))

    def snapshot(self) -> dict[str, tuple]:
        out: dict[str, tuple] = {}
        for dirpath, dirnames, filenames in os.walk(self.container):
            for name in [".", *dirnames, *filenames]:
                full = os.path.normpath(os.path.join(dirpath, name))
                st = os.lstat(full)
                rel = os.path.relpath(full, self.container)
                if name != "." and stat.S_ISDIR(st.st_mode):
                    continue  # listed as "." of its own walk step
                entry = (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), st.st_ino,
                         st.st_mtime_ns, st.st_ctime_ns)
                if stat.S_ISREG(st.st_mode):
                    digest = hashlib.sha256(Path(full).read_bytes()).hexdigest()
                    entry += (st.st_size, digest)
                out[rel] = entry
        return out


# -- the read-only operations -------------------------------------------------------------------
def op_open(case: Case) -> None:
    with case.target() as (target, kw):
        node = zarrkit.open(target, mode="r", **kw)
        assert isinstance(node, zarrkit.Group)
        assert node.attrs["title"] == "untouched"
        assert node.read_only


def op_open_group(case: Case) -> None:
    with case.target() as (target, kw):
        g = zarrkit.open_group(target, mode="r", **kw)
        assert sorted(g.array_keys()) == ["a"]
        assert sorted(g.group_keys()) == ["g"]
        assert g["g"].attrs["k"] == 2


def op_open_array(case: Case) -> None:
    with case.target() as (target, kw):
        z = zarrkit.open_array(target, path="a", mode="r", **kw)
        np.testing.assert_array_equal(z[...], expected_arrays(case.fmt)["a"])
        assert z.attrs["units"] == "m"


def op_read(case: Case) -> None:
    """Every array whole, selections, blocks, and the store's own reads and listings."""
    with contextlib.closing(case.read_only()) as store:
        g = zarrkit.open_group(store, mode="r")
        for name, want in expected_arrays(case.fmt).items():
            z = g[name]
            np.testing.assert_array_equal(z[...], want)
            np.testing.assert_array_equal(z[1:3], want[1:3])
            np.testing.assert_array_equal(z.get_orthogonal_selection(([0, 2],) * z.ndim),
                                          want[np.ix_(*([[0, 2]] * z.ndim))])
            np.testing.assert_array_equal(z.blocks[0], want[tuple(slice(0, c) for c in z.chunks[:1])])
        keys = list(store.list_prefix(""))
        assert keys and store.list_dir("")
        for key in keys:
            value = store.get(key)
            assert value is not None and store.getsize(key) == len(value)
            assert key in store and store.exists(key)
            if len(value) > 4:
                assert store.get(key, zarrkit.storage.ByteRange(1, 3)) == value[1:4]
                assert store.get(key, zarrkit.storage.ByteRange(-2)) == value[-2:]
        assert store.get("nothing/here") is None
        assert len(store.get_many(keys[:3] + ["missing"])) == min(3, len(keys)) + 1


def op_info(case: Case) -> None:
    with contextlib.closing(case.read_only()) as store:
        g = zarrkit.open_group(store, mode="r")
        text = str(g.info) + repr(g.info) + str(g["a"].info) + str(g["g/b"].info)
        assert "Group" in text and "Array" in text
        assert g["a"].nbytes_stored > 0


def op_tree(case: Case) -> None:
    with contextlib.closing(case.read_only()) as store:
        g = zarrkit.open_group(store, mode="r")
        text = str(g.tree()) + repr(g.tree(level=1))
        assert "a" in text and "g" in text


def op_refused_writes(case: Case) -> None:
    with contextlib.closing(case.read_only()) as store:
        g = zarrkit.open_group(store, mode="r")
        for write in (
            lambda: g["a"].__setitem__((0, 0), 1),
            lambda: g.attrs.__setitem__("new", 1),
            lambda: g.create_group("new"),
            lambda: store.set("new", b"x"),
            lambda: store.delete("a/" + ("zarr.json" if case.fmt == 3 else ".zarray")),
        ):
            with pytest.raises(ReadOnlyError):
                write()


def op_open_consolidated(case: Case) -> None:
    with case.target() as (target, kw):
        g = zarrkit.open_consolidated(target, mode="r", **kw)
        for name, want in expected_arrays(case.fmt).items():
            np.testing.assert_array_equal(g[name][...], want)
        assert str(g.tree())


def cli(*args: str) -> None:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-m", "zarrkit", *args], env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, (args, done.stdout, done.stderr)


def op_cli_verify(case: Case) -> None:
    cli("verify", str(case.path))


def op_cli_info(case: Case) -> None:
    cli("info", str(case.path))
    cli("info", str(case.path), "--path", "a", "--json")


def op_cli_ls(case: Case) -> None:
    cli("ls", str(case.path))


def op_cli_tree(case: Case) -> None:
    cli("tree", str(case.path))


OPERATIONS = [op_open, op_open_group, op_open_array, op_read, op_info, op_tree, op_refused_writes]
CLI_OPERATIONS = [op_cli_verify, op_cli_info, op_cli_ls, op_cli_tree]


def operations(case: Case) -> list:
    ops = list(OPERATIONS)
    if case.consolidated:
        ops.append(op_open_consolidated)
    if case.kind in CLI_KINDS:
        ops += CLI_OPERATIONS
    return ops


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("kind", KINDS)
def test_read_only_operations_leave_every_file_untouched(kind, layout, tmp_path):
    case = Case(kind, layout, tmp_path)
    case.age()
    before = case.snapshot()
    assert len(before) >= 2  # the container and the store's file(s)
    for op in operations(case):
        op(case)
        after = case.snapshot()
        changed = {k: (before.get(k), after.get(k)) for k in before.keys() | after.keys()
                   if before.get(k) != after.get(k)}
        assert not changed, f"{op.__name__} changed {sorted(changed)}: {changed}"


# -- read-only stores beside a writer -------------------------------------------------------------
def test_sqlite_read_only_store_sees_writes_still_in_the_log(tmp_path):
    """With a writer open, committed data may sit in the write-ahead log only: the read-only
    store reads it (SQLite's immutable mode, which ignores the log, is not used)."""
    path = tmp_path / "data.sqlite"
    with SQLiteStore(path) as writer:
        writer["k0"] = b"first"
        with SQLiteStore(path, read_only=True) as reader:
            assert reader["k0"] == b"first"
            writer["k1"] = b"second"
            assert reader["k1"] == b"second"
            assert sorted(reader) == ["k0", "k1"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.sqlite"]


def test_sqlite_database_left_in_wal_mode_reads_correctly(tmp_path):
    """A writer that closes while another connection is open cannot leave WAL mode; the next
    read-only store still reads everything, and the next writer to close leaves it."""
    path = tmp_path / "data.sqlite"
    writer = SQLiteStore(path)
    writer["a"] = b"1"
    reader = SQLiteStore(path, read_only=True)
    assert reader["a"] == b"1"
    writer.close()  # the reader's connection is still open: the database stays in WAL mode
    reader.close()
    with SQLiteStore(path, read_only=True) as again:
        assert again["a"] == b"1"
    with SQLiteStore(path) as last_writer:
        last_writer["b"] = b"2"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.sqlite"]
    case_files = {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()}
    with SQLiteStore(path, read_only=True) as reader:
        assert dict(reader.items()) == {"a": b"1", "b": b"2"}
    assert {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()} == case_files


LMDB_WRITER = """
import sys, time
sys.path.insert(0, {src!r})
from zarrkit.storage import LMDBStore
store = LMDBStore({path!r}, map_size=2**24)
store['k0'] = b'first'
print('ready', flush=True)
sys.stdin.readline()
store['k1'] = b'second'
print('written', flush=True)
sys.stdin.readline()
store.close()
"""


@pytest.mark.skipif(sys.platform == "win32", reason="probes POSIX locks")
def test_lmdb_read_only_store_uses_the_lock_file_while_another_process_has_it_open(tmp_path):
    path = tmp_path / "data.lmdb"
    with LMDBStore(path, map_size=2**24) as store:
        store["k"] = b"v"
    child = subprocess.Popen(
        [sys.executable, "-c", LMDB_WRITER.format(src=str(SRC), path=str(path))],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert child.stdout.readline() == "ready\n"
        lock_before = (path / "lock.mdb").read_bytes()
        with LMDBStore(path, read_only=True) as reader:
            assert reader["k0"] == b"first"
            # a registered reader: LMDB's reader table in the lock file holds this process
            assert (path / "lock.mdb").read_bytes() != lock_before
            child.stdin.write("\n")
            child.stdin.flush()
            assert child.stdout.readline() == "written\n"
            assert reader["k1"] == b"second"
        child.stdin.write("\n")
        child.stdin.flush()
        assert child.wait(timeout=30) == 0
    finally:
        child.kill()
        child.wait()
    # nobody has it open now: a read-only store leaves the lock file alone again
    os.utime(path / "lock.mdb", ns=(OLD_NS, OLD_NS))
    lock = (path / "lock.mdb").read_bytes()
    with LMDBStore(path, read_only=True) as reader:
        assert sorted(reader) == ["k", "k0", "k1"]
    assert (path / "lock.mdb").read_bytes() == lock
    assert (path / "lock.mdb").stat().st_mtime_ns == OLD_NS


def test_lmdb_read_only_store_without_lock_file_creates_none(tmp_path):
    path = tmp_path / "data.lmdb"
    with LMDBStore(path, map_size=2**24) as store:
        store["k"] = b"v"
    (path / "lock.mdb").unlink()  # e.g. a database copied without its lock file
    with LMDBStore(path, read_only=True) as reader:
        assert reader["k"] == b"v"
    assert sorted(p.name for p in path.iterdir()) == ["data.mdb"]
