"""Stored bytes never become object references: a v2 array whose dtype holds Python objects
(an object field of a structured dtype, at any depth, in a subarray field) and no object codec
is refused when opened, and no codec chain decodes raw bytes into memory that holds
references.  Without that, a Blosc or LZ4 chunk is decompressed straight into the output array
and its bytes are dereferenced as PyObject pointers: a segmentation fault, so the reads run in
a child process."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numcodecs
import pytest

import zarrkit
from zarrkit.codecs.base import ChunkSpec
from zarrkit.codecs.chain import CodecChain
from zarrkit.codecs.v2 import V2Compressor, V2Filters
from zarrkit.errors import MetadataError
from zarrkit.metadata.dtypes import parse_v2_dtype

COMPRESSORS = {
    "blosc": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1},
    "lz4": {"id": "lz4", "acceleration": 1},
    "zlib": {"id": "zlib", "level": 1},
    "none": None,
}

DTYPES = {
    "object field alone": [["a", "|O"]],
    "object field beside numbers": [["x", "<i4"], ["a", "|O"]],
    "nested object field": [["x", "<i4"], ["s", [["y", "<f8"], ["name", "|O"]]]],
    "object subarray field": [["x", "<i2"], ["a", "|O", [2]]],
}
FIELD = {
    "object field alone": "a",
    "object field beside numbers": "a",
    "nested object field": "s.name",
    "object subarray field": "a",
}

CHILD = textwrap.dedent("""
    import json, sys
    import numcodecs, numpy as np
    import zarrkit
    from zarrkit.errors import MetadataError
    from zarrkit.metadata.dtypes import parse_v2_dtype
    meta = json.loads(sys.argv[1])
    store = {".zarray": json.dumps(meta).encode()}
    itemsize = parse_v2_dtype(meta["dtype"]).itemsize
    # bytes that, taken as pointers, point nowhere
    raw = bytes([0x41]) * (itemsize * meta["chunks"][0])
    codec = None if meta["compressor"] is None else numcodecs.get_codec(meta["compressor"])
    store["0"] = raw if codec is None else bytes(codec.encode(np.frombuffer(raw, np.uint8)))
    try:
        z = zarrkit.open_array(store, mode="r")
        z[:]
    except MetadataError as exc:
        print("MetadataError:", exc)
    else:
        print("read")
""")


def _meta(dtype, compressor):
    return {"zarr_format": 2, "shape": [4], "chunks": [4], "dtype": dtype, "compressor": compressor,
            "fill_value": None, "order": "C", "filters": None}


@pytest.mark.parametrize("compressor", ["blosc", "lz4"])
@pytest.mark.parametrize("dtype", ["object field alone", "object field beside numbers"])
def test_stored_bytes_are_never_read_as_references(dtype, compressor):
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(_meta(DTYPES[dtype], COMPRESSORS[compressor]))],
        check=False, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, f"child died ({proc.returncode}): {proc.stderr[-500:]}"
    assert proc.stdout.startswith("MetadataError:"), proc.stdout + proc.stderr


@pytest.mark.parametrize("compressor", list(COMPRESSORS))
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_an_object_field_without_its_codec_is_refused_at_open_naming_the_field(dtype, compressor):
    store = {"a/.zarray": json.dumps(_meta(DTYPES[dtype], COMPRESSORS[compressor])).encode()}
    with pytest.raises(MetadataError) as info:
        zarrkit.open_array(store, path="a", mode="r")
    message = str(info.value)
    assert message.startswith("a/.zarray: ")
    assert f"field {FIELD[dtype]!r}" in message
    assert "expected 'pickle'" in message and "got no filters" in message


@pytest.mark.parametrize("filters", [[{"id": "vlen-utf8"}], [{"id": "json2"}], [{"id": "zlib", "level": 1}]])
def test_a_structured_dtype_with_object_fields_needs_pickle_not_another_codec(filters):
    meta = _meta(DTYPES["object field beside numbers"], None)
    meta["filters"] = filters
    with pytest.raises(MetadataError, match=f"field 'a'.*expected 'pickle'.*got '{filters[0]['id']}'"):
        zarrkit.open_array({".zarray": json.dumps(meta).encode()}, mode="r")


@pytest.mark.parametrize("filters", [None, [], [{"id": "zlib", "level": 1}], [{"id": "delta", "dtype": "<i4"}]])
def test_an_object_array_needs_an_object_codec_first(filters):
    meta = _meta("|O", None)
    meta["filters"] = filters
    store = {}
    z = zarrkit.create(store=store, shape=(3,), chunks=(2,), dtype=str, zarr_format=2)
    z[:] = ["a", "bb", "ccc"]
    good = json.loads(store[".zarray"])
    store[".zarray"] = json.dumps({**good, "filters": filters}).encode()
    with pytest.raises(MetadataError, match=r"\.zarray: dtype '\|O' \(object\) needs an object codec.*expected one of"):
        zarrkit.open_array(store, mode="r")
    store[".zarray"] = json.dumps(good).encode()  # with its object codec first it reads
    assert zarrkit.open_array(store, mode="r")[:].tolist() == ["a", "bb", "ccc"]


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_no_chain_decodes_raw_bytes_into_memory_holding_references(dtype):
    # whatever the metadata layer lets through, the chain itself never decodes into such memory
    dt = parse_v2_dtype(DTYPES[dtype])
    for codecs in ([V2Filters()], [V2Filters(), V2Compressor(numcodecs.Blosc())], [V2Filters(), V2Compressor(numcodecs.LZ4())]):
        chain = CodecChain(codecs, ChunkSpec((4,), dt))
        assert not chain.decodes_into and not chain.stored_raw


def test_a_chain_over_object_fields_fails_typed_instead_of_crashing():
    child = textwrap.dedent("""
        import numcodecs, numpy as np
        from zarrkit.codecs.base import ChunkSpec
        from zarrkit.codecs.chain import CodecChain
        from zarrkit.codecs.v2 import V2Compressor, V2Filters
        from zarrkit.errors import ChunkDecodeError
        dt = np.dtype([("x", "<i4"), ("a", "O")])
        chain = CodecChain([V2Filters(), V2Compressor(numcodecs.Blosc())], ChunkSpec((4,), dt))
        raw = numcodecs.Blosc().encode(np.full(4 * dt.itemsize, 0x41, np.uint8))
        out = np.empty(4, dt)
        try:
            chain.decode_into(raw, "0", out)
        except ChunkDecodeError as exc:
            print("ChunkDecodeError", exc)
    """)
    proc = subprocess.run([sys.executable, "-c", child], check=False, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"child died ({proc.returncode}): {proc.stderr[-500:]}"
    assert proc.stdout.startswith("ChunkDecodeError"), proc.stdout + proc.stderr


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_a_view_as_object_fields_is_refused_naming_the_field(zarr_format):
    # a view reinterprets the stored chunks with another dtype: with an object field, its
    # bytes would be decoded straight into references (v3 compressors decode into the output)
    child = textwrap.dedent(f"""
        import zarrkit
        from zarrkit.errors import MetadataError
        z = zarrkit.zeros((4,), chunks=(4,), dtype="i8", zarr_format={zarr_format})
        z[:] = 0x41414141
        try:
            z.view(dtype=[("a", "O")])[:]
        except MetadataError as exc:
            print("MetadataError:", exc)
    """)
    proc = subprocess.run([sys.executable, "-c", child], check=False, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"child died ({proc.returncode}): {proc.stderr[-500:]}"
    assert proc.stdout.startswith("MetadataError:") and "field 'a' holds Python objects" in proc.stdout, proc.stdout
