"""Red-team attacks on scoped configuration (config.py): ``config.set`` tells a ``with`` block
from a statement by reading the caller's next opcode; a set made before its block is known
(``cm = config.set(...)`` then ``with cm:``) is applied for the process and taken back when
entered, each setting only when its stamp is still the one it wrote."""

from __future__ import annotations

import threading
import time

import pytest

from zarrkit import config


@pytest.fixture(autouse=True)
def _restore_config():
    before = (config.allow_unsafe_codecs, config.threads)
    yield
    config.update(allow_unsafe_codecs=before[0], threads=before[1])


def test_two_deferred_blocks_leave_nothing_behind():
    a = config.set(allow_unsafe_codecs=True)
    b = config.set(allow_unsafe_codecs=True)
    with a:
        pass
    with b:
        pass
    assert config.allow_unsafe_codecs is False


def test_deferred_blocks_in_two_threads_leave_nothing_behind():
    for _ in range(5):
        barrier = threading.Barrier(2)

        def user(delay: float, barrier: threading.Barrier = barrier) -> None:
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


def _seen_by_another_thread(source: str, seconds: float = 2.0, name: str = "threads",
                            value: object = 9) -> int:
    code = compile(source, "<block>", "exec")
    seen, stop = [0], [False]

    def watch() -> None:
        while not stop[0]:
            if getattr(config, name) == value:
                seen[0] += 1

    w = threading.Thread(target=watch)
    w.start()
    end = time.monotonic() + seconds
    try:
        while time.monotonic() < end and not seen[0]:
            for _ in range(200):
                exec(code, {"config": config})  # noqa: S102 - the form under test is compiled
    finally:
        stop[0] = True
        w.join()
    return seen[0]


def test_a_walrus_block_is_never_seen_by_another_thread():
    assert _seen_by_another_thread("with (s := config.set(threads=9)):\n    pass") == 0


@pytest.mark.parametrize("source", [
    "with (config.set(threads=9)):\n    pass",
    "with config.set(io_threads=3), config.set(threads=9):\n    pass",
    "with config.set(threads=9) as c:\n    pass",
])
def test_block_forms_are_never_seen_by_another_thread(source):
    assert _seen_by_another_thread(source, seconds=0.5) == 0


@pytest.mark.parametrize("source", [
    "def f():\n    return config.set(threads=9)\nwith f():\n    pass",
    ("def f():\n    return config.set(threads=9)\n"
     "def g():\n    return f()\nwith g() as c:\n    pass"),
    "s = config.set(threads=9)\nwith s:\n    pass",
    "with (s := config.set(threads=9)) as c:\n    pass",
])
def test_blocks_given_their_scope_by_a_function_or_a_name_are_never_seen(source):
    assert _seen_by_another_thread(source, seconds=0.5) == 0


def test_a_guard_kept_in_a_local_for_a_later_block_is_never_seen_by_another_thread():
    source = ("def user():\n    cm = config.set(allow_unsafe_codecs=True)\n    n = len('x')\n"
              "    with cm:\n        pass\nuser()")
    assert _seen_by_another_thread(source, seconds=0.5, name="allow_unsafe_codecs", value=True) == 0
    assert config.allow_unsafe_codecs is False


# scopes the calling code's opcodes cannot show to be blocks (kept in a list, in an attribute,
# of settings that are no guard): made for the process, taken back when entered, in any order

@pytest.mark.parametrize("order", [(0, 1), (1, 0)])
@pytest.mark.parametrize("change", [{"allow_unsafe_codecs": True}, {"threads": 9}])
def test_deferred_scopes_entered_in_either_order_leave_the_process_value(order, change):
    (name, value), = change.items()
    before = getattr(config, name)
    scopes = [config.set(**change), config.set(**change)]
    assert getattr(config, name) == value  # not known to be blocks yet: made for the process
    for i in order:
        with scopes[i]:
            assert getattr(config, name) == value
    assert getattr(config, name) == before


def test_deferred_scopes_of_different_values_nested_and_left_unentered():
    base = config.threads
    held = [config.set(threads=5), config.set(threads=6), config.set(threads=7)]
    assert config.threads == 7
    with held[2]:
        assert config.threads == 7  # its own, in the block
        seen = []
        t = threading.Thread(target=lambda: seen.append(config.threads))
        t.start()
        t.join()
        assert seen == [6]  # the newest change not taken back
        with held[0]:
            assert config.threads == 5
        assert config.threads == 7
    assert config.threads == 6  # held[1] never entered: a change for the process
    held.pop(1)  # and gone: it stands for good
    with held[0]:
        pass
    assert config.threads == 6
    config.update(threads=base)
    assert config.threads == base


def test_a_permanent_change_after_a_deferred_scope_is_kept_when_it_is_entered():
    holder = [config.set(allow_unsafe_codecs=True)]
    config.update(allow_unsafe_codecs=False)
    with holder[0]:
        assert config.allow_unsafe_codecs is True
    assert config.allow_unsafe_codecs is False
    holder.append(config.set(threads=3))
    config.reset()
    with holder[1]:
        pass
    assert config.threads == type(config)().threads


@pytest.mark.parametrize(("name", "value"), [("allow_unsafe_codecs", True), ("threads", 9)])
def test_deferred_scopes_in_many_threads_leave_nothing_behind(name, value):
    before = getattr(config, name)
    for _ in range(3):
        barrier = threading.Barrier(4)
        inside = []

        def user(delay: float, barrier: threading.Barrier = barrier, inside: list = inside) -> None:
            barrier.wait()
            held = [config.set(**{name: value})]
            time.sleep(delay)
            with held[0]:
                inside.append(getattr(config, name))

        ts = [threading.Thread(target=user, args=(d,)) for d in (0.001, 0.002, 0.003, 0.004)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        assert inside == [value] * 4
        assert getattr(config, name) == before
