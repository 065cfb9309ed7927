"""Metadata in one store, chunks in another (``chunk_store=``)."""

from __future__ import annotations

import numpy as np
import pytest

import zarrkit


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_group_and_array_with_separate_chunk_store(tmp_path, zarr_format):
    meta = zarrkit.DirectoryStore(tmp_path / "meta")
    chunks: dict = {}
    g = zarrkit.group(meta, chunk_store=chunks, zarr_format=zarr_format)
    g.attrs["a"] = 1
    z = g.zeros("x/y", shape=(10, 4), chunks=(5, 2), dtype="i2")
    z[:] = np.arange(40).reshape(10, 4)
    assert chunks and all("/" in k and not k.endswith((".zarray", ".zattrs", "zarr.json")) for k in chunks)
    assert not any(k for k in meta if "/c/" in k or k.rsplit("/", 1)[-1][0].isdigit())
    again = zarrkit.open_group(meta, chunk_store=chunks, mode="r")
    assert again.attrs["a"] == 1
    assert np.array_equal(again["x/y"][:], np.arange(40).reshape(10, 4))
    a = zarrkit.open_array(meta, path="x/y", chunk_store=chunks, mode="r")
    assert a.nchunks_initialized == 4
    # without the chunk store the array reads as fill value
    assert (zarrkit.open_array(meta, path="x/y", mode="r")[:] == 0).all()
