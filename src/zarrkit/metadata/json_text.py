"""The one reader and writer of metadata JSON, and the nesting depth both agree on.

Python's own ``json`` recurses once per level of nesting, so how deep a document it reads or
writes depends on the Python version and on how deep the caller's stack already is (CPython
3.11 shares its 1,000-frame limit with the caller, 3.12 allows about 1,500 levels in C but only
about 1,000 when writing with an indent, 3.13 more).  A document one zarrkit could read would
then fail with a bare ``RecursionError`` when written back by ``attrs.update``, consolidation,
conversion or ``zarrkit cp``.

So zarrkit fixes the limit itself: :data:`MAX_JSON_DEPTH` levels of nested objects and arrays,
on every Python.  Documents up to it are read (with an iterative parser where Python's
recursive one gives up first) and written (with an iterative writer for deep ones, byte for byte
what ``json.dumps`` writes); deeper ones are refused with
:class:`~zarrkit.errors.MetadataError` naming the key, when read and before anything is written.
"""

from __future__ import annotations

import json
import math
import numbers
import re
from collections.abc import Callable
from json.decoder import scanstring  # type: ignore[attr-defined]  # typeshed leaves it out
from json.encoder import encode_basestring_ascii
from typing import Any, cast

import numpy as np

from ..errors import MetadataError

__all__ = ["MAX_JSON_DEPTH", "as_json_lists", "text_depth", "dump_json", "load_json", "loads_iteratively", "json_number"]

#: The deepest nesting of JSON objects and arrays a metadata document may have (``{"a": 1}``
#: is 1 level deep, ``1`` none): read and written alike, on every Python version.  Below
#: CPython 3.12's budget of about 1,500 levels for C code, so what zarrkit reads can also be
#: compared, copied and printed there.
MAX_JSON_DEPTH = 1_300


def _may_be_too_deep(text: str) -> bool:
    # the count of opening brackets bounds the depth: most documents need no closer look
    return text.count("[") + text.count("{") > MAX_JSON_DEPTH


def _too_deep(key: str | None) -> MetadataError:
    return MetadataError(
        f"JSON nested too deeply: expected at most {MAX_JSON_DEPTH} levels of objects and arrays, "
        "got more",
        key,
    )


def as_json_lists(value: Any, key: str | None = None) -> Any:
    """``value`` (a document given as Python objects) with its tuples as lists, as a JSON
    document holds them; walked without recursion, so a hostile nesting (or a container that
    holds itself) raises :class:`~zarrkit.errors.MetadataError` naming ``key`` once deeper than
    :data:`MAX_JSON_DEPTH`, not ``RecursionError``.

    Examples
    --------
    >>> as_json_lists({"shape": (2, 3), "a": [(1,)]})
    {'shape': [2, 3], 'a': [[1]]}
    """
    root: list[Any] = [None]
    # (value, the container it goes into, its place there, its depth)
    stack: list[tuple[Any, Any, Any, int]] = [(value, root, 0, 0)]
    while stack:
        item, parent, slot, depth = stack.pop()
        if isinstance(item, (list, tuple)):
            if depth >= MAX_JSON_DEPTH:
                raise _too_deep(key)
            out: Any = [None] * len(item)
            stack.extend((v, out, i, depth + 1) for i, v in enumerate(item))
        elif isinstance(item, dict):
            if depth >= MAX_JSON_DEPTH:
                raise _too_deep(key)
            out = dict.fromkeys(item)
            stack.extend((v, out, k, depth + 1) for k, v in item.items())
        else:
            out = item
        parent[slot] = out
    return root[0]


#: +1 for an opening bracket, -1 for a closing one; the characters a depth scan looks at
_DELTA = np.zeros(256, np.int8)
_DELTA[[ord("["), ord("{")]] = 1
_DELTA[[ord("]"), ord("}")]] = -1
_SCANNED = _DELTA != 0
_SCANNED[[ord('"'), ord("\\")]] = True


def text_depth(data: bytes) -> int:
    """The nesting depth of the objects and arrays of the JSON text ``data`` (UTF-8), brackets
    inside strings left out: a scan of the text with NumPy, several times faster than walking
    the parsed document (large consolidated documents are measured on every open)."""
    b = np.frombuffer(data, np.uint8)
    pos = np.flatnonzero(_SCANNED[b])
    if pos.size == 0:
        return 0
    k = b[pos]
    quotes = k == 34
    slashes = k == 92
    if slashes.any():
        # a quote after an odd run of backslashes is escaped: it neither opens nor closes a string
        n = np.arange(pos.size)
        adjacent = np.zeros(pos.size, bool)
        adjacent[1:] = pos[1:] == pos[:-1] + 1
        after_slash = np.zeros(pos.size, bool)
        after_slash[1:] = slashes[:-1]
        run_start = np.maximum.accumulate(np.where(slashes & ~(after_slash & adjacent), n, 0))
        escaping = slashes & ((n - run_start) % 2 == 0)
        escaped = np.zeros(pos.size, bool)
        escaped[1:] = escaping[:-1] & adjacent[1:]
        quotes &= ~escaped
    in_string = (np.cumsum(quotes) & 1).astype(bool)
    delta = _DELTA[k].astype(np.int64)
    delta[in_string] = 0
    return int(np.cumsum(delta).max())  # type: ignore[call-overload]  # numpy's stubs ask for an axis


# -- writing --------------------------------------------------------------------------------


def _float_text(value: float, allow_nan: bool) -> str:
    if math.isfinite(value):
        return float.__repr__(value)
    if not allow_nan:
        raise ValueError(f"Out of range float values are not JSON compliant: {value!r}")
    return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")


def _key_text(key: Any, allow_nan: bool) -> str:
    # the conversions json.dumps makes of non-string keys, in its order
    if isinstance(key, str):
        return key
    if isinstance(key, float):
        return _float_text(key, allow_nan)
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    if isinstance(key, int):
        return int.__repr__(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def json_number(value: Any) -> Any:
    """A numpy scalar as JSON holds it (``default=`` of :func:`dump_json` for attributes):
    integers as ``int``, reals as ``float`` (NaN and infinities included), ``numpy.bool_`` as
    ``bool`` -- what zarr-python 2 stored; ``TypeError`` for anything else."""
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _dumps_iteratively(
    doc: Any, indent: int | None, sort_keys: bool, allow_nan: bool, key: str | None,
    default: Callable[[Any], Any] | None = None,
) -> str:
    """``json.dumps(doc, indent=indent, sort_keys=sort_keys, allow_nan=allow_nan)`` (ASCII
    output), with an explicit stack instead of recursion."""
    parts: list[str] = []
    item_sep = "," if indent is not None else ", "
    pad = " " * indent if indent is not None else None
    # each open container: [is_dict, iterator over its items, id]
    stack: list[tuple[bool, Any, int]] = []
    on_path: set[int] = set()
    first = False

    def value(v: Any) -> None:
        nonlocal first
        if isinstance(v, str):
            parts.append(encode_basestring_ascii(v))
        elif v is None:
            parts.append("null")
        elif v is True:
            parts.append("true")
        elif v is False:
            parts.append("false")
        elif isinstance(v, int):
            parts.append(int.__repr__(v))
        elif isinstance(v, float):
            parts.append(_float_text(v, allow_nan))
        elif isinstance(v, (list, tuple, dict)):
            is_dict = isinstance(v, dict)
            if not v:
                parts.append("{}" if is_dict else "[]")
                return
            if len(stack) >= MAX_JSON_DEPTH:
                raise _too_deep(key)
            if id(v) in on_path:
                raise ValueError("Circular reference detected")
            on_path.add(id(v))
            parts.append("{" if is_dict else "[")
            items = (sorted(v.items()) if sort_keys else v.items()) if isinstance(v, dict) else v
            stack.append((is_dict, iter(items), id(v)))
            first = True
        elif default is not None:
            value(default(v))
        else:
            raise TypeError(f"Object of type {type(v).__name__} is not JSON serializable")

    end = object()
    value(doc)
    while stack:
        is_dict, items, ident = stack[-1]
        item = next(items, end)
        if item is end:
            stack.pop()
            on_path.discard(ident)
            if pad is not None and not first:
                parts.append("\n" + pad * len(stack))
            parts.append("}" if is_dict else "]")
            first = False
            continue
        if pad is not None:
            parts.append(("\n" if first else ",\n") + pad * len(stack))
        elif not first:
            parts.append(item_sep)
        first = False
        if is_dict:
            k, item = cast("tuple[Any, Any]", item)  # a dict's items are pairs
            parts.append(encode_basestring_ascii(_key_text(k, allow_nan)))
            parts.append(": ")
        value(item)
    return "".join(parts)


def dump_json(
    doc: Any,
    key: str | None = None,
    *,
    indent: int | None = None,
    sort_keys: bool = False,
    allow_nan: bool = True,
    default: Callable[[Any], Any] | None = None,
) -> bytes:
    """``doc`` as ASCII JSON bytes, exactly as ``json.dumps(doc, indent=indent,
    sort_keys=sort_keys, allow_nan=allow_nan, default=default)`` writes it, at any depth up to
    :data:`MAX_JSON_DEPTH`.

    Raises :class:`~zarrkit.errors.MetadataError` naming ``key`` for a deeper document (so a
    caller that serialises before it writes writes nothing), and ``TypeError``/``ValueError``
    as ``json.dumps`` does for values JSON cannot hold.
    """
    try:
        text = json.dumps(doc, indent=indent, sort_keys=sort_keys, ensure_ascii=True, allow_nan=allow_nan,
                          default=default)
    except RecursionError:
        # deeper than json.dumps goes from here (its indenting writer recurses in Python)
        return _dumps_iteratively(doc, indent, sort_keys, allow_nan, key, default).encode("ascii")
    data = text.encode("ascii")
    if _may_be_too_deep(text) and text_depth(data) > MAX_JSON_DEPTH:
        raise _too_deep(key)
    return data


# -- reading --------------------------------------------------------------------------------

_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"(-?(?:0|[1-9]\d*))(\.\d+)?([eE][-+]?\d+)?")
_LITERALS = (("null", None), ("true", True), ("false", False), ("NaN", math.nan),
             ("Infinity", math.inf), ("-Infinity", -math.inf))


def loads_iteratively(text: str, limit: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads(text)`` without recursion: the same values (``NaN`` and ``Infinity``
    accepted, the last of repeated keys kept).  ``ValueError`` for text that is not JSON;
    :class:`~zarrkit.errors.MetadataError` when objects and arrays nest deeper than ``limit``."""
    # [ \t\n\r]* matches (possibly empty) at every position
    skip = cast("Callable[[str, int], re.Match[str]]", _WS.match)
    pos = skip(text, 0).end()
    # each open container: [the container, the key its next value goes under]
    stack: list[list[Any]] = []

    def fail(what: str, at: int) -> ValueError:
        return ValueError(f"{what}: char {at}")

    def object_key(at: int) -> tuple[str, int]:
        if text[at:at + 1] != '"':
            raise fail("Expecting property name enclosed in double quotes", at)
        name, at = scanstring(text, at + 1, True)
        at = skip(text, at).end()
        if text[at:at + 1] != ":":
            raise fail("Expecting ':' delimiter", at)
        return name, skip(text, at + 1).end()

    while True:
        ch = text[pos:pos + 1]
        if ch in ("{", "["):
            if len(stack) >= limit:
                raise _too_deep(None)
            pos = skip(text, pos + 1).end()
            if text[pos:pos + 1] == ("}" if ch == "{" else "]"):
                result: Any = {} if ch == "{" else []
                pos += 1
            elif ch == "{":
                name, pos = object_key(pos)
                stack.append([{}, name])
                continue
            else:
                stack.append([[], None])
                continue
        elif ch == '"':
            result, pos = scanstring(text, pos + 1, True)
        else:
            m = _NUMBER.match(text, pos)
            if m is not None:
                integer, frac, exp = m.groups()
                result = float(integer + (frac or "") + (exp or "")) if frac or exp else int(integer)
                pos = m.end()
            else:
                for word, result in _LITERALS:
                    if text.startswith(word, pos):
                        pos += len(word)
                        break
                else:
                    raise fail("Expecting value", pos)
        # a value is complete: it goes into the open containers, closing those that end
        while True:
            if not stack:
                pos = skip(text, pos).end()
                if pos != len(text):
                    raise fail("Extra data", pos)
                return result
            top = stack[-1]
            container = top[0]
            if type(container) is dict:
                container[top[1]] = result
            else:
                container.append(result)
            pos = skip(text, pos).end()
            ch = text[pos:pos + 1]
            if ch == ",":
                pos = skip(text, pos + 1).end()
                if type(container) is dict:
                    top[1], pos = object_key(pos)
                break
            if ch != ("}" if type(container) is dict else "]"):
                raise fail("Expecting ',' delimiter", pos)
            pos += 1
            stack.pop()
            result = container


def load_json(raw: Any, key: str) -> Any:
    """The JSON document stored as ``raw`` (UTF-8 bytes), checked to nest at most
    :data:`MAX_JSON_DEPTH` levels; :class:`~zarrkit.errors.MetadataError` naming ``key`` for
    anything else."""
    data = bytes(raw)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MetadataError(f"not valid JSON: {exc}", key) from None
    try:
        try:
            doc = json.loads(text)
        except RecursionError:
            # deeper than this Python's parser goes from here: the iterative one decides
            return loads_iteratively(text)
    except MetadataError:
        raise _too_deep(key) from None
    except ValueError as exc:
        raise MetadataError(f"not valid JSON: {exc}", key) from None
    if _may_be_too_deep(text) and text_depth(data) > MAX_JSON_DEPTH:
        raise _too_deep(key)
    return doc
