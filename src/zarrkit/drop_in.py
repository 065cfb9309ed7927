"""zarrkit as the module ``zarr``: :func:`install_as_zarr`.

After ``zarrkit.install_as_zarr()``, ``import zarr`` anywhere in the process (xarray's Zarr
backend, dask's ``from_zarr``/``to_zarr``, a user's script) gives zarrkit: the module ``zarr``
has zarrkit's names and reports the zarr-python release whose API zarrkit follows as its
``__version__`` (``'3.4.2+zarrkit.0.1.0'``: code checking ``Version(zarr.__version__).major >= 3``
takes its zarr-3 path).  ``zarr.<path>`` is zarrkit's module ``zarrkit.<path>`` itself when
zarrkit has one and zarr-python's names do not live elsewhere; otherwise (``zarr.abc.store``,
``zarr.core.array``, ``zarr.codecs``...) a module whose names are looked up, in order, in
``zarrkit.<path>`` and the modules :data:`zarrkit.compat.ZARR3_PATHS` lists for it.  A name
zarrkit lacks is an ``AttributeError`` (an ``ImportError`` for ``from zarr.x import name``), a
module neither has is a ``ModuleNotFoundError``: nothing stands in for what is missing.

The same works without changing a program: ``python -m zarrkit.as_zarr script.py [args]`` or
``python -m zarrkit.as_zarr -m module [args]`` installs zarrkit as ``zarr`` and runs the
script or module (:mod:`zarrkit.as_zarr`).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import platform
import sys
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _dist_version
from types import ModuleType
from typing import Any

from .errors import ZarrAlreadyImportedError

__all__ = ["install_as_zarr", "print_debug_info", "version"]

_NAME = "zarr"


def _zarrkit() -> ModuleType:
    return importlib.import_module("zarrkit")


def _paths() -> dict[str, tuple[str, ...]]:
    return importlib.import_module("zarrkit.compat").ZARR3_PATHS


def _real(name: str) -> ModuleType | None:
    """zarrkit's module for zarr-python's module ``name`` (``zarr.storage`` -> ``zarrkit.storage``),
    or None when zarrkit has none."""
    real = "zarrkit" + name[len(_NAME):]
    if real in sys.modules:
        return sys.modules[real]
    try:
        found = importlib.util.find_spec(real)
    except (ImportError, AttributeError, ValueError):
        return None
    return importlib.import_module(real) if found is not None else None


def _key(name: str) -> str:
    return name[len(_NAME) + 1:]


def _is_module(name: str) -> bool:
    key = _key(name)
    return key in _paths() or any(k.startswith(key + ".") for k in _paths()) or _real(name) is not None


class _Alias(ModuleType):
    """zarr-python's module whose names zarrkit keeps in several modules: each name is looked
    up in :attr:`_zarrkit_sources`, in order."""

    _zarrkit_sources: tuple[ModuleType, ...] = ()

    def __getattr__(self, name: str) -> Any:
        sources = self.__dict__.get("_zarrkit_sources", ())
        if name == "__all__":
            return sorted({n for source in sources for n in getattr(source, "__all__", ())})
        if name.startswith("__"):
            raise AttributeError(name)
        child = f"{self.__name__}.{name}"
        for source in sources:
            if hasattr(source, name):
                value = getattr(source, name)
                if isinstance(value, ModuleType) and _is_module(child):
                    return importlib.import_module(child)
                return value
        if _is_module(child):
            return importlib.import_module(child)
        where = ", ".join(source.__name__ for source in sources)
        raise AttributeError(f"module {self.__name__!r} (zarrkit: {where}) has no attribute {name!r}")

    def __dir__(self) -> list[str]:
        names = {n for source in self.__dict__.get("_zarrkit_sources", ()) for n in dir(source)}
        return sorted(names | set(self.__dict__))


class _Top(_Alias):
    """The module ``zarr``: zarrkit's names, with zarr-python's version number."""


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``zarr`` and ``zarr.<path>`` as zarrkit's modules (first on ``sys.meta_path``)."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != _NAME and not fullname.startswith(_NAME + "."):
            return None
        if fullname != _NAME and not _is_module(fullname):
            return None  # no such module in zarrkit: ModuleNotFoundError (zarr.storage.MemoryStore is a class)
        origin = getattr(_real(fullname), "__file__", None)
        spec = importlib.machinery.ModuleSpec(fullname, self, origin=origin, is_package=True)
        spec.has_location = origin is not None
        return spec

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        real = _real(spec.name)
        if spec.name == _NAME:
            module: ModuleType = _Top(_NAME, _zarrkit().__doc__)
            module.__dict__.update(__version__=version(), __file__=_zarrkit().__file__, __path__=[],
                                   _zarrkit_sources=(_zarrkit(),))
            return module
        rows = _paths().get(_key(spec.name), ())
        if real is not None and not rows:
            return real  # zarr.storage is zarrkit.storage
        alias = _Alias(spec.name)
        sources = ((real,) if real is not None else ()) + tuple(importlib.import_module(f"zarrkit.{m}") for m in rows)
        alias.__dict__.update(__path__=[], _zarrkit_sources=sources)
        if real is not None:
            alias.__file__ = real.__file__
        return alias

    def exec_module(self, module: ModuleType) -> None:
        pass


def version() -> str:
    """``zarr.__version__`` once zarrkit is installed as ``zarr``: the zarr-python release whose
    API zarrkit follows, with zarrkit's version as a PEP 440 local label.

    Returns
    -------
    str
        ``'3.4.2+zarrkit.0.1.0'`` for zarrkit 0.1.0 following zarr-python 3.4.2.
    """
    zarrkit = _zarrkit()
    local = zarrkit.__version__.replace("-", ".").replace("+", ".")
    return f"{importlib.import_module('zarrkit.compat').ZARR3_API_VERSION}+zarrkit.{local}"


def _installed() -> bool:
    return any(isinstance(f, _Finder) for f in sys.meta_path)


def install_as_zarr() -> None:
    """Make ``import zarr`` give zarrkit, in this process, from now on.

    For libraries that import ``zarr`` themselves (xarray's ``to_zarr``/``open_zarr``/
    ``open_dataset(engine="zarr")``, dask's ``from_zarr``/``to_zarr``): call it first, before
    anything imports zarr-python.  ``zarr.__version__`` is ``'3.4.2+zarrkit.<version>'``; see
    :mod:`zarrkit.drop_in` for how zarr-python's module names resolve, and the guide's "zarrkit
    as zarr" page for what works that way.  Calling it again does nothing.

    Raises
    ------
    ZarrAlreadyImportedError
        When zarr-python (or another module named ``zarr``) is imported already: modules that
        hold its classes would mix with zarrkit's.

    Examples
    --------
    >>> import zarrkit
    >>> zarrkit.install_as_zarr()  # doctest: +SKIP
    >>> import zarr  # doctest: +SKIP
    >>> zarr.zeros((2,)).__module__  # doctest: +SKIP
    'zarrkit.core.array'
    """
    if _installed():
        return
    loaded = sorted(n for n in sys.modules if n == _NAME or n.startswith(_NAME + "."))
    if loaded:
        where = getattr(sys.modules.get(_NAME), "__file__", None)
        raise ZarrAlreadyImportedError(
            f"cannot install zarrkit as 'zarr': a module 'zarr' is imported already "
            f"({where or loaded[0]}; {len(loaded)} modules named zarr.*). "
            "Call zarrkit.install_as_zarr() before anything imports zarr "
            "(first in the program, or run it with 'python -m zarrkit.as_zarr').")
    sys.meta_path.insert(0, _Finder())
    importlib.import_module(_NAME)


#: required, then optional packages whose versions change what zarrkit does
_REQUIRED = ("numpy", "numcodecs")
_OPTIONAL = ("zarr-indexing", "fsspec", "s3fs", "obstore", "xarray", "dask", "crc32c", "zfpy", "lmdb", "redis",
             "fasteners", "tqdm", "cupy", "zarr")


def _installed_version(name: str) -> str:
    try:
        return _dist_version(name)
    except PackageNotFoundError:
        return "not installed"


def print_debug_info() -> None:
    """Print zarrkit's version, the zarr-python API it follows, Python's and the platform's,
    whether zarrkit is installed as ``zarr``, and the versions of the packages it uses
    (zarr-python 3's ``zarr.print_debug_info``).

    Examples
    --------
    >>> import zarrkit
    >>> zarrkit.print_debug_info()  # doctest: +ELLIPSIS
    platform: ...
    """
    print(f"platform: {platform.platform()}")
    print(f"python: {sys.version.split()[0]}")
    print(f"zarrkit: {_zarrkit().__version__} (zarr-python {importlib.import_module('zarrkit.compat').ZARR3_API_VERSION} API)")
    print(f"installed as zarr: {_installed()}\n")
    print("Required dependencies:")
    for name in _REQUIRED:
        print(f"  {name}: {_installed_version(name)}")
    print("\nOptional dependencies:")
    for name in _OPTIONAL:
        print(f"  {name}: {_installed_version(name)}")
