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

import functools
import math
from typing import Any, cast

import numcodecs as _numcodecs
import numcodecs.registry
import numpy as np
from numcodecs.abc import Codec as NumcodecsCodec

from ..errors import MetadataError, UnknownCodecError
from .base import ArrayArrayCodec, ArrayBytesCodec, ChunkSpec
from .bounded import NumcodecsBytes, decode_limited

CODEC_PREFIX = "numcodecs."


class _NumcodecsWrapper:
    """What the ``numcodecs.<id>`` codecs share: a numcodecs codec under its v3 name, with the
    configuration kept as written in ``zarr.json`` (or as given), shown as zarr-python 3 shows
    it: ``Delta(codec_name='numcodecs.delta', codec_config={...})``.

    The numcodecs codec is made when first used (:attr:`codec`), so a codec whose settings
    depend on the array (``FixedScaleOffset()`` without ``dtype``) can be given before the
    array exists; :meth:`evolve` fills them in.
    """

    name: str

    def __init__(self, name: str, codec: Any = None, config: dict[str, Any] | None = None):
        self.name = name
        if codec is not None:
            self.codec = codec
        elif config is None:
            raise TypeError(f"{name}: give the numcodecs codec or its configuration")
        self._given = None if config is None else {k: v for k, v in config.items() if k != "id"}

    @functools.cached_property
    def codec(self) -> Any:
        """The numcodecs codec doing the work, made from the configuration when first used.

        Raises
        ------
        UnknownCodecError
            When numcodecs has no codec of this id (its package is not installed).
        """
        codec_id = self.name.removeprefix(CODEC_PREFIX)
        if codec_id not in _numcodecs.registry.codec_registry:
            raise UnknownCodecError(f"codec {self.name!r}: numcodecs has no codec {codec_id!r}")
        return _numcodecs.get_codec({"id": codec_id, **(self._given or {})})

    def check_available(self) -> None:
        codec_id = self.name.removeprefix(CODEC_PREFIX)
        if codec_id not in _numcodecs.registry.codec_registry:
            raise UnknownCodecError(f"codec {self.name!r}: numcodecs has no codec {codec_id!r} (is its package installed?)")

    @property
    def _codec(self) -> Any:
        """zarr-python 3's name of :attr:`codec`."""
        return self.codec

    @property
    def codec_name(self) -> str:
        """The v3 name, ``numcodecs.<id>``."""
        return self.name

    @property
    def codec_config(self) -> dict[str, Any]:
        """The numcodecs configuration, with its ``id``."""
        return {"id": self.name.removeprefix(CODEC_PREFIX), **self.configuration()}

    def configuration(self) -> dict[str, Any]:
        if self._given is not None:
            return dict(self._given)
        return {k: v for k, v in self.codec.get_config().items() if k != "id"}

    def _with(self, **settings: Any) -> Any:
        """This codec with more settings (those the array decides), as a new codec."""
        config = {**self.configuration(), **settings}
        return _CLASSES[self.name](**config) if self.name in _CLASSES else type(self)(self.name, None, config)

    def __repr__(self) -> str:
        shown = type(self).__name__ if type(self).__name__ in _NAMES else type(self.codec).__name__
        return f"{shown}(codec_name={self.name!r}, codec_config={self.configuration()!r})"


class NumcodecsArrayArrayCodec(_NumcodecsWrapper, ArrayArrayCodec):
    """A numcodecs filter (delta, fixedscaleoffset, quantize, bitround, packbits, astype)."""

    def validate(self, spec: ChunkSpec) -> None:
        # numeric filters: a variable-length array needs an object codec before any of them
        if (spec.dtype.hasobject or spec.dtype.kind == "T") and self.name != "numcodecs.categorize":
            raise MetadataError(f"{self.name} codec cannot filter variable-length dtype {spec.dtype}")
        if self.name == "numcodecs.packbits" and spec.dtype != np.dtype(bool):
            raise MetadataError(f"{self.name}: the packbits filter requires bool dtype, got {spec.dtype}")

    def evolve(self, spec: ChunkSpec) -> Any:
        setting = _DTYPE_SETTINGS.get(self.name)
        if setting is None or self.configuration().get(setting) is not None:
            return self
        return self._with(**{setting: str(spec.dtype)})

    def _out_dtype(self, spec: ChunkSpec) -> np.dtype:
        config = self.configuration()
        for attr in ("astype", "encode_dtype"):
            v = config.get(attr)
            if v is not None:
                return cast(np.dtype, np.dtype(v))  # v is an attribute of an untyped numcodecs codec
        if self.name == "numcodecs.packbits":
            return np.dtype("u1")
        return spec.dtype

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        if self.name == "numcodecs.packbits":
            n = int(np.prod(spec.shape, dtype=np.int64))
            return ChunkSpec((1 + (n + 7) // 8,), np.dtype("u1"), 0)
        return ChunkSpec(spec.shape, self._out_dtype(spec), spec.fill_value)

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        out = np.asarray(self.codec.encode(np.ascontiguousarray(chunk)))
        target = self.resolve(spec)
        if out.dtype != target.dtype and out.dtype.itemsize == target.dtype.itemsize:
            out = out.view(target.dtype)  # bitround gives the floats' bits as integers
        return out.reshape(target.shape)

    def decode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        out = np.asarray(self.codec.decode(np.ascontiguousarray(chunk)))
        if spec.dtype.hasobject and out.dtype != spec.dtype:  # categorize's labels into a StringDType array
            return out.astype(spec.dtype).reshape(spec.shape)
        return out.view(spec.dtype).reshape(spec.shape) if out.dtype != spec.dtype else out.reshape(spec.shape)


class NumcodecsBytesBytesCodec(_NumcodecsWrapper, NumcodecsBytes):
    """A numcodecs compressor or checksum under its ``numcodecs.<id>`` name."""

    def evolve(self, spec: ChunkSpec) -> Any:
        if self.name == "numcodecs.shuffle" and self.configuration().get("elementsize") is None:
            return self._with(elementsize=max(spec.dtype.itemsize, 1))
        return self

    def encoded_size(self, size: int) -> int | None:
        extra = _CHECKSUM_SIZES.get(self.name)
        if extra is None:
            return None
        prefix = self.configuration().get("prefix")
        return size + extra + (len(prefix) if prefix else 0)


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


def is_numcodec_class(obj: object) -> bool:
    """Whether ``obj`` is a class with numcodecs' codec interface (a string ``codec_id``,
    ``encode``, ``decode``, ``get_config`` and ``from_config``), numcodecs' own or not."""
    return isinstance(obj, type) and isinstance(getattr(obj, "codec_id", None), str) and all(
        callable(getattr(obj, method, None)) for method in ("encode", "decode", "get_config", "from_config")
    )


def is_numcodec(obj: object) -> bool:
    """Whether ``obj`` is a codec with numcodecs' interface (see :func:`is_numcodec_class`)."""
    return is_numcodec_class(type(obj))


#: zarr-python 3's names (``zarr.abc.numcodec``)
_is_numcodec = is_numcodec
_is_numcodec_cls = is_numcodec_class
Numcodec = NumcodecsCodec


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


#: the setting of a numcodecs filter the array's data type gives when it is not given
_DTYPE_SETTINGS = {
    "numcodecs.delta": "dtype", "numcodecs.fixedscaleoffset": "dtype", "numcodecs.quantize": "dtype",
    "numcodecs.astype": "decode_dtype",
}
#: the bytes a numcodecs checksum adds
_CHECKSUM_SIZES = {
    "numcodecs.crc32": 4, "numcodecs.crc32c": 4, "numcodecs.adler32": 4, "numcodecs.fletcher32": 4,
    "numcodecs.jenkins_lookup3": 4,
}
_BASES: dict[str, type[_NumcodecsWrapper]] = {}
#: the classes of :data:`__all__` by their v3 names
_CLASSES: dict[str, Any] = {}

#: zarr-python 3's names of the base classes
_NumcodecsCodec = _NumcodecsWrapper
_NumcodecsArrayArrayCodec = NumcodecsArrayArrayCodec
_NumcodecsBytesBytesCodec = NumcodecsBytesBytesCodec
_NumcodecsArrayBytesCodec = NumcodecsArrayBytesCodec


def _codec_class(class_name: str, codec_id: str) -> type:
    base: type[_NumcodecsWrapper] = NumcodecsBytesBytesCodec
    if codec_id in _NUMCODECS_ARRAY:
        base = NumcodecsArrayArrayCodec
    elif codec_id in NUMCODECS_SERIALIZERS:
        base = NumcodecsArrayBytesCodec
    v3_name = f"{CODEC_PREFIX}{codec_id}"

    def __init__(self: Any, **config: Any) -> None:
        if config.get("id", codec_id) != codec_id:
            raise ValueError(f"{class_name}: id must be {codec_id!r}, got {config['id']!r}")
        # the configuration is stored as given, as zarr-python stores it; the numcodecs
        # codec is made when first used
        base.__init__(self, v3_name, None, config)

    @classmethod  # type: ignore[misc]
    def from_dict(cls: Any, data: Any) -> Any:
        name = data.get("name") if isinstance(data, dict) else None
        if name != v3_name:
            raise ValueError(f"expected a codec named {v3_name!r}, got {name!r}")
        return cls(**dict(data.get("configuration") or {}))

    doc = (f"numcodecs' ``{class_name}`` as the Zarr v3 codec ``{v3_name}``.\n\n"
           f"See [numcodecs.{codec_id}.{class_name}][] for its settings, given as keywords.")
    namespace = {"__init__": __init__, "from_dict": from_dict, "__doc__": doc, "__module__": __name__,
                 "name": v3_name, "codec_name": v3_name}
    return type(class_name, (base,), namespace)


__all__ = list(_NAMES)
for _class_name, _codec_id in _NAMES.items():
    globals()[_class_name] = _CLASSES[f"{CODEC_PREFIX}{_codec_id}"] = _codec_class(_class_name, _codec_id)
