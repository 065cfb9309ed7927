"""Reading chunks that are not stored with ``read_missing_chunks=False`` (zarr-python 3's
array setting): every way a read fetches chunks raises ChunkNotFoundError naming the array and
the key instead of filling in the fill value; of a sharded array only a shard that is not
stored raises, the inner chunks a stored shard leaves out read as the fill value.  Writes,
and arrays left at the default, are unchanged."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import zarrkit
from zarrkit.errors import ChunkNotFoundError
from zarrkit.storage import DirectoryStore, MemoryStore

STRICT = {"read_missing_chunks": False}

#: layouts read by different parts of the engine: chunks without a compressor (read one by
#: one), small compressed chunks (read a batch at a time), large compressed chunks whose rows
#: span the result's last dimension (read a row at a time), and shards of either kind of chunk
LAYOUTS = {
    "raw chunks": dict(shape=(40, 40), chunks=(10, 10), compressors=None),
    "small compressed chunks": dict(shape=(40, 40), chunks=(10, 10)),
    "rows of large chunks": dict(shape=(2048, 256), chunks=(128, 64)),
    "shards of raw chunks": dict(shape=(40, 40), chunks=(5, 5), shards=(20, 20), compressors=None),
    "shards of compressed chunks": dict(shape=(40, 40), chunks=(5, 5), shards=(20, 20)),
}


def _stored(store, layout, **kwargs):
    """An array of ``layout`` with every chunk written (none equals the fill value)."""
    a = zarrkit.create_array(store, dtype="float64", fill_value=-1.0, **LAYOUTS[layout], **kwargs)
    a[...] = np.arange(a.size, dtype="float64").reshape(a.shape)
    return a


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_lost_chunk_or_shard_raises_naming_array_and_key(layout):
    store = MemoryStore()
    _stored(store, layout)
    lost = max(store.list_prefix("c/"))
    store.delete(lost)
    strict = zarrkit.open_array(store, config=STRICT)
    with pytest.raises(ChunkNotFoundError, match=rf"array '/' of .*'{lost}'") as info:
        strict[...]
    assert isinstance(info.value, ValueError)
    # the same array at the default reads the fill value there, and everything else as stored
    got = zarrkit.open_array(store)[...]
    assert (got == -1).sum() == np.prod(strict.shards or strict.chunks)
    expected = np.arange(strict.size, dtype="float64").reshape(strict.shape)
    assert np.array_equal(got[got != -1], expected[got != -1])


@pytest.mark.parametrize("layout", LAYOUTS)
def test_reads_of_stored_chunks_only_do_not_raise(layout):
    store = MemoryStore()
    _stored(store, layout)
    lost = max(store.list_prefix("c/"))
    store.delete(lost)
    strict = zarrkit.open_array(store, config=STRICT)
    # the first chunk (or shard) is stored: a read of it alone answers as usual
    first = tuple(slice(0, n) for n in (strict.shards or strict.chunks))
    assert np.array_equal(strict[first], zarrkit.open_array(store)[first])


def test_a_single_chunk_read_raises_and_names_the_array_path():
    root = zarrkit.create_group(MemoryStore())
    a = root.create_array("grp/data", shape=(6,), chunks=(2,), dtype="int32", config=STRICT)
    a[0:2] = [1, 2]
    assert a[0:2].tolist() == [1, 2]
    with pytest.raises(ChunkNotFoundError, match=r"array '/grp/data' .*chunk 'grp/data/c/1'"):
        a[3]


def test_a_stored_shard_fills_the_inner_chunks_it_leaves_out():
    a = zarrkit.create_array(MemoryStore(), shape=(100,), chunks=(10,), shards=(50,), dtype="float64",
                             fill_value=-1.0, compressors=None, config=STRICT)
    with pytest.raises(ChunkNotFoundError, match="shard 'c/0'"):
        a[:]
    a[20:30] = np.arange(10.0)
    expected = np.full(20, -1.0)
    expected[5:15] = np.arange(10.0)
    assert np.array_equal(a[15:35], expected)
    assert np.array_equal(a[0:50][20:30], np.arange(10.0))
    # the second shard is not stored, whether read alone or with the first
    for selection in (slice(None), slice(45, 55), slice(60, 61)):
        with pytest.raises(ChunkNotFoundError, match="shard 'c/1'"):
            a[selection]


def test_write_empty_chunks_false_leaves_chunks_that_then_raise():
    a = zarrkit.create_array(MemoryStore(), shape=(4,), chunks=(2,), dtype="int32", fill_value=0,
                             config={"write_empty_chunks": False, "read_missing_chunks": False})
    a[:] = [1, 2, 3, 4]
    assert a[:].tolist() == [1, 2, 3, 4]
    a[:2] = 0  # all fill value: the chunk is deleted, not written
    with pytest.raises(ChunkNotFoundError, match="'c/0'"):
        a[:]
    assert a[2:].tolist() == [3, 4]
    kept = a.with_config({"write_empty_chunks": True})
    kept[:2] = 0
    assert a[:].tolist() == [0, 0, 3, 4]


def test_partial_writes_into_missing_chunks_still_work():
    a = zarrkit.create_array(MemoryStore(), shape=(4, 4), chunks=(2, 2), dtype="int8", fill_value=7,
                             config=STRICT)
    a[0, 0] = 1  # the rest of the chunk is the fill value, as without the setting
    assert a[:2, :2].tolist() == [[1, 7], [7, 7]]


def test_global_setting_applies_to_arrays_opened_while_it_is_set(tmp_path):
    store = DirectoryStore(str(tmp_path / "a.zarr"))
    zarrkit.create_array(store, shape=(4,), chunks=(2,), dtype="int32", fill_value=42)
    assert zarrkit.open_array(store)[:].tolist() == [42] * 4
    with zarrkit.config.set({"array.read_missing_chunks": False}):
        assert zarrkit.config.get("array.read_missing_chunks") is False
        strict = zarrkit.open_array(store)
        lenient = zarrkit.open_array(store, config={"read_missing_chunks": True})
    assert strict.config.read_missing_chunks is False
    with pytest.raises(ChunkNotFoundError):
        strict[:]
    assert lenient[:].tolist() == [42] * 4
    with pytest.raises(ValueError, match="read_missing_chunks"):
        zarrkit.config.set({"array.read_missing_chunks": "no"})


def test_the_setting_follows_views_copies_of_the_handle_and_pickles():
    store = MemoryStore()
    zarrkit.create_array(store, shape=(4,), chunks=(2,), dtype="int32")
    strict = zarrkit.open_array(store, config=STRICT)
    for other in (strict.astype("int64"), strict.with_config({"order": "C"}), pickle.loads(pickle.dumps(strict))):
        assert other.config.read_missing_chunks is False
        with pytest.raises(ChunkNotFoundError):
            other[:]
    assert strict.with_config({"read_missing_chunks": True})[:].tolist() == [0] * 4


@pytest.mark.parametrize("exists", [True, False])
def test_require_array_applies_and_checks_config(exists):
    group = zarrkit.create_group(MemoryStore())
    if exists:
        group.create_array("a", shape=(4,), dtype="uint8")
    got = group.require_array("a", shape=(4,), dtype="uint8", config=STRICT)
    assert got.config.read_missing_chunks is False
    with pytest.raises(TypeError, match=r"Unknown array config keys: \['nope'\]"):
        group.require_array("a", shape=(4,), dtype="uint8", config={"nope": 1})
    with pytest.raises(ValueError, match="Expected instance of bool"):
        group.require_array("a", shape=(4,), dtype="uint8", config={"read_missing_chunks": "yes"})
