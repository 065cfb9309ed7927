"""Run hostile reads in a fresh interpreter and report their peak memory and time.

``python _memory_probe.py CASES_JSON`` runs each case (see :func:`run_case`) and prints one JSON
line per case: ``{"error": type or None, "message": ..., "peak": bytes, "seconds": ...}``.

Peak memory is the growth of the process's resident high-water mark (``VmHWM``) during the
operation, which the kernel resets on request (``/proc/self/clear_refs``), so one interpreter
measures many cases.  Everything a case needs (stores, bomb bytes) is prepared before the reset.
"""

from __future__ import annotations

import json
import struct
import sys
import time

import numcodecs
import numpy as np

import zarrkit

CHUNK = 1024  # elements per chunk (float32: 4 KiB)


def resident() -> tuple[int, int]:
    """``(current, peak)`` resident memory of this process, in bytes."""
    values = {}
    with open("/proc/self/status") as f:
        for line in f:
            name, _, rest = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                values[name] = int(rest.split()[0]) * 1024
    return values["VmRSS"], values["VmHWM"]


def reset_peak() -> None:
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def shard_of(inner: bytes, n_inner: int) -> bytes:
    """A shard (index at the end, bytes + crc32c index codecs) whose first inner chunk is
    ``inner`` and whose other inner chunks are absent, built from the spec, not the library."""
    index = [(0, len(inner))] + [(2**64 - 1, 2**64 - 1)] * (n_inner - 1)
    raw_index = b"".join(struct.pack("<QQ", o, n) for o, n in index)
    return inner + bytes(numcodecs.CRC32C().encode(raw_index))


_BOMBS: dict[str, bytes] = {}


def bomb_of(codec: numcodecs.abc.Codec, inflate: int) -> bytes:
    """``inflate`` zero bytes compressed with ``codec`` (made once per codec and size)."""
    name = json.dumps([codec.get_config(), inflate], sort_keys=True)
    if name not in _BOMBS:
        _BOMBS[name] = bytes(codec.encode(np.zeros(inflate, dtype="u1")))
    return _BOMBS[name]


def bomb_case(case: dict) -> tuple:
    """An array (chunks of CHUNK float32, or strings for ``object``) with one chunk replaced
    by ``case['inflate']`` bytes of zeros compressed with the codec; returns the read."""
    fmt, layout = case["fmt"], case["layout"]
    codec = numcodecs.get_codec(dict(case["codec"]))
    store = zarrkit.MemoryStore()
    kwargs: dict = {"shape": (4 * CHUNK,), "chunks": (CHUNK,), "zarr_format": fmt, "store": store}
    if layout == "object":
        kwargs.update(dtype=str)
    else:
        kwargs.update(dtype="<f4")
    if layout == "filter":
        kwargs["filters"] = [numcodecs.Delta(dtype="<f4")]
    if layout == "sharded":
        z = zarrkit.create_array(store, shape=(4 * CHUNK,), chunks=(CHUNK,), shards=(2 * CHUNK,),
                                 dtype="<f4", compressors=[codec])
    else:
        z = zarrkit.create(compressor=codec, **kwargs)
    z[:] = "x" if layout == "object" else 1.5
    bomb = bomb_of(codec, case["inflate"])
    if layout == "sharded":
        key, raw = "c/1", shard_of(bomb, 2)
    else:
        key, raw = ("1" if fmt == 2 else "c/1"), bomb
    store[key] = raw
    return key, lambda: z[:]


def count_case(case: dict) -> tuple:
    """An array described by one metadata document (``case['doc']``), nothing else stored;
    ``case['op']`` is what is done with it."""
    store = zarrkit.MemoryStore()
    name = "zarr.json" if case["doc"].get("zarr_format") == 3 else ".zarray"
    store[name] = json.dumps(case["doc"]).encode()

    def run():
        z = zarrkit.open_array(store, mode="r" if case["op"] != "write" else "r+")
        if case["op"] == "read":
            return z[(5,) * z.ndim]
        if case["op"] == "info":
            return z.nchunks_initialized, z.nchunks, str(z.info)
        if case["op"] == "write":
            z[(5,) * z.ndim] = 1
            return z[(5,) * z.ndim]
        return z.shape

    return name, run


def run_case(case: dict) -> dict:
    key, run = (bomb_case if "codec" in case else count_case)(case)
    settings = case.get("config", {})
    with zarrkit.config.set(**settings):
        before = resident()[0]
        reset_peak()
        start = time.perf_counter()
        error = message = None
        try:
            run()
        except Exception as exc:  # noqa: BLE001 (reported to the test, which decides)
            error, message = type(exc).__name__, str(exc)
        seconds = time.perf_counter() - start
        peak = resident()[1] - before
    return {"key": key, "error": error, "message": message, "peak": peak, "seconds": seconds}


if __name__ == "__main__":
    for case in json.loads(sys.argv[1]):
        print(json.dumps(run_case(case)), flush=True)
