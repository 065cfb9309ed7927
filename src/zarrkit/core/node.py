"""What an array and a group both are: a path in a store, with attributes.

:class:`Node` holds the stores (:class:`~zarrkit.storage.coerce.NodeStores`: made once of
whatever the user passed: a ``dict``, a path, a URL, a mapping), the path and the names
derived from it, the attributes, the read-only flag and the synchronizer, and says when two
handles are the same node.  :class:`~zarrkit.core.array.Array` and
:class:`~zarrkit.core.group.Group` add what reading their metadata gives.
"""

from __future__ import annotations

import contextlib
from typing import Any, ClassVar, Self

from ..errors import ReadOnlyError
from ..metadata import io
from ..metadata.normalize import normalize_path
from ..storage.base import Store
from ..storage.coerce import NodeStores
from ..storage.store_path import PrefixStore, StorePath
from ..storage.zarr2_names import zarr2_name
from .attributes import Attributes

__all__ = ["Node"]


class Node:
    """The part of an array or a group that does not depend on which it is.

    Subclasses read their metadata, then call :meth:`_attach_attributes` with the format.
    """

    #: the word errors use for the node ('array', 'group')
    _kind: ClassVar[str] = "node"

    _attrs: Attributes
    _zarr_format: int

    def _init_node(self, stores: NodeStores, path: str | None, read_only: bool, synchronizer: Any,
                   cache_attrs: bool) -> None:
        self._stores = stores
        self._store: Store = stores.store
        self._store_arg = stores.store_arg
        self._chunk_store: Store = stores.chunk_store
        self._chunk_store_arg = stores.chunk_store_arg
        self._path = normalize_path(path)
        self._read_only = bool(read_only) or self._store.read_only
        self._synchronizer = synchronizer
        self._cache_attrs = cache_attrs

    def _attach_attributes(self, zarr_format: int) -> None:
        self._zarr_format = zarr_format
        self._attrs = Attributes(
            self._store,
            io.attributes_key(self._path, zarr_format),
            read_only=self._read_only,
            cache=self._cache_attrs,
            synchronizer=self._synchronizer,
        )

    def _know_attributes(self, attributes: dict[str, Any]) -> None:
        """Take ``attributes`` as the node's without reading them: a node whose document is not
        stored (``from_dict``) has them only from the document it was given."""
        self._attrs.cache = True
        self._attrs._cached = dict(attributes)

    # -- properties ----------------------------------------------------------------------------
    @property
    def store(self) -> Any:
        """The store holding the node's metadata (as given by the user)."""
        return self._store_arg

    @property
    def chunk_store(self) -> Any:
        """The store holding the chunks (the metadata store unless a separate one was given)."""
        return self.store if self._chunk_store_arg is None else self._chunk_store_arg

    @property
    def path(self) -> str:
        """Path of the node within the store ('' for the root)."""
        return self._path

    @property
    def store_path(self) -> StorePath:
        """The store holding the node's metadata and the node's path in it (zarr-python 3's
        ``store_path``); a node opened below a :class:`~zarrkit.storage.StorePath` with a path
        is given in the store under it, with both paths joined."""
        store, path = self._store, self._path
        while isinstance(store, PrefixStore):
            path = f"{store.prefix}/{path}" if path else store.prefix
            store = store.inner
        return StorePath(store, path)

    @property
    def read_only(self) -> bool:
        """True if modification operations are not permitted."""
        return self._read_only

    @property
    def synchronizer(self) -> Any:
        """The object synchronizing write access (None: none)."""
        return self._synchronizer

    @property
    def zarr_format(self) -> int:
        """The Zarr format of the node: 2 or 3."""
        return self._zarr_format

    #: zarr-python 2's private name of :attr:`zarr_format`, which code written for it reads.
    _version = zarr_format

    @property
    def attrs(self) -> Attributes:
        """User-defined attributes (a MutableMapping stored as JSON)."""
        return self._attrs

    def update_attributes(self, new_attributes: dict[str, Any]) -> Self:
        """Merge ``new_attributes`` into the attributes (one write; zarr-python 3's method).

        Parameters
        ----------
        new_attributes : dict
            Attributes to add or replace.

        Returns
        -------
        Array or Group
            This node.
        """
        self._attrs.update(new_attributes)
        return self

    # -- zarr-python 3's asynchronous twin -------------------------------------------------------
    def _asynchronous(self, facade: str) -> Any:
        """This node wrapped in zarr-python 3's asynchronous facade (``facade``: ``AsyncArray``
        or ``AsyncGroup`` of :mod:`zarrkit.api.asynchronous`, which lies above the engine and is
        found by name)."""
        return zarr2_name("api.asynchronous", facade)(self)

    # -- changes -------------------------------------------------------------------------------
    def _check_writable(self) -> None:
        if self._read_only:
            raise ReadOnlyError(self._read_only_message())

    def _read_only_message(self) -> str:
        raise NotImplementedError

    def _lock(self, key: str) -> contextlib.AbstractContextManager[Any]:
        """The synchronizer's lock on ``key`` (a no-op without a synchronizer)."""
        return contextlib.nullcontext() if self._synchronizer is None else self._synchronizer[key]

    # -- identity and pickling -----------------------------------------------------------------
    def _comparable(self) -> bool:
        """Whether the node compares equal to another handle of the same place (a view does
        not)."""
        return True

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Node)
            and other._kind == self._kind
            and self._store == other._store
            and self._path == other._path
            and self._read_only == other._read_only
            and self._comparable()
            and other._comparable()
        )

    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    def _node_state(self) -> dict[str, Any]:
        """What a pickle of the node holds in common (what the user gave, not the stores
        made of it)."""
        return {
            "store": self._store_arg,
            "path": self._path,
            "read_only": self._read_only,
            "chunk_store": self._chunk_store_arg,
            "synchronizer": self._synchronizer,
            "cache_attrs": self._cache_attrs,
        }
