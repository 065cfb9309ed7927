"""``python benchmarks/appends.py dir|sqlite|lmdb``: 200 appends of 4 rows to a (0, 256) float32
array of (64, 256) chunks, on a directory, an SQLite or an LMDB database, no synchronizer (so each
append claims its rows and its winner writes or reads them again: see zarrkit.core.claims).
Timed from outside, whole process, with farm-bench against an older checkout."""

import sys
import tempfile

import numpy as np

import zarrkit

kind = sys.argv[1]
d = tempfile.mkdtemp()
if kind == "lmdb":
    from zarrkit.storage.lmdb import LMDBStore

    st = LMDBStore(d + "/a.lmdb", map_size=2**30)
else:
    st = zarrkit.DirectoryStore(d + "/a.zarr") if kind == "dir" else zarrkit.storage.SQLiteStore(d + "/a.db")
z = zarrkit.create_array(st, shape=(0, 256), chunks=(64, 256), dtype="f4", fill_value=0)
row = np.random.default_rng(0).random((4, 256)).astype("f4")
for _ in range(200):
    z.append(row)
