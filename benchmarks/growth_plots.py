"""The plots of the benchmark report's cost-growth section, drawn from the report's own tables.

``growth.py`` renders the section's tables and then calls :func:`add_figures`, which reads the
numbers back from those tables, so a plot always shows the figures printed above it.  To draw
the plots again from a committed report, without running any benchmark::

    python benchmarks/growth_plots.py [benchmarks/RESULTS.md]

which rewrites ``growth_*.png`` beside the report and the figure and caption at the end of
each subsection of its "Cost growth" section (nothing else in the report changes).

Each plot shows one quantity per axis (two quantities: two panels), uses a logarithmic axis
only where the values span more than a decade, keeps its legend outside the lines, and tells
lines apart by marker and line style as well as colour; the caption under it says what each
line covers and why a line stops where it does.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from typing import Any

SECTION = "## Cost growth (zarrkit)"
FIGURE_LINE = re.compile(r"^!\[[^\]]*\]\((growth_[\w-]+\.png)\)\s*$")
#: the growth section's local-directory chunk counts stop an order of magnitude below the
#: in-memory ones: the reason, as growth.py gives it when choosing the sizes
DIRECTORY_CHUNKS_REASON = ("writing a million chunk files would take longer than all the rest of "
                           "the growth section, so the section leaves that size out")


# -- reading the report's tables ----------------------------------------------------------------
def number(cell: str) -> float | None:
    """``"1,001"`` -> 1001, ``"0.0433 s"`` -> 0.0433, ``"47 µs"`` -> 47, ``""`` -> None."""
    found = re.search(r"-?[\d,]*\.?\d+", cell.replace("+", ""))
    return None if found is None else float(found.group(0).replace(",", ""))


def first_table(lines: list[str]) -> list[dict[str, str]]:
    """The rows of the first markdown table in ``lines``, as dicts keyed by the header's cells
    (a repeated header cell gets `` 2``, `` 3``... appended)."""
    for i in range(len(lines) - 1):
        if lines[i].startswith("|") and re.match(r"^\|(\s*-+\s*\|)+\s*$", lines[i + 1]):
            header: list[str] = []
            for cell in (c.strip() for c in lines[i].strip().strip("|").split("|")):
                n = sum(1 for h in header if h == cell or h.startswith(cell + " "))
                header.append(cell if n == 0 else f"{cell} {n + 1}")
            rows = []
            for line in lines[i + 2:]:
                if not line.startswith("|"):
                    break
                rows.append(dict(zip(header, (c.strip() for c in line.strip().strip("|").split("|")))))
            return rows
    return []


def subsections(lines: list[str]) -> list[tuple[int, int]]:
    """``(start, stop)`` line ranges of the ``###`` subsections in ``lines``."""
    starts = [i for i, line in enumerate(lines) if line.startswith("### ")]
    return [(s, starts[k + 1] if k + 1 < len(starts) else len(lines)) for k, s in enumerate(starts)]


# -- drawing ----------------------------------------------------------------------------------------
def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _plain_ticks(ax: Any, axis: str, values: list[float]) -> None:
    """Ticks at the measured sizes, labelled as plain numbers (``1,001``, not ``10³``)."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    target = ax.xaxis if axis == "x" else ax.yaxis
    target.set_major_locator(FixedLocator(sorted(set(values))))
    target.set_minor_locator(NullLocator())
    target.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))


def _plain_log_y(ax: Any) -> None:
    from matplotlib.ticker import FuncFormatter, LogLocator

    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))


def _linear_from_zero(ax: Any, values: list[float], room: float = 1.2) -> None:
    from matplotlib.ticker import MaxNLocator, ScalarFormatter

    ax.set_ylim(0, max(values) * room)
    ax.yaxis.set_major_locator(MaxNLocator(nbins=6))
    formatter = ScalarFormatter(useOffset=False)
    formatter.set_scientific(False)
    ax.yaxis.set_major_formatter(formatter)


def _annotate(ax: Any, series: list[tuple[list[tuple[float, float]], str, str]]) -> None:
    """Write each point's value beside it: above the point when it is the highest of its
    size, below otherwise, so that labels of nearby lines do not cover each other."""
    for pts, colour, fmt in series:
        for x, y in pts:
            top = all(y >= y2 for other, _, _ in series for x2, y2 in other if x2 == x)
            ax.annotate(fmt.format(y), (x, y), textcoords="offset points", xytext=(0, 7 if top else -13),
                        ha="center", fontsize=7.5, color=colour)


def _dodge(x: float, i: int, n: int, decades: float = 0.022) -> float:
    """``x`` moved sideways on a log axis by a step per series, so equal values of different
    series stay visible side by side."""
    return x * 10 ** ((i - (n - 1) / 2) * decades)


def _save(fig: Any, directory: str, name: str) -> None:
    os.makedirs(directory, exist_ok=True)
    fig.savefig(os.path.join(directory, name), dpi=110)
    _pyplot().close(fig)


STYLES = [  # colour, marker, line style: no two lines alike even in grey
    ("#1b6ca8", "o", "-"), ("#d1495b", "s", "--"), ("#2e8b57", "^", "-."),
    ("#8a5a00", "D", ":"), ("#6a4c93", "v", "-"), ("#444444", "P", "--"),
]


def hierarchy_figure(lines: list[str]) -> tuple[Any, str, str, str]:
    rows = first_table(lines)
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.6, 4.4))
    places = list(dict.fromkeys(r["where"] for r in rows))
    colours = dict(zip(places, ("#1b6ca8", "#d1495b", "#2e8b57", "#8a5a00")))
    markers = dict(zip(places, ("o", "^", "D", "v")))
    per_node, sizes = [], []
    lines_drawn = [(place, c, st) for place in places for c, st in (("yes", "-"), ("no", "--"))]
    for i, (place, consolidated, style) in enumerate(lines_drawn):
        pts = sorted((number(r["nodes"]), number(r["per node"])) for r in rows
                     if r["where"] == place and r["consolidated"] == consolidated)
        if pts:
            per_node += [p[1] for p in pts]
            sizes += [p[0] for p in pts]
            ax.plot([_dodge(p[0], i, len(lines_drawn)) for p in pts], [p[1] for p in pts],
                    linestyle=style, marker=markers[place],
                    color=colours[place], markerfacecolor=colours[place] if consolidated == "yes" else "white",
                    label=f"{place}, {'consolidated' if consolidated == 'yes' else 'listed'}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    _plain_ticks(ax, "x", sizes)
    _plain_log_y(ax)
    ax.set_xlabel("nodes in the hierarchy")
    ax.set_ylabel("µs per node (log scale)")
    ax.set_title("Open and walk a hierarchy: time per node")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
    fig.tight_layout()
    caption = (
        f"Time per node of opening a v3 hierarchy and walking every node, for "
        f"{', '.join(f'{n:,.0f}' for n in sorted(set(sizes)))} nodes; every line covers all "
        f"{len(set(sizes))} sizes.  Colour and marker: where the hierarchy is (the S3 lines go "
        "through the latency proxy at the delay named); solid lines and filled markers: "
        "consolidated metadata, dashed lines and open markers: metadata listed and read node by "
        f"node.  The time axis is logarithmic: the per-node times span {min(per_node):,.0f} µs to "
        f"{max(per_node):,.0f} µs.  The points of one size are spread slightly sideways, so that "
        "equal times of different lines stay visible."
    )
    return fig, "growth_hierarchy.png", "open and walk a hierarchy: time per node", caption


def nchunks_figure(lines: list[str]) -> tuple[Any, str, str, str]:
    rows = first_table(lines)
    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(8.4, 3.9), sharey=True)
    stores = list(dict.fromkeys(r["store"] for r in rows))
    values, sizes, smallest, largest = [], [], {}, {}
    every: list[tuple[list[tuple[float, float]], str, str]] = []
    for ax, (column, title) in zip(axes, (("per chunk", "nchunks_initialized"), ("per chunk 2", "info"))):
        drawn: list[tuple[list[tuple[float, float]], str, str]] = []
        for store, (colour, marker, style) in zip(stores, STYLES):
            pts = sorted((number(r["chunks"]), number(r[column])) for r in rows if r["store"] == store)
            smallest[store], largest[store] = pts[0][0], pts[-1][0]
            values += [p[1] for p in pts]
            sizes += [p[0] for p in pts]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], color=colour, marker=marker,
                    linestyle=style, label=store)
            drawn.append((pts, colour, "{:.2f}"))
        _annotate(ax, drawn)
        every += drawn
        ax.set_xscale("log")
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("chunks stored")
        ax.grid(True, alpha=0.3)
    for ax in axes:
        _plain_ticks(ax, "x", sizes)
    _linear_from_zero(axes[0], values)
    axes[0].set_ylabel("µs per chunk")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(stores), fontsize=8, frameon=False)
    fig.suptitle("nchunks_initialized and info: time per chunk", fontsize=11)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    extents = "; ".join(f"{store}: {smallest[store]:,.0f} to {largest[store]:,.0f} chunks"
                        for store in stores)
    caption = (f"Time per chunk of `nchunks_initialized` (left) and of `info` (right), one line per "
               f"store ({extents}).  ")
    if len(set(largest.values())) > 1:
        short = [s for s in stores if largest[s] < max(largest.values())]
        caption += (f"The {' and '.join(short)} lines stop at {min(largest.values()):,.0f} chunks: "
                    f"{DIRECTORY_CHUNKS_REASON}.  ")
    change = max(abs(b / a - 1) for pts, _, _ in every for (_, a), (_, b) in [(pts[0], pts[-1])])
    caption += (f"From the smallest size to the largest, no line's cost per chunk changes by more "
                f"than {100 * change:.0f} %.")
    return fig, "growth_nchunks.png", "nchunks_initialized and info: time per chunk", caption


def cp_figure(lines: list[str]) -> tuple[Any, str, str, str]:
    rows = first_table(lines)
    prose = " ".join(lines)
    base = re.search(r"alone peaks at ([\d,]+) MiB and takes ([\d.]+) s", prose)
    plt = _pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(8.4, 3.9))
    sizes = [number(r["size"]) for r in rows]
    per_gib = [number(r["net s per GiB"]) for r in rows]
    peaks = [number(r["peak RSS"]) for r in rows]
    left.plot(sizes, per_gib, color="#1b6ca8", marker="o", label="net seconds per GiB", zorder=3)
    right.plot(sizes, peaks, color="#d1495b", marker="s", linestyle="--", label="peak RSS of the command",
               zorder=3)
    for ax, ys, fmt in ((left, per_gib, "{:.2f}"), (right, peaks, "{:,.0f}")):
        _annotate(ax, [(list(zip(sizes, ys)), "black", fmt)])
        ax.set_xscale("log", base=2)
        _plain_ticks(ax, "x", sizes)
        ax.set_xlabel("MiB copied")
        ax.grid(True, alpha=0.3)
    _linear_from_zero(left, per_gib)
    _linear_from_zero(right, peaks + ([number(base.group(1))] if base else []))
    left.set_ylabel("seconds per GiB")
    left.set_title("time per GiB (interpreter start-up left out)", fontsize=9)
    right.set_ylabel("MiB")
    right.set_title("peak memory of the command's process", fontsize=9)
    if base:
        right.axhline(number(base.group(1)), color="#666666", linestyle=":", linewidth=1.2,
                      label="the interpreter importing zarrkit.cli", zorder=2)
    right.legend(fontsize=7, loc="lower right")
    fig.suptitle("zarrkit cp: time and memory as the array grows", fontsize=11)
    fig.tight_layout()
    caption = (f"`zarrkit cp` of arrays of {', '.join(f'{s:,.0f}' for s in sizes)} MiB, the sizes the "
               "section copies: seconds per GiB copied (left; the start-up of the interpreter "
               "left out) and the peak resident memory of the command's process (right), each on "
               "its own linear axis.")
    caption += (f"  The peak is {peaks[0]:,.0f} MiB for the smallest copy and {peaks[-1]:,.0f} MiB "
                f"for the largest, {sizes[-1] / sizes[0]:,.0f} times bigger.")
    if base:
        caption += (f"  The dotted line is the interpreter importing `zarrkit.cli` and nothing "
                    f"else ({base.group(1)} MiB).")
    return fig, "growth_cp.png", "zarrkit cp: time and memory", caption


def distributed_figure(lines: list[str]) -> tuple[Any, str, str, str]:
    rows = first_table(lines)
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 3.9))
    counts = sorted({int(number(r["workers"])) for r in rows})
    rates, sizes = [], []
    drawn: list[tuple[list[tuple[float, float]], str, str]] = []
    for workers, (colour, marker, style) in zip(counts, STYLES):
        pts = sorted((number(r["size"]), number(r["MiB/s"])) for r in rows if int(number(r["workers"])) == workers)
        rates += [p[1] for p in pts]
        sizes += [p[0] for p in pts]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], color=colour, marker=marker, linestyle=style,
                label=f"{workers} worker process{'es' if workers > 1 else ''}")
        drawn.append((pts, colour, "{:,.0f}"))
    _annotate(ax, drawn)
    ax.set_xscale("log", base=2)
    _plain_ticks(ax, "x", sizes)
    _linear_from_zero(ax, rates, room=1.3)
    ax.set_xlabel("MiB written")
    ax.set_ylabel("MiB/s")
    ax.set_title("Writing from a distributed LocalCluster", fontsize=11)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", ncol=len(counts))
    fig.tight_layout()
    caption = (f"Throughput of `zarrkit.dask.store` from a LocalCluster of "
               f"{' and '.join(str(c) for c in counts)} worker processes (one thread each), writing "
               f"{' and '.join(f'{s:,.0f}' for s in sorted(set(sizes)))} MiB; each line covers "
               f"{'both sizes' if len(set(sizes)) == 2 else 'every size'}.  Linear axes: the rates span "
               f"{min(rates):,.0f} to {max(rates):,.0f} MiB/s.")
    return fig, "growth_distributed.png", "writing from a distributed LocalCluster", caption


#: the figure of each subsection, by the start of its heading: a function of the subsection's
#: lines giving the figure, its file name, its title and its caption
FIGURES: dict[str, Callable[[list[str]], tuple[Any, str, str, str]]] = {
    "Open and walk a hierarchy": hierarchy_figure,
    "nchunks_initialized and info": nchunks_figure,
    "zarrkit cp": cp_figure,
    "Writing from a distributed": distributed_figure,
}


def add_figures(lines: list[str], directory: str | None) -> list[str]:
    """``lines`` (the growth section) with each subsection's figure drawn into ``directory``
    and its image and caption at the subsection's end, replacing any figure there before
    (unchanged without a directory)."""
    if directory is None:
        return lines
    try:
        _pyplot()
    except ImportError:
        return lines + ["(no plots: matplotlib is not installed; pip install -e '.[bench]')", ""]
    out = lines[:next((s for s, _ in subsections(lines)), len(lines))]
    for start, stop in subsections(lines):
        part = lines[start:stop]
        cut = next((i for i, line in enumerate(part) if FIGURE_LINE.match(line)), len(part))
        body = part[:cut]
        while body and not body[-1].strip():
            body.pop()
        draw = next((f for head, f in FIGURES.items() if part[0][4:].startswith(head)), None)
        out += body + [""]
        if draw is not None and first_table(body):
            fig, name, title, caption = draw(body)
            _save(fig, directory, name)
            out += [f"![{title}]({name})", "", f"*{caption}*", ""]
    return out


def replot(report: str) -> None:
    """Draw the growth plots of ``report`` again, beside it, and rewrite their captions."""
    with open(report, encoding="utf-8") as f:
        text = f.read()
    if SECTION not in text:
        raise SystemExit(f"{report}: no '{SECTION}' section")
    head, rest = text.split(SECTION, 1)
    section, sep, tail = rest.partition("\n## ")
    lines = (SECTION + section).split("\n")
    new = "\n".join(add_figures(lines, os.path.dirname(os.path.abspath(report)))).rstrip("\n") + "\n"
    with open(report, "w", encoding="utf-8") as f:
        f.write(head + new + (("\n## " + tail) if sep else ""))


if __name__ == "__main__":
    replot(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                              "RESULTS.md"))
