"""The ML data types of the zarr-extensions registry (through ml_dtypes): written by zarrkit and
read by tensorstore and back, bit for bit, with their fill values; ``astype`` to and from them;
casts into them."""

from __future__ import annotations

import json

import numpy as np
import pytest

import zarrkit
from zarrkit.metadata.dtypes import ML_DTYPES

ml_dtypes = pytest.importorskip("ml_dtypes")
ts = pytest.importorskip("tensorstore")

# what tensorstore 0.1.86 reads and writes (it has no float8_e4m3, float6_*, uint2 or uint4)
TS_TYPES = ["bfloat16", "float8_e3m4", "float8_e4m3b11fnuz", "float8_e4m3fnuz", "float8_e5m2",
            "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn", "int2", "int4"]
SIGNED_INTS = {"int2": (-2, 1), "int4": (-8, 7)}


def values(name, n=12):
    dt = np.dtype(getattr(ml_dtypes, name))
    if name in ("int2", "int4", "uint2", "uint4"):
        lo, hi = (int(ml_dtypes.iinfo(dt).min), int(ml_dtypes.iinfo(dt).max))
        return (np.arange(n) % (hi - lo + 1) + lo).astype(dt)
    base = np.array([0.5, 1.0, 2.0, 4.0, 0.25, 1.5, 3.0, 6.0, 0.75, 1.0, 2.0, 0.5][:n])
    if name not in ("float8_e8m0fnu",):
        base = base * np.where(np.arange(n) % 3 == 0, -1, 1)
    return base.astype(dt)


def ts_open(path, metadata=None, **kw):
    spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)}}
    if metadata is not None:
        spec["metadata"] = metadata
    return ts.open(spec, **kw).result()


@pytest.mark.parametrize("name", TS_TYPES)
def test_zarrkit_to_tensorstore(tmp_path, name):
    x = values(name)
    z = zarrkit.create_array(str(tmp_path / "a.zarr"), shape=x.shape, chunks=(5,), dtype=name, compressors=None)
    z[...] = x
    doc = json.loads((tmp_path / "a.zarr" / "zarr.json").read_text())
    assert doc["data_type"] == name
    got = ts_open(tmp_path / "a.zarr").read().result()
    assert got.dtype == x.dtype
    assert got.tobytes() == x.tobytes()


@pytest.mark.parametrize("name", TS_TYPES)
def test_tensorstore_to_zarrkit(tmp_path, name):
    x = values(name)
    t = ts_open(tmp_path / "a.zarr", create=True, metadata={
        "data_type": name, "shape": [12], "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [5]}},
    })
    t[...] = x
    z = zarrkit.open_array(str(tmp_path / "a.zarr"), mode="r+")
    assert z.dtype == x.dtype
    assert z[...].tobytes() == x.tobytes()
    z[3:5] = x[:2]
    expected = x.copy()
    expected[3:5] = x[:2]
    assert ts_open(tmp_path / "a.zarr").read().result().tobytes() == expected.tobytes()


@pytest.mark.parametrize("name", ML_DTYPES)
def test_every_registry_type_round_trips_with_its_fill_value(tmp_path, name):
    dt = np.dtype(getattr(ml_dtypes, name))
    x = values(name)
    fill = SIGNED_INTS.get(name, (None, 1))[1] if "int" in name else x[1].item()
    z = zarrkit.create_array(str(tmp_path / "a.zarr"), shape=(15,), chunks=(5,), dtype=name, fill_value=fill)
    z[:12] = x
    again = zarrkit.open_array(str(tmp_path / "a.zarr"))
    assert again.dtype == dt
    assert again[:12].tobytes() == x.tobytes()
    assert again[12:].tobytes() == np.full(3, fill).astype(dt).tobytes()
    doc = json.loads((tmp_path / "a.zarr" / "zarr.json").read_text())
    assert doc["fill_value"] == fill


def test_bfloat16_nan_fill_values():
    """``"NaN"`` is bfloat16's canonical NaN 0x7fc0; other NaNs are kept as hex bit patterns."""
    from zarrkit.metadata.dtypes import parse_v3_fill_value, v3_fill_value_json

    dt = np.dtype(ml_dtypes.bfloat16)
    nan = parse_v3_fill_value("NaN", dt)
    assert np.array(nan).view("u2") == 0x7FC0
    assert v3_fill_value_json(nan, dt) == "NaN"
    other = parse_v3_fill_value("0x7fc1", dt)
    assert np.array(other).view("u2") == 0x7FC1
    assert v3_fill_value_json(other, dt) == "0x7fc1"
    assert v3_fill_value_json(parse_v3_fill_value("-Infinity", dt), dt) == "-Infinity"


def test_astype_to_and_from_bfloat16(tmp_path):
    x = np.array([1.0, 1.00390625, -3.5, 65504.0, 1e30], "f4")
    z = zarrkit.create_array(str(tmp_path / "a.zarr"), shape=(5,), chunks=(2,), dtype="f4")
    z[...] = x
    view = z.astype("bfloat16")
    assert view.dtype == np.dtype(ml_dtypes.bfloat16)
    assert view[...].tobytes() == x.astype(ml_dtypes.bfloat16).tobytes()
    b = zarrkit.create_array(str(tmp_path / "b.zarr"), shape=(5,), chunks=(2,), dtype="bfloat16")
    b[...] = x.astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(b.astype("f8")[...], x.astype(ml_dtypes.bfloat16).astype("f8"))


def test_cast_into_float8_without_infinity(tmp_path):
    """float8_e4m3fnuz has no infinity: ``clamp`` takes values past its range to its largest
    finite value (240), and without out_of_range they are refused."""
    from zarrkit.errors import ValueEncodeError

    filters = [{"name": "cast_value", "configuration": {"data_type": "float8_e4m3fnuz", "out_of_range": "clamp"}}]
    z = zarrkit.create_array(str(tmp_path / "a.zarr"), shape=(4,), chunks=(4,), dtype="f4", filters=filters)
    z[...] = [1.0, 300.0, -1e6, 0.25]
    np.testing.assert_array_equal(z[...], [1.0, 240.0, -240.0, 0.25])
    strict = zarrkit.create_array(str(tmp_path / "b.zarr"), shape=(4,), chunks=(4,), dtype="f4",
                                  filters=[{"name": "cast_value", "configuration": {"data_type": "float8_e4m3fnuz"}}])
    with pytest.raises(ValueEncodeError, match="out of the range of float8_e4m3fnuz"):
        strict[...] = [1.0, 300.0, 0.0, 0.0]
