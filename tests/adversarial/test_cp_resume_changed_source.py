"""A resumed ``zarrkit cp`` notices a source changed since the interrupted run.

The first run records each source array's metadata and a version token (or size) of each
stored chunk; the resume compares them with the source as it is now, and copies again every
destination chunk made from a chunk that changed (rewritten, added or removed), instead of
keeping what the interrupted run copied from the older version.
"""

from __future__ import annotations

import contextlib
import io
import os

import numpy as np
import pytest

import zarrkit
from zarrkit.cli import main

OLD = np.arange(40, dtype="i4")


def cli(*args: object) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue() + err.getvalue()


def make_source(path, fmt):
    group = zarrkit.open_group(str(path), mode="w", zarr_format=fmt)
    group.create_dataset("a", data=OLD, chunks=(4,))
    return group


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("dst_name", ["dst.zarr", "dst.zip"])
@pytest.mark.parametrize("change", ["rewrite", "remove", "add"])
def test_a_resume_copies_again_what_changed_in_the_source(tmp_path, monkeypatch, fmt, dst_name, change):
    src, dst = tmp_path / "src.zarr", tmp_path / dst_name
    group = make_source(src, fmt)
    if change == "add":
        group["a"][36:] = 0  # a missing chunk the change then writes
        for key in ("c/9", "9"):
            if (src / "a" / key).exists():
                (src / "a" / key).unlink()
    monkeypatch.setenv("ZARRKIT_CP_FAIL_AFTER", "3")
    code, out = cli("cp", src, dst)
    assert code == 3, out
    monkeypatch.delenv("ZARRKIT_CP_FAIL_AFTER")
    new = zarrkit.open_array(str(src), path="a")
    expected = new[:]
    if change == "rewrite":
        new[:] = expected = OLD * 10  # every chunk, those copied already too
    elif change == "remove":
        new[0:4] = 0  # the first chunk (copied already) left to the fill value
        for key in ("c/0", "0"):
            if (src / "a" / key).exists():
                (src / "a" / key).unlink()
        expected = new[:]
    else:
        new[36:] = expected[36:] = 7
    code, out = cli("cp", src, dst)
    assert code == 0, out
    copy = zarrkit.open_array(str(dst), path="a", mode="r")
    np.testing.assert_array_equal(copy[:], expected)


def test_a_resume_after_the_source_metadata_changed_copies_the_array_again(tmp_path, monkeypatch):
    src, dst = tmp_path / "src.zarr", tmp_path / "dst.zarr"
    make_source(src, 3)
    monkeypatch.setenv("ZARRKIT_CP_FAIL_AFTER", "3")
    assert cli("cp", src, dst)[0] == 3
    monkeypatch.delenv("ZARRKIT_CP_FAIL_AFTER")
    # same shape, data type and chunks, other codecs: every chunk is rewritten
    zarrkit.create_array(str(src), name="a", data=OLD + 1, chunks=(4,), compressors=None, overwrite=True)
    code, out = cli("cp", src, dst, "--compressor", "zstd")
    assert code in (0, 2), out  # another plan: refused as another command, or copied again
    if code == 0:
        np.testing.assert_array_equal(zarrkit.open_array(str(dst), path="a")[:], OLD + 1)


def test_an_unchanged_source_resumes_without_copying_again(tmp_path, monkeypatch):
    src, dst = tmp_path / "src.zarr", tmp_path / "dst.zarr"
    make_source(src, 3)
    monkeypatch.setenv("ZARRKIT_CP_FAIL_AFTER", "3")
    assert cli("cp", src, dst)[0] == 3
    monkeypatch.delenv("ZARRKIT_CP_FAIL_AFTER")
    code, out = cli("cp", src, dst)
    assert code == 0 and "7 chunks written, 3 already present" in out, out
    assert not (dst / ".zarrkit-copy-in-progress").exists()
    assert not os.path.exists(str(dst) + ".partial.sources.json")
