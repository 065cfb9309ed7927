"""v3 array metadata: parsing and writing ``zarr.json`` documents, and the errors that name the key
and the field of a bad one."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from zarrkit.codecs import BloscCodec, BytesCodec, Crc32cCodec, ShardingCodec, TransposeCodec
from zarrkit.errors import MetadataError, UnknownCodecError
from zarrkit.metadata.v3 import ArrayMetadataV3


def doc(**changes):
    d = {
        "zarr_format": 3,
        "node_type": "array",
        "shape": [10, 20],
        "data_type": "float32",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [5, 8]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": "NaN",
        "codecs": [
            {"name": "transpose", "configuration": {"order": [1, 0]}},
            {"name": "bytes", "configuration": {"endian": "big"}},
            {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 3, "shuffle": "bitshuffle",
                                                "typesize": 4, "blocksize": 0}},
        ],
        "attributes": {"units": "m"},
        "dimension_names": ["y", None],
    }
    d.update(changes)
    return d


def test_parse_resolves_every_field():
    meta = ArrayMetadataV3.from_json(doc())
    assert meta.shape == (10, 20)
    assert meta.grid_chunks == meta.chunks == (5, 8)
    assert meta.dtype == np.dtype("float32")
    assert math.isnan(meta.fill_value)
    assert [type(c) for c in meta.codecs] == [TransposeCodec, BytesCodec, BloscCodec]
    assert meta.dimension_names == ("y", None)
    assert meta.chunk_key((1, 2)) == "c/1/2"
    assert meta.parse_chunk_key("c/1/2") == (1, 2)
    assert meta.grid.grid_shape == (2, 3)
    # a transpose reversing the dimensions is the F layout, which the chain decodes into directly
    assert meta.layout_order == "F" and meta.codec.order == "F"


def test_written_document_round_trips():
    meta = ArrayMetadataV3.from_json(doc())
    written = meta.to_json({"units": "m"})
    assert written["fill_value"] == "NaN"
    assert written["codecs"][1] == {"name": "bytes", "configuration": {"endian": "big"}}
    assert written["chunk_grid"] == {"name": "regular", "configuration": {"chunk_shape": [5, 8]}}
    again = ArrayMetadataV3.from_json(json.loads(meta.to_bytes({"units": "m"})))
    assert again.to_json({"units": "m"}) == written
    assert written["zarr_format"] == 3 and written["node_type"] == "array"


@pytest.mark.parametrize("dtype, fill, written", [
    ("float64", "Infinity", "Infinity"),
    ("float64", "-Infinity", "-Infinity"),
    ("float32", 1.5, 1.5),
    ("complex64", [1.0, "NaN"], [1.0, "NaN"]),
    ("int16", -3, -3),
    ("bool", True, True),
    ("uint64", 2**64 - 1, 2**64 - 1),
])
def test_fill_values_round_trip(dtype, fill, written):
    meta = ArrayMetadataV3.from_json(doc(data_type=dtype, fill_value=fill, codecs=[{"name": "bytes", "configuration": {"endian": "little"}}]))
    assert meta.to_json()["fill_value"] == written


def test_sharding_chain_is_resolved():
    codecs = [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [5, 4],
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
        "index_location": "start",
    }}]
    meta = ArrayMetadataV3.from_json(doc(codecs=codecs, fill_value=0))
    assert isinstance(meta.codecs[0], ShardingCodec)
    assert meta.shards == (5, 8) and meta.chunks == (5, 4)
    assert meta.grid.grid_shape == (2, 5)  # selections are projected on the inner chunks
    assert isinstance(meta.sharding.index_codec.codecs[1], Crc32cCodec)
    assert meta.to_json()["codecs"] == codecs


@pytest.mark.parametrize("change, field", [
    (dict(zarr_format=2), "zarr_format"),
    (dict(node_type="group"), "node_type"),
    (dict(shape=[10]), "chunk"),
    (dict(data_type="float128"), "data_type"),
    (dict(chunk_grid={"name": "regular", "configuration": {"chunk_shape": [0, 8]}}), "chunk"),
    (dict(chunk_key_encoding={"name": "default", "configuration": {"separator": "|"}}), "separator"),
    (dict(codecs=[]), "codecs"),
    (dict(codecs=[{"name": "blosc"}]), "array→bytes"),
    (dict(dimension_names=["y"]), "dimension_names"),
    (dict(storage_transformers=[{"name": "x"}]), "storage_transformers"),
    (dict(unknown_extension={"must_understand": True}), "unknown_extension"),
])
def test_bad_documents_name_the_key_and_the_field(change, field):
    with pytest.raises(MetadataError) as info:
        ArrayMetadataV3.from_json(doc(**change), "a/b/zarr.json")
    assert info.value.key == "a/b/zarr.json"
    assert field in str(info.value)


def test_missing_fields_are_listed():
    d = doc()
    del d["data_type"], d["codecs"]
    with pytest.raises(MetadataError, match=r"missing required field\(s\) \['data_type', 'codecs'\]"):
        ArrayMetadataV3.from_json(d, "zarr.json")


def test_an_unknown_codec_is_its_own_error():
    with pytest.raises(UnknownCodecError, match="'nosuchcodec'") as info:
        ArrayMetadataV3.from_json(doc(codecs=[{"name": "bytes"}, {"name": "nosuchcodec"}]), "x/zarr.json")
    assert info.value.key == "x/zarr.json"


def test_extensions_that_need_not_be_understood_are_kept():
    meta = ArrayMetadataV3.from_json(doc(extra_field={"must_understand": False, "value": 1}))
    assert meta.to_json()["extra_field"] == {"must_understand": False, "value": 1}
