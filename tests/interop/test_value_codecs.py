"""``cast_value`` and ``scale_offset`` against zarr-python 3.4 (whose casts are cast-value-rs):
the same documents, the same stored bytes for every rounding and out-of-range mode, data read
both ways; and what neither may do: write a value the cast cannot hold."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrkit
from zarrkit.errors import MetadataError, ValueEncodeError

zarr = pytest.importorskip("zarr")
pytest.importorskip("cast_value_rs")

ROUNDINGS = ["nearest-even", "towards-zero", "towards-positive", "towards-negative", "nearest-away"]


def cast(data_type, rounding=None, out_of_range=None, scalar_map=None):
    config = {"data_type": data_type}
    if rounding is not None:
        config["rounding"] = rounding
    if out_of_range is not None:
        config["out_of_range"] = out_of_range
    if scalar_map is not None:
        config["scalar_map"] = scalar_map
    return {"name": "cast_value", "configuration": config}


def both(tmp_path, values, dtype, filters, fill_value=0, chunks=None):
    """Write ``values`` with zarrkit and zarr-python; returns the two array directories."""
    chunks = chunks or (len(values),)
    paths = []
    for lib, name in ((zarrkit, "ours"), (zarr, "theirs")):
        path = str(tmp_path / f"{name}.zarr")
        a = lib.create_array(path, shape=(len(values),), chunks=chunks, dtype=dtype, fill_value=fill_value,
                             filters=filters, compressors=None, config={"write_empty_chunks": True})
        a[...] = np.asarray(values, dtype=dtype)
        paths.append(path)
    return paths


def stored(path):
    out = {}
    for root, _, files in os.walk(path):
        for f in files:
            with open(os.path.join(root, f), "rb") as fh:
                out[os.path.relpath(os.path.join(root, f), path)] = fh.read() if f != "zarr.json" else json.loads(fh.read())
    return out


EDGES = [0.0, -0.0, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4999, 2.5001, 127.5, -128.5, 254.6, 1e6, -1e6, 3.75]


@pytest.mark.parametrize("rounding", ROUNDINGS)
@pytest.mark.parametrize("out_of_range,target", [("clamp", "int8"), ("wrap", "int8"), ("clamp", "uint8"),
                                                 ("wrap", "uint16"), ("clamp", "float16")])
def test_float_casts_store_what_zarr_python_stores(tmp_path, rounding, out_of_range, target):
    filters = [cast(target, rounding, out_of_range)]
    ours, theirs = both(tmp_path, EDGES, "f8", filters)
    assert stored(ours) == stored(theirs)
    np.testing.assert_array_equal(zarr.open_array(ours)[...], zarrkit.open_array(theirs)[...])


@pytest.mark.parametrize("rounding", ROUNDINGS)
def test_int64_to_float32_rounding(tmp_path, rounding):
    # integers beyond float32's 24-bit mantissa round by the mode, ties included
    values = [2**24 + 1, 2**24 + 3, -(2**24) - 1, 2**60 + 2**36, 2**62 + 2**38 + 1, 7, -(2**63)]
    ours, theirs = both(tmp_path, values, "i8", [cast("float32", rounding)])
    assert stored(ours) == stored(theirs)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    values=st.lists(st.floats(-400, 400, allow_nan=False, width=32), min_size=1, max_size=20),
    rounding=st.sampled_from(ROUNDINGS),
    out_of_range=st.sampled_from(["clamp", "wrap"]),
    target=st.sampled_from(["int8", "uint8", "int16", "uint4", "int4"]),
)
def test_random_casts_match_zarr_python(tmp_path_factory, values, rounding, out_of_range, target):
    if target in ("uint4", "int4"):
        pytest.importorskip("ml_dtypes")
        out_of_range = "clamp"  # zarr-python reads no sub-byte types: compare with our own decode
    tmp = tmp_path_factory.mktemp("cast")
    filters = [cast(target, rounding, out_of_range)]
    if target in ("uint4", "int4"):
        a = zarrkit.create_array(str(tmp / "a.zarr"), shape=(len(values),), chunks=(len(values),), dtype="f4",
                                 filters=filters, compressors=None)
        a[...] = np.asarray(values, "f4")
        lo, hi = (0, 15) if target == "uint4" else (-8, 7)
        expected = np.clip(_round(np.asarray(values, "f8"), rounding), lo, hi)
        np.testing.assert_array_equal(a[...], expected.astype("f4"))
        return
    ours, theirs = both(tmp, values, "f4", filters)
    assert stored(ours) == stored(theirs)


def _round(x, rounding):
    if rounding == "nearest-even":
        return np.rint(x)
    if rounding == "towards-zero":
        return np.trunc(x)
    if rounding == "towards-positive":
        return np.ceil(x)
    if rounding == "towards-negative":
        return np.floor(x)
    return np.copysign(np.floor(np.abs(x) + 0.5), x)


def test_scalar_map_and_nan_fill(tmp_path):
    """The spec's example: float64 with NaN as fill value stored as uint8, 0 reserved for NaN."""
    filters = [
        {"name": "scale_offset", "configuration": {"offset": -10, "scale": 0.1}},
        cast("uint8", "nearest-even", scalar_map={"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}),
    ]
    values = [np.nan, 0.0, 100.0, 2540.0, np.nan, 1000.0]
    ours, theirs = both(tmp_path, values, "f8", filters, fill_value=np.nan, chunks=(3,))
    assert stored(ours) == stored(theirs)
    got = zarrkit.open_array(theirs)[...]
    np.testing.assert_array_equal(got, [np.nan, 0.0, 100.0, 2540.0, np.nan, 1000.0])
    # a chunk never written reads as the fill value through the codecs
    z = zarrkit.create_array(str(tmp_path / "empty.zarr"), shape=(4,), chunks=(2,), dtype="f8",
                             fill_value=np.nan, filters=filters)
    assert np.isnan(z[...]).all()


def test_scale_offset_on_integers(tmp_path):
    filters = [{"name": "scale_offset", "configuration": {"offset": 1000}}, cast("uint8")]
    ours, theirs = both(tmp_path, [1000, 1100, 1255], "uint16", filters, fill_value=1000)
    assert stored(ours) == stored(theirs)
    np.testing.assert_array_equal(zarrkit.open_array(theirs)[...], [1000, 1100, 1255])


def test_scale_offset_overflow_is_refused(tmp_path):
    z = zarrkit.create_array(str(tmp_path / "a.zarr"), shape=(3,), chunks=(3,), dtype="int8",
                             filters=[{"name": "scale_offset", "configuration": {"offset": -10, "scale": 2}}])
    z[...] = [1, 2, 3]
    with pytest.raises(ValueEncodeError, match="scale_offset: .*out of the range of int8"):
        z[...] = [1, 2, 100]
    np.testing.assert_array_equal(z[...], [1, 2, 3])


def test_refused_values_write_nothing(tmp_path):
    """Without out_of_range a value the target cannot hold fails the whole write, naming the
    array, before any chunk of it is stored."""
    z = zarrkit.create_array(str(tmp_path / "a.zarr"), shape=(6,), chunks=(2,), dtype="f8",
                             filters=[cast("uint8")], compressors=None)
    z[...] = 7
    before = stored(str(tmp_path / "a.zarr"))
    for bad in ([0, 1, 2, 3, 4, 256], [-1, 0, 0, 0, 0, 0], [0, 0, np.nan, 0, 0, 0], [np.inf] * 6):
        with pytest.raises(ValueEncodeError) as info:
            z[...] = bad
        assert "zarr.json" in str(info.value) and "cast_value" in str(info.value)
    with pytest.raises(ValueEncodeError):
        z[4] = 1e9
    assert stored(str(tmp_path / "a.zarr")) == before


@pytest.mark.parametrize("codec,message", [
    (cast("uint8", rounding="up"), "rounding must be one of"),
    (cast("float32", out_of_range="wrap"), "'wrap' needs an integer data_type"),
    (cast("string"), "not an integer or floating-point type"),
    (cast("no_such_type"), "no_such_type"),
    ({"name": "cast_value", "configuration": {"data_type": "uint8", "extra": 1}}, "unexpected configuration"),
    (cast("uint8", scalar_map={"encode": [["NaN"]]}), "scalar_map"),
    ({"name": "scale_offset", "configuration": {"scale": 0}}, "scale must not be 0"),
    ({"name": "scale_offset", "configuration": {"offset": "x"}}, "scale_offset offset"),
])
def test_bad_codec_documents_name_the_key(tmp_path, codec, message):
    path = tmp_path / "a.zarr"
    zarrkit.create_array(str(path), shape=(4,), chunks=(2,), dtype="i4", fill_value=0)
    doc = json.loads((path / "zarr.json").read_text())
    doc["codecs"] = [codec, {"name": "bytes", "configuration": {"endian": "little"}}]
    (path / "zarr.json").write_text(json.dumps(doc))
    with pytest.raises(MetadataError) as info:
        zarrkit.open_array(str(path))
    assert message in str(info.value) and "zarr.json" in str(info.value)


def test_fill_value_must_survive_the_cast(tmp_path):
    with pytest.raises(ValueError, match="fill value 0.5 does not survive"):
        zarrkit.create_array(str(tmp_path / "a.zarr"), shape=(4,), chunks=(2,), dtype="f8", fill_value=0.5,
                             filters=[cast("uint8")])
    assert not (tmp_path / "a.zarr").exists()


def test_unknown_codec_and_dtype_write_nothing(tmp_path):
    from zarrkit.errors import UnknownCodecError, UnsupportedDtypeError

    with pytest.raises(UnknownCodecError, match="no_such_codec"):
        zarrkit.create_array(str(tmp_path / "a.zarr"), shape=(4,), dtype="i4",
                             filters=[{"name": "no_such_codec"}])
    with pytest.raises((UnsupportedDtypeError, TypeError), match="no_such_dtype"):
        zarrkit.create_array(str(tmp_path / "b.zarr"), shape=(4,), dtype="no_such_dtype")
    assert not (tmp_path / "a.zarr").exists() and not (tmp_path / "b.zarr").exists()
