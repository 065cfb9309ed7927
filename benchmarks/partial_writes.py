"""Partial-write workload: 200 unaligned 100x100 writes into a 1024x1024 float32 array of 128x128 chunks (1-4 chunks each, partly), median of 5; run with PYTHONPATH pointing at the zarrkit to measure.  Usage: partial_writes.py dir|mem|dirshard|sqlite|lmdb|redis (redis: a server at $REDIS_URL)"""
import sys, time, tempfile, numpy as np, zarrkit
kind = sys.argv[1]
def run(store_factory, shards=None):
    store = store_factory()
    z = zarrkit.create_array(store, shape=(1024, 1024), chunks=(128, 128), shards=shards, dtype="f4", fill_value=0, zarr_format=3)
    z[:] = 1.0
    rng = np.random.default_rng(0)
    t = time.perf_counter()
    for _ in range(200):
        i, j = rng.integers(0, 1024 - 100, 2)
        z[i:i+100, j:j+100] = 2.0   # touches 1-4 chunks partially
    return time.perf_counter() - t
res = []
for rep in range(5):
    if kind == "dir":
        res.append(run(lambda: zarrkit.DirectoryStore(tempfile.mkdtemp())))
    elif kind == "mem":
        res.append(run(zarrkit.MemoryStore))
    elif kind == "dirshard":
        res.append(run(lambda: zarrkit.DirectoryStore(tempfile.mkdtemp()), shards=(512, 512)))
    elif kind == "sqlite":
        res.append(run(lambda: zarrkit.storage.SQLiteStore(tempfile.mkdtemp() + "/a.db")))
    elif kind == "lmdb":
        from zarrkit.storage.lmdb import LMDBStore
        res.append(run(lambda: LMDBStore(tempfile.mkdtemp() + "/a.lmdb", map_size=2**30)))
    elif kind == "redis":
        import os, uuid
        from zarrkit.storage.redis import RedisStore
        res.append(run(lambda: RedisStore(prefix=uuid.uuid4().hex, url=os.environ["REDIS_URL"])))
print(kind, "median %.3f s" % sorted(res)[2], "min %.3f" % min(res))
