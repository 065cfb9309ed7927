"""zarr-python 3's names of the JSON forms data types take in metadata (``zarr.dtype``'s
``DateTime64JSON_V3``, ``DTypeSpec_V2``...): dictionaries, typed for annotations.

In Zarr v3 a parametrized data type is ``{"name": ..., "configuration": {...}}``; in Zarr v2
it is ``{"name": <the NumPy type string or fields>, "object_codec_id": ...}`` (the form
:func:`~zarrkit.metadata.zdtype_base.check_dtype_spec_v2` checks).
"""

from __future__ import annotations

from typing import Any, TypedDict

__all__ = ["DTypeSpec_V2", "NamedConfigJSON", "DateTime64JSON_V2", "FixedLengthUTF32JSON_V2", "NullterminatedBytesJSON_V2", "RawBytesJSON_V2", "StructuredJSON_V2", "TimeDelta64JSON_V2", "VariableLengthBytesJSON_V2", "VariableLengthUTF8JSON_V2", "DateTime64JSON_V3", "FixedLengthUTF32JSON_V3", "NullTerminatedBytesJSON_V3", "RawBytesJSON_V3", "StructJSON_V3", "StructuredJSON_V3", "TimeDelta64JSON_V3"]


class DTypeSpec_V2(TypedDict):
    """A data type in ``.zarray``: its NumPy form and the id of its object codec (or None)."""

    name: Any
    object_codec_id: str | None


class NamedConfigJSON(TypedDict):
    """A parametrized data type in ``zarr.json``."""

    name: str
    configuration: dict[str, Any]



class DateTime64JSON_V3(NamedConfigJSON):
    """The ``zarr.json`` form of ``DateTime64``."""


class FixedLengthUTF32JSON_V3(NamedConfigJSON):
    """The ``zarr.json`` form of ``FixedLengthUTF32``."""


class NullTerminatedBytesJSON_V3(NamedConfigJSON):
    """The ``zarr.json`` form of ``NullTerminatedBytes``."""


class RawBytesJSON_V3(NamedConfigJSON):
    """The ``zarr.json`` form of ``RawBytes``."""


class StructJSON_V3(NamedConfigJSON):
    """The ``zarr.json`` form of ``Struct``."""


class StructuredJSON_V3(NamedConfigJSON):
    """The ``zarr.json`` form of ``Structured``."""


class TimeDelta64JSON_V3(NamedConfigJSON):
    """The ``zarr.json`` form of ``TimeDelta64``."""


class DateTime64JSON_V2(DTypeSpec_V2):
    """The ``.zarray`` form of ``DateTime64``."""


class FixedLengthUTF32JSON_V2(DTypeSpec_V2):
    """The ``.zarray`` form of ``FixedLengthUTF32``."""


class NullterminatedBytesJSON_V2(DTypeSpec_V2):
    """The ``.zarray`` form of ``NullterminatedBytes``."""


class RawBytesJSON_V2(DTypeSpec_V2):
    """The ``.zarray`` form of ``RawBytes``."""


class StructuredJSON_V2(DTypeSpec_V2):
    """The ``.zarray`` form of ``Structured``."""


class TimeDelta64JSON_V2(DTypeSpec_V2):
    """The ``.zarray`` form of ``TimeDelta64``."""


class VariableLengthBytesJSON_V2(DTypeSpec_V2):
    """The ``.zarray`` form of ``VariableLengthBytes``."""


class VariableLengthUTF8JSON_V2(DTypeSpec_V2):
    """The ``.zarray`` form of ``VariableLengthUTF8``."""
