"""tools/zarr3_suite.py tells the tests that use zarr-python's internals from its test sources."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
import zarr3_suite

SOURCE = '''
from __future__ import annotations
from zarr.core.sync import sync
from zarr.core.buffer import default_buffer_prototype
from zarr.storage._utils import normalize_path
from zarr.core.common import ZarrFormat
import zarr
import pytest

def _helper(store):
    return store._store

def _plain(x):
    return x + 1

def test_public(tmp_path):
    zarr.create_array(str(tmp_path), shape=(1,), dtype="i1")

def test_public_name_reached_through_core():
    default_buffer_prototype()

def test_annotation_only(fmt: ZarrFormat) -> ZarrFormat:
    return _plain(1)

def test_private_function():
    sync(None)

def test_private_module_name():
    normalize_path("a")

def test_private_attribute(arr):
    arr._async_array

def test_through_a_helper(store):
    _helper(store)

def test_patched_path(mocker):
    mocker.patch("zarr.codecs.sharding._ShardIndex.get")

@pytest.mark.parametrize("p", [zarr.core.group.GroupMetadata])
def test_parameter(p):
    pass

class TestKind:
    def test_in_class(self):
        sync(None)
'''


def test_internal_tests_follow_the_rules(tmp_path):
    pytest.importorskip("zarr")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text(textwrap.dedent(SOURCE))
    found = zarr3_suite.internal_tests(tmp_path, ["tests/test_x.py"])
    names = {name for _, name in found}
    assert names == {"test_private_function", "test_private_module_name", "test_private_attribute",
                     "test_through_a_helper", "test_patched_path", "test_parameter", "test_in_class"}
    assert ("tests.test_x.TestKind", "test_in_class") in found
    assert zarr3_suite.is_internal("tests.test_x::test_parameter[a-b]", found)
    assert not zarr3_suite.is_internal("tests.test_x::test_public", found)
