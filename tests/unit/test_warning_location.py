"""Every warning zarrkit gives is attributed to the user's line: the file and line of the code
that called zarrkit, not the zarrkit line that noticed the problem, also when the problem is
noticed by a task on a pool thread."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest

import zarrkit
import zarrkit._warnings

HERE = __file__


def _caught(action):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        action()
    return caught


@pytest.mark.parametrize("threads", [1, 4])
def test_a_zip_member_written_again_is_reported_at_the_users_write(tmp_path, threads):
    store = zarrkit.ZipStore(str(tmp_path / "a.zip"), mode="w")
    z = zarrkit.zeros((64, 64), chunks=(2, 2), store=store, compressor=None)
    z[:] = 1
    with zarrkit.config.set(threads=threads, parallel_min_chunk_bytes=0):
        def write():
            z[:] = 2  # the line the warnings must name

        caught = _caught(write)
    line = write.__code__.co_firstlineno + 1
    rewritten = [w for w in caught if "is written again" in str(w.message)]
    assert len(rewritten) == 1024
    assert {(w.filename, w.lineno) for w in rewritten} == {(HERE, line)}
    store.close()


def test_the_pool_threads_really_raise_some_of_them(tmp_path):
    """The threaded case above is only a test of the pool path if tasks on other threads warn
    (1,024 chunks: enough that the pool's threads take some, however busy the machine)."""
    store = zarrkit.ZipStore(str(tmp_path / "a.zip"), mode="w")
    z = zarrkit.zeros((64, 64), chunks=(2, 2), store=store, compressor=None)
    z[:] = 1
    threads = set()
    original = store._set

    def recording(key, value):
        threads.add(threading.current_thread().name)
        return original(key, value)

    store._set = recording
    with zarrkit.config.set(threads=4, parallel_min_chunk_bytes=0), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z[:] = 2
    assert len(threads) > 1
    store.close()


@pytest.mark.parametrize("skip_prefixes", [True, False], ids=["skip_file_prefixes", "stacklevel"])
def test_creation_warnings_name_the_callers_line(monkeypatch, skip_prefixes):
    # on Python 3.11 the stack level is computed; the same walk is checked here on any version
    monkeypatch.setattr(zarrkit._warnings, "HAS_SKIP_FILE_PREFIXES",
                        skip_prefixes and zarrkit._warnings.HAS_SKIP_FILE_PREFIXES)

    def create():
        zarrkit.zeros((10.0,), chunks=5)  # a float length: taken as 10, with a warning

    def h5py_option():
        zarrkit.group().create_dataset("x", shape=4, fletcher32=True)

    for action in (create, h5py_option):
        caught = _caught(action)
        assert caught, action.__name__
        assert [(w.filename, w.lineno) for w in caught] == [
            (HERE, action.__code__.co_firstlineno + 1)] * len(caught), [str(w.message) for w in caught]


def test_an_error_filter_raises_at_the_users_line():
    with warnings.catch_warnings():
        warnings.filterwarnings("error", category=UserWarning, module=__name__)
        with pytest.raises(UserWarning, match="float"):
            zarrkit.zeros((np.float64(6.0),), chunks=3)


def test_no_module_calls_warnings_warn_directly():
    from pathlib import Path

    src = Path(zarrkit.__file__).parent
    direct = [p.relative_to(src).as_posix() for p in src.rglob("*.py")
              if "warnings.warn(" in p.read_text() and p.name != "_warnings.py"]
    assert direct == []
