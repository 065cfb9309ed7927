"""zarr-python 3's asynchronous API (``zarrkit.api.asynchronous``, ``AsyncArray``, ``AsyncGroup``):
each coroutine gives what its synchronous twin gives, raises what it raises, and many of them
at once on one array give what NumPy gives."""

from __future__ import annotations

import asyncio
import threading
import time

import numpy as np
import pytest

import zarrkit
import zarrkit.api.asynchronous as aapi
from zarrkit.api.async_nodes import AsyncArray, AsyncGroup, AsyncOIndex, AsyncVIndex
from zarrkit.core.group import GroupMetadata
from zarrkit.errors import (
    ArrayNotFoundError,
    ContainsArrayError,
    ContainsGroupError,
    GroupNotFoundError,
    NodeNotFoundError,
    ReadOnlyError,
)
from zarrkit.storage import LatencyStore


def arun(coro):
    return asyncio.run(coro)


async def collect(agen):
    return [item async for item in agen]


def same_store(a, b):
    assert dict(a) == dict(b)


# -- the module and its names ---------------------------------------------------------------------

def test_names_are_zarr_pythons():
    assert zarrkit.AsyncArray is AsyncArray and zarrkit.AsyncGroup is AsyncGroup
    assert zarrkit.api.asynchronous is aapi
    assert aapi.AsyncArray is AsyncArray
    assert hasattr(zarrkit.AsyncArray, "oindex") and hasattr(zarrkit.AsyncArray, "vindex")  # xarray's probe
    for name in aapi.__all__:
        assert callable(getattr(aapi, name)), name


def test_api_synchronous_is_the_synchronous_functions():
    import zarrkit.api.synchronous as sapi

    assert sapi.open_group is zarrkit.open_group
    assert sapi.create_array is zarrkit.create_array
    assert sapi.from_array is zarrkit.from_array
    functions = set(aapi.__all__) - {"AsyncArray", "AsyncGroup"}
    assert functions <= set(sapi.__all__)
    for name in functions:
        assert asyncio.iscoroutinefunction(getattr(aapi, name)) or name == "create_hierarchy"


# -- every function against its synchronous twin ------------------------------------------------

DATA = np.arange(60, dtype="i4").reshape(6, 10)

#: name -> keyword arguments (``store`` filled in per call) of a call that creates an array
ARRAY_CALLS = {
    "create": dict(shape=(6, 10), chunks=(3, 5), dtype="i4", fill_value=7),
    "create_array": dict(shape=(6, 10), chunks=(3, 5), dtype="i4", fill_value=7),
    "empty": dict(shape=(6, 10), chunks=(3, 5), dtype="f8"),
    "zeros": dict(shape=(6, 10), chunks=(3, 5), dtype="u2"),
    "ones": dict(shape=(6, 10), chunks=(3, 5), dtype="f4"),
    "full": dict(shape=(6, 10), chunks=(3, 5), dtype="i8", fill_value=-3),
    "array": dict(data=DATA, chunks=(3, 5)),
    "open_array": dict(mode="w", shape=(6, 10), chunks=(2, 2), dtype="i2"),
    "open": dict(mode="w", shape=(6, 10), chunks=(2, 2), dtype="i2"),
}


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("name", sorted(ARRAY_CALLS))
def test_array_functions_match_sync(name, zarr_format):
    kwargs = dict(ARRAY_CALLS[name], zarr_format=zarr_format)
    s_sync, s_async = {}, {}
    expected = getattr(zarrkit, name)(store=s_sync, **kwargs)
    got = arun(getattr(aapi, name)(store=s_async, **kwargs))
    assert isinstance(got, AsyncArray)
    assert (got.shape, got.chunks, got.dtype) == (expected.shape, expected.chunks, expected.dtype)
    assert got.metadata.zarr_format == zarr_format
    if name != "empty":
        np.testing.assert_array_equal(arun(got.getitem(...)), expected[...])
    same_store(s_async, s_sync)


@pytest.mark.parametrize("name", ["empty_like", "zeros_like", "ones_like", "full_like"])
def test_like_functions_match_sync(name):
    extra = {"fill_value": 9} if name == "full_like" else {}
    source = zarrkit.array(DATA, chunks=(3, 5), zarr_format=3)
    s_sync, s_async = {}, {}
    expected = getattr(zarrkit, name)(source, store=s_sync, **extra)
    got = arun(getattr(aapi, name)(AsyncArray(source), store=s_async, **extra))  # an AsyncArray stands for its array
    assert isinstance(got, AsyncArray)
    assert (got.shape, got.chunks, got.dtype) == (expected.shape, expected.chunks, expected.dtype)
    same_store(s_async, s_sync)


def test_open_like_and_from_array_match_sync(tmp_path):
    source = zarrkit.array(DATA, chunks=(2, 5), zarr_format=3)
    expected = zarrkit.open_like(source, str(tmp_path / "s.zarr"))
    got = arun(aapi.open_like(AsyncArray(source), str(tmp_path / "a.zarr")))
    assert (got.shape, got.chunks, got.dtype) == (expected.shape, expected.chunks, expected.dtype)
    s_sync, s_async = {}, {}
    zarrkit.from_array(s_sync, data=source)
    got = arun(aapi.from_array(s_async, data=AsyncArray(source)))
    np.testing.assert_array_equal(arun(got.getitem(...)), DATA)
    same_store(s_async, s_sync)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_group_functions_match_sync(zarr_format):
    for name, kwargs in [
        ("group", dict(attributes={"a": 1})),
        ("create_group", dict(attributes={"a": 1})),
        ("open_group", dict(mode="w")),
        ("open", dict(mode="w")),
    ]:
        s_sync, s_async = {}, {}
        expected = getattr(zarrkit, name)(store=s_sync, zarr_format=zarr_format, **kwargs)
        got = arun(getattr(aapi, name)(store=s_async, zarr_format=zarr_format, **kwargs))
        assert isinstance(got, AsyncGroup), name
        assert got.attrs == dict(expected.attrs)
        assert got.metadata.zarr_format == zarr_format
        same_store(s_async, s_sync)


def _hierarchy(store, zarr_format=3):
    root = zarrkit.group(store, zarr_format=zarr_format)
    root.create_array("x", data=DATA, chunks=(3, 5))
    root.create_group("sub").create_array("y", shape=(4,), dtype="f8", fill_value=1.5)
    return root


def test_consolidation_matches_sync():
    s_sync, s_async = {}, {}
    _hierarchy(s_sync), _hierarchy(s_async)
    zarrkit.consolidate_metadata(s_sync)
    got = arun(aapi.consolidate_metadata(s_async))
    assert isinstance(got, AsyncGroup)
    same_store(s_async, s_sync)
    expected = zarrkit.open_consolidated(s_sync)
    opened = arun(aapi.open_consolidated(s_async))
    assert isinstance(opened, AsyncGroup)
    assert sorted(arun(collect(opened.keys()))) == sorted(expected.keys())


def test_save_load_match_sync():
    s_sync, s_async = {}, {}
    zarrkit.save(s_sync, DATA, other=DATA * 2)
    assert arun(aapi.save(s_async, DATA, other=DATA * 2)) is None
    same_store(s_async, s_sync)
    loaded = arun(aapi.load(store=s_async))
    np.testing.assert_array_equal(loaded["other"], zarrkit.load(s_sync)["other"])
    for fn in ("save_array", "save_group"):
        s_sync, s_async = {}, {}
        getattr(zarrkit, fn)(s_sync, DATA)
        arun(getattr(aapi, fn)(s_async, DATA))
        same_store(s_async, s_sync)


def test_copies_match_sync():
    source = _hierarchy({})
    for fn, args in [("copy", (source["x"],)), ("copy_all", (source,))]:
        d_sync, d_async = zarrkit.group({}), zarrkit.group({})
        expected = getattr(zarrkit, fn)(*args, d_sync)
        got = arun(getattr(aapi, fn)(*(AsyncArray(a) if isinstance(a, zarrkit.Array) else AsyncGroup(a)
                                       for a in args), AsyncGroup(d_async)))
        assert got == expected
        same_store(d_async.store, d_sync.store)
    d_sync, d_async = {}, {}
    assert arun(aapi.copy_store(source.store, d_async)) == zarrkit.copy_store(source.store, d_sync)
    same_store(d_async, d_sync)


def test_tree_and_create_hierarchy_match_sync():
    root = _hierarchy({})
    assert str(arun(aapi.tree(AsyncGroup(root)))) == str(zarrkit.tree(root))
    assert str(arun(aapi.tree(root, level=1))) == str(zarrkit.tree(root, level=1))
    nodes = {"a/b": GroupMetadata(attributes={"k": 1}), "c": GroupMetadata()}
    s_sync, s_async = {}, {}
    expected = [p for p, _ in zarrkit.create_hierarchy(store=s_sync, nodes=nodes)]
    got = arun(collect(aapi.create_hierarchy(store=s_async, nodes=nodes)))
    assert [p for p, _ in got] == expected
    assert all(isinstance(g, AsyncGroup) for _, g in got)
    same_store(s_async, s_sync)


# -- an error per function: the synchronous call's exception, unchanged --------------------------

def filled(store, data, **kwargs):
    """``create_array`` of ``data``'s shape and type, ``data`` written into it."""
    arr = zarrkit.create_array(store, shape=data.shape, dtype=data.dtype, **kwargs)
    arr[...] = data
    return arr


def _existing_array():
    return zarrkit.create_array({}, shape=(4,), dtype="i4", zarr_format=3).store


def _existing_group():
    return zarrkit.create_group({}, zarr_format=3).store


ERRORS = {
    "array": lambda: ((), dict(data=DATA, chunks=(1, 2, 3))),
    "create": lambda: ((), dict(shape=(-1,), dtype="i4")),
    "create_array": lambda: ((), dict(store=_existing_array(), shape=(4,), dtype="i4")),
    "empty": lambda: ((), dict(shape=(4,), dtype="not-a-dtype")),
    "zeros": lambda: ((), dict(shape=(4,), chunks=(1, 1))),
    "ones": lambda: ((), dict(shape=(4,), order="Q")),
    "full": lambda: ((), dict(shape=(4,), dtype="i4", fill_value="x")),
    "empty_like": lambda: ((DATA,), dict(chunks=(1, 2, 3))),
    "zeros_like": lambda: ((DATA,), dict(dtype="nope")),
    "ones_like": lambda: ((DATA,), dict(order="Q")),
    "full_like": lambda: ((DATA,), dict(fill_value="x")),
    "open": lambda: ((), dict(store={}, mode="r")),
    "open_array": lambda: ((), dict(store={}, mode="r")),
    "open_group": lambda: ((), dict(store=_existing_array(), mode="r")),
    "open_like": lambda: ((DATA, {}), dict(mode="r")),
    "group": lambda: ((), dict(store=_existing_array())),
    "create_group": lambda: ((), dict(store=_existing_group())),
    "consolidate_metadata": lambda: (({},), {}),
    "open_consolidated": lambda: (({},), {}),
    "save": lambda: (({},), {}),
    "save_array": lambda: (({}, DATA), dict(chunks=(1, 2, 3))),
    "save_group": lambda: (({}, object()), {}),
    "load": lambda: ((), dict(store={}, path="missing")),
    "tree": lambda: ((42,), {}),
    "copy": lambda: ((DATA, 42), {}),
    "copy_all": lambda: ((42, 42), {}),
    "copy_store": lambda: (({}, {}), dict(if_exists="bogus")),
    "from_array": lambda: (({},), dict(data=DATA, chunks=(1, 2, 3))),
    "create_hierarchy": lambda: ((), dict(store={}, nodes={"a": 42})),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_propagate_unchanged(name):
    args, kwargs = ERRORS[name]()
    with pytest.raises(Exception) as sync_info:
        result = getattr(zarrkit, name)(*args, **kwargs)
        if name == "create_hierarchy":
            list(result)

    async def call():
        if name == "create_hierarchy":
            return await collect(aapi.create_hierarchy(*args, **kwargs))
        return await getattr(aapi, name)(*args, **kwargs)

    args, kwargs = ERRORS[name]()  # fresh stores
    with pytest.raises(type(sync_info.value)) as async_info:
        arun(call())
    assert type(async_info.value) is type(sync_info.value)
    assert str(async_info.value) == str(sync_info.value)


def test_every_function_has_an_error_case():
    assert set(ERRORS) == set(aapi.__all__) - {"AsyncArray", "AsyncGroup"}


def test_open_consolidated_wants_use_consolidated_true():
    with pytest.raises(TypeError, match="use_consolidated"):
        arun(aapi.open_consolidated({}, use_consolidated=False))


# -- AsyncArray: every method against the synchronous Array ---------------------------------------

@pytest.fixture(params=[2, 3])
def pair(request):
    """The same array twice (a synchronous one and one behind an AsyncArray), shards on v3."""
    extra = {"shards": (6, 10)} if request.param == 3 else {}
    make = lambda: filled({}, DATA, chunks=(3, 5), zarr_format=request.param,
                          attributes={"units": "m"}, **extra)
    return make(), AsyncArray(make())


PROPERTIES = ["shape", "ndim", "size", "chunks", "shards", "dtype", "order", "read_only", "path", "name",
              "basename", "cdata_shape", "nchunks", "nbytes", "serializer", "compressors",
              "read_chunk_sizes", "write_chunk_sizes"]


def test_array_properties_match_sync(pair):
    sync, aarr = pair
    for prop in PROPERTIES:
        assert getattr(aarr, prop) == getattr(sync, prop), prop
    # filters: zarr-python 3's tuple of the metadata's codecs (the synchronous array's are zarr-python 2's)
    assert aarr.filters == tuple(sync.metadata.filters or ())
    assert aarr.attrs == {"units": "m"} and isinstance(aarr.attrs, dict)
    assert aarr.metadata == sync.metadata and aarr.metadata is aarr._array.metadata
    assert aarr.config == sync.config
    assert str(aarr.info) == str(sync.info)
    assert repr(aarr).startswith("<AsyncArray ")
    assert aarr == AsyncArray(aarr._array) and aarr != sync


SELECTIONS = [0, (1, 2), (slice(1, 5), slice(None, None, 3)), Ellipsis, (-1, slice(2, 9)), slice(None)]


def test_array_reads_match_sync(pair):
    sync, aarr = pair

    async def reads():
        basic = [await aarr.getitem(sel) for sel in SELECTIONS]
        outer = await aarr.oindex.getitem(([0, 4, 5], [1, 3]))
        outer2 = await aarr.get_orthogonal_selection(([0, 4, 5], slice(None)))
        points = await aarr.vindex.getitem(([0, 4, 5], [1, 3, 9]))
        points2 = await aarr.get_coordinate_selection(([0, 4, 5], [1, 3, 9]))
        mask = DATA % 7 == 0
        masked = await aarr.vindex.getitem(mask)
        masked2 = await aarr.get_mask_selection(mask)
        return basic, outer, outer2, points, points2, masked, masked2, mask

    basic, outer, outer2, points, points2, masked, masked2, mask = arun(reads())
    for sel, got in zip(SELECTIONS, basic):
        np.testing.assert_array_equal(got, sync[sel])
        assert type(got) is type(sync[sel])  # a scalar stays a scalar
    np.testing.assert_array_equal(outer, sync.oindex[[0, 4, 5], [1, 3]])
    np.testing.assert_array_equal(outer2, sync.get_orthogonal_selection(([0, 4, 5], slice(None))))
    np.testing.assert_array_equal(points, sync.vindex[[0, 4, 5], [1, 3, 9]])
    np.testing.assert_array_equal(points2, points)
    np.testing.assert_array_equal(masked, sync.vindex[mask])
    np.testing.assert_array_equal(masked2, masked)
    assert isinstance(aarr.oindex, AsyncOIndex) and isinstance(aarr.vindex, AsyncVIndex)
    assert aarr.oindex.array is aarr


def test_array_writes_match_sync(pair):
    sync, aarr = pair

    async def writes():
        await aarr.setitem((slice(0, 2), slice(None)), -1)
        await aarr.setitem((4, slice(3, 8)), np.arange(5))
        await aarr.resize((8, 10))
        shape = await aarr.append(np.ones((2, 10), dtype="i4"))
        same = await aarr.update_attributes({"long_name": "depth"})
        return shape, same

    sync[0:2, :] = -1
    sync[4, 3:8] = np.arange(5)
    sync.resize((8, 10))
    expected_shape = sync.append(np.ones((2, 10), dtype="i4"))
    sync.update_attributes({"long_name": "depth"})
    shape, same = arun(writes())
    assert shape == expected_shape == aarr.shape == (10, 10)
    assert same is aarr and aarr.attrs == dict(sync.attrs)
    np.testing.assert_array_equal(arun(aarr.getitem(...)), sync[...])
    assert dict(aarr.store) == dict(sync.store)


def test_array_stored_counts_match_sync(pair):
    sync, aarr = pair
    assert arun(aarr.nchunks_initialized()) == sync.nchunks_initialized
    assert arun(aarr.nbytes_stored()) == sync.nbytes_stored
    assert str(arun(aarr.info_complete())) == str(sync.info_complete())
    empty = AsyncArray(zarrkit.zeros((4, 4), chunks=(2, 2)))
    assert arun(empty.nchunks_initialized()) == 0
    arun(empty.setitem((0, 0), 1))
    assert arun(empty.nchunks_initialized()) == 1


def test_array_open_and_with_config(tmp_path):
    path = str(tmp_path / "a.zarr")
    filled(path, DATA, chunks=(3, 5), zarr_format=3)
    opened = arun(AsyncArray.open(path))
    np.testing.assert_array_equal(arun(opened.getitem(...)), DATA)
    configured = arun(AsyncArray.open(path, config={"write_empty_chunks": True}))
    assert configured.config.write_empty_chunks is True
    assert opened.with_config({"order": "F"}).config.order == "F"
    with pytest.raises(ArrayNotFoundError):
        arun(AsyncArray.open(path, zarr_format=2))


def test_array_errors_are_the_sync_ones():
    arr = filled({}, DATA, chunks=(3, 5), zarr_format=3)
    aarr = AsyncArray(arr)
    for coro, sync_call in [
        (lambda: aarr.getitem((7, 0)), lambda: arr[7, 0]),
        (lambda: aarr.getitem([0, 1]), lambda: arr.get_basic_selection([0, 1])),
        (lambda: aarr.setitem((0, 0), "x"), lambda: arr.__setitem__((0, 0), "x")),
        (lambda: aarr.resize((4,)), lambda: arr.resize((4,))),
        (lambda: aarr.append(np.ones((2, 3))), lambda: arr.append(np.ones((2, 3)))),
        (lambda: aarr.oindex.getitem(([9], [0])), lambda: arr.oindex[[9], [0]]),
        (lambda: aarr.vindex.getitem(([0, 1], [0, 1, 2])), lambda: arr.vindex[[0, 1], [0, 1, 2]]),
    ]:
        with pytest.raises(Exception) as sync_info:
            sync_call()
        with pytest.raises(type(sync_info.value), match=None) as async_info:
            arun(coro())
        assert type(async_info.value) is type(sync_info.value) and str(async_info.value) == str(sync_info.value)
    read_only = AsyncArray(zarrkit.open_array(arr.store, mode="r"))
    with pytest.raises(ReadOnlyError):
        arun(read_only.setitem(0, 1))
    with pytest.raises(ReadOnlyError):
        arun(read_only.update_attributes({"a": 1}))
    with pytest.raises(TypeError, match="wraps a zarrkit Array"):
        AsyncArray(DATA)


# -- AsyncGroup: every method against the synchronous Group --------------------------------------

@pytest.fixture(params=[2, 3])
def gpair(request):
    return _hierarchy({}, request.param), AsyncGroup(_hierarchy({}, request.param))


def test_group_properties_match_sync(gpair):
    sync, agroup = gpair
    for prop in ["path", "name", "basename", "read_only", "synchronizer"]:
        assert getattr(agroup, prop) == getattr(sync, prop), prop
    assert agroup.metadata == sync.metadata and agroup.attrs == {}
    assert str(agroup.info) == str(sync.info)
    assert str(arun(agroup.info_complete())) == str(sync.info_complete())
    assert repr(agroup).startswith("<AsyncGroup ")
    assert agroup == AsyncGroup(agroup._group)


def test_group_members_match_sync(gpair):
    sync, agroup = gpair

    async def listing():
        return dict(
            keys=await collect(agroup.keys()),
            members=[(n, type(m).__name__) for n, m in await collect(agroup.members())],
            deep=[n for n, _ in await collect(agroup.members(max_depth=None))],
            groups=[n for n, g in await collect(agroup.groups()) if isinstance(g, AsyncGroup)],
            arrays=[n for n, a in await collect(agroup.arrays()) if isinstance(a, AsyncArray)],
            group_keys=await collect(agroup.group_keys()),
            array_keys=await collect(agroup.array_keys()),
            group_values=[g.name for g in await collect(agroup.group_values())],
            array_values=[a.name for a in await collect(agroup.array_values())],
            nmembers=await agroup.nmembers(),
            nall=await agroup.nmembers(max_depth=None),
            contains=[await agroup.contains(k) for k in ("x", "sub/y", "nope")],
            tree=str(await agroup.tree()),
        )

    got = arun(listing())
    assert got["keys"] == list(sync.keys())
    assert got["members"] == [(n, "Async" + type(m).__name__) for n, m in sync.members()]
    assert got["deep"] == [n for n, _ in sync.members(max_depth=None)]
    assert got["groups"] == got["group_keys"] == list(sync.group_keys()) == ["sub"]
    assert got["arrays"] == got["array_keys"] == list(sync.array_keys()) == ["x"]
    assert got["group_values"] == [g.name for g in sync.group_values()]
    assert got["array_values"] == [a.name for a in sync.array_values()]
    assert (got["nmembers"], got["nall"]) == (sync.nmembers(), sync.nmembers(max_depth=None))
    assert got["contains"] == ["x" in sync, "sub/y" in sync, "nope" in sync]
    assert got["tree"] == str(sync.tree())


def test_group_getters_match_sync(gpair):
    sync, agroup = gpair

    async def getters():
        return (await agroup.getitem("x"), await agroup.getitem("sub/y"), await agroup.get("nope", "default"),
                await agroup.get_array("x"), await agroup.get_group("sub"))

    x, y, default, x2, sub = arun(getters())
    np.testing.assert_array_equal(arun(x.getitem(...)), sync["x"][...])
    np.testing.assert_array_equal(arun(y.getitem(...)), sync["sub/y"][...])
    assert default == "default" and x2 == x and isinstance(sub, AsyncGroup) and sub.name == "/sub"


def test_group_creation_matches_sync(gpair):
    sync, agroup = gpair

    def build(g, call):
        call(g.create_group, "made", attributes={"k": 1})
        call(g.require_group, "made")
        call(g.require_groups, "r1", "r2")
        call(g.create_array, "arr", shape=(5,), dtype="i2", chunks=(2,))
        call(g.require_array, "arr", shape=(5,), dtype="i2")
        call(g.setitem, "set", np.arange(3))
        for fn in ("empty", "zeros", "ones"):
            call(getattr(g, fn), name=fn, shape=(3,), dtype="f4")
        call(g.full, name="full", shape=(3,), fill_value=4, dtype="i4")
        for fn in ("empty_like", "zeros_like", "ones_like"):
            call(getattr(g, fn), name=fn, data=DATA)
        call(g.full_like, name="full_like", data=DATA, fill_value=2)
        call(g.update_attributes, {"title": "t"})
        call(g.move, "made", "moved")
        call(g.delitem, "r1")

    def sync_call(method, *args, **kwargs):
        name = method.__name__
        if name == "setitem":
            return sync.__setitem__(*args)
        if name == "delitem":
            return sync.__delitem__(*args)
        if name in ("empty", "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like", "full_like"):
            return method(kwargs.pop("name"), *args, **kwargs)
        return method(*args, **kwargs)

    def async_call(method, *args, **kwargs):
        result = arun(method(*args, **kwargs))
        if isinstance(result, tuple):
            assert all(isinstance(r, AsyncGroup) for r in result)
        else:
            assert result is None or isinstance(result, (AsyncArray, AsyncGroup))
        return result

    class SyncView:  # the async names on the synchronous group
        def __getattr__(self, name):
            method = {"setitem": "__setitem__", "delitem": "__delitem__"}.get(name, name)
            bound = getattr(sync, method)
            bound_named = lambda *a, **k: sync_call(_Named(bound, name), *a, **k)
            return bound_named

    build(SyncView(), lambda m, *a, **k: m(*a, **k))
    build(agroup, async_call)
    same_store(agroup.store, sync.store)


class _Named:
    def __init__(self, fn, name):
        self.fn, self.__name__ = fn, name

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)


def test_group_open_and_from_store(tmp_path):
    path = str(tmp_path / "g.zarr")
    made = arun(AsyncGroup.from_store(path, attributes={"a": 1}))
    assert made.attrs == {"a": 1} and made.metadata.zarr_format == 3
    opened = arun(AsyncGroup.open(path))
    assert opened.attrs == {"a": 1}
    with pytest.raises(ContainsGroupError):
        arun(AsyncGroup.from_store(path))
    assert arun(AsyncGroup.from_store(path, overwrite=True)).attrs == {}
    with pytest.raises(GroupNotFoundError):
        arun(AsyncGroup.open(str(tmp_path / "none.zarr")))
    zarrkit.consolidate_metadata(path)
    assert arun(AsyncGroup.open(path, use_consolidated=True)).metadata.consolidated_metadata is not None


def test_group_errors_are_the_sync_ones(gpair):
    _, agroup = gpair
    sync = agroup._group  # the same store: the messages name it
    for coro, sync_call in [
        (lambda: agroup.getitem("nope"), lambda: sync["nope"]),
        (lambda: agroup.get_array("sub"), lambda: sync.get_array("sub")),
        (lambda: agroup.get_group("x"), lambda: sync.get_group("x")),
        (lambda: agroup.create_group("x"), lambda: sync.create_group("x")),
        (lambda: agroup.create_array("sub", shape=(1,), dtype="i1"), lambda: sync.create_array("sub", shape=(1,), dtype="i1")),
        (lambda: agroup.require_array("x", shape=(2,)), lambda: sync.require_array("x", shape=(2,))),
        (lambda: agroup.require_group("x"), lambda: sync.require_group("x")),
        (lambda: agroup.delitem("nope"), lambda: sync.__delitem__("nope")),
        (lambda: agroup.move("nope", "b"), lambda: sync.move("nope", "b")),
    ]:
        with pytest.raises(Exception) as sync_info:
            sync_call()
        with pytest.raises(type(sync_info.value)) as async_info:
            arun(coro())
        assert type(async_info.value) is type(sync_info.value) and str(async_info.value) == str(sync_info.value)
    with pytest.raises(KeyError):  # zarr-python's contract: a missing member is a KeyError
        arun(agroup.getitem("nope"))
    assert issubclass(NodeNotFoundError, KeyError)
    read_only = AsyncGroup(zarrkit.open_group(sync.store, mode="r"))
    with pytest.raises(ReadOnlyError):
        arun(read_only.create_group("new"))
    with pytest.raises(ContainsArrayError):
        arun(AsyncGroup.from_store(_existing_array()))
    with pytest.raises(TypeError, match="wraps a zarrkit Group"):
        AsyncGroup(sync["x"])


# -- many coroutines at once -------------------------------------------------------------------------

@pytest.mark.parametrize("zarr_format", [2, 3])
def test_concurrent_chunk_writes_and_reads_give_numpys_result(zarr_format, tmp_path):
    expected = np.zeros((64, 48), dtype="i4")
    arr = AsyncArray(zarrkit.create_array(str(tmp_path / "c.zarr"), shape=(64, 48), chunks=(8, 8), dtype="i4",
                                          fill_value=0, zarr_format=zarr_format))
    blocks = [(slice(i, i + 8), slice(j, j + 8)) for i in range(0, 64, 8) for j in range(0, 48, 8)]
    for k, sel in enumerate(blocks):
        expected[sel] = k * 100 + np.arange(64).reshape(8, 8)

    async def main():
        await asyncio.gather(*(arr.setitem(sel, expected[sel]) for sel in blocks))
        rows = await asyncio.gather(*(arr.getitem(i) for i in range(64)))
        cols = await asyncio.gather(*(arr.getitem((slice(None), j)) for j in range(48)))
        pieces = await asyncio.gather(*(arr.oindex.getitem(([i, 63 - i], slice(None))) for i in range(32)))
        return rows, cols, pieces

    rows, cols, pieces = arun(main())
    np.testing.assert_array_equal(np.stack(rows), expected)
    np.testing.assert_array_equal(np.stack(cols, axis=1), expected)
    for i, piece in enumerate(pieces):
        np.testing.assert_array_equal(piece, expected[[i, 63 - i]])


def test_concurrent_writes_sharing_chunks_with_a_synchronizer():
    expected = np.zeros(200, dtype="i8")
    arr = AsyncArray(zarrkit.zeros(200, chunks=16, dtype="i8", synchronizer=zarrkit.ThreadSynchronizer()))
    slices = [slice(i * 5, i * 5 + 5) for i in range(40)]  # five elements each: neighbours share chunks
    for k, sel in enumerate(slices):
        expected[sel] = k + 1

    async def main():
        await asyncio.gather(*(arr.setitem(sel, k + 1) for k, sel in enumerate(slices)))
        return await asyncio.gather(*(arr.getitem(sel) for sel in slices))

    parts = arun(main())
    np.testing.assert_array_equal(np.concatenate(parts), expected)
    np.testing.assert_array_equal(arr._array[:], expected)


def test_concurrent_group_calls():
    root = AsyncGroup(zarrkit.group({}, zarr_format=3))

    async def main():
        await asyncio.gather(*(root.create_array(f"a{i}", data=np.full(4, i)) for i in range(20)))
        return await asyncio.gather(*(root.getitem(f"a{i}") for i in range(20)))

    arrays = arun(main())
    assert [int(arun(a.getitem(0))) for a in arrays] == list(range(20))
    assert arun(root.nmembers()) == 20


def test_the_loop_runs_while_the_engine_reads():
    # the synchronous call runs in a worker thread: the loop keeps ticking during a slow read
    store = LatencyStore(zarrkit.MemoryStore(), seconds=0.02)
    arr = AsyncArray(filled(store, np.arange(40), chunks=(4,), zarr_format=3))
    loop_thread = []

    async def main():
        loop_thread.append(threading.get_ident())
        ticks = 0
        read = asyncio.ensure_future(arr.getitem(slice(None)))
        while not read.done():
            ticks += 1
            await asyncio.sleep(0.001)
        return ticks, await read

    start = time.perf_counter()
    ticks, data = arun(main())
    assert time.perf_counter() - start >= 0.02
    assert ticks > 1
    np.testing.assert_array_equal(data, np.arange(40))


# -- the accessors of the synchronous nodes -----------------------------------------------------------

def test_array_async_array_accessor():
    arr = filled({}, DATA, chunks=(3, 5), zarr_format=3)
    assert isinstance(arr._async_array, AsyncArray) and arr.async_array == arr._async_array
    np.testing.assert_array_equal(arun(arr._async_array.getitem((slice(1, 3),))), DATA[1:3])


def test_group_async_group_accessor():
    root = _hierarchy({})
    assert isinstance(root._async_group, AsyncGroup)
    assert sorted(arun(collect(root._async_group.keys()))) == sorted(root.keys())


@pytest.mark.parametrize("name", [n for n in aapi.__all__ if n not in (
    "AsyncArray", "AsyncGroup", "create_hierarchy", "open_consolidated", "tree")])
def test_each_function_shows_the_parameters_of_its_synchronous_twin(name):
    import inspect

    import zarrkit.api.synchronous as sapi

    function, twin = getattr(aapi, name), getattr(sapi, name)
    assert inspect.signature(function).parameters == inspect.signature(twin).parameters
    assert inspect.iscoroutinefunction(function)
