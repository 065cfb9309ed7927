"""Hostile depth: hierarchies far deeper than Python's recursion limit (1,000 frames).

The hierarchies are written as JSON documents straight into the store.  The deepest (10,000
levels) lives in :class:`IndexedStore`, a dict store whose directory listing costs the size of
its answer (a listing that scans every key makes any walk of 10,000 levels quadratic, which is
a matter of that store, not of the walk); keys there are 20,000 characters long.  The command
line runs on a zip file (a directory store stops at PATH_MAX, 4,096 bytes, about 2,000 levels).
"""

from __future__ import annotations

import contextlib
import io
import json
import sys

import numpy as np
import pytest

import zarrkit
from zarrkit.cli import main
from zarrkit.metadata.walk import iter_nodes
from zarrkit.storage.base import Store

pytestmark = pytest.mark.slow

GROUP_V2 = b'{"zarr_format": 2}'
GROUP_V3 = json.dumps({"zarr_format": 3, "node_type": "group", "attributes": {}}).encode()


class IndexedStore(Store):
    """Keys in a dict, plus each directory's entries, kept up to date on every change."""

    def __init__(self) -> None:
        self.data: dict[str, bytes] = {}
        self.entries: dict[str, set[str]] = {}

    def _get(self, key, byte_range):
        value = self.data.get(key)
        return value if value is None or byte_range is None else byte_range.slice(value)

    def _set(self, key, value):
        if key not in self.data:
            d, _, name = key.rpartition("/")
            while True:  # a directory's entry in its parent appears with its first entry
                names = self.entries.setdefault(d, set())
                first = not names
                names.add(name)
                if not first or not d:
                    break
                d, _, name = d.rpartition("/")
        self.data[key] = bytes(value)

    def _delete(self, key):
        if self.data.pop(key, None) is None:
            return
        d, _, name = key.rpartition("/")
        while True:  # and goes with its last
            names = self.entries[d]
            names.discard(name)
            if names or not d:
                break
            del self.entries[d]
            d, _, name = d.rpartition("/")

    def list_prefix(self, prefix):
        return iter([k for k in list(self.data) if k.startswith(prefix)])

    def list_dir(self, prefix=""):
        return sorted(self.entries.get(prefix.rstrip("/"), ()))


def chain(depth: int) -> str:
    return "/".join(["g"] * depth)


def build(store: Store, depth: int, zarr_format: int) -> str:
    """``depth`` nested groups (``g/g/...``) with a small array at the bottom; its path."""
    path = ""
    for _ in range(depth):
        if zarr_format == 3:
            store.set(f"{path}/zarr.json" if path else "zarr.json", GROUP_V3)
        else:
            store.set(f"{path}/.zgroup" if path else ".zgroup", GROUP_V2)
        path = f"{path}/g" if path else "g"
    # the array's chunks keep v2 keys in both formats, so it converts either way
    zarrkit.zeros((4,), chunks=(2,), dtype="i2", store=store, path=path, zarr_format=2)[:] = 7
    if zarr_format == 3:
        zarrkit.convert(store, zarr_format=3, path=path)
    return path


def test_walk_and_consolidate_10000_levels():
    depth = 10_000
    store = IndexedStore()
    bottom = build(store, depth, 3)
    assert sys.getrecursionlimit() < depth
    nodes = [(p, kind) for p, kind, _, _ in iter_nodes(store, "")]
    assert len(nodes) == depth + 1 and nodes[-1] == (bottom, "array")
    root = zarrkit.consolidate_metadata(store)
    cm = json.loads(store.get("zarr.json"))["consolidated_metadata"]["metadata"]
    assert len(cm) == depth and cm[bottom]["node_type"] == "array"
    np.testing.assert_array_equal(root[bottom][...], [7, 7, 7, 7])


def test_convert_and_copy_3000_levels():
    depth = 3_000
    store = IndexedStore()
    bottom = build(store, depth, 2)
    zarrkit.consolidate_metadata(store)
    zarrkit.convert(store, zarr_format=3)
    assert not [k for k in store.data if k.rsplit("/", 1)[-1] in (".zgroup", ".zarray", ".zmetadata")]
    assert len(json.loads(store.get("zarr.json"))["consolidated_metadata"]["metadata"]) == depth
    zarrkit.convert(store, zarr_format=2)
    assert not [k for k in store.data if k.endswith("zarr.json")]
    assert len(json.loads(store.get(".zmetadata"))["metadata"]) == 2 * depth + 2  # .zgroup and .zattrs per group, .zarray and .zattrs
    np.testing.assert_array_equal(zarrkit.open_consolidated(store)[bottom][...], [7, 7, 7, 7])
    dest = IndexedStore()
    copied, skipped, _ = zarrkit.copy_all(zarrkit.open_group(store, mode="r"), zarrkit.group(dest, zarr_format=3))
    assert (copied, skipped) == (depth, 0)
    np.testing.assert_array_equal(zarrkit.open_array(dest, path=bottom, mode="r")[...], [7, 7, 7, 7])


def cli(*args: object) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = main([str(a) for a in args])
    return code, out.getvalue()


def test_command_line_on_a_deep_zip_store(tmp_path):
    # the command line opens stores by path; a zip file holds keys of any length (a directory
    # store stops at PATH_MAX).  Stores reached by path cost more per level of depth (a zip
    # file lists every member for every listing), so the depth is kept moderate and the
    # recursion limit lowered below it instead: no walk may use a frame per level
    depth = 400
    src = tmp_path / "deep.zip"
    with contextlib.closing(zarrkit.ZipStore(src, mode="w")) as store:
        bottom = build(store, depth, 2)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(300)
    try:
        for args in (["consolidate", src], ["verify", src], ["cp", src, tmp_path / "copy.zip", "--zarr-format", "3"],
                     ["verify", tmp_path / "copy.zip"]):
            code, out = cli(*args)
            assert code == 0, (args[0], out[-300:])
    finally:
        sys.setrecursionlimit(limit)
    root = zarrkit.open_consolidated(zarrkit.ZipStore(tmp_path / "copy.zip", mode="r"))
    assert root.zarr_format == 3
    np.testing.assert_array_equal(root[bottom][...], [7, 7, 7, 7])


def test_walk_visits_a_path_once_whatever_the_listing():
    class Looping(IndexedStore):
        """Lists every group as a member of itself too (``''``, ``'.'``) and twice."""

        def list_dir(self, prefix=""):
            names = super().list_dir(prefix)
            return names + names + ["", ".", ".."]

    store = Looping()
    bottom = build(store, 50, 3)
    nodes = [p for p, _, _, _ in iter_nodes(store, "")]
    assert len(nodes) == len(set(nodes)) == 51 and nodes[-1] == bottom
    zarrkit.consolidate_metadata(store)
    assert len(json.loads(store.get("zarr.json"))["consolidated_metadata"]["metadata"]) == 50
