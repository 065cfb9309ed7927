"""Red-team attacks on scoped configuration (config.py): ``config.set`` tells a ``with`` block
from a statement by reading the caller's next opcode; a set made before its block is known
(``cm = config.set(...)`` then ``with cm:``) is applied for the process and taken back when
entered, each setting only when its stamp is still the one it wrote."""

from __future__ import annotations

import threading
import time

import pytest

import zarrkit
from zarrkit import config


@pytest.fixture(autouse=True)
def _restore_config():
    before = (config.allow_unsafe_codecs, config.threads)
    yield
    config.update(allow_unsafe_codecs=before[0], threads=before[1])


@pytest.mark.xfail(strict=True, reason="two deferred scopes: the second's __enter__ restores the "
                   "first's process-wide value (its 'previous'), the first's was skipped (stamp moved)")
def test_two_deferred_blocks_leave_nothing_behind():
    a = config.set(allow_unsafe_codecs=True)
    b = config.set(allow_unsafe_codecs=True)
    with a:
        pass
    with b:
        pass
    assert config.allow_unsafe_codecs is False


@pytest.mark.xfail(strict=True, reason="two threads each using 'cm = config.set(...); with cm:' "
                   "leave allow_unsafe_codecs=True for the process (50/50 runs)")
def test_deferred_blocks_in_two_threads_leave_nothing_behind():
    for _ in range(5):
        barrier = threading.Barrier(2)

        def user(delay: float) -> None:
            barrier.wait()
            cm = config.set(allow_unsafe_codecs=True)
            time.sleep(delay)
            with cm:
                pass

        ts = [threading.Thread(target=user, args=(d,)) for d in (0.001, 0.003)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        assert config.allow_unsafe_codecs is False


def _seen_by_another_thread(source: str, seconds: float = 2.0) -> int:
    code = compile(source, "<block>", "exec")
    seen, stop = [0], [False]

    def watch() -> None:
        while not stop[0]:
            if config.threads == 9:
                seen[0] += 1

    w = threading.Thread(target=watch)
    w.start()
    end = time.monotonic() + seconds
    try:
        while time.monotonic() < end and not seen[0]:
            for _ in range(200):
                exec(code, {"config": config})
    finally:
        stop[0] = True
        w.join()
    return seen[0]


@pytest.mark.xfail(strict=True, reason="'with (s := config.set(...)):' is not read as a block "
                   "(STORE_FAST follows the call): the setting is process-wide until entered")
def test_a_walrus_block_is_never_seen_by_another_thread():
    assert _seen_by_another_thread("with (s := config.set(threads=9)):\n    pass") == 0


@pytest.mark.parametrize("source", [
    "with (config.set(threads=9)):\n    pass",
    "with config.set(io_threads=3), config.set(threads=9):\n    pass",
    "with config.set(threads=9) as c:\n    pass",
])
def test_block_forms_are_never_seen_by_another_thread(source):
    assert _seen_by_another_thread(source, seconds=0.5) == 0
