"""What an optional dependency that is missing is reported as: one
:class:`~zarrkit.errors.MissingExtraError` (a ``ModuleNotFoundError``) naming the package and
the extra of zarrkit that installs it, always in one form: ``pip install 'zarrkit[remote]'``
(:func:`install_hint`; quoted, as shells such as zsh need)."""

from __future__ import annotations

import importlib
from types import ModuleType

from ..errors import MissingExtraError

__all__ = ["missing_extra", "install_hint", "import_extra", "FSSPEC_PROTOCOL_EXTRAS"]

#: The extra of zarrkit that installs the fsspec implementation of a URL protocol, and the
#: packages it needs (what is not listed needs its own package, named by fsspec).
FSSPEC_PROTOCOL_EXTRAS = {
    "s3": ("remote", "s3fs"), "s3a": ("remote", "s3fs"),
    "http": ("remote", "aiohttp and requests"), "https": ("remote", "aiohttp and requests"),
}


def install_hint(extra: str) -> str:
    """The command that installs an extra of zarrkit, as every message gives it:
    ``install_hint("ml")`` is ``"pip install 'zarrkit[ml]'"``."""
    return f"pip install 'zarrkit[{extra}]'"


def missing_extra(what: str, package: str, extra: str) -> MissingExtraError:
    """The error of ``what`` (a store, a command, a module) needing ``package``, which ``extra``
    installs: ``"LMDBStore needs the 'lmdb' package: pip install 'zarrkit[lmdb]' (or pip
    install lmdb)"``."""
    quoted = package if " " in package else f"'{package}'"
    alone = " ".join(p for p in package.replace(",", " ").split() if p != "and")
    return MissingExtraError(
        f"{what} needs the {quoted} package{'s' if ' ' in package else ''}: "
        f"{install_hint(extra)} (or pip install {alone})",
        name=alone.split()[0],
    )


def import_extra(module: str, what: str, package: str, extra: str) -> ModuleType:
    """``importlib.import_module(module)``, or the :func:`missing_extra` error of ``what``
    when it (or what it needs) is not installed."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise missing_extra(what, package, extra) from exc
