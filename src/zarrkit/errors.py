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

__all__ = [
    "ZarrkitError",
    "NodeNotFoundError",
    "ArrayNotFoundError",
    "GroupNotFoundError",
    "PathNotFoundError",
    "FSPathExistNotDir",
    "NodeExistsError",
    "ContainsArrayError",
    "ContainsGroupError",
    "MetadataError",
    "UnknownCodecError",
    "UnsupportedDtypeError",
    "UnsupportedCodecError",
    "InvalidPathError",
    "ChunkDecodeError",
    "ChunkEncodeError",
    "ValueEncodeError",
    "ReadOnlyError",
    "CopyError",
    "SelectionError",
    "ArrayIndexError",
    "BoundsCheckError",
    "NegativeStepError",
    "VindexInvalidSelectionError",
    "BadCompressorError",
    "ShapeMismatchError",
    "StoreError",
    "StorageOptionsError",
    "StoreOperationNotSupported",
]


class ZarrkitError(Exception):
    """Base class of every error raised by zarrkit."""


class NodeNotFoundError(ZarrkitError, FileNotFoundError, KeyError, ValueError):
    """No array or group exists at the requested path.

    Derives from ``FileNotFoundError`` (opening a missing node), ``KeyError`` (a missing
    group member, ``g['nope']``) and ``ValueError`` (what zarr-python 2 raised for a missing
    array or group), so any of those ``except`` clauses catches it.
    """

    def __init__(self, message: str, path: str | None = None):
        super().__init__(message)
        self.path = path

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class ArrayNotFoundError(NodeNotFoundError):
    """No array exists at the requested path."""


class GroupNotFoundError(NodeNotFoundError):
    """No group exists at the requested path."""


class PathNotFoundError(NodeNotFoundError):
    """Nothing (neither an array nor a group) exists at the requested path."""


class NodeExistsError(ZarrkitError, FileExistsError, ValueError):
    """A node already exists where a new one was to be created (mode ``'w-'``).

    Also a ``ValueError``, what zarr-python 2 raised in that case.
    """

    def __init__(self, message: str, path: str | None = None):
        super().__init__(message)
        self.path = path

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class ContainsArrayError(NodeExistsError):
    """An array already exists at the path."""


class ContainsGroupError(NodeExistsError):
    """A group already exists at the path."""


class MetadataError(ZarrkitError, ValueError):
    """Metadata is malformed, inconsistent or not understood.

    ``key`` names the metadata document (e.g. ``'foo/.zarray'``) when known.
    """

    def __init__(self, message: str, key: str | None = None):
        if key is not None and key not in message:
            message = f"{key}: {message}"
        super().__init__(message)
        self.key = key


class UnknownCodecError(MetadataError):
    """A codec id or name is not registered."""


class UnsupportedDtypeError(MetadataError):
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


class ReadOnlyError(ZarrkitError, PermissionError):
    """A write was attempted on a read-only array, group, view or store."""

    def __init__(self, message: str = "object is read-only"):
        super().__init__(message)


class CopyError(ZarrkitError, RuntimeError):
    """A copy cannot proceed: an object exists in the destination and ``if_exists='raise'``,
    or the source has no equivalent in the destination's format."""


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


class StorageOptionsError(ZarrkitError, TypeError, ValueError):
    """Storage options that cannot apply (given with a file system instance or a mapper);
    a ``TypeError`` for a wrong argument and a ``ValueError`` as zarr-python 2 raised."""


class StoreOperationNotSupported(StoreError, NotImplementedError):
    """The store cannot do this at all (a zip file's members cannot be deleted); also a
    ``NotImplementedError``, as zarr-python 2 raised."""


class FSPathExistNotDir(GroupNotFoundError, StoreError):
    """A store's directory path exists but is a file, not a directory."""
