"""A directory store asks which kinds of files a key directory holds by listing it once (see
``storage.local_tree.lists_plain_files``); a store opened again in the same process asks only
whether the directory changed since.  A special file put there after the listing must still
be found: the remembered answer is only used while the directory's stamp is unchanged.
"""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

import zarrkit
from zarrkit.errors import InvalidPathError
from zarrkit.storage import local_tree

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes need POSIX")


def settle(path):
    """Wait until ``path`` changed long enough ago for a listing of it to be remembered."""
    st = os.stat(path)
    wait = (max(st.st_mtime_ns, st.st_ctime_ns) + local_tree.SETTLED_NS) / 1e9 - time.time() + 0.05
    if wait > 0:
        time.sleep(wait)


@needs_fifo
def test_a_pipe_added_after_a_remembered_listing_is_found(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    for name in ("a", "b", "c"):
        (d / name).write_bytes(b"x")
    settle(d)
    assert local_tree.lists_plain_files(str(d)) is True
    assert local_tree.lists_plain_files(str(d)) is True  # (the remembered answer)
    os.unlink(d / "b")
    os.mkfifo(d / "b")
    assert local_tree.lists_plain_files(str(d)) is False


@needs_fifo
def test_a_directory_changed_soon_after_a_change_is_listed_again(tmp_path):
    # a listing right after a change is not remembered: the next change could leave the
    # directory's times as they were
    d = tmp_path / "d"
    d.mkdir()
    (d / "a").write_bytes(b"x")
    assert local_tree.lists_plain_files(str(d)) is True
    os.mkfifo(d / "p")
    assert local_tree.lists_plain_files(str(d)) is False


@needs_fifo
def test_a_store_opened_again_refuses_a_pipe_put_where_a_chunk_was(tmp_path):
    path = str(tmp_path / "a.zarr")
    a = zarrkit.create_array(path, shape=(64,), chunks=(8,), dtype="u2", fill_value=0)
    a[...] = np.arange(64, dtype="u2")
    settle(os.path.join(path, "c"))
    np.testing.assert_array_equal(zarrkit.open_array(path, mode="r")[...], np.arange(64))
    os.unlink(os.path.join(path, "c", "3"))
    os.mkfifo(os.path.join(path, "c", "3"))
    again = zarrkit.open_array(path, mode="r")
    with pytest.raises(InvalidPathError, match=r"c/3"):
        again[...]
    np.testing.assert_array_equal(again[:24], np.arange(24))  # the other chunks read as before


def test_a_directory_replaced_by_another_is_listed_again(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    (d / "a").write_bytes(b"x")
    settle(d)
    assert local_tree.lists_plain_files(str(d)) is True
    os.rename(d, tmp_path / "old")
    d.mkdir()
    if hasattr(os, "mkfifo"):
        os.mkfifo(d / "a")
        assert local_tree.lists_plain_files(str(d)) is False
    else:
        assert local_tree.lists_plain_files(str(d)) is True


@needs_fifo
def test_a_path_switched_to_another_directory_during_the_listing_does_not_lend_it_its_answer(
    tmp_path, monkeypatch
):
    # the key directory is a link switched, while it is listed, from a directory holding a
    # pipe to a plain one: the answer remembered must be that of the directory listed, so
    # that switching the link back finds the pipe again
    (tmp_path / "bad").mkdir()
    os.mkfifo(tmp_path / "bad" / "0")
    (tmp_path / "good").mkdir()
    (tmp_path / "good" / "0").write_bytes(b"x")
    link = tmp_path / "c"
    os.symlink("bad", link)
    settle(tmp_path / "bad")
    settle(tmp_path / "good")

    def switch(target):
        os.symlink(target, tmp_path / ".t")
        os.rename(tmp_path / ".t", link)

    real = os.scandir

    def switched_while_listing(path):
        switch("good")
        return real(path)

    monkeypatch.setattr(os, "scandir", switched_while_listing)
    local_tree.lists_plain_files(str(link))
    monkeypatch.setattr(os, "scandir", real)
    switch("bad")
    assert local_tree.lists_plain_files(str(link)) is False


def test_long_paths_are_not_remembered(tmp_path):
    d = tmp_path / ("x" * 200) / ("y" * 200) / ("z" * 200)
    d.mkdir(parents=True)
    (d / "a").write_bytes(b"x")
    settle(d)
    before = len(local_tree._kinds_seen)
    assert local_tree.lists_plain_files(str(d)) is True
    assert str(d) not in local_tree._kinds_seen and len(local_tree._kinds_seen) <= before
