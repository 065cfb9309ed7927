"""DirectoryStore(atomic=False): values written into their files in place (no temporary file,
no rename), read back by zarrkit and zarr-python like atomic ones."""

from __future__ import annotations

import os

import numpy as np
import pytest
import zarr

import zarrkit
from zarrkit.errors import StoreError
from zarrkit.storage import DirectoryStore
from zarrkit.storage.local import TEMP_MARKER


def test_in_place_writes_keep_the_file_atomic_writes_replace_it(tmp_path):
    for atomic in (True, False):
        store = DirectoryStore(tmp_path / str(atomic), atomic=atomic)
        store["a/b"] = b"first value"
        inode = os.stat(store.path + "/a/b").st_ino
        store["a/b"] = b"second"  # shorter: the old tail must not remain
        assert store["a/b"] == b"second"
        assert (os.stat(store.path + "/a/b").st_ino == inode) is (not atomic)
        store.set_parts("a/c", [b"x", b"yz"])
        store.set_many({f"new/{i}": bytes([i]) * i for i in range(1, 12)})
        assert store["a/c"] == b"xyz" and store["new/11"] == bytes([11]) * 11
        assert not any(TEMP_MARKER in n for _, ds, fs in os.walk(store.path) for n in ds + fs)


def test_in_place_array_round_trip_read_by_zarr_python(tmp_path):
    data = np.arange(40 * 30, dtype="u2").reshape(40, 30)
    store = DirectoryStore(tmp_path, atomic=False)
    z = zarrkit.create_array(store, shape=data.shape, chunks=(8, 8), dtype="u2", zarr_format=3)
    z[...] = data
    z[3:20, 5:9] = 7  # partial chunk updates rewrite files in place
    data[3:20, 5:9] = 7
    assert np.array_equal(zarrkit.open_array(str(tmp_path), mode="r")[...], data)
    assert np.array_equal(zarr.open_array(str(tmp_path), mode="r")[...], data)
    s = zarrkit.create_array(DirectoryStore(tmp_path / "s", atomic=False), shape=data.shape,
                             chunks=(4, 4), shards=(8, 8), dtype="u2", zarr_format=3)
    s[...] = data
    assert np.array_equal(zarr.open_array(str(tmp_path / "s"), mode="r")[...], data)


def test_in_place_write_replaces_a_symbolic_link_and_refuses_a_directory(tmp_path):
    outside = tmp_path / "outside"
    outside.write_bytes(b"keep me")
    root = tmp_path / "root"
    store = DirectoryStore(root, atomic=False)
    store["k"] = b"v"
    os.remove(root / "k")
    os.symlink(outside, root / "k")
    store["k"] = b"new"
    assert outside.read_bytes() == b"keep me"  # the link was replaced, not written through
    assert not os.path.islink(root / "k") and store["k"] == b"new"
    (root / "d").mkdir()
    (root / "d" / "x").write_bytes(b"1")
    with pytest.raises(StoreError, match="'d'.*directory"):
        store["d"] = b"no"
