"""A chunk of -0.0 is not the fill value 0.0 (nor the reverse): with write_empty_chunks=False it
is stored, so reads give back the sign written."""

from __future__ import annotations

import numpy as np
import pytest

import zarrkit


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("dtype", ["f2", "f4", "f8", "c8"])
@pytest.mark.parametrize("fill", [0.0, -0.0])
def test_zero_of_the_other_sign_is_stored(zarr_format, dtype, fill):
    z = zarrkit.create_array({}, shape=(4,), chunks=(2,), dtype=dtype, fill_value=fill,
                             zarr_format=zarr_format, write_empty_chunks=False)
    z[:2] = -0.0
    z[2:] = 0.0
    assert np.signbit(z[:].real).tolist() == [True, True, False, False]
    assert z.nchunks_initialized == 1  # the chunk equal to the fill value, sign included, is not
