"""Synchronizers: per-key locks that make concurrent partial-chunk writes safe.

An array given ``synchronizer=`` takes ``synchronizer[key]`` (a context manager) around every
read-modify-write of a chunk, around resizes, appends and attribute updates.  Both
synchronizers exclude every thread from every other, and are reentrant: a thread holding a key
may take it again (``append`` holds the metadata document's key while it writes chunks, and a
user may hold a key around a call that takes it).
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
import weakref
from collections import defaultdict
from typing import Any, Self

from ..errors import LockError

__all__ = ["ThreadSynchronizer", "ProcessSynchronizer"]


class ThreadSynchronizer:
    """Provides synchronization using thread locks (one reentrant lock per key).

    Examples
    --------
    >>> import zarrkit
    >>> z = zarrkit.zeros(100, chunks=10, synchronizer=zarrkit.ThreadSynchronizer())
    >>> z[5:15] = 1
    """

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._locks: defaultdict[str, threading.RLock] = defaultdict(threading.RLock)
        _thread_synchronizers.add(self)

    def __getitem__(self, key: str) -> threading.RLock:
        with self._mutex:
            return self._locks[key]

    def __getstate__(self) -> dict[str, Any]:
        return {}

    def __setstate__(self, state: dict[str, Any]) -> None:
        type(self).__init__(self)

    def _forget_locks(self) -> None:
        # after a fork: a lock held by a thread of the parent, which the child does not have,
        # would never be released in the child
        self._mutex = threading.Lock()
        self._locks = defaultdict(threading.RLock)


_thread_synchronizers: weakref.WeakSet[ThreadSynchronizer] = weakref.WeakSet()


class ProcessSynchronizer:
    """Provides synchronization using file locks, for processes sharing a file system, and
    for the threads of each process.

    A file lock (``fcntl``) belongs to a process, not to a thread: two threads of one process
    would both be granted it.  So each process takes, per key, a thread lock first and the file
    lock only while one of its threads holds the key, with one file lock per key and process
    however many synchronizer objects (copies, unpickled ones) name the same directory.

    Parameters
    ----------
    path : str
        Directory for the lock files, shared by all processes; not the array's own directory.

    Examples
    --------
    >>> import zarrkit, tempfile
    >>> sync = zarrkit.ProcessSynchronizer(tempfile.mkdtemp())
    >>> z = zarrkit.zeros(100, chunks=10, synchronizer=sync)
    >>> z[5:15] = 1
    """

    def __init__(self, path: str | os.PathLike[str]):
        self.path: str = os.fspath(path)
        self._root = os.path.abspath(self.path)

    def __getitem__(self, key: str) -> _ProcessKeyLock:
        return _ProcessKeyLock(os.path.join(self._root, lock_file_name(key)))

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path}

    def __setstate__(self, state: dict[str, Any]) -> None:
        type(self).__init__(self, state["path"])

    def __repr__(self) -> str:
        return f"ProcessSynchronizer({self.path!r})"


#: the longest lock file name kept readable, in bytes (file systems allow 255)
_NAME_MAX = 200
#: how much of a long key a hashed name keeps readable, in characters (at most 4 bytes each)
_READABLE = 40


def lock_file_name(key: str) -> str:
    """The name of the lock file of ``key``: the key with ``/`` escaped, or, when that is too
    long for a file name, the key's beginning and its SHA-256 (the same in every process, and
    different for different keys).

    Examples
    --------
    >>> from zarrkit.core.sync import lock_file_name
    >>> lock_file_name('a/c/0')
    'a%2Fc%2F0.lock'
    >>> len(lock_file_name('x/' * 300)) <= 255
    True
    """
    name = key.replace("/", "%2F") + ".lock"
    if _file_name_bytes(name) <= _NAME_MAX:
        return name
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()
    readable = name[:_READABLE]
    if _file_name_bytes(readable) > 4 * _READABLE:  # not a name the file system can take
        readable = "key"
    return f"{readable}~{digest}.lock"


def _file_name_bytes(name: str) -> int:
    """How long ``name`` is as a file name, in bytes (past any limit when it cannot be one)."""
    try:
        return len(os.fsencode(name))
    except UnicodeEncodeError:
        return _NAME_MAX + 1 + 4 * _READABLE


class _KeyHold:
    """This process's state for one lock file: the thread lock taken before the file lock,
    how deep the holding thread has taken it, and how many holds and waits use it."""

    __slots__ = ("depth", "file_lock", "path", "pid", "thread_lock", "users")

    def __init__(self, path: str):
        import fasteners

        self.path = path
        self.thread_lock = threading.RLock()
        self.file_lock = fasteners.InterProcessLock(path)
        self.depth = 0  # changed only by the thread holding thread_lock
        self.users = 0  # changed only under _registry_mutex
        self.pid = os.getpid()


#: the holds of this process by lock file; an entry lives while a thread holds or waits for
#: it, so locking every chunk key of a large array leaves nothing behind
_registry: dict[str, _KeyHold] = {}
_registry_mutex = threading.Lock()
#: per thread: the holds it has taken, innermost last, to release the one it took
_held = threading.local()

# fasteners polls a non-blocking lock; short waits keep a contended append's latency low
# (blocking fcntl would let the kernel report a false deadlock between multithreaded processes)
_POLL_DELAY = 0.001
_POLL_MAX_DELAY = 0.02


def _use(path: str) -> _KeyHold:
    with _registry_mutex:
        hold = _registry.get(path)
        if hold is None:
            hold = _registry[path] = _KeyHold(path)
        hold.users += 1
        return hold


def _unuse(hold: _KeyHold) -> None:
    with _registry_mutex:
        hold.users -= 1
        if hold.users == 0 and _registry.get(hold.path) is hold:
            del _registry[hold.path]


def _holds() -> list[_KeyHold]:
    stack: list[_KeyHold] | None = getattr(_held, "stack", None)
    if stack is None:
        stack = _held.stack = []
    return stack


class _ProcessKeyLock:
    """The lock of one key of a :class:`ProcessSynchronizer` (a reentrant context manager)."""

    __slots__ = ("path",)

    def __init__(self, path: str):
        self.path = path

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        """Take the key, waiting for other threads and processes (at most ``timeout`` seconds
        when it is not negative); False when it was not taken."""
        deadline = None if timeout < 0 else time.monotonic() + timeout
        hold = _use(self.path)
        try:
            if not hold.thread_lock.acquire(blocking, timeout if blocking else -1):
                _unuse(hold)
                return False
        except BaseException:
            _unuse(hold)
            raise
        if hold.depth == 0:
            try:
                left = None if deadline is None else max(deadline - time.monotonic(), 0.0)
                got = hold.file_lock.acquire(blocking=blocking, delay=_POLL_DELAY,
                                             max_delay=_POLL_MAX_DELAY, timeout=left)
            except BaseException as exc:
                hold.thread_lock.release()
                _unuse(hold)
                if isinstance(exc, OSError) and not isinstance(exc, LockError):
                    raise LockError(
                        exc.errno, f"cannot take the lock file {self.path!r}: expected a file that "
                        f"can be made and locked, got {exc.strerror or exc}",
                    ) from exc
                raise
            if not got:
                hold.thread_lock.release()
                _unuse(hold)
                return False
        hold.depth += 1
        _holds().append(hold)
        return True

    def release(self) -> None:
        """Release the key; the file lock goes when the thread's outermost hold does."""
        stack = _holds()
        for i in range(len(stack) - 1, -1, -1):
            if stack[i].path == self.path:
                hold = stack.pop(i)
                break
        else:
            raise RuntimeError(f"cannot release un-acquired lock {self.path!r}")
        if hold.pid != os.getpid():
            # taken before this process was forked: the file lock stayed with the parent
            return
        hold.depth -= 1
        try:
            if hold.depth == 0:
                hold.file_lock.release()
        finally:
            hold.thread_lock.release()
            _unuse(hold)

    def __enter__(self) -> Self:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"<ProcessSynchronizer lock {self.path!r}>"


def _before_fork() -> None:
    _registry_mutex.acquire()  # the child gets a registry no thread is changing


def _after_fork_in_parent() -> None:
    _registry_mutex.release()


def _after_fork_in_child() -> None:
    # fcntl locks are not inherited, and the threads holding the parent's thread locks do not
    # exist here: the child starts with no holds (and closes its copies of the lock files)
    global _registry, _registry_mutex
    for hold in _registry.values():
        lockfile = hold.file_lock.lockfile
        if lockfile is not None:
            try:
                lockfile.close()
            except OSError:
                pass
    _registry = {}
    _registry_mutex = threading.Lock()
    for sync in list(_thread_synchronizers):
        sync._forget_locks()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                        after_in_child=_after_fork_in_child)


# Public home of the classes (zarr-python 2's ``zarr.sync``): what ``info`` shows and pickles name.
ThreadSynchronizer.__module__ = "zarrkit.sync"
ProcessSynchronizer.__module__ = "zarrkit.sync"
