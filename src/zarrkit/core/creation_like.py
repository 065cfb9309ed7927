"""The creation arguments that come from other data: an array made *like* another one
(``empty_like``, ``zeros_like``... and :func:`zarrkit.open_like` take its shape, chunks, data
type and codecs unless given) and an array made *of* data (``array``: its shape, data type,
chunks and object codec).  Used alike by :mod:`zarrkit.api.creation` and by a group's methods
of the same names."""

from __future__ import annotations

from typing import Any

import numcodecs
import numpy as np

from .._warnings import warn
from ..config import config
from ..errors import ZarrUserWarning
from .array import Array

__all__ = ["AS_SOURCE", "EMPTY_FILL", "given_args", "source_info", "like_args", "data_args", "fixed_fill", "v2_source_order"]


class _AsSource:
    """The type of :data:`AS_SOURCE`."""

    def __repr__(self) -> str:
        return "AS_SOURCE"


#: the default of a ``*_like`` function's parameters (and :func:`zarrkit.open_like`'s): not
#: given, so the value of the source array is taken
AS_SOURCE: Any = _AsSource()

#: ``like_args``'s ``fill_value`` when the source's is kept
_KEEP: Any = object()

#: ``like_args``'s ``fill_value`` for ``empty_like``: a v3 array's own is kept (as zarr-python
#: 3 keeps it); a v2 array's copy has none, as in zarr-python 2, and so has a NumPy array's
EMPTY_FILL: Any = object()


def given_args(args: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments of a forwarding call, from the caller's ``locals()``: the
    parameters given (not :data:`AS_SOURCE`), with its ``**kwargs`` merged in."""
    extra = args.pop("kwargs", {})
    return {**{k: v for k, v in args.items() if v is not AS_SOURCE}, **extra}


def fixed_fill(fn: str, value: Any, given: Any) -> None:
    """``zeros``/``ones`` fill with their own value: another ``fill_value`` is refused rather
    than silently ignored."""
    try:
        same = bool(given == value) and not isinstance(given, (str, bytes))
    except Exception:  # noqa: BLE001 - arrays and other odd values are simply not the same
        same = False
    if not same:
        raise TypeError(f"{fn}() fills with {value!r}; got fill_value={given!r} (use full() or create())")


def source_info(data: Any) -> dict[str, Any]:
    """The creation arguments a new array takes after ``data`` (a zarrkit array, or any object
    with some of ``chunks``, ``dtype``, ``compressor``, ``fill_value``, ``order``, ``filters``)."""
    info: dict[str, Any] = {}
    if isinstance(data, Array):
        meta = data.metadata
        info.update(
            zarr_format=meta.zarr_format,
            chunks=meta.chunks,
            dtype=meta.dtype,
            compressor=meta.compressor,
            fill_value=meta.fill_value,
        )
        filters = list(meta.filters or ())
        if meta.zarr_format == 2:  # (a v3 array's order is its filters' transpose codec, kept)
            info["order"] = meta.layout_order
        if meta.dtype.kind == "O" and filters:
            info["object_codec"] = filters.pop(0)
        info["filters"] = filters or None
    else:
        chunks = getattr(data, "chunks", None)
        chunklen = getattr(data, "chunklen", None)  # bcolz-style arrays chunk the first dimension
        shape = getattr(data, "shape", None)
        if isinstance(chunks, tuple) and all(isinstance(c, (int, np.integer)) for c in chunks):
            info["chunks"] = chunks
        elif isinstance(chunklen, (int, np.integer)) and shape:
            info["chunks"] = (int(chunklen), *shape[1:])
        for attr in ("dtype", "compressor", "fill_value", "order", "filters"):
            if hasattr(data, attr):
                info[attr] = getattr(data, attr)
    return info


def v2_source_order(source_order: str, order: str | None, zarr_format: int) -> str | None:
    """The ``order`` of an array made of (or like) a v2 array of ``source_order``: kept for
    v2 unless given; for v3, which stores none, dropped -- with a warning when it is 'F'."""
    if zarr_format == 2:
        return source_order if order is None else order
    if source_order == "F":
        warn("The existing order='F' of the source Zarr format 2 array will be ignored.", ZarrUserWarning)
    return order


def like_args(
    fn: str, a: Any, kwargs: dict[str, Any], fill_value: Any = _KEEP, keep_format: bool = False,
) -> dict[str, Any]:
    """The creation arguments (``shape`` included) of an array like ``a``: ``kwargs`` win over
    ``a``'s.  ``fill_value``, when given, is the creating function's own (``zeros_like``'s 0);
    ``a``'s and any given are then dropped.  With ``keep_format`` (zarr-python 3's functions),
    a zarrkit source's Zarr format too, unless ``zarr_format`` is given: then its compressor
    and filters only when the formats match."""
    shape = kwargs.pop("shape", None)
    if shape is None:
        shape = getattr(a, "shape", None)
    if shape is None:
        raise TypeError(f"{fn}() needs an array-like with a shape, got {type(a).__name__}; give shape=")
    info = source_info(a)
    source_format = info.pop("zarr_format", None)
    if source_format is not None and keep_format:
        if kwargs.get("zarr_format") is None:  # a zarrkit source's format, unless another is asked
            kwargs["zarr_format"] = source_format
        elif kwargs["zarr_format"] != source_format:  # one format's codecs need not exist in the other
            info.pop("compressor", None)
            info.pop("filters", None)
    if "order" in info and source_format == 2:
        target = kwargs.get("zarr_format") or config.zarr_format
        kwargs["order"] = v2_source_order(info.pop("order"), kwargs.get("order"), target)
    if fill_value is EMPTY_FILL and source_format != 3:
        info["fill_value"] = None  # only a v3 array's empty copy keeps its fill value
    for k, v in info.items():
        kwargs.setdefault(k, v)
    if fill_value is not _KEEP and fill_value is not EMPTY_FILL:
        kwargs["fill_value"] = fill_value
    elif fill_value is _KEEP and kwargs.get("fill_value") is None and fn == "full_like":
        raise TypeError("full_like() needs a fill_value (none given and none on the source)")
    return {"shape": shape, **kwargs}


def data_args(data: Any, kwargs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """The values of ``array(data, ...)`` as an array, and its creation arguments (``shape``
    included): ``data``'s data type, chunks and object codec unless given."""
    if not hasattr(data, "shape") or not hasattr(data, "dtype"):
        data = np.asanyarray(data)
    if kwargs.get("dtype") is None:
        kwargs["dtype"] = data.dtype
    if kwargs.get("chunks") is None:
        kwargs["chunks"] = source_info(data).get("chunks", True)
    if np.dtype(kwargs["dtype"]).kind == "O" and kwargs.get("object_codec") is None:
        kwargs["object_codec"] = _guess_object_codec(data)
    return data, {"shape": data.shape, **kwargs}


def _guess_object_codec(data: Any) -> Any:
    flat = np.asarray(data, dtype=object).reshape(-1)
    if flat.size and all(isinstance(v, str) for v in flat):
        return numcodecs.VLenUTF8()
    if flat.size and all(isinstance(v, bytes) for v in flat):
        return numcodecs.VLenBytes()
    return None
