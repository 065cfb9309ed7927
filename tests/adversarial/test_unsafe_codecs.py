"""No code from data: a codec whose decoding runs code the stored bytes name (numcodecs'
``pickle``) is refused when an array is opened, before any chunk is read, and when one is
created, unless ``zarrkit.config.allow_unsafe_codecs`` says the data is trusted.  numcodecs'
own switch is not what protects zarrkit: the stores here are read with it turned on, as a
numcodecs without the switch would read them."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import textwrap

import numcodecs
import numpy as np
import pytest

import zarrkit
from zarrkit.errors import MetadataError


class _WritesMarker:
    """Unpickling this calls ``open(path, 'w')``: code chosen by whoever wrote the chunk."""

    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def hostile_store(marker: str, where: str = "filters") -> dict:
    meta = {"zarr_format": 2, "shape": [2], "chunks": [2], "dtype": "|O", "compressor": None,
            "fill_value": None, "order": "C", "filters": [{"id": "vlen-utf8"}]}
    if where == "filters":
        meta["filters"] = [{"id": "pickle", "protocol": 5}]
    else:
        meta["compressor"] = {"id": "pickle", "protocol": 5}
    chunk = pickle.dumps(np.array([_WritesMarker(marker), 1], dtype=object))
    return {"g/a/.zarray": json.dumps(meta).encode(), "g/a/0": chunk}


CHILD = textwrap.dedent("""
    import os, pickle, sys
    import zarrkit
    from zarrkit.errors import MetadataError
    store = pickle.loads(bytes.fromhex(sys.argv[1]))
    try:
        zarrkit.open_array(store, path="g/a", mode="r")[:]
    except MetadataError as exc:
        print("MetadataError:", exc)
    except Exception as exc:
        print(type(exc).__name__, exc)
    else:
        print("read")
""")


@pytest.mark.parametrize("where", ["filters", "compressor"])
def test_a_pickled_chunk_runs_no_code_and_the_array_is_refused_at_open(tmp_path, where):
    marker = str(tmp_path / "ran")
    store = hostile_store(marker, where)
    env = {**os.environ, "NUMCODECS_ALLOW_UNSAFE_PICKLE_DECODE": "1"}
    proc = subprocess.run([sys.executable, "-c", CHILD, pickle.dumps(store).hex()],
                          check=False, capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr[-500:]
    assert not os.path.exists(marker), "the chunk's code ran"
    out = proc.stdout
    assert out.startswith("MetadataError: g/a/.zarray: "), out + proc.stderr
    assert f"{where}: codec 'pickle'" in out and "allow_unsafe_codecs=True" in out


class _Store(dict):
    """A dict that records the keys read."""

    def __init__(self, *args):
        super().__init__(*args)
        self.read = []

    def __getitem__(self, key):
        self.read.append(key)
        return super().__getitem__(key)


def test_no_chunk_is_read_before_the_refusal(tmp_path):
    store = _Store(hostile_store(str(tmp_path / "ran")))
    with pytest.raises(MetadataError, match="'pickle'"):
        zarrkit.open_array(store, path="g/a", mode="r")
    assert "g/a/.zarray" in store.read and "g/a/0" not in store.read


@pytest.mark.filterwarnings("ignore:the object codec of an object array:FutureWarning")
@pytest.mark.parametrize("kwargs", [
    {"dtype": object, "object_codec": numcodecs.Pickle()},
    {"dtype": object, "filters": [numcodecs.Pickle()]},
    {"dtype": "i4", "compressor": numcodecs.Pickle()},
])
def test_creating_an_array_with_pickle_is_refused_before_anything_is_written(kwargs):
    store = {}
    with pytest.raises(MetadataError, match="codec 'pickle'.*allow_unsafe_codecs"):
        zarrkit.create(store=store, shape=(3,), chunks=(3,), zarr_format=2, **kwargs)
    assert store == {}


def test_the_opt_in_reads_and_writes_pickled_arrays_without_numcodecs_switch(tmp_path):
    assert not numcodecs.pickles.ALLOW_UNSAFE_PICKLE_DECODE  # numcodecs refuses by itself
    store = {}
    with zarrkit.config.set(allow_unsafe_codecs=True):
        z = zarrkit.create(store=store, shape=(3,), chunks=(3,), dtype=object, zarr_format=2,
                           object_codec=numcodecs.Pickle())
        z[:] = ["a", 1, None]
        again = zarrkit.open_array(store, mode="r")
    assert again[:].tolist() == ["a", 1, None]
    assert not numcodecs.pickles.ALLOW_UNSAFE_PICKLE_DECODE  # and its switch was left alone
    with pytest.raises(MetadataError, match="'pickle'"):
        zarrkit.open_array(store, mode="r")  # outside the opt-in: refused again


def test_the_opt_in_reads_structured_values_with_object_fields():
    # what zarr-python 2 writes for a structured dtype with an object field: pickle first
    values = np.array([(b"aaa", 1), (b"bbb", 2)], dtype=[("c_obj", object), ("c_int", "<i8")])
    meta = {"zarr_format": 2, "shape": [2], "chunks": [2], "dtype": [["c_obj", "|O"], ["c_int", "<i8"]],
            "compressor": {"id": "zlib", "level": 1}, "fill_value": None, "order": "C",
            "filters": [{"id": "pickle", "protocol": 5}]}
    store = {".zarray": json.dumps(meta).encode(),
             "0": numcodecs.Zlib(1).encode(numcodecs.Pickle().encode(values))}
    with pytest.raises(MetadataError, match="'pickle'"):
        zarrkit.open_array(store, mode="r")
    with zarrkit.config.set(allow_unsafe_codecs=True):
        z = zarrkit.open_array(store, mode="r")
    assert z[:].tolist() == values.tolist()


def test_the_setting_takes_only_booleans():
    with pytest.raises(ValueError, match="allow_unsafe_codecs must be True or False, got 'yes'"):
        zarrkit.config.set(allow_unsafe_codecs="yes")
    assert zarrkit.config.allow_unsafe_codecs is False
