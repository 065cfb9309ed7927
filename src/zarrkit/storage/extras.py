"""What an optional dependency that is missing is reported as: one ``ImportError`` naming the
package and the extra of zarrkit that installs it (``pip install zarrkit[remote]``)."""

from __future__ import annotations

__all__ = ["missing_extra", "FSSPEC_PROTOCOL_EXTRAS"]

#: The extra of zarrkit that installs the fsspec implementation of a URL protocol, and the
#: packages it needs (what is not listed needs its own package, named by fsspec).
FSSPEC_PROTOCOL_EXTRAS = {
    "s3": ("remote", "s3fs"), "s3a": ("remote", "s3fs"),
    "http": ("remote", "aiohttp and requests"), "https": ("remote", "aiohttp and requests"),
}


def missing_extra(what: str, package: str, extra: str) -> ImportError:
    """The error of ``what`` (a store, a command) needing ``package``, which ``extra`` installs:
    ``"LMDBStore needs the 'lmdb' package: pip install zarrkit[lmdb] (or pip install lmdb)"``."""
    quoted = package if " " in package else f"'{package}'"
    alone = " ".join(p for p in package.replace(",", " ").split() if p != "and")
    return ImportError(
        f"{what} needs the {quoted} package{'s' if ' ' in package else ''}: "
        f"pip install zarrkit[{extra}] (or pip install {alone})"
    )
