"""zarr-python 3's data type objects (``zarrkit.dtype``): classes built from their parameters,
their NumPy dtypes and JSON, their scalars, the registry and ``parse_dtype``."""

from __future__ import annotations

import importlib
import sys
import typing

import numpy as np
import pytest

import zarrkit
from zarrkit.compat import ZARR3_PATHS
from zarrkit.errors import DataTypeValidationError
from zarrkit.metadata.dtypes import BYTES_DTYPE, string_dtype
from zarrkit.metadata.zdtype_base import (
    ENDIANNESS_STR,
    NUMPY_ENDIANNESS_STR,
    HasItemSize,
    HasLength,
    ZDType,
    check_dtype_spec_v3,
    endianness_from_numpy_str,
    endianness_to_numpy_str,
    unpack_dtype_json,
)
from zarrkit.metadata.zdtypes import (
    AnyDType,
    Bool,
    Complex64,
    DataTypeRegistry,
    DateTime64,
    FixedLengthUTF32,
    Float64,
    Int8,
    Int16,
    Int32,
    NullTerminatedBytes,
    RawBytes,
    Struct,
    Structured,
    TimeDelta64,
    UInt64,
    VariableLengthBytes,
    VariableLengthUTF8,
    data_type_registry,
    get_data_type_from_native_dtype,
    parse_dtype,
)

# -- classes from their parameters -----------------------------------------------------------

NATIVE = [
    (Bool(), np.dtype("?")),
    (Int8(), np.dtype("i1")),
    (Int32(), np.dtype("<i4")),
    (Int32(endianness="big"), np.dtype(">i4")),
    (UInt64(endianness="big"), np.dtype(">u8")),
    (Complex64(), np.dtype("<c8")),
    (FixedLengthUTF32(length=3), np.dtype("<U3")),
    (FixedLengthUTF32(length=2, endianness="big"), np.dtype(">U2")),
    (NullTerminatedBytes(length=4), np.dtype("S4")),
    (RawBytes(length=2), np.dtype("V2")),
    (DateTime64(unit="s", scale_factor=10), np.dtype("<M8[10s]")),
    (TimeDelta64(unit="ms"), np.dtype("<m8[ms]")),
    (DateTime64(), np.dtype("<M8")),
    (Struct(fields=[("a", Float64()), ("b", Int8())]), np.dtype([("a", "<f8"), ("b", "i1")])),
]


@pytest.mark.parametrize(("zdtype", "native"), NATIVE, ids=str)
def test_parameters_make_the_native_dtype_and_back(zdtype, native):
    assert zdtype.to_native_dtype() == native
    assert type(zdtype).from_native_dtype(native) == zdtype
    assert get_data_type_from_native_dtype(native) == zdtype
    assert isinstance(zdtype, ZDType)


def test_instances_compare_hash_and_show_their_parameters():
    assert Int32() == Int32(endianness="little") != Int32(endianness="big")
    assert Int32() != Int16() and Int8() != UInt64()
    assert len({Int32(), Int32(), FixedLengthUTF32(length=2), FixedLengthUTF32(length=2)}) == 2
    assert repr(FixedLengthUTF32(length=3)) == "FixedLengthUTF32(length=3, endianness='little')"
    assert repr(DateTime64(unit="s", scale_factor=10)) == "DateTime64(endianness='little', scale_factor=10, unit='s')"
    assert Struct(fields=[("a", Int8())]).fields == (("a", Int8()),)  # a tuple: hashable
    assert hash(Struct(fields=[("a", Int8())])) == hash(Struct(fields=(("a", Int8()),)))
    # the class of annotations: ZDType[Any, Any]
    assert ZDType[np.dtype, int] is not None


def test_numpy_takes_a_data_type_object_as_a_dtype():
    assert np.dtype(Int32(endianness="big")) == np.dtype(">i4")
    assert np.zeros(2, dtype=FixedLengthUTF32(length=3)).dtype == np.dtype("<U3")
    g = zarrkit.group()
    a = g.create_array("a", shape=(4,), dtype=Int32())
    assert g.require_array("a", shape=(4,), dtype=Int32(), exact=True) == a


def test_a_native_dtype_given_for_the_parameters_is_read():
    assert Float64(np.dtype(">f8")) == Float64(endianness="big")
    assert Struct(np.dtype([("x", "i1")])) == Struct(fields=(("x", Int8()),))


@pytest.mark.parametrize(("build", "error", "match"), [
    (lambda: FixedLengthUTF32(length=0), ValueError, r"length must be >= 1, got 0"),
    (lambda: NullTerminatedBytes(length=-1), ValueError, r"length must be >= 1"),
    (lambda: RawBytes(length="3"), TypeError, r"length must be an int"),
    (lambda: Int32(endianness="middle"), ValueError, r"Invalid endianness: 'middle'"),
    (lambda: DateTime64(unit="fortnight"), ValueError, r"unit must be one of .*got 'fortnight'"),
    (lambda: TimeDelta64(scale_factor=0), ValueError, r"scale_factor must be > 0, got 0"),
    (lambda: DateTime64(scale_factor=2**31), ValueError, r"scale_factor must be < 2147483648"),
    (lambda: Struct(fields=[]), ValueError, r"at least one field"),
    (lambda: Struct(fields=[("a", Int8()), ("a", Int8())]), ValueError, r"not unique"),
    (lambda: Struct(fields=[("a", "i1")]), TypeError, r"pair of a name and a data type"),
])
def test_bad_parameters_are_named(build, error, match):
    with pytest.raises(error, match=match):
        build()


def test_microseconds_are_spelled_as_numpy_spells_them():
    assert DateTime64(unit="μs") == DateTime64(unit="us")
    assert DateTime64(unit="μs").to_native_dtype() == np.dtype("<M8[us]")


def test_a_dtype_of_another_class_is_refused():
    with pytest.raises(DataTypeValidationError, match="not a Int8 data type"):
        Int8.from_native_dtype(np.dtype("f4"))
    with pytest.raises(TypeError):
        Int32.from_native_dtype(np.dtype("i8"))
    assert not NullTerminatedBytes._check_native_dtype(np.dtype("S0"))
    assert not Int8._check_native_dtype("int8")  # a name is not a dtype
    assert Int8._check_native_dtype(np.dtype("int8"))


def test_traits_and_item_size():
    assert isinstance(FixedLengthUTF32(length=4), HasLength)
    assert FixedLengthUTF32(length=4).item_size == 16
    assert Struct(fields=[("a", Float64()), ("b", Int8())]).item_size == 9
    assert not isinstance(VariableLengthUTF8(), HasItemSize)
    assert VariableLengthUTF8.object_codec_id == "vlen-utf8"


# -- JSON of the type --------------------------------------------------------------------------


@pytest.mark.parametrize(("zdtype", "v2", "v3"), [
    (Int8(), {"name": "|i1", "object_codec_id": None}, "int8"),
    (Int16(), {"name": "<i2", "object_codec_id": None}, "int16"),
    (Bool(), {"name": "|b1", "object_codec_id": None}, "bool"),
    (FixedLengthUTF32(length=2), {"name": "<U2", "object_codec_id": None},
     {"name": "fixed_length_utf32", "configuration": {"length_bytes": 8}}),
    (NullTerminatedBytes(length=2), {"name": "|S2", "object_codec_id": None},
     {"name": "null_terminated_bytes", "configuration": {"length_bytes": 2}}),
    (DateTime64(unit="s", scale_factor=10), {"name": "<M8[10s]", "object_codec_id": None},
     {"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 10}}),
    (VariableLengthUTF8(), {"name": "|O", "object_codec_id": "vlen-utf8"}, "string"),
    (VariableLengthBytes(), {"name": "|O", "object_codec_id": "vlen-bytes"}, "bytes"),
    (Struct(fields=[("a", Int8())]), {"name": [["a", "|i1"]], "object_codec_id": None},
     {"name": "struct", "configuration": {"fields": [{"name": "a", "data_type": "int8"}]}}),
])
def test_json_in_both_formats(zdtype, v2, v3):
    assert zdtype.to_json(zarr_format=2) == v2
    assert zdtype.to_json(zarr_format=3) == v3
    assert type(zdtype).from_json(v2, zarr_format=2) == zdtype
    assert type(zdtype).from_json(v3, zarr_format=3) == zdtype
    assert data_type_registry.match_json(v2, zarr_format=2) == zdtype
    assert data_type_registry.match_json(v3, zarr_format=3) == zdtype


def test_the_byte_order_is_in_v2_json_only():
    big = Int16(endianness="big")
    assert big.to_json(zarr_format=2) == {"name": ">i2", "object_codec_id": None}
    assert Int16.from_json(big.to_json(zarr_format=2), zarr_format=2) == big
    assert big.to_json(zarr_format=3) == "int16"
    assert Int16.from_json("int16", zarr_format=3) == Int16()  # the codecs hold the byte order


def test_raw_bytes_read_both_v3_names():
    assert RawBytes(length=2).to_json(zarr_format=3) == "r16"  # the core spec's name
    assert RawBytes.from_json("r16", zarr_format=3) == RawBytes(length=2)
    assert RawBytes.from_json({"name": "raw_bytes", "configuration": {"length_bytes": 2}}, zarr_format=3) == RawBytes(
        length=2
    )
    assert VariableLengthBytes.from_json("variable_length_bytes", zarr_format=3) == VariableLengthBytes()


@pytest.mark.parametrize(("cls", "data", "zarr_format"), [
    (Int16, {"name": "|i2", "object_codec_id": None}, 2),  # a byte order is needed
    (NullTerminatedBytes, {"name": "|S", "object_codec_id": None}, 2),  # no length
    (VariableLengthUTF8, {"name": "|O", "object_codec_id": None}, 2),  # no object codec
    (VariableLengthUTF8, {"name": "|O", "object_codec_id": "vlen-bytes"}, 2),
    (FixedLengthUTF32, {"name": "<U3", "object_codec_id": "vlen-utf8"}, 2),
    (Int8, {"name": "int8", "configuration": {"endianness": "little"}}, 3),
    (Int8, "int16", 3),
    (Int8, {"name": 8}, 3),
    (Int8, "nope", 3),
    (Int16, {"name": "=i2", "object_codec_id": None}, 2),  # '=' is NumPy's, not a v2 byte order
])
def test_json_of_another_or_no_data_type_is_refused(cls, data, zarr_format):
    with pytest.raises(DataTypeValidationError):
        cls.from_json(data, zarr_format=zarr_format)


def test_zarr_format_is_checked():
    with pytest.raises(ValueError, match="zarr_format: expected 2 or 3, got 4"):
        Int8().to_json(zarr_format=4)
    with pytest.raises(ValueError, match="zarr_format"):
        Int8.from_json("int8", zarr_format=1)


# -- scalars -----------------------------------------------------------------------------------


def test_default_scalars():
    assert Int32().default_scalar() == np.int32(0) and isinstance(Int32().default_scalar(), np.int32)
    assert Bool().default_scalar() is np.False_
    assert FixedLengthUTF32(length=2).default_scalar() == np.str_("")
    assert NullTerminatedBytes(length=2).default_scalar() == np.bytes_(b"")
    assert VariableLengthUTF8().default_scalar() == ""
    assert VariableLengthBytes().default_scalar() == b""
    # times: NaT, the fill value of a v3 array created without one (scale factors kept)
    for time in (DateTime64(unit="s"), DateTime64(unit="s", scale_factor=10), TimeDelta64(unit="ms", scale_factor=5)):
        scalar = time.default_scalar()
        assert np.isnat(scalar) and np.datetime_data(scalar.dtype) == np.datetime_data(time.to_native_dtype())
        assert zarrkit.create_array({}, shape=(1,), dtype=time).fill_value.dtype == scalar.dtype


def test_cast_scalar_converts_or_says_why_not():
    assert Int16().cast_scalar(3.0) == np.int16(3) and isinstance(Int16().cast_scalar(3.0), np.int16)
    assert VariableLengthBytes().cast_scalar("ab") == b"ab"
    assert VariableLengthBytes().cast_scalar(np.bytes_(b"xy")) == b"xy"
    assert Struct(fields=[("a", Int8()), ("b", Float64())]).cast_scalar([1, 2.5]) == np.array(
        (1, 2.5), dtype=[("a", "i1"), ("b", "<f8")]
    )[()]
    with pytest.raises(TypeError, match=r"Cannot convert object 300 with type <class 'int'> to a scalar "
                                        r"compatible with the data type Int8\(\)\."):
        Int8().cast_scalar(300)
    with pytest.raises(TypeError, match="Cannot convert object 1.5"):
        VariableLengthBytes().cast_scalar(1.5)
    assert Int8()._check_scalar(3) and not Int8()._check_scalar("x")


@pytest.mark.parametrize(("zdtype", "value", "v2", "v3"), [
    (Int32(), 7, 7, 7),
    (Float64(), float("nan"), "NaN", "NaN"),
    (Float64(), float("-inf"), "-Infinity", "-Infinity"),
    (Complex64(), 1 + 2j, [1, 2], [1.0, 2.0]),
    (NullTerminatedBytes(length=2), b"ab", "YWI=", "YWI="),
    (FixedLengthUTF32(length=2), "hi", "hi", "hi"),
    (DateTime64(unit="s"), np.datetime64(5, "s"), 5, 5),
    (Bool(), True, True, True),
])
def test_json_scalars_in_both_formats(zdtype, value, v2, v3):
    assert zdtype.to_json_scalar(value, zarr_format=2) == v2
    assert zdtype.to_json_scalar(value, zarr_format=3) == v3
    for fmt, data in ((2, v2), (3, v3)):
        back = zdtype.from_json_scalar(data, zarr_format=fmt)
        assert zdtype.to_json_scalar(back, zarr_format=fmt) == data


def test_a_complex_scalar_may_be_a_tuple():
    assert Complex64().from_json_scalar((1.0, "NaN"), zarr_format=3).imag != 0  # NaN


# -- the registry and parse_dtype --------------------------------------------------------------


def test_the_registry_names_each_class_by_its_v3_name():
    contents = data_type_registry.contents
    assert contents["int32"] is Int32 and contents["string"] is VariableLengthUTF8
    assert contents["variable_length_bytes"] is VariableLengthBytes and contents["struct"] is Struct
    assert data_type_registry.get("numpy.datetime64") is DateTime64
    assert len(contents) == 22 and len(set(contents.values())) == 22
    with pytest.raises(KeyError):
        data_type_registry.get("int3")


def test_match_dtype_refuses_what_several_or_no_classes_take():
    assert data_type_registry.match_dtype(BYTES_DTYPE) == VariableLengthBytes()
    assert data_type_registry.match_dtype(string_dtype()) == VariableLengthUTF8()
    with pytest.raises(ValueError, match="resolution from object failed.*matches several data types"):
        data_type_registry.match_dtype(np.dtype(object))
    with pytest.raises(ValueError, match="No Zarr data type found that matches dtype"):
        data_type_registry.match_dtype(np.dtype([("a", "i1", (2,))]))
    with pytest.raises(ValueError, match="na_object"):
        data_type_registry.match_dtype(np.dtypes.StringDType(na_object=None))
    with pytest.raises(ValueError, match="resolution from object failed"):
        parse_dtype("|O", zarr_format=2)
    with pytest.raises(ValueError, match="No Zarr data type found"):
        data_type_registry.match_json("int3", zarr_format=3)


def test_a_registry_of_ones_own():
    registry = DataTypeRegistry()
    registry.register("int8", Int8)
    assert registry.match_dtype(np.dtype("i1")) == Int8()
    with pytest.raises(ValueError):
        registry.match_dtype(np.dtype("i2"))
    registry.unregister("int8")
    with pytest.raises(KeyError, match="not found in registry"):
        registry.unregister("int8")


@pytest.mark.parametrize(("spec", "zarr_format", "expected"), [
    (Int8(), 3, Int8()),
    ("int32", 3, Int32()),
    ("int32", 2, Int32()),
    ("<f8", 2, Float64()),
    (">i2", 3, Int16(endianness="big")),
    ({"name": "<U2", "object_codec_id": None}, 2, FixedLengthUTF32(length=2)),
    ({"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 10}}, 3,
     DateTime64(unit="s", scale_factor=10)),
    (str, 3, VariableLengthUTF8()),
    ("str", 2, VariableLengthUTF8()),
    ("string", 3, VariableLengthUTF8()),
    (bytes, 3, VariableLengthBytes()),
    (np.dtype("S3"), 2, NullTerminatedBytes(length=3)),
    ([("a", "i1")], 3, Struct(fields=[("a", Int8())])),
])
def test_parse_dtype_takes_every_form(spec, zarr_format, expected):
    assert parse_dtype(spec, zarr_format=zarr_format) == expected


def test_parse_dtype_of_nothing_known_raises():
    with pytest.raises(TypeError):
        parse_dtype("nope", zarr_format=3)


@pytest.mark.parametrize(("data", "v2", "no_codec", "v3"), [
    ({"name": "|u1", "object_codec_id": None}, True, True, False),
    ({"name": [["a", "<f8"]], "object_codec_id": None}, True, True, False),
    ({"name": "|O", "object_codec_id": "vlen-utf8"}, True, False, False),
    ({"name": "|u1"}, False, False, True),
    ({"name": 1, "object_codec_id": None}, False, False, False),
    ("|u1", False, False, True),
    ({"name": "struct", "configuration": {"fields": []}}, False, False, True),
])
def test_json_shape_checks(data, v2, no_codec, v3):
    assert zarrkit.dtype.check_dtype_spec_v2(data) is v2
    assert zarrkit.dtype.check_dtype_spec_no_object_codec_v2(data) is no_codec
    assert check_dtype_spec_v3(data) is v3


def test_v2_json_unpacked_and_the_union_of_the_classes():
    assert unpack_dtype_json({"name": "<i4", "object_codec_id": None}) == "<i4"
    assert unpack_dtype_json("int32") == "int32"
    assert set(typing.get_args(AnyDType)) == set(data_type_registry.contents.values())


def test_structured_is_struct():
    assert Structured is Struct
    s = Struct(fields=[("a", Int8())])
    assert s.has_field("a") and not s.has_field("b") and s.get_field("a") == Int8()
    with pytest.raises(KeyError, match="'b'"):
        s.get_field("b")


# -- byte orders -------------------------------------------------------------------------------


def test_endianness_names():
    assert ENDIANNESS_STR == ("little", "big") and set(NUMPY_ENDIANNESS_STR) == {"<", ">", "="}
    assert endianness_from_numpy_str("=") == sys.byteorder
    assert [endianness_from_numpy_str(c) for c in "<>"] == ["little", "big"]
    assert [endianness_to_numpy_str(e) for e in ENDIANNESS_STR] == ["<", ">"]
    with pytest.raises(ValueError, match="'|'"):
        endianness_from_numpy_str("|")
    with pytest.raises(ValueError, match="'middle'"):
        endianness_to_numpy_str("middle")


# -- where zarr-python 3 code finds them --------------------------------------------------------


@pytest.mark.parametrize("path", ["core.dtype", "core.dtype.common", "core.dtype.npy.bytes",
                                  "core.dtype.npy.common", "core.dtype.npy.structured", "core.dtype.npy.time",
                                  "core.dtype.wrapper", "core.dtype.registry"])
def test_the_module_paths_of_zarr_python_3_are_mapped(path):
    modules = [importlib.import_module(f"zarrkit.{m}") for m in ZARR3_PATHS[path]]
    assert modules


def test_public_module_and_arrays():
    assert zarrkit.dtype.Structured is Struct and zarrkit.dtype.data_type_registry is data_type_registry
    a = zarrkit.create_array({}, shape=(2,), dtype=FixedLengthUTF32(length=3))
    assert a._zdtype == FixedLengthUTF32(length=3)
    b = zarrkit.create_array({}, shape=(2,), dtype=VariableLengthBytes(), fill_value="ab")
    assert b[:].tolist() == [b"ab", b"ab"] and b._zdtype == VariableLengthBytes()


def test_array_annotations_may_be_subscripted():
    # zarr-python 3 code annotates with Array[Any] (and ZDType[Any, Any]) at run time
    assert zarrkit.Array[typing.Any].__origin__ is zarrkit.Array
    assert ZDType[typing.Any, typing.Any].__origin__ is ZDType
