"""Without zarr-indexing (Python 3.11, or the ``views`` extra not installed) zarrkit imports and
works, and ``Array.lazy`` says what to install."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import sys
sys.modules["zarr_indexing"] = None  # as if it were not installed
import numpy as np
import zarrkit
z = zarrkit.array(np.arange(6), chunks=4)
assert z[1:3].tolist() == [1, 2]
try:
    z.lazy
except ImportError as err:
    print(err)
else:
    raise SystemExit("no ImportError")
"""


def test_lazy_without_zarr_indexing_names_the_extra():
    done = subprocess.run([sys.executable, "-c", SCRIPT], check=False, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert "pip install 'zarrkit[views]'" in done.stdout
    assert "zarr-indexing" in done.stdout
