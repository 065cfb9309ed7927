"""Arguments are checked where they enter: the error names the argument as it was given, says
what was expected and what was got, is one of zarrkit's error types where one exists (rooted
in TypeError/ValueError), and offers only the array's format's own vocabulary."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numcodecs
import pytest
from zarrkit.dtype import parse_dtype

import zarrkit
from zarrkit.codecs.registry import v2_codec_ids
from zarrkit.errors import UnknownCodecError, UnsupportedCodecError, UnsupportedDtypeError

V3_ONLY = ("sharding_indexed", "bytes", "transpose", "cast_value")


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_a_compressor_that_is_no_codec_is_named(zarr_format):
    with pytest.raises(UnsupportedCodecError) as info:
        zarrkit.zeros(10, compressor=5, zarr_format=zarr_format)
    assert isinstance(info.value, TypeError)
    assert str(info.value) == (
        "compressor: expected a codec (numcodecs or zarrkit.codecs), its JSON form, its name or None, got int: 5"
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"compressors": 5}, ("compressors: expected a codec (numcodecs or zarrkit.codecs), its JSON form, its "
                              "name, a list of them or None, got int: 5")),
        ({"filters": 5}, "filters: expected a codec"),
        ({"filters": [numcodecs.Delta("<f4"), 5]}, "filters[1]: expected a codec"),
        ({"serializer": 5.0}, "serializer: expected a codec"),
        ({"compressors": 5, "zarr_format": 2}, "compressors: expected a codec"),
    ],
)
def test_codec_arguments_of_create_array_are_named(kwargs, message):
    with pytest.raises(UnsupportedCodecError, match=r"^" + message.replace("[", r"\[").replace("(", r"\(")
                       .replace(")", r"\)")):
        zarrkit.create_array({}, shape=10, dtype="f4", **kwargs)


@pytest.mark.parametrize("compressor", ["nope", {"name": "nope"}, {"id": "nope"}])
def test_an_unknown_v2_codec_is_offered_the_v2_vocabulary_only(compressor):
    with pytest.raises(UnknownCodecError) as info:
        zarrkit.zeros(10, compressor=compressor, zarr_format=2)
    text = str(info.value)
    assert text.startswith("compressor: unknown codec") and "known Zarr v2 codec ids" in text
    offered = text.split("known Zarr v2 codec ids: ", 1)[1]
    assert offered == str(v2_codec_ids())
    for name in V3_ONLY:
        assert repr(name) not in offered
    assert "'zstd'" in offered and "'blosc'" in offered


@pytest.mark.parametrize("name", V3_ONLY)
@pytest.mark.parametrize("form", [str, lambda n: {"name": n}, lambda n: {"id": n}])
def test_a_v3_only_codec_for_a_v2_array_says_why(name, form):
    with pytest.raises(UnsupportedCodecError, match=rf"^filters: the codec '{name}' has no Zarr v2 equivalent"):
        zarrkit.zeros(10, filters=[form(name)], zarr_format=2)


def test_an_unknown_v3_codec_is_offered_the_v3_vocabulary():
    with pytest.raises(UnknownCodecError, match=r"^compressors: unknown codec 'nope'; known codecs: .*'zstd'"):
        zarrkit.create_array({}, shape=10, dtype="f4", compressors=["nope"])


def test_codecs_in_any_form_for_either_format():
    # a name, the v3 JSON and the v2 JSON all name a codec, whatever the format
    for form in ("zstd", {"name": "zstd", "configuration": {"level": 1}}, {"id": "zstd", "level": 1}):
        assert zarrkit.zeros(4, compressor=form, zarr_format=2).compressor.codec_id == "zstd"
        assert zarrkit.create_array({}, shape=4, dtype="i2", compressors=[form]).compressors[0].name == "zstd"


@pytest.mark.parametrize(
    ("shape", "got"),
    [("10", "'10'"), ((10, "a"), "(10, 'a')"), (10.5, "10.5"), (True, "True"), ((2, True), "(2, True)")],
)
def test_shape_says_what_it_expects(shape, got):
    with pytest.raises(TypeError) as info:
        zarrkit.zeros(shape)
    assert str(info.value) == f"shape: expected an int or a tuple of ints, got {got}"


def test_shape_and_chunk_values():
    with pytest.raises(ValueError, match=r"^shape: lengths must not be negative, got \(-1,\)"):
        zarrkit.zeros(-1)
    with pytest.raises(TypeError, match=r"^shape is required: expected an int or a tuple of ints"):
        zarrkit.create_array({}, shape=None, dtype="f4")
    with pytest.raises(TypeError, match=r"^chunks: expected an int, a tuple of ints .*, got 'ab'$"):
        zarrkit.zeros(10, chunks="ab")
    with pytest.raises(TypeError, match=r"^chunks: expected .*, got \(2, 'x'\)$"):
        zarrkit.zeros((4, 4), chunks=(2, "x"))
    with pytest.raises(ValueError, match=r"^chunks: \(2, 3\) has more dimensions than shape \(10,\)"):
        zarrkit.zeros(10, chunks=(2, 3))
    with pytest.raises(TypeError, match=r"^shards: expected an int or a tuple of ints, got 'x'"):
        zarrkit.create_array({}, shape=10, dtype="f4", shards="x")
    assert zarrkit.zeros((8, 8), chunks="auto", zarr_format=2).chunks == (8, 8)


def test_dtype_says_what_it_expects():
    with pytest.raises(TypeError, match=r"^dtype: expected a NumPy data type or its name .*got 'nope'"):
        zarrkit.create_array({}, shape=10, dtype="nope")
    with pytest.raises(TypeError, match=r"^dtype: expected .*got 5 "):
        zarrkit.zeros(10, dtype=5)
    # zarr-python 3's data type objects are data types
    assert zarrkit.create_array({}, shape=2, dtype=parse_dtype("<i2")).dtype == "i2"
    assert zarrkit.zeros(2, dtype=parse_dtype("<u4"), zarr_format=2).dtype == "u4"
    assert zarrkit.create_array({}, shape=2, dtype=parse_dtype("string"))[:].tolist() == ["", ""]


def test_fill_value_is_named():
    with pytest.raises(ValueError, match=r"^fill_value 'abc' does not fit dtype float32"):
        zarrkit.create_array({}, shape=10, dtype="f4", fill_value="abc")


@pytest.mark.parametrize("call", [
    "zarrkit.create_array({}, shape=10, dtype='bfloat16')",
    "zarrkit.zeros(10, dtype='bfloat16', zarr_format=2)",
    "zarrkit.open_array({}, mode='w', shape=10, dtype='int4')",
])
def test_a_data_type_of_a_missing_package_gives_the_install_hint(call):
    code = textwrap.dedent(f"""
        import sys
        sys.modules["ml_dtypes"] = None  # as if it were not installed
        import zarrkit
        from zarrkit.errors import UnsupportedDtypeError
        try:
            {call}
        except UnsupportedDtypeError as exc:
            print(type(exc).__name__, exc)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    name = call.split("dtype='")[1].split("'")[0]
    assert out.strip() == (
        f"UnsupportedDtypeError dtype {name!r} needs the ml_dtypes package (pip install 'zarrkit[ml]')"
    )
    assert issubclass(UnsupportedDtypeError, ValueError)
