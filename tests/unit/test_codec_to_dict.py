"""Codecs as zarr-python 3's in-memory dicts: ``to_dict`` gives what zarr-python's codec of the
same settings gives, and ``from_dict`` makes the codec back."""

from __future__ import annotations

import pytest

import zarrkit.codecs as kc
import zarrkit.codecs.numcodecs as kn
from zarrkit.codecs.base import codec_from_dict

zc = pytest.importorskip("zarr.codecs")
zn = pytest.importorskip("zarr.codecs.numcodecs")

CASES = [
    ("BytesCodec", {}),
    ("BytesCodec", {"endian": "big"}),
    ("Crc32cCodec", {}),
    ("TransposeCodec", {"order": (2, 0, 1)}),
    ("ZstdCodec", {"level": 7, "checksum": True}),
    ("GzipCodec", {"level": 1}),
    ("BloscCodec", {"cname": "lz4", "clevel": 3, "shuffle": "shuffle", "typesize": 8}),
    ("VLenUTF8Codec", {}),
    ("VLenBytesCodec", {}),
]


@pytest.mark.parametrize(("cls", "kwargs"), CASES, ids=[f"{c}-{i}" for i, (c, _) in enumerate(CASES)])
def test_to_dict_as_zarr_python(cls, kwargs):
    ours = getattr(kc, cls)(**kwargs)
    assert ours.to_dict() == getattr(zc, cls)(**kwargs).to_dict()
    assert type(ours).from_dict(ours.to_dict()) == ours
    assert codec_from_dict(ours.to_dict()) == ours


def test_sharding_nested_codecs():
    ours = kc.ShardingCodec(chunk_shape=(4, 4), codecs=[kc.BytesCodec(), kc.GzipCodec(level=2)],
                            index_location="start")
    theirs = zc.ShardingCodec(chunk_shape=(4, 4), codecs=[zc.BytesCodec(), zc.GzipCodec(level=2)],
                              index_location="start")
    assert ours.to_dict() == theirs.to_dict()
    assert kc.ShardingCodec.from_dict(theirs.to_dict()) == ours


@pytest.mark.parametrize(("cls", "kwargs"), [("Zlib", {"level": 2}), ("Delta", {"dtype": "<i4"}), ("Shuffle", {})])
def test_numcodecs_wrappers(cls, kwargs):
    ours = getattr(kn, cls)(**kwargs)
    assert ours.to_dict() == getattr(zn, cls)(**kwargs).to_dict()
    assert getattr(kn, cls).from_dict(ours.to_dict()) == ours


def test_from_dict_refuses_another_codec():
    with pytest.raises(ValueError, match="gzip"):
        kc.GzipCodec.from_dict({"name": "zstd", "configuration": {"level": 1}})
    with pytest.raises(ValueError, match="no codec named"):
        codec_from_dict({"name": "not-a-codec"})
