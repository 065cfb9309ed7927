"""Converting a hierarchy between Zarr v2 and v3 in place, by rewriting metadata only.

Chunks are never touched: a converted v3 array uses the ``v2`` chunk key encoding so its chunk
keys stay valid, and its codec chain reproduces the v2 filters/compressor/order byte for byte.
All new documents are built and validated before anything is written.  Consolidated metadata
is kept: a consolidated group is consolidated again in the new format, and a hierarchy with
nothing to convert is left untouched.

A conversion killed at any point leaves a hierarchy that reads correctly, and running it again
finishes it.  Readers (zarrkit and zarr-python alike) use ``zarr.json`` when a node holds both
formats' documents, and each document is stored with one atomic write, so the order of writes
is what keeps every intermediate state readable:

* v2 → v3: every node's ``zarr.json`` is written children first, so a group reads as v3 only
  once everything below it does; a consolidated group's ``zarr.json`` is written once, with its
  consolidated metadata.  Then the v2 documents are removed (``.zarray``/``.zgroup`` before
  ``.zattrs``, so a node whose v2 description is left is complete; ``.zmetadata`` last).
* v3 → v2: every node's v2 documents are written, then each consolidated group's
  ``.zmetadata``; readers go on using ``zarr.json`` meanwhile.  Then the ``zarr.json``
  documents are removed, parents first, so a reader that takes a group's format for its
  members (zarr-python) finds the v2 documents there.

A store that could not finish the conversion -- read-only, or unable to delete the old
documents -- is refused before the first write.  In a zip file (``ZipStore`` in mode ``'a'``)
the whole conversion appears at once, when the store is closed.

A re-run knows what is left from the store alone: documents of the old format still present
(a node holding both keeps its ``zarr.json``, the one readers were using; a v3 node still
holding ``zarr.json`` is converted from it again), and a group was consolidated if it holds
consolidated metadata of either format.  Only the last removal makes the hierarchy look done.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from ..codecs import BytesCodec, ShardingCodec, TransposeCodec, VLenBytesCodec, VLenUTF8Codec
from ..codecs.base import ArrayArrayCodec
from ..codecs.chain import split_codecs
from ..errors import MetadataError, NodeNotFoundError, ReadOnlyError, StoreOperationNotSupported
from ..metadata import io, v2, v3
from ..metadata.codec_args import to_v3_codec, v3_chain_to_v2
from ..metadata.consolidated import (
    ZMETADATA,
    consolidate,
    consolidated_document_v2,
    consolidated_document_v3,
    load_consolidated,
)
from ..metadata.dtypes import BYTES_DTYPE
from ..metadata.normalize import normalize_path
from ..metadata.walk import iter_nodes
from ..storage.base import Store, describe_location, join_path
from ..storage.coerce import StoreLike, open_store

__all__ = [
    "convert", "leftover_documents", "mixed_documents", "v2_to_v3_metadata", "v3_to_v2_metadata",
]


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
        aa.append(TransposeCodec.reversing(len(meta.shape)))
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
    if not isinstance(ab, (BytesCodec, VLenUTF8Codec, VLenBytesCodec)):
        raise MetadataError(f"serializer {ab.name!r} has no v2 equivalent", key)
    # the chunks stay as stored, so a crc32c checksum is refused, not dropped
    chain = v3_chain_to_v2(aa, ab, bb, len(meta.shape), crc32c="refuse", key=key)
    dtype = meta.dtype
    filters = chain.filters
    if chain.object_codec is not None:
        filters = (chain.object_codec, *filters)
        dtype = np.dtype(object)
    elif isinstance(ab, BytesCodec) and ab.endian is not None and dtype.itemsize > 1:
        dtype = dtype.newbyteorder("<" if ab.endian == "little" else ">")
    fill = meta.fill_value
    if dtype.kind != "O" and fill is not None:
        fill = np.asarray(fill).astype(dtype)[()]
    return v2.ArrayMetadataV2(
        meta.shape, meta.chunks, dtype, chain.compressor, fill, chain.order, filters or None,
        meta.chunk_key_encoding.separator,
    )


#: the documents of each format a node may hold (v2's consolidated document included)
_V2_NAMES = (v2.ARRAY_KEY, v2.GROUP_KEY, v2.ATTRS_KEY, ZMETADATA)
_V3_NAMES = (v3.ZARR_JSON,)


def _old_names(zarr_format: int) -> tuple[str, ...]:
    return _V2_NAMES if zarr_format == 3 else _V3_NAMES


def leftover_documents(store: StoreLike, zarr_format: int, path: str | None = None) -> dict[str, list[str]]:
    """The documents of the other format a conversion of the hierarchy at ``path`` to
    ``zarr_format`` would remove, by node path (only nodes holding some): empty when the
    hierarchy is fully in ``zarr_format``, even after an interrupted conversion whose nodes
    all read in the new format already."""
    s = open_store(store)
    names = _old_names(zarr_format)
    out: dict[str, list[str]] = {}
    for node_path, _, _, _ in iter_nodes(s, normalize_path(path)):
        keys = [n for n in names if s.exists(join_path(node_path, n))]
        if keys:
            out[node_path] = keys
    return out


def mixed_documents(store: Store, path: str) -> tuple[list[str], bool] | None:
    """For a node holding documents of both formats (a conversion interrupted, or metadata
    written beside the other format's), the v2 document names it holds beside ``zarr.json``
    and whether the two formats describe the same node; None for a node in one format."""
    key = join_path(path, v3.ZARR_JSON)
    doc = io.read_json(store, key)
    if doc is None:
        return None
    names = [n for n in _V2_NAMES if store.exists(join_path(path, n))]
    if not names:
        return None
    kind = io.node_info(store, path)[0]
    try:
        attrs = io.read_attributes(store, path, 2)
        if kind == "array" and v2.ARRAY_KEY in names:
            v2meta = v2.ArrayMetadataV2.from_json(io.read_json(store, join_path(path, v2.ARRAY_KEY)))
            mine = json.loads(v2_to_v3_metadata(v2meta, key).to_bytes(attrs))
        elif kind == "group" and v2.GROUP_KEY in names:
            mine = {"attributes": attrs, "zarr_format": 3, "node_type": "group"}
        else:
            return names, False  # a v2 document of the other kind of node, or attributes alone
    except (MetadataError, ValueError, TypeError):
        return names, False
    doc = dict(doc)
    doc.pop("consolidated_metadata", None)
    return names, mine == doc


def convert(store: StoreLike, zarr_format: int, path: str | None = None) -> None:
    """Convert the hierarchy at ``path`` to ``zarr_format`` (2 or 3) in place, metadata only.

    The conversion survives being killed at any point: documents are written in an order in
    which every intermediate state reads correctly (see the module documentation), and
    running the same conversion again finishes it (documents of the old format removed,
    consolidated metadata rewritten), ending in the state an uninterrupted conversion leaves.

    Parameters
    ----------
    store : str, MutableMapping or store
        The store holding the hierarchy.
    zarr_format : {2, 3}
        The format to convert to.
    path : str, optional
        Path of the node (array or group) to convert with everything below it (default: the
        root).

    Raises
    ------
    NodeNotFoundError
        Nothing is at ``path``.
    ValueError
        A ``zarr_format`` other than 2 and 3.
    UnsupportedCodecError
        A codec or data type the other format cannot describe (nothing is written then).
    ReadOnlyError, StoreOperationNotSupported
        The store is read-only, or cannot delete (the old documents could not be removed):
        nothing is written; convert a copy instead.

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
    s = open_store(store)
    path = normalize_path(path)
    infos = [(p, kind, fmt, doc) for p, kind, fmt, doc in iter_nodes(s, path)]
    if not infos:
        raise NodeNotFoundError(io.not_found_message("array or group", store, path, "to convert"), path)
    names = _old_names(zarr_format)
    old = {p: [n for n in names if s.exists(join_path(p, n))] for p, _, _, _ in infos}
    if not any(old.values()):
        return  # nothing to convert: nothing is written (consolidated metadata stays as it is)
    _check_can_finish(s, path, zarr_format)
    consolidated = {p for p, kind, _, doc in infos if kind == "group" and _was_consolidated(s, p, doc)}
    above = _consolidated_above(s, path, zarr_format)
    # every new document is built (and so validated) before anything is written
    plan: dict[str, tuple[Any, dict[str, Any]]] = {}
    for node_path, kind, fmt, doc in infos:
        if fmt == zarr_format:
            continue  # zarr.json (v3) is what readers already use: it is kept as it is
        attrs = io.read_attributes(s, node_path, fmt or 2)
        new = None
        if kind == "array":
            meta = io.load_array_metadata(s, node_path)
            key = io.meta_key(node_path, meta.metadata_key)
            new = v2_to_v3_metadata(meta, key) if zarr_format == 3 else v3_to_v2_metadata(meta, key)
        plan[node_path] = (new, attrs)
    if zarr_format == 3:
        _write_v3(s, infos, plan, consolidated)
    else:
        _write_v2(s, infos, plan, consolidated)
    for group_path in above:
        consolidate(s, group_path)
    # only now are the old documents removed, parents first: until the last one goes, a
    # re-run sees work left and finishes it
    for node_path, _, _, _ in infos:
        for name in old[node_path]:
            s.delete(join_path(node_path, name))


def _check_can_finish(store: Store, path: str, zarr_format: int) -> None:
    """Refuse, before anything is written, a conversion the store could not finish: one that
    would leave both formats' documents behind, every re-run failing the same way."""
    where = describe_location(store, path)
    hint = (f"convert a copy instead (zarrkit cp SOURCE NEW --zarr-format {zarr_format}, or "
            f"zarrkit.copy_store then zarrkit.convert on the copy)")
    if getattr(store, "read_only", False) or not getattr(store, "supports_writes", True):
        raise ReadOnlyError(f"cannot convert {where} to Zarr v{zarr_format}: the store is "
                            f"read-only; nothing was written; {hint}")
    if not getattr(store, "supports_deletes", True):
        raise StoreOperationNotSupported(
            f"cannot convert {where} to Zarr v{zarr_format} in place: the conversion removes the "
            f"old format's documents, which this store cannot delete; nothing was written; {hint}"
        )


def _write_v3(s: Store, infos: list[Any], plan: dict[str, Any], consolidated: set[str]) -> None:
    # children before parents, so a group's zarr.json (which readers prefer) appears only
    # once every node below has one, and a consolidated group's zarr.json is written once,
    # with its consolidated metadata
    for node_path, kind, _, doc in reversed(infos):
        if node_path in plan:
            new, attrs = plan[node_path]
            if kind == "array":
                io.write_array_metadata(s, node_path, new, attributes=attrs)
                continue
            doc = {"attributes": attrs, "zarr_format": 3, "node_type": "group"}
        elif node_path not in consolidated:
            continue
        if node_path in consolidated:
            s.set(join_path(node_path, v3.ZARR_JSON), consolidated_document_v3(s, node_path, doc))
        else:
            io.write_group_metadata(s, node_path, 3, doc["attributes"])


def _write_v2(s: Store, infos: list[Any], plan: dict[str, Any], consolidated: set[str]) -> None:
    # zarr.json stays (and readers keep using it) until every v2 document, consolidated
    # ones included, is written
    for node_path, kind, _, _ in infos:
        if node_path not in plan:
            continue
        new, attrs = plan[node_path]
        if kind == "array":
            io.write_array_metadata(s, node_path, new, attributes=attrs)
        else:
            io.write_group_metadata(s, node_path, 2, attrs)
    for node_path, _, _, _ in reversed(infos):
        if node_path in consolidated:
            s.set(join_path(node_path, ZMETADATA), consolidated_document_v2(s, node_path))


def _was_consolidated(store: Store, path: str, doc: Any) -> bool:
    """Whether the group at ``path`` has consolidated metadata in either format (an
    interrupted conversion may have left the old one, or already written the new one)."""
    if isinstance(doc, dict) and doc.get("consolidated_metadata"):
        return True
    return store.exists(join_path(path, ZMETADATA))


def _consolidated_above(store: Store, path: str, zarr_format: int) -> list[str]:
    """The consolidated groups above the subtree at ``path``, deepest first, whose consolidated
    metadata the conversion must rewrite.  A consolidated group above the subtree that stays
    in the other format could not describe the converted subtree: the conversion is refused
    before anything is written."""
    found = []
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
    return found


def _is_consolidated(store: Store, path: str) -> bool:
    try:
        return load_consolidated(store, path) is not None
    except MetadataError:
        return True  # a malformed consolidated document is rewritten, not dropped
