"""Library adapters, workloads and machine-limit probes for ``benchmarks/run.py``.

Everything here runs inside a *child* process started by ``run.py`` (one child per
(workload, library) pair), so that imports, caches and peak memory of one measurement cannot leak
into another.  Libraries are imported lazily: a zarrkit child never imports zarr-python or
tensorstore and vice versa.
"""

from __future__ import annotations

import contextlib
import gc
import os
import shutil
import signal
import statistics
import subprocess
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

MiB = 1 << 20

# --------------------------------------------------------------------------------------------
# data


def make_data(shape: tuple[int, ...], dtype: str, seed: int = 0) -> np.ndarray:
    """Deterministic, moderately compressible test data (same bytes in every process)."""
    rng = np.random.default_rng(seed)
    if np.dtype(dtype) == np.float32:
        # small integers stored as float32: shuffle + lz4 gets roughly 2x, like many real
        # measurement arrays; pure noise would not compress at all
        return rng.integers(0, 1024, size=shape, dtype=np.uint16).astype(np.float32)
    if np.dtype(dtype) == np.uint8:
        # an image-like gradient plus a little noise
        n0, n1 = shape
        base = (np.add.outer(np.arange(n0, dtype=np.uint32), np.arange(n1, dtype=np.uint32)) // 16)
        noise = rng.integers(0, 4, size=shape, dtype=np.uint8)
        return (base.astype(np.uint8) + noise).astype(np.uint8)
    raise ValueError(dtype)


def region_starts(shape, region, n, seed=1, step=None):
    """``n`` random region origins (optionally aligned to ``step``) inside ``shape``."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        if step is None:
            out.append(tuple(int(rng.integers(0, s - r + 1)) for s, r in zip(shape, region)))
        else:
            out.append(tuple(int(rng.integers(0, s // st)) * st for s, st in zip(shape, step)))
    return out


# --------------------------------------------------------------------------------------------
# memory accounting


def _status_kib(field: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def reset_peak() -> tuple[int, bool]:
    """Reset the RSS high-water mark (Linux ``clear_refs`` 5); return (baseline KiB, reset_ok).

    ``ru_maxrss`` and ``VmHWM`` read the same kernel counter (``mm->hiwater_rss``); writing 5 to
    ``/proc/self/clear_refs`` resets it to the current RSS, which lets one child measure several
    sub-operations (and verify correctness first) without the earlier peaks hiding later ones.
    """
    gc.collect()
    ok = False
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        ok = True
    except OSError:
        pass
    if ok:
        base = _status_kib("VmRSS") or 0
    else:
        import resource

        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return base, ok


def peak_delta_mib(base_kib: int, reset_ok: bool) -> float:
    if reset_ok:
        hwm = _status_kib("VmHWM")
    else:
        import resource

        hwm = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return max(0, (hwm or 0) - base_kib) / 1024.0


# --------------------------------------------------------------------------------------------
# adapters


class NotAvailable(Exception):
    """The library cannot run this workload (reported as n/a, not as a failure)."""


class Adapter:
    name = "?"
    key = "?"

    def available(self) -> str | None:
        return None

    def init(self) -> None:
        pass

    def version(self) -> str:
        return ""

    # locations: ("dir", path) | ("mem", store) | ("latency", store)
    def new_memory(self) -> Any:
        raise NotAvailable("no in-memory store")

    def latency_wrap(self, mem: Any, seconds: float) -> Any:
        raise NotAvailable("no simple latency-injecting store wrapper")

    def create(self, loc, meta) -> Any:
        raise NotImplementedError

    def write(self, h, data) -> None:
        raise NotImplementedError

    def open(self, loc, meta) -> Any:
        raise NotImplementedError

    def read(self, h, sel) -> np.ndarray:
        raise NotImplementedError

    def read_into(self, h, out: np.ndarray) -> None:
        """Read all of ``h`` into the existing array ``out``."""
        raise NotAvailable("the library's read always returns a new array")


class ZarrkitAdapter(Adapter):
    name = "zarrkit"
    key = "zarrkit"

    def init(self):
        import zarrkit

        self.zk = zarrkit

    def version(self):
        import zarrkit

        return zarrkit.__version__

    def _store(self, loc):
        return loc[1]

    def new_memory(self):
        return self.zk.MemoryStore()

    def latency_wrap(self, mem, seconds):
        from zarrkit.storage import LatencyStore

        return LatencyStore(mem, seconds=seconds)

    def _blosc(self, meta):
        return self.zk.Blosc(cname="lz4", clevel=5, shuffle=1)

    def create(self, loc, meta):
        zk = self.zk
        if meta["zarr_format"] == 3:
            comp = [self._blosc(meta)] if meta["compressor"] else None
            return zk.create_array(
                self._store(loc), shape=meta["shape"], chunks=meta["chunks"],
                shards=meta.get("shards"), dtype=meta["dtype"], compressors=comp,
                fill_value=0, zarr_format=3, overwrite=True,
            )
        comp = self._blosc(meta) if meta["compressor"] else None
        return zk.create(
            shape=meta["shape"], chunks=meta["chunks"], dtype=meta["dtype"], compressor=comp,
            store=self._store(loc), fill_value=0, zarr_format=2, overwrite=True,
        )

    def write(self, h, data):
        h[...] = data

    def open(self, loc, meta):
        return self.zk.open_array(self._store(loc), mode="r")

    def read(self, h, sel):
        return h[sel]

    def read_into(self, h, out):
        h.get_basic_selection(..., out=out)


class ZarrPythonAdapter(Adapter):
    """zarr-python 3 with a chosen codec pipeline."""

    PIPELINES = {
        "zarr": ("zarr-python", None),
        "zarr-fused": ("zarr-python FusedCodecPipeline", "zarr.core.codec_pipeline.FusedCodecPipeline"),
        "zarr-zarrs": ("zarr-python + zarrs pipeline", "zarrs.ZarrsCodecPipeline"),
    }

    def __init__(self, key):
        self.key = key
        self.name, self.pipeline = self.PIPELINES[key]

    def available(self):
        try:
            import zarr  # noqa: F401
        except ImportError as e:
            return f"zarr not importable: {e}"
        if self.key == "zarr-fused":
            import zarr.core.codec_pipeline as cp

            if not hasattr(cp, "FusedCodecPipeline"):
                return "zarr.core.codec_pipeline.FusedCodecPipeline does not exist in this zarr"
        if self.key == "zarr-zarrs":
            try:
                import zarrs  # noqa: F401
            except ImportError as e:
                return f"zarrs not installed ({e}); pip install -e '.[bench]'"
        return None

    def init(self):
        import warnings

        import zarr

        warnings.filterwarnings("ignore")
        self.zarr = zarr
        if self.pipeline:
            conf = {"codec_pipeline.path": self.pipeline}
            if self.key == "zarr-zarrs":
                # never fall back silently to the python pipeline: unsupported -> n/a
                conf["codec_pipeline.strict"] = True
            zarr.config.set(conf)

    def version(self):
        import zarr

        v = zarr.__version__
        if self.key == "zarr-zarrs":
            from importlib.metadata import version

            v += f", zarrs {version('zarrs')}"
        return v

    def new_memory(self):
        return self.zarr.storage.MemoryStore()

    def latency_wrap(self, mem, seconds):
        return make_zarr_latency_store(mem, seconds)

    def _store(self, loc):
        return loc[1]

    def create(self, loc, meta):
        zarr = self.zarr
        if meta["zarr_format"] == 3:
            comp = (
                [zarr.codecs.BloscCodec(cname="lz4", clevel=5, shuffle="shuffle")]
                if meta["compressor"] else None
            )
            kw = dict(compressors=comp, shards=meta.get("shards"))
        else:
            import numcodecs

            comp = numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1) if meta["compressor"] else None
            kw = dict(compressors=comp, filters=None)
        try:
            h = zarr.create_array(
                store=self._store(loc), shape=meta["shape"], chunks=meta["chunks"],
                dtype=meta["dtype"], fill_value=0, zarr_format=meta["zarr_format"],
                overwrite=True, **kw,
            )
        except Exception as e:
            self._maybe_na(e)
            raise
        return self._check_pipeline(h)

    def _maybe_na(self, e):
        if self.key == "zarr-zarrs" and type(e).__name__ == "UnsupportedMetadataError":
            raise NotAvailable(f"zarrs (strict) does not support this store/array: {e.__cause__!r}") from e

    def write(self, h, data):
        h[...] = data

    def open(self, loc, meta):
        try:
            h = self.zarr.open_array(store=self._store(loc), mode="r")
        except Exception as e:
            self._maybe_na(e)
            raise
        return self._check_pipeline(h)

    def _check_pipeline(self, h):
        """Make sure the array really runs on the pipeline we claim to measure."""
        pipe = h._async_array.codec_pipeline
        want = {"zarr": "BatchedCodecPipeline", "zarr-fused": "FusedCodecPipeline",
                "zarr-zarrs": "ZarrsCodecPipeline"}[self.key]
        got = type(pipe).__name__
        if got != want:
            raise NotAvailable(f"{want} not used for {type(h.store).__name__}: zarr-python fell "
                               f"back to {got}")
        if self.key == "zarr-zarrs" and getattr(pipe, "impl", None) is None:
            raise NotAvailable(f"zarrs has no native implementation for {type(h.store).__name__}")
        return h

    def read(self, h, sel):
        return h[sel]

    def read_into(self, h, out):
        from zarr.core.buffer import cpu

        h.get_basic_selection(..., out=cpu.NDBuffer.from_numpy_array(out))


def make_zarr_latency_store(inner, seconds):
    """A zarr.storage.WrapperStore adding ``seconds`` of latency to every read request."""
    import asyncio

    from zarr.abc.store import Store
    from zarr.storage import WrapperStore

    class LatencyWrapperStore(WrapperStore):
        async def get(self, key, prototype, byte_range=None):
            await asyncio.sleep(seconds)
            return await self._store.get(key, prototype, byte_range)

        async def get_partial_values(self, prototype, key_ranges):
            key_ranges = list(key_ranges)

            async def one(k, r):
                await asyncio.sleep(seconds)
                return (await self._store.get_partial_values(prototype, [(k, r)]))[0]

            return list(await asyncio.gather(*(one(k, r) for k, r in key_ranges)))

        # the base-class get_ranges coalesces over self.get (so it pays the latency)
        get_ranges = Store.get_ranges

        # synchronous reads (used by FusedCodecPipeline when the store supports sync IO)
        def get_sync(self, key, *, prototype=None, byte_range=None):
            time.sleep(seconds)
            return self._store.get_sync(key, prototype=prototype, byte_range=byte_range)

    return LatencyWrapperStore(inner)


class TensorstoreAdapter(Adapter):
    name = "tensorstore"
    key = "tensorstore"

    def available(self):
        try:
            import tensorstore  # noqa: F401
        except ImportError as e:
            return f"tensorstore not importable: {e}"
        return None

    def init(self):
        import tensorstore as ts

        self.ts = ts

    def version(self):
        from importlib.metadata import version

        return version("tensorstore")

    def new_memory(self):
        return self.ts.Context()

    def _kvstore(self, loc):
        if loc[0] == "dir":
            return {"driver": "file", "path": loc[1].rstrip("/") + "/"}
        if loc[0] == "mem":
            return {"driver": "memory"}
        raise NotAvailable("no simple latency-injecting kvstore in tensorstore")

    def _ctx(self, loc):
        return loc[1] if loc[0] == "mem" else None

    def _spec(self, loc, meta):
        dt = np.dtype(meta["dtype"])
        if meta["zarr_format"] == 3:
            blosc = {"name": "blosc", "configuration": {
                "cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": dt.itemsize,
                "blocksize": 0}}
            inner = [{"name": "bytes", "configuration": {"endian": "little"}}]
            if meta["compressor"]:
                inner.append(blosc)
            if meta.get("shards"):
                codecs = [{"name": "sharding_indexed", "configuration": {
                    "chunk_shape": list(meta["chunks"]), "codecs": inner,
                    "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                     {"name": "crc32c"}],
                    "index_location": "end"}}]
                grid = list(meta["shards"])
            else:
                codecs = inner
                grid = list(meta["chunks"])
            md = {"shape": list(meta["shape"]), "data_type": dt.name,
                  "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": grid}},
                  "chunk_key_encoding": {"name": "default"}, "codecs": codecs, "fill_value": 0}
            return {"driver": "zarr3", "kvstore": self._kvstore(loc), "metadata": md}
        comp = ({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}
                if meta["compressor"] else None)
        md = {"shape": list(meta["shape"]), "chunks": list(meta["chunks"]), "dtype": dt.str,
              "compressor": comp, "filters": None, "order": "C", "fill_value": 0,
              "dimension_separator": "."}
        return {"driver": "zarr", "kvstore": self._kvstore(loc), "metadata": md}

    def create(self, loc, meta):
        kw = {}
        if self._ctx(loc) is not None:
            kw["context"] = self._ctx(loc)
        return self.ts.open(self._spec(loc, meta), create=True, delete_existing=True, **kw).result()

    def write(self, h, data):
        h.write(data).result()

    def open(self, loc, meta):
        spec = {"driver": "zarr3" if meta["zarr_format"] == 3 else "zarr",
                "kvstore": self._kvstore(loc)}
        kw = {}
        if self._ctx(loc) is not None:
            kw["context"] = self._ctx(loc)
        return self.ts.open(spec, read=True, **kw).result()

    def read(self, h, sel):
        return h[sel].read().result()


class ZarrkitInPlaceAdapter(ZarrkitAdapter):
    """zarrkit writing its chunk files in place (``DirectoryStore(atomic=False)``), as the
    zarrs pipeline does: writes like for like (zarrkit's default, like zarr-python's LocalStore
    and tensorstore, writes each file under a temporary name and renames it)."""

    name = "zarrkit, DirectoryStore(atomic=False)"
    key = "zarrkit-inplace"

    def _store(self, loc):
        return self.zk.DirectoryStore(loc[1], atomic=False) if loc[0] == "dir" else loc[1]


#: the environment variable holding an earlier zarrkit's source tree (the directory its
#: package is imported from), which library ``zarrkit-baseline`` runs: the same workloads
#: before and after a change, in one run (``run.py --baseline``)
BASELINE_ENV = "ZARRKIT_BENCH_BASELINE"


class ZarrkitBaselineAdapter(ZarrkitAdapter):
    """An earlier zarrkit (``run.py --baseline DIR``: its child processes import zarrkit from
    ``DIR``), measured like zarrkit, named by the commit it was checked out at."""

    key = "zarrkit-baseline"

    def __init__(self):
        where = os.environ.get(BASELINE_ENV, "")
        rev = subprocess.run(["git", "-C", where or ".", "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, check=False).stdout.strip()
        self.name = f"zarrkit, baseline {rev or where}"

    def init(self):
        super().init()
        where = os.environ.get(BASELINE_ENV, "")
        if not where or not os.path.realpath(self.zk.__file__).startswith(os.path.realpath(where) + os.sep):
            raise RuntimeError(f"the baseline imported zarrkit from {self.zk.__file__}, not from "
                               f"{where!r}")


#: the libraries that write each file whole under a temporary name first, then rename it (a
#: reader or a crash never sees a torn chunk), and the one that writes files in place
ATOMIC_WRITERS = ("zarrkit", "zarr", "zarr-fused", "tensorstore")
IN_PLACE_WRITER = "zarr-zarrs"


def libraries(workload: str, op: str, libs: list[str]) -> list[str]:
    """The libraries measured for ``op`` of ``workload``: directory writes (W1, W4 and W5
    writes, zarrs' benchmark's round trips) add zarrkit writing in place, right after zarrkit."""
    writes = (workload in ("W1", "W4", "W5") and op.startswith("write")) or (
        workload in ("ZB", "ZB8") and op.startswith("round trip"))
    if writes and "zarrkit" in libs:
        i = libs.index("zarrkit") + 1
        return libs[:i] + [ZarrkitInPlaceAdapter.key] + libs[i:]
    return libs


@contextlib.contextmanager
def perf_sampled(path: str, hz: int) -> Iterator[None]:
    """While inside, this process is sampled by Linux ``perf record`` at ``hz`` (the
    ``cpu-clock`` event: no hardware counters needed, so it works inside a VM) into ``path``."""
    perf = subprocess.Popen(["perf", "record", "-q", "-F", str(hz), "-p", str(os.getpid()),
                             "-o", path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)  # perf attached
    try:
        yield
    finally:
        perf.send_signal(signal.SIGINT)
        perf.wait()


def perf_samples(path: str, sort: str, group: Callable[[list[str]], str]) -> dict[str, int]:
    """Samples of one ``perf record`` file, counted by ``group(fields)`` of each line of its
    report sorted by ``sort`` (``"dso"`` or ``"dso,sym"``: the fields, in that order)."""
    out = subprocess.run(["perf", "report", "-i", path, "--no-children", "-n", "--sort", sort,
                          "-g", "none", "-t", "\t", "--stdio"],
                         capture_output=True, text=True, check=True).stdout
    counts: dict[str, int] = {}
    for line in out.splitlines():
        f = line.split("\t")
        if line.startswith("#") or len(f) < 3 or not f[1].strip().isdigit():
            continue
        key = group([x.strip() for x in f[2:]])
        counts[key] = counts.get(key, 0) + int(f[1])
    return counts


def make_adapter(key: str) -> Adapter:
    if key == "zarrkit":
        return ZarrkitAdapter()
    if key == ZarrkitInPlaceAdapter.key:
        return ZarrkitInPlaceAdapter()
    if key == ZarrkitBaselineAdapter.key:
        return ZarrkitBaselineAdapter()
    if key.startswith("zarr"):
        return ZarrPythonAdapter(key)
    if key == "tensorstore":
        return TensorstoreAdapter()
    raise KeyError(key)


LIBRARIES = ["zarrkit", "zarr", "zarr-fused", "zarr-zarrs", "tensorstore"]

# --------------------------------------------------------------------------------------------
# workloads


def sizes(quick: bool) -> dict:
    n1 = 256 if quick else 512
    return {
        "W1": dict(shape=(n1,) * 3, chunks=(64,) * 3, dtype="float32"),
        "W3": dict(region=(8, 8, 8), n=200),
        "W4": dict(shape=(1024, 1024) if quick else (4096, 4096), chunks=(32, 32), dtype="uint8"),
        "W5": dict(shape=(256,) * 3, chunks=(64,) * 3, shards=(256,) * 3, dtype="float32", n=50),
        "W6": dict(shape=(n1,) * 3, chunks=(64,) * 3, dtype="float32"),
        "W7": dict(shape=(16 * 64, 16 * 64), chunks=(64, 64), dtype="float32", latency=0.01),
    }


def meta_of(d, zarr_format=3, compressor=True):
    return dict(shape=tuple(d["shape"]), chunks=tuple(d["chunks"]), shards=d.get("shards"),
                dtype=d["dtype"], zarr_format=zarr_format, compressor=compressor)


def ref_path(tmp, name):
    return os.path.join(tmp, "ref", name)


def prepare_refs(tmp: str, quick: bool) -> dict:
    """Write the arrays the read workloads read, with zarr-python (the neutral writer)."""
    import warnings

    warnings.filterwarnings("ignore")
    S = sizes(quick)
    out = {}
    for name, d, fmt in [("w1_v3", S["W1"], 3), ("w1_v2", S["W1"], 2), ("w4_v3", S["W4"], 3),
                         ("w5_v3", S["W5"], 3)]:
        meta = meta_of(d, fmt)
        a = ZarrPythonAdapter("zarr")
        a.init()
        p = ref_path(tmp, name)
        h = a.create(("dir", p), meta)
        data = make_data(meta["shape"], meta["dtype"])
        h[...] = data
        del data
        nbytes = 0
        nfiles = 0
        for root, _, files in os.walk(p):
            for f in files:
                if f not in ("zarr.json", ".zarray", ".zattrs", ".zgroup"):
                    nbytes += os.path.getsize(os.path.join(root, f))
                    nfiles += 1
        raw = int(np.prod(meta["shape"])) * np.dtype(meta["dtype"]).itemsize
        out[name] = dict(stored_bytes=nbytes, files=nfiles, raw_bytes=raw)
    return out


OPS = {
    "W1": ["write v3", "write v2"],
    "W2": ["read v3", "read v2", "read into an existing array v3", "read into an existing array v2"],
    "W3": ["random 8^3 read v3"],
    "W4": ["write v3", "read v3"],
    "W5": ["write sharded", "read all sharded", "read 1 inner chunk"],
    "W6": ["read all (memory, uncompressed)"],
    "W7": ["read all (256 chunks, 10 ms/request)"],
}


def _check(got, want, what):
    got = np.asarray(got)
    if got.shape != want.shape or got.dtype != want.dtype or not np.array_equal(got, want):
        nbad = int(np.sum(got != want)) if got.shape == want.shape else -1
        raise AssertionError(
            f"WRONG DATA in {what}: got shape {got.shape} dtype {got.dtype}, want {want.shape} "
            f"{want.dtype}; {nbad} differing elements")


#: ext4 does not reuse an inode deleted less than 5 s ago and scans past such inodes when it
#: allocates one; writes wait this long after removing their outputs
RECENTLY_DELETED_S = 6


#: set (to 1) by ``run.py --as-is``, read by its children too: the machine as users have it --
#: no page cache dropped, free-page reporting left as it is, no memory touched beforehand
AS_IS_ENV = "ZARRKIT_BENCH_AS_IS"


def as_is() -> bool:
    """Whether this run leaves the machine as users have it (see :data:`AS_IS_ENV`)."""
    return os.environ.get(AS_IS_ENV) == "1"


def settle_page_cache() -> bool:
    """Write back dirty pages, then drop the clean page cache when allowed (root) and the run
    is not ``--as-is``: every write run starts from the same memory state instead of one more
    run's files cached (on a VM, page cache growing into memory not used before costs the host
    a fault per page).  Returns whether the cache was dropped."""
    os.sync()
    if as_is():
        return False
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("1")
        return True
    except OSError:
        return False


#: the knobs of free-page reporting on kernels that have them (as Firecracker guests do): how
#: long (ms) a free page stays unreported, and how much free memory (MiB) may wait unreported
PAGE_REPORTING = "/sys/module/page_reporting/parameters/"
PAGE_REPORTING_HOLD = {"min_free_ms": "300000", "max_waiting_mib": "32768"}


@contextlib.contextmanager
def page_reporting_held() -> Iterator[str | None]:
    """While inside, memory freed by one run is not handed back to the hypervisor (when the
    kernel has the knobs and we may set them): a VM guest that reports free pages has the host
    discard them, so the next allocation that lands on them pays a host fault per page --
    measured here as a 512 MiB array costing 0.6 s more to fill, at random, whichever library
    allocated it.  Yields a description of what was changed (None if nothing), and restores
    the settings after."""
    old: dict[str, str] = {}
    if as_is():
        yield None
        return
    try:
        for name, value in PAGE_REPORTING_HOLD.items():
            with open(PAGE_REPORTING + name) as f:
                previous = f.read().strip()
            with open(PAGE_REPORTING + name, "w") as f:
                f.write(value)
            old[name] = previous
    except OSError:
        pass
    if len(old) == len(PAGE_REPORTING_HOLD):
        _HELD_FROM.update(old)
    try:
        yield (
            "free-page reporting to the host held off during the run ("
            + ", ".join(f"{k} {v} -> {PAGE_REPORTING_HOLD[k]}" for k, v in old.items())
            + "; restored after)"
        ) if len(old) == len(PAGE_REPORTING_HOLD) else None
    finally:
        for name, value in old.items():
            with open(PAGE_REPORTING + name, "w") as f:
                f.write(value)
        _HELD_FROM.clear()


#: the settings :func:`page_reporting_held` replaced, while it holds them (see
#: :func:`page_reporting_released`)
_HELD_FROM: dict[str, str] = {}


@contextlib.contextmanager
def page_reporting_released() -> Iterator[bool]:
    """Inside :func:`page_reporting_held`, the machine's own free-page reporting back for a
    while (memory freed meanwhile goes back to the host, as it does outside the benchmark):
    for measuring what a fresh process pays for memory no earlier run left backed.  Yields
    whether anything was changed; holds again on the way out."""
    saved = dict(_HELD_FROM)
    try:
        for name, value in saved.items():
            with open(PAGE_REPORTING + name, "w") as f:
                f.write(value)
    except OSError:
        saved = {}
    try:
        yield bool(saved)
    finally:
        for name in saved:
            with open(PAGE_REPORTING + name, "w") as f:
                f.write(PAGE_REPORTING_HOLD[name])


def touch_memory(gib: float) -> float:
    """Write to ``gib`` GiB of new memory once and free it; returns the seconds it took.  On a
    VM, memory the guest never used costs a host fault per page the first time (about 2 s per
    GiB here); touched once while free-page reporting is held off, it stays backed, so the
    runs' allocations do not pay that at random."""
    t0 = time.perf_counter()
    blocks = []
    for _ in range(int(gib * 2)):
        b = np.empty(MiB * 512, dtype=np.uint8)
        b.fill(1)
        blocks.append(b)
    del blocks
    return time.perf_counter() - t0


READY_TAG = "@@BENCH-READY@@"
TIME_TAG = "@@BENCH-TIME@@ "
LOADED_TAG = "@@BENCH-LOADED@@"


class Turns:
    """Timed runs taken in turns with other children: after its cold run the child says it is
    ready, then does one timed run each time the parent writes ``run`` (and reports its time),
    until the parent writes ``stop``.  The parent runs every library once per round, so that a
    change in the machine's speed during the measurement (a VM shares its host) falls on all
    libraries alike instead of on whichever ran at that moment.

    ``gated``: before its cold run the child says it is loaded (its imports done, its data
    made) and waits for the parent's ``go``, so that the children of one operation can start
    together while their cold runs still run one at a time."""

    def __init__(self, inp, out, gated: bool = False):
        self.inp, self.out, self.gated = inp, out, gated

    def start(self) -> None:
        """Wait for the parent's ``go`` (gated children)."""
        if not self.gated:
            return
        self._say(LOADED_TAG)
        while True:
            line = self.inp.readline()
            if not line:
                raise SystemExit("the parent went away before the cold run")
            if line.strip() == "go":
                return

    def _say(self, line: str) -> None:
        self.out.write("\n" + line + "\n")
        self.out.flush()

    def ready(self) -> None:
        self._say(READY_TAG)

    def next(self) -> bool:
        return self.inp.readline().strip() == "run"

    def report(self, seconds: float) -> None:
        self._say(TIME_TAG + repr(seconds))


def _measure(prepare, run, verify, turns: Turns, after=None):
    """The measurement protocol of one sub-operation, in a fresh process.

    ``prepare()`` (untimed) runs before every run; ``run(state)`` is the timed work.  Run 0 is
    the cold run: the RSS high-water mark is reset just before it and read just after it (so
    the peak is the memory this operation needs on a fresh heap), then its output is checked by
    ``verify(state)`` -- correctness is established before any timed run.  Then one timed run
    each time the parent says so (``turns``); the median is reported.  ``after(state)``, if
    given, is called (untimed) after each timed run.
    """
    turns.start()
    state = prepare()
    base, ok = reset_peak()
    t0 = time.perf_counter()
    run(state)
    cold = time.perf_counter() - t0
    peak = peak_delta_mib(base, ok)
    verify(state)
    del state
    gc.collect()
    times = []
    turns.ready()
    while turns.next():
        state = prepare()
        t0 = time.perf_counter()
        run(state)
        times.append(time.perf_counter() - t0)
        if after is not None:
            after(state)
        del state
        turns.report(times[-1])
    # (a child asked for its cold run alone reports it as its only figure)
    return dict(seconds=statistics.median(times) if times else cold, times=times, cold=cold, peak_mib=peak,
                peak_method="VmHWM after clear_refs" if ok else "ru_maxrss")


def run_child(workload: str, op: str, libkey: str, tmp: str, quick: bool, turns: Turns) -> dict:
    """Measure sub-operation ``op`` of ``workload`` with library ``libkey``, its timed runs
    taken when ``turns`` says so."""
    import warnings

    warnings.filterwarnings("ignore")
    A = make_adapter(libkey)
    res: dict[str, Any] = {"library": A.name, "label": op}
    why = A.available()
    if why:
        res["na"] = why
        return res
    A.init()
    res["version"] = A.version()
    S = sizes(quick)
    scratch = os.path.join(tmp, "scratch", f"{workload}-{libkey}")
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch, exist_ok=True)
    counter = [0]

    def fresh_dir():
        counter[0] += 1
        d = os.path.join(scratch, f"run{counter[0]}")
        shutil.rmtree(d, ignore_errors=True)
        return d

    def write_op(meta, data):
        def prepare():
            # every run writes a new directory; the kernel first finishes writing back what
            # the run before wrote (untimed), so that no run pays for the one before it.
            # Outputs are removed only after the last run: on ext4, files created just after
            # many were deleted cost several times more kernel time (inode allocation skips
            # inodes deleted in the last seconds), which would measure the previous run's
            # cleanup rather than this library's writes
            os.makedirs(scratch, exist_ok=True)
            settle_page_cache()
            return {"dir": fresh_dir()}

        def run(st):
            h = A.create(("dir", st["dir"]), meta)
            A.write(h, data)

        def verify(st):
            loc = ("dir", st["dir"])
            _check(A.read(A.open(loc, meta), ...), data, f"{A.name} write, read back by itself")
            if libkey.startswith("zarrkit"):
                # ... and by zarr-python, so a zarrkit bug that round-trips cannot hide
                zp = ZarrPythonAdapter("zarr")
                zp.init()
                _check(zp.read(zp.open(loc, meta), ...), data,
                       "zarrkit write, read back by zarr-python")

        r = _measure(prepare, run, verify, turns)
        r.update(nbytes=data.nbytes, unit="s")
        shutil.rmtree(scratch, ignore_errors=True)
        settle_page_cache()
        # the next measurement starts on a rested file system (quick: indicative figures)
        time.sleep(RECENTLY_DELETED_S if not quick else 1)
        return r

    def read_all_op(loc, meta, want):
        def prepare():
            return {"h": A.open(loc, meta)}   # open (metadata) is not timed

        def run(st):
            st["out"] = A.read(st["h"], ...)

        def verify(st):
            _check(st["out"], want, f"{A.name} read all")

        r = _measure(prepare, run, verify, turns)
        r.update(nbytes=want.nbytes, unit="s")
        return r

    def read_into_op(loc, meta, want):
        dst = np.empty_like(want)
        dst.fill(0)  # existing memory: its pages are in place before the first run

        def prepare():
            return {"h": A.open(loc, meta)}

        def run(st):
            A.read_into(st["h"], dst)

        def verify(st):
            _check(dst, want, f"{A.name} read all into an existing array")

        r = _measure(prepare, run, verify, turns)
        r.update(nbytes=want.nbytes, unit="s")
        return r

    def read_regions_op(loc, meta, want, starts, region):
        sels = [tuple(slice(s, s + r) for s, r in zip(st, region)) for st in starts]
        nkeep = 10

        def prepare():
            return {"h": A.open(loc, meta), "kept": []}

        def run(st):
            h, kept = st["h"], st["kept"]
            for i, sel in enumerate(sels):
                out = A.read(h, sel)
                if i < nkeep:
                    kept.append(out)

        def verify(st):
            for sel, got in zip(sels, st["kept"]):
                _check(got, want[sel], f"{A.name} region read {sel}")

        r = _measure(prepare, run, verify, turns)
        n = len(sels)
        r.update(seconds=r["seconds"] / n, times=[t / n for t in r["times"]], cold=r["cold"] / n,
                 nbytes=int(np.prod(region)) * want.dtype.itemsize, unit="ms", n=n)
        return r

    def memory_loc(meta, data, latency=None):
        m = A.new_memory()
        h = A.create(("mem", m), meta)
        A.write(h, data)
        if latency is None:
            return ("mem", m)
        return ("latency", A.latency_wrap(m, latency))

    try:
        if op not in OPS[workload]:
            raise KeyError(f"{workload} has no operation {op!r}")
        if workload in ("W1", "W2", "W3"):
            d = S["W1"]
            data = make_data(d["shape"], d["dtype"])
            fmt = 2 if op.endswith("v2") else 3
            if workload == "W1":
                r = write_op(meta_of(d, fmt), data)
            elif workload == "W2" and "existing" in op:
                r = read_into_op(("dir", ref_path(tmp, f"w1_v{fmt}")), meta_of(d, fmt), data)
            elif workload == "W2":
                r = read_all_op(("dir", ref_path(tmp, f"w1_v{fmt}")), meta_of(d, fmt), data)
            else:
                region = S["W3"]["region"]
                starts = region_starts(d["shape"], region, S["W3"]["n"])
                r = read_regions_op(("dir", ref_path(tmp, "w1_v3")), meta_of(d, 3), data, starts,
                                    region)
        elif workload == "W4":
            d = S["W4"]
            data = make_data(d["shape"], d["dtype"])
            if op.startswith("write"):
                r = write_op(meta_of(d, 3), data)
            else:
                r = read_all_op(("dir", ref_path(tmp, "w4_v3")), meta_of(d, 3), data)
        elif workload == "W5":
            d = S["W5"]
            data = make_data(d["shape"], d["dtype"])
            meta = meta_of(d, 3)
            loc = ("dir", ref_path(tmp, "w5_v3"))
            if op.startswith("write"):
                r = write_op(meta, data)
            elif op.startswith("read all"):
                r = read_all_op(loc, meta, data)
            else:
                starts = region_starts(d["shape"], d["chunks"], d["n"], seed=2, step=d["chunks"])
                r = read_regions_op(loc, meta, data, starts, d["chunks"])
        elif workload == "W6":
            d = S["W6"]
            data = make_data(d["shape"], d["dtype"])
            meta = meta_of(d, 3, compressor=False)
            r = read_all_op(memory_loc(meta, data), meta, data)
        elif workload == "W7":
            d = S["W7"]
            data = make_data(d["shape"], d["dtype"])
            meta = meta_of(d, 3, compressor=False)
            r = read_all_op(memory_loc(meta, data, d["latency"]), meta, data)
        else:
            raise KeyError(workload)
        res.update(r)
    except NotAvailable as e:
        res["na"] = str(e)
    except AssertionError as e:
        res["error"] = str(e)
        res["wrong"] = True
        traceback.print_exc()
    except Exception as e:  # noqa: BLE001 - reported in the table
        res["error"] = f"{type(e).__name__}: {e}"[:400]
        traceback.print_exc()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return res



# --------------------------------------------------------------------------------------------
# machine limits


def w4_write_floors(d: dict, codec, ex, floor_dir: str, runs: int) -> dict:
    """The least a write of the W4 array (many tiny chunks) costs from Python on the pool
    ``ex``: each chunk copied out of the source, Blosc-encoded and written to its own new
    file, a row of chunks (one directory) per task -- with open/write/close only, and with
    the temporary file + rename that makes each write atomic.  Seconds (medians), the two
    kinds taking turns."""
    src = make_data(d["shape"], d["dtype"])
    c = d["chunks"]
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL

    def write(path: str, atomic: bool) -> None:
        def row(i: int) -> None:
            directory = os.path.join(path, "c", str(i // c[0]))
            os.makedirs(directory)
            buf = np.empty(c, dtype=src.dtype)
            for j in range(0, src.shape[1], c[1]):
                buf[...] = src[i : i + c[0], j : j + c[1]]
                data = codec.encode(buf)
                name = os.path.join(directory, str(j // c[1]))
                fd = os.open(name + ".tmp" if atomic else name, flags, 0o666)
                os.write(fd, data)
                os.close(fd)
                if atomic:
                    os.replace(name + ".tmp", name)

        list(ex.map(row, range(0, src.shape[0], c[0])))

    times: dict[str, list[float]] = {"plain": [], "atomic": []}
    for i in range(runs + 1):
        for kind in ("plain", "atomic") if i % 2 else ("atomic", "plain"):
            settle_page_cache()
            t0 = time.perf_counter()
            write(os.path.join(floor_dir, f"w4-{kind}-{i}"), kind == "atomic")
            if i:  # the first round is a warm-up
                times[kind].append(time.perf_counter() - t0)
    return {"w4_write_floor_plain_s": statistics.median(times["plain"]),
            "w4_write_floor_atomic_s": statistics.median(times["atomic"])}



def measure_limits(tmp: str, quick: bool, runs: int) -> dict:
    import concurrent.futures as cf

    import numcodecs
    from numcodecs import blosc

    S = sizes(quick)
    d = S["W1"]
    src = make_data(d["shape"], d["dtype"])
    out: dict[str, Any] = {}

    def med(fn, n=None):
        n = max(runs, 3) if n is None else n
        fn()  # warm-up
        ts = []
        for _ in range(n):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
        return statistics.median(ts)

    # memcpy into a fresh array (includes page faults of the destination), and into a warm one
    t = med(lambda: np.copy(src))
    out["memcpy_fresh_GBps"] = src.nbytes / t / 1e9
    dst = np.empty_like(src)
    np.copyto(dst, src)
    t = med(lambda: np.copyto(dst, src))
    out["memcpy_warm_GBps"] = src.nbytes / t / 1e9

    # page-cache read of the W1 (v3) chunk files
    root = ref_path(tmp, "w1_v3")
    files = [os.path.join(r, f) for r, _, fs in os.walk(root) for f in fs if f != "zarr.json"]
    total = sum(os.path.getsize(f) for f in files)

    def read_files():
        for f in files:
            with open(f, "rb") as fh:
                fh.read()

    read_files()  # make sure it is cached
    t = med(read_files)
    out["pagecache_read_GBps"] = total / t / 1e9
    out["pagecache_files"] = len(files)
    out["pagecache_bytes"] = total

    # numcodecs Blosc lz4 (clevel 5, byte shuffle) on the W1 chunks
    codec = numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1)
    c = d["chunks"]
    sels = [(slice(i, i + c[0]), slice(j, j + c[1]), slice(k, k + c[2]))
            for i in range(0, src.shape[0], c[0]) for j in range(0, src.shape[1], c[1])
            for k in range(0, src.shape[2], c[2])]
    chunks = [np.ascontiguousarray(src[sel]) for sel in sels]
    raw = sum(x.nbytes for x in chunks)
    outs = [np.empty_like(x) for x in chunks]   # warm destination buffers
    for o in outs:
        o.fill(0)

    def dec_into(pair):
        return codec.decode(pair[0], out=pair[1])

    pairs = list(zip([None] * len(chunks), outs))
    old_threads = blosc.get_nthreads()
    old_use = blosc.use_threads
    try:
        # (a) blosc's own 2 threads, one caller
        blosc.set_nthreads(2)
        blosc.use_threads = True
        enc = [codec.encode(x) for x in chunks]
        pairs = list(zip(enc, outs))
        out["blosc_ratio"] = raw / sum(len(e) for e in enc)
        t = med(lambda: [codec.encode(x) for x in chunks])
        out["blosc_encode_blosc2threads_GBps"] = raw / t / 1e9
        t = med(lambda: [dec_into(p) for p in pairs])
        out["blosc_decode_blosc2threads_GBps"] = raw / t / 1e9
        # (b) 2 Python threads, one chunk each at a time, blosc single-threaded (how chunked
        #     array libraries parallelise)
        blosc.use_threads = False
        with cf.ThreadPoolExecutor(2) as ex:
            t = med(lambda: list(ex.map(codec.encode, chunks)))
            out["blosc_encode_pool2_GBps"] = raw / t / 1e9
            t = med(lambda: list(ex.map(dec_into, pairs)))
            out["blosc_decode_pool2_GBps"] = raw / t / 1e9
            # decoding into newly allocated buffers pays page faults for every chunk
            t = med(lambda: list(ex.map(codec.decode, enc)))
            out["blosc_decode_pool2_fresh_GBps"] = raw / t / 1e9

            # decoding into one new array, each chunk into its own contiguous part: what a
            # read into a new array must do at least (the kernel hands out zeroed pages)
            def into_new_array():
                dst = np.empty((len(enc), chunks[0].size), dtype=chunks[0].dtype)
                list(ex.map(lambda i: codec.decode(enc[i], out=dst[i]), range(len(enc))))

            t = med(into_new_array)
            out["blosc_decode_pool2_newarray_GBps"] = raw / t / 1e9
        t = med(lambda: [dec_into(p) for p in pairs])
        out["blosc_decode_1thread_GBps"] = raw / t / 1e9
        # the least a write of the W1 array does from Python, on 2 threads: copy each chunk out
        # of the source, Blosc-encode it, and (second figure) write it to a new file with
        # open/write/close (no temporary file, no rename)
        tls = threading.local()

        def gather_encode(sel):
            b = getattr(tls, "b", None)
            if b is None:
                b = tls.b = np.empty(c, dtype=src.dtype)
            b[...] = src[sel]
            return codec.encode(b)

        with cf.ThreadPoolExecutor(2) as ex:
            t = med(lambda: list(ex.map(gather_encode, sels)))
            out["write_floor_encode_GBps"] = raw / t / 1e9
            floor_dir = os.path.join(tmp, "scratch", "write-floor")
            runs_done = [0]

            def write_files():
                runs_done[0] += 1
                d = os.path.join(floor_dir, f"run{runs_done[0]}")
                os.makedirs(d)

                def one(sel):
                    data = gather_encode(sel)
                    name = ".".join(str(s.start // n) for s, n in zip(sel, c))
                    with open(os.path.join(d, name), "wb") as f:
                        f.write(data)

                list(ex.map(one, sels))

            times = []
            for i in range(max(runs, 3) + 1):
                settle_page_cache()
                t0 = time.perf_counter()
                write_files()
                if i:  # the first run is a warm-up
                    times.append(time.perf_counter() - t0)
            out["write_floor_files_GBps"] = raw / statistics.median(times) / 1e9
            shutil.rmtree(floor_dir, ignore_errors=True)
            # kept until the run's files are removed at the end: deleting this many files
            # would slow the file creation of the measurements that follow
            out.update(w4_write_floors(S["W4"], codec, ex, os.path.join(tmp, "w4-floor"),
                                       max(runs, 3)))
            settle_page_cache()
            time.sleep(RECENTLY_DELETED_S if not quick else 1)
    finally:
        blosc.set_nthreads(old_threads)
        blosc.use_threads = old_use
    out["chunk_bytes"] = chunks[0].nbytes
    out["n_chunks"] = len(chunks)
    return out
