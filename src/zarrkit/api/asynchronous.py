"""zarr-python 3's ``zarr.api.asynchronous``: the creation and opening functions, awaited.

Each function runs its synchronous twin (``zarrkit.open_group``, ``zarrkit.create_array``...)
in a worker thread of the running event loop and gives back what it gives, arrays as
:class:`~zarrkit.api.async_nodes.AsyncArray` and groups as
:class:`~zarrkit.api.async_nodes.AsyncGroup`; its errors propagate unchanged.  They take the
same arguments as their twins (an ``AsyncArray`` or ``AsyncGroup`` argument stands for the node
it wraps).  There is one engine: this module only moves the calls off the event loop.

Examples
--------
>>> import asyncio, numpy as np
>>> import zarrkit.api.asynchronous as async_api
>>> async def main():
...     arr = await async_api.create_array(store={}, shape=(4, 4), chunks=(2, 2), dtype='i4')
...     await arr.setitem(slice(None), np.arange(16).reshape(4, 4))
...     rows = await asyncio.gather(*(arr.getitem(i) for i in range(4)))
...     return [int(r.sum()) for r in rows]
>>> asyncio.run(main())
[6, 22, 38, 54]
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator
from typing import Any

from . import convenience as _convenience
from . import copying as _copying
from . import creation as _creation
from . import creation_like as _like
from . import hierarchy as _hierarchy
from . import opening as _opening
from .async_nodes import AsyncArray, AsyncGroup, run, run_array, run_group, run_node, wrap

__all__ = [
    "AsyncArray", "AsyncGroup",
    "array", "consolidate_metadata", "copy", "copy_all", "copy_store", "create", "create_array",
    "create_group", "create_hierarchy", "empty", "empty_like", "from_array", "full", "full_like", "group",
    "load", "ones", "ones_like", "open", "open_array", "open_consolidated", "open_group", "open_like",
    "save", "save_array", "save_group", "tree", "zeros", "zeros_like",
]


async def array(*args: Any, **kwargs: Any) -> AsyncArray:
    """Create an array filled with ``data``.

    The arguments of :func:`zarrkit.api.creation.array`, which runs in a worker thread.

    Returns
    -------
    AsyncArray
    """
    return await run_array(_creation.array, *args, **kwargs)


async def consolidate_metadata(*args: Any, **kwargs: Any) -> AsyncGroup:
    """Gather the metadata of a hierarchy into one document; returns its root group.

    The arguments of :func:`zarrkit.api.opening.consolidate_metadata`, which runs in a worker thread.

    Returns
    -------
    AsyncGroup
    """
    return await run_group(_opening.consolidate_metadata, *args, **kwargs)


async def copy(*args: Any, **kwargs: Any) -> tuple[int, int, int]:
    """Copy an array or group (``source``) into a group (``dest``).

    The arguments of :func:`zarrkit.api.copying.copy`, which runs in a worker thread.

    Returns
    -------
    tuple
    """
    return await run(_copying.copy, *args, **kwargs)


async def copy_all(*args: Any, **kwargs: Any) -> tuple[int, int, int]:
    """Copy every member of a group into another.

    The arguments of :func:`zarrkit.api.copying.copy_all`, which runs in a worker thread.

    Returns
    -------
    tuple
    """
    return await run(_copying.copy_all, *args, **kwargs)


async def copy_store(*args: Any, **kwargs: Any) -> tuple[int, int, int]:
    """Copy the keys of one store into another.

    The arguments of :func:`zarrkit.api.copying.copy_store`, which runs in a worker thread.

    Returns
    -------
    tuple
    """
    return await run(_copying.copy_store, *args, **kwargs)


async def create(*args: Any, **kwargs: Any) -> AsyncArray:
    """Create an array (zarr-python 2's keywords and 3's).

    The arguments of :func:`zarrkit.api.creation.create`, which runs in a worker thread.

    Returns
    -------
    AsyncArray
    """
    return await run_array(_creation.create, *args, **kwargs)


async def create_array(*args: Any, **kwargs: Any) -> AsyncArray:
    """Create an array (zarr-python 3's function: ``shape``, ``dtype``, ``chunks``, ``shards``, ``data``...).

    The arguments of :func:`zarrkit.api.creation.create_array`, which runs in a worker thread.

    Returns
    -------
    AsyncArray
    """
    return await run_array(_creation.create_array, *args, **kwargs)


async def create_group(*args: Any, **kwargs: Any) -> AsyncGroup:
    """Create a group.

    The arguments of :func:`zarrkit.api.hierarchy.create_group`, which runs in a worker thread.

    Returns
    -------
    AsyncGroup
    """
    return await run_group(_hierarchy.create_group, *args, **kwargs)


async def empty(*args: Any, **kwargs: Any) -> AsyncArray:
    """Create an array without initialising its data.

    The arguments of :func:`zarrkit.api.creation.empty`, which runs in a worker thread.

    Returns
    -------
    AsyncArray
    """
    return await run_array(_creation.empty, *args, **kwargs)


async def empty_like(*args: Any, **kwargs: Any) -> AsyncArray:
    """Create an empty array like ``a``.

    The arguments of :func:`zarrkit.api.creation_like.empty_like`, which runs in a worker thread.

    Returns
    -------
    AsyncArray
    """
    return await run_array(_like.empty_like, *args, **kwargs)


async def from_array(*args: Any, **kwargs: Any) -> AsyncArray:
    """Create an array from another one (``data=``), keeping its chunks and codecs unless given.

    The arguments of :func:`zarrkit.api.hierarchy.from_array`, which runs in a worker thread.

    Returns
    -------
    AsyncArray
    """
    return await run_array(_hierarchy.from_array, *args, **kwargs)


async def full(*args: Any, **kwargs: Any) -> AsyncArray:
    """Create an array whose unwritten elements are ``fill_value``.

    The arguments of :func:`zarrkit.api.creation.full`, which runs in a worker thread.

    Returns
    -------
    AsyncArray
    """
    return await run_array(_creation.full, *args, **kwargs)


async def full_like(*args: Any, **kwargs: Any) -> AsyncArray:
    """Create an array like ``a`` filled with ``fill_value``.

    The arguments of :func:`zarrkit.api.creation_like.full_like`, which runs in a worker thread.

    Returns
    -------
    AsyncArray
    """
    return await run_array(_like.full_like, *args, **kwargs)


async def group(*args: Any, **kwargs: Any) -> AsyncGroup:
    """Create a group, or open the one there unless ``overwrite``.

    The arguments of :func:`zarrkit.api.opening.group`, which runs in a worker thread.

    Returns
    -------
    AsyncGroup
    """
    return await run_group(_opening.group, *args, **kwargs)


async def load(*args: Any, **kwargs: Any) -> Any:
    """Load the array (a NumPy array) or the arrays of a group (a mapping) of a store.

    The arguments of :func:`zarrkit.api.convenience.load`, which runs in a worker thread.

    Returns
    -------
    object
    """
    return await run(_convenience.load, *args, **kwargs)


async def ones(*args: Any, **kwargs: Any) -> AsyncArray:
    """Create an array of ones.

    The arguments of :func:`zarrkit.api.creation.ones`, which runs in a worker thread.

    Returns
    -------
    AsyncArray
    """
    return await run_array(_creation.ones, *args, **kwargs)


async def ones_like(*args: Any, **kwargs: Any) -> AsyncArray:
    """Create an array of ones like ``a``.

    The arguments of :func:`zarrkit.api.creation_like.ones_like`, which runs in a worker thread.

    Returns
    -------
    AsyncArray
    """
    return await run_array(_like.ones_like, *args, **kwargs)


async def open(*args: Any, **kwargs: Any) -> AsyncArray | AsyncGroup:
    """Open the array or group there (creating one, depending on ``mode``).

    The arguments of :func:`zarrkit.api.opening.open`, which runs in a worker thread.

    Returns
    -------
    AsyncArray or AsyncGroup
    """
    return await run_node(_opening.open, *args, **kwargs)


async def open_array(*args: Any, **kwargs: Any) -> AsyncArray:
    """Open an array (creating it, depending on ``mode``).

    The arguments of :func:`zarrkit.api.opening.open_array`, which runs in a worker thread.

    Returns
    -------
    AsyncArray
    """
    return await run_array(_opening.open_array, *args, **kwargs)


async def open_group(*args: Any, **kwargs: Any) -> AsyncGroup:
    """Open a group (creating it, depending on ``mode``).

    The arguments of :func:`zarrkit.api.opening.open_group`, which runs in a worker thread.

    Returns
    -------
    AsyncGroup
    """
    return await run_group(_opening.open_group, *args, **kwargs)


async def open_like(*args: Any, **kwargs: Any) -> AsyncArray:
    """Open an array at ``path`` like ``a``.

    The arguments of :func:`zarrkit.api.opening.open_like`, which runs in a worker thread.

    Returns
    -------
    AsyncArray
    """
    return await run_array(_opening.open_like, *args, **kwargs)


async def save(*args: Any, **kwargs: Any) -> None:
    """Save NumPy arrays: one as an array, several (or named ones) as a group.

    The arguments of :func:`zarrkit.api.convenience.save`, which runs in a worker thread.
    """
    await run(_convenience.save, *args, **kwargs)


async def save_array(*args: Any, **kwargs: Any) -> None:
    """Save a NumPy array as an array.

    The arguments of :func:`zarrkit.api.convenience.save_array`, which runs in a worker thread.
    """
    await run(_convenience.save_array, *args, **kwargs)


async def save_group(*args: Any, **kwargs: Any) -> None:
    """Save NumPy arrays as the arrays of a group.

    The arguments of :func:`zarrkit.api.convenience.save_group`, which runs in a worker thread.
    """
    await run(_convenience.save_group, *args, **kwargs)


async def zeros(*args: Any, **kwargs: Any) -> AsyncArray:
    """Create an array of zeros.

    The arguments of :func:`zarrkit.api.creation.zeros`, which runs in a worker thread.

    Returns
    -------
    AsyncArray
    """
    return await run_array(_creation.zeros, *args, **kwargs)


async def zeros_like(*args: Any, **kwargs: Any) -> AsyncArray:
    """Create an array of zeros like ``a``.

    The arguments of :func:`zarrkit.api.creation_like.zeros_like`, which runs in a worker thread.

    Returns
    -------
    AsyncArray
    """
    return await run_array(_like.zeros_like, *args, **kwargs)


async def open_consolidated(*args: Any, use_consolidated: bool = True, **kwargs: Any) -> AsyncGroup:
    """Open a group through its consolidated metadata.

    The arguments of :func:`zarrkit.api.opening.open_consolidated`, which runs in a worker thread.

    Returns
    -------
    AsyncGroup

    Raises
    ------
    TypeError
        ``use_consolidated`` is not True (zarr-python 3's rule).
    """
    if use_consolidated is not True:
        raise TypeError(f"use_consolidated must be True for open_consolidated, got {use_consolidated!r}")
    return await run_group(_opening.open_consolidated, *args, **kwargs)


async def create_hierarchy(**kwargs: Any) -> AsyncIterator[tuple[str, AsyncGroup]]:
    """Create the groups of ``nodes`` and the groups above them; yields ``(path, group)``,
    parents first.

    The arguments of :func:`zarrkit.api.hierarchy.create_hierarchy` (``store=``, ``nodes=``,
    ``overwrite=``), which runs in a worker thread.
    """
    for path, node in await run(_created, **kwargs):
        yield path, wrap(node)


def _created(**kwargs: Any) -> list[tuple[str, Any]]:
    return list(_hierarchy.create_hierarchy(**kwargs))


async def tree(grp: AsyncGroup | Any, expand: bool | None = None, level: int | None = None) -> Any:
    """A printable tree of the hierarchy below ``grp``.

    The arguments of :func:`zarrkit.api.convenience.tree`, which runs in a worker thread.
    """
    return await run(_convenience.tree, grp, expand=bool(expand), level=level)


# each function takes its twin's parameters: introspection (help(), ``inspect.signature``,
# an editor's hints) shows them, with what the function gives back
for _function, _twin in (
    (array, _creation.array), (consolidate_metadata, _opening.consolidate_metadata), (copy, _copying.copy),
    (copy_all, _copying.copy_all), (copy_store, _copying.copy_store), (create, _creation.create),
    (create_array, _creation.create_array), (create_group, _hierarchy.create_group), (empty, _creation.empty),
    (empty_like, _like.empty_like), (from_array, _hierarchy.from_array), (full, _creation.full),
    (full_like, _like.full_like), (group, _opening.group), (load, _convenience.load), (ones, _creation.ones),
    (ones_like, _like.ones_like), (open, _opening.open), (open_array, _opening.open_array),
    (open_group, _opening.open_group), (open_like, _opening.open_like), (save, _convenience.save),
    (save_array, _convenience.save_array), (save_group, _convenience.save_group), (zeros, _creation.zeros),
    (zeros_like, _like.zeros_like),
):
    _function.__signature__ = inspect.signature(_twin).replace(  # type: ignore[attr-defined]
        return_annotation=inspect.signature(_function).return_annotation
    )
del _function, _twin
