"""The cost-growth plots of the benchmark report (``benchmarks/growth_*.png``): drawn from the
report's own tables, readable (one quantity per axis, linear axes for small ranges, legends
clear of the lines, lines told apart by more than colour), and captioned with what each line
covers and why it stops where it does."""

from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks"
# loaded from its file: benchmarks/ is not put on the path, where its modules (run, remote...)
# would shadow others of the same names
_spec = importlib.util.spec_from_file_location("growth_plots", BENCH / "growth_plots.py")
growth_plots = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(growth_plots)

REPORT = BENCH / "RESULTS.md"


def growth_section() -> list[str]:
    text = REPORT.read_text(encoding="utf-8")
    return (growth_plots.SECTION + text.split(growth_plots.SECTION, 1)[1].split("\n## ", 1)[0]).split("\n")


def subsection(heading: str) -> list[str]:
    lines = growth_section()
    start, stop = next((a, b) for a, b in growth_plots.subsections(lines) if lines[a][4:].startswith(heading))
    return lines[start:stop]


def captions() -> dict[str, str]:
    """The caption under each growth plot of the report, by file name."""
    lines = growth_section()
    out = {}
    for i, line in enumerate(lines):
        found = growth_plots.FIGURE_LINE.match(line)
        if found:
            assert lines[i + 1] == "" and lines[i + 2].startswith("*") and lines[i + 2].endswith("*"), line
            out[found.group(1)] = lines[i + 2]
    return out


def test_every_growth_plot_is_committed_and_captioned():
    found = captions()
    assert set(found) == {"growth_hierarchy.png", "growth_nchunks.png", "growth_cp.png",
                          "growth_distributed.png"}
    for name in found:
        assert (BENCH / name).stat().st_size > 10_000, name


def test_the_captions_give_each_lines_extent_from_the_tables():
    found = captions()
    rows = growth_plots.first_table(subsection("nchunks_initialized and info"))
    for store in {r["store"] for r in rows}:
        sizes = [growth_plots.number(r["chunks"]) for r in rows if r["store"] == store]
        assert f"{store}: {min(sizes):,.0f} to {max(sizes):,.0f} chunks" in found["growth_nchunks.png"]
    # the local-directory lines are the shorter ones, and the caption says why
    assert "The local directory lines stop at 100,000 chunks: writing a million chunk files" in (
        found["growth_nchunks.png"])
    assert "every line covers all 3 sizes" in found["growth_hierarchy.png"]
    assert "each line covers both sizes" in found["growth_distributed.png"]
    assert "256, 1,024, 4,096 MiB" in found["growth_cp.png"]


def test_the_reason_the_directory_lines_stop_is_the_benchmarks_own():
    """The caption's reason is the one growth.py gives for its sizes."""
    source = (BENCH / "growth.py").read_text(encoding="utf-8")
    assert "10^4 - 10^5 in a local directory (a million files take longer to write than" in source
    assert '"dir_chunks": [10**4, 10**5]' in source


# -- the drawings (matplotlib comes with the test extra) ----------------------------------------
@pytest.fixture(scope="module")
def figures():
    import matplotlib  # noqa: F401  (the test extra installs it)
    drawn = {}
    for heading, draw in growth_plots.FIGURES.items():
        fig, name, _, _ = draw(subsection(heading))
        fig.canvas.draw()
        drawn[name] = fig
    yield drawn
    import matplotlib.pyplot as plt

    plt.close("all")


def data_lines(ax):
    """The lines that show measurements (not a reference line across the axes)."""
    return [line for line in ax.get_lines() if len(line.get_xdata()) > 1 and line.get_marker() not in ("None", "")]


def tick_texts(ax, axis):
    return [t.get_text() for t in (ax.get_xticklabels() if axis == "x" else ax.get_yticklabels()) if t.get_text()]


def test_one_quantity_per_axis(figures):
    cp = figures["growth_cp.png"]
    assert [ax.get_ylabel() for ax in cp.axes] == ["seconds per GiB", "MiB"]
    for fig in figures.values():
        for ax in fig.axes:
            labels = {line.get_label() for line in data_lines(ax)}
            assert not ({"net seconds per GiB", "peak RSS of the command"} <= labels)


def test_small_ranges_have_linear_axes_with_plain_ticks(figures):
    for name in ("growth_cp.png", "growth_distributed.png", "growth_nchunks.png"):
        for ax in figures[name].axes:
            values = [y for line in data_lines(ax) for y in line.get_ydata()]
            assert max(values) / min(values) < 10, name  # a small range...
            assert ax.get_yscale() == "linear" and ax.get_ylim()[0] == 0, name  # ...on a linear axis
    for fig in figures.values():
        for ax in fig.axes:
            for text in tick_texts(ax, "x") + tick_texts(ax, "y"):
                assert re.fullmatch(r"[\d,.]+", text), (text, "a plain number, not 6×10¹")


def covered(fig) -> list[str]:
    """The lines of ``fig`` that a legend box crosses, points or segments."""
    boxes = [legend.get_window_extent() for legend in
             [ax.get_legend() for ax in fig.axes if ax.get_legend()] + list(fig.legends)]
    hidden = []
    for ax in fig.axes:
        for line in data_lines(ax):
            path = line.get_transform().transform_path(line.get_path())
            if any(path.intersects_bbox(box, filled=False) for box in boxes):
                hidden.append(line.get_label())
    return hidden


def test_legends_do_not_cover_any_line(figures):
    for name, fig in figures.items():
        assert fig.legends or any(ax.get_legend() for ax in fig.axes), name
        assert covered(fig) == [], name


def test_a_legend_over_a_line_would_be_seen(figures):
    """The check above is not blind: a legend inside the axes, over the lower lines of the
    hierarchy plot, is reported."""
    fig = figures["growth_hierarchy.png"]
    legend = fig.axes[0].get_legend()
    fig.axes[0].legend(fontsize=7, loc="lower left")
    fig.canvas.draw()
    try:
        assert covered(fig)
    finally:
        fig.axes[0].legend(handles=legend.legend_handles, labels=[t.get_text() for t in legend.get_texts()],
                           fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
        fig.canvas.draw()


def test_lines_are_told_apart_by_marker_and_style_not_colour_alone(figures):
    for name, fig in figures.items():
        for ax in fig.axes:
            looks = [(line.get_marker(), line.get_linestyle(), line.get_markerfacecolor())
                     for line in data_lines(ax)]
            assert len(set(looks)) == len(looks), (name, looks)


def test_equal_values_of_different_lines_stay_visible(figures):
    """In the hierarchy plot two lines meet at 10,001 nodes (113 µs): their points are drawn
    side by side, not one on top of the other."""
    ax = figures["growth_hierarchy.png"].axes[0]
    points = [(x, y) for line in data_lines(ax) for x, y in zip(line.get_xdata(), line.get_ydata())]
    assert len(set(points)) == len(points)


def test_replotting_the_committed_report_changes_no_text(tmp_path):
    import matplotlib  # noqa: F401  (the test extra installs it)
    copy = tmp_path / "RESULTS.md"
    shutil.copy(REPORT, copy)
    growth_plots.replot(str(copy))
    assert copy.read_text(encoding="utf-8") == REPORT.read_text(encoding="utf-8")
    assert sorted(p.name for p in tmp_path.glob("growth_*.png")) == sorted(captions())
