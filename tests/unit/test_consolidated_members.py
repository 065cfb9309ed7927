"""Members of a consolidated hierarchy are validated when they are opened, not when the
hierarchy is: a bad member document still raises a typed error naming its key, and the
documents the consolidated store hands out are those zarr-python wrote."""

import json

import pytest
import zarr

import zarrkit
from zarrkit.errors import MetadataError


def _consolidated(path, n=3):
    g = zarr.open_group(path, mode="w", zarr_format=3)
    for i in range(n):
        g.create_array(f"a{i}", shape=(4,), chunks=(2,), dtype="int16", fill_value=0)[:] = i
    g.create_group("sub").create_array("b", shape=(2,), chunks=(2,), dtype="uint8", fill_value=0)
    zarr.consolidate_metadata(path)
    with open(f"{path}/zarr.json") as f:
        return json.load(f)


def _rewrite_member(path, name, **changes):
    with open(f"{path}/zarr.json") as f:
        doc = json.load(f)
    doc["consolidated_metadata"]["metadata"][name].update(changes)
    with open(f"{path}/zarr.json", "w") as f:
        json.dump(doc, f)


def test_member_documents_are_the_ones_zarr_python_consolidated(tmp_path):
    path = str(tmp_path / "h.zarr")
    root_doc = _consolidated(path)
    g = zarrkit.open_consolidated(path, mode="r")
    members = root_doc["consolidated_metadata"]["metadata"]
    for rel, doc in members.items():
        assert json.loads(g.store[f"{rel}/zarr.json"]) == doc
    assert json.loads(g.store["zarr.json"]) == root_doc
    assert sorted(g.store.docs) == sorted(["zarr.json", *(f"{r}/zarr.json" for r in members)])
    assert {name: a[...].tolist() for name, a in g.arrays()} == {f"a{i}": [i] * 4 for i in range(3)}
    assert g["sub/b"].dtype == "uint8"


def test_a_bad_member_document_fails_when_opened_naming_its_key(tmp_path):
    path = str(tmp_path / "h.zarr")
    _consolidated(path)
    _rewrite_member(path, "a1", shape="four")
    g = zarrkit.open_consolidated(path, mode="r")  # opening the hierarchy reads no member
    assert g["a0"][...].tolist() == [0] * 4
    with pytest.raises(MetadataError, match="a1/zarr.json") as info:
        g["a1"]
    assert info.value.key == "a1/zarr.json"
    with pytest.raises(MetadataError, match="a1/zarr.json"):
        dict(g.arrays())
    # the same error as for the same document stored on its own
    with open(f"{path}/a1/zarr.json") as f:
        doc = json.load(f)
    doc["shape"] = "four"
    with open(f"{path}/a1/zarr.json", "w") as f:
        json.dump(doc, f)
    with pytest.raises(MetadataError) as listed:
        zarrkit.open_group(path, mode="r")["a1"]
    assert str(listed.value) == str(info.value)


def test_a_member_of_an_unknown_node_type_fails_when_listed_naming_its_key(tmp_path):
    path = str(tmp_path / "h.zarr")
    _consolidated(path)
    _rewrite_member(path, "sub/b", node_type="table")
    g = zarrkit.open_consolidated(path, mode="r")
    assert g["a2"][...].tolist() == [2] * 4
    with pytest.raises(MetadataError, match="sub/b/zarr.json"):
        g.members(max_depth=None)


def test_a_member_document_written_through_the_group_replaces_the_consolidated_one(tmp_path):
    path = str(tmp_path / "h.zarr")
    _consolidated(path)
    g = zarrkit.open_consolidated(path, mode="r+")
    g["a0"].attrs["units"] = "m"
    assert g["a0"].attrs["units"] == "m"
    assert json.loads(g.store["a0/zarr.json"])["attributes"] == {"units": "m"}
    assert g["a0"][...].tolist() == [0] * 4
    # what was written reached the stored member document too
    assert zarrkit.open_group(path, mode="r")["a0"].attrs["units"] == "m"
