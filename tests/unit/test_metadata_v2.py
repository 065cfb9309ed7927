import json

import numcodecs
import numpy as np
import pytest

from zarrkit.errors import MetadataError, UnknownCodecError
from zarrkit.metadata.v2 import ArrayMetadataV2


def doc(**changes):
    d = {
        "zarr_format": 2,
        "shape": [10, 20],
        "chunks": [5, 5],
        "dtype": "<f8",
        "compressor": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1},
        "fill_value": "NaN",
        "order": "C",
        "filters": [{"id": "delta", "dtype": "<f8", "astype": "<f4"}],
    }
    d.update(changes)
    return d


def test_parse_and_serialise_round_trip():
    meta = ArrayMetadataV2.from_json(doc())
    assert meta.shape == (10, 20)
    assert meta.chunks == (5, 5)
    assert meta.dtype == np.dtype("<f8")
    assert np.isnan(meta.fill_value)
    assert isinstance(meta.compressor, numcodecs.Blosc)
    assert isinstance(meta.filters[0], numcodecs.Delta)
    out = meta.to_json()
    assert out["fill_value"] == "NaN"
    assert out["compressor"] == {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1}
    assert ArrayMetadataV2.from_json(json.loads(meta.to_bytes())).to_json() == out


def test_written_json_is_sorted_and_indented():
    text = ArrayMetadataV2.from_json(doc(filters=None, fill_value=0)).to_bytes().decode()
    assert text.startswith('{\n    "chunks": [\n        5,')
    keys = [line.split('"')[1] for line in text.splitlines() if line.startswith('    "')]
    assert keys == sorted(keys)


def test_dimension_separator_written_only_when_nested():
    assert "dimension_separator" not in ArrayMetadataV2.from_json(doc()).to_json()
    meta = ArrayMetadataV2.from_json(doc(dimension_separator="/"))
    assert meta.to_json()["dimension_separator"] == "/"
    assert meta.chunk_key((1, 2)) == "1/2"
    assert meta.parse_chunk_key("1/2") == (1, 2)
    assert meta.parse_chunk_key("1.2") is None


def test_zero_d_chunk_key():
    meta = ArrayMetadataV2.from_json(doc(shape=[], chunks=[], filters=None))
    assert meta.chunk_key(()) == "0"
    assert meta.parse_chunk_key("0") == ()


@pytest.mark.parametrize(
    "changes, fragment",
    [
        ({"zarr_format": 3}, "zarr_format"),
        ({"shape": [-1, 2]}, "shape"),
        ({"shape": "10"}, "shape"),
        ({"chunks": [0, 5]}, "chunks"),
        ({"chunks": [5]}, "chunks"),
        ({"chunks": [5.5, 5]}, "chunks"),
        ({"order": "X"}, "order"),
        ({"filters": {"id": "delta"}}, "filters"),
        ({"dimension_separator": "-"}, "dimension_separator"),
        ({"extra": 1}, "extra"),
        ({"chunks": [2**40, 2**40]}, "chunk"),
    ],
)
def test_invalid_documents_name_the_field(changes, fragment):
    with pytest.raises(MetadataError) as info:
        ArrayMetadataV2.from_json(doc(**changes), "foo/.zarray")
    assert "foo/.zarray" in str(info.value)
    assert fragment in str(info.value)


def test_missing_field():
    d = doc()
    del d["order"]
    with pytest.raises(MetadataError, match="order"):
        ArrayMetadataV2.from_json(d, "a/.zarray")


def test_unknown_codec():
    with pytest.raises(UnknownCodecError, match="no-such-codec"):
        ArrayMetadataV2.from_json(doc(compressor={"id": "no-such-codec"}), "a/.zarray")


def test_object_dtype_needs_object_codec():
    with pytest.raises(MetadataError, match="object"):
        ArrayMetadataV2.from_json(doc(dtype="|O", filters=None, fill_value=0), "a/.zarray")
    meta = ArrayMetadataV2.from_json(doc(dtype="|O", filters=[{"id": "vlen-utf8"}], fill_value=0))
    assert isinstance(meta.filters[0], numcodecs.VLenUTF8)


def test_blosc_blocksize_zero_is_not_written():
    meta = ArrayMetadataV2.from_json(
        doc(compressor={"id": "blosc", "cname": "zstd", "clevel": 1, "shuffle": 2, "blocksize": 0})
    )
    assert "blocksize" not in meta.to_json()["compressor"]
