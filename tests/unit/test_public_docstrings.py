"""Every public function and method has an explicit signature and a numpydoc docstring that
documents it: the names of ``zarrkit.__all__``, of ``zarrkit.storage`` and the public methods
and properties of :class:`zarrkit.Array`, :class:`zarrkit.Group` and the stores (the contract,
:class:`zarrkit.storage.Store`, and every store class).

A callable that takes parameters has a ``Parameters`` section naming each of them (a class's
constructor parameters in the class docstring); ``**kwargs`` is there only where the docstring
says where they are forwarded (zarr-python 2's and h5py's keywords, or another function's), or
gives their type (``save_group``'s arrays, saved under their keyword).
"""

from __future__ import annotations

import inspect
import re

import pytest

import zarrkit
import zarrkit.storage

SECTION = re.compile(r"^(?P<title>[A-Z][A-Za-z ]+)\n-{3,}\n", re.MULTILINE)
FORWARDED = re.compile(r"\b(forwarded|passed) to\b", re.IGNORECASE)


def sections(doc: str) -> dict[str, str]:
    """The numpydoc sections of a (cleaned) docstring: title -> body."""
    found = list(SECTION.finditer(doc))
    return {
        m["title"]: doc[m.end(): found[i + 1].start() if i + 1 < len(found) else len(doc)]
        for i, m in enumerate(found)
    }


def documented_parameters(doc: str) -> dict[str, str]:
    """The parameters a ``Parameters`` section names (``a, b : type`` names two), each with
    its type and description."""
    body = sections(doc).get("Parameters", "")
    entries: dict[str, str] = {}
    names: list[str] = []
    for line in body.splitlines():
        if line and not line[0].isspace():
            head, _, kind = line.partition(" : ")
            names = [n.strip() for n in head.split(",") if n.strip()]
            for n in names:
                entries[n] = kind.strip() + " "
        elif line.strip():
            for n in names:
                entries[n] += line.strip() + " "
    return entries


def spelled(p: inspect.Parameter) -> str:
    return {p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "") + p.name


def public_parameters(obj) -> list[inspect.Parameter]:
    params = list(inspect.signature(obj).parameters.values())
    return [p for p in params if p.name not in ("self", "cls") and not p.name.startswith("_")]


def problems_of(qualname: str, obj, doc: str | None = None) -> list[str]:
    """What the docstring of a callable misses."""
    doc = inspect.getdoc(obj) if doc is None else doc
    if not doc or not doc.strip():
        return [f"{qualname}: no docstring"]
    params = public_parameters(obj)
    if not params:
        return []
    if "Parameters" not in sections(doc):
        return [f"{qualname}: no Parameters section (takes {', '.join(map(spelled, params))})"]
    entries = documented_parameters(doc)
    out = []
    for p in params:
        name = spelled(p)
        if name not in entries and p.name not in entries:
            out.append(f"{qualname}: parameter {name} not documented")
        elif p.kind is p.VAR_KEYWORD and not FORWARDED.search(entries.get(name, entries.get(p.name, ""))) \
                and not entries.get(name, "").split(" ")[0]:  # nor typed (values, not options)
            out.append(f"{qualname}: **{p.name} does not say where it is forwarded")
    return out


def public_names() -> list[tuple[str, object]]:
    names = [(f"zarrkit.{n}", getattr(zarrkit, n)) for n in zarrkit.__all__]
    for n in sorted(vars(zarrkit.storage)):
        obj = getattr(zarrkit.storage, n)
        if n.startswith("_") or inspect.ismodule(obj):
            continue
        if getattr(obj, "__module__", "").startswith("zarrkit"):
            names.append((f"zarrkit.storage.{n}", obj))
    return names


def class_members(cls) -> list[tuple[str, object]]:
    """The public methods and properties of ``cls`` (inherited from zarrkit classes too)."""
    out = []
    for name in sorted(dir(cls)):
        if name.startswith("_"):
            continue
        raw = inspect.getattr_static(cls, name)
        if isinstance(raw, property) or (inspect.isfunction(raw) and raw.__module__.startswith("zarrkit")):
            out.append((f"{cls.__name__}.{name}", raw))
    return out


def all_problems() -> tuple[int, list[str]]:
    checked = 0
    found: list[str] = []
    for qualname, obj in public_names():
        if not getattr(obj, "__module__", "zarrkit").startswith("zarrkit"):
            continue  # numcodecs' codecs, exported as they are
        if inspect.isclass(obj):
            checked += 1
            doc = inspect.getdoc(obj)
            if not doc:
                found.append(f"{qualname}: no docstring")
            elif obj.__init__ is not object.__init__ and "Parameters" in sections(doc):
                # the constructor's parameters are documented in the class docstring
                found += problems_of(qualname, obj.__init__, doc)
        elif callable(obj) and (inspect.isfunction(obj) or inspect.isbuiltin(obj)):
            checked += 1
            found += problems_of(qualname, obj)
    stores = sorted({obj for _, obj in public_names() if inspect.isclass(obj) and issubclass(obj, zarrkit.storage.Store)},
                    key=lambda c: c.__name__)
    for cls in (zarrkit.Array, zarrkit.Group, *stores):
        checked += 1
        if cls.__init__ is not object.__init__:
            found += problems_of(cls.__name__, cls.__init__, inspect.getdoc(cls))
        for qualname, member in class_members(cls):
            checked += 1
            if isinstance(member, property):
                if not (member.__doc__ or "").strip():
                    found.append(f"{qualname}: property without a docstring")
            else:
                found += problems_of(qualname, member)
    return checked, found


def test_every_public_callable_documents_its_parameters():
    checked, found = all_problems()
    assert checked > 500  # the walk found what it is about
    assert found == [], "\n".join(found)


CREATE_PARAMETERS = ("chunks", "dtype", "compressor", "order", "store", "path", "overwrite", "filters",
                     "zarr_format", "attributes", "shards", "dimension_names", "codecs", "storage_options")


@pytest.mark.parametrize("name", ["zeros", "ones", "empty", "full", "array", "empty_like", "zeros_like",
                                  "ones_like", "full_like"])
def test_creation_functions_spell_out_the_parameters_of_create(name):
    params = inspect.signature(getattr(zarrkit, name)).parameters
    for expected in CREATE_PARAMETERS:
        assert expected in params, f"{name}() has no parameter {expected!r}"
    for param in params.values():  # the defaults are create()'s (or "not given")
        create_param = inspect.signature(zarrkit.create).parameters.get(param.name)
        # fill_value: zeros' is 0, ones' 1; chunks: array's are the data's
        if create_param is not None and param.default is not zarrkit.core.creation_like.AS_SOURCE \
                and param.name not in ("fill_value", "chunks"):
            assert param.default == create_param.default, (name, param.name)


def test_open_like_spells_out_the_parameters_of_open_array():
    params = inspect.signature(zarrkit.open_like).parameters
    for expected in ("mode", "chunks", "dtype", "compressor", "fill_value", "order", "filters",
                     "chunk_store", "zarr_format", "storage_options"):
        assert expected in params


def test_signature_of_zeros_is_explicit():
    sig = inspect.signature(zarrkit.zeros)
    named = [p.name for p in sig.parameters.values() if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
    assert named[:3] == ["shape", "chunks", "dtype"]
    assert len(named) >= 20
    assert sig.parameters["compressor"].default == "default"
    assert sig.parameters["fill_value"].default == 0


def test_the_checker_finds_what_is_missing():
    def documented(a, b=1, **kwargs):
        """Do.

        Parameters
        ----------
        a, b : int
            Numbers.
        **kwargs
            Forwarded to :func:`zarrkit.create`.
        """

    def undocumented(a, c=2, **kwargs):
        """Do.

        Parameters
        ----------
        a : int
            A number.
        **kwargs
            Anything.
        """

    def values(**arrays):
        """Do.

        Parameters
        ----------
        **arrays : ndarray
            Saved under their keyword.
        """

    def bare(a):
        """Do."""

    assert problems_of("documented", documented) == []
    assert problems_of("undocumented", undocumented) == [
        "undocumented: parameter c not documented",
        "undocumented: **kwargs does not say where it is forwarded",
    ]
    assert problems_of("values", values) == []
    assert problems_of("bare", bare) == ["bare: no Parameters section (takes a)"]
    assert problems_of("nodoc", lambda: None) == ["nodoc: no docstring"]
