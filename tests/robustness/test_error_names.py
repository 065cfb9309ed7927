"""Every undecodable chunk is named once, at the start of the error: its key, then its store,
whatever the format, layout, store kind and operation, with one layer of wrapping."""

from __future__ import annotations

import numcodecs
import pytest

import zarrkit
from zarrkit.errors import ChunkDecodeError

LAYOUTS = ["v2", "v2-nested", "v3", "v3-sharded"]
STORES = ["directory", "zip", "sqlite", "memory"]


def _store(kind, tmp_path, mode="w"):
    if kind == "directory":
        return zarrkit.DirectoryStore(str(tmp_path / "a.zarr"))
    if kind == "zip":
        return zarrkit.ZipStore(str(tmp_path / "a.zip"), mode=mode)
    if kind == "sqlite":
        return zarrkit.SQLiteStore(str(tmp_path / "a.sqlite"))
    return zarrkit.MemoryStore()


def _corrupt_array(layout):
    """An array whose chunk (inner chunk, when sharded) at (1, 1) does not decode, in memory;
    returns its keys and values and the chunk's key."""
    mem = zarrkit.MemoryStore()
    if layout.startswith("v2"):
        z = zarrkit.create(shape=(6, 8), chunks=(3, 4), dtype="<i4", store=mem, zarr_format=2,
                           compressor=numcodecs.Zlib(1), dimension_separator="/" if layout == "v2-nested" else ".")
        key = "1/1" if layout == "v2-nested" else "1.1"
    else:
        z = zarrkit.create_array(mem, shape=(6, 8), chunks=(3, 4), dtype="int32",
                                 shards=(6, 8) if layout == "v3-sharded" else None, compressors=[numcodecs.Zlib(1)])
        key = "c/0/0@1.1" if layout == "v3-sharded" else "c/1/1"
    z[...] = 7
    if layout == "v3-sharded":  # the inner chunk's bytes inside the shard; the index intact
        raw = bytearray(mem["c/0/0"])
        entry = len(raw) - 4 - 16 * 4 + 16 * 3  # index entry of inner chunk (1, 1)
        off = int.from_bytes(raw[entry: entry + 8], "little")
        raw[off: off + 4] = b"\xde\xad\xbe\xef"
        mem["c/0/0"] = bytes(raw)
    else:
        mem[key] = b"not zlib at all"
    return {k: mem[k] for k in mem}, key


@pytest.mark.parametrize("kind", STORES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_corrupt_chunk_is_named_with_its_store_once(layout, kind, tmp_path):
    items, key = _corrupt_array(layout)
    store = _store(kind, tmp_path)
    for k, v in items.items():
        store[k] = v
    if kind == "zip":
        store.close()
        store = _store(kind, tmp_path, mode="r")
    z = zarrkit.open_array(store, mode="r" if kind == "zip" else "r+")
    actions = {"read all": lambda: z[...], "read one": lambda: z[4, 5],
               "check": lambda: z.check_stored(key.partition("@")[0])}
    if kind != "zip":
        actions["partial write"] = lambda: z.__setitem__((4, 5), 1)
    for name, action in actions.items():
        with pytest.raises(ChunkDecodeError) as info:
            action()
        message = str(info.value)
        assert message.startswith(f"chunk {key!r} in {store!r}: "), (name, message)
        assert message.count(key) == 1 and message.count("ChunkDecodeError") == 0, (name, message)
        assert message.count("cannot decode") <= 1, (name, message)
        assert info.value.key == key and info.value.store is store
    assert z[0, 0] == 7  # the other chunks still read
