"""zarr-python 3's ``zarr.dtype``: data types as objects (``Int8``, ``Float64``, ``Struct``...)
and :func:`parse_dtype`.

Examples
--------
>>> import numpy as np
>>> from zarrkit.dtype import Int8
>>> int8 = Int8.from_native_dtype(np.dtype('int8'))
>>> int8.to_json(zarr_format=2)
{'name': '|i1', 'object_codec_id': None}
>>> int8.to_json_scalar(42, zarr_format=3)
42
"""

from .metadata.zdtypes import (
    Bool,
    Complex64,
    Complex128,
    DateTime64,
    FixedLengthUTF32,
    Float16,
    Float32,
    Float64,
    Int8,
    Int16,
    Int32,
    Int64,
    MLDataType,
    NullTerminatedBytes,
    RawBytes,
    Struct,
    TimeDelta64,
    UInt8,
    UInt16,
    UInt32,
    UInt64,
    VariableLengthBytes,
    VariableLengthUTF8,
    ZDType,
    data_type_of,
    parse_dtype,
)

#: zarr-python 3's other name of :func:`parse_dtype`
parse_data_type = parse_dtype

__all__ = [
    "Bool", "Complex64", "Complex128", "DateTime64", "FixedLengthUTF32", "Float16", "Float32", "Float64",
    "Int8", "Int16", "Int32", "Int64", "MLDataType", "NullTerminatedBytes", "RawBytes", "Struct", "TimeDelta64",
    "UInt8", "UInt16", "UInt32", "UInt64", "VariableLengthBytes", "VariableLengthUTF8", "ZDType",
    "data_type_of", "parse_dtype", "parse_data_type",
]
