"""Writers for the SIGKILL tests of file-based stores (``python _store_crash_worker.py MODE JSON``).

Each writer opens its store, prints ``ready``, then writes forever, printing one line to stdout
(flushed) right after each write call has returned: the parent kills it with SIGKILL and knows
exactly which writes were acknowledged.  The sequence of writes is a function of the generation
number alone (:func:`kv_ops`, :func:`zip_payload`), so the parent rebuilds it to check the store.

Modes
-----
kv    SQLiteStore / LMDBStore: single sets, ``set_many`` batches and deletes over 40 keys,
      values of 100 B to 150 kB; prints the operation number after each one, and closes
      and reopens the store after every tenth
zip   ZipStore(mode='w'): one new member after another, printing ``wrote N``, and
      ``flushed N`` after each :meth:`~zarrkit.storage.ZipStore.flush` (every 4 members)
"""

from __future__ import annotations

import itertools
import json
import random
import sys
from collections.abc import Iterator

from zarrkit.storage import LMDBStore, SQLiteStore, ZipStore

KEYS = [f"g/k{j}" for j in range(30)] + [f"a/b/c{j}" for j in range(10)]


def value(gen: int, i: int, key: str, size: int) -> bytes:
    """Bytes that name the generation, operation and key that wrote them."""
    tag = f"{gen}/{i}/{key}|".encode()
    return (tag * (size // len(tag) + 1))[:size]


def kv_ops(gen: int) -> Iterator[tuple[str, dict[str, bytes | None]]]:
    """The writes of generation ``gen``: ``('set'|'batch', {key: value})`` or
    ``('delete', {key: None})``."""
    rng = random.Random(f"kv-ops-{gen}")
    for i in itertools.count():
        r = rng.random()
        if r < 0.6:
            key = rng.choice(KEYS)
            yield "set", {key: value(gen, i, key, rng.randint(100, 150_000))}
        elif r < 0.85:
            keys = rng.sample(KEYS, rng.randint(2, 5))
            yield "batch", {k: value(gen, i, k, rng.randint(100, 60_000)) for k in keys}
        else:
            yield "delete", {rng.choice(KEYS): None}


def open_kv(kind: str, path: str):
    if kind == "sqlite":
        return SQLiteStore(path)
    return LMDBStore(path, map_size=2**30)


def run_kv(args: dict) -> None:
    store = open_kv(args["kind"], args["path"])
    print("ready", flush=True)
    for i, (op, items) in enumerate(kv_ops(args["gen"])):
        if op == "set":
            (key, val), = items.items()
            store[key] = val
        elif op == "batch":
            store.set_many(items)
        else:
            store.delete(next(iter(items)))
        print(i, flush=True)
        if i % 10 == 9:  # kills also fall while the store closes (SQLite leaves WAL mode)
            store.close()
            store = open_kv(args["kind"], args["path"])


def zip_payload(i: int) -> bytes:
    size = random.Random(f"zip-{i}").randint(100, 120_000)
    return value(0, i, f"m/{i}", size)


def run_zip(args: dict) -> None:
    store = ZipStore(args["path"], mode="w")
    print("ready", flush=True)
    for i in itertools.count():
        store[f"m/{i}"] = zip_payload(i)
        print(f"wrote {i}", flush=True)
        if i % 4 == 3:
            store.flush()
            print(f"flushed {i}", flush=True)


MODES = {"kv": run_kv, "zip": run_zip}

if __name__ == "__main__":
    MODES[sys.argv[1]](json.loads(sys.argv[2]))
