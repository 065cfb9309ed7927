"""Test-suite wide settings: the ``slow`` marker.

Tests that start servers or processes, or search many random inputs, are marked ``slow``: the
fuzzers, the SIGKILL crash tests, everything against the S3 (moto) server, and the
``distributed`` cluster.  ``make test`` runs them all; a quick run skips them with
``pytest -m "not slow"``.
"""

from __future__ import annotations

import pytest

#: modules whose every test is slow
SLOW_MODULES = {"test_fuzz.py", "test_crash.py", "test_cli_s3.py"}
#: fixtures that make a test slow (servers)
SLOW_FIXTURES = {"s3", "s3_faulty"}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "slow: starts servers or processes, or fuzzes (deselect with -m 'not slow')"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if (
            item.path.name in SLOW_MODULES
            or fixtures & SLOW_FIXTURES
            or "distributed" in item.name
            or "S3" in (item.cls.__name__ if item.cls else "")
        ):
            item.add_marker(pytest.mark.slow)
