"""Codec lookup for both formats: a v2 ``id`` or a v3 name → a codec object.

Zarr v2: numcodecs' registry is the v2 codec vocabulary; zarrkit adds only what numcodecs
lacks (a ``Categorize`` that also takes bytes labels, as the zarr-python 2's documentation
shows); everything else is numcodecs' own class (:func:`get_codec`, :func:`register_codec`).

Zarr v3: codec names as in ``zarr.json`` → codec objects.  The core spec's codecs, sharding and
the ``numcodecs.*`` names zarr-python writes are registered here (:func:`parse_v3_codec`);
:func:`register_v3_codec` adds more.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numcodecs
import numcodecs.registry
import numpy as np
from numcodecs.abc import Codec

from ..errors import MetadataError, UnknownCodecError
from .base import V3Codec, parse_codec_json
from .blosc import BloscCodec
from .bytes import BytesCodec
from .categorize import Categorize
from .crc32c import Crc32cCodec
from .extensions import BitroundCodec, PackBitsCodec, ReshapeCodec
from .gzip import GzipCodec
from .numcodecs import _CLASSES as NUMCODECS_CLASSES
from .numcodecs import (
    _NUMCODECS_ARRAY,
    _NUMCODECS_BYTES,
    NUMCODECS_SERIALIZERS,
    NumcodecsArrayArrayCodec,
    NumcodecsArrayBytesCodec,
    NumcodecsBytesBytesCodec,
)
from .sharding import ShardingCodec
from .transpose import TransposeCodec
from .vlen import VLenBytesCodec, VLenUTF8Codec
from .zfp import _MODES as _ZFP_MODES
from .zfp import ZfpCodec
from .zstd import ZstdCodec

__all__ = [
    "get_codec", "codec_config", "register_codec", "format_codec", "v2_codec_ids", "Codec",
    "register_v3_codec", "parse_v3_codec", "registered_v3_codecs", "codec_factory", "get_codec_class",
    "get_numcodec",
]


# -- Zarr v2: numcodecs ids ------------------------------------------------------------------
_overrides: dict[str, type[Codec]] = {Categorize.codec_id: Categorize}

#: numcodecs codecs that exist only when an optional package is installed: the package and
#: zarrkit's extra that installs it
OPTIONAL_CODECS = {"zfpy": ("zfpy", "zfpy"), "pcodec": ("pcodec", "pcodec")}


def v2_codec_ids() -> list[str]:
    """The Zarr v2 codec vocabulary: the ``id`` of every registered numcodecs codec, sorted
    (what a ``.zarray`` may name; the v3 names such as ``bytes`` or ``sharding_indexed`` are
    not among them)."""
    return sorted(set(numcodecs.registry.codec_registry) | set(_overrides))


def register_codec(cls: Any, codec_id: Any = None, *, qualname: str | None = None) -> None:
    """Make a codec class available for reading and writing metadata.

    Two forms: ``register_codec(numcodecs_class, codec_id=None)`` (zarr-python 2) registers a
    numcodecs codec under its ``codec_id`` for Zarr v2; ``register_codec(name, v3_class)``
    (zarr-python 3) registers a Zarr v3 codec class (a subclass of
    :class:`~zarrkit.codecs.base.V3Codec` with ``from_dict``) under the name ``zarr.json``
    gives it.  ``qualname`` is accepted and not used.

    Raises
    ------
    TypeError
        When the zarr-python 3 form is given something other than a v3 codec class.
    """
    if isinstance(cls, str):
        if not (isinstance(codec_id, type) and issubclass(codec_id, V3Codec)):
            raise TypeError(f"register_codec: codec_cls must be a v3 codec class, got {codec_id!r}")
        v3_class: type[V3Codec] = codec_id
        name: str = cls
        _V3_CLASSES[name] = v3_class

        def factory(config: dict[str, Any], key: str | None) -> V3Codec:
            return v3_class.from_dict({"name": name, "configuration": config})

        register_v3_codec(name, factory)
        return
    numcodecs.register_codec(cls, codec_id)
    _overrides[codec_id or cls.codec_id] = cls


def get_numcodec(data: Any) -> Codec:
    """The numcodecs codec a Zarr v2 configuration ``{"id": ..., ...}`` describes
    (zarr-python 3's name of :func:`get_codec`)."""
    return get_codec(data)


def get_codec_class(key: str, reload_config: bool = False) -> type[V3Codec]:
    """The v3 codec class registered under the name ``key`` (``"blosc"``,
    ``"numcodecs.zlib"``...); ``reload_config`` is accepted and not used.

    Raises
    ------
    UnknownCodecError
        For a name no class is registered under.
    """
    cls = _V3_CLASSES.get(key)
    if cls is None and load_entry_point(key):
        cls = _V3_CLASSES.get(key)
    if cls is None:
        raise UnknownCodecError(f"unknown codec {key!r}; known codecs: {sorted(_V3_CLASSES)}", "codecs")
    return cls


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
    config: dict[str, Any] = codec.get_config()
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


# -- Zarr v3: codec names ------------------------------------------------------------------
_REGISTRY: dict[str, Callable[[dict[str, Any], str | None], V3Codec]] = {}


def register_v3_codec(name: str, factory: Callable[[dict[str, Any], str | None], V3Codec]) -> None:
    """Register a factory ``(configuration, key) -> codec`` for a v3 codec name."""
    _REGISTRY[name] = factory


def registered_v3_codecs() -> list[str]:
    """The registered v3 codec names, sorted."""
    return sorted(_REGISTRY)


#: the entry point group other packages register their zarr-python 3 codec classes in
#: (``[project.entry-points."zarr.codecs"] my_codec = "pkg.module:MyCodec"``)
ENTRY_POINT_GROUP = "zarr.codecs"


def load_entry_point(name: str) -> bool:
    """Register the codec class an installed package offers under ``name`` in the
    :data:`ENTRY_POINT_GROUP` entry points, when it is a zarrkit v3 codec class (one deriving
    from :mod:`zarrkit.abc.codec`'s classes, which is what a codec written for zarr-python 3
    derives from when ``zarr`` is zarrkit); whether one was.  Names zarrkit implements itself
    (``numcodecs.*``, whose entry points numcodecs offers for zarr-python) are never looked up.

    Parameters
    ----------
    name : str
        The codec's name in ``zarr.json``.

    Returns
    -------
    bool
    """
    import importlib.metadata

    for entry in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        if entry.name != name:
            continue
        try:
            cls = entry.load()
        except Exception as exc:
            raise UnknownCodecError(
                f"codec {name!r}: the entry point {entry.value!r} of group {ENTRY_POINT_GROUP!r} "
                f"does not load: {type(exc).__name__}: {exc}", "codecs") from exc
        if isinstance(cls, type) and issubclass(cls, V3Codec):
            register_codec(name, cls)
            return True
    return False


def parse_v3_codec(obj: Any, key: str | None = None) -> V3Codec:
    """Instantiate a v3 codec from its JSON form (errors name ``key``); a name not registered
    is looked up in the installed packages' ``zarr.codecs`` entry points."""
    name, config = parse_codec_json(obj, key)
    factory = _REGISTRY.get(name)
    if factory is None and load_entry_point(name):
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
        if codec_id in NUMCODECS_SERIALIZERS and codec_id not in numcodecs.registry.codec_registry:
            package = NUMCODECS_SERIALIZERS[codec_id]
            raise UnknownCodecError(f"codec {name!r} needs the {package} package (pip install {package})", key)
        codec = get_codec({"id": codec_id, **config}, key)  # the configuration checked, errors naming key
        cls = NUMCODECS_CLASSES.get(name)
        if cls is not None:
            made: V3Codec = cls(**config)
        elif codec_id in NUMCODECS_SERIALIZERS:
            made = NumcodecsArrayBytesCodec(name, codec, config)
        elif codec_id in _NUMCODECS_ARRAY:
            made = NumcodecsArrayArrayCodec(name, codec, config)
        else:
            made = NumcodecsBytesBytesCodec(name, codec, config)
        made.__dict__["codec"] = codec  # made once
        return made

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


#: the v3 codec classes by name (:func:`get_codec_class`)
_V3_CLASSES: dict[str, type[V3Codec]] = {
    cls.name: cls for cls in (BytesCodec, BitroundCodec, ReshapeCodec, PackBitsCodec, TransposeCodec, GzipCodec,
                              ZstdCodec, BloscCodec, Crc32cCodec, VLenUTF8Codec, VLenBytesCodec, ShardingCodec,
                              ZfpCodec)
}
_V3_CLASSES.update(NUMCODECS_CLASSES)

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
