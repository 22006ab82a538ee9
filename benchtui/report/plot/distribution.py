"""Plots of many hosts as one distribution (``report.spread``; docs/report-html.md, "Many
hosts"): past ``spread.MANY_HOSTS`` hosts, a step's per-second plots draw, per op, the
hosts' median with their middle half and 90% of them as bands, and the overview's bars
become a box per step; the hosts furthest from the fleet are drawn and named. Their cost
grows with the hosts' points, not with the hosts squared: a fixed number of artists a panel.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import LogLocator

from benchtui.report.plot.bars import Panel
from benchtui.report.plot.style import new_figure, value_axis
from benchtui.report.plot.timeseries import METRICS, legend_name
from benchtui.report.series import Points, RunSeries
from benchtui.report.spread import MAX_NAMED, Spread, ValueSpread, spread, value_spread

#: What a distribution plot of each metric shows, for titles.
TITLES = {"iops": "IOPS per second across hosts",
          "bandwidth": "bandwidth per second across hosts",
          "latency": "each host's latency p99 per second, across hosts",
          "net": "network bandwidth per second across hosts (each host's own end)"}
_OPS = ("read", "write", "trim", "total", "send", "receive")
_LABELS = {"iops": "IOPS", "bandwidth": "bandwidth", "latency": "latency",
           "net": "network"}
#: A host's latency line drawn across hosts: its p99 (the console's), else what it has.
_LATENCY_LINES = ("p99", "p999", "p50", "mean")
_BAND = "#4c72b0"
_BASELINE = "#9a9a9a"
_RAMP = "#000000"
#: Colours of the named hosts, furthest first (none of them the bands' blue).
_NAMED = ("#d62728", "#ff7f0e", "#9467bd", "#2ca02c", "#8c564b")


def _line(rs: RunSeries, metric: str, op: str) -> Points | None:
    """The one line of a host's run that goes into the distribution of ``metric``."""
    if metric == "latency":
        found = rs.latency.get(op, {})
        return next((found[q] for q in _LATENCY_LINES if q in found), None)
    source = {"iops": rs.iops, "bandwidth": rs.bandwidth, "net": rs.net}[metric]
    return source.get(op)


def _spreads(series: Sequence[RunSeries], metric: str) -> dict[str, Spread]:
    out = {}
    for op in _OPS:
        lines = {legend_name(rs): p for rs in series if (p := _line(rs, metric, op))}
        found = spread(lines) if lines else None
        if found is not None:
            out[op] = found
    return out


def distribution_figure(series: Sequence[RunSeries], metric: str, *, title: str,
                        baseline: Sequence[RunSeries] = (),
                        baseline_name: str = "baseline") -> Figure | None:
    """``metric`` ("iops", "bandwidth", "latency", "net") of these hosts' runs as their
    distribution per second, one panel per op; the baseline's runs as their median, in
    grey. None when no host has a point of it."""
    if metric not in METRICS:
        raise ValueError(f"no metric {metric!r}")
    spreads = _spreads(series, metric)
    if not spreads:
        return None
    ghosts = _spreads(baseline, metric) if baseline else {}
    fig = new_figure(6.4, 1.3 + 2.0 * len(spreads))
    axes = fig.subplots(len(spreads), 1, sharex=True, squeeze=False)[:, 0]
    ramp = max((rs.window_start for rs in series), default=0.0)
    named_handles: dict[str, Line2D] = {}
    n = 0
    for ax, (op, found) in zip(axes, spreads.items(), strict=True):
        q = found.quantiles
        ghost = ghosts.get(op)
        if ghost is not None:
            ax.plot(ghost.times, ghost.quantiles["p50"], color=_BASELINE, linewidth=1.0,
                    zorder=1, gid=f"baseline-{n}")
        ax.fill_between(found.times, q["p5"], q["p95"], color=_BAND, alpha=0.16, linewidth=0,
                        zorder=2)
        ax.fill_between(found.times, q["p25"], q["p75"], color=_BAND, alpha=0.34,
                        linewidth=0, zorder=3)
        ax.plot(found.times, q["p50"], color=_BAND, linewidth=1.3, zorder=4, gid=f"line-{n}")
        n += 1
        for i, host in enumerate(found.named):
            if host.points is None:
                continue
            colour = _NAMED[i % len(_NAMED)]
            ax.plot(host.points.times, host.points.values, color=colour, linewidth=0.9,
                    zorder=5, gid=f"named-{n}")
            n += 1
            named_handles.setdefault(f"{op}: {host.label}",
                                     Line2D([], [], color=colour, label=f"{op}: {host.label}"))
        if not found.named:
            ax.text(0.99, 0.96, "no host stands out", transform=ax.transAxes, ha="right",
                    va="top", fontsize=8, color="#555555")
        if ramp > 0:
            ax.axvspan(0, ramp, color=_RAMP, alpha=0.06, linewidth=0)
        ax.set_title(f"{op}: {found.hosts} hosts", loc="left")
        ax.set_ylabel(_LABELS[metric] + (" (log)" if metric == "latency" else ""))
        if metric == "latency":
            ax.set_yscale("log")
            low, high = ax.dataLim.intervaly
            wide = low > 0 and high / low > 300
            ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0,) if wide
                                                  else (1.0, 2.0, 5.0)))
        else:
            ax.set_ylim(bottom=0)
        value_axis(ax.yaxis, metric)
        ax.set_xlim(left=0)
    axes[-1].set_xlabel("seconds since the run started")
    fig.suptitle(title)
    handles: list[Line2D | Patch] = [
        Line2D([], [], color=_BAND, linewidth=1.3, label="the hosts' median"),
        Patch(color=_BAND, alpha=0.5, label="middle half (p25-p75)"),
        Patch(color=_BAND, alpha=0.2, label="90% of the hosts (p5-p95)"),
        *named_handles.values()]
    if ghosts:
        handles.append(Line2D([], [], color=_BASELINE, label=f"{baseline_name}: median"))
    if ramp > 0:
        handles.append(Patch(color=_RAMP, alpha=0.12,
                             label=f"first {ramp:.0f} s: ramp-up, not in the tables"))
    fig.legend(handles=handles, loc="outside lower center", ncols=3)
    return fig


def boxes_figure(groups: Sequence[str], panels: Sequence[Panel], *, title: str) -> Figure:
    """The overview's bars of many hosts (``bars.bars_figure``'s input): per panel, a box
    per step over the hosts' values (box p25-p75, whiskers p5-p95, the median, the lowest
    and highest host as dots), the hosts furthest from the others named beside their dot,
    and a black tick at the median of the hosts' baselines where they have one."""
    fig = new_figure(min(14.0, max(7.5, 1.2 + 0.9 * len(groups))), 1.3 + 3.1 * len(panels))
    axes = fig.subplots(len(panels), 1, squeeze=False)[:, 0]
    marked = False
    for ax, panel in zip(axes, panels, strict=True):
        stats, positions = [], []
        for i, group in enumerate(groups):
            values = {name: bar.value for (g, name), bar in panel.bars.items() if g == group}
            found = value_spread(values) if values else None
            if found is None:
                continue
            stats.append(_box(found, group))
            positions.append(i)
            for k, host in enumerate(found.named[:MAX_NAMED]):
                assert host.value is not None
                colour = _NAMED[k % len(_NAMED)]
                ax.plot([i], [host.value], marker="o", markersize=4, color=colour,
                        linestyle="none", zorder=5)
                ax.annotate(host.label, (i, host.value), xytext=(6, 0),
                            textcoords="offset points", fontsize=7, color=colour,
                            va="center")
            bases = sorted(bar.baseline for (g, _n), bar in panel.bars.items()
                           if g == group and bar.baseline is not None)
            if bases:
                ax.hlines(bases[len(bases) // 2], i - 0.3, i + 0.3, colors="black",
                          linewidth=1.6, zorder=6)
                marked = True
        if stats:
            ax.bxp(stats, positions=positions, widths=0.5, showfliers=True, patch_artist=True,
                   boxprops={"facecolor": _BAND, "alpha": 0.35, "linewidth": 0.8},
                   medianprops={"color": _BAND, "linewidth": 1.6},
                   flierprops={"marker": ".", "markersize": 4, "markerfacecolor": "#555555",
                               "markeredgecolor": "#555555"})
        value_axis(ax.yaxis, panel.kind)
        ax.set_ylabel(panel.label)
        ax.set_ylim(bottom=0)
        ax.set_xticks(range(len(groups)), list(groups), rotation=20 if len(groups) > 6 else 0,
                      ha="right" if len(groups) > 6 else "center")
        ax.grid(axis="x", visible=False)
        ax.set_xlim(-0.6, len(groups) - 0.4)
    fig.suptitle(title)
    handles: list[Line2D | Patch] = [
        Patch(color=_BAND, alpha=0.5, label="middle half of the hosts (p25-p75)"),
        Line2D([], [], color="#333333", label="whiskers: 90% of the hosts (p5-p95)"),
        Line2D([], [], color="#555555", marker=".", linestyle="none",
               label="the lowest and the highest host"),
        Line2D([], [], color=_NAMED[0], marker="o", linestyle="none",
               label="hosts furthest from the others, named")]
    if marked:
        handles.append(Line2D([], [], color="black", linewidth=1.6,
                              label="the hosts' baselines (median)"))
    fig.legend(handles=handles, loc="outside lower center", ncols=3)
    return fig


def _box(found: ValueSpread, label: str) -> Mapping[str, object]:
    q = found.quantiles
    return {"med": q["p50"], "q1": q["p25"], "q3": q["p75"], "whislo": q["p5"],
            "whishi": q["p95"], "fliers": [q["min"], q["max"]], "label": label}
