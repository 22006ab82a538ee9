"""Grouped bars across a report's steps: a group per step, a bar per host (the same colour
as in the time plots), a panel per figure (IOPS, bandwidth).

The baseline is marked: a bar that is its own baseline (the baseline host's, or the
baseline step's) is hatched; every other bar that has a baseline carries a black tick at
the baseline's value and, when the bars are few enough to read, its percentage of it above.
Values that span more than two decades are drawn on a log scale (the axis says so), so that
a 195 IOPS bar stays visible beside a 28.7k one.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from benchtui.report.plot.style import (
    CHAR_WIDTH,
    PLOT_WIDTH,
    WIDE_WIDTH,
    fitted_title,
    legend_columns,
    new_figure,
    value_axis,
)

#: Above this many bars in a panel, percentages are left to the tables.
_MAX_LABELLED = 40
#: A percentage's size over its bar (points), written across: where the bars are too
#: narrow for it, it is left to the tables rather than written smaller or turned.
_LABEL_FONT = 8.0
#: The part of the figure's width the bars' axes have (the value labels take the rest).
_AXES_SHARE = 0.85
#: max / min beyond which a panel is drawn on a log scale.
_LOG_SPREAD = 100.0


def _wrapped(label: str, crowded: bool) -> str:
    """A step's name on lines short enough to sit under its group (a sweep's names are
    long: "randread ioengine=libaio bs=4k")."""
    return label if crowded else "\n".join(textwrap.wrap(label, 18)) or label


@dataclass(frozen=True, slots=True)
class Bar:
    value: float
    baseline: float | None = None
    #: The bar is its own baseline (drawn hatched).
    is_baseline: bool = False


@dataclass(frozen=True)
class Panel:
    """One metric: ``kind`` is "iops" or "bandwidth" (the tick labels' unit)."""

    label: str
    kind: str
    #: (group, name) -> bar
    bars: Mapping[tuple[str, str], Bar]


def bars_figure(groups: Sequence[str], names: Sequence[str], panels: Sequence[Panel], *,
                colours: Mapping[str, str], title: str) -> Figure:
    """One panel per metric; ``groups`` (steps) along x, ``names`` (hosts) within each."""
    slots = max(len(names), 1)
    width = 0.8 / slots
    fig = new_figure(min(WIDE_WIDTH, max(PLOT_WIDTH, 1.2 + 0.22 * len(groups) * slots)),
                     1.3 + 2.9 * len(panels))
    axes = fig.subplots(len(panels), 1, squeeze=False)[:, 0]
    hatched = marked = unlabelled = False
    n = 0
    # a bar's width on the page (points), and the widest percentage written over one
    bar_points = fig.get_figwidth() * 72 * _AXES_SHARE / max(len(groups), 1) * width
    label_points = len("999%") * _LABEL_FONT * CHAR_WIDTH
    for ax, panel in zip(axes, panels, strict=True):
        shown = [b for b in panel.bars.values() if b.value > 0]
        labelled = len(panel.bars) <= _MAX_LABELLED and bar_points >= label_points
        unlabelled |= not labelled
        for j, name in enumerate(names):
            colour = colours.get(name, "#333333")
            for i, group in enumerate(groups):
                bar = panel.bars.get((group, name))
                if bar is None:
                    continue
                x = i - 0.4 + width * (j + 0.5)
                ax.bar(x, bar.value, width=width * 0.92, color=colour,
                       hatch="///" if bar.is_baseline else None, edgecolor="white",
                       linewidth=0, gid=f"bar-{n}")
                n += 1
                hatched |= bar.is_baseline
                if bar.baseline is not None and not bar.is_baseline:
                    ax.hlines(bar.baseline, x - width / 2, x + width / 2, colors="black",
                              linewidth=1.6)
                    marked = True
                    if labelled and bar.baseline > 0:
                        ax.annotate(f"{100.0 * bar.value / bar.baseline:.0f}%",
                                    (x, max(bar.value, bar.baseline)), xytext=(0, 2),
                                    textcoords="offset points", ha="center", va="bottom",
                                    fontsize=_LABEL_FONT)
        log = bool(shown) and max(b.value for b in shown) > _LOG_SPREAD * min(
            b.value for b in shown)
        if log:
            ax.set_yscale("log")
        value_axis(ax.yaxis, panel.kind)
        ax.set_ylabel(panel.label + (" (log scale)" if log else ""))
        crowded = len(groups) * slots > 24
        ax.set_xticks(range(len(groups)), [_wrapped(g, crowded) for g in groups],
                      rotation=20 if crowded else 0, ha="right" if crowded else "center")
        ax.grid(axis="x", visible=False)
        ax.margins(x=0.01, y=0.12)
    fitted_title(fig, title)
    handles: list[Line2D | Patch] = [Patch(color=colours.get(name, "#333333"), label=name)
                                     for name in names]
    if hatched:
        handles.append(Patch(facecolor="#bbbbbb", hatch="///", edgecolor="white",
                             label="the baseline"))
    if marked:
        handles.append(Line2D([], [], color="black", linewidth=1.6, label="baseline's value"
                              + (" (its percentage: in the tables)" if unlabelled else "")))
    fig.legend(handles=handles, loc="outside lower center",
               ncols=legend_columns(fig, [str(h.get_label()) for h in handles]))
    return fig
