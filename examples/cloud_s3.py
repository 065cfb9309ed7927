"""An array on S3: written and read through a ``s3://`` URL, then opened by hand with obstore.

Without ``ZARRKIT_S3_ENDPOINT`` the script starts a local S3 server (moto, on 127.0.0.1) and
creates the bucket there; with it (e.g. ``http://127.0.0.1:9000`` for a MinIO server), it uses
that endpoint and the existing bucket ``ZARRKIT_S3_BUCKET`` (default ``zarrkit-example``), with
the credentials of ``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY``.

Needs the ``obstore`` extra (``pip install 'zarrkit[obstore]'``; with the ``remote`` extra
instead, the same URL goes through fsspec and s3fs), and ``moto[server]`` for the local
server.  ``--small`` (or ``ZARRKIT_EXAMPLES_SMALL=1``) uses a small array.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import uuid
from collections.abc import Iterator

import numpy as np

import zarrkit as zarr

SMALL = "--small" in sys.argv[1:] or os.environ.get("ZARRKIT_EXAMPLES_SMALL") == "1"
N = 256 if SMALL else 4096
CHUNK = 64 if SMALL else 256


@contextlib.contextmanager
def s3_endpoint() -> Iterator[tuple[str, str, str, str]]:
    """(endpoint, bucket, key id, secret): the one the environment names, or a local server."""
    key = os.environ.get("AWS_ACCESS_KEY_ID", "testing")
    secret = os.environ.get("AWS_SECRET_ACCESS_KEY", "testing")
    bucket = os.environ.get("ZARRKIT_S3_BUCKET", "zarrkit-example")
    if os.environ.get("ZARRKIT_S3_ENDPOINT"):
        yield os.environ["ZARRKIT_S3_ENDPOINT"], bucket, key, secret
        return
    import boto3
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)   # the server's log of requests
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                     aws_access_key_id=key, aws_secret_access_key=secret).create_bucket(Bucket=bucket)
        print(f"started a local S3 server at {endpoint}, bucket {bucket!r}")
        yield endpoint, bucket, key, secret
    finally:
        server.stop()


def main() -> None:
    with s3_endpoint() as (endpoint, bucket, key, secret):
        prefix = f"examples/{uuid.uuid4().hex[:8]}/data.zarr"   # a fresh place on every run
        url = f"s3://{bucket}/{prefix}"
        # fsspec's spellings; translated for obstore when it is installed
        options = {"key": key, "secret": secret, "endpoint_url": endpoint}

        # write: each chunk a separate object in the bucket
        z = zarr.open_array(url, mode="w", shape=(N, N), chunks=(CHUNK, CHUNK), dtype="f4",
                            storage_options=options)
        data = np.random.default_rng(0).random((N, N), dtype="f4")
        z[:] = data
        z.attrs["source"] = "cloud example"
        print("store:", type(z.store).__name__, "at", url)
        print("objects stored:", z.nchunks_initialized, "chunks and the metadata")

        # read back through a new handle: a corner, then everything
        again = zarr.open_array(url, mode="r", storage_options=options)
        assert np.array_equal(again[: N // 32, : N // 32], data[: N // 32, : N // 32])
        assert np.array_equal(again[:], data)
        print("read back:", again.shape, again.attrs["source"])

        # an obstore store built by hand (credential providers, retries, ...) is wrapped as is
        try:
            from obstore.store import S3Store
        except ImportError:
            print("(obstore is not installed: the hand-made store is skipped)")
            return
        s3 = S3Store(bucket, prefix=prefix, endpoint=endpoint, access_key_id=key,
                     secret_access_key=secret, region="us-east-1",
                     client_options={"allow_http": True})
        store = zarr.storage.ObjectStore(s3)
        by_hand = zarr.open_array(store, mode="r+")
        by_hand[0, :4] = -1                      # a partial chunk: conditioned on its version
        print("conditional writes:", store.supports_conditional_writes,
              "first row now starts", again[0, :4])


if __name__ == "__main__":
    main()
