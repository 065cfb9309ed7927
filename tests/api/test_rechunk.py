"""zarrkit.rechunk: the plan, the copy of arrays and groups between formats, bounded blocks,
the intermediate array, resuming after SIGKILL, verification, executors and the bar."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numcodecs
import numpy as np
import pytest

import zarrkit
from zarrkit.api.rechunk_plan import parse_memory, plan_rechunk
from zarrkit.api.rechunking import PROGRESS_KEY, TEMP_SUFFIX, _drop_chunks_within
from zarrkit.errors import ContainsArrayError
from zarrkit.storage.base import join_path


def stored(root: Path) -> dict[str, bytes]:
    """Every object below a directory store but the progress document, by key."""
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.name != PROGRESS_KEY:
            out[path.relative_to(root).as_posix()] = path.read_bytes()
    return out


def source(tmp_path: Path, fmt: int = 3, shape=(24, 40, 30), chunks=(4, 40, 30)) -> tuple[zarrkit.Array, np.ndarray]:
    data = np.random.default_rng(1).standard_normal(shape).astype("f4")
    data[0, 0, :5] = np.nan
    a = zarrkit.open_array(tmp_path / "src.zarr", mode="w", shape=shape, chunks=chunks, dtype="f4",
                           zarr_format=fmt, fill_value=0)
    a[:] = data
    a.attrs["units"] = "K"
    return a, data


# -- the plan ----------------------------------------------------------------------------------------
def test_plan_aligned_chunks_take_one_stage_crossing_chunks_an_intermediate():
    one = plan_rechunk((100, 100), 8, (10, 10), (20, 20), 10**6, threads=2)
    assert len(one.stages) == 1 and one.intermediate is None
    assert all(b % 20 == 0 or b >= 100 for b in one.stages[0].block)
    # the paper's case: (64, 512, 512) -> (2048, 16, 16) float32 in 256 MiB
    two = plan_rechunk((2048, 1024, 512), 4, (64, 512, 512), (2048, 16, 16), 256 * 2**20, threads=2)
    assert two.intermediate is not None and len(two.stages) == 2
    read, write = two.stages
    # every block covers whole chunks of what it writes, and whole source chunks are read
    assert all(b % c == 0 for b, c in zip(read.block, two.intermediate))
    assert all(b % c == 0 for b, c in zip(read.block, (64, 512, 512)))
    assert all(b % c == 0 for b, c in zip(write.block, (2048, 16, 16)))
    # one block plus the chunk tasks' buffers within max_mem
    chunk = 64 * 512 * 512 * 4
    assert two.block_bytes + 2 * chunk <= 256 * 2**20 and read.threads == 1


def test_plan_refuses_a_max_mem_below_one_chunk_naming_it():
    with pytest.raises(ValueError, match=r"max_mem: expected at least \d+ bytes .*array /x.*got 1000"):
        plan_rechunk((100, 100), 8, (100, 100), (10, 10), 1000, name="/x")
    assert parse_memory("256MiB") == 2**28 and parse_memory("1.5 GB") == 1_500_000_000
    with pytest.raises(ValueError, match="max_mem"):
        parse_memory("lots")


# -- arrays and groups -------------------------------------------------------------------------------
def test_v3_to_v2_with_new_dtype_and_compressor_through_an_intermediate(tmp_path):
    a, data = source(tmp_path)
    events = []
    out = zarrkit.rechunk(a, tmp_path / "dst.zarr", chunks=(24, 5, 5), max_mem="300KB", zarr_format=2,
                          dtype="f8", compressor=numcodecs.Zstd(level=1), progress=False,
                          callback=events.append, verify=True)
    assert (out.zarr_format, out.chunks, out.dtype) == (2, (24, 5, 5), np.dtype("f8"))
    assert out.compressor == numcodecs.Zstd(level=1)
    assert dict(out.attrs) == {"units": "K"}
    np.testing.assert_array_equal(out[:], data.astype("f8"))
    # two stages, every block within max_mem, and the intermediate array is gone
    assert {e.stage for e in events} == {1, 2} and events[-1].stages == 2
    assert max(e.nbytes for e in events) <= 300_000
    assert events[-1].done == events[-1].total
    assert not (tmp_path / ("dst.zarr" + TEMP_SUFFIX)).exists()
    assert json.loads((tmp_path / "dst.zarr" / PROGRESS_KEY).read_text())["complete"] is True


def test_v2_to_v3_sharded_in_one_stage_into_a_memory_store(tmp_path):
    a, data = source(tmp_path, fmt=2, chunks=(8, 10, 10))
    target = zarrkit.MemoryStore()
    events = []
    out = zarrkit.rechunk(a, target, chunks=(8, 10, 10), shards=(8, 20, 30), zarr_format=3,
                          max_mem="1MB", progress=False, callback=events.append)
    assert (out.zarr_format, out.chunks, out.shards) == (3, (8, 10, 10), (8, 20, 30))
    np.testing.assert_array_equal(out[:], data)
    assert {e.stages for e in events} == {1}


def test_group_with_chunks_by_name_by_rank_and_auto(tmp_path):
    g = zarrkit.open_group(tmp_path / "g.zarr", mode="w", zarr_format=3)
    g.attrs["title"] = "top"
    sub = g.create_group("sub")
    sub.attrs["level"] = 1
    x = sub.create_array("x", shape=(30, 40), chunks=(30, 1), dtype="i8")
    x[:] = np.arange(1200).reshape(30, 40)
    x.attrs["a"] = [1, 2]
    y = g.create_array("y", shape=(50,), chunks=(7,), dtype="u1")
    y[:] = np.arange(50)
    out = zarrkit.rechunk(g, tmp_path / "by-name.zarr", chunks={"sub/x": (1, 40), "y": "auto"},
                          max_mem="20KB", progress=False, verify=True)
    assert dict(out.attrs) == {"title": "top"} and dict(out["sub"].attrs) == {"level": 1}
    assert out["sub/x"].chunks == (1, 40) and dict(out["sub/x"].attrs) == {"a": [1, 2]}
    assert out["y"].chunks == (50,)
    np.testing.assert_array_equal(out["sub/x"][:], x[:])
    # one shape applies to the arrays of its rank; the others keep their chunks
    out = zarrkit.rechunk(g, tmp_path / "by-rank.zarr", chunks=(-1, 8), progress=False)
    assert out["sub/x"].chunks == (30, 8) and out["y"].chunks == (7,)
    np.testing.assert_array_equal(out["y"][:], np.arange(50))


def test_temp_store_given_holds_the_intermediate_and_is_emptied(tmp_path):
    a, _ = source(tmp_path)
    temp = zarrkit.MemoryStore()
    seen = []
    zarrkit.rechunk(a, tmp_path / "dst.zarr", chunks=(24, 5, 5), max_mem="150KB", temp_store=temp,
                    progress=False, callback=lambda e: seen.append(len(list(temp.list_prefix("")))))
    assert max(seen) > 0 and list(temp.list_prefix("")) == []
    assert not (tmp_path / ("dst.zarr" + TEMP_SUFFIX)).exists()


def test_existing_target_refused_finished_rerun_is_a_no_op_and_verify_finds_changes(tmp_path):
    a, data = source(tmp_path)
    zarrkit.zeros((3,), store=tmp_path / "other.zarr")
    with pytest.raises(ContainsArrayError, match="overwrite=True"):
        zarrkit.rechunk(a, tmp_path / "other.zarr", chunks=(24, 5, 5), progress=False)
    out = zarrkit.rechunk(a, tmp_path / "other.zarr", chunks=(24, 5, 5), progress=False, overwrite=True)
    np.testing.assert_array_equal(out[:], data)
    before = stored(tmp_path / "other.zarr")
    events = []
    zarrkit.rechunk(a, tmp_path / "other.zarr", chunks=(24, 5, 5), max_mem="1MiB", progress=False,
                    callback=events.append)
    assert events == [] and stored(tmp_path / "other.zarr") == before
    out[0, 0, 0] = 42
    with pytest.raises(ValueError, match=r"verify: .* differs from the source in \[0:24"):
        zarrkit.rechunk(a, tmp_path / "other.zarr", chunks=(24, 5, 5), progress=False, verify=True)


def test_progress_bar_in_bytes_per_second(tmp_path, capsys):
    a, _ = source(tmp_path)
    zarrkit.rechunk(a, tmp_path / "dst.zarr", chunks=(24, 5, 5), max_mem="150KB")
    err = capsys.readouterr().err
    assert "B/s" in err and "rechunk" in err
    zarrkit.rechunk(a, tmp_path / "quiet.zarr", chunks=(24, 5, 5), max_mem="150KB", progress=False)
    assert capsys.readouterr().err == ""


def _temp_chunk_files(tmp_path: Path) -> int:
    temp = tmp_path / ("dst.zarr" + TEMP_SUFFIX)
    return sum(1 for p in temp.rglob("*") if p.is_file() and not p.name.startswith("."))


def test_the_intermediate_shrinks_as_the_last_stage_reads_it(tmp_path):
    a, data = source(tmp_path)
    counts: dict[int, list[int]] = {1: [], 2: []}
    out = zarrkit.rechunk(a, tmp_path / "dst.zarr", chunks=(24, 5, 5), zarr_format=2, max_mem="60KB",
                          progress=False, callback=lambda e: counts[e.stage].append(_temp_chunk_files(tmp_path)))
    # the first stage fills the intermediate; the second only takes chunks away from it
    # (those a block read, once the block is recorded: in the background), the end all
    assert counts[1] == sorted(counts[1]) and counts[1][-1] > 0
    assert counts[2] == sorted(counts[2], reverse=True) and counts[2][0] <= counts[1][-1]
    assert not (tmp_path / ("dst.zarr" + TEMP_SUFFIX)).exists()
    np.testing.assert_array_equal(out[:], data)


@pytest.mark.parametrize("fmt", [2, 3])
def test_the_chunks_dropped_for_a_region_are_those_wholly_within_it(tmp_path, fmt):
    a = zarrkit.create_array(str(tmp_path / "a.zarr"), shape=(10, 7), chunks=(3, 2), dtype="i2",
                             fill_value=0, zarr_format=fmt)
    a[...] = 1
    _drop_chunks_within(a, (slice(2, 10), slice(0, 4)))
    # rows 3-9 (chunk rows 1-3, the last cut by the shape), columns 0-3 (chunk columns 0-1)
    gone = {(i, j) for i in (1, 2, 3) for j in (0, 1)}
    kept = {(i, j) for i in range(4) for j in range(4)} - gone
    assert {c for c in kept | gone if a.store.get(join_path(a.path, a.metadata.chunk_key(c))) is None} == gone


@pytest.mark.slow
def test_on_a_dask_client(tmp_path):
    distributed = pytest.importorskip("distributed")
    a, data = source(tmp_path)
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None):
        out = zarrkit.rechunk(a, tmp_path / "dst.zarr", chunks=(24, 5, 5), max_mem="150KB",
                              executor="dask", progress=False)
    np.testing.assert_array_equal(out[:], data)
    clean = zarrkit.rechunk(a, tmp_path / "clean.zarr", chunks=(24, 5, 5), max_mem="150KB", progress=False)
    assert stored(tmp_path / "dst.zarr") == stored(tmp_path / "clean.zarr") and clean.chunks == (24, 5, 5)


# -- SIGKILL at enumerated points ------------------------------------------------------------------------
DRIVER = textwrap.dedent(
    """
    import os, signal, sys
    import zarrkit

    kill_after = int(os.environ["RECHUNK_KILL_AFTER"])
    written = []

    def callback(event):
        written.append(event)
        if len(written) == kill_after:
            os.kill(os.getpid(), signal.SIGKILL)

    src, dst = sys.argv[1], sys.argv[2]
    zarrkit.rechunk(src, dst, chunks=(24, 5, 5), zarr_format=2, max_mem="60KB",
                    progress=False, callback=callback)
    """
)

#: the kill points: after the first block, in the first stage, at its end, in the second stage,
#: after the last block (before the run is marked complete); the plan has 6 + 8 blocks
KILL_POINTS = [1, 3, 6, 7, 14]


@pytest.mark.slow
@pytest.mark.parametrize("kill_after", KILL_POINTS)
def test_killed_rechunk_resumes_to_identical_bytes(tmp_path, kill_after):
    a, data = source(tmp_path)
    events = []
    zarrkit.rechunk(a, tmp_path / "clean.zarr", chunks=(24, 5, 5), zarr_format=2, max_mem="60KB",
                    progress=False, callback=events.append)
    assert [sum(e.stage == s for e in events) for s in (1, 2)] == [6, 8]  # the points above
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    env = dict(os.environ, RECHUNK_KILL_AFTER=str(kill_after))
    proc = subprocess.run([sys.executable, str(driver), str(tmp_path / "src.zarr"), str(tmp_path / "dst.zarr")],
                          env=env, capture_output=True, timeout=60, check=False)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    record = json.loads((tmp_path / "dst.zarr" / PROGRESS_KEY).read_text())
    assert record["complete"] is False
    assert sum(len(s) for s in record["done"][""]) == kill_after
    resumed = []
    out = zarrkit.rechunk(tmp_path / "src.zarr", tmp_path / "dst.zarr", chunks=(24, 5, 5), zarr_format=2,
                          max_mem="60KB", progress=False, callback=resumed.append, verify=True)
    assert len(resumed) == len(events) - kill_after
    assert stored(tmp_path / "dst.zarr") == stored(tmp_path / "clean.zarr")
    assert not (tmp_path / ("dst.zarr" + TEMP_SUFFIX)).exists()
    np.testing.assert_array_equal(out[:], data)
