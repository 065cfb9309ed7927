"""Run-time configuration: thread counts, defaults for new arrays.

``zarrkit.config`` is the process-wide :class:`Config`.  ``zarrkit.config.set(threads=1)``
changes a setting; used as ``with zarrkit.config.set(threads=1): ...`` it changes it for the
block only, and only for the code the block runs: the setting lives in a
:class:`contextvars.ContextVar` layered over the process-wide settings, so another thread, or
another asyncio task, never sees it, and when two such blocks overlap in two tasks or threads
each ends with its own scope (a save and restore of process-wide values would leave the last
one's view behind).  Work the block hands to zarrkit's thread pool, or to a worker thread of
the asynchronous API, runs in the block's context and sees its settings.  zarr-python 3's dotted keys work too: ``config.set({'array.order': 'F'})``,
``config.get('threading.max_workers')``, ``config.reset()``.

Examples
--------
>>> import zarrkit
>>> with zarrkit.config.set(threads=1):
...     zarrkit.config.threads
1
>>> with zarrkit.config.set({'array.write_empty_chunks': False}):
...     zarrkit.config.get('array.write_empty_chunks')
False
"""

from __future__ import annotations

import bisect
import collections
import contextvars
import dis
import functools
import importlib.util
import inspect
import os
import pprint as _pprint
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import CodeType, FrameType, MappingProxyType
from typing import Any, TypeVar

import numcodecs
import numpy as np

__all__ = ["Config", "config"]

#: zarr-python 3's configuration keys and the settings they mean here
ZARR3_KEYS = {
    "default_zarr_format": "zarr_format",
    "default_zarr_version": "zarr_format",
    "array.order": "order",
    "array.write_empty_chunks": "write_empty_chunks",
    "array.read_missing_chunks": "read_missing_chunks",
    "array.allow_unsafe_pickle_decode": "allow_unsafe_codecs",
    "async.concurrency": "io_threads",
    "threading.max_workers": "threads",
}

#: zarr-python 3's codec implementations (``codecs.<name>``): what its registry looks up by
#: name; zarrkit's codec registry is its own, so these are kept and given back
_ZARR3_CODECS = {
    "blosc": "blosc.BloscCodec", "gzip": "gzip.GzipCodec", "zstd": "zstd.ZstdCodec",
    "bytes": "bytes.BytesCodec", "endian": "bytes.BytesCodec", "crc32c": "crc32c_.Crc32cCodec",
    "sharding_indexed": "sharding.ShardingCodec", "transpose": "transpose.TransposeCodec",
    "vlen-utf8": "vlen_utf8.VLenUTF8Codec", "vlen-bytes": "vlen_utf8.VLenBytesCodec",
    **{f"numcodecs.{name.lower()}": f"numcodecs.{name}" for name in ["BZ2", "CRC32", "CRC32C", "LZ4", "LZMA", "ZFPY", "Adler32", "AsType", "BitRound", "Blosc", "Delta", "FixedScaleOffset", "Fletcher32", "GZip", "PCodec", "PackBits", "Shuffle", "Quantize", "Zlib", "Zstd"]},
    "numcodecs.jenkins_lookup3": "numcodecs.JenkinsLookup3",
}

#: zarr-python 3's keys with nothing to choose here (one engine, rectilinear grids always read
#: and written, host memory buffers...): taken and kept, so code setting them runs, and given
#: back by ``get``
ZARR3_NO_EFFECT = {
    "codec_pipeline.path": "zarr.core.codec_pipeline.BatchedCodecPipeline",
    "codec_pipeline.max_workers": None,
    "codec_pipeline.batch_size": 1,
    "array.rectilinear_chunks": True,
    "array.target_shard_size_bytes": None,
    "array.sharding_coalesce_max_gap_bytes": 1 << 20,
    "array.sharding_coalesce_max_bytes": 16 << 20,
    "async.timeout": None,
    "json_indent": 2,
    "buffer": "zarr.buffer.cpu.Buffer",
    "ndbuffer": "zarr.buffer.cpu.NDBuffer",
    **{f"codecs.{name}": f"zarr.codecs.{path}" for name, path in _ZARR3_CODECS.items()},
}

#: keys zarr-python 3 took once and refuses now (the default codecs of each kind of data, since
#: given to ``create_array`` as ``filters=``, ``serializer=``, ``compressors=``)
_ZARR3_REMOVED = ("array.v2_default_compressor", "array.v2_default_filters", "array.v3_default_filters",
                  "array.v3_default_serializer", "array.v3_default_compressors")

#: the sections of zarr-python 3's keys whose keys are all known here: another key in them is a
#: typo, refused (``codecs.<name>`` names any codec: that section takes any key)
_CLOSED_SECTIONS = {k.split(".")[0] for k in (*ZARR3_KEYS, *ZARR3_NO_EFFECT) if "." in k} - {"codecs"}

#: what :meth:`Config.get` returns for a key it does not hold when no default is given
_MISSING: Any = object()


#: the settings of ``with config.set(...)`` blocks, for the code running in them: a mapping of
#: each :class:`Config`'s id to its settings so changed (setting names, and zarr-python 3's
#: dotted keys kept for nothing); never changed in place, a block sets a new mapping
_SCOPED: contextvars.ContextVar[Mapping[int, Mapping[str, object]]] = contextvars.ContextVar(
    "zarrkit_config_scoped", default=MappingProxyType({})
)


def scope() -> object:
    """What ``with config.set(...)`` blocks hold for the code running now, as one mapping
    (never changed in place): two pieces of code run with the same settings when theirs
    compare equal (a batch of reads asked for by several coroutines is read once only for
    those that share them)."""
    return _SCOPED.get()


def _scoped_of(cfg: object) -> Mapping[str, object]:
    return _SCOPED.get().get(id(cfg), _EMPTY)


_EMPTY: Mapping[str, object] = MappingProxyType({})

#: the settings guarding against hostile data: a value meant for a block must never hold for the
#: process (another thread would open a pickled array, or allocate what a document claims)
GUARDS = frozenset({"allow_unsafe_codecs", "max_chunk_bytes"})

#: opcodes a ``with`` statement starts with, right after the expression giving its context
#: manager (3.14's ``COPY 1`` before ``LOAD_SPECIAL`` is skipped)
_WITH_OPS = frozenset(name for name in ("BEFORE_WITH", "LOAD_SPECIAL") if name in dis.opmap)
_STORE_OPS = frozenset({"STORE_FAST", "STORE_NAME", "STORE_GLOBAL", "STORE_DEREF"})
_LOAD_OPS = frozenset({"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_BORROW", "LOAD_NAME",
                       "LOAD_GLOBAL", "LOAD_DEREF"})
_TOUCH_OPS = _STORE_OPS | _LOAD_OPS | {"DELETE_FAST", "LOAD_FAST_AND_CLEAR", "LOAD_FAST_LOAD_FAST",
                                       "STORE_FAST_LOAD_FAST", "STORE_FAST_STORE_FAST",
                                       "LOAD_FAST_BORROW_LOAD_FAST_BORROW"}
#: code whose ``return`` does not give its value to the calling frame's next opcode
_RESUMABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


@functools.lru_cache(maxsize=256)
def _instructions(code: CodeType) -> tuple[list[dis.Instruction], list[int]]:
    skipped = ("NOP", "EXTENDED_ARG", "CACHE")
    ins = [i for i in dis.get_instructions(code) if i.opname not in skipped]
    return ins, [i.offset for i in ins]


def _opens_block(ins: list[dis.Instruction], n: int) -> bool:
    """Whether the instructions from ``n`` start a ``with`` block on the value on the stack."""
    if n < len(ins) and ins[n].opname == "COPY" and ins[n].arg == 1:
        n += 1
    return n < len(ins) and ins[n].opname in _WITH_OPS


def _entered_later(ins: list[dis.Instruction], n: int, name: str) -> bool:
    """Whether the first instruction after ``n`` touching the local ``name`` loads it to start a
    ``with`` block on it (``cm = config.set(...); ...; with cm:``)."""
    for j in range(n + 1, len(ins)):
        names = ins[j].argval if isinstance(ins[j].argval, tuple) else (ins[j].argval,)
        if ins[j].opname in _TOUCH_OPS and name in names:
            return ins[j].opname in _LOAD_OPS and _opens_block(ins, j + 1)
    return False


def _starts_with_block(frame: FrameType | None, changes: Mapping[str, object] = _EMPTY) -> bool:
    """Whether the value of the call ``frame`` is making goes to a ``with`` statement.

    ``config.set(...)`` is both a change for the process and, in ``with config.set(...):``, a
    change for one block: in the block's case nothing may be changed for the process even for
    an instant (another thread would see it), so the calling code's next opcodes are read:
    ``with config.set(...)``, ``with (s := config.set(...))``, ``s = config.set(...)`` right
    before ``with s:``, and ``return config.set(...)`` to a caller doing any of these are
    blocks.  A change of a :data:`GUARDS` setting stored in a local that the function next
    uses as ``with`` (``cm = config.set(...); ...; with cm:``) is one too: it holds nowhere
    before the block.  Anything else, or code that cannot be read so, answers False: the
    change is then made for the process, and taken back when a block is entered (see
    :meth:`Config._push`), so correctness never depends on this reading.
    """
    guarded = not GUARDS.isdisjoint(changes)
    try:
        for _ in range(8):  # through functions returning the scope
            if frame is None:
                return False
            ins, offsets = _instructions(frame.f_code)
            # the call's instruction: ``f_lasti`` is it, or one of its inline caches
            n = bisect.bisect_right(offsets, frame.f_lasti)
            if _opens_block(ins, n):
                return True
            if n + 1 < len(ins) and ins[n].opname == "COPY" and ins[n].arg == 1 \
                    and ins[n + 1].opname in _STORE_OPS:  # ``with (s := config.set(...))``
                return _opens_block(ins, n + 2)
            if n < len(ins) and ins[n].opname in _STORE_OPS:
                name, after = ins[n].argval, ins[n + 1] if n + 1 < len(ins) else None
                if after is not None and after.opname in _LOAD_OPS and after.argval == name:
                    return _opens_block(ins, n + 2)
                return guarded and ins[n].opname == "STORE_FAST" and _entered_later(ins, n, name)
            returned = n < len(ins) and ins[n].opname == "RETURN_VALUE"
            if returned and not frame.f_code.co_flags & _RESUMABLE:
                frame = frame.f_back
                continue
            return False
    except (AttributeError, TypeError, KeyError, IndexError, ValueError):
        pass
    return False


def _plugin_key(key: str) -> bool:
    return "." in key and key.split(".")[0] not in _CLOSED_SECTIONS


def _check_not_removed(keys: Any) -> None:
    for key in keys:
        if any(key == old or key.startswith(old + ".") for old in _ZARR3_REMOVED):
            raise ValueError(
                f"config key {key!r} is no longer taken (zarr-python 3 removed it): give the "
                "codecs of a new array as create_array's filters=, serializer= and compressors="
            )


#: the most threads ``threads`` and ``io_threads`` may ask for: each run starts up to that
#: many, and a process that cannot start them fails part-way
MAX_THREADS = 1024


def _default_threads() -> int:
    return min(max(os.cpu_count() or 1, 1), MAX_THREADS)


def _default_remote() -> str:
    return "obstore" if importlib.util.find_spec("obstore") is not None else "fsspec"


def _default_compressor() -> Any:
    return numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE)


class _Setting:
    """A setting of :class:`Config`: the value of the ``with config.set(...)`` blocks around
    the code reading it, else the process-wide value."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: Config | None, owner: type | None = None) -> Any:
        if obj is None:
            return self
        scoped = _SCOPED.get().get(id(obj))
        if scoped is not None and self.name in scoped:
            return scoped[self.name]
        return obj.__dict__[self.name]

    def __set__(self, obj: Config, value: object) -> None:  # the process-wide value
        obj.__dict__[self.name] = value


_C = TypeVar("_C", bound=type)


def _settings_in_context(cls: _C) -> _C:
    """Make each setting of the dataclass ``cls`` a :class:`_Setting` (read through the
    ``with config.set(...)`` blocks around the reader)."""
    for f in fields(cls):
        if not f.name.startswith("_"):
            setattr(cls, f.name, _Setting(f.name))
    return cls


@_settings_in_context
@dataclass
class Config:
    """Process-wide settings.

    Attributes
    ----------
    threads : int
        Worker threads for chunk encoding/decoding (CPU work).
    io_threads : int
        Requests kept in flight for stores with high latency (remote stores).
    parallel_min_chunk_bytes : int
        Chunks smaller than this (uncompressed) on low-latency stores are read, and encoded
        for writing, on one thread: for tiny chunks the per-chunk Python work dominates, and
        threads taking turns at the interpreter lock are slower than one thread (measured:
        4096^2 uint8 in 32^2 chunks reads in about 0.8x the time with one thread as with
        two).  Their writes are stored a batch at a time by the other threads while the
        calling thread encodes the next batch (by the calling thread too for stores whose
        writes contend, such as a local directory).  Reads of many such chunks go a
        batch at a time (the files of a batch read with one call of the store, then
        decoded), and threads reading them at once take turns a batch at a time rather
        than at every system call.  Small zstd chunks are read the other way round,
        whatever this says: the calling thread reads a batch of them while the other
        threads decode the batches before it, each with one call of the compressor.
        0 always uses ``threads`` for every chunk.
    zarr_format : int
        Format of new arrays and groups when a creation function is not told.
    write_empty_chunks : bool or None
        Whether arrays store chunks that hold only the fill value, when the function opening or
        creating an array is not told.  None (the default): each format as its reference
        implementation does, False for v3 arrays (zarr-python 3), True for v2 arrays
        (zarr-python 2); :meth:`write_empty_chunks_for` says which, and zarr-python 3's key
        ``config.get('array.write_empty_chunks')`` answers for the default format.
    read_missing_chunks : bool
        Whether reading a chunk that is not stored gives the fill value (True, the default)
        or raises :class:`~zarrkit.errors.ChunkNotFoundError` (zarr-python 3's
        ``array.read_missing_chunks``), for arrays opened or created while it is set and not
        told otherwise (``config={'read_missing_chunks': ...}``).  Of a sharded array only a
        missing shard raises: the chunks a stored shard leaves out read as the fill value.
    order : str
        Memory layout (``'C'`` or ``'F'``) of arrays made by :func:`zarrkit.create_array` when
        it is not given (zarr-python 3's ``array.order``), and the order reads of v3 arrays
        are given in; zarr-2 style functions keep ``'C'``.
    max_chunk_bytes : int
        The largest chunk (decoded), or shard index, an array may declare: opening one that
        declares more raises :class:`~zarrkit.errors.MetadataError` instead of letting one
        read allocate what a single metadata document claims (4 GiB by default).
    default_compressor : numcodecs codec or None
        The compressor of new v2 arrays when none is given (Blosc LZ4, level 5, byte shuffle, as
        zarr-python 2); zarr-python 2 code sets it as ``zarr.storage.default_compressor``, which
        is this.  New v3 arrays get zarr-python 3's default, Zstd level 0, whichever function
        makes them.
    remote : {'obstore', 'fsspec'}
        What opens ``s3://``, ``gs://``, ``az://``/``abfs://`` and ``http(s)://`` URLs:
        :class:`~zarrkit.storage.obstore.ObjectStore` (the default when obstore is installed)
        or :class:`~zarrkit.storage.fsspec.FsspecStore` (the default otherwise).  Other URLs
        (``memory://``, chained ``a::b`` URLs) always go through fsspec.
    allow_unsafe_codecs : bool
        Whether arrays may use codecs that can run code named by the data they decode: the
        ``pickle`` object codec, whose decoding calls whatever the stored bytes tell it to.
        False (the default): opening or creating such an array raises
        :class:`~zarrkit.errors.MetadataError` naming the codec and the array, before any chunk
        is read or anything written.  **Setting it lets anyone who can write to the store run
        code in this process**; set it only for data you trust, ideally only around opening
        it (``with zarrkit.config.set(allow_unsafe_codecs=True): z = zarrkit.open(...)``: an
        array opened meanwhile keeps decoding its chunks).  zarrkit then unpickles chunks
        itself, so numcodecs' own switch (``NUMCODECS_ALLOW_UNSAFE_PICKLE_DECODE``) is neither
        needed nor changed.
    string_dtype : {'StringDType', 'object'}
        The NumPy dtype variable-length strings (the v3 ``string`` data type) read as:
        NumPy 2's ``numpy.dtypes.StringDType()`` (the default, as zarr-python 3), or
        ``'object'`` for object arrays of ``str``.  An array takes it when opened.  With NumPy
        older than 2 strings are always ``object``.
    """

    threads: int = field(default_factory=_default_threads)
    io_threads: int = 32
    parallel_min_chunk_bytes: int = 16 * 1024
    zarr_format: int = 3
    write_empty_chunks: bool | None = None
    read_missing_chunks: bool = True
    order: str = "C"
    max_chunk_bytes: int = 4 * 2**30
    default_compressor: Any = field(default_factory=_default_compressor)
    remote: str = field(default_factory=_default_remote)
    allow_unsafe_codecs: bool = False
    string_dtype: str = "StringDType"
    # private state, not settings: no parameters of the constructor, not in the repr
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False, compare=False)
    _no_effect: dict = field(default_factory=lambda: dict(ZARR3_NO_EFFECT), init=False, repr=False, compare=False)
    #: the process-wide changes of scopes not entered yet (see :meth:`_push`): for each setting
    #: changed so, ``[value before them, [(scope's token, value), ...] oldest first]``
    _pending: dict = field(default_factory=dict, init=False, repr=False, compare=False)
    #: the tokens and settings of scopes gone without being entered: their changes stand for good
    _gone: collections.deque = field(
        default_factory=collections.deque, init=False, repr=False, compare=False
    )

    def _resolve(self, changes: Mapping[str, object]) -> dict[str, object]:
        names = {f.name for f in fields(self) if not f.name.startswith("_")}
        changes = dict(changes)
        # a section given as a dict (zarr-python 3's ``{"codecs": {"blosc": ...}}``): its dotted keys
        for section in [k for k, v in changes.items() if k not in names and "." not in k and isinstance(v, Mapping)]:
            settings: Mapping[str, object] = changes.pop(section)  # type: ignore[assignment]  # checked above
            changes.update({f"{section}.{sub}": v for sub, v in settings.items()})
        _check_not_removed(changes)
        # zarr-python 3 takes any dotted key (plug-ins read their own): those of other sections are
        # kept and given back; in the sections known here an unknown key is a typo, refused below
        kept = {k: changes.pop(k) for k in [k for k in changes if k in ZARR3_NO_EFFECT or _plugin_key(k)]}
        if "array.write_empty_chunks" in changes and changes["array.write_empty_chunks"] is None:
            # zarr-python 3's key takes a bool; None (each format's default) is zarrkit's own setting's
            raise ValueError("config array.write_empty_chunks must be True or False, got None "
                             "(write_empty_chunks=None gives each format's default)")
        resolved = {ZARR3_KEYS.get(k, k): v for k, v in changes.items()}
        unknown = set(resolved) - names
        if unknown:
            raise TypeError(
                f"unknown config setting(s) {sorted(unknown)}; expected one of "
                f"{sorted(names)} or zarr-python 3's {sorted(ZARR3_KEYS)}"
            )
        self._validate(resolved)
        return {**resolved, **kept}

    def set(self, changes: Mapping[str, object] | None = None, **kwargs: object) -> _Scope:
        """Change settings: for the process, or as a context manager (``with config.set(...)``)
        for the code the block runs only (the thread or asyncio task running it, and the work
        it gives zarrkit's threads), gone when the block ends.  Settings are given as keywords
        or as a mapping (zarr-python 3's dotted keys included).

        Give the block its scope where it starts (``with config.set(...)``, ``with (s :=
        config.set(...))``, a function returning it, or a name entered next): then nothing is
        changed for the process even for an instant.  A scope kept for later is a change for
        the process until its block starts, then taken back (a :data:`GUARDS` setting kept in
        a local the function later enters holds nowhere before its block); scopes so entered
        in any order leave the process as it was, and one never entered is a change for good."""
        resolved = self._resolve({**(changes or {}), **kwargs})
        scope = _Scope(self, resolved)
        if not _starts_with_block(sys._getframe(1), resolved):
            scope._apply_globally()
        return scope

    def update(self, changes: Mapping[str, object] | None = None, **kwargs: object) -> None:
        """Change settings permanently."""
        self._push(object(), self._resolve({**(changes or {}), **kwargs}), pending=False)

    # -- the process-wide values of scopes not entered yet ---------------------------------------
    #
    # ``s = config.set(x=v)`` cannot tell whether ``s`` will be entered: it changes ``x`` for the
    # process (the meaning of ``config.set`` as a statement), as one entry of ``x``'s ledger, on
    # top of the value before.  Entering ``s`` removes its entry, wherever it is among the
    # entries of other scopes not entered: the process-wide value is the newest entry left, else
    # the value before them all.  So scopes entered in any order, in any thread, leave what
    # the process had, plus the changes of scopes never entered (statements); a permanent
    # change (``update``, ``reset``) replaces the ledger, and a scope gone without being entered
    # becomes one: the entries older than it can no longer show and go with it.

    def _push(self, token: object, changes: Mapping[str, object], *, pending: bool) -> None:
        with self._lock:
            self._settle_gone()
            for k, v in changes.items():
                if pending:
                    self._pending.setdefault(k, [self._read(k), []])[1].append((token, v))
                else:
                    self._pending.pop(k, None)
                self._write(k, v)

    def _take_back(self, token: object, keys: Any, *, for_good: bool = False) -> None:
        """Remove the entries of the scope ``token`` (``for_good``: it stands, a permanent
        change, and the older entries go)."""
        for k in keys:
            entry = self._pending.get(k)
            mine = [i for i, (t, _) in enumerate(entry[1]) if t is token] if entry else []
            if not mine:  # entered before, or replaced by a permanent change since
                continue
            stack, at = entry[1], mine[0]
            if for_good:
                entry[0] = stack[at][1]
                del stack[: at + 1]
            else:
                del stack[at]
            self._write(k, stack[-1][1] if stack else entry[0])
            if not stack:
                del self._pending[k]

    def _settle_gone(self) -> None:
        while self._gone:
            token, keys = self._gone.popleft()
            self._take_back(token, keys, for_good=True)

    def _read(self, key: str) -> object:
        return self.__dict__[key] if _is_setting(key) else self._no_effect.get(key, _MISSING)

    def _write(self, key: str, value: object) -> None:
        if _is_setting(key):
            self.__dict__[key] = value
        elif value is _MISSING:
            self._no_effect.pop(key, None)
        else:
            self._no_effect[key] = value

    def write_empty_chunks_for(self, zarr_format: int) -> bool:
        """Whether arrays of ``zarr_format`` store chunks holding only the fill value when not
        told: :attr:`write_empty_chunks`, or when that is None each format's reference
        implementation's default (v3: False, as zarr-python 3; v2: True, as zarr-python 2).

        Parameters
        ----------
        zarr_format : {2, 3}
            The array's format.

        Returns
        -------
        bool
        """
        value = self.write_empty_chunks
        return zarr_format == 2 if value is None else bool(value)

    def get(self, key: str, default: Any = _MISSING) -> Any:
        """A setting by its name or zarr-python 3's dotted key (``'threading.max_workers'``); a
        section's name (``'array'``) gives its settings as a dict.

        Parameters
        ----------
        key : str
            The setting.
        default : optional
            What to return when there is no such setting.

        Returns
        -------
        object

        Raises
        ------
        KeyError
            No such setting, and no ``default`` (as zarr-python 3's configuration object).
        """
        scoped = _scoped_of(self)
        if key in scoped and not _is_setting(key):
            return scoped[key]
        if key in self._no_effect:
            return self._no_effect[key]
        name = ZARR3_KEYS.get(key, key)
        if name == "write_empty_chunks" and key != name:  # what new arrays of the default format get
            return self.write_empty_chunks_for(self.zarr_format)
        if not name.startswith("_") and name in {f.name for f in fields(self)}:
            return getattr(self, name)
        node: Any = self.config
        for part in key.split("."):
            if not isinstance(node, dict) or part not in node:
                if default is _MISSING:
                    raise KeyError(key)
                return default
            node = node[part]
        return node

    @property
    def defaults(self) -> list[dict[str, Any]]:
        """The default settings, as zarr-python 3's configuration object lists them: one nested
        dict (:attr:`config` of a configuration just made)."""
        return [Config().config]

    def to_dict(self) -> dict[str, Any]:
        """All settings as a nested dict (:attr:`config`, zarr-python 3's name).

        Returns
        -------
        dict
        """
        return self.config

    def reset(self) -> None:
        """Every setting back to its default (for the process, and for the code running here:
        the settings of the ``with config.set(...)`` blocks around the call are dropped until
        they end)."""
        fresh = Config()
        with self._lock:
            for f in fields(self):
                if not f.name.startswith("_"):
                    setattr(self, f.name, getattr(fresh, f.name))
            self._no_effect = dict(ZARR3_NO_EFFECT)
            self._pending.clear()
            self._gone.clear()
        if id(self) in _SCOPED.get():
            _SCOPED.set(MappingProxyType({k: v for k, v in _SCOPED.get().items() if k != id(self)}))

    @property
    def config(self) -> dict[str, Any]:
        """All settings as zarr-python 3's nested dict (``config.config['array']['order']``):
        its dotted keys split at the dots, then this module's own setting names."""
        nested: dict[str, Any] = {}
        scoped = {k: v for k, v in _scoped_of(self).items() if not _is_setting(k)}
        flat = {**{k: self.get(k) for k in ZARR3_KEYS if k != "default_zarr_version"}, **self._no_effect, **scoped}
        for key, value in flat.items():
            *parents, leaf = key.split(".")
            node = nested
            for part in parents:
                node = node.setdefault(part, {})
            node[leaf] = value
        for f in fields(self):
            if not f.name.startswith("_"):
                nested.setdefault(f.name, getattr(self, f.name))
        return nested

    def enable_gpu(self) -> Config:
        """zarr-python 3's switch to GPU buffers; not available here.

        Raises
        ------
        NotImplementedError
            Always: zarrkit reads and writes chunks in host memory only.
        """
        raise NotImplementedError("GPU support (zarr-python 3's config.enable_gpu) is not available in zarrkit")

    def pprint(self, **kwargs: Any) -> None:
        """Print the settings (keywords go to :func:`pprint.pprint`: ``stream``, ``width``...)."""
        _pprint.pprint({f.name: getattr(self, f.name) for f in fields(self) if not f.name.startswith("_")}, **kwargs)

    @staticmethod
    def _validate(changes: dict[str, object]) -> None:
        for name in ("threads", "io_threads"):
            if name in changes:
                v = changes[name]
                if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= MAX_THREADS:
                    raise ValueError(f"config {name} must be an int from 1 to {MAX_THREADS}, got {v!r}")
        wec = changes.get("write_empty_chunks")
        if wec is not None and not isinstance(wec, (bool, np.bool_)):
            raise ValueError(f"config write_empty_chunks must be True or False (or None: each format's default), got {wec!r}")
        for name in ("parallel_min_chunk_bytes", "max_chunk_bytes"):
            v = changes.get(name, 0)
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise ValueError(f"config {name} must be an int >= 0, got {v!r}")
        if "zarr_format" in changes and changes["zarr_format"] not in (2, 3):
            raise ValueError(f"config zarr_format must be 2 or 3, got {changes['zarr_format']!r}")
        if "remote" in changes and changes["remote"] not in ("obstore", "fsspec"):
            raise ValueError(f"config remote must be 'obstore' or 'fsspec', got {changes['remote']!r}")
        if "string_dtype" in changes and changes["string_dtype"] not in ("StringDType", "object"):
            raise ValueError(
                f"config string_dtype must be 'StringDType' or 'object', got {changes['string_dtype']!r}"
            )
        for name in ("allow_unsafe_codecs", "read_missing_chunks"):
            if name in changes and not isinstance(changes[name], bool):
                raise ValueError(f"config {name} must be True or False, got {changes[name]!r}")
        if "order" in changes and changes["order"] not in ("C", "F"):
            raise ValueError(f"config order must be 'C' or 'F', got {changes['order']!r}")


_SETTINGS = frozenset(f.name for f in fields(Config) if not f.name.startswith("_"))


def _is_setting(key: str) -> bool:
    """Whether ``key`` (resolved) is a setting of :class:`Config`, not a key kept for nothing."""
    return key in _SETTINGS


class _Scope:
    """What :meth:`Config.set` returns.  Entered (``with``), the changes hold in the block's
    context only, a :class:`contextvars.ContextVar`'s value, and leaving the block takes them
    away whatever other blocks did meanwhile.  Made where the block could not be seen
    (``s = config.set(...)``, then later ``with s:``), the changes are made for the process
    until it is entered, as a statement's, then taken back (see :meth:`Config._push`): not
    entered, they were made for the process."""

    def __init__(self, config: Config, changes: dict[str, object]):
        self._config = config
        self._changes = changes
        self._token = object()  # its entries in the config's ledger (not the scope: see __del__)
        self._pending = False  # changed for the process, not entered yet
        self._tokens: list[contextvars.Token[Mapping[int, Mapping[str, object]]]] = []

    def _apply_globally(self) -> None:
        self._config._push(self._token, self._changes, pending=True)
        self._pending = True

    def __enter__(self) -> Config:
        cfg = self._config
        if self._pending:
            with cfg._lock:
                self._pending = False
                cfg._settle_gone()
                cfg._take_back(self._token, self._changes)
        current = _SCOPED.get()
        mine = MappingProxyType({**current.get(id(cfg), _EMPTY), **self._changes})
        self._tokens.append(_SCOPED.set(MappingProxyType({**current, id(cfg): mine})))
        return cfg

    def __exit__(self, *exc: object) -> None:
        token = self._tokens.pop()
        try:
            _SCOPED.reset(token)
        except ValueError:  # left in another context than entered: what it replaced comes back
            old = token.old_value
            _SCOPED.set(MappingProxyType({}) if old is contextvars.Token.MISSING else old)

    def __del__(self) -> None:
        # never entered: a statement's change, for good; settled at the next change (this may
        # run in any thread, even one holding the config's lock: a deque's append takes none)
        if getattr(self, "_pending", False):
            self._config._gone.append((self._token, tuple(self._changes)))


config: Config = Config()
