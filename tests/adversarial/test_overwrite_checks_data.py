"""Overwriting a node with values the new data type cannot hold leaves the old node as it was.

``zarrkit.array(data, dtype=..., overwrite=True)``, ``save_array`` and a group's
``create_array(name, data=..., overwrite=True)`` convert ``data`` to the new array's data type
(and let its codecs check it) before the node already there is deleted: a value that does not
fit raises, and the old array still reads as before.
"""

from __future__ import annotations

import numpy as np
import pytest

import zarrkit

OLD = np.arange(6, dtype="<i4")
WORDS = ["a", "b", "c", "d", "e", "f"]


def assert_old_kept(path):
    got = zarrkit.open_array(str(path), mode="r")
    assert got.dtype == OLD.dtype
    np.testing.assert_array_equal(got[:], OLD)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_array_overwrite_with_strings_as_int_keeps_the_old_array(tmp_path, zarr_format):
    path = tmp_path / "s.zarr"
    zarrkit.array(OLD, store=str(path), chunks=2, zarr_format=zarr_format)
    with pytest.raises(ValueError, match="int32"):
        zarrkit.array(WORDS, dtype="i4", store=str(path), overwrite=True, zarr_format=zarr_format)
    assert_old_kept(path)


def test_save_array_with_strings_as_int_keeps_the_old_array(tmp_path):
    path = tmp_path / "s.zarr"
    zarrkit.save_array(str(path), OLD, chunks=2)
    with pytest.raises(ValueError, match="int32"):
        zarrkit.save_array(str(path), WORDS, dtype="i4")
    assert_old_kept(path)


def test_group_create_array_overwrite_with_strings_as_int_keeps_the_old_array(tmp_path):
    path = tmp_path / "s.zarr"
    group = zarrkit.open_group(str(path), mode="w")
    group.create_array("x", data=OLD, chunks=(2,))
    with pytest.raises(ValueError, match="int32"):
        group.create_array("x", data=WORDS, dtype="i4", overwrite=True)
    assert_old_kept(path / "x")


def test_group_create_array_overwrite_with_none_in_strings_keeps_the_old_array(tmp_path):
    path = tmp_path / "s.zarr"
    group = zarrkit.open_group(str(path), mode="w")
    group.create_array("x", data=np.array(["a", "b"], dtype=object), dtype=str)
    with pytest.raises(TypeError, match="str values"):
        group.create_array("x", data=np.array(["a", None], dtype=object), dtype=str, overwrite=True)
    assert zarrkit.open_array(str(path / "x"), mode="r")[:].tolist() == ["a", "b"]


def test_overwrite_with_a_zarrkit_array_that_cannot_be_cast_keeps_the_old_array(tmp_path):
    path = tmp_path / "s.zarr"
    zarrkit.array(OLD, store=str(path), chunks=2)
    # the bad value is in the last chunk: a copy chunk by chunk would have begun
    words = zarrkit.array(["1", "2", "3", "4", "5", "x"], dtype=str, chunks=2)
    with pytest.raises(ValueError, match="int32"):
        zarrkit.array(words, dtype="i4", store=str(path), overwrite=True, chunks=2)
    assert_old_kept(path)


def test_overwrite_with_data_that_fits_still_works(tmp_path):
    path = tmp_path / "s.zarr"
    zarrkit.array(OLD, store=str(path), chunks=2)
    zarrkit.array(["1", "2"], dtype="i4", store=str(path), overwrite=True)
    np.testing.assert_array_equal(zarrkit.open_array(str(path))[:], [1, 2])
    words = zarrkit.array(["7", "8", "9"], dtype=str, chunks=2)
    zarrkit.array(words, dtype="i4", store=str(path), overwrite=True, chunks=2)
    np.testing.assert_array_equal(zarrkit.open_array(str(path))[:], [7, 8, 9])
