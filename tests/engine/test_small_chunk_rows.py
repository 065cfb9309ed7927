"""Small chunk files read a row at a time: a read of small chunks plans whole rows of chunks
along the output's last dimension from the selection's dimensions (no projection per chunk),
names each row's chunks from one key prefix, and has the store read a batch of chunks with one
call (``Store.get_many_upto``).  Every read matches numpy, whatever the selection, layout, key
encoding, missing chunks and thread count; the batch read of a directory store answers what a
read of each key answers, refusals included, and wrappers that count or cache still see every
key."""

from __future__ import annotations

import contextlib
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrkit
import zarrkit.core.read as read_mod
from zarrkit.codecs import BloscCodec, GzipCodec, ZstdCodec
from zarrkit.errors import ChunkDecodeError, InvalidPathError
from zarrkit.storage import CountingStore, DirectoryStore
from zarrkit.storage.keys import are_valid_keys, is_valid_key


@contextlib.contextmanager
def rows_for_small_outputs():
    """Rows for outputs of any size (the default asks for outputs many times a row), and a
    count of the rows copied out."""
    saved, original = read_mod.ROW_OUTPUT_FACTOR, read_mod.copy_row
    seen: list[int] = []

    def spy(buf, lead, out):
        seen.append(len(buf))
        return original(buf, lead, out)

    read_mod.ROW_OUTPUT_FACTOR, read_mod.copy_row = 0, spy
    try:
        yield seen
    finally:
        read_mod.ROW_OUTPUT_FACTOR, read_mod.copy_row = saved, original


#: compressors by name, as a v2 compressor and as a v3 codec: zstd decodes a batch of chunks
#: with one call, the others (and no compressor) decode a chunk at a time
V2_COMPRESSORS = {"zstd": lambda: zarrkit.Zstd(level=1), "blosc": lambda: zarrkit.Blosc(cname="lz4", clevel=5),
                  "gzip": lambda: zarrkit.GZip(level=1), "none": lambda: None}
V3_COMPRESSORS = {"zstd": lambda: ZstdCodec(level=1), "blosc": lambda: BloscCodec(cname="lz4", clevel=5),
                  "gzip": lambda: GzipCodec(level=1), "none": lambda: None}


def make(path, shape, chunks, layout, fill_value=-1.5, compressor="zstd"):
    codec = V3_COMPRESSORS[compressor]()
    if layout == "v2":
        return zarrkit.create(shape=shape, chunks=chunks, dtype="f8", store=DirectoryStore(path), zarr_format=2,
                              compressor=V2_COMPRESSORS[compressor](), fill_value=fill_value)
    if layout == "v2-nested":
        return zarrkit.create(shape=shape, chunks=chunks, dtype="f8", store=DirectoryStore(path), zarr_format=2,
                              compressor=V2_COMPRESSORS[compressor](), fill_value=fill_value,
                              dimension_separator="/")
    encoding = {"name": "v2", "separator": "."} if layout == "v3-v2-keys" else None
    return zarrkit.create_array(DirectoryStore(path), name="deep/array", shape=shape, chunks=chunks, dtype="f8",
                                compressors=codec, zarr_format=3, fill_value=fill_value,
                                chunk_key_encoding=encoding)


def dim_selection(n):
    ints = st.integers(-n, n - 1)
    bounds = st.one_of(st.none(), st.integers(-n - 2, n + 2))
    steps = st.one_of(st.none(), st.sampled_from([1, 1, 1, 2, 3, -1, -2]))
    return st.one_of(st.just(slice(None)), st.builds(slice, bounds, bounds, steps), ints)


@st.composite
def cases(draw):
    ndim = draw(st.integers(2, 3))
    chunks = tuple(draw(st.integers(1, 5)) for _ in range(ndim))
    shape = tuple(draw(st.integers(1, 4 * c + 3)) for c in chunks)
    selection = tuple(draw(dim_selection(n)) for n in shape)
    layout = draw(st.sampled_from(["v2", "v2-nested", "v3", "v3-v2-keys"]))
    grid = [-(-n // c) for n, c in zip(shape, chunks)]
    written = draw(st.sets(st.tuples(*[st.integers(0, g - 1) for g in grid]), max_size=int(np.prod(grid))))
    threads = draw(st.sampled_from([1, 2]))
    compressor = draw(st.sampled_from(sorted(V2_COMPRESSORS)))
    return shape, chunks, selection, layout, sorted(written), threads, compressor


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=cases())
def test_small_chunk_reads_match_numpy(tmp_path_factory, case):
    shape, chunks, selection, layout, written, threads, compressor = case
    path = tmp_path_factory.mktemp("rows")
    z = make(path, shape, chunks, layout, compressor=compressor)
    expected = np.full(shape, -1.5)
    rng = np.random.default_rng(len(written))
    for coords in written:  # the chunks not written stay missing (the fill value)
        region = tuple(slice(c * k, (c + 1) * k) for c, k in zip(coords, chunks))
        values = rng.standard_normal(expected[region].shape)
        z[region] = expected[region] = values
    with zarrkit.config.set(threads=threads), rows_for_small_outputs():
        got = z[selection]
        whole = z[...]
    np.testing.assert_array_equal(got, expected[selection])
    np.testing.assert_array_equal(whole, expected)


@pytest.mark.parametrize("threads", [1, 2])
def test_a_whole_read_copies_rows_and_counts_every_chunk_once(tmp_path, threads):
    data = np.arange(40 * 36, dtype="f8").reshape(40, 36)
    z = make(tmp_path, data.shape, (4, 6), "v3")
    z[...] = data
    counting = CountingStore(DirectoryStore(tmp_path))
    again = zarrkit.open_array(counting, path="deep/array", mode="r")
    counting.reset()
    with zarrkit.config.set(threads=threads), rows_for_small_outputs() as seen:
        np.testing.assert_array_equal(again[...], data)
    assert seen == [6] * 10  # ten rows of six chunks
    # the counting wrapper reads its own way: it still sees every chunk, once
    expected = sorted(f"deep/array/c/{i}/{j}" for i in range(10) for j in range(6))
    assert sorted(key for key, _ in counting.keys_read) == expected


# -- the store's batch read ----------------------------------------------------------------------
@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="a/.:\\\x00b", max_size=6), max_size=5))
def test_keys_checked_together_are_each_valid(keys):
    together = are_valid_keys(keys)
    each = all(is_valid_key(k) for k in keys)
    if together:
        assert each
    if each and not any(":" in k for k in keys):
        assert together


def outcome(fn):
    try:
        return [None if v is None else bytes(v) for v in fn()]
    except (InvalidPathError, ChunkDecodeError) as exc:
        return (type(exc).__name__, str(exc))


@pytest.fixture
def hostile_tree(tmp_path):
    root, outside = tmp_path / "store", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret").write_bytes(b"secret!")
    store = DirectoryStore(root)
    for key in ["c/0/0", "c/0/1", "c/1/0", "x"]:
        store[key] = key.encode() * 3
    (root / "c" / "0" / "empty").write_bytes(b"")
    (root / "c" / "0" / "big").write_bytes(b"z" * 64)
    (root / "c" / "0" / "dir").mkdir()
    os.symlink(root / "x", root / "c" / "0" / "inside")
    os.symlink(outside / "secret", root / "c" / "0" / "outside")
    os.symlink(outside, root / "linked")
    os.mkfifo(root / "c" / "0" / "fifo")
    return root


KEYS = ["c/0/0", "c/0/1", "c/1/0", "x", "c/0/empty", "c/0/big", "c/0/dir", "c/0/inside", "c/0/outside",
        "linked/secret", "c/0/fifo", "c/0/missing", "nowhere/0", "c/../x", "c//0", "C:x", "c/0/0/"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(keys=st.lists(st.sampled_from(KEYS), max_size=6))
def test_a_batch_read_answers_what_each_read_answers(hostile_tree, keys):
    # a fresh store each time: which directories it already knows to be inside changes nothing
    store = DirectoryStore(hostile_tree)
    one_by_one = outcome(lambda: [store.get_upto(k, 32) for k in keys])
    together = outcome(lambda: DirectoryStore(hostile_tree).get_many_upto(keys, 32))
    assert together == one_by_one
    assert outcome(lambda: store.get_many_upto(keys, 32)) == one_by_one


def test_a_batch_read_never_reads_outside_the_store(hostile_tree):
    store = DirectoryStore(hostile_tree)
    for key in ["c/0/outside", "linked/secret"]:
        with pytest.raises(InvalidPathError, match=repr(key)):
            store.get_many_upto(["c/0/0", key], 100)
    assert store.get_many_upto(["c/0/inside", "c/0/empty", "c/0/dir"], 100) == [b"x" * 3, b"", None]
