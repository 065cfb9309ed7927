"""What ``info`` and the stored counts cost on object storage: one listing with sizes (the
pages S3 returns, 1,000 keys each), never a request per chunk -- through s3fs and through
obstore, counted by the moto server itself."""

from __future__ import annotations

import math
import uuid

import numpy as np
import pytest
from moto_s3 import BUCKET

import zarrkit

pytestmark = pytest.mark.slow

N = 1_100  # chunks: two pages of a listing


def _fsspec(s3, prefix):
    from zarrkit.storage.fsspec import FsspecStore

    return FsspecStore.from_url(f"s3://{BUCKET}/{prefix}", storage_options=s3.options)


def _obstore(s3, prefix):
    pytest.importorskip("obstore")
    from obstore.store import S3Store

    from zarrkit.storage import ObjectStore

    return ObjectStore(S3Store(BUCKET, prefix=prefix, access_key_id="testing", secret_access_key="testing",
                               region="us-east-1", endpoint=s3.endpoint, client_options={"allow_http": True}))


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("make", [_fsspec, _obstore], ids=["fsspec", "obstore"])
def test_info_and_stored_counts_list_once(s3, make, zarr_format):
    prefix = f"info-{uuid.uuid4().hex}"
    z = zarrkit.create_array(make(s3, prefix), shape=(N + 500,), chunks=(1,), dtype="u1", fill_value=0,
                             compressors=None, zarr_format=zarr_format)
    z[:N] = np.arange(N) % 200 + 1  # N chunks stored, 500 never written
    pages = math.ceil((N + 3) / 1000)  # the chunks and the metadata documents, 1,000 keys a page
    for ask in ("info_complete", "nbytes_stored", "nchunks_initialized", "info"):
        r = zarrkit.open_array(make(s3, prefix), mode="r")
        s3.recorder.reset()
        value = getattr(r, ask)
        text = str(value() if callable(value) else value)
        requests = s3.recorder.below(prefix)
        lists = [q for q in requests if q[0] == "GET" and "list-type" in q[2]]
        assert len(requests) - len(lists) <= 1, (ask, requests[:5])  # no request per chunk
        assert len(lists) <= pages, (ask, len(lists))
        if ask == "nchunks_initialized":
            assert value == N
        if ask == "info_complete" or (ask == "info" and zarr_format == 2):
            # zarr-python 2's "Chunks initialized : 3000/3500", zarr-python 3's "... : 3000"
            line, = (x for x in text.splitlines() if x.lower().startswith("chunks initialized"))
            assert line.split(":")[1].strip().split("/")[0] == str(N), text
