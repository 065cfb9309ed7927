"""User attributes of an array or group, stored as JSON beside the node's metadata."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from typing import Any

from .._warnings import warn
from ..errors import ReadOnlyError
from ..metadata import io
from ..storage.base import Store
from ..storage.mapping import KVStore
from ..storage.optimistic import update
from .stored import current_documents

__all__ = ["Attributes"]


class Attributes(MutableMapping[str, Any]):
    """A dict-like view of the JSON attributes stored at one key; every change is written
    through at once.

    Arrays and groups make one for their ``attrs``, over their store; it can also be made
    directly, over a store or a plain ``dict``, as in zarr-python 2.

    Parameters
    ----------
    store : Store, MutableMapping, Array or Group
        The store holding the attributes (a mapping, such as a ``dict``, is used through
        :class:`~zarrkit.storage.KVStore`); or, as in zarr-python 3, an array or group
        (synchronous or asynchronous): its attributes, with its settings (the other
        arguments are then ignored).
    key : str, optional
        The key of the attributes document: a v2 ``.zattrs`` key (``'foo/.zattrs'``), or a v3
        node's ``zarr.json`` (its ``attributes`` member is read and written).
    read_only : bool, optional
        If True, changes raise :class:`~zarrkit.errors.ReadOnlyError`.
    cache : bool, optional
        If True (the default), the attributes are read once and kept; ``refresh()`` reads
        them again.  If False, every access reads the store.
    synchronizer : object, optional
        Per-key locks (:class:`~zarrkit.ThreadSynchronizer`,
        :class:`~zarrkit.ProcessSynchronizer`) taken around each read-modify-write.

    Examples
    --------
    >>> from zarrkit.attrs import Attributes
    >>> store = {}
    >>> a = Attributes(store, key='.zattrs')
    >>> a['units'] = 'm'
    >>> store['.zattrs']
    b'{\\n    "units": "m"\\n}'
    >>> dict(Attributes(store))
    {'units': 'm'}
    """

    store: Store
    key: str
    read_only: bool
    cache: bool
    synchronizer: Any

    def __init__(
        self,
        store: Store | Mapping[str, Any],
        key: str = ".zattrs",
        read_only: bool = False,
        cache: bool = True,
        synchronizer: Any = None,
    ):
        if not isinstance(key, str) or not key:
            raise TypeError(f"key must be a non-empty str, got {key!r}")
        node = _node_attributes(store)
        if node is not None:  # zarr-python 3's Attributes(array_or_group): the node's own
            store, key = node.store, node.key
            read_only, cache, synchronizer = node.read_only, node.cache, node.synchronizer
        if isinstance(store, Store):
            self.store = store
        elif isinstance(store, Mapping):
            self.store = KVStore(store)
        else:
            raise TypeError(f"store must be a zarrkit Store or a mapping, not {type(store).__name__}")
        self.key = key
        self.read_only = bool(read_only)
        self.cache = bool(cache)
        self.synchronizer = synchronizer
        self._cached: dict[str, Any] | None = None

    # -- storage ---------------------------------------------------------------------------------
    def _read(self, store: Any = None) -> dict[str, Any]:
        return io.read_attributes_at(self.store if store is None else store, self.key)

    def _load(self) -> dict[str, Any]:
        if self.cache and self._cached is not None:
            return self._cached
        d = self._read()
        if self.cache:
            self._cached = d
        return d

    def _lock(self) -> contextlib.AbstractContextManager[Any]:
        if self.synchronizer is None:
            return contextlib.nullcontext()
        lock: contextlib.AbstractContextManager[Any] = self.synchronizer[self.key]
        return lock

    def _write(self, d: dict[str, Any], store: Any = None) -> None:
        stored = io.write_attributes_at(self.store if store is None else store, self.key, d)
        self._cached = stored if self.cache else None

    def _check(self) -> None:
        if self.read_only:
            raise ReadOnlyError(f"attributes at {self.key!r} are read-only")

    def _modify(self, fn: Callable[[dict[str, Any]], None]) -> None:
        # Read the stored document afresh (another process may have changed it), change it,
        # write it back: the one read-modify-write, conditioned on the version read where the
        # store can (no other writer's update is lost), under the key's lock when there is
        # one.  Afresh means as stored now, not as a consolidated snapshot has it: a v3
        # document holds the array's shape too.
        self._check()
        key = self.key

        def change(raw: Any) -> bytes:
            d = dict(io.attributes_in(raw, key))
            fn(d)
            return io.with_attributes(raw, key, d)

        document = update(current_documents(self.store), key, change, lock=self._lock())
        # kept as they read back (a numpy scalar as the number it is stored as)
        self._cached = io.attributes_in(document, key) if self.cache else None

    # -- the API -----------------------------------------------------------------------------
    def asdict(self) -> dict[str, Any]:
        """A copy of the attributes as a plain dict."""
        return dict(self._load())

    def refresh(self) -> None:
        """Read the attributes from the store again (with ``cache=True``; without a cache every
        access reads them anyway)."""
        self._cached = None
        if self.cache:
            self._load()

    def put(self, d: dict[str, Any]) -> None:
        """Replace all attributes with ``d`` in one write."""
        self._check()
        new = _string_keys(d)
        with self._lock():
            self._write(new, current_documents(self.store))

    def update(self, *args: Any, **kwargs: Any) -> None:
        """Update several attributes in one write."""
        new = _string_keys(dict(*args, **kwargs))
        self._modify(lambda d: d.update(new))

    def __getitem__(self, key: str) -> Any:
        return self._load()[key]

    def __setitem__(self, key: str, value: Any) -> None:
        new = _string_keys({key: value})
        self._modify(lambda d: d.update(new))

    def __delitem__(self, key: str) -> None:
        def delete(d: dict[str, Any]) -> None:
            del d[key]

        self._modify(delete)

    def __iter__(self) -> Iterator[str]:
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())

    def __contains__(self, key: object) -> bool:
        return key in self._load()

    def __repr__(self) -> str:
        return f"Attributes({self._load()!r})"

    def _ipython_key_completions_(self) -> list[str]:
        return sorted(self._load())


def _string_keys(d: dict[Any, Any]) -> dict[str, Any]:
    """JSON object keys are strings: other keys are stored as their JSON spelling (``1`` as
    ``'1'``), with a warning, as zarr-python 2 did."""
    if all(isinstance(k, str) for k in d):
        return d
    out = {}
    for k, v in d.items():
        if not isinstance(k, str):
            spelled = _json_key(k)
            warn(
                f"only attribute keys of type 'string' will be allowed in the future; "
                f"key {k!r} is stored as {spelled!r}",
                DeprecationWarning,
            )
            k = spelled
        out[k] = v
    return out


def _json_key(key: Any) -> str:
    try:
        return str(next(iter(json.loads(json.dumps({key: None})))))
    except TypeError:
        raise TypeError(f"attribute keys must be str (or int, float, bool, None), got {key!r}") from None


def _node_attributes(obj: Any) -> Attributes | None:
    """The attributes of an array or group (or of the node an asynchronous one wraps), or
    None when ``obj`` is not a node."""
    for holder in (obj, getattr(obj, "_array", None), getattr(obj, "_group", None)):
        attrs = getattr(holder, "_attrs", None) if holder is not None else None
        if isinstance(attrs, Attributes):
            return attrs
    return None
