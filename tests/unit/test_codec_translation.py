"""The one translation of a v3 codec chain into Zarr v2's terms, and what each caller makes of
a crc32c checksum: a conversion (chunks kept as stored) refuses it, a copy (chunks encoded
again) drops it."""

import numcodecs
import numpy as np
import pytest

import zarrkit
from zarrkit.api.conversion import v3_to_v2_metadata
from zarrkit.api.streaming import creation_kwargs
from zarrkit.codecs import (
    BytesCodec,
    Crc32cCodec,
    GzipCodec,
    NumcodecsArrayArrayCodec,
    TransposeCodec,
    VLenUTF8Codec,
)
from zarrkit.errors import MetadataError, UnsupportedCodecError
from zarrkit.metadata.codec_args import v3_chain_to_v2

LITTLE = BytesCodec("little")


def test_crc32c_alone_kept_dropped_or_refused():
    keep = v3_chain_to_v2([], LITTLE, [Crc32cCodec()], 1, crc32c="keep")
    assert keep.compressor == numcodecs.CRC32C()
    drop = v3_chain_to_v2([], LITTLE, [Crc32cCodec()], 1, crc32c="drop")
    assert drop.compressor is None
    with pytest.raises(UnsupportedCodecError, match=r"^a/zarr.json: codecs: the codec 'crc32c'") as info:
        v3_chain_to_v2([], LITTLE, [Crc32cCodec()], 1, crc32c="refuse", key="a/zarr.json")
    assert info.value.key == "a/zarr.json"


def test_crc32c_after_a_compressor():
    chain = ([], LITTLE, [GzipCodec(level=1), Crc32cCodec()], 1)
    assert v3_chain_to_v2(*chain, crc32c="drop").compressor == numcodecs.GZip(level=1)
    for choice in ("keep", "refuse"):
        with pytest.raises(UnsupportedCodecError, match="takes one compressor, the chain has 2"):
            v3_chain_to_v2(*chain, crc32c=choice)  # type: ignore[arg-type]


def test_order_filters_and_object_codec():
    delta = numcodecs.Delta(dtype="<i4")
    got = v3_chain_to_v2(
        [TransposeCodec((1, 0)), NumcodecsArrayArrayCodec("numcodecs.delta", delta)],
        VLenUTF8Codec(), [], 2, crc32c="refuse",
    )
    assert (got.order, got.filters, got.object_codec, got.compressor) == ("F", (delta,), numcodecs.VLenUTF8(), None)
    with pytest.raises(UnsupportedCodecError, match=r"transpose order \[0, 1\] has no Zarr v2 equivalent"):
        v3_chain_to_v2([TransposeCodec((0, 1))], LITTLE, [], 2, crc32c="keep")


def _with_crc32c() -> zarrkit.Array:
    z = zarrkit.create_array(
        {}, shape=(6,), chunks=(2,), dtype="i4", chunk_key_encoding={"name": "v2"},
        compressors=[GzipCodec(level=1), Crc32cCodec()],
    )
    z[:] = np.arange(6)
    return z


def test_conversion_refuses_crc32c_copy_drops_it():
    z = _with_crc32c()
    with pytest.raises(MetadataError, match="one compressor"):
        v3_to_v2_metadata(z.metadata, "zarr.json")
    kw = creation_kwargs(z, 2)
    assert kw["compressor"] == numcodecs.GZip(level=1) and kw["filters"] is None
    copy = zarrkit.create(store={}, zarr_format=2, **kw)
    copy[:] = z[:]
    np.testing.assert_array_equal(copy[:], np.arange(6))
