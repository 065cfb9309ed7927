"""What ``.info`` shows for arrays and groups: a table of ``(name, value)`` items that prints as
text and renders as HTML in Jupyter."""

from __future__ import annotations

import hashlib
import html
import itertools
import json
import textwrap
from typing import Any

from ..codecs.registry import format_codec
from ..metadata import io

__all__ = [
    "InfoReporter", "human_readable_size", "array_info_items", "group_info_items", "array_info_items_zarr3",
    "group_info_items_zarr3", "zarr3_store_type",
]


def human_readable_size(size: int) -> str:
    if size < 2**10:
        return str(size)
    for exp, unit in ((20, "K"), (30, "M"), (40, "G"), (50, "T")):
        if size < 2**exp:
            return f"{size / 2 ** (exp - 10):.1f}{unit}"
    return f"{size / 2**50:.1f}P"


def _bytes_text(n: int) -> str:
    return f"{n} ({human_readable_size(n)})" if n >= 2**10 else str(n)


def _type_name(obj: Any) -> str:
    t = type(obj)
    return f"{t.__module__}.{t.__qualname__}"


class InfoReporter:
    """What ``.info`` of an array or group returns: ``print()`` shows a text table, Jupyter an
    HTML table; :meth:`items` gives the ``(name, value)`` pairs.

    The items are computed each time the report is shown, so the report stays current.

    Examples
    --------
    >>> import zarrkit
    >>> g = zarrkit.group(zarr_format=2)
    >>> _ = g.create_group('foo')
    >>> print(g.info)
    Name        : /
    Type        : zarrkit.hierarchy.Group
    Zarr format : 2
    Read-only   : False
    Store type  : DictStore
    No. members : 1
    No. arrays  : 0
    No. groups  : 1
    Groups      : foo
    """

    def __init__(self, obj: Any, items: Any = None, width: int | None = None):
        self.obj = obj
        self._items = items
        #: the names' column width (zarr-python 3's reports have a fixed one and do not wrap)
        self._width = width

    def items(self) -> list[tuple[str, str]]:
        """The report's ``(name, value)`` pairs (the object's ``info_items()``)."""
        items = self._items() if self._items is not None else self.obj.info_items()
        return [(str(k), str(v)) for k, v in items]

    def __repr__(self) -> str:
        items = self.items()
        if self._width is not None:
            return "\n".join(f"{k:<{self._width}} : {v}" for k, v in items)
        width = max(len(k) for k, _ in items)
        lines = []
        for k, v in items:
            wrapper = textwrap.TextWrapper(
                width=80, initial_indent=f"{k:<{width}} : ", subsequent_indent=" " * width + " : "
            )
            lines.append(wrapper.fill(v) if v else f"{k:<{width}} :")
        return "\n".join(lines)

    __str__ = __repr__

    def _repr_html_(self) -> str:
        cell = 'style="text-align: left"'
        rows = "".join(
            f"<tr><th {cell}>{html.escape(k)}</th><td {cell}>{html.escape(v)}</td></tr>"
            for k, v in self.items()
        )
        return f'<table class="zarrkit-info"><tbody>{rows}</tbody></table>'


_ZARR3_STORE_NAMES = {
    "DirectoryStore": "LocalStore", "NestedDirectoryStore": "LocalStore", "KVStore": "MemoryStore",
    "MappingStore": "MemoryStore", "DictStore": "MemoryStore",
}


def zarr3_store_type(store: Any) -> str:
    """A store's class as zarr-python 3 names the same kind of store (the wrapped store's for a
    wrapper)."""
    for attr in ("inner", "store"):
        inner = getattr(store, attr, None)
        if inner is not None and inner is not store and hasattr(inner, "list_prefix"):
            return zarr3_store_type(inner)
    name = type(store).__name__
    return _ZARR3_STORE_NAMES.get(name, name)


def array_info_items_zarr3(a: Any, complete: bool = False) -> list[tuple[str, str]]:
    """The items of a v3 array's ``info`` as zarr-python 3 shows them (with ``complete``,
    those of ``info_complete()``: the stored sizes and counts too)."""
    meta = a.metadata
    rectilinear = meta.chunk_shapes is not None
    items = [
        ("Type", "Array"),
        ("Zarr format", "3"),
        ("Data type", repr(meta.data_type)),
        ("Fill value", str(meta.fill_value)),
        ("Shape", str(a.shape)),
        # a rectilinear grid's edges could be any number: "<variable>", as zarr-python shows it
        *([("Shard shape", "<variable>" if rectilinear else str(a.shards))] if a.shards else []),
        ("Chunk shape", "<variable>" if rectilinear and not a.shards else str(a.chunks)),
        ("Order", a.order),
        ("Read-only", str(a.read_only)),
        ("Store type", zarr3_store_type(a._store)),
        ("Filters", repr(tuple(meta.filters or ()))),
        ("Serializer", repr(meta.serializer)),
        ("Compressors", repr(tuple(meta.compressors))),
        ("No. bytes", _bytes_text(a.nbytes)),
    ]
    if complete:
        stored = a.nbytes_stored
        items.append(("No. bytes stored", _bytes_text(stored)))
        if stored:
            items.append(("Storage ratio", f"{a.nbytes / stored:.1f}"))
        if a.shards:
            items.append(("Shards Initialized", str(a.nshards_initialized)))
        else:
            items.append(("Chunks Initialized", str(a.nchunks_initialized)))
    return items


def group_info_items_zarr3(g: Any, members: list[tuple[str, str]] | None = None) -> list[tuple[str, str]]:
    """The items of a v3 group's ``info`` as zarr-python 3 shows them (the member counts when
    ``members`` are given: ``info_complete()``)."""
    items = [
        ("Name", g.path),
        ("Type", "Group"),
        ("Zarr format", "3"),
        ("Read-only", str(g.read_only)),
        ("Store type", zarr3_store_type(g._store)),
    ]
    if members is not None:
        items += [
            ("No. members", str(len(members))),
            ("No. arrays", str(sum(1 for _, kind in members if kind == "array"))),
            ("No. groups", str(sum(1 for _, kind in members if kind == "group"))),
        ]
    return items


def array_info_items(a: Any) -> list[tuple[str, str]]:
    """The items of an array's ``.info``: its configuration, then its storage (one listing of
    its chunks)."""
    items = [
        ("Name", a.name or "/"),
        ("Type", _type_name(a)),
        ("Zarr format", str(a.zarr_format)),
        ("Data type", str(a.dtype)),
        ("Shape", str(a.shape)),
        ("Chunk shape", str(a.chunks)),
        *([("Shard shape", str(a.shards))] if a.shards else []),
        ("Order", a.order),
        ("Read-only", str(a.read_only)),
    ]
    for i, f in enumerate(a.filters or ()):
        items.append((f"Filter [{i}]", format_codec(f)))
    if a.compressor is not None:
        items.append(("Compressor", format_codec(a.compressor)))
    if a.synchronizer is not None:
        items.append(("Synchronizer type", _type_name(a.synchronizer)))
    items.append(("Store type", type(a.store).__name__))
    if a.chunk_store is not a.store:
        items.append(("Chunk store type", type(a.chunk_store).__name__))
    nbytes = a.nbytes
    stored = a.nbytes_stored
    items += [
        ("No. bytes", _bytes_text(nbytes)),
        ("No. bytes stored", _bytes_text(stored)),
        ("Storage ratio", f"{nbytes / stored:.1f}" if stored else "-"),
        ("Chunks initialized", f"{a.nchunks_initialized}/{a.nchunks}"),
    ]
    if a.shards:
        items.append(("Shards initialized", f"{a.nshards_initialized}/{a.nshards}"))
    return items


def group_info_items(g: Any, members: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The items of a group's ``.info``; ``members`` are its ``(name, kind)`` pairs (one
    listing of the group)."""
    arrays = [name for name, kind in members if kind == "array"]
    groups = [name for name, kind in members if kind == "group"]
    items = [
        ("Name", g.name),
        ("Type", _type_name(g)),
        ("Zarr format", str(g.zarr_format)),
        ("Read-only", str(g.read_only)),
    ]
    if g.synchronizer is not None:
        items.append(("Synchronizer type", _type_name(g.synchronizer)))
    items.append(("Store type", type(g.store).__name__))
    if g.chunk_store is not g.store:
        items.append(("Chunk store type", type(g.chunk_store).__name__))
    items += [
        ("No. members", str(len(members))),
        ("No. arrays", str(len(arrays))),
        ("No. groups", str(len(groups))),
    ]
    if arrays:
        items.append(("Arrays", ", ".join(arrays)))
    if groups:
        items.append(("Groups", ", ".join(groups)))
    return items


def store_name(store: Any) -> str:
    """A store's name in reprs: its class."""
    return type(store).__name__


def node_url(store: Any, path: str) -> str:
    """Where a node is, as zarr-python 3's reprs show it: the store's ``str`` and the path."""
    return f"{store}/{path}" if path else str(store)


def array_repr(a: Any) -> str:
    """An array's ``repr``: for a Zarr v3 array zarr-python 3's ``<Array <where> shape=..
    dtype=..>``; for a v2 array zarr-python 2's shape, dtype, chunks, order, sizes, codecs and
    store.

    On a high-latency store (object storage) it asks nothing of the store: the stored size and
    the count of stored chunks cost listings (and a sharded array's shard indexes) there, and
    :attr:`info` has them.
    """
    if a._meta.zarr_format == 3:
        return f"<Array {node_url(a._store, a._path)} shape={a.shape} dtype={a.dtype}>"
    nbytes = a.nbytes
    head = "Array("
    if a.name is not None:
        head += f"{a.name}, "
    head += f"{a.shape}, {a.dtype}, chunks={a.chunks}, order={a.order})"
    if a._store.high_latency or a._chunk_store.high_latency:
        summary = f"  nbytes: {human_readable_size(nbytes)}; nchunks: {a.nchunks}"
    else:
        stored = a.nbytes_stored
        ratio = f"{nbytes / stored:.1f}" if stored else "-"
        summary = (
            f"  nbytes: {human_readable_size(nbytes)}; nbytes_stored: {human_readable_size(stored)}; "
            f"ratio: {ratio}; initialized: {a.nchunks_initialized}/{a.nchunks}"
        )
    lines = [head, summary]
    if a.filters:
        lines.append("  filters: " + ", ".join(format_codec(f) for f in a.filters))
    if a.compressor is not None:
        lines.append("  compressor: " + format_codec(a.compressor))
    store_line = f"  store: {store_name(a.store)}"
    if a._chunk_store_arg is not None:
        store_line += f"; chunk_store: {store_name(a._chunk_store_arg)}"
    if a._synchronizer is not None:
        store_line += f"; synchronizer: {type(a._synchronizer).__name__}"
    lines.append(store_line)
    return "\n".join(lines)


def array_digest(a: Any, hashname: str) -> bytes:
    """Hash every chunk in order (a missing one as nothing), then the metadata document, then
    the attributes; an empty attributes document hashes as none, so the same array hashes the
    same whether or not its library wrote one (zarr-python 2 does not)."""
    h = hashlib.new(hashname)
    for coords in itertools.product(*(range(n) for n in a._meta.storage_grid.grid_shape)):
        h.update(a._chunk_store.get(a._ctx.key(coords)) or b"")
    h.update(a._store.get(io.meta_key(a._path, a._meta.metadata_key)) or b"")
    attrs = a._store.get(a._attrs.key) or b""
    h.update(b"" if attrs.strip() == b"{}" else attrs)
    return h.digest()


def _store_identity(array: Any) -> Any:
    s = array._store  # the coerced store
    path = getattr(s, "path", None)
    if isinstance(path, str):
        return (type(s).__name__, path)
    return (type(s).__name__, id(s))


def tokenize_array(array: Any) -> tuple[Any, ...]:
    """What identifies a zarrkit array for dask: its store, path and metadata (no data)."""
    meta = array.metadata
    try:
        meta_doc = json.dumps(meta.to_json(), sort_keys=True, default=str)
    except (TypeError, ValueError, AttributeError):  # pragma: no cover - no JSON form
        meta_doc = repr(meta)
    return ("zarrkit.Array", _store_identity(array), array.path, meta_doc, array.read_only, array.is_view)
