"""Consolidated metadata: every node's metadata in one document, read with one request.

Two layouts exist: v2's ``.zmetadata`` key (``{"metadata": {key: document}, "zarr_consolidated_format":
1}``, as zarr-python 2 and xarray write it) and zarr-python 3's inline
``consolidated_metadata`` object in the root group's ``zarr.json``.  Opening a consolidated
hierarchy wraps the store in a :class:`ConsolidatedStore`, which answers every metadata read and
hierarchy listing from that document and sends only chunk requests to the store.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from ..errors import MetadataError, NodeNotFoundError, NodeTypeValidationError
from ..storage.base import ByteRange, Store, join_path
from ..storage.keys import is_valid_key
from ..storage.mapping import KVStore
from ..storage.optimistic import update
from . import io, v2, v3
from .json_text import dump_json
from .walk import iter_nodes

__all__ = [
    "GROUP_METADATA_KEYS",
    "ConsolidatedMetadata",
    "GroupMetadata",
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


def consolidate(store: Store, path: str = "") -> tuple[int, int]:
    """Gather the metadata of the hierarchy at ``path`` into one document in the root node.

    The document is built whole in memory and stored with one write, which the stores make
    atomic (a file is written aside and renamed): a process killed meanwhile leaves the
    previous consolidated document or the new one, never part of one, and consolidating again
    finishes the job.  Returns the hierarchy's format and how many nodes are below the group.
    """
    kind, fmt, _root_doc = io.node_info(store, path)
    if kind != "group":
        raise NodeNotFoundError(io.not_found_message("group", store, path, "to consolidate"), path)
    if fmt == 3:
        key = join_path(path, v3.ZARR_JSON)

        def change(raw: Any) -> bytes:
            # the root's document as stored now (its attributes, set by another writer while
            # the hierarchy was walked, are kept: the write is conditioned on its version)
            doc = io.parse_json(raw, key)
            if not isinstance(doc, dict) or doc.get("node_type") != "group":
                raise NodeNotFoundError(io.not_found_message("group", store, path, "to consolidate"), path)
            return consolidated_document_v3(store, path, doc)

        document = update(store, key, change)
        below = len(io.parse_json(document, key)["consolidated_metadata"]["metadata"])
        return 3, below
    document = consolidated_document_v2(store, path)
    store.set(join_path(path, ZMETADATA), document)
    nodes = io.parse_json(document, join_path(path, ZMETADATA))["metadata"]
    return 2, sum(1 for key in nodes if key.rpartition("/")[0] and key.endswith((v2.ARRAY_KEY, v2.GROUP_KEY)))


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
        self.store: Store = as_store(store)
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
        self.read_only: bool = store.read_only
        self.supports_writes: bool = store.supports_writes
        self.supports_partial_reads: bool = store.supports_partial_reads
        self.supports_deletes: bool = getattr(store, "supports_deletes", True)
        self.high_latency: bool = getattr(store, "high_latency", False)
        self.dimension_separator: str | None = getattr(store, "dimension_separator", None)
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

    def get_many_upto(self, keys: Sequence[str], limit: int) -> list[bytes | memoryview | None]:
        """Chunks through the wrapped store's ``get_many_upto``.

        Parameters
        ----------
        keys : sequence of str
            The keys (valid: not checked again).
        limit : int
            The most bytes each value may hold.

        Returns
        -------
        list
            Each value, or None where it is missing.
        """
        if any(_is_meta_key(key) for key in keys):
            return super().get_many_upto(keys, limit)
        return self.store.get_many_upto(keys, limit)

    def prefetch(self, keys: Iterable[str]) -> bool:
        """Chunks through the wrapped store's ``prefetch``.

        Parameters
        ----------
        keys : iterable of str
            The keys about to be read.

        Returns
        -------
        bool
            Whether any value is being fetched.
        """
        return self.store.prefetch(key for key in keys if isinstance(key, str) and not _is_meta_key(key))

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

    # versions are those of the store under the snapshot (what another writer changes); a
    # conditional write that lands updates the snapshot as a plain one does
    @property
    def supports_conditional_writes(self) -> bool:  # type: ignore[override]
        """Whether the store under the snapshot has conditional writes."""
        return self.store.supports_conditional_writes

    @property
    def versions_are_contents(self) -> bool:  # type: ignore[override]
        """Whether the versions of the store under this one are contents."""
        return getattr(self.store, "versions_are_contents", False)

    @property
    def atomic_deletes(self) -> bool:  # type: ignore[override]
        """Whether the conditional deletes of the store are atomic."""
        return getattr(self.store, "atomic_deletes", True)

    def _get_versioned(self, key: str, limit: int | None) -> tuple[Any, Any]:
        return self.store.get_versioned(key, limit)

    def _set_if(self, key: str, value: bytes | memoryview, version: Any) -> Any:
        new = self.store.set_if(key, value, version)
        if _is_meta_key(key):
            self._bytes[key] = bytes(value)
            self._parsed.pop(key, None)
            self._children = None
        return new

    def _delete_if(self, key: str, version: Any) -> None:
        self.store.delete_if(key, version)
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
        # the same store, its metadata read from the consolidated document or not
        return bool(other.store == self.store) if isinstance(other, ConsolidatedStore) else bool(other == self.store)

    def __hash__(self) -> int:
        return object.__hash__(self)  # identity, as for every store

    def __repr__(self) -> str:
        return f"ConsolidatedStore({self.store!r})"

    def __str__(self) -> str:
        return str(self.store)


# -- zarr-python 3's metadata objects ------------------------------------------------------------

#: the fields of a group's metadata document (zarr-python 3 writes ``consolidated_metadata``,
#: which the v3 specification does not define)
GROUP_METADATA_KEYS: frozenset[str] = frozenset({"zarr_format", "node_type", "attributes", "consolidated_metadata"})


def _extra_fields(fields: Mapping[str, Any] | None, zarr_format: int) -> dict[str, Any]:
    """``extra_fields`` of a group checked: objects declaring ``"must_understand": false``,
    named apart from the group's own fields, and only in a v3 group."""
    fields = dict(fields or {})
    reserved = sorted(GROUP_METADATA_KEYS & set(fields))
    if reserved:
        raise ValueError(f"extra_fields {reserved} collide with keys reserved for the group's own fields")
    if fields and zarr_format == 2:
        raise ValueError(f"extra_fields {sorted(fields)}: a v2 group's metadata has no extra fields")
    v3._check_extensions(fields, (), None)
    return fields


@dataclasses.dataclass(frozen=True, init=False)
class GroupMetadata:
    """A group's metadata as zarr-python 3 shows it: ``attributes``, ``zarr_format``,
    ``consolidated_metadata`` (a :class:`ConsolidatedMetadata` for a group opened through
    consolidated metadata, else None), ``node_type`` (``'group'``) and ``extra_fields`` (a v3
    document's fields declaring ``"must_understand": false``).

    Parameters
    ----------
    attributes : dict, optional
    zarr_format : int (2 or 3), optional
    consolidated_metadata : ConsolidatedMetadata, optional
    extra_fields : dict, optional

    Raises
    ------
    MetadataError
        An extra field that is not an object with ``"must_understand": false``.
    ValueError
        A bad ``zarr_format``, an extra field named like a field of the group, extra fields
        for a v2 group.

    Examples
    --------
    >>> GroupMetadata(attributes={'a': 1}).to_dict()
    {'attributes': {'a': 1}, 'zarr_format': 3, 'node_type': 'group'}
    """

    attributes: dict[str, Any]
    zarr_format: int
    consolidated_metadata: ConsolidatedMetadata | None
    extra_fields: dict[str, Any]
    node_type: str = dataclasses.field(default="group", init=False)

    def __init__(self, attributes: Mapping[str, Any] | None = None, zarr_format: int = 3,
                 consolidated_metadata: ConsolidatedMetadata | None = None,
                 extra_fields: Mapping[str, Any] | None = None) -> None:
        if zarr_format not in (2, 3) or isinstance(zarr_format, bool):
            raise ValueError(f"zarr_format must be 2 or 3, got {zarr_format!r}")
        if attributes is not None and not isinstance(attributes, Mapping):
            raise TypeError(f"attributes must be a dict, got {type(attributes).__name__}")
        if consolidated_metadata is not None and not isinstance(consolidated_metadata, ConsolidatedMetadata):
            raise TypeError(f"consolidated_metadata must be a ConsolidatedMetadata, got "
                            f"{type(consolidated_metadata).__name__}")
        object.__setattr__(self, "attributes", dict(attributes or {}))
        object.__setattr__(self, "zarr_format", int(zarr_format))
        object.__setattr__(self, "consolidated_metadata", consolidated_metadata)
        object.__setattr__(self, "extra_fields", _extra_fields(extra_fields, int(zarr_format)))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, path: str | None = None) -> GroupMetadata:
        """The metadata of a stored group document (v3 ``zarr.json``, or a v2 ``.zgroup``
        with its ``attributes``); a v2 document's other fields are dropped.  ``path`` names the
        group in errors about its consolidated metadata."""
        data = dict(data)
        node_type = data.pop("node_type", None)
        if node_type not in ("group", None):
            raise NodeTypeValidationError(f"node_type: expected 'group', got {node_type!r}", path)
        zarr_format = data.get("zarr_format", 3)
        cm = data.get("consolidated_metadata")
        extra = {k: v for k, v in data.items() if k not in GROUP_METADATA_KEYS} if zarr_format == 3 else {}
        return cls(attributes=data.get("attributes"), zarr_format=zarr_format,
                   consolidated_metadata=ConsolidatedMetadata.from_dict(cm, path=path) if cm else None,
                   extra_fields=extra)

    def to_dict(self) -> dict[str, Any]:
        """The group's document (v3 form; ``consolidated_metadata`` only when there is some)."""
        out: dict[str, Any] = {"attributes": dict(self.attributes), "zarr_format": self.zarr_format,
                               "node_type": self.node_type, **self.extra_fields}
        if self.consolidated_metadata is not None:
            out["consolidated_metadata"] = self.consolidated_metadata.to_dict()
        return out


#: what a consolidated document holds for each node below a group
Member = Any  # GroupMetadata | v3.ArrayMetadataV3 | v2.ArrayMetadataV2


def _member(doc: Any, key: str, where: str) -> Member:
    """The metadata object of one node's document in a consolidated document."""
    if not isinstance(doc, dict):
        raise TypeError(f"Invalid value for metadata items. key='{key}', type='{type(doc).__name__}'")
    zarr_format = doc.get("zarr_format")
    if zarr_format == 3:
        if doc.get("node_type") == "group":
            return GroupMetadata.from_dict(doc, path=where)
        if doc.get("node_type") == "array":
            return v3.ArrayMetadataV3.from_json(doc, join_path(where, v3.ZARR_JSON))
        raise NodeTypeValidationError(f"node_type: expected 'group' or 'array', got {doc.get('node_type')!r}",
                                      join_path(where, v3.ZARR_JSON))
    if zarr_format == 2:
        if "shape" in doc:
            doc = {k: v for k, v in doc.items() if k != "attributes"}
            return v2.ArrayMetadataV2.from_json(doc, join_path(where, v2.ARRAY_KEY))
        return GroupMetadata.from_dict(doc, path=where)
    raise MetadataError(f"zarr_format: expected 2 or 3, got {zarr_format!r}", where)


#: how deep :meth:`ConsolidatedMetadata.from_dict` follows members holding consolidated
#: metadata of their own (the stored form is flat: this nesting comes from hand-made input)
MAX_CONSOLIDATED_NESTING = 100
#: the nesting of the calls of :meth:`ConsolidatedMetadata.from_dict` running in this thread
_nesting = threading.local()


def _depth(name: str) -> int:
    return name.count("/")


@dataclasses.dataclass(frozen=True)
class ConsolidatedMetadata:
    """The metadata of every node below a group, as zarr-python 3 shows it: ``metadata``
    maps the names of the group's members to their metadata (arrays' metadata objects,
    :class:`GroupMetadata` holding their own members' in their ``consolidated_metadata``).

    Parameters
    ----------
    metadata : dict
        Member name -> metadata.
    kind : str, optional
        ``'inline'``, the only kind there is.
    must_understand : bool, optional
        False: readers may ignore it.

    Examples
    --------
    >>> cm = ConsolidatedMetadata.from_dict({'kind': 'inline', 'must_understand': False, 'metadata': {
    ...     'a': {'zarr_format': 3, 'node_type': 'group'},
    ...     'a/b': {'zarr_format': 3, 'node_type': 'group', 'attributes': {'x': 1}}}})
    >>> list(cm.metadata), list(cm.metadata['a'].consolidated_metadata.metadata)
    (['a'], ['b'])
    >>> list(cm.flattened_metadata)
    ['a', 'a/b']
    """

    metadata: dict[str, Member]
    kind: str = "inline"
    must_understand: bool = False

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, path: str | None = None) -> ConsolidatedMetadata:
        """Read a ``consolidated_metadata`` object (its ``metadata`` flat: keys are paths
        below the group, as stored); ``path`` (the group's) names the members in errors.

        Raises
        ------
        ValueError
            A ``kind`` other than ``'inline'``.
        TypeError
            ``metadata`` or one of its entries is not an object.
        MetadataError
            A member's document is not valid.
        """
        if not isinstance(data, Mapping):
            raise TypeError(f"consolidated metadata: expected an object, got {type(data).__name__}")
        kind = data.get("kind")
        if kind != "inline":
            raise ValueError(f"consolidated metadata kind='{kind}' is not supported (only 'inline' is)")
        flat = data.get("metadata")
        if not isinstance(flat, dict):
            raise TypeError(f"Unexpected type for 'metadata': {type(flat).__name__} (expected an object)")
        for name in flat:  # each a path below the group: none may leave it, or name nothing
            if not is_valid_key(name):
                raise MetadataError(f"consolidated metadata: member {name!r} is no path below the group "
                                    "(an empty, '.' or '..' part, a leading or doubled '/', a backslash or NUL)",
                                    join_path(path or "", "zarr.json"))
        level = getattr(_nesting, "level", 0)
        if level >= MAX_CONSOLIDATED_NESTING:
            raise MetadataError(f"consolidated metadata nested too deeply: expected at most "
                                f"{MAX_CONSOLIDATED_NESTING} levels of groups holding their own, got more",
                                join_path(path or "", "zarr.json"))
        _nesting.level = level + 1
        try:
            members = {k: _member(v, k, join_path(path or "", k)) for k, v in flat.items()}
        finally:
            _nesting.level = level
        return cls(metadata=_nested(members))

    def to_dict(self) -> dict[str, Any]:
        """The stored form: ``metadata`` flat, its keys in order of depth, then name."""
        flat = self.flattened_metadata
        docs = {}
        for name in sorted(flat, key=lambda n: (_depth(n), n.casefold(), n)):
            member = flat[name]
            docs[name] = member.to_dict() if isinstance(member, GroupMetadata) else member.to_json()
        return {"kind": self.kind, "must_understand": self.must_understand, "metadata": docs}

    @property
    def flattened_metadata(self) -> dict[str, Member]:
        """Every node below the group by its path from the group (groups without their
        members, which have paths of their own here)."""
        out: dict[str, Member] = {}
        stack: list[tuple[str, Iterator[tuple[str, Member]]]] = [("", iter(self.metadata.items()))]
        while stack:  # depth first, each group followed by what is below it
            prefix, members = stack[-1]
            item = next(members, None)
            if item is None:
                stack.pop()
                continue
            name, member = item
            path = join_path(prefix, name)
            if isinstance(member, GroupMetadata):
                cm = member.consolidated_metadata
                out[path] = dataclasses.replace(member, consolidated_metadata=None if cm is None else ConsolidatedMetadata({}))
                if cm is not None:
                    stack.append((path, iter(cm.metadata.items())))
            else:
                out[path] = member
        return out


def _nested(flat: dict[str, Member]) -> dict[str, Member]:
    """Flat members (keys: paths below the group) nested: each group holds its members in its
    ``consolidated_metadata`` (empty for a group without any), whatever the order of keys."""
    children: dict[str, dict[str, Member]] = {"": {}}
    for key, member in flat.items():
        if isinstance(member, GroupMetadata):
            children[key] = {}
    for key in flat:
        parent = key.rpartition("/")[0]
        if parent not in children:
            raise MetadataError(f"consolidated metadata: {key!r} has no group {parent!r} above it")
    order = {key: i for i, key in enumerate(flat)}
    for key in sorted(flat, key=lambda k: (-_depth(k), order[k])):  # children before parents
        member = flat[key]
        if isinstance(member, GroupMetadata):
            below = dict(sorted(children[key].items(), key=lambda item: order[join_path(key, item[0])]))
            member = dataclasses.replace(member, consolidated_metadata=ConsolidatedMetadata(metadata=below))
        parent, _, name = key.rpartition("/")
        children[parent][name] = member
    return dict(sorted(children[""].items(), key=lambda item: order[item[0]]))


def consolidated_metadata_of(docs: Mapping[str, Any], path: str, zarr_format: int) -> ConsolidatedMetadata:
    """The :class:`ConsolidatedMetadata` of the group at ``path`` from the parsed documents
    of a consolidated store (by key, relative to the store)."""
    prefix = f"{path}/" if path else ""
    flat: dict[str, Any] = {}
    for key, doc in docs.items():
        if not key.startswith(prefix) or not isinstance(doc, dict):
            continue
        node, _, name = key[len(prefix):].rpartition("/")
        if not node:
            continue
        if name == v3.ZARR_JSON and zarr_format == 3:
            flat[node] = {k: v for k, v in doc.items() if k != "consolidated_metadata"}
        elif name in (v2.ARRAY_KEY, v2.GROUP_KEY) and zarr_format == 2:
            flat[node] = {**doc, "attributes": docs.get(join_path(path, node, v2.ATTRS_KEY)) or {}}
    members = {k: _member(v, k, join_path(path, k)) for k, v in sorted(flat.items())}
    return ConsolidatedMetadata(metadata=_nested(members))
