"""The ``transpose`` codec: the chunk's dimensions permuted."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import MetadataError
from .base import ArrayArrayCodec, ChunkSpec

__all__ = ["TransposeCodec"]


class TransposeCodec(ArrayArrayCodec):
    """Permutes the chunk's dimensions: the encoded array is ``chunk.transpose(order)``."""

    name = "transpose"
    moves_only = True

    def __init__(self, order: Any):
        if isinstance(order, str):
            raise MetadataError(f"transpose: order must be a permutation list, got {order!r}")
        self.order: tuple[int, ...] = tuple(int(i) for i in order)
        if sorted(self.order) != list(range(len(self.order))):
            raise MetadataError(f"transpose: order {list(self.order)} is not a permutation")
        self.inverse: tuple[int, ...] = tuple(int(i) for i in np.argsort(self.order))

    @classmethod
    def reversing(cls, ndim: int) -> TransposeCodec:
        """The transpose of the reverse permutation: a C-ordered chain's codec for what a
        v2 array of order 'F' stores."""
        return cls(tuple(reversed(range(ndim))))

    def configuration(self) -> dict[str, Any]:
        return {"order": list(self.order)}

    def to_dict(self) -> dict[str, Any]:
        # zarr-python's in-memory dict keeps the order a tuple; JSON still gets a list
        return {"name": self.name, "configuration": {"order": tuple(self.order)}}

    def validate(self, spec: ChunkSpec) -> None:
        if len(self.order) != len(spec.shape):
            raise MetadataError(
                f"transpose: order {list(self.order)} has {len(self.order)} entries for a "
                f"{len(spec.shape)}-d chunk"
            )

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        return ChunkSpec(tuple(spec.shape[i] for i in self.order), spec.dtype, spec.fill_value)

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        return chunk.transpose(self.order)

    def decode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        return chunk.transpose(self.inverse)
