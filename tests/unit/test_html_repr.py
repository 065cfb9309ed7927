"""What Jupyter shows: an array's info table, a group's members one level deep (and
``tree()``'s whole hierarchy) as collapsible nested lists, names escaped; checked by parsing
the HTML."""

from __future__ import annotations

import warnings
from html.parser import HTMLParser

import pytest

import zarrkit
import zarrkit.errors
from zarrkit.core.group import HTML_MEMBERS
from zarrkit.storage import CountingStore, MemoryStore


class Outline(HTMLParser):
    """The nesting of an HTML fragment: (depth of <ul>, text) per <li>/<summary>/<td> text,
    and whether every tag opened was closed."""

    def __init__(self):
        super().__init__()
        self.stack: list[str] = []
        self.items: list[tuple[int, str, str]] = []

    def handle_starttag(self, tag, attrs):
        self.stack.append(tag)

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, (tag, self.stack)
        self.stack.pop()

    def handle_data(self, data):
        if data.strip() and self.stack:
            self.items.append((self.stack.count("ul"), self.stack[-1], data))


def outline(fragment: str) -> list[tuple[int, str, str]]:
    parser = Outline()
    parser.feed(fragment)
    parser.close()
    assert parser.stack == []  # well formed
    return parser.items


def consolidated(group):
    """``group`` opened again through consolidated metadata: the view lists members then."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", zarrkit.errors.ZarrUserWarning)  # (v3's is not in the spec)
        zarrkit.consolidate_metadata(group.store, path=group.path)
    return zarrkit.open_consolidated(group.store, path=group.path, mode="r")


def group_outline(group) -> list[tuple[int, str, str]]:
    """The outline of a group's view after its header (which names the group and its store),
    the group opened through consolidated metadata."""
    items = outline(consolidated(group)._repr_html_())
    assert items[:2] == [(0, "b", "zarrkit.Group"), (0, "code", "/" + group.path)]
    assert items[2][1] == "div" and items[2][2].startswith(" in ")
    return items[3:]


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_a_group_shows_its_members_one_level_deep(zarr_format):
    g = zarrkit.group(zarr_format=zarr_format)
    g.create_group("foo").zeros("baz", shape=3, dtype="i2")
    g.create_group("quux").create_group("deep")
    g.zeros("a<b&c", shape=(2, 2))
    assert group_outline(g) == [
        (0, "summary", "/"), (1, "li", "a<b&c (2, 2) float64"), (1, "li", "foo"), (1, "li", "quux"),
    ]


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_tree_shows_the_whole_hierarchy_as_nested_lists(zarr_format):
    g = zarrkit.group(zarr_format=zarr_format)
    g.create_group("foo").zeros("baz", shape=3, dtype="i2")
    g.create_group("quux").create_group("deep")
    g.zeros("a<b&c", shape=(2, 2))
    items = outline(g.tree()._repr_html_())
    assert items == [
        (0, "summary", "/"),
        (1, "li", "a<b&c (2, 2) float64"),
        (1, "summary", "foo"),
        (2, "li", "baz (3,) int16"),
        (1, "summary", "quux"),
        (2, "summary", "deep"),
    ]
    # ``level`` limits the depth, as in the text tree: groups below are named, not opened
    # (zarr-python 3 counts a v3 group's levels from 0)
    assert outline(g.tree(level=1 if zarr_format == 2 else 0)._repr_html_()) == [
        (0, "summary", "/"), (1, "li", "a<b&c (2, 2) float64"), (1, "li", "foo"), (1, "li", "quux"),
    ]
    text = str(g.tree())
    assert all(label in text for _, _, label in items if label != "/")


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_without_consolidated_metadata_a_group_view_reads_nothing_and_says_how_to_list(zarr_format):
    inner = MemoryStore()
    zarrkit.group(store=inner, zarr_format=zarr_format).create_group("foo").zeros("baz", shape=3)
    store = CountingStore(inner)
    g = zarrkit.open_group(store, mode="r")
    store.reset()
    items = outline(g._repr_html_())
    assert sum(store.counts.values()) == 0, dict(store.counts)
    assert items[:2] == [(0, "b", "zarrkit.Group"), (0, "code", "/")]
    assert [text for _, _, text in items[3:]] == ["members not listed here (that reads the store): ",
                                                  ".tree()", " or ", ".members()", " lists them"]


def test_a_group_with_many_members_shows_the_first_and_how_many_more():
    g = zarrkit.group(zarr_format=3)
    for i in range(HTML_MEMBERS + 7):
        g.create_group(f"m{i:03d}")
    items = group_outline(g)
    assert len(items) == 1 + HTML_MEMBERS + 1
    assert items[1] == (1, "li", "m000") and items[HTML_MEMBERS] == (1, "li", f"m{HTML_MEMBERS - 1:03d}")
    assert items[-1] == (1, "li", "\u2026and 7 more")


def test_a_deep_hierarchy_renders_without_recursion():
    store = zarrkit.MemoryStore()
    path = ""
    for _ in range(1501):  # deeper than Python's recursion limit
        store[path + ".zgroup"] = b'{"zarr_format": 2}'
        path += "g/"
    group = zarrkit.open_group(store, mode="r")
    items = outline(group.tree()._repr_html_())
    assert len(items) == 1501 and items[-1] == (1500, "summary", "g")
    assert group_outline(group) == [(0, "summary", "/"), (1, "li", "g")]


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_an_array_shows_its_info_table_without_the_stored_sizes(zarr_format):
    z = zarrkit.zeros((4, 6), chunks=(2, 3), dtype="u1", zarr_format=zarr_format)
    items = outline(z._repr_html_())
    pairs = dict(zip([t for _, tag, t in items if tag == "th"], [t for _, tag, t in items if tag == "td"]))
    assert pairs["Shape"] == "(4, 6)"
    if zarr_format == 3:
        assert dict(z.info.items()) == pairs
    else:  # zarr-python 2's info, but for the stored sizes, which cost a listing
        info = dict(z.info.items())
        assert {k: v for k, v in info.items() if k not in ("No. bytes stored", "Storage ratio", "Chunks initialized")} == pairs
        assert info["Chunks initialized"] == "0/4"
