"""Replacing a node with a copy of a node it overlaps is refused before anything is deleted.

The source may lie below the destination's node, or above it, and it may be reached through a
store opened lower down the same directory or through a symbolic link: the places compared are
the real (resolved) ones.  The API raises a typed error naming both; ``zarrkit cp`` exits 2.
"""

from __future__ import annotations

import contextlib
import io
import os

import numpy as np
import pytest

import zarrkit
from zarrkit.cli import main
from zarrkit.errors import ZarrkitError

DATA = np.arange(12.0)


def cli(*args: object) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue() + err.getvalue()


def listing(path) -> list[str]:
    return sorted(os.path.relpath(os.path.join(d, f), path) for d, _, fs in os.walk(path) for f in fs)


def test_create_array_over_a_store_holding_the_source_below_it_is_refused(tmp_path):
    root = tmp_path / "s.zarr"
    source = zarrkit.create_array(str(root), name="sub/x", data=DATA, chunks=(4,), fill_value=-1.0)
    before = listing(root)
    with pytest.raises(ZarrkitError) as info:
        zarrkit.create_array(str(root / "sub"), data=source, overwrite=True)
    assert isinstance(info.value, ValueError)
    message = str(info.value)
    assert "overlap" in message and "sub" in message and "x" in message
    assert listing(root) == before
    np.testing.assert_array_equal(zarrkit.open_array(str(root), path="sub/x")[:], DATA)


def test_create_array_below_the_source_through_another_store_is_refused(tmp_path):
    root = tmp_path / "s.zarr"
    source = zarrkit.create_array(str(root), name="a", data=DATA, chunks=(4,))
    before = listing(root)
    with pytest.raises(ZarrkitError, match="overlap"):
        zarrkit.create_array(str(root / "a"), name="c", data=source, overwrite=True)
    assert listing(root) == before


def test_create_array_through_a_symbolic_link_is_refused(tmp_path):
    root = tmp_path / "s.zarr"
    zarrkit.create_array(str(root), name="g/x", data=DATA, chunks=(4,))
    os.symlink(root, tmp_path / "link.zarr")
    source = zarrkit.open_array(str(tmp_path / "link.zarr"), path="g/x")
    before = listing(root)
    with pytest.raises(ZarrkitError, match="overlap"):
        zarrkit.create_array(str(root), name="g", data=source, overwrite=True)
    assert listing(root) == before


def test_sibling_directories_do_not_overlap(tmp_path):
    source = zarrkit.create_array(str(tmp_path / "s.zarr"), name="x", data=DATA, chunks=(4,))
    zarrkit.create_array(str(tmp_path / "s.zarr2"), data=DATA[:3])
    copy = zarrkit.create_array(str(tmp_path / "s.zarr2"), data=source, overwrite=True)
    np.testing.assert_array_equal(copy[:], DATA)


def test_cp_of_a_source_through_a_link_onto_its_parent_is_refused(tmp_path):
    root = tmp_path / "s.zarr"
    group = zarrkit.open_group(str(root), mode="w", zarr_format=2)
    group.create_dataset("x", data=DATA, chunks=(4,))
    os.symlink(root, tmp_path / "link.zarr")
    before = listing(root)
    code, out = cli("cp", tmp_path / "link.zarr" / "x", root, "--overwrite")
    assert code == 2, out
    assert "overlap" in out and "link.zarr" in out and "s.zarr" in out
    assert listing(root) == before
    np.testing.assert_array_equal(zarrkit.open_array(str(root), path="x")[:], DATA)


def test_cp_through_a_link_inside_the_store_is_refused(tmp_path):
    root = tmp_path / "s.zarr"
    group = zarrkit.open_group(str(root), mode="w", zarr_format=2)
    group.create_dataset("g/x", data=DATA, chunks=(4,))
    os.symlink(root / "g", tmp_path / "g_link")
    before = listing(root)
    code, out = cli("cp", tmp_path / "g_link" / "x", root / "g", "--overwrite")
    assert code == 2, out
    assert "overlap" in out
    assert listing(root) == before


def test_copy_replacing_a_node_that_holds_the_source_is_refused():
    group = zarrkit.group()
    group.create_array("sub/x", data=DATA, chunks=(4,))
    group.create_array("a", data=DATA, chunks=(4,))
    for source, name in ((group["sub/x"], "sub"), (group["a"], "a"), (group, "a")):
        with pytest.raises(ZarrkitError, match="overlap"):
            zarrkit.copy(source, group, name=name, if_exists="replace")
    np.testing.assert_array_equal(group["sub/x"][:], DATA)
    np.testing.assert_array_equal(group["a"][:], DATA)
    zarrkit.copy(group["a"], group, name="b", if_exists="replace")
    np.testing.assert_array_equal(group["b"][:], DATA)
