"""Zarr v3 codec framework: array→array, array→bytes and bytes→bytes codecs.

Each codec is parsed once from its JSON form and *resolved* against the chunk it will see
(:class:`ChunkSpec`: shape, dtype, fill value), so encoding and decoding a chunk does no lookups.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Self

import numpy as np

from ..errors import MetadataError
from ..storage.buffer import default_buffer_prototype

__all__ = [
    "ChunkSpec",
    "V3Codec",
    "codec_from_dict",
    "ArrayArrayCodec",
    "ArrayBytesCodec",
    "BytesBytesCodec",
    "parse_codec_json",
    "check_codecs_available",
]


@dataclasses.dataclass(frozen=True, slots=True)
class ChunkSpec:
    """What a codec sees: the (decoded) chunk's shape, dtype and fill value."""

    shape: tuple[int, ...]
    dtype: np.dtype
    fill_value: Any = None


def _chunk_spec(array_spec: Any) -> ChunkSpec:
    """zarrkit's spec of the chunk zarr-python 3's ``ArraySpec`` describes (anything with a
    ``shape``, a ``dtype``, a NumPy dtype or a ``ZDType``, and a ``fill_value``)."""
    dtype = array_spec.dtype
    native = dtype.to_native_dtype() if hasattr(dtype, "to_native_dtype") else np.dtype(dtype)
    return ChunkSpec(tuple(array_spec.shape), native, array_spec.fill_value)


def _prototype(array_spec: Any) -> Any:
    return getattr(array_spec, "prototype", None) or default_buffer_prototype()


def _array(buffer: Any) -> np.ndarray:
    """The NumPy array of zarr-python 3's ``NDBuffer`` (or of an array)."""
    return np.asarray(buffer.as_numpy_array() if hasattr(buffer, "as_numpy_array") else buffer)


def _bytes(buffer: Any) -> Any:
    """The bytes of zarr-python 3's ``Buffer`` (or of a bytes-like object)."""
    return buffer.to_bytes() if hasattr(buffer, "to_bytes") else buffer


class V3Codec:
    """Base of all v3 codecs.  ``name`` is the codec's registered name.

    Each kind of codec also runs on zarr-python 3's buffers, as its ``SupportsSyncCodec``
    protocol calls a codec: ``_encode_sync(chunk, chunk_spec)`` and ``_decode_sync``, with a
    ``Buffer`` or ``NDBuffer`` and an ``ArraySpec``; the codec is evolved for the spec first
    (:meth:`evolve`), and the result is made with the spec's ``prototype``.
    """

    name: str = ""

    def to_json(self) -> dict[str, Any]:
        config = self.configuration()
        if config is None:
            return {"name": self.name}
        return {"name": self.name, "configuration": config}

    def to_dict(self) -> dict[str, Any]:
        """The codec's metadata document, ``{"name": ..., "configuration": {...}}`` (zarr-python 3's
        name for :meth:`to_json`)."""
        return self.to_json()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """The codec a metadata document (as :meth:`to_dict` gives) describes.

        Raises
        ------
        ValueError
            If the document names another codec.
        """
        name = data.get("name") if isinstance(data, Mapping) else None
        if name != cls.name:
            raise ValueError(f"expected a codec named {cls.name!r}, got {name!r}")
        return cls(**dict(data.get("configuration") or {}))

    def configuration(self) -> dict[str, Any] | None:
        return None

    def evolve(self, spec: ChunkSpec) -> Self:
        """Fill in settings that depend on the data (e.g. blosc's typesize); default: unchanged."""
        return self

    def evolve_from_array_spec(self, array_spec: Any) -> Self:
        """:meth:`evolve` given zarr-python 3's ``ArraySpec``: anything with a ``shape``, a
        ``dtype`` (a NumPy dtype or a ``ZDType``) and a ``fill_value``."""
        return self.evolve(_chunk_spec(array_spec))

    def validate(self, spec: ChunkSpec) -> None:
        """Raise MetadataError if this codec cannot handle chunks of ``spec``."""

    def check_available(self) -> None:
        """Raise :class:`~zarrkit.errors.UnknownCodecError` with the install command when the
        optional package this codec's implementation needs is missing (default: it needs
        none).  Asked when an array is created, before anything is written; an array opened
        for reading only finds out when a chunk is decoded."""

    def __repr__(self) -> str:
        config = self.configuration() or {}
        args = ", ".join(f"{k}={v!r}" for k, v in config.items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.to_json() == other.to_json()

    def __hash__(self) -> int:
        return hash(repr(self.to_json()))


class ArrayArrayCodec(V3Codec):
    """Transforms the chunk array (e.g. ``transpose``)."""

    #: each element encoded on its own, and some values refused (``cast_value``,
    #: ``scale_offset``): a write checks all its values first (``CodecChain.check_values``)
    elementwise: bool = False
    #: the elements only moved (``transpose``, ``reshape``): nothing a value check needs
    moves_only: bool = False

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        """The spec of the encoded array given the spec of the decoded one."""
        return spec

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        raise NotImplementedError

    def decode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        raise NotImplementedError

    def _encode_sync(self, chunk_array: Any, chunk_spec: Any) -> Any:
        spec = _chunk_spec(chunk_spec)
        return _prototype(chunk_spec).nd_buffer.from_ndarray_like(self.evolve(spec).encode(_array(chunk_array), spec))

    def _decode_sync(self, chunk_array: Any, chunk_spec: Any) -> Any:
        spec = _chunk_spec(chunk_spec)  # (the decoded chunk's)
        return _prototype(chunk_spec).nd_buffer.from_ndarray_like(self.evolve(spec).decode(_array(chunk_array), spec))


class ArrayBytesCodec(V3Codec):
    """Serialises the chunk array to bytes (``bytes``, ``vlen-utf8``, ``sharding_indexed``)."""

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> bytes:
        raise NotImplementedError

    def decode(self, data: bytes, spec: ChunkSpec) -> np.ndarray:
        raise NotImplementedError

    def _encode_sync(self, chunk_array: Any, chunk_spec: Any) -> Any:
        spec = _chunk_spec(chunk_spec)
        return _prototype(chunk_spec).buffer.from_bytes(bytes(self.evolve(spec).encode(_array(chunk_array), spec)))

    def _decode_sync(self, chunk_bytes: Any, chunk_spec: Any) -> Any:
        spec = _chunk_spec(chunk_spec)
        decoded = np.asarray(self.evolve(spec).decode(_bytes(chunk_bytes), spec)).reshape(spec.shape)
        return _prototype(chunk_spec).nd_buffer.from_ndarray_like(decoded)

    def raw_dtype(self, spec: ChunkSpec) -> np.dtype | None:
        """The dtype whose memory (C order, no header) the encoded bytes are, when they are
        the chunk's elements one after the other; None otherwise.  A chain whose serialiser
        says so may decode straight into a caller's buffer."""
        return None

    def max_encoded_size(self, spec: ChunkSpec) -> int | None:
        """The most bytes a chunk of ``spec`` serialises to, when bounded (what a compressor
        in front may inflate to at most); None when it is not."""
        raw = self.raw_dtype(spec)
        return None if raw is None else math.prod(spec.shape) * raw.itemsize


class BytesBytesCodec(V3Codec):
    """Transforms bytes (compressors, checksums).

    Besides ``encode``/``decode``, a compressor may offer faster paths; the chain uses them
    when it is the only bytes→bytes codec after a serialiser of raw memory:
    ``decode_into`` (when :attr:`decodes_into`), ``decode_range_into``, ``declared_size``,
    ``encode_transient``, ``encode_array`` and ``decode_frames_into``.
    """

    #: whether :meth:`decode_into` works
    decodes_into: bool = False
    #: whether :meth:`decode_frames_into` works
    decodes_frames: bool = False

    def encode(self, data: Any) -> bytes:
        raise NotImplementedError

    def decode(self, data: Any) -> Any:
        raise NotImplementedError

    def _encode_sync(self, chunk_bytes: Any, chunk_spec: Any) -> Any:
        encoded = self.evolve(_chunk_spec(chunk_spec)).encode(_bytes(chunk_bytes))
        return _prototype(chunk_spec).buffer.from_bytes(bytes(memoryview(encoded).cast("B")))

    def _decode_sync(self, chunk_bytes: Any, chunk_spec: Any) -> Any:
        decoded = self.evolve(_chunk_spec(chunk_spec)).decode(_bytes(chunk_bytes))
        return _prototype(chunk_spec).buffer.from_bytes(bytes(memoryview(decoded).cast("B")))

    def decode_limited(self, data: Any, limit: int) -> Any:
        """:meth:`decode`, failing (``ValueError``) as soon as the output would exceed
        ``limit`` bytes, for codecs that can stop early (deflate, bzip2, LZMA); others decode
        whole."""
        return self.decode(data)

    def decode_into(self, data: Any, out: np.ndarray) -> None:
        """Decode ``data`` into the C-contiguous array ``out``, whose size must be exactly the
        decoded size (ValueError otherwise)."""
        raise NotImplementedError

    def decode_frames_into(self, data: Any, out: np.ndarray) -> None:
        """Decode several encoded values stored one after the other in ``data``, each one
        passing :meth:`frames_in_place`, into the C-contiguous array ``out``, which they fill
        exactly, in order (ValueError otherwise): one call for many small chunks (when
        :attr:`decodes_frames`)."""
        raise NotImplementedError

    def frames_in_place(self, data: Any, starts: Sequence[int], lengths: Sequence[int], size: int) -> list[bool]:
        """For each value at ``starts`` (of ``lengths`` bytes) in ``data``: whether
        :meth:`decode_frames_into` may decode it with others, into a place of ``size`` bytes
        (exactly one encoded value, declaring that size, ending where the value ends)."""
        return [False] * len(starts)

    def decode_range_into(self, data: Any, out: np.ndarray, lo: int, hi: int) -> bool:
        """Decode at least bytes ``lo:hi`` of the decoded data into the same bytes of ``out``
        (as for :meth:`decode_into`), leaving the rest possibly stale; False, having written
        nothing, when only a whole decode would do."""
        return False

    def declared_size(self, data: Any) -> int | None:
        """The decoded size ``data`` declares in a header, when it has one (ValueError when
        the header itself is cut short)."""
        return None

    def encode_transient(self, data: Any) -> Any:
        """:meth:`encode` into a buffer this thread reuses for its next call, or None."""
        return None

    def encode_array(self, arr: np.ndarray) -> bytes | None:
        """:meth:`encode` of a C-contiguous numeric array in one call, or None."""
        return None

    def encoded_size(self, size: int) -> int | None:
        """Exact encoded size for an input of ``size`` bytes, if fixed (checksums), else None."""
        return None


def codec_from_dict(data: Mapping[str, Any]) -> V3Codec:
    """The codec a metadata document names, by the ``name`` of the codec classes defined so far
    (the registry, above this module, also knows the names registered by extensions).

    Raises
    ------
    ValueError
        If no codec class has that name.
    """
    name = data.get("name") if isinstance(data, Mapping) else None
    candidates: list[type[V3Codec]] = []
    pending = list(V3Codec.__subclasses__())
    while pending:
        cls = pending.pop(0)
        if name and cls.__dict__.get("name") == name:
            candidates.append(cls)
        pending.extend(cls.__subclasses__())
    error: Exception = ValueError(f"no codec named {name!r}")
    # a v2 compressor's fast path may share a v3 codec's name (blosc) but not its settings
    for cls in candidates:
        try:
            return cls.from_dict(data)
        except TypeError as exc:
            error = exc
    raise error


def check_codecs_available(codecs: Iterable[V3Codec]) -> None:
    """:meth:`V3Codec.check_available` of every codec of a chain, those inside sharding codecs
    (their ``codecs`` and ``index_codecs``) included."""
    stack = list(codecs)
    while stack:
        codec = stack.pop()
        codec.check_available()
        stack.extend(getattr(codec, "codecs", None) or ())
        stack.extend(getattr(codec, "index_codecs", None) or ())


def parse_codec_json(obj: Any, key: str | None) -> tuple[str, dict[str, Any]]:
    """Split a codec's JSON (``"name"`` or ``{"name": ..., "configuration": {...}}``)."""
    if isinstance(obj, str):
        return obj, {}
    if not isinstance(obj, dict) or not isinstance(obj.get("name"), str):
        raise MetadataError(f"codecs: expected {{'name': ..., 'configuration': ...}}, got {obj!r}", key)
    extra = set(obj) - {"name", "configuration", "must_understand"}
    if extra:
        raise MetadataError(f"codec {obj['name']!r}: unexpected field(s) {sorted(extra)}", key)
    config = obj.get("configuration", {})
    if config is None:
        config = {}
    if not isinstance(config, dict):
        raise MetadataError(f"codec {obj['name']!r}: configuration must be an object, got {config!r}", key)
    return obj["name"], config
