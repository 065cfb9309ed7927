"""What the fuzzer feeds zarrkit: four targets, each turning bytes into one store to read.

========== =====================================================================================
target     input bytes
========== =====================================================================================
metadata   ``[base]`` + the metadata documents of a small store (arrays and groups, v2 and v3,
           sharding, consolidated), separated by :data:`SEP`; each replaces one document
chunk      ``[config]`` + the bytes of one stored chunk of an array whose codec chain the config
           byte picks (v2 filters and compressors, v3 codecs, object and string codecs)
shard      ``[config][flags]`` + one stored shard (inner chunks and index; index at the start or
           the end, with or without crc32c; flag 1: the index's checksum is recomputed after the
           mutation, so damaged indexes get past it; flag 2: a store without partial reads)
zip        a whole zip file (members, local headers, central directory, comment), opened with
           :class:`~zarrkit.storage.ZipStore` and read as a hierarchy
========== =====================================================================================

Each ``run(data)`` opens the store read-only and reads a little of everything in it; a result
of the wrong shape or dtype, or for chunks and shards an error other than
:class:`~zarrkit.errors.ChunkDecodeError`, is an :class:`~fuzzing.OracleError`.  Seeds are
built on first use (valid stores, so every part of the reader is reached from the start).
The saved inputs of ``corpus/`` pick a base or config by its position in these lists: add new
ones at the end.
"""

from __future__ import annotations

import atexit
import functools
import io
import json
import os
import shutil
import tempfile
import warnings
import zipfile
from typing import Any

import google_crc32c
import numcodecs
import numpy as np
from fuzzing import OracleError

import zarrkit
from zarrkit.errors import ChunkDecodeError, ZarrkitError
from zarrkit.storage import ByteRange, ZipStore

SEP = b"\n\x00\x1e\n"
META_NAMES = (".zarray", ".zgroup", ".zattrs", ".zmetadata", "zarr.json")
#: reads in the fuzzer may declare chunks up to this size (the default is 4 GiB)
MAX_CHUNK_BYTES = 8 * 2**20

JSON_TOKENS = [
    b'"zarr_format": 2', b'"zarr_format": 3', b'"node_type": "array"', b'"node_type": "group"',
    b'"shape": ', b'"chunks": ', b'"dtype": ', b'"data_type": ', b'"fill_value": ', b'"order": "F"',
    b'"filters": ', b'"compressor": ', b'"codecs": ', b'"chunk_grid": ', b'"chunk_key_encoding": ',
    b'"dimension_separator": "/"', b'"separator": "."', b'"attributes": ', b'"metadata": ',
    b'"consolidated_metadata": ', b'"kind": "inline"', b'"must_understand": false',
    b'"name": "regular"', b'"name": "rectilinear"', b'"name": "sharding_indexed"',
    b'"name": "bytes"', b'"name": "transpose"', b'"name": "crc32c"', b'"name": "blosc"',
    b'"name": "vlen-utf8"', b'"name": "gzip"', b'"name": "zstd"', b'"name": "numcodecs.delta"',
    b'"configuration": ', b'"chunk_shape": ', b'"index_location": "start"', b'"index_codecs": ',
    b'"endian": "big"', b'"id": "blosc"', b'"id": "zlib"', b'"id": "delta"', b'"id": "vlen-utf8"',
    b'"id": "categorize"', b'"id": "fixedscaleoffset"', b'"id": "astype"', b'"storage_transformers": ',
    b'"dimension_names": ', b'"<i4"', b'">f8"', b'"|O"', b'"<U3"', b'"|S2"', b'"<M8[ns]"', b'"|V4"',
    b'"float16"', b'"uint64"', b'"complex128"', b'"string"', b'"bool"', b'"r24"', b'"NaN"',
    b'"Infinity"', b'"0x7fc00000"', b'"AAAA"', b"[[", b"]]", b"{}", b"[]", b",", b":", b"null",
    b"true", b"false", b"-", b"e9", b"..", b"/", b"\\u0000", b'"../"', b'"a/b"',
]


# =============================================================================================
# reading a store the way a user does


def _check_shape(got: Any, shape: tuple[int, ...], dtype: Any, what: str) -> None:
    if not isinstance(got, np.ndarray):
        got = np.asarray(got)
    if got.shape != shape:
        raise OracleError(f"{what}: shape {got.shape}, expected {shape}")
    if dtype is not None and got.dtype != dtype:
        raise OracleError(f"{what}: dtype {got.dtype}, expected {dtype}")


def touch(node: Any, depth: int = 0) -> None:
    """Read a little of everything reachable from ``node`` (arrays: a corner of at most 3 per
    dimension; groups: 4 levels, 16 members each)."""
    node.attrs.asdict()
    repr(node)
    if isinstance(node, zarrkit.Array):
        shape = node.shape
        sel = tuple(slice(0, 3) for _ in shape)
        got = node[sel] if shape else node[()]
        if shape:
            _check_shape(got, tuple(min(3, s) for s in shape), None, f"corner of {node.path!r}")
        node.nchunks_initialized
        str(node.info)
        return
    if depth >= 4:
        return
    for name in list(node)[:16]:
        touch(node[name], depth + 1)


def _memory_store(items: dict[str, bytes]) -> zarrkit.MemoryStore:
    store = zarrkit.MemoryStore()
    for k, v in items.items():
        store[k] = v
    return store


def _snapshot(store: Any) -> dict[str, bytes]:
    return {k: bytes(store[k]) for k in sorted(store)}


# =============================================================================================
# metadata


def _metadata_bases() -> list[dict[str, bytes]]:
    bases = []
    i4 = np.arange(48, dtype="<i4").reshape(6, 8)

    s = zarrkit.MemoryStore()
    z = zarrkit.create(shape=(6, 8), chunks=(4, 3), dtype="<i4", zarr_format=2, store=s,
                       compressor=zarrkit.Blosc(cname="zstd", clevel=1, shuffle=2),
                       filters=[numcodecs.Delta(dtype="<i4")], fill_value=-1)
    z[...] = i4
    z.attrs.update({"title": "t", "list": [1, 2.5, None], "deep": {"a": {"b": [True]}}})
    bases.append(_snapshot(s))

    s = zarrkit.MemoryStore()
    z = zarrkit.create(shape=(9,), chunks=(4,), dtype="<U4", zarr_format=2, store=s,
                       order="F", dimension_separator="/", compressor=numcodecs.Zlib(1), fill_value="")
    z[:5] = ["a", "bc", "def", "ghij", ""]
    bases.append(_snapshot(s))

    s = zarrkit.MemoryStore()
    z = zarrkit.create(shape=(5, 2), chunks=(2, 2), dtype=[("t", "<M8[s]"), ("v", "<f4", (2,))],
                       zarr_format=2, store=s, compressor=None)
    z[...] = np.zeros((5, 2), dtype=z.dtype)
    bases.append(_snapshot(s))

    s = zarrkit.MemoryStore()
    z = zarrkit.create(shape=(6,), chunks=(4,), dtype=object, object_codec=numcodecs.VLenUTF8(),
                       zarr_format=2, store=s, filters=[numcodecs.Categorize(["x", "yy"], dtype=object)],
                       compressor=None)
    z[...] = np.array(["x", "yy", "x", "", "yy", "x"], dtype=object)
    bases.append(_snapshot(s))

    s = zarrkit.MemoryStore()
    g = zarrkit.group(s, zarr_format=2)
    g.attrs["root"] = 1
    g.create_group("a").create_group("b").full("c", shape=(3, 3), chunks=(2, 2), fill_value=2.5,
                                               dtype="<f8")
    g.zeros("z", shape=(4,), chunks=(3,), dtype="|u1")[...] = 7
    zarrkit.consolidate_metadata(s)
    bases.append(_snapshot(s))

    s = zarrkit.MemoryStore()
    z = zarrkit.create_array(
        s, shape=(6, 8), chunks=(4, 3), dtype="float32", zarr_format=3, fill_value=float("nan"),
        dimension_names=["y", None], attributes={"u": "K"},
        codecs=[{"name": "transpose", "configuration": {"order": [1, 0]}},
                {"name": "bytes", "configuration": {"endian": "big"}},
                {"name": "zstd", "configuration": {"level": 1, "checksum": True}},
                {"name": "crc32c"}],
    )
    z[...] = i4.astype("f4")
    bases.append(_snapshot(s))

    s = zarrkit.MemoryStore()
    z = zarrkit.create_array(s, shape=(7, 6), chunks=(2, 3), shards=(4, 6), dtype="int16",
                             zarr_format=3, fill_value=0, chunk_key_encoding={"name": "v2"})
    z[...] = np.arange(42, dtype="i2").reshape(7, 6)
    bases.append(_snapshot(s))

    s = zarrkit.MemoryStore()
    z = zarrkit.create_array(s, shape=(5,), chunks=(2,), dtype=str, zarr_format=3)
    z[...] = np.array(["", "a", "bb", "ccc", "é"], dtype=object)
    bases.append(_snapshot(s))

    s = zarrkit.MemoryStore()
    z = zarrkit.create_array(s, shape=(3, 4), chunks=(2, 2), dtype="complex64", zarr_format=3,
                             fill_value=complex(1, 2), compressors=[{"name": "gzip", "configuration": {"level": 1}}])
    z[...] = np.ones((3, 4), dtype="c8")
    bases.append(_snapshot(s))

    s = zarrkit.MemoryStore()
    g = zarrkit.group(s, zarr_format=3, attributes={"root": [1]})
    g.create_group("sub").zeros("x", shape=(5, 5), chunks=(2, 5), dtype="uint8")[...] = 1
    zarrkit.create_array(s, name="y", shape=(8,), chunks=(2,), shards=(4,), dtype="bool")[...] = True
    zarrkit.consolidate_metadata(s)
    bases.append(_snapshot(s))
    return bases


#: values a structural mutation puts into a document
JSON_VALUES: list[Any] = [
    None, True, False, 0, 1, -1, 2, 3, 7, 255, 256, 65535, 2**31 - 1, 2**31, 2**32, 2**53 + 1,
    2**63 - 1, 2**63, 2**64, -(2**63), 10**30, 0.5, -0.0, 1.5e300, float("nan"), float("inf"),
    float("-inf"), "", "a", "é", "\x00", "..", "/", ".", "\\", "../x", "NaN", "-Infinity",
    "0x7ff8000000000001", "AAAAAAAAAAA=", "<i8", ">u2", "|b1", "<f2", "<c16", "|O", "<U0", "|S0",
    "|V0", "<m8[ns]", "<M8[D]", "<M8[7s]", "int8", "uint64", "float16", "complex64", "string",
    "bytes", "r8", "r0", "bool", "C", "F", "start", "end", "big", "little", "inline", "array",
    "group", "regular", "rectilinear", "default", "v2", "bogus", "numcodecs.pickle",
    [], [0], [1], [-1], [0, 0], [1, 1], [2**62, 2**62], [2**32] * 3, [[1, 2], [3]], [None], ["x"],
    [1] * 40, {}, {"name": "bytes"}, {"name": "bytes", "configuration": {"endian": "big"}},
    {"name": "crc32c"}, {"name": "gzip", "configuration": {"level": 9}},
    {"name": "transpose", "configuration": {"order": [0]}},
    {"name": "sharding_indexed", "configuration": {"chunk_shape": [1], "codecs": [{"name": "bytes"}]}},
    {"name": "regular", "configuration": {"chunk_shape": [1]}},
    {"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": [[1, 2], 3]}},
    {"id": "zlib", "level": 1}, {"id": "blosc", "cname": "lz4", "clevel": 1, "shuffle": -1},
    {"id": "delta", "dtype": "<i8"}, {"id": "vlen-bytes"}, {"id": "pickle"}, {"id": "json2"},
    {"zarr_format": 2}, {"zarr_format": 3, "node_type": "group"},
    {"kind": "inline", "must_understand": False, "metadata": {}},
]
FIELDS = ["zarr_format", "node_type", "shape", "chunks", "dtype", "data_type", "fill_value", "order",
          "filters", "compressor", "codecs", "chunk_grid", "chunk_key_encoding", "dimension_separator",
          "attributes", "dimension_names", "storage_transformers", "consolidated_metadata", "metadata",
          "zarr_consolidated_format", "must_understand", "name", "configuration", "id", "kind",
          "chunk_shape", "chunk_shapes", "codecs", "index_codecs", "index_location", "separator", "endian",
          "order", "level", "cname", "shuffle", "typesize", "blocksize", "checksum", "x/.zarray",
          "sub/zarr.json", "../.zattrs", ""]


def _locations(doc: Any, depth: int = 0) -> list[tuple[Any, Any]]:
    """Every (container, key or index) inside a parsed document, 10 levels deep at most."""
    out: list[tuple[Any, Any]] = []
    if depth > 10:
        return out
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    for k, v in list(items)[:32]:
        out.append((doc, k))
        out.extend(_locations(v, depth + 1))
    return out


def mutate_json(doc: Any, rng: Any, donors: list[Any]) -> Any:
    """One structural change to a parsed JSON document (replace, delete, add, retype, splice
    a subtree of another document, duplicate, wrap); returns the new document."""
    places = _locations(doc)
    op = rng.randrange(8)
    if not places or op == 7:  # the whole document
        return rng.choice([rng.choice(JSON_VALUES), [doc], {"a": doc}, rng.choice(donors)])
    container, key = rng.choice(places)
    value = container[key]
    if op == 0:
        container[key] = json.loads(json.dumps(rng.choice(JSON_VALUES)))
    elif op == 1:
        del container[key]
    elif op == 2:
        extra = json.loads(json.dumps(rng.choice(JSON_VALUES)))
        target = value if isinstance(value, (dict, list)) else container
        if isinstance(target, dict):
            target[rng.choice(FIELDS)] = extra
        else:
            target.insert(rng.randrange(len(target) + 1), extra)
    elif op == 3:  # another type holding the same
        options = [str(value), [value], {"name": value}]
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            options += [float(value), -value, value * 2**32, value + 1, value - 1]
        if isinstance(value, list):
            options += [value[:-1], value + value, [v * 2**31 if isinstance(v, int) else v for v in value]]
        if isinstance(value, str):
            options += [value.upper(), value[:-1], value + value, value.encode("utf-8", "replace").hex()]
        container[key] = rng.choice(options)
    elif op == 4:  # a subtree of another document
        donor_places = _locations(rng.choice(donors))
        if donor_places:
            c, k = rng.choice(donor_places)
            container[key] = json.loads(json.dumps(c[k], allow_nan=True))
    elif op == 5 and isinstance(container, list):
        container.insert(key, json.loads(json.dumps(value, allow_nan=True)))
    else:
        container[key] = [value] if rng.random() < 0.5 else {"configuration": value}
    return doc


class MetadataTarget:
    name = "metadata"
    max_len = 8192
    dictionary = tuple(JSON_TOKENS)
    coverage_parts = ("metadata", "core/group.py", "core/navigation.py", "api/opening.py")

    @functools.cached_property
    def bases(self) -> list[dict[str, bytes]]:
        return _metadata_bases()

    @staticmethod
    def meta_keys(base: dict[str, bytes]) -> list[str]:
        return [k for k in base if k.rsplit("/", 1)[-1] in META_NAMES]

    def seeds(self) -> list[bytes]:
        return [bytes([i]) + SEP.join(base[k] for k in self.meta_keys(base))
                for i, base in enumerate(self.bases)]

    @functools.cached_property
    def donors(self) -> list[Any]:
        return [json.loads(base[k]) for base in self.bases for k in self.meta_keys(base)]

    def mutate(self, data: bytes, rng: Any) -> bytes | None:
        """A structural mutation of one document of the input (``None``: not JSON, mutate the
        bytes instead)."""
        if not data:
            return None
        docs = data[1:].split(SEP)
        i = rng.randrange(len(docs))
        try:
            doc = json.loads(docs[i])
        except (ValueError, RecursionError):
            return None
        for _ in range(1 + (rng.random() < 0.3)):
            doc = mutate_json(doc, rng, self.donors)
        docs[i] = json.dumps(doc, allow_nan=True).encode("utf-8", "surrogatepass")
        head = data[:1] if rng.random() < 0.95 else bytes([rng.randrange(len(self.bases))])
        return head + SEP.join(docs)

    def describe(self, data: bytes) -> str:
        return f"base {data[0] % len(self.bases)}" if data else "-"

    def store_of(self, data: bytes) -> dict[str, bytes]:
        if not data:
            return {}
        base = self.bases[data[0] % len(self.bases)]
        items = dict(base)
        for key, doc in zip(self.meta_keys(base), data[1:].split(SEP)):
            items[key] = doc
        return items

    def run(self, data: bytes) -> None:
        items = self.store_of(data)
        with zarrkit.config.set(max_chunk_bytes=MAX_CHUNK_BYTES):
            store = _memory_store(items)
            touch(zarrkit.open(store, mode="r"))
            if ".zmetadata" in items or b"consolidated_metadata" in items.get("zarr.json", b""):
                touch(zarrkit.open_consolidated(store, mode="r"))


# =============================================================================================
# chunks

SHAPE, CHUNKS = (7, 5), (4, 5)  # two chunks: one whole, one at the edge


def _chunk_configs() -> list[tuple[str, dict[str, bytes], list[str], np.dtype]]:
    i4 = np.arange(35, dtype="<i4").reshape(SHAPE) * 37 - 600
    f8 = np.linspace(-3, 3, 35).reshape(SHAPE)
    text = np.array([("ab" * i)[: i % 5] for i in range(35)], dtype=object).reshape(SHAPE)
    raw = np.array([bytes(range(i % 6)) for i in range(35)], dtype=object).reshape(SHAPE)
    out = []

    def v2(name, dtype, data, **kw):
        s = zarrkit.MemoryStore()
        z = zarrkit.create(shape=SHAPE, chunks=CHUNKS, dtype=dtype, zarr_format=2, store=s, **kw)
        z[...] = data
        out.append((f"v2-{name}", _snapshot(s), ["0.0", "1.0"], z.dtype))

    def v3(name, dtype, data, codecs, **kw):
        s = zarrkit.MemoryStore()
        z = zarrkit.create_array(s, shape=SHAPE, chunks=CHUNKS, dtype=dtype, zarr_format=3,
                                 codecs=codecs, **kw)
        z[...] = data
        out.append((f"v3-{name}", _snapshot(s), ["c/0/0", "c/1/0"], z.dtype))

    nc = numcodecs
    v2("raw", "<i4", i4, compressor=None)
    v2("blosc-lz4-shuffle", "<i4", i4, compressor=nc.Blosc("lz4", 5, 1))
    v2("blosc-zstd-bitshuffle", "<f8", f8, compressor=nc.Blosc("zstd", 3, 2))
    v2("blosc-zlib-noshuffle", "<i4", i4, compressor=nc.Blosc("zlib", 1, 0), order="F")
    v2("blosc-blosclz", "|u1", i4.astype("u1"), compressor=nc.Blosc("blosclz", 9, 1))
    v2("zlib", "<i4", i4, compressor=nc.Zlib(1))
    v2("gzip", ">i4", i4, compressor=nc.GZip(1))
    v2("zstd", "<f8", f8, compressor=nc.Zstd(1))
    v2("lz4", "<i4", i4, compressor=nc.LZ4())
    v2("bz2", "<i4", i4, compressor=nc.BZ2(1))
    v2("lzma", "<i4", i4, compressor=nc.LZMA())
    v2("crc32", "<i4", i4, compressor=nc.CRC32())
    v2("fletcher32", "<i4", i4, compressor=nc.Fletcher32())
    v2("base64", "<i4", i4, compressor=nc.Base64())
    v2("delta-shuffle-zstd", "<i4", i4, compressor=nc.Zstd(1),
       filters=[nc.Delta(dtype="<i4"), nc.Shuffle(elementsize=4)])
    v2("fixedscaleoffset", "<f8", f8, compressor=None,
       filters=[nc.FixedScaleOffset(offset=0, scale=100, dtype="<f8", astype="<i2")])
    v2("quantize-astype", "<f8", f8, compressor=nc.Zlib(1),
       filters=[nc.Quantize(digits=2, dtype="<f8"), nc.AsType(encode_dtype="<f4", decode_dtype="<f8")])
    v2("packbits", "|b1", i4 > 0, compressor=None, filters=[nc.PackBits()])
    v2("bitround", "<f4", f8.astype("f4"), compressor=None, filters=[nc.BitRound(keepbits=6)])
    v2("vlen-utf8", object, text, object_codec=nc.VLenUTF8(), compressor=None)
    v2("vlen-bytes", object, raw, object_codec=nc.VLenBytes(), compressor=nc.Zlib(1))
    v2("vlen-array", object, np.array([np.arange(i % 4, dtype="<i4") for i in range(35)] + [None],
                                      dtype=object)[:35].reshape(SHAPE),
       object_codec=nc.VLenArray("<i4"), compressor=None)
    v2("json2", object, text, object_codec=nc.JSON(), compressor=None)
    v2("msgpack2", object, text, object_codec=nc.MsgPack(), compressor=None)
    v2("categorize", object, text, object_codec=nc.VLenUTF8(), compressor=None,
       filters=[nc.Categorize(labels=sorted(set(text.ravel())), dtype=object)])
    v2("unicode", "<U3", i4.astype("U3"), compressor=nc.LZ4())
    v2("bytes", "|S2", i4.astype("S2"), compressor=None)
    v2("datetime", "<M8[ms]", i4.astype("M8[ms]"), compressor=None)
    v2("structured", [("a", "<i2"), ("b", ">f4", (2,))], np.ones(SHAPE, [("a", "<i2"), ("b", ">f4", (2,))]),
       compressor=nc.Blosc("lz4", 1, 1))

    B = {"name": "bytes", "configuration": {"endian": "little"}}
    v3("bytes", "int32", i4, [B])
    v3("bytes-big", "float64", f8, [{"name": "bytes", "configuration": {"endian": "big"}}])
    v3("transpose-blosc", "int32", i4, [{"name": "transpose", "configuration": {"order": [1, 0]}}, B,
                                        {"name": "blosc", "configuration": {
                                            "cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 4,
                                            "blocksize": 0}}])
    v3("gzip-crc32c", "int32", i4, [B, {"name": "gzip", "configuration": {"level": 1}}, {"name": "crc32c"}])
    v3("zstd-checksum", "int32", i4, [B, {"name": "zstd", "configuration": {"level": 1, "checksum": True}}])
    v3("numcodecs-delta-lzma", "int32", i4, [{"name": "numcodecs.delta", "configuration": {"dtype": "<i4"}},
                                             B, {"name": "numcodecs.lzma"}])
    v3("numcodecs-checksums", "int32", i4, [B, {"name": "numcodecs.fletcher32"},
                                            {"name": "numcodecs.jenkins_lookup3"}, {"name": "numcodecs.adler32"}])
    v3("vlen-utf8", "string", text.astype(str), [{"name": "vlen-utf8"}])
    v3("vlen-bytes-zstd", "bytes", raw, [{"name": "vlen-bytes"}, {"name": "zstd", "configuration": {"level": 1}}])
    v3("packbits", "bool", i4 > 0, [{"name": "packbits", "configuration": {}}])
    v3("bitround", "float32", f8.astype("f4"), [{"name": "bitround", "configuration": {"keepbits": 5}}, B])
    v3("cast-value", "float64", f8, [{"name": "cast_value", "configuration": {"data_type": "float32"}}, B])
    v3("scale-offset", "float64", f8, [{"name": "scale_offset", "configuration": {"offset": 1, "scale": 10}}, B])
    v3("zfp", "float64", f8, [{"name": "zfp", "configuration": {"mode": "fixed_rate", "rate": 16}}])
    for name, codecs in (("pcodec", [{"name": "numcodecs.pcodec", "configuration": {}}]),
                         ("zfpy", [{"name": "numcodecs.zfpy", "configuration": {
                             "mode": 4, "tolerance": -1, "rate": -1, "precision": -1}}])):
        try:
            v3(name, "float64", f8, codecs)
        except ZarrkitError:  # the optional package is not installed
            pass
    return out


class ChunkTarget:
    name = "chunk"
    max_len = 4096
    dictionary = (b"\x02\x01", b"\x02\x01\x21\x04", b"\x1f\x8b\x08\x00", b"\x28\xb5\x2f\xfd", b"x\x01",
                  b"x\x9c", b"BZh9", b"\xfd7zXZ\x00", b"\x00\x00\x00\x00", b"\xff\xff\xff\xff",
                  b"\xff\xff\xff\x7f", b"\x00\x00\x00\x80", b"\x23\x00\x00\x00", b"\x14\x00\x00\x00",
                  b'"', b"[", b"\x92\xa1", b"\xdd\x00\x00\x00\x14")
    coverage_parts = ("codecs", "core/chunks.py", "core/read.py", "metadata/value_codecs.py")

    @functools.cached_property
    def configs(self) -> list[tuple[str, dict[str, bytes], list[str], np.dtype]]:
        return _chunk_configs()

    def seeds(self) -> list[bytes]:
        n = len(self.configs)
        return [bytes([i + n * j]) + base[keys[j]] for i, (_, base, keys, _) in enumerate(self.configs)
                for j in range(2) if i + n * j < 256]

    def describe(self, data: bytes) -> str:
        n = len(self.configs)
        h = data[0] if data else 0
        return f"{self.configs[h % n][0]} {self.configs[h % n][2][(h // n) % 2]}"

    def pick(self, data: bytes) -> tuple[dict[str, bytes], str, np.dtype]:
        n = len(self.configs)
        h = data[0] if data else 0
        _, base, keys, dtype = self.configs[h % n]
        items = dict(base)
        key = keys[(h // n) % 2]
        items[key] = data[1:]
        return items, key, dtype

    def run(self, data: bytes) -> None:
        items, key, dtype = self.pick(data)
        read_checked(items, key, dtype, [(Ellipsis, SHAPE), ((slice(1, 6), slice(1, 4)), (5, 3))])


def read_checked(items: dict[str, bytes], key: str, dtype: np.dtype, selections: list, store: Any = None) -> None:
    """Read the selections of an array whose only damaged object is ``key``: each gives the
    right shape and dtype, or a :class:`ChunkDecodeError` (any other error is a finding)."""
    with zarrkit.config.set(max_chunk_bytes=MAX_CHUNK_BYTES):
        z = zarrkit.open_array(store if store is not None else _memory_store(items), mode="r")
        for sel, shape in selections:
            try:
                got = z[sel]
            except ChunkDecodeError:
                continue
            except ZarrkitError as exc:
                raise OracleError(f"damaged {key!r}: {type(exc).__name__} instead of "
                                  f"ChunkDecodeError: {exc}"[:300]) from exc
            _check_shape(got, shape, dtype, f"read {sel!r} of damaged {key!r}")


# =============================================================================================
# shards

SHARD_SHAPE = (7, 6)  # shards of (4, 6): one whole, one at the edge; inner chunks (2, 3)


def _shard_configs() -> list[tuple[str, dict[str, bytes], int, bool, bool]]:
    """(name, store, index bytes, index at end, index checksummed)."""
    out = []
    data = np.arange(42, dtype="<i4").reshape(SHARD_SHAPE) * 11 - 100
    data[0:2, 0:3] = 0  # one empty inner chunk
    B = {"name": "bytes", "configuration": {"endian": "little"}}
    inners = {
        "bytes": [B],
        "gzip": [B, {"name": "gzip", "configuration": {"level": 1}}],
        "crc32c": [B, {"name": "crc32c"}],
        "blosc": [B, {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 1, "shuffle": "bitshuffle",
                                                         "typesize": 4, "blocksize": 0}}],
        "nested": [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [1, 3], "codecs": [B], "index_codecs": [B]}}],
    }
    for inner_name, inner in inners.items():
        for loc in ("end", "start"):
            for crc in (True, False):
                if inner_name in ("nested", "blosc") and loc == "start" and not crc:
                    continue
                index = [B, {"name": "crc32c"}] if crc else [B]
                s = zarrkit.MemoryStore()
                z = zarrkit.create_array(s, shape=SHARD_SHAPE, chunks=(4, 6), dtype="int32", zarr_format=3,
                                         fill_value=0, codecs=[{"name": "sharding_indexed", "configuration": {
                                             "chunk_shape": [2, 3], "codecs": inner, "index_codecs": index,
                                             "index_location": loc}}])
                z[...] = data
                n = 2 * 2 * 16 + (4 if crc else 0)
                out.append((f"{inner_name}-{loc}-{'crc' if crc else 'plain'}", _snapshot(s), n, loc == "end", crc))
    return out


def _scratch_folder() -> str:
    """A new folder for the files of the cases (in memory where the system has one)."""
    shm = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    folder = tempfile.mkdtemp(prefix="zarrkit-fuzz-", dir=shm)
    atexit.register(shutil.rmtree, folder, True)
    return folder


class _NoPartialReads(zarrkit.storage.Store):
    """A read-only store over a dict that cannot read part of a value (whole shards are read)."""

    supports_partial_reads = False

    def __init__(self, items: dict[str, bytes]):
        self.items = items
        self.read_only = True

    def _get(self, key, byte_range):
        value = self.items.get(key)
        if value is None or byte_range is None:
            return value
        raise AssertionError("a partial read from a store that says it has none")

    def list_prefix(self, prefix):
        return iter([k for k in self.items if k.startswith(prefix)])

    def list_dir(self, prefix=""):
        names = {k[len(prefix):].split("/", 1)[0] for k in self.items if k.startswith(prefix)}
        return iter(sorted(names))


class ShardTarget:
    name = "shard"
    max_len = 4096
    dictionary = (b"\xff" * 8, b"\x00" * 8, b"\xfe\xff\xff\xff\xff\xff\xff\xff", b"\x10\x00\x00\x00\x00\x00\x00\x00",
                  b"\x00\x00\x00\x00\x00\x00\x00\x80", b"\x18\x00\x00\x00", b"\x1f\x8b\x08\x00", b"\x02\x01\x21\x04")
    coverage_parts = ("codecs/sharding", "core/read.py", "core/chunks.py")

    @functools.cached_property
    def configs(self) -> list[tuple[str, dict[str, bytes], int, bool, bool]]:
        return _shard_configs()

    def seeds(self) -> list[bytes]:
        out = []
        for i, (_, base, _, _, crc) in enumerate(self.configs):
            for key in ("c/0/0", "c/1/0"):
                for flags in ((1, 2, 9) if crc else (0, 2, 8)):
                    out.append(bytes([i, flags + (4 if key == "c/1/0" else 0)]) + base[key])
        return out

    @functools.cached_property
    def folder(self) -> str:
        return _scratch_folder()

    def directory(self, items: dict[str, bytes]) -> Any:
        """The store as files of a directory (read through the shard index cache and the
        shard versions a local directory has)."""
        for key, value in items.items():
            path = os.path.join(self.folder, *key.split("/"))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(value)
        return zarrkit.DirectoryStore(self.folder, read_only=True)

    def describe(self, data: bytes) -> str:
        if len(data) < 2:
            return "-"
        return f"{self.configs[data[0] % len(self.configs)][0]} {'c/1/0' if data[1] & 4 else 'c/0/0'}"

    def run(self, data: bytes) -> None:
        if len(data) < 2:
            return
        _, base, n, at_end, crc = self.configs[data[0] % len(self.configs)]
        flags = data[1]
        key = "c/1/0" if flags & 4 else "c/0/0"
        shard = bytearray(data[2:])
        if crc and flags & 1 and len(shard) >= n:  # the checksum made to fit the damaged index
            lo = len(shard) - n if at_end else 0
            shard[lo + n - 4: lo + n] = google_crc32c.value(bytes(shard[lo: lo + n - 4])).to_bytes(4, "little")
        items = dict(base)
        items[key] = bytes(shard)
        store = _NoPartialReads(items) if flags & 2 else self.directory(items) if flags & 8 else None
        read_checked(items, key, np.dtype("int32"), [
            ((slice(0, 2), slice(0, 3)), (2, 3)),  # one inner chunk (the empty one, in shard 0)
            ((slice(4, 6), slice(3, 6)), (2, 3)),  # one inner chunk of shard 1
            ((slice(1, 7), slice(2, 5)), (6, 3)),  # inner chunks of both, partly
            (Ellipsis, SHARD_SHAPE),
        ], store)


# =============================================================================================
# zip files


def _zip_seeds() -> list[bytes]:
    out = []
    for compression in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2):
        buf = io.BytesIO()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with zipfile.ZipFile(buf, "w", compression=compression) as zf:
                s = zarrkit.MemoryStore()
                g = zarrkit.group(s, zarr_format=2)
                g.attrs["k"] = "v"
                g.zeros("a", shape=(6, 4), chunks=(3, 4), dtype="<i2", compressor=None)[...] = 3
                zarrkit.create_array(s, name="b", shape=(4, 4), chunks=(2, 2), shards=(4, 4), dtype="uint8",
                                     zarr_format=3)[...] = 9
                for k in sorted(s):
                    zf.writestr(k, bytes(s[k]))
                zf.comment = b"zarr"
        out.append(buf.getvalue())
    # a file flushed once and written to again: an old central directory inside it
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(".zgroup", json.dumps({"zarr_format": 2}))
    with zipfile.ZipFile(buf, "a") as zf:
        zf.writestr("x/.zarray", json.dumps({
            "zarr_format": 2, "shape": [3], "chunks": [3], "dtype": "|i1", "compressor": None,
            "fill_value": 0, "order": "C", "filters": None}))
        zf.writestr("x/0", b"\x01\x02\x03")
    out.append(buf.getvalue())
    return out


class ZipTarget:
    name = "zip"
    max_len = 16384
    dictionary = (b"PK\x03\x04", b"PK\x01\x02", b"PK\x05\x06", b"PK\x06\x06", b"PK\x06\x07", b"PK\x07\x08",
                  b"\xff\xff\xff\xff", b"\xff\xff", b"\x00\x00\x00\x00", b"\x01\x00", b"\x08\x00", b"\x0c\x00",
                  b"\x0e\x00", b"\x5d\x00", b"../", b"/", b".zarray", b"zarr.json", b"\x01\x00\x08\x00")
    coverage_parts = ("storage/zip.py", "storage/keys.py", "storage/base.py")

    def seeds(self) -> list[bytes]:
        return _zip_seeds()

    @functools.cached_property
    def path(self) -> str:
        return os.path.join(_scratch_folder(), "case.zip")

    def run(self, data: bytes) -> None:
        with open(self.path, "wb") as f:
            f.write(data)
        with zarrkit.config.set(max_chunk_bytes=MAX_CHUNK_BYTES):
            # an open file is read through the same zipfile code, but opened apart from a path
            try:
                ZipStore(io.BytesIO(data), mode="r").close()
            except ZarrkitError:
                pass
            store = ZipStore(self.path, mode="r")
            try:
                for key in list(store.list_prefix(""))[:64]:
                    whole = store.get(key)
                    tail = store.get(key, ByteRange(-8))
                    if whole is None or tail is None or tail != whole[-8:]:
                        raise OracleError(f"member {key!r}: listed, read back as {whole!r:.40} / tail {tail!r:.40}")
                    store.getsize(key)
                touch(zarrkit.open(store, mode="r"))
            finally:
                store.close()


TARGETS = {t.name: t for t in (MetadataTarget(), ChunkTarget(), ShardTarget(), ZipTarget())}
