"""zarr-python 3's names for what an array does, beside zarr-python 2's: ``info_complete``,
``update_attributes``, ``serializer``, ``read_chunk_sizes``/``write_chunk_sizes``, ``config``
and ``with_config`` (the array's runtime settings)."""

from __future__ import annotations

import dataclasses
from typing import Any

from ..codecs.shard_store import COALESCE_GAP
from .info import InfoReporter, array_info_items_zarr3

__all__ = ["Zarr3ArrayMethods", "ArrayConfig"]


@dataclasses.dataclass(frozen=True)
class ArrayConfig:
    """An array's runtime settings, as zarr-python 3 names them: the memory ``order`` of what
    it reads, whether all-fill chunks are written, whether missing chunks read as the fill
    value, and how the chunks of a shard are fetched together (ranges at most
    ``sharding_coalesce_max_gap_bytes`` apart)."""

    order: str = "C"
    write_empty_chunks: bool = False
    read_missing_chunks: bool = True
    sharding_coalesce_max_gap_bytes: int = COALESCE_GAP
    sharding_coalesce_max_bytes: int = 16 * 1024 * 1024


class Zarr3ArrayMethods:
    """Mixed into :class:`~zarrkit.core.array.Array`."""

    _meta: Any
    _attrs: Any
    _write_empty_chunks: bool

    def info_complete(self) -> InfoReporter:
        """:attr:`info` with the stored sizes and chunk counts (zarr-python 3's name; a v2
        array's :attr:`info` has them already)."""
        if self._meta.zarr_format == 3:
            return InfoReporter(self, lambda: array_info_items_zarr3(self, complete=True), width=18)
        return self.info  # type: ignore[attr-defined]

    def update_attributes(self, new_attributes: dict[str, Any]) -> Any:
        """Merge ``new_attributes`` into the attributes (one write); returns the array."""
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
        return _sizes(self._meta.grid)

    @property
    def write_chunk_sizes(self) -> tuple[tuple[int, ...], ...]:
        """The lengths of what is stored (shards of a sharded array, else chunks) along each
        dimension, the last ones cut at the array's edge."""
        return _sizes(self._meta.storage_grid)

    @property
    def config(self) -> ArrayConfig:
        """The array's runtime settings (zarr-python 3's ``ArrayConfig``)."""
        order = getattr(self, "_runtime_order", None) or self.order  # type: ignore[attr-defined]
        return ArrayConfig(order=order, write_empty_chunks=self._write_empty_chunks)

    def with_config(self, config: Any) -> Any:
        """The same array with other runtime settings (``order``, ``write_empty_chunks``);
        nothing stored changes."""
        settings = dataclasses.asdict(config) if isinstance(config, ArrayConfig) else dict(config)
        unknown = set(settings) - {f.name for f in dataclasses.fields(ArrayConfig)}
        if unknown:
            raise TypeError(f"with_config: unknown setting(s) {sorted(unknown)}")
        return self._with_settings(**settings)  # type: ignore[attr-defined]


def _sizes(grid: Any) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(d.stop(c) - d.start(c) for c in range(d.n)) for d in grid.dims)
