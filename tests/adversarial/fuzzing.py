"""A small coverage-guided fuzzer: mutate inputs, keep those that reach new code of zarrkit.

The engine knows nothing about Zarr.  A *target* (see ``fuzz_targets.py``) turns bytes into one
case -- a store to open and read -- and the engine

* measures which lines and branches of zarrkit's source each case reaches
  (:mod:`sys.monitoring` on Python 3.12+, a :func:`sys.settrace` line tracer before that) and
  keeps the inputs that reach new ones in its corpus, to mutate them further;
* judges every case by one oracle: the only exceptions allowed out of zarrkit are
  :class:`zarrkit.errors.ZarrkitError` subclasses (plus what a target's own checks say), no
  case allocates more than :data:`MEMORY_LIMIT` (tracemalloc peak), none runs longer than
  :data:`HANG_LIMIT` (cases over :data:`SLOW_LIMIT` are listed, not failed), and none makes
  an audited call that could run foreign code (unpickling a global, starting a process,
  loading a library, opening a socket).

``python tools/fuzz.py`` runs it for a long time (or under atheris, with the same targets);
``test_fuzz_coverage.py`` runs a brief, deterministic pass in the test suite.
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import random
import re
import sys
import threading
import time
import traceback
import tracemalloc
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from zarrkit.errors import ZarrkitError

SRC = Path(__file__).resolve().parents[2] / "src" / "zarrkit"
CORPUS = Path(__file__).resolve().parent / "corpus"

SLOW_LIMIT = 2.0  # seconds: listed in the report
HANG_LIMIT = 10.0  # seconds: a failure
MEMORY_LIMIT = 64 * 2**20  # tracemalloc peak of one case

#: audit events no reader of a store may cause (see :func:`sys.addaudithook`)
UNSAFE_EVENTS = frozenset({
    "pickle.find_class", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
    "os.forkpty", "subprocess.Popen", "ctypes.dlopen", "socket.connect", "socket.bind",
    "webbrowser.open", "shutil.rmtree", "os.remove", "os.unlink", "os.rmdir",
})


class OracleError(AssertionError):
    """A target's own check failed (a result of the wrong shape, the wrong error class...)."""


@dataclasses.dataclass
class Finding:
    """One input that broke the oracle."""

    kind: str  # 'crash', 'oracle', 'memory', 'hang', 'unsafe'
    summary: str  # exception type and message, or the measurement
    where: str  # the innermost frame in zarrkit (or the event), for de-duplication
    data: bytes
    detail: str = ""

    @property
    def signature(self) -> tuple[str, str, str]:
        if self.kind in ("memory", "hang"):  # the figures differ from case to case
            return self.kind, "", self.where
        return self.kind, self.summary.split(":", 1)[0], self.where

    @property
    def name(self) -> str:
        return f"{self.kind}-{hashlib.sha1(self.data).hexdigest()[:12]}"


# =============================================================================================
# coverage


class Coverage:
    """Lines and branch directions of zarrkit's source reached since :meth:`start`.

    Each location reports once and is then switched off (``sys.monitoring.DISABLE``), so code
    already covered runs at nearly full speed; :attr:`new` counts what the last case added."""

    def __init__(self, root: Path = SRC):
        self.prefix = str(root)
        self.lines: set[tuple[str, int]] = set()
        self.branches: set[tuple[Any, int, int]] = set()
        self._dests: dict[tuple[Any, int], int] = {}
        self.new = 0
        self._tool: int | None = None
        self._mon = getattr(sys, "monitoring", None)

    # -- sys.monitoring (3.12+) ------------------------------------------------------------------
    def _line(self, code, line):
        if not code.co_filename.startswith(self.prefix):
            return self._mon.DISABLE
        key = (code.co_filename, line)
        if key not in self.lines:
            self.lines.add(key)
            self.new += 1
        return self._mon.DISABLE

    def _branch(self, code, offset, dest):
        if not code.co_filename.startswith(self.prefix):
            return self._mon.DISABLE
        key = (code, offset, dest)
        if key in self.branches:
            return None
        self.branches.add(key)
        self.new += 1
        n = self._dests[code, offset] = self._dests.get((code, offset), 0) + 1
        # a conditional jump has two directions; once both are seen it is covered
        return self._mon.DISABLE if n >= 2 else None

    # -- sys.settrace (3.11) ---------------------------------------------------------------------
    def _trace(self, frame, event, arg):
        if not frame.f_code.co_filename.startswith(self.prefix):
            return None
        last = [frame.f_lineno]

        def local(frame, event, arg):
            if event == "line":
                line = frame.f_lineno
                key = (frame.f_code.co_filename, line)
                if key not in self.lines:
                    self.lines.add(key)
                    self.new += 1
                arc = (frame.f_code, last[0], line)
                if arc not in self.branches:
                    self.branches.add(arc)
                    self.new += 1
                last[0] = line
            return local

        return local

    def start(self) -> None:
        mon = self._mon
        if mon is None:
            sys.settrace(self._trace)
            threading.settrace(self._trace)
            return
        for tool in (3, 4, 1, 2):
            try:
                mon.use_tool_id(tool, "zarrkit-fuzz")
            except ValueError:
                continue
            self._tool = tool
            break
        else:
            raise RuntimeError("no free sys.monitoring tool id")
        mon.register_callback(self._tool, mon.events.LINE, self._line)
        mon.register_callback(self._tool, mon.events.BRANCH, self._branch)
        mon.set_events(self._tool, mon.events.LINE | mon.events.BRANCH)
        mon.restart_events()  # locations another run switched off report again

    def stop(self) -> None:
        if self._mon is None:
            sys.settrace(None)
            threading.settrace(None)  # type: ignore[arg-type]
            return
        if self._tool is not None:
            self._mon.set_events(self._tool, 0)
            self._mon.register_callback(self._tool, self._mon.events.LINE, None)
            self._mon.register_callback(self._tool, self._mon.events.BRANCH, None)
            self._mon.free_tool_id(self._tool)
            self._tool = None

    def take_new(self) -> int:
        n, self.new = self.new, 0
        return n

    def report(self, parts: Iterable[str]) -> dict[str, tuple[int, int]]:
        """``{part: (lines reached, executable lines)}`` for files or folders under ``src/zarrkit``."""
        out = {}
        for part in parts:
            files = [SRC / part] if part.endswith(".py") else sorted((SRC / part).rglob("*.py"))
            total = reached = 0
            for f in files:
                lines = executable_lines(f)
                total += len(lines)
                reached += sum(1 for ln in lines if (str(f), ln) in self.lines)
            out[part] = (reached, total)
        return out


def executable_lines(path: Path) -> set[int]:
    """The lines of a source file's functions that hold code, as the compiler numbers them
    (module and class bodies run when zarrkit is imported, not in a case: left out)."""
    code = compile(path.read_text(), str(path), "exec")
    lines: set[int] = set()
    todo = [code]
    while todo:
        c = todo.pop()
        if c.co_flags & inspect.CO_OPTIMIZED:
            lines.update(ln for _, _, ln in c.co_lines() if ln is not None)
        todo.extend(k for k in c.co_consts if hasattr(k, "co_lines"))
    return lines


# =============================================================================================
# mutation

INTERESTING_8 = [0, 1, 0x7F, 0x80, 0xFF, ord("0"), ord("9"), ord("-"), ord('"'), ord("["), ord("{")]
INTERESTING_INT = [0, 1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 63, 64, 127, 128, 255, 256, 1023, 1024,
                   4095, 4096, 65535, 65536, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**62, 2**63 - 1,
                   2**63, 2**64 - 1, 2**64 - 2]
NUMBER_TEXT = [b"0", b"-1", b"1", b"2", b"3", b"255", b"65536", b"2147483648", b"4294967296",
               b"9223372036854775807", b"9223372036854775808", b"18446744073709551615",
               b"100000000000000000000", b"1e308", b"1e999", b"-1e999", b"NaN", b"Infinity",
               b"0.5", b"-0", b"1.0", b"null", b"true", b"[]", b"{}", b'""']


class Mutator:
    """Byte-level havoc: 1-8 stacked mutations from bit flips to splices and dictionary tokens."""

    def __init__(self, rng: random.Random, dictionary: Sequence[bytes], max_len: int):
        self.rng = rng
        self.dictionary = list(dictionary) or [b"\x00"]
        self.max_len = max_len

    def _pos(self, b: bytearray, extra: int = 0) -> int:
        return self.rng.randrange(len(b) + extra) if len(b) + extra else 0

    def _int(self, b: bytearray) -> None:
        r = self.rng
        width = r.choice((2, 4, 8))
        if len(b) < width:
            return
        pos = r.randrange(len(b) - width + 1)
        if r.random() < 0.3:  # near an aligned field: shard indexes and zip records are
            pos -= pos % width
        order = r.choice(("little", "big"))
        if r.random() < 0.5:
            value = r.choice(INTERESTING_INT)
        else:
            value = int.from_bytes(b[pos:pos + width], order) + r.randint(-35, 35)
        b[pos:pos + width] = (value % 2 ** (8 * width)).to_bytes(width, order)

    def _number(self, b: bytearray) -> None:
        runs = [m.span() for m in re.finditer(rb"-?[0-9][0-9.eE+-]*|null|true|false", bytes(b))]
        if runs:
            start, stop = self.rng.choice(runs)
            b[start:stop] = self.rng.choice(NUMBER_TEXT)

    def one(self, b: bytearray, other: bytes) -> None:
        r = self.rng
        op = r.randrange(13)
        if op == 0 and b:
            b[self._pos(b)] ^= 1 << r.randrange(8)
        elif op == 1 and b:
            b[self._pos(b)] = r.choice(INTERESTING_8)
        elif op == 2 and b:
            b[self._pos(b)] = r.randrange(256)
        elif op == 3:
            self._int(b)
        elif op == 4 and b:  # delete a range
            start = self._pos(b)
            del b[start:start + r.choice((1, 1, 2, 4, 8, r.randint(1, max(1, len(b) // 2))))]
        elif op == 5:  # insert random bytes
            b[self._pos(b, 1):0] = bytes(r.randrange(256) for _ in range(r.choice((1, 2, 4, 8))))
        elif op == 6 and b:  # duplicate a range
            start = self._pos(b)
            chunk = b[start:start + r.randint(1, 64)]
            b[self._pos(b, 1):0] = chunk
        elif op in (7, 8):  # insert or overwrite a dictionary token
            token = r.choice(self.dictionary)
            pos = self._pos(b, 1)
            if op == 7:
                b[pos:pos] = token
            else:
                b[pos:pos + len(token)] = token
        elif op == 9 and other:  # splice with another corpus input
            cut = self._pos(b, 1)
            start = r.randrange(len(other))
            b[cut:] = other[start:start + r.randint(1, len(other))]
        elif op == 10:
            self._number(b)
        elif op == 11 and len(b) > 1:  # truncate
            del b[r.randrange(1, len(b)):]
        elif op == 12 and b:  # copy a range over another place
            src = self._pos(b)
            n = r.randint(1, 16)
            dst = self._pos(b)
            b[dst:dst + n] = b[src:src + n]

    def mutate(self, data: bytes, other: bytes = b"") -> bytes:
        b = bytearray(data)
        for _ in range(1 + min(int(self.rng.expovariate(0.7)), 7)):
            self.one(b, other)
        return bytes(b[: self.max_len])


# =============================================================================================
# running one case under the oracle


class Watchdog:
    """A thread that notices a case running too long: records cases over :data:`SLOW_LIMIT`
    and calls ``on_hang(data)`` for one over :data:`HANG_LIMIT` (which may end the process)."""

    def __init__(self, on_hang: Callable[[bytes], None] | None = None):
        self.on_hang = on_hang
        self._case: tuple[bytes, float] | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="fuzz-watchdog", daemon=True)
        self._thread.start()

    def arm(self, data: bytes) -> None:
        self._case = (data, time.monotonic())

    def disarm(self) -> None:
        self._case = None

    def _watch(self) -> None:
        reported = None
        while not self._stop.wait(0.5):
            case = self._case
            if case is None or case is reported:
                continue
            if time.monotonic() - case[1] > HANG_LIMIT:
                reported = case
                if self.on_hang is not None:
                    self.on_hang(case[0])

    def close(self) -> None:
        self._stop.set()
        self._thread.join()


_audit = {"active": False, "events": []}


def _audit_hook(event: str, args: tuple) -> None:
    if _audit["active"] and event in UNSAFE_EVENTS:
        _audit["events"].append(f"{event}{args!r:.200}")


_hook_installed = False


def _install_audit_hook() -> None:
    global _hook_installed
    if not _hook_installed:
        sys.addaudithook(_audit_hook)  # cannot be removed: it does nothing while inactive
        _hook_installed = True


def _where(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if f.filename.startswith(str(SRC))] or frames[-1:]
    if not ours:
        return "?"
    f = ours[-1]
    return f"{Path(f.filename).relative_to(SRC.parent) if f.filename.startswith(str(SRC)) else f.filename}:{f.lineno}"


@dataclasses.dataclass
class Outcome:
    seconds: float
    peak: int
    finding: Finding | None


def run_case(run: Callable[[bytes], None], data: bytes, watchdog: Watchdog | None = None,
             describe: Callable[[bytes], str] | None = None) -> Outcome:
    """Run one case of a target under the oracle; ``describe(data)`` names the case for findings
    that have no traceback (memory, hangs).  Allocations are traced during the case only
    (tracing the fuzzer's own mutations would cost more than the cases)."""
    tracing = tracemalloc.is_tracing()
    if not tracing:
        tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    finding = None
    _audit["events"] = []
    _audit["active"] = True
    if watchdog:
        watchdog.arm(data)
    start = time.perf_counter()
    try:
        run(data)
    except ZarrkitError:
        pass
    except OracleError as exc:
        finding = Finding("oracle", f"{exc}"[:300], _where(exc), data, traceback.format_exc())
    except RecursionError as exc:
        finding = Finding("crash", f"RecursionError: {exc}"[:300], _where(exc), data, "")
    except Exception as exc:  # noqa: BLE001 - the oracle: everything else is a finding
        finding = Finding("crash", f"{type(exc).__name__}: {exc}"[:300], _where(exc), data,
                          traceback.format_exc())
    finally:
        seconds = time.perf_counter() - start
        _audit["active"] = False
        if watchdog:
            watchdog.disarm()
    peak = tracemalloc.get_traced_memory()[1] - base
    if not tracing:
        tracemalloc.stop()
    if finding is None and _audit["events"]:
        finding = Finding("unsafe", _audit["events"][0], _audit["events"][0].split("(")[0], data)
    if finding is None and peak > MEMORY_LIMIT:
        finding = Finding("memory", f"peak {peak / 2**20:.0f} MiB", describe(data) if describe else "", data)
    if finding is None and seconds > HANG_LIMIT:
        finding = Finding("hang", f"{seconds:.1f} s", describe(data) if describe else "", data)
    return Outcome(seconds, peak, finding)


# =============================================================================================
# the loop


@dataclasses.dataclass
class Report:
    target: str
    executions: int = 0
    seconds: float = 0.0
    corpus: int = 0
    seed_coverage: tuple[int, int] = (0, 0)  # lines, branches reached by the seeds alone
    coverage: tuple[int, int] = (0, 0)  # lines, branches reached in the end
    findings: dict[tuple[str, str, str], Finding] = dataclasses.field(default_factory=dict)
    slow: list[tuple[float, bytes]] = dataclasses.field(default_factory=list)
    files: dict[str, tuple[int, int]] = dataclasses.field(default_factory=dict)

    def add(self, finding: Finding) -> None:
        known = self.findings.get(finding.signature)
        if known is None or len(finding.data) < len(known.data):  # keep the smallest input
            self.findings[finding.signature] = finding

    def summary(self) -> str:
        lines, branches = self.coverage
        text = (f"{self.target}: {self.executions} executions in {self.seconds:.0f} s "
                f"({self.executions / max(self.seconds, 1e-9):.0f}/s), corpus {self.corpus}, "
                f"lines {self.seed_coverage[0]} -> {lines}, branch directions "
                f"{self.seed_coverage[1]} -> {branches}, {len(self.findings)} finding(s), "
                f"{len(self.slow)} slow case(s)")
        for part, (hit, total) in self.files.items():
            text += f"\n    {part}: {hit}/{total} lines ({100 * hit / max(total, 1):.0f}%)"
        for f in self.findings.values():
            text += f"\n  [{f.kind}] {f.summary} at {f.where} ({f.name}, {len(f.data)} bytes)"
        return text


def fuzz(
    target: Any,
    *,
    executions: int | None = None,
    seconds: float | None = None,
    seed: int = 0,
    extra_inputs: Iterable[bytes] = (),
    on_finding: Callable[[Finding], None] | None = None,
    on_new_input: Callable[[bytes], None] | None = None,
    watchdog: Watchdog | None = None,
    before_case: Callable[[bytes], None] | None = None,
) -> Report:
    """Fuzz ``target`` (an object with ``name``, ``seeds()``, ``dictionary``, ``max_len``,
    ``coverage_parts``, ``run(data)`` and optionally ``mutate(data, rng)``) for ``executions`` mutated cases or ``seconds``, whichever ends first.

    The seeds run first, then ``extra_inputs`` (saved inputs); ``before_case(data)`` is called
    before every case (the long runner keeps the input in flight on disk, for a crash that
    ends the process)."""
    rng = random.Random(f"{target.name}-{seed}")
    mutator = Mutator(rng, target.dictionary, target.max_len)
    report = Report(target.name)
    cov = Coverage()
    custom = getattr(target, "mutate", None)  # a structure-aware mutation, when it has one
    _install_audit_hook()
    start = time.perf_counter()

    def execute(data: bytes) -> bool:
        if before_case:
            before_case(data)
        outcome = run_case(target.run, data, watchdog, getattr(target, "describe", None))
        report.executions += 1
        if outcome.seconds > SLOW_LIMIT:
            report.slow.append((outcome.seconds, data))
        if outcome.finding is not None:
            report.add(outcome.finding)
            if on_finding:
                on_finding(outcome.finding)
        return cov.take_new() > 0

    cov.start()
    try:
        corpus = [data for data in target.seeds()]
        for data in corpus:
            execute(data)
        report.seed_coverage = (len(cov.lines), len(cov.branches))
        for data in extra_inputs:  # saved inputs: replayed, kept when they add coverage
            if execute(data):
                corpus.append(data)
        done = 0
        while ((executions is None or done < executions)
               and (seconds is None or time.perf_counter() - start < seconds)):
            parent = rng.choice(corpus[-64:] if rng.random() < 0.3 else corpus)
            child = custom(parent, rng) if custom is not None and rng.random() < 0.6 else None
            if child is None:
                child = mutator.mutate(parent, rng.choice(corpus))
            done += 1
            if execute(child):
                corpus.append(child)
                if on_new_input:
                    on_new_input(child)
    finally:
        cov.stop()
    report.seconds = time.perf_counter() - start
    report.corpus = len(corpus)
    report.coverage = (len(cov.lines), len(cov.branches))
    report.files = cov.report(target.coverage_parts)
    return report


def minimize(run: Callable[[bytes], None], finding: Finding, attempts: int = 1500,
             describe: Callable[[bytes], str] | None = None) -> Finding:
    """A smaller input failing the same way (same kind, error type and place): chunks of
    bytes removed while the failure stays, halving the chunk size down to single bytes."""
    best = finding
    size = max(len(best.data) // 2, 1)
    tries = 0
    while size >= 1 and tries < attempts:
        start, shrunk = 0, False
        while start < len(best.data) and tries < attempts:
            candidate = best.data[:start] + best.data[start + size:]
            tries += 1
            outcome = run_case(run, candidate, describe=describe)
            f = outcome.finding
            if f is not None and f.signature == best.signature:
                best, shrunk = f, True
            else:
                start += size
        if not shrunk:
            size //= 2
    return best


def saved_inputs(target_name: str, corpus: Path = CORPUS) -> list[tuple[Path, bytes]]:
    """The inputs saved for a target (reproducers of findings, inputs worth keeping)."""
    folder = corpus / target_name
    if not folder.is_dir():
        return []
    return [(p, p.read_bytes()) for p in sorted(folder.iterdir()) if p.is_file() and not p.name.startswith(".")]
