"""zarr-python 3's configuration as its code uses it: ``zarrkit.config`` with dotted keys and
the nested ``config.config``; ``config=`` of the creation functions; ``consolidate_metadata``'s
``zarr_format``."""

from __future__ import annotations

import numpy as np
import pytest

import zarrkit
from zarrkit.config import Config
from zarrkit.core.views import ArrayConfig

cfg = zarrkit.config


def test_nested_dict_holds_zarr3_keys_and_own_names():
    nested = cfg.config
    assert nested["array"]["order"] == cfg.order
    assert nested["array"]["write_empty_chunks"] == cfg.write_empty_chunks_for(cfg.zarr_format)
    assert nested["default_zarr_format"] == cfg.zarr_format
    assert nested["threading"]["max_workers"] == cfg.threads
    assert nested["async"]["concurrency"] == cfg.io_threads
    assert "path" in nested["codec_pipeline"]
    assert nested["threads"] == cfg.threads


def test_set_as_block_and_as_call():
    before = cfg.get("array.write_empty_chunks")
    with cfg.set({"array.write_empty_chunks": not before}):
        assert cfg.get("array.write_empty_chunks") is (not before)
        assert cfg.config["array"]["write_empty_chunks"] is (not before)
    assert cfg.get("array.write_empty_chunks") is before
    try:
        cfg.set({"array.order": "F"})
        assert cfg.order == "F"
    finally:
        cfg.set({"array.order": "C"})


def test_unknown_dotted_keys_are_kept_for_the_block():
    with cfg.set({"my_plugin.level": 3}):
        assert cfg.get("my_plugin.level") == 3
        assert cfg.config["my_plugin"] == {"level": 3}
    assert cfg.get("my_plugin.level", "unset") == "unset"


def test_names_without_dots_still_checked():
    with pytest.raises(TypeError, match="unknown config setting"):
        cfg.set(no_such_setting=1)


def test_reset_forgets_kept_keys():
    own = Config()  # the process-wide one keeps what the test run set up
    own.set({"my_plugin.level": 4, "array.order": "F"})
    own.reset()
    # get() of a key no longer held raises KeyError, as zarr-python 3's configuration object's
    # does: the default tells it is gone
    assert own.get("my_plugin.level", None) is None
    assert own.order == "C"


def test_enable_gpu_names_the_feature():
    with pytest.raises(NotImplementedError, match="GPU"):
        cfg.enable_gpu()


CONFIGS = [{"order": "F", "write_empty_chunks": True}, ArrayConfig(order="F", write_empty_chunks=True)]


@pytest.mark.parametrize("config", CONFIGS, ids=["dict", "ArrayConfig"])
def test_creation_functions_take_config(config):
    g = zarrkit.group({}, zarr_format=3)
    made = [
        zarrkit.create_array({}, shape=(4,), dtype="i4", config=config),
        zarrkit.create((4,), store={}, zarr_format=3, config=config),
        zarrkit.zeros((4,), store={}, zarr_format=3, config=config),
        zarrkit.open_array({}, mode="w", shape=(4,), zarr_format=3, config=config),
        zarrkit.from_array({}, data=np.arange(4), config=config),
        g.create_array("a", shape=(4,), dtype="i4", config=config),
        g.create("b", shape=(4,), dtype="i4", config=config),
        g.require_array("c", shape=(4,), dtype="i4", config=config),
        g.zeros("d", shape=(4,), config=config),
    ]
    for z in made:
        assert z.order == "F"
        z[:] = 0
        assert len(list(z.store.keys())) > 1  # the all-fill chunk was written


def test_config_is_not_stored():
    store: dict = {}
    zarrkit.create_array(store, shape=(4,), dtype="i4", zarr_format=3, config={"write_empty_chunks": True})
    assert b"write_empty_chunks" not in bytes(store["zarr.json"])


def test_config_of_another_type_refused():
    with pytest.raises(TypeError, match="config"):
        zarrkit.create_array({}, shape=(4,), dtype="i4", config=3)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_consolidate_metadata_zarr_format(zarr_format):
    store: dict = {}
    zarrkit.group(store, zarr_format=zarr_format).zeros("a", shape=(3,))
    g = zarrkit.consolidate_metadata(store, zarr_format=zarr_format)
    assert "a" in g


def test_consolidate_metadata_zarr_format_checked():
    store: dict = {}
    zarrkit.group(store, zarr_format=3)
    with pytest.raises(ValueError, match="zarr_format"):
        zarrkit.consolidate_metadata(store, zarr_format=4)
