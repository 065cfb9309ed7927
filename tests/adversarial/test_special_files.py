"""A directory store opens regular files and directories only.

A named pipe where a chunk or a metadata document should be made reads, ``Group.tree()`` and
``zarrkit ls``/``tree``/``verify`` wait forever in ``open``; a socket or a device there is no
better.  Now listings leave such files out, a read of one by key raises
:class:`~zarrkit.errors.InvalidPathError` naming the key (a special file where a value should
be is hostile, not missing), and a write replaces it with a regular file (so does ``zarrkit
cp`` the partial zip file it would continue).

The scenarios run in one subprocess (``_special_files_worker.py``) that reports each as it ends:
one blocked forever is reported as hung there, and the subprocess has a generous timeout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

WORKER = os.path.join(os.path.dirname(__file__), "_special_files_worker.py")


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    work = tmp_path_factory.mktemp("special")
    try:
        proc = subprocess.run([sys.executable, WORKER, str(work)], capture_output=True,
                              text=True, timeout=600, check=False)
        stdout, stderr, finished = proc.stdout, proc.stderr, True
    except subprocess.TimeoutExpired as exc:
        stdout = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        stderr, finished = "", False
    results = {}
    for line in stdout.splitlines():
        r = json.loads(line)
        results[r.pop("scenario")] = r
    return results, finished, stderr


def outcome(outcomes, scenario):
    results, finished, stderr = outcomes
    assert scenario in results, (
        f"scenario {scenario!r} did not finish (worker {'ended' if finished else 'timed out'}; "
        f"finished: {sorted(results)}); {stderr[-2000:]}"
    )
    r = results[scenario]
    assert "hung" not in r, f"{scenario}: {r['hung']}"
    assert "crash" not in r, r.get("crash")
    return r


def assert_refused(r, key, kind="a named pipe"):
    assert r.get("error") == "InvalidPathError", r
    assert f"key {key!r}" in r["message"] and kind in r["message"], r["message"]


@pytest.mark.parametrize(("scenario", "key"), [
    ("chunk_small", "0"),  # small chunks: one read of at most the expected size
    ("chunk_large", "1"),  # large chunks: the size asked first, into a reused buffer
    ("shard", "c/1"),  # a shard's index: a read from the end
    ("metadata_v2", ".zarray"),
    ("metadata_v3", "zarr.json"),
    ("link_to_fifo", "k"),  # a link inside the store, to a pipe inside it
    ("tree", "sub/.zgroup"),
])
def test_a_named_pipe_is_refused_naming_the_key(outcomes, scenario, key):
    assert_refused(outcome(outcomes, scenario), key)


def test_every_kind_of_read_refuses_a_named_pipe(outcomes):
    reads = outcome(outcomes, "byte_ranges")["result"]
    assert len(reads) == 6
    for r in reads:
        assert_refused(r, "k")


def test_a_socket_is_refused_naming_the_key(outcomes):
    assert_refused(outcome(outcomes, "unix_socket"), "k", "a socket")


def test_listings_leave_special_files_out(outcomes):
    listed = outcome(outcomes, "listings")["result"]
    assert listed["list_prefix"] == listed["keys"] == ["a/sub/w", "a/v", "b"]
    assert listed["len"] == 3
    assert listed["list_dir"] == ["sub", "v"]
    assert listed["listdir"] == ["a", "b", "sub", "v"]
    assert listed["contains"] == [False, False, False]
    assert listed["getsize"] == 0


def test_the_command_line_finishes_and_names_the_key(outcomes):
    runs = outcome(outcomes, "cli")["result"]
    for command, run in runs.items():
        assert "result" in run, (command, run)
    for command in ("ls g", "tree g", "verify g"):
        code, _, err = runs[command]["result"]
        assert code != 0 and "'sub/.zgroup'" in err and "named pipe" in err, (command, runs[command])
    # a pipe where a chunk should be is not listed as a stored chunk: reported missing
    code, out, _ = runs["verify g/a"]["result"]
    assert code == 0 and "missing: a/0" in out
    code, out, _ = runs["info g/a"]["result"]
    assert code == 0 and "Chunks initialized : 1/2" in out


def test_a_copy_into_a_zip_file_discards_a_named_pipe_as_its_partial_file(outcomes):
    code, err, copied = outcome(outcomes, "cp_to_zip")["result"]
    assert code == 0, err
    assert "discarding" in err and "dst.zip.partial" in err
    assert copied == [3, 3, 3, 3]


def test_a_write_in_place_replaces_a_named_pipe(outcomes):
    assert outcome(outcomes, "write_in_place")["result"] == [True, "value"]


def test_devices_are_refused_and_not_listed(outcomes):
    result = outcome(outcomes, "devices")["result"]
    for read in ("get null", "get_upto null", "get zero", "get_upto zero", "range zero", "get_many_upto null",
                 "get_many_upto zero"):
        assert_refused(result[read], read.split()[-1], "a character device")
    assert_refused(result["read array"], "0", "a character device")
    assert result["listed"] == ["a/.zarray", "a/.zattrs", "a/1"]
