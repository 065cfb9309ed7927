"""Codec lookup by v2 ``id``: numcodecs' registry is the v2 codec vocabulary.

zarrkit adds only what numcodecs lacks (a ``Categorize`` that also takes bytes labels, as the
zarr-python 2's documentation shows); everything else is numcodecs' own class.
"""

from __future__ import annotations

from typing import Any

import numcodecs
import numpy as np
from numcodecs.abc import Codec

from ..errors import MetadataError, UnknownCodecError
from .categorize import Categorize

__all__ = ["get_codec", "codec_config", "register_codec", "format_codec", "v2_codec_ids", "Codec"]

_overrides: dict[str, type[Codec]] = {Categorize.codec_id: Categorize}

#: numcodecs codecs that exist only when an optional package is installed: the package and
#: zarrkit's extra that installs it
OPTIONAL_CODECS = {"zfpy": ("zfpy", "zfpy"), "pcodec": ("pcodec", "pcodec")}


def v2_codec_ids() -> list[str]:
    """The Zarr v2 codec vocabulary: the ``id`` of every registered numcodecs codec, sorted
    (what a ``.zarray`` may name; the v3 names such as ``bytes`` or ``sharding_indexed`` are
    not among them)."""
    return sorted(set(numcodecs.registry.codec_registry) | set(_overrides))


def register_codec(cls: type[Codec], codec_id: str | None = None) -> None:
    """Make a codec class available under its ``codec_id`` for reading and writing metadata."""
    numcodecs.register_codec(cls, codec_id)
    _overrides[codec_id or cls.codec_id] = cls


def get_codec(config: Any, key: str | None = None) -> Codec:
    """Instantiate a codec from its JSON configuration ``{"id": ..., ...}``.

    Raises :class:`~zarrkit.errors.UnknownCodecError` for an unregistered id and
    :class:`~zarrkit.errors.MetadataError` for a malformed configuration, naming ``key``.
    """
    if not isinstance(config, dict):
        raise MetadataError(f"codec configuration must be a JSON object, got {config!r}", key)
    codec_id = config.get("id")
    if not isinstance(codec_id, str):
        raise MetadataError(f"codec configuration needs a string 'id', got {config!r}", key)
    params = {k: v for k, v in config.items() if k != "id"}
    cls = _overrides.get(codec_id)
    if cls is None:
        try:
            cls = numcodecs.registry.codec_registry[codec_id]
        except KeyError:
            try:  # numcodecs registers some codecs (e.g. msgpack2) on demand
                return numcodecs.get_codec(dict(config))
            except (KeyError, ValueError):
                if codec_id in OPTIONAL_CODECS:
                    package, extra = OPTIONAL_CODECS[codec_id]
                    raise UnknownCodecError(
                        f"codec {codec_id!r} needs the {package} package (pip install 'zarrkit[{extra}]')",
                        key,
                    ) from None
                raise UnknownCodecError(
                    f"unknown codec id {codec_id!r}; known Zarr v2 codec ids: {v2_codec_ids()}", key
                ) from None
            except Exception as exc:
                raise MetadataError(f"invalid configuration for codec {codec_id!r}: {exc}", key) from exc
    try:
        return cls.from_config(params) if hasattr(cls, "from_config") else cls(**params)
    except Exception as exc:
        raise MetadataError(f"invalid configuration for codec {codec_id!r}: {exc}", key) from exc


def codec_config(codec: Codec) -> dict[str, Any]:
    """The JSON configuration of a codec, as written into ``.zarray``.

    Blosc's ``blocksize`` is left out when it is the default 0, as zarr-python 2 wrote it.
    """
    config = codec.get_config()
    if config.get("id") == "blosc" and config.get("blocksize", 0) == 0:
        config = {k: v for k, v in config.items() if k != "blocksize"}
    if config.get("id") == "zstd" and config.get("checksum") is False:
        # as zarr-python writes it: tensorstore rejects the key
        config = {k: v for k, v in config.items() if k != "checksum"}
    return config


def format_codec(codec: Codec) -> str:
    """A short human-readable form, e.g. ``Blosc(cname='lz4', clevel=5, shuffle=1)``."""
    if not hasattr(codec, "get_config"):  # a v3 codec
        return repr(codec)
    config = codec_config(codec)
    name = type(codec).__name__
    dtype = config.get("dtype")
    parts = []
    for k, v in config.items():
        if k == "id":
            continue
        if k in ("dtype", "astype", "decode_dtype", "encode_dtype") and isinstance(v, str):
            if k == "astype" and v == dtype:
                continue
            try:
                parts.append(f"{k}={np.dtype(v)}")
                continue
            except TypeError:
                pass
        if isinstance(v, list) and all(isinstance(x, dict) for x in v):
            v = [dict(sorted(x.items())) for x in v]  # as stored in JSON: keys sorted
        parts.append(f"{k}={v!r}")
    return f"{name}({', '.join(parts)})"
