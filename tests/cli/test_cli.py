"""The ``zarrkit`` command line, run for real in subprocesses (``python -m zarrkit``)."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numcodecs
import numpy as np
import pytest

import zarrkit
from zarrkit.cli.progress import ByteProgress

MARKER = ".zarrkit-copy-in-progress"


def run(*args, cwd=None, env=None, expect=0, input=None):
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("ZARRKIT_")}
    full_env.update(env or {})
    proc = subprocess.run(
        [sys.executable, "-m", "zarrkit", *map(str, args)],
        cwd=cwd, env=full_env, capture_output=True, text=True, timeout=120, input=input, check=False,
    )
    if expect is not None:
        assert proc.returncode == expect, (
            f"exit {proc.returncode} (expected {expect})\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
        )
    return proc


def assert_one_line_error(proc, *fragments, code=2):
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("zarrkit: error: "), lines[0]
    assert "Traceback" not in proc.stderr
    for f in fragments:
        assert f in lines[0], lines[0]


A = np.random.default_rng(0).random((100, 80), dtype="f4")


@pytest.fixture
def v2(tmp_path):
    """A v2 hierarchy on disk: /grp/a (dense, with xarray dims), /b (sparse), /s (strings)."""
    path = tmp_path / "src.zarr"
    root = zarrkit.open_group(path, mode="w", zarr_format=2)
    root.attrs["title"] = "test"
    a = root.create_dataset("grp/a", shape=(100, 80), chunks=(10, 10), dtype="f4")
    a[:] = A
    a.attrs["_ARRAY_DIMENSIONS"] = ["y", "x"]
    b = root.zeros("b", shape=(50,), chunks=(7,), dtype="i8")
    b[:20] = np.arange(20)
    root.array("s", np.array(["x", "yy", "zzz"], dtype=object), chunks=2, object_codec=numcodecs.VLenUTF8())
    return path


def chunk_files(path: Path) -> dict[str, tuple[int, int]]:
    """(inode, mtime) of every chunk file below ``path`` (metadata and the marker excluded)."""
    out = {}
    for p in path.rglob("*"):
        if (
            p.is_file()
            and p.name not in ("zarr.json", ".zarray", ".zattrs", ".zgroup", MARKER)
            and not p.name.startswith(".__zarrkit_partial__")  # a write in progress
        ):
            st = p.stat()
            out[str(p.relative_to(path))] = (st.st_ino, st.st_mtime_ns)
    return out


def open_array(path, node=None):
    store = zarrkit.storage.coerce_store(str(path), read_only=True)
    return zarrkit.open_array(store, path=node, mode="r")


# -- info / tree / ls ----------------------------------------------------------------------------
def test_info_array_text(v2):
    out = run("info", v2 / "grp" / "a").stdout
    assert "Name" in out and "/grp/a" in out
    assert "Shape              : (100, 80)" in out
    assert "Chunk shape        : (10, 10)" in out
    assert "Chunks initialized : 80/80" in out
    assert "Zarr format        : 2" in out


def test_info_array_json(v2):
    info = json.loads(run("info", v2 / "grp" / "a", "--json").stdout)
    assert info["node_type"] == "array" and info["path"] == "grp/a"
    assert info["shape"] == [100, 80] and info["chunks"] == [10, 10] and info["dtype"] == "float32"
    assert info["zarr_format"] == 2 and info["shards"] is None
    assert info["nchunks"] == info["nchunks_initialized"] == 80
    assert info["attributes"] == {"_ARRAY_DIMENSIONS": ["y", "x"]}
    assert info["compressors"][0]["id"] == "blosc"
    assert info["metadata"]["chunks"] == [10, 10]
    assert info["store"] == str(v2)


def test_info_group_text_and_json(v2):
    out = run("info", v2).stdout
    # the command's own group table (one layout for both formats), with the hierarchy below
    assert "Name             : /\n" in out and "Type             : group" in out
    assert "Arrays           : b, s" in out and "Groups           : grp" in out and "Arrays below     : 3" in out
    info = json.loads(run("info", v2, "--json").stdout)
    assert info["node_type"] == "group" and info["attributes"] == {"title": "test"}
    assert [m["name"] for m in info["members"]] == ["b", "grp", "s"]
    assert info["n_arrays"] == 3 and info["n_groups"] == 1 and not info["consolidated"]


def test_path_option_and_file_url(v2):
    info = json.loads(run("info", v2, "--path", "grp/a", "--json").stdout)
    assert info["path"] == "grp/a"
    info = json.loads(run("info", v2.as_uri() + "/grp", "--json").stdout)
    assert info["node_type"] == "group" and info["path"] == "grp"


def test_tree_and_ls(v2):
    out = run("tree", v2).stdout
    assert out.splitlines()[0] == "/"
    assert "└── a (100, 80) float32" in out and "b (50,) int64" in out
    assert run("tree", v2 / "grp" / "a").stdout.strip() == "/grp/a (100, 80) float32"
    ls = run("ls", v2).stdout.splitlines()
    assert [line.split()[0] for line in ls] == ["b", "grp/", "s"]
    assert "array" in ls[0] and "(50,) int64" in ls[0] and "group" in ls[1]
    stored = sum(p.stat().st_size for p in (v2 / "grp" / "a").iterdir())
    assert ls[0].endswith(" stored") and f"  {stored // 1024}." in run("ls", v2 / "grp").stdout
    entries = json.loads(run("ls", v2 / "grp", "--json").stdout)
    assert entries == [{"name": "a", "node_type": "array", "shape": [100, 80], "dtype": "float32", "chunks": [10, 10],
                        "shards": None, "nbytes": 32000, "nbytes_stored": stored}]


def test_zip_store_info_tree_ls(v2, tmp_path):
    zpath = tmp_path / "data.zip"
    with zarrkit.ZipStore(zpath, mode="w") as zs:
        zarrkit.copy_store(zarrkit.DirectoryStore(v2), zs)
    assert "grp/" in run("ls", zpath).stdout
    info = json.loads(run("info", zpath / "grp" / "a", "--json").stdout)
    assert info["store_type"] == "ZipStore" and info["nchunks_initialized"] == 80
    assert "a (100, 80) float32" in run("tree", zpath).stdout


# -- cp ------------------------------------------------------------------------------------------
def test_cp_v2_to_v3_hierarchy(v2, tmp_path):
    dst = tmp_path / "dst.zarr"
    proc = run("cp", v2, dst, "--zarr-format", "3")
    assert "copied" in proc.stdout and proc.stderr == ""  # no progress bar without a terminal
    assert not (dst / MARKER).exists()
    root = zarrkit.open_group(str(dst), mode="r")
    assert root.zarr_format == 3 and root.attrs["title"] == "test"
    a = root["grp/a"]
    assert a.zarr_format == 3 and a.chunks == (10, 10)
    assert a.metadata.dimension_names == ("y", "x")
    np.testing.assert_array_equal(a[:], A)
    np.testing.assert_array_equal(root["b"][:], np.r_[np.arange(20), np.zeros(30)])
    assert list(root["s"][:]) == ["x", "yy", "zzz"]
    # sparse source chunks stay missing (fill value) in the copy
    assert root["b"].nchunks_initialized == 3
    run("verify", dst)


def test_cp_rechunk_to_zip_and_back(v2, tmp_path):
    zpath = tmp_path / "re.zip"
    run("cp", v2 / "grp" / "a", zpath, "--chunks", "25,40", "--compressor", "zstd")
    assert zpath.exists() and not Path(str(zpath) + ".partial").exists()
    z = open_array(zpath)
    assert z.chunks == (25, 40) and z.compressor == numcodecs.Zstd(level=3)
    np.testing.assert_array_equal(z[:], A)
    back = tmp_path / "back.zarr"
    run("cp", zpath, back, "--zarr-format", "3", "--chunks", "20,20", "--shards", "40,40", "--dtype", "f8")
    b = open_array(back)
    assert b.zarr_format == 3 and b.chunks == (20, 20) and b.shards == (40, 40) and b.dtype == np.float64
    np.testing.assert_array_equal(b[:], A.astype("f8"))
    # and v3 sharded -> v2 (the inner chunks become the v2 chunks)
    v2copy = tmp_path / "v2copy.zarr"
    run("cp", back, v2copy, "--zarr-format", "2")
    c = open_array(v2copy)
    assert c.zarr_format == 2 and c.chunks == (20, 20)
    np.testing.assert_array_equal(c[:], A)


def test_cp_into_existing_store_and_overwrite(v2, tmp_path):
    dst = tmp_path / "dst.zarr"
    run("cp", v2, dst)
    proc = run("cp", v2, dst, expect=2)
    assert_one_line_error(proc, "already exists", "--overwrite")
    run("cp", v2 / "grp" / "a", dst / "grp" / "a2")  # a new node inside an existing store
    np.testing.assert_array_equal(open_array(dst, "grp/a2")[:], A)
    run("cp", v2 / "b", dst, "--overwrite")
    assert open_array(dst).shape == (50,)
    assert_one_line_error(run("cp", v2, v2 / "grp" / "inner", expect=2), "overlap")


def test_cp_to_and_from_url(v2, tmp_path, capsys):
    from zarrkit.cli import main

    url = "memory://zarrkit-cli-test/dst.zarr"
    assert main(["cp", str(v2), url, "--zarr-format", "3"]) == 0
    assert main(["verify", url]) == 0
    assert main(["cp", url, str(tmp_path / "back.zarr"), "--path", "grp"]) == 0
    np.testing.assert_array_equal(open_array(tmp_path / "back.zarr", "a")[:], A)
    assert main(["rm", url, "--yes"]) == 0
    assert main(["ls", url]) == 4  # not found
    assert capsys.readouterr().err.startswith("zarrkit: error: no Zarr array or group")


def frames(stderr):
    """The frames tqdm drew (each begins with a carriage return), blank ones left out."""
    return [f.strip() for f in stderr.replace("\n", "\r").split("\r") if f.strip()]


def test_cp_progress_bar_on_request(v2, tmp_path):
    proc = run("cp", v2 / "grp" / "a", tmp_path / "p.zarr", "--progress")
    drawn = frames(proc.stderr)  # tqdm's bar (stderr is not a terminal here: forced)
    assert drawn and all(f.startswith("a: ") for f in drawn), drawn  # labelled from the first frame
    # bytes of the array (100 × 80 float32), in powers of 1024, and a rate in KiB/s (MiB/s...)
    assert all("/31.2k" in f and "iB/s" in f for f in drawn), drawn
    assert "31.2k/31.2k" in drawn[-1], drawn


def test_cp_progress_bar_of_a_hierarchy_is_one_bar_over_all_its_bytes(v2, tmp_path):
    proc = run("cp", v2, tmp_path / "p.zarr", "--progress")
    drawn = frames(proc.stderr)
    # one label, the source, whatever array is copied; the total is the hierarchy's bytes
    # (100 × 80 float32 + 50 int64 + 3 objects); the array being copied follows the counts
    assert drawn and all(f.startswith("src.zarr: ") and "/31.7k" in f for f in drawn), drawn
    assert "31.7k/31.7k" in drawn[-1] and drawn[-1].endswith(", s]"), drawn  # the last array


def test_progress_counts_bytes_already_there_as_initial_not_in_the_rate():
    out = io.StringIO()
    bar = ByteProgress(20_000, True, desc="temperature", file=out)
    assert out.getvalue().strip("\r").startswith("temperature: ")  # drawn labelled at once
    bar.skip(7_000)  # written by the interrupted run
    bar.update(3_000)
    state = bar.bar.format_dict
    assert (state["n"], state["initial"], state["total"]) == (10_000, 7_000, 20_000)  # rate: (n - initial) / time
    assert (state["unit"], state["unit_scale"], state["unit_divisor"]) == ("iB", True, 1024)
    bar.close()
    disabled = ByteProgress(20, False, desc="x")
    disabled.skip(3)
    disabled.update(1)
    disabled.close()
    assert disabled.bar is None


def test_cp_interrupted_and_resumed(v2, tmp_path):
    dst = tmp_path / "dst.zarr"
    args = ["cp", v2 / "grp" / "a", dst, "--zarr-format", "3", "--chunks", "10,10", "--shards", "20,20"]
    proc = run(*args, env={"ZARRKIT_CP_FAIL_AFTER": "7"}, expect=3)
    assert proc.stderr.startswith("zarrkit: error: copy stopped after 7 shards")
    # the interrupted copy does not look complete
    assert (dst / MARKER).exists()
    before = chunk_files(dst)
    assert len(before) == 7
    ver = run("verify", dst, expect=1)
    assert "incomplete" in ver.stdout and "missing: c/4/3" in ver.stdout
    assert "interrupted" in run("info", dst).stderr
    # a different command does not mix into it
    assert_one_line_error(run("cp", v2 / "grp" / "a", dst, expect=2), "other settings")
    # the same command completes it (--overwrite or not), writing only what is missing
    proc = run(*args, "--overwrite")
    assert "resumed" in proc.stdout
    assert "13 shards written, 7 already present" in proc.stdout
    after = chunk_files(dst)
    assert len(after) == 20
    assert all(after[k] == v for k, v in before.items())  # not rewritten
    assert not (dst / MARKER).exists()
    np.testing.assert_array_equal(open_array(dst)[:], A)
    run("verify", dst)
    # complete now: running it again is refused
    assert_one_line_error(run(*args, expect=2), "already exists")
    assert run("info", dst).stderr == ""


def test_cp_interrupted_then_other_settings_with_overwrite(v2, tmp_path):
    dst = tmp_path / "dst.zarr"
    run("cp", v2 / "grp" / "a", dst, "--chunks", "10,10", env={"ZARRKIT_CP_FAIL_AFTER": "5"}, expect=3)
    proc = run("cp", v2 / "grp" / "a", dst, "--chunks", "20,20", "--overwrite")
    assert "copied" in proc.stdout and "20 chunks written, 0 already present" in proc.stdout
    z = open_array(dst)
    assert z.chunks == (20, 20)
    np.testing.assert_array_equal(z[:], A)


def test_cp_interrupted_and_resumed_hierarchy_to_zip(v2, tmp_path):
    zpath = tmp_path / "out.zip"
    partial = Path(str(zpath) + ".partial")
    proc = run("cp", v2, zpath, env={"ZARRKIT_CP_FAIL_AFTER": "30"}, expect=3)
    assert "stopped" in proc.stderr
    assert partial.exists() and not zpath.exists()
    proc = run("cp", v2, zpath)
    assert "resumed" in proc.stdout and "30 already present" in proc.stdout
    assert zpath.exists() and not partial.exists()
    root = zarrkit.open_group(zarrkit.ZipStore(zpath, mode="r"), mode="r")
    np.testing.assert_array_equal(root["grp/a"][:], A)
    assert list(root["s"][:]) == ["x", "yy", "zzz"]


def test_cp_killed_and_resumed(tmp_path):
    src = tmp_path / "big.zarr"
    data = np.arange(200 * 100, dtype="i4").reshape(200, 100)
    zarrkit.array(data, chunks=(10, 10), store=str(src), zarr_format=3)
    dst = tmp_path / "dst.zarr"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZARRKIT_")}
    env["ZARRKIT_CP_THROTTLE"] = "0.01"
    proc = subprocess.Popen([sys.executable, "-m", "zarrkit", "cp", str(src), str(dst)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while len(chunk_files(dst)) < 10 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(30)
        proc.stdout.close()
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    written = len(chunk_files(dst))
    assert 10 <= written < 200
    assert (dst / MARKER).exists()
    out = run("cp", src, dst).stdout
    assert f"{200 - written} chunks written, {written} already present" in out
    np.testing.assert_array_equal(open_array(dst)[:], data)
    assert not (dst / MARKER).exists()


# -- convert / verify / consolidate / rm -----------------------------------------------------------
def test_convert_in_place_both_ways(v2):
    chunks_before = chunk_files(v2)
    out = run("convert", v2, "--to", "3").stdout
    assert "to Zarr v3" in out
    assert (v2 / "zarr.json").exists() and not (v2 / ".zgroup").exists()
    assert (v2 / "grp" / "a" / "zarr.json").exists() and not (v2 / "grp" / "a" / ".zarray").exists()
    assert chunk_files(v2) == chunks_before  # metadata only
    np.testing.assert_array_equal(open_array(v2, "grp/a")[:], A)
    assert "already in Zarr v3" in run("convert", v2, "--to", "3").stdout
    run("convert", v2, "--to", "2")
    assert (v2 / ".zgroup").exists() and not (v2 / "zarr.json").exists()
    assert chunk_files(v2) == chunks_before
    a = open_array(v2, "grp/a")
    assert a.zarr_format == 2
    np.testing.assert_array_equal(a[:], A)


def test_convert_subtree_and_unconvertible(v2, tmp_path):
    run("convert", v2 / "grp", "--to", "3")
    assert (v2 / "grp" / "zarr.json").exists() and (v2 / ".zgroup").exists()
    native = tmp_path / "native.zarr"
    zarrkit.zeros((4,), chunks=2, store=str(native), zarr_format=3)[:] = 1
    # the default v3 chunk key encoding has no v2 equivalent: refused, nothing changed
    assert_one_line_error(run("convert", native, "--to", "2", expect=2), "chunk key encoding")
    assert (native / "zarr.json").exists()


def test_verify_clean_missing_and_corrupt(v2):
    out = run("verify", v2).stdout
    assert "0 corrupt" in out and "missing: b/3" in out and "missing: b/7" in out
    (v2 / "grp" / "a" / "3.4").write_bytes(b"not a blosc chunk")
    proc = run("verify", v2, expect=1)
    assert "corrupt: grp/a/3.4" in proc.stdout and "1 corrupt" in proc.stdout
    assert proc.stdout.count("corrupt: ") == 1


def test_verify_counts_the_missing_chunks_of_a_huge_grid_and_shows_the_first(tmp_path):
    path = tmp_path / "huge.zarr"
    path.mkdir()
    (path / ".zarray").write_text(json.dumps({
        "zarr_format": 2, "shape": [2**62, 2**62], "chunks": [1, 1], "dtype": "<f8", "compressor": None,
        "filters": None, "fill_value": 3.0, "order": "C"}))
    (path / "0.1").write_bytes(bytes(8))
    out = run("verify", path, "--max-missing", "3").stdout
    assert [ln for ln in out.splitlines() if ln.startswith("missing: 0.")] == ["missing: 0.0", "missing: 0.2",
                                                                                "missing: 0.3"]
    assert f"and {2**124 - 4} more in /" in out
    assert f"1 chunk decoded in 1 stored object, 0 corrupt, {2**124 - 1} missing" in out


def test_verify_sharded_and_corrupt_metadata(tmp_path):
    path = tmp_path / "sh.zarr"
    z = zarrkit.create_array(str(path), shape=(40, 40), chunks=(10, 10), shards=(20, 20), dtype="i2", zarr_format=3)
    z[:] = 3
    out = run("verify", path).stdout
    assert "16 chunks decoded in 4 stored objects, 0 corrupt, 0 missing" in out
    shard = path / "c" / "1" / "0"
    raw = bytearray(shard.read_bytes())
    raw[-8:] = b"\xff" * 8  # the index checksum no longer matches
    shard.write_bytes(bytes(raw))
    proc = run("verify", path, expect=1)
    assert "corrupt: c/1/0" in proc.stdout
    (path / "zarr.json").write_text("{not json")
    proc = run("verify", path, expect=1)
    assert "corrupt:" in proc.stdout and "zarr.json" in proc.stdout


def test_consolidate_v2_and_v3(v2, tmp_path):
    out = run("consolidate", v2).stdout
    assert ".zmetadata" in out and (v2 / ".zmetadata").exists()
    assert zarrkit.open_consolidated(str(v2))["grp/a"].shape == (100, 80)
    assert json.loads(run("info", v2, "--json").stdout)["consolidated"]
    v3 = tmp_path / "v3.zarr"
    run("cp", v2, v3, "--zarr-format", "3")  # a consolidated source gives a consolidated copy
    assert "consolidated_metadata" in json.loads((v3 / "zarr.json").read_text())
    run("consolidate", v3)
    assert zarrkit.open_consolidated(str(v3))["grp/a"].shape == (100, 80)
    assert_one_line_error(run("consolidate", v2 / "b", expect=2), "array")
    # to a zip file, quietly (the root document is rewritten once more)
    proc = run("cp", v2, tmp_path / "c.zip", "--zarr-format", "3")
    assert proc.stderr == ""
    with zarrkit.ZipStore(tmp_path / "c.zip", mode="r") as zs:
        assert zarrkit.open_consolidated(zs)["grp/a"].shape == (100, 80)
    # converting keeps a hierarchy consolidated; removing a node makes it stale (and says so)
    assert "consolidated again" in run("convert", v2, "--to", "3").stdout
    assert zarrkit.open_consolidated(str(v2), zarr_format=3)["b"].shape == (50,)
    assert "stale" in run("rm", v2 / "b", "--yes").stderr


def test_rm(v2, tmp_path):
    proc = run("rm", v2 / "grp" / "a", expect=2)
    assert_one_line_error(proc, "--yes")
    assert (v2 / "grp" / "a").exists()
    run("rm", v2 / "grp" / "a", "--yes")
    assert not (v2 / "grp" / "a").exists()
    assert [line.split()[0] for line in run("ls", v2).stdout.splitlines()] == ["b", "grp/", "s"]
    run("rm", v2, "--path", "b", "-y")
    assert not (v2 / "b").exists()
    run("rm", v2, "--yes")
    assert not v2.exists()
    assert_one_line_error(run("rm", v2, "--yes", expect=4), "no such file", code=4)


# -- errors --------------------------------------------------------------------------------------
def test_errors_are_one_line_with_their_exit_code(v2, tmp_path):
    assert_one_line_error(run("info", tmp_path / "missing.zarr", expect=4), "missing.zarr", "no such file", code=4)
    assert_one_line_error(run("tree", tmp_path, expect=4), "no Zarr array or group", code=4)
    assert_one_line_error(run("info", v2 / "grp" / "nope", expect=4), "no Zarr array or group", code=4)
    assert_one_line_error(run("ls", v2, "--path", "grp/zzz", expect=4), "no Zarr array or group", code=4)
    assert_one_line_error(run("bogus", expect=2), "invalid choice")
    assert_one_line_error(run("cp", v2, expect=2), "required")
    assert_one_line_error(run("convert", v2, "--zarr-format", "4", expect=2), "--zarr-format")
    assert_one_line_error(run("cp", v2 / "grp" / "a", tmp_path / "x.zarr", "--chunks", "a,b", expect=2), "--chunks")
    assert_one_line_error(run("cp", v2 / "grp" / "a", tmp_path / "x.zarr", "--chunks", "10", expect=2), "dimensions")
    assert_one_line_error(run("cp", v2 / "grp" / "a", tmp_path / "x.zarr", "--shards", "20,20", expect=2), "v3")
    assert_one_line_error(run("cp", v2 / "grp" / "a", tmp_path / "x.zarr", "--dtype", "nonsense", expect=2), "--dtype")
    assert not (tmp_path / "x.zarr").exists()  # bad arguments write nothing
    (tmp_path / "plain.txt").write_text("hello")
    assert_one_line_error(run("info", tmp_path / "plain.txt", expect=4), "not a Zarr store", code=4)
    (v2 / "grp" / "a" / ".zarray").write_text("{broken")
    assert_one_line_error(run("info", v2 / "grp" / "a", expect=5), ".zarray", code=5)
    assert run("--version").stdout.startswith("zarrkit ")
    assert "cp" in run("--help").stdout


def test_convert_keeps_consolidated_metadata(v2):
    run("consolidate", v2)
    zmeta = (v2 / ".zmetadata").read_bytes()
    # nothing to convert: nothing touched, .zmetadata kept
    assert "already in Zarr v2" in run("convert", v2, "--to", "2").stdout
    assert "already in Zarr v2" in run("convert", v2 / "grp", "--to", "2").stdout
    assert (v2 / ".zmetadata").read_bytes() == zmeta
    # a subtree below a consolidated v2 group cannot become v3: refused, nothing changed
    assert_one_line_error(run("convert", v2 / "grp", "--to", "3", expect=2), "consolidated")
    assert (v2 / ".zmetadata").read_bytes() == zmeta and (v2 / "grp" / ".zgroup").exists()
    # the whole hierarchy: consolidated again, in each format
    assert "consolidated again" in run("convert", v2, "--to", "3").stdout
    assert not (v2 / ".zmetadata").exists()
    assert zarrkit.open_consolidated(str(v2))["grp/a"].zarr_format == 3
    assert "consolidated again" in run("convert", v2, "--to", "2").stdout
    assert json.loads((v2 / ".zmetadata").read_text())["metadata"]["grp/a/.zarray"]["shape"] == [100, 80]
    np.testing.assert_array_equal(zarrkit.open_consolidated(str(v2))["grp/a"][:], A)


@pytest.mark.parametrize("args, suggestion", [
    (("verfy", "x.zarr"), "did you mean 'verify'?"),
    (("cp", "a", "b", "--compressor", "zsdt"), "did you mean 'zstd'?"),
    (("consolidte", "x.zarr"), "did you mean 'consolidate'?"),
])
def test_a_mistyped_choice_gets_a_suggestion(args, suggestion):
    proc = run(*args, expect=2)
    assert_one_line_error(proc, "invalid choice", suggestion)


def test_a_choice_nothing_resembles_gets_no_suggestion():
    proc = run("frobnicate", "x.zarr", expect=2)
    assert_one_line_error(proc, "invalid choice: 'frobnicate'")
    assert "did you mean" not in proc.stderr


def test_import_and_cp_progress_raise_no_warning(tmp_path):
    """``python -W error``: importing zarrkit and copying a 2000×2000 array with a progress bar
    emit no warning (an error here), and the bar is drawn, named after the array."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZARRKIT_")}
    env["PYTHONWARNINGS"] = "error"
    proc = subprocess.run([sys.executable, "-W", "error", "-c", "import zarrkit, zarrkit.cli"],
                          capture_output=True, text=True, env=env, timeout=60, check=False)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    src = tmp_path / "big.zarr"
    z = zarrkit.open_array(src, mode="w", shape=(2000, 2000), chunks=(200, 200), dtype="f4")
    z[:] = np.arange(4_000_000, dtype="f4").reshape(2000, 2000)
    proc = subprocess.run(
        [sys.executable, "-W", "error", "-m", "zarrkit", "cp", "--progress", str(src), str(tmp_path / "copy.zarr")],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "100 chunks written" in proc.stdout
    drawn = frames(proc.stderr)
    # the bar counts in powers of 1024 as the summary line does (16,000,000 bytes: 15.3 MiB),
    # and names the array once, in its label
    assert "; 15.3M in " in proc.stdout, proc.stdout
    assert drawn and all(f.startswith("big.zarr: ") and "/15.3M" in f and "iB/s" in f for f in drawn), drawn
    assert all(f.count("big.zarr") == 1 for f in drawn), drawn
    assert "Warning" not in proc.stderr
    np.testing.assert_array_equal(open_array(tmp_path / "copy.zarr")[:], z[:])


# -- the command's own voice -----------------------------------------------------------------------
def test_a_warning_raised_during_a_command_is_one_line_in_the_commands_voice(v2, tmp_path):
    """Consolidating a zip file rewrites its root document, which the zip store warns about:
    the warning comes out as ``zarrkit: warning: ...``, not as Python's ``file.py:60:
    UserWarning: ...`` followed by a line of source."""
    zpath = tmp_path / "data.zip"
    with zarrkit.ZipStore(zpath, mode="w") as zs:
        zarrkit.copy_store(zarrkit.DirectoryStore(v2), zs)
    run("consolidate", zpath)  # .zmetadata is new: nothing written twice
    proc = run("consolidate", zpath)
    assert "consolidated the metadata of 5 nodes" in proc.stdout
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("zarrkit: warning: ZipStore "), lines[0]
    assert "written again" in lines[0]
    assert "UserWarning" not in proc.stderr and ".py:" not in proc.stderr


def test_the_warning_voice_is_only_for_the_command(v2):
    """``main`` restores Python's own warning display when it returns."""
    import warnings

    from zarrkit.cli import main

    before = warnings.showwarning
    assert main(["ls", str(v2)]) == 0
    assert warnings.showwarning is before


@pytest.mark.parametrize("args, option, expectation", [
    (("tree", "{v2}", "--level", "-1"), "--level", "an integer >= 0, got -1"),
    (("tree", "{v2}", "--level", "one"), "--level", "an integer, got 'one'"),
    (("verify", "{v2}", "--max-missing", "-5"), "--max-missing", "an integer >= 0, got -5"),
    (("cp", "{v2}", "{tmp}/copy.zarr", "--buffer", "0"), "--buffer", "an integer >= 1, got 0"),
])
def test_numeric_arguments_out_of_range_are_refused(v2, tmp_path, args, option, expectation):
    proc = run(*(a.format(v2=v2, tmp=tmp_path) for a in args), expect=2)
    assert_one_line_error(proc, f"argument {option}: expected {expectation}")
    assert proc.stdout == ""
    assert not (tmp_path / "copy.zarr").exists()


def test_tree_level_zero_is_the_node_alone_and_output_ends_without_a_blank_line(v2):
    assert run("tree", v2, "--level", "0").stdout == "/\n"
    for args in ((v2,), (v2, "--level", "1"), (v2 / "grp",)):
        out = run("tree", *args).stdout
        assert out.endswith("\n") and not out.endswith("\n\n"), repr(out[-20:])
        assert "" not in out.splitlines()


def test_counts_agree_with_their_nouns(v2, tmp_path):
    assert_one_line_error(run("cp", v2 / "grp" / "a", tmp_path / "x.zarr", "--chunks", "10", expect=2),
                          "--chunks 10 has 1 value but array /grp/a has 2 dimensions")
    assert_one_line_error(run("cp", v2 / "b", tmp_path / "x.zarr", "--chunks", "5,5", expect=2),
                          "--chunks 5,5 has 2 values but array /b has 1 dimension")
    assert_one_line_error(
        run("cp", v2 / "b", tmp_path / "x.zarr", "--zarr-format", "3", "--shards", "7,7", expect=2),
        "--shards 7,7 has 2 values but array /b has 1 dimension")
    ls = run("ls", v2).stdout.splitlines()
    assert ls[1].split("group")[1].strip() == "1 member"
    # one array of one chunk: every count of the summaries is singular
    one = tmp_path / "one.zarr"
    zarrkit.array(np.arange(5), chunks=5, store=str(one), zarr_format=2)
    out = run("verify", one).stdout
    assert out.splitlines()[-1] == ("verified 1 array: 1 chunk decoded in 1 stored object, "
                                    "0 corrupt, 0 missing")
    out = run("cp", one, tmp_path / "copy.zarr").stdout
    assert "1 array, 0 groups; 1 chunk written, 0 already present, 0 empty; " in out
    assert " bytes in " in out


def test_tree_level_counts_the_levels_shown_in_both_formats(tmp_path):
    for fmt in (2, 3):
        path = tmp_path / f"f{fmt}.zarr"
        zarrkit.open_group(path, mode="w", zarr_format=fmt).create_group("a").create_group("b")
        assert run("tree", path, "--level", "0").stdout.splitlines() == ["/"], fmt
        shown = run("tree", path, "--level", "1").stdout
        assert "a" in shown and "b" not in shown, (fmt, shown)
