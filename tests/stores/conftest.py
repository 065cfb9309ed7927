"""The servers of the store tests: one moto S3 server on 127.0.0.1 per session, with a bucket;
HTTP servers of static files (``http_serve``) and the arrays they serve (``served_data``)."""

from __future__ import annotations

import functools
import threading

import numpy as np
import pytest
from http_serve import QuietServer, RangeHandler  # tests/stores is on sys.path
from moto_s3 import BUCKET, FaultyProxy, start_server

import zarrkit
from zarrkit.storage import DirectoryStore


@pytest.fixture(scope="session")
def s3():
    """``endpoint``, s3fs-style ``options``, an s3fs ``fs`` and the server's ``recorder``."""
    pytest.importorskip("moto.server")
    fsspec = pytest.importorskip("fsspec")
    pytest.importorskip("s3fs")
    server, endpoint = start_server()
    options = {
        "key": "testing", "secret": "testing", "anon": False,
        "client_kwargs": {"endpoint_url": endpoint},
    }
    fs = fsspec.filesystem("s3", **options)
    # (moto's backends are the process's: a bucket made through another server of this
    # process, such as a test module's own, is there already)
    if not fs.exists(BUCKET):
        fs.mkdir(BUCKET)

    class S3:
        pass

    info = S3()
    info.endpoint, info.options, info.fs, info.recorder = endpoint, options, fs, server.recorder
    yield info
    server.stop()


@pytest.fixture
def s3_faulty(s3):
    """A :class:`moto_s3.FaultyProxy` in front of the ``s3`` server (its ``endpoint``; set
    ``drop`` to lose the answers of that many conditional PUTs)."""
    proxy = FaultyProxy(s3.endpoint)
    yield proxy
    proxy.close()


@pytest.fixture
def http_serve():
    servers = []

    def serve(directory, handler=RangeHandler, **attrs):
        log: list = []
        cls = type("Handler", (handler,), {"log": log, "counts": {}, "lock": threading.Lock(),
                                           **attrs})
        server = QuietServer(("127.0.0.1", 0), functools.partial(cls, directory=str(directory)))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}", log

    yield serve
    for s in servers:
        s.shutdown()
        s.server_close()


@pytest.fixture
def served_data(tmp_path):
    """A directory zarrkit wrote: v2 and v3 arrays, a sharded array, with a missing chunk."""
    root = tmp_path / "site"
    data = np.arange(20 * 20, dtype="i4").reshape(20, 20)
    for fmt in (2, 3):
        z = zarrkit.create(shape=(20, 20), chunks=(7, 7), dtype="i4", fill_value=-5,
                           store=DirectoryStore(root / f"v{fmt}.zarr"), zarr_format=fmt)
        z[:] = data
    store = DirectoryStore(root / "v3.zarr")
    store.delete("c/2/2")  # a missing chunk: reads as the fill value
    sharded = zarrkit.create_array(DirectoryStore(root / "sharded.zarr"), shape=(64, 64),
                                   chunks=(8, 8), shards=(32, 32), dtype="i4", zarr_format=3)
    big = np.arange(64 * 64, dtype="i4").reshape(64, 64)
    sharded[:] = big
    return root, data, big
