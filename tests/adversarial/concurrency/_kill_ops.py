"""The single operations the kill tests interrupt, with the store they start from and what a
reader sees of it (shared by the driver, which runs them, and the test, which checks them)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

import zarrkit


@dataclasses.dataclass
class KillOp:
    name: str
    setup: Callable[[Any], None]
    op: Callable[[Any], None]
    view: Callable[[Any], dict[str, Any]]
    #: regions of the array written as one value each (an operation writing several values
    #: may leave each old or new)
    regions: list[tuple[slice, ...]] | None = None


def _array_view(store: Any) -> dict[str, Any]:
    z = zarrkit.open_array(store, path="a", mode="r")
    return {"shape": list(z.shape), "data": z[...], "attrs": z.attrs.asdict()}


def _pieces(layout: str) -> KillOp:
    # a write touching parts of 9 chunks (or 4 shards and parts of their inner chunks)
    def setup(store: Any) -> None:
        kw = {"chunks": (2, 2), "shards": (8, 8)} if layout == "sharded" else {"chunks": (5, 5)}
        z = zarrkit.create_array(store, name="a", shape=(16, 16), dtype="i4", fill_value=0,
                                 zarr_format=2 if layout == "v2" else 3, **kw)
        z[...] = np.arange(256, dtype="i4").reshape(16, 16) + 1

    def op(store: Any) -> None:
        zarrkit.open_array(store, path="a", mode="r+")[2:13, 3:14] = -7

    unit = 8 if layout == "sharded" else 5
    regions = [(slice(i, i + unit), slice(j, j + unit)) for i in range(0, 16, unit)
               for j in range(0, 16, unit)]
    return KillOp(f"pieces-{layout}", setup, op, _array_view, regions)


def _append(layout: str) -> KillOp:
    # twelve rows across three chunks (two shards), racing nobody: all or nothing
    def setup(store: Any) -> None:
        z = zarrkit.create_array(store, name="a", shape=(7,), chunks=(5,), dtype="i4", fill_value=-1,
                                 shards=(10,) if layout == "sharded" else None,
                                 zarr_format=2 if layout == "v2" else 3)
        z[...] = np.arange(7)
        z.attrs["n"] = 0

    def op(store: Any) -> None:
        zarrkit.open_array(store, path="a", mode="r+").append(np.arange(100, 112, dtype="i4"))

    return KillOp(f"append-{layout}", setup, op, _array_view)


def _attrs(fmt: int) -> KillOp:
    def setup(store: Any) -> None:
        z = zarrkit.create_array(store, name="a", shape=(4,), chunks=(2,), dtype="i4",
                                 zarr_format=fmt)
        z.attrs.update({"n": 0, "keep": "x"})

    def op(store: Any) -> None:
        zarrkit.open_array(store, path="a", mode="r+").attrs.update({"n": 1, "new": [1, 2]})

    return KillOp(f"attrs-v{fmt}", setup, op, _array_view)


def _creation(fmt: int) -> KillOp:
    # an array and its attributes created with overwrite=False: there whole, or not at all
    # (an array created with ``data=`` is created, then written: a kill between the two
    # leaves it at its fill value, as a creation followed by a write would)
    def setup(store: Any) -> None:
        zarrkit.group(store, zarr_format=fmt)

    def op(store: Any) -> None:
        zarrkit.open_group(store, mode="r+").create_array(
            "n", shape=(9,), dtype="i4", chunks=(4,), fill_value=5, overwrite=False,
            attributes={"by": 1})

    def view(store: Any) -> dict[str, Any]:
        root = zarrkit.open_group(store, mode="r")
        out: dict[str, Any] = {"members": sorted(root.keys())}
        if "n" in root:
            out["n"] = root["n"][...]
            out["n:attrs"] = root["n"].attrs.asdict()
        return out

    return KillOp(f"create-v{fmt}", setup, op, view)


OPS = {k.name: k for k in [_pieces("v2"), _pieces("v3"), _pieces("sharded"), _append("v3"),
                           _append("sharded"), _attrs(3), _attrs(2), _creation(2), _creation(3)]}
