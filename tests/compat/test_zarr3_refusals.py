"""Refusals that zarr-python 3 code catches by type and message: a writing mode on a read-only
store, a node below an array, a copy over its own source, a required node of the wrong kind,
zarr-format-3 arguments for a v2 array.  Each error keeps zarrkit's own account (what, where,
what was given) and also says it the way zarr-python 3 does."""

import numpy as np
import pytest

import zarrkit
from zarrkit.errors import (
    ArrayNotGroupError,
    ContainsArrayError,
    ContainsGroupError,
    GroupNotArrayError,
    NodesOverlapError,
    ReadOnlyError,
)
from zarrkit.storage import MemoryStore


def _read_only_store() -> MemoryStore:
    return MemoryStore(read_only=True)


@pytest.mark.parametrize(
    "call",
    [
        lambda s: zarrkit.open_array(s, mode="w", shape=(2,)),
        lambda s: zarrkit.open_group(s, mode="w"),
        lambda s: zarrkit.open(s, mode="w", shape=(2,)),
        lambda s: zarrkit.create(shape=(2,), store=s, mode="w"),
        lambda s: zarrkit.save_array(s, np.arange(2), mode="w"),
        lambda s: zarrkit.save_group(s, np.arange(2)),
    ],
    ids=["open_array", "open_group", "open", "create", "save_array", "save_group"],
)
def test_writing_mode_on_a_read_only_store_names_the_mode(call):
    store = _read_only_store()
    with pytest.raises(ReadOnlyError, match="Store is read-only but mode is 'w'") as info:
        call(store)
    assert isinstance(info.value, ValueError)
    assert "MemoryStore" in str(info.value)  # the store refusing is named
    assert dict(store._store_dict) == {}


def test_mode_a_creating_on_a_read_only_store_names_the_mode():
    with pytest.raises(ReadOnlyError, match="but mode is 'a'"):
        zarrkit.open_array(_read_only_store(), mode="a", shape=(2,))
    with pytest.raises(ReadOnlyError, match="but mode is 'a'"):
        zarrkit.open_group(_read_only_store(), mode="a")


def test_mode_a_on_a_read_only_store_still_opens_what_is_there():
    store = MemoryStore()
    zarrkit.create_array(store, shape=(3,), dtype="i2", fill_value=7)
    opened = zarrkit.open_array(store.with_read_only(True), mode="a")
    assert opened.read_only
    assert opened[...].tolist() == [7, 7, 7]


def test_create_in_mode_r_says_it_is_read_only():
    with pytest.raises(ValueError, match=r"got 'r' \(a read-only mode\)"):
        zarrkit.create(shape=(3,), store=MemoryStore(), mode="r")


@pytest.mark.parametrize("make", ["create_array", "create_group"])
def test_node_below_an_array_names_both_paths(make):
    root = zarrkit.group(zarr_format=3)
    root.create_array("arr", shape=(2,), dtype="u1")
    with pytest.raises(ContainsArrayError) as info:
        if make == "create_array":
            root.create_array("arr/sub/x", shape=(2,), dtype="u1")
        else:
            root.create_group("arr/sub/g")
    message = str(info.value)
    assert "'arr'" in message
    assert "is an array - only groups may have child nodes" in message
    assert isinstance(info.value, ValueError)


def test_copy_over_its_own_source_says_the_paths_overlap():
    store = MemoryStore()
    source = zarrkit.create_array(store, name="g/a", data=np.arange(4.0))
    with pytest.raises(NodesOverlapError, match="the paths overlap") as info:
        zarrkit.from_array(store, name="g", data=source, overwrite=True)
    assert "'g/a'" in str(info.value) and "'g'" in str(info.value)
    assert source[...].tolist() == [0.0, 1.0, 2.0, 3.0]  # nothing was deleted


def test_require_group_on_an_array_is_both_errors():
    root = zarrkit.group()
    root.create_array("x", shape=(2,), dtype="u1")
    with pytest.raises(ArrayNotGroupError, match="Incompatible object") as info:
        root.require_group("x")
    assert isinstance(info.value, ContainsArrayError) and isinstance(info.value, TypeError)
    assert "'x'" in str(info.value)


@pytest.mark.parametrize("method", ["require_array", "require_dataset"])
def test_require_an_array_on_a_group_is_both_errors(method):
    root = zarrkit.group()
    root.create_group("g")
    with pytest.raises(GroupNotArrayError, match="Incompatible object") as info:
        getattr(root, method)("g", shape=(2,), dtype="u1")
    assert isinstance(info.value, ContainsGroupError) and isinstance(info.value, TypeError)


def test_require_array_casts_from_the_existing_array_as_zarr3_does():
    root = zarrkit.group()
    existing = root.create_array("x", shape=(4,), dtype="i8")
    assert root.require_array("x", shape=(4,), dtype="f8") == existing  # i8 casts to f8
    with pytest.raises(TypeError, match=r"Incompatible dtype.*int64 does not cast safely to float32"):
        root.require_array("x", shape=(4,), dtype="f4")
    with pytest.raises(TypeError, match=r"Incompatible dtype.*exactly float64"):
        root.require_array("x", shape=(4,), dtype="f8", exact=True)
    with pytest.raises(TypeError, match=r"Incompatible shape.*\(4,\).*\(5,\)"):
        root.require_array("x", shape=(5,), dtype="i8")


def test_require_dataset_casts_to_the_existing_array_as_zarr2_did():
    root = zarrkit.group()
    existing = root.create_dataset("x", shape=(4,), dtype="i4")
    assert root.require_dataset("x", shape=(4,), dtype="i2") == existing  # i2 casts to i4
    with pytest.raises(TypeError, match="float64 does not cast safely to int32"):
        root.require_dataset("x", shape=(4,), dtype="f8")


@pytest.mark.parametrize(
    ("kwargs", "named", "sentence"),
    [
        ({"shards": (5,)}, "shards=(5,)", "`shard_shape` set to `None`. Got `shard_shape=(5,)` instead."),
        ({"serializer": "bytes"}, "serializer='bytes'", "Zarr format 2 arrays do not support `serializer`."),
        ({"dimension_names": ["t"]}, "dimension_names=['t']",
         "Zarr format 2 arrays do not support dimension names."),
    ],
)
def test_create_array_v2_refuses_v3_arguments_by_name(kwargs, named, sentence):
    with pytest.raises(ValueError) as info:
        zarrkit.create_array({}, shape=(10,), dtype="u1", zarr_format=2, **kwargs)
    assert isinstance(info.value, TypeError)
    assert named in str(info.value) and sentence in str(info.value)


@pytest.mark.parametrize(
    ("kwargs", "sentence"),
    [
        ({"dimension_names": ["t"]}, "dimension_names cannot be used for arrays with zarr_format 2."),
        ({"codecs": "bytes"}, "codecs cannot be used for arrays with zarr_format 2. Use filters and compressor"),
        ({"chunk_key_encoding": {"name": "default", "separator": "/"}},
         "chunk_key_encoding cannot be used for arrays with zarr_format 2. Use dimension_separator instead."),
    ],
)
def test_create_v2_refuses_v3_arguments_by_name(kwargs, sentence):
    with pytest.raises(ValueError, match="zarr_format=2") as info:
        zarrkit.create(shape=(10,), chunks=(1,), dtype="u1", zarr_format=2, store={}, **kwargs)
    assert sentence in str(info.value)


def test_a_v2_chunk_key_encoding_is_still_taken():
    z = zarrkit.create(shape=(4,), chunks=(2,), dtype="u1", zarr_format=2, store={},
                       chunk_key_encoding={"name": "v2", "separator": "/"})
    assert z.metadata.dimension_separator == "/"


def test_chunk_shape_and_chunks_that_differ():
    with pytest.raises(ValueError, match=r"chunk_shape=\(1,\) contradicts chunks=\(2,\)"):
        zarrkit.create(shape=(10,), chunk_shape=(1,), chunks=(2,), store={})
    assert zarrkit.create(shape=(10,), chunk_shape=(2,), chunks=(2,), store={}).chunks == (2,)


@pytest.mark.parametrize("given", ["shape", "dtype"])
def test_create_array_with_data_and_its_shape_or_dtype(given):
    data = np.arange(4)
    extra = {"shape": data.shape} if given == "shape" else {"dtype": data.dtype}
    with pytest.raises(ValueError, match=f"The data parameter was used, but the {given} parameter"):
        zarrkit.create_array({}, data=data, **extra)


@pytest.mark.parametrize(
    "make",
    [lambda g: g.zeros(name="a", shape=(4,), zarr_format=3),
     lambda g: g.create_array("a", shape=(4,), dtype="u1", zarr_format=3),
     lambda g: g.create_dataset("a", shape=(4,), zarr_format=3)],
    ids=["zeros", "create_array", "create_dataset"],
)
def test_an_array_of_another_format_than_its_group_is_refused(make):
    group = zarrkit.Group.from_store(MemoryStore(), zarr_format=2)
    with pytest.raises(ValueError, match="zarr_format=3 array in a zarr_format=2 group"):
        make(group)
    assert list(group) == []
    assert group.zeros(name="b", shape=(4,), zarr_format=2).metadata.zarr_format == 2  # its own: taken


@pytest.mark.parametrize("exists", [True, False])
def test_open_with_an_array_config_on_a_group(exists):
    store = MemoryStore()
    if exists:
        zarrkit.create_group(store)
    with pytest.raises(TypeError, match="resolves to a group"):
        zarrkit.open(store=store, mode="a", config={"order": "F"})
    assert (dict(store._store_dict) != {}) is exists  # nothing was created
    opened = zarrkit.open(store=store, mode="a", shape=(2,), config={"order": "F"}) if not exists else None
    assert opened is None or opened.shape == (2,)


def test_an_invalid_zarr_format_is_a_metadata_error():
    from zarrkit.errors import MetadataError

    with pytest.raises(MetadataError, match=r"zarr_format must be 2 or 3, got '3.0'") as info:
        zarrkit.open_group({}, zarr_format="3.0")
    assert "Expected 2, 3, or None. Got '3.0'." in str(info.value)
    with pytest.raises(ValueError, match="got 4"):
        zarrkit.open_array({}, shape=(1,), zarr_format=4)


def test_create_array_chunks_need_every_dimension():
    with pytest.raises(ValueError, match=r"chunks: \(8,\) has 1 dimension\(s\), shape \(16, 16\) has 2"):
        zarrkit.create_array({}, shape=(16, 16), chunks=(8,), dtype="u1")
    # zarr-python 2's create still lets the last dimensions whole
    assert zarrkit.create(shape=(16, 16), chunks=(8,), dtype="u1", store={}).chunks == (8, 16)


def test_shards_that_do_not_hold_whole_chunks():
    with pytest.raises(ValueError, match="chunk length 9 along dimension 0, got 16") as info:
        zarrkit.create_array({}, shape=(16, 16), shards=(16, 16), chunks=(9, 9), dtype="u1")
    assert "Chunk edge length 16 in dimension 0 is not divisible by the shard's inner chunk size 9." in str(info.value)
