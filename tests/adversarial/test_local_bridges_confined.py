"""Local directories reached through another library's store -- obstore's ``LocalStore`` under
:class:`~zarrkit.storage.obstore.ObjectStore`, zarr-python's ``LocalStore`` through the adapter --
are as confined as a :class:`~zarrkit.DirectoryStore`: a chunk that is a symbolic link to a file
outside is refused, not read; a write or a delete through a directory link leading outside is
refused, and nothing outside is written or removed; listings leave out what lies outside; links
that stay inside keep working."""

from __future__ import annotations

import os

import numpy as np
import pytest

import zarrkit
from zarrkit.errors import InvalidPathError
from zarrkit.storage import coerce_store


def _obstore(root):
    obstore = pytest.importorskip("obstore")
    from zarrkit.storage.obstore import ObjectStore

    return ObjectStore(obstore.store.LocalStore(str(root)))


def _zarr_local(root):
    zarr_storage = pytest.importorskip("zarr.storage")
    return coerce_store(zarr_storage.LocalStore(str(root)))


STORES = {
    "DirectoryStore": lambda root: zarrkit.DirectoryStore(str(root)),
    "obstore LocalStore": _obstore,
    "zarr-python LocalStore": _zarr_local,
}


@pytest.fixture
def hostile(tmp_path):
    """A store directory holding ``a/c0``, a link to a file outside, and ``linked``, a link to
    a directory outside; and ``inside``, a link to a file of its own."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "a").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret").write_bytes(b"SECRET")
    (root / "a" / "mine").write_bytes(b"mine")
    os.symlink(outside / "secret", root / "a" / "c0")
    os.symlink(outside, root / "linked", target_is_directory=True)
    os.symlink(root / "a" / "mine", root / "a" / "inside")
    return root, outside


def _outside(outside):
    return sorted((n, (outside / n).read_bytes()) for n in os.listdir(outside))


@pytest.mark.parametrize("kind", list(STORES))
def test_a_chunk_linked_to_a_file_outside_is_refused(hostile, kind):
    root, _ = hostile
    store = STORES[kind](root)
    for read in (
        lambda: store.get("a/c0"),
        lambda: store.get("a/c0", zarrkit.storage.ByteRange(0, 3)),
        lambda: store.get_many(["a/c0"]),
        lambda: store.get_upto("a/c0", 100),
        lambda: store.get("linked/secret"),
    ):
        with pytest.raises(InvalidPathError, match="outside"):
            read()
    assert store.get("a/inside") == b"mine"  # a link that stays inside is followed


@pytest.mark.parametrize("kind", list(STORES))
def test_a_write_or_delete_through_a_directory_link_outside_is_refused(hostile, kind):
    root, outside = hostile
    before = _outside(outside)
    store = STORES[kind](root)
    with pytest.raises(InvalidPathError, match="outside"):
        store.set("linked/x", b"hi")
    with pytest.raises(InvalidPathError, match="outside"):
        store.set("linked/new/x", b"hi")
    with pytest.raises(InvalidPathError, match="outside"):
        store.delete("linked/secret")
    store.delete_prefix("linked/")
    assert _outside(outside) == before
    store.set("a/ok", b"fine")
    assert (root / "a" / "ok").read_bytes() == b"fine"


@pytest.mark.parametrize("kind", list(STORES))
def test_listings_leave_out_what_lies_outside(hostile, kind):
    root, _ = hostile
    store = STORES[kind](root)
    keys = list(store.list_prefix(""))
    assert "linked/secret" not in keys and "a/c0" not in keys and "a/mine" in keys
    assert "c0" not in store.list_dir("a") and "mine" in store.list_dir("a")
    assert "secret" not in store.list_dir("linked")


@pytest.mark.parametrize("kind", list(STORES))
def test_an_array_whose_chunk_links_outside_is_refused_reading_it(tmp_path, kind):
    root, outside = tmp_path / "root", tmp_path / "outside"
    outside.mkdir()
    z = zarrkit.create_array(zarrkit.DirectoryStore(str(root)), shape=(4,), chunks=(2,), dtype="u1",
                             compressors=None, zarr_format=3)
    z[:] = 1
    (outside / "secret").write_bytes(b"\x07\x07")
    os.remove(root / "c" / "0")
    os.symlink(outside / "secret", root / "c" / "0")
    a = zarrkit.open_array(STORES[kind](root), mode="r+")
    with pytest.raises(InvalidPathError):
        a[:]
    np.testing.assert_array_equal(a[2:], [1, 1])
