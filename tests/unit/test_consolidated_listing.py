"""Listing through consolidated metadata: the same members as the stored hierarchy, kept up
to date by writes made through the consolidated group."""

import zarrkit


def _names(group):
    return [(name, type(node).__name__) for name, node in group.members(max_depth=None)]


def test_consolidated_walk_matches_the_stored_hierarchy(tmp_path):
    path = str(tmp_path / "h.zarr")
    root = zarrkit.open_group(path, mode="w", zarr_format=3)
    for i in range(4):
        g = root.create_group(f"g{i}")
        for j in range(3):
            g.create(f"a{j}", shape=(2,), dtype="i1")
        g.create_group("sub").create("deep", shape=(1,), dtype="i1")
    zarrkit.consolidate_metadata(path)
    listed = zarrkit.open_group(path, mode="r")
    consolidated = zarrkit.open_consolidated(path, mode="r")
    assert _names(consolidated) == _names(listed)
    assert len(_names(consolidated)) == 4 * 6
    assert consolidated["g2"].store.list_dir("g2/") == ["a0", "a1", "a2", "sub"]
    assert consolidated["g2"].store.list_dir("g2") == ["a0", "a1", "a2", "sub"]
    assert consolidated.store.list_dir("nope/") == []


def test_consolidated_listing_follows_writes_through_the_group(tmp_path):
    path = str(tmp_path / "h.zarr")
    root = zarrkit.open_group(path, mode="w", zarr_format=3)
    for i in range(3):
        root.create_group(f"g{i}").create("a", shape=(2,), dtype="i1")
    zarrkit.consolidate_metadata(path)
    g = zarrkit.open_consolidated(path, mode="r+")
    assert sorted(g.group_keys()) == ["g0", "g1", "g2"]
    g.create_group("g3")
    g["g1"].create("b", shape=(1,), dtype="i1")
    assert sorted(g.group_keys()) == ["g0", "g1", "g2", "g3"]
    assert sorted(g["g1"].array_keys()) == ["a", "b"]
    del g["g0"]
    assert sorted(g.group_keys()) == ["g1", "g2", "g3"]
