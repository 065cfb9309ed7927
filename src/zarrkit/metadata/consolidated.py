"""Consolidated metadata: every node's metadata in one document, read with one request.

Two layouts exist: v2's ``.zmetadata`` key (``{"metadata": {key: document}, "zarr_consolidated_format":
1}``, as zarr-python 2 and xarray write it) and zarr-python 3's inline
``consolidated_metadata`` object in the root group's ``zarr.json``.  Opening a consolidated
hierarchy wraps the store in a :class:`ConsolidatedStore`, which answers every metadata read and
hierarchy listing from that document and sends only chunk requests to the store.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..errors import MetadataError, NodeNotFoundError
from ..storage.base import ByteRange, Store, join_path
from ..storage.mapping import KVStore
from . import io, v2, v3
from .json_text import dump_json
from .walk import iter_nodes

__all__ = [
    "ZMETADATA",
    "ConsolidatedMetadataStore",
    "ConsolidatedStore",
    "consolidate",
    "consolidated_document_v2",
    "consolidated_document_v3",
    "load_consolidated",
]

ZMETADATA = ".zmetadata"
_META_NAMES = (v2.ARRAY_KEY, v2.GROUP_KEY, v2.ATTRS_KEY, v3.ZARR_JSON)


def _is_meta_key(key: str) -> bool:
    return key.rsplit("/", 1)[-1] in _META_NAMES


def consolidated_document_v3(store: Store, path: str, root_doc: dict[str, Any]) -> bytes:
    """The ``zarr.json`` of the v3 group at ``path``: ``root_doc`` with the inline consolidated
    metadata of every node the store holds below it."""
    metadata: dict[str, Any] = {}
    base = len(path) + 1 if path else 0
    for node_path, _, node_fmt, doc in iter_nodes(store, path):
        if node_path == path:
            continue
        if node_fmt != 3:
            raise MetadataError(f"cannot consolidate the v2 node {node_path!r} into a v3 hierarchy")
        doc = dict(doc)
        doc.pop("consolidated_metadata", None)
        metadata[node_path[base:]] = doc
    root = dict(root_doc)
    root["consolidated_metadata"] = {"kind": "inline", "must_understand": False, "metadata": metadata}
    return v3.json_bytes_v3(root, join_path(path, v3.ZARR_JSON))


def consolidated_document_v2(store: Store, path: str) -> bytes:
    """The ``.zmetadata`` document of the v2 hierarchy at ``path``: the v2 documents of every
    node the store holds there and below."""
    docs: dict[str, Any] = {}
    base = len(path) + 1 if path else 0
    for node_path, node_kind, _, _ in iter_nodes(store, path):
        rel = node_path[base:]
        names = (v2.ARRAY_KEY, v2.ATTRS_KEY) if node_kind == "array" else (v2.GROUP_KEY, v2.ATTRS_KEY)
        for name in names:
            doc = io.read_json(store, join_path(node_path, name))
            if doc is not None:
                docs[join_path(rel, name)] = doc
    return v2.json_bytes({"metadata": docs, "zarr_consolidated_format": 1}, join_path(path, ZMETADATA))


def consolidate(store: Store, path: str = "") -> None:
    """Gather the metadata of the hierarchy at ``path`` into one document in the root node.

    The document is built whole in memory and stored with one write, which the stores make
    atomic (a file is written aside and renamed): a process killed meanwhile leaves the
    previous consolidated document or the new one, never part of one, and consolidating again
    finishes the job.
    """
    kind, fmt, root_doc = io.node_info(store, path)
    if kind != "group":
        raise NodeNotFoundError(f"no group found at path {path!r} to consolidate", path)
    if fmt == 3:
        store.set(join_path(path, v3.ZARR_JSON), consolidated_document_v3(store, path, root_doc))
    else:
        store.set(join_path(path, ZMETADATA), consolidated_document_v2(store, path))


def load_consolidated(
    store: Store, path: str = "", zarr_format: int | None = None
) -> dict[str, Any] | None:
    """Metadata documents by key (relative to the store), parsed, from the consolidated
    document at ``path``, or None when there is none.  Costs one store read when it finds one
    (two for a v2 hierarchy when ``zarr_format`` is not given).

    The member documents are only checked to be JSON objects here; each is validated as
    array or group metadata when its node is opened (naming its own key when it is bad), so
    opening a hierarchy of many nodes does no work per node it does not use.
    """
    key3 = join_path(path, v3.ZARR_JSON)
    doc = None if zarr_format == 2 else io.read_json(store, key3)
    if doc is not None:
        cm = doc.get("consolidated_metadata") if isinstance(doc, dict) else None
        if not cm:
            return None
        if not isinstance(cm, dict) or cm.get("kind") != "inline" or not isinstance(cm.get("metadata"), dict):
            raise MetadataError(f"consolidated_metadata: expected an inline metadata object, got {cm!r}", key3)
        docs = {key3: doc}
        for rel, node in cm["metadata"].items():
            if not isinstance(node, dict):
                raise MetadataError(f"consolidated_metadata: entry {rel!r} is not an object", key3)
            docs[join_path(path, rel, v3.ZARR_JSON)] = node
        return docs
    if zarr_format == 3:
        return None
    key2 = join_path(path, ZMETADATA)
    doc = io.read_json(store, key2)
    if doc is None:
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("metadata"), dict):
        raise MetadataError("expected {'metadata': {...}, 'zarr_consolidated_format': 1}", key2)
    if doc.get("zarr_consolidated_format") != 1:
        raise MetadataError(
            f"zarr_consolidated_format: expected 1, got {doc.get('zarr_consolidated_format')!r}", key2
        )
    return {join_path(path, k): v for k, v in doc["metadata"].items()}


class ConsolidatedMetadataStore(Store):
    """zarr-python 2's read-only store of the documents in a v2 consolidated metadata key.

    Reads and listings answer from the ``.zmetadata`` document read once at creation; chunks
    are not in it (open arrays with ``chunk_store=`` the original store, or use
    :func:`zarrkit.open_consolidated`, which does that for you).

    Parameters
    ----------
    store : Store or Mapping
        The store holding the consolidated metadata (a mapping, such as a ``dict``, is used
        through :class:`~zarrkit.storage.KVStore`, as zarr-python 2 does).
    metadata_key : str, optional
        The key of the consolidated document.

    Examples
    --------
    >>> import zarrkit
    >>> from zarrkit.storage import ConsolidatedMetadataStore
    >>> store = {}
    >>> _ = zarrkit.group(store, zarr_format=2).zeros('a', shape=4)
    >>> _ = zarrkit.consolidate_metadata(store)
    >>> sorted(ConsolidatedMetadataStore(store))
    ['.zattrs', '.zgroup', 'a/.zarray', 'a/.zattrs']
    """

    read_only = True
    supports_writes = False

    def __init__(self, store: Store | Mapping[str, Any], metadata_key: str = ZMETADATA):
        self.store = as_store(store)
        self.metadata_key = metadata_key
        doc = io.read_json(self.store, metadata_key)
        if doc is None:
            raise KeyError(metadata_key)
        if not isinstance(doc, dict) or doc.get("zarr_consolidated_format") != 1:
            got = doc.get("zarr_consolidated_format") if isinstance(doc, dict) else doc
            raise MetadataError(f"zarr_consolidated_format: expected 1, got {got!r}", metadata_key)
        if not isinstance(doc.get("metadata"), dict):
            raise MetadataError("expected {'metadata': {...}, 'zarr_consolidated_format': 1}", metadata_key)
        self.docs = {k: _reserialize(v, k) for k, v in doc["metadata"].items()}

    def _get(self, key: str, byte_range: ByteRange | None) -> bytes | None:
        value = self.docs.get(key)
        return value if value is None or byte_range is None else byte_range.slice(value)

    def list_prefix(self, prefix: str) -> Iterator[str]:
        return iter([k for k in self.docs if k.startswith(prefix)])

    def __repr__(self) -> str:
        return f"ConsolidatedMetadataStore({self.store!r})"


def as_store(store: Store | Mapping[str, Any]) -> Store:
    """``store`` itself, or a user's mapping as a :class:`~zarrkit.storage.KVStore` (what
    zarr-python 2's store classes accept)."""
    if isinstance(store, Store):
        return store
    if isinstance(store, Mapping):
        return KVStore(store)
    raise TypeError(f"store must be a zarrkit Store or a mapping, not {type(store).__name__}")


def _is_bytes(value: Any) -> bool:
    return isinstance(value, (bytes, bytearray, memoryview))


def _reserialize(doc: Any, key: str) -> bytes:
    # Each document is handed to the same parser as an unconsolidated one, so it is written back
    # as it was read: NaN/Infinity literals (not JSON, but parsed) stay for that parser to judge.
    return dump_json(doc, key, allow_nan=True)


class ConsolidatedStore(ConsolidatedMetadataStore):
    """A store whose metadata reads and listings come from a consolidated document.

    Chunk reads and all writes go to the wrapped store; metadata written through this wrapper
    also updates the in-memory documents (the stored consolidated document is not rewritten:
    call :func:`zarrkit.consolidate_metadata` again after changing metadata).  A
    :class:`ConsolidatedMetadataStore` that also passes chunk reads and writes through, as
    zarr-python 2's ``open_consolidated`` arranged with two stores.
    """

    def __init__(self, store: Store, docs: dict[str, Any]):
        self.store = store
        # the documents by key: parsed (as load_consolidated gives them) until written through
        # this store (then the bytes written); each form is made from the other on demand
        self._parsed: dict[str, Any] = {k: v for k, v in docs.items() if not _is_bytes(v)}
        self._bytes: dict[str, bytes] = {k: bytes(v) for k, v in docs.items() if _is_bytes(v)}
        self.read_only = store.read_only
        self.supports_writes = store.supports_writes
        self.supports_partial_reads = store.supports_partial_reads
        self.supports_deletes = getattr(store, "supports_deletes", True)
        self.high_latency = getattr(store, "high_latency", False)
        self.dimension_separator = getattr(store, "dimension_separator", None)
        self._children: dict[str, set[str]] | None = None  # list_dir's index, built on demand

    @property
    def docs(self) -> dict[str, bytes]:  # type: ignore[override]
        """Every metadata document by key, as stored bytes."""
        return {k: v for k in [*self._parsed, *self._bytes] if (v := self._document_bytes(k)) is not None}

    def _document_bytes(self, key: str) -> bytes | None:
        value = self._bytes.get(key)
        if value is None and key in self._parsed:
            value = self._bytes[key] = _reserialize(self._parsed[key], key)
        return value

    def parsed_document(self, key: str) -> Any:
        """The parsed metadata document at ``key`` (None when there is none), without the
        store read and JSON parsing of :func:`io.read_json`; shared, not to be modified."""
        if key in self._parsed:
            return self._parsed[key]
        raw = self._bytes.get(key)
        if raw is None:
            return None
        doc = self._parsed[key] = io.parse_json(raw, key)
        return doc

    def _get(self, key: str, byte_range: ByteRange | None) -> bytes | None:
        if _is_meta_key(key):
            value = self._document_bytes(key)
            return value if value is None or byte_range is None else byte_range.slice(value)
        return self.store.get(key, byte_range)

    def get_upto(self, key: str, limit: int) -> bytes | memoryview | None:
        """A chunk through the wrapped store's ``get_upto`` (refused, unread, beyond ``limit``)."""
        return super().get_upto(key, limit) if _is_meta_key(key) else self.store.get_upto(key, limit)

    def get_transient_upto(self, key: str, limit: int) -> bytes | memoryview | None:
        if _is_meta_key(key):
            return super().get_upto(key, limit)
        return getattr(self.store, "get_transient_upto", self.store.get_upto)(key, limit)

    @property
    def value_version(self) -> Any:
        """The wrapped store's ``value_version`` (shards are never metadata documents)."""
        return getattr(self.store, "value_version", None)

    def get_many(self, keys: Any) -> dict[str, bytes | None]:
        keys = list(keys)
        out = {k: self._document_bytes(k) for k in keys if _is_meta_key(k)}
        out.update(self.store.get_many([k for k in keys if not _is_meta_key(k)]))
        return out

    def _set(self, key: str, value: Any) -> None:
        self.store.set(key, value)
        if _is_meta_key(key):
            self._bytes[key] = bytes(value)
            self._parsed.pop(key, None)
            self._children = None

    def _delete(self, key: str) -> None:
        self.store.delete(key)
        self._parsed.pop(key, None)
        self._bytes.pop(key, None)
        self._children = None

    def list_prefix(self, prefix: str) -> Iterator[str]:
        return self.store.list_prefix(prefix)

    def list_dir(self, prefix: str = "") -> list[str]:
        if prefix and not prefix.endswith("/"):
            prefix += "/"
        if self._children is None:
            # every directory's children at once: a walk lists every group, and scanning all
            # documents for each would cost a walk time quadratic in the number of nodes
            children: dict[str, set[str]] = {}
            for key in [*self._parsed, *self._bytes]:
                parts = key.split("/")
                for i in range(len(parts) - 1):
                    children.setdefault("/".join(parts[:i]) + "/" if i else "", set()).add(parts[i])
            self._children = children
        return sorted(self._children.get(prefix, ()))

    def getsize(self, key: str) -> int:  # type: ignore[override]  # Store wraps it to take None too
        return self.store.getsize(key)

    def close(self) -> None:
        self.store.close()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ConsolidatedStore) and other.store == self.store

    __hash__ = Store.__hash__

    def __repr__(self) -> str:
        return f"ConsolidatedStore({self.store!r})"

    def __str__(self) -> str:
        return str(self.store)
