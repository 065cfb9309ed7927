"""A DirectoryStore refuses keys that lead through a symbolic link out of its root, however
deep the link and whatever was read before it (directories already known to be inside)."""

import os

import pytest

import zarrkit
from zarrkit.errors import InvalidPathError


@pytest.fixture
def tree(tmp_path):
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "deep" / "x").write_bytes(b"SECRET")
    root = tmp_path / "root"
    (root / "g" / "sub" / "deeper").mkdir(parents=True)
    (root / "h" / "k").mkdir(parents=True)
    for d in ("g", "g/sub", "g/sub/deeper", "h", "h/k"):
        (root / d / "v").write_bytes(d.encode())
    os.symlink(outside, root / "g" / "sub" / "out", target_is_directory=True)
    os.symlink(root / "h", root / "g" / "sub" / "in", target_is_directory=True)
    return root


def test_links_are_judged_by_where_they_lead_below_directories_already_read(tree):
    store = zarrkit.DirectoryStore(tree, read_only=True)
    assert store.get("g/v") == b"g"
    assert store.get("g/sub/v") == b"g/sub"
    assert store.get("g/sub/deeper/v") == b"g/sub/deeper"
    # a link that stays inside is followed, at any depth below it
    assert store.get("g/sub/in/v") == b"h"
    assert store.get("g/sub/in/k/v") == b"h/k"
    # a link out is refused, whether the key is in its directory or deeper
    with pytest.raises(InvalidPathError, match="symbolic link"):
        store.get("g/sub/out/x")
    with pytest.raises(InvalidPathError, match="symbolic link"):
        store.get("g/sub/out/deep/x")
    with pytest.raises(InvalidPathError, match="symbolic link"):
        store.get("g/sub/out/x")  # and again, once its parent is known to be inside
