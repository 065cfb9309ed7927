"""Compressors and filters.

The codec classes are numcodecs' own (its ``id`` registry is the Zarr v2 codec vocabulary),
re-exported here so ``zarrkit.Blosc`` etc. work as in zarr-python 2.  ``Categorize`` is extended
to accept bytes labels.
"""

from numcodecs import (
    BZ2,
    CRC32,
    CRC32C,
    JSON,
    LZ4,
    LZMA,
    Adler32,
    AsType,
    Base64,
    BitRound,
    Blosc,
    Delta,
    FixedScaleOffset,
    Fletcher32,
    GZip,
    JenkinsLookup3,
    PackBits,
    Pickle,
    Quantize,
    Shuffle,
    VLenArray,
    VLenBytes,
    VLenUTF8,
    Zlib,
    Zstd,
)
from numcodecs.abc import Codec

# zarr-python 3's deprecated settings classes and its write-order literal: reachable, not in __all__
from .blosc import BloscCname as BloscCname
from .blosc import BloscCodec
from .blosc import BloscShuffle as BloscShuffle
from .bytes import BytesCodec
from .bytes import Endian as Endian
from .categorize import Categorize
from .crc32c import Crc32cCodec
from .gzip import GzipCodec
from .numcodecs import NumcodecsArrayArrayCodec as NumcodecsArrayArrayCodec  # (the wrappers of
from .numcodecs import NumcodecsArrayBytesCodec as NumcodecsArrayBytesCodec  # numcodecs.* names,
from .numcodecs import NumcodecsBytesBytesCodec as NumcodecsBytesBytesCodec  # not in __all__)
from .registry import codec_config, format_codec, get_codec, register_codec
from .sharding import ShardingCodec
from .sharding import ShardingCodecIndexLocation as ShardingCodecIndexLocation
from .sharding import SubchunkWriteOrder as SubchunkWriteOrder
from .transpose import TransposeCodec
from .vlen import VLenBytesCodec, VLenUTF8Codec
from .zfp import ZfpCodec
from .zstd import ZstdCodec

try:  # optional: needs the msgpack package
    from numcodecs import MsgPack
except ImportError:  # pragma: no cover - depends on the environment
    MsgPack = None

__all__ = [
    "Codec",
    "Adler32",
    "AsType",
    "Base64",
    "BitRound",
    "Blosc",
    "BZ2",
    "Categorize",
    "CRC32",
    "CRC32C",
    "Delta",
    "FixedScaleOffset",
    "Fletcher32",
    "GZip",
    "JenkinsLookup3",
    "JSON",
    "LZ4",
    "LZMA",
    "MsgPack",
    "PackBits",
    "Pickle",
    "Quantize",
    "Shuffle",
    "VLenArray",
    "VLenBytes",
    "VLenUTF8",
    "Zlib",
    "Zstd",
    "codec_config",
    "format_codec",
    "get_codec",
    "register_codec",
]

# Zarr v3 codecs (as named in zarr.json)
__all__ += [
    "BytesCodec", "TransposeCodec", "GzipCodec", "ZstdCodec", "BloscCodec", "Crc32cCodec",
    "VLenUTF8Codec", "VLenBytesCodec", "ShardingCodec", "ZfpCodec",
]
