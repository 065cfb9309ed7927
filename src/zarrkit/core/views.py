"""Other handles on an array's stored data: read with other metadata (:meth:`view`,
:meth:`astype`) or with other runtime settings (``config``, :meth:`with_config`).  Nothing
stored changes."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Literal, Protocol, TypedDict, TypeVar

import numcodecs
import numpy as np

from ..codecs.sharding import COALESCE_GAP
from ..config import config as _global_config
from ..metadata.dtypes import ml_dtype_name, normalize_fill_value
from ..metadata.normalize import normalize_chunks, normalize_shape
from ..metadata.spec import array_config_arg
from ..metadata.v2 import ArrayMetadataV2
from ..metadata.v3 import ArrayMetadataV3
from .lazy import LazyView, lazy_view

__all__ = ["ArrayConfig", "ArrayConfigLike", "ArrayConfigParams", "ViewMethods", "Viewable"]

#: the largest request the chunks of a shard are coalesced into
COALESCE_MAX_BYTES = 16 << 20


class ArrayConfigParams(TypedDict, total=False):
    """Some or all of the fields of :class:`ArrayConfig`, as a dict (zarr-python 3's name)."""

    order: Literal["C", "F"]
    write_empty_chunks: bool
    read_missing_chunks: bool
    sharding_coalesce_max_gap_bytes: int
    sharding_coalesce_max_bytes: int


@dataclasses.dataclass(frozen=True)
class ArrayConfig:
    """An array's runtime settings, as zarr-python 3 names them: the memory ``order`` of what
    it reads, whether all-fill chunks are written, whether missing chunks read as the fill
    value (or raise :class:`~zarrkit.errors.ChunkNotFoundError`), and how far apart (and how
    large) the chunks of a shard fetched together may be (fixed here).

    Examples
    --------
    >>> from zarrkit.core.views import ArrayConfig
    >>> ArrayConfig.from_dict({'order': 'F'}).order
    'F'
    """

    order: str = "C"
    write_empty_chunks: bool = False
    read_missing_chunks: bool = True
    sharding_coalesce_max_gap_bytes: int = COALESCE_GAP
    sharding_coalesce_max_bytes: int = COALESCE_MAX_BYTES

    def __post_init__(self) -> None:
        if self.order not in ("C", "F"):
            raise ValueError(f"order: expected 'C' or 'F', got {self.order!r}")
        for name in ("write_empty_chunks", "read_missing_chunks"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise TypeError(f"{name}: expected a bool, got {getattr(self, name)!r}")
        for name in ("sharding_coalesce_max_gap_bytes", "sharding_coalesce_max_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise TypeError(f"{name}: expected an int, got {value!r}")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ArrayConfig:
        """The settings in ``data``; those it leaves out come from ``zarrkit.config``'s
        ``array.`` keys (or, where that has none, this class's defaults).

        Parameters
        ----------
        data : dict
            Some of ``order``, ``write_empty_chunks``, ``read_missing_chunks``,
            ``sharding_coalesce_max_gap_bytes``, ``sharding_coalesce_max_bytes``.

        Returns
        -------
        ArrayConfig

        Raises
        ------
        TypeError
            A key that is not one of those settings (all such keys are named).
        """
        names = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(data) - set(names))
        if unknown:
            raise TypeError(f"Unknown array config keys: {unknown}. Valid keys are {names}.")
        values: dict[str, Any] = {}
        for name in names:
            if name in data:
                values[name] = data[name]
            else:
                value = _global_config.get(f"array.{name}")
                if value is not None:
                    values[name] = value
        return cls(**values)

    def to_dict(self) -> ArrayConfigParams:
        """All the settings as a dict.

        Returns
        -------
        dict
        """
        return ArrayConfigParams(
            order="F" if self.order == "F" else "C",
            write_empty_chunks=bool(self.write_empty_chunks),
            read_missing_chunks=bool(self.read_missing_chunks),
            sharding_coalesce_max_gap_bytes=int(self.sharding_coalesce_max_gap_bytes),
            sharding_coalesce_max_bytes=int(self.sharding_coalesce_max_bytes),
        )


#: what zarr-python 3 takes where an array's runtime settings are asked for
ArrayConfigLike = ArrayConfig | ArrayConfigParams


class Viewable(Protocol):
    """What making another handle on the data needs of an array."""

    _meta: ArrayMetadataV2 | ArrayMetadataV3
    _runtime_order: str | None
    _write_empty_chunks: bool
    _read_missing_chunks: bool

    @property
    def order(self) -> str: ...

    @property
    def dtype(self) -> np.dtype: ...

    def _reopen(self, meta: Any = None, *, read_only: bool | None = None, synchronizer: Any = None,
                order: str | None = None, write_empty_chunks: bool | None = None,
                read_missing_chunks: bool | None = None) -> Any: ...


#: the array a view method is called on, and the type of what it gives
_V = TypeVar("_V", bound=Viewable)


class ViewMethods:
    """The methods of :class:`~zarrkit.core.array.Array` that give other handles on its data."""

    @property
    def lazy(self) -> LazyView:
        """A lazy view of the array: indexing it reads nothing (see :mod:`zarrkit.core.lazy`;
        needs the ``zarrkit[views]`` extra)."""
        return lazy_view(self)

    def view(  # noqa: PYI019 - self is typed as what the method needs of an array
        self: _V,
        shape: Any = None,
        chunks: Any = None,
        dtype: Any = None,
        fill_value: Any = None,
        filters: Any = None,
        read_only: bool | None = None,
        synchronizer: Any = None,
    ) -> _V:
        """Return an array sharing this array's stored data, read with other metadata.

        Nothing is written to the store: the new shape, dtype, chunks, fill value or filters only
        change how the stored chunks are interpreted.  Resizing or appending to a view is refused.

        Parameters
        ----------
        shape, chunks, dtype, fill_value, filters : optional
            The metadata to read the stored chunks with (default: this array's; a new
            ``dtype`` casts the fill value).
        read_only : bool, optional
            Default: this array's.
        synchronizer : object, optional
            Default: this array's.

        Returns
        -------
        Array
            The view.

        Examples
        --------
        >>> import numpy as np, zarrkit
        >>> a = zarrkit.array(np.arange(4, dtype='u2'), chunks=2)
        >>> v = a.view(dtype='u1', shape=8, chunks=4)
        >>> v[:4]
        array([0, 0, 1, 0], dtype=uint8)
        """
        meta = self._meta
        changes: dict[str, Any] = {}
        new_dtype = meta.dtype if dtype is None else np.dtype(dtype)
        if dtype is not None:
            changes["dtype"] = new_dtype
        new_shape = meta.shape if shape is None else normalize_shape(shape)
        if shape is not None:
            changes["shape"] = new_shape
        if chunks is not None:
            changes["chunks"] = normalize_chunks(chunks, new_shape, new_dtype.itemsize)
        if fill_value is not None:
            changes["fill_value"] = normalize_fill_value(fill_value, new_dtype)
        elif dtype is not None and meta.fill_value is not None:
            try:
                changes["fill_value"] = np.asarray(meta.fill_value).astype(new_dtype)[()]
            except (TypeError, ValueError):
                changes["fill_value"] = None
        if filters is not None:
            changes["filters"] = tuple(filters) if filters else None
        settings: dict[str, Any] = {}
        if read_only is not None:
            settings["read_only"] = read_only
        if synchronizer is not None:
            settings["synchronizer"] = synchronizer
        return self._reopen(meta.evolve(**changes) if changes else meta, **settings)

    def astype(self: _V, dtype: Any) -> _V:  # noqa: PYI019
        """A read-only view converting the data to ``dtype`` on the fly.

        Parameters
        ----------
        dtype : str or dtype
            The data type reads return.

        Returns
        -------
        Array
            The view.

        Examples
        --------
        >>> import numpy as np, zarrkit
        >>> z = zarrkit.array(np.arange(4, dtype='f8'), chunks=2)
        >>> z.astype('i4')[:]
        array([0, 1, 2, 3], dtype=int32)
        """
        dtype = np.dtype(dtype)

        def spelled(dt: np.dtype) -> str:  # ml_dtypes types have no distinct dtype.str
            return dt.name if ml_dtype_name(dt) else dt.str

        filters = [numcodecs.AsType(encode_dtype=spelled(self.dtype), decode_dtype=spelled(dtype))]
        filters.extend(self._meta.filters or ())
        # (the view method is this class's, called on the array as its self)
        return ViewMethods.view(self, filters=filters, dtype=dtype, read_only=True)  # type: ignore[misc, unused-ignore]

    @property
    def config(self: Viewable) -> ArrayConfig:
        """The array's runtime settings (zarr-python 3's ``ArrayConfig``): its ``order``,
        ``write_empty_chunks`` and ``read_missing_chunks``; the ``sharding_coalesce_*`` hints as
        ``zarrkit.config`` has them (they are left to the engine)."""
        return ArrayConfig.from_dict({
            "order": self._runtime_order or self.order, "write_empty_chunks": self._write_empty_chunks,
            "read_missing_chunks": self._read_missing_chunks,
        })

    def with_config(self: _V, config: Any) -> _V:  # noqa: PYI019
        """The same array with other runtime settings; nothing stored changes.

        Parameters
        ----------
        config : ArrayConfig or dict
            ``order`` (memory layout of what reads return), ``write_empty_chunks`` and
            ``read_missing_chunks`` (False: reading a chunk that is not stored raises
            :class:`~zarrkit.errors.ChunkNotFoundError`); the ``sharding_coalesce_*`` hints are
            accepted and left to the engine.

        Returns
        -------
        Array
            A new array object on the same data.

        Raises
        ------
        TypeError
            An unknown setting.
        ValueError
            A setting of the wrong type, or an ``order`` other than 'C' and 'F'.

        Examples
        --------
        >>> import zarrkit
        >>> z = zarrkit.zeros((2, 2), chunks=1)
        >>> z.with_config({'order': 'F'})[:].flags.f_contiguous
        True
        """
        if isinstance(config, Mapping):
            unknown = set(config) - {f.name for f in dataclasses.fields(ArrayConfig)}
            if unknown:
                raise TypeError(f"with_config: unknown setting(s) {sorted(unknown)}")
        try:
            settings = array_config_arg(config)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"with_config: {exc}") from None
        order = settings.pop("order", None)
        write_empty_chunks = settings.pop("write_empty_chunks", None)
        read_missing_chunks = settings.pop("read_missing_chunks", None)
        return self._reopen(
            order=order or self._runtime_order,
            write_empty_chunks=self._write_empty_chunks if write_empty_chunks is None else write_empty_chunks,
            read_missing_chunks=self._read_missing_chunks if read_missing_chunks is None else read_missing_chunks,
        )
