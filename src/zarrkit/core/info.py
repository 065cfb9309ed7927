"""What ``.info`` (and ``zarrkit info``) shows for arrays and groups.

One model, two renderings.  :func:`describe_array` and :func:`describe_group` collect what
there is to say about a node into a frozen description; :func:`array_items` and
:func:`group_items` render a description as ``(name, value)`` rows in the style of the
zarr-python that reads the node's format: zarr-python 3.4's ``info`` for a v3 node,
zarr-python 2's for a v2 node.  :class:`InfoReporter` prints the rows as a text table and
renders them as HTML in Jupyter.

What needs the store is said where it is collected: the stored sizes and chunk counts of an
array (a listing of its chunks, and its shard indexes when sharded) and the members of a
group (a listing of the group and a read of each member's metadata).  ``repr`` uses none of
this: it shows only what the node's metadata, already in memory, says.
"""

from __future__ import annotations

import dataclasses
import hashlib
import html
import itertools
import json
import textwrap
from collections.abc import Callable, Sequence
from typing import Any

from ..codecs.registry import format_codec
from ..metadata import io
from .stored import stored_totals

__all__ = [
    "InfoReporter", "ArrayDescription", "GroupDescription", "StoredSizes", "describe_array",
    "describe_group", "array_items", "group_items", "array_report", "group_report",
    "human_readable_size", "zarr3_store_type", "public_codec_repr", "array_repr", "group_repr",
]

#: the public names of the node classes, as reports and reprs show them
ARRAY_TYPE = "zarrkit.Array"
GROUP_TYPE = "zarrkit.Group"

#: zarr-python 3's reports give their names a fixed column: an array's, a group's
_ZARR3_ARRAY_WIDTH = 18
_ZARR3_GROUP_WIDTH = 11


def human_readable_size(size: int) -> str:
    if size < 2**10:
        return str(size)
    for exp, unit in ((20, "K"), (30, "M"), (40, "G"), (50, "T")):
        if size < 2**exp:
            return f"{size / 2 ** (exp - 10):.1f}{unit}"
    return f"{size / 2**50:.1f}P"


def bytes_text(n: int) -> str:
    return f"{n} ({human_readable_size(n)})" if n >= 2**10 else str(n)


def _type_name(obj: Any) -> str:
    t = type(obj)
    return f"{t.__module__}.{t.__qualname__}"


class InfoReporter:
    """What ``.info`` of an array or group returns: ``print()`` shows a text table, Jupyter an
    HTML table; :meth:`items` gives the ``(name, value)`` pairs.

    The items are computed each time the report is shown, so the report stays current (and
    making the report reads nothing: showing it does, as the ``info`` that made it says).

    Examples
    --------
    >>> import zarrkit
    >>> g = zarrkit.group(zarr_format=2)
    >>> _ = g.create_group('foo')
    >>> print(g.info)
    Name        : /
    Type        : zarrkit.Group
    Zarr format : 2
    Read-only   : False
    Store type  : DictStore
    No. members : 1
    No. arrays  : 0
    No. groups  : 1
    Groups      : foo
    """

    def __init__(self, obj: Any, items: Callable[[], Sequence[tuple[str, Any]]] | None = None,
                 width: int | None = None):
        self.obj = obj
        self._items = items
        #: the names' column width (zarr-python 3's reports have a fixed one and do not wrap)
        self._width = width

    def items(self) -> list[tuple[str, str]]:
        """The report's ``(name, value)`` pairs."""
        items = self._items() if self._items is not None else self.obj.info_items()
        return [(str(k), str(v)) for k, v in items]

    def __repr__(self) -> str:
        return render_text(self.items(), self._width)

    __str__ = __repr__

    def _repr_html_(self) -> str:
        return render_html(self.items())


def render_text(items: Sequence[tuple[str, str]], width: int | None = None) -> str:
    """Rows as text: zarr-python 3's fixed name column when ``width`` is given (a longer name
    widens it), else zarr-python 2's (the widest name; values wrapped at 80 characters)."""
    if not items:
        return ""
    widest = max(len(k) for k, _ in items)
    if width is not None:
        width = max(width, widest)
        return "\n".join(f"{k:<{width}} : {v}" for k, v in items)
    lines = []
    for k, v in items:
        # wrapped between words only: a path or a codec is never cut in two
        wrapper = textwrap.TextWrapper(
            width=80, initial_indent=f"{k:<{widest}} : ", subsequent_indent=" " * widest + " : ",
            break_long_words=False, break_on_hyphens=False,
        )
        lines.append(wrapper.fill(v) if v else f"{k:<{widest}} :")
    return "\n".join(lines)


def render_html(items: Sequence[tuple[str, str]]) -> str:
    cell = 'style="text-align: left"'
    rows = "".join(
        f"<tr><th {cell}>{html.escape(k)}</th><td {cell}>{html.escape(v)}</td></tr>" for k, v in items
    )
    return f'<table class="zarrkit-info"><tbody>{rows}</tbody></table>'


# -- names of stores and codecs ----------------------------------------------------------------

_ZARR3_STORE_NAMES = {
    "DirectoryStore": "LocalStore", "NestedDirectoryStore": "LocalStore", "KVStore": "MemoryStore",
    "MappingStore": "MemoryStore", "DictStore": "MemoryStore", "dict": "MemoryStore",
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


def _split_arguments(text: str) -> list[str]:
    """The top-level comma-separated parts of a call's argument text."""
    parts, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(text):
        if quote:
            if ch == quote and text[i - 1] != "\\":
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    tail = text[start:].strip()
    if tail:
        parts.append(tail)
    return parts


def _without_private_arguments(text: str) -> str:
    """``Name(a=1, _b=set(), c=Inner(_d=2, e=3))`` -> ``Name(a=1, c=Inner(e=3))``: the
    ``_``-named keyword arguments of a repr left out, at every depth."""
    open_at = text.find("(")
    if open_at < 0 or not text.endswith(")"):
        return text
    parts = []
    for part in _split_arguments(text[open_at + 1:-1]):
        name, eq, value = part.partition("=")
        if eq and name.strip().startswith("_") and name.strip().isidentifier():
            continue
        if eq and name.strip().isidentifier():
            part = f"{name}={_rewrite_nested(value)}"
        else:
            part = _rewrite_nested(part)
        parts.append(part)
    return f"{text[:open_at]}({', '.join(parts)})"


def _rewrite_nested(value: str) -> str:
    value = value.strip()
    if value and value[0] in "([" and value[-1] in ")]":
        inner = [_rewrite_nested(p) for p in _split_arguments(value[1:-1])]
        trailing = "," if value[0] == "(" and len(inner) == 1 else ""
        return f"{value[0]}{', '.join(inner)}{trailing}{value[-1]}"
    if "(" in value and value.endswith(")") and value.split("(", 1)[0].replace(".", "").isidentifier():
        return _without_private_arguments(value)
    return value


def public_codec_repr(codec: Any) -> str:
    """A v3 codec as zarr-python 3 shows it, without the private attributes some of its
    reprs carry (``BloscCodec(_tunable_attrs=set(), ...)`` is shown as ``BloscCodec(...)``)."""
    return _without_private_arguments(repr(codec))


def _codecs_tuple(codecs: Sequence[Any]) -> str:
    inner = ", ".join(public_codec_repr(c) for c in codecs)
    return f"({inner},)" if len(codecs) == 1 else f"({inner})"


# -- the model ---------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class StoredSizes:
    """What an array's store holds for it: found by listing its chunks (and reading its shard
    indexes when it is sharded)."""

    nbytes_stored: int
    nchunks_initialized: int
    #: stored shards of a sharded array (None when it is not sharded)
    nshards_initialized: int | None = None


@dataclasses.dataclass(frozen=True)
class ArrayDescription:
    """What there is to say about an array.  All but :attr:`stored` comes from its metadata;
    :attr:`stored` (None unless asked for) costs listings of the store."""

    name: str | None
    path: str
    zarr_format: int
    dtype: Any
    #: the data type as the format's zarr-python shows it (``Float32(endianness='little')``
    #: for v3, ``float32`` for v2)
    data_type: str
    fill_value: Any
    shape: tuple[int, ...]
    #: None for a rectilinear grid's chunks (its edges could be any number: they are not listed)
    chunks: tuple[int, ...] | None
    sharded: bool
    #: the shard shape (None when not sharded, or when the shards are a rectilinear grid's)
    shards: tuple[int, ...] | None
    #: the chunk grid is rectilinear (edges of any lengths)
    rectilinear: bool
    order: str
    read_only: bool
    #: the codecs as the metadata has them (v3 codec objects for a v3 array)
    filters: tuple[Any, ...]
    serializer: Any
    compressors: tuple[Any, ...]
    #: the numcodecs forms zarr-python 2 shows (v2 filters and compressor)
    filters_numcodecs: tuple[Any, ...]
    compressor_numcodecs: Any
    store_type: str
    store_type_zarr3: str
    chunk_store_type: str | None
    synchronizer_type: str | None
    dimension_names: tuple[str | None, ...] | None
    nbytes: int
    nchunks: int
    nshards: int
    stored: StoredSizes | None = None


@dataclasses.dataclass(frozen=True)
class GroupDescription:
    """What there is to say about a group; :attr:`members` (None unless asked for) costs a
    listing of the group and a read of each member's metadata, :attr:`descendants` the same
    for every group below."""

    name: str
    path: str
    zarr_format: int
    read_only: bool
    store_type: str
    store_type_zarr3: str
    chunk_store_type: str | None
    synchronizer_type: str | None
    #: ``(name, 'array' | 'group')`` of each member, sorted
    members: tuple[tuple[str, str], ...] | None = None
    #: ``(path below the group, 'array' | 'group')`` of every node below it
    descendants: tuple[tuple[str, str], ...] | None = None


def _dimension_names(meta: Any) -> tuple[str | None, ...] | None:
    """A v3 array's dimension names (v2 metadata has no such field)."""
    names = getattr(meta, "dimension_names", None)
    return None if names is None else tuple(names)


def describe_array(a: Any, stored: bool = False) -> ArrayDescription:
    """Describe an array from its metadata; with ``stored``, also what its store holds (a
    listing of its chunks, and a read of each shard index of a sharded array)."""
    meta = a.metadata
    rectilinear = getattr(meta, "chunk_shapes", None) is not None
    sharded = getattr(meta, "sharding", None) is not None
    data_type = repr(meta.data_type) if meta.zarr_format == 3 else str(meta.dtype)
    sizes = None
    if stored:
        # one listing answers both where the chunks are listed beside the metadata
        totals = stored_totals(a._ctx, meta) if a._chunk_store is a._store else None
        if totals is not None:
            sizes = StoredSizes(nbytes_stored=totals[0], nchunks_initialized=totals[1],
                                nshards_initialized=None)
        else:
            sizes = StoredSizes(
                nbytes_stored=a.nbytes_stored,
                nchunks_initialized=a.nchunks_initialized,
                nshards_initialized=a.nshards_initialized if sharded else None,
            )
    return ArrayDescription(
        name=a.name,
        path=a.path,
        zarr_format=meta.zarr_format,
        dtype=meta.dtype,
        data_type=data_type,
        fill_value=meta.fill_value,
        shape=tuple(meta.shape),
        # a rectilinear grid's edges are not listed: a document may declare 2**40 of them
        chunks=None if rectilinear and not sharded else tuple(a.chunks),
        sharded=sharded,
        shards=tuple(a.shards) if sharded and not rectilinear else None,
        rectilinear=rectilinear,
        order=a.order,
        read_only=a.read_only,
        filters=tuple(meta.filters or ()),
        serializer=getattr(meta, "serializer", None),
        compressors=tuple(meta.compressors),
        filters_numcodecs=tuple(a.filters or ()),
        compressor_numcodecs=a.compressor,
        store_type=type(a.store).__name__,
        store_type_zarr3=zarr3_store_type(a._store),
        chunk_store_type=None if a._chunk_store_arg is None else type(a._chunk_store_arg).__name__,
        synchronizer_type=None if a.synchronizer is None else _type_name(a.synchronizer),
        dimension_names=_dimension_names(meta),
        nbytes=a.nbytes,
        nchunks=a.nchunks,
        nshards=a.nshards,
        stored=sizes,
    )


def describe_group(g: Any, members: bool = False, descendants: bool = False) -> GroupDescription:
    """Describe a group; with ``members``, also its members (one listing of the group and one
    batched read of the candidates' metadata); with ``descendants``, every node below it (the
    same for each group below)."""
    return GroupDescription(
        name=g.name,
        path=g.path,
        zarr_format=g.zarr_format,
        read_only=g.read_only,
        store_type=type(g.store).__name__,
        store_type_zarr3=zarr3_store_type(g._store),
        chunk_store_type=None if g._chunk_store_arg is None else type(g._chunk_store_arg).__name__,
        synchronizer_type=None if g.synchronizer is None else _type_name(g.synchronizer),
        members=tuple(g._member_names()) if members else None,
        descendants=tuple((rel, kind) for rel, kind, _ in g._walk()) if descendants else None,
    )


# -- the two renderings --------------------------------------------------------------------------

Items = list[tuple[str, str]]


def array_items(d: ArrayDescription, style: int | None = None) -> Items:
    """The rows of an array's report, in the style of zarr-python ``style`` (the array's
    format by default): 3 gives zarr-python 3.4's ``info`` (``info_complete()`` when the
    description has the stored sizes), 2 zarr-python 2's."""
    return _array_items_zarr3(d) if (style or d.zarr_format) == 3 else _array_items_zarr2(d)


def _array_items_zarr3(d: ArrayDescription) -> Items:
    # a rectilinear grid's edges could be any number: "<variable>", as zarr-python shows it
    items = [
        ("Type", "Array"),
        ("Zarr format", str(d.zarr_format)),
        ("Data type", d.data_type),
        ("Fill value", str(d.fill_value)),
        ("Shape", str(d.shape)),
        *([("Shard shape", "<variable>" if d.shards is None else str(d.shards))] if d.sharded else []),
        ("Chunk shape", "<variable>" if d.chunks is None else str(d.chunks)),
        ("Order", d.order),
        ("Read-only", str(d.read_only)),
        ("Store type", d.store_type_zarr3),
        ("Filters", _codecs_tuple(d.filters)),
        *([("Serializer", public_codec_repr(d.serializer))] if d.serializer is not None else []),
        ("Compressors", _codecs_tuple(d.compressors)),
        ("No. bytes", bytes_text(d.nbytes)),
    ]
    s = d.stored
    if s is not None:
        items.append(("No. bytes stored", bytes_text(s.nbytes_stored)))
        if s.nbytes_stored:
            items.append(("Storage ratio", f"{d.nbytes / s.nbytes_stored:.1f}"))
        if d.sharded:
            items.append(("Shards Initialized", str(s.nshards_initialized)))
        else:
            items.append(("Chunks Initialized", str(s.nchunks_initialized)))
    return items


def _array_items_zarr2(d: ArrayDescription) -> Items:
    items = [
        *([("Name", d.name)] if d.name is not None else []),
        ("Type", ARRAY_TYPE),
        ("Zarr format", str(d.zarr_format)),
        ("Data type", str(d.dtype)),
        ("Shape", str(d.shape)),
        ("Chunk shape", "<variable>" if d.chunks is None else str(d.chunks)),
        *([("Shard shape", "<variable>" if d.shards is None else str(d.shards))] if d.sharded else []),
        ("Order", d.order),
        ("Read-only", str(d.read_only)),
    ]
    for i, f in enumerate(d.filters_numcodecs):
        items.append((f"Filter [{i}]", format_codec(f)))
    items.append(("Compressor", "None" if d.compressor_numcodecs is None else format_codec(d.compressor_numcodecs)))
    if d.synchronizer_type is not None:
        items.append(("Synchronizer type", d.synchronizer_type))
    items.append(("Store type", d.store_type))
    if d.chunk_store_type is not None:
        items.append(("Chunk store type", d.chunk_store_type))
    items.append(("No. bytes", bytes_text(d.nbytes)))
    s = d.stored
    if s is not None:
        if s.nbytes_stored:
            items += [
                ("No. bytes stored", bytes_text(s.nbytes_stored)),
                ("Storage ratio", f"{d.nbytes / s.nbytes_stored:.1f}"),
            ]
        items.append(("Chunks initialized", f"{s.nchunks_initialized}/{d.nchunks}"))
        if d.sharded:
            items.append(("Shards initialized", f"{s.nshards_initialized}/{d.nshards}"))
    return items


def group_items(d: GroupDescription, style: int | None = None) -> Items:
    """The rows of a group's report in the style of zarr-python ``style`` (the group's
    format by default).  zarr-python 3's counts every node below the group when the
    description has them (``info_complete()``); zarr-python 2's counts and names the group's
    members when it has them."""
    if (style or d.zarr_format) == 3:
        items = [
            ("Name", d.path),
            ("Type", "Group"),
            ("Zarr format", str(d.zarr_format)),
            ("Read-only", str(d.read_only)),
            ("Store type", d.store_type_zarr3),
        ]
        if d.descendants is not None:
            items += _member_counts(d.descendants)
        return items
    items = [
        ("Name", d.name),
        ("Type", GROUP_TYPE),
        ("Zarr format", str(d.zarr_format)),
        ("Read-only", str(d.read_only)),
    ]
    if d.synchronizer_type is not None:
        items.append(("Synchronizer type", d.synchronizer_type))
    items.append(("Store type", d.store_type))
    if d.chunk_store_type is not None:
        items.append(("Chunk store type", d.chunk_store_type))
    if d.members is not None:
        items += _member_counts(d.members)
        arrays = [n for n, kind in d.members if kind == "array"]
        groups = [n for n, kind in d.members if kind == "group"]
        if arrays:
            items.append(("Arrays", ", ".join(arrays)))
        if groups:
            items.append(("Groups", ", ".join(groups)))
    return items


def _member_counts(nodes: Sequence[tuple[str, str]]) -> Items:
    return [
        ("No. members", str(len(nodes))),
        ("No. arrays", str(sum(1 for _, kind in nodes if kind == "array"))),
        ("No. groups", str(sum(1 for _, kind in nodes if kind == "group"))),
    ]


def report_width(style: int, kind: str) -> int | None:
    """The fixed name column of a report in zarr-python ``style`` (None: zarr-python 2's,
    as wide as the widest name)."""
    if style != 3:
        return None
    return _ZARR3_ARRAY_WIDTH if kind == "array" else _ZARR3_GROUP_WIDTH


def array_report(a: Any, stored: bool) -> InfoReporter:
    """An array's report in its format's style; ``stored`` adds what its store holds (which
    costs listings of the store each time the report is shown)."""
    fmt = a.zarr_format
    return InfoReporter(a, lambda: array_items(describe_array(a, stored)), width=report_width(fmt, "array"))


def group_report(g: Any, members: bool) -> InfoReporter:
    """A group's report in its format's style; ``members`` adds what it holds, each time the
    report is shown: a v2 group's members (a listing of the group), as zarr-python 2 shows
    them, or the count of every node below a v3 group (a listing of each group below), as
    zarr-python 3 does."""
    fmt = g.zarr_format
    return InfoReporter(
        g, lambda: group_items(describe_group(g, members=members and fmt == 2, descendants=members and fmt == 3)),
        width=report_width(fmt, "group"),
    )


# -- reprs: nothing read -----------------------------------------------------------------------

def node_url(store: Any, path: str) -> str:
    """Where a node is, as zarr-python 3's reprs show it: the store's ``str`` and the path."""
    return f"{store}/{path}" if path else str(store)


def array_repr(a: Any) -> str:
    """An array's ``repr``, from the metadata in memory (nothing is read from the store): for
    a v3 array zarr-python 3's ``<Array file://data.zarr/x shape=(10,) dtype=float64>``, for a
    v2 array zarr-python 2's ``<zarrkit.Array '/x' (10,) float64>``."""
    meta = a._meta
    if meta.zarr_format == 3:
        return f"<Array {node_url(a._store, a._path)} shape={tuple(meta.shape)} dtype={meta.dtype}>"
    name = f" '/{a._path}'" if a._path else ""
    read_only = " read-only" if a._read_only else ""
    return f"<{ARRAY_TYPE}{name} {tuple(meta.shape)} {meta.dtype}{read_only}>"


def group_repr(g: Any) -> str:
    """A group's ``repr`` (nothing is read from the store): zarr-python 3's ``<Group
    file://data.zarr/sub>`` for a v3 group, zarr-python 2's ``<zarrkit.Group '/sub'>`` for a
    v2 one."""
    if g._zarr_format == 3:
        return f"<Group {node_url(g._store, g._path)}>"
    read_only = " read-only" if g._read_only else ""
    return f"<{GROUP_TYPE} '/{g._path}'{read_only}>"


# -- identity ----------------------------------------------------------------------------------

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
