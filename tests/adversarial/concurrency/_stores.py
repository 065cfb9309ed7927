"""The stores of the concurrency suite, each named by a JSON-able *spec* (``{"kind", ...}``)
that a worker process opens by itself, as another machine would: a path, a database file, a
Redis URL and prefix, an S3 endpoint and prefix."""

from __future__ import annotations

from typing import Any

#: every store kind of the suite; ``memory`` cannot be shared across processes (its writers
#: are threads of the test process)
KINDS = ["memory", "obstore-memory", "directory", "sqlite", "lmdb", "redis", "obstore-s3",
         "fsspec-s3"]
IN_PROCESS = {"memory", "obstore-memory"}
BUCKET = "zarrkit-test"


def open_store(spec: dict[str, Any]) -> Any:
    """A new store object of ``spec`` (a new connection: nothing shared with other opens)."""
    kind = spec["kind"]
    if kind == "directory":
        from zarrkit.storage import DirectoryStore

        return DirectoryStore(spec["path"])
    if kind == "sqlite":
        from zarrkit.storage.sqlite import SQLiteStore

        return SQLiteStore(spec["path"])
    if kind == "lmdb":
        from zarrkit.storage.lmdb import LMDBStore

        return LMDBStore(spec["path"], map_size=2**26)
    if kind == "redis":
        from zarrkit.storage.redis import RedisStore

        return RedisStore(prefix=spec["prefix"], url=spec["url"])
    if kind == "obstore-s3":
        from obstore.store import S3Store

        from zarrkit.storage import ObjectStore

        return ObjectStore(S3Store(BUCKET, prefix=spec["prefix"], endpoint=spec["endpoint"],
                                   region="us-east-1", access_key_id="testing",
                                   secret_access_key="testing",
                                   client_options={"allow_http": True}))
    if kind == "fsspec-s3":
        from zarrkit.storage import FsspecStore

        options = {"key": "testing", "secret": "testing", "skip_instance_cache": True,
                   "client_kwargs": {"endpoint_url": spec["endpoint"]}}
        return FsspecStore(f"s3://{BUCKET}/{spec['prefix']}", storage_options=options)
    raise ValueError(f"expected a store kind that processes can share, got {kind!r}")


def close_store(store: Any) -> None:
    close = getattr(store, "close", None)
    if close is not None:
        close()
