"""An xarray append (``to_zarr(..., append_dim=...)``) that a writer killed at any point leaves
as the dataset before it or after it, and that running it again finishes.

A dataset's variables along ``append_dim`` are separate arrays: their shapes cannot change
together.  So an append is made in this order:

1. a record of the append (:data:`RECORD`, a JSON document next to the group's metadata: the
   dimension, each array's shape before and after, a digest of the rows) is stored, ``"rows"``;
2. every variable's new rows are written beyond its shape, out of sight;
3. the record turns ``"shapes"``: from here on the append is finished by whoever finds it;
4. each array's shape grows over its rows (nothing deleted);
5. the consolidated metadata is written (when the dataset keeps it);
6. the record is removed: the append is done.

A transactional store (Icechunk) needs none of it, and keeps no record: a session's writes
show together when it is committed.

While a record is stored, the zarrkit reader shows each array it names with its shape before
the append (:func:`shapes_before`): a dataset whose variables disagree along ``append_dim``
mid-append opens as the dataset before it.  A later append to the group finds the record
(:func:`recover`): in ``"rows"`` nothing showed, and the rows are written again; in
``"shapes"`` the shapes are grown to the record's (and consolidated), and when the rows given
are the ones recorded -- the same append run again -- that is all it does.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np

from ..core.array import Array
from ..core.group import Group
from ..errors import ChunkDecodeError, MetadataError
from ..metadata.common import parse_shape_field
from ..metadata.consolidated import consolidate, load_consolidated
from ..metadata.json_text import load_json
from ..storage.base import is_node_name, join_path
from ..storage.coerce import open_store

__all__ = ["RECORD", "MAX_RECORD_BYTES", "PHASES", "Growth", "parse_record", "recover",
           "rows_digest", "shapes_before"]

#: the key (in the group) of the record of an append in progress
RECORD = ".zarrkit-append.json"


def _record_key(grp: Group) -> str:
    return join_path(grp.path, RECORD)


#: the most bytes a record may hold: it lists each growing array's name and two shapes, a few
#: hundred bytes an array at most; anything longer is not read
MAX_RECORD_BYTES = 16 << 20
#: the phases of an append a record tells (see the module's docstring)
PHASES = ("rows", "shapes")


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 200 else f"{text[:200]}..."


def _read_record(grp: Group) -> dict[str, Any] | None:
    """The record of an append in progress in ``grp`` (None when there is none), checked whole
    before anything is done with it: MetadataError naming its key and the field otherwise."""
    store = grp._store
    if getattr(store, "transactional", False):
        return None  # (never stored there: see Growth)
    key = _record_key(grp)
    try:
        raw = store.get_upto(key, MAX_RECORD_BYTES)
    except ChunkDecodeError:  # (a value longer than the limit: not read whole)
        raise MetadataError(f"expected the record of an xarray append of at most "
                            f"{MAX_RECORD_BYTES} bytes, got more", key) from None
    if raw is None:
        return None
    return parse_record(load_json(raw, key), key)


def parse_record(doc: Any, key: str) -> dict[str, Any]:
    """``doc`` (a record as loaded from JSON) checked to be the record of an append: every
    field present with its type, each array a member of the record's group (a plain name)
    with its shapes before and after (as the metadata parser reads shapes, of one rank, none
    shorter after than before); MetadataError naming ``key`` and the field otherwise."""
    def bad(field: str, expected: str, got: Any) -> MetadataError:
        return MetadataError(f"not the record of an xarray append: {field}: expected {expected}, "
                             f"got {_shown(got)}", key)

    if not isinstance(doc, dict):
        raise bad("the record", "a JSON object", doc)
    for field in ("phase", "digest", "append_dim", "arrays"):
        if field not in doc:
            raise bad(field, "the field (it is missing)", sorted(doc))
    if doc["phase"] not in PHASES:
        raise bad("phase", f"one of {list(PHASES)}", doc["phase"])
    for field in ("digest", "append_dim"):
        if not isinstance(doc[field], str):
            raise bad(field, "a string", doc[field])
    arrays = doc["arrays"]
    if not isinstance(arrays, dict):
        raise bad("arrays", "an object of array names to [shape before, shape after]", arrays)
    for name, shapes in arrays.items():
        field = f"arrays[{name!r}]"
        if not is_node_name(name):
            raise bad("arrays", "names of arrays in the record's group (no '/', '.' or '..')", name)
        if not isinstance(shapes, list) or len(shapes) != 2:
            raise bad(field, "[shape before, shape after]", shapes)
        old, new = (parse_shape_field(s, key, f"{field}[{i}]") for i, s in enumerate(shapes))
        if len(old) != len(new):
            raise bad(field, "two shapes of one number of dimensions", shapes)
        if any(n < o for o, n in zip(old, new)):
            raise bad(field, "a shape after no shorter than before along any dimension", shapes)
    return doc


def shapes_before(grp: Group) -> dict[str, tuple[int, ...]]:
    """The shapes before an append in progress (interrupted, or under way) of the arrays of
    ``grp`` it grows, by name; empty when none is recorded."""
    record = _read_record(grp)
    if record is None:
        return {}
    return {name: tuple(old) for name, (old, _new) in record["arrays"].items()}


def rows_digest(rows: dict[str, Any]) -> str:
    """A digest of the rows an append writes (``name -> numpy array``; dask arrays count by
    their name, dtype and shape only), telling a run again of the same append."""
    h = hashlib.sha256()
    for name in sorted(rows):
        v = rows[name]
        h.update(f"{name}|{getattr(v, 'dtype', '')}|{getattr(v, 'shape', '')}|".encode())
        if isinstance(v, np.ndarray):
            data = np.ascontiguousarray(v)
            h.update(repr(data.tolist()).encode() if data.dtype.hasobject else data.tobytes())
    return h.hexdigest()


class Growth:
    """The shape changes of one append to ``grp``: ``arrays`` maps a name to ``(array, shape
    before, shape after)``."""

    def __init__(self, grp: Group, append_dim: Any, arrays: dict[str, tuple[Array, tuple[int, ...], tuple[int, ...]]],
                 digest: str, phase: str = "rows"):
        self.grp = grp
        self.append_dim = append_dim
        self.arrays = arrays
        self.digest = digest
        self.phase = phase
        # a transactional store (Icechunk) shows a session's writes together, at its commit,
        # and keeps no key but Zarr's: no record there
        self._transactional = bool(getattr(grp.store, "transactional", False))

    def _store_record(self, phase: str) -> None:
        if self._transactional:
            return
        doc = {
            "append_dim": str(self.append_dim),
            "phase": phase,
            "digest": self.digest,
            "arrays": {name: [list(old), list(new)] for name, (_, old, new) in self.arrays.items()},
        }
        self.grp.store.set(_record_key(self.grp), json.dumps(doc, sort_keys=True).encode())
        self.phase = phase

    def begin(self) -> None:
        """Record the append before its first row is written."""
        self._store_record("rows")

    def commit(self) -> None:
        """Once every row is written: the record says so, then each shape grows over its rows."""
        if self.phase != "shapes":
            self._store_record("shapes")
        for arr, _old, new in self.arrays.values():
            arr._refresh_metadata()
            if tuple(arr.shape) != tuple(new):
                # nothing deleted: the rows written beyond the shape are what it grows over
                arr.resize(new, delete_outside_chunks=False)

    def finish(self) -> None:
        """The append is done (after the consolidated metadata is written)."""
        if not self._transactional:
            self.grp.store.delete(_record_key(self.grp))


def recover(grp: Group, append_dim: Any, digest: str) -> Growth | None:
    """Finish or undo an append to ``grp`` left by a writer that died, before another append
    to it: the recorded append when it is the same one (``digest``) and only its ending is left
    to do (see :meth:`Growth.commit` and :meth:`Growth.finish`), else None."""
    key = _record_key(grp)
    record = _read_record(grp)
    if record is None:
        return None
    if record["phase"] == "rows":
        # no shape changed: the rows out of sight are written again by this append
        grp.store.delete(key)
        return None
    # every array checked before any shape changes
    arrays: dict[str, tuple[Array, tuple[int, ...], tuple[int, ...]]] = {}
    for name, (old, new) in record["arrays"].items():
        old, new = tuple(old), tuple(new)
        try:
            node = grp[name]  # (a plain name: a member of the group, see parse_record)
        except KeyError:
            node = None
        if not isinstance(node, Array):
            raise MetadataError(f"arrays: expected an array {name!r} in the group, got "
                                f"{'nothing' if node is None else type(node).__name__}", key)
        if tuple(node.shape) not in (old, new):
            raise MetadataError(
                f"arrays[{name!r}]: expected the array's shape to be the shape before {old} or "
                f"after {new} the append, got {tuple(node.shape)} (the record is not of this "
                "dataset's last append: remove it to append again)", key
            )
        arrays[name] = (node, old, new)
    growth = Growth(grp, record["append_dim"], arrays, record["digest"], phase="shapes")
    growth.commit()
    if record["digest"] == digest and str(record["append_dim"]) == str(append_dim):
        return growth  # the same append again: only its ending is left
    store = open_store(grp.store)
    if load_consolidated(store, "") is not None:
        consolidate(store, "")
    growth.finish()
    return None
