"""A brief, deterministic pass of the coverage-guided fuzzer over everything read from a store.

For each target of ``fuzz_targets.py`` (metadata documents, chunk bytes through every codec
chain, shards and their indexes, zip files):

* every input saved in ``corpus/<target>/`` -- the reproducer of each failure a fuzzing run
  found -- runs once more and must now pass the oracle: only zarrkit errors, right shapes
  and dtypes, at most 64 MiB traced per case, no case over 10 s, no unsafe audited call;
* the fuzzer runs a fixed number of mutated cases from the seeds (seed 0), and none fails.

Both run in a child process (``tools/fuzz.py``) whose address space is limited, so a memory
bomb or a crash in a codec fails the test instead of the test run.  Longer runs:
``python tools/fuzz.py --target metadata --seconds 600`` (see the threat model page).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import zarrkit
from zarrkit.errors import MetadataError

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
TOOL = ROOT / "tools" / "fuzz.py"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform == "win32", reason="resource limits"),
]

#: mutated cases per target: about 10 s each on one core
EXECUTIONS = {"metadata": 2500, "chunk": 3000, "shard": 1200, "zip": 2500}


def _tool(*args: str, timeout: float = 300) -> tuple[int, list[dict], str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, str(TOOL), "--child", "--json", *args], env=env,
                          capture_output=True, text=True, timeout=timeout, check=False)
    records = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    return proc.returncode, records, proc.stderr


def _saved(target: str) -> list[str]:
    folder = HERE / "corpus" / target
    return sorted(p.name for p in folder.iterdir() if p.is_file()) if folder.is_dir() else []


@pytest.mark.parametrize("target", [t for t in EXECUTIONS if _saved(t)])
def test_saved_reproducers_pass(target):
    names = _saved(target)
    code, records, _ = _tool("--target", target, "--replay")
    done = {r["file"]: r["finding"] for r in records if "file" in r}
    failures = [f"{name}: [{f['kind']}] {f['summary']} at {f['where']}" for name, f in done.items() if f]
    if code < 0 or len(done) < len(names):  # the child died (a signal, a hang) on the next file
        stuck = names[len(done)] if len(done) < len(names) else "?"
        failures.append(f"{stuck}: the process died ({code}) {[r for r in records if 'hang' in r]}")
    assert not failures, f"{len(failures)} saved input(s) of {target} fail:\n" + "\n".join(failures)


@pytest.mark.parametrize("target", list(EXECUTIONS))
def test_brief_fuzzing_run(target, tmp_path):
    code, records, stderr = _tool("--target", target, "--executions", str(EXECUTIONS[target]),
                                  "--seed", "0", "--fresh", "--save-to", str(tmp_path))
    reports = [r for r in records if "executions" in r]
    assert code == 0 and reports, f"the fuzzer died ({code}): {records} {stderr[-3000:]}"
    report = reports[0]
    print(f"{target}: {report['executions']} executions in {report['seconds']:.1f} s, corpus "
          f"{report['corpus']}, lines {report['seed_coverage'][0]} -> {report['coverage'][0]}, "
          f"branch directions {report['seed_coverage'][1]} -> {report['coverage'][1]}, "
          + ", ".join(f"{part} {hit}/{total}" for part, (hit, total) in report["files"].items()))
    assert report["coverage"][0] > report["seed_coverage"][0]  # it is guided somewhere new
    assert not report["findings"], "\n".join(
        f"[{f['kind']}] {f['summary']} at {f['where']} (saved in {tmp_path})" for f in report["findings"])


# -- what the fuzzer found, as plain tests -----------------------------------------------------


def _v3_store(**kwargs) -> tuple[zarrkit.MemoryStore, dict]:
    store = zarrkit.MemoryStore()
    zarrkit.create_array(store, shape=(7, 5), chunks=(4, 5), zarr_format=3, **kwargs)
    return store, json.loads(store["zarr.json"])


def _infinite_number_documents():
    _, doc = _v3_store(dtype="int32", codecs=[{"name": "transpose", "configuration": {"order": [1, 0]}},
                                                 {"name": "bytes", "configuration": {"endian": "little"}}])
    doc["codecs"][0]["configuration"]["order"] = [float("inf"), 0]
    yield "transpose order", doc
    _, doc = _v3_store(dtype="int32", shards=(4, 5))
    doc["codecs"][0]["configuration"]["chunk_shape"] = [float("inf"), 5]
    yield "sharding chunk_shape", doc
    if importlib.util.find_spec("ml_dtypes") is not None:
        _, doc = _v3_store(dtype="uint8")
        doc["data_type"], doc["fill_value"] = "uint2", float("-inf")
        yield "uint2 fill_value", doc


@pytest.mark.parametrize("what,doc", list(_infinite_number_documents()), ids=lambda v: v if isinstance(v, str) else "")
def test_an_infinite_number_where_an_integer_belongs_is_a_metadata_error(what, doc):
    """``1e999`` (JSON for infinity) converted with ``int()`` raised a bare OverflowError."""
    store = zarrkit.MemoryStore()
    store["zarr.json"] = json.dumps(doc).encode()  # Infinity / -Infinity literals
    with pytest.raises(MetadataError):
        zarrkit.open_array(store, mode="r")


#: a 76-byte zfpy frame whose header declares a stream of hundreds of megabytes
ZFP_FRAME_HUGE = bytes.fromhex(
    "7a6670054700003005f05e2c10133112101331121013311210133112101331121013311204031289d622a8e605d0"
    "662aa2028a22a2028a22a2028a22a2028a22a2028a22a2028a2282000000")


def test_a_zfp_header_declaring_a_huge_array_is_refused_before_allocating():
    """zarrkit padded a zfpy frame to the largest stream its header allows (hundreds of MiB
    here, gigabytes for other headers) before comparing the header with the chunk."""
    pytest.importorskip("zfpy")
    store, _ = _v3_store(dtype="float64", codecs=[{"name": "numcodecs.zfpy", "configuration": {
        "mode": 4, "tolerance": -1, "rate": -1, "precision": -1}}])
    script = ("import resource, tracemalloc, zarrkit\n"
              "resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))\n"
              "store = zarrkit.MemoryStore()\n"
              f"store['zarr.json'] = {bytes(store['zarr.json'])!r}\n"
              f"store['c/0/0'] = {ZFP_FRAME_HUGE!r}\n"
              "tracemalloc.start()\n"
              "try:\n    zarrkit.open_array(store, mode='r')[...]\n"
              "except zarrkit.errors.ChunkDecodeError:\n    print('refused', end=' ')\n"
              "print(tracemalloc.get_traced_memory()[1] < 64 << 20)\n")
    assert _python(script) == (0, "refused True")


BLOSC_FRAME_BAD_STARTS = bytes.fromhex(
    "0201310ac8000000c80000004b000034c0000028c0000020c0000014c0000008c00000f8bf0000e0bf0000"
    "ccbf0000b4bf0000a0bf000088bf000060bf000034bf000008bf0000b4be000034be000000000000343e0000")


def test_a_blosc_frame_with_block_starts_out_of_the_frame_is_refused_not_a_crash():
    """An 87-byte Blosc frame (declaring 200 bytes, block starts pointing past its end) made
    numcodecs' Blosc.decode crash the process (SIGSEGV) when it was handed over unchecked."""
    script = ("import numcodecs, numpy as np, zarrkit\n"
              "store = zarrkit.MemoryStore()\n"
              "z = zarrkit.create(shape=(7, 5), chunks=(4, 5), dtype=[('a', '<i2'), ('b', '>f4', (2,))],\n"
              "                   zarr_format=2, store=store, compressor=numcodecs.Blosc('lz4', 1, 1))\n"
              f"store['1.0'] = {BLOSC_FRAME_BAD_STARTS!r}  # the edge chunk\n"
              "try:\n    z[...]\n"
              "except zarrkit.errors.ChunkDecodeError:\n    print('refused')\n")
    assert _python(script) == (0, "refused")


def _python(script: str) -> tuple[int, str]:
    """Exit code and output of ``script`` in a new interpreter (a crash must not end the tests)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    return proc.returncode, proc.stdout.strip()
