"""Sharding: many small chunks stored as a few large objects.  Creates a sharded array,
writes whole shards and parts of shards, and shows what is stored where and what each write
and read cost in store requests.

``--small`` (or ``ZARRKIT_EXAMPLES_SMALL=1``) uses a small array.
"""

from __future__ import annotations

import os
import sys
import tempfile

import numpy as np

import zarrkit as zarr
from zarrkit.storage import CountingStore

SMALL = "--small" in sys.argv[1:] or os.environ.get("ZARRKIT_EXAMPLES_SMALL") == "1"
N, CHUNK, SHARD = (256, 32, 128) if SMALL else (4096, 128, 1024)


def requests(store: CountingStore) -> str:
    """The reads and writes the store served since it was last reset."""
    gets = store.counts["get"]
    sets = store.counts["set"]
    return f"{gets} read{'s' * (gets != 1)}, {sets} write{'s' * (sets != 1)}"


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="zarrkit-sharding-") as tmp:
        store = CountingStore(zarr.DirectoryStore(os.path.join(tmp, "sharded.zarr")))
        z = zarr.create_array(store, shape=(N, N), dtype="u2",
                              chunks=(CHUNK, CHUNK),   # the unit a read decodes
                              shards=(SHARD, SHARD))   # the unit the store holds
        per_shard = (SHARD // CHUNK) ** 2
        print(f"array {z.shape}: chunks {z.chunks}, shards {z.shards}")
        print(f"{z.nchunks} chunks in {z.nshards} shards ({per_shard} chunks per shard)")

        # a whole shard: encoded in memory, stored with one request, nothing read
        store.reset()
        first = np.random.default_rng(0).integers(0, 1000, (SHARD, SHARD), dtype="u2")
        z[:SHARD, :SHARD] = first
        print("\nwrite one whole shard:", requests(store))

        # part of a shard: the shard is read once, its chunks merged, and it is written once
        store.reset()
        z[SHARD // 2, :SHARD] = 2                       # one row across one shard's chunks
        print("write a row across part of a shard:", requests(store))

        # a region straddling four shards, aligned with no chunk
        store.reset()
        lo, hi = SHARD - CHUNK // 2, SHARD + CHUNK // 2 + 3
        z[lo:hi, lo:hi] = 3
        print(f"write [{lo}:{hi}, {lo}:{hi}] (four shards):", requests(store))

        # what is stored: one object per shard written, chunks counted from the shard indexes
        print("\nstored objects:", [key for _, key in z.iter_stored()])
        print(f"stored shards: {z.nshards_initialized} of {z.nshards}; "
              f"stored chunks: {z.nchunks_initialized} of {z.nchunks}")
        for coords, key in z.iter_stored():
            size = store.getsize(key)
            print(f"  shard {coords} at {key!r}: {size:,} bytes, "
                  f"{z.check_stored(key)} chunk(s) in it decode")

        # a small read fetches the bytes of the chunk it needs, not the whole shard
        store.reset()
        block = z[:4, :4]
        shard_size = store.getsize("c/0/0")
        print(f"\nread a 4 x 4 block: {requests(store)}, "
              f"{store.bytes_read:,} bytes of the {shard_size:,} of its shard")
        for key, byte_range in store.keys_read:
            print(f"  {key} {byte_range if byte_range is not None else '(whole)'}")
        assert np.array_equal(block, first[:4, :4])
        expected = np.zeros((N, N), dtype="u2")
        expected[:SHARD, :SHARD] = first
        expected[SHARD // 2, :SHARD] = 2
        expected[lo:hi, lo:hi] = 3
        assert np.array_equal(z[:], expected)
        print("\ndata as written: True")
        print(z.info)


if __name__ == "__main__":
    main()
