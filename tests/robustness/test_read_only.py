"""Read-only access refuses every write, and store paths never escape the store root.

* Arrays and groups opened with ``mode='r'`` (DirectoryStore, MemoryStore, ZipStore) refuse
  every write path with :class:`zarrkit.errors.ReadOnlyError`, and not one byte of the store
  changes (all keys and values are compared before and after).
* Keys and node names with ``..`` are refused with :class:`~zarrkit.errors.InvalidPathError`;
  absolute keys and keys with backslashes too; a symlink inside a DirectoryStore pointing
  outside its root must not expose the outside files.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

import zarrkit
from zarrkit.errors import InvalidPathError, ReadOnlyError, ZarrkitError
from zarrkit.storage.wrappers import ReadOnlyStore


def _populate(store, fmt: int) -> None:
    root = zarrkit.group(store, zarr_format=fmt)
    root.attrs["title"] = "root"
    a = root.zeros("a", shape=(6, 5), chunks=(4, 4), dtype="i4")
    a[...] = np.arange(30).reshape(6, 5)
    a.attrs.update({"k": 1, "units": "m"})
    sub = root.create_group("g")
    sub.attrs["k"] = 2
    b = sub.zeros("b", shape=(4,), chunks=(2,), dtype="f8")
    b[...] = 1.5


class Backend:
    """Makes a populated store and opens it read-only; snapshots every stored byte."""

    def __init__(self, kind: str, fmt: int, tmp_path: Path):
        self.kind = kind
        self.tmp = tmp_path
        if kind == "directory":
            self.path = tmp_path / "data.zarr"
            _populate(zarrkit.DirectoryStore(self.path), fmt)
        elif kind == "memory":
            self.mem = zarrkit.MemoryStore()
            _populate(self.mem, fmt)
        else:
            self.path = tmp_path / "data.zip"
            mem = zarrkit.MemoryStore()
            _populate(mem, fmt)
            store = zarrkit.ZipStore(self.path, mode="w")
            for k in sorted(mem):  # each key written once (rewrites would warn and duplicate)
                store[k] = mem[k]
            store.close()

    def open_target(self):
        """What ``zarrkit.open(..., mode='r')`` is given."""
        if self.kind == "directory":
            return str(self.path)
        if self.kind == "memory":
            return self.mem
        return zarrkit.ZipStore(self.path, mode="r")

    def read_only_store(self):
        """A store object that is itself read-only."""
        if self.kind == "directory":
            return zarrkit.DirectoryStore(self.path, read_only=True)
        if self.kind == "memory":
            return ReadOnlyStore(self.mem)
        return zarrkit.ZipStore(self.path, mode="r")

    def snapshot(self) -> dict[str, bytes]:
        if self.kind == "memory":
            return {k: bytes(self.mem[k]) for k in self.mem}
        if self.kind == "zip":
            return {"<zip file>": self.path.read_bytes()}
        # every file below the root, hidden or temporary ones included
        out = {}
        for dirpath, dirnames, filenames in os.walk(self.path):
            for d in dirnames:
                out[os.path.relpath(os.path.join(dirpath, d), self.path) + "/"] = b"<dir>"
            for f in filenames:
                p = os.path.join(dirpath, f)
                out[os.path.relpath(p, self.path)] = Path(p).read_bytes()
        return out


BACKENDS = ["directory", "memory", "zip"]


def _array_writes(z):
    """Every way of writing to an array (name, callable)."""
    shape = z.shape
    ones = np.ones(shape, dtype=z.dtype)
    return [
        ("z[...] = v", lambda: z.__setitem__(Ellipsis, 1)),
        ("z[0, 0] = v", lambda: z.__setitem__((0, 0), 1)),
        ("z[1:3] = array", lambda: z.__setitem__(slice(1, 3), ones[1:3])),
        ("set_basic_selection", lambda: z.set_basic_selection((slice(0, 2), slice(None)), 2)),
        ("set_orthogonal_selection", lambda: z.set_orthogonal_selection(([0, 2], [1, 3]), 3)),
        ("set_coordinate_selection", lambda: z.set_coordinate_selection(([0, 2], [1, 3]), 4)),
        ("set_mask_selection", lambda: z.set_mask_selection(np.ones(shape, dtype=bool), 5)),
        ("set_block_selection", lambda: z.set_block_selection((0, 0), 6)),
        ("oindex[...] =", lambda: z.oindex.__setitem__(([0], [0]), 7)),
        ("vindex[...] =", lambda: z.vindex.__setitem__(([0], [0]), 8)),
        ("blocks[...] =", lambda: z.blocks.__setitem__((0, 0), 9)),
        ("resize", lambda: z.resize(10, 10)),
        ("resize (shrink)", lambda: z.resize(1, 1)),
        ("shape =", lambda: setattr(z, "shape", (3, 3))),
        ("append", lambda: z.append(np.ones((2, shape[1]), dtype=z.dtype))),
        ("attrs[k] =", lambda: z.attrs.__setitem__("new", 1)),
        ("attrs[k] = (existing)", lambda: z.attrs.__setitem__("k", 99)),
        ("attrs.update", lambda: z.attrs.update({"new": 1})),
        ("attrs.put", lambda: z.attrs.put({})),
        ("del attrs[k]", lambda: z.attrs.__delitem__("k")),
        ("attrs.pop", lambda: z.attrs.pop("k")),
        ("attrs.clear", lambda: z.attrs.clear()),
        ("attrs.setdefault", lambda: z.attrs.setdefault("other", 1)),
    ]


def _group_writes(g):
    return [
        ("create_group", lambda: g.create_group("new")),
        ("create_group (nested)", lambda: g.create_group("new/deeper")),
        ("create_groups", lambda: g.create_groups("n1", "n2")),
        ("require_group (missing)", lambda: g.require_group("new")),
        ("require_group (overwrite)", lambda: g.require_group("g", overwrite=True)),
        ("zeros", lambda: g.zeros("new", shape=(3,))),
        ("ones", lambda: g.ones("new", shape=(3,))),
        ("full", lambda: g.full("new", 1, shape=(3,))),
        ("empty", lambda: g.empty("new", shape=(3,))),
        ("array", lambda: g.array("new", np.arange(3))),
        ("create", lambda: g.create("new", shape=(3,))),
        ("create_dataset", lambda: g.create_dataset("new", shape=(3,))),
        ("create_dataset (overwrite)", lambda: g.create_dataset("a", shape=(3,), overwrite=True)),
        ("require_dataset (missing)", lambda: g.require_dataset("new", shape=(3,))),
        ("zeros_like", lambda: g.zeros_like("new", np.arange(3))),
        ("g[name] = data", lambda: g.__setitem__("new", np.arange(3))),
        ("g[existing] = data", lambda: g.__setitem__("a", np.arange(3))),
        ("del g[array]", lambda: g.__delitem__("a")),
        ("del g[group]", lambda: g.__delitem__("g")),
        ("move", lambda: g.move("a", "c")),
        ("move (into subgroup)", lambda: g.move("a", "g/a2")),
        ("attrs[k] =", lambda: g.attrs.__setitem__("new", 1)),
        ("attrs.update", lambda: g.attrs.update({"new": 1})),
        ("attrs.put", lambda: g.attrs.put({})),
        ("del attrs[k]", lambda: g.attrs.__delitem__("title")),
    ]


def _assert_all_refused(writes, before, backend) -> None:
    for name, fn in writes:
        with pytest.raises(ReadOnlyError) as info:
            fn()
        assert isinstance(info.value, PermissionError), name
        assert backend.snapshot() == before, f"{name} changed the store"


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("kind", BACKENDS)
def test_read_only_array_refuses_every_write(kind, fmt, tmp_path):
    backend = Backend(kind, fmt, tmp_path)
    before = backend.snapshot()
    root = zarrkit.open(backend.open_target(), mode="r")
    arrays = [
        root["a"],  # member of a read-only group
        zarrkit.open(backend.open_target(), mode="r", path="a"),
        zarrkit.open_array(backend.open_target(), mode="r", path="a"),
        root["g"]["b"],
    ]
    for z in arrays:
        assert z.read_only
        writes = _array_writes(z) if z.ndim == 2 else [
            ("z[...] = v", lambda z=z: z.__setitem__(Ellipsis, 1)),
            ("append", lambda z=z: z.append(np.ones(2))),
            ("resize", lambda z=z: z.resize(8)),
            ("attrs[k] =", lambda z=z: z.attrs.__setitem__("x", 1)),
        ]
        _assert_all_refused(writes, before, backend)
    # views of a read-only array are read-only too
    v = arrays[0].view(dtype="u4")
    _assert_all_refused([("view[...] =", lambda: v.__setitem__(Ellipsis, 1))], before, backend)
    # and the data is still all readable
    np.testing.assert_array_equal(arrays[0][...], np.arange(30).reshape(6, 5))


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("kind", BACKENDS)
def test_read_only_group_refuses_every_write(kind, fmt, tmp_path):
    backend = Backend(kind, fmt, tmp_path)
    before = backend.snapshot()
    groups = [
        zarrkit.open(backend.open_target(), mode="r"),
        zarrkit.open_group(backend.open_target(), mode="r"),
        zarrkit.open(backend.open_target(), mode="r")["g"],
    ]
    for g in groups:
        assert g.read_only
        _assert_all_refused(_group_writes(g), before, backend)
    assert sorted(groups[0]) == ["a", "g"]


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("kind", BACKENDS)
def test_consolidate_metadata_on_read_only_store_is_refused(kind, fmt, tmp_path):
    backend = Backend(kind, fmt, tmp_path)
    before = backend.snapshot()
    with pytest.raises(ReadOnlyError):
        zarrkit.consolidate_metadata(backend.read_only_store())
    assert backend.snapshot() == before


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("kind", BACKENDS)
def test_read_only_store_object_refuses_raw_writes(kind, fmt, tmp_path):
    backend = Backend(kind, fmt, tmp_path)
    before = backend.snapshot()
    store = backend.read_only_store()
    key = ".zattrs" if fmt == 2 else "zarr.json"
    writes = [
        ("store[key] = v", lambda: store.__setitem__(key, b"{}")),
        ("store.set", lambda: store.set("new", b"x")),
        ("del store[key]", lambda: store.__delitem__(key)),
        ("store.delete", lambda: store.delete(key)),
        ("store.delete_prefix", lambda: store.delete_prefix("a/")),
        ("store.rmdir", lambda: store.rmdir("a")),
        ("store.clear", lambda: store.clear()),
    ]
    _assert_all_refused(writes, before, backend)
    # a read-write open of a read-only store gives read-only nodes, which refuse writes
    z = zarrkit.open_array(store, path="a")
    assert z.read_only
    _assert_all_refused(_array_writes(z), before, backend)
    g = zarrkit.open_group(store, mode="r+")
    assert g.read_only
    _assert_all_refused(_group_writes(g), before, backend)
    for mode in ("w", "w-"):
        try:
            zarrkit.open(store, mode=mode, shape=(3,))
        except ZarrkitError as exc:
            assert isinstance(exc, (ReadOnlyError, zarrkit.errors.NodeExistsError)), (mode, exc)
        assert backend.snapshot() == before, f"open(mode={mode!r}) changed the store"


def test_read_only_consolidated_hierarchy_refuses_writes(tmp_path):
    for fmt in (2, 3):
        backend = Backend("memory", fmt, tmp_path)
        zarrkit.consolidate_metadata(backend.mem)
        before = backend.snapshot()
        g = zarrkit.open_consolidated(backend.mem, mode="r")
        assert g.read_only
        _assert_all_refused(_group_writes(g), before, backend)
        _assert_all_refused(_array_writes(g["a"]), before, backend)


# =============================================================================================
# path safety

BAD_KEYS = [
    "../x", "a/../../x", "..", ".", "a/./b", "/abs", "/etc/passwd", "a\\b", "..\\x",
    "C:\\x", "C:/x", "a//b", "", "a/\x00b",
]


@pytest.mark.parametrize("kind", BACKENDS)
def test_store_keys_that_escape_are_refused(kind, tmp_path):
    backend = Backend(kind, 2, tmp_path)
    stores = [backend.read_only_store()]
    if kind != "zip":
        stores.append(zarrkit.DirectoryStore(backend.path) if kind == "directory" else backend.mem)
    for store in stores:
        for key in BAD_KEYS:
            for name, fn in [
                ("get", lambda: store.get(key)),
                ("getitem", lambda: store[key]),
                ("set", lambda: store.set(key, b"x")),
                ("setitem", lambda: store.__setitem__(key, b"x")),
                ("delete", lambda: store.delete(key)),
                ("delitem", lambda: store.__delitem__(key)),
                ("getsize", lambda: store.getsize(key)),
                ("delete_prefix", lambda: store.delete_prefix(key + "/")),
            ]:
                if name == "delete_prefix" and not key:
                    continue  # '/' is the root prefix, not an escaping one
                if store.read_only and name in ("set", "setitem", "delete", "delitem", "delete_prefix"):
                    with pytest.raises((InvalidPathError, ReadOnlyError)):
                        fn()
                    continue
                with pytest.raises(InvalidPathError):
                    fn()
            try:
                assert key not in store
            except InvalidPathError:
                pass
            if key:
                if isinstance(store, zarrkit.DirectoryStore):  # listing a file-system path
                    with pytest.raises(InvalidPathError):
                        list(store.list_prefix(key + "/"))
                else:  # in-memory/zip listings only filter names: nothing to escape to
                    assert list(store.list_prefix(key + "/")) == []
    assert not (tmp_path / "x").exists()


NODE_NAMES_WITH_DOTDOT = ["..", "../x", "a/../../x", "..\\x", "g/../../x", "./x", "a/./b", "x/.."]


@pytest.mark.parametrize("fmt", [2, 3])
def test_node_names_with_dot_segments_are_refused(fmt, tmp_path):
    path = tmp_path / "root" / "data.zarr"
    backend_store = zarrkit.DirectoryStore(path)
    _populate(backend_store, fmt)
    g = zarrkit.open_group(str(path), mode="r+")
    before = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*"))
    for name in NODE_NAMES_WITH_DOTDOT:
        for what, fn in [
            ("create_group", lambda: g.create_group(name)),
            ("require_group", lambda: g.require_group(name)),
            ("zeros", lambda: g.zeros(name, shape=(2,))),
            ("array", lambda: g.array(name, np.arange(2))),
            ("getitem", lambda: g[name]),
            ("delitem", lambda: g.__delitem__(name)),
            ("move src", lambda: g.move(name, "elsewhere")),
            ("move dst", lambda: g.move("a", name)),
            ("open path", lambda: zarrkit.open(str(path), mode="r", path=name)),
            ("open_array path", lambda: zarrkit.open_array(str(path), mode="a", path=name, shape=(2,))),
            ("open_group path", lambda: zarrkit.open_group(str(path), mode="a", path=name)),
            ("create path", lambda: zarrkit.create((2,), store=str(path), path=name)),
        ]:
            with pytest.raises(InvalidPathError):
                fn()
        assert name not in g
    after = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*"))
    assert after == before


@pytest.mark.parametrize("name", ["/abs", "/g/abs2", "a\\b", "\\lead", "C:\\x"])
def test_absolute_and_backslash_node_names_stay_inside_the_store(name, tmp_path):
    """Node paths are normalised as in zarr-python 2 (documented in ``normalize_path``:
    backslashes become ``/``, leading slashes are dropped): such a name must either be refused
    or create a node *inside* the store root, never a file elsewhere."""
    root = tmp_path / "root"
    path = root / "data.zarr"
    g = zarrkit.group(zarrkit.DirectoryStore(path), zarr_format=2)
    outside_before = sorted(p for p in tmp_path.rglob("*") if root not in p.parents and p != root)
    try:
        g.create_group(name)
    except InvalidPathError:
        pass
    outside_after = sorted(p for p in tmp_path.rglob("*") if root not in p.parents and p != root)
    assert outside_after == outside_before
    for p in root.rglob("*"):
        assert path in p.parents or p == path, f"{p} written outside the store root"
    assert not Path("/abs").exists() and not Path("C:").exists()


def test_consolidated_metadata_cannot_point_outside_the_root(tmp_path):
    """A .zmetadata listing '../outside/...' documents gives no access to files outside."""
    outside = tmp_path / "outside"
    secret = zarrkit.create(shape=(4,), chunks=(4,), dtype="i4", zarr_format=2,
                            store=zarrkit.DirectoryStore(outside), compressor=None)
    secret[...] = 424242
    root = tmp_path / "root"
    _populate(zarrkit.DirectoryStore(root), 2)
    zarrkit.consolidate_metadata(str(root))
    doc = json.loads((root / ".zmetadata").read_bytes())
    doc["metadata"]["../outside/.zarray"] = json.loads((outside / ".zarray").read_bytes())
    (root / ".zmetadata").write_text(json.dumps(doc))
    g = zarrkit.open_consolidated(str(root), mode="r")
    for attempt in (lambda: g["../outside"], lambda: g[".."],
                    lambda: [g[m][...] for m in g]):
        try:
            result = attempt()
        except ZarrkitError:
            continue
        flat = np.concatenate([np.ravel(r) for r in result]) if isinstance(result, list) else np.ravel(result[...])
        assert 424242 not in flat


# =============================================================================================
# symlinks inside a DirectoryStore


@pytest.fixture
def symlinked_store(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_bytes(b"TOP SECRET")
    secret = zarrkit.create(shape=(4,), chunks=(4,), dtype="i4", zarr_format=2,
                            store=zarrkit.DirectoryStore(outside / "arr"), compressor=None)
    secret[...] = 424242
    root = tmp_path / "root"
    _populate(zarrkit.DirectoryStore(root), 2)
    try:
        os.symlink(outside, root / "evil_dir", target_is_directory=True)
        os.symlink(outside / "secret.txt", root / "evil_file")
        os.symlink(outside / "arr", root / "evil_arr", target_is_directory=True)
    except (OSError, NotImplementedError):  # pragma: no cover - no symlinks on this platform
        pytest.fail("symlinks are required for this test")
    return root


def test_symlink_to_outside_file_is_not_exposed(symlinked_store):
    store = zarrkit.DirectoryStore(symlinked_store, read_only=True)
    try:
        value = store.get("evil_file")
    except ZarrkitError:
        value = None
    assert value is None
    try:
        value = store.get("evil_dir/secret.txt")
    except ZarrkitError:
        value = None
    assert value is None
    assert "evil_file" not in list(store)


def test_symlink_to_outside_array_is_not_exposed(symlinked_store):
    try:
        data = zarrkit.open(str(symlinked_store), mode="r", path="evil_arr")[...]
    except ZarrkitError:
        return
    assert 424242 not in data


def test_symlinked_directories_are_not_walked(symlinked_store):
    """Key listings do not walk into a symlinked directory (os.walk's default)."""
    store = zarrkit.DirectoryStore(symlinked_store, read_only=True)
    keys = list(store)
    assert not [k for k in keys if k.startswith(("evil_dir/", "evil_arr/"))]


def test_symlinked_outside_array_is_not_a_group_member(symlinked_store):
    g = zarrkit.open_group(str(symlinked_store), mode="r")
    assert sorted(g.array_keys()) == ["a"]
