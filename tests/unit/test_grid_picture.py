"""Jupyter's view of an array: its path and store, a picture of its chunk and shard grids and
its info table, drawn from the metadata held, with no store request; a group's view names its
path and store too."""

from __future__ import annotations

import re

import pytest

import zarrkit
from zarrkit.core.grid_picture import MAX_LINES, grid_svg
from zarrkit.storage import CountingStore, MemoryStore

THIN = 'stroke-width="0.6"'
THICK = 'stroke-width="2.0"'




@pytest.mark.parametrize(("zarr_format", "shards"), [(2, None), (3, None), (3, (4, 4))])
def test_the_html_view_costs_no_store_request(zarr_format, shards):
    inner = MemoryStore()
    extra = {"shards": shards} if shards else {}
    z = zarrkit.group(store=inner, zarr_format=zarr_format).zeros(
        "obs/temp", shape=(8, 8), chunks=(2, 2), dtype="i2", **extra)
    z[:] = 1
    store = CountingStore(inner)
    opened = zarrkit.open_array(store, path="obs/temp", mode="r")
    store.reset()
    text = opened._repr_html_()
    assert sum(store.counts.values()) == 0, dict(store.counts)
    assert "<code>/obs/temp</code>" in text and "CountingStore" in text
    svg = re.search(r"<svg.*?</svg>", text).group(0)
    # 8 / 2: three inner boundaries across, three down, thin; shards of 4: one each way, thick
    assert svg.count(THIN) == 6
    assert svg.count(THICK) == (2 if shards else 0)
    assert ("16 chunks in 4 shards" if shards else "16 chunks") in text
    assert '<table class="zarrkit-info">' in text  # the info table is still there


def test_lines_are_capped_for_many_chunks():
    svg = grid_svg((100_000,), [[1] * 100_000])
    assert 0 < svg.count(THIN) <= MAX_LINES
    assert len(svg) < 4000
    z = zarrkit.zeros((100_000, 100_000), chunks=(10, 10), dtype="u1")
    assert z._repr_html_().count(THIN) <= 2 * MAX_LINES


def test_three_dimensions_are_a_box_and_more_are_its_last_three():
    box = grid_svg((4, 4, 4), [[2, 2]] * 3)
    assert box.count("<polygon") == 2  # the top and the side beside the front
    # a boundary along each dimension, drawn on the two faces that show it
    assert box.count(THIN) == 6
    five = grid_svg((2, 3, 4, 4, 4), [[1, 1], [1, 1, 1], [2, 2], [2, 2], [2, 2]])
    assert five.count(THIN) == 6 and "2 \u00d7 3" in five
    assert grid_svg((), []) == ""
    assert "<svg" not in zarrkit.zeros((), dtype="i4")._repr_html_()


def test_uneven_chunks_are_drawn_where_they_end():
    svg = grid_svg((10, 100), [[10], [10, 80, 10]])
    xs = sorted(float(x) for x in re.findall(r'<line x1="([\d.]+)"', svg))
    left = 10.0  # the picture's margin
    assert [round(x - left) for x in xs] == [16, 144]  # 10 and 90 of 100, on 160 pixels


def test_the_group_view_names_its_path_and_store():
    inner = MemoryStore()
    root = zarrkit.group(store=inner)
    root.create_group("obs").zeros("temp", shape=(4,))
    zarrkit.consolidate_metadata(inner)
    store = CountingStore(inner)
    for obs in (zarrkit.open_group(store, path="obs", mode="r"), zarrkit.open_consolidated(store, mode="r")["obs"]):
        store.reset()
        text = obs._repr_html_()
        assert text.startswith('<div class="zarrkit-node"><b>zarrkit.Group</b> <code>/obs</code> in CountingStore')
        assert sum(store.counts.values()) == 0, dict(store.counts)
    assert "<li>temp (4,) float64</li>" in text  # (members: from the consolidated metadata)
    # an array read through the consolidated metadata names the store too, not the snapshot
    assert "</code> in CountingStore" in obs["temp"]._repr_html_()
