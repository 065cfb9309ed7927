"""Every "not found" error says it one way: ``No <kind> found in store <store> at path '<path>'``
(zarr-python's form, which its tests and xarray's match), then why it was looked for."""

from __future__ import annotations

import re

import pytest

import zarrkit
from zarrkit import errors

FORM = re.compile(r"^No (array|group|array or group|Zarr v[23] (array|group)) found in store (?P<store>.+) "
                  r"at path '(?P<path>[^']*)'( .+)?$")


def _v2_group():
    store: dict = {}
    zarrkit.group(store=store, zarr_format=2).zeros("a", shape=3)
    return store


CASES = {
    "open_group": (lambda tmp: zarrkit.open_group(str(tmp / "none.zarr"), mode="r"), errors.GroupNotFoundError,
                   "DirectoryStore(", ""),
    "open_array": (lambda tmp: zarrkit.open_array({}, path="x/y", mode="r"), errors.ArrayNotFoundError, "dict", "x/y"),
    "open": (lambda tmp: zarrkit.open({}, mode="r"), errors.NodeNotFoundError, "dict", ""),
    "Group.__getitem__": (lambda tmp: zarrkit.group(store=zarrkit.MemoryStore())["a/b"], errors.NodeNotFoundError,
                          "MemoryStore", "a/b"),
    "Array": (lambda tmp: zarrkit.Array(zarrkit.MemoryStore(), path="p"), errors.ArrayNotFoundError,
              "MemoryStore", "p"),
    "load": (lambda tmp: zarrkit.load({}, path="q"), errors.NodeNotFoundError, "dict", "q"),
    "consolidate_metadata": (lambda tmp: zarrkit.consolidate_metadata(zarrkit.MemoryStore(), path="g"),
                             errors.NodeNotFoundError, "MemoryStore", "g"),
    "another format": (lambda tmp: zarrkit.open_group(_v2_group(), mode="r", zarr_format=3),
                       errors.GroupNotFoundError, "dict", ""),
    "another format, array": (lambda tmp: zarrkit.open_array(_v2_group(), path="a", mode="r", zarr_format=3),
                              errors.ArrayNotFoundError, "dict", "a"),
}


@pytest.mark.parametrize("case", CASES)
def test_not_found_messages_have_one_form_naming_the_store_and_the_path(case, tmp_path):
    action, error, store, path = CASES[case]
    with pytest.raises(error) as info:
        action(tmp_path)
    assert isinstance(info.value, FileNotFoundError)
    m = FORM.match(str(info.value))
    assert m, str(info.value)
    assert store in m.group("store") and m.group("path") == path, str(info.value)


def test_the_fragments_peer_suites_match_are_kept(tmp_path):
    # xarray's test_non_existent_store and zarr-python's group tests match these words
    with pytest.raises(FileNotFoundError, match="No group found in store"):
        zarrkit.open_group(str(tmp_path / "absent"), mode="r")
    with pytest.raises(errors.ArrayNotFoundError, match="No array found in store"):
        zarrkit.open_array({}, mode="r")
