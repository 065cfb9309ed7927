"""Fuzzing zarrkit's readers with malformed metadata and corrupted chunks/shards.

Metadata: valid ``.zarray``/``.zgroup``/``.zattrs``/``.zmetadata``/``zarr.json`` documents
(arrays and groups, v2 and v3, sharding, consolidated metadata) are mutated structurally (keys
deleted/added, types changed, special numbers, unknown names, deep nesting) or at the byte level
(truncation, invalid UTF-8, garbage), written into a :class:`zarrkit.MemoryStore` and opened
read-only.  The only exceptions allowed are :class:`zarrkit.errors.ZarrkitError` subclasses;
every case must finish quickly and without a memory blow-up.

Chunks: valid arrays with many codec chains have one stored chunk/shard corrupted (bit flips,
truncation, extension, random bytes, empty); reading must either return an array of the right
shape and dtype (corruption not detectable without a checksum) or raise
:class:`~zarrkit.errors.ChunkDecodeError` naming the corrupted key.

In total the tests here run well over 2,000 metadata cases and 1,000 chunk cases.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
import tracemalloc
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import zarrkit
from zarrkit.errors import ChunkDecodeError, ZarrkitError

TIME_LIMIT = 2.0  # seconds per case
MEMORY_LIMIT = 100 * 2**20  # tracemalloc peak per case

FUZZ_SETTINGS = dict(
    deadline=None,
    database=None,  # no example database files: other people work in this checkout
    derandomize=True,  # the same cases on every run (a robustness suite must not be flaky)
    suppress_health_check=list(HealthCheck),
    # no shrinking: it can take minutes, and the draws of a failing case are printed anyway
    phases=(Phase.explicit, Phase.generate),
)

META_NAMES = (".zarray", ".zgroup", ".zattrs", ".zmetadata", "zarr.json")


# =============================================================================================
# valid starting points


def _snapshot(store: zarrkit.MemoryStore) -> dict[str, bytes]:
    return {k: bytes(store[k]) for k in store}


def _build_metadata_bases() -> dict[str, dict[str, bytes]]:
    bases: dict[str, dict[str, bytes]] = {}

    # -- v2 arrays --------------------------------------------------------------------------
    s = zarrkit.MemoryStore()
    z = zarrkit.create(shape=(7, 9), chunks=(3, 4), dtype="<i4", zarr_format=2, store=s,
                       compressor=zarrkit.Blosc(cname="lz4", clevel=3, shuffle=1))
    z[:] = np.arange(63, dtype="<i4").reshape(7, 9)
    z.attrs.update({"units": "m", "scale": [1, 2, 3], "nested": {"a": None}})
    bases["v2-array-blosc"] = _snapshot(s)

    s = zarrkit.MemoryStore()
    z = zarrkit.create(shape=(10,), chunks=(4,), dtype="<f8", zarr_format=2, store=s, order="F",
                       fill_value=float("nan"), compressor=zarrkit.Zlib(level=1),
                       filters=[zarrkit.Delta(dtype="<f8")], dimension_separator="/")
    z[:5] = np.linspace(0, 1, 5)
    bases["v2-array-f8-delta-nan"] = _snapshot(s)

    s = zarrkit.MemoryStore()
    z = zarrkit.create(shape=(5,), chunks=(2,), dtype=str, zarr_format=2, store=s)
    z[:] = np.array(["a", "bb", "", "dddd", "é"], dtype=object)
    bases["v2-array-vlen-str"] = _snapshot(s)

    s = zarrkit.MemoryStore()
    z = zarrkit.create(shape=(6,), chunks=(4,), dtype=[("x", "<i2"), ("y", "<f4")], zarr_format=2,
                       store=s, compressor=None)
    z[:] = np.ones(6, dtype=[("x", "<i2"), ("y", "<f4")])
    bases["v2-array-structured"] = _snapshot(s)

    # -- v2 group hierarchy + consolidated ----------------------------------------------------
    s = zarrkit.MemoryStore()
    g = zarrkit.group(s, zarr_format=2)
    g.attrs["title"] = "root"
    a = g.zeros("x", shape=(6, 5), chunks=(4, 4), dtype="<u2")
    a[:] = 7
    sub = g.create_group("sub")
    sub.attrs["k"] = [1, 2]
    b = sub.full("y", shape=(3,), chunks=(2,), fill_value=-1.5, dtype="<f4")
    b[:2] = 2.5
    zarrkit.consolidate_metadata(s)
    bases["v2-group-consolidated"] = _snapshot(s)

    # -- v3 arrays ----------------------------------------------------------------------------
    s = zarrkit.MemoryStore()
    z = zarrkit.create_array(
        s, shape=(10, 12), chunks=(4, 5), dtype="int32", zarr_format=3, fill_value=3,
        dimension_names=["y", "x"], attributes={"units": "K", "list": [1.5, None]},
        codecs=[
            {"name": "transpose", "configuration": {"order": [1, 0]}},
            {"name": "bytes", "configuration": {"endian": "big"}},
            {"name": "gzip", "configuration": {"level": 1}},
            {"name": "crc32c"},
        ],
    )
    z[:] = np.arange(120, dtype="i4").reshape(10, 12)
    bases["v3-array-transpose-gzip-crc"] = _snapshot(s)

    s = zarrkit.MemoryStore()
    z = zarrkit.create_array(s, shape=(9, 8), chunks=(2, 2), shards=(4, 4), dtype="float32",
                             zarr_format=3, fill_value=float("nan"))
    z[:] = np.arange(72, dtype="f4").reshape(9, 8)
    bases["v3-array-sharded-end"] = _snapshot(s)

    s = zarrkit.MemoryStore()
    z = zarrkit.create_array(
        s, shape=(8, 6), dtype="uint16", zarr_format=3, chunk_key_encoding={"name": "v2"},
        codecs=[{
            "name": "sharding_indexed",
            "configuration": {
                "chunk_shape": [2, 3],
                "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                           {"name": "zstd", "configuration": {"level": 1, "checksum": False}}],
                "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
                "index_location": "start",
            },
        }],
        chunks=(4, 6),
    )
    z[:] = np.arange(48, dtype="u2").reshape(8, 6)
    bases["v3-array-sharded-start"] = _snapshot(s)

    s = zarrkit.MemoryStore()
    z = zarrkit.create_array(s, shape=(4,), chunks=(3,), dtype="complex64", zarr_format=3,
                             fill_value=complex(1.0, float("nan")))
    z[:] = np.arange(4) * (1 + 2j)
    bases["v3-array-complex"] = _snapshot(s)

    s = zarrkit.MemoryStore()
    z = zarrkit.create_array(s, shape=(5,), chunks=(2,), dtype=str, zarr_format=3)
    z[:] = np.array(["a", "bb", "", "dddd", "é"], dtype=object)
    bases["v3-array-vlen-str"] = _snapshot(s)

    # -- v3 group hierarchy + consolidated ----------------------------------------------------
    s = zarrkit.MemoryStore()
    g = zarrkit.group(s, zarr_format=3)
    g.attrs["title"] = "root"
    a = g.zeros("x", shape=(6, 5), chunks=(4, 4), dtype="uint16")
    a[:] = 7
    sub = g.create_group("sub")
    sub.attrs["k"] = [1, 2]
    b = zarrkit.create_array(s, name="sub/y", shape=(8,), chunks=(2,), shards=(4,), dtype="int8",
                             zarr_format=3)
    b[:] = 5
    zarrkit.consolidate_metadata(s)
    bases["v3-group-consolidated"] = _snapshot(s)
    return bases


BASES = _build_metadata_bases()
V2_ARRAYS = [k for k in BASES if k.startswith("v2-array")]
V3_ARRAYS = [k for k in BASES if k.startswith("v3-array")]
GROUPS = [k for k in BASES if "group" in k]


def _meta_keys(base: dict[str, bytes]) -> list[str]:
    return sorted(k for k in base if k.rsplit("/", 1)[-1] in META_NAMES)


# =============================================================================================
# mutations


def _deep_list(depth: int) -> Any:
    v: Any = 0
    for _ in range(depth):
        v = [v]
    return v


def _deep_dict(depth: int) -> Any:
    v: Any = {}
    for _ in range(depth):
        v = {"a": v}
    return v


SPECIAL_VALUES: list[Any] = [
    None, True, False, 0, -1, 1, 2, 3, 2**31, 2**32, 2**62, 2**63 - 1, 2**63, 2**64, 2**100,
    -(2**63), -(2**62), 0.5, -0.0, 1e308, -1e308, 5e-324, float("nan"), float("inf"), float("-inf"),
    "", "x", "NaN", "Infinity", "-Infinity", "0x7fc00000", "0x7ff8000000000000", "AAAA", "====",
    "<i4", ">f8", "|O", "|b1", "<f16", "<U5", "|S3", "|V3", "<M8[ns]", "<m8[Y]", "<M8[bogus]",
    "float128", "int4", "uint64", "bool", "complex128", "bytes", "string", "r16", "r7",
    "bogus", "c", "F", "C", "/", ".", "\\", "..", "start", "end", "little", "big", "regular",
    "default", "v2", "inline", "array", "group", "blosc", "zstd", "gzip", "crc32c",
    "sharding_indexed", "bytes", "transpose", "vlen-utf8", "numcodecs.delta",
    [], {}, [[]], [{}], [None], [0], [-1], [1], [2**62], [2**62, 2**62], [2**63], [0, 0],
    [1, 1], [1, 2, 3], [3, 2, 1, 0], [1.5], ["1"], [True], [None, None], [-1, 0],
    list(range(70)), [1] * 70, [2**31] * 3, [2**40, 2**40],
    {"name": "bogus"}, {"id": "bogus"}, {"name": None}, {"id": None}, {"name": 5},
    {"name": "regular", "configuration": {"chunk_shape": [2**62]}},
    {"name": "regular", "configuration": {"chunk_shape": [0]}},
    {"name": "rectilinear", "configuration": {"chunk_shapes": [[1, 2]]}},
    {"name": "default", "configuration": {"separator": "\\"}},
    {"name": "v2", "configuration": {"separator": ".", "extra": 1}},
    {"name": "bytes", "configuration": {"endian": "middle"}},
    {"name": "blosc", "configuration": {"cname": "bogus", "clevel": 99, "shuffle": "x", "typesize": -1}},
    {"name": "gzip", "configuration": {"level": 2**40}},
    {"name": "zstd", "configuration": {"level": "x"}},
    {"name": "transpose", "configuration": {"order": [0, 0]}},
    {"name": "transpose", "configuration": {"order": [5]}},
    {"name": "sharding_indexed", "configuration": {"chunk_shape": [0]}},
    {"name": "sharding_indexed", "configuration": {"chunk_shape": [2**40, 2**40],
                                                   "codecs": [{"name": "bytes"}]}},
    {"name": "sharding_indexed", "configuration": {"chunk_shape": [1], "codecs": [],
                                                   "index_codecs": [{"name": "gzip"}]}},
    {"name": "sharding_indexed", "configuration": {"chunk_shape": [1], "index_location": "middle"}},
    {"name": "sharding_indexed", "configuration": {
        "chunk_shape": [1], "codecs": [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [1], "codecs": [{"name": "sharding_indexed", "configuration": {
                "chunk_shape": [1]}}]}}]}},
    {"id": "blosc", "cname": "bogus"}, {"id": "zlib", "level": 2**40}, {"id": "delta"},
    {"id": "delta", "dtype": "<f16"}, {"id": "vlen-utf8"}, {"id": "pickle"}, {"id": "bz2", "level": -5},
    {"id": "lzma", "format": 99}, {"id": "fixedscaleoffset", "offset": 0, "scale": 0, "dtype": "<f8"},
    {"id": "astype", "encode_dtype": "|O", "decode_dtype": "<f8"},
    {"id": "categorize", "labels": [], "dtype": "|O"}, {"id": "json2"}, {"id": "msgpack2"},
    {"must_understand": False}, {"must_understand": True}, {"must_understand": "false"},
    {"kind": "inline", "must_understand": False, "metadata": {"x": None}},
    {"kind": "inline", "must_understand": False, "metadata": {"../../etc": {"zarr_format": 3}}},
    {"metadata": {"../x/.zarray": {}}, "zarr_consolidated_format": 1},
    {"zarr_format": 3, "node_type": "array"}, {"zarr_format": 2},
    {"zarr_format": 3, "node_type": "group", "attributes": []},
    [["x", "<i4"], ["x", "<i4"]], [["a", "<i4", [2**40]]], [["", "<f8"]], [["a"]], [[1, 2]],
    _deep_list(50), _deep_list(900), _deep_dict(900), "x" * 100_000, list(range(10_000)),
]

FIELD_NAMES = [
    "zarr_format", "node_type", "shape", "chunks", "dtype", "data_type", "compressor", "filters",
    "fill_value", "order", "dimension_separator", "chunk_grid", "chunk_key_encoding", "codecs",
    "attributes", "storage_transformers", "dimension_names", "consolidated_metadata",
    "must_understand", "metadata", "zarr_consolidated_format", "name", "configuration", "id",
    "chunk_shape", "index_location", "index_codecs", "separator", "endian", "extra", "",
    "\x00", "../../x", "é",
]

json_leaves = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8),
)
json_values = st.recursive(
    json_leaves,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=10,
)
# kept as JSON text and parsed afresh on each draw: mutations must never change the pool itself
_SPECIAL_JSON = [json.dumps(v, allow_nan=True) for v in SPECIAL_VALUES]
mutation_values = st.one_of(st.sampled_from(_SPECIAL_JSON).map(json.loads), json_values)


def _paths(doc: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path to a value inside ``doc`` (dict keys and list indices, 12 levels deep at
    most), root excluded."""
    out: list[tuple] = []
    if len(prefix) >= 12:
        return out
    if isinstance(doc, dict):
        for k, v in doc.items():
            out.append(prefix + (k,))
            out.extend(_paths(v, prefix + (k,)))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:20]):
            out.append(prefix + (i,))
            out.extend(_paths(v, prefix + (i,)))
    return out


def _container(doc: Any, path: tuple) -> Any:
    for p in path[:-1]:
        doc = doc[p]
    return doc


def _retype(v: Any, how: int) -> Any:
    options = [
        lambda v: str(v),
        lambda v: [v],
        lambda v: {"value": v},
        lambda v: float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v,
        lambda v: list(v.items()) if isinstance(v, dict) else v,
        lambda v: dict(enumerate(v)) if isinstance(v, list) else v,
        lambda v: -v if isinstance(v, (int, float)) and not isinstance(v, bool) else v,
        lambda v: v * 2**40 if isinstance(v, int) and not isinstance(v, bool) else v,
        lambda v: [x * 2**40 if isinstance(x, int) else x for x in v] if isinstance(v, list) else v,
        lambda v: [x - 2**40 if isinstance(x, int) else x for x in v] if isinstance(v, list) else v,
        lambda v: v[:-1] if isinstance(v, (list, str)) else v,
        lambda v: v + v if isinstance(v, (list, str)) else v,
        lambda v: True if v is not True else 1,
        lambda v: None,
    ]
    return options[how % len(options)](v)


def mutate_document(data: st.DataObject, doc: Any) -> Any:
    """Apply 1-4 structural mutations to a copy of a parsed JSON document."""
    doc = json.loads(json.dumps(doc, allow_nan=True))
    for _ in range(data.draw(st.integers(1, 4), label="n_mutations")):
        paths = _paths(doc)
        op = data.draw(st.sampled_from(["delete", "replace", "add", "retype", "root"]), label="op")
        if op == "root" or not paths:
            if data.draw(st.booleans(), label="root_replace"):
                doc = data.draw(mutation_values, label="root_value")
            else:
                doc = _retype(doc, data.draw(st.integers(0, 20), label="root_retype"))
            continue
        path = data.draw(st.sampled_from(paths), label="path")
        parent = _container(doc, path)
        last = path[-1]
        if op == "delete":
            del parent[last]
        elif op == "replace":
            parent[last] = data.draw(mutation_values, label="value")
        elif op == "retype":
            parent[last] = _retype(parent[last], data.draw(st.integers(0, 20), label="retype"))
        else:  # add a key to the dict holding the path (or append to the list)
            target = parent[last] if isinstance(parent[last], (dict, list)) else parent
            value = data.draw(mutation_values, label="added")
            if isinstance(target, dict):
                target[data.draw(st.sampled_from(FIELD_NAMES) | st.text(max_size=6), label="name")] = value
            else:
                target.append(value)
    return doc


def mutate_bytes(data: st.DataObject, raw: bytes) -> bytes:
    """Byte-level damage to a serialized document."""
    op = data.draw(st.sampled_from([
        "truncate", "invalid_utf8", "deep_list", "deep_dict", "garbage", "empty", "bom", "utf16",
        "nan_literal", "flip", "dup_keys", "trailing", "control",
    ]), label="byte_op")
    if op == "truncate":
        return raw[: data.draw(st.integers(0, max(len(raw) - 1, 0)), label="cut")]
    if op == "invalid_utf8":
        pos = data.draw(st.integers(0, len(raw)), label="pos")
        bad = data.draw(st.sampled_from([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80", b"\x80"]))
        return raw[:pos] + bad + raw[pos:]
    if op == "deep_list":
        n = data.draw(st.sampled_from([500, 1000, 5000, 100_000]), label="depth")
        return b"[" * n + b"]" * n
    if op == "deep_dict":
        n = data.draw(st.sampled_from([500, 1000, 5000, 100_000]), label="depth")
        return b'{"zarr_format": 3, "node_type": "array", "shape": ' + b'{"a":' * n + b"1" + b"}" * n + b"}"
    if op == "garbage":
        return data.draw(st.binary(max_size=64), label="garbage")
    if op == "empty":
        return b""
    if op == "bom":
        return b"\xef\xbb\xbf" + raw
    if op == "utf16":
        return raw.decode("utf-8", "replace").encode("utf-16")
    if op == "nan_literal":
        for token in (b"NaN", b"Infinity", b"-Infinity", b"1e999", b"-1e999", b"123456789012345678901234567890"):
            raw = raw.replace(b": 0", b": " + token, 1) if data.draw(st.booleans()) else raw
        return raw.replace(b"[", b"[" + data.draw(st.sampled_from([b"NaN, ", b"1e999, ", b""])), 1)
    if op == "flip":
        if not raw:
            return raw
        pos = data.draw(st.integers(0, len(raw) - 1), label="flip_pos")
        bit = data.draw(st.integers(0, 7), label="bit")
        return raw[:pos] + bytes([raw[pos] ^ (1 << bit)]) + raw[pos + 1:]
    if op == "dup_keys":
        return raw.replace(b"{", b'{"zarr_format": 99, ', 1)
    if op == "trailing":
        return raw + data.draw(st.sampled_from([b"garbage", b"\x00", b"{}", b",", b"\n\n"]))
    # control characters inside strings
    return raw.replace(b'"', b'"\x00\x01', 2)


# =============================================================================================
# exercising a store


def _small(shape: tuple[int, ...]) -> tuple[slice, ...]:
    return tuple(slice(0, 3) for _ in shape)


def _touch(node: Any, depth: int = 0) -> None:
    if isinstance(node, zarrkit.Array):
        shape = node.shape
        out = node[_small(shape)] if shape else node[()]
        if shape:
            assert out.shape == tuple(min(3, s) for s in shape)
        node.attrs.asdict()
        node.nchunks_initialized
        repr(node)
        return
    assert isinstance(node, zarrkit.Group)
    node.attrs.asdict()
    if depth > 3:
        return
    for name in list(node):
        _touch(node[name], depth + 1)


def in_fresh_thread(fn, *args):
    """Run ``fn`` in a new thread and return its result (or raise its exception).

    zarrkit caches decode buffers per thread (``core.chunks.scratch``); a fresh thread starts
    with none, so a case's allocations are measured in full instead of being hidden by a
    cached buffer freed and replaced during the case."""
    box: dict[str, object] = {}

    def run():
        try:
            box["result"] = fn(*args)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller
            box["error"] = exc

    t = threading.Thread(target=run)
    t.start()
    t.join()
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box.get("result")


@contextlib.contextmanager
def traced_peak():
    """Measure the peak of traced allocations inside the block (``result['peak']``), starting
    tracemalloc only if it is not already tracing."""
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    result: dict[str, int] = {}
    try:
        yield result
    finally:
        result["peak"] = tracemalloc.get_traced_memory()[1] - base
        if started:
            tracemalloc.stop()


def _run_case(store_data: dict[str, bytes]) -> tuple[float, int]:
    """Open and read the store once; returns (seconds, peak traced bytes).  Allocations are
    traced during the case only: tracing while hypothesis draws the next case costs more than
    the case."""
    store = zarrkit.MemoryStore()
    for k, v in store_data.items():
        store[k] = v
    with traced_peak() as traced:
        start = time.perf_counter()
        try:
            node = zarrkit.open(store, mode="r")
            _touch(node)
            if ".zmetadata" in store_data or b"consolidated_metadata" in store_data.get("zarr.json", b""):
                _touch(zarrkit.open_consolidated(store, mode="r"))
        except ZarrkitError:
            pass
        except (AssertionError, MemoryError, RecursionError, Exception) as exc:
            raise AssertionError(
                f"non-zarrkit exception {type(exc).__name__}: {exc!s:.300}"
            ) from exc
        finally:
            elapsed = time.perf_counter() - start
    return elapsed, traced["peak"]


def exercise(store_data: dict[str, bytes]) -> None:
    """Open (read-only) what the store holds and read a little of everything in it.

    Fails when anything other than a ZarrkitError escapes, when the case takes too long or
    when it allocates too much memory.  A case over the time limit is run a second time and
    judged by that run (this machine is shared: one slow run may be a scheduling hiccup, a
    real hang or blow-up is slow every time).
    """
    elapsed, peak = in_fresh_thread(_run_case, store_data)
    if elapsed >= TIME_LIMIT:
        elapsed, peak = in_fresh_thread(_run_case, store_data)
    assert elapsed < TIME_LIMIT, f"case took {elapsed:.2f} s"
    assert peak < MEMORY_LIMIT, f"case allocated {peak / 2**20:.0f} MiB"


def _mutated_store(data: st.DataObject, names: list[str], byte_level: bool) -> dict[str, bytes]:
    base = BASES[data.draw(st.sampled_from(names), label="base")]
    out = dict(base)
    keys = _meta_keys(base)
    n_keys = data.draw(st.integers(1, 2), label="n_keys")
    for _ in range(n_keys):
        key = data.draw(st.sampled_from(keys), label="key")
        raw = out[key]
        if byte_level:
            out[key] = mutate_bytes(data, raw)
        else:
            doc = json.loads(raw)
            doc = mutate_document(data, doc)
            out[key] = json.dumps(doc, allow_nan=True).encode("utf-8", "surrogatepass")
    return out


# =============================================================================================
# the metadata fuzz tests (2,250 examples in total)


def test_bases_are_valid():
    """The starting documents themselves open and read without error."""
    for base in BASES.values():
        store = zarrkit.MemoryStore()
        for k, v in base.items():
            store[k] = v
        _touch(zarrkit.open(store, mode="r"))


@settings(max_examples=500, **FUZZ_SETTINGS)
@given(data=st.data())
def test_fuzz_v2_array_metadata(data):
    exercise(_mutated_store(data, V2_ARRAYS, byte_level=False))


@settings(max_examples=500, **FUZZ_SETTINGS)
@given(data=st.data())
def test_fuzz_v3_array_metadata(data):
    exercise(_mutated_store(data, V3_ARRAYS, byte_level=False))


@settings(max_examples=500, **FUZZ_SETTINGS)
@given(data=st.data())
def test_fuzz_group_and_consolidated_metadata(data):
    exercise(_mutated_store(data, GROUPS, byte_level=False))


@settings(max_examples=400, **FUZZ_SETTINGS)
@given(data=st.data())
def test_fuzz_metadata_bytes(data):
    exercise(_mutated_store(data, list(BASES), byte_level=True))


@settings(max_examples=350, **FUZZ_SETTINGS)
@given(data=st.data())
def test_fuzz_metadata_mixed(data):
    """Structural mutations of one document, byte-level damage of another."""
    base_name = data.draw(st.sampled_from(list(BASES)), label="base")
    out = dict(BASES[base_name])
    keys = _meta_keys(out)
    k1 = data.draw(st.sampled_from(keys), label="key1")
    out[k1] = json.dumps(mutate_document(data, json.loads(out[k1])), allow_nan=True).encode(
        "utf-8", "surrogatepass")
    k2 = data.draw(st.sampled_from(keys), label="key2")
    out[k2] = mutate_bytes(data, out[k2])
    exercise(out)


# =============================================================================================
# corrupted chunks and shards


def _chunk_configs() -> dict[str, tuple[dict[str, bytes], tuple[int, ...], np.dtype]]:
    configs = {}
    data_i4 = np.arange(10 * 12, dtype="<i4").reshape(10, 12) * 7 - 300
    data_f8 = np.linspace(-5, 5, 10 * 12).reshape(10, 12)

    v2 = {
        "none": dict(compressor=None),
        "blosc-lz4": dict(compressor=zarrkit.Blosc(cname="lz4", clevel=5, shuffle=1)),
        "blosc-zstd-bitshuffle": dict(compressor=zarrkit.Blosc(cname="zstd", clevel=3, shuffle=2)),
        "blosc-blosclz-noshuffle": dict(compressor=zarrkit.Blosc(cname="blosclz", clevel=5, shuffle=0)),
        "zlib": dict(compressor=zarrkit.Zlib(level=1)),
        "gzip": dict(compressor=zarrkit.GZip(level=1)),
        "zstd": dict(compressor=zarrkit.Zstd(level=1)),
        "lz4": dict(compressor=zarrkit.LZ4()),
        "bz2": dict(compressor=zarrkit.BZ2(level=1)),
        "lzma": dict(compressor=zarrkit.LZMA()),
        "delta-zlib": dict(compressor=zarrkit.Zlib(level=1), filters=[zarrkit.Delta(dtype="<i4")]),
        "shuffle-none": dict(compressor=None, filters=[zarrkit.Shuffle(elementsize=4)]),
        "shuffle-delta-zstd": dict(compressor=zarrkit.Zstd(level=1),
                                   filters=[zarrkit.Delta(dtype="<i4"), zarrkit.Shuffle(elementsize=4)]),
    }
    for name, kw in v2.items():
        s = zarrkit.MemoryStore()
        z = zarrkit.create(shape=(10, 12), chunks=(4, 5), dtype="<i4", zarr_format=2, store=s, **kw)
        z[:] = data_i4
        configs[f"v2-{name}"] = (_snapshot(s), z.shape, z.dtype)
    s = zarrkit.MemoryStore()
    z = zarrkit.create(shape=(10, 12), chunks=(4, 5), dtype="<f8", zarr_format=2, store=s, order="F",
                       compressor=zarrkit.Blosc(cname="lz4"))
    z[:] = data_f8
    configs["v2-f8-F-blosc"] = (_snapshot(s), z.shape, z.dtype)

    B = {"name": "bytes", "configuration": {"endian": "little"}}
    v3 = {
        "bytes": [B],
        "bytes-big": [{"name": "bytes", "configuration": {"endian": "big"}}],
        "blosc": [B, {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 3, "shuffle": "shuffle",
                                                          "typesize": 4, "blocksize": 0}}],
        "gzip": [B, {"name": "gzip", "configuration": {"level": 1}}],
        "zstd": [B, {"name": "zstd", "configuration": {"level": 1, "checksum": False}}],
        "zstd-checksum": [B, {"name": "zstd", "configuration": {"level": 1, "checksum": True}}],
        "crc32c": [B, {"name": "crc32c"}],
        "transpose-gzip-crc32c": [{"name": "transpose", "configuration": {"order": [1, 0]}}, B,
                                  {"name": "gzip", "configuration": {"level": 1}}, {"name": "crc32c"}],
        "transpose-bytes": [{"name": "transpose", "configuration": {"order": [1, 0]}}, B],
    }
    for name, codecs in v3.items():
        s = zarrkit.MemoryStore()
        z = zarrkit.create_array(s, shape=(10, 12), chunks=(4, 5), dtype="int32", zarr_format=3,
                                 codecs=codecs)
        z[:] = data_i4
        configs[f"v3-{name}"] = (_snapshot(s), z.shape, z.dtype)

    for loc in ("end", "start"):
        for inner_name, inner in (("bytes", [B]),
                                  ("gzip", [B, {"name": "gzip", "configuration": {"level": 1}}]),
                                  ("crc32c", [B, {"name": "crc32c"}])):
            for index_name, index in (("crc", [B, {"name": "crc32c"}]), ("plain", [B])):
                s = zarrkit.MemoryStore()
                z = zarrkit.create_array(
                    s, shape=(10, 12), chunks=(4, 6), dtype="int32", zarr_format=3,
                    codecs=[{"name": "sharding_indexed", "configuration": {
                        "chunk_shape": [2, 3], "codecs": inner, "index_codecs": index,
                        "index_location": loc}}],
                )
                z[:] = data_i4
                configs[f"v3-shard-{loc}-{inner_name}-{index_name}"] = (_snapshot(s), z.shape, z.dtype)
    return configs


CHUNK_CONFIGS = _chunk_configs()
CHUNK_CONFIG_NAMES = sorted(CHUNK_CONFIGS)


def corrupt(data: st.DataObject, raw: bytes) -> bytes:
    op = data.draw(st.sampled_from(
        ["flip", "flips", "truncate", "extend", "random", "empty", "zero_tail", "swap", "prefix"]
    ), label="corruption")
    n = len(raw)
    if op == "flip":
        pos = data.draw(st.integers(0, n - 1), label="pos")
        return raw[:pos] + bytes([raw[pos] ^ (1 << data.draw(st.integers(0, 7)))]) + raw[pos + 1:]
    if op == "flips":
        b = bytearray(raw)
        for pos in data.draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=16), label="positions"):
            b[pos] ^= data.draw(st.integers(1, 255))
        return bytes(b)
    if op == "truncate":
        return raw[: data.draw(st.integers(0, n - 1), label="keep")]
    if op == "extend":
        return raw + data.draw(st.binary(min_size=1, max_size=64), label="extra")
    if op == "random":
        return data.draw(st.binary(min_size=1, max_size=2 * n + 16), label="random")
    if op == "empty":
        return b""
    if op == "zero_tail":
        cut = data.draw(st.integers(0, n - 1), label="cut")
        return raw[:cut] + bytes(n - cut)
    if op == "swap":
        half = n // 2
        return raw[half:] + raw[:half]
    return data.draw(st.binary(min_size=1, max_size=32), label="prefix") + raw


def _key_matches(exc_key: str | None, key: str) -> bool:
    if exc_key is None:
        return False
    return exc_key == key or exc_key.startswith((key + "@", key + "["))


def read_corrupted(store_data: dict[str, bytes], key: str, shape, dtype) -> None:
    store = zarrkit.MemoryStore()
    for k, v in store_data.items():
        store[k] = v
    z = zarrkit.open_array(store, mode="r")
    start = time.perf_counter()
    for sel in ((Ellipsis,), (slice(1, 3), slice(2, 9))):  # whole array, then a partial region
        try:
            out = z[sel]
        except ChunkDecodeError as exc:
            assert _key_matches(exc.key, key), f"ChunkDecodeError names {exc.key!r}, not {key!r}: {exc}"
            assert key in str(exc), f"message {exc!s:.200} does not name {key!r}"
        except Exception as exc:
            raise AssertionError(
                f"corrupted {key!r}: {type(exc).__name__} instead of ChunkDecodeError: {exc!s:.300}"
            ) from exc
        else:
            expected_shape = shape if sel == (Ellipsis,) else (2, 7)
            assert out.shape == expected_shape and out.dtype == dtype
    assert time.perf_counter() - start < TIME_LIMIT


def _corrupted_case(data: st.DataObject, names: list[str]) -> None:
    name = data.draw(st.sampled_from(names), label="config")
    base, shape, dtype = CHUNK_CONFIGS[name]
    chunk_keys = sorted(k for k in base if k.rsplit("/", 1)[-1] not in META_NAMES)
    out = dict(base)
    key = data.draw(st.sampled_from(chunk_keys), label="key")
    out[key] = corrupt(data, base[key])
    read_corrupted(out, key, shape, dtype)


@settings(max_examples=500, **FUZZ_SETTINGS)
@given(data=st.data())
def test_fuzz_corrupted_chunks(data):
    _corrupted_case(data, [n for n in CHUNK_CONFIG_NAMES if "shard" not in n])


@settings(max_examples=500, **FUZZ_SETTINGS)
@given(data=st.data())
def test_fuzz_corrupted_shards(data):
    _corrupted_case(data, [n for n in CHUNK_CONFIG_NAMES if "shard" in n])


def test_checksummed_corruption_is_always_detected():
    """With crc32c (v3) a flipped bit in the stored bytes is always reported, never returned."""
    for name in ("v3-crc32c", "v3-transpose-gzip-crc32c", "v3-zstd-checksum"):
        base, _shape, _dtype = CHUNK_CONFIGS[name]
        for key in sorted(k for k in base if k.startswith("c/")):
            for pos in (0, len(base[key]) // 2, len(base[key]) - 1):
                raw = bytearray(base[key])
                raw[pos] ^= 0x10
                store = zarrkit.MemoryStore()
                for k, v in base.items():
                    store[k] = v
                store[key] = bytes(raw)
                with pytest.raises(ChunkDecodeError) as info:
                    zarrkit.open_array(store, mode="r")[...]
                assert info.value.key == key and key in str(info.value)


# =============================================================================================
# regressions found by the fuzzers (minimal, deterministic repros)


def _foreign_chunk(name: str) -> tuple[dict[str, bytes], str]:
    """The store of config ``name`` with chunk 0 replaced by a *valid* chunk of the same codecs
    written by an array with smaller chunks: it decodes, but to too few elements."""
    base, _, _ = CHUNK_CONFIGS[name]
    meta_key = ".zarray" if name.startswith("v2") else "zarr.json"
    doc = json.loads(base[meta_key])
    if name.startswith("v2"):
        doc["chunks"] = [2, 5]
        key = "0.0"
    elif "shard" in name:
        doc["chunk_grid"]["configuration"]["chunk_shape"] = [2, 3]
        doc["codecs"][0]["configuration"]["chunk_shape"] = [1, 3]
        key = "c/0/0"
    else:
        doc["chunk_grid"]["configuration"]["chunk_shape"] = [2, 5]
        key = "c/0/0"
    small_store = zarrkit.MemoryStore()
    small_store[meta_key] = json.dumps(doc).encode()
    zarrkit.open_array(small_store, mode="r+")[...] = 5
    out = dict(base)
    out[key] = small_store[key]
    return out, key


@pytest.mark.parametrize("name", CHUNK_CONFIG_NAMES)
def test_chunk_decoding_to_the_wrong_size_is_detected(name):
    store_data, key = _foreign_chunk(name)
    _, _, dtype = CHUNK_CONFIGS[name]
    # leave recognisable data in this thread's scratch buffers first
    other = zarrkit.zeros((4, 5), chunks=(4, 5), dtype=dtype, zarr_format=2, compressor=zarrkit.Blosc())
    other[...] = 77
    other[...]
    store = zarrkit.MemoryStore()
    for k, v in store_data.items():
        store[k] = v
    with pytest.raises(ChunkDecodeError) as info:
        zarrkit.open_array(store, mode="r")[...]
    assert _key_matches(info.value.key, key)


@pytest.mark.parametrize("fmt,compressor,n", [
    (2, None, 2**27), (2, "zlib", 2**27), (2, "blosc", 2**27), (3, "default", 2**27),
])
def test_tiny_chunk_with_a_huge_declared_chunk_shape_allocates_little(fmt, compressor, n):
    s = zarrkit.MemoryStore()
    if fmt == 2:
        comp = {None: None, "zlib": zarrkit.Zlib(), "blosc": zarrkit.Blosc()}[compressor]
        z = zarrkit.create(shape=(3,), chunks=(3,), dtype="i1", zarr_format=2, store=s, compressor=comp)
    else:
        z = zarrkit.create_array(s, shape=(3,), chunks=(3,), dtype="int8", zarr_format=3)
    z[...] = [1, 2, 3]
    key = ".zarray" if fmt == 2 else "zarr.json"
    doc = json.loads(s[key])
    doc["shape"] = [n]
    if fmt == 2:
        doc["chunks"] = [n]
    else:
        doc["chunk_grid"]["configuration"]["chunk_shape"] = [n]
    s[key] = json.dumps(doc).encode()
    with traced_peak() as mem, pytest.raises(ChunkDecodeError):  # the chunk holds 3, not 2**27
        in_fresh_thread(lambda: zarrkit.open(s, mode="r")[0:3])
    peak = mem["peak"]
    assert peak < MEMORY_LIMIT, f"{peak / 2**20:.0f} MiB"


def test_v3_consolidated_metadata_with_nan_literal():
    s = zarrkit.MemoryStore()
    g = zarrkit.group(s, zarr_format=3)
    g.zeros("x", shape=(2,))
    zarrkit.consolidate_metadata(s)
    doc = json.loads(s["zarr.json"])
    doc["attributes"]["a"] = float("nan")
    s["zarr.json"] = json.dumps(doc).encode()  # '"a": NaN'
    try:
        g = zarrkit.open_consolidated(s, mode="r")
        list(g)
    except ZarrkitError:
        pass


@pytest.mark.parametrize("fmt", [2, 3])
def test_zero_dimensional_string_array_reads_back(fmt):
    z = zarrkit.create(shape=(), dtype=str, zarr_format=fmt)
    z[()] = "hello"
    assert z[()] == "hello"


def test_structured_dtype_with_malformed_field_is_a_metadata_error():
    s = zarrkit.MemoryStore()
    s[".zarray"] = json.dumps({
        "zarr_format": 2, "shape": [2], "chunks": [2], "dtype": [["y", ",f4"]],
        "compressor": None, "fill_value": None, "order": "C", "filters": None,
    }).encode()
    with pytest.raises(ZarrkitError):
        zarrkit.open(s, mode="r")


def test_vlen_chunk_header_count_is_checked_before_allocating():
    import struct

    s = zarrkit.MemoryStore()
    z = zarrkit.create(shape=(4,), chunks=(2,), dtype=str, zarr_format=2, store=s, compressor=None)
    z[...] = np.array(["a", "b", "c", "d"], dtype=object)
    s["0"] = struct.pack("<I", 2**24)  # claims 16 Mi strings in a 2-element chunk
    with traced_peak() as mem, pytest.raises(ChunkDecodeError):
        in_fresh_thread(lambda: zarrkit.open(s, mode="r")[0:2])
    peak = mem["peak"]
    assert peak < MEMORY_LIMIT, f"{peak / 2**20:.0f} MiB"
