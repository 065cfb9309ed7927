"""Variable-length strings as NumPy 2's StringDType, both directions with zarr-python 3.4.

zarr-python 3.4 reads and creates v3 ``string`` arrays (codec ``vlen-utf8``) as
``np.dtypes.StringDType()``; zarrkit does the same unless ``config.string_dtype`` is
``'object'``.  A StringDType array holds pointers, so no stored bytes may ever be decoded
into its memory: hostile chunks must fail as :class:`~zarrkit.errors.ChunkDecodeError`.
"""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

import zarrkit
from zarrkit.codecs.base import ChunkSpec
from zarrkit.codecs.chain import CodecChain
from zarrkit.errors import ChunkDecodeError

zarr = pytest.importorskip("zarr")

STRING = np.dtypes.StringDType()
WORDS = ["", "a", "bc", "été", "日本語", "x" * 300]


def _values(n: int) -> list[str]:
    return [WORDS[i % len(WORDS)] for i in range(n)]


def test_stringdtype_holds_pointers():
    # the property every guard of the codec chain relies on
    assert STRING.hasobject
    chain = CodecChain([zarrkit.codecs.VLenUTF8Codec()], ChunkSpec((4,), STRING, ""))
    assert not chain.decodes_into


def test_zarrkit_writes_zarr_python_reads(tmp_path):
    a = zarrkit.create_array(str(tmp_path / "s.zarr"), shape=(7,), chunks=(3,), dtype=str)
    assert a.dtype == STRING
    a[:] = np.array(_values(7), dtype=STRING)
    b = zarr.open_array(str(tmp_path / "s.zarr"), mode="r")
    assert b.dtype == STRING
    assert b[:].tolist() == _values(7)
    doc = json.loads((tmp_path / "s.zarr" / "zarr.json").read_text())
    assert doc["data_type"] == "string"
    assert doc["fill_value"] == ""
    assert doc["codecs"][0]["name"] == "vlen-utf8"


def test_zarr_python_writes_zarrkit_reads(tmp_path):
    z = zarr.create_array(str(tmp_path / "s.zarr"), shape=(7,), chunks=(3,), dtype=str, fill_value="-")
    z[:6] = np.array(_values(6), dtype=STRING)
    a = zarrkit.open_array(str(tmp_path / "s.zarr"), mode="r")
    assert a.dtype == z.dtype == STRING
    out = a[:]
    assert out.dtype == z[:].dtype == STRING
    assert out.tolist() == z[:].tolist() == _values(6) + ["-"]
    assert a.fill_value == "-"
    assert "Data type          : VariableLengthUTF8()" in str(a.info)


def test_same_metadata_document_as_zarr_python(tmp_path):
    zarrkit.create_array(str(tmp_path / "k.zarr"), shape=(4,), chunks=(2,), dtype=str, compressors=None)
    zarr.create_array(str(tmp_path / "z.zarr"), shape=(4,), chunks=(2,), dtype=str, compressors=None)
    k = json.loads((tmp_path / "k.zarr" / "zarr.json").read_text())
    z = json.loads((tmp_path / "z.zarr" / "zarr.json").read_text())
    for field in ("data_type", "fill_value"):
        assert k[field] == z[field], field
    assert [c["name"] for c in k["codecs"]] == [c["name"] for c in z["codecs"]]


def test_tree_shows_stringdtype():
    g = zarrkit.group(zarr_format=3)
    g.create_array("s", shape=(2,), dtype=str)
    zg = zarr.group(zarr_format=3)
    zg.create_array("s", shape=(2,), dtype=str)
    assert str(g.tree()) == str(zg.tree())


@pytest.mark.parametrize(
    "value",
    [
        np.array(_values(5), dtype=STRING),
        np.array(_values(5), dtype=object),
        np.array(_values(5)),  # <U
        _values(5),
    ],
    ids=["StringDType", "object", "U", "list"],
)
def test_writes_from_every_string_form(tmp_path, value):
    a = zarrkit.create_array(str(tmp_path / "s.zarr"), shape=(5,), chunks=(2,), dtype=str)
    a[:] = value
    assert a[:].dtype == STRING
    assert a[:].tolist() == _values(5)
    assert zarr.open_array(str(tmp_path / "s.zarr"), mode="r")[:].tolist() == _values(5)


def test_create_from_stringdtype():
    store: dict = {}
    a = zarrkit.create_array(store, shape=(3,), dtype=STRING)
    assert a.dtype == STRING
    assert json.loads(bytes(store["zarr.json"]))["data_type"] == "string"


def test_config_gives_object(tmp_path):
    z = zarr.create_array(str(tmp_path / "s.zarr"), shape=(4,), dtype=str)
    z[:] = np.array(_values(4), dtype=STRING)
    with zarrkit.config.set(string_dtype="object"):
        a = zarrkit.open_array(str(tmp_path / "s.zarr"), mode="r")
        b = zarrkit.create_array({}, shape=(2,), dtype=str)
    assert a.dtype == object and b.dtype == object
    out = a[:]
    assert out.dtype == object and out.tolist() == _values(4)
    assert all(type(v) is str for v in out)
    # the setting is read when an array is opened
    assert zarrkit.open_array(str(tmp_path / "s.zarr"), mode="r").dtype == STRING


def test_config_value_checked():
    with pytest.raises(ValueError, match="string_dtype"):
        zarrkit.config.set(string_dtype="str")


def test_v2_strings_read_back_both_ways(tmp_path):
    # v2 arrays keep zarr-python 2's object dtype here (see the user guide's strings section)
    z = zarr.create_array(str(tmp_path / "z.zarr"), shape=(4,), dtype=str, zarr_format=2)
    z[:] = np.array(_values(4), dtype=STRING)
    a = zarrkit.open_array(str(tmp_path / "z.zarr"), mode="r")
    assert a[:].tolist() == _values(4)
    k = zarrkit.create_array(str(tmp_path / "k.zarr"), shape=(4,), dtype=str, zarr_format=2)
    k[:] = np.array(_values(4), dtype=STRING)
    b = zarr.open_array(str(tmp_path / "k.zarr"), mode="r")
    assert b.dtype == STRING
    assert b[:].tolist() == _values(4)


def _frame(items: list[bytes], count: int | None = None) -> bytes:
    out = [struct.pack("<I", len(items) if count is None else count)]
    for item in items:
        out.append(struct.pack("<I", len(item)) + item)
    return b"".join(out)


@pytest.mark.parametrize(
    "chunk",
    [
        b"",
        b"\x01\x00",
        _frame([b"a", b"b"], count=3),  # fewer items than the header says
        _frame([b"a", b"b", b"c"], count=2**31),  # a count that would allocate gigabytes
        _frame([b"a", b"b"])[:-1] + b"",  # truncated item
        struct.pack("<I", 3) + struct.pack("<I", 2**31) + b"x",  # an item longer than the chunk
        _frame([b"a", b"\xff\xfe", b"c"]),  # not UTF-8
        _frame([b"a", b"b", b"c"]) + b"trailing",
    ],
    ids=["empty", "short-header", "missing-item", "huge-count", "truncated", "huge-item", "bad-utf8", "trailing"],
)
def test_hostile_vlen_bytes_raise_chunk_decode_error(chunk):
    store: dict = {}
    a = zarrkit.create_array(store, shape=(3,), chunks=(3,), dtype=str, compressors=None)
    assert a.dtype == STRING
    a[:] = ["a", "b", "c"]
    key = next(k for k in store if k.startswith("c"))
    store[key] = chunk
    a = zarrkit.open_array(store, mode="r")
    try:
        out = a[:]
    except ChunkDecodeError:
        return
    # numcodecs tolerates trailing bytes: what it returns is still plain text
    assert out.dtype == STRING and out.tolist() == ["a", "b", "c"]


def test_categorize_filter_reads_back_as_stringdtype():
    numcodecs = pytest.importorskip("numcodecs")
    store: dict = {}
    data = np.array(["a", "b", "a", "c"], dtype=object)
    a = zarrkit.create_array(store, shape=(4,), dtype=str, filters=[numcodecs.Categorize(["a", "b", "c"], dtype=object)])
    a[:] = data
    for arr in (a, zarrkit.open_array(store, mode="r")):
        out = arr[:]
        assert out.dtype == STRING and out.tolist() == data.tolist()
