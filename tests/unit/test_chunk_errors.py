"""Chunk errors name the chunk and its store once, at the start of the message, whatever the
key's text."""

from __future__ import annotations

import numcodecs
import numpy as np
import pytest

import zarrkit
from zarrkit.codecs import Crc32cCodec
from zarrkit.errors import ChunkDecodeError
from zarrkit.storage import MemoryStore


@pytest.mark.parametrize("zarr_format, key", [(2, "1"), (3, "c/1")])
def test_a_one_dimensional_chunk_key_is_named_even_when_its_text_is_in_the_message(zarr_format, key):
    store = MemoryStore()
    z = zarrkit.create(shape=(20,), chunks=(10,), dtype="u1", compressor=numcodecs.Blosc(),
                       store=store, zarr_format=zarr_format)
    z[:] = 1
    store[key] = b"1 too short"  # "blosc frame of 11 bytes is shorter than its header"
    with pytest.raises(ChunkDecodeError) as info:
        z[15]
    message = str(info.value)
    assert message.startswith(f"chunk {key!r} in {store!r}: ") and info.value.key == key
    assert info.value.store is store
    assert message.count("cannot decode") == 1 and message.count("ChunkDecodeError") == 0


def test_an_error_raised_by_a_codec_is_wrapped_once():
    store = MemoryStore()
    z = zarrkit.create_array(store, shape=(8,), chunks=(4,), dtype="u1", compressors=[Crc32cCodec()])
    z[:] = 3
    raw = bytearray(store["c/0"])
    raw[0] ^= 0xFF
    store["c/0"] = bytes(raw)
    for read in (lambda: z[:4], lambda: z[1:3], lambda: z[:]):
        with pytest.raises(ChunkDecodeError) as info:
            read()
        message = str(info.value)
        assert message.startswith(f"chunk 'c/0' in {store!r}: ") and message.count("chunk 'c/0'") == 1
        assert message.count("MemoryStore") == 1
        assert "checksum mismatch" in message and "ChunkDecodeError" not in message
    assert np.array_equal(z[4:], [3] * 4)  # the other chunk still reads


def test_a_directory_store_is_named_by_its_path(tmp_path):
    path = tmp_path / "a.zarr"
    z = zarrkit.create_array(str(path), shape=(8,), chunks=(4,), dtype="u1", compressors=[numcodecs.Zlib(1)])
    z[:] = 3
    (path / "c" / "1").write_bytes(b"not zlib")
    z2 = zarrkit.open_array(str(path), mode="r+")
    for action in (lambda: z[:], lambda: z2.__setitem__(5, 1)):
        with pytest.raises(ChunkDecodeError) as info:
            action()
        assert str(info.value).startswith("chunk 'c/1' in ") and str(path) in str(info.value)
        assert str(info.value).count(str(path)) == 1
