"""Converting a hierarchy between Zarr v2 and v3 in place, by rewriting metadata only.

Chunks are never touched: a converted v3 array uses the ``v2`` chunk key encoding so its chunk
keys stay valid, and its codec chain reproduces the v2 filters/compressor/order byte for byte.
All new documents are built and validated before anything is written; the new metadata is
written before the old is removed, and readers prefer ``zarr.json``, so an interrupted
conversion leaves a readable hierarchy.  Consolidated metadata is kept: a consolidated group
is consolidated again in the new format, and a hierarchy with nothing to convert is left
untouched.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .codecs.base import ArrayArrayCodec
from .codecs.chain import split_codecs
from .codecs.sharding import ShardingCodec
from .codecs.v3_builtin import (
    BytesCodec,
    NumcodecsArrayArrayCodec,
    NumcodecsBytesBytesCodec,
    TransposeCodec,
    VLenBytesCodec,
    VLenUTF8Codec,
)
from .errors import MetadataError, NodeNotFoundError
from .metadata import io, v2, v3
from .metadata.codec_args import to_v3_codec
from .metadata.consolidated import ZMETADATA, consolidate, load_consolidated
from .metadata.dtypes import BYTES_DTYPE
from .metadata.normalize import normalize_path
from .storage.base import Store, join_path
from .storage.coerce import coerce_store

__all__ = ["convert", "v2_to_v3_metadata", "v3_to_v2_metadata"]


def v2_to_v3_metadata(meta: v2.ArrayMetadataV2, key: str = "") -> v3.ArrayMetadataV3:
    """The v3 metadata describing the same stored chunks as ``meta``."""
    filters = list(meta.filters or ())
    dtype = meta.dtype
    if dtype.kind == "O":
        if not filters or filters[0].codec_id not in ("vlen-utf8", "vlen-bytes"):
            raise MetadataError("only vlen-utf8 and vlen-bytes object arrays have a v3 equivalent", key)
        serializer: Any = VLenUTF8Codec() if filters.pop(0).codec_id == "vlen-utf8" else VLenBytesCodec()
        if isinstance(serializer, VLenBytesCodec):
            dtype = BYTES_DTYPE
    else:
        no_order = dtype.itemsize == 1 or (dtype.kind in "SV" and not dtype.names)
        big = dtype.byteorder == ">" or (dtype.byteorder == "=" and not np.little_endian)
        serializer = BytesCodec(None if no_order else "big" if big else "little")
        if dtype.byteorder in "<>":
            dtype = dtype.newbyteorder("=")
    aa: list[Any] = []
    if meta.order == "F" and len(meta.shape) >= 1:
        aa.append(TransposeCodec(tuple(reversed(range(len(meta.shape))))))
    aa += [to_v3_codec(f, key) for f in filters]
    for c in aa:
        if not isinstance(c, ArrayArrayCodec):
            raise MetadataError(f"filter {c.name!r} has no v3 array→array equivalent", key)
    bb = [] if meta.compressor is None else [to_v3_codec(meta.compressor, key)]
    fill = meta.fill_value
    if fill is None:
        fill = "" if serializer.name == "vlen-utf8" else b"" if serializer.name == "vlen-bytes" else np.zeros((), dtype)[()]
    elif dtype.kind != "O":
        fill = np.asarray(fill).astype(dtype)[()]
    cke = v3.ChunkKeyEncoding("v2", meta.dimension_separator)
    return v3.ArrayMetadataV3(meta.shape, meta.chunks, dtype, fill, tuple(aa) + (serializer,) + tuple(bb), cke)


def v3_to_v2_metadata(meta: v3.ArrayMetadataV3, key: str = "") -> v2.ArrayMetadataV2:
    """The v2 metadata describing the same stored chunks, when the v3 codecs allow it."""
    if meta.chunk_key_encoding.name != "v2":
        raise MetadataError(
            "only arrays with the 'v2' chunk key encoding can be converted to v2 without moving chunks",
            key,
        )
    if meta.chunk_shapes is not None:
        raise MetadataError("arrays on a rectilinear chunk grid have no v2 equivalent", key)
    aa, ab, bb = split_codecs(meta.codecs, key)
    if isinstance(ab, ShardingCodec):
        raise MetadataError("sharded arrays have no v2 equivalent", key)
    if len(bb) > 1:
        raise MetadataError(f"v2 allows one compressor, the chain has {len(bb)} bytes→bytes codecs", key)
    order = "C"
    if aa and isinstance(aa[0], TransposeCodec):
        if aa[0].order != tuple(reversed(range(len(meta.shape)))):
            raise MetadataError(f"transpose order {list(aa[0].order)} has no v2 equivalent", key)
        order = "F"
        aa = aa[1:]
    filters: list[Any] = []
    for c in aa:
        if not isinstance(c, NumcodecsArrayArrayCodec):
            raise MetadataError(f"codec {c.name!r} has no v2 equivalent", key)
        filters.append(c.codec)
    dtype = meta.dtype
    if isinstance(ab, (VLenUTF8Codec, VLenBytesCodec)):
        filters.insert(0, ab._impl)
        dtype = np.dtype(object)
    elif isinstance(ab, BytesCodec):
        if ab.endian is not None and dtype.itemsize > 1:
            dtype = dtype.newbyteorder("<" if ab.endian == "little" else ">")
    else:
        raise MetadataError(f"serializer {ab.name!r} has no v2 equivalent", key)
    compressor = None
    if bb:
        c = bb[0]
        compressor = c.codec if isinstance(c, NumcodecsBytesBytesCodec) or hasattr(c, "codec") else None
        if compressor is None:
            raise MetadataError(f"codec {c.name!r} has no v2 equivalent", key)
    fill = meta.fill_value
    if dtype.kind != "O" and fill is not None:
        fill = np.asarray(fill).astype(dtype)[()]
    return v2.ArrayMetadataV2(
        meta.shape, meta.chunks, dtype, compressor, fill, order, tuple(filters) or None,
        meta.chunk_key_encoding.separator,
    )


def _nodes(store: Store, path: str) -> list[tuple[str, str]]:
    kind = io.node_kind(store, path)
    if kind is None:
        return []
    out = [(path, kind)]
    if kind == "group":
        prefix = f"{path}/" if path else ""
        for name in store.list_dir(prefix):
            out += _nodes(store, prefix + name)
    return out


def convert(store: Any, zarr_format: int, path: str | None = None) -> None:
    """Convert the hierarchy at ``path`` to ``zarr_format`` (2 or 3) in place, metadata only.

    Examples
    --------
    >>> import zarrkit
    >>> store = {}
    >>> z = zarrkit.zeros((4,), chunks=2, store=store, zarr_format=2)
    >>> z[:] = 1
    >>> zarrkit.convert(store, zarr_format=3)
    >>> zarrkit.open_array(store, mode='r').zarr_format
    3
    """
    if zarr_format not in (2, 3):
        raise ValueError(f"zarr_format must be 2 or 3, got {zarr_format!r}")
    s = coerce_store(store)
    path = normalize_path(path)
    nodes = _nodes(s, path)
    if not nodes:
        raise NodeNotFoundError(f"nothing to convert at path {path!r}", path)
    if all(io.node_info(s, p)[1] == zarr_format for p, _ in nodes):
        return  # nothing to convert: nothing is written (consolidated metadata stays as it is)
    consolidated = _consolidated_groups(s, path, nodes, zarr_format)
    plan: list[tuple[str, str, Any, dict[str, Any]]] = []
    for node_path, kind in nodes:
        kind_, fmt, _ = io.node_info(s, node_path)
        attrs = io.read_attributes(s, node_path, fmt or 2)
        if fmt == zarr_format:
            continue
        if kind == "array":
            meta = io.load_array_metadata(s, node_path)
            key = io.meta_key(node_path, meta.metadata_key)
            new = v2_to_v3_metadata(meta, key) if zarr_format == 3 else v3_to_v2_metadata(meta, key)
            plan.append((node_path, kind, new, attrs))
        else:
            plan.append((node_path, kind, None, attrs))
    for node_path, kind, new, attrs in plan:
        if kind == "array":
            io.write_array_metadata(s, node_path, new, attributes=attrs)
            if zarr_format == 2:
                io.write_attributes(s, node_path, attrs, 2)
        else:
            io.write_group_metadata(s, node_path, zarr_format, attrs)
    for node_path, kind, _, _ in plan:
        if zarr_format == 3:
            for name in (v2.ARRAY_KEY, v2.GROUP_KEY, v2.ATTRS_KEY):
                s.delete(join_path(node_path, name))
        else:
            s.delete(join_path(node_path, v3.ZARR_JSON))
    # consolidated metadata is rewritten in the new format (v2: .zmetadata, v3: inline in the
    # group's zarr.json), deepest group first so that no document is left stale
    for group_path in consolidated:
        if zarr_format == 3:
            s.delete(join_path(group_path, ZMETADATA))
        consolidate(s, group_path)


def _consolidated_groups(store: Store, path: str, nodes: list[tuple[str, str]], zarr_format: int) -> list[str]:
    """The groups whose consolidated metadata a conversion of ``nodes`` must rewrite: the
    consolidated groups of the subtree and above it, deepest first.  A consolidated group
    above the subtree that stays in the other format could not describe the converted
    subtree: the conversion is refused before anything is written."""
    found = [p for p, kind in nodes if kind == "group" and _is_consolidated(store, p)]
    parts = path.split("/") if path else []
    for i in range(len(parts) - 1, -1, -1):
        above = "/".join(parts[:i])
        if not _is_consolidated(store, above):
            continue
        fmt = io.node_info(store, above)[1]
        if fmt != zarr_format:
            raise MetadataError(
                f"group {above or '/'!r} above {path!r} has consolidated Zarr v{fmt} metadata, which "
                f"cannot describe a Zarr v{zarr_format} subtree; convert the whole hierarchy "
                f"(path={above!r}) instead",
                join_path(above, ZMETADATA if fmt == 2 else v3.ZARR_JSON),
            )
        found.append(above)
    return sorted(found, key=lambda p: -len(p.split("/")) if p else 0)


def _is_consolidated(store: Store, path: str) -> bool:
    try:
        return load_consolidated(store, path) is not None
    except MetadataError:
        return True  # a malformed consolidated document is rewritten, not dropped

