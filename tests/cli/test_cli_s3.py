"""The ``zarrkit`` command line on S3 (a moto server on 127.0.0.1), run in subprocesses."""

from __future__ import annotations

import json
import socket

import numpy as np
import pytest
from test_cli import assert_one_line_error, run

import zarrkit

A = np.arange(60 * 40, dtype="i4").reshape(60, 40)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def s3():
    """(storage options, bucket URL) of a fresh bucket on a moto S3 server."""
    pytest.importorskip("s3fs")
    moto_server = pytest.importorskip("moto.server")
    import s3fs

    port = _free_port()
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    options = {"key": "testing", "secret": "testing", "anon": False,
               "client_kwargs": {"endpoint_url": f"http://127.0.0.1:{port}"}}
    try:
        fs = s3fs.S3FileSystem(**options)
        fs.mkdir("cli-bucket")
        yield options, "s3://cli-bucket"
    finally:
        server.stop()


def test_cli_reads_writes_and_checks_s3(s3, tmp_path):
    options, bucket = s3
    opts = json.dumps(options)
    src = f"{bucket}/src.zarr"
    root = zarrkit.open_group(src, mode="w", storage_options=options, zarr_format=3)
    z = root.create_dataset("grp/a", shape=A.shape, chunks=(16, 16), dtype="i4")
    z[:] = A
    root.attrs["title"] = "on s3"

    # inspect, with the options on the command line or in the environment
    info = json.loads(run("--storage-options", opts, "info", f"{src}/grp/a", "--json").stdout)
    assert info["shape"] == [60, 40]
    tree = run("tree", src, env={"ZARRKIT_STORAGE_OPTIONS": opts}).stdout
    assert "grp" in tree and "a" in tree
    assert "grp" in run("--storage-options", opts, "ls", src).stdout

    # copy S3 -> local (rechunked, v2) and local -> S3; both read back equal
    local = tmp_path / "copy.zarr"
    run("--storage-options", opts, "cp", src, local, "--zarr-format", "2", "--chunks", "20,20", "-q")
    back = zarrkit.open_array(str(local / "grp" / "a"), mode="r")
    assert back.chunks == (20, 20) and np.array_equal(back[:], A)
    dst = f"{bucket}/dst.zarr"
    run("--storage-options", opts, "cp", local, dst, "-q")
    np.testing.assert_array_equal(
        zarrkit.open_array(f"{dst}/grp/a", mode="r", storage_options=options)[:], A)

    # consolidate, verify (clean, then with a corrupted chunk), rm
    run("--storage-options", opts, "consolidate", src)
    assert zarrkit.open_consolidated(src, mode="r", storage_options=options)["grp/a"].shape == (60, 40)
    assert run("--storage-options", opts, "verify", src).returncode == 0
    store = zarrkit.FsspecStore.from_url(src, storage_options=options)
    store["grp/a/c/1/1"] = b"not a chunk"
    bad = run("--storage-options", opts, "verify", src, expect=1)
    assert "grp/a/c/1/1" in bad.stdout + bad.stderr
    run("--storage-options", opts, "rm", dst, "-y")
    assert not zarrkit.FsspecStore.from_url(bucket, storage_options=options).exists("dst.zarr/zarr.json")


def test_cli_storage_options_errors(s3):
    _, bucket = s3
    assert_one_line_error(run("--storage-options", "{not json", "info", f"{bucket}/x.zarr", expect=2),
                          "--storage-options", "JSON")
    assert_one_line_error(run("--storage-options", "[1]", "info", f"{bucket}/x.zarr", expect=2),
                          "--storage-options", "object")
