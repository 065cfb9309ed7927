"""The data-type table: one entry per kind, serving both formats."""

from __future__ import annotations

import numpy as np
import pytest

import zarrkit
from zarrkit.metadata import dtypes
from zarrkit.metadata.dtypes import KINDS, kind_of

SAMPLES = {
    "bool": ["?"],
    "int": ["i1", "<i2", ">i4", "i8"],
    "uint": ["u1", ">u2", "u4", "u8"],
    "float": ["f2", ">f4", "f8"],
    "complex": ["c8", ">c16"],
    "datetime": ["M8[ns]", "m8[s]", "M8[10ms]"],
    "bytes": ["S3"],
    "unicode": ["U2"],
    "raw": ["V4"],
    "struct": [[("a", "<i4"), ("b", "S2")]],
    "string": ["O"],
}


def test_each_kind_once():
    assert len({k.name for k in KINDS}) == len(KINDS)
    names = [n for k in KINDS for n in k.v3_names]
    assert len(names) == len(set(names))
    letters = [c for k in KINDS for c in k.numpy_kinds]
    assert len(letters) == len(set(letters))


@pytest.mark.parametrize(("kind", "spec"), [(k, s) for k, specs in SAMPLES.items() for s in specs])
def test_lookup_and_round_trip(kind, spec):
    dt = np.dtype(spec)
    with zarrkit.config.set(string_dtype="object"):
        assert kind_of(dt).name == kind
        # v3 data types have no byte order (the bytes codec has)
        native = dt if dt.names else dt.newbyteorder("=")
        assert dtypes.parse_v3_data_type(dtypes.v3_data_type_json(dt)) == native
    zero = np.zeros((), dtype=dt)[()] if dt.kind != "O" else ""
    assert dtypes.parse_v3_fill_value(dtypes.v3_fill_value_json(zero, dt), dt) == zero
    if kind not in ("string",):
        assert dtypes.parse_v2_fill_value(dtypes.v2_fill_value_json(zero, dt), dt) == zero


def test_special_kinds():
    assert kind_of(dtypes.BYTES_DTYPE).name == "vlen_bytes"
    assert kind_of(np.dtypes.StringDType()).name == "string"
    assert kind_of(np.dtype("f16")) is dtypes.FLOAT
    # f16 has no core v3 name: the same KeyError as before the table
    with pytest.raises(KeyError):
        dtypes.v3_data_type_json(np.dtype("f16"))


def test_string_reads_as_configured():
    assert dtypes.parse_v3_data_type("string") == np.dtypes.StringDType()
    with zarrkit.config.set(string_dtype="object"):
        assert dtypes.parse_v3_data_type("string") == np.dtype(object)
    assert dtypes.v3_data_type_json(np.dtypes.StringDType()) == "string"
    assert dtypes.v2_dtype_json(np.dtypes.StringDType()) == "|O"


def test_ml_dtypes_by_numpy_kind_in_v2():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    bf = np.dtype(ml_dtypes.bfloat16)
    assert kind_of(bf).name == "ml_dtypes"
    assert kind_of(bf, 2) is dtypes.RAW
    assert kind_of(np.dtype(ml_dtypes.float8_e5m2), 2) is dtypes.FLOAT
