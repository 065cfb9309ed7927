"""Reads that decode a row of chunks spanning the output's last dimension into one buffer and
copy it out with one assignment (core.read.chunk_rows / Row / copy_row): the same values as NumPy and
as the chunk-by-chunk path, for every layout of rows (edge chunks, missing chunks, fill values,
out=, one thread and several), and the row path taken only where it pays."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrkit
import zarrkit.core.read as read_mod
from zarrkit.storage import MemoryStore


@contextlib.contextmanager
def rows_everywhere():
    """Thresholds low enough that every qualifying row of a small test array is read as a row."""
    saved = (read_mod.ROW_MIN_CHUNK_BYTES, read_mod.ROW_OUTPUT_FACTOR, read_mod.ROW_MAX_RUN_BYTES)
    read_mod.ROW_MIN_CHUNK_BYTES, read_mod.ROW_OUTPUT_FACTOR, read_mod.ROW_MAX_RUN_BYTES = 0, 0, 1 << 30
    try:
        yield
    finally:
        read_mod.ROW_MIN_CHUNK_BYTES, read_mod.ROW_OUTPUT_FACTOR, read_mod.ROW_MAX_RUN_BYTES = saved


@contextlib.contextmanager
def counting_rows():
    """Count the rows copied out (a list of their lengths)."""
    seen: list[int] = []
    original = read_mod.copy_row

    def spy(buf, lead, out):
        seen.append(len(buf))
        return original(buf, lead, out)

    read_mod.copy_row = spy
    try:
        yield seen
    finally:
        read_mod.copy_row = original


def make(shape, chunks, dtype="f4", zarr_format=3, fill_value=None, compressor="blosc"):
    store = MemoryStore()
    kwargs = {} if fill_value is None else {"fill_value": fill_value}
    codec = zarrkit.Blosc(cname="lz4", clevel=1, shuffle=1) if compressor == "blosc" else None
    if zarr_format == 2:
        z = zarrkit.create(shape=shape, chunks=chunks, dtype=dtype, store=store, zarr_format=2,
                           compressor=codec, **kwargs)
    else:
        z = zarrkit.create_array(store, shape=shape, chunks=chunks, dtype=dtype, zarr_format=3,
                                 compressors=codec, **kwargs)
    return z


def values(shape, dtype="f4", seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * 100).astype(dtype)


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("threads", [1, 3])
def test_rows_read_the_same_values_as_numpy_and_as_chunk_by_chunk(zarr_format, threads):
    shape, chunks = (13, 10, 24), (4, 3, 5)  # edge chunks in every dimension
    data = values(shape)
    z = make(shape, chunks, zarr_format=zarr_format)
    z[:] = data
    selections = [
        Ellipsis,
        (slice(2, 11),),
        (slice(4, 12), slice(3, 9)),
        (slice(1, 12), slice(0, 10), slice(0, 24)),
        # rows span the output's last axis, whichever chunks of the array's that is
        (slice(0, 13), slice(3, 10), slice(5, 24)),
        (slice(None), slice(None), slice(0, 20)),
        (slice(None), slice(None), slice(1, 24)),  # the first chunk is a part: per chunk
        (slice(None), slice(None), slice(0, 22)),  # the last chunk is a part: per chunk
        (slice(None, None, 2),),  # strided: per chunk
        (5,),  # a dimension dropped: per chunk
    ]
    with zarrkit.config.set(threads=threads, parallel_min_chunk_bytes=0):
        plain = [z[sel] for sel in selections]
        with rows_everywhere(), counting_rows() as seen:
            got = [z[sel] for sel in selections]
    for sel, a, b in zip(selections, plain, got):
        np.testing.assert_array_equal(b, data[sel], err_msg=str(sel))
        assert a.tobytes() == b.tobytes()
    # rows of 5 chunks (24 = 4 * 5 + 4): every row of the grid; the rows of chunk 1 along axis
    # 0; 2 x 2 rows; the rows of chunks 1 and 2 along axis 0.  Rows of 4 (chunks 1-4 of the
    # last axis, then chunks 0-3): 4 x 3 rows, every row of the grid
    assert sorted(seen) == [4] * (4 * 3 + 4 * 4) + [5] * (4 * 4 + 4 + 2 * 2 + 2 * 4)


def test_rows_with_missing_chunks_read_the_fill_value():
    shape, chunks = (8, 6, 12), (4, 3, 4)
    z = make(shape, chunks, fill_value=-7.5)
    data = values(shape)
    z[0:4, 0:3, :] = data[0:4, 0:3, :]  # one whole row
    z[4:8, 3:6, 4:8] = data[4:8, 3:6, 4:8]  # one chunk of another row
    expected = np.full(shape, -7.5, dtype="f4")
    expected[0:4, 0:3, :] = data[0:4, 0:3, :]
    expected[4:8, 3:6, 4:8] = data[4:8, 3:6, 4:8]
    with rows_everywhere(), counting_rows() as seen:
        got = z[:]
    np.testing.assert_array_equal(got, expected)
    assert len(seen) == 4


def test_rows_with_no_fill_value_read_zeros():
    store = MemoryStore()
    z = zarrkit.create(shape=(4, 9), chunks=(2, 3), dtype="i2", store=store, zarr_format=2,
                       fill_value=None, compressor=zarrkit.Blosc(cname="lz4"))
    z[0:2, :] = np.arange(18, dtype="i2").reshape(2, 9)
    with rows_everywhere(), counting_rows() as seen:
        got = z[:]
    expected = np.zeros((4, 9), dtype="i2")
    expected[0:2] = np.arange(18).reshape(2, 9)
    np.testing.assert_array_equal(got, expected)
    assert seen == [3, 3]


@pytest.mark.parametrize("order", ["C", "F"])
def test_rows_honour_out(order):
    shape, chunks = (10, 16), (3, 4)
    data = values(shape, "f8")
    z = make(shape, chunks, dtype="f8")
    z[:] = data
    out = np.full(shape, np.nan, order=order)
    with rows_everywhere(), counting_rows() as seen:
        result = z.get_basic_selection(Ellipsis, out=out)
    assert result is out
    np.testing.assert_array_equal(out, data)
    # a C-ordered output is read in rows; an F-ordered one chunk by chunk
    assert len(seen) == (4 if order == "C" else 0)


def test_rows_of_structured_and_bool_arrays():
    dt = np.dtype([("a", "i4"), ("b", "f8")])
    z = make((6, 10), (2, 4), dtype=dt)
    data = np.zeros((6, 10), dtype=dt)
    data["a"] = np.arange(60).reshape(6, 10)
    data["b"] = np.arange(60).reshape(6, 10) / 3
    z[:] = data
    zb = make((5, 7), (2, 3), dtype="bool")
    bits = values((5, 7)) > 0
    zb[:] = bits
    with rows_everywhere(), counting_rows() as seen:
        np.testing.assert_array_equal(z[:], data)
        np.testing.assert_array_equal(z[1:5, :]["b"], data[1:5]["b"])
        np.testing.assert_array_equal(zb[:], bits)
    assert len(seen) == 3 + 1 + 3


def test_rows_are_not_used_where_they_do_not_pay():
    shape, chunks = (16, 64), (4, 16)
    z = make(shape, chunks)
    z[:] = values(shape)
    with counting_rows() as seen:
        z[:]  # default thresholds: 256-byte chunks, a 256-byte output
    assert seen == []
    with rows_everywhere(), counting_rows() as seen:
        read_mod.ROW_MAX_RUN_BYTES = 32  # chunk runs of 64 bytes are longer
        z[:]
    assert seen == []
    with rows_everywhere(), counting_rows() as seen:
        read_mod.ROW_MAX_BYTES, saved = 4 * 4 * 16 * 4 - 1, read_mod.ROW_MAX_BYTES
        try:
            z[:]  # a row of 4 chunks is one byte too large
        finally:
            read_mod.ROW_MAX_BYTES = saved
    assert seen == []
    # uncompressed chunks are copied straight from the stored bytes
    zu = make(shape, chunks, compressor=None)
    zu[:] = values(shape)
    with rows_everywhere(), counting_rows() as seen:
        np.testing.assert_array_equal(zu[:], values(shape))
    assert seen == []


def test_rows_at_default_thresholds(monkeypatch):
    # float32 chunks of 4 x 64 x 64 (64 KiB, runs of 256 bytes), rows of 8 chunks (512 KiB),
    # an 8 MiB output: read in rows with 1 and 2 workers
    shape, chunks = (8, 512, 512), (4, 64, 64)
    data = values(shape)
    z = make(shape, chunks)
    z[:] = data
    for threads in (1, 2):
        with zarrkit.config.set(threads=threads), counting_rows() as seen:
            got = z[:]
        np.testing.assert_array_equal(got, data)
        assert seen == [8] * 16
    with zarrkit.config.set(threads=3), counting_rows() as seen:
        np.testing.assert_array_equal(z[:], data)  # 3 workers' rows would be too large a part
    assert seen == []


def test_a_failing_chunk_in_a_row_raises_naming_its_key():
    z = make((4, 12), (2, 4))
    z[:] = values((4, 12))
    z.store["c/1/2"] = b"not a blosc frame"
    with rows_everywhere(), pytest.raises(Exception) as info:
        z[:]
    assert "c/1/2" in str(info.value)


@st.composite
def row_cases(draw):
    ndim = draw(st.integers(2, 3))
    shape = tuple(draw(st.integers(1, 12)) for _ in range(ndim))
    chunks = tuple(draw(st.integers(1, s + 2)) for s in shape)
    sel = []
    for s in shape:  # whole axes often: rows need complete chunks
        a = draw(st.integers(0, s))
        b = draw(st.integers(a, s))
        sel.append(slice(None) if draw(st.booleans()) else slice(a, b))
    written = draw(st.lists(st.tuples(*[st.integers(0, s - 1) for s in shape]), max_size=4))
    return shape, chunks, tuple(sel), written, draw(st.sampled_from([2, 3])), draw(
        st.sampled_from(["f4", "i2", "u1", "c16"])
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(row_cases())
def test_row_reads_match_numpy(case):
    shape, chunks, sel, written, zarr_format, dtype = case
    data = values(shape, dtype, seed=len(written))
    z = make(shape, chunks, dtype=dtype, zarr_format=zarr_format, fill_value=3)
    expected = np.full(shape, 3, dtype=dtype)
    for point in written:  # a few regions written; the other chunks stay missing
        region = tuple(slice(p, p + 3) for p in point)
        z[region] = data[region]
        expected[region] = data[region]
    with rows_everywhere(), zarrkit.config.set(threads=2, parallel_min_chunk_bytes=0):
        got = z[sel]
        out = np.zeros(expected[sel].shape, dtype=dtype)
        z.get_basic_selection(sel, out=out)
    np.testing.assert_array_equal(got, expected[sel])
    np.testing.assert_array_equal(out, expected[sel])
