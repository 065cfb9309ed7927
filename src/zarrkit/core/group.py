"""The ``Group`` class: a node holding arrays and other groups (h5py-like API)."""

from __future__ import annotations

from collections.abc import Callable, ItemsView, Iterator, KeysView, Mapping, ValuesView
from typing import Any

import numpy as np

from ..errors import (
    ContainsArrayError,
    ContainsGroupError,
    GroupNotFoundError,
    NodeNotFoundError,
    ReadOnlyError,
)
from ..metadata import io
from ..storage.base import Store, join_path
from ..storage.coerce import coerce_store
from .array import Array, store_name
from .attributes import Attributes
from .normalize import normalize_path

__all__ = ["Group"]


class Group(Mapping):
    """A group of arrays and groups in a Zarr store.

    A group is a read-only :class:`~collections.abc.Mapping` of member names to arrays and
    groups (``keys()``, ``values()``, ``items()``, ``get()``), as in zarr-python 2;
    ``g[name] = data`` and ``del g[name]`` create and delete members.

    Parameters
    ----------
    store : MutableMapping or str
        Group store, already initialized (see :func:`zarrkit.group`).
    path : str, optional
        Group path within the store.
    read_only : bool, optional
        True if the group (and arrays obtained through it) must not be modified.
    chunk_store : MutableMapping, optional
        Separate storage for array chunks.
    cache_attrs : bool, optional
        If False, attributes are read again on every access.
    synchronizer : object, optional
        Synchronizer handed to member arrays.

    Examples
    --------
    >>> import zarrkit
    >>> root = zarrkit.group()
    >>> foo = root.create_group('foo')
    >>> z = foo.zeros('bar', shape=(10, 10), chunks=(5, 5))
    >>> sorted(root['foo'])
    ['bar']
    """

    def __init__(
        self,
        store: Any,
        path: str | None = None,
        read_only: bool = False,
        chunk_store: Any = None,
        cache_attrs: bool = True,
        synchronizer: Any = None,
        zarr_version: int | None = None,
        *,
        zarr_format: int | None = None,
        meta_array: Any = None,
    ):
        self._store: Store = coerce_store(store)
        self._store_arg = store if isinstance(store, Mapping) else self._store
        self._chunk_store_arg = chunk_store
        self._path = normalize_path(path)
        self._read_only = bool(read_only) or self._store.read_only
        self._cache_attrs = cache_attrs
        self._synchronizer = synchronizer
        kind = io.node_kind(self._store, self._path)
        if kind == "array":
            raise ContainsArrayError(f"path {self._path!r} holds an array, not a group", self._path)
        if kind is None:
            raise GroupNotFoundError(f"no group found at path {self._path!r}", self._path)
        self._zarr_format = io.check_group(self._store, self._path)
        wanted = zarr_version if zarr_format is None else zarr_format
        if wanted is not None and wanted != self._zarr_format:
            raise GroupNotFoundError(
                f"no Zarr v{wanted} group at path {self._path!r} (the group there is v{self._zarr_format})",
                self._path,
            )
        self._attrs = Attributes(
            self._store,
            self._path,
            self._zarr_format,
            read_only=self._read_only,
            cache=cache_attrs,
            synchronizer=synchronizer,
        )

    # -- properties --------------------------------------------------------------------------
    @property
    def store(self) -> Any:
        """The store holding the group (as given by the user)."""
        return self._store_arg

    @property
    def chunk_store(self) -> Any:
        """Separate storage for array chunks, if any."""
        return self.store if self._chunk_store_arg is None else self._chunk_store_arg

    @property
    def path(self) -> str:
        return self._path

    @property
    def name(self) -> str:
        """Group name following h5py convention ('/' for the root)."""
        return "/" + self._path

    @property
    def basename(self) -> str:
        return self._path.split("/")[-1] if self._path else ""

    @property
    def read_only(self) -> bool:
        return self._read_only

    @property
    def synchronizer(self) -> Any:
        return self._synchronizer

    @property
    def attrs(self) -> Attributes:
        """User-defined attributes."""
        return self._attrs

    @property
    def zarr_format(self) -> int:
        return self._zarr_format

    # -- members -----------------------------------------------------------------------------
    def _child_path(self, name: str) -> str:
        return join_path(self._path, normalize_path(name))

    def _member_names(self) -> list[tuple[str, str]]:
        prefix = f"{self._path}/" if self._path else ""
        members = []
        for name in self._store.list_dir(prefix):
            kind = io.node_kind(self._store, prefix + name)
            if kind is not None:
                members.append((name, kind))
        return sorted(members)

    def _open_member(self, path: str, kind: str) -> Array | Group:
        if kind == "array":
            return Array(
                self._store_arg,
                path=path,
                read_only=self._read_only,
                chunk_store=self._chunk_store_arg,
                synchronizer=self._synchronizer,
                cache_attrs=self._cache_attrs,
            )
        return Group(
            self._store_arg,
            path=path,
            read_only=self._read_only,
            chunk_store=self._chunk_store_arg,
            cache_attrs=self._cache_attrs,
            synchronizer=self._synchronizer,
        )

    def __len__(self) -> int:
        """Number of members."""
        return len(self._member_names())

    def __iter__(self) -> Iterator[str]:
        """Member names, sorted."""
        return iter([name for name, _ in self._member_names()])

    def __contains__(self, item: object) -> bool:
        """Whether ``item`` (a name or a relative path) is a member."""
        if not isinstance(item, str):
            return False
        try:
            path = self._child_path(item)
        except ValueError:
            return False
        return bool(path) and io.node_kind(self._store, path) is not None

    def __getitem__(self, item: str) -> Array | Group:
        """Obtain a member by name or by relative path ('a/b/c')."""
        path = self._child_path(item)
        kind = io.node_kind(self._store, path) if path else None
        if kind is None:
            raise NodeNotFoundError(f"no array or group {item!r} in group {self.name!r}", path)
        return self._open_member(path, kind)

    def __setitem__(self, item: str, value: Any) -> None:
        """``g['x'] = data`` creates (or replaces) an array holding ``data``."""
        self.array(item, value, overwrite=True)

    def __delitem__(self, item: str) -> None:
        """Delete a member and everything below it."""
        self._check_writable()
        path = self._child_path(item)
        if not path or io.node_kind(self._store, path) is None:
            raise NodeNotFoundError(f"no array or group {item!r} in group {self.name!r}", path)
        self._store.delete_prefix(path + "/")
        if self._chunk_store_arg is not None:
            coerce_store(self._chunk_store_arg).delete_prefix(path + "/")

    def keys(self) -> KeysView[str]:
        """A live view of the member names, sorted (what iterating the group gives).

        Examples
        --------
        >>> import zarrkit
        >>> g = zarrkit.group()
        >>> _ = g.create_group('foo'); _ = g.zeros('bar', shape=(3,))
        >>> list(g.keys())
        ['bar', 'foo']
        """
        return KeysView(self)

    def values(self) -> ValuesView[Array | Group]:
        """A live view of the members (arrays and groups), in name order.

        Examples
        --------
        >>> import zarrkit
        >>> g = zarrkit.group()
        >>> _ = g.create_group('foo'); _ = g.zeros('bar', shape=(3,))
        >>> [type(v).__name__ for v in g.values()]
        ['Array', 'Group']
        """
        return _MembersValuesView(self)

    def items(self) -> ItemsView[str, Array | Group]:
        """A live view of ``(name, member)`` pairs, in name order.

        Examples
        --------
        >>> import zarrkit
        >>> g = zarrkit.group()
        >>> _ = g.create_group('foo'); _ = g.zeros('bar', shape=(3,))
        >>> [(k, v.path) for k, v in g.items()]
        [('bar', 'bar'), ('foo', 'foo')]
        """
        return _MembersItemsView(self)

    def __getattr__(self, item: str) -> Array | Group:
        # Dot access to members (g.foo); private and special names are never members.
        if item.startswith("_"):
            raise AttributeError(item)
        try:
            return self[item]
        except (KeyError, ValueError):
            raise AttributeError(f"{type(self).__name__!r} has no attribute or member {item!r}") from None

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | {n for n in self if n.isidentifier()})

    def group_keys(self) -> Iterator[str]:
        """Names of member groups, sorted."""
        return (name for name, kind in self._member_names() if kind == "group")

    def groups(self) -> Iterator[tuple[str, Group]]:
        """``(name, group)`` pairs of member groups."""
        for name, kind in self._member_names():
            if kind == "group":
                yield name, self._open_member(self._child_path(name), kind)  # type: ignore[misc]

    def array_keys(self, recurse: bool = False) -> Iterator[str]:
        """Names of member arrays, sorted (all descendants' relative paths with ``recurse``)."""
        for name, kind in self._member_names():
            if kind == "array":
                yield name
            elif recurse:
                for sub in self[name].array_keys(recurse=True):  # type: ignore[union-attr]
                    yield f"{name}/{sub}"

    def arrays(self, recurse: bool = False) -> Iterator[tuple[str, Array]]:
        """``(name, array)`` pairs of member arrays."""
        for name in list(self.array_keys(recurse=recurse)):
            yield name, self[name]  # type: ignore[misc]

    def members(self) -> list[tuple[str, Array | Group]]:
        return [(name, self._open_member(self._child_path(name), kind)) for name, kind in self._member_names()]

    # -- walking ----------------------------------------------------------------------------
    def visitvalues(self, func: Callable[[Any], Any]) -> Any:
        """Call ``func(member)`` on every descendant, depth first; stop at a non-None result."""
        for _, obj in self.members():
            result = func(obj)
            if result is not None:
                return result
            if isinstance(obj, Group):
                result = obj.visitvalues(func)
                if result is not None:
                    return result
        return None

    def visit(self, func: Callable[[str], Any]) -> Any:
        """Call ``func(relative_path)`` on every descendant; stop at a non-None result."""
        base = len(self._path) + 1 if self._path else 0
        return self.visitvalues(lambda obj: func(obj.path[base:]))

    visitkeys = visit

    def visititems(self, func: Callable[[str, Any], Any]) -> Any:
        """Call ``func(relative_path, member)`` on every descendant; stop at a non-None result."""
        base = len(self._path) + 1 if self._path else 0
        return self.visitvalues(lambda obj: func(obj.path[base:], obj))

    def tree(self, expand: bool = False, level: int | None = None) -> TreeView:
        """A text tree of the hierarchy below this group (printable; ``str()`` gives the text).

        Examples
        --------
        >>> import zarrkit
        >>> g = zarrkit.group()
        >>> _ = g.create_group('foo').zeros('baz', shape=(3,))
        >>> print(g.tree())
        /
         └── foo
             └── baz (3,) float64
        """
        return TreeView(self, level)

    # -- creating members ----------------------------------------------------------------
    def _check_writable(self) -> None:
        if self._read_only:
            raise ReadOnlyError(f"group {self.name!r} is read-only")

    def create_group(self, name: str, overwrite: bool = False) -> Group:
        """Create a sub-group (and any missing intermediate groups)."""
        from .. import api

        self._check_writable()
        path = self._child_path(name)
        api.init_group(
            self._store, path=path, overwrite=overwrite, chunk_store=self._chunk_store_arg,
            zarr_format=self._zarr_format,
        )
        return self._open_member(path, "group")  # type: ignore[return-value]

    def require_group(self, name: str, overwrite: bool = False) -> Group:
        """Obtain a sub-group, creating it if it doesn't exist."""
        path = self._child_path(name)
        kind = io.node_kind(self._store, path)
        if kind == "group" and not overwrite:
            return self._open_member(path, "group")  # type: ignore[return-value]
        if kind == "array" and not overwrite:
            raise ContainsArrayError(f"path {path!r} holds an array, not a group", path)
        return self.create_group(name, overwrite=overwrite)

    def create_groups(self, *names: str, **kwargs: Any) -> tuple[Group, ...]:
        """Create several sub-groups at once."""
        return tuple(self.create_group(n, **kwargs) for n in names)

    def require_groups(self, *names: str) -> tuple[Group, ...]:
        """Require several sub-groups at once."""
        return tuple(self.require_group(n) for n in names)

    def _array_kwargs(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        kwargs.setdefault("zarr_format", self._zarr_format)
        kwargs.setdefault("synchronizer", self._synchronizer)
        kwargs.setdefault("cache_attrs", self._cache_attrs)
        if self._chunk_store_arg is not None:
            kwargs.setdefault("chunk_store", self._chunk_store_arg)
        return kwargs

    def _create(self, fn_name: str, name: str, *args: Any, **kwargs: Any) -> Array:
        from .. import api

        self._check_writable()
        fn = getattr(api, fn_name)
        return fn(*args, store=self._store_arg, path=self._child_path(name), **self._array_kwargs(kwargs))

    def create_dataset(self, name: str, **kwargs: Any) -> Array:
        """Create an array (h5py spelling): ``data=``, ``shape=``, ``dtype=``, ``chunks=``,
        ``compression=``/``compression_opts=`` (h5py style) or ``compressor=``, ..."""
        data = kwargs.pop("data", None)
        if data is None:
            return self._create("create", name, **kwargs)
        return self._create("array", name, data, **kwargs)

    def require_dataset(self, name: str, shape: Any, dtype: Any = None, exact: bool = False, **kwargs: Any) -> Array:
        """Obtain an array, creating it if it doesn't exist.

        An existing array must have the given shape and a dtype that is ``dtype`` (``exact``) or
        can be cast from it; otherwise a ``TypeError`` says what differs.
        """
        from .normalize import normalize_shape

        path = self._child_path(name)
        kind = io.node_kind(self._store, path)
        if kind is None:
            return self.create_dataset(name, shape=shape, dtype=dtype, **kwargs)
        if kind == "group":
            raise ContainsGroupError(f"path {path!r} holds a group, not an array", path)
        a = self._open_member(path, "array")
        shape = normalize_shape(shape)
        if a.shape != shape:  # type: ignore[union-attr]
            raise TypeError(f"shapes do not match: existing {a.shape}, new {shape}")  # type: ignore[union-attr]
        if dtype is not None:
            dtype = np.dtype(dtype)
            if exact and dtype != a.dtype:  # type: ignore[union-attr]
                raise TypeError(f"dtypes do not match exactly: existing {a.dtype}, new {dtype}")  # type: ignore[union-attr]
            if not exact and not np.can_cast(dtype, a.dtype):  # type: ignore[union-attr]
                raise TypeError(f"dtypes ({dtype}, {a.dtype}) are not compatible")  # type: ignore[union-attr]
        return a  # type: ignore[return-value]

    def create(self, name: str, **kwargs: Any) -> Array:
        """Create an array; keyword arguments as :func:`zarrkit.create`."""
        return self._create("create", name, **kwargs)

    def empty(self, name: str, **kwargs: Any) -> Array:
        return self._create("empty", name, **kwargs)

    def zeros(self, name: str, **kwargs: Any) -> Array:
        return self._create("zeros", name, **kwargs)

    def ones(self, name: str, **kwargs: Any) -> Array:
        return self._create("ones", name, **kwargs)

    def full(self, name: str, fill_value: Any, **kwargs: Any) -> Array:
        return self._create("full", name, fill_value=fill_value, **kwargs)

    def array(self, name: str, data: Any, **kwargs: Any) -> Array:
        return self._create("array", name, data, **kwargs)

    def empty_like(self, name: str, data: Any, **kwargs: Any) -> Array:
        return self._create("empty_like", name, data, **kwargs)

    def zeros_like(self, name: str, data: Any, **kwargs: Any) -> Array:
        return self._create("zeros_like", name, data, **kwargs)

    def ones_like(self, name: str, data: Any, **kwargs: Any) -> Array:
        return self._create("ones_like", name, data, **kwargs)

    def full_like(self, name: str, data: Any, **kwargs: Any) -> Array:
        return self._create("full_like", name, data, **kwargs)

    def move(self, source: str, dest: str) -> None:
        """Move a member (and everything below it) to another path in this group."""
        self._check_writable()
        src = self._child_path(source)
        dst = self._child_path(dest)
        if io.node_kind(self._store, src) is None:
            raise NodeNotFoundError(f"no array or group {source!r} in group {self.name!r}", src)
        existing = io.node_kind(self._store, dst)
        if existing is not None:
            cls = ContainsGroupError if existing == "group" else ContainsArrayError
            raise cls(f"path {dst!r} already holds a {existing}", dst)
        if dst.startswith(src + "/"):
            raise ValueError(f"cannot move {src!r} into itself ({dst!r})")
        from .. import api

        api.require_parent_groups(self._store, dst, self._zarr_format)
        stores = [self._store]
        if self._chunk_store_arg is not None:
            stores.append(coerce_store(self._chunk_store_arg))
        for store in stores:
            keys = list(store.list_prefix(src + "/"))
            for key in keys:
                store.set(dst + key[len(src):], store.get(key))
            for key in keys:
                store.delete(key)

    # -- display and identity ------------------------------------------------------------
    def __repr__(self) -> str:
        members = self._member_names()
        arrays = [n for n, k in members if k == "array"]
        groups = [n for n, k in members if k == "group"]
        lines = [f"Group({self.name}, {len(members)})"]
        if arrays:
            lines.append(f"  arrays: {len(arrays)}; {', '.join(arrays)}")
        if groups:
            lines.append(f"  groups: {len(groups)}; {', '.join(groups)}")
        store_line = f"  store: {store_name(self.store)}"
        if self._chunk_store_arg is not None:
            store_line += f"; chunk_store: {store_name(self._chunk_store_arg)}"
        lines.append(store_line)
        return "\n".join(lines)

    @property
    def info(self) -> str:
        return repr(self)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Group) and self._store == other._store and self._path == other._path

    __hash__ = None  # type: ignore[assignment]

    def __getstate__(self) -> dict[str, Any]:
        return {
            "store": self._store_arg,
            "path": self._path,
            "read_only": self._read_only,
            "chunk_store": self._chunk_store_arg,
            "cache_attrs": self._cache_attrs,
            "synchronizer": self._synchronizer,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(**state)

    def __enter__(self) -> Group:
        return self

    def __exit__(self, *exc: object) -> None:
        self._store.close()


class _MembersValuesView(ValuesView):
    # one listing for the whole iteration (the default view looks every member up twice)
    _mapping: Group

    def __iter__(self) -> Iterator[Array | Group]:
        g = self._mapping
        for name, kind in g._member_names():
            yield g._open_member(g._child_path(name), kind)


class _MembersItemsView(ItemsView):
    _mapping: Group

    def __iter__(self) -> Iterator[tuple[str, Array | Group]]:
        g = self._mapping
        for name, kind in g._member_names():
            yield name, g._open_member(g._child_path(name), kind)


class TreeView:
    """A printable tree of a hierarchy."""

    def __init__(self, group: Any, level: int | None = None):
        self.group = group
        self.level = level

    # what differs between kinds of hierarchy (zarrkit groups here; h5py groups elsewhere)
    def _root_name(self) -> str:
        return self.group.name if self.group.path else "/"

    def _members(self, g: Any) -> list[tuple[str, Any]]:
        return g.members()

    def _is_array(self, obj: Any) -> bool:
        return isinstance(obj, Array)

    def lines(self) -> list[str]:
        out = [self._root_name()]

        def walk(g: Any, indent: str, depth: int) -> None:
            if self.level is not None and depth >= self.level:
                return
            members = self._members(g)
            for i, (name, obj) in enumerate(members):
                last = i == len(members) - 1
                branch = " └── " if last else " ├── "
                if self._is_array(obj):
                    out.append(f"{indent}{branch}{name} {obj.shape} {obj.dtype}")
                else:
                    out.append(f"{indent}{branch}{name}")
                    walk(obj, indent + ("    " if last else " │  "), depth + 1)

        walk(self.group, "", 0)
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())

    __repr__ = __str__


# Public home of the class (zarr-python 2's ``zarr.hierarchy.Group``); pickles name it there.
Group.__module__ = "zarrkit.hierarchy"
