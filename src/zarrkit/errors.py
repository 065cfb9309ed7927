"""The exception tree of zarrkit.

Every error zarrkit raises on bad input derives from :class:`ZarrkitError` and from the builtin
exception a Python user would expect (``KeyError``, ``FileNotFoundError``, ``ValueError``,
``PermissionError``, ``IndexError``), so both ``except zarrkit.errors.MetadataError`` and
``except ValueError`` work.  Messages name the key, path or argument at fault.

The classes zarr-python 2 has keep its bases too, so its ``except`` clauses catch them as they
did: a node found where none was expected, or missing where one was, is a ``ValueError`` (as in
zarr-python 2) as well as a ``FileExistsError`` / ``FileNotFoundError`` (and a missing member a
``KeyError``); :class:`CopyError` is a ``RuntimeError``; selection errors are ``IndexError``.

Examples
--------
>>> import zarrkit
>>> from zarrkit.errors import ContainsGroupError
>>> g = zarrkit.group()
>>> _ = g.create_group('foo')
>>> try:
...     g.create_group('foo')
... except ValueError as err:  # zarr-python 2's clause; FileExistsError works too
...     print(type(err).__name__, isinstance(err, FileExistsError))
ContainsGroupError True
"""

from __future__ import annotations

from typing import ClassVar

__all__ = [
    "ZarrkitError",
    "ZarrAlreadyImportedError",
    "MissingExtraError",
    "NodeNotFoundError",
    "ArrayNotFoundError",
    "GroupNotFoundError",
    "PathNotFoundError",
    "FSPathExistNotDir",
    "NodeExistsError",
    "ContainsArrayError",
    "ContainsGroupError",
    "ArrayNotGroupError",
    "GroupNotArrayError",
    "MetadataError",
    "DimensionNamesError",
    "UnknownCodecError",
    "UnsupportedDtypeError",
    "UnsupportedCodecError",
    "InvalidPathError",
    "ChunkDecodeError",
    "ChunkEncodeError",
    "ValueEncodeError",
    "ReadOnlyError",
    "CopyError",
    "NodesOverlapError",
    "SelectionError",
    "ArrayIndexError",
    "BoundsCheckError",
    "NegativeStepError",
    "VindexInvalidSelectionError",
    "BadCompressorError",
    "ShapeMismatchError",
    "StoreError",
    "LockError",
    "StorageOptionsError",
    "VersionConflictError",
    "ConflictRetriesExhaustedError",
    "ConditionalWritesUnsupportedError",
    "StoreOperationNotSupported",
    "ConcurrentModificationError",
    # zarr-python 3's names
    "BaseZarrError",
    "MetadataValidationError",
    "NodeTypeValidationError",
    "ContainsArrayAndGroupError",
    "DataTypeValidationError",
    "ChunkNotFoundError",
    "PickleCodecDisabledError",
    "ZarrFutureWarning",
    "UnstableSpecificationWarning",
    "ZarrDeprecationWarning",
    "ZarrUserWarning",
    "ZarrRuntimeWarning",
]


class ZarrkitError(Exception):
    """Base class of every error raised by zarrkit."""


class ZarrAlreadyImportedError(ZarrkitError, ImportError):
    """:func:`zarrkit.install_as_zarr` called when a module named ``zarr`` is imported already."""


class MissingExtraError(ZarrkitError, ModuleNotFoundError):
    """An optional dependency that is not installed; the message names the extra of zarrkit
    that installs it (:func:`zarrkit.storage.extras.missing_extra`)."""


class _PathError(ZarrkitError):
    """An error about the node at a path: ``Error(message, path=...)``.

    zarr-python 3's constructors are accepted too: one argument is the message; several are
    the values of the class's message template :attr:`_msg` (``ContainsArrayError(store,
    path)`` reads "An array exists in store ... at path ...").  ``path`` is the path at fault
    (the last of several arguments when not given).
    """

    #: the message written from several arguments (zarr-python 3's)
    _msg: ClassVar[str] = "{}"

    def __init__(self, *args: object, path: str | None = None):
        message = str(args[0]) if len(args) == 1 else self._msg.format(*args) if args else ""
        super().__init__(message)
        if path is None and len(args) > 1 and isinstance(args[-1], str):
            path = args[-1]
        self.path = path

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class NodeNotFoundError(_PathError, FileNotFoundError, KeyError, ValueError):
    """No array or group exists at the requested path.

    Derives from ``FileNotFoundError`` (opening a missing node, as in zarr-python 3),
    ``KeyError`` (a missing group member, ``g['nope']``) and ``ValueError`` (what zarr-python
    2 raised for a missing array or group), so any of those ``except`` clauses catches it.
    """


class ArrayNotFoundError(NodeNotFoundError):
    """No array exists at the requested path (``ArrayNotFoundError(store, path)`` writes
    zarr-python 3's message)."""

    _msg = "No array found in store {!r} at path {!r}"


class GroupNotFoundError(NodeNotFoundError):
    """No group exists at the requested path (``GroupNotFoundError(store, path)`` writes
    zarr-python 3's message)."""

    _msg = "No group found in store {!r} at path {!r}"


class PathNotFoundError(NodeNotFoundError):
    """Nothing (neither an array nor a group) exists at the requested path."""


class NodeExistsError(_PathError, FileExistsError, ValueError):
    """A node already exists where a new one was to be created (mode ``'w-'``).

    Also a ``ValueError``, what zarr-python 2 and 3 raise in that case.
    """


class ContainsArrayError(NodeExistsError):
    """An array already exists at the path (``ContainsArrayError(store, path)`` writes
    zarr-python 3's message)."""

    _msg = "An array exists in store {!r} at path {!r}."


class ContainsGroupError(NodeExistsError):
    """A group already exists at the path (``ContainsGroupError(store, path)`` writes
    zarr-python 3's message)."""

    _msg = "A group exists in store {!r} at path {!r}."


class ArrayNotGroupError(ContainsArrayError, TypeError):
    """A group was required (``require_group``) where an array is: a
    :class:`ContainsArrayError`, and a ``TypeError`` (the node is of the other kind), as
    zarr-python 3's ``require_group`` raises."""


class GroupNotArrayError(ContainsGroupError, TypeError):
    """An array was required (``require_dataset``, ``require_array``) where a group is: a
    :class:`ContainsGroupError`, and a ``TypeError``, as zarr-python 3's ``require_array``
    raises."""


class MetadataError(ZarrkitError, ValueError):
    """Metadata is malformed, inconsistent or not understood.

    ``key`` names the metadata document (e.g. ``'foo/.zarray'``) when known.
    """

    def __init__(self, message: str, key: str | None = None, *got: object):
        if got:  # zarr-python 3's MetadataValidationError(name, expected, got)
            message = f"Invalid value for '{message}'. Expected '{key}'. Got '{got[0]}'."
            key = None
        if key is not None and key not in message:
            message = f"{key}: {message}"
        super().__init__(message)
        self.key = key


class DimensionNamesError(MetadataError, KeyError):
    """An array's dimension names (``_ARRAY_DIMENSIONS``, v3's ``dimension_names``) are
    missing or malformed for xarray.  A ``KeyError`` too, as xarray's own zarr backend raises
    for an array without them."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


#: zarr-python 3's name of :class:`MetadataError`
MetadataValidationError = MetadataError


class NodeTypeValidationError(MetadataError):
    """A metadata document's ``node_type`` is not the one expected (an array's where a
    group's was wanted, or an unknown kind)."""


class ContainsArrayAndGroupError(_PathError, MetadataError):
    """Both an array's and a group's metadata documents are at the same path (``.zarray`` and
    ``.zgroup``); ``ContainsArrayAndGroupError(store, path)`` writes zarr-python 3's message."""

    _msg = (
        "Array and group metadata documents (.zarray and .zgroup) were both found in store "
        "{!r} at path {!r}. Only one of these files may be present in a given directory / "
        "prefix. Remove the .zarray file, or the .zgroup file, or both."
    )


class DataTypeValidationError(ZarrkitError, ValueError):
    """A value does not describe a data type (zarr-python 3's name, raised by data type
    classes checking what they are given)."""


class UnknownCodecError(MetadataError):
    """A codec id or name is not registered."""


class UnsupportedDtypeError(MetadataError, DataTypeValidationError):
    """A data type cannot be represented in the requested Zarr format."""


class UnsupportedCodecError(MetadataError, TypeError):
    """A codec cannot be used where it was given: it has no equivalent in the array's Zarr
    format (a v3 ``bytes`` or ``sharding_indexed`` codec for a v2 array), it is of the wrong
    kind for its place (a filter given as the compressor), or it is not a codec at all.

    ``argument`` names the creation argument (``'compressor'``, ``'filters'``, ...).  Both a
    ``ValueError`` and a ``TypeError``, as either was raised for such arguments before.
    """

    def __init__(self, message: str, argument: str | None = None, key: str | None = None):
        super().__init__(message, key)
        self.argument = argument


class InvalidPathError(ZarrkitError, ValueError):
    """A node path or store key is invalid or would escape the store root."""


class ChunkDecodeError(ZarrkitError, ValueError):
    """Stored chunk bytes could not be decoded; ``key`` names the chunk, ``store`` the store
    holding it.

    The message starts with both, once (``chunk 'c/0/1' in LocalStore('/data/a.zarr'): ...``);
    ``reason`` is the message without them, for re-raising under another key.
    """

    def __init__(self, message: str, key: str | None = None, store: object = None):
        self.reason = message
        self.key = key
        self.store = store
        where = "" if key is None else f"chunk {key!r}"
        if store is not None:
            where = f"{where} in {store!r}" if where else f"in {store!r}"
        super().__init__(f"{where}: {message}" if where else message)

    def in_store(self, store: object) -> ChunkDecodeError:
        """The same error, naming the store the chunk was read from."""
        return ChunkDecodeError(self.reason, self.key, store)


class ChunkEncodeError(ZarrkitError, ValueError):
    """A chunk could not be encoded; ``key`` names the chunk (once, at the start of the
    message; ``reason`` is the message without it)."""

    def __init__(self, message: str, key: str | None = None):
        self.reason = message
        self.key = key
        super().__init__(message if key is None else f"chunk {key!r}: {message}")


class ValueEncodeError(ChunkEncodeError):
    """Values given to a write that the array's codecs refuse (a ``cast_value`` target that
    cannot hold them, a ``scale_offset`` result out of range); raised before anything is
    stored.  ``key`` names the array's metadata document."""

    def __init__(self, message: str, key: str | None = None):
        self.reason = message
        self.key = key
        ValueError.__init__(self, message if key is None else f"{key}: {message}")


class ReadOnlyError(ZarrkitError, PermissionError, ValueError):
    """A write was attempted on a read-only array, group, view or store (a ``PermissionError``,
    as zarr-python 2 raised, and a ``ValueError``, as zarr-python 3 does)."""

    def __init__(self, message: str = "object is read-only"):
        super().__init__(message)


class CopyError(ZarrkitError, RuntimeError):
    """A copy cannot proceed: an object exists in the destination and ``if_exists='raise'``,
    or the source has no equivalent in the destination's format."""


class NodesOverlapError(ZarrkitError, ValueError):
    """A node cannot be replaced with a copy of one it overlaps (one is the other, or lies
    below it, where they really are: symbolic links resolved): replacing it would delete the
    source before it is read.  ``source`` and ``destination`` describe the two."""

    def __init__(self, message: str, source: str = "", destination: str = ""):
        super().__init__(message)
        self.source = source
        self.destination = destination


class SelectionError(ZarrkitError, IndexError):
    """A selection is not valid for the array (wrong type, too many indices, ...)."""


class BoundsCheckError(SelectionError):
    """An index is out of bounds for the array's shape."""


class NegativeStepError(SelectionError):
    """A slice step zarr-python 2 refused.  zarrkit reads and writes slices with negative
    steps, so it never raises this; the class is here for code that catches it."""

    def __init__(self, message: str = "only slices with step >= 1 are supported"):
        super().__init__(message)


class VindexInvalidSelectionError(SelectionError):
    """A ``vindex`` selection is neither integer coordinate arrays nor one Boolean mask."""


# zarr-python 2's names for errors zarrkit raises under a more specific name: an invalid index
# into an array is a SelectionError, a bad compressor argument an UnsupportedCodecError.
ArrayIndexError = SelectionError
BadCompressorError = UnsupportedCodecError


class ShapeMismatchError(ZarrkitError, ValueError):
    """A value cannot be broadcast to the shape of a selection, or shapes disagree."""


class StoreError(ZarrkitError, OSError):
    """A store operation failed (I/O error, bad configuration)."""


class LockError(ZarrkitError, OSError):
    """A synchronizer cannot take a lock: its lock file cannot be made or opened (the
    message names it)."""


class StorageOptionsError(ZarrkitError, TypeError, ValueError):
    """Storage options that cannot apply (given with a file system instance or a mapper);
    a ``TypeError`` for a wrong argument and a ``ValueError`` as zarr-python 2 raised."""


class StoreOperationNotSupported(StoreError, NotImplementedError):
    """The store cannot do this at all (a zip file's members cannot be deleted); also a
    ``NotImplementedError``, as zarr-python 2 raised."""


class VersionConflictError(StoreError):
    """A conditional write or delete found another version of the value than the one it was
    conditioned on (or a value where it was to create one): nothing was written.  ``key`` is
    the store key."""

    def __init__(self, message: str, key: str = ""):
        super().__init__(f"{message}: {key!r}" if key else message)
        self.key = key


class ConflictRetriesExhaustedError(StoreError):
    """A read-modify-write met another writer's change at every one of its attempts, and gave
    up without writing (the operation can be run again).  ``key`` is the store key."""

    def __init__(self, message: str, key: str = ""):
        super().__init__(f"{message}: {key!r}" if key else message)
        self.key = key


class ConditionalWritesUnsupportedError(StoreError, NotImplementedError):
    """The store cannot condition a write on the version of a value, and the operation needs
    it (``config.require_conditional_writes``): pass a synchronizer, or use a store that can."""


class FSPathExistNotDir(GroupNotFoundError, StoreError):
    """A store's directory path exists but is a file, not a directory."""


class ChunkNotFoundError(ZarrkitError, ValueError):
    """A chunk expected to be in the store is missing (zarr-python 3's name)."""


class PickleCodecDisabledError(ZarrkitError, ValueError):
    """Data encoded with the pickle codec was read without opting in to unpickling, which
    can run arbitrary code (zarr-python 3's name)."""


class ConcurrentModificationError(StoreError):
    """A stored object changed under a read of it again and again (a writer replaces a shard
    faster than its index and chunks can be read from one version): nothing read is wrong,
    and nothing is returned.  **Retryable**: reading again may succeed (``retryable`` is
    True); ``key`` names the object.

    Examples
    --------
    >>> from zarrkit.errors import ConcurrentModificationError
    >>> err = ConcurrentModificationError("expected one version, got a new one 4 times", "c/0")
    >>> err.retryable, err.key, isinstance(err, OSError)
    (True, 'c/0', True)
    """

    #: reading again may succeed: the data is not damaged, only busy
    retryable: ClassVar[bool] = True

    def __init__(self, message: str, key: str | None = None):
        self.key = key
        super().__init__(message if key is None else f"{key!r}: {message}")


#: zarr-python 3's base class of its errors
BaseZarrError = ZarrkitError


class ZarrFutureWarning(FutureWarning):
    """A feature used will change or go away (shown to end users)."""


class UnstableSpecificationWarning(ZarrFutureWarning):
    """A feature used is outside the Zarr specification, or not yet settled in it."""


class ZarrDeprecationWarning(DeprecationWarning):
    """A name or argument used is deprecated and will be removed."""


class ZarrUserWarning(UserWarning):
    """A problem in how zarrkit is called that does not stop it."""


class ZarrRuntimeWarning(RuntimeWarning):
    """Dubious behaviour at run time (a store or data that works, but not as meant)."""
