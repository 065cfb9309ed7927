"""Reading one member of a zip file, bounded: never more than it declares, whatever its
compressed bytes would inflate to, and its local header checked against the central
directory."""

from __future__ import annotations

import bz2
import lzma
import struct
import zipfile
import zlib
from collections.abc import Callable
from typing import Any

from ..errors import StoreError

#: Compressed bytes read from the file per step when a member is inflated.
PIECE = 1 << 20
LOCAL_HEADER = struct.Struct("<4s5H3L2H")
#: The most one deflated byte inflates to (a 258-byte match in at most two bits, and a bit more)
_DEFLATE_RATIO = 1032
#: The most a member is inflated by in one step (output before a range is dropped as it comes)
_STEP = 8 << 20

def _lzma_decompressor(props: bytes, declared: int) -> Any:
    """The raw LZMA decoder of a zip member (APPNOTE 5.8.8: a 5-byte properties header);
    the dictionary is never larger than the member, whatever the header asks."""
    if len(props) != 5 or props[0] >= 9 * 5 * 5:
        raise ValueError("bad LZMA properties")
    d = props[0]
    lc, lp, pb = d % 9, (d // 9) % 5, d // 45
    dict_size = min(int.from_bytes(props[1:5], "little"), max(declared, 4096))
    return lzma.LZMADecompressor(lzma.FORMAT_RAW, filters=[
        {"id": lzma.FILTER_LZMA1, "dict_size": max(dict_size, 4096), "lc": lc, "lp": lp, "pb": pb}
    ])


def read_member(pread: Callable[[int, int], bytes], archive_size: int, info: zipfile.ZipInfo,
                start: int, stop: int, bad: Callable[[str], StoreError]) -> bytes:
    """Bytes ``start:stop`` of the member, inflating no more than it declares (and one
    byte past its end when read whole, to tell a member that inflates further); ``pread(n,
    offset)`` reads the archive, ``bad(reason)`` makes the error naming the member."""

    if info.flag_bits & 0x1:
        raise bad("it is encrypted")
    offset = info.header_offset
    header = pread(LOCAL_HEADER.size, offset)
    if len(header) != LOCAL_HEADER.size or header[:4] != b"PK\x03\x04":
        raise bad(f"no local header at offset {offset}")
    fields = LOCAL_HEADER.unpack(header)
    flags, n_name, n_extra = fields[2], fields[9], fields[10]
    name = pread(n_name, offset + LOCAL_HEADER.size)
    if name.decode("utf-8" if flags & 0x800 else "cp437", "replace") != info.orig_filename:
        raise bad("its local header names another member")
    begin = offset + LOCAL_HEADER.size + n_name + n_extra
    csize, size, method = info.compress_size, info.file_size, info.compress_type
    if begin + csize > archive_size:
        raise bad(f"its {csize} bytes run past the end of the file ({archive_size} bytes)")
    whole = start == 0 and stop == size
    if method == zipfile.ZIP_STORED:
        if csize != size:
            raise bad(f"stored, yet {csize} bytes hold {size}")
        data = pread(stop - start, begin + start)
        if len(data) != stop - start:
            raise bad(f"truncated: expected {stop - start} bytes from offset {start}, got {len(data)}")
    else:
        if method == zipfile.ZIP_DEFLATED and size > _DEFLATE_RATIO * csize + 1024:
            # deflate cannot write that: the header lies, and reading up to it would take
            # time in proportion to the lie
            raise bad(f"{csize} deflated bytes cannot hold the {size} its header declares")
        data = _inflate(pread, info, begin, start, stop + 1 if whole else stop, bad)
        if len(data) > stop - start:
            raise bad(f"it inflates to more than the {size} bytes its header declares")
        if len(data) != stop - start:
            raise bad(f"truncated: expected {stop - start} bytes from offset {start}, got {len(data)}")
    if whole and zlib.crc32(data) != info.CRC:
        raise bad("bad CRC-32")
    return data

def _inflate(pread: Callable[[int, int], bytes], info: zipfile.ZipInfo, begin: int,
             start: int, want: int, bad: Callable[[str], StoreError]) -> bytes:
    """Bytes ``start:want`` of the inflated member (fewer when it ends first), the
    compressed bytes read a piece at a time and each step's output bounded."""
    pos, end = begin, begin + info.compress_size
    method = info.compress_type
    if method == zipfile.ZIP_DEFLATED:
        dec: Any = zlib.decompressobj(-15)
    elif method == zipfile.ZIP_BZIP2:
        dec = bz2.BZ2Decompressor()
    elif method == zipfile.ZIP_LZMA:
        head = pread(4, pos)
        psize = int.from_bytes(head[2:4], "little") if len(head) == 4 else 0
        if len(head) != 4 or pos + 4 + psize > end:
            raise bad("bad LZMA header")
        dec = _lzma_decompressor(pread(psize, pos + 4), info.file_size)
        pos += 4 + psize
    else:
        raise bad(f"compression method {method} is not supported")
    parts: list[bytes] = []
    produced = 0  # inflated bytes so far, kept or not
    tail = b""
    while produced < want:
        if method == zipfile.ZIP_DEFLATED:
            chunk = dec.unconsumed_tail
            if not chunk:
                if dec.eof:
                    break
                chunk = pread(min(PIECE, end - pos), pos) if pos < end else b""
                pos += len(chunk)
                if not chunk:
                    # the input is all in: what zlib holds back is at most one match
                    tail = dec.flush()
                    break
            out = dec.decompress(chunk, min(want - produced, _STEP))
        else:
            if dec.eof:
                break
            chunk = b""
            if dec.needs_input:
                if pos >= end:
                    break
                chunk = pread(min(PIECE, end - pos), pos)
                pos += len(chunk)
                if not chunk:
                    break
            out = dec.decompress(chunk, min(want - produced, _STEP))
            if not out and not chunk:
                break
        if out:
            if produced + len(out) > start:
                parts.append(out[max(start - produced, 0):])
            produced += len(out)
    if tail and produced < want:
        tail = tail[: want - produced]
        if produced + len(tail) > start:
            parts.append(tail[max(start - produced, 0):])
    return b"".join(parts)
