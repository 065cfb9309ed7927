"""zarr-python 3's ``zarr.codecs.numcodecs``: the numcodecs codecs as Zarr v3 codec objects
under their ``numcodecs.<id>`` names (``Delta(dtype='int32')`` for ``filters=``,
``LZMA(preset=1)`` for ``compressors=``).

Examples
--------
>>> from zarrkit.codecs.numcodecs import Delta
>>> Delta(dtype='int32').to_json()
{'name': 'numcodecs.delta', 'configuration': {'dtype': 'int32'}}
"""

from __future__ import annotations

from typing import Any

import numcodecs as _numcodecs
import numcodecs.registry

from .v3_builtin import (
    _NUMCODECS_ARRAY,
    NUMCODECS_SERIALIZERS,
    NumcodecsArrayArrayCodec,
    NumcodecsArrayBytesCodec,
    NumcodecsBytesBytesCodec,
    _NumcodecsWrapper,
)

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
    namespace = {"__init__": __init__, "__doc__": doc, "__module__": __name__}
    return type(class_name, (base,), namespace)


__all__ = []
for _class_name, _codec_id in _NAMES.items():
    if _codec_id not in _numcodecs.registry.codec_registry:
        continue  # its package is not installed (pcodec, zfpy)
    globals()[_class_name] = _codec_class(_class_name, _codec_id)
    __all__.append(_class_name)
