"""Small chunks read in batches: zstd chunks stored one after the other (the inner chunks of a
shard, or small chunk files joined) decode with one call of the compressor, and land where
chunk-by-chunk decoding puts them.  Every read is compared with numpy; every corrupt chunk in
a batch still fails with the error naming it, and a read never takes bytes of one chunk for
another's."""

from __future__ import annotations

import numcodecs
import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import zarrkit
from zarrkit.codecs import TransposeCodec, ZstdCodec
from zarrkit.codecs.base import ChunkSpec
from zarrkit.codecs.buffers import copy_runs
from zarrkit.codecs.bytes import BytesCodec
from zarrkit.codecs.chain import CodecChain
from zarrkit.codecs.zstd import decode_frames_into, frames_in_place, zstd_frame_size
from zarrkit.errors import ChunkDecodeError
from zarrkit.storage import DirectoryStore, MemoryStore


def values(shape, dtype="u2", seed=0):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 50, size=shape).astype(dtype)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("order", ["C", "F"])
def test_small_chunk_files_read_in_batches_match_numpy(tmp_path, threads, order):
    data = values((70, 90), "f8")
    # F: the chunks stored in F order (a transpose codec reversing the axes first)
    z = zarrkit.create_array(DirectoryStore(tmp_path), shape=data.shape, chunks=(8, 8), dtype="f8",
                             compressors=ZstdCodec(), zarr_format=3,
                             filters=[TransposeCodec((1, 0))] if order == "F" else None)
    z[...] = data
    selections = [(slice(None), slice(None)), (slice(3, 61), slice(5, 88)), (slice(None), 7),
                  (slice(None, None, 3), slice(2, None, 5))]
    with zarrkit.config.set(threads=threads, parallel_min_chunk_bytes=0):
        for sel in selections:
            np.testing.assert_array_equal(z[sel], data[sel])
        idx = np.array([0, 5, 69, 33])
        np.testing.assert_array_equal(z.oindex[idx, idx], data[np.ix_(idx, idx)])
        np.testing.assert_array_equal(z.vindex[idx, idx], data[idx, idx])
        out = np.zeros(data.shape, dtype="f8")
        z.get_basic_selection(Ellipsis, out=out)
        np.testing.assert_array_equal(out, data)


@pytest.mark.parametrize("threads", [1, 2])
def test_missing_small_chunks_read_as_fill_in_a_batch(tmp_path, threads):
    z = zarrkit.create_array(DirectoryStore(tmp_path), shape=(64, 64), chunks=(4, 4), dtype="i4",
                             compressors=ZstdCodec(), zarr_format=3, fill_value=-7)
    want = np.full((64, 64), -7, dtype="i4")
    for i, j in [(0, 0), (5, 9), (63, 63), (17, 2)]:
        z[i, j] = want[i, j] = i * 100 + j
    with zarrkit.config.set(threads=threads):
        np.testing.assert_array_equal(z[...], want)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("store", ["memory", "directory"])
def test_sharded_small_inner_chunks_read_in_runs_match_numpy(tmp_path, threads, store):
    data = values((40, 48, 36))
    s = MemoryStore() if store == "memory" else DirectoryStore(tmp_path)
    z = zarrkit.create_array(s, shape=data.shape, chunks=(4, 8, 6), shards=(16, 16, 12), dtype="u2",
                             compressors=ZstdCodec(), zarr_format=3, fill_value=3)
    z[...] = data
    z[0:4, 0:8, 0:6] = 3  # an inner chunk of fill values: not stored
    data[0:4, 0:8, 0:6] = 3
    with zarrkit.config.set(threads=threads):
        for sel in [Ellipsis, (slice(2, 39), slice(1, 47), slice(5, 30)), (5, slice(None), slice(None, None, 4))]:
            np.testing.assert_array_equal(z[sel], data[sel])


def test_sharded_runs_read_inner_chunks_written_by_zarr_python(tmp_path):
    zarr = pytest.importorskip("zarr")
    data = values((64, 64, 64))
    ref = zarr.create_array(str(tmp_path), shape=data.shape, chunks=(8, 8, 8), shards=(32, 32, 32), dtype="u2",
                            compressors=zarr.codecs.ZstdCodec(level=0))
    ref[...] = data
    with zarrkit.config.set(threads=2):
        np.testing.assert_array_equal(zarrkit.open_array(DirectoryStore(tmp_path), mode="r")[...], data)


def corrupt_middle_inner_chunk(z, store, how):
    """Rewrite the shard of ``z`` (4 inner chunks, the index at its end: 16 bytes each and a
    crc32c) with its second inner chunk's frame made bad."""
    key = "c/0/0"
    shard = bytearray(store.get(key))
    index = np.frombuffer(bytes(shard[-(4 * 16 + 4):-4]), dtype="<u8").reshape(4, 2)
    off, n = (int(v) for v in index[1])
    frame = bytes(shard[off:off + n])
    if how == "garbage":
        shard[off + n // 2: off + n] = bytes(n - n // 2)
    elif how == "wrong size":  # a frame of another size, padded to the same length
        other = numcodecs.Zstd(level=0).encode(bytes(8))
        shard[off:off + n] = (other + bytes(n))[:n]
    elif how == "not zstd":
        shard[off:off + 4] = b"ABCD"
    store.set(key, bytes(shard))
    assert frame != bytes(shard[off:off + n])


@pytest.mark.parametrize("how", ["garbage", "wrong size", "not zstd"])
def test_a_bad_inner_chunk_in_a_run_is_named_and_others_are_not_misplaced(how):
    store = MemoryStore()
    z = zarrkit.create_array(store, shape=(16, 8), chunks=(4, 8), shards=(16, 8), dtype="u8",
                             compressors=ZstdCodec(), zarr_format=3)
    data = np.arange(128, dtype="u8").reshape(16, 8) * 3
    z[...] = data
    corrupt_middle_inner_chunk(z, store, how)
    with pytest.raises(ChunkDecodeError) as err:
        z[...]
    assert "c/0/0" in str(err.value)
    # the chunks around the bad one read whole and right on their own
    np.testing.assert_array_equal(z[0:4], data[0:4])
    np.testing.assert_array_equal(z[8:16], data[8:16])


def skippable(n):
    return (0x184D2A50).to_bytes(4, "little") + n.to_bytes(4, "little") + bytes(n)


value_bytes = st.one_of(
    st.binary(max_size=40),
    st.builds(lambda n, level, cut: numcodecs.Zstd(level=level).encode(bytes(n))[: cut or None],
              st.sampled_from([0, 1, 64, 255, 256, 257, 65792]), st.sampled_from([0, 3]), st.integers(0, 30)),
    st.builds(lambda n, extra: numcodecs.Zstd().encode(bytes(n)) + extra, st.sampled_from([64, 65]),
              st.sampled_from([skippable(0), skippable(5), numcodecs.Zstd().encode(bytes(3)), b"\x00"])),
    st.builds(lambda fhd, rest: b"\x28\xb5\x2f\xfd" + bytes([fhd]) + rest, st.integers(0, 255),
              st.binary(max_size=16)),
)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(value_bytes, min_size=1, max_size=40))
def test_a_value_is_in_place_only_when_it_is_one_frame_of_the_chunk_size_decoding_alone(values):
    """A value passes when, and only when, it is one zstd frame filling it exactly and
    decoding to 64 bytes: then every such value, wherever it sits, decodes to itself."""
    starts = np.concatenate([[0], np.cumsum([len(v) for v in values])[:-1]]).astype(int).tolist()
    data = b"".join(values) or b"\x00"
    got = frames_in_place(data, starts, [len(v) for v in values], 64)
    for value, ok in zip(values, got):
        try:
            one = numcodecs.Zstd().decode(value) if value else None
        except (RuntimeError, SystemError, MemoryError):
            # (numcodecs itself fails on headers declaring 2^63 bytes or more with the
            # latter two: such a value does not decode alone either)
            one = None
        try:
            declared = zstd_frame_size(value)
        except ValueError:
            declared = None
        if ok:
            assert one is not None and len(one) == 64 and declared == 64
    passing = [i for i, ok in enumerate(got) if ok]
    if passing:  # the passing ones, joined, decode into their places
        run = b"".join(values[i] for i in passing)
        out = np.empty((len(passing), 64), dtype=np.uint8)
        decode_frames_into(run, out)
        for row, i in zip(out, passing):
            assert bytes(row) == bytes(numcodecs.Zstd().decode(values[i]))


@settings(max_examples=120, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 1000)), min_size=1, max_size=40))
def test_joined_chunks_decode_like_one_by_one(plan):
    """Chunks joined (some bad, some of another size) decode exactly as each alone would:
    the good ones to their values, the first bad one to its error."""
    chain = CodecChain([BytesCodec(), ZstdCodec()], ChunkSpec((16,), np.dtype("<u4"), 0))
    frames, keys, want = [], [], []
    for i, (kind, seed) in enumerate(plan):
        chunk = (np.arange(16, dtype="<u4") + seed)
        frame = numcodecs.Zstd(level=0).encode(chunk.tobytes())
        if kind == 1:  # another size
            frame = numcodecs.Zstd(level=0).encode(chunk[:8].tobytes())
        elif kind == 2:  # cut short
            frame = frame[:-3]
        frames.append(frame)
        keys.append(f"c/{i}")
        want.append(chunk if kind in (0, 3) else None)
    bad = [k for k, w in zip(keys, want) if w is None]
    if bad:
        with pytest.raises(ChunkDecodeError) as err:
            chain.decode_joined(b"".join(frames), [len(f) for f in frames], keys, len(frames))
        assert err.value.key == bad[0]
    else:
        got = chain.decode_joined(b"".join(frames), [len(f) for f in frames], keys, len(frames))
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["u1", "<u2", ">i4", "f8", "c16", "?", "M8[s]"]), st.integers(1, 64), st.integers(1, 40),
       st.integers(1, 70), st.booleans())
@example("<u2", 64, 32, 32, False)  # (a 32^3-like chunk: 2,048 runs of 64 bytes, copied by runs)
@example("u1", 64, 40, 3, True)  # (runs of 3 bytes, every other row)
def test_copy_runs_is_numpy_assignment(dtype, rows, depth, width, sliced):
    big = np.zeros((depth + 3, rows + 5, width + 11), dtype=dtype)
    src = values((depth, rows, width), "u1", seed=rows).astype(dtype)
    if sliced:
        src = np.ascontiguousarray(src)[:, ::2]
    dst = big[1 : 1 + src.shape[0], 2 : 2 + src.shape[1], 3 : 3 + src.shape[2]]
    want = big.copy()
    want[1 : 1 + src.shape[0], 2 : 2 + src.shape[1], 3 : 3 + src.shape[2]] = src
    copy_runs(dst, src)
    np.testing.assert_array_equal(big, want)
