"""User attributes of an array or group, stored as JSON beside the node's metadata."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, MutableMapping
from typing import Any

from ..errors import ReadOnlyError
from ..metadata import io
from ..storage.base import Store


class Attributes(MutableMapping):
    """A dict-like view of a node's attributes; every change is written through at once.

    Examples
    --------
    >>> import zarrkit
    >>> z = zarrkit.zeros(10)
    >>> z.attrs['units'] = 'm'
    >>> dict(z.attrs)
    {'units': 'm'}
    """

    def __init__(
        self,
        store: Store,
        path: str,
        zarr_format: int = 2,
        read_only: bool = False,
        cache: bool = True,
        synchronizer: Any = None,
    ):
        self.store = store
        self.path = path
        self.zarr_format = zarr_format
        self.read_only = read_only
        self.cache = cache
        self.synchronizer = synchronizer
        self.key = io.attributes_key(path, zarr_format)
        self._cached: dict[str, Any] | None = None

    def _load(self) -> dict[str, Any]:
        if self.cache and self._cached is not None:
            return self._cached
        d = io.read_attributes(self.store, self.path, self.zarr_format)
        if self.cache:
            self._cached = d
        return d

    def _lock(self):
        if self.synchronizer is None:
            return contextlib.nullcontext()
        return self.synchronizer[self.key]

    def _write(self, d: dict[str, Any]) -> None:
        io.write_attributes(self.store, self.path, d, self.zarr_format)
        self._cached = d if self.cache else None

    def _check(self) -> None:
        if self.read_only:
            raise ReadOnlyError(f"attributes at {self.key!r} are read-only")

    def _modify(self, fn) -> None:
        self._check()
        with self._lock():
            d = dict(io.read_attributes(self.store, self.path, self.zarr_format))
            fn(d)
            self._write(d)

    def asdict(self) -> dict[str, Any]:
        """A copy of the attributes as a plain dict."""
        return dict(self._load())

    def refresh(self) -> None:
        """Drop the cached copy so the next access reads the store."""
        self._cached = None

    def put(self, d: dict[str, Any]) -> None:
        """Replace all attributes with ``d`` in one write."""
        self._check()
        with self._lock():
            self._write(dict(d))

    def update(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        """Update several attributes in one write."""
        new = dict(*args, **kwargs)
        self._modify(lambda d: d.update(new))

    def __getitem__(self, key: str) -> Any:
        return self._load()[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self._modify(lambda d: d.__setitem__(key, value))

    def __delitem__(self, key: str) -> None:
        def delete(d: dict[str, Any]) -> None:
            del d[key]

        self._modify(delete)

    def __iter__(self) -> Iterator[str]:
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())

    def __contains__(self, key: object) -> bool:
        return key in self._load()

    def __repr__(self) -> str:
        return f"Attributes({self._load()!r})"

    def _ipython_key_completions_(self) -> list[str]:
        return sorted(self._load())
