"""The plots of the ZB chunkings and of the thread-scaling table, drawn from the report's tables.

``run.py --out REPORT`` calls :func:`add_figures` on the report it wrote, which reads the
numbers back from the tables (so a plot always shows the figures printed beside it), saves the
PNGs beside the report and adds each one, with its caption, at the end of its section:

* ``zb_chunkings.png`` (end of the ZB8 section, or of the ZB one alone): every ZB operation's
  warm throughput per library, one panel per chunking, the cold run as a marker;
* ``thread_scaling.png`` (end of the thread-scaling section): measured speed-up at 2 threads
  and the Amdahl projection to 16 cores, one panel per array.

To draw them again from a committed report, without running any benchmark::

    python benchmarks/scaling_plots.py [benchmarks/RESULTS.md]
"""

from __future__ import annotations

import os
import re
import sys
import textwrap
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from growth_plots import STYLES, _pyplot, _save, first_table, number

ZB_HEADS = {"ZB": "## ZB: ", "ZB8": "## ZB8: "}
THREADS_HEAD = "## Thread scaling"
FIGURE = re.compile(r"^!\[[^\]]*\]\(((?:zb_chunkings|thread_scaling)\.png)\)\s*$")
PROJECTED = (4, 8, 16)


def _sections(lines: list[str]) -> dict[str, tuple[int, int]]:
    """``(start, stop)`` of each ``## `` section, by its heading line."""
    starts = [i for i, line in enumerate(lines) if line.startswith("## ")]
    return {lines[s]: (s, starts[k + 1] if k + 1 < len(starts) else len(lines))
            for k, s in enumerate(starts)}


def _find(sections: dict[str, tuple[int, int]], head: str) -> tuple[int, int] | None:
    return next((v for k, v in sections.items() if k.startswith(head)), None)


def zb_tables(lines: list[str]) -> list[tuple[str, list[dict[str, str]]]]:
    """``(operation, rows)`` of every ``###`` table of a ZB section."""
    out = []
    starts = [i for i, line in enumerate(lines) if line.startswith("### ")]
    for k, s in enumerate(starts):
        stop = starts[k + 1] if k + 1 < len(starts) else len(lines)
        op = re.sub(r"^### ZB8? ", "", lines[s]).split(" (")[0]
        out.append((op, first_table(lines[s:stop])))
    return out


def _seconds(cell: str) -> float | None:
    v = number(cell or "")
    if v is None:
        return None
    return v / 1e3 if cell.strip().endswith("ms") else v


def zb_figure(parts: dict[str, list[str]]) -> tuple[Any, str, str, str]:
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(parts), figsize=(max(9.0, 7.0 * len(parts)), 9.0),
                             sharex=True, squeeze=False)
    libs: list[str] = []
    for lines in parts.values():
        for _, rows in zb_tables(lines):
            for r in rows:
                if r.get("library") and r["library"] not in libs:
                    libs.append(r["library"])
    top = 0.0
    for ax, (w, lines) in zip(axes[0], parts.items()):
        tables = zb_tables(lines)
        ops = [op for op, _ in tables]
        height = 0.8 / max(len(libs), 1)
        for j, lib in enumerate(libs):
            colour = STYLES[j % len(STYLES)][0]
            ys, warm, cold = [], [], []
            for i, (_, rows) in enumerate(tables):
                r = next((r for r in rows if r.get("library") == lib), None)
                mibs = number(r.get("MiB/s", "")) if r else None
                if not mibs:
                    continue
                tw, tc = _seconds(r.get("warm", "")), _seconds(r.get("cold", ""))
                ys.append(i + (j - (len(libs) - 1) / 2) * height)
                warm.append(mibs)
                cold.append(mibs * tw / tc if tw and tc else None)
            if not ys:
                continue
            ax.barh(ys, warm, height=height * 0.9, color=colour, label=lib)
            pts = [(c, y) for c, y in zip(cold, ys) if c]
            if pts:
                ax.plot([c for c, _ in pts], [y for _, y in pts], linestyle="none",
                        marker="|", markersize=9, color="black",
                        label="cold (first run in a fresh process)" if j == 0 else None)
            top = max(top, *warm, *(c for c in cold if c))
        ax.set_yticks(range(len(ops)))
        ax.set_yticklabels([op.replace(" one by one", "\none by one") for op in ops],
                           fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel("MiB/s (uncompressed bytes; warm = median of repeated runs)")
        title = lines[0][3:].split(" (")[0]
        size = re.search(r"\((.*)\)\s*$", lines[0])
        ax.set_title(textwrap.fill(f"{title} ({size.group(1) if size else ''})", 75),
                     fontsize=8.5)
        ax.grid(axis="x", alpha=0.3)
    for ax in axes[0]:
        ax.set_xlim(0, top * 1.08 if top else 1)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(3, len(labels)), fontsize=8,
               frameon=False)
    fig.tight_layout(rect=(0, 0.09, 1, 1))
    caption = ("Throughput of every ZB operation (bars: warm, the median of the runs repeated "
               "in one process; ticks: the cold run, the first in a fresh process), with "
               "zarrs' published chunking and with chunks and shards 8x smaller. A library "
               "missing from an operation was not available or failed (see the tables).")
    return fig, "zb_chunkings.png", "ZB throughput, published and 8x smaller chunks", caption


def thread_rows(lines: list[str]) -> list[dict[str, str]]:
    return [r for r in first_table(lines) if r.get("2 threads") and number(r["2 threads"])]


def threads_figure(lines: list[str]) -> tuple[Any, str, str, str]:
    plt = _pyplot()
    rows = thread_rows(lines)
    arrays = list(dict.fromkeys(r["array"] for r in rows))
    fig, axes = plt.subplots(1, len(arrays), figsize=(6 * len(arrays), 4.8), sharey=True,
                             squeeze=False)
    cores = [1, 2, *PROJECTED]
    top = 2.0
    for ax, name in zip(axes[0], arrays):
        for j, r in enumerate(x for x in rows if x["array"] == name):
            colour, marker, _ = STYLES[j % len(STYLES)]
            s = number(r["serial share s"])
            speed = number(r["speed-up"])
            ax.plot([1, 2], [1.0, speed], color=colour, marker=marker, linestyle="-",
                    label=f"{r['library']}: measured")
            if s is not None:
                proj = [1.0 / (s + (1.0 - s) / n) for n in cores]
                ax.plot(cores, proj, color=colour, marker=marker, linestyle=":",
                        markerfacecolor="none", label=f"{r['library']}: projected")
                top = max(top, *proj)
            top = max(top, speed)
        ax.plot(cores, cores, color="#999999", linestyle="--", linewidth=0.8,
                label="linear")
        ax.set_xscale("log", base=2)
        ax.set_xticks(cores)
        ax.set_xticklabels([str(c) for c in cores])
        ax.set_xlabel("threads / cores")
        ax.set_title(f"{name} array", fontsize=9)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("speed-up over 1 thread")
    for ax in axes[0]:
        ax.set_ylim(0, min(top * 1.1, 17))
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=7.5, frameon=False)
    fig.tight_layout(rect=(0, 0.2, 1, 1))
    caption = ("Solid: the measured speed-up of a whole-array read with 2 threads over 1; "
               "dotted: Amdahl's law from the serial share s of the table (from the 2-thread "
               "run's CPU time over wall time), a ceiling for more cores; dashed grey: linear.")
    return fig, "thread_scaling.png", "Thread scaling of chunk-bound reads", caption


def _strip_figure(body: list[str]) -> list[str]:
    cut = next((i for i, line in enumerate(body) if FIGURE.match(line)), len(body))
    body = body[:cut]
    while body and not body[-1].strip():
        body.pop()
    return body


def add_figures(report: str, directory: str) -> str:
    """``report`` with its ZB-chunkings and thread-scaling figures drawn into ``directory``
    and added at the end of their sections (replacing any there before)."""
    try:
        _pyplot()
    except ImportError:
        return report
    lines = report.split("\n")
    secs = _find_all(lines)
    inserts: dict[int, list[str]] = {}  # section end -> lines to put there
    spans: list[tuple[int, int]] = []
    zb = {w: lines[a:b] for w, head in ZB_HEADS.items()
          if (sp := _find(secs, head)) is not None for a, b in [sp]}
    if zb:
        parts = {w: _strip_figure(v) for w, v in zb.items()}
        if any(zb_tables(v) for v in parts.values()):
            fig, name, title, caption = zb_figure(parts)
            _save(fig, directory, name)
            last = _find(secs, ZB_HEADS["ZB8"] if "ZB8" in zb else ZB_HEADS["ZB"])
            inserts[last[1]] = [f"![{title}]({name})", "", f"*{caption}*", ""]
        spans += [_find(secs, ZB_HEADS[w]) for w in zb]
    th = _find(secs, THREADS_HEAD)
    if th is not None:
        body = _strip_figure(lines[th[0]:th[1]])
        if thread_rows(body):
            fig, name, title, caption = threads_figure(body)
            _save(fig, directory, name)
            inserts[th[1]] = [f"![{title}]({name})", "", f"*{caption}*", ""]
        spans.append(th)
    out: list[str] = []
    i = 0
    for a, b in sorted(spans):
        out += lines[i:a]
        body = _strip_figure(lines[a:b])
        out += body + [""] + inserts.get(b, [])
        i = b
    out += lines[i:]
    return "\n".join(out)


def _find_all(lines: list[str]) -> dict[str, tuple[int, int]]:
    return _sections(lines)


def replot(report: str) -> None:
    with open(report, encoding="utf-8") as f:
        text = f.read()
    new = add_figures(text, os.path.dirname(os.path.abspath(report)))
    with open(report, "w", encoding="utf-8") as f:
        f.write(new)


if __name__ == "__main__":
    replot(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "RESULTS.md"))
