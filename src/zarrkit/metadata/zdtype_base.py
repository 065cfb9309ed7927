"""The base of zarr-python 3's data type objects (:class:`ZDType`) and what its classes share:
the byte-order names, the JSON shapes, and the ``HasLength``/``HasEndianness``/``HasItemSize``/
``HasObjectCodec`` traits.

A data type object is a *view* of one kind of :mod:`zarrkit.metadata.dtypes`: its parameters
(``endianness``, ``length``, ``unit``, ``fields``...) make a NumPy dtype, and every translation
of the type and of its scalars, to and from the JSON of either format, is the engine's
translation of that dtype.  The classes themselves are in :mod:`zarrkit.metadata.zdtypes`.

Examples
--------
>>> from zarrkit.metadata.zdtype_base import endianness_from_numpy_str
>>> endianness_from_numpy_str(">")
'big'
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, ClassVar, Final, Generic, Literal, TypeVar

import numpy as np

from ..errors import DataTypeValidationError
from .dtypes import (
    BYTES_DTYPE,
    DataTypeKind,
    is_bytes_dtype,
    kind_of,
    normalize_fill_value,
    parse_v2_dtype,
    parse_v2_fill_value,
    parse_v3_data_type,
    parse_v3_fill_value,
    string_dtype,
    v2_dtype_json,
    v2_fill_value_json,
    v3_data_type_json,
    v3_fill_value_json,
)

__all__ = [
    "ENDIANNESS_STR",
    "NUMPY_ENDIANNESS_STR",
    "OBJECT_CODEC_IDS",
    "SPECIAL_FLOAT_STRINGS",
    "DTypeJSON",
    "DTypeSpec_V2",
    "DTypeSpec_V3",
    "DTypeName_V2",
    "EndiannessStr",
    "NumpyEndiannessStr",
    "DataTypeMismatchError",
    "DataTypeValidationError",
    "HasEndianness",
    "HasItemSize",
    "HasLength",
    "HasObjectCodec",
    "TBaseDType",
    "TBaseScalar",
    "ZDType",
    "check_dtype_spec_v2",
    "check_dtype_spec_no_object_codec_v2",
    "check_dtype_spec_v3",
    "unpack_dtype_json",
    "endianness_from_numpy_str",
    "endianness_to_numpy_str",
    "get_endianness_from_numpy_dtype",
]

#: the byte orders of a data type's parameters
EndiannessStr = Literal["little", "big"]
ENDIANNESS_STR: Final = ("little", "big")
#: NumPy's byte-order characters (``dtype.byteorder``) of the types that have one
NumpyEndiannessStr = Literal[">", "<", "="]
NUMPY_ENDIANNESS_STR: Final = (">", "<", "=")
SPECIAL_FLOAT_STRINGS: Final = ("NaN", "Infinity", "-Infinity")
#: the ``object_codec_id`` values of a v2 object data type
OBJECT_CODEC_IDS: Final = ("vlen-utf8", "vlen-bytes", "vlen-array", "pickle", "json2", "msgpack2")

#: the JSON of a data type in either format
DTypeJSON = Any
#: a v2 data type: ``{"name": <typestr or field list>, "object_codec_id": <str or None>}``
DTypeSpec_V2 = Mapping[str, Any]
#: a v3 data type: a name, or ``{"name": ..., "configuration": {...}}``
DTypeSpec_V3 = str | Mapping[str, Any]
#: the ``name`` of a v2 data type: a NumPy type string or a list of fields
DTypeName_V2 = str | Sequence[Any]

TBaseDType = np.dtype
TBaseScalar = np.generic | str | bytes

DType = TypeVar("DType", bound=np.dtype)
Scalar = TypeVar("Scalar")

_NATIVE: EndiannessStr = "little" if sys.byteorder == "little" else "big"


def endianness_from_numpy_str(endianness: str) -> EndiannessStr:
    """``'little'`` or ``'big'`` for NumPy's ``'<'``, ``'>'`` or ``'='`` (this machine's order).

    Raises
    ------
    ValueError
        For any other character.
    """
    if endianness == "=":
        return _NATIVE
    if endianness == "<":
        return "little"
    if endianness == ">":
        return "big"
    raise ValueError(f"Invalid endianness: {endianness!r}. Expected one of {NUMPY_ENDIANNESS_STR}")


def endianness_to_numpy_str(endianness: str) -> NumpyEndiannessStr:
    """NumPy's ``'<'`` or ``'>'`` for ``'little'`` or ``'big'``.

    Raises
    ------
    ValueError
        For any other name.
    """
    if endianness == "little":
        return "<"
    if endianness == "big":
        return ">"
    raise ValueError(f"Invalid endianness: {endianness!r}. Expected one of {ENDIANNESS_STR}")


def get_endianness_from_numpy_dtype(dtype: np.dtype) -> EndiannessStr:
    """The byte order of ``dtype`` (this machine's for the types that have none)."""
    return _NATIVE if dtype.byteorder in "=|" else endianness_from_numpy_str(dtype.byteorder)


def check_dtype_spec_v2(data: object) -> bool:
    """Whether ``data`` has the shape of a v2 data type (``name`` and ``object_codec_id``)."""
    return (
        isinstance(data, Mapping)
        and set(data) == {"name", "object_codec_id"}
        and isinstance(data["name"], (str, list))
        and (data["object_codec_id"] is None or isinstance(data["object_codec_id"], str))
    )


def check_dtype_spec_no_object_codec_v2(data: object) -> bool:
    """Whether ``data`` has the shape of a v2 data type without an object codec (any but ``|O``)."""
    return check_dtype_spec_v2(data) and data["object_codec_id"] is None  # type: ignore[index]  # a mapping


def check_dtype_spec_v3(data: object) -> bool:
    """Whether ``data`` has the shape of a v3 data type (a name, or a name and a configuration)."""
    if isinstance(data, str):
        return True
    return (
        isinstance(data, Mapping)
        and set(data) <= {"name", "configuration"}
        and isinstance(data.get("name"), str)
        and isinstance(data.get("configuration", {}), Mapping)
    )


class DataTypeMismatchError(DataTypeValidationError, TypeError):
    """A NumPy dtype given to a data type class that does not represent it (``Int8`` asked for
    a ``float32``); a ``TypeError`` too, what zarrkit raised before."""


def unpack_dtype_json(data: Any) -> Any:
    """The data type name of a v2 data type (``{"name": ..., "object_codec_id": ...}``); any
    other JSON as it is."""
    if isinstance(data, Mapping) and set(data) == {"name", "object_codec_id"}:
        return data["name"]
    return data


# =============================================================================================
# traits


class HasLength:
    """A data type with a length (``FixedLengthUTF32``, ``NullTerminatedBytes``, ``RawBytes``)."""

    length: int


class HasEndianness:
    """A data type with a byte order, ``endianness='little'`` or ``'big'``."""

    endianness: EndiannessStr


class HasItemSize:
    """A data type whose scalars all have one size in bytes, :attr:`item_size`."""

    @property
    def item_size(self) -> int:
        """The size of a scalar in bytes."""
        native: np.dtype = self.to_native_dtype()  # type: ignore[attr-defined]  # a ZDType's
        return native.itemsize


class HasObjectCodec:
    """A data type stored in object arrays in v2, with a codec named by :attr:`object_codec_id`."""

    object_codec_id: ClassVar[str]


# =============================================================================================
# the base class


def _native_of_v2(data: Any) -> np.dtype:
    """The NumPy dtype of a v2 data type (its ``.zarray`` ``dtype`` alone is also taken)."""
    if isinstance(data, Mapping):
        if "name" not in data:
            raise DataTypeValidationError(f"data type {data!r} has no 'name'")
        name, codec = data["name"], data.get("object_codec_id")
    else:
        name, codec = data, None
    if isinstance(name, str) and name.startswith("="):
        raise DataTypeValidationError(f"data type {data!r}: a v2 byte order is '<', '>' or '|', not '='")
    dt = parse_v2_dtype(name)
    if isinstance(name, str) and name.startswith("|") and dt.byteorder != "|":
        raise DataTypeValidationError(f"data type {data!r}: {dt} has a byte order, '|' says it has none")
    if dt.kind == "O":
        if codec == "vlen-utf8":
            return string_dtype()
        if codec == "vlen-bytes":
            return BYTES_DTYPE
        raise DataTypeValidationError(
            f"data type {data!r}: an object data type needs object_codec_id 'vlen-utf8' or 'vlen-bytes'"
        )
    if codec is not None:
        raise DataTypeValidationError(f"data type {data!r}: object_codec_id is only for object data types")
    return dt


@dataclass(frozen=True)
class ZDType(Generic[DType, Scalar]):
    """A Zarr data type: its parameters, the NumPy dtype they make, and their JSON.

    Subclasses are frozen dataclasses of their parameters; each is a view of one kind of the
    engine's data-type table (``_kind``), and ``dtype_cls`` is the class of its NumPy dtypes.
    A NumPy dtype given in place of the parameters (``Float64(np.dtype('>f8'))``) is read as
    :meth:`from_native_dtype` reads it.

    Attributes
    ----------
    dtype_cls : type
        The NumPy dtype class of the data type (``numpy.dtypes.Int32DType``...).
    """

    dtype_cls: ClassVar[type]
    _zarr_v3_name: ClassVar[str]
    _kind: ClassVar[DataTypeKind]

    def __post_init__(self) -> None:
        own = fields(self)
        if own and isinstance(getattr(self, own[0].name), np.dtype):
            adopted = type(self).from_native_dtype(getattr(self, own[0].name))
            for f in own:
                object.__setattr__(self, f.name, getattr(adopted, f.name))
        self._validate()

    def _validate(self) -> None:
        """Check the parameters (``ValueError`` naming the one at fault)."""

    # -- NumPy ---------------------------------------------------------------------------------
    @classmethod
    def _matches(cls, dtype: np.dtype) -> bool:
        """Whether ``dtype`` is one of this class's NumPy dtypes."""
        return kind_of(dtype) is cls._kind

    @classmethod
    def _params(cls, dtype: np.dtype) -> dict[str, Any]:
        """The parameters of the data type of a matching NumPy dtype."""
        return {}

    @classmethod
    def _check_native_dtype(cls, dtype: object) -> bool:
        """Whether ``dtype`` is a NumPy dtype this class represents."""
        return isinstance(dtype, np.dtype) and cls._matches(dtype)

    @classmethod
    def from_native_dtype(cls, dtype: Any) -> Any:
        """The data type of a NumPy dtype.

        Raises
        ------
        DataTypeValidationError
            When ``dtype`` is not one of this class's dtypes.
        """
        dt = dtype
        if not isinstance(dt, np.dtype):
            try:
                dt = np.dtype(dtype)
            except (TypeError, ValueError, SyntaxError):
                raise DataTypeValidationError(f"dtype: {dtype!r} is not a NumPy data type") from None
        if not cls._check_native_dtype(dt):
            raise DataTypeMismatchError(
                f"Invalid data type: {dtype!r} is not a {cls.__name__} data type "
                f"(a NumPy {getattr(cls, 'dtype_cls', np.dtype).__name__})"
            )
        return cls(**cls._params(dt))

    def to_native_dtype(self) -> np.dtype:
        """The NumPy dtype of the data type."""
        raise NotImplementedError(f"{type(self).__name__} is not a concrete data type")

    @property
    def dtype(self) -> np.dtype:
        """The NumPy dtype of the data type: NumPy takes an object with a ``dtype`` wherever it
        takes a dtype, so ``np.dtype(Int32())`` and ``np.zeros(3, dtype=Int32())`` work."""
        return self.to_native_dtype()

    # -- JSON of the type ----------------------------------------------------------------------
    @classmethod
    def from_json(cls, data: DTypeJSON, *, zarr_format: int) -> Any:
        """The data type of its JSON in ``zarr_format`` (``{"name": "<i4", "object_codec_id":
        None}`` in v2, ``"int32"`` or ``{"name": ..., "configuration": ...}`` in v3).

        Raises
        ------
        DataTypeValidationError
            When ``data`` is not the JSON of a data type of this class.
        """
        if zarr_format == 2:
            return cls.from_native_dtype(_native_of_v2(data))
        if zarr_format == 3:
            if not check_dtype_spec_v3(data):
                raise DataTypeValidationError(f"data type {data!r} is not the JSON of a v3 data type")
            out = cls.from_native_dtype(parse_v3_data_type(data))
            if isinstance(data, Mapping) and data.get("configuration") and data.get("name") == out.to_json(3):
                raise DataTypeValidationError(f"data type {data!r}: {data['name']!r} takes no configuration")
            return out
        raise ValueError(f"zarr_format: expected 2 or 3, got {zarr_format!r}")

    def to_json(self, zarr_format: int) -> Any:
        """The JSON of the data type in ``zarr_format``."""
        native = self.to_native_dtype()
        if zarr_format == 3:
            return v3_data_type_json(native)
        if zarr_format == 2:
            codec = self.object_codec_id if isinstance(self, HasObjectCodec) else None
            return {"name": v2_dtype_json(native), "object_codec_id": codec}
        raise ValueError(f"zarr_format: expected 2 or 3, got {zarr_format!r}")

    # -- scalars -------------------------------------------------------------------------------
    def _check_scalar(self, data: object) -> bool:
        """Whether ``data`` converts to a scalar of the data type."""
        try:
            self.cast_scalar(data)
        except TypeError:
            return False
        return True

    def cast_scalar(self, data: object) -> Any:
        """``data`` as a scalar of the data type (as a fill value is converted).

        Raises
        ------
        TypeError
            When ``data`` does not convert.
        """
        try:
            return normalize_fill_value(data, self.to_native_dtype())
        except ValueError:
            raise TypeError(
                f"Cannot convert object {data!r} with type {type(data)} to a scalar compatible "
                f"with the data type {self}."
            ) from None

    def default_scalar(self) -> Any:
        """The scalar of an unwritten element when no fill value is given (zero, ``''``; NaT
        for times, as a v3 array made without a fill value has)."""
        native = self.to_native_dtype()
        if native.kind == "O":
            return b"" if is_bytes_dtype(native) else ""
        if native.kind in "mM":
            return np.array("NaT", dtype=native)[()]
        return np.zeros((), dtype=native)[()]

    def from_json_scalar(self, data: Any, *, zarr_format: int) -> Any:
        """A scalar of the data type from its JSON (a ``fill_value``) in ``zarr_format``."""
        native = self.to_native_dtype()
        if isinstance(data, tuple):  # the JSON array of a complex number or bytes, as Python writes it
            data = list(data)
        if zarr_format == 2:
            return parse_v2_fill_value(data, native)
        return parse_v3_fill_value(data, native)

    def to_json_scalar(self, data: object, *, zarr_format: int) -> Any:
        """The JSON of a scalar of the data type (a ``fill_value``) in ``zarr_format``."""
        native = self.to_native_dtype()
        value = self.cast_scalar(data)
        if zarr_format == 2:
            return v2_fill_value_json(value, native)
        return v3_fill_value_json(value, native)
