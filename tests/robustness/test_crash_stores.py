"""Writers of SQLite, LMDB and zip stores killed with SIGKILL lose nothing they acknowledged.

A child process writes to a store and prints a line after each write call has returned; the
parent kills it with SIGKILL at a random moment (or right after it acknowledged a write, or
a zip flush) and then checks the files:

* SQLiteStore and LMDBStore: the store holds exactly the state after the acknowledged writes,
  or that state plus the one write in flight (a ``set_many`` batch all or nothing); read-only
  first (the killed writer's log is read), then writable, then read-only again.  (A SQLite
  writer killed while switching journal modes, as it opens or closes, leaves a hot rollback
  journal: read-only opening then raises a StoreError that names the file and says to open it
  for writing once, which is checked.)  The next writer is never blocked
  by the killed one: every generation's child opens the same database and must be ready
  within its time limit.
* ZipStore: a killed writer leaves a zip file without a (valid) central directory unless the
  kill fell right after a flush: opening it either works, and then every member it lists
  reads back exactly (every flushed member among them), or raises a zarrkit
  :class:`~zarrkit.errors.StoreError` naming the file -- never a raw ``zipfile``/``struct``
  exception.  Appending to a damaged file is refused the same way, leaving it as it was.
"""

from __future__ import annotations

import json
import os
import random
import re
import select
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

import zarrkit
from zarrkit.errors import StoreError, ZarrkitError
from zarrkit.storage import LMDBStore, SQLiteStore, ZipStore

HERE = Path(__file__).resolve().parent
WORKER = HERE / "_store_crash_worker.py"
SRC = HERE.parent.parent / "src"
sys.path.insert(0, str(HERE))
from _store_crash_worker import kv_ops, zip_payload

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")

KILLS = 4  # per test; the tests run with several seeds
TIME_LIMIT = 20.0  # seconds a child may take to open its store and start writing


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]))


def _readline(proc: subprocess.Popen, deadline: float) -> str:
    """The next stdout line of ``proc``, failing when it takes past ``deadline``."""
    ready, _, _ = select.select([proc.stdout], [], [], max(deadline - time.monotonic(), 0))
    assert ready, "the writer did not answer within its time limit"
    return proc.stdout.readline().decode()


def run_and_kill(mode: str, args: dict, rng: random.Random, after: str | None = None) -> list[str]:
    """Start a writer, kill it with SIGKILL, return the lines it printed after ``ready``.

    The kill comes ``rng``-chosen 0-150 ms after ``ready``, or, with ``after``, as soon as a
    line starting with ``after`` has been read (once at least one write went through)."""
    proc = subprocess.Popen([sys.executable, str(WORKER), mode, json.dumps(args)], env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + TIME_LIMIT
        line = _readline(proc, deadline)
        assert line == "ready\n", (line, proc.stderr.read().decode()[-2000:])
        seen: list[str] = []
        if after is None:
            time.sleep(rng.uniform(0.0, 0.15))
        else:
            skip = rng.randint(0, 3)
            while True:
                line = _readline(proc, deadline)
                assert line, proc.stderr.read().decode()[-2000:]
                seen.append(line)
                if line.startswith(after):
                    if skip == 0:
                        break
                    skip -= 1
        assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(timeout=TIME_LIMIT) == -signal.SIGKILL
        rest = proc.stdout.read().decode()
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    lines = seen + rest.splitlines(keepends=True)
    return [ln for ln in lines if ln.endswith("\n")]  # a line cut by the kill is not an ack


# -- SQLite and LMDB ------------------------------------------------------------------------------
def _apply(state: dict[str, bytes], items: dict[str, bytes | None]) -> dict[str, bytes]:
    new = dict(state)
    for key, val in items.items():
        if val is None:
            new.pop(key, None)
        else:
            new[key] = val
    return new


def _contents(store) -> dict[str, bytes]:
    keys = list(store.list_prefix(""))
    return {k: store.get(k) for k in keys}


def _describe(got: dict, want: dict) -> str:
    diff = sorted(k for k in got.keys() | want.keys() if got.get(k) != want.get(k))
    return ", ".join(f"{k}: {(got.get(k) or b'<missing>')[:24]!r} != "
                     f"{(want.get(k) or b'<missing>')[:24]!r}" for k in diff[:5])


def _token_keys(kind: str, path: Path) -> set[str]:
    """The keys the database keeps a write token for (read with the database's own library)."""
    if kind == "sqlite":
        import sqlite3

        conn = sqlite3.connect(path)
        try:
            return {k for (k,) in conn.execute("SELECT k FROM zarrkit_versions")}
        finally:
            conn.close()
    import lmdb

    env = lmdb.open(str(path), readonly=True, max_dbs=1, lock=False)
    try:
        db = env.open_db(b"__zarrkit_versions", create=False)
        with env.begin() as txn:
            return {bytes(k).decode() for k, _ in txn.cursor(db=db)}
    finally:
        env.close()


def _check_kv(kind: str, path: Path, state: dict, acked: int, gen: int) -> tuple[dict, bool]:
    """The store holds the acknowledged state (or it plus the write in flight); returns the
    state found and whether the write in flight had landed."""
    ops = kv_ops(gen)
    done = dict(state)
    for _ in range(acked):
        done = _apply(done, next(ops)[1])
    inflight = _apply(done, next(ops)[1])
    opener = {"sqlite": SQLiteStore, "lmdb": LMDBStore}[kind]
    try:
        with opener(path, read_only=True) as store:
            got = _contents(store)
    except StoreError as exc:
        # SQLite only: killed while switching journal modes, the writer left a hot rollback
        # journal that a read-only connection cannot roll back; the error says how to repair
        assert kind == "sqlite" and str(path) in str(exc) and "open the database for writing" \
            in str(exc), exc
        got = None
    with opener(path) as store:  # a writer opens it after the crash
        again = _contents(store)
    assert again in (done, inflight), (
        f"{kind} after {acked} acknowledged writes of generation {gen}: {_describe(again, done)}"
    )
    assert _token_keys(kind, path) == set(again)  # each value's token written with it, or gone with it
    assert got is None or got == again
    with opener(path, read_only=True) as store:  # after a writer, always readable read-only
        assert _contents(store) == again
    return again, again != done, got is None


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("kind", ["sqlite", "lmdb"])
def test_sigkilled_writer_loses_no_acknowledged_write(kind, seed, tmp_path):
    if kind == "lmdb":
        pytest.importorskip("lmdb")
    path = tmp_path / f"data.{kind}"
    rng = random.Random(f"kv-{kind}-{seed}")
    state: dict[str, bytes] = {}
    total_acked = landed = repaired = 0
    for k in range(KILLS):
        gen = seed * 100 + k
        after = "" if k % 2 else None  # every other kill: just after an acknowledged write
        lines = run_and_kill("kv", {"kind": kind, "path": str(path), "gen": gen}, rng, after)
        acked = len(lines)
        assert [int(x) for x in lines] == list(range(acked))
        state, in_flight_landed, needed_writer = _check_kv(kind, path, state, acked, gen)
        total_acked += acked
        landed += in_flight_landed
        repaired += needed_writer
    assert total_acked > KILLS, "the writers acknowledged too few writes to test anything"
    print(f"{kind} seed {seed}: {KILLS} kills, {total_acked} acknowledged writes, all read "
          f"back; the write in flight had landed {landed} times; read-only needed a writer's "
          f"repair {repaired} times")
    if kind == "sqlite":  # the last writer to close left a single, rollback-journal file
        assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]


# -- ZipStore ------------------------------------------------------------------------------------
def _check_zip(path: Path, lines: list[str]) -> str:
    """Readable with every flushed member exact, or a StoreError naming the file."""
    written = [int(ln.split()[1]) for ln in lines if ln.startswith("wrote")]
    flushed = [int(ln.split()[1]) for ln in lines if ln.startswith("flushed")]
    last_flushed = flushed[-1] if flushed else -1
    next_member = (written[-1] + 1) if written else 0
    try:
        store = ZipStore(path, mode="r")
    except StoreError as exc:
        assert str(path) in str(exc), exc
        if path.stat().st_size:  # the killed writer's members are there, unlisted
            assert "central directory" in str(exc), exc
        outcome = "refused"
    else:
        with store:
            names = list(store)
            members = sorted(int(n.split("/")[1]) for n in names)
            assert set(range(last_flushed + 1)) <= set(members), (last_flushed, members)
            assert max(members, default=-1) <= next_member
            for n in members:
                assert store[f"m/{n}"] == zip_payload(n), n
        return "readable"
    # every other way in gives the same typed error, and appending leaves the file alone
    # (an empty file -- killed before its first member -- is a new zip file to mode 'a')
    before = path.read_bytes()
    if before:
        with pytest.raises(StoreError, match=str(path)):
            ZipStore(path, mode="a")
    with pytest.raises(ZarrkitError, match=str(path)):
        zarrkit.open_group(str(path), mode="r")
    assert path.read_bytes() == before
    return outcome


@pytest.mark.parametrize("kill_at", ["random", "after-write", "after-flush"])
def test_sigkilled_zip_writer_leaves_readable_members_or_a_typed_error(kill_at, tmp_path):
    rng = random.Random(f"zip-{kill_at}")
    outcomes = []
    for k in range(KILLS):
        path = tmp_path / f"data{k}.zip"
        after = {"random": None, "after-write": "wrote", "after-flush": "flushed"}[kill_at]
        lines = run_and_kill("zip", {"path": str(path)}, rng, after)
        outcomes.append(_check_zip(path, lines))
    print(f"zip killed {kill_at}: {outcomes}")


def test_every_prefix_of_a_zip_file_is_readable_or_a_typed_error(tmp_path):
    """What a writer killed at any byte leaves: each prefix of a zip file written with
    flushes (central directories in the middle, overwritten by later members) and closed."""
    full = tmp_path / "full.zip"
    with ZipStore(full, mode="w") as store:
        for i in range(6):
            store[f"m/{i}"] = zip_payload(i)[:300 + 50 * i]
            if i == 2:
                store.flush()
    data = full.read_bytes()
    cut = tmp_path / "cut.zip"
    outcomes = {"readable": 0, "refused": 0}
    for n in range(len(data) + 1):
        cut.write_bytes(data[:n])
        try:
            store = ZipStore(cut, mode="r")
        except StoreError as exc:
            assert str(cut) in str(exc), (n, exc)
            outcomes["refused"] += 1
            continue
        with store:
            for name in store:
                i = int(name.split("/")[1])
                try:
                    assert store[name] == zip_payload(i)[:300 + 50 * i], (n, name)
                except StoreError as exc:  # a listed member cut short: named, typed
                    assert str(cut) in str(exc) and repr(name) in str(exc), (n, exc)
        outcomes["readable"] += 1
    assert outcomes["readable"] >= 1 and outcomes["refused"] >= len(data) // 2, outcomes


def test_a_stale_end_record_before_a_lost_central_directory_is_refused_for_appending(tmp_path):
    """A writer killed while appending after a flush overwrites the old central directory with
    member data and may leave the old end record in the last bytes: an end record is found,
    the directory it points to is gone.  Appending to that file would hide its members."""
    path = tmp_path / "stale.zip"
    with ZipStore(path, mode="w") as store:
        for i in range(3):
            store[f"m/{i}"] = zip_payload(i)
    data = bytearray(path.read_bytes())
    end = data.rindex(b"PK\x05\x06")
    start = data.index(b"PK\x01\x02")  # the central directory, replaced by member bytes
    data[start:end] = bytes(end - start)
    path.write_bytes(bytes(data))
    assert zipfile.is_zipfile(path)  # the end record alone says zip
    for mode in ("r", "a"):
        with pytest.raises(StoreError, match=re.escape(str(path))):
            ZipStore(path, mode=mode)
    assert path.read_bytes() == bytes(data)
