"""Writers without locks on every store with conditional writes: 4 processes x 2 threads
(8 threads of this process for the memory stores), no synchronizer, each process opening the
store itself, as another machine would.  Each workload counts what a lost update would show:

* unaligned pieces straddling chunks (v2, v3) and shards (partial shard writes): lost cells;
* appends of tagged runs of rows, an attribute set after each: rows lost, duplicated or
  split, attributes lost;
* same-name creations with ``overwrite=False``: names reported created by two writers, names
  created by none, names whose content is not their reported creator's;
* one writer rewriting a sharded array (all 1, all 2 in turn) while the others read it whole:
  reads in which a shard mixes two versions;
* resizes racing appends: every appended row there exactly once, the rest fill, the shape
  the stored one.

Every count must be 0; the assertion messages give them all.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from _workers import append_tag, expected_pieces, run_lengths
from _stores import KINDS
from conftest import PROCESSES, THREADS, run_workload, store_of

import zarrkit

pytestmark = pytest.mark.slow

WRITERS = PROCESSES * THREADS
SHAPE, BLOCK = [36, 40], [3, 5]  # 96 blocks over chunks of (7, 8) or shards of (12, 8)
#: object storage (one request at a time on the moto server) gets smaller workloads
SLOW = {"obstore-s3", "fsspec-s3"}
#: the stores of the torn-read and resize workloads: S3 through s3fs is left to the torn-read
#: test of tests/stores/test_object_conditional.py (its requests take seconds each here)
NOT_THROUGH_S3FS = [k for k in KINDS if k != "fsspec-s3"]


def _sizes(spec: dict) -> dict:
    if spec["kind"] == "fsspec-s3":  # s3fs: several requests per conditional write
        return {"shape": [12, 40], "rounds": 2, "names": 6}
    if spec["kind"] in SLOW:
        return {"shape": [18, 40], "rounds": 3, "names": 6}
    return {"shape": SHAPE, "rounds": 4, "names": 10}


def _no_errors(out: dict) -> None:
    assert not out["errors"], f"writers raised: {out['errors'][:4]}"


@pytest.mark.parametrize("layout", ["v2", "v3", "sharded"])
def test_unaligned_pieces_lose_no_cell(spec, tmp_path, layout):
    store = store_of(spec)
    shape = _sizes(spec)["shape"]
    kw = ({"chunks": (4, 4), "shards": (12, 8)} if layout == "sharded" else {"chunks": (7, 8)})
    zarrkit.create_array(store, name="a", shape=shape, dtype="i4", fill_value=0,
                         zarr_format=2 if layout == "v2" else 3, **kw)
    out = run_workload(spec, "pieces", {"path": "a", "shape": shape, "block": BLOCK}, tmp_path)
    got = zarrkit.open_array(store_of(spec), path="a", mode="r")[...]
    want = expected_pieces(shape)
    lost = int((got != want).sum())
    assert lost == 0 and not out["errors"], (
        f"{lost} of {got.size} cells lost ({int((got == 0).sum())} left at the fill value); "
        f"errors: {out['errors'][:4]}")


def _rows_report(got: np.ndarray, tags: list[int]) -> dict[str, int]:
    """Lost, duplicated and foreign values of appended runs, runs not contiguous, holes."""
    expected = {t * 4 + j for t in tags for j in range(run_lengths(t))}
    seen = Counter(int(v) for v in got if v >= 0)
    split = 0
    where = {int(v): i for i, v in enumerate(got) if v >= 0}
    for t in tags:
        pos = [where.get(t * 4 + j) for j in range(run_lengths(t))]
        if None not in pos and pos != list(range(pos[0], pos[0] + len(pos))):
            split += 1
    return {"lost": len(expected - set(seen)), "duplicated": sum(c - 1 for c in seen.values() if c > 1),
            "foreign": len(set(seen) - expected), "split": split,
            "fill": int((got < 0).sum()), "expected": len(expected)}


@pytest.mark.parametrize("layout", ["v2", "sharded"])
def test_appends_lose_no_row_and_no_attribute(spec, tmp_path, layout):
    store = store_of(spec)
    rounds = _sizes(spec)["rounds"]
    zarrkit.create_array(store, name="a", shape=(0,), chunks=(5,), dtype="i4", fill_value=-1,
                         shards=(10,) if layout == "sharded" else None,
                         zarr_format=2 if layout == "v2" else 3)
    out = run_workload(spec, "appends", {"path": "a", "rounds": rounds}, tmp_path)
    z = zarrkit.open_array(store_of(spec), path="a", mode="r")
    tags = [append_tag(g, k) for g in range(WRITERS) for k in range(rounds)]
    report = _rows_report(z[...], tags)
    attrs = z.attrs.asdict()
    lost_attrs = sum(attrs.get(f"a{append_tag(g, k)}") != k for g in range(WRITERS) for k in range(rounds))
    assert (report["lost"], report["duplicated"], report["foreign"], report["split"],
            report["fill"], lost_attrs, out["errors"]) == (0, 0, 0, 0, 0, 0, []), (
        f"rows {report}, {lost_attrs} of {len(tags)} attributes lost, shape {z.shape}; "
        f"errors: {out['errors'][:4]}")


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_same_name_creations_make_each_name_once(spec, tmp_path, zarr_format):
    store = store_of(spec)
    names = _sizes(spec)["names"]
    zarrkit.group(store, zarr_format=zarr_format)
    out = run_workload(spec, "creations", {"names": names}, tmp_path)
    owners: dict[int, list[int]] = {}
    for g, made in out["made"].items():
        for k in made:
            owners.setdefault(k, []).append(int(g))
    twice = {k: v for k, v in owners.items() if len(v) > 1}
    none = [k for k in range(names) if k not in owners]
    root = zarrkit.open_group(store_of(spec), mode="r")
    wrong = []
    for k, (g, *_) in owners.items():
        node = root[f"n{k}"]
        if k % 2 == 0:
            ok = isinstance(node, zarrkit.Array) and (node[...] == g).all()
        else:
            ok = isinstance(node, zarrkit.Group) and node.attrs.asdict() == {"by": g}
        if not ok:
            wrong.append(k)
    assert (twice, none, wrong, out["errors"]) == ({}, [], [], []), (
        f"{len(twice)} names created twice {twice}, {len(none)} by nobody {none}, "
        f"{len(wrong)} not their creator's {wrong}; errors: {out['errors'][:4]}")


@pytest.mark.parametrize("kind", NOT_THROUGH_S3FS)
def test_sharded_reads_are_never_torn(spec, tmp_path):
    store = store_of(spec)
    z = zarrkit.create_array(store, name="a", shape=(64,), chunks=(8,), shards=(32,), dtype="i4",
                             fill_value=0)
    z[...] = 1
    out = run_workload(spec, "torn", {"path": "a", "shard": 32}, tmp_path)
    _no_errors(out)
    assert out["rewrites"] > 2 and out["reads"] > 2, out
    assert out["torn"] == 0, (
        f"{out['torn']} of {out['reads']} reads saw a shard mixing versions "
        f"(e.g. values {out['examples'][:3]}) during {out['rewrites']} rewrites")


@pytest.mark.parametrize("kind", NOT_THROUGH_S3FS)
def test_resizes_racing_appends_keep_every_row(spec, tmp_path):
    store = store_of(spec)
    rounds, resizes, grow = _sizes(spec)["rounds"], 3, 64
    zarrkit.create_array(store, name="a", shape=(0,), chunks=(8,), dtype="i4", fill_value=-1)
    out = run_workload(spec, "resizes", {"path": "a", "rounds": rounds, "resizes": resizes,
                                         "grow": grow}, tmp_path)
    z = zarrkit.open_array(store_of(spec), path="a", mode="r")
    got = z[...]
    tags = [append_tag(g, k) for g in range(1, WRITERS) for k in range(rounds)]
    report = _rows_report(got, tags)
    consistent = got.shape == z.shape and z.shape[0] == report["expected"] + report["fill"]
    assert (report["lost"], report["duplicated"], report["foreign"], report["split"],
            out["errors"]) == (0, 0, 0, 0, []) and consistent and out["resizes"] == resizes, (
        f"rows {report}, shape {z.shape}, {out['resizes']} resizes; errors: {out['errors'][:4]}")
