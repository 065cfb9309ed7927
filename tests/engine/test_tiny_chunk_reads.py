"""Reads of many tiny chunks that a compressor decodes one at a time (Blosc, gzip, none): read
a batch at a time on the calling thread (``Store.get_many_upto``), whatever the thread count.
Every read matches numpy (missing chunks, partial selections, F order, strings), each chunk is
read once, and a damaged or oversized chunk fails naming its key."""

from __future__ import annotations

import os
import threading

import numcodecs
import numpy as np
import pytest

import zarrkit
from zarrkit.errors import ChunkDecodeError
from zarrkit.storage import CountingStore, DirectoryStore

SHAPE, CHUNKS = (256, 200), (8, 8)  # 32 x 25 chunks of 64 bytes (uint8)


def values(shape=SHAPE, dtype="u1"):
    i = np.arange(shape[0])[:, None]
    j = np.arange(shape[1])[None, :]
    return ((i * 7 + j) % 251).astype(dtype)


def written(path, compressor, order="C", dtype="u1"):
    z = zarrkit.create(shape=SHAPE, chunks=CHUNKS, dtype=dtype, store=DirectoryStore(path), zarr_format=2,
                       compressor=compressor, fill_value=3, order=order)
    data = values(dtype=dtype)
    z[...] = data
    # every seventh chunk never written: read as the fill value
    for n, key in enumerate(sorted(k for k in os.listdir(path) if not k.startswith("."))):
        if n % 7 == 0:
            os.remove(os.path.join(path, key))
            i, j = map(int, key.split("."))
            data[i * 8 : (i + 1) * 8, j * 8 : (j + 1) * 8] = 3
    return data


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("compressor", ["blosc", "gzip", "none"])
@pytest.mark.parametrize("order", ["C", "F"])
def test_many_tiny_chunks_read_as_numpy_each_chunk_once(tmp_path, threads, compressor, order):
    codec = {"blosc": numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1), "gzip": numcodecs.GZip(level=1),
             "none": None}[compressor]
    data = written(tmp_path, codec, order)
    counting = CountingStore(DirectoryStore(tmp_path))
    z = zarrkit.open_array(counting, mode="r")
    counting.reset()
    with zarrkit.config.set(threads=threads):
        whole = z[...]
        np.testing.assert_array_equal(whole, data)
        assert whole.flags.f_contiguous == (order == "F")
        assert sorted(key for key, _ in counting.keys_read) == sorted(
            f"{i}.{j}" for i in range(32) for j in range(25))
        for selection in [np.s_[3:250, 5:197], np.s_[::3, 7::2], np.s_[100:140, :], np.s_[-9:, -17:]]:
            np.testing.assert_array_equal(z[selection], data[selection])


@pytest.mark.parametrize("threads", [1, 2])
def test_strings_in_tiny_chunks(tmp_path, threads):
    data = np.array([f"s{i % 97}" for i in range(64 * 64)], dtype=object).reshape(64, 64)
    z = zarrkit.create(shape=data.shape, chunks=(4, 4), dtype=object, object_codec=numcodecs.VLenUTF8(),
                       store=DirectoryStore(tmp_path), zarr_format=2)
    z[...] = data
    with zarrkit.config.set(threads=threads):
        assert (zarrkit.open_array(DirectoryStore(tmp_path), mode="r")[...] == data).all()


@pytest.mark.parametrize("threads", [1, 2])
def test_a_damaged_tiny_chunk_fails_naming_its_key(tmp_path, threads):
    data = written(tmp_path, numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1))
    with open(tmp_path / "17.3", "r+b") as f:  # its Blosc header says another size
        f.seek(4)
        f.write(b"\xff\xff\x00\x00")
    z = zarrkit.open_array(DirectoryStore(tmp_path), mode="r")
    with zarrkit.config.set(threads=threads), pytest.raises(ChunkDecodeError, match=r"17\.3"):
        z[...]
    np.testing.assert_array_equal(z[:100, :], data[:100, :])  # the chunks around it still read


def test_an_oversized_tiny_chunk_is_refused_naming_its_key(tmp_path):
    written(tmp_path, None)
    (tmp_path / "5.5").write_bytes(b"\x00" * (1 << 20))  # far more than a 64-byte chunk can store
    z = zarrkit.open_array(DirectoryStore(tmp_path), mode="r")
    with pytest.raises(ChunkDecodeError, match=r"'5\.5'.*more than the 64 bytes"):
        z[...]


def test_threads_reading_tiny_chunks_at_once_each_get_their_values(tmp_path):
    # the reads of tiny chunks take turns a batch at a time: every thread's read completes,
    # right, also after one of them failed on a damaged chunk
    good = written(tmp_path / "good", numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1))
    written(tmp_path / "bad", None)
    (tmp_path / "bad" / "20.9").write_bytes(b"\x01\x02")
    a = zarrkit.open_array(DirectoryStore(tmp_path / "good"), mode="r")
    b = zarrkit.open_array(DirectoryStore(tmp_path / "bad"), mode="r")
    results: dict[int, object] = {}

    def read(k: int) -> None:
        try:
            results[k] = (b if k % 4 == 3 else a)[(k % 2) * 128 : (k % 2) * 128 + 128]
        except Exception as exc:  # noqa: BLE001 - checked below
            results[k] = exc

    threads = [threading.Thread(target=read, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    for k in range(8):
        if k % 4 == 3:
            assert isinstance(results[k], ChunkDecodeError) and "20.9" in str(results[k])
        else:
            np.testing.assert_array_equal(results[k], good[(k % 2) * 128 : (k % 2) * 128 + 128])
