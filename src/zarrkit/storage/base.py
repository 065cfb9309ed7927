"""The store contract.

A store maps string keys to bytes.  The chunk engine uses only the small contract below;
everything else (the ``MutableMapping`` interface, ``listdir``, ``rmdir``) is derived from it so
zarr-2 style code that treats a store as a dict keeps working.

* ``get(key, byte_range=None)`` returns ``bytes`` or ``None`` for a missing key (never raises for
  a missing key).  ``byte_range`` is a :class:`ByteRange`.
* ``get_many(keys)`` returns ``{key: bytes | None}``; stores with a batch API override it.
* ``set(key, value)``; ``delete(key)`` (deleting a missing key is not an error);
  ``list_prefix(prefix)`` yields every key starting with ``prefix``; ``list_dir(prefix)`` returns
  the sorted immediate children (keys and "directories") below ``prefix``.
* Capability flags: ``supports_writes``, ``supports_deletes`` (``False``: deleting a stored key
  raises :class:`~zarrkit.errors.StoreError`, as in a zip file), ``supports_partial_reads``,
  ``supports_listing``, ``high_latency`` (keep many requests in flight),
  ``concurrent_small_writes`` (store small values from several threads at once).
"""

from __future__ import annotations

import functools
import os

import re

from collections.abc import Iterable, Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidPathError, ReadOnlyError

__all__ = [
    "ByteRange", "Store", "normalize_key", "validate_key", "validate_prefix", "join_path",
    "describe_store", "describe_location", "is_valid_key",
]


@dataclass(frozen=True, slots=True)
class ByteRange:
    """A request for part of a value.

    ``ByteRange(offset, length)`` asks for ``length`` bytes from ``offset`` (``length=None``: to
    the end).  A negative ``offset`` with ``length=None`` asks for the last ``-offset`` bytes
    (a suffix request, as used to read a shard index).
    """

    offset: int
    length: int | None = None

    def __post_init__(self) -> None:
        if self.length is not None and self.length < 0:
            raise ValueError(f"ByteRange length must be >= 0, got {self.length}")
        if self.offset < 0 and self.length is not None:
            raise ValueError("a suffix ByteRange (negative offset) takes no length")

    def slice(self, value: bytes | memoryview) -> bytes:
        """Apply this range to a whole value (used by stores without native range reads)."""
        n = len(value)
        if self.offset < 0:
            start = max(n + self.offset, 0)
            return bytes(value[start:])
        start = min(self.offset, n)
        stop = n if self.length is None else min(start + self.length, n)
        return bytes(value[start:stop])


def validate_key(key: str) -> str:
    """Check that ``key`` is a relative ``/``-separated key that stays inside the store.

    Raises :class:`~zarrkit.errors.InvalidPathError` for empty keys, absolute keys, ``\\``,
    ``.`` or ``..`` segments and NUL characters.
    """
    if not isinstance(key, str):
        raise InvalidPathError(f"store keys must be str, got {type(key).__name__}: {key!r}")
    if _BAD_KEY.search(key) is None:  # the common case: one scan of the key
        return key
    if not key:
        raise InvalidPathError("store key must not be empty")
    if "\x00" in key:
        raise InvalidPathError(f"store key {key!r} contains a NUL character")
    if key.startswith("/") or "\\" in key or (len(key) > 1 and key[1] == ":"):
        raise InvalidPathError(f"store key {key!r} must be relative and use '/' separators")
    raise InvalidPathError(
        f"store key {key!r} has an empty, '.' or '..' segment; keys may not escape the store root"
    )


#: anything :func:`validate_key` refuses: an empty, '.' or '..' segment (the empty key too), a
#: backslash or NUL anywhere, a leading '/' or a drive letter ('C:')
_BAD_KEY = re.compile(r"(?:^|/)\.{0,2}(?:/|\Z)|[\\\x00]|^.:", re.DOTALL)


def is_valid_key(key: object) -> bool:
    """Whether ``key`` is a key a store can hold (a ``str`` with no empty, ``.`` or ``..``
    segment, no backslash, NUL or drive letter)."""
    return isinstance(key, str) and _BAD_KEY.search(key) is None


def validate_prefix(prefix: str) -> str:
    """Check a listing/deletion prefix: ``''`` or a key, optionally ending with ``/``."""
    if not isinstance(prefix, str):
        raise InvalidPathError(f"store prefixes must be str, got {type(prefix).__name__}: {prefix!r}")
    body = prefix[:-1] if prefix.endswith("/") else prefix
    if body:
        validate_key(body)
    return prefix


def normalize_key(key: str) -> str:
    """Alias of :func:`validate_key` kept for readability at call sites."""
    return validate_key(key)


def describe_store(store: Any) -> str:
    """A store's name for messages: its class and where it is (URL or path) when it has one.

    >>> describe_store({})
    'dict'
    """
    if isinstance(store, (str, os.PathLike)):
        return repr(os.fspath(store))
    for attr in ("url", "path"):
        where = getattr(store, attr, None)
        if isinstance(where, (str, os.PathLike)) and os.fspath(where):
            return f"{type(store).__name__}({os.fspath(where)!r})"
    return type(store).__name__


def describe_location(store: Any, path: str) -> str:
    """``"path 'a/b' of DirectoryStore('/data/x.zarr')"``, or ``"the root of ..."``."""
    return f"path {path!r} of {describe_store(store)}" if path else f"the root of {describe_store(store)}"


def join_path(*parts: str) -> str:
    """Join logical path parts with ``/``, skipping empty ones."""
    return "/".join(p.strip("/") for p in parts if p and p.strip("/"))


class Store(MutableMapping):
    """Base class of zarrkit stores.

    Subclasses implement ``_get``, ``_set``, ``_delete`` and ``list_prefix`` (and optionally
    ``list_dir``, ``get_many``); the base class adds key validation, read-only enforcement and the
    ``MutableMapping`` interface.
    """

    supports_writes: bool = True
    #: ``False``: stored values cannot be removed (a zip file): deleting an existing key raises
    #: :class:`~zarrkit.errors.StoreError`; deleting a missing key is still not an error.
    supports_deletes: bool = True
    supports_partial_reads: bool = True
    supports_listing: bool = True
    read_only: bool = False
    #: Requests take long compared with decoding (object storage, HTTP, ...): the engine keeps
    #: ``config.io_threads`` requests in flight instead of one per CPU.
    high_latency: bool = False
    #: Writing many small values gains from storing batches on pool threads while the calling
    #: thread encodes the next (``False``: the calling thread does both, for stores whose
    #: writes contend with each other).
    concurrent_small_writes: bool = True
    #: Keys are best read and written in groups (the inner chunks of a shard): the engine asks
    #: ``key_groups(keys)`` how to group them, reads a group with :meth:`get_many` and writes it
    #: through ``transaction(key)`` under the lock of ``lock_key(key)``.
    groups_keys: bool = False
    #: Separator between chunk indices in the keys of new v2 arrays created in this store
    #: (``'.'`` when None); zarr-python 2's stores took it as ``dimension_separator=``.
    dimension_separator: str | None = None
    #: zarr-python 2's ``normalize_keys``: keys are lower-cased before use.
    normalize_keys: bool = False
    #: zarr-python 2's format tag of a store: zarrkit's stores hold either format, and code
    #: written for zarr-python 2 expects 2 (``_metadata_class``, its metadata dialect, is set
    #: by :mod:`zarrkit.meta`).
    _store_version: int = 2

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # A store written for zarr-python 2 implements the MutableMapping methods
        # (__getitem__, __setitem__, __delitem__, __iter__) and none of the contract: the
        # contract is then served through them.
        super().__init_subclass__(**kwargs)
        if cls.__getitem__ is not Store.__getitem__ and cls._get is Store._get:
            cls._get = _get_through_getitem  # type: ignore[method-assign]
        if cls.__setitem__ is not Store.__setitem__ and cls._set is Store._set:
            cls._set = _set_through_setitem  # type: ignore[method-assign]
        if cls.__delitem__ is not Store.__delitem__ and cls._delete is Store._delete:
            cls._delete = _delete_through_delitem  # type: ignore[method-assign]
        if cls.__iter__ is not Store.__iter__ and cls.list_prefix is Store.list_prefix:
            cls.list_prefix = _list_through_iter  # type: ignore[method-assign]
        if "getsize" in cls.__dict__:
            cls.getsize = _getsize_of_root_too(cls.__dict__["getsize"])  # type: ignore[method-assign]

    def _checked(self, key: str) -> str:
        """``key`` validated (and lower-cased for a store that normalizes keys)."""
        validate_key(key)
        return key.lower() if self.normalize_keys else key

    @staticmethod
    def _check_dimension_separator(dimension_separator: str | None) -> str | None:
        if dimension_separator not in (None, ".", "/"):
            raise ValueError(f"dimension_separator must be '.' or '/', got {dimension_separator!r}")
        return dimension_separator

    # -- the contract -----------------------------------------------------------------------
    def get(self, key: str, byte_range: ByteRange | None = None) -> bytes | None:  # type: ignore[override]
        """Return the value stored at ``key`` (or part of it), or ``None`` if it is missing."""
        return self._get(self._checked(key), byte_range)

    def get_transient(
        self, key: str, byte_range: ByteRange | None = None
    ) -> bytes | memoryview | None:
        """:meth:`get` for a value used at once and dropped (a chunk being decoded).

        The result may be a view of a buffer the store reuses for the calling thread's next
        ``get_transient``, so it must not be kept; stores that read into memory they own
        (files) avoid allocating for every chunk this way.
        """
        return self.get(key, byte_range)

    def get_upto(self, key: str, limit: int) -> bytes | None:
        """:meth:`get` of a whole value the caller expects to hold at most ``limit`` bytes (a
        small chunk); stores that can read it more cheaply knowing that do."""
        return self.get(key)

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes | None]:
        """Return ``{key: value or None}`` for several keys."""
        return {k: self.get(k) for k in keys}

    def set(self, key: str, value: bytes | bytearray | memoryview) -> None:
        """Store ``value`` at ``key``, replacing any previous value atomically where possible."""
        self._check_writable()
        key = self._checked(key)
        self._set(key, ensure_bytes_like(value, key))

    def set_many(self, items: Mapping[str, bytes | bytearray | memoryview]) -> None:
        """Store several values (as :meth:`set` each); stores that can write them together
        (one transaction, one request, one new directory) do.

        Parameters
        ----------
        items : mapping of str to bytes-like
            The values by key.

        Examples
        --------
        >>> import zarrkit
        >>> store = zarrkit.MemoryStore()
        >>> store.set_many({"a/0": b"x", "a/1": b"yz"})
        >>> sorted(store.list_prefix("a/")), store["a/1"]
        (['a/0', 'a/1'], b'yz')
        """
        for key, value in items.items():
            self.set(key, value)

    def set_parts(self, key: str, parts: Sequence[bytes | bytearray | memoryview]) -> None:
        """Store the concatenation of ``parts`` at ``key`` (as :meth:`set`); stores that can
        write the parts one after the other (files) do so without joining them first."""
        self.set(key, b"".join(parts))

    def delete(self, key: str) -> None:
        """Remove ``key``; removing a missing key is not an error."""
        self._check_writable()
        self._delete(self._checked(key))

    def exists(self, key: str) -> bool:
        """Whether a value is stored at ``key``."""
        return self.get(key) is not None

    def list_prefix(self, prefix: str) -> Iterator[str]:
        """Yield every key that starts with ``prefix`` (``''``: every key)."""
        raise NotImplementedError

    def list_prefix_sizes(self, prefix: str) -> Iterator[tuple[str, int]]:
        """Yield ``(key, size in bytes)`` for every key that starts with ``prefix``.

        Stores whose listings carry sizes (object storage, file systems) answer in one listing;
        the default asks :meth:`getsize` of each key.
        """
        for key in self.list_prefix(prefix):
            yield key, self.getsize(key)

    def list_dir(self, prefix: str = "") -> list[str]:
        """Sorted names of the immediate children below ``prefix`` (a ``/``-terminated path or ``''``)."""
        validate_prefix(prefix)
        if prefix and not prefix.endswith("/"):
            prefix += "/"
        children = set()
        n = len(prefix)
        for key in self.list_prefix(prefix):
            children.add(key[n:].split("/", 1)[0])
        return sorted(children)

    # -- zarr-python 2's batch names ---------------------------------------------------------
    def getitems(self, keys: Iterable[str], *, contexts: Any = None) -> dict[str, bytes]:
        """The values of the ``keys`` that are present (zarr-python 2's name; ``contexts`` is
        accepted and unused)."""
        return {k: v for k, v in self.get_many(keys).items() if v is not None}

    def setitems(self, values: Mapping[str, bytes | bytearray | memoryview]) -> None:
        """Store several values (zarr-python 2's name of :meth:`set_many`)."""
        self.set_many(values)

    def delitems(self, keys: Iterable[str]) -> None:
        """Delete several keys; missing ones are not an error (zarr-python 2's name)."""
        for key in list(keys):
            self.delete(key)

    def delete_prefix(self, prefix: str) -> None:
        """Remove every key starting with ``prefix``."""
        self._check_writable()
        validate_prefix(prefix)
        for key in list(self.list_prefix(prefix)):
            self._delete(key)

    def getsize(self, key: str | None = None) -> int:
        """Size in bytes of the value at ``key``; for a key that holds no value (a "directory",
        or no key: the root), the total of the values directly below it, as zarr-python 2's
        stores answer; 0 when there is nothing."""
        return _value_or_children_size(self, key, _value_size)

    def rename(self, src_path: str, dst_path: str) -> None:
        """Move the value at ``src_path``, and every value below it, to ``dst_path``."""
        self._check_writable()
        src, dst = src_path.strip("/"), dst_path.strip("/")
        validate_key(src)
        validate_key(dst)
        moves = [(k, dst + k[len(src):]) for k in self.list_prefix(src + "/")]
        if self.get(src) is not None:
            moves.append((src, dst))
        if not moves:
            raise KeyError(src_path)
        for old, new in moves:
            value = self.get(old)
            if value is not None:
                self.set(new, value)
        for old, _ in moves:
            self.delete(old)

    def close(self) -> None:
        """Release resources held by the store (files, connections)."""

    # -- what subclasses implement -----------------------------------------------------------
    def _get(self, key: str, byte_range: ByteRange | None) -> bytes | None:
        raise NotImplementedError

    def _set(self, key: str, value: bytes | memoryview) -> None:
        raise NotImplementedError

    def _delete(self, key: str) -> None:
        raise NotImplementedError

    def _check_writable(self) -> None:
        if self.read_only or not self.supports_writes:
            raise ReadOnlyError(f"{type(self).__name__} is read-only")

    # -- zarr-2 conveniences -----------------------------------------------------------------
    def listdir(self, path: str = "") -> list[str]:
        """Names directly below ``path`` (zarr-2 spelling of :meth:`list_dir`)."""
        return self.list_dir(path.strip("/"))

    def rmdir(self, path: str = "") -> None:
        """Remove everything below ``path`` (zarr-2 spelling of :meth:`delete_prefix`)."""
        path = path.strip("/")
        self.delete_prefix(path + "/" if path else "")

    # -- MutableMapping ----------------------------------------------------------------------
    def __getitem__(self, key: str) -> bytes:
        value = self.get(key)
        if value is None:
            raise KeyError(key)
        return value

    def __setitem__(self, key: str, value: Any) -> None:
        self.set(key, value)

    def __delitem__(self, key: str) -> None:
        self._check_writable()
        key = self._checked(key)
        if self._get(key, None) is None:
            raise KeyError(key)
        self._delete(key)

    def __contains__(self, key: object) -> bool:
        # a key no store can hold ('c/', '../x', '') is simply not in it
        if not key or not is_valid_key(key):
            return False
        return self.exists(key)  # type: ignore[arg-type]

    def __iter__(self) -> Iterator[str]:
        return iter(self.list_prefix(""))

    def __len__(self) -> int:
        return sum(1 for _ in self.list_prefix(""))

    def __eq__(self, other: object) -> bool:
        return self is other

    __hash__ = object.__hash__

    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _get_through_getitem(self: Store, key: str, byte_range: ByteRange | None) -> bytes | None:
    try:
        value = type(self).__getitem__(self, key)
    except KeyError:
        return None
    value = value if isinstance(value, bytes) else bytes(memoryview(value).cast("B"))
    return value if byte_range is None else byte_range.slice(value)


def _set_through_setitem(self: Store, key: str, value: bytes | memoryview) -> None:
    type(self).__setitem__(self, key, bytes(value))


def _delete_through_delitem(self: Store, key: str) -> None:
    try:
        type(self).__delitem__(self, key)
    except KeyError:
        pass


def _list_through_iter(self: Store, prefix: str) -> Iterator[str]:
    keys = list(type(self).__iter__(self))
    return iter(keys) if not prefix else (k for k in keys if k.startswith(prefix))


def ensure_bytes_like(value: Any, key: str = "") -> bytes | memoryview:
    """Accept bytes, bytearray, memoryview or a contiguous numpy array as a value."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return memoryview(value).cast("B") if memoryview(value).c_contiguous else bytes(value)
    try:
        view = memoryview(value)
    except TypeError:
        raise TypeError(
            f"store values must be bytes-like, got {type(value).__name__} for key {key!r}"
        ) from None
    return view.cast("B") if view.c_contiguous else bytes(view)


def is_mapping_like(obj: object) -> bool:
    return isinstance(obj, Mapping) or (
        hasattr(obj, "__getitem__") and hasattr(obj, "__setitem__") and hasattr(obj, "keys")
    )


def _value_size(store: Store, key: str) -> int:
    value = store.get(key)
    return 0 if value is None else len(value)


def _value_or_children_size(store: Store, key: str | None, value_size: Any) -> int:
    if key is not None:
        size = value_size(store, key)
        if size:
            return size
    prefix = (key or "").strip("/")
    prefix = f"{prefix}/" if prefix else ""
    n = len(prefix)
    return sum(value_size(store, k) for k in store.list_prefix(prefix) if "/" not in k[n:])


def _getsize_of_root_too(getsize: Any) -> Any:
    """A store's own ``getsize(key)`` (the size of one value), also answering for directories
    and the root as :meth:`Store.getsize` does."""
    if getattr(getsize, "_answers_root", False):
        return getsize

    @functools.wraps(getsize)
    def wrapper(self: Store, key: str | None = None) -> int:
        return _value_or_children_size(self, key, getsize)

    wrapper._answers_root = True  # type: ignore[attr-defined]
    return wrapper
