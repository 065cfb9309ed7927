"""Operations that change a zip file finish, and those a store cannot finish write nothing.

A zip file changed in mode ``'a'`` can now drop members (a deleted key, or the older member of
a key written again, leaves the central directory), so ``zarrkit convert data.zip``, a shrink,
``del group[name]``, an array overwritten in place, ``zarrkit rm`` of a node and a second
consolidation all work on a zip file, and leave every name listed once (a zip file listing a
name twice is ambiguous: readers disagree on which member counts).

A store that cannot delete (zarr-python's own ``ZipStore``, through zarrkit's adapter) or is
read-only makes ``convert`` refuse before its first write, saying why and what to do instead.
"""

from __future__ import annotations

import contextlib
import io
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest

import zarrkit
from zarrkit.cli import main
from zarrkit.errors import ReadOnlyError, StoreOperationNotSupported
from zarrkit.storage import ZipStore

pytestmark = pytest.mark.filterwarnings("ignore:ZipStore .* is written again:UserWarning")

A = np.arange(40, dtype="<i4").reshape(8, 5)


def names(path: Path) -> list[str]:
    with zipfile.ZipFile(path) as zf:
        assert zf.testzip() is None
        return zf.namelist()


def build(path: Path, consolidated: bool = False) -> None:
    with ZipStore(path, mode="w") as store:
        root = zarrkit.group(store, zarr_format=2)
        root.attrs["title"] = "t"
        root.array("a", A, chunks=(2, 5))
        root.create_group("g").array("b", np.linspace(0, 1, 6), chunks=(3,))
        if consolidated:
            zarrkit.consolidate_metadata(store)


def cli(*args: object) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue() + err.getvalue()


def test_zarrkit_convert_of_a_zip_file_finishes_and_a_rerun_changes_nothing(tmp_path):
    path = tmp_path / "data.zip"
    build(path, consolidated=True)
    code, out = cli("convert", path, "--to", "3")
    assert code == 0, out
    listed = names(path)
    assert len(listed) == len(set(listed))
    assert not [n for n in listed if n.rsplit("/", 1)[-1] in (".zarray", ".zgroup", ".zattrs", ".zmetadata")]
    size = path.stat().st_size
    with ZipStore(path, mode="r") as store:
        root = zarrkit.open_consolidated(store, mode="r")
        assert root.zarr_format == 3 and root.attrs["title"] == "t"
        np.testing.assert_array_equal(root["a"][...], A)
    code, out = cli("convert", path, "--to", "3")
    assert code == 0 and "already in Zarr v3" in out
    assert path.stat().st_size == size  # nothing appended
    code, out = cli("convert", path, "--to", "2")  # and back
    assert code == 0, out
    with ZipStore(path, mode="r") as store:
        np.testing.assert_array_equal(zarrkit.open_array(store, path="a", mode="r")[...], A)
        assert "zarr.json" not in store


def test_shrinking_deleting_and_overwriting_in_a_zip_file(tmp_path):
    path = tmp_path / "data.zip"
    build(path)
    with ZipStore(path, mode="a") as store:
        zarrkit.open_array(store, path="a", mode="r+").resize(3, 5)
        del zarrkit.open_group(store, mode="r+")["g"]
        zarrkit.open_array(store, path="new", mode="w", shape=(4,), chunks=(2,), dtype="u1")[:] = 7
        zarrkit.open_array(store, path="new", mode="w", shape=(3,), chunks=(3,), dtype="u1")[:] = 9
    listed = names(path)
    assert len(listed) == len(set(listed))
    assert not [n for n in listed if n.startswith("g/") or n in ("a/2.0", "a/3.0", "new/1")]
    with ZipStore(path, mode="r") as store:
        root = zarrkit.open_group(store, mode="r")
        assert sorted(root) == ["a", "new"]
        np.testing.assert_array_equal(root["a"][...], A[:3])
        assert root["new"][...].tolist() == [9, 9, 9]
        root = None
    # grown again, the chunks shrunk away read as the fill value, not as what they held
    with ZipStore(path, mode="a") as store:
        z = zarrkit.open_array(store, path="a", mode="r+")
        z.resize(8, 5)
        assert (z[4:] == 0).all()


def test_zarrkit_rm_of_a_node_in_a_zip_file(tmp_path):
    path = tmp_path / "data.zip"
    build(path)
    code, out = cli("rm", f"{path}/g", "--yes")
    assert code == 0, out
    assert not [n for n in names(path) if n.startswith("g/")]
    with ZipStore(path, mode="r") as store:
        assert list(zarrkit.open_group(store, mode="r")) == ["a"]


def test_consolidating_and_attributes_again_keep_each_name_once(tmp_path):
    zarr = pytest.importorskip("zarr")
    path = tmp_path / "data.zip"
    build(path, consolidated=True)
    with ZipStore(path, mode="a") as store:
        zarrkit.open_group(store, mode="r+")["a"].attrs["units"] = "m"
        zarrkit.consolidate_metadata(store)
    assert cli("consolidate", path)[0] == 0
    listed = names(path)
    assert len(listed) == len(set(listed)), sorted(listed)
    # zarr-python, which reads the zip file its own way, sees the newest documents
    zs = zarr.storage.ZipStore(path, mode="r")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            root = zarr.open_consolidated(zs, mode="r", zarr_format=2)
        assert root["a"].attrs["units"] == "m"
        np.testing.assert_array_equal(root["a"][...], A)
    finally:
        zs.close()


def test_convert_on_a_store_that_cannot_delete_writes_nothing(tmp_path):
    zarr = pytest.importorskip("zarr")
    path = tmp_path / "zp.zip"
    zs = zarr.storage.ZipStore(path, mode="w")
    g = zarr.open_group(zs, mode="w", zarr_format=2)
    g.create_array("x", shape=(4,), chunks=(2,), dtype="i4")[:] = 1
    zs.close()
    before = path.read_bytes()
    zs = zarr.storage.ZipStore(path, mode="a")
    try:
        with pytest.raises(StoreOperationNotSupported) as info:
            zarrkit.convert(zs, zarr_format=3)
    finally:
        zs.close()
    message = str(info.value)
    assert "zp.zip" in message and "cannot delete" in message and "nothing was written" in message
    assert "zarrkit cp" in message and "--zarr-format 3" in message
    assert path.read_bytes() == before


def test_convert_on_a_read_only_store_says_what_to_do(tmp_path):
    src = tmp_path / "data.zarr"
    zarrkit.array(A, chunks=(2, 5), store=str(src), zarr_format=2)
    store = zarrkit.DirectoryStore(src, read_only=True)
    with pytest.raises(ReadOnlyError) as info:
        zarrkit.convert(store, zarr_format=3)
    message = str(info.value)
    assert "data.zarr" in message and "read-only" in message and "zarrkit cp" in message
    assert sorted(p.name for p in src.iterdir()) == [".zarray", ".zattrs", "0.0", "1.0", "2.0", "3.0"]
