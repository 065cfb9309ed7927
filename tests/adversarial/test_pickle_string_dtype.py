"""A string array opened with ``config.set(string_dtype="object")`` and sent to another process
(pickled, as dask and multiprocessing do) keeps reading as ``object`` there: the receiver's
configuration must not change the arrays the sender described to it."""

from __future__ import annotations

import pickle
import subprocess
import sys

import numpy as np
import pytest

import zarrkit

_LOAD = (
    "import pickle, sys\n"
    "a = pickle.loads(sys.stdin.buffer.read())\n"
    "print(a.dtype, a[:].dtype, a[:].tolist())\n"
)


def _in_other_process(payload: bytes) -> str:
    done = subprocess.run([sys.executable, "-c", _LOAD], input=payload, capture_output=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout.decode().strip()


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_object_strings_stay_object_in_another_process(tmp_path, zarr_format):
    with zarrkit.config.set(string_dtype="object"):
        arr = zarrkit.create_array(store=str(tmp_path / "s"), shape=(2,), dtype=str, zarr_format=zarr_format)
        arr[:] = ["x", "y"]
        payload = pickle.dumps(arr)
    assert arr.dtype == np.dtype(object)
    assert _in_other_process(payload) == "object object ['x', 'y']"


def test_stringdtype_strings_stay_stringdtype(tmp_path):
    arr = zarrkit.create_array(store=str(tmp_path / "s"), shape=(2,), dtype=str)
    arr[:] = ["x", "y"]
    with zarrkit.config.set(string_dtype="object"):
        again = pickle.loads(pickle.dumps(arr))
        assert again.dtype == arr.dtype
        assert again[:].tolist() == ["x", "y"]
