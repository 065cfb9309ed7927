"""The v3 codec vocabulary: codec names (as in ``zarr.json``) → codec objects.

The core spec's codecs, sharding and the ``numcodecs.*`` names zarr-python writes are registered
here; :func:`register_v3_codec` adds more.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numcodecs.registry

from ..errors import MetadataError, UnknownCodecError
from .base import V3Codec, parse_codec_json
from .extensions import BitroundCodec, PackBitsCodec, ReshapeCodec
from .registry import get_codec
from .sharding import ShardingCodec
from .v3_builtin import (
    _NUMCODECS_ARRAY,
    _NUMCODECS_BYTES,
    NUMCODECS_SERIALIZERS,
    BloscCodec,
    BytesCodec,
    Crc32cCodec,
    GzipCodec,
    NumcodecsArrayArrayCodec,
    NumcodecsArrayBytesCodec,
    NumcodecsBytesBytesCodec,
    TransposeCodec,
    VLenBytesCodec,
    VLenUTF8Codec,
    ZstdCodec,
)
from .zfp import _MODES as _ZFP_MODES
from .zfp import ZfpCodec

__all__ = ["register_v3_codec", "parse_v3_codec", "registered_v3_codecs", "codec_factory"]

_REGISTRY: dict[str, Callable[[dict[str, Any], str | None], V3Codec]] = {}


def register_v3_codec(name: str, factory: Callable[[dict[str, Any], str | None], V3Codec]) -> None:
    """Register a factory ``(configuration, key) -> codec`` for a v3 codec name."""
    _REGISTRY[name] = factory


def registered_v3_codecs() -> list[str]:
    """The registered v3 codec names, sorted."""
    return sorted(_REGISTRY)


def parse_v3_codec(obj: Any, key: str | None = None) -> V3Codec:
    """Instantiate a v3 codec from its JSON form (errors name ``key``)."""
    name, config = parse_codec_json(obj, key)
    factory = _REGISTRY.get(name)
    if factory is None:
        raise UnknownCodecError(f"unknown codec {name!r}; known codecs: {sorted(_REGISTRY)}", key)
    try:
        return factory(config, key)
    except MetadataError:
        raise
    # OverflowError: JSON's 1e999 parses as infinity, which int() refuses
    except (TypeError, ValueError, KeyError, OverflowError) as exc:
        raise MetadataError(f"codec {name!r}: invalid configuration {config!r}: {exc}", key) from None


def codec_factory(
    make: Callable[..., V3Codec], allowed: set[str], name: str | None = None
) -> Callable[[dict[str, Any], str | None], V3Codec]:
    """A registry factory calling ``make(**configuration)`` (a codec class, or a function
    given its codec's ``name``): other configuration fields are refused, errors name ``key``."""
    name = name or make.name  # type: ignore[attr-defined]

    def factory(config: dict[str, Any], key: str | None) -> V3Codec:
        extra = set(config) - allowed
        if extra:
            raise MetadataError(f"codec {name!r}: unexpected configuration field(s) {sorted(extra)}", key)
        try:
            return make(**config)
        except MetadataError as exc:
            raise MetadataError(str(exc), key) from None

    return factory


def _numcodecs_factory(codec_id: str) -> Callable[[dict[str, Any], str | None], V3Codec]:
    def make(config: dict[str, Any], key: str | None) -> V3Codec:
        name = f"numcodecs.{codec_id}"
        if codec_id in NUMCODECS_SERIALIZERS:
            if codec_id not in numcodecs.registry.codec_registry:
                package = NUMCODECS_SERIALIZERS[codec_id]
                raise UnknownCodecError(f"codec {name!r} needs the {package} package (pip install {package})", key)
            return NumcodecsArrayBytesCodec(name, get_codec({"id": codec_id, **config}, key), config)
        codec = get_codec({"id": codec_id, **config}, key)
        if codec_id in _NUMCODECS_ARRAY:
            return NumcodecsArrayArrayCodec(name, codec, config)
        return NumcodecsBytesBytesCodec(name, codec, config)

    return make


def _make_sharding(config: dict[str, Any], key: str | None) -> ShardingCodec:
    allowed = {"chunk_shape", "codecs", "index_codecs", "index_location"}
    extra = set(config) - allowed
    if extra:
        raise MetadataError(f"sharding_indexed: unexpected configuration field(s) {sorted(extra)}", key)
    if "chunk_shape" not in config or not isinstance(config["chunk_shape"], list):
        raise MetadataError("sharding_indexed: configuration needs a 'chunk_shape' list", key)
    codecs = [parse_v3_codec(c, key) for c in config.get("codecs", [{"name": "bytes"}])]
    index_codecs = [parse_v3_codec(c, key) for c in config.get("index_codecs", [])] or None
    try:
        return ShardingCodec(config["chunk_shape"], codecs, index_codecs, config.get("index_location", "end"))
    except MetadataError as exc:
        raise MetadataError(str(exc), key) from None


def _bytes_codec(endian: str | None = None) -> BytesCodec:
    """A ``bytes`` codec as a document declares it: without ``endian``, none (single-byte
    types need none; a multi-byte type without one is refused when the chain is resolved)."""
    return BytesCodec(endian)


register_v3_codec("bytes", codec_factory(_bytes_codec, {"endian"}, "bytes"))
register_v3_codec("bitround", codec_factory(BitroundCodec, {"keepbits"}))
register_v3_codec("reshape", codec_factory(ReshapeCodec, {"shape"}))
register_v3_codec("packbits", codec_factory(PackBitsCodec, {"padding_encoding", "first_bit", "last_bit"}))
register_v3_codec("transpose", codec_factory(TransposeCodec, {"order"}))
register_v3_codec("gzip", codec_factory(GzipCodec, {"level"}))
register_v3_codec("zstd", codec_factory(ZstdCodec, {"level", "checksum"}))
register_v3_codec("blosc", codec_factory(BloscCodec, {"cname", "clevel", "shuffle", "typesize", "blocksize"}))
register_v3_codec("crc32c", codec_factory(Crc32cCodec, set()))
register_v3_codec("vlen-utf8", codec_factory(VLenUTF8Codec, set()))
register_v3_codec("vlen-bytes", codec_factory(VLenBytesCodec, set()))
register_v3_codec("sharding_indexed", _make_sharding)
register_v3_codec("zfp", codec_factory(ZfpCodec, {"mode", *(p for ps in _ZFP_MODES.values() for p in ps)}))
for _id in sorted(_NUMCODECS_ARRAY | _NUMCODECS_BYTES | set(NUMCODECS_SERIALIZERS)):
    register_v3_codec(f"numcodecs.{_id}", _numcodecs_factory(_id))
