"""One ``info`` model: ``print(a.info)`` describes a node in the style of the zarr-python that
reads its format (zarr-python 3.4's, run here as the oracle, for v3; zarr-python 2's for v2),
with public type names and no private attributes; ``zarrkit info`` has one layout of its own
for both formats."""

from __future__ import annotations

import re

import numpy as np
import pytest
import zarr as zarr3  # zarr-python 3.4

import zarrkit
from zarrkit.cli import main
from zarrkit.codecs import BloscCodec

PRIVATE = re.compile(r"\b_[a-z]\w*=|zarrkit\.core\.|zarrkit\.hierarchy\.")


def cli(capsys, *args: str) -> str:
    assert main(["info", *args]) == 0
    return capsys.readouterr().out


def _v3_array(where, **kwargs):
    kwargs.setdefault("compressors", BloscCodec(cname="zstd", clevel=3, shuffle="bitshuffle"))
    a = zarrkit.create_array(str(where), shape=(40, 30), chunks=(10, 10), dtype="f4",
                             dimension_names=["y", "x"], **kwargs)
    a[:20] = 1.5
    return a


def _without_private(text: str) -> str:
    return re.sub(r"_tunable_attrs=(set\(\)|\{[^}]*\}), ", "", text)


def test_v3_info_is_zarr_python_3s_without_private_attributes(tmp_path):
    a = _v3_array(tmp_path / "a.zarr")
    theirs = zarr3.open_array(str(tmp_path / "a.zarr"), mode="r")
    ours = zarrkit.open_array(str(tmp_path / "a.zarr"), mode="r")
    assert "_tunable_attrs" in str(theirs.info)  # zarr-python 3.4 shows a private attribute...
    assert str(ours.info) == _without_private(str(theirs.info))  # ...which zarrkit leaves out
    assert str(ours.info_complete()) == _without_private(str(theirs.info_complete()))
    assert not PRIVATE.search(str(a.info_complete()))


def test_v3_info_of_a_sharded_array_is_zarr_python_3s(tmp_path):
    where = tmp_path / "s.zarr"
    a = zarrkit.create_array(str(where), shape=(100,), chunks=(10,), shards=(50,), dtype="u1")
    a[:60] = 1
    theirs = zarr3.open_array(str(where), mode="r")
    assert str(zarrkit.open_array(str(where), mode="r").info_complete()) == str(theirs.info_complete())


@pytest.mark.parametrize("dtype", ["<i2", ">f8", "bool", "complex64", "M8[s]", "m8[ms]", "U3", "uint64"])
def test_v3_data_types_are_shown_as_zarr_python_3_shows_them(tmp_path, dtype):
    where = str(tmp_path / "d.zarr")
    zarrkit.create_array(where, shape=(2,), dtype=dtype)
    row = [line for line in str(zarrkit.open_array(where, mode="r").info).splitlines() if line.startswith("Data type")]
    theirs = [line for line in str(zarr3.open_array(where, mode="r").info).splitlines() if line.startswith("Data type")]
    assert row == theirs


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_the_command_line_has_one_layout_of_its_own(tmp_path, capsys, zarr_format):
    """``zarrkit info`` does not mirror zarr-python (``.info`` does): one layout for both formats."""
    where = tmp_path / "a.zarr"
    if zarr_format == 3:
        _v3_array(where)
    else:
        a = zarrkit.open_array(str(where), mode="w", shape=(40, 30), chunks=(10, 10), dtype="f4",
                               zarr_format=2, filters=[zarrkit.Delta(dtype="<f4")])
        a[:20] = 1.5
    lines = cli(capsys, str(where)).splitlines()
    assert lines[:3] == ["Name               : /", "Type               : array",
                         f"Zarr format        : {zarr_format}"]
    assert f"Store path{' ' * 8} : {where}" in lines and "Chunks initialized : 6/12" in lines
    assert not PRIVATE.search("\n".join(lines))
    if zarr_format == 2:
        assert "Filters            : delta(dtype='<f4', astype='<f4')" in lines
        assert "Type               : zarrkit.Array" in str(zarrkit.open_array(str(where), mode="r").info)
    else:
        assert "Dimension names    : ('y', 'x')" in lines


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_groups_are_described_alike_with_public_names(tmp_path, capsys, zarr_format):
    where = tmp_path / "g.zarr"
    g = zarrkit.open_group(str(where), mode="w", zarr_format=zarr_format)
    g.create_group("sub").zeros("deep", shape=3)
    g.zeros("arr", shape=(4,))
    g = zarrkit.open_group(str(where), mode="r")
    report = str(g.info_complete())
    out = cli(capsys, str(where))
    assert out.splitlines()[:2] == ["Name             : /", "Type             : group"]  # the command's own
    assert "Arrays           : arr" in out and "Groups           : sub" in out and "Arrays below     : 2" in out
    assert not PRIVATE.search(out + report + str(g.info) + str(g["arr"].info))
    if zarr_format == 2:
        assert "Type        : zarrkit.Group" in report and "Arrays      : arr" in report
        assert dict(g.info_items())["Type"] == "zarrkit.Group"
        assert dict(g["arr"].info_items())["Type"] == "zarrkit.Array"
    else:  # zarr-python 3.4's report
        theirs = zarr3.open_group(str(where), mode="r")
        assert report == str(theirs.info_complete())
        assert str(g.info) == str(theirs.info)


def test_v2_info_of_an_array_without_compressor_says_none():
    z = zarrkit.zeros(10, zarr_format=2, compressor=None)
    assert "Compressor         : None" in str(z.info).splitlines()  # as zarr-python 2 says it


def test_codec_reprs_without_private_arguments():
    from zarrkit.core.info import public_codec_repr

    class Odd:
        def __repr__(self):
            return "Outer(_hidden={'a', 'b'}, keep=(1, 2), inner=Inner(_x=set(), y='a, b'), last=[Inner(_z=1)])"

    assert public_codec_repr(Odd()) == "Outer(keep=(1, 2), inner=Inner(y='a, b'), last=[Inner()])"
    assert public_codec_repr(BloscCodec()) == (
        "BloscCodec(typesize=1, cname='zstd', clevel=5, shuffle='bitshuffle', blocksize=0)"
    )
    assert np.dtype("f4") == zarrkit.zeros(1, dtype="f4").dtype


def test_a_huge_declared_grid_is_described_without_listing_its_edges(tmp_path, capsys):
    # a document may declare 2**40 chunks in a few bytes: no report expands them
    import json

    path = tmp_path / "a.zarr"
    zarrkit.create_array(str(path), shape=(4,), chunks=(2,), dtype="u1")
    doc = json.loads((path / "zarr.json").read_text())
    doc["shape"] = [2**40]
    doc["chunk_grid"] = {"name": "rectilinear",
                         "configuration": {"kind": "inline", "chunk_shapes": [[[1, 2**40 - 3], 3]]}}
    (path / "zarr.json").write_text(json.dumps(doc))
    z = zarrkit.open_array(str(path), mode="r")
    for text in (str(z.info), str(z.info_complete()), str(z.info_items()), z._repr_html_(), cli(capsys, str(path))):
        assert "variable" in text
