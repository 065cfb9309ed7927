"""zarr-python 3's store protocol on every zarrkit store, over the one synchronous contract.

zarr-python 3's ``zarr.abc.store.Store`` is made of coroutines: ``await store.get(key,
prototype, byte_range)``, ``await store.set(key, buffer)``, ``async for key in
store.list_prefix(p)``...  zarrkit's stores are synchronous (``store.get(key)`` returns bytes,
``store[key]`` as in zarr-python 2), and its engine calls them from its thread pool.  The two
contracts share method names, so the clash is settled once, here, for every store -- no
facade class and no second implementation of any store:

* **A call in zarr-python 3's form has zarr-python 3's meaning.**  ``get`` given a
  ``prototype`` (zarr-python 3's required argument) returns a coroutine whose result is a
  ``Buffer`` (or None); the read runs when awaited, on a worker thread for stores whose
  requests are slow (:attr:`~zarrkit.storage.base.Store.high_latency`), inline otherwise.
  ``get(key)`` without one is the synchronous read it always was.
* **Calls that only act return a finished call.**  ``set`` given a ``Buffer`` (zarr-python
  3's value) and ``delete`` run at once, as they always did, and return :data:`FINISHED`, an
  awaitable of None: ``store.delete(k)`` and ``await store.delete(k)`` both delete once.
* **Listings are iterables of both kinds.**  ``list_prefix`` returns :class:`Keys` (an
  iterator that ``async for`` also walks) and ``list_dir`` a :class:`KeyList` (a list that
  ``async for`` walks); every store's own ``list_prefix`` / ``list_dir`` is wrapped so when its
  class is defined.
* **Questions answered with a value of a built-in type keep it.**  ``exists`` returns a bool
  and ``getsize`` an int; zarr-python 3 code awaits them through :func:`zarrkit.api.asynchronous`
  or ``asyncio.to_thread``.
* zarr-python 3's names that zarrkit's contract lacks are coroutines here: ``open``,
  ``_open``, ``is_empty``, ``list``, ``delete_dir``, ``getsize_prefix``,
  ``get_partial_values``, ``set_if_not_exists``; ``clear`` (every store's, synchronous)
  returns :data:`FINISHED` too.

**A class written for zarr-python 3** (``class MyStore(zarr.abc.store.Store)`` with ``async
def get``...) defines the shared names as coroutines: :func:`speaks_zarr3` tells such a class
(a store deriving from zarrkit's base class, or from zarr-python's own), and
:func:`~zarrkit.storage.coerce_store` runs it through
:class:`~zarrkit.storage.zarr_store.ZarrStoreAdapter`, so it is accepted wherever zarrkit takes
a store.

Examples
--------
>>> import asyncio
>>> from zarrkit.storage import MemoryStore
>>> from zarrkit.storage.buffer import default_buffer_prototype
>>> store = MemoryStore()
>>> store.set("a/b", b"1")            # zarrkit's call, synchronous
>>> async def main():
...     await store.set("a/c", default_buffer_prototype().buffer.from_bytes(b"2"))
...     value = await store.get("a/c", default_buffer_prototype())
...     return value.to_bytes(), [k async for k in store.list_prefix("a/")]
>>> asyncio.run(main())
(b'2', ['a/b', 'a/c'])
>>> store.get("a/c")
b'2'
"""

from __future__ import annotations

import asyncio
import builtins
import dataclasses
import functools
import inspect
import threading
from collections.abc import AsyncIterator, Callable, Generator, Iterable, Iterator
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Self, TypeVar

from .buffer import default_buffer_prototype
from .keys import ByteRange, validate_prefix

__all__ = ["FINISHED", "BackgroundLoop", "ByteRequest", "Finished", "KeyList", "Keys", "OffsetByteRequest",
           "RangeByteRequest", "SuffixByteRequest", "Zarr3StoreMethods", "as_byte_range",
           "as_prefix", "speaks_zarr3"]

T = TypeVar("T")
#: what a finished call gives when awaited
V_co = TypeVar("V_co", covariant=True)

#: the names both contracts have: a class defining one of them as a coroutine function (or an
#: asynchronous generator) is written for zarr-python 3
SHARED_NAMES = ("get", "set", "exists", "delete", "list_prefix", "list_dir", "getsize")


@dataclasses.dataclass(frozen=True, slots=True)
class RangeByteRequest:
    """zarr-python 3's request for bytes ``start`` to ``end`` (exclusive) of a value."""

    start: int
    end: int


@dataclasses.dataclass(frozen=True, slots=True)
class OffsetByteRequest:
    """zarr-python 3's request for the bytes of a value from ``offset`` on."""

    offset: int


@dataclasses.dataclass(frozen=True, slots=True)
class SuffixByteRequest:
    """zarr-python 3's request for the last ``suffix`` bytes of a value."""

    suffix: int


#: zarr-python 3's ``ByteRequest``
ByteRequest = RangeByteRequest | OffsetByteRequest | SuffixByteRequest


def as_byte_range(request: Any) -> ByteRange | None:
    """zarrkit's :class:`~zarrkit.storage.keys.ByteRange` for a zarr-python 3 byte request
    (zarrkit's classes above or zarr-python's own, told by their fields), a ``ByteRange`` as
    it is, None as None.

    Raises
    ------
    TypeError
        For anything else.
    ValueError
        For a range that ends before it starts, or a negative offset or suffix.
    """
    if request is None or isinstance(request, ByteRange):
        return request
    if hasattr(request, "start") and hasattr(request, "end"):
        start, end = int(request.start), int(request.end)
        if start < 0 or end < start:
            raise ValueError(f"byte_range: expected 0 <= start <= end, got {start}, {end}")
        return ByteRange(start, end - start)
    if hasattr(request, "offset"):
        if int(request.offset) < 0:
            raise ValueError(f"byte_range: expected an offset >= 0, got {request.offset}")
        return ByteRange(int(request.offset))
    if hasattr(request, "suffix"):
        if int(request.suffix) < 0:
            raise ValueError(f"byte_range: expected a suffix >= 0, got {request.suffix}")
        return ByteRange(-int(request.suffix)) if request.suffix else ByteRange(0, 0)
    raise TypeError(f"byte_range: expected a ByteRange or a zarr-3 byte request, got {type(request).__name__}")


class Finished(Generic[V_co]):
    """A store call already made, as an awaitable of its result (``await store.set(...)``)."""

    __slots__ = ("value",)

    #: the call's result
    value: V_co

    def __init__(self, value: V_co) -> None:
        self.value = value

    def __await__(self) -> Generator[Any, None, V_co]:
        return self.value
        yield  # (a generator: ``await`` takes it)

    def __repr__(self) -> str:
        return f"Finished({self.value!r})"


#: what ``set`` and ``delete`` return
FINISHED: Finished[None] = Finished(None)


class Keys(Iterator[str]):
    """Keys of a listing: an iterator that ``async for`` walks as well."""

    __slots__ = ("_keys",)

    def __init__(self, keys: Iterable[str]) -> None:
        self._keys = iter(keys)

    def __iter__(self) -> Keys:
        return self

    def __next__(self) -> str:
        return next(self._keys)

    def __aiter__(self) -> Keys:
        return self

    async def __anext__(self) -> str:
        try:
            return next(self._keys)
        except StopIteration:
            raise StopAsyncIteration from None


class KeyList(list[str]):
    """Names of a listing: a list that ``async for`` walks as well."""

    def __aiter__(self) -> Keys:
        return Keys(self)


def speaks_zarr3(cls: Any) -> bool:
    """Whether ``cls`` (a class, or a store: its methods patched with coroutines, or a mock
    of one) defines one of the names both contracts share as a coroutine: a store written for
    zarr-python 3, whose ``get`` must be awaited."""
    for name in SHARED_NAMES:
        try:
            fn = getattr(cls, name, None)
        except Exception:  # noqa: BLE001, S112 - a property that fails is no coroutine
            continue
        if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn) or _marked_coroutine(fn):
            return True
    return False


def _marked_coroutine(fn: Any) -> bool:
    """Whether ``fn`` carries asyncio's mark of a coroutine function (``unittest.mock``'s
    ``AsyncMock`` does, without being a function)."""
    return getattr(fn, "_is_coroutine", None) is getattr(asyncio.coroutines, "_is_coroutine", object())


def listing_of_both_kinds(cls: type) -> None:
    """Wrap the ``list_prefix``, ``list_dir`` and ``clear`` that ``cls`` defines so that their
    results are :class:`Keys`, :class:`KeyList` and :data:`FINISHED` (called when a store class
    is defined)."""
    for name, kind in (("list_prefix", Keys), ("list_dir", KeyList), ("clear", Finished)):
        fn = cls.__dict__.get(name)
        if fn is None or getattr(fn, "_both_kinds", False) or not callable(fn) \
                or inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
            continue
        setattr(cls, name, _wrapped(fn, kind))


def _wrapped(fn: Callable[..., Any], kind: type) -> Callable[..., Any]:
    @functools.wraps(fn)
    def listing(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = fn(self, *args, **kwargs)
        if kind is Finished:
            return FINISHED
        return result if isinstance(result, kind) else kind(result)

    listing._both_kinds = True  # type: ignore[attr-defined]
    return listing


class BackgroundLoop:
    """The event loop zarrkit runs coroutines on from synchronous code (``sync()``, stores
    written for zarr-python 3): one per process, in a daemon thread, started when first
    needed."""

    lock: ClassVar[threading.Lock] = threading.Lock()
    loop: asyncio.AbstractEventLoop | None = None
    thread: threading.Thread | None = None

    @classmethod
    def get(cls) -> asyncio.AbstractEventLoop:
        with cls.lock:
            if cls.loop is None or cls.loop.is_closed():
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="zarrkit-sync", daemon=True)
                thread.start()
                cls.loop, cls.thread = loop, thread
            return cls.loop


async def answer(read: Callable[[], T], slow: bool) -> T:
    """``read()`` when awaited: on a worker thread when ``slow`` (the loop goes on meanwhile),
    else inline (a memory or local read takes less than a trip to a thread)."""
    if slow:
        return await asyncio.to_thread(read)
    return read()


def as_prefix(prefix: str) -> str:
    """``prefix`` as the start of the keys below it: ``''`` (everything) or ending in ``/``.

    Parameters
    ----------
    prefix : str
        A path in the store (``''``: the root).

    Returns
    -------
    str
    """
    if not isinstance(prefix, str):
        raise TypeError(f"prefix must be a str, got {type(prefix).__name__}")
    prefix = prefix.strip("/")
    if prefix:
        validate_prefix(prefix + "/")
        return prefix + "/"
    return ""


class Zarr3StoreMethods:
    """zarr-python 3's ``open``, ``is_empty``, ``list``, ``delete_dir``... of
    :class:`~zarrkit.storage.base.Store`."""

    if TYPE_CHECKING:  # the contract the methods are served by, which Store defines
        supports_deletes: bool
        supports_listing: bool
        def list_prefix(self, prefix: str) -> Iterator[str]: ...
        def list_prefix_sizes(self, prefix: str) -> Iterator[tuple[str, int]]: ...
        def delete_prefix(self, prefix: str) -> None: ...
        def _check_writable(self) -> None: ...
        def _checked(self, key: str) -> str: ...
        def _get(self, key: str, byte_range: ByteRange | None) -> bytes | None: ...
        def exists(self, key: str) -> bool: ...
        def set(self, key: str, value: Any) -> Finished[None] | None:
            """Store ``value`` at ``key`` (see :meth:`~zarrkit.storage.base.Store.set`)."""
        def delete(self, key: str) -> Finished[None]:
            """Remove ``key`` (see :meth:`~zarrkit.storage.base.Store.delete`)."""
        high_latency: bool

    #: zarr-python 3's flag of a store that is open.  zarrkit's stores are open once
    #: constructed; a store whose :meth:`close` releases what it reads from (a zip file) is
    #: not open after it.
    _is_open: bool = True
    #: zarr-python 3: whether ``consolidate_metadata`` may write into the store
    supports_consolidated_metadata: bool = True
    #: zarr-python 3: partial writes are not used by the format any more
    supports_partial_writes: bool = False

    def __init__(self, *, read_only: bool = False) -> None:
        # zarr-python 3's ``Store.__init__``, which its subclasses call
        self._read_only = bool(read_only)
        if read_only:
            self.read_only = True

    @classmethod
    async def open(cls, *args: Any, **kwargs: Any) -> Self:
        """Make a store and open it (zarr-python 3's ``await Store.open(...)``).

        Parameters
        ----------
        *args, **kwargs
            The arguments of the store's constructor.

        Returns
        -------
        Store
            The store, ready for use.

        Examples
        --------
        >>> import asyncio
        >>> from zarrkit.storage import MemoryStore
        >>> store = asyncio.run(MemoryStore.open(read_only=True))
        >>> store.read_only, store._is_open
        (True, True)
        """
        store = cls(*args, **kwargs)
        store._on_open()
        return store

    def _on_open(self) -> None:
        """What :meth:`open` does beyond constructing the store (a local store makes its
        directory); nothing by default."""

    async def _open(self) -> None:
        """Open the store again after :meth:`close` (zarr-python 3's ``Store._open``).

        Raises
        ------
        ValueError
            The store is open already.
        """
        if self._is_open:
            raise ValueError("store is already open")
        self._reopen()
        self._is_open = True

    def _reopen(self) -> None:
        """Take up again what :meth:`close` released; stores that release nothing need nothing."""

    async def _ensure_open(self) -> None:
        """Open the store if it is not open (zarr-python 3's ``Store._ensure_open``)."""
        if not self._is_open:
            await self._open()

    async def is_empty(self, prefix: str = "") -> bool:
        """Whether no key lies below ``prefix`` (zarr-python 3).

        Parameters
        ----------
        prefix : str, default ''
            A path in the store (``''``: the whole store).

        Returns
        -------
        bool
        """
        return next(iter(self.list_prefix(as_prefix(prefix))), None) is None

    async def delete_dir(self, prefix: str) -> None:
        """Remove every key below ``prefix`` (zarr-python 3's name of
        :meth:`~zarrkit.storage.base.Store.delete_prefix` for a directory).

        Parameters
        ----------
        prefix : str
            A path in the store (``''``: everything).
        """
        self.delete_prefix(as_prefix(prefix))

    async def getsize_prefix(self, prefix: str) -> int:
        """Total size in bytes of the values below ``prefix`` (zarr-python 3).

        Parameters
        ----------
        prefix : str
            A path in the store (``''``: everything).

        Returns
        -------
        int
        """
        return sum(size for _, size in self.list_prefix_sizes(as_prefix(prefix)))

    async def list(self) -> AsyncIterator[str]:
        """Every key of the store, as zarr-python 3's ``async for key in store.list()``.

        Yields
        ------
        str
        """
        for key in self.list_prefix(""):
            yield key

    async def get_partial_values(self, prototype: Any, key_ranges: Iterable[tuple[str, Any]]) -> builtins.list[Any]:
        """Several values or parts of values (zarr-python 3): ``key_ranges`` pairs a key with
        a byte request (None: the whole value).

        Parameters
        ----------
        prototype : BufferPrototype
            Makes the buffers returned.
        key_ranges : iterable of (str, byte request or None)

        Returns
        -------
        list of Buffer or None
            One per pair, None for a missing key.
        """
        pairs = [(self._checked(key), as_byte_range(request)) for key, request in key_ranges]

        def read() -> builtins.list[Any]:
            values = [self._get(key, byte_range) for key, byte_range in pairs]
            return [None if v is None else prototype.buffer.from_bytes(v) for v in values]

        values: builtins.list[Any] = await answer(read, self.high_latency)
        return values

    async def set_if_not_exists(self, key: str, value: Any) -> None:
        """Store ``value`` at ``key`` unless a value is there (zarr-python 3).

        Parameters
        ----------
        key : str
        value : Buffer or bytes-like
        """
        if not self.exists(key):
            self.set(key, value)

    def get_sync(self, key: str, *, prototype: Any = None, byte_range: Any = None) -> Any:
        """zarr-python 3's synchronous read (of ``LocalStore`` and ``MemoryStore``): a
        ``Buffer`` (None when missing).

        Parameters
        ----------
        key : str
        prototype : BufferPrototype, optional
            Makes the buffer (host memory's by default).
        byte_range : byte request, optional
        """
        value = self._get(self._checked(key), as_byte_range(byte_range))
        make = (prototype or default_buffer_prototype()).buffer.from_bytes
        return None if value is None else make(value)

    def set_sync(self, key: str, value: Any) -> None:
        """zarr-python 3's synchronous write: :meth:`set`.

        Parameters
        ----------
        key : str
            The key.
        value : bytes-like or Buffer
            The value to store.
        """
        self.set(key, value)

    def delete_sync(self, key: str) -> None:
        """zarr-python 3's synchronous deletion: ``delete``.

        Parameters
        ----------
        key : str
            The key (a missing key is not an error).
        """
        self.delete(key)
