"""Red-team attacks on the record of an xarray append in progress (``.zarrkit-append.json``,
xarray/append.py): a record a stranger (or a broken writer) left in the group is read by the
next append (``recover``) and by every ``open_dataset`` (``shapes_before``)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import zarrkit
from zarrkit.errors import MetadataError

xr = pytest.importorskip("xarray")
from zarrkit.xarray.writer import to_zarr  # noqa: E402


def _dataset_with_record(tmp_path, record: bytes):
    path = str(tmp_path / "ds.zarr")
    to_zarr(xr.Dataset({"v": ("time", np.arange(5.0))}), path, mode="w", group="g", zarr_format=3)
    other = zarrkit.create_array(zarrkit.DirectoryStore(path), name="other/x", shape=(10,), chunks=(5,),
                                 dtype="f8", fill_value=0)
    other[:] = 7
    with open(f"{path}/g/.zarrkit-append.json", "wb") as f:
        f.write(record)
    return path


def _append(path):
    to_zarr(xr.Dataset({"v": ("time", np.arange(5.0, 7.0))}), path, append_dim="time", group="g")


def _record(arrays, **extra):
    return json.dumps({"phase": "shapes", "digest": "x", "append_dim": "time", "arrays": arrays,
                       **extra}).encode()


@pytest.mark.xfail(strict=True, reason="recover() opens each recorded name with grp[name]: an "
                   "absolute name '/other/x' resizes an array outside the group (10 rows -> 2)")
def test_a_record_cannot_resize_an_array_outside_its_group(tmp_path):
    path = _dataset_with_record(tmp_path, _record({"/other/x": [[10], [2]]}))
    try:
        _append(path)
    except (MetadataError, ValueError):
        pass
    assert zarrkit.open_array(zarrkit.DirectoryStore(path), path="other/x", mode="r").shape == (10,)


@pytest.mark.xfail(strict=True, reason="_read_record catches ValueError/KeyError/TypeError only: "
                   "a deeply nested record raises a bare RecursionError from json.loads")
@pytest.mark.parametrize("where", ["append", "open_dataset"])
def test_a_deeply_nested_record_is_refused_by_name(tmp_path, where):
    path = _dataset_with_record(tmp_path, b"[" * 100_000 + b"]" * 100_000)
    with pytest.raises(MetadataError, match="zarrkit-append"):
        if where == "append":
            _append(path)
        else:
            xr.open_dataset(path, group="g", engine="zarrkit")


@pytest.mark.xfail(strict=True, reason="a record without 'digest' passes _read_record's checks; "
                   "recover() then raises a bare KeyError('digest')")
def test_a_record_without_a_digest_is_refused_by_name(tmp_path):
    path = _dataset_with_record(tmp_path, json.dumps(
        {"phase": "shapes", "append_dim": "time", "arrays": {"v": [[5], [6]]}}).encode())
    with pytest.raises(MetadataError, match="zarrkit-append"):
        _append(path)


@pytest.mark.parametrize("record", [
    b"\xff\xfe garbage", b"[1,2]", json.dumps({"phase": "shapes", "arrays": [1]}).encode(),
])
def test_malformed_records_are_refused_by_name(tmp_path, record):
    # held: MetadataError naming the record, from the append and from open_dataset
    path = _dataset_with_record(tmp_path, record)
    with pytest.raises(MetadataError, match="zarrkit-append"):
        _append(path)
    with pytest.raises(MetadataError, match="zarrkit-append"):
        xr.open_dataset(path, group="g", engine="zarrkit")


def test_a_record_naming_a_dotted_path_is_refused(tmp_path):
    # held: '../other/x' is refused as a path (InvalidPathError), other/x untouched
    path = _dataset_with_record(tmp_path, _record({"../other/x": [[10], [2]]}))
    with pytest.raises(ValueError):
        _append(path)
    assert zarrkit.open_array(zarrkit.DirectoryStore(path), path="other/x", mode="r").shape == (10,)
