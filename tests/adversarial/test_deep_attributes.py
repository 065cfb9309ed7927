"""Deeply nested attributes: what zarrkit reads it writes back (``attrs.update``, consolidation,
conversion, ``zarrkit cp``), up to the one documented depth (``MAX_JSON_DEPTH``) that reading
and writing share; deeper documents are a MetadataError naming the key, on reading and before
anything is written.  Python's own recursive JSON writer gives up at about 1,000 levels."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys

import pytest

import zarrkit
from zarrkit.errors import MetadataError
from zarrkit.metadata.json_text import (
    MAX_JSON_DEPTH,
    dump_json,
    load_json,
    loads_iteratively,
    text_depth,
)

DEEP = 1_200  # deeper than json.dumps(indent=...) goes, well within the limit


def nested(depth: int, leaf=1):
    value = leaf
    for i in range(depth):
        value = {"k": value} if i % 2 else [value]
    return value


def nested_text(depth: int) -> str:
    return '{"k": ' * depth + "1" + "}" * depth


def store_with_deep_attributes(path, zarr_format: int, depth: int = DEEP) -> str:
    """A group holding an array ``a`` whose attributes hold a value ``depth`` levels deep,
    written into the store's documents as another writer could have; the key of the
    attributes document."""
    g = zarrkit.open_group(str(path), mode="w", zarr_format=zarr_format)
    g.zeros("a", shape=(4,), chunks=(2,))[:] = 7
    if zarr_format == 2:
        key = "a/.zattrs"
        (path / key).write_text('{"deep": ' + nested_text(depth) + "}")
    else:
        key = "a/zarr.json"
        doc = json.loads((path / key).read_text())
        doc["attributes"] = {"__deep__": 0}
        (path / key).write_text(json.dumps(doc).replace('{"__deep__": 0}', '{"deep": ' + nested_text(depth) + "}"))
    return key


def depth_of(value) -> int:
    return text_depth(json.dumps(value).encode())


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_attributes_read_deep_are_updated(tmp_path, zarr_format):
    store_with_deep_attributes(tmp_path, zarr_format)
    a = zarrkit.open_array(str(tmp_path / "a"), mode="r+")
    a.attrs.update(units="m")
    again = zarrkit.open_array(str(tmp_path / "a"), mode="r")
    assert again.attrs["units"] == "m"
    assert depth_of(again.attrs["deep"]) == DEEP
    assert again[:].tolist() == [7, 7, 7, 7]


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_a_hierarchy_with_deep_attributes_is_consolidated(tmp_path, zarr_format):
    store_with_deep_attributes(tmp_path, zarr_format)
    zarrkit.consolidate_metadata(str(tmp_path))
    g = zarrkit.open_consolidated(str(tmp_path), mode="r")
    assert depth_of(g["a"].attrs["deep"]) == DEEP


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_a_hierarchy_with_deep_attributes_is_converted(tmp_path, zarr_format):
    store_with_deep_attributes(tmp_path, zarr_format)
    if zarr_format == 3:  # v2 has only its own chunk key encoding: make the array's that one
        doc = json.loads((tmp_path / "a/zarr.json").read_text())
        doc["chunk_key_encoding"] = {"name": "v2", "configuration": {"separator": "."}}
        (tmp_path / "a/zarr.json").write_text(json.dumps(doc))
        zarrkit.open_array(str(tmp_path / "a"), mode="r+")[:] = 7
    zarrkit.convert(str(tmp_path), 5 - zarr_format)
    a = zarrkit.open_array(str(tmp_path / "a"), mode="r")
    assert a.zarr_format == 5 - zarr_format
    assert depth_of(a.attrs["deep"]) == DEEP and a[:].tolist() == [7, 7, 7, 7]


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_a_hierarchy_with_deep_attributes_is_copied_by_the_cli(tmp_path, zarr_format):
    src, dst = tmp_path / "src", tmp_path / "dst"
    src.mkdir()
    store_with_deep_attributes(src, zarr_format)
    proc = subprocess.run([sys.executable, "-m", "zarrkit", "cp", "-q", str(src), str(dst)],
                          check=False, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-800:]
    a = zarrkit.open_array(str(dst / "a"), mode="r")
    assert depth_of(a.attrs["deep"]) == DEEP and a[:].tolist() == [7, 7, 7, 7]


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_attributes_deeper_than_the_limit_are_refused_before_anything_is_written(tmp_path, zarr_format):
    a = zarrkit.open_group(str(tmp_path), mode="w", zarr_format=zarr_format).zeros("a", shape=(2,))
    key = "a/.zattrs" if zarr_format == 2 else "a/zarr.json"
    before = {p.name: p.read_bytes() for p in (tmp_path / "a").iterdir()}
    with pytest.raises(MetadataError, match=f"^{key}: JSON nested too deeply: expected at most {MAX_JSON_DEPTH}"):
        a.attrs["deep"] = nested(MAX_JSON_DEPTH)
    assert {p.name: p.read_bytes() for p in (tmp_path / "a").iterdir()} == before
    # the creation functions too: nothing is written, not even the array's own document
    store = {}
    with pytest.raises(MetadataError, match="JSON nested too deeply"):
        zarrkit.create(store=store, shape=(2,), zarr_format=zarr_format, attributes={"deep": nested(MAX_JSON_DEPTH)})
    assert store == {}


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_reading_and_writing_agree_on_the_limit(tmp_path, zarr_format):
    key = store_with_deep_attributes(tmp_path, zarr_format, MAX_JSON_DEPTH + 5)
    with pytest.raises(MetadataError, match=f"^{key}: JSON nested too deeply"):
        zarrkit.open_group(str(tmp_path), mode="r")["a"].attrs.asdict()
    for depth in (MAX_JSON_DEPTH, MAX_JSON_DEPTH + 1):
        doc = nested(depth)
        if depth <= MAX_JSON_DEPTH:
            assert load_json(dump_json(doc, "k", indent=2), "k") == doc
        else:
            with pytest.raises(MetadataError, match="k: JSON nested too deeply"):
                dump_json(doc, "k", indent=2)
            with pytest.raises(MetadataError, match="k: JSON nested too deeply"):
                load_json(json.dumps(doc).encode(), "k")


def _random_document(rnd: random.Random, depth: int):
    if depth == 0 or rnd.random() < 0.25:
        return rnd.choice(["", "a\\b", 'q"[{', "é\u2028", 0, -7, 10**25, 0.1, -0.0, 1e300, math.inf, math.nan,
                           None, True, False])
    if rnd.random() < 0.5:
        return [_random_document(rnd, depth - 1) for _ in range(rnd.randint(0, 3))]
    keys = ["k", "[", '"', "b", 1, 2.5, True, None]
    return {rnd.choice(keys): _random_document(rnd, depth - 1) for _ in range(rnd.randint(0, 3))}


def _in_lists(value, depth: int):
    for _ in range(depth):
        value = [value]
    return value


def _written_in_lists(value, depth: int, indent, sort_keys: bool) -> str:
    """What json.dumps writes for ``value`` inside ``depth`` lists, were it able to."""
    inner = json.dumps(value, indent=indent, sort_keys=sort_keys)
    if indent is None:
        return "[" * depth + inner + "]" * depth
    pad = " " * indent
    head = "".join("[\n" + pad * (i + 1) for i in range(depth))
    tail = "".join("\n" + pad * i + "]" for i in reversed(range(depth)))
    return head + inner.replace("\n", "\n" + pad * depth) + tail


def test_deep_documents_are_written_and_read_as_python_writes_and_reads_shallow_ones():
    rnd = random.Random(7)
    for _ in range(40):
        value = _random_document(rnd, rnd.randint(0, 6))
        for indent, sort_keys in ((None, False), (2, False), (4, True)):
            try:
                expected = _written_in_lists(value, 1_100, indent, sort_keys)
            except TypeError:
                continue  # keys of mixed types cannot be sorted, by either writer
            text = dump_json(_in_lists(value, 1_100), "k", indent=indent, sort_keys=sort_keys).decode()
            assert text == expected
            back = load_json(text.encode(), "k")
            for _ in range(1_100):
                assert type(back) is list and len(back) == 1
                back = back[0]
            assert json.dumps(back) == json.dumps(json.loads(json.dumps(value, sort_keys=sort_keys)))
    with pytest.raises(ValueError, match="Out of range float"):
        dump_json(_in_lists(math.nan, 1_100), "k", indent=2, allow_nan=False)
    with pytest.raises(TypeError, match="not JSON serializable"):
        dump_json(_in_lists(object(), 1_100), "k", indent=2)


def test_the_iterative_parser_reads_what_json_reads_and_refuses_what_it_refuses():
    rnd = random.Random(11)
    for _ in range(300):
        text = json.dumps(_random_document(rnd, rnd.randint(0, 8)), indent=rnd.choice([None, 1, 2]))
        assert json.dumps(loads_iteratively(text)) == json.dumps(json.loads(text))
    for bad in ["", "[", "[1,]", '{"a" 1}', '{"a": 1,}', "[1 2]", "nul", "01", '"\\x"', "[] []", "{1: 2}", "-"]:
        with pytest.raises(ValueError):
            json.loads(bad)
        with pytest.raises(ValueError):
            loads_iteratively(bad)
    # as deep as the limit, however little recursion this Python has left
    assert loads_iteratively("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH) == _in_lists([], MAX_JSON_DEPTH - 1)
    with pytest.raises(MetadataError, match="nested too deeply"):
        loads_iteratively("[" * 100_000 + "]" * 100_000)
