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
from zarrkit.xarray.writer import to_zarr


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


def test_a_record_cannot_resize_an_array_outside_its_group(tmp_path):
    path = _dataset_with_record(tmp_path, _record({"/other/x": [[10], [2]]}))
    try:
        _append(path)
    except (MetadataError, ValueError):
        pass
    assert zarrkit.open_array(zarrkit.DirectoryStore(path), path="other/x", mode="r").shape == (10,)


@pytest.mark.parametrize("where", ["append", "open_dataset"])
def test_a_deeply_nested_record_is_refused_by_name(tmp_path, where):
    path = _dataset_with_record(tmp_path, b"[" * 100_000 + b"]" * 100_000)
    with pytest.raises(MetadataError, match="zarrkit-append"):
        if where == "append":
            _append(path)
        else:
            xr.open_dataset(path, group="g", engine="zarrkit")


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


@pytest.mark.parametrize("arrays, field", [
    ({"v": [[5], [-6]]}, "arrays['v'][1]"),            # a negative length
    ({"v": [[5], [True]]}, "arrays['v'][1]"),          # a bool is no length
    ({"v": [[5], [2**63]]}, "arrays['v'][1]"),         # beyond what the metadata reads
    ({"v": [[5], [6, 1]]}, "arrays['v']"),             # another rank after
    ({"v": [[5], [2]]}, "arrays['v']"),                # an append never shrinks
    ({"v": [[5]]}, "arrays['v']"),                     # no shape after
    ({"": [[5], [6]]}, "arrays"),                      # no name
    ({"g/v": [[5], [6]]}, "arrays"),                   # not a direct member
])
def test_a_record_with_bad_shapes_or_names_is_refused_by_field(tmp_path, arrays, field):
    path = _dataset_with_record(tmp_path, _record(arrays))
    for run in (_append, lambda p: xr.open_dataset(p, group="g", engine="zarrkit")):
        with pytest.raises(MetadataError, match="zarrkit-append") as info:
            run(path)
        assert field in str(info.value) and "expected" in str(info.value)
    assert zarrkit.open_array(zarrkit.DirectoryStore(path), path="g/v", mode="r").shape == (5,)


@pytest.mark.parametrize("changes, field", [
    ({"phase": "done"}, "phase"), ({"digest": 1}, "digest"), ({"append_dim": None}, "append_dim"),
])
def test_a_record_with_a_bad_field_is_refused_by_field(tmp_path, changes, field):
    doc = json.loads(_record({"v": [[5], [6]]}))
    path = _dataset_with_record(tmp_path, json.dumps({**doc, **changes}).encode())
    with pytest.raises(MetadataError, match=f"zarrkit-append.*{field}: expected"):
        _append(path)


def test_a_record_of_an_array_missing_or_of_another_shape_changes_nothing(tmp_path):
    # the record is checked against every array it names before any shape changes
    path = _dataset_with_record(tmp_path, _record({"v": [[5], [7]], "nothing": [[1], [2]]}))
    with pytest.raises(MetadataError, match="zarrkit-append.*'nothing'"):
        _append(path)
    path = _dataset_with_record(tmp_path / "b", _record({"v": [[3], [4]]}))
    with pytest.raises(MetadataError, match=r"zarrkit-append.*\(5,\)"):
        _append(path)
    for p in (str(tmp_path / "ds.zarr"), path):
        assert zarrkit.open_array(zarrkit.DirectoryStore(p), path="g/v", mode="r").shape == (5,)


def test_a_record_larger_than_the_bound_is_not_read(tmp_path):
    from zarrkit.xarray.append import MAX_RECORD_BYTES

    path = _dataset_with_record(tmp_path, _record({"v": [[5], [6]]}, pad=" " * MAX_RECORD_BYTES))
    with pytest.raises(MetadataError, match=f"zarrkit-append.*at most {MAX_RECORD_BYTES} bytes"):
        xr.open_dataset(path, group="g", engine="zarrkit")
