"""A package written for zarr-python 3's extension points, as another project ships one: a
bytes-to-bytes codec (coroutines that really wait), a filter (synchronous variants) and a
store (coroutines over a dict).  It uses zarr-python 3's names (``zarr.abc.codec``,
``zarr.abc.store``, ``zarr.buffer``) as ``zarrkit``'s.  The tests make it installed by putting
this directory, which holds its ``.dist-info`` with an entry point of the group
``zarr.codecs``, on ``sys.path``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

import numpy as np

from zarrkit.abc.codec import ArrayArrayCodec, BytesBytesCodec
from zarrkit.abc.store import OffsetByteRequest, RangeByteRequest, Store, SuffixByteRequest
from zarrkit.buffer import default_buffer_prototype


@dataclass(frozen=True)
class XorDemo(BytesBytesCodec):
    """Each byte XOR ``key``, then a one-byte trailer holding ``key``."""

    key: int = 0x5A
    is_fixed_size = True

    def to_dict(self) -> dict:
        return {"name": "xor_demo", "configuration": {"key": self.key}}

    async def _encode_single(self, chunk_bytes, chunk_spec):
        data = await asyncio.to_thread(lambda: chunk_bytes.as_numpy_array() ^ np.uint8(self.key))
        return chunk_spec.prototype.buffer.from_bytes(data.tobytes() + bytes([self.key]))

    async def _decode_single(self, chunk_bytes, chunk_spec):
        raw = chunk_bytes.as_numpy_array()
        if int(raw[-1]) != self.key:
            raise ValueError("xor_demo: trailer does not match the key")
        await asyncio.sleep(0)
        return chunk_spec.prototype.buffer.from_bytes((raw[:-1] ^ np.uint8(self.key)).tobytes())

    def compute_encoded_size(self, input_byte_length, chunk_spec):
        return input_byte_length + 1


@dataclass(frozen=True)
class AddDemo(ArrayArrayCodec):
    """Adds ``amount`` to every element when encoding."""

    amount: int = 1

    def to_dict(self) -> dict:
        return {"name": "add_demo", "configuration": {"amount": self.amount}}

    def validate(self, *, shape, dtype, chunk_grid):
        if dtype.to_native_dtype().kind not in "iu":
            raise ValueError("add_demo: integer data only")

    def _encode_sync(self, chunk_array, chunk_spec):
        return chunk_spec.prototype.nd_buffer.from_numpy_array(chunk_array.as_numpy_array() + self.amount)

    def _decode_sync(self, chunk_array, chunk_spec):
        return chunk_spec.prototype.nd_buffer.from_numpy_array(chunk_array.as_numpy_array() - self.amount)


class DictDemoStore(Store):
    """zarr-python 3's store protocol over a dict, every method a coroutine."""

    supports_writes = True
    supports_deletes = True
    supports_partial_writes = False
    supports_listing = True

    def __init__(self, data: dict | None = None, *, read_only: bool = False) -> None:
        super().__init__(read_only=read_only)
        self.data = {} if data is None else data
        self.calls: list[str] = []

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DictDemoStore) and other.data is self.data

    async def get(self, key, prototype, byte_range=None):
        self.calls.append("get")
        if key not in self.data:
            return None
        value = self.data[key]
        if isinstance(byte_range, RangeByteRequest):
            value = value[byte_range.start:byte_range.end]
        elif isinstance(byte_range, OffsetByteRequest):
            value = value[byte_range.offset:]
        elif isinstance(byte_range, SuffixByteRequest):
            value = value[-byte_range.suffix:]
        return prototype.buffer.from_bytes(value)

    async def get_partial_values(self, prototype, key_ranges):
        return [await self.get(k, prototype, r) for k, r in key_ranges]

    async def exists(self, key):
        return key in self.data

    async def set(self, key, value):
        self.calls.append("set")
        self.data[key] = value.to_bytes()

    async def delete(self, key):
        self.data.pop(key, None)

    async def list(self) -> AsyncIterator[str]:
        for key in list(self.data):
            yield key

    async def list_prefix(self, prefix) -> AsyncIterator[str]:
        for key in list(self.data):
            if key.startswith(prefix):
                yield key

    async def list_dir(self, prefix) -> AsyncIterator[str]:
        prefix = prefix.rstrip("/") + "/" if prefix else ""
        seen = set()
        for key in list(self.data):
            if key.startswith(prefix):
                child = key[len(prefix):].split("/", 1)[0]
                if child not in seen:
                    seen.add(child)
                    yield child


PROTOTYPE = default_buffer_prototype()
