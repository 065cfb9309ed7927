"""zarr-python 3's ``zarr.abc.buffer``: the buffer types (:mod:`zarrkit.buffer`)."""

from __future__ import annotations

from ..storage.buffer import Buffer, BufferPrototype, NDArrayLike, NDBuffer

__all__ = ["Buffer", "BufferPrototype", "NDArrayLike", "NDBuffer"]
