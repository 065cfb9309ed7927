"""zarr-python 3's ArrayConfig: from_dict, to_dict, and config= of the creation functions."""

from __future__ import annotations

import pytest

import zarrkit
from zarrkit.core.views import ArrayConfig


def test_from_dict_takes_missing_keys_from_global_config() -> None:
    with zarrkit.config.set({"array.order": "F"}):
        cfg = ArrayConfig.from_dict({"write_empty_chunks": False})
    assert cfg.order == "F"
    assert cfg.write_empty_chunks is False


def test_from_dict_given_keys_win() -> None:
    cfg = ArrayConfig.from_dict({"order": "F", "sharding_coalesce_max_bytes": 2})
    assert cfg.to_dict()["order"] == "F"
    assert cfg.to_dict()["sharding_coalesce_max_bytes"] == 2


def test_from_dict_unknown_keys_named() -> None:
    with pytest.raises(TypeError, match=r"Unknown array config keys: \['nope', 'zz'\]"):
        ArrayConfig.from_dict({"order": "C", "nope": 1, "zz": 2})


def test_bad_order_refused() -> None:
    with pytest.raises(ValueError, match="order"):
        ArrayConfig(order="K")


def test_round_trip_to_dict() -> None:
    cfg = ArrayConfig.from_dict({})
    assert ArrayConfig.from_dict(cfg.to_dict()) == cfg


@pytest.mark.parametrize("make", [
    lambda c: zarrkit.create_array({}, shape=(4,), dtype="u1", config=c),
    lambda c: zarrkit.create(shape=(4,), dtype="u1", config=c),
])
def test_creation_refuses_unknown_config_key(make) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(TypeError, match=r"Unknown array config keys: \['nope'\]"):
        make({"order": "C", "nope": 1})
