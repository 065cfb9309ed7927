"""The command line's vocabulary, layouts, progress, exit codes and messages: run through
``main(argv)`` on real stores (subprocesses only where the environment must differ)."""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numcodecs
import numpy as np
import pytest

import zarrkit
from zarrkit.api.rechunk_plan import parse_memory
from zarrkit.cli import build_parser, main
from zarrkit.cli.options import auto_shards, parse_size

DOCS = Path(__file__).resolve().parents[2] / "docs" / "guide" / "cli.md"


@pytest.fixture
def mixed(tmp_path):
    """A v2 hierarchy whose arrays differ in rank: /vol (3-D, 64 KiB chunks) and /small (1-D)."""
    path = tmp_path / "big.zarr"
    g = zarrkit.open_group(str(path), mode="w", zarr_format=2)
    vol = g.zeros("vol", shape=(64, 64, 64), chunks=(16, 16, 16), dtype="f4")
    vol[:] = np.arange(64**3, dtype="f4").reshape(64, 64, 64)
    small = g.zeros("small", shape=(100,), chunks=(10,), dtype="i2")
    small[:50] = 3
    return path


def cli(capsys, *args, code=0):
    got = main([str(a) for a in args])
    out, err = capsys.readouterr()
    assert got == code, (got, out, err)
    return out, err


def opened(path, node):
    return zarrkit.open_array(str(path), path=node, mode="r")


# -- one vocabulary --------------------------------------------------------------------------------
def _options(parser: argparse.ArgumentParser) -> dict[str, dict[str, str]]:
    """By command: option string -> destination, hidden aliases left out."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {name: {s: a.dest for a in p._actions if a.help != argparse.SUPPRESS for s in a.option_strings}
            for name, p in sub.choices.items()}


def test_every_option_names_one_thing_and_each_thing_has_one_name():
    by_command = _options(build_parser())
    dest_of: dict[str, str] = {}
    names_of: dict[str, set[str]] = {}
    for options in by_command.values():
        for option, dest in options.items():
            assert dest_of.setdefault(option, dest) == dest, option  # one meaning per name
            names_of.setdefault(dest, set()).add(option)
    # ... and one name per meaning (a short form beside the long one): --to is cp's --zarr-format
    assert names_of["zarr_format"] == {"--zarr-format"}
    assert names_of["progress"] == {"--progress", "-q", "--quiet", "--no-progress"}
    assert all(len({n for n in names if n.startswith("--")}) == 1 for d, names in names_of.items()
               if d != "progress"), names_of
    assert "--zarr-format" in by_command["cp"] and "--zarr-format" in by_command["convert"]


def test_convert_takes_zarr_format_and_still_the_old_to(mixed, capsys):
    out, _ = cli(capsys, "convert", mixed, "--zarr-format", "3")
    assert "to Zarr v3" in out and opened(mixed, "vol").zarr_format == 3
    out, _ = cli(capsys, "convert", mixed, "--to", "2")  # scripts written for the old name
    assert "to Zarr v2" in out and opened(mixed, "vol").zarr_format == 2
    _, err = cli(capsys, "convert", mixed, code=2)
    assert "required: --zarr-format" in err and "--to" not in err
    assert "--to" not in build_parser()._subparsers._group_actions[0].choices["convert"].format_help()


# -- per-array shards and chunks -----------------------------------------------------------------
def test_a_shape_applies_to_the_arrays_of_its_rank(mixed, tmp_path, capsys):
    dst = tmp_path / "out.zarr"
    cli(capsys, "cp", mixed, dst, "--zarr-format", "3", "--shards", "32,32,32", "--chunks", "20", "-q")
    vol, small = opened(dst, "vol"), opened(dst, "small")
    assert (vol.shards, vol.chunks) == ((32, 32, 32), (16, 16, 16))
    assert (small.shards, small.chunks) == (None, (20,))  # other rank: unsharded as its source
    np.testing.assert_array_equal(vol[:], opened(mixed, "vol")[:])
    np.testing.assert_array_equal(small[:], opened(mixed, "small")[:])
    # a shape per rank, and a rule for the rest
    dst = tmp_path / "out2.zarr"
    cli(capsys, "cp", mixed, dst, "--zarr-format", "3", "--shards", "8,8,8,8", "--shards", "auto", "-q",
        code=2)  # no 4-D array: a typo, refused before anything is written
    assert not dst.exists()
    cli(capsys, "cp", mixed, dst, "--zarr-format", "3", "--shards", "32,32,64", "--shards", "auto", "-q")
    assert opened(dst, "vol").shards == (32, 32, 64) and opened(dst, "small").shards == (100,)
    _, err = cli(capsys, "cp", mixed, tmp_path / "x.zarr", "--zarr-format", "3", "--shards", "auto",
                 "--shards", "none", code=2)
    assert "give one of auto, a size or none" in err


def test_shards_by_target_size(mixed, tmp_path, capsys):
    dst = tmp_path / "out.zarr"
    cli(capsys, "cp", mixed, dst, "--zarr-format", "3", "--shards", "256KiB", "-q")
    vol = opened(dst, "vol")
    assert math.prod(vol.shards) * 4 == 256 * 1024 and all(s % 16 == 0 for s in vol.shards)
    assert opened(dst, "small").shards == (100,)  # the whole of a small array
    np.testing.assert_array_equal(vol[:], opened(mixed, "vol")[:])


@pytest.mark.parametrize("shape, chunks, itemsize, target", [
    ((1000, 1000), (100, 100), 4, 2**20),
    ((10_000, 50, 50), (10, 50, 50), 8, 64 * 2**20),
    ((7,), (3,), 1, 10**9),
    ((2**20,), (1000,), 8, 40_000),
])
def test_auto_shards_holds_whole_chunks_up_to_the_target(shape, chunks, itemsize, target):
    shards = auto_shards(shape, chunks, itemsize, target)
    assert shards is not None and all(s % c == 0 for s, c in zip(shards, chunks))
    nbytes = math.prod(shards) * itemsize
    covers = all(s >= n for s, n in zip(shards, shape))
    assert nbytes <= target and (covers or nbytes > target / 2 ** len(shape)), (shards, nbytes)
    assert all(s < n + c for s, n, c in zip(shards, shape, chunks))  # never beyond the array


def test_auto_shards_of_chunks_already_at_the_target_is_none():
    assert auto_shards((1000, 1000), (500, 500), 8, 2**20) is None
    assert auto_shards((10,), (10,), 1, 2**20) is None


def test_sizes():
    # one reading of sizes in every option (--shards, --max-mem) and in zarrkit.rechunk's
    # max_mem: KiB, MiB... powers of 1024; KB, MB... and K, M... of 1000, as dask reads them
    assert parse_size("64MiB") == parse_memory("64MiB") == 64 * 2**20
    assert parse_size("64M") == parse_size("64MB") == parse_memory("64M") == 64 * 10**6
    assert parse_size("1.5k") == 1500 and parse_size("1.5KiB") == 1536 and parse_size("12") == 12
    assert parse_size("lots") is None and parse_size("0") is None


# -- --compressor with a level ----------------------------------------------------------------------
@pytest.mark.parametrize("spec, check", [
    ("zstd:7", lambda c: isinstance(c, numcodecs.Zstd) and c.level == 7),
    ("blosc:lz4:2", lambda c: c.cname == "lz4" and c.clevel == 2),
    ("blosc:8", lambda c: c.cname == "zstd" and c.clevel == 8),
    ("gzip:1", lambda c: isinstance(c, numcodecs.GZip) and c.level == 1),
])
def test_compressor_levels(mixed, tmp_path, capsys, spec, check):
    cli(capsys, "cp", mixed / "small", tmp_path / "c.zarr", "--compressor", spec, "-q")
    assert check(opened(tmp_path / "c.zarr", None).compressor)


@pytest.mark.parametrize("spec, fragment", [
    ("gzip:10", "0..9"), ("blosc:lzma", "blosclz"), ("zstd:x", "integer"), ("zstd:1:2", "LEVEL"),
])
def test_compressor_levels_out_of_range_are_refused(mixed, tmp_path, capsys, spec, fragment):
    _, err = cli(capsys, "cp", mixed, tmp_path / "c.zarr", "--compressor", spec, code=2)
    assert "argument --compressor" in err and fragment in err
    assert not (tmp_path / "c.zarr").exists()


# -- progress in bytes ----------------------------------------------------------------------------
def frames(stderr):
    return [f.strip() for f in stderr.replace("\n", "\r").split("\r") if f.strip()]


def test_verify_and_rm_show_bytes_over_the_whole_hierarchy(mixed, capsys):
    _, err = cli(capsys, "verify", mixed, "--progress")
    drawn = [f for f in frames(err) if f.startswith("verify ")]
    total = "1.00M"  # 64³ float32 + 100 int16: 1,048,776 bytes, in MiB
    assert drawn and all(f"/{total}" in f and "iB/s" in f for f in drawn), drawn
    assert f"{total}/{total}" in drawn[-1]
    assert cli(capsys, "verify", mixed, "-q")[1] == cli(capsys, "verify", mixed, "--no-progress")[1] == ""
    stored = sum(p.stat().st_size for p in mixed.rglob("*") if p.is_file())
    _, err = cli(capsys, "rm", mixed, "-y", "--progress")
    drawn = frames(err)
    assert drawn and all(f.startswith("rm ") and "B/s" in f for f in drawn), drawn
    done, total = drawn[-1].split("|")[2].split()[0].split("/")
    assert done == total == f"{stored / 1024:.1f}k", (drawn, stored)
    assert not mixed.exists()


# -- exit codes, help ------------------------------------------------------------------------------
def test_exit_codes_are_documented_in_the_help_and_the_guide():
    epilog = build_parser().format_help().split("exit codes:", 1)[1]
    guide = DOCS.read_text(encoding="utf-8")
    for code, words in [(0, "success"), (1, "verify found damage"), (2, "usage error"), (3, "stopped"),
                        (4, "not found"), (5, "data error"), (6, "other failure")]:
        assert f"\n  {code}  " in epilog and words in epilog, code
        assert f"| {code} |" in guide, code


def test_exit_codes(mixed, tmp_path, capsys):
    cli(capsys, "info", tmp_path / "nothing.zarr", code=4)  # not found
    cli(capsys, "info", mixed, "--path", "nope", code=4)
    cli(capsys, "info", mixed, "--level", "1", code=2)  # usage
    chunk = mixed / "vol" / "0.0.0"
    chunk.write_bytes(b"not blosc")
    cli(capsys, "verify", mixed, code=1)  # damage found
    _, err = cli(capsys, "cp", mixed, tmp_path / "c.zarr", code=5)  # a chunk that does not decode
    assert "0.0.0" in err
    (mixed / "vol" / ".zarray").write_text("{")
    cli(capsys, "info", mixed / "vol", code=5)


def test_no_arguments_prints_the_help(capsys):
    out, err = cli(capsys)
    assert out.startswith("usage: zarrkit") and "exit codes:" in out and err == ""


# -- completion ------------------------------------------------------------------------------------
@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_completion_is_generated_from_the_parser(capsys, shell):
    out, _ = cli(capsys, "completion", shell)
    for word in ("zarrkit", "verify", "consolidate", "--zarr-format", "--shards", "--max-missing"):
        assert word in out, word


@pytest.mark.slow
def test_missing_extras_say_which_to_install():
    """One child without shtab, obstore, s3fs and aiohttp runs three commands needing them."""
    code = ("import sys; sys.modules.update(dict.fromkeys(['shtab', 'obstore', 's3fs', 'aiohttp'])); "
            "from zarrkit.cli import main\n"
            "for argv in (['completion', 'bash'], ['info', 's3://bucket/x.zarr'], "
            "['ls', 'https://example.invalid/x.zarr']):\n"
            "    print(main(argv)); sys.stderr.write('--\\n')")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZARRKIT_")}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=60, check=False)
    assert proc.stdout.split() == ["6", "6", "6"], proc.stderr
    shtab, s3, https, _ = proc.stderr.split("--\n")
    assert "needs the 'shtab' package: pip install 'zarrkit[cli]'" in shtab, shtab
    assert "'s3fs'" in s3 and "pip install 'zarrkit[remote]'" in s3 and s3.count("\n") == 1, s3
    assert "aiohttp" in https and "pip install 'zarrkit[remote]'" in https, https


# -- paths -----------------------------------------------------------------------------------------
def test_a_node_in_the_path_and_with_path_is_refused_naming_both(mixed, capsys):
    _, err = cli(capsys, "info", mixed / "vol", "--path", "vol", code=2)
    assert f"{mixed / 'vol'} names the node 'vol' of the store {mixed}" in err and "--path vol" in err
    other = mixed.parent / "other.zarr"
    zarrkit.open_group(str(other), mode="w")
    _, err = cli(capsys, "cp", mixed / "small", other / "x", "--dest-path", "y", code=2)
    assert f"names the node 'x' of the store {other} already, and --dest-path y" in err
    cli(capsys, "info", mixed, "--path", "vol")  # either way alone
    cli(capsys, "info", mixed / "vol")
    _, err = cli(capsys, "info", mixed, "--path", "vol/deeper", code=4)
    assert f"no Zarr array or group at 'vol/deeper' in the store {mixed}" in err


# -- sizes in ls and rm ----------------------------------------------------------------------------
def test_ls_and_rm_say_what_is_stored(mixed, capsys):
    out, _ = cli(capsys, "ls", mixed)
    vol = sum(p.stat().st_size for p in (mixed / "vol").iterdir())
    assert [line.split()[-2:] for line in out.splitlines()] == [["470", "bytes"], ["stored"]] or \
        out.splitlines()[1].endswith(f"{vol / 1024:.1f}K stored"), out
    assert json.loads(cli(capsys, "ls", mixed, "--json")[0])[1]["nbytes_stored"] == vol
    # without a terminal, rm refuses, saying what it would have removed
    _, err = cli(capsys, "rm", mixed, code=2)
    total = sum(p.stat().st_size for p in mixed.rglob("*") if p.is_file())
    assert f"the group / of {mixed} (2 arrays, 0 groups, {total / 1024:.1f}K stored)" in err, err
    out, _ = cli(capsys, "rm", mixed / "vol", "-y")
    assert out == f"removed the array vol of {mixed} ({vol / 1024:.1f}K stored)\n"


# -- one info layout -------------------------------------------------------------------------------
def test_info_is_one_layout_for_both_formats(tmp_path, capsys):
    tables = {}
    for fmt in (2, 3):
        path = tmp_path / f"v{fmt}.zarr"
        g = zarrkit.open_group(str(path), mode="w", zarr_format=fmt)
        a = g.zeros("vol", shape=(20, 20), chunks=(10, 10), dtype="f4", compressor=numcodecs.Zstd(level=1))
        a[:] = 1
        tables[fmt] = [line.split(" : ", 1) for line in cli(capsys, "info", path / "vol")[0].splitlines()]
        root = {k.strip(): v for k, v in (line.split(" : ", 1) for line in cli(capsys, "info", path)[0].splitlines())}
        assert (root["Name"], root["Type"]) == ("/", "group")
    rows = {fmt: {k.strip(): v for k, v in t} for fmt, t in tables.items()}
    assert [k for k, _ in tables[2]] == [k for k, _ in tables[3]]  # the same rows, in the same order
    for key in ("Name", "Type", "Data type", "Shape", "Chunk shape", "Fill value", "Chunks initialized"):
        assert rows[2][key] == rows[3][key], key
    assert (rows[3]["Name"], rows[3]["Type"], rows[3]["Chunks initialized"]) == ("/vol", "array", "4/4")
    assert rows[3]["Compressors"].startswith("zstd(level=1")


@pytest.mark.slow
def test_rm_asks_on_a_terminal_saying_how_much_would_go(mixed):
    """stdin a terminal (a pseudo-terminal here): the question names the arrays, groups and
    bytes; any answer but yes removes nothing."""
    total = sum(p.stat().st_size for p in mixed.rglob("*") if p.is_file())
    primary, secondary = os.openpty()
    try:
        os.write(primary, b"n\n")
        env = {k: v for k, v in os.environ.items() if not k.startswith("ZARRKIT_")}
        proc = subprocess.run([sys.executable, "-m", "zarrkit", "rm", str(mixed)], stdin=secondary,
                              capture_output=True, text=True, env=env, timeout=60, check=False)
    finally:
        os.close(primary)
        os.close(secondary)
    assert proc.returncode == 0, proc.stderr
    question = f"remove the group / of {mixed} (2 arrays, 0 groups, {total / 1024:.1f}K stored)? [y/N] "
    assert proc.stdout == question + "nothing removed\n", proc.stdout
    assert (mixed / "vol" / ".zarray").exists()


# -- the options cp and rechunk share ---------------------------------------------------------------
def test_cp_takes_chunks_auto_and_names_as_rechunk(mixed, tmp_path, capsys):
    cli(capsys, "cp", mixed, tmp_path / "c.zarr", "--chunks", "auto", "-q")
    cli(capsys, "rechunk", mixed, tmp_path / "r.zarr", "--chunks", "auto", "-q")
    for node in ("vol", "small"):
        assert opened(tmp_path / "c.zarr", node).chunks == opened(tmp_path / "r.zarr", node).chunks
    cli(capsys, "cp", mixed, tmp_path / "n.zarr", "--chunks", "small=-1", "--chunks", "vol=32,32,-1", "-q")
    assert (opened(tmp_path / "n.zarr", "small").chunks, opened(tmp_path / "n.zarr", "vol").chunks) == \
        ((100,), (32, 32, 64))
    np.testing.assert_array_equal(opened(tmp_path / "n.zarr", "vol")[:], opened(mixed, "vol")[:])


def test_cp_max_mem_is_rechunks_and_buffer_is_a_deprecated_alias(mixed, tmp_path, capsys):
    cli(capsys, "cp", mixed, tmp_path / "a.zarr", "--max-mem", "1MiB", "-q")
    np.testing.assert_array_equal(opened(tmp_path / "a.zarr", "vol")[:], opened(mixed, "vol")[:])
    for command in ("cp", "rechunk"):
        _, err = cli(capsys, command, mixed, tmp_path / "x.zarr", "--max-mem", "lots", code=2)
        assert "argument --max-mem: expected a positive size like 256MiB or 2GB, got 'lots'" in err
    _, err = cli(capsys, "cp", mixed, tmp_path / "b.zarr", "--buffer", "2", "-q")
    assert err == "zarrkit: warning: --buffer is deprecated: use --max-mem 2MiB\n"
    assert opened(tmp_path / "b.zarr", "small")[:50].tolist() == [3] * 50
    sub = build_parser()._subparsers._group_actions[0].choices["cp"]
    assert "--max-mem SIZE" in sub.format_help() and "--buffer" not in sub.format_help()


def test_an_unknown_option_points_at_the_help_of_its_command(tmp_path, capsys):
    sub = build_parser()._subparsers._group_actions[0].choices
    assert {"info", "cp", "rechunk", "completion"} <= set(sub)
    for command, parser in sub.items():
        positionals = [a for a in parser._actions if not a.option_strings]
        values = [next(iter(a.choices)) if a.choices else str(tmp_path / "x.zarr") for a in positionals]
        _, err = cli(capsys, command, *values, "--bogus", code=2)
        assert err == f"zarrkit: error: unrecognized arguments: --bogus (see 'zarrkit {command} --help')\n", command
    assert not (tmp_path / "x.zarr").exists()
    _, err = cli(capsys, "--bogus", "info", tmp_path / "x.zarr", code=2)  # before the command: the top level's
    assert err == "zarrkit: error: unrecognized arguments: --bogus (see 'zarrkit --help')\n"


def test_ls_shows_the_shards_of_a_sharded_array(tmp_path, capsys):
    g = zarrkit.open_group(str(tmp_path / "s.zarr"), mode="w", zarr_format=3)
    g.create_array("sharded", shape=(200, 400), chunks=(10, 20), shards=(100, 200), dtype="u1")[:] = 1
    g.create_array("plain", shape=(9,), chunks=(3,), dtype="u1")
    out, _ = cli(capsys, "ls", tmp_path / "s.zarr")
    rows = {line.split()[0]: line for line in out.splitlines()}
    assert rows["sharded"].startswith("sharded  array  (200, 400) uint8  chunks (10, 20)  shards (100, 200)  "), rows
    assert "shards" not in rows["plain"], rows
    out, _ = cli(capsys, "ls", tmp_path / "s.zarr", "--json")
    shards = {e["name"]: e["shards"] for e in json.loads(out)}
    assert shards == {"sharded": [100, 200], "plain": None}
    out, _ = cli(capsys, "ls", tmp_path / "s.zarr" / "sharded")
    assert "  chunks (10, 20)  shards (100, 200)  " in out
