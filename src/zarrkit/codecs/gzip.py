"""The ``gzip`` codec: gzip (RFC 1952) compression by numcodecs."""

from __future__ import annotations

from typing import Any

import numcodecs

from ..errors import MetadataError
from .bounded import NumcodecsBytes

__all__ = ["GzipCodec"]


class GzipCodec(NumcodecsBytes):
    """gzip (RFC 1952) compression."""

    name = "gzip"

    def __init__(self, level: int = 5):
        if not isinstance(level, int) or isinstance(level, bool) or not 0 <= level <= 9:
            raise MetadataError(f"gzip: level must be an int in 0..9, got {level!r}")
        self.level = level
        self.codec: Any = numcodecs.GZip(level)

    def configuration(self) -> dict[str, Any]:
        return {"level": self.level}
