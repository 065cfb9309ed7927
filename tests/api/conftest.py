"""The classic-API tests check the zarr-2 behaviour and on-disk layout: run them on format 2."""

import pytest

import zarrkit


@pytest.fixture(autouse=True)
def _zarr_format_2():
    with zarrkit.config.set(zarr_format=2):
        yield
