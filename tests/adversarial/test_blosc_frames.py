"""Damaged Blosc frames are refused or decoded, never read past their end.

c-blosc is handed a pointer to a frame, never its length: it checks every block offset and
stream size against the compressed size written in the frame's own header, so a frame whose
header declares more than it holds sends it reading past the end (the fuzzer's
``corpus/chunk/signal11-0d8d046f9226``: an 87-byte frame declaring 872 MB, a block offset of
671 MB).  zarrkit checks each frame before any decode of it (:func:`blosc.check_frame`).

Valid frames of every compressor, shuffle mode, type size and block layout are damaged by
hypothesis (header fields, block offsets, stream sizes, bytes, length; with the header's
compressed size made to match the new length, or not) and decoded by a child process through
every path zarrkit has: the codecs' functions and arrays (v2 compressor and filter, v3 codec,
whole chunks and parts of them).  In the child the frame ends at a page that cannot be read,
so a read past its end is a segmentation fault, not a silent read of the next bytes, and the
child's death fails the test instead of ending pytest.  Each path must refuse the frame
(``ChunkDecodeError`` from an array; ``ValueError`` or numcodecs' ``RuntimeError`` from a
codec) or return what c-blosc decodes from it.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import numcodecs
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zarrkit.codecs import blosc as blosc_fast

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
REPRODUCER = HERE / "corpus" / "chunk" / "signal11-0d8d046f9226"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform == "win32", reason="mmap guard pages, signals"),
]


# =============================================================================================
# the child: decodes the frames it is sent, each ending at an unreadable page


def _guarded_buffer(size: int) -> tuple[Any, int]:
    """A writable mapping of ``size`` bytes (whole pages) followed by a page that cannot be
    read, and the offset of that page."""
    import ctypes
    import mmap

    page = mmap.PAGESIZE
    size = -(-size // page) * page
    mm = mmap.mmap(-1, size + page)
    base = ctypes.addressof(ctypes.c_char.from_buffer(mm))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    if libc.mprotect(base + size, page, 0) != 0:  # PROT_NONE
        raise OSError(ctypes.get_errno(), "mprotect")
    return mm, size


class _GuardedStore:
    """A read-only store whose chunk ``key`` is a view of the guarded frame."""

    def __new__(cls, items: dict[str, bytes], key: str, view: memoryview) -> Any:
        import zarrkit

        class Store(zarrkit.storage.Store):
            supports_partial_reads = False

            def __init__(self) -> None:
                self.read_only = True

            def _get(self, k: str, byte_range: Any) -> Any:
                value = view if k == key else items.get(k)
                if value is None or byte_range is None:
                    return value
                raise AssertionError("a partial read from a store that has none")

            def list_prefix(self, prefix: str) -> Any:
                return iter([k for k in [*items, key] if k.startswith(prefix)])

            def list_dir(self, prefix: str = "") -> Any:
                return iter(
                    sorted(
                        {
                            k[len(prefix) :].split("/", 1)[0]
                            for k in [*items, key]
                            if k.startswith(prefix)
                        }
                    )
                )

        return Store()


def _arrays(
    dtype: np.dtype, nitems: int, cname: str, shuffle: int
) -> list[tuple[str, dict[str, bytes], str, np.dtype]]:
    """(name, metadata items, chunk key, dtype read) of the arrays whose one chunk is the frame:
    a v2 array with Blosc as compressor (decoded into the output, or in part), the same with a
    structured dtype (decoded apart, bounded) and with Blosc as a filter, a v3 array with the
    blosc codec."""
    import zarrkit

    out = []
    compressor = numcodecs.Blosc(cname, 1, shuffle)
    for name, dt, kw in (
        ("v2-compressor", dtype, {"compressor": compressor}),
        ("v2-structured", np.dtype([("a", dtype)]), {"compressor": compressor}),
        ("v2-filter", dtype, {"compressor": None, "filters": [compressor]}),
    ):
        s = zarrkit.MemoryStore()
        zarrkit.create(shape=(nitems,), chunks=(nitems,), dtype=dt, zarr_format=2, store=s, **kw)
        out.append((name, {k: bytes(s[k]) for k in s}, "0", np.dtype(dt)))
    if dtype.kind in "fiu":
        s = zarrkit.MemoryStore()
        shuffle_name = ("noshuffle", "shuffle", "bitshuffle")[shuffle]
        zarrkit.create_array(
            s,
            shape=(nitems,),
            chunks=(nitems,),
            dtype=dtype,
            zarr_format=3,
            codecs=[
                {"name": "bytes", "configuration": {"endian": "little"}},
                {
                    "name": "blosc",
                    "configuration": {
                        "cname": cname,
                        "clevel": 1,
                        "shuffle": shuffle_name,
                        "typesize": dtype.itemsize,
                        "blocksize": 0,
                    },
                },
            ],
        )
        out.append(("v3-blosc", {k: bytes(s[k]) for k in s}, "c/0", dtype))
    return out


def _decode_everywhere(view: memoryview, case: dict) -> list[str]:
    """Decode the frame ``view`` through every path; the problems found (empty: none)."""
    import zarrkit
    from zarrkit.codecs import bounded, v2
    from zarrkit.errors import ChunkDecodeError

    dtype = np.dtype(case["dtype"])
    nitems = case["nitems"]
    nbytes = nitems * dtype.itemsize
    problems: list[str] = []
    try:  # what c-blosc makes of the frame, once zarrkit's check lets it
        blosc_fast.check_frame(view)
        reference: bytes | None = bytes(numcodecs.blosc.decompress(view))
    except (ValueError, RuntimeError):
        reference = None
    if case["intact"] and reference != case["original"]:
        problems.append("an intact frame does not decode to its data")

    def codec_path(name: str, fn: Any, lo: int = 0, hi: int | None = None) -> None:
        try:
            got = fn()
        except (ValueError, RuntimeError):
            return
        except Exception as exc:  # noqa: BLE001
            problems.append(f"{name}: {type(exc).__name__}: {exc}")
            return
        if got is False:  # a range decode declining: the caller decodes the whole frame
            return
        data = bytes(memoryview(got if got is not True else out).cast("B"))
        if reference is None and got is True:
            return  # the blocks read are fine, one of the others is not: c-blosc refuses the whole
        if reference is None or data[lo:hi] != reference[lo:hi]:
            problems.append(f"{name}: decoded {len(data)} bytes that are not c-blosc's")

    out = np.zeros(nbytes, dtype=np.uint8)
    codec_path("decompress_into", lambda: (blosc_fast.decompress_into(view, out), out)[1])
    for lo, hi in ((0, 1), (nbytes // 2, nbytes // 2 + 1), (nbytes - 1, nbytes)):
        if 0 <= lo < hi <= nbytes:
            out[...] = 0
            codec_path(
                f"decompress_range_into {lo}:{hi}",
                lambda lo=lo, hi=hi: blosc_fast.decompress_range_into(view, out, lo, hi),
                lo,
                hi,
            )
    blosc = numcodecs.Blosc()
    codec_path("decode_limited", lambda: bounded.decode_limited(blosc, view, nbytes))
    codec_path("V2Compressor.decode", lambda: v2.V2Compressor(blosc).decode(view))
    codec_path("BloscCodec.decode", lambda: blosc_fast.BloscCodec().decode(view))

    for name, items, key, dt in _arrays(dtype, nitems, case["cname"], case["shuffle"]):
        z = zarrkit.open_array(_GuardedStore(items, key, view), mode="r")
        for sel in (slice(None), slice(1, max(2, nitems // 2))):
            if not len(range(nitems)[sel]):
                continue  # nothing read
            try:
                got = z[sel]
            except ChunkDecodeError:
                continue
            except Exception as exc:  # noqa: BLE001
                problems.append(
                    f"{name}[{sel}]: {type(exc).__name__} instead of ChunkDecodeError: {exc}"
                )
                continue
            if got.dtype != dt or got.shape != (len(range(nitems)[sel]),):
                problems.append(f"{name}[{sel}]: {got.dtype} {got.shape}, expected {dt}")
            elif reference is None and sel != slice(None):
                pass  # a part from blocks c-blosc decodes, another block is damaged
            elif (
                reference is None
                or len(reference) != nbytes
                or got.tobytes() != np.frombuffer(reference, dtype=dt)[sel].tobytes()
            ):
                problems.append(
                    f"{name}[{sel}]: a result that is not c-blosc's decoding of the frame"
                )
    return problems


def _worker() -> None:
    """Read cases from stdin (4-byte length, JSON, 4-byte length, frame, ...), answer each
    with a JSON line of the problems found."""
    import zarrkit

    mm, size = _guarded_buffer(1 << 20)
    stdin, stdout = sys.stdin.buffer, sys.stdout
    with zarrkit.config.set(max_chunk_bytes=1 << 20):
        while True:
            head = stdin.read(4)
            if len(head) < 4:
                return
            case = json.loads(stdin.read(struct.unpack("<I", head)[0]))
            frame = stdin.read(struct.unpack("<I", stdin.read(4))[0])
            original = stdin.read(struct.unpack("<I", stdin.read(4))[0])
            case["original"] = original
            start = size - len(frame)
            mm[start:size] = frame
            view = memoryview(mm)[start:size]
            print(json.dumps(_decode_everywhere(view, case)), file=stdout, flush=True)


# =============================================================================================
# the parent: makes the frames


class Child:
    """The decoding child process, started again after it dies."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None

    def _start(self) -> subprocess.Popen:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(HERE)]))
        return subprocess.Popen(
            [sys.executable, __file__, "--worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )

    def decode(self, frame: bytes, case: dict, original: bytes) -> list[str]:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = self._start()
        meta = json.dumps(case).encode()
        message = b"".join(struct.pack("<I", len(b)) + b for b in (meta, frame, original))
        try:
            self.proc.stdin.write(message)
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        except BrokenPipeError:
            line = b""
        if not line:
            code = self.proc.wait(timeout=30)
            self.proc = None
            return [
                f"the decoding process died ({code}: {'signal ' + str(-code) if code < 0 else 'exit'})"
            ]
        return json.loads(line)

    def close(self) -> None:
        if self.proc is not None:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
            self.proc = None


@pytest.fixture(scope="module")
def child():
    c = Child()
    yield c
    c.close()


CNAMES = [
    c
    for c in ("lz4", "lz4hc", "zstd", "zlib", "blosclz")
    if c in numcodecs.blosc.list_compressors()
]
TYPESIZES = (1, 2, 4, 8, 10, 16, 17)


@st.composite
def frames(draw: Any) -> tuple[bytes, dict, bytes]:
    """A valid frame: (frame, case, the data it holds)."""
    cname = draw(st.sampled_from(CNAMES))
    shuffle = draw(st.sampled_from((0, 1, 2)))
    typesize = draw(st.sampled_from(TYPESIZES))
    nitems = draw(st.one_of(st.integers(1, 40), st.integers(41, 3000)))
    blocksize = draw(st.sampled_from((0, 0, 64, 256, 1024, 4096)))
    pattern = draw(st.sampled_from(("ramp", "repeat", "random", "zeros")))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    n = nitems * typesize
    if pattern == "ramp":
        raw = (np.arange(n) // max(typesize // 2, 1)).astype(np.uint8)
    elif pattern == "repeat":
        raw = np.resize(rng.integers(0, 256, 7, dtype=np.uint8), n)
    elif pattern == "random":
        raw = rng.integers(0, 256, n, dtype=np.uint8)
    else:
        raw = np.zeros(n, dtype=np.uint8)
    dtype = {1: "u1", 2: "<u2", 4: "<f4", 8: "<f8", 16: "<c16"}.get(typesize, f"V{typesize}")
    arr = raw.view(dtype)
    frame = bytes(numcodecs.Blosc(cname, draw(st.integers(1, 9)), shuffle, blocksize).encode(arr))
    case = {"dtype": dtype, "nitems": nitems, "cname": cname, "shuffle": shuffle, "intact": True}
    return frame, case, raw.tobytes()


def _fields(frame: bytes) -> list[int]:
    """Offsets of the 32-bit fields of a valid frame: header sizes, block offsets, the size
    before each stream."""
    _, flags, typesize, nbytes, blocksize, _ = struct.unpack_from("<BxBBIII", frame)
    places = [4, 8, 12]
    if flags & 0x02 or not nbytes:
        return places
    nblocks = -(-nbytes // blocksize)
    split = not flags & 0x10 and typesize <= 16 and blocksize // typesize >= 128
    for b in range(nblocks):
        places.append(16 + 4 * b)
        offset = struct.unpack_from("<I", frame, 16 + 4 * b)[0]
        short = b == nblocks - 1 and nbytes % blocksize
        for _ in range(1 if short or not split else typesize):
            places.append(offset)
            offset += 4 + struct.unpack_from("<i", frame, offset)[0]
    return places


INTERESTING = [
    0,
    1,
    2,
    3,
    4,
    15,
    16,
    17,
    127,
    128,
    255,
    256,
    2**15,
    2**16,
    2**24,
    2**31 - 1,
    2**31,
    2**32 - 1,
    2**32 - 16,
]


@st.composite
def damaged(draw: Any) -> tuple[bytes, dict, bytes]:
    frame, case, original = draw(frames())
    b = bytearray(frame)
    places = _fields(frame)
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(("field", "field", "field", "byte", "length", "header-byte")))
        if op == "field":
            at = draw(st.sampled_from(places))
            if at + 4 > len(b):
                continue
            old, size = struct.unpack_from("<I", b, at)[0], len(b)
            value = draw(
                st.one_of(
                    st.sampled_from(INTERESTING),
                    st.integers(-64, 64).map(lambda d, old=old: old + d),
                    st.integers(-64, 64).map(lambda d, size=size: size + d),
                    st.integers(0, 2**32 - 1),
                )
            )
            struct.pack_into("<I", b, at, value % 2**32)
        elif op == "header-byte" and len(b) >= 4:  # version, compressor version, flags, typesize
            at = draw(st.integers(0, 3))
            b[at] = draw(
                st.one_of(st.integers(0, 255), st.sampled_from((0, 1, 2, 3, 0x10, 0x13, 0x31)))
            )
        elif op == "byte" and b:
            b[draw(st.integers(0, len(b) - 1))] = draw(st.integers(0, 255))
        else:
            cut = draw(st.integers(-64, 64))
            b = b[:cut] if cut < 0 else b + bytes(draw(st.binary(min_size=cut, max_size=cut)))
        if len(b) >= 16 and draw(st.booleans()):  # keep the header's size true to the frame
            struct.pack_into("<I", b, 12, len(b))
    case = dict(case, intact=bytes(b) == frame)
    return bytes(b), case, original


@settings(
    max_examples=int(os.environ.get("ZARRKIT_BLOSC_EXAMPLES", "300")),
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)
@given(case=damaged())
def test_damaged_frames_are_refused_or_decoded(child, case):
    frame, meta, original = case
    problems = child.decode(frame, meta, original)
    if problems and os.environ.get("ZARRKIT_BLOSC_DUMP"):
        Path(os.environ["ZARRKIT_BLOSC_DUMP"]).write_text(
            json.dumps([frame.hex(), meta, original.hex()])
        )
    assert not problems, f"{len(frame)}-byte frame {frame[:48].hex()}...: " + "; ".join(problems)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=frames())
def test_valid_frames_decode_everywhere(child, case):
    frame, meta, original = case
    assert child.decode(frame, meta, original) == []


def test_the_fuzzers_frame_is_refused(child):
    frame = REPRODUCER.read_bytes()[1:]  # the first byte picks the fuzzer's array
    with pytest.raises(ValueError, match="872415307 compressed bytes, the frame has 87"):
        blosc_fast.check_frame(frame)
    case = {"dtype": "<f8", "nitems": 25, "cname": "lz4", "shuffle": 1, "intact": False}
    assert child.decode(frame, case, b"") == []


# =============================================================================================
# what check_frame says of each field


def _frame(
    n: int = 4096, typesize: int = 8, cname: str = "lz4", blocksize: int = 1024
) -> bytearray:
    data = (
        (np.arange(n // typesize) % 7).astype(f"<u{typesize}")
        if typesize in (1, 2, 4, 8)
        else np.zeros(n, "u1")
    )
    return bytearray(numcodecs.Blosc(cname, 5, 1, blocksize).encode(data))


@pytest.mark.parametrize(
    ("at", "fmt", "value", "message"),
    [
        (12, "<I", 10**6, "compressed bytes, the frame has"),
        (0, "B", 1, "unknown format"),
        (2, "B", 0x08 | 0x01, "unknown format"),
        (3, "B", 0, "unknown format"),
        (8, "<I", 0, "in blocks of 0"),
        (8, "<I", 8192, "in blocks of 8192"),
        (4, "<I", 2**31, "expected at most"),
        (4, "<I", 10**6, "too short for the offsets"),
    ],
)
def test_header_fields(at, fmt, value, message):
    frame = _frame()
    struct.pack_into(fmt, frame, at, value)
    with pytest.raises(ValueError, match=message):
        blosc_fast.check_frame(bytes(frame))


@pytest.mark.parametrize("blocksize", [1024, 4096])  # several blocks, one block
@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("start", 4),
        ("start", 2**31 - 1),
        ("start", 2**31),
        ("size", 2**31 - 1),
        ("size", 2**32 - 1),
        ("size", 10**6),
        ("size", "neblock"),
    ],
)
def test_blocks_and_streams_out_of_the_frame(child, blocksize, field, value):
    """A block offset or stream size pointing out of a frame whose header is true to its
    length: c-blosc refuses it (``neblock``: a stream as large as its block, which c-blosc
    copies rather than decompresses)."""
    frame = _frame(blocksize=blocksize)
    start = struct.unpack_from("<I", frame, 16)[0]
    at = 16 if field == "start" else start
    if value == "neblock":  # the first stream of the split block: 1/8 of the block
        value = blocksize // 8
    struct.pack_into("<I", frame, at, value)
    assert blosc_fast.check_frame(bytes(frame)) == 4096  # left to c-blosc
    case = {"dtype": "<u8", "nitems": 512, "cname": "lz4", "shuffle": 1, "intact": False}
    assert child.decode(bytes(frame), case, b"") == []


def test_header_size_past_the_frame(child):
    """The fuzzer's case, built: a stream and the header's size both made to run past the
    frame, so c-blosc's own checks pass and it reads 4 KiB past the end (a segmentation fault
    in the child, before the check)."""
    a = np.arange(4000, dtype="<f8")
    frame = bytearray(numcodecs.Blosc("lz4", 5, 1, 32000).encode(a))
    last = _fields(bytes(frame))[-1]
    struct.pack_into("<I", frame, last, 4000)  # as large as its part of the block: copied
    struct.pack_into("<I", frame, 12, len(frame) + 4000)
    with pytest.raises(ValueError, match="compressed bytes, the frame has"):
        blosc_fast.check_frame(bytes(frame))
    case = {"dtype": "<f8", "nitems": 4000, "cname": "lz4", "shuffle": 1, "intact": False}
    assert child.decode(bytes(frame), case, a.tobytes()) == []


def test_memcpyed_frame_size():
    frame = bytearray(numcodecs.Blosc("lz4", 5, 0).encode(np.arange(4, dtype="<f8")))
    assert frame[2] & 0x02
    frame += b"\0"
    struct.pack_into("<I", frame, 12, len(frame))
    with pytest.raises(ValueError, match="uncompressed blosc frame of 49 bytes should hold 32"):
        blosc_fast.check_frame(bytes(frame))


def test_valid_frames_pass_with_their_size():
    for cname in CNAMES:
        for typesize in (1, 2, 4, 8):
            for blocksize in (0, 256, 4096):
                frame = bytes(_frame(8192, typesize, cname, blocksize))
                assert blosc_fast.check_frame(frame) == 8192
                assert blosc_fast.check_frame(memoryview(frame)) == 8192
                assert blosc_fast.check_frame(np.frombuffer(frame, dtype=np.uint8)) == 8192


FILTER_CASE = """
import sys, numcodecs, numpy as np, zarrkit
from zarrkit.errors import ChunkDecodeError
codec = {"blosc": numcodecs.Blosc("lz4", 1, 1), "zfpy": numcodecs.ZFPY(mode=4, tolerance=-1)}[sys.argv[1]]
s = zarrkit.MemoryStore()
z = zarrkit.create(shape=(25,), chunks=(25,), dtype="<f8", zarr_format=2, store=s, compressor=None,
                   filters=[codec])
z[...] = np.arange(25.0)
assert (z[:] == np.arange(25.0)).all()
s["0"] = open(sys.argv[2], "rb").read()[1:]
try:
    z[:]
except ChunkDecodeError as exc:
    print(exc)
else:
    raise AssertionError("a damaged frame read")
"""


@pytest.mark.parametrize(
    ("codec", "saved"), [("blosc", "signal11-0d8d046f9226"), ("zfpy", "hang-6ccbd5a562b8")]
)
def test_frames_given_to_a_filter_are_checked_too(codec, saved):
    """A v2 filter is handed bytes from the store as a compressor is: the fuzzer's Blosc frame
    and its zfpy frame (declaring 4 GiB, padded to that size before it was checked against
    the chunk) are refused, in a child process (both ended the process, unchecked)."""
    if codec == "zfpy":
        pytest.importorskip("zfpy")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.run(
        [sys.executable, "-c", FILTER_CASE, codec, str(HERE / "corpus" / "chunk" / saved)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "cannot decode" in proc.stdout


if __name__ == "__main__" and sys.argv[1:] == ["--worker"]:
    _worker()
