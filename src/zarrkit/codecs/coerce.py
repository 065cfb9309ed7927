"""Turning what users pass as codecs into v3 codec objects.

A codec may be given as a zarrkit v3 codec, as a numcodecs object (``numcodecs.Blosc()``,
``numcodecs.Delta(...)``) or as its ``zarr.json`` form (``{"name": "zstd", "configuration":
{"level": 3}}``), so a codec list can be copied straight out of a ``zarr.json``.
"""

from __future__ import annotations

from typing import Any

from numcodecs.abc import Codec as NumcodecsCodec

from .base import ArrayArrayCodec, ArrayBytesCodec, BytesBytesCodec, V3Codec, parse_v3_codec
from .v3_builtin import (
    BloscCodec,
    Crc32cCodec,
    GzipCodec,
    NumcodecsArrayArrayCodec,
    NumcodecsBytesBytesCodec,
    VLenBytesCodec,
    VLenUTF8Codec,
    ZstdCodec,
    _NUMCODECS_ARRAY,
)

__all__ = ["to_v3_codec", "to_v3_codecs"]


def _from_numcodecs(codec: NumcodecsCodec) -> V3Codec:
    cid = codec.codec_id
    config = codec.get_config()
    if cid == "blosc":
        return BloscCodec(
            cname=config["cname"], clevel=config["clevel"], shuffle=config["shuffle"],
            blocksize=config.get("blocksize", 0),
        )
    if cid == "zstd":
        return ZstdCodec(level=config.get("level", 0), checksum=bool(config.get("checksum", False)))
    if cid == "gzip":
        return GzipCodec(level=config.get("level", 5))
    if cid == "crc32c":
        return Crc32cCodec()
    if cid == "vlen-utf8":
        return VLenUTF8Codec()
    if cid == "vlen-bytes":
        return VLenBytesCodec()
    if cid in _NUMCODECS_ARRAY:
        return NumcodecsArrayArrayCodec(f"numcodecs.{cid}", codec)
    return NumcodecsBytesBytesCodec(f"numcodecs.{cid}", codec)


def to_v3_codec(obj: Any, argument: str = "codecs") -> V3Codec:
    """One codec in any accepted form → a v3 codec object."""
    if isinstance(obj, V3Codec):
        return obj
    if isinstance(obj, NumcodecsCodec):
        return _from_numcodecs(obj)
    if isinstance(obj, (dict, str)):
        return parse_v3_codec(obj, argument)
    raise TypeError(
        f"{argument}: expected a codec object, a numcodecs codec or a JSON codec description, "
        f"got {type(obj).__name__}: {obj!r}"
    )


def to_v3_codecs(objs: Any, argument: str, kind: type | None = None) -> list[V3Codec]:
    """A codec or a sequence of codecs → a list, each checked to be of ``kind`` if given."""
    if objs is None:
        return []
    if isinstance(objs, (V3Codec, NumcodecsCodec, dict, str)):
        objs = [objs]
    out = [to_v3_codec(o, argument) for o in objs]
    if kind is not None:
        for c in out:
            if not isinstance(c, kind):
                roles = {ArrayArrayCodec: "array→array (filter)", ArrayBytesCodec: "array→bytes (serializer)", BytesBytesCodec: "bytes→bytes (compressor)"}
                raise TypeError(f"{argument}: {c.name!r} is not an {roles.get(kind, kind.__name__)} codec")
    return out
