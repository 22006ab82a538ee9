"""A step's per-second IOPS, bandwidth or latency, every host over its run.

One panel per op (read, write, ...), sharing the x axis (seconds since the tool started); a
colour per host (the same in every plot of a report); for latency a line per percentile
(p50 solid, p99 dashed, p99.9 dotted) on a log scale. The ramp-up the tables leave out
(``--skip``) is shaded. Every line is an SVG group with id ``line-N``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import LogLocator

from benchtui.report.plot.style import (
    MIN_FONT,
    PLOT_WIDTH,
    fitted_title,
    legend_columns,
    new_figure,
    value_axis,
)
from benchtui.report.series import Points, RunSeries

if TYPE_CHECKING:
    from matplotlib.typing import LineStyleType

METRICS = ("iops", "bandwidth", "latency", "net")
_OPS = ("read", "write", "trim", "total", "send", "receive")
_LABELS = {"iops": "IOPS", "bandwidth": "bandwidth", "latency": "latency",
           "net": "network"}
#: What a plot of each metric shows, for titles.
TITLES = {"iops": "IOPS per second", "bandwidth": "bandwidth per second",
          "latency": "latency percentiles per second",
          "net": "network bandwidth per second (each host's own end)"}
_STYLES: dict[str, LineStyleType] = {"p50": "-", "p99": "--", "p999": ":", "mean": "-."}
_QUANTILE_NAMES = {"p50": "p50", "p99": "p99", "p999": "p99.9", "mean": "mean"}
_RAMP = "#000000"
#: Points per line from which lines are drawn thin (a long run's second-by-second noise).
_DENSE = 400
#: Latency small multiples: panels side by side (in a plot as wide as the others), and the
#: size of their titles and axis labels (points).
_SMALL_COLUMNS = 3
_SMALL_FONT = max(8.0, MIN_FONT)


def _lines(rs: RunSeries, metric: str, op: str) -> dict[str, Points]:
    """name -> points of one run's op: {"": ...} for IOPS and bandwidth."""
    if metric == "latency":
        return rs.latency.get(op, {})
    if metric == "net":
        found = rs.net.get(op)
        return {"": found} if found else {}
    found = (rs.iops if metric == "iops" else rs.bandwidth).get(op)
    return {"": found} if found else {}


def legend_name(rs: RunSeries) -> str:
    """A line's host, and its run when hosts' best runs differ (the title names a run
    plotted for every host, or the median of the runs)."""
    row = rs.row
    return f"{row.host} (run {row.repeat})" if row.selected_from > 1 and not row.combined \
        else row.host


_BASELINE = "#9a9a9a"


def time_figure(series: Sequence[RunSeries], metric: str, *, title: str,
                colours: Mapping[str, str], baseline: Sequence[RunSeries] = (),
                baseline_name: str = "baseline") -> Figure | None:
    """The figure of ``metric`` ("iops", "bandwidth", "latency" or "net") for these runs;
    None when none of them has a point of it. ``baseline``: the baseline's runs of the same
    step, drawn in grey under the hosts' lines (as the console's ghost). Latency of several
    hosts is drawn as small multiples (``latency_figure``)."""
    if metric not in METRICS:
        raise ValueError(f"no metric {metric!r}")
    if metric == "latency" and len({rs.host for rs in series}) > 1:
        return latency_figure(series, title=title, colours=colours, baseline=baseline,
                              baseline_name=baseline_name)
    ops = [op for op in _OPS if any(_lines(rs, metric, op) for rs in series)]
    if not ops:
        return None
    fig = new_figure(PLOT_WIDTH, 1.1 + 1.8 * len(ops))
    axes = fig.subplots(len(ops), 1, sharex=True, squeeze=False)[:, 0]
    n = 0
    names: dict[str, str] = {}
    percentiles: list[str] = []
    partial = False
    ramp = max((rs.window_start for rs in series), default=0.0)
    ghost = False
    for ax, op in zip(axes, ops, strict=True):
        for rs in baseline:
            for q, points in _lines(rs, metric, op).items():
                ax.plot(points.times, points.values, color=_BASELINE, linewidth=1.0,
                        linestyle=_STYLES.get(q, "-"), alpha=0.8, zorder=1,
                        gid=f"baseline-{n}")
                n += 1
                ghost = True
        for rs in series:
            name = legend_name(rs)
            colour = colours.get(rs.host, "#333333")
            for q, points in _lines(rs, metric, op).items():
                ax.plot(points.times, points.values, color=colour,
                        linestyle=_STYLES.get(q, "-"), gid=f"line-{n}",
                        linewidth=1.3 if len(points) < _DENSE else 0.7,
                        marker="o" if len(points) < 3 else None, markersize=3,
                        label=f"{name} {_QUANTILE_NAMES.get(q, q)}".strip())
                n += 1
                px, py = points.partial()
                if px:  # a partial interval: its rate over the seconds it covered
                    ax.plot(px, py, color=colour, linestyle="none", marker="o",
                            fillstyle="none", markersize=5, gid=f"partial-{n}")
                    partial = True
                names.setdefault(name, colour)
                if q and q not in percentiles:
                    percentiles.append(q)
        if ramp > 0:
            ax.axvspan(0, ramp, color=_RAMP, alpha=0.06, linewidth=0)
        ax.set_title(op, loc="left")
        ax.set_ylabel(_LABELS[metric] + (" (log)" if metric == "latency" else ""))
        if metric == "latency":
            ax.set_yscale("log")
            low, high = ax.dataLim.intervaly
            wide = low > 0 and high / low > 300  # ticks at 1-2-5 would crowd the axis
            ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0,) if wide
                                                  else (1.0, 2.0, 5.0)))
        else:
            ax.set_ylim(bottom=0)
        value_axis(ax.yaxis, metric)
    _from_zero(list(axes))
    axes[-1].set_xlabel("seconds since the tool started")
    fitted_title(fig, title)
    handles: list[Line2D | Patch] = [Line2D([], [], color=c, label=name)
                                     for name, c in names.items()]
    if metric == "latency":
        handles += [Line2D([], [], color="#555555", linestyle=_STYLES[q],
                           label=_QUANTILE_NAMES[q]) for q in percentiles]
    if partial:
        handles.append(Line2D([], [], color="#555555", linestyle="none", marker="o",
                              fillstyle="none", label="partial interval (its own rate)"))
    if ghost:
        handles.append(Line2D([], [], color=_BASELINE, label=baseline_name))
    if ramp > 0:
        handles.append(Patch(color=_RAMP, alpha=0.12,
                             label=f"first {ramp:.0f} s: ramp-up, not in the tables"))
    _legend(fig, handles)
    return fig


def _from_zero(axes: list[Axes]) -> None:
    """The x axis (shared) from the run's start, or from its earliest point when one comes
    before it: every point inside the axes."""
    starts = [ax.dataLim.x0 for ax in axes if math.isfinite(ax.dataLim.x0)]
    for ax in axes:
        ax.set_xlim(left=min(0.0, *starts))


def _legend(fig: Figure, handles: Sequence[Line2D | Patch]) -> None:
    """The legend under the plots, in as many columns as fit the figure's width."""
    labels = [str(h.get_label()) for h in handles]
    fig.legend(handles=handles, loc="outside lower center",
               ncols=legend_columns(fig, labels))


_FLEET = "#000000"


def fleet_figure(fleet: Mapping[str, Mapping[str, Points]], *, title: str) -> Figure | None:
    """The fleet's latency percentiles per second (``series.fleet_latency``): one panel
    per op, p50/p99/p99.9 in one plot."""
    ops = [op for op in _OPS if fleet.get(op)]
    if not ops:
        return None
    fig = new_figure(PLOT_WIDTH, 1.1 + 1.8 * len(ops))
    axes = fig.subplots(len(ops), 1, sharex=True, squeeze=False)[:, 0]
    n = 0
    for ax, op in zip(axes, ops, strict=True):
        for q, points in fleet[op].items():
            ax.plot(points.times, points.values, color=_FLEET, linestyle=_STYLES.get(q, "-"),
                    gid=f"line-{n}", linewidth=1.2 if len(points) < _DENSE else 0.7,
                    label=f"fleet {_QUANTILE_NAMES.get(q, q)}")
            n += 1
        ax.set_title(f"fleet {op}", loc="left")
        ax.set_ylabel("latency (log)")
        ax.set_yscale("log")
        value_axis(ax.yaxis, "latency")
    _from_zero(list(axes))
    axes[-1].set_xlabel("seconds since the tool started")
    fitted_title(fig, title)
    handles: list[Line2D | Patch] = [
        Line2D([], [], color=_FLEET, linestyle=_STYLES[q], label=_QUANTILE_NAMES[q])
        for q in ("p50", "p99", "p999") if any(q in fleet[op] for op in ops)]
    _legend(fig, handles)
    return fig


def latency_figure(series: Sequence[RunSeries], *, title: str, colours: Mapping[str, str],
                   baseline: Sequence[RunSeries] = (), baseline_name: str = "baseline"
                   ) -> Figure | None:
    """Latency of several hosts as small multiples: one small panel per host and op (its
    p50/p99/p99.9 in its colour, its baseline run in grey), every panel on the same log
    scale, so that twelve lines never share one plot."""
    ops = [op for op in _OPS if any(rs.latency.get(op) for rs in series)]
    hosts = [rs for rs in series if any(rs.latency.get(op) for op in ops)]
    if not ops or not hosts:
        return None
    cols = min(len(hosts), _SMALL_COLUMNS)
    rows_per_op = -(-len(hosts) // cols)
    fig = new_figure(PLOT_WIDTH, 1.2 + 1.55 * rows_per_op * len(ops))
    grid = fig.subplots(rows_per_op * len(ops), cols, sharex=True, sharey=True,
                        squeeze=False)
    by_host = {rs.host: rs for rs in baseline}
    n = 0
    percentiles: list[str] = []
    ghost = False
    for k, op in enumerate(ops):
        for i, rs in enumerate(hosts):
            ax = grid[k * rows_per_op + i // cols, i % cols]
            twin = by_host.get(rs.host) if len(baseline) > 1 else \
                (baseline[0] if baseline else None)
            if twin is not None:
                for q, points in twin.latency.get(op, {}).items():
                    ax.plot(points.times, points.values, color=_BASELINE, linewidth=0.9,
                            linestyle=_STYLES.get(q, "-"), zorder=1, gid=f"baseline-{n}")
                    n += 1
                    ghost = True
            for q, points in rs.latency.get(op, {}).items():
                ax.plot(points.times, points.values, color=colours.get(rs.host, "#333333"),
                        linestyle=_STYLES.get(q, "-"), gid=f"line-{n}",
                        linewidth=1.1 if len(points) < _DENSE else 0.6,
                        label=f"{legend_name(rs)} {_QUANTILE_NAMES.get(q, q)}")
                n += 1
                if q not in percentiles:
                    percentiles.append(q)
            ax.set_title(f"{legend_name(rs)} {op}", loc="left", fontsize=_SMALL_FONT)
            ax.set_yscale("log")
            value_axis(ax.yaxis, "latency")
            if rs.window_start > 0:
                ax.axvspan(0, rs.window_start, color=_RAMP, alpha=0.06, linewidth=0)
        for j in range(len(hosts), rows_per_op * cols):  # empty cells of the last row
            grid[k * rows_per_op + j // cols, j % cols].set_visible(False)
    _from_zero(list(grid.flat))
    for ax in grid[-1, :]:
        ax.set_xlabel("seconds since the tool started" if cols < 3 else "seconds",
                      fontsize=_SMALL_FONT)
    fitted_title(fig, title)
    handles: list[Line2D | Patch] = [Line2D([], [], color="#555555", linestyle=_STYLES[q],
                                            label=_QUANTILE_NAMES[q]) for q in percentiles]
    if ghost:
        handles.append(Line2D([], [], color=_BASELINE, label=baseline_name))
    _legend(fig, handles)
    return fig
