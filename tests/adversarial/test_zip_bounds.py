"""A zip file from a stranger costs what its bytes are worth, and no more.

* A member whose header declares far more than the chunk it holds can be (a small zip file
  inflating to 128 MiB) is refused before it is read, with a ChunkDecodeError naming it.
* A member whose header declares the right size but whose data inflates further is read with a
  bounded read and refused with a StoreError naming it, for every compression method zipfile
  writes: nothing is inflated much past the size declared.
* A zip path that is a named pipe or a directory is refused at once, naming it; a central
  directory with a name that is not the UTF-8 it claims is a StoreError, not a
  UnicodeDecodeError.

Memory is measured with tracemalloc (what Python allocates: every inflated byte is a bytes
object); the pipe is opened in a child process, so that a regression hangs the child only.
"""

from __future__ import annotations

import io
import json
import os
import struct
import subprocess
import sys
import tracemalloc
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pytest

import zarrkit
from zarrkit.errors import ChunkDecodeError, StoreError
from zarrkit.storage import ZipStore

INFLATED = 128 * 2**20
CHUNK_BYTES = 4096  # 1024 float32
ZARRAY = json.dumps({
    "zarr_format": 2, "shape": [2048], "chunks": [1024], "dtype": "<f4", "compressor": None,
    "fill_value": 0.0, "order": "C", "filters": None,
}).encode()
METHODS = {"deflated": zipfile.ZIP_DEFLATED, "bzip2": zipfile.ZIP_BZIP2, "lzma": zipfile.ZIP_LZMA}


def zip_with_member(path: Path, method: int, inflated: int) -> None:
    """An uncompressed v2 array of two 4 KiB chunks: chunk '1' is fine, chunk '0' is
    ``inflated`` zero bytes compressed by the zip file."""
    with zipfile.ZipFile(path, "w", compression=method) as zf:
        zf.writestr(".zarray", ZARRAY)
        zf.writestr("1", np.full(1024, 2.5, dtype="<f4").tobytes())
        with zf.open("0", "w", force_zip64=inflated > 2**31) as f:
            block = bytes(2**20)
            for _ in range(inflated // len(block)):
                f.write(block)


def declare(path: Path, name: str, size: int, crc: int) -> None:
    """Rewrite member ``name``'s declared size and CRC-32, in its local header and its
    central directory entry: the data stays as it is."""
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo(name)
        start_dir = zf.start_dir
    raw = bytearray(path.read_bytes())
    struct.pack_into("<L", raw, info.header_offset + 14, crc)
    struct.pack_into("<L", raw, info.header_offset + 22, size)
    entry = raw.index(b"PK\x01\x02" + raw[start_dir + 4:start_dir + 4], start_dir)
    while True:  # the central directory entry of ``name``
        n_name, n_extra, n_comment = struct.unpack_from("<3H", raw, entry + 28)
        if raw[entry + 46:entry + 46 + n_name] == name.encode():
            break
        entry += 46 + n_name + n_extra + n_comment
    struct.pack_into("<L", raw, entry + 16, crc)
    struct.pack_into("<L", raw, entry + 24, size)
    path.write_bytes(bytes(raw))


def peak_of(fn) -> tuple[BaseException | None, int]:
    tracemalloc.start()
    try:
        try:
            fn()
            error = None
        except Exception as exc:  # noqa: BLE001 - returned to the test
            error = exc
        return error, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("method", list(METHODS))
def test_a_member_declaring_more_than_the_chunk_is_refused_unread(tmp_path, method):
    path = tmp_path / "bomb.zip"
    zip_with_member(path, METHODS[method], INFLATED)
    assert path.stat().st_size < 2**20  # a small file
    with ZipStore(path, mode="r") as store:
        assert store.getsize("0") == INFLATED  # what its header says
        z = zarrkit.open_array(store, mode="r")
        error, peak = peak_of(lambda: z[:1024])
        assert isinstance(error, ChunkDecodeError), error
        assert "chunk '0'" in str(error) and "bomb.zip" in str(error)
        assert str(INFLATED) in str(error)
        assert peak < 16 * 2**20, peak
        assert z[1024:1027].tolist() == [2.5] * 3  # the other chunk still reads


@pytest.mark.parametrize("method", list(METHODS))
def test_a_member_inflating_past_its_declared_size_is_refused(tmp_path, method):
    path = tmp_path / "liar.zip"
    zip_with_member(path, METHODS[method], INFLATED)
    # the header now says what a chunk holds, CRC included: only the inflated length tells
    declare(path, "0", CHUNK_BYTES, zlib.crc32(bytes(CHUNK_BYTES)))
    with ZipStore(path, mode="r") as store:
        assert store.getsize("0") == CHUNK_BYTES
        z = zarrkit.open_array(store, mode="r")
        for read in (lambda: z[:1024], lambda: store["0"]):
            error, peak = peak_of(read)
            assert isinstance(error, StoreError), error
            assert "member '0'" in str(error) and "liar.zip" in str(error)
            assert f"more than the {CHUNK_BYTES} bytes its header declares" in str(error)
            assert peak < 16 * 2**20, peak
        # a range within the declared size reads (no more is inflated than the range needs)
        assert store.get("0", zarrkit.storage.ByteRange(100, 8)) == bytes(8)


FIFO_CODE = """
import sys, zarrkit
from zarrkit.errors import StoreError
for how in ("r", "a", "w", "path"):
    try:
        if how == "path":
            zarrkit.open_group(sys.argv[1], mode="r")
        else:
            zarrkit.ZipStore(sys.argv[1], mode=how)
        print(how, "opened")
    except StoreError as exc:
        print(how, "StoreError", exc)
    except Exception as exc:
        print(how, type(exc).__name__, exc)
"""


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_a_named_pipe_as_the_zip_path_is_refused_at_once(tmp_path):
    fifo = tmp_path / "data.zip"
    os.mkfifo(fifo)
    try:
        proc = subprocess.run([sys.executable, "-c", FIFO_CODE, str(fifo)], capture_output=True,
                              text=True, timeout=120, check=False)
    except subprocess.TimeoutExpired:
        pytest.fail("opening a named pipe as a zip file blocks")
    lines = proc.stdout.splitlines()
    assert len(lines) == 4, proc.stderr[-2000:]
    for line in lines:
        assert " StoreError " in line and "data.zip" in line and "FIFO" in line, line
    assert fifo.is_fifo()  # mode 'w' did not replace it either


def test_a_directory_as_the_zip_path_is_a_store_error(tmp_path):
    d = tmp_path / "dir.zip"
    d.mkdir()
    for mode in ("r", "a", "w"):
        with pytest.raises(StoreError, match=r"dir\.zip.*directory"):
            ZipStore(d, mode=mode)
    assert d.is_dir() and not any(d.iterdir())


def test_a_name_that_is_not_the_utf8_it_claims_is_a_store_error(tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("zarr.jsoé", b"{}")  # a UTF-8 name: flag 0x800 set
    raw = bytearray(buf.getvalue())
    bad = "zarr.jsoé".encode()
    for at in (raw.index(bad), raw.rindex(bad)):
        raw[at + len(bad) - 2:at + len(bad)] = b"\xff\xfe"  # not UTF-8 any more
    path = tmp_path / "names.zip"
    path.write_bytes(bytes(raw))
    for mode in ("r", "a"):
        with pytest.raises(StoreError, match=r"names\.zip"):
            ZipStore(path, mode=mode)
