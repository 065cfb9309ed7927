"""zarr-python 3's consolidated metadata objects (``ConsolidatedMetadata``, ``GroupMetadata``)
and the checks of ``consolidate_metadata`` and ``open_consolidated``."""

from __future__ import annotations

import warnings

import pytest

import zarrkit
from zarrkit.core.group import GROUP_METADATA_KEYS, ConsolidatedMetadata, GroupMetadata
from zarrkit.errors import MetadataError, ZarrUserWarning
from zarrkit.metadata.v3 import ArrayMetadataV3
from zarrkit.storage import MemoryStore

GROUP = {"zarr_format": 3, "node_type": "group", "attributes": {}}


def _cm(keys):
    return ConsolidatedMetadata.from_dict({"kind": "inline", "must_understand": False,
                                           "metadata": dict.fromkeys(keys, GROUP)})


@pytest.mark.parametrize("order", [["a", "a/x", "b", "b/y"], ["b/y", "a/x", "b", "a"], ["a", "b", "b/y", "a/x"]])
def test_from_dict_nests_whatever_the_order_of_keys(order):
    cm = _cm(order)
    assert sorted(cm.metadata) == ["a", "b"]
    assert list(cm.metadata["a"].consolidated_metadata.metadata) == ["x"]
    leaf = cm.metadata["b"].consolidated_metadata.metadata["y"]
    assert leaf.consolidated_metadata == ConsolidatedMetadata(metadata={})


def test_flattened_metadata_lists_each_group_before_its_members():
    cm = _cm(["c", "a", "c/e", "c/d"])
    assert list(cm.flattened_metadata) == ["c", "c/e", "c/d", "a"]
    assert cm.flattened_metadata["c"].consolidated_metadata == ConsolidatedMetadata(metadata={})
    assert list(cm.to_dict()["metadata"]) == ["a", "c", "c/d", "c/e"]


def test_to_dict_round_trips():
    cm = _cm(["a", "a/b"])
    assert ConsolidatedMetadata.from_dict(cm.to_dict()) == cm
    assert cm.to_dict()["metadata"]["a/b"] == {**GROUP, "consolidated_metadata": {
        "kind": "inline", "must_understand": False, "metadata": {}}}


def test_from_dict_names_what_is_wrong():
    with pytest.raises(ValueError, match="kind='None'"):
        ConsolidatedMetadata.from_dict({"metadata": {}})
    with pytest.raises(ValueError, match="kind='other'"):
        ConsolidatedMetadata.from_dict({"kind": "other", "metadata": {}})
    with pytest.raises(TypeError, match="'metadata'"):
        ConsolidatedMetadata.from_dict({"kind": "inline"})
    with pytest.raises(TypeError, match="key='foo', type='list'"):
        ConsolidatedMetadata.from_dict({"kind": "inline", "metadata": {"foo": [1]}})
    with pytest.raises(MetadataError, match="'a/b'"):
        ConsolidatedMetadata.from_dict({"kind": "inline", "metadata": {"a/b": GROUP}})


def test_array_members_are_array_metadata():
    g = zarrkit.create_group(MemoryStore())
    g.create_array("x", shape=(3,), dtype="u1", chunks=(3,))
    with pytest.warns(ZarrUserWarning):
        opened = zarrkit.consolidate_metadata(g.store)
    member = opened.metadata.consolidated_metadata.metadata["x"]
    assert isinstance(member, ArrayMetadataV3) and member.shape == (3,)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_a_consolidated_group_shows_its_hierarchy_nested(zarr_format):
    store = MemoryStore()
    g = zarrkit.create_group(store, zarr_format=zarr_format, attributes={"r": 1})
    g.create_group("a", attributes={"k": "a"}).create_group("b")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ZarrUserWarning)
        zarrkit.consolidate_metadata(store)
    meta = zarrkit.open_consolidated(store).metadata
    assert meta.attributes == {"r": 1} and meta.zarr_format == zarr_format
    a = meta.consolidated_metadata.metadata["a"]
    assert a.attributes == {"k": "a"} and a.zarr_format == zarr_format
    assert list(a.consolidated_metadata.metadata) == ["b"]


def test_group_metadata_checks_its_fields():
    assert GroupMetadata.from_dict({**GROUP, "ext": {"must_understand": False}}).extra_fields == {
        "ext": {"must_understand": False}}
    with pytest.raises(MetadataError, match="ext"):
        GroupMetadata(extra_fields={"ext": {"must_understand": True}})
    with pytest.raises(ValueError, match="reserved"):
        GroupMetadata(extra_fields={"attributes": {"must_understand": False}})
    with pytest.raises(ValueError, match="zarr_format"):
        GroupMetadata(zarr_format=4)
    assert GroupMetadata.from_dict({"zarr_format": 2, "other": 1}) == GroupMetadata(zarr_format=2)
    assert "consolidated_metadata" in GROUP_METADATA_KEYS


def test_consolidating_a_v3_hierarchy_warns_only_when_there_is_something_below():
    store = MemoryStore()
    g = zarrkit.create_group(store)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        zarrkit.consolidate_metadata(store)
    g.create_group("a")
    with pytest.warns(ZarrUserWarning, match="Consolidated metadata is currently not part"):
        zarrkit.consolidate_metadata(store)
    v2 = MemoryStore()
    zarrkit.create_group(v2, zarr_format=2).create_group("a")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        zarrkit.consolidate_metadata(v2)


def test_self_consolidating_stores_are_refused():
    class SelfConsolidating(MemoryStore):
        supports_consolidated_metadata = False

    store = SelfConsolidating()
    zarrkit.create_group(store).create_group("a")
    with pytest.raises(TypeError, match="doesn't support consolidated metadata"):
        zarrkit.consolidate_metadata(store)
    assert "a" in zarrkit.Group.open(store)
    with pytest.raises(ValueError, match="doesn't support consolidated metadata"):
        zarrkit.Group.open(store, use_consolidated=True)


def test_open_consolidated_refuses_use_consolidated_false():
    with pytest.raises(TypeError, match="use_consolidated"):
        zarrkit.open_consolidated({}, use_consolidated=False)


def test_open_group_asked_to_use_consolidated_metadata_needs_some():
    store = MemoryStore()
    g = zarrkit.create_group(store)
    assert zarrkit.open_group(store).path == ""  # not asked: fine without
    with pytest.raises(ValueError, match="Consolidated metadata requested"):
        zarrkit.open_group(store, use_consolidated=True)
    g.create_group("a")
    with pytest.warns(ZarrUserWarning):
        zarrkit.consolidate_metadata(store)
    opened = zarrkit.open_group(store, use_consolidated=True)  # mode 'a': the group there
    assert not opened.read_only and list(opened.metadata.consolidated_metadata.metadata) == ["a"]
