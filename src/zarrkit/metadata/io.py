"""Reading and writing node metadata documents in a store, and finding what a path holds.

This module and the dialect modules are the only places that know which format a node is in:
v3 nodes have ``zarr.json``; v2 arrays ``.zarray`` and v2 groups ``.zgroup`` (attributes in
``.zattrs``).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

from ..errors import (
    ArrayNotFoundError,
    ContainsArrayError,
    ContainsGroupError,
    GroupNotFoundError,
    MetadataError,
    VersionConflictError,
)
from ..storage.base import ABSENT, Store, describe_location, describe_store, join_path
from ..storage.optimistic import KEEP, update
from ..storage.store_path import refuse_writing_mode
from . import v2, v3
from .common import parse_document
from .json_text import dump_json, json_number, load_json

__all__ = [
    "not_found_message",
    "meta_key",
    "read_json",
    "node_info",
    "node_kind",
    "node_kinds",
    "array_documents",
    "group_documents",
    "write_new_node",
    "make_room",
    "check_free",
    "require_parent_groups",
    "reuse_documents",
    "load_array_metadata",
    "check_group",
    "write_array_metadata",
    "write_group_metadata",
    "attributes_key",
    "read_attributes",
    "write_attributes",
    "read_attributes_at",
    "write_attributes_at",
    "json_bytes",
]

json_bytes = v2.json_bytes


def not_found_message(what: str, store: object, path: str, reason: str = "") -> str:
    """The one form of a "not found" message: ``No array found in store DirectoryStore('/x') at
    path 'a/b'`` (zarr-python's form, which its tests and xarray's match), ``what`` being
    ``'array'``, ``'group'``, ``'array or group'``..., then ``reason`` if given."""
    return f"No {what} found in store {describe_store(store)} at path {path!r}" + (f" {reason}" if reason else "")


def meta_key(path: str, name: str) -> str:
    return join_path(path, name)


def parse_json(raw: Any, key: str) -> Any:
    """The document stored as ``raw`` (None for None); see :func:`.json_text.load_json`."""
    if raw is None:
        return None
    return load_json(raw, key)


def read_json(store: Store, key: str) -> Any:
    """The parsed JSON document at ``key``, or None if the key is missing."""
    return parse_json(store.get(key), key)


def node_info(store: Store, path: str) -> tuple[str | None, int | None, Any]:
    """``(kind, zarr_format, document)`` of the node at ``path``; kind None if there is none.

    The v3 ``zarr.json`` is looked for first; its document is returned so callers need not
    read it again.  For v2 the document is not read (None).
    """
    key = meta_key(path, v3.ZARR_JSON)
    kept = _reused.get(id(store))
    doc = kept.pop(key, None) if kept else None
    if doc is None:
        parsed = getattr(store, "parsed_document", None)
        doc = read_json(store, key) if parsed is None else parsed(key)
    if doc is not None:
        return _v3_node_type(doc, key), 3, doc
    if store.get(meta_key(path, v2.ARRAY_KEY)) is not None:
        return "array", 2, None
    if store.get(meta_key(path, v2.GROUP_KEY)) is not None:
        return "group", 2, None
    return None, None, None


def _v3_node_type(doc: Any, key: str) -> str:
    doc = parse_document(doc, (), key)
    node_type = doc.get("node_type")
    if doc.get("zarr_format") != 3 or node_type not in ("array", "group"):
        raise MetadataError(
            f"expected zarr_format 3 and node_type 'array' or 'group', got "
            f"{doc.get('zarr_format')!r} and {node_type!r}",
            key,
        )
    return node_type


def node_kinds(store: Store, paths: list[str]) -> dict[str, str | None]:
    """:func:`node_kind` of many paths, with one batched read (``store.get_many``) per kind of
    metadata document looked for, in :func:`node_info`'s order: listing a group's members
    costs at most three rounds of requests, not a request per member."""
    kinds: dict[str, str | None] = dict.fromkeys(paths)
    kept = _reused.get(id(store))
    parsed = getattr(store, "parsed_document", None)  # documents at hand (consolidated)
    pending = list(paths)
    for name in (v3.ZARR_JSON, v2.ARRAY_KEY, v2.GROUP_KEY):
        if not pending:
            break
        keys = [meta_key(p, name) for p in pending]
        found = ({k: parsed(k) for k in keys} if parsed is not None and name == v3.ZARR_JSON
                 else store.get_many(keys))
        missing = []
        for p, key in zip(pending, keys):
            raw = found.get(key)
            if raw is None:
                missing.append(p)
            elif name == v3.ZARR_JSON:
                doc = parse_json(raw, key) if parsed is None else raw
                kinds[p] = _v3_node_type(doc, key)
                if kept is not None:
                    kept[key] = doc
            else:
                kinds[p] = "array" if name == v2.ARRAY_KEY else "group"
        pending = missing
    return kinds


#: v3 documents read by node_kinds while a walk of a store is under way (reuse_documents), by
#: id of the store and key: opening a listed node takes its document from here, once
_reused: dict[int, dict[str, Any]] = {}
_reused_lock = threading.Lock()


@contextlib.contextmanager
def reuse_documents(store: Store) -> Iterator[None]:
    """Within this block, the nodes a listing of ``store`` found (:func:`node_kinds`) are
    opened with the v3 documents the listing read, not with a second read each (a walk of
    object storage would otherwise make two requests per node).  A nested block shares the
    outer one's documents."""
    mine: dict[str, Any] = {}
    with _reused_lock:
        outer = _reused.setdefault(id(store), mine)
    try:
        yield
    finally:
        if outer is mine:
            with _reused_lock:
                _reused.pop(id(store), None)


def node_kind(store: Store, path: str) -> str | None:
    """``'array'``, ``'group'`` or None for what is stored at ``path``."""
    return node_info(store, path)[0]


def array_metadata_from_dict(data: Any) -> Any:
    """The metadata object of an array's document given as a dict, in zarr-python 3's form
    (``from_dict``: the ``zarr.json`` fields for ``zarr_format`` 3, the ``.zarray`` ones for
    2; tuples allowed for lists, the attributes under ``attributes``).

    Raises
    ------
    MetadataError
        A ``zarr_format`` other than 2 or 3, or an invalid field (named).
    """
    if not isinstance(data, dict):
        raise TypeError(f"from_dict: expected a dict of an array's metadata fields, got {type(data).__name__}")
    zarr_format = data.get("zarr_format")
    if zarr_format == 3:
        return v3.ArrayMetadataV3.from_dict(data)
    if zarr_format == 2:
        return v2.ArrayMetadataV2.from_dict(data)
    raise MetadataError(f"zarr_format of the metadata given: Invalid zarr_format: {zarr_format}. Expected 2 or 3")


def load_array_metadata(store: Store, path: str) -> Any:
    """Parse the array metadata at ``path`` (v2 or v3); ArrayNotFoundError when there is none."""
    kind, fmt, doc = node_info(store, path)
    if kind != "array":
        raise ArrayNotFoundError(not_found_message("array", store, path), path=path)
    if fmt == 3:
        return v3.ArrayMetadataV3.from_json(doc, meta_key(path, v3.ZARR_JSON))
    key = meta_key(path, v2.ARRAY_KEY)
    return v2.ArrayMetadataV2.from_json(read_json(store, key), key)


def read_array_document(store: Store, path: str, zarr_format: int) -> tuple[Any, dict[str, Any] | None]:
    """The metadata of the array of format ``zarr_format`` at ``path`` as stored now, with one
    read, and the attributes its document holds (v3; None for v2, whose attributes are a
    document of their own); ArrayNotFoundError when there is none."""
    name = v3.ZARR_JSON if zarr_format == 3 else v2.ARRAY_KEY
    key = meta_key(path, name)
    doc = read_json(store, key)
    if doc is None:
        raise ArrayNotFoundError(not_found_message("array", store, path), path=path)
    if zarr_format == 3:
        return v3.ArrayMetadataV3.from_json(doc, key), doc.get("attributes", {})
    return v2.ArrayMetadataV2.from_json(doc, key), None


def read_array_document_versioned(
    store: Store, path: str, zarr_format: int
) -> tuple[Any, dict[str, Any] | None, Any]:
    """:func:`read_array_document` with the version of the metadata document read (None on
    a store without versions), for a change of it written on the condition that it is still
    that version (:func:`write_array_document`)."""
    if not store.supports_conditional_writes:
        return (*read_array_document(store, path, zarr_format), None)
    key = meta_key(path, v3.ZARR_JSON if zarr_format == 3 else v2.ARRAY_KEY)
    raw, version = store.get_versioned(key)
    doc = parse_json(raw, key)
    if doc is None:
        raise ArrayNotFoundError(not_found_message("array", store, path), path=path)
    if zarr_format == 3:
        return v3.ArrayMetadataV3.from_json(doc, key), doc.get("attributes", {}), version
    return v2.ArrayMetadataV2.from_json(doc, key), None, version


def write_array_document(store: Store, path: str, meta: Any, attributes: dict[str, Any] | None, version: Any) -> Any:
    """Write array metadata (as :func:`write_array_metadata`), the metadata document on the
    condition that it is still ``version`` (None: plainly); VersionConflictError when it is
    not, before anything is written.  Returns the version written (None: written plainly)."""
    if version is None:
        write_array_metadata(store, path, meta, attributes)
        return None
    documents = array_documents(path, meta, attributes)
    *others, key = documents  # (a v2 .zattrs, when given, goes first: see array_documents)
    for other in others:
        store.set(other, documents[other])
    return store.set_if(key, documents[key], version)


def check_group(store: Store, path: str) -> int:
    """Validate the group document at ``path`` and return its format."""
    kind, fmt, doc = node_info(store, path)
    if kind != "group":
        raise GroupNotFoundError(not_found_message("group", store, path), path=path)
    if fmt == 3:
        v3.parse_group_v3(doc, meta_key(path, v3.ZARR_JSON))
        return 3
    key = meta_key(path, v2.GROUP_KEY)
    doc = read_json(store, key)
    doc = parse_document(doc, (), key)
    if doc.get("zarr_format") != 2:
        raise MetadataError(f"zarr_format: expected 2, got {doc.get('zarr_format')!r}", key)
    # zarr-python 3 adds "consolidated_metadata": null to v2 groups it writes; the spec allows no
    # other keys, so that one is read and ignored, and never written.
    extra = sorted(set(doc) - {"zarr_format", "consolidated_metadata"})
    if extra:
        raise MetadataError(f"unexpected field(s) {extra} (the v2 spec allows no others)", key)
    return 2


def write_array_metadata(store: Store, path: str, meta: Any, attributes: dict[str, Any] | None = None) -> None:
    """Write array metadata.  A v3 document keeps the attributes already stored in it unless
    ``attributes`` is given.  For v2, ``attributes`` (when given) are written as ``.zattrs``
    before ``.zarray``: the array appears with its attributes or not at all, and attributes
    that cannot be written leave nothing written."""
    if meta.zarr_format == 3 and attributes is None:
        attributes = read_attributes(store, path, 3)
    for key, document in array_documents(path, meta, attributes).items():
        store.set(key, document)


def array_documents(path: str, meta: Any, attributes: dict[str, Any] | None) -> dict[str, bytes]:
    """The documents of an array at ``path``, by key, in the order they are written: its
    metadata with ``attributes`` (v3: one document; v2: ``.zattrs`` first, unless None)."""
    if meta.zarr_format == 3:
        key = meta_key(path, v3.ZARR_JSON)
        if attributes:
            _attributes_bytes(attributes, key, v2_document=False)  # an unstorable one named
        return {key: meta.to_bytes(attributes, key)}
    key = meta_key(path, v2.ARRAY_KEY)
    document = meta.to_bytes(key)
    documents = {}
    if attributes is not None:
        attrs_key = attributes_key(path, 2)
        documents[attrs_key] = _attributes_bytes(attributes, attrs_key)
    documents[key] = document
    return documents


def write_group_metadata(store: Store, path: str, zarr_format: int = 2, attributes: dict[str, Any] | None = None) -> None:
    for key, document in group_documents(path, zarr_format, attributes).items():
        store.set(key, document)


def group_documents(path: str, zarr_format: int = 2, attributes: dict[str, Any] | None = None) -> dict[str, bytes]:
    """The documents of a group at ``path``, by key, in the order they are written (v2:
    ``.zattrs`` before ``.zgroup``: the group appears with its attributes or not at all)."""
    if zarr_format == 3:
        doc = {"attributes": attributes or {}, "zarr_format": 3, "node_type": "group"}
        key = meta_key(path, v3.ZARR_JSON)
        if attributes:
            _attributes_bytes(attributes, key, v2_document=False)  # an unstorable one named
        return {key: v3.json_bytes_v3(doc, key)}
    if zarr_format == 2:
        attrs_key = attributes_key(path, 2)
        return {
            attrs_key: _attributes_bytes(attributes or {}, attrs_key),
            meta_key(path, v2.GROUP_KEY): json_bytes(v2.group_document_v2()),
        }
    raise ValueError(f"zarr_format must be 2 or 3, got {zarr_format!r}")


def attributes_key(path: str, zarr_format: int = 2) -> str:
    return meta_key(path, v3.ZARR_JSON if zarr_format == 3 else v2.ATTRS_KEY)


def read_attributes(store: Store, path: str, zarr_format: int = 2) -> dict[str, Any]:
    return read_attributes_at(store, attributes_key(path, zarr_format))


def _holds_node_document(key: str) -> bool:
    # v3 attributes live in the node's zarr.json; v2 ones are a document of their own
    return key.rsplit("/", 1)[-1] == v3.ZARR_JSON


def read_attributes_at(store: Store, key: str) -> dict[str, Any]:
    """The attributes stored at ``key``: a v2 ``.zattrs`` document, or the ``attributes`` of a
    v3 ``zarr.json``; ``{}`` when the key is missing."""
    return attributes_in(store.get(key), key)


def _attributes_bytes(attrs: dict[str, Any], key: str, v2_document: bool = True) -> bytes:
    """A v2 ``.zattrs`` document (sorted keys, indent 4), or with ``v2_document`` False the
    attributes checked the quickest way.  NaN and the infinities are the bare ``NaN``,
    ``Infinity``, ``-Infinity`` tokens zarr-python 2 and 3 both write (in ``.zattrs`` and in
    a ``zarr.json``'s attributes), numpy scalars the numbers they are (as zarr-python 2 stored
    them); a value JSON cannot hold is a ``TypeError`` naming its attribute, a nesting too
    deep a MetadataError."""
    try:
        if not v2_document:
            return dump_json(attrs, key, allow_nan=True, default=json_number)
        return dump_json(attrs, key, indent=4, sort_keys=True, allow_nan=True, default=json_number)
    except MetadataError:
        raise
    except (TypeError, ValueError) as exc:
        raise _unstorable(attrs, key, exc) from None


def _unstorable(attrs: dict[str, Any], key: str, exc: Exception) -> TypeError:
    """The error for attributes that cannot be stored, naming the first one that cannot."""
    for name, value in attrs.items() if isinstance(attrs, dict) else ():
        try:
            dump_json({name: value}, key, allow_nan=True, default=json_number)
        except MetadataError:
            raise
        except (TypeError, ValueError) as item_exc:
            return TypeError(
                f"{key}: attribute {name!r} cannot be stored: expected a JSON value (str, number, "
                f"bool, None, or lists and dicts of them), got {type(value).__name__} ({item_exc})"
            )
    return TypeError(f"attributes for {key!r} must be JSON serializable: {exc}")


def storable_attributes(attrs: dict[str, Any], key: str) -> dict[str, Any]:
    """``attrs`` as they read back once stored (numpy scalars as Python numbers); raises as
    :func:`_attributes_bytes` for attributes that cannot be stored, before anything is
    written."""
    raw = _attributes_bytes(attrs, key, v2_document=False)
    if _plain(attrs):
        return attrs
    return dict(load_json(raw, key))


def _plain(value: Any) -> bool:
    """Whether ``value`` holds only what JSON gives back as it is (no numpy scalars, tuples)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if type(v) is dict:
            stack.extend(v.values())
        elif type(v) is list:
            stack.extend(v)
        elif not (v is None or type(v) in (str, int, float, bool)):
            return False
    return True


def write_attributes(store: Store, path: str, attrs: dict[str, Any], zarr_format: int = 2) -> None:
    write_attributes_at(store, attributes_key(path, zarr_format), attrs)


def write_attributes_at(store: Store, key: str, attrs: dict[str, Any]) -> dict[str, Any]:
    """Store ``attrs`` at ``key`` (into the ``attributes`` of a v3 ``zarr.json``, which must
    exist; as a whole v2 document otherwise); returns them as they read back (numpy scalars
    as Python numbers).  Attributes that cannot be stored raise before anything is written."""
    raw = store.get(key) if _holds_node_document(key) else None
    document = with_attributes(raw, key, attrs)
    store.set(key, document)
    return attrs if _plain(attrs) else attributes_in(document, key)


def attributes_in(raw: Any, key: str) -> dict[str, Any]:
    """The attributes in ``raw``, the document stored at ``key`` (see
    :func:`read_attributes_at`; ``{}`` for None)."""
    doc = parse_json(raw, key)
    if doc is None:
        return {}
    if _holds_node_document(key):
        doc = doc.get("attributes", {}) if isinstance(doc, dict) else doc
    if not isinstance(doc, dict):
        raise MetadataError(f"attributes must be a JSON object, got {type(doc).__name__}", key)
    return doc


def with_attributes(raw: Any, key: str, attrs: dict[str, Any]) -> bytes:
    """The document to store at ``key`` for ``attrs``, ``raw`` being the one stored there now
    (a v3 ``zarr.json``, which must exist, keeps everything else; see
    :func:`write_attributes_at`)."""
    in_node_document = _holds_node_document(key)
    encoded = _attributes_bytes(attrs, key, not in_node_document)
    if not in_node_document:
        return encoded
    doc = parse_json(raw, key)
    if not isinstance(doc, dict):
        raise MetadataError("no zarr.json to hold the attributes", key)
    doc["attributes"] = attrs
    return v3.json_bytes_v3(doc, key)


def write_new_node(
    store: Store, path: str, zarr_format: int, documents: dict[str, bytes], overwrite: bool = False,
    chunk_store: Store | None = None,
) -> None:
    """Write a new node's ``documents`` (by key, in order) at ``path``, after making room for
    it (see :func:`make_room`).  Without ``overwrite``, on a store with conditional writes, the
    node's own document (the last) is created only where there is none, atomically: of
    writers creating one node at once, exactly one succeeds and the others raise
    ContainsArrayError or ContainsGroupError.  The documents before it (v2 attributes) are
    written while the node's document is still missing (checked after each is read, and
    again after it is written: one written after another writer created the node is put back
    as it was read), and the winner writes them again where another writer's stand."""
    make_room(store, path, zarr_format, overwrite, chunk_store)
    *others, last = documents
    if overwrite or not store.supports_conditional_writes:
        for key in others:
            store.set(key, documents[key])
        store.set(last, documents[last])
        return
    for key in others:
        _write_before_node(store, path, key, documents[key], last)
    try:
        store.set_if(last, documents[last], ABSENT)
    except VersionConflictError:
        check_free(store, path)  # raises: another writer created the node meanwhile
        raise
    for key in others:  # this writer's node: its documents, whoever wrote last before
        update(store, key, lambda raw, value=documents[key]: KEEP if raw is not None and bytes(raw) == value
               else value)


def _write_before_node(store: Store, path: str, key: str, value: bytes, node_key: str) -> None:
    """Write ``value`` at ``key`` while the document ``node_key`` does not exist (see
    :func:`write_new_node`); ContainsArrayError or ContainsGroupError once it does."""
    seen: list[Any] = [None]
    versions: list[Any] = []

    def change(raw: Any) -> bytes:
        if store.get_versioned(node_key)[1] is not ABSENT:
            check_free(store, path)  # raises: another writer created the node
        seen[0] = None if raw is None else bytes(raw)
        return value

    update(store, key, change, written=versions)
    if store.get_versioned(node_key)[1] is ABSENT:
        return
    try:  # created meanwhile: this write may have landed after it, so it is put back
        if seen[0] is None:
            store.delete_if(key, versions[-1])
        else:
            store.set_if(key, seen[0], versions[-1])
    except VersionConflictError:
        pass  # (written again since: not this writer's to put back)
    check_free(store, path)
    raise VersionConflictError("another writer created the node", node_key)


def open_or_place_array(
    store: Store, path: str, mode: str, build: Callable[[], tuple[Any, dict[str, bytes], int]],
    chunk_store: Store | None = None, shown: Any = None,
) -> Any:
    """``open_array``'s decision on ``store``: None when the array at ``path`` is to be opened,
    else the metadata object of the new array ``build()`` describes (called only then: it
    returns the metadata, its documents and the format), written at ``path``.

    ``mode`` 'r'/'r+' open (nothing there: ``ArrayNotFoundError``), 'a' opens or creates, 'w'
    creates over what is there, 'w-'/'x' create where nothing is; a group at ``path`` is a
    ``ContainsGroupError`` unless 'w' replaces it.  Errors name the store as ``shown`` (what
    the user passed), when given.
    """
    kind = node_kind(store, path)
    if kind == "group" and mode in ("r", "r+", "a"):
        raise ContainsGroupError(f"path {path!r} holds a group, not an array", path=path)
    if kind is None and mode in ("r", "r+"):
        raise ArrayNotFoundError(not_found_message("array", store if shown is None else shown, path), path=path)
    if kind is not None and mode in ("r", "r+", "a"):
        return None
    refuse_writing_mode(store, mode)
    if mode in ("w-", "x"):
        check_free(store, path)
    meta, documents, zarr_format = build()
    write_new_node(store, path, zarr_format, documents, mode == "w", chunk_store)
    return meta


def make_room(
    store: Store, path: str, zarr_format: int, overwrite: bool = False, chunk_store: Store | None = None,
) -> None:
    """Make ``path`` ready for a new node's documents: a node there is an error unless
    ``overwrite`` (then it is removed, its chunks in ``chunk_store`` too), and the groups above
    it that are missing are written."""
    check_free(store, path, overwrite)
    if overwrite:
        _clear_path(store, chunk_store, path)
    require_parent_groups(store, path, zarr_format, overwrite, chunk_store)


def require_parent_groups(
    store: Store, path: str, zarr_format: int = 2, overwrite: bool = False,
    chunk_store: Store | None = None,
) -> None:
    """Create the groups above ``path`` that don't exist (the v2 spec requires them; for v3
    they make the hierarchy discoverable, as zarr-python writes it).  An array above ``path``
    is an error, unless ``overwrite``: it is then removed and replaced by a group, as
    zarr-python 2 does."""
    parts = path.split("/")[:-1] if path else []
    for i in range(len(parts) + 1):
        parent = "/".join(parts[:i])
        if parent == path:
            break
        kind = node_kind(store, parent)
        if kind == "array":
            if not overwrite:
                raise ContainsArrayError(
                    f"cannot create a node at {path!r} below the array at {parent!r}: A parent of "
                    f"{path!r} is an array - only groups may have child nodes.", path=parent)
            _clear_path(store, chunk_store, parent)
            kind = None
        if kind is None:
            write_group_metadata(store, parent, zarr_format)


def _clear_path(store: Store, chunk_store: Store | None, path: str) -> None:
    prefix = f"{path}/" if path else ""
    store.delete_prefix(prefix)
    if chunk_store is not None and chunk_store is not store:
        chunk_store.delete_prefix(prefix)


def check_free(store: Store, path: str, overwrite: bool = False) -> None:
    """Refuse to create a node where one is (unless ``overwrite``)."""
    if overwrite:
        return
    kind = node_kind(store, path)
    if kind == "array":
        raise ContainsArrayError(f"an array already exists at {describe_location(store, path)}", path=path)
    if kind == "group":
        raise ContainsGroupError(f"a group already exists at {describe_location(store, path)}", path=path)
