"""The ``zarrkit rechunk`` command."""

from __future__ import annotations

import numpy as np
import pytest

import zarrkit
from zarrkit.cli import main


@pytest.fixture
def src(tmp_path):
    a = zarrkit.open_array(tmp_path / "s.zarr", mode="w", shape=(40, 50), chunks=(40, 1), dtype="i4", zarr_format=2)
    a[:] = np.arange(2000).reshape(40, 50)
    return tmp_path / "s.zarr"


def test_rechunk_to_v3_with_max_mem_and_verify(src, tmp_path, capsys):
    code = main(["rechunk", str(src), str(tmp_path / "d.zarr"), "--chunks", "1,-1", "--zarr-format", "3",
                 "--max-mem", "4KB", "--verify", "--dtype", "f8"])
    assert code == 0
    out = capsys.readouterr().out
    assert "rechunked" in out and "verified" in out
    d = zarrkit.open_array(tmp_path / "d.zarr", mode="r")
    assert (d.zarr_format, d.chunks, d.dtype) == (3, (1, 50), np.dtype("f8"))
    np.testing.assert_array_equal(d[:], np.arange(2000).reshape(40, 50))
    # again: nothing to do (0 blocks); quiet shows no bar, the summary stays (as cp's)
    assert main(["rechunk", str(src), str(tmp_path / "d.zarr"), "--chunks", "1,-1", "--zarr-format", "3",
                 "--max-mem", "4KB", "-q", "--dtype", "f8"]) == 0
    captured = capsys.readouterr()
    assert "rechunked" in captured.out and "0 blocks" in captured.out and captured.err == ""


def test_rechunk_group_by_name_and_shards(tmp_path, capsys):
    g = zarrkit.open_group(tmp_path / "g.zarr", mode="w", zarr_format=3)
    g.attrs["t"] = 1
    g.create_array("a/x", shape=(20, 20), chunks=(20, 1), dtype="u2")[:] = 7
    g.create_array("y", shape=(9,), chunks=(3,), dtype="u2")[:] = 3
    assert main(["rechunk", str(tmp_path / "g.zarr"), str(tmp_path / "h.zarr"), "--chunks", "a/x=5,5",
                 "--shards", "a/x=10,20", "-q"]) == 0
    h = zarrkit.open_group(tmp_path / "h.zarr", mode="r")
    assert (h["a/x"].chunks, h["a/x"].shards, h["y"].chunks, dict(h.attrs)) == ((5, 5), (10, 20), (3,), {"t": 1})
    assert (h["a/x"][:] == 7).all()


def test_rechunk_errors_name_the_option(src, tmp_path, capsys):
    assert main(["rechunk", str(src), str(tmp_path / "d.zarr"), "--chunks", "1,50", "--max-mem", "100"]) == 2
    assert "max_mem: expected at least" in capsys.readouterr().err
    assert main(["rechunk", str(src), str(tmp_path / "d.zarr"), "--chunks", "x,y"]) == 2
    assert "--chunks" in capsys.readouterr().err
    assert main(["rechunk", str(src), str(tmp_path / "d.zip"), "--chunks", "1,50"]) == 2
    assert "zip" in capsys.readouterr().err
