"""``Categorize`` that accepts bytes (``S``) labels as well as str ones.

numcodecs' class takes only ``U``/``O`` data; the Zarr tutorial categorises ``|S6`` data, so the
bytes case is handled here.  Bytes labels are stored in the configuration as ASCII strings with a
``dtype`` of ``|S…``, which tells the reader to turn them back into bytes.
"""

from __future__ import annotations

from typing import Any, cast

import numcodecs
import numpy as np
from numcodecs.compat import ensure_ndarray


class Categorize(numcodecs.Categorize):  # type: ignore[misc]  # numcodecs is untyped
    """Filter encoding categorical data as small integers (0 means "not a label").

    Examples
    --------
    >>> import numpy as np
    >>> f = Categorize(labels=[b'female', b'male'], dtype='S10')
    >>> f.encode(np.array([b'male', b'female', b'x'], dtype='S10'))
    array([2, 1, 0], dtype=uint8)
    """

    codec_id = "categorize"

    def __init__(self, labels: Any, dtype: Any, astype: Any = "u1"):
        dtype = np.dtype(dtype)
        if dtype.kind != "S":
            super().__init__(labels, dtype, astype)
            return
        self.dtype = dtype
        self.labels: list[bytes] = [lab if isinstance(lab, bytes) else str(lab).encode("ascii") for lab in labels]
        self.astype: np.dtype[Any] = np.dtype(astype)

    def encode(self, buf: Any) -> np.ndarray:
        if self.dtype.kind != "S":
            return cast(np.ndarray, super().encode(buf))  # numcodecs is untyped
        arr = ensure_ndarray(buf).view(self.dtype).reshape(-1, order="A")
        enc: np.ndarray = np.zeros_like(arr, dtype=self.astype)
        for i, label in enumerate(self.labels):
            enc[arr == label] = i + 1
        return enc

    def decode(self, buf: Any, out: Any = None) -> np.ndarray:
        if self.dtype.kind != "S":
            return cast(np.ndarray, super().decode(buf, out))  # numcodecs is untyped
        enc = ensure_ndarray(buf).view(self.astype).reshape(-1, order="A")
        dec: np.ndarray = np.full_like(enc, fill_value=b"", dtype=self.dtype)
        for i, label in enumerate(self.labels):
            dec[enc == (i + 1)] = label
        if out is not None:
            ensure_ndarray(out).view(self.dtype).reshape(-1)[:] = dec
            return cast(np.ndarray, out)  # an array: numcodecs decodes into arrays only
        return dec

    def get_config(self) -> dict[str, Any]:
        if self.dtype.kind != "S":
            return cast(dict[str, Any], super().get_config())  # numcodecs is untyped
        return {
            "id": self.codec_id,
            "labels": [lab.decode("ascii") for lab in self.labels],
            "dtype": self.dtype.str,
            "astype": self.astype.str,
        }
