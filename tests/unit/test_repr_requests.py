"""What displaying a node costs: ``repr`` reads nothing from the store, in either format;
Jupyter's HTML views read nothing either (a group's members are listed only from
consolidated metadata); the descriptions that do read (``info``, ``nbytes_stored``...) say so."""

from __future__ import annotations

import re
import warnings

import pytest
import zarr as zarr3  # zarr-python 3.4: the oracle for v3 reprs

import zarrkit
from zarrkit.core.group import HTML_MEMBERS
from zarrkit.errors import ZarrUserWarning
from zarrkit.storage import CountingStore, MemoryStore


def _hierarchy(zarr_format: int, n_groups: int = 3, consolidated: bool = False) -> tuple[CountingStore, zarrkit.Group]:
    inner = MemoryStore()
    root = zarrkit.group(store=inner, zarr_format=zarr_format)
    for i in range(n_groups):
        root.create_group(f"g{i:04d}")
    big = root.zeros("sub/big", shape=(2000,), chunks=(1,), dtype="f4")
    big[:] = 1  # 2,000 stored chunks: a repr that listed them would show
    store = CountingStore(inner)
    if consolidated:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ZarrUserWarning)  # (v3's is not in the spec)
            zarrkit.consolidate_metadata(inner)
        return store, zarrkit.open_consolidated(store, mode="r")
    return store, zarrkit.open_group(store, mode="r")


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_repr_reads_nothing(zarr_format):
    store, root = _hierarchy(zarr_format)
    sub, big = root["sub"], root["sub/big"]
    uncached = zarrkit.open_array(store, path="sub/big", mode="r", cache_metadata=False)
    store.reset()
    texts = [repr(root), repr(sub), repr(big), repr(uncached), str(big), str(root)]
    assert sum(store.counts.values()) == 0, dict(store.counts)
    if zarr_format == 2:  # zarr-python 2's forms, with zarrkit's public class names
        assert texts[:4] == [
            "<zarrkit.Group '/' read-only>",
            "<zarrkit.Group '/sub' read-only>",
            "<zarrkit.Array '/sub/big' (2000,) float32 read-only>",
            "<zarrkit.Array '/sub/big' (2000,) float32 read-only>",
        ]
    else:
        url = re.fullmatch(r"<Group (memory://\d+)>", texts[0]).group(1)
        assert texts[1:3] == [f"<Group {url}/sub>", f"<Array {url}/sub/big shape=(2000,) dtype=float32>"]


def test_v2_reprs_have_zarr_python_2s_layout():
    # zarr-python 2.18's Array.__repr__: "<{module}.{class}" + " {name!r}" when the array has a
    # name + " {shape} {dtype}" + " read-only" when it is + ">"; its root array has no name
    z = zarrkit.zeros((10, 10), zarr_format=2)
    assert repr(z) == "<zarrkit.Array (10, 10) float64>"
    g = zarrkit.group(zarr_format=2)
    assert repr(g) == "<zarrkit.Group '/'>"
    assert repr(g.zeros("x", shape=3, dtype="i2")) == "<zarrkit.Array '/x' (3,) int16>"


def test_v3_reprs_are_zarr_python_3s(tmp_path):
    where = tmp_path / "data.zarr"
    root = zarrkit.open_group(str(where), mode="w", zarr_format=3)
    root.create_group("sub").create_array("a", shape=(4, 5), dtype="int32")
    theirs = zarr3.open_group(str(where), mode="r")
    ours = zarrkit.open_group(str(where), mode="r")
    assert repr(ours) == repr(theirs)
    assert repr(ours["sub"]) == repr(theirs["sub"])
    assert repr(ours["sub/a"]) == repr(theirs["sub/a"])


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("consolidated", [False, True])
def test_html_of_a_big_group_reads_nothing(zarr_format, consolidated):
    store, root = _hierarchy(zarr_format, n_groups=1800, consolidated=consolidated)
    store.reset()
    text = root._repr_html_()
    assert sum(store.counts.values()) == 0, dict(store.counts)
    if consolidated:  # the members, from the consolidated metadata: the first 50 of them
        assert text.count("<li>") == HTML_MEMBERS + 1
        assert "\u2026and 1751 more" in text  # 1,800 groups and "sub", 50 shown
    else:
        assert "<li>" not in text and ".tree()" in text
    assert len(text) < 5000


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_html_shows_arrays_with_shape_and_no_more_line_when_all_fit(zarr_format):
    store, root = _hierarchy(zarr_format, consolidated=True)
    sub = root["sub"]
    store.reset()
    text = sub._repr_html_()
    assert "<li>big (2000,) float32</li>" in text and "more" not in text
    assert sum(store.counts.values()) == 0, dict(store.counts)  # no chunk of "big" either


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_array_html_reads_nothing(zarr_format):
    store, root = _hierarchy(zarr_format)
    big = root["sub/big"]
    store.reset()
    text = big._repr_html_()
    assert sum(store.counts.values()) == 0
    assert "Chunks initialized" not in text and "No. bytes stored" not in text


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_info_says_what_it_reads(zarr_format):
    store, root = _hierarchy(zarr_format)
    big = root["sub/big"]
    store.reset()
    report = big.info  # making the report reads nothing; showing it may
    assert sum(store.counts.values()) == 0
    assert "(2000,)" in str(report)
    text = str(big.info_complete())
    assert "2000" in text and store.counts["list"] >= 1


@pytest.mark.parametrize(
    "member",
    [zarrkit.Array.info, zarrkit.Array.info_complete, zarrkit.Array.info_items, zarrkit.Array.nbytes_stored,
     zarrkit.Array.nchunks_initialized, zarrkit.Array.nshards_initialized, zarrkit.Group.info,
     zarrkit.Group.info_complete, zarrkit.Group.info_items],
    ids=lambda m: getattr(m, "__qualname__", None) or m.fget.__qualname__,
)
def test_descriptions_that_read_the_store_say_so(member):
    doc = " ".join((member.__doc__ or member.fget.__doc__).split())
    assert re.search(r"reads (the|nothing)", doc, re.IGNORECASE) and "store" in doc, doc
