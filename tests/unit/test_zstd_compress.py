"""The zstd codec's compressor: frames every zstd reads, at every level, from every thread; at
the default level and the faster ones, blocks of zstd's full 128 KiB (no block splitting);
memory kept between chunks bounded, whatever the size of one chunk."""

from __future__ import annotations

import threading
import tracemalloc

import numcodecs
import numpy as np
import pytest
import zstandard

from zarrkit.codecs import ZstdCodec
from zarrkit.codecs.zstd import KEPT_BUFFER_BYTES, NO_SPLIT_MAX_LEVEL, zstd_frame_size


def frame_blocks(frame: bytes) -> tuple[list[int], bool]:
    """The block types of a zstd frame, in order, and whether it carries a content checksum;
    checks that the frame ends where its last block (and checksum) end."""
    assert frame[:4] == b"\x28\xb5\x2f\xfd"
    fhd = frame[4]
    fcs_flag, single, checksum, dict_flag = fhd >> 6, (fhd >> 5) & 1, (fhd >> 2) & 1, fhd & 3
    pos = 5 + (0 if single else 1) + (0, 1, 2, 4)[dict_flag] + (1 if single else 0, 2, 4, 8)[fcs_flag]
    kinds = []
    while True:
        head = int.from_bytes(frame[pos : pos + 3], "little")
        last, kind, size = head & 1, (head >> 1) & 3, head >> 3
        kinds.append(kind)
        pos += 3 + (1 if kind == 1 else size)
        if last:
            break
    assert pos + 4 * checksum == len(frame)
    return kinds, bool(checksum)


def mixed(nbytes: int, seed: int = 0) -> np.ndarray:
    """Bytes whose statistics change every 16 KiB (noise, then runs of a few values): where a
    block splitter finds places to end a block early."""
    rng = np.random.default_rng(seed)
    parts = []
    for i in range(nbytes // 16384):
        if i % 2:
            parts.append(rng.integers(0, 256, 16384, dtype=np.uint8))
        else:
            parts.append(np.repeat(rng.integers(0, 4, 512, dtype=np.uint8), 32))
    return np.concatenate(parts)


def encode(data, level=0, checksum=False) -> bytes:
    return ZstdCodec(level=level, checksum=checksum).encode(data)


@pytest.mark.parametrize("level", [-50, -1, 0, 1, 3, 4, 9, 19, 22, 1000])
@pytest.mark.parametrize("checksum", [False, True])
def test_frames_decode_everywhere(level, checksum):
    data = mixed(300_000, seed=level & 0xFF)
    frame = encode(data, level, checksum)
    assert zstd_frame_size(frame) == data.nbytes
    assert frame_blocks(frame)[1] is checksum
    assert bytes(numcodecs.Zstd().decode(frame)) == data.tobytes()
    assert zstandard.ZstdDecompressor().decompress(frame) == data.tobytes()
    out = np.empty_like(data)
    ZstdCodec().decode_into(frame, out)
    np.testing.assert_array_equal(out, data)


@pytest.mark.parametrize(
    "values",
    [
        np.asfortranarray(np.arange(6000, dtype="<f8").reshape(60, 100)),
        np.arange(1000, dtype=">i4"),
        np.array([(1, 2.5), (3, -1.0)] * 500, dtype=[("a", "<i2"), ("b", "<f4")]),
        np.arange(4000) % 3 == 0,
        np.arange(2000).astype("datetime64[s]"),
        np.zeros(0, dtype="u2"),
    ],
    ids=["F-order", "big-endian", "structured", "bool", "datetime", "empty"],
)
def test_values_compress_in_their_memory_order(values):
    frame = encode(values)
    assert zstd_frame_size(frame) == values.nbytes
    assert zstandard.ZstdDecompressor().decompress(frame) == values.tobytes(order="A")
    if values.nbytes:
        out = np.empty(values.nbytes, dtype=np.uint8)
        ZstdCodec().decode_into(frame, out)
        assert out.tobytes() == values.tobytes(order="A")


@pytest.mark.parametrize("level", range(-3, NO_SPLIT_MAX_LEVEL + 1))
def test_fast_levels_keep_whole_blocks(level):
    data = mixed(512 * 1024)
    # zstd 1.5.7 as the zstandard package runs it ends blocks early on such data
    reference = zstandard.ZstdCompressor(level=level, write_content_size=True).compress(data)
    if zstandard.ZSTD_VERSION >= (1, 5, 7):
        assert len(frame_blocks(reference)[0]) > 4
    kinds, _ = frame_blocks(encode(data, level))
    assert len(kinds) == 4  # 512 KiB in blocks of 128 KiB


def test_slower_levels_split_blocks_as_zstd_does():
    data = mixed(512 * 1024)
    kinds, _ = frame_blocks(encode(data, 9))
    reference = zstandard.ZstdCompressor(level=9, write_content_size=True).compress(data)
    assert len(kinds) == len(frame_blocks(reference)[0])


def test_threads_with_different_settings():
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            for k in range(40):
                data = mixed(16384 * (1 + (i + k) % 12), seed=i * 100 + k)
                level, checksum = (i + k) % 7 - 2, bool(k % 2)
                frame = encode(data, level, checksum)
                assert frame_blocks(frame)[1] is checksum
                assert zstandard.ZstdDecompressor().decompress(frame) == data.tobytes()
        except (AssertionError, ValueError) as e:  # (reported by the main thread)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def test_memory_kept_between_chunks_is_bounded():
    big = mixed(KEPT_BUFFER_BYTES + (4 << 20))
    encode(big[: 1 << 20])  # the thread's compressor and buffer made before counting
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        frame = encode(big)
        kept = tracemalloc.get_traced_memory()[0] - before - len(frame)
        encode(big[: 1 << 20])
        after = tracemalloc.get_traced_memory()[0] - before - len(frame)
    finally:
        tracemalloc.stop()
    assert zstandard.ZstdDecompressor().decompress(frame) == big.tobytes()
    assert kept < KEPT_BUFFER_BYTES and after < KEPT_BUFFER_BYTES
