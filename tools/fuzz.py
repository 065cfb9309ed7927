"""Long fuzzing runs of what zarrkit parses from a store (the targets of tests/adversarial).

    python tools/fuzz.py --target metadata --seconds 600
    python tools/fuzz.py --target all --seconds 300 --seed 7
    python tools/fuzz.py --target zip --seconds 600 --engine atheris   # pip install atheris
    python tools/fuzz.py --target chunk --replay                       # the saved reproducers

Targets: metadata, chunk, shard, zip (see tests/adversarial/fuzz_targets.py).  The built-in
engine (tests/adversarial/fuzzing.py) is coverage-guided through sys.monitoring; with
``--engine atheris`` libFuzzer drives the same targets (atheris has Linux x86-64 wheels).

Each finding -- an exception other than a zarrkit error, a wrong result, a memory peak over
64 MiB, a case over 10 s, an audited unsafe call, or the death of the process itself (a
segfault in a codec) -- is made smaller and saved as
``tests/adversarial/corpus/<target>/<kind>-<hash>``, which the test suite replays
(tests/adversarial/test_fuzz_coverage.py): fix the bug, keep the file.  The cases run in a
child process with its address space limited (``--memory-limit-mb``); when it dies, the input
in flight is saved and a new child carries on with the next seed.  The run ends with a
summary per target: executions, rate, corpus size, lines and branch directions of zarrkit
reached (by the seeds alone -> in the end) and lines reached per part of the source.
"""

from __future__ import annotations

import argparse
import atexit
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HERE = ROOT / "tests" / "adversarial"
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "src"))

NAMES = ["metadata", "chunk", "shard", "zip"]
#: reproducers that end the process: replayed by --replay only (a fuzzing run would end at once)
FATAL = ("hang-", "signal")


def save(target: str, kind: str, data: bytes, folder: Path) -> Path:
    folder = folder / target
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{kind}-{hashlib.sha1(data).hexdigest()[:12]}"
    path.write_bytes(data)
    return path


def limit_memory(megabytes: int) -> None:
    if megabytes:
        import resource

        limit = megabytes * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def child(args: argparse.Namespace) -> int:
    """Fuzz (or replay) one target in this process; the supervisor restarts it if it dies."""
    limit_memory(args.memory_limit_mb)
    if args.engine == "atheris":
        return child_atheris(args)
    import fuzzing
    from fuzz_targets import TARGETS

    target = TARGETS[args.target]
    describe = getattr(target, "describe", None)
    current = os.open(args.current, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644) if args.current else None

    def emit(record: dict) -> None:
        if args.json:
            print(json.dumps(record), flush=True)

    count = [0]

    def before(data: bytes) -> None:  # the input in flight, for a death of the process
        if current is not None:
            os.ftruncate(current, 0)
            os.pwrite(current, data, 0)
        count[0] += 1
        if count[0] % 1000 == 0:  # what the supervisor counts if this process dies
            emit({"progress": count[0]})

    if args.replay:
        return replay(args, target, fuzzing, before, emit)

    def on_hang(data: bytes) -> None:
        path = save(target.name, "hang", data, args.save_to) if args.save_to else None
        print(f"hang over {fuzzing.HANG_LIMIT:.0f} s ({describe(data) if describe else ''}), input "
              f"saved as {path}", file=sys.stderr, flush=True)
        emit({"hang": describe(data) if describe else "", "saved": str(path)})
        os._exit(3)

    seen: set[tuple[str, str, str]] = set()

    def on_finding(f: fuzzing.Finding) -> None:
        if f.signature in seen:  # one reproducer per kind of failure and place
            return
        seen.add(f.signature)
        if f.kind not in ("hang", "memory"):  # quick to run again: save a smaller input
            f = fuzzing.minimize(target.run, f, describe=describe)
        path = save(target.name, f.kind, f.data, args.save_to) if args.save_to else None
        print(f"[{f.kind}] {f.summary} at {f.where} -> {path} ({len(f.data)} bytes)",
              file=sys.stderr, flush=True)

    saved = [] if args.fresh else [
        data for path, data in fuzzing.saved_inputs(target.name, args.corpus)
        if not path.name.startswith(FATAL)]
    if args.keep:
        saved += [data for _, data in fuzzing.saved_inputs(target.name, args.keep)]

    def keep(data: bytes) -> None:
        if args.keep:
            save(target.name, "input", data, args.keep)

    watchdog = fuzzing.Watchdog(on_hang)
    report = fuzzing.fuzz(target, seconds=args.seconds, executions=args.executions, seed=args.seed,
                          extra_inputs=saved, on_finding=on_finding, on_new_input=keep,
                          watchdog=watchdog, before_case=before)
    watchdog.close()
    print(report.summary(), file=sys.stderr, flush=True)
    for seconds, data in sorted(report.slow, reverse=True)[:5]:
        print(f"  slow case: {seconds:.1f} s, {len(data)} bytes", file=sys.stderr, flush=True)
    emit({"target": report.target, "executions": report.executions, "seconds": report.seconds,
          "corpus": report.corpus, "seed_coverage": report.seed_coverage, "coverage": report.coverage,
          "files": report.files, "slow": [s for s, _ in report.slow],
          "findings": [{"kind": f.kind, "summary": f.summary, "where": f.where, "size": len(f.data)}
                       for f in report.findings.values()]})
    return 0


def replay(args, target, fuzzing, before, emit) -> int:
    """Run every saved input of the target once under the oracle."""
    import tracemalloc

    # the target builds its stores on first use (writing the seed arrays: LZMA's encoder alone
    # takes some 90 MiB); that is no saved input's memory or time, so it happens first
    target.seeds()
    tracemalloc.start()
    fuzzing._install_audit_hook()
    describe = getattr(target, "describe", None)
    watchdog = fuzzing.Watchdog(lambda data: (emit({"hang": describe(data) if describe else ""}), os._exit(3)))
    failed = 0
    for path, data in fuzzing.saved_inputs(target.name, args.corpus):
        before(data)
        f = fuzzing.run_case(target.run, data, watchdog, describe).finding
        emit({"file": path.name, "finding": None if f is None else
              {"kind": f.kind, "summary": f.summary, "where": f.where}})
        if f is not None:
            failed += 1
            print(f"{path}: [{f.kind}] {f.summary} at {f.where}", file=sys.stderr, flush=True)
    watchdog.close()
    return 1 if failed else 0


def child_atheris(args: argparse.Namespace) -> int:
    import atheris

    with atheris.instrument_imports(include=["zarrkit"]):
        import zarrkit  # noqa: F401
    import tracemalloc

    import fuzzing
    from fuzz_targets import TARGETS

    target = TARGETS[args.target]
    work = Path(tempfile.mkdtemp(prefix=f"zarrkit-atheris-{target.name}-"))
    seeds = work / "corpus"
    seeds.mkdir()
    for i, data in enumerate(target.seeds()):
        (seeds / f"seed-{i}").write_bytes(data)
    for path, data in fuzzing.saved_inputs(target.name, args.corpus):
        if not path.name.startswith(FATAL):
            (seeds / path.name).write_bytes(data)
    tokens = work / "tokens.dict"
    tokens.write_text("".join('"' + "".join(f"\\x{b:02x}" for b in t) + '"\n' for t in target.dictionary))
    tracemalloc.start()
    fuzzing._install_audit_hook()
    describe = getattr(target, "describe", None)
    seen: set[tuple[str, str, str]] = set()

    def one_input(data: bytes) -> None:
        f = fuzzing.run_case(target.run, data, describe=describe).finding
        if f is not None and f.signature not in seen:
            seen.add(f.signature)
            path = save(target.name, f.kind, f.data, args.save_to) if args.save_to else None
            print(f"[{f.kind}] {f.summary} at {f.where} -> {path}", flush=True)

    argv = [sys.argv[0], f"-max_total_time={int(args.seconds or 60)}", f"-seed={args.seed + 1}",
            f"-dict={tokens}", f"-max_len={target.max_len}", "-timeout=20", "-rss_limit_mb=0",
            str(seeds)]
    atheris.Setup(argv, one_input)
    atheris.Fuzz()
    return 0


def supervise(args: argparse.Namespace, target: str) -> int:
    """Run children until the time is up, saving the input that killed one."""
    deadline = time.monotonic() + (args.seconds or 0)
    current = Path(tempfile.mkdtemp(prefix="zarrkit-fuzz-")) / "current"
    atexit.register(_cleanup, current.parent)
    seed, status = args.seed, 0
    executions = children = 0

    def total() -> int:
        if children > 1:
            print(f"{target}: {executions} executions in {children} processes in all", flush=True)
        return status

    while True:
        left = deadline - time.monotonic()
        if args.seconds and left < 1:
            return total()
        cmd = [sys.executable, __file__, "--child", "--target", target, "--seed", str(seed),
               "--engine", args.engine, "--current", str(current), "--corpus", str(args.corpus),
               "--save-to", str(args.save_to), "--memory-limit-mb", str(args.memory_limit_mb)]
        cmd += ["--seconds", f"{left:.0f}"] if args.seconds else []
        cmd += ["--executions", str(args.executions)] if args.executions else []
        cmd += ["--keep", str(args.keep)] if args.keep else []
        cmd += ["--replay"] if args.replay else []
        cmd += ["--fresh"] if args.fresh else []
        proc = subprocess.run([*cmd, "--json"], stdout=subprocess.PIPE, text=True, check=False)
        code = proc.returncode
        children += 1
        records = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
        done = [r["executions"] for r in records if "executions" in r]
        executions += done[0] if done else max([r["progress"] for r in records if "progress" in r], default=0)
        if args.json:
            print("\n".join(json.dumps(r) for r in records if "progress" not in r), flush=True)
        if code < 0 and current.exists():
            path = save(target, f"signal{-code}", current.read_bytes(), args.save_to)
            print(f"the fuzzing process died of {signal.Signals(-code).name}; input saved as {path}",
                  flush=True)
            status = 1
        elif code == 3 and not args.replay:  # a hang, saved by the child
            status = 1
        else:
            status = status or code
            return total()
        if args.replay:
            return 1
        seed += 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--target", default="all", choices=[*NAMES, "all"])
    p.add_argument("--seconds", type=float, help="time per target (default 60 s)")
    p.add_argument("--executions", type=int, help="mutated cases per target (instead of time)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--engine", default="builtin", choices=["builtin", "atheris"])
    p.add_argument("--corpus", type=Path, default=HERE / "corpus",
                   help="the saved inputs replayed first (default tests/adversarial/corpus)")
    p.add_argument("--save-to", type=Path, help="where findings are saved (default: --corpus)")
    p.add_argument("--keep", type=Path, help="also save every input that reached new code here "
                   "(and start from the inputs saved there)")
    p.add_argument("--replay", action="store_true", help="run the saved inputs once, and stop")
    p.add_argument("--fresh", action="store_true", help="start from the seeds alone")
    p.add_argument("--memory-limit-mb", type=int, default=3072,
                   help="address space of the process running the cases (0: no limit)")
    p.add_argument("--json", action="store_true", help="print results as JSON lines")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--current", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.save_to is None:
        args.save_to = args.corpus
    if args.seconds is None and args.executions is None:
        args.seconds = 60.0
    if args.child:
        return child(args)
    status = 0
    for target in NAMES if args.target == "all" else [args.target]:
        status |= supervise(args, target)
    return status


def _cleanup(folder: Path) -> None:
    import shutil

    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
