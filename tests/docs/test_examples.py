"""Every script in ``examples/`` runs, in a process of its own, at its small size
(``ZARRKIT_EXAMPLES_SMALL=1``), exits with 0, warns of nothing and prints what it promises."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

#: script -> (modules it needs, lines its output must contain)
SCRIPTS = {
    "demo.py": ((), ["== Writing a hierarchy ==", "== images/stack (sharded): .info ==",
                     "consolidated hierarchy: ['temperature'] format 2",
                     "0 corrupt, 0 missing"]),
    "xarray_dataset.py": (("xarray", "dask"), [
        "appended: 60 days, 2000-01-01 to 2000-02-29",
        "region 10:20 raised by 1.5 K; day 9 unchanged: True",
        "dask chunks along time: (10, 10, 10, 10, 10, 10)"]),
    "dask_distributed.py": (("dask", "distributed"), [
        "workers: 2", "stored: (400, 400) (100, 100) 16 chunks", "read back: (100, 100) 16 tasks"]),
    "cloud_s3.py": (("obstore", "moto", "boto3"), [
        "store: ObjectStore at s3://zarrkit-example/", "read back: (256, 256) cloud example",
        "conditional writes: True first row now starts [-1. -1. -1. -1.]"]),
    "sharding.py": ((), [
        "64 chunks in 4 shards (16 chunks per shard)", "write one whole shard: 0 reads, 1 write",
        "write a row across part of a shard: 1 read, 1 write",
        "stored shards: 4 of 4; stored chunks: 19 of 64", "data as written: True"]),
    "concurrent_writers.py": ((), [
        "conditional writes on this store: True", "pieces written per process: [8, 8, 8]",
        "cells lost or wrong: 0 of 8064"]),
    "rechunking.py": ((), [
        "source: (48, 32, 64) in chunks (1, 32, 64) (48 chunks)",
        "target: (48, 32, 64) in chunks (48, 8, 8) (32 chunks)",
        "one time series: 48 values from 1 chunk (it took 48 before)"]),
}

#: script -> a pattern of its output whose groups must be equal (two figures that agree)
AGREEING = {
    "dask_distributed.py": r"sum (\S+) \(written: (\S+)\)",
}

#: each takes 3-8 s on 2 busy cores (processes, a cluster, a server): `make test` runs them
MARKS = {
    "demo.py": [pytest.mark.slow],               # three `zarrkit` commands in processes
    "xarray_dataset.py": [pytest.mark.slow],
    "concurrent_writers.py": [pytest.mark.slow],  # three writer processes
    "dask_distributed.py": [pytest.mark.slow],   # a cluster of 2 worker processes
    "cloud_s3.py": [pytest.mark.slow],           # a local S3 server
}


def run_example(name: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "ZARRKIT_EXAMPLES_SMALL": "1", **env}
    environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT / "src"), os.environ.get("PYTHONPATH")) if p)
    # warnings raised by zarrkit, or by the libraries from zarrkit's calls, are shown on stderr
    return subprocess.run([sys.executable, "-W", "default", str(EXAMPLES / name)], env=environ,
                          capture_output=True, text=True, timeout=120, check=False)


def test_every_example_is_run_and_listed():
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(SCRIPTS)
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    for name in SCRIPTS:
        assert f"`{name}`" in index, f"docs/index.md does not list examples/{name}"


@pytest.mark.parametrize("name", [pytest.param(n, marks=MARKS.get(n, [])) for n in SCRIPTS])
def test_example_runs(name):
    modules, promised = SCRIPTS[name]
    # the test extra installs what every example needs: a missing module fails the example
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    assert not missing, f"{name} needs {missing}, which the test extra installs"
    proc = run_example(name)
    assert proc.returncode == 0, f"{name} exited with {proc.returncode}:\n{proc.stderr}"
    assert "Warning" not in proc.stderr, f"{name} warned:\n{proc.stderr}"
    for line in promised:
        assert line in proc.stdout, f"{name} did not print {line!r}:\n{proc.stdout}"
    if name in AGREEING:
        found = re.search(AGREEING[name], proc.stdout)
        assert found and len(set(found.groups())) == 1, f"{name}: figures that should agree:\n{proc.stdout}"


@pytest.mark.slow
def test_cloud_example_uses_the_endpoint_it_is_given(tmp_path):
    """With ``ZARRKIT_S3_ENDPOINT`` set, the S3 example starts no server of its own and writes
    to the bucket there."""
    pytest.importorskip("obstore")
    boto3 = pytest.importorskip("boto3")
    moto_server = pytest.importorskip("moto.server")
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                              aws_access_key_id="k", aws_secret_access_key="s")
        client.create_bucket(Bucket="given")
        proc = run_example("cloud_s3.py", ZARRKIT_S3_ENDPOINT=endpoint, ZARRKIT_S3_BUCKET="given",
                           AWS_ACCESS_KEY_ID="k", AWS_SECRET_ACCESS_KEY="s")
        assert proc.returncode == 0, proc.stderr
        assert "started a local S3 server" not in proc.stdout
        assert "store: ObjectStore at s3://given/examples/" in proc.stdout
        keys = [o["Key"] for o in client.list_objects_v2(Bucket="given")["Contents"]]
        assert any(k.endswith("data.zarr/zarr.json") for k in keys), keys
    finally:
        server.stop()
