"""zarrkit's xarray engine and writers against xarray + zarr-python (``engine="zarr"``,
``Dataset.to_zarr``, ``DataTree.to_zarr``), bit for bit:

* the chunk objects written are byte-identical and the metadata documents agree (the same
  JSON, up to defaults zarr-python spells out: Blosc's ``blocksize: 0``, v2's
  ``dimension_separator: "."``, consolidated metadata nested inside consolidated metadata);
* what each library wrote opens identically (values, attributes, encoding) with either engine;
* ``storage_options`` (fsspec ``file://`` URLs; an S3 bucket on a moto server), ``chunk_store``,
  ``synchronizer`` and ``align_chunks`` of ``to_zarr`` / ``open_dataset``;
* DataTrees: ``xr.open_datatree``/``xr.open_groups`` with ``engine="zarrkit"`` and
  :func:`zarrkit.xarray.datatree_to_zarr`.
"""

from __future__ import annotations

import json
import os
import warnings

import numpy as np
import pandas as pd
import pytest

xr = pytest.importorskip("xarray")
zarr = pytest.importorskip("zarr")
pytest.importorskip("dask.array")
numcodecs = pytest.importorskip("numcodecs")

from test_xarray import FORMATS, META_NAMES, pytestmark  # noqa: F401 - the same warnings filters

import zarrkit
import zarrkit.xarray as zx
from zarrkit.storage import DirectoryStore

ENCODING_KEYS = ("dtype", "units", "calendar", "scale_factor", "add_offset", "_FillValue", "chunks",
                 "preferred_chunks", "fill_value", "shards")


def make_dataset(seed: int = 0) -> xr.Dataset:
    rng = np.random.default_rng(seed)
    temp = rng.random((12, 10)).astype("f4")
    temp[0, 0] = np.nan
    ds = xr.Dataset(
        {
            "temp": (("time", "x"), temp, {"units": "K", "long_name": "temperature"}),
            "packed": (("time", "x"), np.round(rng.random((12, 10)) * 10, 2)),
            "counts": (("x",), np.arange(10, dtype="i2")),
        },
        coords={"time": pd.date_range("2000-01-01", periods=12), "x": np.arange(10) * 1.5},
        attrs={"title": "parity", "version": 2},
    )
    ds["packed"].encoding = {"dtype": "i2", "scale_factor": 0.01, "add_offset": 1.0, "_FillValue": -999}
    ds["time"].encoding = {"units": "days since 2000-01-01", "dtype": "i8"}
    return ds


def make_tree() -> xr.DataTree:
    ds = make_dataset()
    child = xr.Dataset({"u": (("x",), np.linspace(0, 1, 10))}, attrs={"level": "child"})
    deep = xr.Dataset({"s": (("y",), np.array(["a", "bb", "ccc"])), "y": ("y", [3, 2, 1])},
                      attrs={"level": "deep"})
    return xr.DataTree.from_dict({"/": ds, "/child": child, "/child/deep": deep.chunk({"y": 2}),
                                  "/other": xr.Dataset(attrs={"empty": True})})


# -- comparing stores --------------------------------------------------------------------------
def _normalized(obj, inside_consolidated=False):
    if isinstance(obj, dict):
        if isinstance(obj.get("id"), str):  # a numcodecs codec: its config with defaults spelled out
            return numcodecs.get_codec(dict(obj)).get_config()
        out = {}
        for k, v in obj.items():
            if k == "consolidated_metadata" and inside_consolidated:
                continue  # zarr-python nests (empty) consolidated metadata in child groups
            out[k] = _normalized(v, inside_consolidated or k == "metadata")
        if out.get("zarr_format") == 2 and "shape" in out:
            out.setdefault("dimension_separator", ".")
        return out
    if isinstance(obj, list):
        return [_normalized(v, inside_consolidated) for v in obj]
    return obj


def stored(root: str) -> dict[str, object]:
    """Every object under ``root``: metadata documents normalized, chunks as bytes."""
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            with open(p, "rb") as fh:
                raw = fh.read()
            key = os.path.relpath(p, root).replace(os.sep, "/")
            out[key] = _normalized(json.loads(raw)) if f in META_NAMES else raw
    return out


def assert_same_stores(a: str, b: str) -> None:
    """The same objects under both roots: metadata documents alike, chunks byte for byte --
    but for zstd frames, which zarrkit's zstd build writes with other bytes than
    numcodecs' in places: arrays holding such chunks must read the same, chunk by chunk."""
    sa, sb = stored(a), stored(b)
    assert sorted(sa) == sorted(sb)
    recoded = set()
    for key in sa:
        if sa[key] != sb[key] and key.rpartition("/c/")[0] + "/zarr.json" in sa:
            array = key.rpartition("/c/")[0]
            assert any(c.get("name") == "zstd" for c in _codecs(sa[array + "/zarr.json"])), key
            recoded.add(array)
            continue
        assert sa[key] == sb[key], (key, sa[key], sb[key])
    for array in recoded:  # (read by zarr-python)
        za, zb = (zarr.open_array(os.path.join(root, array), mode="r") for root in (a, b))
        np.testing.assert_array_equal(za[...], zb[...])


def _codecs(doc: dict) -> list[dict]:
    """Every codec of an array's metadata document, inner codecs of shards included."""
    out = []
    for c in doc.get("codecs", []):
        out.append(c)
        out.extend(_codecs(c.get("configuration", {})))
    return out


def assert_same_encoding(a: xr.Dataset, b: xr.Dataset) -> None:
    for name in a.variables:
        ea, eb = a[name].encoding, b[name].encoding
        for key in ENCODING_KEYS:
            assert (key in ea) == (key in eb), (name, key, ea, eb)
            if key in ea:
                va, vb = ea[key], eb[key]
                assert type(va) is type(vb), (name, key, va, vb)
                assert va == vb or (np.ndim(va) == 0 and np.isnan(va) and np.isnan(vb)), (name, key, va, vb)


def assert_same_opened(path_a: str, path_b: str, **kwargs) -> None:
    """What zarr-python wrote at ``path_a`` and zarrkit at ``path_b`` open identically with
    both engines (values, attributes, encoding)."""
    ref = xr.open_dataset(path_a, engine="zarr", **kwargs)
    for path in (path_a, path_b):
        for engine in ("zarr", "zarrkit"):
            got = xr.open_dataset(path, engine=engine, **kwargs)
            xr.testing.assert_identical(ref, got)
            assert_same_encoding(ref, got)


# -- align_chunks, unaligned dask blocks -------------------------------------------------------
@pytest.mark.parametrize(("zarr_format", "sharded"), [(2, False), (3, False), (3, True)])
def test_align_chunks_same_store_as_xarray(tmp_path, zarr_format, sharded):
    ds = make_dataset().chunk({"time": 5, "x": 3})  # cuts chunks of (4, 4) and shards of (8, 8)
    enc = {"chunks": (4, 4), **({"shards": (8, 8)} if sharded else {})}
    encoding = {"temp": enc, "packed": enc}
    ref, zk, zk2 = (str(tmp_path / f"{n}.zarr") for n in ("ref", "zk", "zk2"))
    with pytest.raises(ValueError):  # xarray refuses the blocks unless asked to align them
        ds.to_zarr(str(tmp_path / "no.zarr"), zarr_format=zarr_format, encoding=encoding)
    ds.to_zarr(ref, zarr_format=zarr_format, encoding=encoding, align_chunks=True)
    zx.to_zarr(ds, zk, zarr_format=zarr_format, encoding=encoding, align_chunks=True, safe_chunks=False)
    zx.to_zarr(ds, zk2, zarr_format=zarr_format, encoding=encoding)  # zarrkit aligns by default
    assert_same_stores(ref, zk)
    assert_same_stores(ref, zk2)
    assert_same_opened(ref, zk)
    # a region whose edges cut chunks, from blocks that cut them too
    patch = make_dataset(seed=1).isel(time=slice(3, 10), x=slice(1, 8)).chunk({"time": 2, "x": 5})
    patch = patch.drop_vars(["counts"])
    for path in (ref, zk):
        write = patch.to_zarr if path == ref else lambda p, **kw: zx.to_zarr(patch, p, **kw)
        write(path, region={"time": slice(3, 10), "x": slice(1, 8)}, mode="a", align_chunks=True,
              safe_chunks=False)
    assert_same_stores(ref, zk)
    expected = make_dataset()
    expected["temp"][3:10, 1:8] = patch["temp"].values
    np.testing.assert_array_equal(xr.open_dataset(zk, engine="zarrkit").temp.values, expected.temp.values)


def test_safe_chunks_false_with_synchronizer(tmp_path):
    """``safe_chunks=False`` writes the blocks as they are: right with a synchronizer, which
    the arrays written carry."""
    ds = make_dataset().chunk({"time": 5, "x": 3})
    sync = zarrkit.ThreadSynchronizer()
    grp = zx.to_zarr(ds, str(tmp_path / "s.zarr"), encoding={"temp": {"chunks": (4, 4)}}, safe_chunks=False,
                     synchronizer=sync)
    assert grp.synchronizer is sync and grp["temp"].synchronizer is sync
    ref = str(tmp_path / "ref.zarr")
    ds.to_zarr(ref, encoding={"temp": {"chunks": (4, 4)}}, align_chunks=True)
    assert_same_stores(ref, str(tmp_path / "s.zarr"))


# -- storage_options, chunk_store -------------------------------------------------------------
@pytest.mark.parametrize("zarr_format", FORMATS)
def test_storage_options_file_urls(tmp_path, zarr_format):
    """``file://`` URLs with storage options go through fsspec (zarr-python refuses options
    for them: its own copy is written to the plain path)."""
    ds = make_dataset()
    opts = {"auto_mkdir": True}
    ref, zk_url = str(tmp_path / "ref.zarr"), f"file://{tmp_path}/zk.zarr"
    ds.to_zarr(ref, zarr_format=zarr_format)
    zx.to_zarr(ds, zk_url, storage_options=opts, zarr_format=zarr_format)
    assert_same_stores(ref, str(tmp_path / "zk.zarr"))
    a = xr.open_dataset(ref, engine="zarr")
    for b in (xr.open_dataset(zk_url, engine="zarrkit", storage_options=opts),
              xr.open_dataset(f"file://{ref}", engine="zarrkit", storage_options=opts)):
        xr.testing.assert_identical(a, b)
        assert_same_encoding(a, b)
    with pytest.raises(TypeError, match="storage_options"):
        xr.open_dataset(str(tmp_path / "zk.zarr"), engine="zarrkit", storage_options=opts)


@pytest.mark.parametrize("zarr_format", FORMATS)
@pytest.mark.parametrize("consolidated", [True, False])
def test_chunk_store(tmp_path, zarr_format, consolidated):
    """Chunks in a store of their own: the metadata store holds what xarray writes minus the
    chunks, the chunk store exactly xarray's chunk objects."""
    ds = make_dataset().chunk({"time": 4})
    ref, meta, chunks = (str(tmp_path / n) for n in ("ref.zarr", "meta.zarr", "chunks.zarr"))
    ds.to_zarr(ref, zarr_format=zarr_format, consolidated=consolidated)
    zx.to_zarr(ds, meta, zarr_format=zarr_format, consolidated=consolidated, chunk_store=DirectoryStore(chunks))
    sr = stored(ref)
    assert stored(meta) == {k: v for k, v in sr.items() if k.rsplit("/", 1)[-1] in META_NAMES}
    assert stored(chunks) == {k: v for k, v in sr.items() if k.rsplit("/", 1)[-1] not in META_NAMES}
    a = xr.open_dataset(ref, engine="zarr", consolidated=consolidated)
    b = xr.open_dataset(meta, engine="zarrkit", chunk_store=DirectoryStore(chunks), consolidated=consolidated)
    xr.testing.assert_identical(a, b)
    assert_same_encoding(a, b)
    # appending goes to the chunk store too
    later = make_dataset(seed=2).assign_coords(time=pd.date_range("2000-01-13", periods=12))
    later.to_zarr(ref, append_dim="time", consolidated=consolidated)
    zx.to_zarr(later, meta, append_dim="time", consolidated=consolidated, chunk_store=DirectoryStore(chunks))
    b = xr.open_dataset(meta, engine="zarrkit", chunk_store=DirectoryStore(chunks), consolidated=consolidated)
    xr.testing.assert_identical(xr.open_dataset(ref, engine="zarr", consolidated=consolidated), b)
    # without its chunk store the data is missing: only fill values
    bare = xr.open_dataset(meta, engine="zarrkit", consolidated=consolidated)
    assert np.isnan(bare.temp.values).all()


@pytest.fixture(scope="module")
def s3():
    """(storage options, bucket URL) of a fresh bucket on a moto S3 server on 127.0.0.1."""
    s3fs = pytest.importorskip("s3fs")
    moto_server = pytest.importorskip("moto.server")
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    options = {"key": "testing", "secret": "testing", "anon": False,
               "client_kwargs": {"endpoint_url": f"http://{host}:{port}"}}
    try:
        s3fs.S3FileSystem(**options).mkdir("parity")
        yield options, "s3://parity"
    finally:
        server.stop()


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_storage_options_s3(s3, zarr_format):
    import s3fs

    options, bucket = s3
    ds = make_dataset().chunk({"time": 6})
    ref, zk = f"{bucket}/ref{zarr_format}.zarr", f"{bucket}/zk{zarr_format}.zarr"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds.to_zarr(ref, storage_options=options, zarr_format=zarr_format, mode="w")
    zx.to_zarr(ds, zk, storage_options=options, zarr_format=zarr_format, mode="w")
    fs = s3fs.S3FileSystem(**options)
    fs.invalidate_cache()
    ka = sorted(k[len(ref) - 5:] for k in fs.find(ref[5:]))
    kb = sorted(k[len(zk) - 5:] for k in fs.find(zk[5:]))
    assert ka == kb
    for key in ka:
        if key.rsplit("/", 1)[-1] not in META_NAMES:
            assert fs.cat(ref[5:] + key) == fs.cat(zk[5:] + key), key
    a = xr.open_dataset(ref, engine="zarr", storage_options=options)
    for url in (ref, zk):
        b = xr.open_dataset(url, engine="zarrkit", storage_options=options, chunks={})
        xr.testing.assert_identical(a, b.load())
        assert_same_encoding(a, b)


# -- DataTree ----------------------------------------------------------------------------------
@pytest.mark.parametrize("zarr_format", FORMATS)
@pytest.mark.parametrize("consolidated", [True, False])
def test_datatree_same_store_as_xarray(tmp_path, zarr_format, consolidated):
    dt = make_tree()
    ref, zk = str(tmp_path / "ref.zarr"), str(tmp_path / "zk.zarr")
    encoding = {"/child": {"u": {"chunks": (4,), "dtype": "f4"}}}
    dt.to_zarr(ref, zarr_format=zarr_format, consolidated=consolidated, encoding=encoding)
    root = zx.datatree_to_zarr(dt, zk, zarr_format=zarr_format, consolidated=consolidated, encoding=encoding)
    assert isinstance(root, zarrkit.Group) and sorted(root.group_keys()) == ["child", "other"]
    assert_same_stores(ref, zk)
    want = xr.open_datatree(ref, engine="zarr", consolidated=consolidated)
    for path in (ref, zk):
        for engine in ("zarr", "zarrkit"):
            got = xr.open_datatree(path, engine=engine, consolidated=consolidated)
            xr.testing.assert_identical(want, got)
            for node in want.subtree:
                assert_same_encoding(node.to_dataset(), got[node.path].to_dataset())
    # groups as a dict, from a sub-group
    ga = xr.open_groups(ref, engine="zarr", group="child", consolidated=consolidated)
    gb = xr.open_groups(zk, engine="zarrkit", group="child", consolidated=consolidated)
    assert sorted(ga) == sorted(gb) == [".", "deep"]
    for key in ga:
        xr.testing.assert_identical(ga[key], gb[key])
    xr.testing.assert_identical(xr.open_datatree(zk, engine="zarrkit", group="child/deep", consolidated=consolidated),
                                xr.open_datatree(ref, engine="zarr", group="child/deep", consolidated=consolidated))


def test_datatree_modes_inherited_coords_and_dask(tmp_path):
    dt = make_tree()
    ref, zk = str(tmp_path / "ref.zarr"), str(tmp_path / "zk.zarr")
    dt.to_zarr(ref, write_inherited_coords=True)
    zx.datatree_to_zarr(dt, zk, write_inherited_coords=True)
    assert_same_stores(ref, zk)
    with pytest.raises(zarrkit.errors.ContainsGroupError):
        zx.datatree_to_zarr(dt, zk)  # mode 'w-': the root exists
    with pytest.raises(ValueError, match="unexpected encoding group"):
        zx.datatree_to_zarr(dt, zk, mode="w", encoding={"/nowhere": {}})
    # mode 'w' replaces the hierarchy; compute=False leaves the dask-backed data to compute
    small = xr.DataTree.from_dict({"/": xr.Dataset({"v": ("x", np.arange(6.0))}).chunk({"x": 4}),
                                   "/a": xr.Dataset({"w": ("y", np.arange(3))})})
    pending = zx.datatree_to_zarr(small, zk, mode="w", encoding={"/": {"v": {"chunks": (3,)}}}, compute=False)
    assert np.isnan(zarrkit.open_array(zk, path="v", mode="r")[:]).all()
    pending.compute()
    small.to_zarr(ref, mode="w", encoding={"/": {"v": {"chunks": (3,)}}}, align_chunks=True)
    assert_same_stores(ref, zk)
    xr.testing.assert_identical(xr.open_datatree(zk, engine="zarrkit"), small.compute())
