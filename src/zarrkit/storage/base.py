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
* ``get_ranges(key, ranges)`` reads several ranges of one value; a store that can fetch them
  together (in one call, as the shard reader wants them) overrides it.
* Versions and conditional writes (``supports_conditional_writes``): ``get_versioned(key)``
  returns the value with its version (:data:`ABSENT` for a missing key); ``set_if(key, value,
  version)`` stores only while the value is still that version (:data:`ABSENT`: only while
  there is none) and returns the new version; ``delete_if(key, version)`` removes only that
  version.  Otherwise they write nothing and raise
  :class:`~zarrkit.errors.VersionConflictError`.  A version is opaque, compared with ``==``:
  an ETag or generation on object storage, the file's identity on a directory, a row version
  in a database.  A store answers a retry of its own conditional write, whose first answer
  was lost, as a success, never as a conflict.  Every read-modify-write of the engine goes
  through :func:`zarrkit.storage.optimistic.update`, which uses these where the store has them.
"""

from __future__ import annotations

import os
from collections.abc import (
    Coroutine,
    Hashable,
    Iterable,
    Iterator,
    Mapping,
    MutableMapping,
    Sequence,
)
from typing import Any, Self, TypeAlias, overload

from ..errors import ChunkDecodeError, ConditionalWritesUnsupportedError, ReadOnlyError
from . import cancel
from .buffer import Buffer, BufferPrototype
from .conveniences import (
    StoreConveniences,
    _delete_through_delitem,
    _get_through_getitem,
    _getsize_of_root_too,
    _list_through_iter,
    _set_through_setitem,
)
from .keys import (
    ByteRange,
    describe_location,
    describe_store,
    is_node_name,
    is_valid_key,
    join_path,
    normalize_key,
    validate_key,
    validate_prefix,
)
from .zarr2_names import Zarr2Name
from .zarr3_api import (
    FINISHED,
    ByteRequest,
    Finished,
    OffsetByteRequest,
    RangeByteRequest,
    SuffixByteRequest,
    Zarr3StoreMethods,
    answer,
    as_byte_range,
    listing_of_both_kinds,
    speaks_zarr3,
)

__all__ = [
    "ABSENT", "Version", "ByteRange", "Store", "StoreLike", "normalize_key", "validate_key", "validate_prefix", "join_path",
    "describe_store", "describe_location", "is_node_name", "is_valid_key", "oversized",
    "ByteRequest", "RangeByteRequest", "OffsetByteRequest", "SuffixByteRequest",
]


class _Absent:
    """The version of a value that is not there (see :data:`ABSENT`)."""

    _instance: _Absent | None = None

    def __new__(cls) -> Self:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "ABSENT"

    def __reduce__(self) -> str:
        return "ABSENT"


#: The version :meth:`Store.get_versioned` gives a missing key, and the condition of
#: :meth:`Store.set_if` that creates a value only where there is none.
ABSENT = _Absent()

#: A value's version: opaque, hashable, compared with ``==`` (or :data:`ABSENT`).
Version: TypeAlias = Hashable


class Store(StoreConveniences, Zarr3StoreMethods):
    """Base class of zarrkit stores.

    Subclasses implement ``_get``, ``_set``, ``_delete`` and ``list_prefix`` (and optionally
    ``list_dir``, ``get_many``); the base class adds key validation, read-only enforcement, the
    ``MutableMapping`` interface and zarr-python 3's asynchronous ``open``, ``is_empty``,
    ``list``... (:mod:`~zarrkit.storage.zarr3_api`).

    Parameters
    ----------
    read_only : bool, default False
        The store refuses writes (zarr-python 3's argument of ``Store.__init__``, which the
        stores written for it pass on).
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
    #: Changes become visible together, when a transaction is committed (an Icechunk session):
    #: no order of writes can leave a torn array behind.
    transactional: bool = False
    #: Writing many small values gains from storing batches on pool threads while the calling
    #: thread encodes the next (``False``: the calling thread does both, for stores whose
    #: writes contend with each other).
    concurrent_small_writes: bool = True
    #: The store has versions and conditional writes (:meth:`get_versioned`, :meth:`set_if`,
    #: :meth:`delete_if`), atomic against every other writer of the same values -- other
    #: threads, processes and, for stores reached over a network, machines.
    supports_conditional_writes: bool = False
    #: A version is the value's content (a digest, an S3 ETag): the same bytes written again
    #: have the version they had, so a version unchanged does not tell that nobody wrote.
    versions_are_contents: bool = False
    #: :meth:`delete_if` compares and removes in one step.  False: it reads the version, then
    #: deletes (object stores without conditional deletes), so a write landing between the two
    #: goes with it; where that would lose another writer's data the engine writes the fill
    #: value conditionally instead of deleting.
    atomic_deletes: bool = True
    #: Separator between chunk indices in the keys of new v2 arrays created in this store
    #: (``'.'`` when None); zarr-python 2's stores took it as ``dimension_separator=``.
    dimension_separator: str | None = None
    #: zarr-python 2's ``normalize_keys``: keys are lower-cased before use.
    normalize_keys: bool = False
    #: zarr-python 2's format tag of a store: zarrkit's stores hold either format, and code
    #: written for zarr-python 2 expects 2 and its metadata dialect (``_metadata_class``,
    #: ``zarrkit.meta.Metadata2``, found through the compatibility table when read).
    _store_version: int = 2
    _metadata_class = Zarr2Name("meta", "Metadata2")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # A store written for zarr-python 2 implements the MutableMapping methods
        # (__getitem__, __setitem__, __delitem__, __iter__) and none of the contract: the
        # contract is then served through them.
        super().__init_subclass__(**kwargs)
        #: written for zarr-python 3 (coroutine get, set...): used through an adapter
        cls._speaks_zarr3 = speaks_zarr3(cls)
        if cls._speaks_zarr3:
            return
        listing_of_both_kinds(cls)  # listings that ``async for`` walks too
        if cls.__getitem__ is not Store.__getitem__ and cls._get is Store._get:
            cls._get = _get_through_getitem  # type: ignore[method-assign]
        if cls.__setitem__ is not Store.__setitem__ and cls._set is Store._set:
            cls._set = _set_through_setitem  # type: ignore[method-assign]
        if cls.__delitem__ is not Store.__delitem__ and cls._delete is Store._delete:
            cls._delete = _delete_through_delitem  # type: ignore[method-assign]
        if cls.__iter__ is not Store.__iter__ and cls.list_prefix is Store.list_prefix:
            cls.list_prefix = _list_through_iter  # type: ignore[method-assign]
        if "getsize" in cls.__dict__:
            setattr(cls, "getsize", _getsize_of_root_too(cls.__dict__["getsize"]))  # noqa: B010 - not a declaration

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
    #: the class defines the names both contracts share as coroutines (zarr-python 3's)
    _speaks_zarr3: bool = False

    @overload
    def get(self, key: str, byte_range: ByteRange | None = None) -> bytes | None: ...

    @overload  # zarr-python 3's get(key, prototype, byte_range=None)
    def get(self, key: str, byte_range: BufferPrototype, zarr3_range: ByteRequest | ByteRange | None = None
            ) -> Coroutine[Any, Any, Buffer | None]: ...

    @overload
    def get(self, key: str, byte_range: ByteRequest | ByteRange | None = None, zarr3_range: None = None, *,
            prototype: BufferPrototype) -> Coroutine[Any, Any, Buffer | None]: ...

    def get(self, key: str, byte_range: Any = None, zarr3_range: Any = None, *,
            prototype: BufferPrototype | None = None) -> bytes | Coroutine[Any, Any, Buffer | None] | None:
        """Return the value stored at ``key`` (or part of it), or ``None`` if it is missing.

        Called as zarr-python 3 calls it -- ``get(key, prototype, byte_range=None)``, with a
        buffer prototype -- it is zarr-python 3's coroutine (see :mod:`.zarr3_api`).

        Parameters
        ----------
        key : str
            The key (``/``-separated path).
        byte_range : ByteRange, optional
            Only these bytes of the value (an offset and length, or a suffix); in a call with a
            ``prototype``, also one of zarr-python 3's byte requests.
        zarr3_range : byte request, optional
            The third argument of zarr-python 3's ``get(key, prototype, byte_range)``.
        prototype : BufferPrototype, optional
            zarr-python 3's argument (also taken in ``byte_range``'s place, where zarr-python 3
            has it).

        Returns
        -------
        bytes or None
            Without ``prototype``.
        coroutine
            With a ``prototype``: awaited, a :class:`~zarrkit.storage.buffer.Buffer` or None.
        """
        if isinstance(byte_range, BufferPrototype) or _is_prototype(byte_range):
            prototype, byte_range = byte_range, zarr3_range
        elif zarr3_range is not None:
            raise TypeError("get: a third argument is zarr-python 3's byte_range, after a prototype")
        if prototype is None:
            return self._get(self._checked(key), byte_range)
        key, request = self._checked(key), as_byte_range(byte_range)
        make = prototype.buffer.from_bytes

        def read() -> Buffer | None:
            value = self._get(key, request)
            return None if value is None else make(value)

        return answer(read, self.high_latency)

    def get_transient(
        self, key: str, byte_range: ByteRange | None = None
    ) -> bytes | memoryview | None:
        """:meth:`get` for a value used at once and dropped (a chunk being decoded).

        The result may be a view of a buffer the store reuses for the calling thread's next
        ``get_transient``, so it must not be kept; stores that read into memory they own
        (files) avoid allocating for every chunk this way.

        Parameters
        ----------
        key : str
            The key.
        byte_range : ByteRange, optional
            Only these bytes of the value.

        Returns
        -------
        bytes, memoryview or None
        """
        return self.get(key, byte_range)

    def get_upto(self, key: str, limit: int) -> bytes | memoryview | None:
        """:meth:`get` of a whole value that may hold at most ``limit`` bytes (a chunk, which
        its codecs cannot have written larger), for a ``key`` the caller knows to be valid (as
        the chunk keys the engine builds are: it is not validated again).  A larger value is
        refused with :class:`~zarrkit.errors.ChunkDecodeError` naming ``key`` (see
        :func:`oversized`), and stores that can tell from its size, before reading it whole,
        do (a file's size, a ranged read of ``limit + 1`` bytes, an object's
        ``Content-Length``).  Stores whose keys are file paths still check them.

        Parameters
        ----------
        key : str
            The key.
        limit : int
            The most bytes the value may hold.

        Returns
        -------
        bytes, memoryview or None
            A memoryview from stores that hold the value already (an inner chunk of a shard
            read whole), to copy only when kept.
        """
        if type(self).get is Store.get:  # the usual case: no call through get() per chunk
            value = self._get(key.lower() if self.normalize_keys else key, None)
        else:
            value = self.get(key)
        if value is not None and len(value) > limit:
            raise oversized(key, len(value), limit)
        return value

    def get_many_upto(self, keys: Sequence[str], limit: int) -> list[bytes | memoryview | None]:
        """:meth:`get_upto` of each of ``keys`` (chunk keys the caller knows to be valid), in
        their order: what reads many small chunks one after the other, where a store can read
        them with less work per value than a call each (a local directory does).

        Parameters
        ----------
        keys : sequence of str
            The keys.
        limit : int
            The most bytes each value may hold.

        Returns
        -------
        list
            Each value (see :meth:`get_upto`), or None where it is missing.
        """
        get_upto = self.get_upto
        return [get_upto(key, limit) for key in keys]

    def prefetch(self, keys: Iterable[str]) -> bool:
        """A hint that the values of ``keys`` are about to be read: a store that can fetch
        them in the background starts to (a local directory has the system read their files
        into its cache, where they are not there yet: reads from a disk then keep it busy
        while the values before are decoded).  Nothing else changes and nothing is raised,
        for a missing or invalid key (or one that is not a string) either.  The default does
        nothing.

        Parameters
        ----------
        keys : iterable of str
            The keys.

        Returns
        -------
        bool
            Whether any value is being fetched (False when all were at hand already).
        """
        return False

    def version_token(self, key: str) -> Any:
        """A value that changes whenever the value at ``key`` is replaced or rewritten, where
        the store has one far cheaper than reading the value (a file's inode, size and
        modification time); None where it has none (the default).

        Parameters
        ----------
        key : str
            The value's key.

        Returns
        -------
        hashable or None
        """
        return None

    # -- versions and conditional writes ------------------------------------------------------
    def get_versioned(self, key: str, limit: int | None = None) -> tuple[bytes | memoryview | None, Version]:
        """The value at ``key`` and its version: ``(None, ABSENT)`` when there is none.

        Parameters
        ----------
        key : str
            The key.
        limit : int, optional
            The most bytes the value may hold: a larger one is refused unread where the store
            can tell (as :meth:`get_upto`).

        Returns
        -------
        tuple
            The value (bytes or a memoryview, or None) and its version.

        Raises
        ------
        ConditionalWritesUnsupportedError
            The store has no versions (``supports_conditional_writes`` is False).

        Examples
        --------
        >>> import zarrkit
        >>> from zarrkit.storage.base import ABSENT
        >>> store = zarrkit.MemoryStore()
        >>> store.get_versioned("a")
        (None, ABSENT)
        >>> v = store.set_if("a", b"1", ABSENT)
        >>> value, version = store.get_versioned("a")
        >>> bytes(value), version == v
        (b'1', True)
        """
        key = self._checked(key)
        self._check_conditional()
        value, version = self._get_versioned(key, limit)
        if value is None:
            return None, ABSENT
        if limit is not None and len(value) > limit:
            raise oversized(key, len(value), limit)
        return value, version

    def set_if(self, key: str, value: bytes | bytearray | memoryview, version: Version) -> Version:
        """Store ``value`` at ``key`` only while the value there is the one of ``version``
        (:data:`ABSENT`: only while there is none), atomically; return the new version.

        Parameters
        ----------
        key : str
            The key.
        value : bytes-like
            The value (as for :meth:`set`).
        version : hashable
            The version it replaces, as :meth:`get_versioned` (or this method) gave it, or
            :data:`ABSENT`.

        Returns
        -------
        hashable
            The version of the value stored.

        Raises
        ------
        VersionConflictError
            The value is another version (or there is one, or none): nothing was written.
        ConditionalWritesUnsupportedError
            The store has no conditional writes.
        ReadOnlyError
            The store is read-only.
        """
        self._check_writable()
        key = self._checked(key)
        self._check_conditional()
        return self._set_if(key, ensure_bytes_like(value, key), version)

    def delete_if(self, key: str, version: Version) -> None:
        """Remove ``key`` only while its value is the one of ``version``, atomically;
        :data:`ABSENT` asks that there be none (and removes nothing).

        Parameters
        ----------
        key : str
            The key.
        version : hashable
            The version to remove.

        Raises
        ------
        VersionConflictError
            The value is another version: nothing was removed.
        ConditionalWritesUnsupportedError
            The store has no conditional writes.
        ReadOnlyError
            The store is read-only.
        """
        self._check_writable()
        key = self._checked(key)
        self._check_conditional()
        self._delete_if(key, version)

    def _check_conditional(self) -> None:
        if not self.supports_conditional_writes:
            raise ConditionalWritesUnsupportedError(
                f"{type(self).__name__} cannot condition a write on a value's version"
            )

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes | None]:
        """Return ``{key: value or None}`` for several keys.

        Parameters
        ----------
        keys : iterable of str
            The keys.

        Returns
        -------
        dict
        """
        return {k: self.get(k) for k in keys}

    def get_ranges(self, key: str, ranges: Sequence[ByteRange]) -> list[bytes | None] | None:
        """The bytes of each of ``ranges`` of the value at ``key`` (None when it is missing);
        stores that fetch them together override it.

        Parameters
        ----------
        key : str
            The value's key.
        ranges : sequence of ByteRange
            The ranges to read.

        Returns
        -------
        list of bytes, or None
        """
        values = [self.get(key, r) for r in ranges]
        return None if any(v is None for v in values) else values

    def set(self, key: str, value: bytes | bytearray | memoryview, byte_range: None = None) -> Finished[None] | None:
        """Store ``value`` at ``key``, replacing any previous value atomically where possible.

        The value is stored when this returns.  Given a ``Buffer`` (zarr-python 3's call), it
        returns :data:`.zarr3_api.FINISHED`, which zarr-python 3 code awaits (``await
        store.set(key, buffer)``).

        Parameters
        ----------
        key : str
            The key.
        value : bytes-like
            The value (bytes, bytearray, memoryview or a contiguous NumPy array).  It may be a
            view of a buffer the caller reuses once this returns: a store keeping the value
            itself rather than writing it out must keep a copy.
        byte_range : None
            zarr-python 3's argument; only None.

        Raises
        ------
        ReadOnlyError
            The store is read-only.
        """
        self._check_writable()
        key = self._checked(key)
        if byte_range is not None:  # zarr-python 3's partial writes, which the format no longer uses
            raise ValueError(f"set: partial writes are not supported (key {key!r})")
        zarr3 = not isinstance(value, (bytes, bytearray, memoryview)) and hasattr(value, "to_bytes")
        self._set(key, ensure_bytes_like(value, key))
        return FINISHED if zarr3 else None

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
        write the parts one after the other (files) do so without joining them first.

        Parameters
        ----------
        key : str
            The key.
        parts : sequence of bytes-like
            The pieces of the value, in order; they may be views of buffers the caller reuses
            once this returns (as ``value`` of :meth:`set`).
        """
        self.set(key, b"".join(parts))

    def delete(self, key: str) -> Finished[None]:
        """Remove ``key``; removing a missing key is not an error (what it returns: as
        :meth:`set`).

        Parameters
        ----------
        key : str
            The key (``/``-separated path).
        """
        self._check_writable()
        self._delete(self._checked(key))
        return FINISHED

    def list_prefix(self, prefix: str) -> Iterator[str]:
        """Yield every key that starts with ``prefix`` (``''``: every key).

        Parameters
        ----------
        prefix : str
            The start of the keys (``''``: every key).

        Yields
        ------
        str
        """
        raise NotImplementedError

    def list_prefix_sizes(self, prefix: str) -> Iterator[tuple[str, int]]:
        """Yield ``(key, size in bytes)`` for every key that starts with ``prefix``.

        Stores whose listings carry sizes (object storage, file systems) answer in one listing;
        the default asks :meth:`getsize` of each key.

        Parameters
        ----------
        prefix : str
            The start of the keys (``''``: every key).

        Yields
        ------
        tuple of (str, int)
        """
        for key in self.list_prefix(prefix):
            yield key, self.getsize(key)

    def list_dir(self, prefix: str = "") -> list[str]:
        """Sorted names of the immediate children below ``prefix`` (a ``/``-terminated path or ``''``).

        Parameters
        ----------
        prefix : str, optional
            The directory (``''``: the root).

        Returns
        -------
        list of str

        Examples
        --------
        >>> import zarrkit
        >>> store = zarrkit.MemoryStore()
        >>> store.set_many({'a/x': b'1', 'a/y/z': b'2', 'b': b'3'})
        >>> store.list_dir(), store.list_dir('a/')
        (['a', 'b'], ['x', 'y'])
        """
        validate_prefix(prefix)
        if prefix and not prefix.endswith("/"):
            prefix += "/"
        children = set()
        n = len(prefix)
        for key in self.list_prefix(prefix):
            children.add(key[n:].split("/", 1)[0])
        return sorted(children)

    def clear(self) -> Finished[None] | None:  # type: ignore[override]  # (zarr-python 3 awaits it)
        """Remove every key (what it returns: as :meth:`delete`)."""
        self._check_writable()
        self.delete_prefix("")
        return FINISHED

    def close(self) -> None:
        """Release resources held by the store (files, connections)."""

    def location(self) -> tuple[Hashable, str]:
        """Where this store's values are: ``(what holds them, key prefix)``.  Two stores with
        equal holders reach the same values (deleting a key through one deletes it through the
        other); a prefix is the part of that holder's keys the store shows.  By default a store
        is its own holder; stores over a dictionary, directory or file name those.

        Returns
        -------
        tuple
            A hashable identity of the holder, and the prefix (``''``: all of it).
        """
        return ("store", id(self)), ""

    def with_read_only(self, read_only: bool = False) -> Store:
        """A new store over the same data, with its own ``read_only`` setting (zarr-python 3).

        This store is neither closed nor changed.

        Parameters
        ----------
        read_only : bool, default False
            Whether the new store refuses writes.

        Returns
        -------
        Store
            A store of the same type.

        Raises
        ------
        ReadOnlyError
            ``read_only=False`` on a store that cannot write at all (``supports_writes``).
        """
        if not read_only and not self.supports_writes:
            raise ReadOnlyError(f"{type(self).__name__} cannot be opened for writing")
        # a shallow copy shares what reaches the data (a dict, a directory, a client); only the
        # flag differs.  Not copy.copy: it goes through __getstate__, which copies a memory
        # store's values for pickling
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.read_only = bool(read_only)
        return new

    # -- what subclasses implement -----------------------------------------------------------
    def _get(self, key: str, byte_range: ByteRange | None) -> bytes | None:
        raise NotImplementedError

    def _set(self, key: str, value: bytes | memoryview) -> None:
        raise NotImplementedError

    def _delete(self, key: str) -> None:
        raise NotImplementedError

    def _get_versioned(self, key: str, limit: int | None) -> tuple[bytes | memoryview | None, Version]:
        raise NotImplementedError

    def _set_if(self, key: str, value: bytes | memoryview, version: Version) -> Version:
        raise NotImplementedError

    def _delete_if(self, key: str, version: Version) -> None:
        raise NotImplementedError

    def _check_writable(self) -> None:
        if self.read_only or not self.supports_writes:
            raise ReadOnlyError(f"{type(self).__name__} is read-only")
        cancel.check()  # (an operation whose caller gave up writes nothing more: see cancel)


listing_of_both_kinds(Store)


def _is_prototype(obj: Any) -> bool:
    """Whether ``obj`` is a buffer prototype (zarrkit's or zarr-python's own)."""
    return obj is not None and hasattr(obj, "buffer") and hasattr(obj, "nd_buffer")


def oversized(key: str, size: int | None, limit: int) -> ChunkDecodeError:
    """The error of :meth:`Store.get_upto` for a value larger than ``limit`` bytes (``size``:
    its size, None when only a read of ``limit + 1`` bytes told)."""
    held = f"{size} bytes, more than the {limit}" if size is not None else f"more than the {limit} bytes"
    return ChunkDecodeError(f"the stored object holds {held} its codecs write at most: not read", key)


def paths_overlap(a: Store, a_path: str, b: Store, b_path: str) -> bool:
    """Whether the node at ``a_path`` of ``a`` and the one at ``b_path`` of ``b`` share keys:
    the stores hold their values in one place (:meth:`Store.location`) and one path is the
    other or lies below it."""
    (holder_a, prefix_a), (holder_b, prefix_b) = a.location(), b.location()
    if holder_a != holder_b:
        return False
    full_a = "/".join(p for p in (prefix_a, a_path) if p)
    full_b = "/".join(p for p in (prefix_b, b_path) if p)
    return not full_a or not full_b or full_a == full_b or full_a.startswith(full_b + "/") \
        or full_b.startswith(full_a + "/")


def ensure_bytes_like(value: Any, key: str = "") -> bytes | memoryview:
    """Accept bytes, bytearray, memoryview or a contiguous numpy array as a value."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, Buffer):  # zarr-python 3's stored values
        value = value.as_numpy_array()
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


#: What a store argument may be; :func:`~zarrkit.storage.coerce_store` makes a :class:`Store`
#: of it.  A :class:`Store`; ``None`` (a new in-memory store); a local path or a URL (``str``,
#: ``os.PathLike``); a ``MutableMapping`` of keys to bytes (a ``dict``, an fsspec mapper, a
#: zarr-python 2 store); or an object of a library zarrkit imports only when given one (an
#: fsspec file system, an obstore store, a zarr-python 3 store, an Icechunk session's store),
#: which no type here can name: hence ``object``, so that code taking a ``StoreLike`` coerces
#: it before use instead of calling into it.
StoreLike: TypeAlias = Store | MutableMapping[str, Any] | str | os.PathLike[str] | None | object
