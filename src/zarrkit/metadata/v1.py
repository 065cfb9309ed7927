"""Migration from the Zarr v1 layout (``meta``/``attrs`` keys) to v2."""

from __future__ import annotations

from typing import Any

from ..errors import MetadataError
from ..storage.base import Store
from .json_text import load_json
from .v2 import ArrayMetadataV2, json_bytes


def migrate_1to2(store: Store) -> None:
    """Migrate array metadata in ``store`` from Zarr format version 1 to version 2.

    Version 1 had no hierarchies: the single array's ``meta`` key becomes ``.zarray``
    (``compression``/``compression_opts`` become a ``compressor``) and ``attrs`` becomes
    ``.zattrs``.  Chunks are untouched.  The new documents are validated before the old keys
    are removed.

    ``store`` is a :class:`~zarrkit.storage.base.Store`; :func:`zarrkit.storage.migrate_1to2`
    takes any store argument.
    """
    s = store
    raw = s.get("meta")
    if raw is None:
        raise MetadataError("no v1 'meta' key to migrate", "meta")
    meta = load_json(raw, "meta")
    if not isinstance(meta, dict) or meta.get("zarr_format") != 1:
        raise MetadataError(f"expected zarr_format 1, got {meta!r}", "meta")
    compression = meta.pop("compression", None)
    opts = meta.pop("compression_opts", None)
    compressor: dict[str, Any] | None
    if compression in (None, "none"):
        compressor = None
    elif compression == "blosc":
        compressor = {"id": "blosc", **(opts or {})}
    elif compression in ("zlib", "bz2", "gzip"):
        compressor = {"id": compression if compression != "gzip" else "zlib", "level": opts if opts is not None else 1}
    elif compression == "lzma":
        compressor = {"id": "lzma", **(opts or {})}
    else:
        compressor = {"id": compression, **(opts if isinstance(opts, dict) else {})}
    meta.update(zarr_format=2, compressor=compressor, filters=None)
    doc = {k: meta[k] for k in ("zarr_format", "shape", "chunks", "dtype", "compressor", "fill_value", "order", "filters") if k in meta}
    ArrayMetadataV2.from_json(doc, "meta")  # validate before changing anything
    s.set(".zarray", json_bytes(doc, ".zarray"))
    attrs = s.get("attrs")
    s.set(".zattrs", attrs if attrs is not None else b"{}")
    s.delete("meta")
    s.delete("attrs")
