"""Codecs given to the creation functions, in the vocabulary of the array's metadata dialect.

The engine runs one codec chain for both formats; what differs is how each format's metadata
names codecs: a v2 array stores numcodecs configurations, a v3 array v3 codec descriptions.

A codec may be given as a zarrkit v3 codec, as a numcodecs object (``numcodecs.Blosc()``,
``numcodecs.Delta(...)``) or as its JSON form (``{"name": "zstd", "configuration":
{"level": 3}}`` as in ``zarr.json``, ``{"id": "zstd", "level": 3}`` as in ``.zarray``), so a
codec list can be copied straight out of a metadata document, whatever the array's format.
v3 arrays get v3 codec objects (:func:`to_v3_codec`), v2 arrays numcodecs objects
(:func:`to_v2_codec`); a codec with no equivalent in the format is refused when the array is
created, with :class:`~zarrkit.errors.UnsupportedCodecError` naming the argument.

A whole v3 chain said in v2's terms (order, filters, object codec, compressor) is
:func:`v3_chain_to_v2`: the one translation behind converting an array to v2 and copying it
into a v2 array.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, Literal

import numcodecs
from numcodecs.abc import Codec as NumcodecsCodec

from ..codecs import (
    BloscCodec,
    Crc32cCodec,
    GzipCodec,
    NumcodecsArrayArrayCodec,
    NumcodecsBytesBytesCodec,
    TransposeCodec,
    VLenBytesCodec,
    VLenUTF8Codec,
    ZstdCodec,
)
from ..codecs.base import (
    ArrayArrayCodec,
    ArrayBytesCodec,
    BytesBytesCodec,
    V3Codec,
    parse_codec_json,
)
from ..codecs.numcodecs import _NUMCODECS_ARRAY
from ..codecs.registry import get_codec, parse_v3_codec, registered_v3_codecs, v2_codec_ids
from ..errors import UnknownCodecError, UnsupportedCodecError

__all__ = [
    "V2Codecs", "check_codec_argument", "to_v2_codec", "to_v2_codecs", "to_v3_codec", "to_v3_codecs",
    "v3_chain_to_v2",
]

#: what a codec argument may be, said in errors
CODEC_FORMS = "a codec (numcodecs or zarrkit.codecs), its JSON form, its name"


def _is_codec_form(value: Any) -> bool:
    return isinstance(value, (V3Codec, NumcodecsCodec, dict, str))


def check_codec_argument(value: Any, argument: str, many: bool = False, words: tuple[str, ...] = ()) -> None:
    """Refuse, naming ``argument``, a value that is no codec in any accepted form: None, a
    codec in any form (see the module's docstring), one of ``words`` (``'default'``,
    ``'auto'``...), or a list or tuple of codecs (said in the error when ``many``).  Which
    codecs exist is checked later, in the array's format's vocabulary."""
    if value is None or (isinstance(value, str) and value in words) or _is_codec_form(value):
        return
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            if not _is_codec_form(item):
                raise UnsupportedCodecError(
                    f"{argument}[{i}]: expected {CODEC_FORMS}, got {type(item).__name__}: {item!r}", argument
                )
        return
    expected = f"{CODEC_FORMS}{', a list of them' if many else ''} or None"
    raise UnsupportedCodecError(f"{argument}: expected {expected}, got {type(value).__name__}: {value!r}", argument)


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
    if isinstance(obj, dict) and "id" in obj and "name" not in obj:  # a codec as .zarray has it
        return _from_numcodecs(get_codec(obj, argument))
    if isinstance(obj, (dict, str)):
        return parse_v3_codec(obj, argument)
    raise UnsupportedCodecError(
        f"{argument}: expected a codec object, a numcodecs codec or a JSON codec description, "
        f"got {type(obj).__name__}: {obj!r}",
        argument,
    )


def to_v3_codecs(objs: Any, argument: str, kind: type | None = None) -> list[V3Codec]:
    """A codec or a sequence of codecs → a list, each checked to be of ``kind`` if given."""
    if objs is None:
        return []
    if isinstance(objs, (V3Codec, NumcodecsCodec, dict, str)):
        objs = [objs]
    check_codec_argument(objs, argument, many=True)
    out = [to_v3_codec(o, argument) for o in objs]
    if kind is not None:
        for c in out:
            if not isinstance(c, kind):
                roles: dict[type, str] = {ArrayArrayCodec: "an array→array (filter)", ArrayBytesCodec: "an array→bytes (serializer)", BytesBytesCodec: "a bytes→bytes (compressor)"}
                raise UnsupportedCodecError(
                    f"{argument}: {c.name!r} is not {roles.get(kind, 'a ' + kind.__name__)} codec", argument
                )
    return out


_NO_V2 = {
    "bytes": "a v2 array has no serializer: the byte order is part of its dtype ('<i4', '>i4')",
    "transpose": "a v2 array has no transpose codec: use order='F' for the reverse permutation",
    "sharding_indexed": "sharding needs Zarr v3 (zarr_format=3, shards=...)",
}


def _refuse_v3_only(name: Any, argument: str) -> None:
    """Refuse a name of the v3 vocabulary that has no v2 equivalent (``bytes``, ``transpose``,
    ``sharding_indexed``...), saying why."""
    if (isinstance(name, str) and name in registered_v3_codecs() and name not in v2_codec_ids()
            and not name.startswith("numcodecs.")):
        why = _NO_V2.get(name, "it is a Zarr v3 codec only")
        raise UnsupportedCodecError(f"{argument}: the codec {name!r} has no Zarr v2 equivalent ({why})", argument)


def _v2_codec_by_name(obj: Any, argument: str) -> Any:
    """A codec given by name (``'zstd'``, ``{'name': 'gzip', 'configuration': ...}``) for a v2
    array: a name of the v3 vocabulary parsed as a v3 codec (converted by the caller), a v2
    ``id`` as that numcodecs codec; a v3 name with no v2 equivalent and an unknown name are
    refused, offering the v2 vocabulary."""
    name, config = parse_codec_json(obj, argument)
    _refuse_v3_only(name, argument)
    if name in registered_v3_codecs():
        return parse_v3_codec(obj, argument)
    if name in v2_codec_ids():
        return get_codec({**config, "id": name}, argument)
    raise UnknownCodecError(f"{argument}: unknown codec {name!r}; known Zarr v2 codec ids: {v2_codec_ids()}", argument)


def to_v2_codec(obj: Any, argument: str = "compressor", key: str | None = None) -> NumcodecsCodec:
    """One codec in any accepted form → the numcodecs codec a Zarr v2 array stores.

    v3 codecs with a numcodecs equivalent are converted (``ZstdCodec(level=3)`` →
    ``numcodecs.Zstd(level=3)``, ``BloscCodec``, ``GzipCodec``, ``Crc32cCodec``, the
    ``numcodecs.*`` codecs, the vlen codecs); the others (``bytes``, ``transpose``,
    ``sharding_indexed``) and non-codecs raise :class:`~zarrkit.errors.UnsupportedCodecError`
    naming ``argument`` (and the metadata document ``key`` when given).

    Examples
    --------
    >>> from zarrkit.codecs import ZstdCodec
    >>> from zarrkit.metadata.codec_args import to_v2_codec
    >>> to_v2_codec(ZstdCodec(level=3))
    Zstd(level=3)
    >>> to_v2_codec({"name": "gzip", "configuration": {"level": 1}})
    GZip(level=1)
    """

    if isinstance(obj, NumcodecsCodec):
        return obj
    if isinstance(obj, dict) and "id" in obj:
        _refuse_v3_only(obj["id"], argument)
        return get_codec(obj, argument)
    if isinstance(obj, (dict, str)):
        obj = _v2_codec_by_name(obj, argument)
        if isinstance(obj, NumcodecsCodec):
            return obj
    if not isinstance(obj, V3Codec):
        raise UnsupportedCodecError(
            f"{argument}: expected a numcodecs codec, a codec object or a JSON codec description, "
            f"got {type(obj).__name__}: {obj!r}",
            argument, key,
        )
    if isinstance(obj, Crc32cCodec):
        return numcodecs.CRC32C()
    if isinstance(obj, VLenUTF8Codec):
        return numcodecs.VLenUTF8()
    if isinstance(obj, VLenBytesCodec):
        return numcodecs.VLenBytes()
    inner = getattr(obj, "codec", None)
    if isinstance(inner, NumcodecsCodec) and not isinstance(obj, ArrayBytesCodec):
        return inner
    why = _NO_V2.get(obj.name, "it is a Zarr v3 codec only")
    raise UnsupportedCodecError(
        f"{argument}: the codec {obj.name!r} has no Zarr v2 equivalent ({why})", argument, key
    )


def to_v2_codecs(objs: Any, argument: str = "filters") -> list[NumcodecsCodec]:
    """A codec or a sequence of codecs → a list of numcodecs codecs (see :func:`to_v2_codec`).

    Examples
    --------
    >>> from zarrkit.codecs import ZstdCodec
    >>> from zarrkit.metadata.codec_args import to_v2_codecs
    >>> to_v2_codecs([{"id": "delta", "dtype": "<i8"}, ZstdCodec(level=1)])
    [Delta(dtype='<i8'), Zstd(level=1)]
    """
    if objs is None:
        return []
    if isinstance(objs, (V3Codec, NumcodecsCodec, dict, str)):
        objs = [objs]
    try:
        items = list(objs)
    except TypeError:
        raise UnsupportedCodecError(
            f"{argument}: expected a list of codecs, got {type(objs).__name__}: {objs!r}", argument
        ) from None
    return [to_v2_codec(o, argument) for o in items]


@dataclasses.dataclass(frozen=True)
class V2Codecs:
    """A v3 codec chain said in Zarr v2's terms (see :func:`v3_chain_to_v2`)."""

    #: ``'F'`` when the chain began with the transpose of the reverse permutation
    order: Literal["C", "F"]
    #: the numcodecs filters, the object codec not among them
    filters: tuple[NumcodecsCodec, ...]
    #: the numcodecs codec of a vlen-utf8 or vlen-bytes serializer, else None
    object_codec: NumcodecsCodec | None
    compressor: NumcodecsCodec | None


def v3_chain_to_v2(
    filters: Sequence[Any] | None,
    serializer: Any,
    compressors: Sequence[Any],
    ndim: int,
    *,
    crc32c: Literal["keep", "drop", "refuse"],
    key: str | None = None,
) -> V2Codecs:
    """The Zarr v2 equivalent of a v3 codec chain: its array→array codecs (``filters``), its
    array→bytes codec (``serializer``) and its bytes→bytes codecs (``compressors``), for an
    array of ``ndim`` dimensions.  Each codec is translated as :func:`to_v2_codec` does.

    ``crc32c`` says what becomes of a ``crc32c`` codec among the compressors: ``'keep'`` makes
    it numcodecs' ``CRC32C``; ``'drop'`` leaves it out, for a copy whose chunks are encoded
    again; ``'refuse'`` raises, for a conversion that leaves the chunks, checksums included,
    as they are and promises a hierarchy that every zarr-python 2 reads (numcodecs has had
    ``CRC32C`` only since 0.14).  The serializer's other properties (the byte order of
    ``bytes``) are the caller's: only a vlen serializer has a v2 codec, the object codec.

    Raises
    ------
    UnsupportedCodecError
        A codec with no v2 equivalent, more than one compressor, or a refused ``crc32c``;
        the message names ``key`` when given.
    """
    aa = list(filters or ())
    order: Literal["C", "F"] = "C"
    if aa and isinstance(aa[0], TransposeCodec):
        if tuple(aa[0].order) != tuple(reversed(range(ndim))):
            raise UnsupportedCodecError(
                f"transpose order {list(aa[0].order)} has no Zarr v2 equivalent", "codecs", key
            )
        order = "F"
        aa = aa[1:]
    bb = list(compressors)
    if crc32c == "drop":
        bb = [c for c in bb if not isinstance(c, Crc32cCodec)]
    if len(bb) > 1:
        raise UnsupportedCodecError(
            f"a Zarr v2 array takes one compressor, the chain has {len(bb)} bytes→bytes codecs",
            "codecs", key,
        )
    if crc32c == "refuse" and bb and isinstance(bb[0], Crc32cCodec):
        raise UnsupportedCodecError(
            "codecs: the codec 'crc32c' is not carried over to Zarr v2 (a v2 array naming it "
            "needs numcodecs 0.14 or later to be read)",
            "codecs", key,
        )
    object_codec = None
    if isinstance(serializer, (VLenUTF8Codec, VLenBytesCodec)):
        object_codec = to_v2_codec(serializer, "codecs", key)
    return V2Codecs(
        order,
        tuple(to_v2_codec(c, "codecs", key) for c in aa),
        object_codec,
        to_v2_codec(bb[0], "codecs", key) if bb else None,
    )
