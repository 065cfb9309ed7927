"""A key directory a DirectoryStore has already used, swapped for a symbolic link to the
outside (someone else sharing the directory can do that at any time): deletions through the
same handle refuse the link, and a fresh handle refuses every access.  Reads and writes through
the handle that checked the directory before the swap are not re-checked (one system call per
chunk): the threat model page lists that as not guaranteed."""

from __future__ import annotations

import os
import shutil

import pytest

import zarrkit
from zarrkit.errors import InvalidPathError


@pytest.fixture
def swapped(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "0").write_bytes(b"precious")
    root = tmp_path / "root.zarr"
    z = zarrkit.open_array(str(root), mode="w", shape=(4, 4), chunks=(1, 1), dtype="i4",
                           zarr_format=3)
    z[...] = 1  # the handle has now used c/0 .. c/3
    chunk_dir = root / "c" / "3"
    shutil.rmtree(chunk_dir)
    os.symlink(outside, chunk_dir)
    return z, outside


def test_a_fresh_handle_refuses_the_link(swapped):
    z, outside = swapped
    fresh = zarrkit.open_array(z.store.path, mode="r+")
    with pytest.raises(InvalidPathError):
        fresh[3, 0] = 7
    assert (outside / "0").read_bytes() == b"precious"


def test_deleting_a_key_does_not_delete_a_file_outside(swapped):
    z, outside = swapped
    with pytest.raises(InvalidPathError):
        del z.store["c/3/0"]
    assert (outside / "0").exists()
