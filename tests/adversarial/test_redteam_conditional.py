"""Red-team attacks on the conditional writes of a DirectoryStore (storage/local_versions.py)."""

from __future__ import annotations

import os

import pytest

import zarrkit
from zarrkit.errors import InvalidPathError, VersionConflictError
from zarrkit.storage.base import ABSENT


def test_set_if_on_a_directory_key_names_the_key(tmp_path):
    store = zarrkit.DirectoryStore(tmp_path / "s")
    store["a/b"] = b"x"
    assert store.get_versioned("a") == (None, ABSENT)
    with pytest.raises(zarrkit.errors.StoreError) as info:
        store.set_if("a", b"y", ABSENT)
    assert "__zarrkit_partial__" not in str(info.value) and "'a'" in str(info.value)
    assert store["a/b"] == b"x"


def test_conditional_writes_never_follow_links_out_of_the_store(tmp_path):
    # held: a directory link and a file link leading outside are refused / conflict; nothing
    # outside is written
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "k").write_bytes(b"secret")
    store = zarrkit.DirectoryStore(tmp_path / "s")
    store["x"] = b"1"
    os.symlink(outside, tmp_path / "s" / "link")
    os.symlink(outside / "k", tmp_path / "s" / "filelink")
    with pytest.raises(InvalidPathError):
        store.get_versioned("link/k")
    with pytest.raises(InvalidPathError):
        store.set_if("link/k", b"pwn", ABSENT)
    with pytest.raises(VersionConflictError):
        store.set_if("filelink", b"pwn", ABSENT)
    assert (outside / "k").read_bytes() == b"secret"


def test_a_version_never_comes_back_after_replace_delete_create(tmp_path):
    # held: 2000 rounds of read v1 / replace / delete / create at once on ext4 (inode numbers
    # reused): the stale v1 always conflicts (kernel 6.18: fine-grained timestamps)
    store = zarrkit.DirectoryStore(tmp_path / "s")
    for _ in range(200):
        store.set_if("k", b"AAAA", ABSENT)
        v1 = store.get_versioned("k")[1]
        v2 = store.set_if("k", b"BBBB", v1)
        store.delete_if("k", v2)
        v3 = store.set_if("k", b"CCCC", ABSENT)
        with pytest.raises(VersionConflictError):
            store.set_if("k", b"XXXX", v1)
        store.delete_if("k", v3)
