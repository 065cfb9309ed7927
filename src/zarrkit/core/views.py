"""Other handles on an array's stored data: read with other metadata (:meth:`view`,
:meth:`astype`) or with other runtime settings (``config``, :meth:`with_config`).  Nothing
stored changes."""

from __future__ import annotations

import dataclasses
from typing import Any, Protocol

import numcodecs
import numpy as np

from ..codecs.sharding import COALESCE_GAP
from ..metadata.dtypes import ml_dtype_name, normalize_fill_value
from ..metadata.normalize import normalize_chunks, normalize_shape
from ..metadata.v2 import ArrayMetadataV2
from ..metadata.v3 import ArrayMetadataV3

__all__ = ["ArrayConfig", "ViewMethods", "Viewable"]


@dataclasses.dataclass(frozen=True)
class ArrayConfig:
    """An array's runtime settings, as zarr-python 3 names them: the memory ``order`` of what
    it reads, whether all-fill chunks are written, that missing chunks read as the fill value,
    and how far apart the chunks of a shard may be to be fetched together (fixed here)."""

    order: str = "C"
    write_empty_chunks: bool = False
    read_missing_chunks: bool = True
    sharding_coalesce_max_gap_bytes: int = COALESCE_GAP


class Viewable(Protocol):
    """What making another handle on the data needs of an array."""

    _meta: ArrayMetadataV2 | ArrayMetadataV3
    _runtime_order: str | None
    _write_empty_chunks: bool

    @property
    def order(self) -> str: ...

    @property
    def dtype(self) -> np.dtype: ...

    def _reopen(self, meta: Any = None, *, read_only: bool | None = None, synchronizer: Any = None,
                order: str | None = None, write_empty_chunks: bool | None = None) -> Any: ...


class ViewMethods:
    """The methods of :class:`~zarrkit.core.array.Array` that give other handles on its data."""

    def view(
        self: Viewable,
        shape: Any = None,
        chunks: Any = None,
        dtype: Any = None,
        fill_value: Any = None,
        filters: Any = None,
        read_only: bool | None = None,
        synchronizer: Any = None,
    ) -> Any:
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

    def astype(self: Viewable, dtype: Any) -> Any:
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
        return ViewMethods.view(self, filters=filters, dtype=dtype, read_only=True)

    @property
    def config(self: Viewable) -> ArrayConfig:
        """The array's runtime settings (zarr-python 3's ``ArrayConfig``)."""
        return ArrayConfig(order=self._runtime_order or self.order, write_empty_chunks=self._write_empty_chunks)

    def with_config(self: Viewable, config: Any) -> Any:
        """The same array with other runtime settings; nothing stored changes.

        Parameters
        ----------
        config : ArrayConfig or dict
            ``order`` (memory layout of what reads return) and ``write_empty_chunks``;
            ``read_missing_chunks`` and ``sharding_coalesce_max_gap_bytes`` only at their
            fixed values.

        Returns
        -------
        Array
            A new array object on the same data.

        Raises
        ------
        TypeError
            An unknown setting.
        ValueError
            A fixed setting with another value, or an ``order`` other than 'C' and 'F'.

        Examples
        --------
        >>> import zarrkit
        >>> z = zarrkit.zeros((2, 2), chunks=1)
        >>> z.with_config({'order': 'F'})[:].flags.f_contiguous
        True
        """
        settings = dataclasses.asdict(config) if isinstance(config, ArrayConfig) else dict(config)
        unknown = set(settings) - {f.name for f in dataclasses.fields(ArrayConfig)}
        if unknown:
            raise TypeError(f"with_config: unknown setting(s) {sorted(unknown)}")
        fixed = ArrayConfig()
        for name in ("read_missing_chunks", "sharding_coalesce_max_gap_bytes"):
            if settings.pop(name, getattr(fixed, name)) != getattr(fixed, name):
                raise ValueError(f"with_config: {name} is fixed at {getattr(fixed, name)!r} here")
        order = settings.pop("order", None)
        if order not in (None, "C", "F"):
            raise ValueError(f"order must be 'C' or 'F', got {order!r}")
        write_empty_chunks = settings.pop("write_empty_chunks", None)
        return self._reopen(
            order=order or self._runtime_order,
            write_empty_chunks=self._write_empty_chunks if write_empty_chunks is None else write_empty_chunks,
        )
