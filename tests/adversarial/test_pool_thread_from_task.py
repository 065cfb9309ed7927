"""A pool task that waits for a thread of its own which runs parallel work on the same pool
(a store or codec bridging to another thread, user code called back from a task): the waiting
task occupies a pool thread, so the other thread's run must not wait for pool threads that
will never be free.  Checked with timeouts, never by hanging the test run."""

from __future__ import annotations

import threading

from zarrkit.storage import pool

TIMEOUT = 30


def _in_thread(fn, timeout):
    out: list = []
    t = threading.Thread(target=lambda: out.append(fn()), daemon=True)
    t.start()
    t.join(timeout)
    return None if t.is_alive() else out[0]


def _task_waiting_on_a_thread(run):
    def task(i):
        return _in_thread(run, TIMEOUT / 3)

    return task


def test_run_tasks_from_a_thread_a_task_waits_for():
    run = lambda: pool.run_tasks(lambda y: y + 1, range(50), 3)
    results = _in_thread(lambda: pool.run_tasks(_task_waiting_on_a_thread(run), range(6), 3), TIMEOUT)
    assert results == [list(range(1, 51))] * 6


def test_run_pipelined_from_a_thread_a_task_waits_for():
    def run():
        seen: list[int] = []
        lock = threading.Lock()

        def consume(x):
            with lock:
                seen.append(x)

        pool.run_pipelined(iter(range(40)), consume, 3)
        return sorted(seen)

    results = _in_thread(lambda: pool.run_tasks(_task_waiting_on_a_thread(run), range(4), 3), TIMEOUT)
    assert results == [list(range(40))] * 4
