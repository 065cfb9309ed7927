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


def test_rechunk_takes_the_shard_rules_of_cp(tmp_path, capsys):
    """``--shards auto``, a target size, ``none`` and NAME=RULE, resolved array by array as
    ``cp`` resolves them: both commands give the same layout."""
    g = zarrkit.open_group(tmp_path / "g.zarr", mode="w", zarr_format=3)
    g.create_array("vol", shape=(64, 64, 64), chunks=(16, 16, 16), dtype="f4")[:] = 1
    g.create_array("sh", shape=(40, 40), chunks=(10, 10), shards=(20, 20), dtype="u1")[:] = 2
    g.create_array("line", shape=(100,), chunks=(10,), dtype="i2")[:] = 3
    for rules, expected in (
        (["--shards", "auto"], {"vol": (64, 64, 64), "sh": (40, 40), "line": (100,)}),
        (["--shards", "64KiB", "--chunks", "8,8,8"], {"vol": (16, 32, 32), "sh": (40, 40), "line": (100,)}),
        (["--shards", "none"], {"vol": None, "sh": None, "line": None}),
        (["--shards", "sh=none", "--shards", "auto"], {"vol": (64, 64, 64), "sh": None, "line": (100,)}),
    ):
        made = {}
        for command in ("rechunk", "cp"):
            dst = tmp_path / f"{command}.zarr"
            assert main([command, str(tmp_path / "g.zarr"), str(dst), *rules, "--overwrite", "-q"]) == 0, \
                capsys.readouterr().err
            h = zarrkit.open_group(dst, mode="r")
            made[command] = {n: (h[n].shards, h[n].chunks) for n in ("vol", "sh", "line")}
            assert (h["sh"][:] == 2).all() and (h["line"][:] == 3).all()
        assert made["rechunk"] == made["cp"], rules
        assert {n: s for n, (s, _) in made["rechunk"].items()} == expected, rules
    capsys.readouterr()
    assert main(["rechunk", str(tmp_path / "g.zarr"), str(tmp_path / "x.zarr"), "--shards", "nope=auto"]) == 2
    assert "--shards nope=auto: no array nope in the copy" in capsys.readouterr().err


def test_rechunk_shards_need_v3(src, tmp_path, capsys):
    assert main(["rechunk", str(src), str(tmp_path / "d.zarr"), "--shards", "auto"]) == 2
    assert "--shards needs Zarr v3" in capsys.readouterr().err
    assert not (tmp_path / "d.zarr").exists()
