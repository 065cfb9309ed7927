"""Database stores given a named pipe where their file should be: a typed error at once,
never a process blocked in ``open`` (each case runs in a child process with a deadline)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")

CASES = {
    "dbm": "DBMStore(path)",
    "dbm-dumb": "DBMStore(path, open=dbm.dumb.open)",
    "lmdb-file": "LMDBStore(path, subdir=False)",
    "sqlite": "SQLiteStore(path)",
}


#: (store, the suffix of the file made a named pipe): the path itself, or a file the backend
#: adds to it
FIFOS = [(case, "") for case in CASES] + [("dbm-dumb", ".dat"), ("dbm-dumb", ".dir")]


@pytest.mark.parametrize("case,suffix", FIFOS)
def test_a_fifo_for_a_database_file_is_refused(case, suffix, tmp_path):
    path = tmp_path / "db"
    os.mkfifo(str(path) + suffix)
    code = textwrap.dedent(f"""
        import dbm.dumb
        from zarrkit.errors import ZarrkitError
        from zarrkit.storage import DBMStore, LMDBStore, SQLiteStore
        path = {str(path)!r}
        try:
            {CASES[case]}
        except (ZarrkitError, OSError) as exc:
            print("refused:", type(exc).__name__, exc)
        else:
            print("opened")
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("refused:"), proc.stdout
    assert str(path) in proc.stdout
