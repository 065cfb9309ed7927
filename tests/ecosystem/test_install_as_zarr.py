"""``zarrkit.install_as_zarr()``: afterwards xarray's and dask's own Zarr entry points run on
zarrkit, unchanged, in a process where zarr-python (installed here) is never imported.

Each check runs in a fresh interpreter, so that this process's ``sys.modules`` stays as it is;
the checks are combined into few programs, each run once.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import zarrkit

pytest.importorskip("xarray")
pytest.importorskip("dask.array")

pytestmark = pytest.mark.slow

SRC = str(Path(zarrkit.__file__).resolve().parents[1])


def run(code: str, *, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": SRC}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, env=env, check=False,
                          capture_output=True, text=True, timeout=120)


ECOSYSTEM = """
    import os, sys, warnings
    import zarrkit
    zarrkit.install_as_zarr()
    zarrkit.install_as_zarr()  # a second call does nothing

    import numpy as np, xarray as xr, dask.array as da
    from packaging.version import Version
    warnings.filterwarnings("ignore", ".*not part in the Zarr format 3 specification")

    ds = xr.Dataset({"t": (("x", "y"), np.arange(12.0).reshape(3, 4), {"units": "K"})},
                    coords={"x": [10, 20, 30]})
    for fmt in (2, 3):
        p = f"ds{fmt}.zarr"
        ds.chunk({"x": 2}).to_zarr(p, zarr_format=fmt, mode="w")
        assert zarrkit.open_group(p).metadata.zarr_format == fmt
        xr.testing.assert_identical(xr.open_zarr(p).load(), ds)
        xr.testing.assert_identical(xr.open_dataset(p, engine="zarr").load(), ds)
        # dask: to_zarr on a path (its zarr-3 branch), from_zarr of a path and of a group member
        a = f"a{fmt}.zarr"
        x = da.arange(20, chunks=5)
        da.to_zarr(x, a, zarr_format=fmt)
        assert zarrkit.open_array(a).metadata.zarr_format == fmt
        np.testing.assert_array_equal(da.from_zarr(a).compute(), np.arange(20))
        np.testing.assert_array_equal(da.from_zarr(p, component="t").compute(), ds.t.values)

    import zarr, zarr.storage, zarr.errors, zarr.abc.store, zarr.core.array, zarr.codecs
    from zarr.abc.store import Store
    assert Version(zarr.__version__).major == 3 and zarr.__version__.endswith("+zarrkit." + zarrkit.__version__)
    assert zarr.Array is zarrkit.Array and zarr.storage is zarrkit.storage and zarr.errors is zarrkit.errors
    assert issubclass(zarr.storage.LocalStore, Store)
    try:
        import zarr.no_such_module
    except ModuleNotFoundError:
        pass
    else:
        raise AssertionError("a module zarrkit lacks imported")
    try:
        zarr.core.array.NoSuchName
    except AttributeError as e:
        assert "NoSuchName" in str(e)
    here = os.path.dirname(zarrkit.__file__)
    for name, module in list(sys.modules.items()):
        if name == "zarr" or name.startswith("zarr."):
            origin = getattr(module, "__file__", None)
            assert origin is None or origin.startswith(here), (name, origin)
    assert not any("site-packages/zarr/" in (getattr(m, "__file__", None) or "") for m in list(sys.modules.values()))
    print("ok", zarr.__version__)
"""


def test_xarray_and_dask_run_on_zarrkit_as_zarr(tmp_path: Path) -> None:
    done = run(ECOSYSTEM, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ok 3.4.2+zarrkit.")


def test_refused_after_zarr_python_and_run_unchanged_program(tmp_path: Path) -> None:
    refused = run("""
        import zarr
        import zarrkit
        try:
            zarrkit.install_as_zarr()
        except ImportError as e:
            assert isinstance(e, zarrkit.errors.ZarrAlreadyImportedError)
            assert zarr.__file__ in str(e) and "before anything imports zarr" in str(e), e
            print("refused")
    """, cwd=tmp_path)
    assert refused.stdout == "refused\n", refused.stderr
    # a program that knows nothing of zarrkit, run with zarrkit as zarr
    (tmp_path / "prog.py").write_text(textwrap.dedent("""
        import sys
        import zarr
        z = zarr.zeros((4,), chunks=(2,), store="z.zarr", zarr_format=3)
        z[:] = 1
        print(type(z) is __import__("zarrkit").Array, zarr.__version__.split("+")[0], sys.argv[1:])
    """))
    env = {**os.environ, "PYTHONPATH": SRC}
    ran = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-m", "zarrkit.as_zarr", "prog.py", "a", "b"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split() == ["True", "3.4.2", "['a',", "'b']"]
