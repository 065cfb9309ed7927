"""One set of creation defaults per format, whichever function makes the array: zarr-python 3's
for v3 arrays (Zstd level 0, chunks holding only the fill value not stored, NaT for times,
``filters == ()``, a root's name ``'/'``), zarr-python 2's for v2 arrays."""

from __future__ import annotations

import numcodecs
import numpy as np
import pytest

import zarrkit
from zarrkit.codecs import ZstdCodec

MAKERS = {
    "zeros": lambda fmt: zarrkit.zeros((4,), chunks=2, zarr_format=fmt),
    "full": lambda fmt: zarrkit.full((4,), 0.0, chunks=2, zarr_format=fmt),
    "array": lambda fmt: zarrkit.array(np.zeros(4), chunks=2, zarr_format=fmt),
    "open_array": lambda fmt: zarrkit.open_array({}, mode="w", shape=(4,), chunks=2, zarr_format=fmt),
    "create_array": lambda fmt: zarrkit.create_array({}, shape=(4,), chunks=2, dtype="f8", zarr_format=fmt),
    "group.create_array": lambda fmt: zarrkit.group(zarr_format=fmt).create_array("a", shape=(4,), chunks=2, dtype="f8"),
    "group.zeros": lambda fmt: zarrkit.group(zarr_format=fmt).zeros(name="a", shape=(4,), chunks=2),
}


@pytest.mark.parametrize("maker", MAKERS)
def test_every_function_gives_the_formats_defaults(maker):
    v3, v2 = MAKERS[maker](3), MAKERS[maker](2)
    assert v3.compressors == (ZstdCodec(level=0, checksum=False),) and v3.filters == ()
    assert v2.compressor == numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE)
    assert v2.filters is None
    for a, stored in ((v3, 0), (v2, 2)):  # fill-value chunks: not stored (v3), stored (v2)
        a[:] = 0
        assert a.nchunks_initialized == stored, (maker, a.metadata.zarr_format)


def test_config_answers_what_is_used_and_root_names_and_times():
    cfg = zarrkit.config
    assert cfg.write_empty_chunks is None and cfg.get("array.write_empty_chunks") is False
    with cfg.set(zarr_format=2):
        assert cfg.get("array.write_empty_chunks") is True
    with cfg.set(write_empty_chunks=True):
        a = zarrkit.zeros((4,), chunks=2)
        a[:] = 0
        assert cfg.get("array.write_empty_chunks") is True and a.nchunks_initialized == 2
    # an existing v3 array opened without the setting: zarr-python 3's default too
    store = zarrkit.MemoryStore()
    zarrkit.create_array(store, shape=(4,), chunks=2, dtype="i4")
    assert zarrkit.open_array(store).config.write_empty_chunks is False
    root = zarrkit.zeros((2,))
    assert (root.name, root.basename) == ("/", "")
    assert zarrkit.zeros((2,), zarr_format=2).name is None
    for dt in ("M8[s]", "m8[ms]"):
        t = zarrkit.create_array({}, shape=(3,), dtype=dt)
        assert np.isnat(t[:]).all() and np.isnat(t.fill_value)


@pytest.mark.parametrize(
    "make",
    [
        lambda fmt: zarrkit.zeros((1000, 1000), dtype="u1", zarr_format=fmt),
        lambda fmt: zarrkit.create((1000, 1000), dtype="u1", zarr_format=fmt),
        lambda fmt: zarrkit.open_array({}, mode="w", shape=(1000, 1000), dtype="u1", zarr_format=fmt),
        lambda fmt: zarrkit.group(zarr_format=fmt).zeros(name="a", shape=(1000, 1000), dtype="u1"),
    ],
    ids=["zeros", "create", "open_array", "group.zeros"],
)
def test_guessed_chunks_are_the_formats(make):
    # zarr-python 3 aims at larger chunks than zarr-python 2 did: 250 KB here, 125 KB for v2
    assert make(3).chunks == (500, 500)
    assert make(2).chunks == (250, 500)
    assert zarrkit.create_array({}, shape=(1000, 1000), dtype="u1").chunks == (500, 500)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_from_array_keeps_the_fill_value_unless_one_is_given(zarr_format):
    source = zarrkit.create_array({}, shape=(4,), dtype="i4", fill_value=42, zarr_format=zarr_format)
    assert zarrkit.from_array({}, data=source).fill_value == 42
    assert zarrkit.from_array({}, data=source, fill_value=7).fill_value == 7
    # None is create_array's: the data type's default for v3, none for v2
    default = zarrkit.from_array({}, data=source, fill_value=None).fill_value
    assert default is None if zarr_format == 2 else default == 0
    assert zarrkit.from_array({}, data=np.arange(3)).fill_value == (None if zarrkit.config.zarr_format == 2 else 0)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_stringdtype_by_its_code_is_a_string_array(zarr_format):
    by_code = zarrkit.create_array({}, shape=(2,), dtype="T", zarr_format=zarr_format)
    by_dtype = zarrkit.create_array({}, shape=(2,), dtype=np.dtypes.StringDType(), zarr_format=zarr_format)
    assert by_code.dtype == by_dtype.dtype
    by_code[:] = ["a", "bc"]
    assert by_code[:].tolist() == ["a", "bc"]
