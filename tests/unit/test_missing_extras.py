"""An optional dependency that is not installed is reported as a ``ModuleNotFoundError``
naming the extra that installs it, in one form: ``pip install 'zarrkit[EXTRA]'``.  Each case
runs in a child interpreter where the package cannot be imported (``sys.modules[name] =
None``), as it is where the extra is not installed."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent("""
    import json, sys
    for name in sys.argv[1].split(","):
        sys.modules[name] = None  # importing it raises ModuleNotFoundError
    import zarrkit
    from zarrkit.errors import MissingExtraError
    try:
        exec(sys.argv[2])
    except ImportError as exc:
        print(json.dumps({"type": type(exc).__name__, "message": str(exc),
                          "not found": isinstance(exc, ModuleNotFoundError),
                          "extra error": isinstance(exc, MissingExtraError)}))
    else:
        print(json.dumps({"type": None}))
""")

CASES = {
    "import zarrkit.xarray": ("xarray", "import zarrkit.xarray", "zarrkit.xarray", "xarray"),
    "zarrkit.dask.from_zarr": ("dask,dask.array", "import zarrkit.dask; zarrkit.dask.from_zarr(zarrkit.zeros(3))",
                               "zarrkit.dask.from_zarr", "dask"),
    "zarrkit.dask.to_dask": ("dask,dask.array", "import zarrkit.dask; zarrkit.dask.to_dask(zarrkit.zeros(3))",
                             "zarrkit.dask.to_dask", "dask"),
    "RedisStore": ("redis", "zarrkit.RedisStore()", "RedisStore", "redis"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_missing_extra_names_the_extra(case):
    blocked, code, what, extra = CASES[case]
    proc = subprocess.run([sys.executable, "-c", CHILD, blocked, code], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-800:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["type"] == "MissingExtraError" and got["not found"] and got["extra error"], got
    assert got["message"].startswith(f"{what} needs the '{blocked.split(',')[0]}' package: "
                                     f"pip install 'zarrkit[{extra}]'"), got


def test_every_install_hint_has_the_one_form():
    from zarrkit.storage.extras import install_hint, missing_extra

    assert install_hint("ml") == "pip install 'zarrkit[ml]'"
    err = missing_extra("LMDBStore", "lmdb", "lmdb")
    assert isinstance(err, ModuleNotFoundError) and err.name == "lmdb"
    assert str(err) == "LMDBStore needs the 'lmdb' package: pip install 'zarrkit[lmdb]' (or pip install lmdb)"
