"""zarr-python 3's names for what an array does, beside zarr-python 2's: ``info_complete``,
``update_attributes``, ``serializer``, ``read_chunk_sizes``/``write_chunk_sizes``, ``config``
and ``with_config`` (the array's runtime settings)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from ..codecs.shard_store import COALESCE_GAP
from ..metadata.v2 import ArrayMetadataV2
from ..metadata.v3 import ArrayMetadataV3, edge_lengths
from .attributes import Attributes
from .info import InfoReporter, array_report

__all__ = ["Zarr3ArrayMethods", "ArrayConfig"]


@dataclasses.dataclass(frozen=True)
class ArrayConfig:
    """An array's runtime settings, as zarr-python 3 names them: the memory ``order`` of what
    it reads, whether all-fill chunks are written, that missing chunks read as the fill value,
    and how far apart the chunks of a shard may be to be fetched together (fixed here)."""

    order: str = "C"
    write_empty_chunks: bool = False
    read_missing_chunks: bool = True
    sharding_coalesce_max_gap_bytes: int = COALESCE_GAP


class Zarr3ArrayMethods:
    """Mixed into :class:`~zarrkit.core.array.Array`."""

    _meta: ArrayMetadataV2 | ArrayMetadataV3
    _attrs: Attributes
    _write_empty_chunks: bool

    if TYPE_CHECKING:
        @property
        def info(self) -> InfoReporter: ...  # Array's

    def info_complete(self) -> InfoReporter:
        """:attr:`info` with the stored sizes and chunk counts (zarr-python 3's name; a v2
        array's :attr:`info` has them already).

        Showing the report reads the store: a listing of the array's chunks, and each shard's
        index when it is sharded.
        """
        return array_report(self, stored=True)

    def update_attributes(self, new_attributes: dict[str, Any]) -> Any:
        """Merge ``new_attributes`` into the attributes (one write).

        Parameters
        ----------
        new_attributes : dict
            Attributes to add or replace.

        Returns
        -------
        Array
            This array.
        """
        self._attrs.update(new_attributes)
        return self

    @property
    def serializer(self) -> Any:
        """The array→bytes codec of a v3 array (``None`` for v2, whose dtype says the bytes)."""
        return getattr(self._meta, "serializer", None)

    @property
    def read_chunk_sizes(self) -> tuple[tuple[int, ...], ...]:
        """The lengths of the chunks read by (inner chunks of a sharded array) along each
        dimension, the last ones cut at the array's edge."""
        return edge_lengths(self._meta.grid)

    @property
    def write_chunk_sizes(self) -> tuple[tuple[int, ...], ...]:
        """The lengths of what is stored (shards of a sharded array, else chunks) along each
        dimension, the last ones cut at the array's edge."""
        return edge_lengths(self._meta.storage_grid)

    @property
    def config(self) -> ArrayConfig:
        """The array's runtime settings (zarr-python 3's ``ArrayConfig``)."""
        order = getattr(self, "_runtime_order", None) or self.order  # type: ignore[attr-defined]
        return ArrayConfig(order=order, write_empty_chunks=self._write_empty_chunks)

    def with_config(self, config: Any) -> Any:
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
        return self._with_settings(**settings)  # type: ignore[attr-defined]
