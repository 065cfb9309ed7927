"""zarr-python 3's names for what a group does, beside zarr-python 2's.

``create_array``, ``require_array``, ``get_array``, ``get_group``, ``array_values``,
``group_values``, ``nmembers``, ``update_attributes`` and ``metadata`` are spelled as
zarr-python 3 spells them, and do what the zarr-2 methods of :class:`~zarrkit.core.group.Group`
do: nothing here is a second implementation.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import ContainsGroupError
from ..metadata.consolidated import ConsolidatedStore
from . import creation

__all__ = ["Zarr3GroupMethods", "GroupMetadata"]


@dataclass(frozen=True)
class GroupMetadata:
    """A group's metadata as zarr-python 3 shows it: ``zarr_format``, ``attributes``,
    ``node_type``."""

    zarr_format: int = 3
    attributes: dict[str, Any] = field(default_factory=dict)
    node_type: str = "group"
    #: the consolidated metadata the group was opened with (None: read from the store)
    consolidated_metadata: Any = None

    def to_dict(self) -> dict[str, Any]:
        return {"zarr_format": self.zarr_format, "node_type": self.node_type,
                "attributes": dict(self.attributes)}


class Zarr3GroupMethods:
    """Mixed into :class:`~zarrkit.core.group.Group`."""

    def create_array(self, name: str, *, shape: Any = None, dtype: Any = None, data: Any = None,
                     overwrite: bool = False, **kwargs: Any) -> Any:
        """Create an array in this group with zarr-python 3's arguments.

        Parameters
        ----------
        name : str
            Name (or path below this group) of the new array.
        shape : tuple of ints, optional
            Shape of the array (or ``data=``'s).
        dtype : str or dtype, optional
            Data type (default: ``data``'s, else float64).
        data : array-like, optional
            Gives the shape, the data type and the contents.
        overwrite : bool, optional
            Replace whatever is at ``name``.
        **kwargs
            Forwarded to :func:`zarrkit.create_array` (``chunks='auto'``, ``shards``,
            ``compressors``, ``serializer``, ``filters``, ``fill_value``, ``attributes``,
            ``dimension_names``...; ``zarr_format`` defaults to the group's).

        Returns
        -------
        Array
            The new array.

        Raises
        ------
        TypeError
            Neither ``shape`` nor ``data``.
        ValueError
            ``shape`` contradicts ``data``.

        Examples
        --------
        >>> import zarrkit
        >>> g = zarrkit.create_group(store={})
        >>> a = g.create_array('a', shape=(4, 4), chunks=(2, 2), dtype='i4')
        >>> a.shape, a.chunks, g.nmembers()
        ((4, 4), (2, 2), 1)
        """
        if data is not None:
            data = data if hasattr(data, "shape") and hasattr(data, "dtype") else np.asanyarray(data)
            if shape is not None and tuple(np.atleast_1d(shape)) != tuple(data.shape):
                raise ValueError(f"shape={shape!r} contradicts data of shape {data.shape}")
            shape = data.shape
            dtype = data.dtype if dtype is None else dtype
        if shape is None:
            raise TypeError("create_array() needs shape= (or data=)")
        self._check_writable()  # type: ignore[attr-defined]
        with self._hierarchy_lock():  # type: ignore[attr-defined]
            path = self._item_path(name)  # type: ignore[attr-defined]
            self._check_not_above(path, name)  # type: ignore[attr-defined]
            creation.create_array(
                self._store_arg, name=path, shape=shape,  # type: ignore[attr-defined]
                dtype="float64" if dtype is None else dtype, overwrite=overwrite,
                zarr_format=kwargs.pop("zarr_format", self.zarr_format), **kwargs,  # type: ignore[attr-defined]
            )
            array = self._open_member(path, "array")  # type: ignore[attr-defined]
        if data is not None:
            array[...] = data
        return array

    def require_array(self, name: str, *, shape: Any, dtype: Any = None, exact: bool = False,
                      **kwargs: Any) -> Any:
        """The array ``name``, created (as :meth:`create_array`) when missing.

        Parameters
        ----------
        name : str
            Name (or path below this group) of the array.
        shape : tuple of ints
            The shape an existing array must have, or the new one's.
        dtype : str or dtype, optional
            The data type (an existing array's is checked as by :meth:`require_dataset`).
        exact : bool, optional
            Require an existing array's data type to be ``dtype`` exactly.
        **kwargs
            Forwarded to :meth:`create_array` when the array is created.

        Returns
        -------
        Array

        Raises
        ------
        TypeError
            An existing array's shape or data type differs.
        """
        if name not in self:  # type: ignore[operator]
            return self.create_array(name, shape=shape, dtype=dtype, **kwargs)
        return self.require_dataset(name, shape=shape, dtype=dtype, exact=exact)  # type: ignore[attr-defined]

    def get_array(self, name: str) -> Any:
        """The member array ``name``.

        Parameters
        ----------
        name : str
            Name (or path below this group) of the array.

        Returns
        -------
        Array

        Raises
        ------
        KeyError
            Nothing is at ``name``.
        ContainsGroupError
            A group is at ``name``.
        """
        member = self[name]  # type: ignore[index]
        if not hasattr(member, "dtype"):
            raise ContainsGroupError(f"A group exists in store {self._store} at path {member.path!r}.", member.path)  # type: ignore[attr-defined]
        return member

    def get_group(self, name: str) -> Any:
        """The member group ``name``.

        Parameters
        ----------
        name : str
            Name (or path below this group) of the group.

        Returns
        -------
        Group

        Raises
        ------
        KeyError
            Nothing is at ``name``.
        TypeError
            An array is at ``name``.
        """
        member = self[name]  # type: ignore[index]
        if hasattr(member, "dtype"):
            raise TypeError(f"{name!r} is an array, not a group")
        return member

    def array_values(self) -> Iterator[Any]:
        """The member arrays, in name order."""
        return (member for _, member in self.arrays())  # type: ignore[attr-defined]

    def group_values(self) -> Iterator[Any]:
        """The member groups, in name order."""
        return (member for _, member in self.groups())  # type: ignore[attr-defined]

    def nmembers(self, max_depth: int | None = 0) -> int:
        """How many members the group has.

        Parameters
        ----------
        max_depth : int or None, optional
            0: direct members; more: down to that many levels below; None: all descendants.

        Returns
        -------
        int

        Examples
        --------
        >>> import zarrkit
        >>> g = zarrkit.group()
        >>> _ = g.create_group('a').zeros('b', shape=2)
        >>> g.nmembers(), g.nmembers(max_depth=None)
        (1, 2)
        """
        total = 0
        for _, member in self.members():  # type: ignore[attr-defined]
            total += 1
            if not hasattr(member, "dtype") and (max_depth is None or max_depth > 0):
                total += member.nmembers(None if max_depth is None else max_depth - 1)
        return total

    def update_attributes(self, new_attributes: dict[str, Any]) -> Any:
        """Merge ``new_attributes`` into the group's attributes (one write).

        Parameters
        ----------
        new_attributes : dict
            Attributes to add or replace.

        Returns
        -------
        Group
            This group.
        """
        self.attrs.update(new_attributes)  # type: ignore[attr-defined]
        return self

    @property
    def metadata(self) -> GroupMetadata:
        """The group's metadata: ``zarr_format``, ``attributes``, ``node_type``."""
        store = self._store  # type: ignore[attr-defined]
        consolidated = dict(store.docs) if isinstance(store, ConsolidatedStore) else None
        return GroupMetadata(self.zarr_format, self.attrs.asdict(), consolidated_metadata=consolidated)  # type: ignore[attr-defined]
