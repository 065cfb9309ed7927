"""A v3 array whose data type holds Python objects (``string``) and whose codec chain has no
object codec is refused when it is opened, whatever array->bytes codec the document names:
not only ``bytes``, but also the numcodecs serializers (``numcodecs.zfpy``,
``numcodecs.pcodec``), which today open and fail only chunk by chunk."""

from __future__ import annotations

import json

import pytest

import zarrkit
from zarrkit.errors import MetadataError


def _doc(codecs):
    return {"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "string",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": "", "codecs": codecs}


SERIALIZERS = {
    "zfpy": [{"name": "numcodecs.zfpy", "configuration": {"mode": 4}}],
    "pcodec": [{"name": "numcodecs.pcodec"}],
    "astype then zfpy": [
        {"name": "numcodecs.astype", "configuration": {"encode_dtype": "|u1", "decode_dtype": "|O"}},
        {"name": "numcodecs.zfpy", "configuration": {"mode": 4}},
    ],
}


@pytest.mark.parametrize("codecs", list(SERIALIZERS.values()), ids=list(SERIALIZERS))
def test_a_string_array_without_an_object_codec_is_refused_at_open(codecs):
    store = {"zarr.json": json.dumps(_doc(codecs)).encode()}
    with pytest.raises(MetadataError):
        zarrkit.open_array(store, mode="r")


@pytest.mark.parametrize("codecs", list(SERIALIZERS.values()), ids=list(SERIALIZERS))
def test_a_consolidated_string_member_without_an_object_codec_is_refused(codecs):
    store = {"zarr.json": json.dumps({
        "zarr_format": 3, "node_type": "group", "attributes": {},
        "consolidated_metadata": {"kind": "inline", "must_understand": False,
                                  "metadata": {"a": _doc(codecs)}}}).encode()}
    with pytest.raises(MetadataError):
        zarrkit.open_consolidated(store, mode="r")["a"]
