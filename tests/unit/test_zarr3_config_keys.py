"""zarr-python 3's configuration keys on ``zarrkit.config``: every key of its defaults is
taken, removed keys are refused with ValueError, ``get`` answers sections and raises KeyError
for a key it does not hold, ``defaults`` lists the default settings."""

from __future__ import annotations

import sys

import pytest

import zarrkit
from zarrkit.config import Config

ZARR3_DEFAULT_KEYS = [
    "default_zarr_format", "array.order", "array.write_empty_chunks", "array.read_missing_chunks",
    "array.target_shard_size_bytes", "array.rectilinear_chunks", "array.sharding_coalesce_max_gap_bytes",
    "array.sharding_coalesce_max_bytes", "array.allow_unsafe_pickle_decode", "async.concurrency",
    "async.timeout", "threading.max_workers", "json_indent", "codec_pipeline.path",
    "codec_pipeline.batch_size", "codec_pipeline.max_workers", "codecs.blosc", "codecs.numcodecs.zstd",
    "codecs.vlen-utf8", "buffer", "ndbuffer",
]


@pytest.mark.parametrize("key", ZARR3_DEFAULT_KEYS)
def test_every_zarr3_default_key_is_held_and_settable(key):
    own = Config()
    value = own.get(key)
    with own.set({key: value}):
        assert own.get(key) == value


def test_buffer_keys_kept_for_the_block():
    own = Config()
    with own.set({"buffer": "my.Buffer", "ndbuffer": "my.NDBuffer"}):
        assert own.get("buffer") == "my.Buffer"
    assert own.get("buffer") == "zarr.buffer.cpu.Buffer"


def test_new_codec_names_are_taken():
    own = Config()
    with own.set({"codecs.my_codec": "pkg.MyCodec"}):
        assert own.get("codecs.my_codec") == "pkg.MyCodec"
        assert own.get("codecs")["my_codec"] == "pkg.MyCodec"


def test_allow_unsafe_pickle_decode_is_allow_unsafe_codecs():
    own = Config()
    with own.set({"array.allow_unsafe_pickle_decode": True}):
        assert own.allow_unsafe_codecs is True
    assert own.get("array.allow_unsafe_pickle_decode") is False


@pytest.mark.parametrize("key", ["array.v2_default_compressor.numeric", "array.v3_default_compressors",
                                 "array.v3_default_serializer.string"])
def test_removed_keys_refused_with_value_error(key):
    own = Config()
    with pytest.raises(ValueError, match="no longer taken"):
        own.set({key: "foo"})
    with pytest.raises(KeyError):
        own.get(key)


def test_unknown_key_of_a_known_section_still_refused():
    with pytest.raises(TypeError, match="array.ordr"):
        Config().set({"array.ordr": "F"})


def test_get_of_a_section_and_of_a_missing_key():
    own = Config()
    section = own.get("array")
    assert section["order"] == "C" and "write_empty_chunks" in section
    assert own.get("async")["timeout"] is None
    with pytest.raises(KeyError, match="nope"):
        own.get("nope")
    assert own.get("nope", 5) == 5
    assert own.get("array.nope", None) is None


def test_defaults_do_not_follow_changes():
    own = Config()
    with own.set({"array.order": "F"}):
        assert own.defaults[0]["array"]["order"] == "C"
        assert own.to_dict()["array"]["order"] == "F"
    assert isinstance(own.defaults, list) and len(own.defaults) == 1


def test_the_process_config_is_zarr_core_configs():
    # zarr.core.config resolves to zarrkit.config (compat.ZARR3_PATHS)
    assert zarrkit.compat.ZARR3_PATHS["core.config"] == ("config",)
    module = sys.modules["zarrkit.config"]
    assert module.config is zarrkit.config and isinstance(module.config, Config)
