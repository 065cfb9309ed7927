"""zarr-python 3's ``zarr.codecs.numcodecs``: the numcodecs codecs as Zarr v3 codec objects
under their ``numcodecs.<id>`` names (``Delta(dtype='int32')`` for ``filters=``,
``LZMA(preset=1)`` for ``compressors=``), and the wrappers the registry makes of them when
it reads those names in ``zarr.json``.

Examples
--------
>>> from zarrkit.codecs.numcodecs import Delta
>>> Delta(dtype='int32').to_json()
{'name': 'numcodecs.delta', 'configuration': {'dtype': 'int32'}}
"""

from __future__ import annotations

import math
from typing import Any, cast

import numcodecs as _numcodecs
import numcodecs.registry
import numpy as np

from ..errors import MetadataError
from .base import ArrayArrayCodec, ArrayBytesCodec, ChunkSpec
from .bounded import NumcodecsBytes, decode_limited


class _NumcodecsWrapper:
    """What the ``numcodecs.<id>`` codecs share: a numcodecs codec under its v3 name, with the
    configuration kept as written in ``zarr.json`` (or as given), shown as zarr-python 3 shows
    it: ``Delta(codec_name='numcodecs.delta', codec_config={...})``."""

    name: str

    def __init__(self, name: str, codec: Any, config: dict[str, Any] | None = None):
        self.name = name
        self.codec = codec
        self._given = config

    def configuration(self) -> dict[str, Any]:
        if self._given is not None:
            return dict(self._given)
        return {k: v for k, v in self.codec.get_config().items() if k != "id"}

    def __repr__(self) -> str:
        return f"{type(self.codec).__name__}(codec_name={self.name!r}, codec_config={self.configuration()!r})"


class NumcodecsArrayArrayCodec(_NumcodecsWrapper, ArrayArrayCodec):
    """A numcodecs filter (delta, fixedscaleoffset, quantize, bitround, packbits, astype)."""

    def validate(self, spec: ChunkSpec) -> None:
        # numeric filters: a variable-length array needs an object codec before any of them
        if (spec.dtype.hasobject or spec.dtype.kind == "T") and self.codec.codec_id != "categorize":
            raise MetadataError(f"{self.name} codec cannot filter variable-length dtype {spec.dtype}")

    def _out_dtype(self, spec: ChunkSpec) -> np.dtype:
        for attr in ("astype", "encode_dtype"):
            v = getattr(self.codec, attr, None)
            if v is not None:
                return cast(np.dtype, np.dtype(v))  # v is an attribute of an untyped numcodecs codec
        if self.codec.codec_id == "packbits":
            return np.dtype("u1")
        return spec.dtype

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        if self.codec.codec_id == "packbits":
            n = int(np.prod(spec.shape, dtype=np.int64))
            return ChunkSpec((1 + (n + 7) // 8,), np.dtype("u1"), 0)
        return ChunkSpec(spec.shape, self._out_dtype(spec), spec.fill_value)

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        out = np.asarray(self.codec.encode(np.ascontiguousarray(chunk)))
        return out.reshape(self.resolve(spec).shape)

    def decode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        out = np.asarray(self.codec.decode(np.ascontiguousarray(chunk)))
        if spec.dtype.hasobject and out.dtype != spec.dtype:  # categorize's labels into a StringDType array
            return out.astype(spec.dtype).reshape(spec.shape)
        return out.view(spec.dtype).reshape(spec.shape) if out.dtype != spec.dtype else out.reshape(spec.shape)


class NumcodecsBytesBytesCodec(_NumcodecsWrapper, NumcodecsBytes):
    """A numcodecs compressor or checksum under its ``numcodecs.<id>`` name."""


class NumcodecsArrayBytesCodec(_NumcodecsWrapper, ArrayBytesCodec):
    """A numcodecs codec that turns arrays into bytes itself (``numcodecs.pcodec``,
    ``numcodecs.zfpy``), as zarr-python registers them: the chunk's serializer."""

    def validate(self, spec: ChunkSpec) -> None:
        # these codecs decode numbers: never a reason to view bytes as Python object references
        if spec.dtype.hasobject or spec.dtype.kind == "T":
            raise MetadataError(f"{self.name} codec cannot serialise variable-length dtype {spec.dtype}")

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> bytes:
        return bytes(memoryview(self.codec.encode(np.ascontiguousarray(chunk, dtype=spec.dtype))).cast("B"))

    def decode(self, data: Any, spec: ChunkSpec) -> np.ndarray:
        n = math.prod(spec.shape)
        out = np.asarray(decode_limited(self.codec, bytes(memoryview(data).cast("B")), n * spec.dtype.itemsize))
        if out.size != n:
            raise ValueError(f"{self.name}: decoded {out.size} elements, expected {n}")
        return out.reshape(-1).view(spec.dtype).reshape(spec.shape) if out.dtype != spec.dtype else out.reshape(spec.shape)


#: numcodecs codecs that are array→array under their ``numcodecs.<id>`` v3 names
_NUMCODECS_ARRAY = {"delta", "bitround", "fixedscaleoffset", "quantize", "packbits", "astype", "categorize"}
#: numcodecs codecs that serialise an array themselves (array→bytes), with the package each needs
NUMCODECS_SERIALIZERS = {"pcodec": "pcodec", "zfpy": "zfpy"}
#: numcodecs codecs that are bytes→bytes under their ``numcodecs.<id>`` v3 names
_NUMCODECS_BYTES = {
    "blosc", "lz4", "zstd", "zlib", "gzip", "bz2", "lzma", "shuffle",
    "crc32", "crc32c", "adler32", "fletcher32", "jenkins_lookup3", "base64",
}


_NAMES = {
    "Delta": "delta", "BitRound": "bitround", "FixedScaleOffset": "fixedscaleoffset", "Quantize": "quantize",
    "PackBits": "packbits", "AsType": "astype", "BZ2": "bz2", "LZMA": "lzma", "Zlib": "zlib", "GZip": "gzip",
    "Zstd": "zstd", "LZ4": "lz4", "Blosc": "blosc", "Shuffle": "shuffle", "CRC32": "crc32", "CRC32C": "crc32c",
    "Adler32": "adler32", "Fletcher32": "fletcher32", "JenkinsLookup3": "jenkins_lookup3", "PCodec": "pcodec",
    "ZFPY": "zfpy",
}


def _codec_class(class_name: str, codec_id: str) -> type:
    base: type[_NumcodecsWrapper] = NumcodecsBytesBytesCodec
    if codec_id in _NUMCODECS_ARRAY:
        base = NumcodecsArrayArrayCodec
    elif codec_id in NUMCODECS_SERIALIZERS:
        base = NumcodecsArrayBytesCodec

    def __init__(self: Any, **config: Any) -> None:
        codec = _numcodecs.get_codec({"id": codec_id, **config})
        # the configuration is stored as given, as zarr-python stores it
        base.__init__(self, f"numcodecs.{codec_id}", codec, dict(config))

    doc = f"numcodecs' ``{class_name}`` as the Zarr v3 codec ``numcodecs.{codec_id}``."
    namespace = {"__init__": __init__, "__doc__": doc, "__module__": __name__, "name": f"numcodecs.{codec_id}"}
    return type(class_name, (base,), namespace)


__all__ = []
for _class_name, _codec_id in _NAMES.items():
    if _codec_id not in _numcodecs.registry.codec_registry:
        continue  # its package is not installed (pcodec, zfpy)
    globals()[_class_name] = _codec_class(_class_name, _codec_id)
    __all__.append(_class_name)
