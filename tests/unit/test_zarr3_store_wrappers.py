"""zarr-python 3's wrapper stores: ``LoggingStore`` (logs and counts each request) and the
``get_latency`` / ``set_latency`` keywords of ``LatencyStore``."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest

import zarrkit
from zarrkit.storage import LatencyStore, LoggingStore, MemoryStore


def test_logging_store_counts_each_kind_of_request():
    store = LoggingStore(MemoryStore())
    z = zarrkit.create_array(store, shape=(4,), chunks=(2,), dtype="i1", fill_value=0)
    store.counter.clear()
    z[:2] = 1
    assert store.counter["set"] == 1
    assert store.counter["get"] == 0  # a whole chunk written: nothing read
    z[1:3] = 2
    assert store.counter["get"] == 2 and store.counter["set"] == 3
    store.list_dir("")
    list(store.list_prefix("c/"))
    assert store.counter["list_dir"] == 1 and store.counter["list_prefix"] == 1


def test_logging_store_logs_the_store_request_and_key(caplog):
    inner = MemoryStore()
    store = LoggingStore(store=inner)
    with caplog.at_level(logging.INFO, logger=f"LoggingStore({inner})"):
        store.set("a/b", b"1")
        store.get("a/b")
    messages = [r.getMessage() for r in caplog.records]
    assert "Calling MemoryStore.set(a/b)" in messages
    assert "Calling MemoryStore.get(a/b)" in messages


def test_logging_store_handler_and_level():
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    store = LoggingStore(MemoryStore(), log_level="INFO", log_handler=Keep())
    store.exists("k")
    assert store.logger.level == logging.INFO
    assert [r.getMessage() for r in records] == ["Calling MemoryStore.exists(k)"]


def test_logging_store_open_wraps_a_new_store():
    store = asyncio.run(LoggingStore.open(MemoryStore, read_only=True, log_level="WARNING"))
    assert isinstance(store.inner, MemoryStore)
    assert store.read_only
    assert store.log_level == "WARNING"


def test_latency_store_separate_read_and_write_delays():
    store = LatencyStore(MemoryStore(), get_latency=0.05, set_latency=0.0)
    start = time.perf_counter()
    store.set("a", b"1")
    assert time.perf_counter() - start < 0.04
    start = time.perf_counter()
    assert store.get("a") == b"1"
    assert time.perf_counter() - start >= 0.05


def test_latency_store_seconds_still_sets_both():
    store = LatencyStore(MemoryStore(), seconds=0.001)
    assert (store.get_latency, store.set_latency) == (0.001, 0.001)


@pytest.mark.parametrize("name", ["seconds", "get_latency", "set_latency"])
def test_latency_store_refuses_negative_delays(name):
    with pytest.raises(ValueError, match=name):
        LatencyStore(MemoryStore(), **{name: -1})
