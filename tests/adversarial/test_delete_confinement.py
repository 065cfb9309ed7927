"""Removing keys from a directory store stays inside it, however the tree it was handed links out.

A store unpacked from a stranger's archive can hold symbolic links that lead anywhere.  Reads
and writes through them are refused (and with them ``del group[...]``, overwriting, moving and
``zarrkit rm``, which read a node's metadata first); so is every removal of a directory of keys:
``rmdir``, ``delete_prefix``, ``clear`` and the orphaned temporary file clean-up.  A link where a
removed directory is, or below it, is removed itself and what it leads to stays -- even when it
leads to another directory of the store.
"""

from __future__ import annotations

import os
import shutil

import pytest

import zarrkit
from zarrkit.errors import InvalidPathError
from zarrkit.storage import rmdir as storage_rmdir
from zarrkit.storage.local import _HOST, TEMP_MARKER


def _outside_tree(base):
    """A directory outside every store, with a sub-directory and a Zarr group in it."""
    outside = base / "outside"
    (outside / "sub" / "deeper").mkdir(parents=True)
    (outside / "sub" / "x").write_bytes(b"precious")
    (outside / "sub" / "deeper" / "y").write_bytes(b"precious too")
    (outside / ".zgroup").write_text('{"zarr_format": 2}')
    (outside / "sub" / ".zgroup").write_text('{"zarr_format": 2}')
    return outside


def _snapshot(directory):
    return sorted(
        (os.path.relpath(os.path.join(d, n), directory), open(os.path.join(d, n), "rb").read())
        for d, _, names in os.walk(directory) for n in names
    )


@pytest.fixture(params=["real path", "path through a link"])
def hostile(tmp_path, request):
    """A v2 hierarchy whose ``link`` is a symbolic link to a directory outside it; the store
    is named by its own path, or by a link to it (the user's choice, which stays followed)."""
    outside = _outside_tree(tmp_path)
    real = tmp_path / "store.zarr"
    g = zarrkit.open_group(str(real), mode="w", zarr_format=2)
    g.zeros("a", shape=(4,), chunks=(2,), dtype="i4")[:] = 1
    os.symlink(outside, real / "link", target_is_directory=True)
    root = real
    if request.param != "real path":
        root = tmp_path / "alias.zarr"
        os.symlink(real, root, target_is_directory=True)
    return root, outside, _snapshot(outside)


REMOVALS = {
    "storage.rmdir": lambda root: storage_rmdir(str(root), "link/sub"),
    "DirectoryStore.rmdir": lambda root: zarrkit.DirectoryStore(root).rmdir("link/sub"),
    "NestedDirectoryStore.rmdir": lambda root: zarrkit.NestedDirectoryStore(root).rmdir("link/sub/"),
    "delete_prefix": lambda root: zarrkit.DirectoryStore(root).delete_prefix("link/sub/"),
    "delete_prefix deeper": lambda root: zarrkit.DirectoryStore(root).delete_prefix("link/sub/deeper/"),
    "delete_prefix of keys": lambda root: zarrkit.DirectoryStore(root).delete_prefix("link/sub/x"),
    "remove_orphaned_temp_files": lambda root: zarrkit.DirectoryStore(root).remove_orphaned_temp_files("link/sub/"),
}


@pytest.mark.parametrize("how", list(REMOVALS))
def test_a_removal_through_a_link_out_is_refused_naming_the_key(hostile, how):
    root, outside, before = hostile
    with pytest.raises(InvalidPathError, match="'link/sub/"):
        REMOVALS[how](root)
    assert _snapshot(outside) == before
    assert zarrkit.open_array(str(root), path="a", mode="r")[:].tolist() == [1, 1, 1, 1]


def test_orphaned_temporary_files_outside_are_left_alone(hostile):
    root, outside, _ = hostile
    # named as a temporary file of a writer of this host that no longer runs
    orphan = outside / f"{TEMP_MARKER}{_HOST}-{2**22 + 12345}-1-1"
    orphan.write_bytes(b"someone else's file")
    with pytest.raises(InvalidPathError, match="'link/'"):
        zarrkit.DirectoryStore(root).remove_orphaned_temp_files("link/")
    assert orphan.read_bytes() == b"someone else's file"


@pytest.mark.parametrize("how", ["rmdir", "delete_prefix", "storage.rmdir", "nested"])
def test_a_link_that_is_the_removed_directory_is_unlinked_not_followed(hostile, how):
    root, outside, before = hostile
    if how == "rmdir":
        zarrkit.DirectoryStore(root).rmdir("link")
    elif how == "delete_prefix":
        zarrkit.DirectoryStore(root).delete_prefix("link/")
    elif how == "storage.rmdir":
        storage_rmdir(str(root), "/link/")
    else:
        zarrkit.NestedDirectoryStore(root).rmdir("link")
    assert _snapshot(outside) == before
    assert not os.path.lexists(root / "link")
    assert zarrkit.open_array(str(root), path="a", mode="r")[:].tolist() == [1, 1, 1, 1]
    # the rest of the store is removed as before, links below included (unlinked)
    os.symlink(outside / "sub", root / "a" / "deep_link", target_is_directory=True)
    os.symlink(outside / "sub" / "x", root / "a" / "file_link")
    store = zarrkit.DirectoryStore(root)
    store.rmdir("a")
    assert sorted(store) == [".zattrs", ".zgroup"]
    store["b/c/d"] = b"1"
    os.symlink(outside, root / "b" / "c" / "out", target_is_directory=True)
    store.clear()
    assert os.listdir(root) == []
    assert _snapshot(outside) == before


def test_links_to_directories_of_the_store(tmp_path):
    root = tmp_path / "store.zarr"
    store = zarrkit.DirectoryStore(root)
    store.update({"data/k": b"kept", "data/sub/k": b"1", "g/own": b"removed"})
    os.symlink(root / "data", root / "alias", target_is_directory=True)
    os.symlink(root / "data", root / "g" / "alias", target_is_directory=True)
    assert store["alias/k"] == store["g/alias/k"] == b"kept"  # followed: they stay inside
    # removing the directory a link stands for removes the link, not where it leads
    store.rmdir("alias")
    assert not os.path.lexists(root / "alias")
    store.rmdir("g")
    assert sorted(store) == ["data/k", "data/sub/k"]
    # a prefix whose directories lead through such a link removes there, as writes write there
    os.symlink(root / "data", root / "alias", target_is_directory=True)
    store.rmdir("alias/sub")
    assert sorted(store) == ["data/k"]


def test_a_key_directory_swapped_for_a_link_after_use_is_refused(tmp_path):
    # someone sharing the directory swaps a directory the handle has used already
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "0").write_bytes(b"precious")
    root = tmp_path / "store.zarr"
    store = zarrkit.DirectoryStore(root)
    store.update({"c/3/0": b"1", "c/3/1": b"2"})
    store.delete("c/3/1")
    shutil.rmtree(root / "c" / "3")
    os.symlink(outside, root / "c" / "3", target_is_directory=True)
    with pytest.raises(InvalidPathError, match="'c/3/0'"):
        store.delete("c/3/0")
    store.rmdir("c/3")  # the link itself is unlinked, nothing below it
    assert not os.path.lexists(root / "c" / "3")
    assert (outside / "0").read_bytes() == b"precious"
