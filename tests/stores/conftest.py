"""The S3 server of the store tests: one moto server on 127.0.0.1 per session, with a bucket."""

from __future__ import annotations

import pytest

from moto_s3 import BUCKET, start_server  # tests/stores is on sys.path


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
    fs.mkdir(BUCKET)

    class S3:
        pass

    info = S3()
    info.endpoint, info.options, info.fs, info.recorder = endpoint, options, fs, server.recorder
    yield info
    server.stop()
