"""zarr-python 3's ``zarr.abc``: the base classes other packages derive their stores
(:mod:`zarrkit.abc.store`) and codecs (:mod:`zarrkit.abc.codec`) from, and the buffer types
(:mod:`zarrkit.abc.buffer`)."""

from __future__ import annotations

from . import buffer, codec, store

__all__ = ["buffer", "codec", "store"]
