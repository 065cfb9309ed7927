"""An xarray append's record (``zarrkit.xarray.append``): a dataset left mid-append, its
variables disagreeing along ``append_dim``, opens as it was before the append; a different
append made next finishes the recorded one first; a corrupt record is refused, typed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

xr = pytest.importorskip("xarray")

import zarrkit
import zarrkit.xarray
from zarrkit.core.staged import write_out_of_sight
from zarrkit.errors import MetadataError
from zarrkit.xarray.append import RECORD, Growth, rows_digest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _xarray_append_kill_worker import create, dataset


def _concat(*parts):
    return xr.concat(list(parts), dim="time", data_vars="minimal", coords="minimal", compat="override")


def _open(path, consolidated=None):
    with xr.open_dataset(path, engine="zarrkit", consolidated=consolidated) as ds:
        return ds.load()


def _left_mid_append(path: Path, zarr_format: int) -> None:
    """The state of an append of rows 5..8 killed after one array's shape grew."""
    create(path, zarr_format)
    grp = zarrkit.open_group(str(path), mode="r+")
    new = dataset(5, 3)
    arrays = {}
    for name in ("temp", "count", "time"):
        arr = grp[name]
        old = tuple(arr.shape)
        arrays[name] = (arr, old, (old[0] + 3, *old[1:]))
    digest = rows_digest({k: v.values for k, v in new.variables.items() if "time" in v.dims})
    growth = Growth(grp, "time", arrays, digest)
    growth.begin()
    for name, (arr, old, grown) in arrays.items():
        write_out_of_sight(arr, grown, (slice(old[0], grown[0]),), new[name].values)
    growth._store_record("shapes")
    arrays["temp"][0].resize(arrays["temp"][2], delete_outside_chunks=False)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_a_dataset_left_mid_append_opens_as_before(tmp_path, zarr_format):
    path = tmp_path / "a.zarr"
    _left_mid_append(path, zarr_format)
    assert zarrkit.open_array(str(path / "temp"), mode="r").shape[0] == 8  # the arrays disagree
    for consolidated in (None, False):
        xr.testing.assert_identical(_open(path, consolidated), dataset(0, 5))


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_the_same_append_again_finishes_it_and_another_finishes_it_first(tmp_path, zarr_format):
    same, other = tmp_path / "same.zarr", tmp_path / "other.zarr"
    _left_mid_append(same, zarr_format)
    zarrkit.xarray.to_zarr(dataset(5, 3), str(same), mode="a", append_dim="time")
    xr.testing.assert_identical(_open(same), _concat(dataset(0, 5), dataset(5, 3)))
    _left_mid_append(other, zarr_format)
    zarrkit.xarray.to_zarr(dataset(8, 2), str(other), mode="a", append_dim="time")
    for consolidated in (None, False):
        xr.testing.assert_identical(_open(other, consolidated),
                                    _concat(dataset(0, 5), dataset(5, 3), dataset(8, 2)))
    assert not (same / RECORD).exists() and not (other / RECORD).exists()


def test_a_corrupt_record_is_refused_naming_it(tmp_path):
    path = tmp_path / "a.zarr"
    create(path, 3)
    (path / RECORD).write_bytes(b'{"phase": "shapes", "arrays": {"temp": [[5], "x"]}}')
    with pytest.raises(MetadataError, match="append"):
        _open(path)
