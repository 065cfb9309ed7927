"""zarr-python 3's ``zarr.buffer``: the buffers stores and codecs written for zarr-python 3
exchange values in.

``cpu`` holds the host-memory classes (:class:`~zarrkit.storage.buffer.Buffer`,
:class:`~zarrkit.storage.buffer.NDBuffer`, over NumPy arrays), the ones zarrkit's stores and
codecs use; ``gpu`` holds device-memory ones over CuPy arrays, when CuPy is installed
(:mod:`zarrkit.buffer.gpu`).  :func:`default_buffer_prototype` is host memory's.

Examples
--------
>>> from zarrkit.buffer import cpu, default_buffer_prototype
>>> default_buffer_prototype().buffer is cpu.Buffer
True
>>> cpu.Buffer.from_bytes(b"ab").to_bytes()
b'ab'
"""

from __future__ import annotations

from ..storage.buffer import Buffer, BufferPrototype, NDBuffer, default_buffer_prototype
from . import cpu, gpu

__all__ = ["Buffer", "BufferPrototype", "NDBuffer", "cpu", "default_buffer_prototype", "gpu"]
